package models_test

import (
	"context"
	"sync"
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

// Wrong secrets under a known prefix cost a bounded number of reads,
// however many arrive at once: the key's row is read by one of them and
// shared, then used for KeyCacheTTL whatever the secrets sent. The row is
// checked every time: the right key still works, and a revocation here
// applies at once although the row is cached.
func TestAuthenticateWrongSecretsReadTheRowBounded(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		k, key := createKey(t, s, "partner")
		wrong := key[:models.KeyPrefixLen+1] + models.GenerateKey()[models.KeyPrefixLen+1:]
		reads, rows := s.CountReads(), s.KeyReads()
		start := time.Now()
		const n = 100
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				if _, err := s.Authenticate(ctx, wrong); models.ErrorCode(err) != models.CodeUnauthorized {
					t.Errorf("a wrong secret: %v, want unauthorized", err)
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		// One read of the row per KeyCacheTTL, plus the prefix set's.
		most := 1 + int64(elapsed/models.KeyCacheTTL)
		t.Logf("%d concurrent wrong secrets in %v: %d row reads, %d reads in all", n, elapsed, s.KeyReads()-rows, reads.Load())
		if got := s.KeyReads() - rows; got > most {
			t.Errorf("%d concurrent wrong secrets in %v read the key's row %d times, want at most %d", n, elapsed, got, most)
		}
		if got := reads.Load(); got > 2*most {
			t.Errorf("%d concurrent wrong secrets in %v read the database %d times, want at most %d", n, elapsed, got, 2*most)
		}

		if _, err := s.Authenticate(ctx, key); err != nil {
			t.Fatalf("the right key beside them: %v", err)
		}
		if _, err := s.RevokeAPIKey(ctx, k.ID, "tester"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate(ctx, key); models.ErrorCode(err) != models.CodeUnauthorized {
			t.Fatalf("a key revoked here, at once: %v, want unauthorized", err)
		}
	})
}
