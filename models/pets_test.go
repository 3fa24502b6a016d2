package models_test

import (
	"context"
	"errors"
	"math"
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
