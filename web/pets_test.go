package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

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
		if !strings.Contains(note, "Not every pet was searched for this page") || !ok || !strings.Contains(older, "q=alpha+beta") || !strings.Contains(older, "before=") {
			t.Fatalf("first page: note %q, older link %q", note, older)
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
