package models

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"petstore/models/internal/background"
)

// Undo. Every console change of pets (a status change, an edit, a bulk
// change of a page's selection or of every match) is an action its member
// may undo for a while (the window, UNDO_WINDOW, which the console passes
// in). The action's row (undo_actions) and one undo item per pet written
// (undo_items: the pet's version after the change, its values before it)
// are written in the change's own transaction, by the one change path:
// a PetChange that carries the action (PetChange.Undo) adds its item to the
// rows it implies (impliedRows.add), and the update sink writes them.
//
// An undo puts each pet's values back through the same path, as an
// ordinary change (audited as pet.undone, pet.updated in the feed), and
// only where the pet still has the version the action left it at: the
// UPDATE's own WHERE id = ? AND version = ? decides, so a pet someone
// changed since, even a moment before, keeps their change and is listed as
// skipped, with who changed it (the pet's latest audit event). An undo is
// an action too (kind undo, recorded with items), so it can be undone.
//
// An action is undone at most once: the undo claims it with an UPDATE ...
// WHERE undone_at IS NULL in its transaction, and of concurrent undos the
// database lets exactly one match. An undo of at most UndoChunk pets runs
// in that transaction; a larger one (a bulk job's) runs in the background
// a chunk at a time, each chunk its own transaction with the undo's
// progress and lease on its row, as bulk.go's jobs do.
//
// Actions past the window are purged in the background (PurgeUndoEvery)
// in bounded batches.
//
// A new kind of action plugs in at two places: undoKindOf (what an undo of
// it is recorded as) and revertChanges (how each of its items is put
// back).

// UndoKind is what an undoable action did, which decides how an undo puts
// its pets back.
type UndoKind string

// The kinds of undoable action.
const (
	// UndoStatus is a status change of one pet (its row or its page).
	UndoStatus UndoKind = "status"
	// UndoEdit is a pet's edit form.
	UndoEdit UndoKind = "edit"
	// UndoBulkStatus is a status change of the pets selected on a page.
	UndoBulkStatus UndoKind = "bulk_status"
	// UndoBulkJob is a status change of every pet of a filter (bulk.go).
	UndoBulkJob UndoKind = "bulk_job"
	// UndoUndo is an undo: its items are the values it replaced.
	UndoUndo UndoKind = "undo"
	// UndoArchive is an archive of pets (one, a selection, or every match
	// of a bulk job): its undo restores them.
	UndoArchive UndoKind = "archive"
	// UndoRestore is a restore from the archive, or the undo of an archive
	// or of an import: its undo archives the pets again.
	UndoRestore UndoKind = "restore"
	// UndoImport is a CSV import (pets_import.go): its undo archives the
	// pets it added.
	UndoImport UndoKind = "import"
)

// The states of an undo that runs in the background; "" for every other
// action.
const (
	UndoRunning = "running"
	UndoDone    = "done"
	UndoFailed  = "failed"
)

// UndoChunk is how many pets one transaction of an undo puts back; an undo
// of more runs in the background.
const UndoChunk = BulkChunk

// Undo timings: the lease a background undo holds and moves forward after
// each chunk, and the least pause between chunks (bulk.go's reasons).
var (
	undoLease    = 30 * time.Second
	undoMinPause = 20 * time.Millisecond
)

// undoPurgeBatch bounds the rows one purge statement deletes.
const undoPurgeBatch = 1000

// undoSkippedKept is how many skipped pets an undo lists by name.
const undoSkippedKept = 100

// UndoAction is one undoable action of a member, or an undo.
type UndoAction struct {
	ID    int64
	Actor string
	Kind  UndoKind
	// Summary says what the action did, in words for staff.
	Summary   string
	CreatedAt time.Time
	// CompletedAt is when the action had written all its pets: the window
	// counts from it. nil while a bulk job or a background undo runs.
	CompletedAt *time.Time
	// BulkJobID is the bulk job that writes the action's pets.
	BulkJobID *int64
	// UndoesID is, for an undo, the action it undid.
	UndoesID *int64
	// UndoneAt, UndoneBy and UndoneByAction say when, by whom and by which
	// undo the action was undone.
	UndoneAt       *time.Time
	UndoneBy       *string
	UndoneByAction *int64
	// State is an undo's: running, done or failed.
	State string
	// Total is how many pets the action wrote or, for an undo, was to put
	// back; an undo has processed that many so far, reverted some and
	// skipped the others (changed since, or gone).
	Total, Processed, Reverted, Skipped int
	// SkippedBy and SkippedPets hold, as JSON, who changed the skipped
	// pets since and the first undoSkippedKept of them.
	SkippedBy   string
	SkippedPets *string
	LeaseOwner  string
	LeaseUntil  *time.Time
	// Error says why a failed undo stopped, in words for staff.
	Error string
}

// SkippedPet is a pet an undo left as it was.
type SkippedPet struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// By is who changed it since the action; "" when unknown.
	By string `json:"by,omitempty"`
	// Gone says the pet no longer exists.
	Gone bool `json:"gone,omitempty"`
}

// SkippedList returns the skipped pets an undo lists.
func (a UndoAction) SkippedList() []SkippedPet {
	var l []SkippedPet
	if a.SkippedPets != nil {
		_ = json.Unmarshal([]byte(*a.SkippedPets), &l)
	}
	return l
}

// SkippedActors returns who changed the pets an undo skipped, each once.
func (a UndoAction) SkippedActors() []string {
	var l []string
	if a.SkippedBy != "" {
		_ = json.Unmarshal([]byte(a.SkippedBy), &l)
	}
	return l
}

// Undoable reports whether the action may still be undone at now with the
// window given (its owner aside).
func (a UndoAction) Undoable(now time.Time, window time.Duration) bool {
	return a.UndoneAt == nil && a.CompletedAt != nil && !now.After(a.CompletedAt.Add(window)) && a.Total > 0
}

// undoState is what the Store keeps of undo in this process: the runners
// of its background undos and of the purge.
type undoState struct {
	bg, purge background.Runner
}

// close stops the background undos and the purge.
func (u *undoState) close() {
	u.bg.Close()
	u.purge.Close()
}

// undoItemRow is the undo item of the change at index pet of the batch:
// the pet's version after the change and its values before it.
type undoItemRow struct {
	action       int64
	pet          int
	versionAfter int64
	name         string
	categoryID   int64
	status       Status
}

// undoItem is the change's undo item, the change being the batch's number
// i. A new pet (no Before) keeps its own values.
func (ch PetChange) undoItem(i int) undoItemRow {
	before := ch.After
	if ch.Before != nil {
		before = *ch.Before
	}
	return undoItemRow{action: ch.Undo.ID, pet: i, versionAfter: ch.After.Version,
		name: before.Name, categoryID: before.CategoryID, status: before.Status}
}

// writeUndoItems inserts rows in one statement, ids[i] being the id of the
// batch's change number i.
func writeUndoItems(ctx context.Context, conn gorm.ConnPool, rows []undoItemRow, ids []int64) error {
	if len(rows) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("INSERT INTO undo_items (action_id, pet_id, version_after, name, category_id, status) VALUES ")
	args := make([]any, 0, 6*len(rows))
	for i, r := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?)")
		args = append(args, r.action, ids[r.pet], r.versionAfter, r.name, r.categoryID, string(r.status))
	}
	if _, err := conn.ExecContext(ctx, b.String(), args...); err != nil {
		return fmt.Errorf("record undo: %w", err)
	}
	return nil
}

// newUndoAction records an action of actor within tx; complete says it has
// written its pets (total of them) already.
func (s *Store) newUndoAction(tx *gorm.DB, kind UndoKind, actor, summary string, complete bool, total int) (*UndoAction, error) {
	now := s.now()
	a := &UndoAction{Actor: actor, Kind: kind, Summary: truncate(summary, 500), CreatedAt: now, Total: total}
	if complete {
		a.CompletedAt = &now
	}
	if err := tx.Create(a).Error; err != nil {
		return nil, fmt.Errorf("record undo: %w", err)
	}
	return a, nil
}

// undoActionOf is the action status changes are recorded under within tx
// (changeStatus), as undoActionWith, summed up as a change to st.
func (s *Store) undoActionOf(tx *gorm.DB, undo *UndoAction, actor string, changes []PetChange, st Status) (*UndoAction, error) {
	return s.undoActionWith(tx, undo, actor, changes, func(cs []PetChange) string { return statusSummary(cs, st) })
}

// undoActionWith is the action changes are recorded under within tx: none
// without undo, undo itself when it is recorded already (a bulk job's),
// else a new action of undo's kind, summed up by summary. It marks the
// changes with it.
func (s *Store) undoActionWith(tx *gorm.DB, undo *UndoAction, actor string, changes []PetChange, summary func([]PetChange) string) (*UndoAction, error) {
	if undo == nil || len(changes) == 0 {
		return nil, nil
	}
	act := undo
	if undo.ID == 0 {
		var err error
		if act, err = s.newUndoAction(tx, undo.Kind, actor, summary(changes), true, len(changes)); err != nil {
			return nil, err
		}
	}
	for i := range changes {
		changes[i].Undo = act
	}
	return act, nil
}

// settleUndoAction is settleUndoActionWith for a status change to st.
func (s *Store) settleUndoAction(tx *gorm.DB, undo, act *UndoAction, written []Pet, st Status) (int64, error) {
	return s.settleUndoActionWith(tx, undo, act, written, func(cs []PetChange) string { return statusSummary(cs, st) })
}

// settleUndoActionWith fits a new action to the pets written: none, and
// there is nothing to undo; fewer than planned, and its summary and count
// say so. It returns the action's id.
func (s *Store) settleUndoActionWith(tx *gorm.DB, undo, act *UndoAction, written []Pet, summary func([]PetChange) string) (int64, error) {
	switch {
	case act == nil:
		return 0, nil
	case undo.ID != 0:
		return act.ID, nil
	case len(written) == 0:
		return 0, tx.Exec("DELETE FROM undo_actions WHERE id = ?", act.ID).Error
	case len(written) != act.Total:
		var kept []PetChange
		for _, p := range written {
			kept = append(kept, PetChange{Before: &Pet{Name: p.Name}, After: p})
		}
		return act.ID, tx.Exec("UPDATE undo_actions SET summary = ?, total = ? WHERE id = ?", truncate(summary(kept), 500), len(written), act.ID).Error
	}
	return act.ID, nil
}

// statusSummary says what a status change of changes did: "Changed Rex
// from available to sold", or "Changed 20 pets to sold".
func statusSummary(changes []PetChange, st Status) string {
	if len(changes) == 1 {
		ch := changes[0]
		if ch.Before.Status != "" && ch.Before.Status != st {
			return fmt.Sprintf("Changed %s from %s to %s", ch.After.Name, ch.Before.Status, st)
		}
		return fmt.Sprintf("Changed %s to %s", ch.After.Name, st)
	}
	return fmt.Sprintf("Changed %d pets to %s", len(changes), st)
}

// startBulkUndo records the undoable action of bulk job job, not complete
// until the job ends (completeBulkUndo): a status change (UndoBulkJob) or
// an archive (UndoArchive).
func (s *Store) startBulkUndo(ctx context.Context, job BulkJob) (*UndoAction, error) {
	kind := UndoBulkJob
	if job.Kind == BulkKindArchive {
		kind = UndoArchive
	}
	var act *UndoAction
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		var err error
		act, err = s.newUndoAction(tx, kind, job.Actor, bulkUndoSummary(job), false, 0)
		if err != nil {
			return err
		}
		return tx.Model(act).Update("bulk_job_id", job.ID).Error
	})
	if err != nil {
		return nil, s.dbErr("start bulk change", err)
	}
	id := job.ID
	act.BulkJobID = &id
	return act, nil
}

// completeBulkUndo marks the action of the bulk job ended within tx
// complete: its window starts, with its count and summary.
func (s *Store) completeBulkUndo(tx *gorm.DB, job BulkJob, now time.Time) error {
	return tx.Exec("UPDATE undo_actions SET completed_at = ?, total = ?, summary = ? WHERE bulk_job_id = ? AND completed_at IS NULL",
		now, job.Changed, truncate(bulkUndoSummary(job), 500), job.ID).Error
}

// bulkUndoSummary says what a bulk job did, as its action's summary.
func bulkUndoSummary(job BulkJob) string {
	params, err := url.ParseQuery(job.Filter)
	filter := "all pets"
	if err == nil {
		filter = FilterWords(params)
	}
	switch {
	case job.Kind == BulkKindArchive && job.State == BulkRunning:
		return "Archiving every pet of " + filter
	case job.Kind == BulkKindArchive:
		return fmt.Sprintf("Archived %s of %s", plural(job.Changed, "pet", "pets"), filter)
	case job.State == BulkRunning:
		return fmt.Sprintf("Setting every pet of %s to %s", filter, job.TargetStatus)
	}
	return fmt.Sprintf("Changed %s of %s to %s", plural(job.Changed, "pet", "pets"), filter, job.TargetStatus)
}

// BulkJobUndoID returns the undoable action of bulk job id, 0 if it has
// none.
func (s *Store) BulkJobUndoID(ctx context.Context, id int64) (int64, error) {
	var ids []int64
	if err := s.db.WithContext(ctx).Raw("SELECT id FROM undo_actions WHERE bulk_job_id = ?", id).Scan(&ids).Error; err != nil {
		return 0, s.dbErr("read bulk change", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	return ids[0], nil
}

// undoKindOf is what an undo of an action of kind k is recorded as: the
// kind whose undo puts back what the undo replaced. Every kind that
// changes pets' fields is undone by setting fields; a move between the
// list and the archive by the opposite move.
func undoKindOf(k UndoKind) UndoKind {
	switch k {
	case UndoArchive:
		return UndoRestore // it restored them
	case UndoRestore, UndoImport:
		return UndoArchive // it archived them
	default:
		return UndoUndo
	}
}

// errUndoneAlready says an action was undone before.
var errUndoneAlready = errors.New("the action was undone already")

// noSuchAction is the error of an action that is not the member's.
func noSuchAction() error {
	return &Error{Code: CodeNotFound, Message: "There is no such change of yours to undo."}
}

// GetUndoAction returns actor's action id; an undo whose process died (its
// lease ran out) is marked failed first.
func (s *Store) GetUndoAction(ctx context.Context, id int64, actor string) (UndoAction, error) {
	if err := s.expireUndos(ctx); err != nil {
		return UndoAction{}, err
	}
	var a UndoAction
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&a).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return UndoAction{}, noSuchAction()
	case err != nil:
		return UndoAction{}, s.dbErr("read action", err)
	case a.Actor != actor:
		return UndoAction{}, noSuchAction()
	}
	return a, nil
}

// RecentUndoActions returns actor's actions of the last window (and those
// still running), newest first, at most 50.
func (s *Store) RecentUndoActions(ctx context.Context, actor string, window time.Duration) ([]UndoAction, error) {
	if err := s.expireUndos(ctx); err != nil {
		return nil, err
	}
	var l []UndoAction
	err := s.db.WithContext(ctx).Where("actor = ? AND (completed_at >= ? OR completed_at IS NULL)", actor, s.now().Add(-window)).
		Order("id DESC").Limit(50).Find(&l).Error
	return l, s.dbErr("read actions", err)
}

// Undo undoes actor's action id, within window of its completion: each pet
// it wrote gets back its values from before it, if the pet still has the
// version the action left (else it is skipped). The undo is an action of
// its own, returned: done, with its counts and skipped pets, or, for more
// than UndoChunk pets, running in the background (read it again with
// GetUndoAction). Of undos of one action, concurrent or not, one happens;
// the others get a conflict naming it.
func (s *Store) Undo(ctx context.Context, id int64, actor string, window time.Duration) (UndoAction, error) {
	var (
		orig, undo UndoAction
		written    updatesWritten
		big        bool
	)
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		orig, undo, written, big = UndoAction{}, UndoAction{}, updatesWritten{}, false
		if err := tx.Where("id = ?", id).Take(&orig).Error; err != nil {
			return err
		}
		if err := s.undoable(orig, actor, window); err != nil {
			return err
		}
		now := s.now()
		// Only a complete action: an import that starts again after
		// failing reopens its action (pets_import.go), and of that and an
		// undo one matches.
		res := tx.Exec("UPDATE undo_actions SET undone_at = ?, undone_by = ? WHERE id = ? AND undone_at IS NULL AND completed_at IS NOT NULL", now, actor, id)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return errUndoneAlready
		}
		undo = UndoAction{Actor: actor, Kind: undoKindOf(orig.Kind), Summary: truncate("Undid: "+orig.Summary, 500), CreatedAt: now,
			UndoesID: &orig.ID, State: UndoRunning, Total: orig.Total}
		big = orig.Total > UndoChunk
		if big {
			until := now.Add(undoLease)
			undo.LeaseOwner, undo.LeaseUntil = rand.Text(), &until
		}
		if err := tx.Create(&undo).Error; err != nil {
			return err
		}
		if err := tx.Exec("UPDATE undo_actions SET undone_by_action = ? WHERE id = ?", undo.ID, id).Error; err != nil {
			return err
		}
		if big {
			return nil
		}
		var err error
		if written, _, err = s.undoChunk(tx, &undo, orig, 0); err != nil {
			return err
		}
		// Done: its window starts, and what it put back is its count.
		undo.State, undo.CompletedAt, undo.Total = UndoDone, &now, undo.Reverted
		return tx.Save(&undo).Error
	})
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return UndoAction{}, noSuchAction()
	case errors.Is(err, errUndoneAlready):
		return UndoAction{}, s.undoneAlready(ctx, id)
	case err != nil:
		return UndoAction{}, s.dbErr("undo", err)
	}
	s.committed(written)
	if big && !s.undo.bg.Start(func(bctx context.Context) { s.runUndo(bctx, undo, orig) }) {
		s.endUndo(context.Background(), &undo, "The server was stopping.")
	}
	return undo, nil
}

// undoable says why actor may not undo orig, if they may not.
func (s *Store) undoable(orig UndoAction, actor string, window time.Duration) error {
	switch {
	case orig.Actor != actor:
		return noSuchAction()
	case orig.UndoneAt != nil:
		return errUndoneAlready
	case orig.CompletedAt == nil:
		return &Error{Code: CodeConflict, Message: "This change is still running: undo it once it has finished."}
	case s.now().After(orig.CompletedAt.Add(window)):
		return &Error{Code: CodeConflict, Message: fmt.Sprintf(
			"The time to undo this change (%s) has passed. Nothing was changed; change the pets back yourself if needed.", windowWords(window))}
	case orig.Total == 0:
		return &Error{Code: CodeConflict, Message: "This change changed no pet: there is nothing to undo."}
	}
	return nil
}

// undoneAlready is the conflict of undoing action id again.
func (s *Store) undoneAlready(ctx context.Context, id int64) error {
	var a UndoAction
	msg := "This change was already undone. Nothing was changed."
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&a).Error; err == nil && a.UndoneAt != nil && a.UndoneBy != nil {
		msg = fmt.Sprintf("This change was already undone by %s at %s. Nothing was changed.", *a.UndoneBy, a.UndoneAt.UTC().Format("15:04:05 UTC"))
	}
	return &Error{Code: CodeConflict, Err: errUndoneAlready, Message: msg}
}

// windowWords says a window in words: "10 minutes".
func windowWords(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return plural(int(d/time.Hour), "hour", "hours")
	case d >= time.Minute && d%time.Minute == 0:
		return plural(int(d/time.Minute), "minute", "minutes")
	}
	return d.String()
}

// undoItem is one row of undo_items.
type undoItem struct {
	ID           int64
	PetID        int64
	VersionAfter int64
	Name         string
	CategoryID   int64
	Status       Status
}

// undoChunk puts back, within tx, the pets of orig's items after item id
// after, at most UndoChunk of them, and adds what it did to undo. It
// returns what it wrote and the last item's id (0 when none was left).
func (s *Store) undoChunk(tx *gorm.DB, undo *UndoAction, orig UndoAction, after int64) (updatesWritten, int64, error) {
	var items []undoItem
	if err := tx.Raw("SELECT id, pet_id, version_after, name, category_id, status FROM undo_items WHERE action_id = ? AND id > ? ORDER BY id LIMIT ?",
		orig.ID, after, UndoChunk).Scan(&items).Error; err != nil {
		return updatesWritten{}, 0, err
	}
	if len(items) == 0 {
		return updatesWritten{}, 0, nil
	}
	changes, skipped, err := s.revertChanges(tx, undo, orig, items)
	if err != nil {
		return updatesWritten{}, 0, err
	}
	written, err := s.writeReverts(tx, changes)
	if err != nil {
		return updatesWritten{}, 0, err
	}
	for _, ch := range changes {
		if !slices.ContainsFunc(written.pets, func(p Pet) bool { return p.ID == ch.Before.ID }) {
			skipped = append(skipped, SkippedPet{ID: ch.Before.ID, Name: ch.Before.Name})
		}
	}
	if err := s.whoChanged(tx, skipped, orig.CreatedAt); err != nil {
		return updatesWritten{}, 0, err
	}
	undo.Processed += len(items)
	undo.Reverted += len(written.pets)
	undo.Skipped += len(skipped)
	undo.noteSkipped(skipped)
	return written, items[len(items)-1].ID, nil
}

// revertChanges are the changes that put back the pets of items, which
// orig wrote, as part of undo, and the pets skipped. How depends on what
// orig did: an archive is undone by restoring, a restore and an import by
// archiving, anything else by setting the fields back.
func (s *Store) revertChanges(tx *gorm.DB, undo *UndoAction, orig UndoAction, items []undoItem) ([]PetChange, []SkippedPet, error) {
	switch orig.Kind {
	case UndoArchive:
		return s.revertMoves(tx, undo, items, ChangeRestore)
	case UndoRestore, UndoImport:
		return s.revertMoves(tx, undo, items, ChangeArchive)
	default:
		return s.revertFields(tx, undo, items)
	}
}

// revertFields are the changes that put back the fields of the pets of
// items as part of undo, and the pets skipped: gone, or changed since
// (their version is not the one the action left, or archived since). The writes check the
// versions again.
func (s *Store) revertFields(tx *gorm.DB, undo *UndoAction, items []undoItem) ([]PetChange, []SkippedPet, error) {
	ids := make([]int64, len(items))
	for i, it := range items {
		ids[i] = it.PetID
	}
	var pets []Pet
	if err := tx.Where("id IN ?", ids).Find(&pets).Error; err != nil {
		return nil, nil, err
	}
	// A pet not in the list may have been archived since: that is a
	// change of someone's, named as such, not a pet that is gone.
	var archived []int64
	if len(pets) < len(ids) {
		if err := tx.Table("archived_pets").Where("id IN ?", ids).Pluck("id", &archived).Error; err != nil {
			return nil, nil, err
		}
	}
	var (
		changes []PetChange
		skipped []SkippedPet
	)
	for _, it := range items {
		i := slices.IndexFunc(pets, func(p Pet) bool { return p.ID == it.PetID })
		switch {
		case i < 0 && slices.Contains(archived, it.PetID):
			skipped = append(skipped, SkippedPet{ID: it.PetID, Name: it.Name})
		case i < 0:
			skipped = append(skipped, SkippedPet{ID: it.PetID, Name: it.Name, Gone: true})
		case pets[i].Version != it.VersionAfter:
			skipped = append(skipped, SkippedPet{ID: it.PetID, Name: pets[i].Name})
		default:
			after := pets[i]
			after.Name, after.CategoryID, after.Status = it.Name, it.CategoryID, it.Status
			ch := PetChange{Kind: ChangeUndo, Before: &pets[i], After: after, Actor: undo.Actor, Undo: undo}
			if ch.changed() {
				changes = append(changes, ch)
			}
		}
	}
	return changes, skipped, nil
}

// revertMoves are the moves (kind: ChangeArchive or ChangeRestore) that
// put the pets of items back where they were before the action, as part
// of undo, and the pets skipped: changed since (their version is not the
// one the action left), moved back by someone since, or gone (purged).
// The moves check the versions again (writeMoves).
func (s *Store) revertMoves(tx *gorm.DB, undo *UndoAction, items []undoItem, kind ChangeKind) ([]PetChange, []SkippedPet, error) {
	from, to := "pets", "archived_pets"
	if kind == ChangeRestore {
		from, to = to, from
	}
	ids := make([]int64, len(items))
	for i, it := range items {
		ids[i] = it.PetID
	}
	var found []Pet
	if err := tx.Table(from).Select("id", "name", "category_id", "status", "created_at", "updated_at", "version").
		Where("id IN ?", ids).Find(&found).Error; err != nil {
		return nil, nil, err
	}
	// A pet already where the undo would put it was moved by someone
	// since (or, for a restore, its id is held: see movePets).
	var there []int64
	if err := tx.Table(to).Where("id IN ?", ids).Pluck("id", &there).Error; err != nil {
		return nil, nil, err
	}
	now := s.now()
	var (
		changes []PetChange
		skipped []SkippedPet
	)
	for _, it := range items {
		i := slices.IndexFunc(found, func(p Pet) bool { return p.ID == it.PetID })
		switch {
		case slices.Contains(there, it.PetID):
			skipped = append(skipped, SkippedPet{ID: it.PetID, Name: it.Name})
		case i < 0:
			skipped = append(skipped, SkippedPet{ID: it.PetID, Name: it.Name, Gone: true})
		case found[i].Version != it.VersionAfter:
			skipped = append(skipped, SkippedPet{ID: it.PetID, Name: found[i].Name})
		default:
			after := found[i]
			after.UpdatedAt, after.Version = now, found[i].Version+1
			changes = append(changes, PetChange{Kind: kind, Before: &found[i], After: after, Actor: undo.Actor, Undo: undo})
		}
	}
	return changes, skipped, nil
}

// writeReverts writes an undo's changes within tx: moves between the list
// and the archive (writeMoves), or fields (writeUpdates).
func (s *Store) writeReverts(tx *gorm.DB, changes []PetChange) (updatesWritten, error) {
	if len(changes) > 0 && (changes[0].Kind == ChangeArchive || changes[0].Kind == ChangeRestore) {
		return s.writeMoves(tx, changes, s.now())
	}
	return s.writeUpdates(tx, changes)
}

// whoChanged fills in who changed each skipped pet last since since, from
// its audit events.
func (s *Store) whoChanged(tx *gorm.DB, skipped []SkippedPet, since time.Time) error {
	var ids []int64
	for _, p := range skipped {
		if !p.Gone {
			ids = append(ids, p.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	var rows []struct {
		TargetID int64
		Actor    string
	}
	if err := tx.Raw("SELECT target_id, actor FROM audit_events WHERE target_type = ? AND target_id IN ? AND at >= ? ORDER BY id",
		TargetPet, ids, since).Scan(&rows).Error; err != nil {
		return err
	}
	by := map[int64]string{}
	for _, r := range rows {
		by[r.TargetID] = r.Actor
	}
	for i := range skipped {
		skipped[i].By = by[skipped[i].ID]
	}
	return nil
}

// noteSkipped adds skipped to the undo's lists: who changed them (each
// once, at most 20 names) and the first undoSkippedKept pets.
func (a *UndoAction) noteSkipped(skipped []SkippedPet) {
	if len(skipped) == 0 {
		return
	}
	actors, pets := a.SkippedActors(), a.SkippedList()
	for _, p := range skipped {
		if p.By != "" && !slices.Contains(actors, p.By) && len(actors) < 20 {
			actors = append(actors, p.By)
		}
		if len(pets) < undoSkippedKept {
			pets = append(pets, p)
		}
	}
	b, _ := json.Marshal(actors)
	a.SkippedBy = string(b)
	b, _ = json.Marshal(pets)
	ps := string(b)
	a.SkippedPets = &ps
}

// errUndoLeaseLost stops a runner whose undo was ended by someone else.
var errUndoLeaseLost = errors.New("undo lease lost")

// runUndo runs a background undo: orig's items a chunk at a time, each
// chunk with the undo's progress and lease in one transaction, pausing
// after each. It ends the undo as done, or failed.
func (s *Store) runUndo(ctx context.Context, undo UndoAction, orig UndoAction) {
	var after int64
	why := ""
	for {
		start := time.Now()
		var (
			written updatesWritten
			last    int64
			next    UndoAction
		)
		err := s.transaction(ctx, func(tx *gorm.DB) error {
			next = undo
			var err error
			if written, last, err = s.undoChunk(tx, &next, orig, after); err != nil || last == 0 {
				return err
			}
			until := s.now().Add(undoLease)
			next.LeaseUntil = &until
			res := tx.Exec("UPDATE undo_actions SET processed = ?, reverted = ?, skipped = ?, skipped_by = ?, skipped_pets = ?, lease_until = ?"+
				" WHERE id = ? AND lease_owner = ? AND state = ?",
				next.Processed, next.Reverted, next.Skipped, next.SkippedBy, next.SkippedPets, until, undo.ID, undo.LeaseOwner, UndoRunning)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected != 1 {
				return errUndoLeaseLost
			}
			return nil
		})
		if errors.Is(err, errUndoLeaseLost) {
			return // whoever took it has ended it
		}
		if err != nil {
			if ctx.Err() != nil {
				why = "The server stopped before it finished."
			} else {
				s.log.Error("undo", "action", undo.ID, "err", err)
				why = "The database failed part way."
			}
			break
		}
		s.committed(written)
		undo = next
		if last == 0 {
			break
		}
		after = last
		select {
		case <-ctx.Done():
			why = "The server stopped before it finished."
		case <-time.After(max(undoMinPause, 2*time.Since(start))):
		}
		if why != "" {
			break
		}
	}
	s.endUndo(context.WithoutCancel(ctx), &undo, why)
}

// endUndo ends a background undo, as done when why is "" and else failed
// for that reason; its window starts. An undo already ended is left.
func (s *Store) endUndo(ctx context.Context, undo *UndoAction, why string) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	state := UndoDone
	if why != "" {
		state = UndoFailed
	}
	now := s.now()
	err := s.db.WithContext(ctx).Exec("UPDATE undo_actions SET state = ?, error = ?, completed_at = ?, total = ?,"+
		" processed = ?, reverted = ?, skipped = ?, skipped_by = ?, skipped_pets = ? WHERE id = ? AND state = ?",
		state, why, now, undo.Reverted, undo.Processed, undo.Reverted, undo.Skipped, undo.SkippedBy, undo.SkippedPets, undo.ID, UndoRunning).Error
	if err != nil {
		s.log.Error("end undo", "action", undo.ID, "err", err)
	}
}

// expireUndos marks failed a background undo whose lease has run out: its
// process stopped without ending it. Its window starts, so what it put
// back can be undone in turn.
func (s *Store) expireUndos(ctx context.Context) error {
	now := s.now()
	err := s.db.WithContext(ctx).Exec("UPDATE undo_actions SET state = ?, error = ?, completed_at = ?, total = reverted"+
		" WHERE state = ? AND lease_until < ?", UndoFailed, "The server running it stopped before it finished.", now, UndoRunning, now).Error
	return s.dbErr("read actions", err)
}

// WaitUndos waits for the background undos this Store runs to end, for
// tests.
func (s *Store) WaitUndos() { s.undo.bg.Wait() }

// PurgeUndo deletes the actions whose window ended before now, with their
// items, a bounded batch per statement, and returns how many actions it
// deleted. An action a running undo is still reading is kept.
func (s *Store) PurgeUndo(ctx context.Context, window time.Duration) (int64, error) {
	if err := s.expireUndos(ctx); err != nil {
		return 0, err
	}
	cutoff := s.now().Add(-window)
	// A bulk job's action that never completed (its job was lost with the
	// database's rows) goes a day later.
	stale := cutoff.Add(-24 * time.Hour)
	var total int64
	for {
		var ids []int64
		err := s.db.WithContext(ctx).Raw("SELECT id FROM undo_actions WHERE completed_at < ? OR (completed_at IS NULL AND state = '' AND created_at < ?)"+
			" ORDER BY id LIMIT 100", cutoff, stale).Scan(&ids).Error
		if err != nil {
			return total, s.dbErr("purge actions", err)
		}
		n := 0
		for _, id := range ids {
			gone, err := s.purgeUndoAction(ctx, id)
			if err != nil {
				return total, s.dbErr("purge actions", err)
			}
			if gone {
				total++
				n++
			}
		}
		if len(ids) < 100 || n == 0 {
			return total, nil
		}
	}
}

// purgeUndoAction deletes action id's items, undoPurgeBatch per statement,
// then the action; false when a running undo still reads them.
func (s *Store) purgeUndoAction(ctx context.Context, id int64) (bool, error) {
	db := s.db.WithContext(ctx)
	var running int64
	if err := db.Raw("SELECT COUNT(*) FROM undo_actions WHERE undoes_id = ? AND state = ?", id, UndoRunning).Scan(&running).Error; err != nil {
		return false, err
	}
	if running > 0 {
		return false, nil
	}
	for {
		var bound sql.NullInt64
		if err := db.Raw("SELECT id FROM undo_items WHERE action_id = ? ORDER BY id LIMIT 1 OFFSET ?", id, undoPurgeBatch-1).Scan(&bound).Error; err != nil {
			return false, err
		}
		if !bound.Valid {
			break
		}
		if err := retry(ctx, func() error {
			return db.Exec("DELETE FROM undo_items WHERE action_id = ? AND id <= ?", id, bound.Int64).Error
		}); err != nil {
			return false, err
		}
	}
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		if err := tx.Exec("DELETE FROM undo_items WHERE action_id = ?", id).Error; err != nil {
			return err
		}
		return tx.Exec("DELETE FROM undo_actions WHERE id = ?", id).Error
	})
	return err == nil, err
}

// undoPurgeEvery is how often a serving instance purges old actions.
const undoPurgeEvery = time.Minute

// PurgeUndoEvery purges the actions whose window has ended, now and every
// undoPurgeEvery until the Store closes. The server starts it.
func (s *Store) PurgeUndoEvery(window time.Duration) {
	s.undo.purge.Start(func(ctx context.Context) {
		t := time.NewTicker(undoPurgeEvery)
		defer t.Stop()
		for {
			n, err := s.PurgeUndo(ctx, window)
			switch {
			case err != nil && ctx.Err() == nil:
				s.log.Warn("could not purge old undo actions", "error", err)
			case n > 0:
				s.log.Debug("purged old undo actions", "count", n)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}
