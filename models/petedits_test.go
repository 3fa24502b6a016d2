package models_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

// petAudit returns the audit events of one pet, newest first.
func petAudit(tb testing.TB, s *models.Store, id int64) []models.AuditEvent {
	tb.Helper()
	events, _, err := s.ListAuditEvents(context.Background(), models.AuditQuery{TargetType: models.TargetPet, TargetID: id, Limit: 50})
	if err != nil {
		tb.Fatal(err)
	}
	return events
}

func newPet(tb testing.TB, s *models.Store, name string, status models.Status) models.Pet {
	tb.Helper()
	p, err := s.CreatePet(context.Background(), models.NewPet{Name: name, CategoryID: 1, Status: status}, "test")
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func getForEdit(tb testing.TB, s *models.Store, id int64) models.Pet {
	tb.Helper()
	p, err := s.GetPet(context.Background(), id)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// TestPetVersionMigration: migration 11 gives existing pets version 1, and
// pets created afterwards through the API's create path (which does not
// name the column) start at 1 too.
func TestPetVersionMigration(t *testing.T) {
	t.Parallel()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := storeAt(t, driver, 10)
			if _, err := s.SQLDB().Exec("INSERT INTO pets (name, category_id, status, created_at, updated_at) VALUES ('Old Rex', 1, 'sold', ?, ?)",
				"2026-01-02 03:04:05", "2026-01-02 03:04:05"); err != nil {
				t.Fatal(err)
			}
			res, err := s.Migrate(ctx)
			if err != nil || !slices.Contains(res.Applied, 11) {
				t.Fatalf("Migrate = %+v, %v; want migration 11 applied", res, err)
			}
			old := getForEdit(t, s, 1)
			if old.Name != "Old Rex" || old.Version != 1 {
				t.Errorf("the pet from before the migration: %+v, want Old Rex at version 1", old)
			}
			p := newPet(t, s, "New Rex", models.StatusAvailable)
			if got := getForEdit(t, s, p.ID); got.Version != 1 {
				t.Errorf("a new pet has version %d, want 1", got.Version)
			}
		})
	}
}

func TestEditPet(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		p := newPet(t, s, "Biscuit Crème", models.StatusAvailable)
		other := newPet(t, s, "Biscuit Other", models.StatusAvailable)

		got, err := s.EditPet(ctx, p.ID, 1, models.NewPet{Name: "Crumble Ñandú", CategoryID: 9, Status: models.StatusSold}, "bob")
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "Crumble Ñandú" || got.CategoryID != 9 || got.Status != models.StatusSold || got.Version != 2 {
			t.Errorf("EditPet returned %+v, want the new fields at version 2", got)
		}
		stored := getForEdit(t, s, p.ID)
		if stored.Name != got.Name || stored.CategoryID != 9 || stored.Status != models.StatusSold || stored.Version != 2 {
			t.Errorf("stored %+v, want the edit at version 2", stored)
		}
		if api, err := s.GetPet(ctx, p.ID); err != nil || api.Name != "Crumble Ñandú" {
			t.Errorf("the API reads %+v, %v after the edit", api, err)
		}
		// The audit event names each field before and after.
		ev := petAudit(t, s, p.ID)[0]
		want := `name "Biscuit Crème" -> "Crumble Ñandú"; categoryId 1 -> 9; status available -> sold`
		if ev.Action != models.ActionPetEdited || ev.Actor != "bob" || ev.Detail != want {
			t.Errorf("audit event %+v, want pet.edited by bob with %q", ev, want)
		}
		// The search follows the rename, in both directions.
		search := func(q string) []int64 {
			t.Helper()
			pets, _, err := s.ListPets(ctx, models.PetQuery{Limit: 20, NameContains: q})
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, p := range pets {
				ids = append(ids, p.ID)
			}
			return ids
		}
		if got := search("biscuit"); !slices.Equal(got, []int64{other.ID}) {
			t.Errorf("search biscuit = %v, want only the pet not renamed (%d)", got, other.ID)
		}
		if got := search("nandu crumb"); !slices.Equal(got, []int64{p.ID}) {
			t.Errorf("search by the new name = %v, want %d", got, p.ID)
		}

		// One field: only it is recorded.
		if _, err := s.EditPet(ctx, p.ID, 2, models.NewPet{Name: "Crumble Ñandú", CategoryID: 9, Status: models.StatusPending}, "bob"); err != nil {
			t.Fatal(err)
		}
		if ev := petAudit(t, s, p.ID)[0]; ev.Detail != "status sold -> pending" {
			t.Errorf("audit detail %q, want only the status", ev.Detail)
		}
		// Saving what is stored writes nothing: no new version, no event.
		same, err := s.EditPet(ctx, p.ID, 3, models.NewPet{Name: "Crumble Ñandú", CategoryID: 9, Status: models.StatusPending}, "bob")
		if err != nil || same.Version != 3 {
			t.Errorf("an edit that changes nothing: %+v, %v; want version 3 kept", same, err)
		}
		if n := len(petAudit(t, s, p.ID)); n != 3 {
			t.Errorf("%d audit events, want 3 (created, two edits)", n)
		}
		if _, err := s.EditPet(ctx, 999999, 1, models.NewPet{Name: "X", CategoryID: 1, Status: models.StatusSold}, "bob"); models.ErrorCode(err) != models.CodeNotFound {
			t.Errorf("editing a missing pet: %v, want not_found", err)
		}
	})
}

func TestEditPetConflict(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		p := newPet(t, s, "Rex", models.StatusAvailable)
		// Bob saves first, from version 1, at a time the message shows in
		// the store's zone.
		tokyo := time.FixedZone("JST", 9*3600)
		s.SetZone(tokyo)
		at := time.Date(2026, 11, 27, 23, 30, 0, 0, time.UTC)
		s.SetClock(func() time.Time { return at })
		if _, err := s.EditPet(ctx, p.ID, 1, models.NewPet{Name: "Max", CategoryID: 1, Status: models.StatusPending}, "bob"); err != nil {
			t.Fatal(err)
		}
		s.SetClock(time.Now)
		// Alice saves from version 1 too: refused, Bob's change kept.
		cur, err := s.EditPet(ctx, p.ID, 1, models.NewPet{Name: "Rexy", CategoryID: 4, Status: models.StatusSold}, "alice")
		var e *models.Error
		if !errors.As(err, &e) || e.Code != models.CodeConflict {
			t.Fatalf("stale edit: %v, want conflict", err)
		}
		for _, want := range []string{"bob changed this pet at 28 Nov 2026, 08:30 JST", `name "Rex" -> "Max"`, "status available -> pending", "Their change is kept"} {
			if !strings.Contains(e.Message, want) {
				t.Errorf("conflict message %q lacks %q", e.Message, want)
			}
		}
		if cur.Name != "Max" || cur.Status != models.StatusPending || cur.Version != 2 {
			t.Errorf("the conflict returned %+v, want the pet as Bob left it, at version 2", cur)
		}
		if stored := getForEdit(t, s, p.ID); stored.Name != "Max" || stored.CategoryID != 1 || stored.Version != 2 {
			t.Errorf("stored %+v after the refused edit, want Bob's change at version 2", stored)
		}
		if n := len(petAudit(t, s, p.ID)); n != 2 {
			t.Errorf("%d audit events, want 2: the refused edit records nothing", n)
		}
		// From the version the conflict showed, Alice's save goes through.
		if got, err := s.EditPet(ctx, p.ID, cur.Version, models.NewPet{Name: "Rexy", CategoryID: 4, Status: models.StatusSold}, "alice"); err != nil || got.Version != 3 {
			t.Errorf("second save: %+v, %v; want version 3", got, err)
		}
		// A status change from the list is a change too: it names it.
		if _, err := s.UpdatePetStatus(ctx, p.ID, models.StatusAvailable, "carol"); err != nil {
			t.Fatal(err)
		}
		_, err = s.EditPet(ctx, p.ID, 3, models.NewPet{Name: "Rexy", CategoryID: 4, Status: models.StatusSold}, "alice")
		if !errors.As(err, &e) || e.Code != models.CodeConflict || !strings.Contains(e.Message, "carol changed this pet") ||
			!strings.Contains(e.Message, "status sold -> available") {
			t.Errorf("edit after a status change: %v, want a conflict naming carol's status change", err)
		}
	})
}

// TestEditPetConcurrent: of many saves of one version at once, exactly one
// is written; every other one is a conflict and writes nothing.
func TestEditPetConcurrent(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		p := newPet(t, s, "Rex", models.StatusAvailable)
		const n = 16
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = s.EditPet(ctx, p.ID, 1, models.NewPet{Name: fmt.Sprintf("Rex %d", i), CategoryID: int64(i + 1), Status: models.StatusSold}, fmt.Sprintf("staff%d", i))
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch models.ErrorCode(err) {
			case models.CodeConflict:
			default:
				if err != nil {
					t.Errorf("save %d: %v, want success or conflict", i, err)
				} else if winner >= 0 {
					t.Errorf("saves %d and %d both won", winner, i)
				} else {
					winner = i
				}
			}
		}
		if winner < 0 {
			t.Fatal("no save won")
		}
		stored := getForEdit(t, s, p.ID)
		if stored.Name != fmt.Sprintf("Rex %d", winner) || stored.CategoryID != int64(winner+1) || stored.Version != 2 {
			t.Errorf("stored %+v, want the winner's edit (%d) at version 2", stored, winner)
		}
		events := petAudit(t, s, p.ID)
		if len(events) != 2 || events[0].Actor != fmt.Sprintf("staff%d", winner) {
			t.Errorf("audit events %+v, want the creation and the winner's edit", events)
		}
	})
}

func TestUpdatePetStatusBumpsVersion(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		p := newPet(t, s, "Rex", models.StatusAvailable)
		got, err := s.UpdatePetStatus(ctx, p.ID, models.StatusSold, "bob")
		if err != nil || got.Version != 2 {
			t.Fatalf("UpdatePetStatus = %+v, %v; want version 2", got, err)
		}
		if stored := getForEdit(t, s, p.ID); stored.Version != 2 {
			t.Errorf("stored version %d, want 2", stored.Version)
		}
		// The same status again writes nothing.
		if got, err := s.UpdatePetStatus(ctx, p.ID, models.StatusSold, "bob"); err != nil || got.Version != 2 {
			t.Errorf("same status again: %+v, %v; want version 2 kept", got, err)
		}
	})
}

func TestParseStatusChange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		items   []string
		status  string
		want    []models.PetVersion
		field   string
		message string
	}{
		{"two pets, sorted", []string{"12:3", "4:1"}, "sold", []models.PetVersion{{ID: 4, Version: 1}, {ID: 12, Version: 3}}, "", ""},
		{"a pet twice counts once", []string{"4:1", "4:1"}, "sold", []models.PetVersion{{ID: 4, Version: 1}}, "", ""},
		{"the page's size", []string{"1:1", "2:1", "3:1"}, "pending", []models.PetVersion{{ID: 1, Version: 1}, {ID: 2, Version: 1}, {ID: 3, Version: 1}}, "", ""},
		{"none", nil, "sold", nil, models.FieldPets, "Select at least one pet"},
		{"more than a page", []string{"1:1", "2:1", "3:1", "4:1"}, "sold", nil, models.FieldPets, "At most 3 pets (one page) can be changed at once, and 4 were sent. Nothing was changed."},
		{"no version", []string{"4"}, "sold", nil, models.FieldPets, "out of date"},
		{"zero version", []string{"4:0"}, "sold", nil, models.FieldPets, "out of date"},
		{"bad id", []string{"x:1"}, "sold", nil, models.FieldPets, "out of date"},
		{"bad status", []string{"4:1"}, "lost", nil, models.FieldStatus, models.StatusMessage},
		{"no status", []string{"4:1"}, "", nil, models.FieldStatus, models.StatusMessage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := models.ParseStatusChange(tt.items, tt.status, 3)
			if tt.field == "" {
				if err != nil || !slices.Equal(got.Pets, tt.want) || string(got.Status) != tt.status {
					t.Errorf("ParseStatusChange = %+v, %v; want %+v", got, err, tt.want)
				}
				return
			}
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeInvalidRequest || !strings.Contains(e.Field(tt.field), tt.message) {
				t.Errorf("ParseStatusChange error = %v, want %s: %q", err, tt.field, tt.message)
			}
		})
	}
}

// TestChangePetsStatus: a bulk change writes the pets that need it and
// still have the version given, one audit event each, and reports the
// others.
func TestChangePetsStatus(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		a := newPet(t, s, "Ada", models.StatusAvailable)
		b := newPet(t, s, "Bo", models.StatusPending)
		sold := newPet(t, s, "Cy", models.StatusSold)
		stale := newPet(t, s, "Di", models.StatusAvailable)
		untouched := newPet(t, s, "Ed", models.StatusAvailable)
		// Someone renames Di after the page was shown (at version 1).
		if err := s.RenamePet(ctx, stale.ID, "Dina"); err != nil {
			t.Fatal(err)
		}
		ch := models.StatusChange{Status: models.StatusSold, Pets: []models.PetVersion{
			{ID: a.ID, Version: 1}, {ID: b.ID, Version: 1}, {ID: sold.ID, Version: 1}, {ID: stale.ID, Version: 1}, {ID: 999999, Version: 1}}}
		res, err := s.ChangePetsStatus(ctx, ch, "bob")
		if err != nil {
			t.Fatal(err)
		}
		ids := func(pets []models.Pet) []int64 {
			var out []int64
			for _, p := range pets {
				out = append(out, p.ID)
			}
			return out
		}
		if !slices.Equal(ids(res.Changed), []int64{a.ID, b.ID}) || !slices.Equal(ids(res.Already), []int64{sold.ID}) ||
			!slices.Equal(ids(res.Stale), []int64{stale.ID}) || !slices.Equal(res.Missing, []int64{999999}) {
			t.Fatalf("result %+v, want changed [%d %d], already [%d], stale [%d], missing [999999]", res, a.ID, b.ID, sold.ID, stale.ID)
		}
		for _, p := range res.Changed {
			if p.Status != models.StatusSold || p.Version != 2 {
				t.Errorf("changed pet reported as %+v, want sold at version 2", p)
			}
		}
		for _, tt := range []struct {
			id      int64
			status  models.Status
			version int64
			name    string
			detail  string
		}{
			{a.ID, models.StatusSold, 2, "Ada", "available -> sold"},
			{b.ID, models.StatusSold, 2, "Bo", "pending -> sold"},
			{sold.ID, models.StatusSold, 1, "Cy", ""},
			{stale.ID, models.StatusAvailable, 2, "Dina", `name "Di" -> "Dina"`},
			{untouched.ID, models.StatusAvailable, 1, "Ed", ""},
		} {
			p := getForEdit(t, s, tt.id)
			if p.Status != tt.status || p.Version != tt.version || p.Name != tt.name {
				t.Errorf("pet %d stored as %+v, want %s %s at version %d", tt.id, p, tt.name, tt.status, tt.version)
			}
			events := petAudit(t, s, tt.id)
			last := events[0]
			switch {
			case tt.detail == "" && len(events) != 1:
				t.Errorf("pet %d has events %+v, want only its creation", tt.id, events)
			case tt.detail != "" && last.Detail != tt.detail:
				t.Errorf("pet %d's last event %+v, want %q", tt.id, last, tt.detail)
			}
		}
		if ev := petAudit(t, s, a.ID)[0]; ev.Action != models.ActionPetStatusChanged || ev.Actor != "bob" {
			t.Errorf("bulk audit event %+v, want pet.status_changed by bob", ev)
		}
	})
}
