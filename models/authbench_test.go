package models_test

import (
	"context"
	"testing"

	"petstore/models"
	"petstore/models/modelstest"
)

// BenchmarkAuthenticate is a partner's key checked on every request: almost
// always a hit of the key cache (one read of the row per KeyCacheTTL). The
// figure to watch is allocs/op, which the per-request path must not grow.
func BenchmarkAuthenticate(b *testing.B) {
	s := modelstest.Open(b, models.DriverSQLite)
	_, key := createKey(b, s, "bench partner")
	hash := models.HashKey(key)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.AuthenticateHashed(ctx, key, hash); err != nil {
			b.Fatal(err)
		}
	}
}
