package models_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"petstore/models"
	"petstore/models/modelstest"
)

// export runs an export in chunks of chunk pets and returns the pets in
// the order passed, and the size of each chunk.
func export(tb testing.TB, s *models.Store, l models.PetListing, chunk int) ([]int64, []int) {
	tb.Helper()
	var ids []int64
	var sizes []int
	n, err := s.ExportPets(context.Background(), l, chunk, func(pets []models.Pet) error {
		sizes = append(sizes, len(pets))
		for _, p := range pets {
			ids = append(ids, p.ID)
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("export %+v: %v", l, err)
	}
	if n != len(ids) {
		tb.Fatalf("export %+v: returned %d, passed %d pets", l, n, len(ids))
	}
	return ids, sizes
}

// pageIDs walks the console's pages of a listing (Older links: the last
// pet's id, or where a search stopped) and returns their pets' ids.
func pageIDs(tb testing.TB, s *models.Store, l models.PetListing) []int64 {
	tb.Helper()
	var ids []int64
	for pages := 0; ; pages++ {
		if pages > 10_000 {
			tb.Fatalf("the pages of %+v do not end", l)
		}
		page, err := s.ListPetListing(context.Background(), l, models.MaxPageLimit)
		if err != nil {
			tb.Fatal(err)
		}
		for _, p := range page.Pets {
			ids = append(ids, p.ID)
		}
		switch {
		case page.Resume != 0:
			l.Before = page.Resume
		case !page.Next:
			return ids
		default:
			l.Before = page.Pets[len(page.Pets)-1].ID
		}
	}
}

// matching reads every pet and returns the ids of those the filter
// matches by the search's rule, newest first: the truth, found without
// the index.
func matching(tb testing.TB, s *models.Store, l models.PetListing) []int64 {
	tb.Helper()
	rows, err := s.SQLDB().Query("SELECT id, name, status FROM pets ORDER BY id DESC")
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var p models.Pet
		if err := rows.Scan(&p.ID, &p.Name, &p.Status); err != nil {
			tb.Fatal(err)
		}
		if (l.Status == "" || p.Status == l.Status) && (l.Search == "" || models.MatchesWords(p.Name, l.Search)) {
			ids = append(ids, p.ID)
		}
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return ids
}

// An export is the console's list for its filter, every page, newest
// first, whatever the chunk size: no pet skipped or repeated where chunks
// meet, by status, by search, and both.
func TestExportPets(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		if _, err := s.SeedPets(ctx, 2500, "test", nil); err != nil {
			t.Fatal(err)
		}
		listings := []models.PetListing{
			{},
			{Status: models.StatusSold},
			{Search: "pépé"},
			{Search: "mochi 🐾"},
			{Search: "1"},
			{Search: "luna 2", Status: models.StatusPending},
			{Search: "zzz"},
			// A page position is not a filter: the export is every page.
			{Status: models.StatusAvailable, Before: 1200, After: 5},
		}
		for _, l := range listings {
			t.Run(fmt.Sprintf("%s/%q", l.Status, l.Search), func(t *testing.T) {
				whole := l
				whole.After, whole.Before = 0, 0
				want := matching(t, s, whole)
				if got := pageIDs(t, s, whole); !slices.Equal(got, want) {
					t.Fatalf("the pages list %d pets, the rule %d: the oracle is wrong", len(got), len(want))
				}
				if len(want) == 0 && l.Search != "zzz" {
					t.Fatal("nothing matches: the case tests nothing")
				}
				for _, chunk := range []int{7, 999, models.ExportChunk, 0} {
					got, sizes := export(t, s, l, chunk)
					if !slices.Equal(got, want) {
						t.Errorf("chunks of %d: %d pets, want %d; first difference at %d", chunk, len(got), len(want), firstDiff(got, want))
					}
					limit := chunk
					if chunk == 0 {
						limit = models.ExportChunk
					}
					for _, n := range sizes {
						if n < 1 || n > limit {
							t.Errorf("chunks of %d: a chunk of %d pets (all: %v)", chunk, n, sizes)
						}
					}
				}
			})
		}
		// Unfiltered, the 2500 pets come in chunks of 1000, 1000 and 500.
		if _, sizes := export(t, s, models.PetListing{}, 0); !slices.Equal(sizes, []int{1000, 1000, 500}) {
			t.Errorf("chunks %v, want 1000, 1000, 500", sizes)
		}
	})
}

func firstDiff(a, b []int64) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// A search whose words are each common but rarely together stops a page
// on its budget; the export goes on from there, as the page's Older link
// does, and finds the match in the oldest pet.
func TestExportPetsPastSearchBudget(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		match, err := s.CreatePet(ctx, models.NewPet{Name: "Alpha Beta", CategoryID: 1, Status: models.StatusAvailable}, "test")
		if err != nil {
			t.Fatal(err)
		}
		// 6000 Alphas and 6000 Betas, never together, with their index
		// rows (one CreatePet each would take a minute).
		for from := 0; from < 12_000; from += 500 {
			var pets, words []string
			var petArgs, wordArgs []any
			for i := from; i < from+500; i++ {
				id, name := match.ID+1+int64(i), fmt.Sprintf("Alpha %d", i)
				if i%2 == 1 {
					name = fmt.Sprintf("Beta %d", i)
				}
				pets = append(pets, "(?, ?, 1, 'available', '2026-01-02 03:04:05', '2026-01-02 03:04:05')")
				petArgs = append(petArgs, id, name)
				for _, w := range models.SearchWords(name) {
					words = append(words, "(?, ?)")
					wordArgs = append(wordArgs, []byte(w), id)
				}
			}
			if _, err := s.SQLDB().Exec("INSERT INTO pets (id, name, category_id, status, created_at, updated_at) VALUES "+strings.Join(pets, ","), petArgs...); err != nil {
				t.Fatal(err)
			}
			if _, err := s.SQLDB().Exec("INSERT INTO pet_name_words (word, pet_id) VALUES "+strings.Join(words, ","), wordArgs...); err != nil {
				t.Fatal(err)
			}
		}
		l := models.PetListing{Search: "alpha beta"}
		first, err := s.ListPetListing(ctx, l, models.MaxPageLimit)
		if err != nil || len(first.Pets) != 0 || first.Resume == 0 {
			t.Fatalf("first page %+v, %v: want an empty page stopped on the budget", first, err)
		}
		for _, chunk := range []int{1, models.ExportChunk} {
			if got, _ := export(t, s, l, chunk); !slices.Equal(got, []int64{match.ID}) {
				t.Errorf("chunks of %d: exported %v, want only pet %d", chunk, got, match.ID)
			}
		}
	})
}

// An error of the caller's, or the context's end, stops an export at once.
func TestExportPetsStops(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		if _, err := s.SeedPets(ctx, 30, "test", nil); err != nil {
			t.Fatal(err)
		}
		stop := errors.New("stop")
		calls := 0
		n, err := s.ExportPets(ctx, models.PetListing{}, 10, func([]models.Pet) error {
			calls++
			if calls == 2 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) || n != 10 || calls != 2 {
			t.Errorf("stopped by the caller: %d pets, %d calls, %v; want 10, 2, stop", n, calls, err)
		}
		cctx, cancel := context.WithCancel(ctx)
		calls = 0
		n, err = s.ExportPets(cctx, models.PetListing{}, 10, func([]models.Pet) error {
			calls++
			cancel()
			return nil
		})
		if !errors.Is(err, context.Canceled) || n != 10 || calls != 1 {
			t.Errorf("context ended: %d pets, %d calls, %v; want 10, 1, canceled", n, calls, err)
		}
	})
}

// The audit event of an export: its filter, its count and how it ended,
// written also when the export's request has ended.
func TestRecordExport(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ended, cancel := context.WithCancel(context.Background())
		cancel()
		tests := []struct {
			l       models.PetListing
			rows    int
			outcome models.ExportOutcome
			want    string
		}{
			{models.PetListing{}, 2500, models.ExportDone, "exported 2500 pets as CSV; filter: all pets"},
			{models.PetListing{Status: models.StatusSold, Search: `Pépé "🐾"`}, 1, models.ExportDone,
				`exported 1 pet as CSV; filter: status sold, search "Pépé \"🐾\""`},
			{models.PetListing{Search: "cat"}, 1000, models.ExportAborted, `CSV export aborted by the client after 1000 pets; filter: search "cat"`},
			{models.PetListing{Status: models.StatusPending}, 0, models.ExportFailed, "CSV export failed on the server after 0 pets; filter: status pending"},
		}
		for _, tt := range tests {
			if err := s.RecordExport(ended, "alice", tt.l, tt.rows, tt.outcome); err != nil {
				t.Fatal(err)
			}
		}
		events, _, err := s.ListAuditEvents(context.Background(), models.AuditQuery{Action: models.ActionPetsExported})
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != len(tests) {
			t.Fatalf("%d events, want %d", len(events), len(tests))
		}
		for i, tt := range tests {
			ev := events[len(events)-1-i]
			if ev.Detail != tt.want || ev.Actor != "alice" || ev.TargetType != models.TargetPet || ev.TargetID != 0 {
				t.Errorf("event %+v, want detail %q by alice", ev, tt.want)
			}
		}
	})
}
