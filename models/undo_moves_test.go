package models_test

import (
	"bytes"
	"context"
	"net/url"
	"slices"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

// inArchive reports whether pet id is in the archive.
func inArchive(tb testing.TB, s *models.Store, id int64) bool {
	tb.Helper()
	_, err := s.GetArchivedPet(context.Background(), id)
	if err != nil && models.ErrorCode(err) != models.CodeNotFound {
		tb.Fatal(err)
	}
	return err == nil
}

// An archive is undone by restoring its pets with their ids (pet.restored
// in the feed, audited), the undo of that archives them again, and the
// undo of a restore from the archive archives them again; a pet someone
// moved back meanwhile is skipped with who did it.
func TestUndoArchiveAndRestore(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		rex := newPet(t, s, "Rex", models.StatusAvailable)
		tom := newPet(t, s, "Tom", models.StatusSold)
		res, err := s.ArchivePetsUndoable(ctx, []models.PetVersion{{ID: rex.ID, Version: rex.Version}, {ID: tom.ID, Version: tom.Version}}, "ana")
		if err != nil || res.UndoID == 0 || len(res.Moved) != 2 {
			t.Fatalf("ArchivePetsUndoable = %+v, %v", res, err)
		}
		if a, i := undoRows(t, s); a != 1 || i != 2 {
			t.Errorf("%d actions, %d items; want 1 and 2", a, i)
		}
		u := mustUndo(t, s, res.UndoID, "ana")
		if u.State != models.UndoDone || u.Reverted != 2 || u.Skipped != 0 || u.Kind != models.UndoRestore {
			t.Fatalf("undo of the archive = %+v; want done, 2 restored, kind restore", u)
		}
		for _, p := range []models.Pet{rex, tom} {
			got := getForEdit(t, s, p.ID)
			if got.Name != p.Name || got.Status != p.Status || inArchive(t, s, p.ID) {
				t.Errorf("after the undo pet %d = %+v; want %s back in the list", p.ID, got, p.Name)
			}
		}
		if modelstest.CountPetsWithStatus(t, s, models.StatusSold) != 1 || modelstest.CountPetsWithStatus(t, s, models.StatusAvailable) != 1 {
			t.Error("the status counts did not take the restored pets back")
		}
		if ev := petAudit(t, s, rex.ID)[0]; ev.Action != models.ActionPetRestored || ev.Actor != "ana" {
			t.Errorf("latest audit event = %+v; want ana's pet.restored", ev)
		}
		page, err := s.ReadEvents(ctx, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		if last := page.Events[len(page.Events)-1]; last.Type != models.EventPetRestored {
			t.Errorf("last feed event = %+v; want pet.restored", last)
		}

		// The undo is an action too: undoing it archives them again.
		u2 := mustUndo(t, s, u.ID, "ana")
		if u2.Reverted != 2 || !inArchive(t, s, rex.ID) || !inArchive(t, s, tom.ID) {
			t.Errorf("undo of the undo = %+v; want both archived again", u2)
		}

		// A restore from the archive is undone by archiving again; Tom,
		// archived and restored by bob meanwhile, is skipped and named.
		arch, err := s.ListArchivedPets(ctx, models.ArchiveCursor{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		var pvs []models.PetVersion
		for _, a := range arch.Pets {
			pvs = append(pvs, models.PetVersion{ID: a.ID, Version: a.Version})
		}
		rres, err := s.RestorePetsUndoable(ctx, pvs, "ana")
		if err != nil || rres.UndoID == 0 || len(rres.Moved) != 2 {
			t.Fatalf("RestorePetsUndoable = %+v, %v", rres, err)
		}
		if _, err := s.UpdatePetStatus(ctx, tom.ID, models.StatusPending, "bob"); err != nil {
			t.Fatal(err)
		}
		u3 := mustUndo(t, s, rres.UndoID, "ana")
		if u3.Reverted != 1 || u3.Skipped != 1 || !slices.Equal(u3.SkippedActors(), []string{"bob"}) {
			t.Errorf("undo of the restore = %+v; want 1 archived, Tom skipped as bob's", u3)
		}
		if !inArchive(t, s, rex.ID) || inArchive(t, s, tom.ID) {
			t.Error("want Rex archived again and Tom left in the list with bob's change")
		}
		if p := getForEdit(t, s, tom.ID); p.Status != models.StatusPending {
			t.Errorf("Tom = %+v; want bob's pending kept", p)
		}

		// An archive that moves nothing is nothing to undo.
		res, err = s.ArchivePetsUndoable(ctx, []models.PetVersion{{ID: rex.ID, Version: 1}}, "ana")
		if err != nil || res.UndoID != 0 {
			t.Errorf("an archive of an archived pet: UndoID %d, %v; want 0", res.UndoID, err)
		}
	})
}

// A bulk archive of every match is one action whose undo restores them.
func TestUndoBulkArchiveJob(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		seedBulk(t, s, 100) // 60 available
		filter := url.Values{"status": {"available"}}
		l, _, err := models.BulkFilter(filter, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		total, err := s.CountMatching(ctx, l)
		if err != nil {
			t.Fatal(err)
		}
		job, err := s.StartBulkArchive(ctx, filter, time.UTC, total, "ana")
		if err != nil {
			t.Fatal(err)
		}
		s.WaitBulkJobs()
		if job, err = s.GetBulkJob(ctx, job.ID); err != nil || job.Changed != total || total != 60 {
			t.Fatalf("job = %+v, %v; want 60 archived", job, err)
		}
		id, err := s.BulkJobUndoID(ctx, job.ID)
		if err != nil || id == 0 {
			t.Fatalf("BulkJobUndoID = %d, %v", id, err)
		}
		act, err := s.GetUndoAction(ctx, id, "ana")
		if err != nil || act.Summary != "Archived 60 pets of status available" || act.Total != 60 || !act.Undoable(time.Now(), undoWindow) {
			t.Fatalf("action = %+v, %v", act, err)
		}
		u := mustUndo(t, s, id, "ana")
		if u.Reverted != 60 || modelstest.CountPetsWithStatus(t, s, models.StatusAvailable) != 60 {
			t.Errorf("undo = %+v; want the 60 back", u)
		}
		if n, err := s.CountArchivedPets(ctx); err != nil || n != 0 {
			t.Errorf("archive holds %d, %v; want none", n, err)
		}
	})
}

// An import is one action, recorded by its own sink: its undo archives
// the pets it added, but for one changed since, which is named with who
// changed it.
func TestUndoImport(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		n := models.ImportChunk + 200 // two chunks, two transactions
		imp, _, err := s.UploadImport(ctx, "stock.csv", bytes.NewReader(sheet("Imported", n, 0)), "ana")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.StartImport(ctx, imp.ID, "ana"); err != nil {
			t.Fatal(err)
		}
		if imp = waitImport(t, s, imp.ID); imp.State != models.ImportDone || imp.Done != n {
			t.Fatalf("import = %+v", imp)
		}
		id, err := s.ImportUndoID(ctx, imp.ID)
		if err != nil || id == 0 {
			t.Fatalf("ImportUndoID = %d, %v", id, err)
		}
		act, err := s.GetUndoAction(ctx, id, "ana")
		if err != nil || act.Kind != models.UndoImport || act.Total != n || act.Summary != "Imported 1200 pets from stock.csv" {
			t.Fatalf("action = %+v, %v", act, err)
		}
		runs, err := s.ImportedIDs(ctx, imp.ID)
		if err != nil || len(runs) == 0 {
			t.Fatal(runs, err)
		}
		changed := runs[0][0]
		if _, err := s.UpdatePetStatus(ctx, changed, models.StatusSold, "bob"); err != nil {
			t.Fatal(err)
		}
		u := mustUndo(t, s, id, "ana")
		if u.State != models.UndoRunning { // more than a chunk: in the background
			t.Errorf("undo = %+v; want it running", u)
		}
		s.WaitUndos()
		if u, err = s.GetUndoAction(ctx, u.ID, "ana"); err != nil || u.Reverted != n-1 || u.Skipped != 1 || u.Processed != n {
			t.Fatalf("undo = %+v, %v; want %d of %d archived", u, err, n-1, n)
		}
		skipped := u.SkippedList()
		if len(skipped) != 1 || skipped[0].ID != changed || skipped[0].By != "bob" || skipped[0].Gone {
			t.Errorf("skipped = %+v; want pet %d, changed by bob", skipped, changed)
		}
		if c := modelstest.CountRows(t, s, modelstest.Pets); c != 1 {
			t.Errorf("%d pets in the list; want only bob's", c)
		}
		if a, err := s.CountArchivedPets(ctx); err != nil || a != int64(n-1) {
			t.Errorf("archive holds %d, %v; want %d", a, err, n-1)
		}
	})
}

// An import that fails part way is undoable as far as it got; imported
// again, it goes on under the same action, which then covers every pet,
// and its undo archives them all. Not parallel: the chunk hook is
// global.
func TestUndoImportFailedAndResumed(t *testing.T) {
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		var allow func()
		undoHook := models.SetImportChunkHook(func(imp models.Import) error {
			if imp.Done == models.ImportChunk && allow == nil {
				allow = modelstest.RefuseInserts(t, s, modelstest.Pets)
			}
			return nil
		})
		n := 2*models.ImportChunk + 100
		imp, _, err := s.UploadImport(ctx, "big.csv", bytes.NewReader(sheet("Again", n, 0)), "ana")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.StartImport(ctx, imp.ID, "ana"); err != nil {
			t.Fatal(err)
		}
		failed := waitImport(t, s, imp.ID)
		undoHook()
		if allow == nil || failed.State != models.ImportFailed || failed.Done != models.ImportChunk || failed.UndoID == nil {
			t.Fatalf("import = %+v; want failed after one chunk, with its action", failed)
		}
		allow()
		act, err := s.GetUndoAction(ctx, *failed.UndoID, "ana")
		if err != nil || act.Total != models.ImportChunk || !act.Undoable(time.Now(), undoWindow) {
			t.Fatalf("the failed import's action = %+v, %v; want %d pets, undoable", act, err, models.ImportChunk)
		}

		if _, err := s.StartImport(ctx, imp.ID, "ana"); err != nil {
			t.Fatal(err)
		}
		done := waitImport(t, s, imp.ID)
		if done.State != models.ImportDone || done.Done != n || done.UndoID == nil || *done.UndoID != act.ID {
			t.Fatalf("import = %+v; want done under action %d", done, act.ID)
		}
		if act, err = s.GetUndoAction(ctx, act.ID, "ana"); err != nil || act.Total != n || act.CompletedAt == nil {
			t.Fatalf("action = %+v, %v; want %d pets", act, err, n)
		}
		mustUndo(t, s, act.ID, "ana")
		s.WaitUndos()
		if c := modelstest.CountRows(t, s, modelstest.Pets); c != 0 {
			t.Errorf("%d pets left after the undo; want none", c)
		}
		if a, err := s.CountArchivedPets(ctx); err != nil || a != int64(n) {
			t.Errorf("archive holds %d, %v; want %d", a, err, n)
		}
	})
}

// A status change whose pet someone archived since is skipped as their
// change, naming them, not as a pet that no longer exists.
func TestUndoSkipsPetArchivedSince(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		rex := newPet(t, s, "Rex", models.StatusAvailable)
		_, id, err := s.UpdatePetStatusUndoable(ctx, rex.ID, models.StatusSold, "ana")
		if err != nil || id == 0 {
			t.Fatalf("UpdatePetStatusUndoable = %d, %v", id, err)
		}
		if res, err := s.ArchivePets(ctx, []models.PetVersion{{ID: rex.ID}}, "bob"); err != nil || len(res.Moved) != 1 {
			t.Fatalf("ArchivePets = %+v, %v", res, err)
		}
		u := mustUndo(t, s, id, "ana")
		skipped := u.SkippedList()
		if u.Reverted != 0 || len(skipped) != 1 || skipped[0].Gone || skipped[0].By != "bob" {
			t.Errorf("undo = %+v, skipped %+v; want Rex skipped as archived by bob", u, skipped)
		}
		if a, err := s.GetArchivedPet(ctx, rex.ID); err != nil || a.Status != models.StatusSold {
			t.Errorf("archived Rex = %+v, %v; want him left archived, sold", a, err)
		}
	})
}
