package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"petstore/models"
)

// archivedNames lists the names on a page of the archive, in order.
func archivedNames(p page) []string {
	var out []string
	p.Doc.Find(`[data-testid="archive-name"]`).Each(func(_ int, s *goquery.Selection) { out = append(out, strings.TrimSpace(s.Text())) })
	return out
}

// pv is a pet as the console's forms send it: "id:version".
func pv(p models.Pet) string {
	return strconv.FormatInt(p.ID, 10) + ":" + strconv.FormatInt(p.Version, 10)
}

// Archiving from a pet's page: the button asks first (nothing changes),
// the confirmation archives over the page's version, the pet leaves the
// list and its page says it is archived; the archive lists it with who and
// when, and restores it with its id.
func TestArchiveFromPetPage(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		rex := e.addPets(t, 2, models.StatusAvailable, "Rex")
		b, tok := e.signedIn()

		p := b.get(petPage(rex[0].ID))
		form := p.Doc.Find(`form[action="` + petPage(rex[0].ID) + `/archive"]`)
		if form.Length() != 1 || form.Find(`[data-testid="archive-pet"]`).Length() != 1 || form.Find(`input[name="version"]`).AttrOr("value", "") != "1" {
			t.Fatalf("no archive form with the version on the pet's page:\n%s", p.Body)
		}
		ask := b.post(petPage(rex[0].ID)+"/archive", url.Values{"csrf_token": {tok}, "version": {"1"}})
		wantStatus(t, ask, http.StatusOK)
		if h := text(ask, "h1"); h != "Archive Rex 0?" || !ask.Doc.Find(`[data-testid="confirm-button"]`).HasClass("danger") ||
			!strings.Contains(text(ask, `[data-testid="confirm-warning"]`), "30 days") {
			t.Errorf("confirmation heading %q, warning %q", h, text(ask, `[data-testid="confirm-warning"]`))
		}
		if value(ask, `input[name="version"]`) != "1" || value(ask, `input[name="confirm"]`) != "yes" {
			t.Error("the confirmation does not post the version and confirm=yes")
		}
		if _, err := e.store.GetPet(ctx, rex[0].ID); err != nil {
			t.Fatalf("the pet was archived before the confirmation: %v", err)
		}

		// A version the page no longer has: 409, nothing archived.
		if _, err := e.store.UpdatePetStatus(ctx, rex[0].ID, models.StatusPending, "carol"); err != nil {
			t.Fatal(err)
		}
		stale := b.post(petPage(rex[0].ID)+"/archive", url.Values{"csrf_token": {tok}, "version": {"1"}, "confirm": {"yes"}})
		wantStatus(t, stale, http.StatusConflict)
		if !strings.Contains(text(stale, ".error-page p"), "was not archived") {
			t.Errorf("stale archive message %q", text(stale, ".error-page p"))
		}
		done := b.post(petPage(rex[0].ID)+"/archive", url.Values{"csrf_token": {tok}, "version": {"2"}, "confirm": {"yes"}})
		wantStatus(t, done, http.StatusSeeOther)
		list := b.get(done.Header.Get("Location"))
		if got := text(list, `[data-testid="flash"]`); !strings.Contains(got, "Archived Rex 0") {
			t.Errorf("flash %q", got)
		}
		if names := rowNames(list); len(names) != 1 || names[0] != "Rex 1" {
			t.Errorf("the list after the archive: %v", names)
		}
		if got := text(list, `[data-testid="pet-counts"]`); !strings.Contains(got, "1") {
			t.Errorf("counts %q", got)
		}

		// The archived pet's page and its forms: 404 and 409, saying so.
		gone := b.get(petPage(rex[0].ID))
		wantStatus(t, gone, http.StatusNotFound)
		if h := text(gone, "h1"); h != "This pet is archived" || !strings.Contains(text(gone, ".error-page p"), "archived by "+staffName) {
			t.Errorf("archived pet's page: %q %q", h, text(gone, ".error-page p"))
		}
		edit := b.post(petPage(rex[0].ID), editForm(tok, "Max", "1", "sold", 3))
		wantStatus(t, edit, http.StatusConflict)
		if h := text(edit, "h1"); h != "This pet is archived" || text(edit, ".error-page p") != models.ArchivedMessage {
			t.Errorf("edit of an archived pet: %q %q", h, text(edit, ".error-page p"))
		}
		status := b.post(petPage(rex[0].ID)+"/status", url.Values{"csrf_token": {tok}, "status": {"sold"}})
		wantStatus(t, status, http.StatusConflict)
		if text(status, ".error-page p") != models.ArchivedMessage {
			t.Errorf("status change of an archived pet: %q", text(status, ".error-page p"))
		}

		// The audit trail still calls the archived pet by its name.
		trail := b.get("/admin/audit?target=pet:" + strconv.FormatInt(rex[0].ID, 10))
		if body := strings.Join(strings.Fields(trail.Doc.Find("main").Text()), " "); !strings.Contains(body, "changed Rex 0's status from available to pending") ||
			!strings.Contains(body, "archived Rex 0") {
			t.Errorf("the archived pet's audit trail: %q", body)
		}

		// The archive: in the navigation, the pet with who and when.
		arch := b.get("/admin/pets/archive")
		wantStatus(t, arch, http.StatusOK)
		if arch.Doc.Find(`nav a[href="/admin/pets/archive"]`).Length() == 0 {
			t.Error("the navigation has no link to the archive")
		}
		if names := archivedNames(arch); len(names) != 1 || names[0] != "Rex 0" || text(arch, `[data-testid="archive-by"]`) != staffName ||
			arch.Doc.Find(`[data-testid="archive-row"] time`).Length() != 1 {
			t.Errorf("archive rows %v by %q", names, text(arch, `[data-testid="archive-by"]`))
		}
		restore := arch.Doc.Find(`[data-testid="archive-row"] form`)
		if restore.AttrOr("action", "") != "/admin/pets/archive/restore" || restore.Find(`input[name="pet"]`).AttrOr("value", "") != strconv.FormatInt(rex[0].ID, 10)+":3" {
			t.Fatalf("restore form: %q", restore.Text())
		}
		back := b.post("/admin/pets/archive/restore", url.Values{"csrf_token": {tok}, "pet": {strconv.FormatInt(rex[0].ID, 10) + ":3"}, "back": {"/admin/pets/archive"}})
		wantStatus(t, back, http.StatusSeeOther)
		after := b.get(back.Header.Get("Location"))
		if got := text(after, `[data-testid="archive-summary"]`); got != "Restored Rex 0 (id "+strconv.FormatInt(rex[0].ID, 10)+")." {
			t.Errorf("restore summary %q", got)
		}
		if after.Doc.Find(`[data-testid="archive-empty"]`).Length() != 1 {
			t.Error("the archive still lists the restored pet")
		}
		got := e.stored(t, rex[0].ID)
		if got.Name != "Rex 0" || got.Status != models.StatusPending || got.Version != 4 {
			t.Errorf("restored pet %+v", got)
		}
		if p := b.get(petPage(rex[0].ID)); p.Status != http.StatusOK {
			t.Errorf("the restored pet's page: %d", p.Status)
		}
		if evs := e.petEvents(t, rex[0].ID); len(evs) < 2 || evs[0].Action != models.ActionPetRestored || evs[1].Action != models.ActionPetArchived {
			t.Errorf("history %+v", evs)
		}
	})
}

// Archiving the pets selected in the list's bulk bar: it asks first,
// naming them, then archives those not changed since; the archive restores
// several at once. Works as plain forms, and htmx is sent to the same
// confirmation.
func TestArchiveSelected(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		pets := e.addPets(t, 4, models.StatusAvailable, "Bo")
		b, tok := e.signedIn()
		list := b.get("/admin/pets")
		if list.Doc.Find(`#bulk-form button[name="scope"][value="archive"]`).Length() != 1 ||
			list.Doc.Find(`#bulk-form button[name="scope"][value="archive-all"]`).Length() != 1 {
			t.Fatal("the bulk bar has no archive buttons")
		}
		form := url.Values{"csrf_token": {tok}, "scope": {"archive"}, "status": {"available"}, "back": {"/admin/pets"},
			"pet": {pv(pets[0]), pv(pets[1]), pv(pets[2])}}
		res := b.post("/admin/pets/bulk-status", form)
		wantStatus(t, res, http.StatusSeeOther)
		confirmURL := res.Header.Get("Location")
		if !strings.HasPrefix(confirmURL, "/admin/pets/bulk-archive?") {
			t.Fatalf("redirect to %q", confirmURL)
		}
		if htmx := b.post("/admin/pets/bulk-status", form, "HX-Request", "true"); htmx.Header.Get("HX-Redirect") != confirmURL {
			t.Errorf("htmx: HX-Redirect %q", htmx.Header.Get("HX-Redirect"))
		}
		confirm := b.get(confirmURL)
		wantStatus(t, confirm, http.StatusOK)
		if h := text(confirm, "h1"); h != "Archive 3 pets?" || !strings.Contains(text(confirm, `[data-testid="confirm-warning"]`), "Bo 0, Bo 1, Bo 2") {
			t.Errorf("confirmation %q: %q", h, text(confirm, `[data-testid="confirm-warning"]`))
		}
		if n := e.countPets(t); n != 4 {
			t.Fatalf("%d pets before the confirmation", n)
		}
		// Nothing selected: refused, nothing archived.
		none := b.post("/admin/pets/bulk-status", url.Values{"csrf_token": {tok}, "scope": {"archive"}, "back": {"/admin/pets"}})
		wantStatus(t, none, http.StatusUnprocessableEntity)

		// One of them changed meanwhile: skipped, the others archived.
		if _, err := e.store.UpdatePetStatus(ctx, pets[1].ID, models.StatusSold, "carol"); err != nil {
			t.Fatal(err)
		}
		post := url.Values{"csrf_token": {tok}, "confirm": {"yes"}}
		confirm.Doc.Find(`form input[type="hidden"]`).Each(func(_ int, s *goquery.Selection) {
			if n := s.AttrOr("name", ""); n == "pet" || n == "back" {
				post.Add(n, s.AttrOr("value", ""))
			}
		})
		done := b.post("/admin/pets/bulk-archive", post)
		wantStatus(t, done, http.StatusSeeOther)
		after := b.get(done.Header.Get("Location"))
		summary := text(after, `[data-testid="bulk-summary"]`)
		if !strings.Contains(summary, "Archived 2 pets: Bo 0, Bo 2.") || !strings.Contains(summary, "Bo 1 (changed by someone else meanwhile") {
			t.Errorf("summary %q", summary)
		}
		if names := rowNames(after); len(names) != 2 {
			t.Errorf("the list after the archive: %v", names)
		}

		// The archive restores both at once from its checkboxes.
		arch := b.get("/admin/pets/archive")
		if names := archivedNames(arch); len(names) != 2 || arch.Doc.Find(`#restore-form`).Length() != 1 {
			t.Fatalf("archive %v", names)
		}
		var items []string
		arch.Doc.Find(`input[type="checkbox"][form="restore-form"]`).Each(func(_ int, s *goquery.Selection) { items = append(items, s.AttrOr("value", "")) })
		res = b.post("/admin/pets/archive/restore", url.Values{"csrf_token": {tok}, "pet": items, "back": {"/admin/pets/archive"}})
		wantStatus(t, res, http.StatusSeeOther)
		if got := text(b.get(res.Header.Get("Location")), `[data-testid="archive-summary"]`); !strings.HasPrefix(got, "Restored 2 pets") {
			t.Errorf("restore summary %q", got)
		}
		if n := e.countPets(t); n != 4 {
			t.Errorf("%d pets after the restore, want 4", n)
		}
	})
}

// Archiving every pet of a filter runs as a bulk job after its
// confirmation.
func TestArchiveEveryMatch(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.addPets(t, 12, models.StatusSold, "Gone")
		e.addPets(t, 3, models.StatusAvailable, "Kept")
		b, tok := e.signedIn()
		res := b.post("/admin/pets/bulk-status", url.Values{"csrf_token": {tok}, "scope": {"archive-all"}, "back": {"/admin/pets?status=sold"}})
		wantStatus(t, res, http.StatusSeeOther)
		confirmURL := res.Header.Get("Location")
		if confirmURL != "/admin/pets/bulk?set=archive&status=sold" {
			t.Fatalf("redirect to %q", confirmURL)
		}
		confirm := b.get(confirmURL)
		if h := text(confirm, "h1"); h != "Archive all 12 pets?" || text(confirm, `[data-testid="bulk-confirm-button"]`) != "Archive 12 pets" {
			t.Errorf("confirmation %q %q", h, text(confirm, `[data-testid="bulk-confirm-button"]`))
		}
		start := url.Values{"csrf_token": {tok}, "filter": {value(confirm, `input[name="filter"]`)}, "set": {value(confirm, `input[name="set"]`)},
			"total": {value(confirm, `input[name="total"]`)}, "confirm": {"yes"}}
		res = b.post("/admin/pets/bulk", start)
		wantStatus(t, res, http.StatusSeeOther)
		e.store.WaitBulkJobs()
		job := b.get(res.Header.Get("Location"))
		if h, s := text(job, "h1"), text(job, `[data-testid="bulk-job-summary"]`); h != "Pets archived" || s != "Archived 12 pets." {
			t.Errorf("job page %q: %q", h, s)
		}
		if n := e.countPets(t); n != 3 {
			t.Errorf("%d pets left, want the 3 kept", n)
		}
		if n, err := e.store.CountArchivedPets(ctx); err != nil || n != 12 {
			t.Errorf("%d archived, %v", n, err)
		}
		events, _, err := e.store.ListAuditEvents(ctx, models.AuditQuery{Action: models.ActionPetsBulkArchive, Limit: 5})
		if err != nil || len(events) != 1 || !strings.HasPrefix(events[0].Detail, "archived 12 pets") {
			t.Errorf("bulk archive audit %+v, %v", events, err)
		}
	})
}

// Viewers read the archive but see no archive or restore forms, and a
// post is refused.
func TestArchiveViewer(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		pets := e.addPets(t, 2, models.StatusAvailable, "Rex")
		if _, err := e.store.ArchivePets(ctx, []models.PetVersion{{ID: pets[0].ID, Version: 1}}, "ana"); err != nil {
			t.Fatal(err)
		}
		_, b, tok := e.member("vera", models.RoleViewer)
		arch := b.get("/admin/pets/archive")
		wantStatus(t, arch, http.StatusOK)
		if names := archivedNames(arch); len(names) != 1 || arch.Doc.Find("form[action='/admin/pets/archive/restore']").Length() != 0 {
			t.Errorf("viewer's archive %v with restore forms: %d", names, arch.Doc.Find("form[action='/admin/pets/archive/restore']").Length())
		}
		if p := b.get(petPage(pets[1].ID)); p.Doc.Find(`[data-testid="archive-pet"]`).Length() != 0 {
			t.Error("a viewer is offered the archive button")
		}
		wantRefused(t, b.post("/admin/pets/archive/restore", url.Values{"csrf_token": {tok}, "pet": {pv(pets[0]) + "0"}}), models.RoleViewer)
		wantRefused(t, b.post(petPage(pets[1].ID)+"/archive", url.Values{"csrf_token": {tok}, "version": {"1"}, "confirm": {"yes"}}), models.RoleViewer)
		if _, err := e.store.GetArchivedPet(ctx, pets[0].ID); err != nil {
			t.Errorf("the viewer restored the pet: %v", err)
		}
		if _, err := e.store.GetPet(ctx, pets[1].ID); err != nil {
			t.Errorf("the viewer archived the pet: %v", err)
		}
	})
}
