package templates_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"petstore/templates"
)

func render(t *testing.T, c templ.Component) (*goquery.Document, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	return doc, buf.String()
}

var page = templates.Page{Title: "Pets", Section: "pets", Username: "alice", CSRFToken: "tok-123", Role: "admin",
	Nav:    []templates.NavItem{{Href: "/admin/pets", Label: "Pets", Section: "pets"}, {Href: "/admin/audit", Label: "Audit", Section: "audit"}},
	Assets: templates.Assets{PicoCSS: "/static/p.css", AppCSS: "/static/a.css", HTMX: "/static/h.js", AppJS: "/static/app.js"}}

func TestLayout(t *testing.T) {
	t.Parallel()
	doc, html := render(t, templates.PetsPage(page, templates.PetsView{}))
	if doc.Find("title").Text() != "Pets · Petstore admin" || doc.Find("html").AttrOr("lang", "") != "en" {
		t.Errorf("title %q", doc.Find("title").Text())
	}
	if got := doc.Find("body").AttrOr("hx-headers", ""); got != `{"X-CSRF-Token":"tok-123"}` {
		t.Errorf("htmx CSRF header = %q", got)
	}
	if doc.Find(`nav a[aria-current="page"]`).Text() != "Pets" {
		t.Error("active section not marked")
	}
	// The navigation is the page's entries, in order; the footer names the role.
	var nav []string
	doc.Find(`nav a[href^="/admin/"]`).Each(func(_ int, s *goquery.Selection) { nav = append(nav, s.AttrOr("href", "")+" "+s.Text()) })
	if strings.Join(nav, "|") != "/admin/pets Pets|/admin/audit Audit" {
		t.Errorf("navigation %q", nav)
	}
	if got := doc.Find(`footer [data-testid="role"]`).Text(); got != "(admin)" {
		t.Errorf("footer role %q", got)
	}
	if doc.Find(`[data-testid="sign-out"]`).Text() != "Sign out" {
		t.Error("no sign-out button")
	}
	if doc.Find(`form[action="/admin/logout"] input[name="csrf_token"]`).AttrOr("value", "") != "tok-123" {
		t.Error("sign-out form lacks the CSRF token")
	}
	doc.Find("script").Each(func(_ int, s *goquery.Selection) {
		if s.AttrOr("src", "") == "" {
			t.Error("inline script in the layout")
		}
	})
	if strings.Contains(html, "style=") || doc.Find("style").Length() > 0 {
		t.Error("inline style in the layout")
	}
	// The signed-out layout has no navigation.
	doc, _ = render(t, templates.LoginPage(templates.Page{Title: "Sign in"}, templates.LoginView{}))
	if doc.Find(`[data-testid="sign-out"]`).Length() != 0 || doc.Find(`nav a[href="/admin/pets"]`).Length() != 0 {
		t.Error("signed-out page shows the staff navigation")
	}
}

func TestPetsPageEscapesAndLabels(t *testing.T) {
	t.Parallel()
	hostile := `<script>alert(1)</script><img src=x onerror=alert(1)>`
	v := templates.PetsView{
		Filter: templates.PetFilter{Status: "sold", Query: `"><script>x</script>`},
		Table: templates.PetTableView{Rows: []templates.PetRow{
			{ID: 7, Name: hostile, CategoryID: "3", Status: "sold", Created: templates.Time{Text: "21 Nov 2026, 10:00 UTC", UTC: "2026-11-21T10:00:00Z"}},
		}, OlderURL: "/admin/pets?before=7&status=sold"},
		Form: templates.PetFormView{Name: hostile, CategoryID: "x", Status: "pending",
			Errors: map[string]string{"categoryId": "Category ID must be a whole number."}},
	}
	doc, html := render(t, templates.PetsPage(page, v))
	if strings.Contains(html, "<script>alert") || strings.Contains(html, "<img src=x") || strings.Contains(html, `"><script>x`) {
		t.Fatal("user text rendered raw")
	}
	if got := doc.Find(`[data-testid="pet-name"]`).Text(); got != hostile {
		t.Errorf("row name %q, want the text itself", got)
	}
	if doc.Find("#pet-name").AttrOr("value", "") != hostile || doc.Find("#filter-q").AttrOr("value", "") != `"><script>x</script>` {
		t.Error("typed values not kept as text")
	}
	if doc.Find(`#filter-status option[selected]`).AttrOr("value", "") != "sold" || doc.Find(`#pet-status option[selected]`).AttrOr("value", "") != "pending" {
		t.Error("selected options wrong")
	}
	cat := doc.Find("#pet-category")
	if cat.AttrOr("aria-invalid", "") != "true" || cat.AttrOr("aria-describedby", "") != "pet-category-error" ||
		doc.Find("#pet-category-error").Text() != "Category ID must be a whole number." {
		t.Error("category error not tied to its field")
	}
	if _, marked := doc.Find("#pet-name").Attr("aria-invalid"); marked {
		t.Error("name marked invalid without an error")
	}
	// Every form control has a label or an aria-label.
	doc.Find("input:not([type=hidden]), select").Each(func(_ int, s *goquery.Selection) {
		id := s.AttrOr("id", "")
		if s.AttrOr("aria-label", "") == "" && (id == "" || doc.Find(`label[for="`+id+`"]`).Length() == 0) {
			t.Errorf("unlabelled control %s", goquery.NodeName(s)+"#"+id)
		}
	})
	if doc.Find(`select[aria-label="Status of `+hostile+`"]`).Length() != 1 {
		t.Error("row status select lacks its aria-label")
	}
	if doc.Find(`.pager a[rel="next"]`).AttrOr("href", "") != "/admin/pets?before=7&status=sold" || doc.Find(`.pager a[rel="prev"]`).Length() != 0 {
		t.Error("pager links wrong")
	}
	if doc.Find("th[scope=col]").Length() != 7 || doc.Find("h1").Length() != 1 { // the bulk selection, then six
		t.Error("table headers or headings wrong")
	}
}

func TestPetTableEmptyStates(t *testing.T) {
	t.Parallel()
	doc, _ := render(t, templates.PetTable(templates.PetTableView{}))
	if !strings.Contains(doc.Find(`[data-testid="empty"]`).Text(), "No pets yet") || doc.Find("table").Length() != 0 {
		t.Error("empty table should say No pets yet")
	}
	doc, _ = render(t, templates.PetTable(templates.PetTableView{Filtered: true}))
	if !strings.Contains(doc.Find(`[data-testid="empty"]`).Text(), "No pets match this filter") {
		t.Error("empty filtered table should say so")
	}
	if doc.Find(`[data-testid="search-note"]`).Length() != 0 {
		t.Error("a search note without a stopped search")
	}
	// A search that stopped on its budget: no match yet, not "none".
	note := "Only part of the pets were searched for this page, to keep it quick: older pets may match too. “Older →” searches on."
	doc, _ = render(t, templates.PetTable(templates.PetTableView{Filtered: true, Note: note, OlderURL: "/admin/pets?before=940000&q=a+b"}))
	if !strings.Contains(doc.Find(`[data-testid="empty"]`).Text(), "No pets match among those searched so far") ||
		doc.Find(`[data-testid="search-note"]`).Text() != note || doc.Find(`.pager a[rel="next"]`).AttrOr("href", "") != "/admin/pets?before=940000&q=a+b" {
		t.Error("a stopped search should say so and link onwards")
	}
}

func TestFlash(t *testing.T) {
	t.Parallel()
	doc, _ := render(t, templates.FlashMessage(templates.Flash{Kind: "error", Text: "<b>bad</b>"}))
	if s := doc.Find(`[data-testid="flash"]`); s.AttrOr("role", "") != "alert" || s.Text() != "<b>bad</b>" {
		t.Error("error flash should be an escaped alert")
	}
	doc, _ = render(t, templates.FlashMessage(templates.Flash{Kind: "success", Text: "ok"}))
	if doc.Find(`[data-testid="flash"]`).AttrOr("role", "") != "status" {
		t.Error("success flash should be a status")
	}
	doc, _ = render(t, templates.FlashMessage(templates.Flash{}))
	if doc.Find(`[data-testid="flash"]`).Length() != 0 {
		t.Error("no flash expected")
	}
}
