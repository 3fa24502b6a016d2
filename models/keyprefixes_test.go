package models_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"petstore/models"
	"petstore/models/modelstest"
)

// openInstances opens n stores over one fresh, migrated database: n
// instances of the service.
func openInstances(t *testing.T, driver string, n int) []*models.Store {
	t.Helper()
	cfg := modelstest.Database(t, driver)
	var stores []*models.Store
	for i := range n {
		s, err := models.Open(context.Background(), models.Options{Driver: string(cfg.Driver), DSN: cfg.DSN,
			ConnectTimeout: 20 * time.Second, PasswordCost: bcrypt.MinCost})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if i == 0 {
			if _, err := s.Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		stores = append(stores, s)
	}
	return stores
}

// A flood of well-formed keys with made-up prefixes does not reach the
// database: the store reads the table of prefixes at most once per 250 ms,
// not once per key (it was one read per request).
func TestAuthenticateUnknownPrefixesBounded(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		_, good := createKey(t, s, "partner")
		reads := s.CountReads()
		const workers, each = 8, 250
		start := time.Now()
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for range each {
					if _, err := s.Authenticate(ctx, models.GenerateKey()); models.ErrorCode(err) != models.CodeUnauthorized {
						t.Errorf("made-up key: %v, want unauthorized", err)
						return
					}
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		// One read at the start, then at most one per 250 ms elapsed.
		bound := 1 + int64(elapsed/(250*time.Millisecond)) + 1
		if got := reads.Load(); got > bound {
			t.Errorf("%d made-up keys in %v caused %d database reads, want at most %d", workers*each, elapsed, got, bound)
		}
		// Known prefixes still read their row: the right key works, a
		// wrong secret under its prefix does not.
		if _, err := s.Authenticate(ctx, good); err != nil {
			t.Fatalf("the real key: %v", err)
		}
		wrong := good[:models.KeyPrefixLen+1] + models.GenerateKey()[models.KeyPrefixLen+1:]
		if _, err := s.Authenticate(ctx, wrong); models.ErrorCode(err) != models.CodeUnauthorized {
			t.Errorf("wrong secret under a real prefix: %v", err)
		}
	})
}

// Keys made by this instance work here at once; keys made by another
// instance on the same database work here within the refresh interval; a
// revocation by another instance applies here at once.
func TestAuthenticateAcrossInstances(t *testing.T) {
	t.Parallel()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			stores := openInstances(t, driver, 2)
			here, other := stores[0], stores[1]
			// Load this instance's set of prefixes.
			if _, err := here.Authenticate(ctx, models.GenerateKey()); models.ErrorCode(err) != models.CodeUnauthorized {
				t.Fatalf("made-up key: %v", err)
			}

			_, mine := createKey(t, here, "made here")
			if _, err := here.Authenticate(ctx, mine); err != nil {
				t.Fatalf("a key made here, at once: %v", err)
			}

			k, theirs := createKey(t, other, "made elsewhere")
			var err error
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if _, err = here.Authenticate(ctx, theirs); err == nil {
					break
				}
			}
			if err != nil {
				t.Fatalf("a key made by another instance never worked here: %v", err)
			}

			if _, err := other.RevokeAPIKey(ctx, k.ID, "tester"); err != nil {
				t.Fatal(err)
			}
			// here verified the key just now and may trust it for
			// KeyCacheTTL (under the promised second), not longer.
			time.Sleep(models.KeyCacheTTL)
			if _, err := here.Authenticate(ctx, theirs); models.ErrorCode(err) != models.CodeUnauthorized {
				t.Fatalf("a key revoked by another instance, %s later: %v, want unauthorized", models.KeyCacheTTL, err)
			}
		})
	}
}
