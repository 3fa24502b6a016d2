package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"petstore/models"
)

// inArchive reports whether pet id is in the archive.
func inArchive(t *testing.T, e *env, id int64) bool {
	t.Helper()
	_, err := e.store.GetArchivedPet(context.Background(), id)
	if err != nil && models.ErrorCode(err) != models.CodeNotFound {
		t.Fatal(err)
	}
	return err == nil
}

// Archiving a pet from its page offers Undo; the undo puts it back in the
// list with its id. A restore from the archive offers Undo too, which
// archives it again.
func TestUndoArchive(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		rex := e.addPets(t, 1, models.StatusPending, "Rex")[0]
		b, tok := e.signedIn()
		done := b.post(petPage(rex.ID)+"/archive", url.Values{"csrf_token": {tok}, "version": {strconv.FormatInt(rex.Version, 10)}, "confirm": {"yes"}})
		wantStatus(t, done, http.StatusSeeOther)
		list := b.get(done.Header.Get("Location"))
		if list.Doc.Find("#pet-"+strconv.FormatInt(rex.ID, 10)).Length() != 0 {
			t.Fatal("the archived pet is still in the list")
		}
		action, back := undoFormOf(t, list)
		if back != "/admin/pets" {
			t.Errorf("the Undo comes back to %q", back)
		}

		res := b.post(action, url.Values{"csrf_token": {tok}, "back": {back}})
		wantStatus(t, res, http.StatusSeeOther)
		list = b.get(res.Header.Get("Location"))
		if got := text(list, `[data-testid="flash"]`); !strings.HasPrefix(got, "Restored 1 of 1 archived pet.") {
			t.Errorf("the answer says %q", got)
		}
		row := list.Doc.Find("#pet-" + strconv.FormatInt(rex.ID, 10))
		if row.Length() != 1 || !strings.Contains(row.Text(), rex.Name) {
			t.Fatalf("the pet is not back in the list with id %d:\n%s", rex.ID, list.Body)
		}
		if p := e.stored(t, rex.ID); p.Status != models.StatusPending || inArchive(t, e, rex.ID) {
			t.Errorf("after the undo: %+v", p)
		}

		// Archived again, then restored from the archive: that restore is
		// undone by archiving it again.
		again := b.post(petPage(rex.ID)+"/archive", url.Values{"csrf_token": {tok}, "version": {strconv.FormatInt(e.stored(t, rex.ID).Version, 10)}, "confirm": {"yes"}})
		wantStatus(t, again, http.StatusSeeOther)
		b.get(again.Header.Get("Location"))
		a, err := e.store.GetArchivedPet(context.Background(), rex.ID)
		if err != nil {
			t.Fatal(err)
		}
		restored := b.post("/admin/pets/archive/restore", url.Values{"csrf_token": {tok},
			"pet": {strconv.FormatInt(rex.ID, 10) + ":" + strconv.FormatInt(a.Version, 10)}, "back": {"/admin/pets/archive"}})
		wantStatus(t, restored, http.StatusSeeOther)
		arch := b.get(restored.Header.Get("Location"))
		action, back = undoFormOf(t, arch)
		if back != "/admin/pets/archive" {
			t.Errorf("the restore's Undo comes back to %q", back)
		}
		res = b.post(action, url.Values{"csrf_token": {tok}, "back": {back}})
		wantStatus(t, res, http.StatusSeeOther)
		arch = b.get(res.Header.Get("Location"))
		if got := text(arch, `[data-testid="flash"]`); !strings.HasPrefix(got, "Archived 1 of 1 restored pet.") {
			t.Errorf("the answer says %q", got)
		}
		if !inArchive(t, e, rex.ID) {
			t.Error("the undo of the restore did not archive the pet again")
		}
		if recent := b.get("/admin/undo"); recent.Doc.Find(`[data-testid="recent-actions"] tbody tr`).Length() != 5 {
			t.Errorf("recent changes: want 2 archives, their 2 undos... and the restore:\n%s", recent.Body)
		}
	})
}

// An import's done page offers Undo; bob changes one of its pets; the
// undo archives the others and names bob's.
func TestUndoImport(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		_, ana, tok := e.member("ana", models.RoleEditor)
		_, bob, bobTok := e.member("bob", models.RoleEditor)
		loc, _ := ana.previewOf(tok, "stock.csv", []byte("name,category_id,status\nRex,1,sold\nLuna,2,\nMochi,3,pending\n"))
		wantStatus(t, ana.post(loc, url.Values{"csrf_token": {tok}, "action": {"import"}}), http.StatusSeeOther)
		e.store.WaitImports()
		donePage := ana.get(loc)
		action, back := undoFormOf(t, donePage)
		if back != loc {
			t.Errorf("the Undo comes back to %q, want %q", back, loc)
		}
		if bob.get(loc).Doc.Find(`[data-testid="undo-form"]`).Length() != 0 {
			t.Error("the import's page offers its Undo to another member")
		}
		pets := importedPets(t, e)
		if len(pets) != 3 {
			t.Fatalf("%d pets imported", len(pets))
		}
		luna := pets[1]
		wantStatus(t, bob.post(petPage(luna.ID), editForm(bobTok, "Luna", "2", "sold", luna.Version)), http.StatusSeeOther)

		res := ana.post(action, url.Values{"csrf_token": {tok}, "back": {back}})
		wantStatus(t, res, http.StatusSeeOther)
		after := ana.get(res.Header.Get("Location"))
		want := "Archived 2 of 3 imported pets; 1 changed since by bob (Luna)."
		if got := text(after, `[data-testid="flash"]`); !strings.HasPrefix(got, want) {
			t.Errorf("the answer says %q, want %q", got, want)
		}
		if left := importedPets(t, e); len(left) != 1 || left[0].ID != luna.ID || left[0].Status != models.StatusSold {
			t.Errorf("pets left: %+v; want bob's Luna alone", left)
		}
		for _, p := range []models.Pet{pets[0], pets[2]} {
			if !inArchive(t, e, p.ID) {
				t.Errorf("%s was not archived", p.Name)
			}
		}
	})
}

// The end page of a bulk archive of every match offers Undo, which
// restores them.
func TestUndoBulkArchiveJob(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		gone := e.addPets(t, 4, models.StatusSold, "Gone")
		b, tok := e.signedIn()
		confirm := b.get("/admin/pets/bulk?set=archive&status=sold")
		start := url.Values{"csrf_token": {tok}, "filter": {value(confirm, `input[name="filter"]`)}, "set": {value(confirm, `input[name="set"]`)},
			"total": {value(confirm, `input[name="total"]`)}, "confirm": {"yes"}}
		res := b.post("/admin/pets/bulk", start)
		wantStatus(t, res, http.StatusSeeOther)
		e.store.WaitBulkJobs()
		job := b.get(res.Header.Get("Location"))
		action, back := undoFormOf(t, job)
		if label := job.Doc.Find(`[data-testid="undo"]`).AttrOr("aria-label", ""); label != "Undo: Archived 4 pets of status sold" {
			t.Errorf("the Undo is labelled %q", label)
		}
		res = b.post(action, url.Values{"csrf_token": {tok}, "back": {back}})
		wantStatus(t, res, http.StatusSeeOther)
		if got := text(b.get(res.Header.Get("Location")), `[data-testid="flash"]`); !strings.HasPrefix(got, "Restored 4 of 4 archived pets.") {
			t.Errorf("the answer says %q", got)
		}
		for _, p := range gone {
			if inArchive(t, e, p.ID) || e.stored(t, p.ID).Status != models.StatusSold {
				t.Errorf("%s is not back", p.Name)
			}
		}
	})
}
