package models

import (
	"sync/atomic"

	"gorm.io/gorm"
)

// CountWrites counts every INSERT, UPDATE, DELETE and raw statement the
// store runs through GORM from now on, for tests that bound how often a
// path writes.
func (s *Store) CountWrites() *atomic.Int64 {
	var n atomic.Int64
	count := func(*gorm.DB) { n.Add(1) }
	cb := s.db.Callback()
	for _, err := range []error{
		cb.Create().After("gorm:create").Register("petstore:count_creates", count),
		cb.Update().After("gorm:update").Register("petstore:count_updates", count),
		cb.Delete().After("gorm:delete").Register("petstore:count_deletes", count),
		cb.Raw().After("gorm:raw").Register("petstore:count_raw", count),
	} {
		if err != nil {
			panic(err)
		}
	}
	return &n
}
