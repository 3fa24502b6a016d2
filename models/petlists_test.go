package models_test

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"petstore/models"
	"petstore/models/modelstest"
)

func TestParsePetQuery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		query string
		want  models.PetQuery
		bad   string
	}{
		{"", models.PetQuery{Limit: 20}, ""},
		{"limit=1&status=sold&after=0", models.PetQuery{Limit: 1, Status: models.StatusSold}, ""},
		{"limit=100&after=42", models.PetQuery{Limit: 100, After: 42}, ""},
		// A parameter the list does not take is refused, not ignored: a
		// misspelt filter would otherwise list every status.
		{"stauts=sold", models.PetQuery{}, "stauts"},
		{"limit=100&after=42&unknown=x", models.PetQuery{}, "unknown"},
		{"Status=sold", models.PetQuery{}, "Status"},
		{"limit=0", models.PetQuery{}, "limit"},
		{"limit=101", models.PetQuery{}, "limit"},
		{"limit=abc", models.PetQuery{}, "limit"},
		{"limit=1.5", models.PetQuery{}, "limit"},
		{"limit=-1", models.PetQuery{}, "limit"},
		{"limit=", models.PetQuery{}, "limit"},
		{"limit=1&limit=2", models.PetQuery{}, "limit"},
		{"status=SOLD", models.PetQuery{}, "status"},
		{"status=", models.PetQuery{}, "status"},
		{"after=-1", models.PetQuery{}, "after"},
		{"after=x", models.PetQuery{}, "after"},
		{"after=9223372036854775808", models.PetQuery{}, "after"},
		// Ids follow ParseID's rule; after may also be 0, the start.
		{"after=%2B5", models.PetQuery{}, "after"},
		{"after=+5", models.PetQuery{}, "after"},
		{"after=05", models.PetQuery{Limit: 20, After: 5}, ""},
		{"after=-0", models.PetQuery{Limit: 20}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			params, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := models.ParsePetQuery(params)
			if tt.bad == "" {
				if err != nil || got != tt.want {
					t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
				}
				return
			}
			var e *models.Error
			if !errors.As(err, &e) || e.Field(tt.bad) == "" {
				t.Fatalf("err = %v, want a message for %s", err, tt.bad)
			}
		})
	}
}

// RefuseQuery is the query check of the API's operations that take no
// parameter: any parameter is named, in name order (one with an empty
// name too); an unreadable query string is refused whole, without details.
func TestRefuseQuery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw    string
		ok     bool
		fields []string
	}{
		{"", true, nil},
		{"&", true, nil},
		{"status=sold", false, []string{"status"}},
		{"b=1&a=2&b=3", false, []string{"a", "b"}},
		{"=x", false, []string{""}},
		{"a=%zz", false, nil},
		{"a=1;b=2", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			err := models.RefuseQuery(tt.raw)
			if tt.ok {
				if err != nil {
					t.Fatalf("err = %v, want none", err)
				}
				return
			}
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeInvalidRequest || e.Message == "" {
				t.Fatalf("err = %#v, want invalid_request", err)
			}
			var got []string
			for _, f := range e.Fields {
				got = append(got, f.Field)
			}
			if !slices.Equal(got, tt.fields) {
				t.Errorf("fields %q, want %q", got, tt.fields)
			}
		})
	}
}

func TestListPetsKeyset(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		want := map[models.Status][]int64{}
		var all []int64
		for i := range 250 {
			st := models.Statuses[i%3]
			p, err := s.CreatePet(ctx, models.NewPet{Name: "pet " + strconv.Itoa(i), CategoryID: 1, Status: st}, "test")
			if err != nil {
				t.Fatal(err)
			}
			want[st] = append(want[st], p.ID)
			all = append(all, p.ID)
		}
		want[""] = all
		for _, st := range []models.Status{"", models.StatusAvailable, models.StatusPending, models.StatusSold} {
			for _, limit := range []int{1, 7, 100} {
				var seen []int64
				q := models.PetQuery{Limit: limit, Status: st}
				for pages := 0; ; pages++ {
					if pages > 300 {
						t.Fatal("paging does not end")
					}
					page, more, err := s.ListPets(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					// The API's prepared page is the same page.
					fast, fastMore, err := s.ListPetsAPI(ctx, q, nil)
					if err != nil || fastMore != more || len(fast) != len(page) {
						t.Fatalf("ListPetsAPI(%+v) = %d pets, more %v, %v; ListPets %d, more %v", q, len(fast), fastMore, err, len(page), more)
					}
					for i, p := range fast {
						if w := page[i]; p.ID != w.ID || p.Name != w.Name || p.CategoryID != w.CategoryID || p.Status != w.Status {
							t.Fatalf("ListPetsAPI(%+v)[%d] = %+v, ListPets %+v", q, i, p, w)
						}
					}
					if len(page) > limit {
						t.Fatalf("page of %d, limit %d", len(page), limit)
					}
					for _, p := range page {
						if st != "" && p.Status != st {
							t.Fatalf("status filter %q returned %q", st, p.Status)
						}
						seen = append(seen, p.ID)
					}
					if !more {
						break
					}
					q.After = page[len(page)-1].ID
				}
				if !equal(seen, want[st]) {
					t.Fatalf("status %q limit %d: saw %d ids, want %d in order", st, limit, len(seen), len(want[st]))
				}
			}
		}
		// Backwards paging (console "previous") returns the page before, in id order.
		page, more, err := s.ListPets(ctx, models.PetQuery{Limit: 5, Before: all[10]})
		if err != nil || !more || !equal(ids(page), all[5:10]) {
			t.Fatalf("before page = %v more=%v err=%v, want %v", ids(page), more, err, all[5:10])
		}
		// Name search treats LIKE wildcards as text.
		page, _, err = s.ListPets(ctx, models.PetQuery{Limit: 100, NameContains: "PET 24"})
		if err != nil || len(page) != 11 { // "pet 24" and "pet 240".."pet 249"
			t.Fatalf("name search = %d pets, err %v; want 11", len(page), err)
		}
		page, _, err = s.ListPets(ctx, models.PetQuery{Limit: 100, NameContains: "%"})
		if err != nil || len(page) != 0 {
			t.Fatalf("search for %% = %d pets, err %v; want 0", len(page), err)
		}
	})
}

// The console's search is bounded whoever builds the query: a 50,000
// character pattern was a 500 on SQLite ("LIKE or GLOB pattern too complex").
func TestListPetsSearchBounded(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		for _, q := range []string{strings.Repeat("a", 50_000), strings.Repeat("%", models.MaxSearchLength+1)} {
			_, _, err := s.ListPets(ctx, models.PetQuery{Limit: 10, NameContains: q})
			if models.ErrorCode(err) != models.CodeInvalidRequest {
				t.Errorf("search of %d characters: error %v, want invalid_request", len(q), err)
			}
		}
		if _, _, err := s.ListPets(ctx, models.PetQuery{Limit: 10, NameContains: strings.Repeat("é", models.MaxSearchLength)}); err != nil {
			t.Errorf("search of %d characters: %v", models.MaxSearchLength, err)
		}
		// The console's q is trimmed and bounded the same way.
		for raw, want := range map[string]string{"  Rex  ": "Rex", strings.Repeat("é", 200): strings.Repeat("é", 200)} {
			if got, err := models.ParsePetListing(url.Values{"q": {raw}}); err != nil || got.Search != want {
				t.Errorf("ParsePetListing(q=%.20q) = %.20q, %v", raw, got.Search, err)
			}
		}
		if _, err := models.ParsePetListing(url.Values{"q": {strings.Repeat("é", 201)}}); models.ErrorCode(err) != models.CodeInvalidRequest {
			t.Errorf("ParsePetListing of a 201-character q: %v", err)
		}
	})
}

// The console's list query: the first value of each parameter counts, an
// empty one is not given, status and ids follow the API's rules, and the
// problems are reported in the order status and after, before, q.
func TestParsePetListing(t *testing.T) {
	t.Parallel()
	const (
		beforeMsg = "The page address is not valid: before must be a pet id."
		afterMsg  = "After must be a pet id: a whole number from 0 upwards."
		searchMsg = "Search text must be at most 200 characters."
	)
	long := strings.Repeat("a", models.MaxSearchLength+1)
	tests := []struct {
		query string
		want  models.PetListing
		msg   string // the refusal's message, when refused
	}{
		{"", models.PetListing{}, ""},
		{"status=&q=&after=&before=", models.PetListing{}, ""},
		{"status=sold&q=+Rex+&after=5", models.PetListing{Status: models.StatusSold, Search: "Rex", After: 5}, ""},
		{"status=sold&status=lost", models.PetListing{Status: models.StatusSold}, ""},
		{"status=&status=sold", models.PetListing{}, ""},
		{"before=12&unknown=x", models.PetListing{Before: 12}, ""},
		{"before=05", models.PetListing{Before: 5}, ""},
		{"after=0", models.PetListing{}, ""},
		{"after=-0", models.PetListing{}, ""},
		{"after=7&before=3", models.PetListing{After: 7, Before: 3}, ""},
		{"status=lost", models.PetListing{}, models.StatusMessage},
		{"status=SOLD", models.PetListing{}, models.StatusMessage},
		{"after=-1", models.PetListing{}, afterMsg},
		{"after=%2B5", models.PetListing{}, afterMsg},
		{"after=1.5", models.PetListing{}, afterMsg},
		{"before=%2B5", models.PetListing{}, beforeMsg},
		{"before=+5", models.PetListing{}, beforeMsg},
		{"before=0", models.PetListing{}, beforeMsg},
		{"before=-0", models.PetListing{}, beforeMsg},
		{"before=abc", models.PetListing{}, beforeMsg},
		{"before=9223372036854775808", models.PetListing{}, beforeMsg},
		{"status=lost&after=x", models.PetListing{}, "The request has invalid fields: see details."},
		{"status=lost&before=x", models.PetListing{}, models.StatusMessage},
		{"before=x&q=" + long, models.PetListing{}, beforeMsg},
		{"q=" + long, models.PetListing{}, searchMsg},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			params, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := models.ParsePetListing(params)
			if tt.msg == "" {
				if err != nil || got != tt.want {
					t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
				}
				return
			}
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeInvalidRequest || e.Message != tt.msg || len(e.Fields) == 0 {
				t.Fatalf("err = %v, want invalid_request %q naming its field", err, tt.msg)
			}
		})
	}
}

// The console's pages: newest first, both ways, with whether each side
// has more; a search pages the same way. A cursor without its key has it
// read from the pet.
func TestListPetListing(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		var avail []int64 // ascending
		for i := range 45 {
			p, err := s.CreatePet(ctx, models.NewPet{Name: "P " + strconv.Itoa(i), CategoryID: 1, Status: models.StatusAvailable}, "test")
			if err != nil {
				t.Fatal(err)
			}
			avail = append(avail, p.ID)
			if i%15 == 0 {
				if _, err := s.CreatePet(ctx, models.NewPet{Name: "S " + strconv.Itoa(i), CategoryID: 1, Status: models.StatusSold}, "test"); err != nil {
					t.Fatal(err)
				}
			}
		}
		newestFirst := func(lo, hi int) []int64 { // avail[lo..hi], newest first
			var out []int64
			for i := hi; i >= lo; i-- {
				out = append(out, avail[i])
			}
			return out
		}
		a := func(i int) int64 { return avail[i] }
		av := models.StatusAvailable
		tests := []struct {
			name         string
			l            models.PetListing
			want         []int64
			newer, older bool
		}{
			{"newest", models.PetListing{Status: av}, newestFirst(25, 44), false, true},
			{"second", models.PetListing{Status: av, Before: a(25)}, newestFirst(5, 24), true, true},
			{"last", models.PetListing{Status: av, Before: a(5)}, newestFirst(0, 4), true, false},
			{"newer than the last", models.PetListing{Status: av, After: a(4)}, newestFirst(5, 24), true, true},
			{"newer than the second", models.PetListing{Status: av, After: a(24)}, newestFirst(25, 44), false, true},
			{"after wins over before", models.PetListing{Status: av, After: a(24), Before: a(3)}, newestFirst(25, 44), false, true},
			{"past the newest", models.PetListing{Status: av, After: a(44)}, []int64{}, false, false},
			{"past the oldest", models.PetListing{Status: av, Before: a(0)}, []int64{}, false, false},
			{"search", models.PetListing{Search: "p 4"}, []int64{a(44), a(43)}, false, true},
			{"search, older", models.PetListing{Search: "p 4", Before: a(43)}, []int64{a(42), a(41)}, true, true},
			{"search, oldest", models.PetListing{Search: "p 4", Before: a(40)}, []int64{a(4)}, true, false},
			{"search, newer", models.PetListing{Search: "p 4", After: a(4)}, []int64{a(41), a(40)}, true, true},
			{"search and status", models.PetListing{Search: "p 4", Status: models.StatusSold}, []int64{}, false, false},
			{"search for nothing", models.PetListing{Search: "zebra"}, []int64{}, false, false},
			{"all, newest", models.PetListing{}, nil, false, true},
			{"status", models.PetListing{Status: models.StatusSold}, nil, false, false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				limit := 20
				if tt.l.Search != "" {
					limit = 2
				}
				page, err := s.ListPetListing(ctx, tt.l, limit)
				if err != nil {
					t.Fatal(err)
				}
				if tt.want != nil && !equal(ids(page.Pets), tt.want) {
					t.Errorf("pets %v, want %v", ids(page.Pets), tt.want)
				}
				if tt.want == nil && len(page.Pets) != map[models.Status]int{"": 20, models.StatusSold: 3}[tt.l.Status] {
					t.Errorf("pets %v, want the 20 newest, or the 3 sold", ids(page.Pets))
				}
				if page.Prev != tt.newer || page.Next != tt.older || page.Resume != 0 {
					t.Errorf("newer %v older %v resume %d, want newer %v older %v", page.Prev, page.Next, page.Resume, tt.newer, tt.older)
				}
			})
		}
		if _, err := s.ListPetListing(ctx, models.PetListing{Search: strings.Repeat("a", 201)}, 20); models.ErrorCode(err) != models.CodeInvalidRequest {
			t.Errorf("an over-long search: %v, want invalid_request", err)
		}
	})
}

// A console page costs one statement for the first or last page and up to
// four for any other (limit+1 pets one way, one probe the other way, each
// the cursor's ties and then the keys beyond it); a name search is
// planned once per page, where reading the page and then probing through
// ListPetsPage plans it twice.
func TestListPetListingStatements(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		var last models.Pet
		keys := map[int64]string{} // each pet's created key, as a page's links carry it
		for i := range 30 {
			p, err := s.CreatePet(ctx, models.NewPet{Name: "Luna " + strconv.Itoa(i), CategoryID: 1, Status: models.StatusAvailable}, "test")
			if err != nil {
				t.Fatal(err)
			}
			last = p
			keys[p.ID] = models.PetSortKey(models.SortNewest, p)
		}
		count := func(l models.PetListing) int64 {
			t.Helper()
			cctx, n := s.CountStatements(ctx)
			if _, err := s.ListPetListing(cctx, l, 10); err != nil {
				t.Fatal(err)
			}
			return n.Load()
		}
		for _, tt := range []struct {
			name string
			l    models.PetListing
			want int64
		}{
			{"newest", models.PetListing{}, 1},
			{"older", models.PetListing{Before: last.ID - 5, Key: keys[last.ID-5]}, 4},
			{"newer", models.PetListing{After: last.ID - 25, Key: keys[last.ID-25]}, 4},
			{"empty, far out", models.PetListing{After: last.ID, Key: keys[last.ID]}, 2},
			{"status, older", models.PetListing{Status: models.StatusAvailable, Before: last.ID - 5, Key: keys[last.ID-5]}, 4},
			{"the last page", models.PetListing{Last: true}, 1},
		} {
			if got := count(tt.l); got != tt.want {
				t.Errorf("%s: %d statements, want %d", tt.name, got, tt.want)
			}
		}
		// A search page and its probe, as one query and as two reads.
		l := models.PetListing{Search: "luna", Before: last.ID - 5}
		got := count(l)
		cctx, n := s.CountStatements(ctx)
		page, err := s.ListPetsPage(cctx, models.PetQuery{Limit: 10, NameContains: "luna", Before: l.Before})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.ListPetsPage(cctx, models.PetQuery{Limit: 1, NameContains: "luna", After: page.Pets[len(page.Pets)-1].ID}); err != nil {
			t.Fatal(err)
		}
		if twice := n.Load(); got >= twice || got < 3 {
			t.Errorf("search page: %d statements, want fewer than the %d of two planned reads", got, twice)
		}
		t.Logf("search page: %d statements (two planned reads: %d)", got, n.Load())
	})
}
