package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"petstore/models"
	"petstore/models/modelstest"
)

// undoFormOf returns the address and back field of a page's Undo form,
// failing when it has none.
func undoFormOf(t *testing.T, p page) (action, back string) {
	t.Helper()
	f := p.Doc.Find(`[data-testid="undo-form"]`).First()
	if f.Length() == 0 {
		t.Fatalf("no Undo form on the page:\n%s", p.Body)
	}
	if f.AttrOr("method", "") != "post" || f.Find(`input[name="csrf_token"]`).AttrOr("value", "") == "" {
		t.Errorf("the Undo form is not a POST with a CSRF token")
	}
	if f.Find(`button[type="submit"]`).Text() != "Undo" {
		t.Errorf("the Undo form's button reads %q", f.Find("button").Text())
	}
	return f.AttrOr("action", ""), f.Find(`input[name="back"]`).AttrOr("value", "")
}

// Two members: ana changes three pets in bulk, bob then edits one of them,
// and ana's undo reverts the other two and says bob changed the third.
// The undo is offered again (of the undo), and a second undo of the same
// change is refused naming the first.
func TestUndoWithConcurrentEditor(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		pets := e.addPets(t, 3, models.StatusAvailable, "Pet")
		_, ana, anaTok := e.member("ana", models.RoleEditor)
		_, bob, bobTok := e.member("bob", models.RoleEditor)

		res := ana.post("/admin/pets/bulk-status", bulkForm(anaTok, "sold", pets, nil, false))
		wantStatus(t, res, http.StatusSeeOther)
		list := ana.get(res.Header.Get("Location"))
		if got := text(list, `[data-testid="bulk-summary"]`); got != "Changed 3 pets to sold." {
			t.Errorf("summary %q", got)
		}
		action, back := undoFormOf(t, list)
		if !strings.HasPrefix(action, "/admin/undo/") || back != "/admin/pets" {
			t.Fatalf("Undo form posts to %q, back %q", action, back)
		}

		mid := e.stored(t, pets[1].ID)
		wantStatus(t, bob.post(petPage(mid.ID), editForm(bobTok, mid.Name, "1", "pending", mid.Version)), http.StatusSeeOther)

		res = ana.post(action, url.Values{"csrf_token": {anaTok}, "back": {back}})
		wantStatus(t, res, http.StatusSeeOther)
		if res.Header.Get("Location") != "/admin/pets" {
			t.Errorf("the undo leads to %q, want back to the list", res.Header.Get("Location"))
		}
		after := ana.get("/admin/pets")
		want := "Reverted 2 of 3; 1 changed since by bob (" + mid.Name + ")."
		if got := text(after, `[data-testid="flash"]`); got != want {
			t.Errorf("the answer says %q, want %q", got, want)
		}
		if again, _ := undoFormOf(t, after); again == action {
			t.Errorf("the answer offers the same undo again, want the undo's own")
		}
		for i, want := range []models.Status{models.StatusAvailable, models.StatusPending, models.StatusAvailable} {
			if got := e.stored(t, pets[i].ID).Status; got != want {
				t.Errorf("pet %d is %s, want %s", i, got, want)
			}
		}
		if ev := e.petEvents(t, pets[0].ID)[0]; ev.Action != models.ActionPetUndone || ev.Actor != "ana" {
			t.Errorf("latest audit event %+v, want ana's undo", ev)
		}
		if ev := e.petEvents(t, mid.ID)[0]; ev.Actor != "bob" {
			t.Errorf("the skipped pet's latest audit event %+v, want bob's edit", ev)
		}

		again := ana.post(action, url.Values{"csrf_token": {anaTok}, "back": {back}})
		wantStatus(t, again, http.StatusConflict)
		if !strings.Contains(again.Body, "already undone by ana") {
			t.Errorf("a second undo says:\n%s", again.Body)
		}
		// bob may not undo ana's change, nor see it among his.
		wantStatus(t, bob.post(action, url.Values{"csrf_token": {bobTok}}), http.StatusNotFound)
		if mine := bob.get("/admin/undo"); mine.Doc.Find(`[data-testid="recent-actions"] tbody tr`).Length() != 1 {
			t.Errorf("bob's recent changes: want his edit alone:\n%s", mine.Body)
		}
		recent := ana.get("/admin/undo")
		rows := recent.Doc.Find(`[data-testid="recent-actions"] tbody tr`)
		if rows.Length() != 2 || !strings.Contains(rows.Eq(1).Text(), "Undone at") || rows.Eq(0).Find(`button`).Length() != 1 {
			t.Errorf("ana's recent changes: want the undo (undoable) and the bulk change (undone):\n%s", recent.Body)
		}
	})
}

// With htmx, a row's status change offers Undo in the flash region, and
// the undo answers the list in place with the result.
func TestUndoStatusChangeHTMX(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		rex := e.addPets(t, 1, models.StatusAvailable, "Rex")[0]
		b, tok := e.signedIn()
		res := b.post("/admin/pets/"+strconv.FormatInt(rex.ID, 10)+"/status", url.Values{"csrf_token": {tok}, "status": {"sold"}},
			"HX-Request", "true", "Referer", b.e.srv.URL+"/admin/pets?status=sold")
		wantStatus(t, res, http.StatusOK)
		action, back := undoFormOf(t, res)
		if back != "/admin/pets?status=sold" {
			t.Errorf("the Undo comes back to %q, want the list the change was made on", back)
		}
		if f := res.Doc.Find(`[data-testid="undo"]`); f.AttrOr("hx-post", "") != action || f.AttrOr("hx-target", "") != "#flash" ||
			f.AttrOr("hx-vals", "") != `{"back":"/admin/pets?status=sold"}` {
			t.Errorf("the Undo form is not enhanced with htmx")
		}
		res = b.post(action, url.Values{"csrf_token": {tok}, "back": {"/admin/pets"}}, "HX-Request", "true")
		wantStatus(t, res, http.StatusOK)
		if res.Header.Get("HX-Retarget") != "#pets-table" {
			t.Errorf("HX-Retarget %q, want the list", res.Header.Get("HX-Retarget"))
		}
		if got := text(res, `[data-testid="flash"]`); got != "Reverted 1 of 1." {
			t.Errorf("flash %q", got)
		}
		if got := text(res, `#pet-`+strconv.FormatInt(rex.ID, 10)+` [data-testid="pet-status"]`); got != "available" {
			t.Errorf("the row shows %q, want available", got)
		}
		// An undo refused with htmx says why in the flash region.
		res = b.post(action, url.Values{"csrf_token": {tok}}, "HX-Request", "true")
		if !strings.Contains(text(res, `[data-testid="flash"]`), "already undone") {
			t.Errorf("a second undo with htmx says:\n%s", res.Body)
		}
	})
}

// Fifty undos of one change posted at once: exactly one undoes it.
func TestUndoConcurrentPosts(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		rex := e.addPets(t, 1, models.StatusAvailable, "Rex")[0]
		b, tok := e.signedIn()
		res := b.post("/admin/pets/"+strconv.FormatInt(rex.ID, 10)+"/status", url.Values{"csrf_token": {tok}, "status": {"sold"}},
			"Referer", b.e.srv.URL+"/admin/pets")
		wantStatus(t, res, http.StatusSeeOther)
		action, _ := undoFormOf(t, b.get("/admin/pets"))
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			codes = map[int]int{}
		)
		for range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest("POST", e.srv.URL+action, strings.NewReader(url.Values{"csrf_token": {tok}}.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Sec-Fetch-Site", "same-origin")
				resp, err := b.client.Do(req)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					codes[-1]++
					return
				}
				resp.Body.Close()
				codes[resp.StatusCode]++
			}()
		}
		wg.Wait()
		if codes[http.StatusSeeOther] != 1 || codes[http.StatusConflict] != 49 {
			t.Errorf("answers %v, want one 303 and 49 409s", codes)
		}
		if p, err := e.store.GetPet(context.Background(), rex.ID); err != nil || p.Status != models.StatusAvailable || p.Version != 3 {
			t.Errorf("pet %+v, %v; want available, written once by the undo", p, err)
		}
	})
}

// A change of every match is undone from its page once it has ended; an
// undo of more than a chunk of pets runs in the background, and its page
// shows its progress, then what it reverted.
func TestUndoBulkJob(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		if _, err := e.store.SeedPets(ctx, models.UndoChunk*2, "test", nil); err != nil {
			t.Fatal(err)
		}
		before := modelstestAvailable(t, e)
		b, tok := e.signedIn()
		res := b.post("/admin/pets/bulk", url.Values{"csrf_token": {tok}, "filter": {"status=available"}, "set": {"sold"},
			"total": {strconv.Itoa(before)}, "confirm": {"yes"}})
		wantStatus(t, res, http.StatusSeeOther)
		jobPage := res.Header.Get("Location")
		e.store.WaitBulkJobs()
		action, back := undoFormOf(t, b.get(jobPage))
		if back != jobPage {
			t.Errorf("the Undo comes back to %q, want the job's page %q", back, jobPage)
		}

		res = b.post(action, url.Values{"csrf_token": {tok}, "back": {back}})
		wantStatus(t, res, http.StatusSeeOther)
		progress := res.Header.Get("Location")
		if !strings.HasPrefix(progress, "/admin/undo/") || progress == action {
			t.Fatalf("a large undo leads to %q, want its own page", progress)
		}
		e.store.WaitUndos()
		done := b.get(progress)
		wantStatus(t, done, http.StatusOK)
		want := "Reverted " + groupedInt(before) + " of " + groupedInt(before) + "."
		if got := text(done, `[data-testid="undo-result"] p`); got != want {
			t.Errorf("the undo's page says %q, want %q", got, want)
		}
		if got := modelstestAvailable(t, e); got != before {
			t.Errorf("%d pets available after the undo, want %d", got, before)
		}
		// htmx's polling gets the progress region alone.
		part := b.get(progress, "HX-Request", "true")
		if part.Doc.Find("main").Length() != 0 || part.Doc.Find(`[data-testid="undo-job"]`).Length() != 1 {
			t.Errorf("the polled answer is not the progress region alone:\n%s", part.Body)
		}
	})
}

// modelstestAvailable counts the available pets as stored.
func modelstestAvailable(t *testing.T, e *env) int {
	t.Helper()
	return modelstest.CountPetsWithStatus(t, e.store, models.StatusAvailable)
}

// groupedInt writes n as the console does, with thousands separated.
func groupedInt(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
