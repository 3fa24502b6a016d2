package models_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

// seedName is the name SeedPets gives example pet i (from 0): the
// baseline's names, with accents and an emoji, and the number.
func seedName(i int) string {
	names := []string{"Rex", "Luna", "Milo", "Bella", "Max", "Coco", "Oscar", "Nala", "Simba", "Kiwi", "Pépé", "Mochi 🐾"}
	return names[i%12] + " " + strconv.Itoa(i)
}

func seedStatus(i int) models.Status {
	switch m := i % 20; {
	case m < 12:
		return models.StatusAvailable
	case m < 17:
		return models.StatusPending
	}
	return models.StatusSold
}

func TestParseSeedCount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int // 0: refused
	}{
		{"1", 1}, {"1000000", 1_000_000}, {"10000000", models.MaxSeedPets}, {" 42 ", 42},
		{"0", 0}, {"-1", 0}, {"10000001", 0}, {"abc", 0}, {"1.5", 0}, {"1e6", 0}, {"+5", 0}, {"", 0},
		{"99999999999999999999", 0},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := models.ParseSeedCount(tt.in)
			if tt.want == 0 {
				if models.ErrorCode(err) != models.CodeInvalidRequest || !strings.Contains(err.Error(), "1 to 10000000") {
					t.Fatalf("ParseSeedCount(%q) = %d, %v; want invalid_request naming the range", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseSeedCount(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestSeedPets seeds more than one transaction's worth on top of pets
// that exist, and reads everything back through the Store.
func TestSeedPets(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		old, err := s.CreatePet(ctx, models.NewPet{Name: "Old Timer", CategoryID: 7, Status: models.StatusSold}, "alice")
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{0, -1, models.MaxSeedPets + 1} {
			if _, err := s.SeedPets(ctx, n, "cli", nil); models.ErrorCode(err) != models.CodeInvalidRequest {
				t.Errorf("SeedPets(%d): %v, want invalid_request", n, err)
			}
		}

		const n = 45_001 // three transactions, the last of one row
		before := time.Now().UTC()
		var calls []int
		res, err := s.SeedPets(ctx, n, "cli", func(done int) { calls = append(calls, done) })
		after := time.Now().UTC()
		if err != nil {
			t.Fatal(err)
		}
		if want := []int{20_000, 40_000, 45_001}; fmtInts(calls) != fmtInts(want) {
			t.Errorf("progress calls %v, want %v", calls, want)
		}
		if res.Added != n || res.FirstID != old.ID+1 || res.LastID != old.ID+n {
			t.Fatalf("result %+v, want %d added with ids %d to %d", res, n, old.ID+1, old.ID+n)
		}

		// Every pet, the old one first, through the Store's own reads.
		var got []models.Pet
		for after := int64(0); ; {
			page, more, err := s.ListPets(ctx, models.PetQuery{Limit: models.MaxPageLimit, After: after})
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, page...)
			if !more {
				break
			}
			after = page[len(page)-1].ID
		}
		if len(got) != n+1 || got[0].ID != old.ID || got[0].Name != old.Name {
			t.Fatalf("%d pets after seeding (first %+v), want the old one and %d more", len(got), got[0], n)
		}
		statuses := map[models.Status]int{}
		for i, p := range got[1:] {
			want := models.Pet{ID: old.ID + 1 + int64(i), Name: seedName(i), CategoryID: int64(1 + i%100), Status: seedStatus(i)}
			if p.ID != want.ID || p.Name != want.Name || p.CategoryID != want.CategoryID || p.Status != want.Status {
				t.Fatalf("pet %d = %+v, want %+v", i, p, want)
			}
			if p.CreatedAt.Before(before.Add(-time.Second)) || p.CreatedAt.After(after) || !p.UpdatedAt.Equal(p.CreatedAt) ||
				p.CreatedAt.Location() != time.UTC {
				t.Fatalf("pet %d created %v, updated %v; want the same UTC time during the seed", i, p.CreatedAt, p.UpdatedAt)
			}
			statuses[p.Status]++
		}
		// 60% available, 25% pending, 15% sold: i%20 of 0..45000.
		if statuses[models.StatusAvailable] != 27_001 || statuses[models.StatusPending] != 11_250 || statuses[models.StatusSold] != 6_750 {
			t.Errorf("status mix %v", statuses)
		}
		for _, i := range []int{10, 11, n - 1} { // Pépé, Mochi 🐾, the last
			p, err := s.GetPet(ctx, old.ID+1+int64(i))
			if err != nil || p.Name != seedName(i) {
				t.Errorf("GetPet of example %d: %q, %v; want %q byte for byte", i, p.Name, err, seedName(i))
			}
		}

		events, _, err := s.ListAuditEvents(ctx, models.AuditQuery{Action: models.ActionPetsSeeded})
		if err != nil {
			t.Fatal(err)
		}
		wantDetail := "added 45001 example pets, ids " + strconv.FormatInt(res.FirstID, 10) + " to " + strconv.FormatInt(res.LastID, 10)
		if len(events) != 1 || events[0].Actor != "cli" || events[0].TargetType != models.TargetPet || events[0].Detail != wantDetail {
			t.Fatalf("audit events %+v, want one by cli saying %q", events, wantDetail)
		}

		// No STAT4 samples in a seeded SQLite file: with them SQLite
		// prepares a status page's statement again on every run.
		if s.Driver() == models.DriverSQLite {
			var stats int
			if err := s.SQLDB().QueryRow("SELECT COUNT(*) FROM sqlite_schema WHERE name LIKE 'sqlite_stat%'").Scan(&stats); err != nil || stats != 0 {
				t.Errorf("%d statistics tables after seeding (%v), want none", stats, err)
			}
		}

		// A second seed adds again and numbers its pets from 0 again.
		res2, err := s.SeedPets(ctx, 3, "bob", nil)
		if err != nil || res2.Added != 3 || res2.FirstID != res.LastID+1 {
			t.Fatalf("second seed %+v, %v", res2, err)
		}
		if p, err := s.GetPet(ctx, res2.LastID); err != nil || p.Name != "Milo 2" {
			t.Errorf("second seed's last pet %+v, %v", p, err)
		}
		events, _, _ = s.ListAuditEvents(ctx, models.AuditQuery{Action: models.ActionPetsSeeded, Actor: "bob"})
		if len(events) != 1 || !strings.HasPrefix(events[0].Detail, "added 3 example pets") {
			t.Errorf("second audit event %+v", events)
		}
	})
}

// TestSeedPetsCancelled stops a seed between transactions: the pets
// already added stay and the audit trail says how many.
func TestSeedPetsCancelled(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		res, err := s.SeedPets(ctx, 60_000, "cli", func(done int) {
			if done == 20_000 {
				cancel()
			}
		})
		if err == nil || res.Added != 20_000 {
			t.Fatalf("cancelled seed: %+v, %v; want 20000 added and an error", res, err)
		}
		events, _, err := s.ListAuditEvents(context.Background(), models.AuditQuery{Action: models.ActionPetsSeeded})
		if err != nil || len(events) != 1 || !strings.HasPrefix(events[0].Detail, "added 20000 of 60000 example pets") {
			t.Fatalf("audit after a cancelled seed: %+v, %v", events, err)
		}
		pets, more, err := s.ListPets(context.Background(), models.PetQuery{Limit: 1, Before: 1 << 62})
		if err != nil || !more || len(pets) != 1 || pets[0].ID != res.LastID {
			t.Errorf("newest pet after a cancelled seed: %+v, %v, %v; want id %d", pets, more, err, res.LastID)
		}
	})
}

func fmtInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(s, ",") + "]"
}
