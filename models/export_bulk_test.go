package models

import (
	"context"
	"time"
)

// SetBulkChunkHook makes every bulk job call fn after each chunk, with its
// progress, until the returned function undoes it. Tests that set it do
// not run in parallel with other tests that start bulk jobs.
func SetBulkChunkHook(fn func(BulkJob)) (undo func()) {
	bulkChunkHook.Store(&fn)
	return func() { bulkChunkHook.Store(nil) }
}

// InsertOrphanBulkJob writes a running bulk job whose lease ran out at
// leaseUntil and which no process runs: as one whose process died leaves
// it.
func (s *Store) InsertOrphanBulkJob(ctx context.Context, leaseUntil time.Time) (BulkJob, error) {
	one, now := 1, s.now()
	job := BulkJob{Kind: bulkKindStatus, TargetStatus: StatusSold, Actor: "ghost", State: BulkRunning, RunningSlot: &one,
		Total: 10, Processed: 4, Changed: 4, LeaseOwner: "dead", LeaseUntil: leaseUntil, CreatedAt: now, UpdatedAt: now}
	return job, s.db.WithContext(ctx).Create(&job).Error
}

// ExpireBulkLease makes the lease of bulk job id run out, as it does
// when its process dies.
func (s *Store) ExpireBulkLease(ctx context.Context, id int64) error {
	return s.db.WithContext(ctx).Exec("UPDATE bulk_jobs SET lease_until = ? WHERE id = ?", s.now().Add(-time.Second), id).Error
}
