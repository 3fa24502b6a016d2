package models

import (
	"context"
	"time"
)

// Test hooks of bulk jobs, for the tests of other packages (see
// testhooks.go); the service never calls them.

// InsertOrphanBulkJob writes a running bulk job whose lease ran out at
// leaseUntil and which no process runs: as one whose process died leaves
// it.
func (s *Store) InsertOrphanBulkJob(ctx context.Context, leaseUntil time.Time) (BulkJob, error) {
	one, now := 1, s.now()
	job := BulkJob{Kind: bulkKindStatus, TargetStatus: StatusSold, Actor: "ghost", State: BulkRunning, RunningSlot: &one,
		Total: 10, Processed: 4, Changed: 4, LeaseOwner: "dead", LeaseUntil: leaseUntil, CreatedAt: now, UpdatedAt: now}
	return job, s.db.WithContext(ctx).Create(&job).Error
}
