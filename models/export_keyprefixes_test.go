package models

import (
	"sync/atomic"

	"gorm.io/gorm"
)

// CountReads counts every SELECT the store runs from now on, for tests that
// bound how often a path reads the database.
func (s *Store) CountReads() *atomic.Int64 {
	var n atomic.Int64
	err := s.db.Callback().Query().After("gorm:query").Register("petstore:count_reads", func(*gorm.DB) { n.Add(1) })
	if err != nil {
		panic(err)
	}
	return &n
}
