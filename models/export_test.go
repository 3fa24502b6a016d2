package models

import (
	"context"

	"gorm.io/gorm"
)

// Transaction exposes the Store's retrying transaction to the tests.
func (s *Store) Transaction(ctx context.Context, fn func(tx *gorm.DB) error) error {
	return s.transaction(ctx, fn)
}

// CommonPasswordCount returns the number of passwords in the embedded list.
func CommonPasswordCount() int { return len(commonPasswords()) }

// HashingPeak is the most bcrypt hashes or comparisons that ran at once.
func (s *Store) HashingPeak() int64 { return s.hashing.peak.Load() }
