package web_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// TestDocs checks the API reference page without a browser: public (no
// session, no cookie), under the console's CSP with no inline code, and
// every URL it loads, relative to the page, answers with what it should;
// it links the console and its icon, and the console links it back.
// The browser journey TestBrowserDocs renders it.
func TestDocs(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b := e.browser()
		consoleCSP := b.get("/admin/login").Header.Get("Content-Security-Policy")
		b = e.browser()
		p := b.get("/docs")
		wantStatus(t, p, http.StatusOK)
		if ct := p.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("Content-Type %q", ct)
		}
		if csp := p.Header.Get("Content-Security-Policy"); csp == "" || csp != consoleCSP {
			t.Errorf("CSP %q, want the console's %q", csp, consoleCSP)
		}
		if c := p.Header.Values("Set-Cookie"); len(c) != 0 {
			t.Errorf("the public page set cookies %q", c)
		}
		for k, v := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY"} {
			if got := p.Header.Get(k); got != v {
				t.Errorf("%s = %q, want %q", k, got, v)
			}
		}
		if n := p.Doc.Find("style, [style]").Length(); n != 0 {
			t.Errorf("%d inline styles", n)
		}

		page, _ := url.Parse(e.srv.URL + "/docs")
		fetch := func(what, ref, wantType string) {
			t.Helper()
			if ref == "" || strings.HasPrefix(ref, "/") || strings.Contains(ref, "://") {
				t.Errorf("%s %q is not relative to the page (a path prefix would break it)", what, ref)
				return
			}
			u, _ := page.Parse(ref)
			got := b.get(u.RequestURI())
			if got.Status != http.StatusOK || !strings.HasPrefix(got.Header.Get("Content-Type"), wantType) {
				t.Errorf("%s %s: %d %q, want 200 %s", what, u.RequestURI(), got.Status, got.Header.Get("Content-Type"), wantType)
			}
		}
		// docs.js, which loads Swagger UI's bundle after the first paint.
		scripts := p.Doc.Find("script")
		if scripts.Length() != 1 {
			t.Errorf("%d scripts, want docs.js", scripts.Length())
		}
		bundle, _ := p.Doc.Find("#swagger-ui").Attr("data-swagger-js")
		fetch("Swagger UI", bundle, "text/javascript")
		scripts.Each(func(_ int, s *goquery.Selection) {
			src, _ := s.Attr("src")
			if strings.TrimSpace(s.Text()) != "" {
				t.Error("inline script")
			}
			fetch("script", src, "text/javascript")
		})
		p.Doc.Find(`link[rel="stylesheet"]`).Each(func(_ int, s *goquery.Selection) {
			href, _ := s.Attr("href")
			fetch("stylesheet", href, "text/css")
		})

		icon, _ := p.Doc.Find(`head link[rel="icon"]`).Attr("href")
		fetch("icon", icon, "image/svg+xml")
		// The reference leads to the console, and the console back to it.
		console, _ := p.Doc.Find(`header a[data-testid="console-link"]`).Attr("href")
		if u, _ := page.Parse(console); console == "" || strings.HasPrefix(console, "/") || u.Path != "/admin" {
			t.Errorf("the link to the console is %q, want one relative to the page, to /admin", console)
		}
		staff, _ := e.signedIn()
		pets := staff.get("/admin/pets")
		if l := pets.Doc.Find(`header nav a[href="/docs"]`); l.Length() != 1 || strings.TrimSpace(l.Text()) != "API reference" {
			t.Errorf("the console's navigation has %d links to /docs (%q), want one, \"API reference\"", l.Length(), l.Text())
		}
		if href, _ := pets.Doc.Find(`head link[rel="icon"]`).Attr("href"); href != "/"+icon {
			t.Errorf("the console links the icon %q, the reference %q", href, icon)
		}
		// Browsers that find no icon named ask for /favicon.ico.
		if fav := b.get("/favicon.ico"); fav.Status != http.StatusFound || fav.Header.Get("Location") != "/"+icon {
			t.Errorf("GET /favicon.ico: %d to %q, want 302 to /%s", fav.Status, fav.Header.Get("Location"), icon)
		}

		// The document's title and introduction are in the page itself,
		// its Markdown as HTML: they paint before Swagger UI has loaded.
		intro := p.Doc.Find(`[data-testid="api-intro"]`)
		if h := strings.Join(strings.Fields(intro.Find("h1").Text()), " "); !strings.HasPrefix(h, "Animal Store API ") {
			t.Errorf("the page's heading is %q, want the document's title and version", h)
		}
		if intro.Find("p strong").Length() == 0 || intro.Find("li code").Length() == 0 || strings.Contains(intro.Text(), "**") {
			t.Errorf("the introduction is not the document's Markdown as HTML:\n%s", intro.Text())
		}

		root := p.Doc.Find("#swagger-ui")
		spec, _ := root.Attr("data-spec-url")
		fetch("OpenAPI document", spec, "application/json")
		if u, _ := page.Parse(spec); u.Path != "/v1/openapi.json" {
			t.Errorf("data-spec-url %q is %s, want /v1/openapi.json", spec, u.Path)
		}
		doc := b.get("/v1/openapi.json")
		var d struct {
			OpenAPI string         `json:"openapi"`
			Paths   map[string]any `json:"paths"`
		}
		if err := json.Unmarshal([]byte(doc.Body), &d); err != nil || d.OpenAPI == "" || len(d.Paths) == 0 {
			t.Errorf("the document the page renders: %v, %+v", err, d)
		}
		if !strings.Contains(root.Find("noscript").Text(), "OpenAPI document") {
			t.Error("without JavaScript the page does not point at the document")
		}

		// Other methods get the console's HTML refusal, not the API's JSON.
		req, _ := http.NewRequest("POST", e.srv.URL+"/docs", nil)
		r := b.do(req)
		if r.Status != http.StatusMethodNotAllowed || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") || r.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("POST /docs: %d %q, want an HTML 405 under the CSP", r.Status, r.Header.Get("Content-Type"))
		}
	})
}
