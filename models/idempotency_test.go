package models_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

// respond renders a stored answer the way the API does, in short.
func respond(p models.Pet) models.StoredResponse {
	return models.StoredResponse{Status: 201, Body: fmt.Appendf(nil, `{"id":%d,"name":%q}`, p.ID, p.Name),
		Location: fmt.Sprintf("/v1/pets/%d", p.ID)}
}

// request is what identifies a create named name for its key.
func request(name string) []byte { return []byte("POST /v1/pets " + name) }

func availablePet(name string) models.NewPet {
	return models.NewPet{Name: name, CategoryID: 1, Status: models.StatusAvailable}
}

// petsNamed counts the stored pets called name.
func petsNamed(t *testing.T, s *models.Store, name string) int {
	t.Helper()
	n := 0
	q := models.PetQuery{Limit: models.MaxPageLimit}
	for {
		page, more, err := s.ListPets(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range page {
			if p.Name == name {
				n++
			}
		}
		if !more {
			return n
		}
		q.After = page[len(page)-1].ID
	}
}

// createOnce creates the pet name with claim c and wants it stored.
func createOnce(t *testing.T, s *models.Store, name string, c *models.IdempotencyClaim) models.Pet {
	t.Helper()
	p, err := s.CreatePetOnce(context.Background(), availablePet(name), "tester", c, respond)
	if err != nil {
		t.Fatalf("create %q with its claim: %v", name, err)
	}
	return p
}

// claim claims key for the API key keyID and wants a claim.
func claim(t *testing.T, s *models.Store, keyID int64, key, name string) *models.IdempotencyClaim {
	t.Helper()
	c, stored, err := s.ClaimIdempotencyKey(context.Background(), keyID, key, request(name))
	if err != nil || c == nil || stored != nil {
		t.Fatalf("claim %d/%q for %q = %v, %+v, %v; want a claim", keyID, key, name, c, stored, err)
	}
	return c
}

// wantRefused claims key and wants the refusal code.
func wantRefused(t *testing.T, s *models.Store, keyID int64, key, name string, code models.Code) {
	t.Helper()
	c, stored, err := s.ClaimIdempotencyKey(context.Background(), keyID, key, request(name))
	if models.ErrorCode(err) != code || c != nil || stored != nil {
		t.Fatalf("claim %d/%q for %q = %v, %+v, %v; want %s", keyID, key, name, c, stored, err, code)
	}
}

// wantStored claims key and wants the stored answer.
func wantStored(t *testing.T, s *models.Store, keyID int64, key, name string, want models.StoredResponse) {
	t.Helper()
	c, stored, err := s.ClaimIdempotencyKey(context.Background(), keyID, key, request(name))
	if err != nil || c != nil || stored == nil || !reflect.DeepEqual(*stored, want) {
		t.Fatalf("claim %d/%q for %q = %v, %+v, %v; want the stored %+v", keyID, key, name, c, stored, err, want)
	}
}

// A key's life: claimed by its first request, refused to a repeat while
// pending (409) and to another request (422), finished with its pet, then
// replayed. Keys are per API key and case-sensitive.
func TestIdempotencyKeys(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		first := claim(t, s, 7, "order-1", "Rex")
		wantRefused(t, s, 7, "order-1", "Rex", models.CodeIdempotencyKeyInUse)
		wantRefused(t, s, 7, "order-1", "Tom", models.CodeIdempotencyKeyMismatch)
		_, _, err := s.ClaimIdempotencyKey(ctx, 7, "order-1", request("Rex"))
		if e, ok := err.(*models.Error); !ok || e.RetryAfter <= 0 {
			t.Errorf("in use: %#v, want a RetryAfter", err)
		}
		other := claim(t, s, 8, "order-1", "Tom") // another API key's
		upper := claim(t, s, 7, "ORDER-1", "Tom") // keys are case-sensitive

		p := createOnce(t, s, "Rex", first)
		wantStored(t, s, 7, "order-1", "Rex", respond(p))
		wantRefused(t, s, 7, "order-1", "Tom", models.CodeIdempotencyKeyMismatch)
		s.ReleaseIdempotencyKey(first) // finished: giving it back changes nothing
		wantStored(t, s, 7, "order-1", "Rex", respond(p))
		if n := petsNamed(t, s, "Rex"); n != 1 {
			t.Errorf("%d pets Rex, want 1", n)
		}

		// A claim given back (its create failed) leaves nothing: the key is
		// free for any request.
		s.ReleaseIdempotencyKey(other)
		claim(t, s, 8, "order-1", "Kit")
		s.ReleaseIdempotencyKey(upper)
		claim(t, s, 7, "ORDER-1", "Kit")
	})
}

// keyClock is a settable store clock.
type keyClock struct{ at atomic.Pointer[time.Time] }

func newKeyClock(s *models.Store) *keyClock {
	c := &keyClock{}
	c.set(time.Date(2027, 3, 4, 5, 6, 7, 0, time.UTC))
	s.SetClock(func() time.Time { return *c.at.Load() })
	return c
}

func (c *keyClock) set(t time.Time)         { c.at.Store(&t) }
func (c *keyClock) advance(d time.Duration) { c.set(c.at.Load().Add(d)) }

// A pending key whose request died is taken over after its lease (a
// minute); the request that held it can then no longer store its pet, so
// the key still makes exactly one.
func TestIdempotencyKeyTakeOver(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		clk := newKeyClock(s)
		stale := claim(t, s, 1, "k", "Rex")
		clk.advance(59 * time.Second)
		wantRefused(t, s, 1, "k", "Rex", models.CodeIdempotencyKeyInUse)
		clk.advance(2 * time.Second)
		wantRefused(t, s, 1, "k", "Tom", models.CodeIdempotencyKeyMismatch) // the lease is over, not the key
		fresh := claim(t, s, 1, "k", "Rex")
		wantRefused(t, s, 1, "k", "Rex", models.CodeIdempotencyKeyInUse)

		if _, err := s.CreatePetOnce(ctx, availablePet("Rex"), "stale", stale, respond); models.ErrorCode(err) != models.CodeIdempotencyKeyInUse {
			t.Fatalf("create with a claim taken over: %v, want %s", err, models.CodeIdempotencyKeyInUse)
		}
		if n := petsNamed(t, s, "Rex"); n != 0 {
			t.Fatalf("the claim taken over stored %d pets", n)
		}
		s.ReleaseIdempotencyKey(stale) // not its claim any more: nothing happens
		wantRefused(t, s, 1, "k", "Rex", models.CodeIdempotencyKeyInUse)
		p := createOnce(t, s, "Rex", fresh)
		wantStored(t, s, 1, "k", "Rex", respond(p))
		if n := petsNamed(t, s, "Rex"); n != 1 {
			t.Fatalf("%d pets Rex, want 1", n)
		}
	})
}

// A key is remembered for 24 hours; then it counts as never used, and the
// purge deletes it.
func TestIdempotencyKeyExpiry(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		clk := newKeyClock(s)
		p := createOnce(t, s, "Rex", claim(t, s, 1, "k", "Rex"))
		clk.advance(models.IdempotencyTTL - time.Microsecond)
		wantStored(t, s, 1, "k", "Rex", respond(p))
		clk.advance(time.Microsecond)
		again := claim(t, s, 1, "k", "Tom")
		createOnce(t, s, "Tom", again)
		clk.advance(models.IdempotencyTTL)
		if _, err := s.PurgeIdempotencyKeys(ctx); err != nil {
			t.Fatal(err)
		}
		if n := countKeys(t, s); n != 0 {
			t.Errorf("%d keys left after the purge of expired keys, want 0", n)
		}
	})
}

// The purge deletes every expired key in bounded statements, and no key
// that is still remembered.
func TestPurgeIdempotencyKeys(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		clk := newKeyClock(s)
		now := *clk.at.Load()
		const expired, live = 2345, 7
		insertKeys(t, s, 0, expired, now.Add(-time.Hour))
		insertKeys(t, s, expired, live, now.Add(time.Hour))
		n, err := s.PurgeIdempotencyKeys(ctx)
		if err != nil || n != expired {
			t.Fatalf("purge = %d, %v; want %d", n, err, expired)
		}
		if left := countKeys(t, s); left != live {
			t.Fatalf("%d keys left, want the %d live ones", left, live)
		}
	})
}

// Requests with keys purge the expired ones, at most once a minute per
// instance; requests without keys never do.
func TestIdempotencyKeyPurgeEveryMinute(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		clk := newKeyClock(s)
		expired := func() time.Time { return clk.at.Load().Add(-time.Hour) }
		insertKeys(t, s, 0, 5, expired())
		if _, err := s.CreatePet(ctx, availablePet("no key"), "tester"); err != nil {
			t.Fatal(err)
		}
		s.WaitIdempotencyWork()
		if n := countKeys(t, s); n != 5 {
			t.Fatalf("%d keys after a create without a key, want the 5 expired ones", n)
		}
		claim(t, s, 1, "first", "Rex")
		s.WaitIdempotencyWork()
		if n := countKeys(t, s); n != 1 {
			t.Fatalf("%d keys after the first claim, want only its own", n)
		}
		insertKeys(t, s, 5, 5, expired())
		clk.advance(59 * time.Second)
		claim(t, s, 1, "second", "Rex")
		s.WaitIdempotencyWork()
		if n := countKeys(t, s); n != 7 {
			t.Fatalf("%d keys after a claim within the minute, want 7 (no purge)", n)
		}
		clk.advance(time.Second)
		claim(t, s, 1, "third", "Rex")
		s.WaitIdempotencyWork()
		if n := countKeys(t, s); n != 3 {
			t.Fatalf("%d keys after a claim a minute later, want the 3 claimed", n)
		}
	})
}

// insertKeys stores n done keys numbered from first that expire at
// expires, straight into the table.
func insertKeys(t *testing.T, s *models.Store, first, n int, expires time.Time) {
	t.Helper()
	for start := 0; start < n; start += 500 {
		end := min(n, start+500)
		var q strings.Builder
		var args []any
		q.WriteString("INSERT INTO idempotency_keys (api_key_id, key_hash, request_hash, status, locked_at, created_at, expires_at) VALUES ")
		for i := start; i < end; i++ {
			if i > start {
				q.WriteByte(',')
			}
			q.WriteString("(?, ?, ?, 201, ?, ?, ?)")
			args = append(args, 1, fmt.Sprintf("%064d", first+i), strings.Repeat("0", 64), expires, expires, expires)
		}
		if _, err := s.SQLDB().ExecContext(context.Background(), q.String(), args...); err != nil {
			t.Fatal(err)
		}
	}
}

func countKeys(t *testing.T, s *models.Store) int {
	t.Helper()
	var n int
	if err := s.SQLDB().QueryRowContext(context.Background(), "SELECT COUNT(*) FROM idempotency_keys").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Creates with keys share the group commit's transactions with creates
// without: each key is finished with its own pet, and a create whose claim
// was taken over fails alone, storing nothing.
func TestIdempotencyKeyBatches(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		clk := newKeyClock(s)
		stale := claim(t, s, 1, "lost", "Lost")
		clk.advance(2 * time.Minute)
		taker := claim(t, s, 1, "lost", "Lost")
		a, c := claim(t, s, 1, "a", "A"), claim(t, s, 1, "c", "C")

		names := []string{"plain 1", "A", "plain 2", "Lost", "C"}
		claims := []*models.IdempotencyClaim{nil, a, nil, stale, c}
		pets, errs := createTogether(ctx, s, names, claims)
		for i, err := range errs {
			if (err != nil) != (names[i] == "Lost") {
				t.Fatalf("create %q: %v", names[i], err)
			}
		}
		if models.ErrorCode(errs[3]) != models.CodeIdempotencyKeyInUse {
			t.Errorf("create with a claim taken over: %v", errs[3])
		}
		wantStored(t, s, 1, "a", "A", respond(pets[1]))
		wantStored(t, s, 1, "c", "C", respond(pets[4]))
		if n := petsNamed(t, s, "Lost"); n != 0 {
			t.Fatalf("%d pets stored for the claim taken over", n)
		}
		createOnce(t, s, "Lost", taker)

		// A batch in which every claim holds: one transaction, every key
		// finished with its pet.
		d, e := claim(t, s, 1, "d", "D"), claim(t, s, 2, "d", "E")
		names = []string{"D", "plain 3", "E"}
		pets, errs = createTogether(ctx, s, names, []*models.IdempotencyClaim{d, nil, e})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("create %q: %v", names[i], err)
			}
		}
		wantStored(t, s, 1, "d", "D", respond(pets[0]))
		wantStored(t, s, 2, "d", "E", respond(pets[2]))
		for _, name := range []string{"plain 1", "A", "plain 2", "Lost", "C", "D", "plain 3", "E"} {
			if n := petsNamed(t, s, name); n != 1 {
				t.Errorf("%d pets %q, want 1", n, name)
			}
		}
	})
}

func createTogether(ctx context.Context, s *models.Store, names []string, claims []*models.IdempotencyClaim) ([]models.Pet, []error) {
	nps := make([]models.NewPet, len(names))
	for i, name := range names {
		nps[i] = availablePet(name)
	}
	return s.CreatePetsTogether(ctx, nps, claims, respond)
}

// Many first requests with one key at once make exactly one pet: one
// claims the key, the others are told it is in use or get its answer.
func TestIdempotencyKeyConcurrentClaims(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		const n = 64
		var (
			created, replayed, inUse atomic.Int32
			mu                       sync.Mutex
			answers                  = map[string]int{}
			wg                       sync.WaitGroup
			start                    = make(chan struct{})
		)
		for range n {
			wg.Go(func() {
				<-start
				c, stored, err := s.ClaimIdempotencyKey(ctx, 1, "same", request("Rex"))
				switch {
				case models.ErrorCode(err) == models.CodeIdempotencyKeyInUse:
					inUse.Add(1)
				case err != nil:
					t.Error(err)
				case stored != nil:
					replayed.Add(1)
					mu.Lock()
					answers[string(stored.Body)]++
					mu.Unlock()
				default:
					p, err := s.CreatePetOnce(ctx, availablePet("Rex"), "racer", c, respond)
					if err != nil {
						t.Error(err)
						return
					}
					created.Add(1)
					mu.Lock()
					answers[string(respond(p).Body)]++
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		t.Logf("%d created, %d replayed, %d told in use", created.Load(), replayed.Load(), inUse.Load())
		if created.Load() != 1 || created.Load()+replayed.Load()+inUse.Load() != n || len(answers) != 1 {
			t.Fatalf("%d created, %d replayed, %d in use, answers %v; want one create and one answer", created.Load(), replayed.Load(), inUse.Load(), answers)
		}
		if got := petsNamed(t, s, "Rex"); got != 1 {
			t.Fatalf("%d pets, want 1", got)
		}
	})
}

// BenchmarkCreatePetOnce is BenchmarkCreatePet's with-index case for a
// create with an Idempotency-Key: the claim, then the pet with the key
// finished in its transaction; and a repeat, answered from the key.
//
//	go test -run '^$' -bench 'CreatePet' -benchtime 1000x -count 6 ./models
func BenchmarkCreatePetOnce(b *testing.B) {
	for _, driver := range modelstest.Drivers {
		b.Run(driver, func(b *testing.B) {
			s := modelstest.Open(b, driver)
			ctx := context.Background()
			i := 0
			b.Run("first", func(b *testing.B) {
				for b.Loop() {
					name := fmt.Sprintf("Mochi 🐾 %d", i)
					c, _, err := s.ClaimIdempotencyKey(ctx, 1, name, request(name))
					if err != nil {
						b.Fatal(err)
					}
					if _, err := s.CreatePetOnce(ctx, availablePet(name), "bench", c, respond); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
			b.Run("replay", func(b *testing.B) {
				for b.Loop() {
					if _, stored, err := s.ClaimIdempotencyKey(ctx, 1, "Mochi 🐾 0", request("Mochi 🐾 0")); err != nil || stored == nil {
						b.Fatal(stored, err)
					}
				}
			})
		})
	}
}
