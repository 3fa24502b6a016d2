package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
)

func TestMain(m *testing.M) { modelstest.Main(m) }

// The staff account every env starts with.
const (
	staffName     = "alice"
	staffPassword = "correct horse battery"
)

// env is the console over real HTTP on loopback and a real database.
type env struct {
	t     *testing.T
	store *models.Store
	srv   *httptest.Server
	clock atomic.Pointer[time.Time]
}

// newEnv starts the console (with the rest of the product, as serve does)
// over a fresh database holding one staff account, an admin.
func newEnv(t *testing.T, store *models.Store) *env {
	t.Helper()
	e := &env{t: t, store: store}
	now := time.Now()
	e.clock.Store(&now)
	h, err := server.New(context.Background(), server.Deps{Store: store, Now: func() time.Time { return *e.clock.Load() }})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(h)
	t.Cleanup(e.srv.Close)
	if _, err := store.CreateUserWithRole(context.Background(), staffName, staffPassword, models.RoleAdmin, "test"); err != nil {
		t.Fatal(err)
	}
	return e
}

// forEach runs fn on a fresh console per driver.
func forEach(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Helper()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) { fn(t, newEnv(t, s)) })
}

// advance moves the console's clock.
func (e *env) advance(d time.Duration) {
	now := e.clock.Load().Add(d)
	e.clock.Store(&now)
}

// browser is one visitor: the kit's console (a cookie jar, no automatic
// redirects, so tests see each response as it is).
type browser struct {
	e      *env
	c      *testkit.Console
	client *http.Client // c's client, for tests that set its cookies or transport
}

func (e *env) browser() *browser {
	c := testkit.NewConsole(e.srv.URL)
	// A transport of its own: closing another test's server closes
	// http.DefaultTransport's idle connections, which failed a request
	// of this one mid-way once ("CloseIdleConnections called").
	c.HTTP.Transport = http.DefaultTransport.(*http.Transport).Clone()
	c.HTTP.Timeout = 0
	return &browser{e: e, c: c, client: c.HTTP}
}

// page is a response with its HTML parsed.
type page struct {
	Status int
	Header http.Header
	Body   string
	Doc    *goquery.Document
}

func (b *browser) do(req *http.Request) page {
	b.e.t.Helper()
	return b.pageOf(testkit.Do(b.client, req))
}

// pageOf parses the kit's reply as a page, failing the test on a transport
// error.
func (b *browser) pageOf(r testkit.Reply) page {
	b.e.t.Helper()
	if r.Err != nil {
		b.e.t.Fatal(r.Err)
	}
	return page{Status: r.Status, Header: r.Header, Body: string(r.Body), Doc: testkit.HTMLDoc(b.e.t, r)}
}

// get fetches a path; headers are optional name, value pairs.
func (b *browser) get(path string, headers ...string) page {
	b.e.t.Helper()
	req, err := http.NewRequest("GET", b.e.srv.URL+path, nil)
	if err != nil {
		b.e.t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return b.do(req)
}

// post sends a form as a same-origin browser would (Sec-Fetch-Site:
// same-origin); headers are optional name, value pairs that may override it.
func (b *browser) post(path string, form url.Values, headers ...string) page {
	b.e.t.Helper()
	req, err := http.NewRequest("POST", b.e.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return b.do(req)
}

// csrf returns the CSRF token of a page's forms.
func csrf(t *testing.T, p page) string {
	t.Helper()
	tok := testkit.FormCSRF(p.Doc)
	if tok == "" {
		t.Fatalf("no csrf_token on the page:\n%s", p.Body)
	}
	return tok
}

// signIn signs the browser in as the staff account (the kit's sign-in: the
// form's page, then the post) and returns the CSRF token of the new session.
func (b *browser) signIn() string {
	b.e.t.Helper()
	if res := b.c.SignIn(b.e.t, staffName, staffPassword); res.Status != http.StatusSeeOther {
		b.e.t.Fatalf("sign in: %s", res)
	}
	return csrf(b.e.t, b.get("/admin/pets"))
}

// signedIn returns a browser signed in as the staff account and its CSRF token.
func (e *env) signedIn() (*browser, string) {
	b := e.browser()
	return b, b.signIn()
}

// text returns the trimmed text of the first match of a selector.
func text(p page, selector string) string {
	return strings.TrimSpace(p.Doc.Find(selector).First().Text())
}

// wantStatus fails the test unless the page has the status.
func wantStatus(t *testing.T, p page, status int) {
	t.Helper()
	if p.Status != status {
		t.Fatalf("status = %d, want %d\n%s", p.Status, status, p.Body)
	}
}

// labelled finds the form control labelled label (by <label for>).
func labelled(t *testing.T, p page, label string) *goquery.Selection {
	t.Helper()
	var id string
	p.Doc.Find("label").EachWithBreak(func(_ int, l *goquery.Selection) bool {
		if strings.TrimSpace(l.Text()) == label {
			id, _ = l.Attr("for")
			return false
		}
		return true
	})
	if id == "" {
		t.Fatalf("no label %q on the page", label)
	}
	sel := p.Doc.Find("#" + id)
	if sel.Length() == 0 {
		t.Fatalf("label %q points at missing #%s", label, id)
	}
	return sel
}
