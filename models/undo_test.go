package models_test

import (
	"context"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

// undoWindow is the window the tests undo within.
const undoWindow = 10 * time.Minute

// undoRows counts the rows of the undo tables.
func undoRows(tb testing.TB, s *models.Store) (actions, items int) {
	tb.Helper()
	db := s.SQLDB()
	if err := db.QueryRow("SELECT COUNT(*) FROM undo_actions").Scan(&actions); err != nil {
		tb.Fatal(err)
	}
	if err := db.QueryRow("SELECT COUNT(*) FROM undo_items").Scan(&items); err != nil {
		tb.Fatal(err)
	}
	return actions, items
}

// mustUndo undoes action id as actor.
func mustUndo(tb testing.TB, s *models.Store, id int64, actor string) models.UndoAction {
	tb.Helper()
	u, err := s.Undo(context.Background(), id, actor, undoWindow)
	if err != nil {
		tb.Fatalf("Undo(%d): %v", id, err)
	}
	return u
}

// Each kind of console change is undone: the pets get their values back,
// through the change path (a pet.undone audit event, a pet.updated feed
// event, a new version), and an API create records nothing to undo.
func TestUndoRestores(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		rex := newPet(t, s, "Rex", models.StatusAvailable)
		tom := newPet(t, s, "Tom", models.StatusAvailable)
		if a, i := undoRows(t, s); a != 0 || i != 0 {
			t.Fatalf("after API creates: %d actions, %d items; want none", a, i)
		}

		_, id, err := s.UpdatePetStatusUndoable(ctx, rex.ID, models.StatusSold, "ana")
		if err != nil || id == 0 {
			t.Fatalf("UpdatePetStatusUndoable = %d, %v", id, err)
		}
		u := mustUndo(t, s, id, "ana")
		if u.State != models.UndoDone || u.Reverted != 1 || u.Processed != 1 || u.Skipped != 0 {
			t.Errorf("undo of a status change = %+v; want done, 1 of 1 reverted", u)
		}
		if p := getForEdit(t, s, rex.ID); p.Status != models.StatusAvailable || p.Version != 3 {
			t.Errorf("after the undo: %+v; want available at version 3", p)
		}
		if ev := petAudit(t, s, rex.ID)[0]; ev.Action != models.ActionPetUndone || ev.Actor != "ana" || ev.Detail != "status sold -> available" {
			t.Errorf("latest audit event = %+v; want ana's pet.undone", ev)
		}
		page, err := s.ReadEvents(ctx, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		last := page.Events[len(page.Events)-1]
		if last.Type != models.EventPetUpdated || last.Pet.ID != rex.ID || last.Pet.Status != models.StatusAvailable || !slices.Equal(last.Changed, []string{"status"}) {
			t.Errorf("last feed event = %+v; want rex's pet.updated back to available", last)
		}

		tomNow := getForEdit(t, s, tom.ID)
		_, id, err = s.EditPetUndoable(ctx, tom.ID, tomNow.Version, models.NewPet{Name: "Thomas", CategoryID: 7, Status: models.StatusPending}, "ana")
		if err != nil || id == 0 {
			t.Fatalf("EditPetUndoable = %d, %v", id, err)
		}
		mustUndo(t, s, id, "ana")
		if p := getForEdit(t, s, tom.ID); p.Name != "Tom" || p.CategoryID != 1 || p.Status != models.StatusAvailable {
			t.Errorf("after undoing the edit: %+v; want Tom, 1, available", p)
		}
		if n := modelstest.CountRows(t, s, modelstest.Pets); n != 2 {
			t.Errorf("%d pets; want 2", n)
		}

		ch := models.StatusChange{Status: models.StatusSold, Pets: []models.PetVersion{
			{ID: rex.ID, Version: getForEdit(t, s, rex.ID).Version}, {ID: tom.ID, Version: getForEdit(t, s, tom.ID).Version}}}
		res, err := s.ChangePetsStatusUndoable(ctx, ch, "ana")
		if err != nil || res.UndoID == 0 || len(res.Changed) != 2 {
			t.Fatalf("ChangePetsStatusUndoable = %+v, %v", res, err)
		}
		u = mustUndo(t, s, res.UndoID, "ana")
		if u.Reverted != 2 || modelstest.CountPetsWithStatus(t, s, models.StatusAvailable) != 2 {
			t.Errorf("undo of the bulk change = %+v; want both available again", u)
		}
		// A change that writes nothing is nothing to undo.
		res, err = s.ChangePetsStatusUndoable(ctx, models.StatusChange{Status: models.StatusAvailable,
			Pets: []models.PetVersion{{ID: rex.ID, Version: getForEdit(t, s, rex.ID).Version}}}, "ana")
		if err != nil || res.UndoID != 0 {
			t.Errorf("a change to the status a pet has: UndoID %d, %v; want 0", res.UndoID, err)
		}
	})
}

// Of a bulk change of three pets, one changed by someone else since is
// skipped and named with who changed it; the others are reverted.
func TestUndoSkipsChangedPets(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		var ch models.StatusChange
		ch.Status = models.StatusSold
		for _, n := range []string{"A", "B", "C"} {
			p := newPet(t, s, n, models.StatusAvailable)
			ch.Pets = append(ch.Pets, models.PetVersion{ID: p.ID, Version: p.Version})
		}
		res, err := s.ChangePetsStatusUndoable(ctx, ch, "ana")
		if err != nil {
			t.Fatal(err)
		}
		b := getForEdit(t, s, ch.Pets[1].ID)
		if _, err := s.EditPet(ctx, b.ID, b.Version, models.NewPet{Name: "Bee", CategoryID: 1, Status: models.StatusPending}, "bob"); err != nil {
			t.Fatal(err)
		}
		u := mustUndo(t, s, res.UndoID, "ana")
		if u.Reverted != 2 || u.Skipped != 1 || u.Processed != 3 {
			t.Errorf("undo = %+v; want 2 reverted, 1 skipped of 3", u)
		}
		if got := u.SkippedList(); len(got) != 1 || got[0].ID != b.ID || got[0].Name != "Bee" || got[0].By != "bob" {
			t.Errorf("skipped = %+v; want Bee, changed by bob", got)
		}
		if got := u.SkippedActors(); !slices.Equal(got, []string{"bob"}) {
			t.Errorf("skipped by %v; want bob", got)
		}
		if p := getForEdit(t, s, b.ID); p.Name != "Bee" || p.Status != models.StatusPending {
			t.Errorf("the pet bob changed: %+v; want bob's change kept", p)
		}
		for _, pv := range []models.PetVersion{ch.Pets[0], ch.Pets[2]} {
			if p := getForEdit(t, s, pv.ID); p.Status != models.StatusAvailable {
				t.Errorf("pet %d is %s; want available again", pv.ID, p.Status)
			}
		}
	})
}

// Fifty concurrent undos of one action: exactly one undoes it, the others
// are refused naming it, and each pet is written once.
func TestUndoConcurrent(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		p := newPet(t, s, "Rex", models.StatusAvailable)
		_, id, err := s.UpdatePetStatusUndoable(ctx, p.ID, models.StatusSold, "ana")
		if err != nil {
			t.Fatal(err)
		}
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			done     int
			conflict int
			other    []error
		)
		for range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Undo(ctx, id, "ana", undoWindow)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					done++
				case models.ErrorCode(err) == models.CodeConflict:
					conflict++
				default:
					other = append(other, err)
				}
			}()
		}
		wg.Wait()
		if done != 1 || conflict != 49 || len(other) > 0 {
			t.Errorf("%d undone, %d refused, other errors %v; want 1 and 49", done, conflict, other)
		}
		if got := getForEdit(t, s, p.ID); got.Version != 3 || got.Status != models.StatusAvailable {
			t.Errorf("pet = %+v; want written once more, back to available", got)
		}
		undone := 0
		for _, ev := range petAudit(t, s, p.ID) {
			if ev.Action == models.ActionPetUndone {
				undone++
			}
		}
		if undone != 1 {
			t.Errorf("%d pet.undone audit events; want 1", undone)
		}
	})
}

// An undo can be undone, each action once; only its member may undo it.
func TestUndoOfUndo(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		p := newPet(t, s, "Rex", models.StatusAvailable)
		_, id, err := s.UpdatePetStatusUndoable(ctx, p.ID, models.StatusSold, "ana")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Undo(ctx, id, "bob", undoWindow); models.ErrorCode(err) != models.CodeNotFound {
			t.Errorf("bob undoes ana's change: %v; want not_found", err)
		}
		u := mustUndo(t, s, id, "ana")
		if _, err := s.Undo(ctx, id, "ana", undoWindow); models.ErrorCode(err) != models.CodeConflict {
			t.Errorf("a second undo: %v; want a conflict", err)
		}
		if u.Kind != models.UndoUndo || u.UndoesID == nil || *u.UndoesID != id {
			t.Errorf("the undo = %+v; want an undo of %d", u, id)
		}
		redo := mustUndo(t, s, u.ID, "ana")
		if redo.Reverted != 1 {
			t.Errorf("undo of the undo = %+v; want 1 reverted", redo)
		}
		if got := getForEdit(t, s, p.ID); got.Status != models.StatusSold || got.Version != 4 {
			t.Errorf("pet = %+v; want sold again at version 4", got)
		}
		orig, err := s.GetUndoAction(ctx, id, "ana")
		if err != nil || orig.UndoneByAction == nil || *orig.UndoneByAction != u.ID || orig.UndoneBy == nil || *orig.UndoneBy != "ana" {
			t.Errorf("the first action = %+v, %v; want undone by ana's undo %d", orig, err, u.ID)
		}
	})
}

// The window counts on the store's clock: past it an undo is refused, the
// member's recent actions no longer list the action, and the purge
// deletes its rows.
func TestUndoWindow(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		s.SetClock(func() time.Time { return now })
		p := newPet(t, s, "Rex", models.StatusAvailable)
		_, id, err := s.UpdatePetStatusUndoable(ctx, p.ID, models.StatusSold, "ana")
		if err != nil {
			t.Fatal(err)
		}
		now = now.Add(undoWindow)
		recent, err := s.RecentUndoActions(ctx, "ana", undoWindow)
		if err != nil || len(recent) != 1 || recent[0].ID != id || !recent[0].Undoable(now, undoWindow) {
			t.Errorf("recent at the window's end = %+v, %v; want the action, undoable", recent, err)
		}
		if n, err := s.PurgeUndo(ctx, undoWindow); err != nil || n != 0 {
			t.Errorf("purge within the window = %d, %v; want 0", n, err)
		}
		now = now.Add(time.Second)
		if _, err := s.Undo(ctx, id, "ana", undoWindow); models.ErrorCode(err) != models.CodeConflict {
			t.Errorf("undo past the window: %v; want a conflict", err)
		}
		if got := getForEdit(t, s, p.ID); got.Status != models.StatusSold {
			t.Errorf("pet = %+v; want left sold", got)
		}
		if recent, err := s.RecentUndoActions(ctx, "ana", undoWindow); err != nil || len(recent) != 0 {
			t.Errorf("recent past the window = %+v, %v; want none", recent, err)
		}
		if n, err := s.PurgeUndo(ctx, undoWindow); err != nil || n != 1 {
			t.Errorf("purge past the window = %d, %v; want 1", n, err)
		}
		if a, i := undoRows(t, s); a != 0 || i != 0 {
			t.Errorf("after the purge: %d actions, %d items; want none", a, i)
		}
	})
}

// A bulk job's every-match change is one action: its items are recorded
// in the chunks' transactions, and its undo, larger than a chunk, runs in
// the background a chunk at a time.
func TestUndoBulkJob(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		seedBulk(t, s, 1700) // 1,020 available: more than two chunks
		n := modelstest.CountPetsWithStatus(t, s, models.StatusAvailable)
		job := runBulk(t, s, url.Values{"status": {"available"}}, models.StatusSold)
		if job.Changed != n || n <= 2*models.UndoChunk {
			t.Fatalf("job = %+v; want %d changed, more than two chunks", job, n)
		}
		id, err := s.BulkJobUndoID(ctx, job.ID)
		if err != nil || id == 0 {
			t.Fatalf("BulkJobUndoID = %d, %v", id, err)
		}
		if a, i := undoRows(t, s); a != 1 || i != n {
			t.Errorf("%d actions, %d items; want 1 and %d", a, i, n)
		}
		u := mustUndo(t, s, id, "ana")
		if u.State != models.UndoRunning {
			t.Errorf("a large undo = %+v; want it running", u)
		}
		s.WaitUndos()
		u, err = s.GetUndoAction(ctx, u.ID, "ana")
		if err != nil || u.State != models.UndoDone || u.Reverted != n || u.Processed != n || u.CompletedAt == nil {
			t.Errorf("undo after it ran = %+v, %v; want done, %d reverted", u, err, n)
		}
		if got := modelstest.CountPetsWithStatus(t, s, models.StatusAvailable); got != n {
			t.Errorf("%d pets available; want %d", got, n)
		}
	})
}
