package models_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

// feedState is what the test compares of an event: its type, the pet's
// id and state, and the fields it says changed.
type feedState struct {
	typ     models.EventType
	pet     models.Pet
	changed string
}

func stateOf(e models.Event) feedState {
	p := e.Pet
	return feedState{e.Type, models.Pet{ID: p.ID, Name: p.Name, CategoryID: p.CategoryID, Status: p.Status}, fmt.Sprint(e.Changed)}
}

func readAll(tb testing.TB, s *models.Store, after int64) ([]models.Event, int64) {
	tb.Helper()
	var all []models.Event
	for {
		page, err := s.ReadEvents(context.Background(), after, 7)
		if err != nil {
			tb.Fatal(err)
		}
		all = append(all, page.Events...)
		if len(page.Events) == 0 {
			return all, page.Next
		}
		after = page.Next
	}
}

// Every writer of a pet writes its event in the feed: creates with and
// without an idempotency key, the console's edit, a status change of one
// and of many, and a seed; a change that changes nothing writes none.
func TestEventsOfEveryWriter(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		empty, err := s.ReadEvents(ctx, models.FeedStart, 10)
		if err != nil || len(empty.Events) != 0 || empty.Next != 0 {
			t.Fatalf("a new store's feed = %+v, %v; want empty, next 0", empty, err)
		}
		rex := newPet(t, s, "Rex", models.StatusAvailable)
		claim, _, err := s.ClaimIdempotencyKey(ctx, 1, "order-1", []byte("Tom"))
		if err != nil {
			t.Fatal(err)
		}
		tom, err := s.CreatePetOnce(ctx, models.NewPet{Name: "Tom", CategoryID: 3, Status: models.StatusPending}, "test", claim,
			func(models.Pet) models.StoredResponse { return models.StoredResponse{Status: 201, Body: []byte("{}")} })
		if err != nil {
			t.Fatal(err)
		}
		max, err := s.EditPet(ctx, rex.ID, rex.Version, models.NewPet{Name: "Max", CategoryID: 2, Status: models.StatusAvailable}, "test")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.EditPet(ctx, rex.ID, max.Version, models.NewPet{Name: "Max", CategoryID: 2, Status: models.StatusAvailable}, "test"); err != nil {
			t.Fatal(err)
		}
		sold, err := s.UpdatePetStatus(ctx, rex.ID, models.StatusSold, "test")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdatePetStatus(ctx, rex.ID, models.StatusSold, "test"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ChangePetsStatus(ctx, models.StatusChange{Status: models.StatusPending,
			Pets: []models.PetVersion{{ID: rex.ID, Version: sold.Version}, {ID: tom.ID, Version: tom.Version}}}, "test"); err != nil {
			t.Fatal(err)
		}
		seeded, err := s.SeedPets(ctx, 2, "test", nil)
		if err != nil {
			t.Fatal(err)
		}
		seed0, seed1 := models.SeedPetAt(0), models.SeedPetAt(1)
		pet := func(id int64, name string, cat int64, st models.Status) models.Pet {
			return models.Pet{ID: id, Name: name, CategoryID: cat, Status: st}
		}
		want := []feedState{
			{models.EventPetCreated, pet(rex.ID, "Rex", 1, models.StatusAvailable), "[]"},
			{models.EventPetCreated, pet(tom.ID, "Tom", 3, models.StatusPending), "[]"},
			{models.EventPetUpdated, pet(rex.ID, "Max", 2, models.StatusAvailable), "[name categoryId]"},
			{models.EventPetUpdated, pet(rex.ID, "Max", 2, models.StatusSold), "[status]"},
			{models.EventPetUpdated, pet(rex.ID, "Max", 2, models.StatusPending), "[status]"},
			{models.EventPetUpdated, pet(tom.ID, "Tom", 3, models.StatusPending), "[]"},
			{models.EventPetCreated, pet(seeded.FirstID, seed0.Name, seed0.CategoryID, seed0.Status), "[]"},
			{models.EventPetCreated, pet(seeded.LastID, seed1.Name, seed1.CategoryID, seed1.Status), "[]"},
		}
		// Tom was already pending: the bulk change wrote only Rex.
		want = slices.Delete(want, 5, 6)
		events, next := readAll(t, s, models.FeedStart)
		var got []feedState
		for i, e := range events {
			got = append(got, stateOf(e))
			if e.ID != int64(i+1) {
				t.Errorf("event %d has id %d: ids are given one after another from 1", i, e.ID)
			}
			if e.OccurredAt.IsZero() || e.OccurredAt.Location() != time.UTC {
				t.Errorf("event %d occurred at %v", e.ID, e.OccurredAt)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("feed:\n got %v\nwant %v", got, want)
		}
		if next != int64(len(want)) {
			t.Fatalf("next after the last page = %d, want %d", next, len(want))
		}
		beyond, err := s.ReadEvents(ctx, 1000, 10)
		if err != nil || len(beyond.Events) != 0 || beyond.Next != 1000 {
			t.Fatalf("a cursor past the newest event: %+v, %v; want an empty page that keeps it", beyond, err)
		}
	})
}

// Events older than the retention are purged in batches, oldest first; a
// cursor from before the purge has lost events and is refused, and a
// reader without a cursor starts after them.
func TestEventsPurge(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		now := t0
		s.SetClock(func() time.Time { return now })
		if _, err := s.SeedPets(ctx, 2500, "test", nil); err != nil {
			t.Fatal(err)
		}
		now = t0.Add(2 * time.Hour)
		late := newPet(t, s, "Late", models.StatusSold)
		n, err := s.PurgeEvents(ctx, t0.Add(time.Hour))
		if err != nil || n != 2500 {
			t.Fatalf("PurgeEvents = %d, %v; want the 2500 old events", n, err)
		}
		if n, err := s.PurgeEvents(ctx, t0.Add(time.Hour)); err != nil || n != 0 {
			t.Fatalf("a second purge = %d, %v; want nothing", n, err)
		}
		for _, after := range []int64{0, 1, 2499} {
			_, err := s.ReadEvents(ctx, after, 10)
			if models.ErrorCode(err) != models.CodeCursorExpired {
				t.Errorf("cursor %d after the purge: %v; want %s", after, err, models.CodeCursorExpired)
			}
		}
		for _, after := range []int64{models.FeedStart, 2500} {
			page, err := s.ReadEvents(ctx, after, 10)
			if err != nil || len(page.Events) != 1 || page.Events[0].Pet.ID != late.ID || page.Next != 2501 {
				t.Errorf("cursor %d after the purge: %+v, %v; want the one kept event", after, page, err)
			}
		}
		if n, err := s.PurgeEvents(ctx, now.Add(time.Hour)); err != nil || n != 1 {
			t.Fatalf("purge of the rest = %d, %v", n, err)
		}
		page, err := s.ReadEvents(ctx, models.FeedStart, 10)
		if err != nil || len(page.Events) != 0 || page.Next != 2501 {
			t.Fatalf("an emptied feed from the start: %+v, %v; want empty, next 2501", page, err)
		}
		// Ids go on from the clock, never given again.
		newPet(t, s, "After", models.StatusSold)
		if page, err := s.ReadEvents(ctx, 2501, 10); err != nil || len(page.Events) != 1 || page.Events[0].ID != 2502 {
			t.Fatalf("the next event: %+v, %v; want id 2502", page, err)
		}
	})
}

// A reader waiting on the feed is answered as soon as an event commits,
// on this instance or another over the same database; it gets an empty
// page when its wait passes, and at once when the feed stops.
func TestWaitEvents(t *testing.T) {
	t.Parallel()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			a, b := modelstest.OpenPair(t, driver)
			ctx := context.Background()
			wait := func(s *models.Store, after int64, d time.Duration) (models.EventPage, time.Duration, error) {
				start := time.Now()
				page, err := s.WaitEvents(ctx, after, 100, d)
				return page, time.Since(start), err
			}
			// An empty feed: the wait passes.
			page, took, err := wait(a, models.FeedStart, 300*time.Millisecond)
			if err != nil || len(page.Events) != 0 || page.Next != 0 || took < 300*time.Millisecond {
				t.Fatalf("waiting on an empty feed: %+v after %v, %v", page, took, err)
			}
			for _, tc := range []struct {
				name           string
				writer, reader *models.Store
			}{{"same instance", a, a}, {"other instance", a, b}, {"other instance back", b, a}} {
				head, err := tc.reader.ReadEvents(ctx, models.FeedStart, 1000)
				if err != nil {
					t.Fatal(err)
				}
				after := head.Next
				if len(head.Events) > 0 {
					after = head.Events[len(head.Events)-1].ID
				}
				go func() {
					time.Sleep(100 * time.Millisecond)
					if _, err := tc.writer.CreatePet(ctx, models.NewPet{Name: tc.name, CategoryID: 1, Status: models.StatusSold}, "test"); err != nil {
						t.Error(err)
					}
				}()
				// The wait is long; being answered well before it ends is
				// being woken by the commit.
				page, took, err := wait(tc.reader, after, 20*time.Second)
				if err != nil || len(page.Events) != 1 || page.Events[0].Pet.Name != tc.name {
					t.Fatalf("%s: %+v, %v", tc.name, page, err)
				}
				if took > 10*time.Second {
					t.Fatalf("%s: answered after %v: the commit did not wake the reader", tc.name, took)
				}
			}
			done := make(chan time.Duration)
			_, next := readAll(t, a, models.FeedStart)
			go func() {
				_, took, _ := wait(a, next, 20*time.Second)
				done <- took
			}()
			time.Sleep(100 * time.Millisecond)
			a.StopEventWaits()
			if took := <-done; took > 10*time.Second {
				t.Fatalf("a wait went on %v after the feed stopped", took)
			}
			if _, took, _ := wait(a, next, 20*time.Second); took > 10*time.Second {
				t.Fatalf("a wait after the feed stopped took %v", took)
			}
		})
	}
}

// The guarantee: writers of every kind at once while a reader follows the
// feed, and afterwards every acknowledged change is in the feed exactly
// once, each pet's in the order of its versions.
func TestEventsUnderConcurrentWriters(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		var (
			mu    sync.Mutex
			acked = map[int64][]models.Pet{} // each pet's acknowledged states
			ids   []int64
		)
		// ack notes a pet's state a writer was told of; a status change to
		// the status a pet has returns a version another writer wrote.
		ack := func(p models.Pet) {
			mu.Lock()
			defer mu.Unlock()
			if len(acked[p.ID]) == 0 {
				ids = append(ids, p.ID)
			}
			if !slices.ContainsFunc(acked[p.ID], func(q models.Pet) bool { return q.Version == p.Version }) {
				acked[p.ID] = append(acked[p.ID], p)
			}
		}
		pick := func() int64 {
			mu.Lock()
			defer mu.Unlock()
			return ids[rand.IntN(len(ids))]
		}
		statuses := []models.Status{models.StatusAvailable, models.StatusPending, models.StatusSold}
		for i := range 8 {
			ack(newPet(t, s, fmt.Sprint("Start ", i), models.StatusAvailable))
		}
		stop := time.Now().Add(3 * time.Second)
		var writers sync.WaitGroup
		for w := range 8 {
			writers.Add(1)
			go func() {
				defer writers.Done()
				for i := 0; time.Now().Before(stop); i++ {
					st := statuses[rand.IntN(3)]
					switch (w + i) % 4 {
					case 0:
						p, err := s.CreatePet(ctx, models.NewPet{Name: fmt.Sprintf("W%d-%d", w, i), CategoryID: 1 + rand.Int64N(5), Status: st}, "test")
						if err != nil {
							t.Error(err)
							return
						}
						ack(p)
					case 1:
						p, err := s.UpdatePetStatus(ctx, pick(), st, "test")
						if err != nil {
							t.Error(err)
							return
						}
						ack(p)
					case 2:
						cur, err := s.GetPet(ctx, pick())
						if err != nil {
							t.Error(err)
							return
						}
						p, err := s.EditPet(ctx, cur.ID, cur.Version, models.NewPet{Name: fmt.Sprintf("E%d-%d", w, i), CategoryID: cur.CategoryID, Status: st}, "test")
						if models.ErrorCode(err) == models.CodeConflict {
							continue
						}
						if err != nil {
							t.Error(err)
							return
						}
						ack(p)
					case 3:
						a, b := pick(), pick()
						var pvs []models.PetVersion
						for _, id := range slices.Compact(slices.Sorted(slices.Values([]int64{a, b}))) {
							cur, err := s.GetPet(ctx, id)
							if err != nil {
								t.Error(err)
								return
							}
							pvs = append(pvs, models.PetVersion{ID: id, Version: cur.Version})
						}
						res, err := s.ChangePetsStatus(ctx, models.StatusChange{Pets: pvs, Status: st}, "test")
						if err != nil {
							t.Error(err)
							return
						}
						for _, p := range res.Changed {
							ack(p)
						}
					}
				}
			}()
		}
		var (
			seen   []models.Event
			after  = models.FeedStart
			follow sync.WaitGroup
			done   = make(chan struct{})
		)
		follow.Add(1)
		go func() {
			defer follow.Done()
			for {
				page, err := s.WaitEvents(ctx, after, 1000, 200*time.Millisecond)
				if err != nil {
					t.Error(err)
					return
				}
				seen = append(seen, page.Events...)
				after = page.Next
				select {
				case <-done:
					if len(page.Events) == 0 {
						return
					}
				default:
				}
			}
		}()
		writers.Wait()
		close(done)
		follow.Wait()
		if t.Failed() {
			return
		}
		byPet := map[int64][]feedState{}
		for i, e := range seen {
			if i > 0 && e.ID <= seen[i-1].ID {
				t.Fatalf("event %d follows event %d", e.ID, seen[i-1].ID)
			}
			st := stateOf(e)
			st.changed, st.typ = "", ""
			byPet[e.Pet.ID] = append(byPet[e.Pet.ID], st)
		}
		total := 0
		for id, states := range acked {
			slices.SortFunc(states, func(a, b models.Pet) int { return int(a.Version - b.Version) })
			var want []feedState
			for _, p := range states {
				want = append(want, feedState{pet: models.Pet{ID: p.ID, Name: p.Name, CategoryID: p.CategoryID, Status: p.Status}})
			}
			total += len(want)
			if !slices.Equal(byPet[id], want) {
				t.Errorf("pet %d: the feed has\n%v\nthe writers were told\n%v", id, byPet[id], want)
			}
		}
		if len(seen) != total {
			t.Errorf("the follower saw %d events for %d acknowledged changes", len(seen), total)
		}
		if !t.Failed() {
			t.Logf("%d changes of %d pets, all followed", total, len(acked))
		}
	})
}
