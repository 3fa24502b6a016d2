package models_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"

	"petstore/models"
	"petstore/models/modelstest"
)

// Creates that arrive together share transactions (group commit), yet each
// answered pet is stored with exactly one audit event of its own, a client
// that gives up before its pet is taken gets an error and leaves nothing
// behind, and a pet is never stored without its event.
func TestGroupCommitCreates(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		if s.Driver() == models.DriverMySQL && !s.ConsecutiveIDs() {
			t.Fatal("the test server's multi-row INSERTs do not take consecutive ids: the one-INSERT batch goes untested")
		}
		checkGroupCommit(t, s)
	})
}

// On a server whose multi-row INSERT may interleave ids (MySQL's
// innodb_autoinc_lock_mode 2, Galera), each pet of a batch is an INSERT of
// its own.
func TestGroupCommitCreatesOneInsertEach(t *testing.T) {
	t.Parallel()
	s := modelstest.Open(t, models.DriverMySQL)
	s.InsertPetsOneByOne()
	checkGroupCommit(t, s)
}

func checkGroupCommit(t *testing.T, s *models.Store) {
	{
		const n = 300
		canceled, cancel := context.WithCancel(context.Background())
		cancel()
		type outcome struct {
			pet models.Pet
			err error
		}
		out := make([]outcome, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				ctx := context.Background()
				if i%10 == 9 {
					ctx = canceled // a client already gone
				}
				np := models.NewPet{Name: "group " + strconv.Itoa(i), CategoryID: int64(i + 1), Status: models.Statuses[i%3]}
				p, err := s.CreatePet(ctx, np, "tester "+strconv.Itoa(i))
				out[i] = outcome{p, err}
			})
		}
		wg.Wait()

		ctx := context.Background()
		created := map[int64]int{} // pet id -> request
		for i, o := range out {
			if o.err != nil {
				if i%10 != 9 {
					t.Fatalf("create %d: %v", i, o.err)
				}
				if models.ErrorCode(o.err) != models.CodeCanceled {
					t.Errorf("create %d of a gone client: %v, want canceled", i, o.err)
				}
				continue
			}
			if _, dup := created[o.pet.ID]; dup {
				t.Fatalf("id %d answered twice", o.pet.ID)
			}
			created[o.pet.ID] = i
			got, err := s.GetPet(ctx, o.pet.ID)
			if err != nil {
				t.Fatalf("pet %d answered to create %d: %v", o.pet.ID, i, err)
			}
			if got.Name != "group "+strconv.Itoa(i) || got.CategoryID != int64(i+1) || got.Status != models.Statuses[i%3] {
				t.Errorf("pet %d = %+v, want create %d's", o.pet.ID, got, i)
			}
		}

		rows, err := s.SQLDB().QueryContext(ctx, "SELECT target_id, actor, detail FROM audit_events WHERE action = ?", models.ActionPetCreated)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		events := map[int64]int{}
		for rows.Next() {
			var (
				id            int64
				actor, detail string
			)
			if err := rows.Scan(&id, &actor, &detail); err != nil {
				t.Fatal(err)
			}
			events[id]++
			i, ok := created[id]
			if !ok {
				continue // a gone client's pet that a batch had taken: checked below
			}
			want := fmt.Sprintf("name=%q categoryId=%d status=%s", "group "+strconv.Itoa(i), i+1, models.Statuses[i%3])
			if actor != "tester "+strconv.Itoa(i) || detail != want {
				t.Errorf("event of pet %d: %s %q, want tester %d %q", id, actor, detail, i, want)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		var stored int
		if err := s.SQLDB().QueryRowContext(ctx, "SELECT COUNT(*) FROM pets").Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if len(events) != stored {
			t.Errorf("%d pets stored, %d with a creation event", stored, len(events))
		}
		for id, k := range events {
			if k != 1 {
				t.Errorf("pet %d has %d creation events", id, k)
			}
		}
		// Each stored pet's name is in the search index ("group", "N").
		var indexed, words int
		if err := s.SQLDB().QueryRowContext(ctx, "SELECT COUNT(DISTINCT pet_id), COUNT(*) FROM pet_name_words").Scan(&indexed, &words); err != nil {
			t.Fatal(err)
		}
		if indexed != stored || words != 2*stored {
			t.Errorf("%d pets stored, %d in the name index with %d words, want each with 2", stored, indexed, words)
		}
		// ... under its own id: pet "group N" is found by "N".
		wrows, err := s.SQLDB().QueryContext(ctx, "SELECT pet_id, word FROM pet_name_words")
		if err != nil {
			t.Fatal(err)
		}
		defer wrows.Close()
		petWords := map[int64][]string{}
		for wrows.Next() {
			var (
				id   int64
				word []byte
			)
			if err := wrows.Scan(&id, &word); err != nil {
				t.Fatal(err)
			}
			petWords[id] = append(petWords[id], string(word))
		}
		if err := wrows.Err(); err != nil {
			t.Fatal(err)
		}
		for id, i := range created {
			if w := petWords[id]; !slices.Contains(w, strconv.Itoa(i)) || !slices.Contains(w, "group") {
				t.Errorf("pet %d (create %d) indexed under %q, want group and %d", id, i, w, i)
			}
		}
		if stored < len(created) || stored > n {
			t.Errorf("%d pets stored, %d answered 201", stored, len(created))
		}
		// Each pet's creation event in the change feed names it.
		page, err := s.ReadEvents(ctx, 0, models.MaxEventsLimit)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Events) != stored {
			t.Errorf("%d pets stored, %d creation events in the feed", stored, len(page.Events))
		}
		for _, e := range page.Events {
			if i, ok := created[e.Pet.ID]; ok && e.Pet.Name != "group "+strconv.Itoa(i) {
				t.Errorf("event %d of pet %d names %q, want create %d's", e.ID, e.Pet.ID, e.Pet.Name, i)
			}
		}
	}
}
