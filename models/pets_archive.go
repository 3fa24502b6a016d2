package models

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"petstore/models/internal/background"
)

// The archive: a pet archived by staff leaves pets for archived_pets, the
// same row with who archived it and when, in one transaction with the
// rows the move implies (pets_change.go: its name's words go, its status
// counts one less, an audit event, a pet.archived event in the feed). Every
// list, count, search and export of pets, and the partner API's reads,
// leave it out without knowing of the archive: for them the pet is gone,
// as an unknown one. A restore moves the row back with its id (pets' ids
// are never given twice), the next version and a pet.restored event. Both
// are optimistic, as edits are: a pet is moved only from the version the
// member saw. Archived pets older than the retention are purged in the
// background, a batch at a time, each batch audited with its ids.

// ErrPetArchived says a change was refused because the pet is archived.
var ErrPetArchived = errors.New("the pet is archived")

// ArchivedMessage refuses a change of an archived pet.
const ArchivedMessage = "This pet is archived: restore it from the archive to change it. Nothing was changed."

// archivedConflict is the refusal of a change of archived pet id.
func archivedConflict() error {
	return &Error{Code: CodeConflict, Err: ErrPetArchived, Message: ArchivedMessage}
}

// ArchivedPet is a pet in the archive: the pet as archived (its last
// version), and who archived it and when.
type ArchivedPet struct {
	ID         int64
	Name       string
	CategoryID int64
	Status     Status
	CreatedAt  time.Time
	UpdatedAt  time.Time
	Version    int64
	ArchivedAt time.Time
	ArchivedBy string
}

// TableName is archived_pets.
func (ArchivedPet) TableName() string { return "archived_pets" }

// Pet is the archived pet as a Pet.
func (a ArchivedPet) Pet() Pet {
	return Pet{ID: a.ID, Name: a.Name, CategoryID: a.CategoryID, Status: a.Status, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt, Version: a.Version}
}

// ArchiveResult says what an archive or a restore did to each pet asked
// for.
type ArchiveResult struct {
	// Moved are the pets archived (as archived: their last state) or
	// restored (as restored), in id order.
	Moved []Pet
	// Stale changed since the version given: left as the other change
	// made them.
	Stale []Pet
	// Already are the ids of pets already where the change would put them:
	// archived already (for an archive), or in the list (for a restore).
	Already []int64
	// Missing are the ids of pets found in neither place (never existed,
	// or purged).
	Missing []int64
	// UndoID is the member's action that undoes the move (undo.go): 0
	// when none was recorded or nothing moved.
	UndoID int64
}

// ArchivePets moves the pets named into the archive, by actor, in one
// transaction: each only if it still has the version given (a Version of
// 0 takes the pet whatever its version). Each pet archived gets its
// audit event and a pet.archived event, leaves the status counts and the
// name search, and keeps its id. The result says what happened to each.
func (s *Store) ArchivePets(ctx context.Context, pets []PetVersion, actor string) (ArchiveResult, error) {
	return s.movePets(ctx, pets, actor, ChangeArchive, nil)
}

// ArchivePetsUndoable is ArchivePets made by a member in the console: the
// archive is recorded as one action they may undo (undo.go), whose id the
// result holds.
func (s *Store) ArchivePetsUndoable(ctx context.Context, pets []PetVersion, actor string) (ArchiveResult, error) {
	return s.movePets(ctx, pets, actor, ChangeArchive, &UndoAction{Kind: UndoArchive})
}

// RestorePets moves the archived pets named back into the list with their
// ids, by actor, as ArchivePets moves them out: each only from the version
// given (0: any), each with its audit event and a pet.restored event.
func (s *Store) RestorePets(ctx context.Context, pets []PetVersion, actor string) (ArchiveResult, error) {
	return s.movePets(ctx, pets, actor, ChangeRestore, nil)
}

// RestorePetsUndoable is RestorePets made by a member in the console,
// recorded as one action they may undo, whose id the result holds.
func (s *Store) RestorePetsUndoable(ctx context.Context, pets []PetVersion, actor string) (ArchiveResult, error) {
	return s.movePets(ctx, pets, actor, ChangeRestore, &UndoAction{Kind: UndoRestore})
}

// movePets is ArchivePets (kind ChangeArchive) and RestorePets
// (ChangeRestore). With undo the moves are recorded for undo: under that
// action when it has an id (a bulk job's, one chunk after another), else
// under a new action of undo's kind.
func (s *Store) movePets(ctx context.Context, pvs []PetVersion, actor string, kind ChangeKind, undo *UndoAction) (ArchiveResult, error) {
	pvs = slices.Clone(pvs)
	slices.SortFunc(pvs, func(a, b PetVersion) int { return cmpInt64(a.ID, b.ID) })
	pvs = slices.CompactFunc(pvs, func(a, b PetVersion) bool { return a.ID == b.ID })
	ids := make([]int64, len(pvs))
	anyVersion := false
	for i, pv := range pvs {
		ids[i], anyVersion = pv.ID, anyVersion || pv.Version == 0
	}
	from, to := "pets", "archived_pets"
	if kind == ChangeRestore {
		from, to = to, from
	}
	var (
		res     ArchiveResult
		written updatesWritten
	)
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		res, written = ArchiveResult{}, updatesWritten{} // a retried transaction starts over
		read := tx.Table(from)
		if anyVersion {
			// Read and moved whatever their version: locked when read so
			// that the move takes the version read.
			read = read.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		var found []Pet
		if len(ids) > 0 {
			if err := read.Select("id", "name", "category_id", "status", "created_at", "updated_at", "version").
				Where("id IN ?", ids).Order("id").Find(&found).Error; err != nil {
				return err
			}
		}
		var taken []int64
		if kind == ChangeRestore && len(found) > 0 {
			// An id a pet of the list holds (a backup restored onto a
			// database whose counter had not passed the archive's ids) is
			// not restored over it.
			foundIDs := make([]int64, len(found))
			for i, p := range found {
				foundIDs[i] = p.ID
			}
			if err := tx.Table("pets").Where("id IN ?", foundIDs).Pluck("id", &taken).Error; err != nil {
				return err
			}
		}
		now := s.now()
		var changes []PetChange
		var absent []int64
		for _, pv := range pvs {
			i := slices.IndexFunc(found, func(p Pet) bool { return p.ID == pv.ID })
			switch {
			case i < 0:
				absent = append(absent, pv.ID)
			case slices.Contains(taken, pv.ID):
				res.Already = append(res.Already, pv.ID)
			case pv.Version != 0 && found[i].Version != pv.Version:
				res.Stale = append(res.Stale, found[i])
			default:
				after := found[i]
				after.UpdatedAt, after.Version = now, found[i].Version+1
				changes = append(changes, PetChange{Kind: kind, Before: &found[i], After: after, Actor: actor})
			}
		}
		if len(absent) > 0 {
			// Where the absent ones are: already moved, or nowhere.
			var there []int64
			if err := tx.Table(to).Where("id IN ?", absent).Pluck("id", &there).Error; err != nil {
				return err
			}
			for _, id := range absent {
				if slices.Contains(there, id) {
					res.Already = append(res.Already, id)
				} else {
					res.Missing = append(res.Missing, id)
				}
			}
			slices.Sort(res.Already)
		}
		summary := func(cs []PetChange) string { return moveSummary(cs, kind) }
		act, err := s.undoActionWith(tx, undo, actor, changes, summary)
		if err != nil {
			return err
		}
		if written, err = s.writeMoves(tx, changes, now); err != nil {
			return err
		}
		res.Moved = written.pets
		if res.UndoID, err = s.settleUndoActionWith(tx, undo, act, written.pets, summary); err != nil {
			return err
		}
		for _, ch := range changes {
			if !slices.ContainsFunc(written.pets, func(p Pet) bool { return p.ID == ch.Before.ID }) {
				res.Stale = append(res.Stale, *ch.Before)
			}
		}
		slices.SortFunc(res.Stale, func(a, b Pet) int { return cmpInt64(a.ID, b.ID) })
		return nil
	})
	if err != nil {
		op := "archive pets"
		if kind == ChangeRestore {
			op = "restore pets"
		}
		return ArchiveResult{}, s.dbErr(op, err)
	}
	s.committed(written)
	return res, nil
}

// moveSummary says what an archive or a restore of changes did, as its
// action's summary: "Archived Rex (#12)", or "Restored 20 pets".
func moveSummary(changes []PetChange, kind ChangeKind) string {
	verb := "Archived"
	if kind == ChangeRestore {
		verb = "Restored"
	}
	if len(changes) == 1 {
		return fmt.Sprintf("%s %s (#%d)", verb, changes[0].After.Name, changes[0].After.ID)
	}
	return fmt.Sprintf("%s %d pets", verb, len(changes))
}

// writeMoves moves each pet of changes (all archives or all restores)
// between pets and archived_pets within tx, if it still has the version
// it was read at, and writes the rows the moves imply through the edits'
// sink (writeImplied). A pet whose row has changed or moved meanwhile is
// left out of the pets returned.
func (s *Store) writeMoves(tx *gorm.DB, changes []PetChange, now time.Time) (updatesWritten, error) {
	if len(changes) == 0 {
		return updatesWritten{}, nil
	}
	var (
		rows    impliedRows
		written []Pet
		ids     []int64
	)
	for _, ch := range changes {
		b, a := ch.Before, ch.After
		var del, ins string
		args := []any{a.ID, a.Name, a.CategoryID, string(a.Status), a.CreatedAt, a.UpdatedAt, a.Version}
		switch ch.Kind {
		case ChangeArchive:
			del = "DELETE FROM pets WHERE id = ? AND version = ?"
			ins = "INSERT INTO archived_pets (id, name, category_id, status, created_at, updated_at, version, archived_at, archived_by)" +
				" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
			args = append(args, now, ch.Actor)
		case ChangeRestore:
			del = "DELETE FROM archived_pets WHERE id = ? AND version = ?"
			ins = "INSERT INTO pets (id, name, category_id, status, created_at, updated_at, version) VALUES (?, ?, ?, ?, ?, ?, ?)"
		default:
			return updatesWritten{}, fmt.Errorf("move a pet: change kind %d is not a move", ch.Kind)
		}
		res := tx.Exec(del, b.ID, b.Version)
		if res.Error != nil {
			return updatesWritten{}, res.Error
		}
		if res.RowsAffected != 1 {
			continue
		}
		if err := tx.Exec(ins, args...).Error; err != nil {
			return updatesWritten{}, fmt.Errorf("move pet %d: %w", b.ID, err)
		}
		if err := rows.add(len(written), ch); err != nil {
			return updatesWritten{}, err
		}
		written = append(written, a)
		ids = append(ids, b.ID)
	}
	last, err := s.writeImplied(tx, &rows, ids)
	if err != nil {
		return updatesWritten{}, err
	}
	return updatesWritten{pets: written, countRows: rows.counts.rows(), lastEvent: last}, nil
}

// GetArchivedPet returns archived pet id; one not in the archive is
// not_found.
func (s *Store) GetArchivedPet(ctx context.Context, id int64) (ArchivedPet, error) {
	var a ArchivedPet
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&a).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return ArchivedPet{}, notFound("archived pet", id)
	}
	if err != nil {
		return ArchivedPet{}, s.dbErr("read archived pet", err)
	}
	return a, nil
}

// isArchived reports whether pet id is in the archive, within tx.
func isArchived(tx *gorm.DB, id int64) (bool, error) {
	var n int64
	err := tx.Table("archived_pets").Where("id = ?", id).Count(&n).Error
	return n > 0, err
}

// ArchiveCursor is where a page of the archive starts: after the pet
// archived at At with id ID, newest first. The zero cursor is the first
// page.
type ArchiveCursor struct {
	At time.Time
	ID int64
}

// String writes the cursor for a URL: Unix nanoseconds, a dot, the id.
func (c ArchiveCursor) String() string {
	if c.ID == 0 {
		return ""
	}
	return strconv.FormatInt(c.At.UnixNano(), 10) + "." + strconv.FormatInt(c.ID, 10)
}

// ParseArchiveCursor reads a cursor as String writes it; "" is the first
// page.
func ParseArchiveCursor(s string) (ArchiveCursor, error) {
	if s == "" {
		return ArchiveCursor{}, nil
	}
	ns, id, ok := strings.Cut(s, ".")
	n, nok := parseID(ns, 0)
	i, iok := ParseID(id)
	if !ok || !nok || !iok {
		return ArchiveCursor{}, fieldError(FieldAfter, "The page of the archive is out of date: open the archive again.")
	}
	return ArchiveCursor{At: time.Unix(0, n).UTC(), ID: i}, nil
}

// ArchivePage is a page of the archive, newest first.
type ArchivePage struct {
	Pets []ArchivedPet
	// Next starts the next page; zero when this is the last.
	Next ArchiveCursor
}

// ListArchivedPets reads up to limit archived pets after the cursor,
// newest archived first, by the (archived_at, id) index.
func (s *Store) ListArchivedPets(ctx context.Context, after ArchiveCursor, limit int) (ArchivePage, error) {
	if limit < 1 || limit > MaxPageLimit {
		limit = DefaultPageLimit
	}
	q := s.db.WithContext(ctx).Order("archived_at DESC, id DESC").Limit(limit + 1)
	if after.ID != 0 {
		q = q.Where("archived_at < ? OR (archived_at = ? AND id < ?)", after.At, after.At, after.ID)
	}
	var pets []ArchivedPet
	if err := q.Find(&pets).Error; err != nil {
		return ArchivePage{}, s.dbErr("list archived pets", err)
	}
	page := ArchivePage{Pets: pets}
	if len(pets) > limit {
		page.Pets = pets[:limit]
		last := page.Pets[limit-1]
		page.Next = ArchiveCursor{At: last.ArchivedAt, ID: last.ID}
	}
	for i := range page.Pets {
		p := &page.Pets[i]
		p.ArchivedAt, p.CreatedAt, p.UpdatedAt = p.ArchivedAt.UTC(), p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	}
	return page, nil
}

// CountArchivedPets counts the archive: a read of its index, for the
// archive's heading.
func (s *Store) CountArchivedPets(ctx context.Context) (int64, error) {
	var n int64
	if err := s.db.WithContext(ctx).Model(&ArchivedPet{}).Count(&n).Error; err != nil {
		return 0, s.dbErr("count archived pets", err)
	}
	return n, nil
}

// ParsePetSelection reads the pets a console form selected, each as
// "id:version" (the version the page showed), at most max of them, in id
// order and each once; what names the action in the messages ("archive",
// "restore").
func ParsePetSelection(items []string, max int, what string) ([]PetVersion, error) {
	switch {
	case len(items) == 0:
		return nil, fieldError(FieldPets, "Select at least one pet to "+what+".")
	case len(items) > max:
		return nil, fieldError(FieldPets, fmt.Sprintf(
			"At most %d pets (one page) can be changed at once, and %d were sent. Nothing was changed.", max, len(items)))
	}
	pvs := make([]PetVersion, 0, len(items))
	for _, it := range items {
		id, ver, _ := strings.Cut(it, ":")
		var pv PetVersion
		var okID, okVer bool
		pv.ID, okID = ParseID(id)
		pv.Version, okVer = ParseID(ver)
		if !okID || !okVer {
			return nil, fieldError(FieldPets, "The list of pets is out of date: reload the page and select them again. Nothing was changed.")
		}
		pvs = append(pvs, pv)
	}
	slices.SortFunc(pvs, func(a, b PetVersion) int { return cmpInt64(a.ID, b.ID) })
	return slices.CompactFunc(pvs, func(a, b PetVersion) bool { return a.ID == b.ID }), nil
}

// archivePurgeBatch bounds the archived pets one purge transaction
// deletes, and so the ids its audit event lists.
const archivePurgeBatch = 500

// archivePurgeEvery is how often a serving instance purges the archive.
const archivePurgeEvery = time.Minute

// archiveState is what the archive keeps in this process: the runner of
// its purge.
type archiveState struct {
	bg background.Runner
}

// PurgeArchive deletes for good the pets archived before cutoff, oldest
// first, at most archivePurgeBatch per transaction, each batch with one
// audit event listing its ids (the audit keeps that they existed), and
// returns how many it deleted. Instances that purge at once do not purge a
// pet twice: a batch's rows are locked when read (MySQL) or read by the
// single writer (SQLite), and only those its DELETE removed are audited.
func (s *Store) PurgeArchive(ctx context.Context, cutoff time.Time) (int64, error) {
	var total int64
	for {
		var n int
		err := s.transaction(ctx, func(tx *gorm.DB) error {
			n = 0
			var ids []int64
			err := tx.Model(&ArchivedPet{}).Clauses(clause.Locking{Strength: "UPDATE"}).Where("archived_at < ?", cutoff).
				Order("archived_at, id").Limit(archivePurgeBatch).Pluck("id", &ids).Error
			if err != nil || len(ids) == 0 {
				return err
			}
			res := tx.Exec("DELETE FROM archived_pets WHERE id IN ?", ids)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected != int64(len(ids)) {
				// Another purge took some between the read and the
				// delete: this transaction's list is wrong; start over.
				return errPurgeRace
			}
			n = len(ids)
			ev := AuditEvent{At: s.now(), Actor: ActorArchivePurge, ActorKind: ActorKindSystem, Action: ActionPetsPurged,
				TargetType: TargetPet, Detail: purgeDetail(ids, cutoff)}
			return tx.Create(&ev).Error
		})
		if errors.Is(err, errPurgeRace) {
			continue
		}
		if err != nil {
			return total, s.dbErr("purge the archive", err)
		}
		total += int64(n)
		if n < archivePurgeBatch {
			return total, nil
		}
	}
}

// errPurgeRace rolls back a purge batch that another purge overlapped.
var errPurgeRace = errors.New("another purge deleted part of the batch")

// ActorArchivePurge is the audit actor of the archive's purge: the
// service itself.
const ActorArchivePurge = "archive retention"

// purgeDetail is a purge batch's audit detail: how many, which ids, and
// before when.
func purgeDetail(ids []int64, cutoff time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "purged %s archived before %s: ids ", plural(len(ids), "pet", "pets"), cutoff.UTC().Format(time.RFC3339))
	for i, id := range ids {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	return b.String()
}

// PurgeArchiveEvery purges the pets archived longer than retention, now
// and every archivePurgeEvery until the Store closes. The server starts
// it; commands that open the Store for a moment do not.
func (s *Store) PurgeArchiveEvery(retention time.Duration) {
	s.archive.bg.Start(func(ctx context.Context) {
		t := time.NewTicker(archivePurgeEvery)
		defer t.Stop()
		for {
			n, err := s.PurgeArchive(ctx, s.now().Add(-retention))
			switch {
			case err != nil && ctx.Err() == nil:
				s.log.Warn("could not purge the archive", "error", err)
			case n > 0:
				s.log.Info("purged archived pets", "count", n)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}
