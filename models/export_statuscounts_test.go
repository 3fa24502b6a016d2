package models

import "context"

// WithFoldHook returns a context under which each fold of the status
// counts calls fn after summing its rows and before deleting them.
func WithFoldHook(ctx context.Context, fn func()) context.Context {
	return context.WithValue(ctx, foldHookKey{}, fn)
}

// SeedPetsUncompacted adds n example pets in SeedPets' transactions, but
// without what SeedPets does after them (compacting the status counts,
// MySQL's ANALYZE, the audit event): the counts are as a reader sees them while a
// seed runs.
func (s *Store) SeedPetsUncompacted(ctx context.Context, n int) error {
	for done := 0; done < n; {
		k := min(seedTxRows, n-done)
		if _, _, err := s.seedTx(ctx, done, k); err != nil {
			return err
		}
		done += k
	}
	return nil
}

// WaitCountsCompaction waits for a background compaction of the status
// counts under way.
func (s *Store) WaitCountsCompaction() {
	s.pets.counts.bg.Wait()
}

// PauseCountsCompaction keeps the store from compacting the status counts
// in the background until resume is called, for benchmarks of the reads
// of rows not compacted yet.
func (s *Store) PauseCountsCompaction() (resume func()) {
	for !s.pets.counts.running.CompareAndSwap(false, true) {
		s.WaitCountsCompaction()
	}
	return func() { s.pets.counts.running.Store(false) }
}
