package models

import (
	"context"
	"sync/atomic"
	"time"

	"petstore/models/internal/background"
)

// SQLite writes every change to its write-ahead log first; a checkpoint
// copies the log's pages back into the database file and syncs it, so
// the log can start again from its beginning. By default SQLite runs a
// checkpoint inside the commit that takes the log past 1,000 pages: on
// the one writer, so every write queued behind it waits for that copy and
// its fsync. A pet write touches pages all over the pets' indexes and the
// search words, so under steady creates that was a large share of the
// writer's time. The Store instead checkpoints beside the writer, on a
// reader's connection, soon after pet writes commit (a PASSIVE checkpoint
// neither waits for nor blocks the writer or the readers), and leaves
// SQLite's own checkpoint for a log grown far past what these keep up
// with (walAutoCheckpointPages in sqliteDSN), a safety net.

// walCheckpointEvery is the least time between two checkpoints started
// by writes: short, so the log stays small; a checkpoint of a log already
// copied costs next to nothing.
const walCheckpointEvery = 50 * time.Millisecond

// walState is the Store's state for checkpointing SQLite's log.
type walState struct {
	startedAt atomic.Int64 // unix nanoseconds of the last start
	running   atomic.Bool
	copied    atomic.Int64 // pages copied, for tests
	bg        background.Runner
}

// checkpointSometimes starts a checkpoint of SQLite's log in the background
// unless one runs or one started less than walCheckpointEvery ago. Pet
// writes call it after they commit; the other writes are few and small,
// and SQLite's own checkpoint covers them.
func (s *Store) checkpointSometimes() {
	if s.driver != DriverSQLite {
		return
	}
	w := &s.wal
	// The real clock, not s.now: this paces work, it records nothing.
	now := time.Now().UnixNano()
	if now-w.startedAt.Load() < int64(walCheckpointEvery) || !w.running.CompareAndSwap(false, true) {
		return
	}
	w.startedAt.Store(now)
	started := w.bg.Start(func(ctx context.Context) {
		defer w.running.Store(false)
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var busy, frames, copied int64
		err := s.readDB.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("could not checkpoint the SQLite log", "error", err)
			}
			return
		}
		w.copied.Add(max(copied, 0))
	})
	if !started { // the store is closed
		w.running.Store(false)
	}
}
