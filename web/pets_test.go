package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"petstore/models"
	"petstore/models/modelstest"
)

// rowNames returns the names in the pets table, top to bottom.
func rowNames(p page) []string {
	var names []string
	p.Doc.Find(`[data-testid="pet-row"] [data-testid="pet-name"]`).Each(func(_ int, s *goquery.Selection) {
		names = append(names, s.Text())
	})
	return names
}

func (e *env) addPets(t *testing.T, n int, status models.Status, prefix string) []models.Pet {
	t.Helper()
	var out []models.Pet
	for i := range n {
		p, err := e.store.CreatePet(context.Background(), models.NewPet{Name: fmt.Sprintf("%s %d", prefix, i), CategoryID: 1, Status: status}, "test")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func (e *env) countPets(t *testing.T) int {
	t.Helper()
	pets, _, err := e.store.ListPets(context.Background(), models.PetQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return len(pets)
}

func TestPetsPage(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, _ := e.signedIn()
		p := b.get("/admin/pets")
		wantStatus(t, p, http.StatusOK)
		if text(p, "h1") != "Pets" || !strings.Contains(text(p, `[data-testid="empty"]`), "No pets yet") {
			t.Errorf("empty page: h1 %q, empty state %q", text(p, "h1"), text(p, `[data-testid="empty"]`))
		}
		filter := p.Doc.Find("#pet-filter")
		if filter.Find(`label[for="filter-status"]`).Text() != "Status" || filter.Find("#filter-status option").First().Text() != "All" {
			t.Error("filter lacks its Status control with All first")
		}
		for _, label := range []string{"Name", "Category ID"} {
			labelled(t, p, label)
		}
		if p.Doc.Find(`#pet-form label[for="pet-status"]`).Text() != "Status" || text(p, `#pet-form button[type="submit"]`) != "Add pet" {
			t.Error("add form lacks its Status field or Add pet button")
		}
		// Rows: id, name, category, status, created; newest first.
		e.addPets(t, 3, models.StatusAvailable, "Rex")
		p = b.get("/admin/pets")
		if got := rowNames(p); strings.Join(got, ",") != "Rex 2,Rex 1,Rex 0" {
			t.Errorf("rows = %v, want newest first", got)
		}
		var headers []string
		p.Doc.Find("thead th").Each(func(_ int, s *goquery.Selection) {
			label := s.Clone()
			label.Find(".visually-hidden, .sort-mark").Remove() // the sort links' words for screen readers, the arrow
			headers = append(headers, strings.TrimSpace(label.Text()))
		})
		if strings.Join(headers[1:6], ",") != "ID,Name,Category,Status,Created" { // after the bulk selection's column
			t.Errorf("headers = %v", headers)
		}
	})
}

func TestAddPet(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		form := url.Values{"csrf_token": {tok}, "name": {"  Zoë 🐶  "}, "categoryId": {"42"}, "status": {"pending"}}
		res := b.post("/admin/pets", form)
		wantStatus(t, res, http.StatusSeeOther)
		p := b.get(res.Header.Get("Location"))
		if got := text(p, `[data-testid="flash"]`); !strings.HasPrefix(got, "Added Zoë 🐶 (id ") {
			t.Errorf("flash %q", got)
		}
		if got := rowNames(p); len(got) != 1 || got[0] != "Zoë 🐶" {
			t.Fatalf("rows %v", got)
		}
		pets, _, _ := e.store.ListPets(context.Background(), models.PetQuery{Limit: 10})
		if len(pets) != 1 || pets[0].Name != "Zoë 🐶" || pets[0].CategoryID != 42 || pets[0].Status != models.StatusPending {
			t.Fatalf("stored %+v", pets)
		}

		// With htmx: the form comes back cleared, the table and a message out of band.
		form.Set("name", "Hx Pet")
		res = b.post("/admin/pets", form, "HX-Request", "true", "HX-Current-URL", e.srv.URL+"/admin/pets?status=pending")
		wantStatus(t, res, http.StatusOK)
		if res.Doc.Find("html, body").Length() > 0 && strings.Contains(res.Body, "<html") {
			t.Error("htmx response is a whole page")
		}
		if v, _ := res.Doc.Find(`#pet-form input[name="name"]`).Attr("value"); v != "" {
			t.Errorf("form not cleared: name %q", v)
		}
		table := res.Doc.Find(`#pets-table[hx-swap-oob="true"]`)
		if table.Length() != 1 || !strings.Contains(table.Find(".changed").Text(), "Hx Pet") {
			t.Errorf("no out-of-band table with the new row highlighted:\n%s", res.Body)
		}
		if !strings.Contains(res.Doc.Find(`#flash[hx-swap-oob="true"]`).Text(), "Added Hx Pet") {
			t.Error("no out-of-band flash")
		}
		if e.countPets(t) != 2 {
			t.Fatal("htmx add did not store")
		}
	})
}

func TestAddPetInvalid(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		tests := []struct {
			name, petName, category, status, field string
		}{
			{"empty name", "", "1", "available", "pet-name"},
			{"blank name", "   ", "1", "available", "pet-name"},
			{"name too long", strings.Repeat("x", 256), "1", "available", "pet-name"},
			{"no category", "Rex", "", "available", "pet-category"},
			{"text category", "Rex", "abc", "available", "pet-category"},
			{"zero category", "Rex", "0", "available", "pet-category"},
			{"negative category", "Rex", "-4", "available", "pet-category"},
			{"fraction category", "Rex", "1.5", "available", "pet-category"},
			{"overflow category", "Rex", "9223372036854775808", "available", "pet-category"},
			{"unknown status", "Rex", "1", "lost", "pet-status"},
		}
		for _, tt := range tests {
			for _, htmx := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/htmx=%v", tt.name, htmx), func(t *testing.T) {
					headers := []string{}
					if htmx {
						headers = []string{"HX-Request", "true"}
					}
					p := b.post("/admin/pets", url.Values{"csrf_token": {tok}, "name": {tt.petName}, "categoryId": {tt.category}, "status": {tt.status}}, headers...)
					wantStatus(t, p, http.StatusUnprocessableEntity)
					if msg := text(p, `[data-testid="`+tt.field+`-error"]`); msg == "" {
						t.Fatalf("no error next to %s:\n%s", tt.field, p.Body)
					}
					if v := p.Doc.Find("#"+tt.field).AttrOr("aria-invalid", ""); v != "true" {
						t.Errorf("%s aria-invalid = %q", tt.field, v)
					}
					// What was typed is kept.
					if v := p.Doc.Find("#pet-name").AttrOr("value", ""); v != tt.petName {
						t.Errorf("name field = %q, want %q kept", v, tt.petName)
					}
					if v := p.Doc.Find("#pet-category").AttrOr("value", ""); v != tt.category {
						t.Errorf("category field = %q, want %q kept", v, tt.category)
					}
				})
			}
		}
		if n := e.countPets(t); n != 0 {
			t.Fatalf("invalid input stored %d pets", n)
		}
	})
}

func TestHostileNamesEscaped(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		hostile := []string{`<script>alert(1)</script>`, `<img src=x onerror=alert(1)>`, `"><svg onload=alert(1)>`}
		for _, name := range hostile {
			wantStatus(t, b.post("/admin/pets", url.Values{"csrf_token": {tok}, "name": {name}, "categoryId": {"1"}, "status": {"available"}}), http.StatusSeeOther)
		}
		p := b.get("/admin/pets")
		for _, raw := range []string{"<script>alert", "<img src=x", "<svg onload"} {
			if strings.Contains(p.Body, raw) {
				t.Errorf("page contains raw %q", raw)
			}
		}
		got := rowNames(p)
		for i, name := range hostile {
			if got[len(hostile)-1-i] != name {
				t.Errorf("row %d = %q, want the text %q", i, got[len(hostile)-1-i], name)
			}
		}
		// The same names in a failed form are escaped too.
		p = b.post("/admin/pets", url.Values{"csrf_token": {tok}, "name": {hostile[0]}, "categoryId": {"x"}})
		if strings.Contains(p.Body, "<script>alert") {
			t.Error("form re-render contains a raw script tag")
		}
	})
}

func TestFilterAndSearch(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		e.addPets(t, 2, models.StatusAvailable, "Avail")
		e.addPets(t, 2, models.StatusSold, "Sold")
		e.addPets(t, 1, models.StatusPending, "Pend")
		e.addPets(t, 1, models.StatusSold, "100% Rex_x")
		b, _ := e.signedIn()
		tests := []struct {
			query string
			want  string
		}{
			{"", "100% Rex_x 0,Pend 0,Sold 1,Sold 0,Avail 1,Avail 0"},
			{"status=sold", "100% Rex_x 0,Sold 1,Sold 0"},
			{"status=available", "Avail 1,Avail 0"},
			{"q=sold", "Sold 1,Sold 0"},
			{"q=SOLD+1", "Sold 1"},
			{"status=pending&q=avail", ""},
			{"q=%25", "100% Rex_x 0"},
			{"q=_", "100% Rex_x 0"},
			{"status=", "100% Rex_x 0,Pend 0,Sold 1,Sold 0,Avail 1,Avail 0"},
		}
		for _, tt := range tests {
			t.Run(tt.query, func(t *testing.T) {
				p := b.get("/admin/pets?" + tt.query)
				wantStatus(t, p, http.StatusOK)
				if got := strings.Join(rowNames(p), ","); got != tt.want {
					t.Errorf("rows %q, want %q", got, tt.want)
				}
				// The controls show the filter, so reloads and bookmarks keep it.
				q, _ := url.ParseQuery(tt.query)
				if sel := p.Doc.Find("#filter-status option[selected]").AttrOr("value", ""); sel != q.Get("status") {
					t.Errorf("selected status %q", sel)
				}
				if v := p.Doc.Find("#filter-q").AttrOr("value", ""); v != q.Get("q") {
					t.Errorf("search box %q", v)
				}
				if tt.want == "" && !strings.Contains(text(p, `[data-testid="empty"]`), "No pets match") {
					t.Error("no empty-filter message")
				}
			})
		}
		// htmx asks for the table only.
		p := b.get("/admin/pets?status=sold", "HX-Request", "true", "HX-Target", "pets-table")
		if strings.Contains(p.Body, "<html") || p.Doc.Find("#pet-form").Length() != 0 || len(rowNames(p)) != 3 {
			t.Errorf("htmx filter response is not just the table:\n%s", p.Body)
		}
		for _, bad := range []string{"status=lost", "before=abc", "after=-1"} {
			wantStatus(t, b.get("/admin/pets?"+bad), http.StatusBadRequest)
		}
	})
}

func TestPetsPaging(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		all := e.addPets(t, 45, models.StatusAvailable, "P")
		e.addPets(t, 3, models.StatusSold, "S")
		b, _ := e.signedIn()
		seen := map[string]bool{}
		var order []string
		path := "/admin/pets?status=available"
		pages := 0
		for path != "" {
			pages++
			p := b.get(path)
			wantStatus(t, p, http.StatusOK)
			for _, n := range rowNames(p) {
				if seen[n] {
					t.Fatalf("%s seen twice", n)
				}
				seen[n] = true
				order = append(order, n)
			}
			path = p.Doc.Find(`.pager a[rel="next"]`).AttrOr("href", "")
			if pages == 1 && p.Doc.Find(`.pager a[rel="prev"]`).Length() != 0 {
				t.Error("first page has a Newer link")
			}
			if pages == 2 {
				// Newer from the second page leads back to the first.
				newer := b.get(p.Doc.Find(`.pager a[rel="prev"]`).AttrOr("href", "/nowhere"))
				if got := rowNames(newer); len(got) != 20 || got[0] != "P 44" {
					t.Errorf("newer page = %v", got)
				}
				if newer.Doc.Find(`.pager a[rel="prev"]`).Length() != 0 {
					t.Error("the newest page has a Newer link")
				}
			}
			if !strings.Contains(path, "status=available") && path != "" {
				t.Errorf("older link %q loses the filter", path)
			}
		}
		if pages != 3 || len(order) != len(all) || order[0] != "P 44" || order[len(order)-1] != "P 0" {
			t.Fatalf("%d pages, %d pets, first %q last %q", pages, len(order), order[0], order[len(order)-1])
		}
	})
}

func TestChangePetStatus(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		pet := e.addPets(t, 1, models.StatusAvailable, "Rex")[0]
		b, tok := e.signedIn()
		path := "/admin/pets/" + strconv.FormatInt(pet.ID, 10) + "/status"
		statusOf := func() models.Status {
			p, err := e.store.GetPet(context.Background(), pet.ID)
			if err != nil {
				t.Fatal(err)
			}
			return p.Status
		}

		// Without JavaScript: post and back to the page (and filter) it came from.
		res := b.post(path, url.Values{"csrf_token": {tok}, "status": {"pending"}}, "Referer", e.srv.URL+"/admin/pets?status=available")
		wantStatus(t, res, http.StatusSeeOther)
		if loc := res.Header.Get("Location"); loc != "/admin/pets?status=available" {
			t.Errorf("back to %q", loc)
		}
		if statusOf() != models.StatusPending {
			t.Fatal("status not changed")
		}
		// With htmx: the row comes back.
		res = b.post(path, url.Values{"status": {"sold"}}, "HX-Request", "true", "X-CSRF-Token", tok)
		wantStatus(t, res, http.StatusOK)
		// A bare <tr> only parses inside a table, as htmx parses it.
		row, _ := goquery.NewDocumentFromReader(strings.NewReader("<table>" + res.Body + "</table>"))
		if got := strings.TrimSpace(row.Find(`tr#pet-` + strconv.FormatInt(pet.ID, 10) + `.changed [data-testid="pet-status"]`).Text()); got != "sold" {
			t.Errorf("row status %q:\n%s", got, res.Body)
		}
		if statusOf() != models.StatusSold {
			t.Fatal("status not changed by htmx")
		}
		// Recorded: who and when.
		actor, detail, err := modelstest.LastAudit(t, e.store, models.ActionPetStatusChanged, pet.ID)
		if err != nil || actor != staffName || detail != "pending -> sold" {
			t.Errorf("audit = %q %q %v", actor, detail, err)
		}

		// Refusals change nothing.
		wantStatus(t, b.post(path, url.Values{"csrf_token": {tok}, "status": {"lost"}}), http.StatusBadRequest)
		wantStatus(t, b.post(path, url.Values{"csrf_token": {"forged"}, "status": {"available"}}), http.StatusForbidden)
		wantStatus(t, b.post(path, url.Values{"csrf_token": {tok}, "status": {"available"}}, "Sec-Fetch-Site", "cross-site"), http.StatusForbidden)
		wantStatus(t, b.post("/admin/pets/987654/status", url.Values{"csrf_token": {tok}, "status": {"available"}}), http.StatusNotFound)
		wantStatus(t, b.post("/admin/pets/abc/status", url.Values{"csrf_token": {tok}, "status": {"available"}}), http.StatusNotFound)
		if statusOf() != models.StatusSold {
			t.Fatal("a refused request changed the status")
		}
	})
}

// Console forms are capped: an oversized post is refused and stores nothing.
func TestFormBodyCapped(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		p := b.post("/admin/pets", url.Values{"csrf_token": {tok}, "name": {strings.Repeat("x", 100<<10)}, "categoryId": {"1"}})
		wantStatus(t, p, http.StatusRequestEntityTooLarge)
		if !strings.Contains(p.Body, "too large") || e.countPets(t) != 0 {
			t.Errorf("oversized form: %s; %d pets stored", text(p, "h1"), e.countPets(t))
		}
		wantStatus(t, b.get("/admin/pets"), http.StatusOK) // still signed in
	})
}

// The search text is bounded (SQLite refuses a LIKE pattern of 50,000
// characters, "LIKE or GLOB pattern too complex": a 500), and a query string
// the server cannot read whole (';' between pairs) is refused, never half read.
func TestPetsQueryBounds(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		e.addPets(t, 1, models.StatusSold, strings.Repeat("é", 199))
		b, _ := e.signedIn()
		tests := []struct {
			name, query string
			status      int
			msg         string
		}{
			{"50,000 characters", "q=" + strings.Repeat("a", 50_000), http.StatusBadRequest, "Search text must be at most 200 characters."},
			{"201 characters", "q=" + url.QueryEscape(strings.Repeat("é", 201)), http.StatusBadRequest, "Search text must be at most 200 characters."},
			{"200 characters", "q=" + url.QueryEscape(strings.Repeat("é", 198)+" 0"), http.StatusOK, ""},
			{"200 characters, spaces around", "q=" + url.QueryEscape("  "+strings.Repeat("é", 198)+" 0   "), http.StatusOK, ""},
			{"semicolon between pairs", "status=sold;q=x", http.StatusBadRequest, "separate parameters with &amp; (not ;)"},
			{"semicolon after a value", "status=sold;", http.StatusBadRequest, "separate parameters with &amp; (not ;)"},
			{"bad escape", "q=%zz", http.StatusBadRequest, "a % must start an escape"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				for _, headers := range [][]string{nil, {"HX-Request", "true", "HX-Target", "pets-table"}} {
					p := b.get("/admin/pets?"+tt.query, headers...)
					wantStatus(t, p, tt.status)
					if tt.msg != "" && !strings.Contains(p.Body, tt.msg) {
						t.Errorf("no %q on the page:\n%.2000s", tt.msg, p.Body)
					}
					if tt.status == http.StatusOK && len(rowNames(p)) != 1 {
						t.Errorf("rows %q, want the one pet", rowNames(p))
					}
				}
			})
		}
	})
}

// Pet names with invisible or text-direction characters are refused beside
// the field; emoji sequences are kept.
func TestAddPetHiddenCharacters(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		for _, name := range []string{"Rex\u202Etxt.exe", "Re\u200Bx"} {
			p := b.post("/admin/pets", url.Values{"csrf_token": {tok}, "name": {name}, "categoryId": {"1"}, "status": {"available"}})
			wantStatus(t, p, http.StatusUnprocessableEntity)
			msg := text(p, `[data-testid="pet-name-error"]`)
			if !strings.HasPrefix(msg, "Name must not contain invisible or text-direction characters (U+") {
				t.Errorf("%q: name error %q", name, msg)
			}
		}
		if n := e.countPets(t); n != 0 {
			t.Fatalf("%d pets stored", n)
		}
		for _, name := range []string{"👨‍👩‍👧 Rex", "🏴󠁧󠁢󠁳󠁣󠁴󠁿 Nessie", "می\u200cخواهم"} {
			p := b.post("/admin/pets", url.Values{"csrf_token": {tok}, "name": {name}, "categoryId": {"1"}, "status": {"available"}})
			wantStatus(t, p, http.StatusSeeOther)
		}
		if n := e.countPets(t); n != 3 {
			t.Fatalf("%d pets stored, want 3", n)
		}
	})
}

// TestSearchStopsOnBudget: a search whose words are each common but never
// together stops before filling the page; the page says so and its Older
// link goes on from where it stopped, until the match.
func TestSearchStopsOnBudget(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		match := e.addPets(t, 1, models.StatusAvailable, "Alpha Beta")[0]
		// 6000 Alphas and 6000 Betas, written directly with their index
		// rows (one CreatePet each would take a minute).
		names := make([]string, 12_000)
		for i := range names {
			word := "alpha"
			if i%2 == 1 {
				word = "beta"
			}
			names[i] = fmt.Sprintf("%s %d", word, i)
		}
		modelstest.InsertPets(t, e.store, match.ID+1, names)
		b, _ := e.signedIn()
		p := b.get("/admin/pets?q=alpha+beta")
		wantStatus(t, p, http.StatusOK)
		if len(rowNames(p)) != 0 || !strings.Contains(text(p, `[data-testid="empty"]`), "No pets match among those searched so far") {
			t.Fatalf("first page: rows %q, empty message %q", rowNames(p), text(p, `[data-testid="empty"]`))
		}
		note := text(p, `[data-testid="search-note"]`)
		older, ok := p.Doc.Find(`a[rel="next"]`).Attr("href")
		if !strings.Contains(note, "more pets may match") || !ok || !strings.Contains(older, "q=alpha+beta") || !strings.Contains(older, "before=") {
			t.Fatalf("first page: note %q, older link %q", note, older)
		}
		if strings.ContainsAny(note, "0123456789") {
			t.Errorf("the note %q speaks of pet ids", note)
		}
		if n := p.Doc.Find(`[data-testid="pet-counts"] [aria-current]`).Length(); n != 0 {
			t.Errorf("during a search of all statuses %d status counts are marked as the list shown, want none (not All)", n)
		}
		for pages := 1; len(rowNames(p)) == 0; pages++ {
			if pages > 5 {
				t.Fatal("the match was not reached by following Older")
			}
			older, ok := p.Doc.Find(`a[rel="next"]`).Attr("href")
			if !ok {
				t.Fatalf("page %d: no Older link and no match", pages)
			}
			p = b.get(older)
			wantStatus(t, p, http.StatusOK)
		}
		if got := rowNames(p); len(got) != 1 || got[0] != "Alpha Beta 0" {
			t.Errorf("rows %q, want the match", got)
		}
		if text(p, `[data-testid="search-note"]`) != "" {
			t.Error("a note on the page that reached the end")
		}
		if _, ok := p.Doc.Find(`a[rel="next"]`).Attr("href"); ok {
			t.Error("an Older link past the last match")
		}
		if newer, ok := p.Doc.Find(`a[rel="prev"]`).Attr("href"); !ok || !strings.Contains(newer, "after=") {
			t.Errorf("no Newer link back from the match: %q", newer)
		}
	})
}

// listPet adds a pet created at a given time.
func (e *env) listPet(t *testing.T, name string, category int64, st models.Status, at time.Time) models.Pet {
	t.Helper()
	e.store.SetClock(func() time.Time { return at })
	defer e.store.SetClock(time.Now)
	p, err := e.store.CreatePet(context.Background(), models.NewPet{Name: name, CategoryID: category, Status: st}, "test")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The list's sort, page size, category and dates: each read from the
// address, shown in the form and the headers, carried by the links that
// change only one of them; a bad value is a 400 with its message, for a
// page and for htmx alike.
func TestPetsListParameters(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		day := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		e.listPet(t, "Cleo", 2, models.StatusSold, day)
		e.listPet(t, "Ada", 1, models.StatusAvailable, day.AddDate(0, 0, 1))
		e.listPet(t, "Bo", 2, models.StatusAvailable, day.AddDate(0, 0, 2))
		b, tok := e.signedIn()

		// Sorted by name: the Name header says so and links to the reverse.
		p := b.get("/admin/pets?sort=name")
		wantStatus(t, p, http.StatusOK)
		if got := strings.Join(rowNames(p), ","); got != "Ada,Bo,Cleo" {
			t.Errorf("sort=name: rows %s", got)
		}
		name := p.Doc.Find(`th[data-column="name"]`)
		if name.AttrOr("aria-sort", "") != "ascending" || name.Find("a").AttrOr("href", "") != "/admin/pets?sort=-name" {
			t.Errorf("Name header aria-sort %q, link %q", name.AttrOr("aria-sort", ""), name.Find("a").AttrOr("href", ""))
		}
		if p.Doc.Find(`th[aria-sort]`).Length() != 1 {
			t.Error("aria-sort on more than the sorted column")
		}
		if got := p.Doc.Find(`th[data-column="created"] a`).AttrOr("href", ""); got != "/admin/pets?sort=-created" && got != "/admin/pets" {
			t.Errorf("Created header links to %q, want newest first", got)
		}
		if got := strings.Join(rowNames(b.get("/admin/pets?sort=-category")), ","); got != "Bo,Cleo,Ada" {
			t.Errorf("sort=-category: rows %s, want category 2 (newest first among ties by id: Bo, Cleo) then 1", got)
		}

		// Category and dates, with the counts, export and sort links keeping them.
		p = b.get("/admin/pets?category=2&created_from=2026-03-02&created_to=2026-03-03")
		wantStatus(t, p, http.StatusOK)
		if got := strings.Join(rowNames(p), ","); got != "Bo" {
			t.Errorf("category 2 from 2 March: rows %s, want Bo", got)
		}
		if got := p.Doc.Find(`#filter-category`).AttrOr("value", ""); got != "2" {
			t.Errorf("category field %q", got)
		}
		if got := p.Doc.Find(`a[data-status="sold"]`).AttrOr("href", ""); got != "/admin/pets?category=2&created_from=2026-03-02&created_to=2026-03-03&status=sold" {
			t.Errorf("the Sold count links to %q", got)
		}
		if got := p.Doc.Find(`[data-testid="export-link"]`).AttrOr("href", ""); got != "/admin/pets/export.csv?category=2&created_from=2026-03-02&created_to=2026-03-03" {
			t.Errorf("export link %q", got)
		}
		if p.Doc.Find(`th[data-column="name"] a`).Length() != 0 || !strings.Contains(text(p, `[data-testid="sort-note"]`), "Clear the dates") {
			t.Error("with dates, Name should not sort, and a note should say why")
		}
		if got := p.Doc.Find(`#bulk-form input[name="back"]`).AttrOr("value", ""); got != "/admin/pets?category=2&created_from=2026-03-02&created_to=2026-03-03" {
			t.Errorf("the bulk form comes back to %q", got)
		}

		// 50 a page.
		for i := range 55 {
			e.listPet(t, fmt.Sprintf("Zed %02d", i), 3, models.StatusPending, day.AddDate(0, 1, 0))
		}
		p = b.get("/admin/pets?per_page=50&category=3")
		if n := len(rowNames(p)); n != 50 {
			t.Errorf("per_page=50: %d rows", n)
		}
		next := p.Doc.Find(`.pager a[rel="next"]`).AttrOr("href", "")
		if !strings.Contains(next, "per_page=50") || !strings.Contains(next, "category=3") || !strings.Contains(next, "key=") {
			t.Errorf("the next page's link %q does not keep the filter, the page size and the cursor's key", next)
		}
		if n := len(rowNames(b.get(next))); n != 5 {
			t.Errorf("the next page has %d rows, want 5", n)
		}
		// The last page is the last 50, ending with the oldest.
		last := p.Doc.Find(`.pager a[data-page="last"]`).AttrOr("href", "")
		if rows := rowNames(b.get(last)); len(rows) != 50 || rows[49] != "Zed 00" || rows[0] != "Zed 49" {
			t.Errorf("the last page %q holds %v, want Zed 49 to Zed 00", last, rows)
		}
		// A bulk change of a 50-pet page is allowed.
		form := url.Values{"csrf_token": {tok}, "status": {"sold"}, "all": {"1"}, "back": {"/admin/pets?per_page=50&category=3"}}
		p.Doc.Find(`#bulk-form input[name="page"]`).Each(func(_ int, s *goquery.Selection) { form.Add("page", s.AttrOr("value", "")) })
		if got := b.post("/admin/pets/bulk-status", form); got.Status != http.StatusSeeOther {
			t.Errorf("a bulk change of 50 pets: status %d\n%.500s", got.Status, got.Body)
		}

		for _, tt := range []struct{ query, msg string }{
			{"sort=price", `The list cannot be sorted by &#34;price&#34;`},
			{"per_page=30", "Pets per page must be 20, 50 or 100."},
			{"category=cats", "The category must be a category number"},
			{"created_from=2026-13-01", "must be a date written as year-month-day"},
			{"created_from=2026-03-05&created_to=2026-03-01", "must be the same day as"},
			{"q=rex&category=2", "A name search cannot be combined with a category or dates"},
		} {
			p := b.get("/admin/pets?" + tt.query)
			wantStatus(t, p, http.StatusBadRequest)
			if !strings.Contains(p.Body, tt.msg) || p.Doc.Find(`#pet-filter`).Length() != 1 {
				t.Errorf("%s: no %q with the filter form:\n%.1500s", tt.query, tt.msg, p.Body)
			}
			p = b.get("/admin/pets?"+tt.query, "HX-Request", "true", "HX-Target", "pets-table")
			wantStatus(t, p, http.StatusBadRequest)
			if !strings.Contains(text(p, `[data-testid="flash"]`), strings.ReplaceAll(tt.msg, "&#34;", `"`)) || p.Doc.Find("#pets-table").Length() != 0 {
				t.Errorf("%s with htmx: want the message alone, got:\n%.500s", tt.query, p.Body)
			}
		}
	})
}

// A search "#N" opens pet N's page, or says there is no pet N; typed into
// the live search it only says what Enter does.
func TestPetsSearchByNumber(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		rex := e.addPets(t, 1, models.StatusAvailable, "Rex")[0]
		b, _ := e.signedIn()
		n := strconv.FormatInt(rex.ID, 10)
		p := b.get("/admin/pets?q=%23" + n)
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/admin/pets/"+n {
			t.Errorf("#%s: %d to %q, want 303 to its page", n, p.Status, p.Header.Get("Location"))
		}
		p = b.get("/admin/pets?q=%23999999")
		wantStatus(t, p, http.StatusNotFound)
		if !strings.Contains(text(p, `[data-testid="flash"]`), "There is no pet #999999.") || p.Doc.Find("#filter-q").AttrOr("value", "") != "#999999" {
			t.Errorf("#999999: flash %q, search %q", text(p, `[data-testid="flash"]`), p.Doc.Find("#filter-q").AttrOr("value", ""))
		}
		if len(rowNames(p)) != 1 {
			t.Error("#999999: the list should still show the pets")
		}
		p = b.get("/admin/pets?q=%23"+n, "HX-Request", "true", "HX-Target", "pets-table")
		wantStatus(t, p, http.StatusOK)
		if got := text(p, `[data-testid="search-note"]`); got != "Press Enter to open pet #"+n+"." {
			t.Errorf("#%s with htmx: note %q", n, got)
		}
	})
}

// A pet's page leads back to the page of the list it was opened from: its
// back parameter, else the Referer; only a pets list address is taken.
func TestPetPageBackLink(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		rex := e.addPets(t, 1, models.StatusAvailable, "Rex")[0]
		b, _ := e.signedIn()
		path := "/admin/pets/" + strconv.FormatInt(rex.ID, 10)
		list := "/admin/pets?category=1&sort=name"
		for _, tt := range []struct {
			name, query string
			headers     []string
			want        string
		}{
			{"from the list", "", []string{"Referer", e.srv.URL + list}, list},
			{"back parameter", "?back=" + url.QueryEscape(list), nil, list},
			{"back wins over the Referer", "?back=" + url.QueryEscape(list), []string{"Referer", e.srv.URL + "/admin/pets"}, list},
			{"another site", "?back=" + url.QueryEscape("https://evil.example/admin/pets?x=1"), nil, "/admin/pets?x=1"},
			{"another page", "?back=" + url.QueryEscape("/admin/users"), nil, "/admin/pets"},
			{"nothing", "", nil, "/admin/pets"},
		} {
			p := b.get(path+tt.query, tt.headers...)
			wantStatus(t, p, http.StatusOK)
			if got := p.Doc.Find(`[data-testid="back-to-pets"]`).AttrOr("href", ""); got != tt.want {
				t.Errorf("%s: back link %q, want %q", tt.name, got, tt.want)
			}
		}
	})
}
