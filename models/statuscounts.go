package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"petstore/models/internal/background"
	"strings"
	"sync/atomic"
	"time"

	"gorm.io/gorm"
)

// How many pets are in each status, for the console's numbers at a glance,
// exact and cheap on a million pets. Counting the pets themselves reads
// the whole (status, id) index: about a million index entries each time.
// Instead every write that changes how many pets a status holds inserts
// signed deltas into pet_status_counts in its own transaction: a batch of
// creates one row per status it holds, a status change -1 for the old
// status and +1 for the new (statusDeltas). The count of a status is the
// sum of its deltas (PetStatusCounts).
//
// Writes only ever insert new rows, never update a shared one: creates
// that run at once never wait for each other's counter, and on a
// multi-primary cluster (Galera) inserts of new keys never fail
// certification against each other. Now and then the rows are folded into
// one per status (CompactPetStatusCounts), so the sum stays a read of a few
// rows.

// StatusCounts is how many pets are in each status; a status without pets
// may be absent (its count is 0).
type StatusCounts map[Status]int64

// Total is how many pets there are.
func (c StatusCounts) Total() int64 {
	var n int64
	for _, v := range c {
		n += v
	}
	return n
}

// statusDeltas are the changes of a write to how many pets each status
// holds, in the order of Statuses. A fixed array, so the create path adds
// to it without allocating.
type statusDeltas [3]int64

// statusArgs are the statuses as SQL arguments, in the order of Statuses,
// made once: each create batch passes one or more of them.
var statusArgs = [...]any{string(StatusAvailable), string(StatusPending), string(StatusSold)}

// add adds n pets to st (n may be negative); it reports false for a status
// that does not exist.
func (d *statusDeltas) add(st Status, n int64) bool {
	switch st {
	case StatusAvailable:
		d[0] += n
	case StatusPending:
		d[1] += n
	case StatusSold:
		d[2] += n
	default:
		return false
	}
	return true
}

// move moves one pet from one status to another.
func (d *statusDeltas) move(from, to Status) error {
	if !d.add(from, -1) || !d.add(to, 1) {
		return fmt.Errorf("count a status change from %q to %q: not a status", from, to)
	}
	return nil
}

// rows is how many rows writing d inserts: one per status that changed.
func (d *statusDeltas) rows() int {
	n := 0
	for _, v := range d {
		if v != 0 {
			n++
		}
	}
	return n
}

// insertDeltasSQL starts the INSERT of a write's deltas.
const insertDeltasSQL = "INSERT INTO pet_status_counts (status, delta) VALUES "

// appendSQL writes the multi-row INSERT of d to q, passing its values to
// arg; it writes nothing when no status changed.
func (d *statusDeltas) appendSQL(q *strings.Builder, arg func(...any)) {
	sep := insertDeltasSQL
	for i, v := range d {
		if v != 0 {
			q.WriteString(sep)
			q.WriteString("(?, ?)")
			arg(statusArgs[i], v)
			sep = ","
		}
	}
}

// sql is the multi-row INSERT of d and its arguments ("" when no status
// changed).
func (d *statusDeltas) sql() (string, []any) {
	var q strings.Builder
	args := make([]any, 0, 2*len(d))
	d.appendSQL(&q, func(vs ...any) { args = append(args, vs...) })
	return q.String(), args
}

// writeStatusDeltas inserts d in the transaction tx (nothing when no
// status changed).
func writeStatusDeltas(tx *gorm.DB, d statusDeltas) error {
	q, args := d.sql()
	if q == "" {
		return nil
	}
	if err := tx.Exec(q, args...).Error; err != nil {
		return fmt.Errorf("count pets by status: %w", err)
	}
	return nil
}

// PetStatusCounts returns how many pets are in each status: the sums of
// the deltas, a read of a few rows when they were compacted lately. A
// read that finds many rows has them compacted in the background.
func (s *Store) PetStatusCounts(ctx context.Context) (StatusCounts, error) {
	sums, read, err := sumDeltas(ctx, s.readDB, "SELECT status, SUM(delta), COUNT(*) FROM pet_status_counts GROUP BY status")
	if err != nil {
		return nil, s.dbErr("count pets by status", err)
	}
	counts := make(StatusCounts, len(sums))
	for st, n := range sums {
		counts[Status(st)] = n
	}
	s.compactCountsSometimes(read >= countsCompactRows)
	return counts, nil
}

// Compaction of the deltas.
const (
	// countsCompactEvery is how often an instance that writes deltas
	// compacts them.
	countsCompactEvery = time.Minute
	// countsCompactRows is how many rows of deltas make an instance compact
	// sooner: the read stays a sum of at most about this many rows
	// however fast pets are created.
	countsCompactRows = 10_000
	// countsFoldRows bounds the rows one compaction transaction folds, so
	// that it stays short (SQLite's writer, a Galera write set).
	countsFoldRows = 10_000
	// countsFoldAttempts bounds the tries of a fold that found its range
	// changed under it (see foldDeltas).
	countsFoldAttempts = 3
)

// errFoldRace says a fold deleted other rows than it summed: a delta was
// inserted into its range meanwhile. Nothing was written.
var errFoldRace = errors.New("the deltas changed while they were folded")

// CompactPetStatusCounts folds the deltas present when it starts into one
// row per status: in transactions of at most countsFoldRows rows, each
// inserting the sums of its rows as new rows and deleting the rows it
// summed. It returns how many rows it folded. Several instances may
// compact at once: each fold locks the rows it sums, so a delta is never
// summed by two folds, nor deleted without being summed.
func (s *Store) CompactPetStatusCounts(ctx context.Context) (int64, error) {
	var top sql.NullInt64
	if err := s.readDB.QueryRowContext(ctx, "SELECT MAX(id) FROM pet_status_counts").Scan(&top); err != nil {
		return 0, s.dbErr("compact status counts", err)
	}
	var folded int64
	for top.Valid {
		n, more, err := s.foldDeltasRetried(ctx, top.Int64)
		folded += n
		if err != nil {
			return folded, s.dbErr("compact status counts", err)
		}
		if !more {
			break
		}
	}
	return folded, nil
}

// foldDeltasRetried is foldDeltas, tried again when the database aborted
// it (a deadlock, or a Galera certification conflict with another
// instance's fold) or its range changed under it.
func (s *Store) foldDeltasRetried(ctx context.Context, top int64) (folded int64, more bool, err error) {
	for range countsFoldAttempts {
		err = retry(ctx, func() error {
			var err error
			folded, more, err = s.foldDeltas(ctx, top)
			return err
		})
		if !errors.Is(err, errFoldRace) {
			return folded, more, err
		}
	}
	return 0, false, err
}

// foldDeltas folds, in one transaction, the oldest rows of deltas with ids
// up to top (at most countsFoldRows of them), and reports how many it
// folded and whether rows up to top remain.
//
// On MySQL the sums are a locking read (FOR UPDATE): they wait for a delta
// in the range not yet committed, and no other fold can delete the rows
// until this one commits; then the DELETE of the range must remove
// exactly as many rows as were summed, which makes them the same rows: a
// delta inserted into the range after the sums (a Galera node's ids
// interleave with this one's) would make the count differ, and the fold
// is rolled back (errFoldRace) and tried again. READ COMMITTED takes no
// gap locks, so creates, which insert above the range, never wait for a
// fold. SQLite runs one writer at a time: nothing changes under a fold.
func (s *Store) foldDeltas(ctx context.Context, top int64) (folded int64, more bool, err error) {
	var opts *sql.TxOptions
	lock := ""
	if s.driver == DriverMySQL {
		opts, lock = &sql.TxOptions{Isolation: sql.LevelReadCommitted}, " FOR UPDATE"
	}
	tx, err := s.sqlDB.BeginTx(ctx, opts)
	if err != nil {
		return 0, false, err
	}
	defer tx.Rollback()
	hi := top
	err = tx.QueryRowContext(ctx, "SELECT id FROM pet_status_counts WHERE id <= ? ORDER BY id LIMIT 1 OFFSET ?", top, countsFoldRows).Scan(&hi)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		hi = top
	case err != nil:
		return 0, false, err
	default:
		hi, more = hi-1, true // the row at the offset starts the next fold
	}
	sums, rows, err := sumDeltas(ctx, tx, "SELECT status, SUM(delta), COUNT(*) FROM pet_status_counts WHERE id <= ? GROUP BY status"+lock, hi)
	if err != nil || rows <= int64(len(sums)) {
		return 0, more, err // already one row per status (or none)
	}
	if hook, ok := ctx.Value(foldHookKey{}).(func()); ok {
		hook()
	}
	var sumsByStatus statusDeltas
	for st, sum := range sums {
		if !sumsByStatus.add(Status(st), sum) {
			return 0, false, fmt.Errorf("fold status counts: status %q", st)
		}
	}
	if q, args := sumsByStatus.sql(); q != "" {
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return 0, false, err
		}
	}
	res, err := tx.ExecContext(ctx, "DELETE FROM pet_status_counts WHERE id <= ?", hi)
	if err != nil {
		return 0, false, err
	}
	if n, err := res.RowsAffected(); err != nil || n != rows {
		return 0, false, errors.Join(errFoldRace, err)
	}
	return rows, more, tx.Commit()
}

// foldHookKey carries a function that foldDeltas calls between its sums
// and its DELETE, for tests that write into its range meanwhile.
type foldHookKey struct{}

// querier is a pool, a transaction, or GORM's connection of a transaction.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// sumDeltas runs query (status, sum, rows by status) on db and returns the
// sums and how many rows they add up.
func sumDeltas(ctx context.Context, db querier, query string, args ...any) (map[string]int64, int64, error) {
	rs, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, 0, err
	}
	defer rs.Close()
	sums := map[string]int64{}
	var total int64
	for rs.Next() {
		var st string
		var sum, n int64
		if err := rs.Scan(&st, &sum, &n); err != nil {
			return nil, 0, err
		}
		sums[st] += sum
		total += n
	}
	return sums, total, rs.Err()
}

// countsCompaction is the Store's state for compacting the deltas in the
// background: when this instance last started, how many rows it has seen
// written since, and the work Close waits for.
type countsCompaction struct {
	startedAt atomic.Int64 // unix nanoseconds
	written   atomic.Int64 // rows of deltas this instance wrote since
	running   atomic.Bool
	bg        background.Runner
}

// noteDeltas records that rows rows of deltas were written, and compacts
// in the background when it is time (compactCountsSometimes).
func (s *Store) noteDeltas(rows int) {
	s.compactCountsSometimes(s.pets.counts.written.Add(int64(rows)) >= countsCompactRows)
}

// compactCountsSometimes compacts the deltas in the background when this
// instance has not for countsCompactEvery, or now when many is true (it
// wrote or found countsCompactRows rows); one compaction at a time per
// instance. The writes and reads of the deltas call it, so an instance
// that neither writes nor reads them does no work.
func (s *Store) compactCountsSometimes(many bool) {
	c := &s.pets.counts
	now := s.now().UnixNano()
	if !many && now-c.startedAt.Load() < int64(countsCompactEvery) {
		return
	}
	if !c.running.CompareAndSwap(false, true) {
		return
	}
	c.startedAt.Store(now)
	c.written.Store(0)
	started := c.bg.Start(func(ctx context.Context) {
		defer c.running.Store(false)
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if _, err := s.CompactPetStatusCounts(ctx); err != nil {
			s.log.Warn("could not compact the pets' status counts", "error", err)
		}
	})
	if !started { // the store is closed
		c.running.Store(false)
	}
}
