package models

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"petstore/models/internal/background"
)

// Bulk jobs: a status change of every pet matching a console filter, run in
// the background a chunk at a time. The job's row (table bulk_jobs) is its
// state for every instance: progress, and who runs it. At most one job runs
// at a time, on any instance: a job is started by inserting its row with
// running_slot = 1, which a unique index allows once.
//
// Each chunk is read afresh with the list's own reads (ExportPets, so the
// job follows whatever filter the list takes) and written through
// ChangePetsStatus over the versions just read: a pet that no longer
// matches when its chunk is read is not changed, and one changed between
// that read and the write is left as the other change made it. Every pet
// written gets what a single status change gives it (its audit event,
// status counts, change feed event); the job adds one audit event of its
// own when it ends, with its counts and filter.
//
// A job whose process dies stops moving its lease forward; the next look
// at it after the lease has run out marks it failed, saying how far it
// got. It is not resumed: running the same change again changes the rest
// (the pets already changed no longer match, or are "already" in the
// status).

// BulkChunk is how many pets one transaction of a bulk job changes.
const BulkChunk = 500

// Bulk job timings: the lease a runner holds and moves forward after each
// chunk, and the least pause between chunks. The pause is twice as long as
// the chunk took, so a job keeps the database's writer (and a core) busy
// at most a third of the time, and the API's requests mostly find them
// free; the job takes three times as long as it could.
var (
	bulkLease    = 30 * time.Second
	bulkMinPause = 20 * time.Millisecond
)

// bulkChunkHook, when set (by tests), is called after each chunk with the
// job's progress.
var bulkChunkHook atomic.Pointer[func(BulkJob)]

// BulkState is where a bulk job stands.
type BulkState string

// The states of a bulk job.
const (
	BulkRunning BulkState = "running"
	BulkDone    BulkState = "done"
	BulkFailed  BulkState = "failed"
)

// The kinds of bulk job: setting pets' status, and archiving them.
const (
	bulkKindStatus  = "pets.status"
	BulkKindArchive = "pets.archive"
)

// BulkJob is a bulk status change: what it changes, and how far it got.
type BulkJob struct {
	ID int64
	// Kind is what the job does: a status change, or BulkKindArchive.
	Kind string
	// Filter is the list's query the pets were chosen by (status, q, ...),
	// as a URL query string.
	Filter string
	// TargetStatus is the status the pets are set to ("" for an archive).
	TargetStatus Status
	Actor        string
	State        BulkState
	// RunningSlot is 1 while the job runs, nil after: its unique index lets
	// one job run at a time.
	RunningSlot *int
	// Total is how many pets matched when the change was confirmed.
	Total int
	// Processed is how many matching pets the job has read so far; of
	// them Changed were set, Already were in the status, and Stale were
	// changed by someone else between the read and the write and left.
	Processed, Changed, Already, Stale int
	LeaseOwner                         string
	LeaseUntil                         time.Time
	// Error says why a failed job stopped, in words for staff.
	Error      string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt *time.Time
}

// bulkState is what the Store keeps of bulk jobs in this process: the
// runner of the jobs it started.
type bulkState struct {
	bg background.Runner
}

// ErrBulkRunning is the error of starting a bulk job while another runs.
var ErrBulkRunning = errors.New("another bulk change is running")

// BulkFilter reads the list's query a bulk change is to follow: the
// listing it selects, with where a page starts left out (a bulk change is
// of every page), and the query as it is kept with the job.
func BulkFilter(params url.Values, zone *time.Location) (PetListing, url.Values, error) {
	l, err := ParsePetListing(params)
	if err != nil {
		return PetListing{}, nil, err
	}
	l.Zone = zone
	l.After, l.Before = 0, 0
	kept := url.Values{}
	for k, vs := range params {
		switch k {
		case FieldAfter, FieldBefore, "sort", "per_page":
			continue
		}
		if len(vs) > 0 && vs[0] != "" {
			kept.Set(k, vs[0])
		}
	}
	return l, kept, nil
}

// CountMatching counts the pets of the listing's filter (all its pages),
// reading them a chunk at a time as an export does: the exact number a
// bulk change's confirmation states.
func (s *Store) CountMatching(ctx context.Context, l PetListing) (int, error) {
	return s.ExportPets(ctx, l, ExportChunk, func([]Pet) error { return nil })
}

// StartBulkStatus starts setting every pet matching filter (the list's
// query, BulkFilter) to status in the background, by actor; total is the
// count the member confirmed; the filter's dates are days in zone. If another bulk job runs, on any instance,
// nothing starts: the error wraps ErrBulkRunning, has CodeConflict, and
// the job returned is the running one.
func (s *Store) StartBulkStatus(ctx context.Context, filter url.Values, zone *time.Location, status Status, total int, actor string) (BulkJob, error) {
	if _, ok := ParseStatus(string(status)); !ok {
		return BulkJob{}, fieldError(FieldStatus, StatusMessage)
	}
	return s.startBulk(ctx, bulkKindStatus, filter, zone, status, total, actor)
}

// StartBulkArchive starts archiving every pet matching filter in the
// background, as StartBulkStatus starts a status change: each chunk
// through ArchivePets over the versions just read, recorded as one
// undoable action (its undo restores them).
func (s *Store) StartBulkArchive(ctx context.Context, filter url.Values, zone *time.Location, total int, actor string) (BulkJob, error) {
	return s.startBulk(ctx, BulkKindArchive, filter, zone, "", total, actor)
}

// startBulk starts a bulk job of kind (StartBulkStatus, StartBulkArchive).
func (s *Store) startBulk(ctx context.Context, kind string, filter url.Values, zone *time.Location, status Status, total int, actor string) (BulkJob, error) {
	l, kept, err := BulkFilter(filter, zone)
	if err != nil {
		return BulkJob{}, err
	}
	if err := s.expireBulkJobs(ctx); err != nil {
		return BulkJob{}, err
	}
	now, one := s.now(), 1
	job := BulkJob{Kind: kind, Filter: kept.Encode(), TargetStatus: status, Actor: actor, State: BulkRunning,
		RunningSlot: &one, Total: total, LeaseOwner: rand.Text(), LeaseUntil: now.Add(bulkLease), CreatedAt: now, UpdatedAt: now}
	if len(job.Filter) > 2000 {
		return BulkJob{}, fieldError(FieldSearch, "The filter is too long for a bulk change.")
	}
	if err := s.db.WithContext(ctx).Create(&job).Error; err != nil {
		if !isDuplicate(err) {
			return BulkJob{}, s.dbErr("start bulk change", err)
		}
		running, _, rerr := s.RunningBulkJob(ctx)
		if rerr != nil {
			return BulkJob{}, rerr
		}
		return running, &Error{Code: CodeConflict, Err: ErrBulkRunning, Message: fmt.Sprintf(
			"Another bulk change is running (%s is %s): wait for it to finish, then try again. Nothing was changed.",
			running.Actor, running.Doing())}
	}
	undo, err := s.startBulkUndo(ctx, job)
	if err != nil {
		s.endBulkJob(context.WithoutCancel(ctx), job, "The change could not be recorded for undo; nothing was changed.")
		return BulkJob{}, err
	}
	if !s.bulk.bg.Start(func(bctx context.Context) { s.runBulkStatus(bctx, job, l, undo) }) {
		s.endBulkJob(context.Background(), job, "The server was stopping; nothing was changed.")
		return BulkJob{}, &Error{Code: CodeUnavailable, Message: "The server is stopping; try again shortly."}
	}
	return job, nil
}

// Doing says what the job does, in words: "setting pets to sold",
// "archiving pets".
func (job BulkJob) Doing() string {
	if job.Kind == BulkKindArchive {
		return "archiving pets"
	}
	return "setting pets to " + string(job.TargetStatus)
}

// GetBulkJob returns the bulk job id; one whose process died (its lease
// ran out) is marked failed first.
func (s *Store) GetBulkJob(ctx context.Context, id int64) (BulkJob, error) {
	if err := s.expireBulkJobs(ctx); err != nil {
		return BulkJob{}, err
	}
	var job BulkJob
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&job).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return BulkJob{}, notFound("bulk change", id)
	}
	return job, s.dbErr("read bulk change", err)
}

// RunningBulkJob returns the bulk job that runs, if one does.
func (s *Store) RunningBulkJob(ctx context.Context) (BulkJob, bool, error) {
	if err := s.expireBulkJobs(ctx); err != nil {
		return BulkJob{}, false, err
	}
	var jobs []BulkJob
	if err := s.db.WithContext(ctx).Where("running_slot = 1").Limit(1).Find(&jobs).Error; err != nil {
		return BulkJob{}, false, s.dbErr("read bulk changes", err)
	}
	if len(jobs) == 0 {
		return BulkJob{}, false, nil
	}
	return jobs[0], true, nil
}

// WaitBulkJobs waits for the bulk jobs this Store runs to end, for tests.
func (s *Store) WaitBulkJobs() { s.bulk.bg.Wait() }

// expireBulkJobs marks failed a running job whose lease has run out: its
// process stopped without ending it.
func (s *Store) expireBulkJobs(ctx context.Context) error {
	var jobs []BulkJob
	if err := s.db.WithContext(ctx).Where("running_slot = 1 AND lease_until < ?", s.now()).Find(&jobs).Error; err != nil {
		return s.dbErr("read bulk changes", err)
	}
	for _, job := range jobs {
		if err := s.endBulkJob(ctx, job, "The server running it stopped before it finished."); err != nil {
			return err
		}
	}
	return nil
}

// runBulkStatus runs job: every pet of l, a chunk at a time, each chunk
// its own transaction, with a pause after each, each pet written recorded
// under the job's undoable action undo. It ends the job as done, or
// failed when a chunk fails, the lease is lost or the Store closes.
func (s *Store) runBulkStatus(ctx context.Context, job BulkJob, l PetListing, undo *UndoAction) {
	_, err := s.ExportPets(ctx, l, BulkChunk, func(pets []Pet) error {
		start := time.Now()
		sc := StatusChange{Status: job.TargetStatus, Pets: make([]PetVersion, len(pets))}
		for i, p := range pets {
			sc.Pets[i] = PetVersion{ID: p.ID, Version: p.Version}
		}
		slices.SortFunc(sc.Pets, func(a, b PetVersion) int { return cmpInt64(a.ID, b.ID) })
		if job.Kind == BulkKindArchive {
			res, err := s.movePets(ctx, sc.Pets, job.Actor, ChangeArchive, undo)
			if err != nil {
				return err
			}
			job.Changed += len(res.Moved)
			job.Stale += len(res.Stale) + len(res.Missing) + len(res.Already)
		} else {
			res, err := s.changeStatus(ctx, sc, job.Actor, false, undo)
			if err != nil {
				return err
			}
			job.Changed += len(res.Changed)
			job.Already += len(res.Already)
			job.Stale += len(res.Stale) + len(res.Missing)
		}
		job.Processed += len(pets)
		if err := s.bulkProgress(ctx, &job); err != nil {
			return err
		}
		if hook := bulkChunkHook.Load(); hook != nil {
			(*hook)(job)
		}
		pause := max(bulkMinPause, 2*time.Since(start))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
			return nil
		}
	})
	why := ""
	switch {
	case errors.Is(err, errBulkLeaseLost):
		return // whoever took it has ended it
	case ctx.Err() != nil:
		why = "The server stopped before it finished."
	case err != nil:
		s.log.Error("bulk status change", "job", job.ID, "err", err)
		why = "The database failed part way."
	}
	if err := s.endBulkJob(context.WithoutCancel(ctx), job, why); err != nil {
		s.log.Error("end bulk status change", "job", job.ID, "err", err)
	}
}

// errBulkLeaseLost stops a runner whose job was ended by someone else.
var errBulkLeaseLost = errors.New("bulk job lease lost")

// bulkProgress records the job's progress and moves its lease forward,
// if the job is still this runner's.
func (s *Store) bulkProgress(ctx context.Context, job *BulkJob) error {
	now := s.now()
	res := s.db.WithContext(ctx).Exec("UPDATE bulk_jobs SET processed = ?, changed = ?, already = ?, stale = ?, lease_until = ?, updated_at = ?"+
		" WHERE id = ? AND lease_owner = ? AND running_slot = 1",
		job.Processed, job.Changed, job.Already, job.Stale, now.Add(bulkLease), now, job.ID, job.LeaseOwner)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return errBulkLeaseLost
	}
	return nil
}

// endBulkJob ends job, as done when why is "" and else as failed for that
// reason, and records its audit event, in one transaction; a job already
// ended (by its runner, or by another look at an expired lease) is left.
func (s *Store) endBulkJob(ctx context.Context, job BulkJob, why string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	state := BulkDone
	if why != "" {
		state = BulkFailed
	}
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		now := s.now()
		// A runner ending its own job writes its last counts; anyone else
		// keeps those of the job's last chunk.
		res := tx.Exec("UPDATE bulk_jobs SET state = ?, running_slot = NULL, error = ?, finished_at = ?, updated_at = ?,"+
			" processed = CASE WHEN lease_owner = ? THEN ? ELSE processed END, changed = CASE WHEN lease_owner = ? THEN ? ELSE changed END,"+
			" already = CASE WHEN lease_owner = ? THEN ? ELSE already END, stale = CASE WHEN lease_owner = ? THEN ? ELSE stale END"+
			" WHERE id = ? AND running_slot = 1",
			string(state), why, now, now, job.LeaseOwner, job.Processed, job.LeaseOwner, job.Changed,
			job.LeaseOwner, job.Already, job.LeaseOwner, job.Stale, job.ID)
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		var ended BulkJob
		if err := tx.Where("id = ?", job.ID).Take(&ended).Error; err != nil {
			return err
		}
		if err := s.completeBulkUndo(tx, ended, now); err != nil {
			return err
		}
		action := ActionPetsBulkStatus
		if ended.Kind == BulkKindArchive {
			action = ActionPetsBulkArchive
		}
		ev := AuditEvent{At: now, Actor: ended.Actor, Action: action, TargetType: TargetPet,
			Detail: truncate(bulkDetail(ended), 500)}
		return tx.Create(&ev).Error
	})
	return s.dbErr("end bulk change", err)
}

// bulkDetail is a bulk change's audit detail: what it did, how it ended
// and its filter, such as `set 2500 of 2500 matching pets to sold (3 already
// sold); filter: status available, search "cat"`.
func bulkDetail(job BulkJob) string {
	var b strings.Builder
	if job.Kind == BulkKindArchive {
		fmt.Fprintf(&b, "archived %s", plural(job.Changed, "pet", "pets"))
	} else {
		fmt.Fprintf(&b, "set %s to %s", plural(job.Changed, "pet", "pets"), job.TargetStatus)
	}
	var skipped []string
	if job.Already > 0 {
		skipped = append(skipped, fmt.Sprintf("%d already %s", job.Already, job.TargetStatus))
	}
	if job.Stale > 0 {
		skipped = append(skipped, fmt.Sprintf("%d changed by someone else meanwhile, left as they were", job.Stale))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(skipped, "; "))
	}
	fmt.Fprintf(&b, " of %d matching when confirmed", job.Total)
	if job.State == BulkFailed {
		fmt.Fprintf(&b, "; stopped after %d: %s", job.Processed, job.Error)
	}
	params, _ := url.ParseQuery(job.Filter)
	return b.String() + "; filter: " + FilterWords(params)
}

// plural writes n with the noun's singular or plural form.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// FilterWords says in plain words which pets a list's query selects:
// "all pets", or each filter, such as `status available, name search
// "cat"`. A parameter it does not know is named as it is given.
func FilterWords(params url.Values) string {
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := filterOrder(a) - filterOrder(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, k := range names {
		v := params.Get(k)
		if v == "" {
			continue
		}
		switch k {
		case FieldAfter, FieldBefore, "sort", "per_page":
		case FieldStatus:
			parts = append(parts, "status "+v)
		case FieldSearch:
			parts = append(parts, "name search "+strconv.Quote(v))
		case "category":
			parts = append(parts, "category "+v)
		case "created_from":
			parts = append(parts, "added on or after "+v)
		case "created_to":
			parts = append(parts, "added on or before "+v)
		default:
			parts = append(parts, k+" "+strconv.Quote(v))
		}
	}
	if len(parts) == 0 {
		return "all pets"
	}
	return strings.Join(parts, ", ")
}

// filterOrder orders FilterWords' parts: the list's filters in the order
// the page shows them, then any other by name.
func filterOrder(k string) int {
	if i := slices.Index([]string{FieldStatus, FieldSearch, "category", "created_from", "created_to"}, k); i >= 0 {
		return i - 100
	}
	return 0
}
