package web_test

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"petstore/models"
)

// statusCount is one link of the numbers at a glance, as shown.
type statusCount struct {
	text, href string
	current    bool
}

// shownCounts reads the numbers at a glance in doc (the one marked
// out-of-band when oob), by status ("" for All).
func shownCounts(t *testing.T, doc *goquery.Document, oob bool) map[string]statusCount {
	t.Helper()
	sel := `nav#pet-counts`
	if oob {
		sel += `[hx-swap-oob="true"]`
	}
	nav := doc.Find(sel)
	if nav.Length() != 1 {
		t.Fatalf("%d navigations %s, want 1", nav.Length(), sel)
	}
	if label, _ := nav.Attr("aria-label"); label != "Pets by status" {
		t.Errorf("the counts are labelled %q, want Pets by status", label)
	}
	out := map[string]statusCount{}
	nav.Find("li > a").Each(func(_ int, a *goquery.Selection) {
		st, _ := a.Attr("data-status")
		href, _ := a.Attr("href")
		cur, has := a.Attr("aria-current")
		out[st] = statusCount{text: strings.Join(strings.Fields(a.Text()), " "), href: href, current: has && cur == "true"}
	})
	return out
}

// wantShownCounts wants the numbers shown as want (by status, "" for
// All: "Available 2 pets"), the links to each status's list, and only
// current marked as the current filter.
func wantShownCounts(t *testing.T, got map[string]statusCount, want map[string]string, current string, keep ...url.Values) {
	t.Helper()
	if len(got) != 4 {
		t.Errorf("%d links among the counts, want All and the three statuses: %v", len(got), got)
	}
	for st, text := range want {
		// Each link keeps the rest of the filter (keep), with its status.
		v := url.Values{}
		for _, k := range keep {
			maps.Copy(v, k)
		}
		if st != "" {
			v.Set("status", st)
		}
		href := "/admin/pets"
		if len(v) > 0 {
			href += "?" + v.Encode()
		}
		if g := got[st]; g.text != text || g.href != href || g.current != (st == current) {
			t.Errorf("count of %q = %+v, want %q linking to %s, current %v", st, g, text, href, st == current)
		}
	}
}

func TestPetStatusCounts(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		none := map[string]string{"": "All 0 pets", "available": "Available 0 pets", "pending": "Pending 0 pets", "sold": "Sold 0 pets"}
		wantShownCounts(t, shownCounts(t, b.get("/admin/pets").Doc, false), none, "")

		avail := e.addPets(t, 3, models.StatusAvailable, "Rex")
		e.addPets(t, 2, models.StatusPending, "Kiki")
		want := map[string]string{"": "All 5 pets", "available": "Available 3 pets", "pending": "Pending 2 pets", "sold": "Sold 0 pets"}
		p := b.get("/admin/pets")
		wantShownCounts(t, shownCounts(t, p.Doc, false), want, "")
		// Above the table, inside its region: a table read again shows them again.
		if p.Doc.Find(`#pets-table > nav#pet-counts`).Length() != 1 {
			t.Error("the counts are not at the top of the table's region")
		}

		// Filtered by a status, a search too: the status is the current one;
		// the counts stay those of all pets, and their links keep the search.
		p = b.get("/admin/pets?status=pending&q=ki")
		wantShownCounts(t, shownCounts(t, p.Doc, false), want, "pending", url.Values{"q": {"ki"}})
		// An htmx filter change: the table's region, with the counts.
		p = b.get("/admin/pets?status=available", "HX-Request", "true", "HX-Target", "pets-table")
		wantShownCounts(t, shownCounts(t, p.Doc, false), want, "available")

		// One pet's status with htmx: the row, and the counts out of band
		// (the page shows the sold pets).
		path := "/admin/pets/" + strconv.FormatInt(avail[0].ID, 10) + "/status"
		p = b.post(path, url.Values{"status": {"sold"}}, "HX-Request", "true", "X-CSRF-Token", tok,
			"HX-Current-URL", e.srv.URL+"/admin/pets?status=sold")
		wantStatus(t, p, http.StatusOK)
		doc, err := goquery.NewDocumentFromReader(strings.NewReader("<table>" + p.Body + "</table>"))
		if err != nil {
			t.Fatal(err)
		}
		want = map[string]string{"": "All 5 pets", "available": "Available 2 pets", "pending": "Pending 2 pets", "sold": "Sold 1 pet"}
		wantShownCounts(t, shownCounts(t, doc, true), want, "sold")

		// A bulk change with htmx: the table again, with its counts.
		pets, _, err := e.store.ListPets(context.Background(), models.PetQuery{Limit: 10, Status: models.StatusAvailable})
		if err != nil || len(pets) != 2 {
			t.Fatalf("available pets %v, %v", pets, err)
		}
		for i := range pets {
			pets[i].Version = 1
		}
		p = b.post("/admin/pets/bulk-status", bulkForm(tok, "pending", pets, nil, false), "HX-Request", "true")
		wantStatus(t, p, http.StatusOK)
		want = map[string]string{"": "All 5 pets", "available": "Available 0 pets", "pending": "Pending 4 pets", "sold": "Sold 1 pet"}
		wantShownCounts(t, shownCounts(t, p.Doc, false), want, "")

		// An htmx add: the table out of band, with its counts.
		p = b.post("/admin/pets", url.Values{"csrf_token": {tok}, "name": {"Nova"}, "categoryId": {"1"}, "status": {"sold"}},
			"HX-Request", "true", "HX-Current-URL", e.srv.URL+"/admin/pets")
		wantStatus(t, p, http.StatusOK)
		want = map[string]string{"": "All 6 pets", "available": "Available 0 pets", "pending": "Pending 4 pets", "sold": "Sold 2 pets"}
		if p.Doc.Find(`#pets-table[hx-swap-oob="true"] > nav#pet-counts`).Length() != 1 {
			t.Errorf("the added pet's table comes without its counts:\n%s", p.Body)
		}
		wantShownCounts(t, shownCounts(t, p.Doc, false), want, "")

		// A viewer sees them too.
		_, viewer, _ := e.member("vera", models.RoleViewer)
		wantShownCounts(t, shownCounts(t, viewer.get("/admin/pets?status=sold").Doc, false), want, "sold")
	})
}
