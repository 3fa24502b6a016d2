package models_test

import (
	"context"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

// A verified key is trusted for KeyCacheTTL: a partner's requests do not
// each read the key's row (it was one read per request).
func TestAuthenticateCachesVerifiedKeys(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		_, key := createKey(t, s, "partner")
		reads := s.CountReads()
		start := time.Now()
		const n = 500
		for range n {
			if _, err := s.Authenticate(ctx, key); err != nil {
				t.Fatal(err)
			}
		}
		// One read of the row per KeyCacheTTL, plus the prefix set's.
		bound := 2 * (int64(time.Since(start)/models.KeyCacheTTL) + 1)
		if got := reads.Load(); got > bound {
			t.Errorf("%d authentications read the database %d times, want at most %d", n, got, bound)
		}
		// A wrong secret under the same prefix is never served from the cache.
		last := "a"
		if key[len(key)-1] == 'a' {
			last = "b"
		}
		wrong := key[:len(key)-1] + last
		if _, err := s.Authenticate(ctx, wrong); models.ErrorCode(err) != models.CodeUnauthorized {
			t.Errorf("wrong secret with a cached key's prefix: %v, want unauthorized", err)
		}
	})
}
