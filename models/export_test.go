package models

import (
	"context"

	"gorm.io/gorm"
)

// Transaction exposes the Store's retrying transaction to the tests.
func (s *Store) Transaction(ctx context.Context, fn func(tx *gorm.DB) error) error {
	return s.transaction(ctx, fn)
}

// HashingPeak is the most bcrypt hashes or comparisons that ran at once.
func (s *Store) HashingPeak() int64 { return s.hashing.peak.Load() }
