package models_test

import (
	"context"
	"errors"
	"math"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"petstore/models"
	"petstore/models/modelstest"
)

func ptr(s string) *string { return &s }

func TestPetInputValidate(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", models.MaxNameLength)
	tests := []struct {
		name      string
		in        models.PetInput
		want      models.NewPet
		badFields []string
	}{
		{"minimal gets default status", models.PetInput{Name: "Rex", CategoryID: "1"}, models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable}, nil},
		{"trimmed name", models.PetInput{Name: " \t Rex \n", CategoryID: "7", Status: ptr("sold")}, models.NewPet{Name: "Rex", CategoryID: 7, Status: models.StatusSold}, nil},
		{"inner spaces kept", models.PetInput{Name: "Mr  Fluffy", CategoryID: "2", Status: ptr("pending")}, models.NewPet{Name: "Mr  Fluffy", CategoryID: 2, Status: models.StatusPending}, nil},
		{"255 code points", models.PetInput{Name: long, CategoryID: "1"}, models.NewPet{Name: long, CategoryID: 1, Status: models.StatusAvailable}, nil},
		{"emoji and CJK", models.PetInput{Name: "🐶 小狗", CategoryID: "1"}, models.NewPet{Name: "🐶 小狗", CategoryID: 1, Status: models.StatusAvailable}, nil},
		{"max category", models.PetInput{Name: "A", CategoryID: "9223372036854775807"}, models.NewPet{Name: "A", CategoryID: math.MaxInt64, Status: models.StatusAvailable}, nil},
		{"empty name", models.PetInput{Name: "", CategoryID: "1"}, models.NewPet{}, []string{"name"}},
		{"blank name", models.PetInput{Name: "   ", CategoryID: "1"}, models.NewPet{}, []string{"name"}},
		{"256 code points", models.PetInput{Name: long + "x", CategoryID: "1"}, models.NewPet{}, []string{"name"}},
		{"NUL in name", models.PetInput{Name: "a\x00b", CategoryID: "1"}, models.NewPet{}, []string{"name"}},
		{"invalid utf-8", models.PetInput{Name: "a\xffb", CategoryID: "1"}, models.NewPet{}, []string{"name"}},
		{"missing category", models.PetInput{Name: "A"}, models.NewPet{}, []string{"categoryId"}},
		{"zero category", models.PetInput{Name: "A", CategoryID: "0"}, models.NewPet{}, []string{"categoryId"}},
		{"negative category", models.PetInput{Name: "A", CategoryID: "-3"}, models.NewPet{}, []string{"categoryId"}},
		{"fraction category", models.PetInput{Name: "A", CategoryID: "1.5"}, models.NewPet{}, []string{"categoryId"}},
		{"overflow category", models.PetInput{Name: "A", CategoryID: "9223372036854775808"}, models.NewPet{}, []string{"categoryId"}},
		{"plus-signed category", models.PetInput{Name: "A", CategoryID: "+4"}, models.NewPet{}, []string{"categoryId"}},
		{"bad status", models.PetInput{Name: "A", CategoryID: "1", Status: ptr("Available")}, models.NewPet{}, []string{"status"}},
		{"empty status", models.PetInput{Name: "A", CategoryID: "1", Status: ptr("")}, models.NewPet{}, []string{"status"}},
		{"decoder problem kept", models.PetInput{Name: "A", CategoryID: "1", Invalid: []models.FieldError{{Field: "name", Message: "Name must be a string."}}}, models.NewPet{}, []string{"name"}},
		{"all bad", models.PetInput{Name: "", CategoryID: "x", Status: ptr("gone")}, models.NewPet{}, []string{"name", "categoryId", "status"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.Validate()
			if tt.badFields == nil {
				if err != nil {
					t.Fatalf("Validate() error = %v", err)
				}
				if got != tt.want {
					t.Fatalf("Validate() = %+v, want %+v", got, tt.want)
				}
				return
			}
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeInvalidRequest {
				t.Fatalf("Validate() error = %v, want invalid_request", err)
			}
			if len(e.Fields) != len(tt.badFields) {
				t.Fatalf("fields = %+v, want %v", e.Fields, tt.badFields)
			}
			for i, f := range tt.badFields {
				if e.Fields[i].Field != f || e.Fields[i].Message == "" {
					t.Errorf("field %d = %+v, want %s with a message", i, e.Fields[i], f)
				}
			}
		})
	}
}

func TestParsePetQuery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		query string
		want  models.PetQuery
		bad   string
	}{
		{"", models.PetQuery{Limit: 20}, ""},
		{"limit=1&status=sold&after=0", models.PetQuery{Limit: 1, Status: models.StatusSold}, ""},
		{"limit=100&after=42&unknown=x", models.PetQuery{Limit: 100, After: 42}, ""},
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

func TestParsePetID(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"0", "-1", "abc", "1.0", "9223372036854775808", "", "+1"} {
		if _, err := models.ParsePetID(s); models.ErrorCode(err) != models.CodeInvalidRequest {
			t.Errorf("ParsePetID(%q) err = %v, want invalid_request", s, err)
		}
	}
	if id, err := models.ParsePetID("9223372036854775807"); err != nil || id != math.MaxInt64 {
		t.Errorf("ParsePetID(max) = %d, %v", id, err)
	}
}

func TestCreateGetPet(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		names := []string{"Rex", "Zoë Ångström", "小狗 ポチ 강아지", "🐶🐱🦜 family 👨‍👩‍👧", strings.Repeat("🐍", 255)}
		for _, name := range names {
			np, err := models.PetInput{Name: name, CategoryID: "9223372036854775807", Status: ptr("pending")}.Validate()
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.CreatePet(ctx, np, "test")
			if err != nil {
				t.Fatalf("CreatePet(%q): %v", name, err)
			}
			got, err := s.GetPet(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != name || got.CategoryID != math.MaxInt64 || got.Status != models.StatusPending || got.ID != p.ID {
				t.Errorf("round trip = %+v, want name %q", got, name)
			}
			if got.CreatedAt.IsZero() || got.CreatedAt.Location().String() != "UTC" {
				t.Errorf("created_at = %v, want a UTC time", got.CreatedAt)
			}
		}
		_, err := s.GetPet(ctx, 999999)
		if !errors.Is(err, &models.Error{Code: models.CodeNotFound}) || err.Error() != "not_found: No pet has id 999999." {
			t.Fatalf("GetPet(missing) = %v, want not_found", err)
		}
	})
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
					fast, fastMore, err := s.ListPetsAPI(ctx, q)
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

func TestConcurrentCreates(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		const n = 50
		var wg sync.WaitGroup
		got := make([]int64, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				p, err := s.CreatePet(ctx, models.NewPet{Name: "c" + strconv.Itoa(i), CategoryID: 3, Status: models.StatusAvailable}, "test")
				got[i], errs[i] = p.ID, err
			})
		}
		wg.Wait()
		seen := map[int64]bool{}
		for i, err := range errs {
			if err != nil {
				t.Fatalf("create %d: %v", i, err)
			}
			if seen[got[i]] {
				t.Fatalf("id %d given twice", got[i])
			}
			seen[got[i]] = true
		}
		page, more, err := s.ListPets(ctx, models.PetQuery{Limit: 100})
		if err != nil || more || len(page) != n {
			t.Fatalf("listed %d pets (more=%v, err=%v), want %d", len(page), more, err, n)
		}
	})
}

func ids(ps []models.Pet) []int64 {
	out := make([]int64, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
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
		for raw, want := range map[string]string{"  Rex  ": "Rex", strings.Repeat("é", 200): strings.Repeat("é", 200)} {
			if got, err := models.ValidateSearch(raw); err != nil || got != want {
				t.Errorf("ValidateSearch(%.20q) = %.20q, %v", raw, got, err)
			}
		}
		if _, err := models.ValidateSearch(strings.Repeat("é", 201)); models.ErrorCode(err) != models.CodeInvalidRequest {
			t.Errorf("ValidateSearch of 201 characters: %v", err)
		}
	})
}

func TestUpdatePetStatus(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		p, err := s.CreatePet(ctx, models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable}, "test")
		if err != nil {
			t.Fatal(err)
		}
		changes := func() (n int) {
			t.Helper()
			err := s.SQLDB().QueryRow("SELECT COUNT(*) FROM audit_events WHERE action = ? AND target_id = ?", models.ActionPetStatusChanged, p.ID).Scan(&n)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		got, err := s.UpdatePetStatus(ctx, p.ID, models.StatusSold, "alice")
		if err != nil || got.Status != models.StatusSold || got.Name != "Rex" || changes() != 1 {
			t.Fatalf("UpdatePetStatus = %+v, %v; %d changes recorded", got, err, changes())
		}
		// The status it already has changes nothing and records nothing.
		if got, err := s.UpdatePetStatus(ctx, p.ID, models.StatusSold, "bob"); err != nil || got.Status != models.StatusSold || changes() != 1 {
			t.Fatalf("same status again = %+v, %v; %d changes recorded", got, err, changes())
		}
		var e *models.Error
		if _, err := s.UpdatePetStatus(ctx, p.ID, "lost", "alice"); !errors.As(err, &e) || e.Code != models.CodeInvalidRequest || e.Field(models.FieldStatus) != models.StatusMessage {
			t.Errorf("unknown status: %v, want invalid_request on status", err)
		}
		missing := p.ID + 1000
		if _, err := s.UpdatePetStatus(ctx, missing, models.StatusPending, "alice"); err == nil || err.Error() != "not_found: No pet has id "+strconv.FormatInt(missing, 10)+"." {
			t.Errorf("missing pet: %v, want not_found", err)
		}
	})
}
