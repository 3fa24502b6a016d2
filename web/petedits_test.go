package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"petstore/models"
	"petstore/models/modelstest"
)

// stored reads a pet as the store has it, with its version.
func (e *env) stored(t *testing.T, id int64) models.Pet {
	t.Helper()
	p, err := e.store.GetPet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// petEvents returns a pet's audit events, newest first.
func (e *env) petEvents(t *testing.T, id int64) []models.AuditEvent {
	t.Helper()
	events, _, err := e.store.ListAuditEvents(context.Background(), models.AuditQuery{TargetType: models.TargetPet, TargetID: id, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return events
}

func petPage(id int64) string { return "/admin/pets/" + strconv.FormatInt(id, 10) }

// editForm is the edit form as a browser posts it.
func editForm(tok, name, category, status string, version int64) url.Values {
	return url.Values{"csrf_token": {tok}, "name": {name}, "categoryId": {category}, "status": {status},
		"version": {strconv.FormatInt(version, 10)}}
}

// value returns the value attribute of the first match of a selector.
func value(p page, selector string) string {
	return p.Doc.Find(selector).First().AttrOr("value", "")
}

func TestPetPage(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		pets := e.addPets(t, 2, models.StatusAvailable, "Rex")
		rex := pets[0]
		if _, err := e.store.UpdatePetStatus(context.Background(), rex.ID, models.StatusPending, "carol"); err != nil {
			t.Fatal(err)
		}
		b, _ := e.signedIn()

		// Each row of the list links to its pet's page.
		list := b.get("/admin/pets")
		link := list.Doc.Find(fmt.Sprintf(`#pet-%d [data-testid="pet-name"] a`, rex.ID))
		if link.AttrOr("href", "") != petPage(rex.ID) || strings.TrimSpace(link.Text()) != "Rex 0" {
			t.Fatalf("row link %q %q, want %s named Rex 0", link.AttrOr("href", ""), link.Text(), petPage(rex.ID))
		}

		p := b.get(petPage(rex.ID))
		wantStatus(t, p, http.StatusOK)
		if text(p, "h1") != "Rex 0" || text(p, `[data-testid="pet-status"]`) != "pending" || text(p, `[data-testid="pet-category"]`) != "1" {
			t.Errorf("heading %q, status %q, category %q", text(p, "h1"), text(p, `[data-testid="pet-status"]`), text(p, `[data-testid="pet-category"]`))
		}
		if !strings.Contains(text(p, `[data-testid="pet-updated"]`), "(version 2)") {
			t.Errorf("last changed %q, want version 2", text(p, `[data-testid="pet-updated"]`))
		}
		// The form holds the stored values, each labelled, and the version.
		if v := labelled(t, p, "Name").AttrOr("value", ""); v != "Rex 0" {
			t.Errorf("Name field %q", v)
		}
		if v := labelled(t, p, "Category ID").AttrOr("value", ""); v != "1" {
			t.Errorf("Category ID field %q", v)
		}
		if v := labelled(t, p, "Status").Find("option[selected]").AttrOr("value", ""); v != "pending" {
			t.Errorf("Status field %q", v)
		}
		form := p.Doc.Find("#pet-edit")
		if form.AttrOr("action", "") != petPage(rex.ID) || form.AttrOr("method", "") != "post" || value(p, `#pet-edit input[name="version"]`) != "2" ||
			value(p, `#pet-edit input[name="csrf_token"]`) == "" {
			t.Errorf("edit form: action %q method %q version %q", form.AttrOr("action", ""), form.AttrOr("method", ""), value(p, `#pet-edit input[name="version"]`))
		}
		// The history, newest first.
		var history []string
		p.Doc.Find(`[data-testid="history-row"]`).Each(func(_ int, s *goquery.Selection) {
			history = append(history, strings.Join(strings.Fields(s.Find(`[data-testid="history-sentence"]`).Text()), " "))
		})
		if strings.Join(history, ",") != "Carol changed Rex 0's status from available to pending,Test added Rex 0 (category 1, available)" {
			t.Errorf("history %q, want carol's status change then the creation", history)
		}

		for _, bad := range []string{"999999", "abc", "+1", "0"} {
			p := b.get("/admin/pets/" + bad)
			wantStatus(t, p, http.StatusNotFound)
			if text(p, "h1") != "Pet not found" {
				t.Errorf("/admin/pets/%s: heading %q", bad, text(p, "h1"))
			}
		}
	})
}

func TestEditPetSaves(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		rex := e.addPets(t, 1, models.StatusAvailable, "Biscuit")[0]
		e.addPets(t, 1, models.StatusAvailable, "Biscuit Other")
		b, tok := e.signedIn()

		res := b.post(petPage(rex.ID), editForm(tok, "  Crumble Ñandú ", "9", "sold", 1))
		wantStatus(t, res, http.StatusSeeOther)
		if loc := res.Header.Get("Location"); loc != petPage(rex.ID) {
			t.Fatalf("redirect to %q, want the pet's page", loc)
		}
		p := b.get(petPage(rex.ID))
		if got := text(p, `[data-testid="flash"]`); got != "Saved the changes to Crumble Ñandú." {
			t.Errorf("flash %q", got)
		}
		if text(p, "h1") != "Crumble Ñandú" || value(p, "#edit-name") != "Crumble Ñandú" || value(p, `#pet-edit input[name="version"]`) != "2" {
			t.Errorf("page after saving: h1 %q, name %q, version %q", text(p, "h1"), value(p, "#edit-name"), value(p, `#pet-edit input[name="version"]`))
		}
		got := e.stored(t, rex.ID)
		if got.Name != "Crumble Ñandú" || got.CategoryID != 9 || got.Status != models.StatusSold || got.Version != 2 {
			t.Errorf("stored %+v, want the edit at version 2", got)
		}
		ev := e.petEvents(t, rex.ID)[0]
		if want := `name "Biscuit 0" -> "Crumble Ñandú"; categoryId 1 -> 9; status available -> sold`; ev.Action != models.ActionPetEdited || ev.Actor != staffName || ev.Detail != want {
			t.Errorf("audit event %+v, want pet.edited by %s: %s", ev, staffName, want)
		}
		if text(p, `[data-testid="history-row"] td.detail`) != "Alice edited Crumble Ñandú: name from “Biscuit 0” to “Crumble Ñandú”, category from 1 to 9, status from available to sold" {
			t.Errorf("the page's history starts with %q, want the edit", text(p, `[data-testid="history-row"] td.detail`))
		}
		// The list's search follows the rename at once.
		if names := rowNames(b.get("/admin/pets?q=biscuit")); strings.Join(names, ",") != "Biscuit Other 0" {
			t.Errorf("search by the old name finds %q, want only the other pet", names)
		}
		if names := rowNames(b.get("/admin/pets?q=nandu")); strings.Join(names, ",") != "Crumble Ñandú" {
			t.Errorf("search by the new name finds %q", names)
		}
		// The API shows the edit, and no version.
		_, key, err := e.store.CreateAPIKey(context.Background(), "app", staffName)
		if err != nil {
			t.Fatal(err)
		}
		api := b.get("/v1/pets/"+strconv.FormatInt(rex.ID, 10), "Authorization", "Bearer "+key)
		if want := fmt.Sprintf(`{"id":%d,"name":"Crumble Ñandú","categoryId":9,"status":"sold"}`, rex.ID); strings.TrimSpace(api.Body) != want {
			t.Errorf("GET /v1/pets/%d = %s, want %s", rex.ID, api.Body, want)
		}
	})
}

func TestEditPetInvalid(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		rex := e.addPets(t, 1, models.StatusPending, "Rex")[0]
		b, tok := e.signedIn()
		tests := []struct {
			name, petName, category, status, field string
		}{
			{"blank name", "   ", "1", "sold", "edit-name"},
			{"name too long", strings.Repeat("x", 256), "1", "sold", "edit-name"},
			{"hidden character", "Rex\u200b", "1", "sold", "edit-name"},
			{"text category", "Max", "abc", "sold", "edit-category"},
			{"zero category", "Max", "0", "sold", "edit-category"},
			{"unknown status", "Max", "1", "lost", "edit-status"},
			{"no status", "Max", "1", "", "edit-status"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := b.post(petPage(rex.ID), editForm(tok, tt.petName, tt.category, tt.status, 1))
				wantStatus(t, p, http.StatusUnprocessableEntity)
				msg := text(p, `[data-testid="`+tt.field+`-error"]`)
				if msg == "" {
					t.Fatalf("no error beside %s:\n%s", tt.field, p.Body)
				}
				f := p.Doc.Find("#" + tt.field)
				if f.AttrOr("aria-invalid", "") != "true" || !strings.Contains(f.AttrOr("aria-describedby", ""), tt.field+"-error") {
					t.Errorf("%s: aria-invalid %q, aria-describedby %q", tt.field, f.AttrOr("aria-invalid", ""), f.AttrOr("aria-describedby", ""))
				}
				if _, ok := f.Attr("autofocus"); !ok {
					t.Errorf("%s does not take the focus", tt.field)
				}
				// What was typed is kept; the version is still the one loaded.
				if value(p, "#edit-name") != tt.petName || value(p, "#edit-category") != tt.category || value(p, `#pet-edit input[name="version"]`) != "1" {
					t.Errorf("form after the error: name %q, category %q, version %q", value(p, "#edit-name"), value(p, "#edit-category"), value(p, `#pet-edit input[name="version"]`))
				}
				if !strings.Contains(text(p, `[data-testid="flash"]`), "not saved") {
					t.Errorf("flash %q", text(p, `[data-testid="flash"]`))
				}
			})
		}
		// The same message as the API's rule set.
		p := b.post(petPage(rex.ID), editForm(tok, "", "1", "sold", 1))
		if got := text(p, `[data-testid="edit-name-error"]`); got != "Name is required." {
			t.Errorf("blank name error %q, want the API's", got)
		}
		// A version that is not one is refused as a stale form; so is the
		// pet's own version with spaces or a sign, as the id rule refuses.
		for _, v := range []string{"", "0", "abc", " 1 ", "1 ", " 1", "\t1", "1\n", "+1"} {
			form := editForm(tok, "Max", "1", "sold", 1)
			form.Set("version", v)
			p := b.post(petPage(rex.ID), form)
			wantStatus(t, p, http.StatusBadRequest)
			if !strings.Contains(p.Doc.Find("main").Text(), "The form is out of date") {
				t.Errorf("version %q: page says %q", v, p.Doc.Find("main").Text())
			}
		}
		wantStatus(t, b.post(petPage(999999), editForm(tok, "Max", "1", "sold", 1)), http.StatusNotFound)
		if got := e.stored(t, rex.ID); got.Name != "Rex 0" || got.Status != models.StatusPending || got.Version != 1 {
			t.Errorf("refused edits changed the pet: %+v", got)
		}
		if n := len(e.petEvents(t, rex.ID)); n != 1 {
			t.Errorf("%d audit events, want only the creation", n)
		}
	})
}

// TestEditPetConflict: a save over a version someone else changed answers
// 409 with both values and writes nothing; saving again from the page it
// showed goes through.
func TestEditPetConflict(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		rex := e.addPets(t, 1, models.StatusAvailable, "Rex")[0]
		b, tok := e.signedIn()
		// Bob saves first, from the same version 1.
		if _, err := e.store.EditPet(context.Background(), rex.ID, 1, models.NewPet{Name: "Max", CategoryID: 1, Status: models.StatusPending}, "bob"); err != nil {
			t.Fatal(err)
		}
		p := b.post(petPage(rex.ID), editForm(tok, "Rexy", "4", "sold", 1))
		wantStatus(t, p, http.StatusConflict)
		msg := text(p, `[data-testid="edit-conflict"]`)
		for _, want := range []string{"bob changed this pet at", `name "Rex 0" -> "Max"`, "status available -> pending", "Their change is kept"} {
			if !strings.Contains(msg, want) {
				t.Errorf("conflict message %q lacks %q", msg, want)
			}
		}
		if p.Doc.Find(`[data-testid="edit-conflict"][role="alert"][autofocus]`).Length() != 1 {
			t.Error("the conflict message is not an alert that takes the focus")
		}
		// Yours in the fields, theirs beside them, the new version.
		if value(p, "#edit-name") != "Rexy" || value(p, "#edit-category") != "4" || p.Doc.Find("#edit-status option[selected]").AttrOr("value", "") != "sold" {
			t.Errorf("the form does not keep what was typed: name %q, category %q", value(p, "#edit-name"), value(p, "#edit-category"))
		}
		for field, want := range map[string]string{"edit-name": "Max", "edit-category": "1", "edit-status": "pending"} {
			if got := text(p, `[data-testid="`+field+`-theirs"] strong`); got != want {
				t.Errorf("%s: their value %q, want %q", field, got, want)
			}
			if d := p.Doc.Find("#"+field).AttrOr("aria-describedby", ""); !strings.Contains(d, field+"-theirs") {
				t.Errorf("%s is not described by its stored value (aria-describedby %q)", field, d)
			}
		}
		if v := value(p, `#pet-edit input[name="version"]`); v != "2" {
			t.Errorf("version %q in the form, want 2 (the one now stored)", v)
		}
		if text(p, "h1") != "Max" || text(p, `[data-testid="pet-status"]`) != "pending" {
			t.Errorf("the page shows %q %q, want the stored Max, pending", text(p, "h1"), text(p, `[data-testid="pet-status"]`))
		}
		// Nothing was overwritten.
		if got := e.stored(t, rex.ID); got.Name != "Max" || got.CategoryID != 1 || got.Status != models.StatusPending || got.Version != 2 {
			t.Errorf("stored %+v after the conflict, want Bob's change at version 2", got)
		}
		if n := len(e.petEvents(t, rex.ID)); n != 2 {
			t.Errorf("%d audit events, want 2", n)
		}

		// Saving the form as the conflict showed it replaces theirs.
		res := b.post(petPage(rex.ID), editForm(tok, value(p, "#edit-name"), value(p, "#edit-category"), "sold", 2))
		wantStatus(t, res, http.StatusSeeOther)
		if got := e.stored(t, rex.ID); got.Name != "Rexy" || got.CategoryID != 4 || got.Status != models.StatusSold || got.Version != 3 {
			t.Errorf("stored %+v after the second save, want yours at version 3", got)
		}
	})
}

// TestEditPetConcurrentSaves: many saves of the same version at once over
// HTTP: exactly one is written (303), every other one is a 409.
func TestEditPetConcurrentSaves(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		rex := e.addPets(t, 1, models.StatusAvailable, "Rex")[0]
		b, tok := e.signedIn()
		const n = 12
		statuses := make([]int, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				statuses[i], _, errs[i] = goDo(e, b, http.MethodPost, petPage(rex.ID), editForm(tok, fmt.Sprintf("Rex %d", i), "1", "sold", 1))
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, st := range statuses {
			switch {
			case errs[i] != nil:
				t.Errorf("save %d: %v", i, errs[i])
			case st == http.StatusSeeOther && winner >= 0:
				t.Errorf("saves %d and %d both won", winner, i)
			case st == http.StatusSeeOther:
				winner = i
			case st != http.StatusConflict:
				t.Errorf("save %d: status %d, want 303 or 409", i, st)
			}
		}
		if winner < 0 {
			t.Fatalf("no save won: %v", statuses)
		}
		if got := e.stored(t, rex.ID); got.Name != fmt.Sprintf("Rex %d", winner) || got.Version != 2 {
			t.Errorf("stored %+v, want the winner's name at version 2", got)
		}
		if n := len(e.petEvents(t, rex.ID)); n != 2 {
			t.Errorf("%d audit events, want the creation and one edit", n)
		}
	})
}

// bulkForm is the bulk form as a browser posts it: the selected pets, or
// all of the page's with all.
func bulkForm(tok, status string, selected []models.Pet, page []models.Pet, all bool) url.Values {
	f := url.Values{"csrf_token": {tok}, "status": {status}, "back": {"/admin/pets"}}
	for _, p := range selected {
		f.Add("pet", fmt.Sprintf("%d:%d", p.ID, p.Version))
	}
	for _, p := range page {
		f.Add("page", fmt.Sprintf("%d:%d", p.ID, p.Version))
	}
	if all {
		f.Set("all", "1")
	}
	return f
}

func TestBulkStatusForm(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		pets := e.addPets(t, 2, models.StatusAvailable, "Rex")
		if _, err := e.store.UpdatePetStatus(context.Background(), pets[0].ID, models.StatusSold, "test"); err != nil {
			t.Fatal(err)
		}
		b, _ := e.signedIn()
		p := b.get("/admin/pets?status=sold")
		// Each row's checkbox carries the version shown, named for the pet.
		box := p.Doc.Find(fmt.Sprintf(`#pet-%d input[type="checkbox"][name="pet"]`, pets[0].ID))
		if box.AttrOr("value", "") != fmt.Sprintf("%d:2", pets[0].ID) || box.AttrOr("form", "") != "bulk-form" || box.AttrOr("aria-label", "") != "Select Rex 0" {
			t.Errorf("row checkbox value %q form %q label %q", box.AttrOr("value", ""), box.AttrOr("form", ""), box.AttrOr("aria-label", ""))
		}
		form := p.Doc.Find("form#bulk-form")
		if form.AttrOr("action", "") != "/admin/pets/bulk-status" || form.AttrOr("method", "") != "post" || value(p, `#bulk-form input[name="back"]`) != "/admin/pets?status=sold" {
			t.Errorf("bulk form action %q, back %q", form.AttrOr("action", ""), value(p, `#bulk-form input[name="back"]`))
		}
		if labelled(t, p, "Set the selected pets to").Find("option").Length() != 3 || labelled(t, p, "Select all on this page").AttrOr("form", "") != "bulk-form" {
			t.Error("bulk form lacks its labelled status choice or its select-all box")
		}
		var page []string
		form.Find(`input[name="page"]`).Each(func(_ int, s *goquery.Selection) { page = append(page, s.AttrOr("value", "")) })
		if strings.Join(page, ",") != fmt.Sprintf("%d:2", pets[0].ID) {
			t.Errorf("the page's pets in the form: %q", page)
		}
		if p.Doc.Find(`#bulk-summary[role="status"][aria-live="polite"]`).Length() != 1 {
			t.Error("no live region for the bulk summary")
		}
		// The headers: a select column, then the table's own.
		var headers []string
		p.Doc.Find("thead th").Each(func(_ int, s *goquery.Selection) { headers = append(headers, strings.TrimSpace(s.Text())) })
		if headers[0] != "Select all on this page" {
			t.Errorf("first header %q", headers[0])
		}
	})
}

// TestBulkStatusChange: selected pets change, one audit event each; the
// others are reported skipped with their reason, without JavaScript and
// with htmx.
func TestBulkStatusChange(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ada := e.addPets(t, 1, models.StatusAvailable, "Ada")[0]
		bo := e.addPets(t, 1, models.StatusPending, "Bo")[0]
		cy := e.addPets(t, 1, models.StatusSold, "Cy")[0]
		di := e.addPets(t, 1, models.StatusAvailable, "Di")[0]
		ed := e.addPets(t, 1, models.StatusAvailable, "Ed")[0]
		for _, p := range []*models.Pet{&ada, &bo, &cy, &di, &ed} {
			p.Version = 1 // as the page showed them
		}
		b, tok := e.signedIn()
		// Di is renamed after the page was shown.
		if _, err := e.store.EditPet(ctx, di.ID, 1, models.NewPet{Name: "Dina", CategoryID: 1, Status: models.StatusAvailable}, "bob"); err != nil {
			t.Fatal(err)
		}
		res := b.post("/admin/pets/bulk-status", bulkForm(tok, "sold", []models.Pet{ada, bo, cy, di}, nil, false))
		wantStatus(t, res, http.StatusSeeOther)
		if loc := res.Header.Get("Location"); loc != "/admin/pets" {
			t.Errorf("redirect to %q, want the page the form was on", loc)
		}
		p := b.get(res.Header.Get("Location"))
		want := "Changed 2 pets to sold. Skipped 2: Cy 0 (already sold); Dina (changed by someone else meanwhile: check it and try again)."
		if got := text(p, `#bulk-summary`); got != want {
			t.Errorf("summary %q, want %q", got, want)
		}
		if text(p, `[data-testid="flash"]`) != "" {
			t.Error("the summary is shown as a flash too")
		}
		for _, tt := range []struct {
			pet     models.Pet
			status  models.Status
			version int64
			events  int
		}{{ada, models.StatusSold, 2, 2}, {bo, models.StatusSold, 2, 2}, {cy, models.StatusSold, 1, 1}, {di, models.StatusAvailable, 2, 2}, {ed, models.StatusAvailable, 1, 1}} {
			got := e.stored(t, tt.pet.ID)
			if got.Status != tt.status || got.Version != tt.version {
				t.Errorf("%s stored %s at version %d, want %s at %d", got.Name, got.Status, got.Version, tt.status, tt.version)
			}
			if events := e.petEvents(t, tt.pet.ID); len(events) != tt.events {
				t.Errorf("%s has %d audit events, want %d", got.Name, len(events), tt.events)
			}
		}
		if ev := e.petEvents(t, ada.ID)[0]; ev.Action != models.ActionPetStatusChanged || ev.Actor != staffName || ev.Detail != "available -> sold" {
			t.Errorf("bulk audit event %+v", ev)
		}

		// All on the page, with htmx: the table comes back with the summary.
		page := []models.Pet{e.stored(t, ed.ID), e.stored(t, di.ID), e.stored(t, cy.ID), e.stored(t, bo.ID), e.stored(t, ada.ID)}
		r := b.post("/admin/pets/bulk-status", bulkForm(tok, "sold", nil, page, true), "HX-Request", "true")
		wantStatus(t, r, http.StatusOK)
		if strings.Contains(r.Body, "<html") || r.Doc.Find("#pets-table").Length() != 1 {
			t.Fatalf("htmx answer is not the table:\n%s", r.Body)
		}
		if got := text(r, `#bulk-summary[hx-swap-oob="innerHTML"]`); got != "Changed 2 pets to sold. Skipped 3: Ada 0 (already sold); Bo 0 (already sold); Cy 0 (already sold)." {
			t.Errorf("htmx summary %q", got)
		}
		if r.Doc.Find(`#bulk-form [data-focus-after-swap]`).Length() != 1 {
			t.Error("the focus does not go back to the bulk form")
		}
		if got := r.Doc.Find(fmt.Sprintf(`#pet-%d input[name="pet"]`, di.ID)).AttrOr("value", ""); got != fmt.Sprintf("%d:3", di.ID) {
			t.Errorf("Dina's row carries %q after the change, want version 3", got)
		}
		for _, id := range []int64{ada.ID, bo.ID, cy.ID, di.ID, ed.ID} {
			if got := e.stored(t, id); got.Status != models.StatusSold {
				t.Errorf("%s is %s, want sold", got.Name, got.Status)
			}
		}
		if got := e.stored(t, ada.ID); got.Version != 2 {
			t.Errorf("Ada, already sold, went to version %d, want 2 kept", got.Version)
		}
	})
}

// TestBulkStatusRefused: more than a page, nothing selected or a bad
// status are refused whole, and nothing changes.
func TestBulkStatusRefused(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		pets := e.addPets(t, 21, models.StatusAvailable, "P")
		for i := range pets {
			pets[i].Version = 1
		}
		b, tok := e.signedIn()
		tests := []struct {
			name string
			form url.Values
			want string
		}{
			{"more than a page", bulkForm(tok, "sold", pets, nil, false), "At most 20 pets (one page) can be changed at once, and 21 were sent. Nothing was changed."},
			{"more than a page as all", bulkForm(tok, "sold", nil, pets, true), "At most 20 pets (one page) can be changed at once, and 21 were sent."},
			{"nothing selected", bulkForm(tok, "sold", nil, pets[:3], false), "Select at least one pet to change."},
			{"bad status", bulkForm(tok, "lost", pets[:2], nil, false), models.StatusMessage},
			{"bad item", url.Values{"csrf_token": {tok}, "status": {"sold"}, "pet": {"12"}}, "out of date"},
		}
		for _, tt := range tests {
			for _, htmx := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/htmx=%v", tt.name, htmx), func(t *testing.T) {
					var headers []string
					if htmx {
						headers = []string{"HX-Request", "true"}
					}
					p := b.post("/admin/pets/bulk-status", tt.form, headers...)
					wantStatus(t, p, http.StatusUnprocessableEntity)
					if got := text(p, `[data-testid="flash"][role="alert"]`); !strings.Contains(got, tt.want) {
						t.Errorf("message %q, want %q", got, tt.want)
					}
					if len(rowNames(p)) != 20 {
						t.Errorf("the answer shows %d rows, want the page of 20", len(rowNames(p)))
					}
				})
			}
		}
		for _, p := range pets {
			if got := e.stored(t, p.ID); got.Status != models.StatusAvailable || got.Version != 1 {
				t.Fatalf("a refused bulk change wrote %+v", got)
			}
			if n := len(e.petEvents(t, p.ID)); n != 1 {
				t.Fatalf("a refused bulk change audited pet %d", p.ID)
			}
		}
	})
}

// TestBulkEveryMatch: the bulk form's "every pet of this filter" leads to
// a confirmation stating the count and the filter, which changes nothing;
// only the confirmed post starts the change, whose page shows its summary.
func TestBulkEveryMatch(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		rex := e.addPets(t, 25, models.StatusAvailable, "Rex")
		e.addPets(t, 3, models.StatusAvailable, "Bo")
		e.addPets(t, 4, models.StatusPending, "Rex pending")
		b, tok := e.signedIn()

		// The list offers it, in the bulk form.
		list := b.get("/admin/pets?status=available&q=rex")
		if btn := list.Doc.Find(`#bulk-form button[name="scope"][value="all"]`); btn.Length() != 1 {
			t.Fatalf("no \"every pet of this filter\" button in the bulk form")
		}
		form := url.Values{"csrf_token": {tok}, "status": {"sold"}, "scope": {"all"},
			"back": {"/admin/pets?status=available&q=rex&before=" + strconv.FormatInt(rex[20].ID, 10)}}
		res := b.post("/admin/pets/bulk-status", form)
		wantStatus(t, res, http.StatusSeeOther)
		confirmURL := res.Header.Get("Location")
		if confirmURL != "/admin/pets/bulk?q=rex&set=sold&status=available" {
			t.Fatalf("redirect to %q; want the confirmation of the filter, every page", confirmURL)
		}
		htmx := b.post("/admin/pets/bulk-status", form, "HX-Request", "true")
		if htmx.Status != http.StatusOK || htmx.Header.Get("HX-Redirect") != confirmURL {
			t.Errorf("htmx answer %d, HX-Redirect %q; want the confirmation", htmx.Status, htmx.Header.Get("HX-Redirect"))
		}

		confirm := b.get(confirmURL)
		wantStatus(t, confirm, http.StatusOK)
		if h := text(confirm, "h1"); h != "Set all 25 pets to sold?" {
			t.Errorf("heading %q", h)
		}
		if got := text(confirm, `[data-testid="bulk-confirm-text"]`); !strings.Contains(got, `status available, name search "rex"`) {
			t.Errorf("confirmation text %q; want the filter in words", got)
		}
		if btn := confirm.Doc.Find(`[data-testid="bulk-confirm-button"]`); !btn.HasClass("danger") {
			t.Error("the confirm button is not styled as dangerous")
		}
		if n := modelstest.CountPetsWithStatus(t, e.store, models.StatusSold); n != 0 {
			t.Fatalf("%d pets sold before the confirmation", n)
		}
		start := url.Values{"csrf_token": {tok}, "filter": {value(confirm, `input[name="filter"]`)}, "set": {"sold"},
			"total": {value(confirm, `input[name="total"]`)}}
		// Without the confirmation: the confirmation again, nothing done.
		again := b.post("/admin/pets/bulk", start)
		wantStatus(t, again, http.StatusOK)
		if again.Doc.Find(`[data-testid="bulk-confirm"]`).Length() != 1 {
			t.Error("a post without confirmation did not ask for it")
		}
		if _, running, _ := e.store.RunningBulkJob(ctx); running || modelstest.CountPetsWithStatus(t, e.store, models.StatusSold) != 0 {
			t.Fatal("a post without confirmation started the change")
		}

		start.Set("confirm", "yes")
		res = b.post("/admin/pets/bulk", start)
		wantStatus(t, res, http.StatusSeeOther)
		jobURL := res.Header.Get("Location")
		if !strings.HasPrefix(jobURL, "/admin/pets/bulk/") {
			t.Fatalf("redirect to %q; want the job's page", jobURL)
		}
		e.store.WaitBulkJobs()
		done := b.get(jobURL)
		wantStatus(t, done, http.StatusOK)
		if got := text(done, `[data-testid="bulk-job-summary"]`); got != "Changed 25 pets to sold." {
			t.Errorf("summary %q", got)
		}
		if done.Doc.Find(`[hx-trigger]#bulk-job`).Length() != 0 {
			t.Error("an ended job's page still polls")
		}
		if got := modelstest.CountPetsWithStatus(t, e.store, models.StatusSold); got != 25 {
			t.Errorf("%d pets sold; want the 25 matching", got)
		}
		events, _, err := e.store.ListAuditEvents(ctx, models.AuditQuery{Action: models.ActionPetsBulkStatus, Limit: 5})
		if err != nil || len(events) != 1 || events[0].Actor != staffName {
			t.Errorf("bulk audit events %+v, %v; want one by %s", events, err, staffName)
		}
	})
}

// TestBulkEveryMatchWhileRunning: while a bulk change runs (on any
// instance) the confirmation says so and offers no button, and a confirmed
// post is refused with 409, nothing started; a running job's page polls
// and links to itself for a refresh without JavaScript.
func TestBulkEveryMatchWhileRunning(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.addPets(t, 3, models.StatusAvailable, "Rex")
		job, err := e.store.InsertOrphanBulkJob(ctx, time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		b, tok := e.signedIn()
		jobURL := "/admin/pets/bulk/" + strconv.FormatInt(job.ID, 10)
		confirm := b.get("/admin/pets/bulk?set=sold")
		wantStatus(t, confirm, http.StatusOK)
		if confirm.Doc.Find(`[data-testid="bulk-confirm-button"]`).Length() != 0 ||
			confirm.Doc.Find(`[data-testid="bulk-running"] a`).AttrOr("href", "") != jobURL {
			t.Errorf("confirmation while a job runs:\n%s", confirm.Body)
		}
		res := b.post("/admin/pets/bulk", url.Values{"csrf_token": {tok}, "filter": {""}, "set": {"sold"}, "total": {"3"}, "confirm": {"yes"}})
		wantStatus(t, res, http.StatusConflict)
		if !strings.Contains(text(res, `[data-testid="bulk-error"]`), "another bulk change is running") {
			t.Errorf("refusal %q", text(res, `[data-testid="bulk-error"]`))
		}
		if n := modelstest.CountPetsWithStatus(t, e.store, models.StatusSold); n != 0 {
			t.Errorf("%d pets sold by a refused change", n)
		}
		p := b.get(jobURL)
		wantStatus(t, p, http.StatusOK)
		region := p.Doc.Find(`#bulk-job`)
		if region.AttrOr("hx-trigger", "") != "every 1s" || region.AttrOr("hx-get", "") != jobURL ||
			p.Doc.Find(`[data-testid="bulk-refresh"]`).AttrOr("href", "") != jobURL {
			t.Errorf("running job's page does not poll or offer a refresh:\n%s", p.Body)
		}
		if got := text(p, `label[for="bulk-progress"]`); got != "4 of 10 pets done" {
			t.Errorf("progress %q", got)
		}
		partial := b.get(jobURL, "HX-Request", "true")
		if partial.Doc.Find("h1").Length() != 0 || partial.Doc.Find("#bulk-job").Length() != 1 {
			t.Errorf("htmx poll answer is not the progress region alone:\n%s", partial.Body)
		}
		if p := b.get("/admin/pets/bulk/999999"); p.Status != http.StatusNotFound {
			t.Errorf("unknown job: %d", p.Status)
		}
	})
}
