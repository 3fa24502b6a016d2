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

// ExpireBulkLease makes the lease of bulk job id run out, as it does
// when its process dies.
func (s *Store) ExpireBulkLease(ctx context.Context, id int64) error {
	return s.db.WithContext(ctx).Exec("UPDATE bulk_jobs SET lease_until = ? WHERE id = ?", s.now().Add(-time.Second), id).Error
}
