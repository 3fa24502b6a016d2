package models_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

// countedPets counts the pets themselves, by status.
func countedPets(tb testing.TB, s *models.Store) models.StatusCounts {
	tb.Helper()
	rows, err := s.SQLDB().Query("SELECT status, COUNT(*) FROM pets GROUP BY status")
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	out := models.StatusCounts{}
	for rows.Next() {
		var st string
		var n int64
		if err := rows.Scan(&st, &n); err != nil {
			tb.Fatal(err)
		}
		out[models.Status(st)] = n
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// wantCounts wants PetStatusCounts to say what counting the pets says,
// and, when want is not nil, want (a status left out: none).
func wantCounts(tb testing.TB, s *models.Store, want models.StatusCounts) {
	tb.Helper()
	got, err := s.PetStatusCounts(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	truth := countedPets(tb, s)
	for _, st := range models.Statuses {
		if got[st] != truth[st] {
			tb.Errorf("%s: the counts say %d, the pets %d", st, got[st], truth[st])
		}
		if want != nil && truth[st] != want[st] {
			tb.Errorf("%s: %d pets, want %d", st, truth[st], want[st])
		}
	}
}

// deltaRows is how many rows the status counts are made of.
func deltaRows(tb testing.TB, s *models.Store) int64 {
	tb.Helper()
	var n int64
	if err := s.SQLDB().QueryRow("SELECT COUNT(*) FROM pet_status_counts").Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// compact compacts the status counts and wants at most one row per status
// left.
func compact(tb testing.TB, s *models.Store) {
	tb.Helper()
	if _, err := s.CompactPetStatusCounts(context.Background()); err != nil {
		tb.Fatal(err)
	}
	if n := deltaRows(tb, s); n > int64(len(models.Statuses)) {
		tb.Errorf("%d rows of counts after compacting, want one per status at most", n)
	}
}

// statusOf is the status of the i-th test pet: all three in turn.
func statusOf(i int) models.Status { return models.Statuses[i%len(models.Statuses)] }

// Creates through the API's path (group commit: batches of several
// statuses, with and without idempotency keys), 100 at once.
func TestStatusCountsCreates(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		const goroutines, each = 100, 4
		want := models.StatusCounts{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		start := make(chan struct{})
		for g := range goroutines {
			wg.Go(func() {
				<-start
				for i := range each {
					st := statusOf(g + i)
					var err error
					if g%10 == 0 && i == 0 { // some with an idempotency key (those are available)
						st = models.StatusAvailable
						c, _, cerr := s.ClaimIdempotencyKey(ctx, 1, fmt.Sprintf("key-%d", g), request("k"))
						if cerr != nil {
							t.Error(cerr)
							return
						}
						_, err = s.CreatePetOnce(ctx, availablePet(fmt.Sprintf("Once %d", g)), "test", c, respond)
					} else {
						_, err = s.CreatePet(ctx, models.NewPet{Name: fmt.Sprintf("Pet %d-%d", g, i), CategoryID: 1, Status: st}, "test")
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					want[st]++
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		wantCounts(t, s, want)

		// One batch of the three statuses and a key: the counts are written
		// with the pets (on MySQL, before the key's checks in the same text).
		nps := []models.NewPet{
			{Name: "Batch A", CategoryID: 1, Status: models.StatusSold},
			{Name: "Batch B", CategoryID: 1, Status: models.StatusPending},
			{Name: "Batch C", CategoryID: 1, Status: models.StatusSold},
			availablePet("Batch D"),
		}
		claims := []*models.IdempotencyClaim{nil, nil, nil, claim(t, s, 2, "batch", "Batch D")}
		_, errs := s.CreatePetsTogether(ctx, nps, claims, respond)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("create %s: %v", nps[i].Name, err)
			}
		}
		want[models.StatusSold] += 2
		want[models.StatusPending]++
		want[models.StatusAvailable]++
		wantCounts(t, s, want)
		compact(t, s)
		wantCounts(t, s, want)
	})
}

// The console's status changes move a pet from one count to another, in
// their transactions; edits that change no status, and refused ones, move
// nothing.
func TestStatusCountsConsoleChanges(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		a, b, c := newPet(t, s, "A", models.StatusAvailable), newPet(t, s, "B", models.StatusAvailable), newPet(t, s, "C", models.StatusAvailable)
		d := newPet(t, s, "D", models.StatusPending)
		wantCounts(t, s, models.StatusCounts{models.StatusAvailable: 3, models.StatusPending: 1})

		// One pet's status, from its row; again to the same status: nothing.
		for range 2 {
			if _, err := s.UpdatePetStatus(ctx, a.ID, models.StatusSold, "test"); err != nil {
				t.Fatal(err)
			}
			wantCounts(t, s, models.StatusCounts{models.StatusAvailable: 2, models.StatusPending: 1, models.StatusSold: 1})
		}

		// An edit of name and status; a rename alone; a stale edit.
		if _, err := s.EditPet(ctx, b.ID, 1, models.NewPet{Name: "Bee", CategoryID: 1, Status: models.StatusPending}, "test"); err != nil {
			t.Fatal(err)
		}
		want := models.StatusCounts{models.StatusAvailable: 1, models.StatusPending: 2, models.StatusSold: 1}
		wantCounts(t, s, want)
		if _, err := s.EditPet(ctx, b.ID, 2, models.NewPet{Name: "Beatrice", CategoryID: 1, Status: models.StatusPending}, "test"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.EditPet(ctx, b.ID, 2, models.NewPet{Name: "Bee", CategoryID: 1, Status: models.StatusSold}, "test"); models.ErrorCode(err) != models.CodeConflict {
			t.Fatalf("a stale edit: %v, want a conflict", err)
		}
		wantCounts(t, s, want)

		// Bulk: C and D change; A is already sold, B is stale, 999 missing.
		ch := models.StatusChange{Status: models.StatusSold, Pets: []models.PetVersion{
			{ID: a.ID, Version: 2}, {ID: b.ID, Version: 1}, {ID: c.ID, Version: 1}, {ID: d.ID, Version: 1}, {ID: 999_999, Version: 1}}}
		res, err := s.ChangePetsStatus(ctx, ch, "test")
		if err != nil || len(res.Changed) != 2 {
			t.Fatalf("bulk change = %+v, %v; want C and D changed", res, err)
		}
		wantCounts(t, s, models.StatusCounts{models.StatusPending: 1, models.StatusSold: 3})
		// The same again: all already sold but B (stale): nothing moves.
		if _, err := s.ChangePetsStatus(ctx, ch, "test"); err != nil {
			t.Fatal(err)
		}
		wantCounts(t, s, models.StatusCounts{models.StatusPending: 1, models.StatusSold: 3})
		compact(t, s)
		wantCounts(t, s, models.StatusCounts{models.StatusPending: 1, models.StatusSold: 3})
	})
}

// A seed counts its pets in its own transactions (a row per status per
// transaction) and compacts them at the end.
func TestStatusCountsSeed(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		newPet(t, s, "Before", models.StatusSold)
		s.WaitCountsCompaction()
		// 45,000: two transactions of 20,000 and one of 5,000.
		if err := s.SeedPetsUncompacted(ctx, 45_000); err != nil {
			t.Fatal(err)
		}
		want := models.StatusCounts{models.StatusAvailable: 27_000, models.StatusPending: 11_250, models.StatusSold: 6_750 + 1}
		wantCounts(t, s, want)
		if n := deltaRows(t, s); n > 1+3*3 {
			t.Errorf("%d rows of counts after three seed transactions, want at most 3 each and the first pet's", n)
		}
		if _, err := s.SeedPets(ctx, 45_000, "test", nil); err != nil {
			t.Fatal(err)
		}
		for _, st := range models.Statuses {
			want[st] = 2*want[st] - map[models.Status]int64{models.StatusSold: 1}[st]
		}
		wantCounts(t, s, want)
		if n := deltaRows(t, s); n > 3 {
			t.Errorf("%d rows of counts after a seed, want it compacted to one per status", n)
		}
	})
}

// Migration 12 starts the counts of a database with pets at their exact
// numbers.
func TestStatusCountsMigration(t *testing.T) {
	t.Parallel()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := storeAt(t, driver, 11)
			var values []string
			for i, st := range []string{"available", "sold", "available", "pending", "available", "pending"} {
				values = append(values, fmt.Sprintf("('Old %d', 1, '%s', '2026-01-02 03:04:05', '2026-01-02 03:04:05')", i, st))
			}
			if _, err := s.SQLDB().Exec("INSERT INTO pets (name, category_id, status, created_at, updated_at) VALUES " + strings.Join(values, ",")); err != nil {
				t.Fatal(err)
			}
			res, err := s.Migrate(ctx)
			if err != nil || !slices.Contains(res.Applied, 12) {
				t.Fatalf("Migrate = %+v, %v; want migration 12 applied", res, err)
			}
			wantCounts(t, s, models.StatusCounts{models.StatusAvailable: 3, models.StatusPending: 2, models.StatusSold: 1})
			newPet(t, s, "New", models.StatusSold)
			wantCounts(t, s, models.StatusCounts{models.StatusAvailable: 3, models.StatusPending: 2, models.StatusSold: 2})
		})
	}
}

// Two instances on one database create, change statuses and compact at
// once; no delta is lost or counted twice.
func TestStatusCountsConcurrentCompaction(t *testing.T) {
	t.Parallel()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dsn := modelstest.Database(t, driver).DSN
			one := openUnmigrated(t, driver, dsn)
			if _, err := one.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			two := openUnmigrated(t, driver, dsn)
			stores := []*models.Store{one, two}
			var ids []int64
			for i := range 20 {
				ids = append(ids, newPet(t, one, fmt.Sprintf("Start %d", i), statusOf(i)).ID)
			}
			var writers, compactors sync.WaitGroup
			var stop atomic.Bool
			var compactions, folds atomic.Int64
			for g := range 4 { // compactions on both instances, until the writes end
				compactors.Go(func() {
					for !stop.Load() {
						n, err := stores[g%2].CompactPetStatusCounts(ctx)
						if err != nil {
							t.Error(err)
							return
						}
						compactions.Add(1)
						if n > 0 {
							folds.Add(1)
						}
						// A breath between compactions: two stores on one
						// SQLite file take its lock in turns only through
						// the busy timeout's polling.
						time.Sleep(time.Millisecond)
					}
				})
			}
			for g := range 8 { // creates through both instances
				writers.Go(func() {
					for i := range 40 {
						np := models.NewPet{Name: fmt.Sprintf("P %d-%d", g, i), CategoryID: 1, Status: statusOf(g*7 + i)}
						if _, err := stores[g%2].CreatePet(ctx, np, "test"); err != nil {
							t.Error(err)
						}
					}
				})
			}
			for g := range 4 { // status changes, single and bulk, through both
				writers.Go(func() {
					for i := range 30 {
						if err := changeStatus(ctx, stores[(g+i)%2], ids[rand.IntN(len(ids))], statusOf(rand.IntN(3)), i%3 == 0); err != nil {
							t.Error(err)
						}
					}
				})
			}
			writers.Wait()
			stop.Store(true)
			compactors.Wait()
			t.Logf("%d compactions, %d of them folded rows", compactions.Load(), folds.Load())
			if folds.Load() == 0 {
				t.Error("no compaction folded anything while the writes ran: the test tested nothing")
			}
			for _, s := range stores {
				s.WaitCountsCompaction()
				wantCounts(t, s, nil)
			}
			if got := countedPets(t, one).Total(); got != 20+8*40 {
				t.Errorf("%d pets, want %d", got, 20+8*40)
			}
			compact(t, two)
			wantCounts(t, one, nil)
		})
	}
}

// changeStatus sets a pet's status from its row, or as a bulk change of
// one pet over the version it has.
func changeStatus(ctx context.Context, s *models.Store, id int64, st models.Status, bulk bool) error {
	if !bulk {
		_, err := s.UpdatePetStatus(ctx, id, st, "test")
		return err
	}
	p, err := s.GetPet(ctx, id)
	if err != nil {
		return err
	}
	_, err = s.ChangePetsStatus(ctx, models.StatusChange{Status: st, Pets: []models.PetVersion{{ID: id, Version: p.Version}}}, "test")
	return err
}

// insertDeltas writes rows of counts directly: n rows of +1 and n of -1 to
// status, which leave its count as it was.
func insertDeltas(tb testing.TB, s *models.Store, st models.Status, n int) {
	tb.Helper()
	for done := 0; done < 2*n; {
		k := min(500, 2*n-done)
		q := "INSERT INTO pet_status_counts (status, delta) VALUES " + strings.TrimSuffix(strings.Repeat("(?, ?),", k), ",")
		args := make([]any, 0, 2*k)
		for i := range k {
			args = append(args, string(st), int64(1-2*((done+i)%2)))
		}
		if _, err := s.SQLDB().Exec(q, args...); err != nil {
			tb.Fatal(err)
		}
		done += k
	}
}

// More rows than one fold takes are folded in several transactions, and
// the next compaction folds their sums.
func TestStatusCountsCompactionInFolds(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		for i := range 5 {
			newPet(t, s, fmt.Sprintf("P %d", i), statusOf(i))
		}
		s.WaitCountsCompaction()
		insertDeltas(t, s, models.StatusPending, 12_500) // 25,000 rows: three folds
		before := deltaRows(t, s)
		folded, err := s.CompactPetStatusCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n := deltaRows(t, s); folded != before || n > 3*3 {
			t.Errorf("folded %d of %d rows, leaving %d; want all, leaving at most three folds' sums", folded, before, n)
		}
		compact(t, s)
		wantCounts(t, s, models.StatusCounts{models.StatusAvailable: 2, models.StatusPending: 2, models.StatusSold: 1})
	})
}

// An instance compacts in the background: at its first write, then once a
// minute while it writes, and at once when a read finds many rows.
func TestStatusCountsCompactInBackground(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		var clock atomic.Pointer[time.Time]
		clock.Store(&now)
		s.SetClock(func() time.Time { return *clock.Load() })
		insertDeltas(t, s, models.StatusSold, 1)
		newPet(t, s, "P 0", models.StatusAvailable)
		s.WaitCountsCompaction()
		if n := deltaRows(t, s); n != 1 {
			t.Errorf("%d rows after an instance's first create, want 1 (compacted)", n)
		}
		for i := 1; i < 4; i++ {
			newPet(t, s, fmt.Sprintf("P %d", i), models.StatusAvailable)
			s.WaitCountsCompaction()
		}
		if n := deltaRows(t, s); n != 4 {
			t.Errorf("%d rows after three more creates within the minute, want 4 (not compacted)", n)
		}
		later := now.Add(61 * time.Second)
		clock.Store(&later)
		newPet(t, s, "P 4", models.StatusAvailable)
		s.WaitCountsCompaction()
		if n := deltaRows(t, s); n != 1 {
			t.Errorf("%d rows after a create a minute later, want 1 (compacted)", n)
		}
		insertDeltas(t, s, models.StatusSold, 5_000)
		wantCounts(t, s, models.StatusCounts{models.StatusAvailable: 5})
		s.WaitCountsCompaction()
		if n := deltaRows(t, s); n > 3 {
			t.Errorf("%d rows after a read found 10,001, want them compacted", n)
		}
	})
}

// A delta inserted into the range of a fold between its sums and its
// DELETE (as a Galera node's interleaved ids can be) makes the fold start
// over: the delta is counted, never deleted unsummed. SQLite has one
// writer, so only MySQL can see it.
func TestStatusCountsFoldRace(t *testing.T) {
	t.Parallel()
	s := modelstest.Open(t, models.DriverMySQL)
	db := s.SQLDB()
	for _, id := range []int{10, 20, 30} {
		if _, err := db.Exec("INSERT INTO pet_status_counts (id, status, delta) VALUES (?, 'available', 1)", id); err != nil {
			t.Fatal(err)
		}
	}
	var calls atomic.Int32
	ctx := models.WithFoldHook(context.Background(), func() {
		if calls.Add(1) == 1 {
			if _, err := db.Exec("INSERT INTO pet_status_counts (id, status, delta) VALUES (15, 'available', 1)"); err != nil {
				t.Error(err)
			}
		}
	})
	if _, err := s.CompactPetStatusCounts(ctx); err != nil {
		t.Fatal(err)
	}
	if calls.Load() < 2 {
		t.Errorf("the fold ran %d times, want it started over after the insert", calls.Load())
	}
	got, err := s.PetStatusCounts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got[models.StatusAvailable] != 4 || deltaRows(t, s) != 1 {
		t.Errorf("available %d in %d rows, want 4 in 1", got[models.StatusAvailable], deltaRows(t, s))
	}
}

// Two folds of the same rows at once: the second waits for the first's
// locks, then finds the rows gone; nothing is counted twice.
func TestStatusCountsFoldsAtOnce(t *testing.T) {
	t.Parallel()
	s := modelstest.Open(t, models.DriverMySQL)
	insertDeltas(t, s, models.StatusAvailable, 50)
	if _, err := s.SQLDB().Exec("INSERT INTO pet_status_counts (status, delta) VALUES ('sold', 7)"); err != nil {
		t.Fatal(err)
	}
	inFold, release := make(chan struct{}), make(chan struct{})
	first := models.WithFoldHook(context.Background(), func() {
		close(inFold)
		<-release
	})
	var wg sync.WaitGroup
	var firstFolded, secondFolded int64
	wg.Go(func() {
		var err error
		if firstFolded, err = s.CompactPetStatusCounts(first); err != nil {
			t.Error(err)
		}
	})
	<-inFold
	secondDone := make(chan struct{})
	wg.Go(func() {
		defer close(secondDone)
		var err error
		if secondFolded, err = s.CompactPetStatusCounts(context.Background()); err != nil {
			t.Error(err)
		}
	})
	select {
	case <-secondDone:
		t.Error("the second fold finished while the first held its rows")
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	wg.Wait()
	if firstFolded != 101 || secondFolded != 0 {
		t.Errorf("the folds folded %d and %d rows, want 101 and 0", firstFolded, secondFolded)
	}
	got, err := s.PetStatusCounts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got[models.StatusAvailable] != 0 || got[models.StatusSold] != 7 || deltaRows(t, s) != 1 {
		t.Errorf("counts %v in %d rows, want sold 7 in 1", got, deltaRows(t, s))
	}
}

// A fold holds up no create: creates insert above its range, and its
// READ COMMITTED locks take no gap (REPEATABLE READ's next-key lock past
// the range's end would hold every create until the fold commits).
func TestStatusCountsFoldHoldsUpNoCreate(t *testing.T) {
	t.Parallel()
	s := modelstest.Open(t, models.DriverMySQL)
	insertDeltas(t, s, models.StatusAvailable, 50)
	inFold, release := make(chan struct{}), make(chan struct{})
	ctx := models.WithFoldHook(context.Background(), func() {
		close(inFold)
		<-release
	})
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		if _, err := s.CompactPetStatusCounts(ctx); err != nil {
			t.Error(err)
		}
	})
	<-inFold
	created := make(chan error, 1)
	go func() {
		_, err := s.CreatePet(context.Background(), models.NewPet{Name: "During", CategoryID: 1, Status: models.StatusSold}, "test")
		created <- err
	}()
	select {
	case err := <-created:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(5 * time.Second):
		t.Error("a create waited for a fold")
	}
	close(release)
	wg.Wait()
	wantCounts(t, s, models.StatusCounts{models.StatusSold: 1})
}
