package models_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

// tiedPets adds pets whose names, categories and creation times repeat,
// so every order has ties that only the id breaks: 4 names x 3
// categories, over 4 creation instants a day apart (several pets each),
// the statuses in turn.
func tiedPets(tb testing.TB, s *models.Store) []models.Pet {
	tb.Helper()
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var pets []models.Pet
	names := []string{"Cleo", "Ada", "Bo", "Ada"}
	for i := range 40 {
		at := base.Add(time.Duration(i%4) * 24 * time.Hour)
		s.SetClock(func() time.Time { return at })
		np := models.NewPet{Name: names[i%len(names)], CategoryID: int64(1 + i%3), Status: models.Statuses[i%len(models.Statuses)]}
		p, err := s.CreatePet(ctx, np, "test")
		if err != nil {
			tb.Fatal(err)
		}
		pets = append(pets, p)
	}
	s.SetClock(time.Now)
	return pets
}

// listed is the truth: the pets a listing matches, in its order, found
// by Go's own comparisons.
func listed(pets []models.Pet, l models.PetListing) []int64 {
	zone := cmp.Or(l.Zone, time.UTC)
	var out []models.Pet
	for _, p := range pets {
		day := p.CreatedAt.In(zone).Format("2006-01-02")
		switch {
		case l.Status != "" && p.Status != l.Status,
			l.Category != 0 && p.CategoryID != l.Category,
			l.From != "" && day < l.From,
			l.To != "" && day > l.To:
			continue
		}
		out = append(out, p)
	}
	o := l.Order()
	slices.SortFunc(out, func(a, b models.Pet) int {
		c := 0
		switch o.Column() {
		case "name":
			c = strings.Compare(a.Name, b.Name)
		case "category":
			c = cmp.Compare(a.CategoryID, b.CategoryID)
		default:
			c = a.CreatedAt.Compare(b.CreatedAt)
		}
		c = cmp.Or(c, cmp.Compare(a.ID, b.ID))
		if o.Descending() {
			return -c
		}
		return c
	})
	return ids(out)
}

// listingFilters are the filters every order is paged with.
func listingFilters() map[string]models.PetListing {
	tokyo := time.FixedZone("UTC+9", 9*3600)
	return map[string]models.PetListing{
		"all":                 {},
		"status":              {Status: models.StatusPending},
		"category":            {Category: 2},
		"status and category": {Status: models.StatusSold, Category: 3},
		"dates":               {From: "2026-03-02", To: "2026-03-03"},
		"from, status":        {From: "2026-03-03", Status: models.StatusAvailable},
		"to, category":        {To: "2026-03-02", Category: 1},
		"one day, elsewhere":  {From: "2026-03-02", To: "2026-03-02", Zone: tokyo},
	}
}

// walk follows a listing's pages forward from its first page, or
// backwards from its last, and returns the pets' ids in the listing's
// order, checking that the ends say there is nothing beyond them.
func walk(tb testing.TB, s *models.Store, l models.PetListing, forward bool, limit int) []int64 {
	tb.Helper()
	var pages [][]int64
	l.Last = !forward
	for n := 0; ; n++ {
		if n > 100 {
			tb.Fatalf("the pages of %v do not end", l.Query())
		}
		page, err := s.ListPetListing(context.Background(), l, limit)
		if err != nil {
			tb.Fatalf("%v: %v", l.Query(), err)
		}
		if len(page.Pets) > limit {
			tb.Fatalf("%v: %d pets on a page of %d", l.Query(), len(page.Pets), limit)
		}
		if n == 0 && ((forward && page.Prev) || (!forward && page.Next)) {
			tb.Errorf("%v: the first page read says pets lie before it", l.Query())
		}
		pages = append(pages, ids(page.Pets))
		next, ok := l.NextPage(page)
		if !forward {
			next, ok = l.PrevPage(page)
		}
		if !ok {
			break
		}
		// Through the URL, as the console's links carry it.
		if l, err = models.ParsePetListing(next.Query()); err != nil {
			tb.Fatalf("%v: %v", next.Query(), err)
		}
		l.Zone = next.Zone
	}
	if !forward {
		slices.Reverse(pages)
	}
	return slices.Concat(pages...)
}

// Every order with every filter, paged forward from the first page and
// backwards from the last, three pets a page, lists each matching pet
// once, in order: ties of name, category and creation time are broken by
// id, and no pet is skipped or repeated at a page's edge.
func TestListPetListingOrders(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		pets := tiedPets(t, s)
		for name, f := range listingFilters() {
			for _, o := range models.PetSorts {
				l := f
				l.Sort = o
				want := listed(pets, l)
				if len(want) == 0 && name != "status and category" {
					t.Fatalf("%s: the filter matches nothing; the test would prove little", name)
				}
				for _, forward := range []bool{true, false} {
					t.Run(fmt.Sprintf("%s/%s/forward=%v", name, o, forward), func(t *testing.T) {
						if got := walk(t, s, l, forward, 3); !slices.Equal(got, want) {
							t.Errorf("%v (order %s) pages to\n%v, want\n%v", l.Query(), l.Order(), got, want)
						}
					})
				}
			}
		}
	})
}

// A date range keeps the created order (no index holds a range of days
// by name), and a name search lists newest first.
func TestPetListingOrder(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		l    models.PetListing
		want models.PetSort
	}{
		{models.PetListing{}, models.SortNewest},
		{models.PetListing{Sort: models.SortName}, models.SortName},
		{models.PetListing{Sort: models.SortOldest, From: "2026-01-01"}, models.SortOldest},
		{models.PetListing{Sort: models.SortCategoryDesc, To: "2026-01-01"}, models.SortNewest},
		{models.PetListing{Sort: models.SortName, Category: 3, Status: models.StatusSold}, models.SortName},
		{models.PetListing{Sort: models.SortName, Search: "luna"}, models.SortNewest},
	} {
		if got := tt.l.Order(); got != tt.want {
			t.Errorf("%v: order %s, want %s", tt.l.Query(), got, tt.want)
		}
	}
}

// The console's own parameters: each bad one is refused with a message
// that says what is wanted; the good ones read back as written.
func TestParsePetListingConsole(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		query string
		want  models.PetListing
		msg   string
	}{
		{"sort=name&per_page=50&category=7&created_from=2026-01-01&created_to=2026-01-31",
			models.PetListing{Sort: models.SortName, PerPage: 50, Category: 7, From: "2026-01-01", To: "2026-01-31"}, ""},
		{"sort=-category&per_page=100", models.PetListing{Sort: models.SortCategoryDesc, PerPage: 100}, ""},
		{"created_from=2026-01-01&created_to=2026-01-01", models.PetListing{From: "2026-01-01", To: "2026-01-01"}, ""},
		{"sort=name&before=5&key=Luna", models.PetListing{Sort: models.SortName, Before: 5, Key: "Luna"}, ""},
		{"sort=category&after=5&key=3", models.PetListing{Sort: models.SortCategory, After: 5, Key: "3"}, ""},
		{"last=1", models.PetListing{Last: true}, ""},
		{"sort=price", models.PetListing{}, `The list cannot be sorted by "price": sort by name, category or created (a leading - reverses the order).`},
		{"sort=Name", models.PetListing{}, `The list cannot be sorted by "Name": sort by name, category or created (a leading - reverses the order).`},
		{"per_page=30", models.PetListing{}, "Pets per page must be 20, 50 or 100."},
		{"per_page=%2B50", models.PetListing{}, "Pets per page must be 20, 50 or 100."},
		{"per_page=all", models.PetListing{}, "Pets per page must be 20, 50 or 100."},
		{"category=cats", models.PetListing{}, "The category must be a category number: a whole number from 1 upwards."},
		{"category=0", models.PetListing{}, "The category must be a category number: a whole number from 1 upwards."},
		{"created_from=01/02/2026", models.PetListing{}, "“Created from” must be a date written as year-month-day, such as 2026-03-01."},
		{"created_to=2026-02-30", models.PetListing{}, "“Created to” must be a date written as year-month-day, such as 2026-03-01."},
		{"created_from=2026-02-02&created_to=2026-02-01", models.PetListing{}, "“Created to” must be the same day as “Created from” or later."},
		{"q=luna&category=2", models.PetListing{}, "A name search cannot be combined with a category or dates: clear the search, or the category and dates."},
		{"before=5&key=yesterday", models.PetListing{}, "The page address is not valid: go back to the first page of the list."},
		{"sort=category&before=5&key=x", models.PetListing{}, "The page address is not valid: go back to the first page of the list."},
		{"last=yes", models.PetListing{}, "The page address is not valid: go back to the first page of the list."},
	} {
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
				if back, err := models.ParsePetListing(got.Query()); err != nil || back != got {
					t.Errorf("read back from %v: %+v, %v", got.Query(), back, err)
				}
				return
			}
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeInvalidRequest || e.Message != tt.msg {
				t.Fatalf("err = %v, want invalid_request %q", err, tt.msg)
			}
		})
	}
	for search, want := range map[string]int64{"#42": 42, " # 7 ": 7, "#0": 0, "#x": 0, "42": 0, "#-1": 0} {
		if got, ok := models.PetNumber(search); ok != (want != 0) || (ok && got != want) {
			t.Errorf("PetNumber(%q) = %d, want %d", search, got, want)
		}
	}
}

// Every order and filter pages on its index, in its order: no table scan
// and no sort of the matches, first page or beyond a cursor, either way.
func TestListPetListingPlans(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		pets := tiedPets(t, s)
		for name, f := range listingFilters() {
			for _, o := range models.PetSorts {
				l := f
				l.Sort = o
				for _, c := range []models.PetListing{l, {Last: true}, {Before: pets[9].ID}, {After: pets[9].ID}} {
					c.Status, c.Category, c.From, c.To, c.Zone, c.Sort = l.Status, l.Category, l.From, l.To, l.Zone, l.Sort
					var plans [][]string
					ctx := models.TraceSearch(context.Background(), func(query string, args []any) {
						plans = append(plans, explain(t, s, query, args))
					})
					if _, err := s.ListPetListing(ctx, c, 3); err != nil {
						t.Fatal(err)
					}
					for _, plan := range plans {
						text := strings.Join(plan, "\n")
						if strings.Contains(text, "Impossible WHERE") {
							continue // MariaDB found the range empty: nothing is read
						}
						bad := strings.Contains(text, "TEMP B-TREE") || strings.Contains(text, "filesort") ||
							strings.Contains(text, "SCAN pets\n") || strings.HasSuffix(text, "SCAN pets") || strings.Contains(text, "type=ALL")
						if bad || !strings.Contains(text, "idx_pets_") {
							t.Errorf("%s, %s, %v: the plan is not an index range in order:\n%s", name, o, c.Query(), text)
						}
					}
				}
			}
		}
	})
}
