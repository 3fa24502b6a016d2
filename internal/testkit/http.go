// Package testkit is the kit of the HTTP tests of the api, web and e2e
// packages and of the commands' tests: a client of the API (bearer key,
// JSON), a console client without JavaScript (cookie jar, sign-in, CSRF
// token), page parsing, checks of answers, the built binary and running
// instances of it, and figures. Only tests import it.
package testkit

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"petstore/api"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Reply is one HTTP exchange as the test saw it.
type Reply struct {
	Status int
	Header http.Header
	Body   []byte
	Took   time.Duration
	Err    error // transport error (a timeout included); status is 0
}

// String shows the reply in a failure message: the status, the time it
// took and the end of the body, or the transport error.
func (r Reply) String() string {
	if r.Err != nil {
		return fmt.Sprintf("error after %s: %s", r.Took.Round(time.Millisecond), Clip(r.Err.Error()))
	}
	body := Tail(string(r.Body), 5)
	if len(body) > 1000 {
		body = body[:1000] + "..."
	}
	return fmt.Sprintf("%d after %s: %s", r.Status, r.Took.Round(time.Millisecond), body)
}

// NewHTTPClient returns a client that never follows redirects, so each
// answer is seen as it is, and gives up after timeout.
func NewHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Send makes one request to the server at base and reads the whole answer.
// target is sent on the request line exactly as given (no cleaning, no
// re-escaping), and header as given. A transport error is in the reply,
// not a failure: some tests count them.
func Send(c *http.Client, method, base, target string, header http.Header, body string) Reply {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base, rd)
	if err != nil {
		return Reply{Err: err}
	}
	req.URL.Opaque = target
	for k, vs := range header {
		req.Header[k] = vs
	}
	return Do(c, req)
}

// Do sends req with c and reads the whole answer; a transport error is in
// the reply.
func Do(c *http.Client, req *http.Request) Reply {
	start := time.Now()
	res, err := c.Do(req)
	if err != nil {
		return Reply{Err: err, Took: time.Since(start)}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return Reply{Status: res.StatusCode, Header: res.Header, Body: b, Took: time.Since(start), Err: err}
}

// ReadReply reads the whole answer res, failing the test when its body
// cannot be read.
func ReadReply(tb testing.TB, res *http.Response) Reply {
	tb.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return Reply{Status: res.StatusCode, Header: res.Header, Body: b}
}

// APIClient calls one server's API as a partner app does: with its key, if
// it has one, as a bearer token.
type APIClient struct {
	Base, Key string
	HTTP      *http.Client
}

func NewAPIClient(base, key string) *APIClient {
	return &APIClient{Base: base, Key: key, HTTP: NewHTTPClient(15 * time.Second)}
}

// Do sends one request (see Send), with the key unless header sets
// Authorization itself.
func (a *APIClient) Do(method, target string, header http.Header, body string) Reply {
	h := http.Header{}
	for k, vs := range header {
		h[k] = vs
	}
	if a.Key != "" && h.Get("Authorization") == "" {
		h.Set("Authorization", "Bearer "+a.Key)
	}
	return Send(a.HTTP, method, a.Base, target, h, body)
}

func (a *APIClient) Get(target string) Reply {
	return a.Do(http.MethodGet, target, nil, "")
}

// PostJSON posts body as application/json.
func (a *APIClient) PostJSON(target, body string) Reply {
	return a.Do(http.MethodPost, target, http.Header{"Content-Type": {"application/json"}}, body)
}

func (a *APIClient) CreatePet(name string) Reply {
	body, _ := json.Marshal(map[string]any{"name": name, "categoryId": 7})
	return a.PostJSON("/v1/pets", string(body))
}

// NextLink finds the next page's URL in a Link header.
var NextLink = regexp.MustCompile(`<([^>]+)>;\s*rel="next"`)

// AllPets pages through GET /v1/pets, following the next links, and
// returns every pet by id.
func (a *APIClient) AllPets(tb testing.TB) map[int64]api.Pet {
	tb.Helper()
	pets := map[int64]api.Pet{}
	path := "/v1/pets?limit=100"
	for range 10000 {
		r := a.Get(path)
		if r.Err != nil || r.Status != http.StatusOK {
			tb.Fatalf("GET %s: %s", path, r)
		}
		var page []api.Pet
		if err := json.Unmarshal(r.Body, &page); err != nil {
			tb.Fatalf("GET %s: %v: %s", path, err, r.Body)
		}
		for _, p := range page {
			if _, dup := pets[p.ID]; dup {
				tb.Fatalf("pet %d listed twice", p.ID)
			}
			pets[p.ID] = p
		}
		link := r.Header.Get("Link")
		if link == "" {
			return pets
		}
		m := NextLink.FindStringSubmatch(link)
		if m == nil {
			tb.Fatalf("GET %s: Link %q has no next URL", path, link)
		}
		u, err := url.Parse(m[1])
		if err != nil {
			tb.Fatal(err)
		}
		path = u.RequestURI()
	}
	tb.Fatal("more than 10000 pages of pets")
	return nil
}

// Console is a browser without JavaScript on one server's admin console:
// it keeps the session cookie, never follows redirects, and posts forms as
// the console's pages do.
type Console struct {
	Base string
	HTTP *http.Client
	CSRF string // the session's CSRF token once the test has read it: sent with every post
}

func NewConsole(base string) *Console {
	jar, _ := cookiejar.New(nil) // never fails without options
	c := NewHTTPClient(15 * time.Second)
	c.Jar = jar
	return &Console{Base: base, HTTP: c}
}

// Do sends one request (see Send) with the session's cookie.
func (c *Console) Do(method, target string, header http.Header, body string) Reply {
	return Send(c.HTTP, method, c.Base, target, header, body)
}

func (c *Console) Get(target string) Reply {
	return c.Do(http.MethodGet, target, nil, "")
}

// Post submits form as a same-origin form Post, with the session's CSRF
// token unless the form carries a token of its own.
func (c *Console) Post(target string, form url.Values) Reply {
	if form == nil {
		form = url.Values{}
	}
	if c.CSRF != "" && form.Get("csrf_token") == "" {
		form.Set("csrf_token", c.CSRF)
	}
	h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Sec-Fetch-Site": {"same-origin"}}
	return c.Do(http.MethodPost, target, h, form.Encode())
}

// SignIn signs in through the form, as a person does: the sign-in page for
// its cookie and CSRF token, then the form post, whose answer it returns
// (303 on success).
func (c *Console) SignIn(tb testing.TB, username, password string) Reply {
	tb.Helper()
	login := c.Get("/admin/login")
	if login.Status != http.StatusOK {
		tb.Fatalf("GET /admin/login: %s", login)
	}
	return c.Post("/admin/login", url.Values{"csrf_token": {CSRFToken(tb, login)}, "username": {username}, "password": {password}})
}

// SignedIn returns a console on base signed in as username.
func SignedIn(tb testing.TB, base, username, password string) *Console {
	tb.Helper()
	c := NewConsole(base)
	if r := c.SignIn(tb, username, password); r.Status != http.StatusSeeOther {
		tb.Fatalf("POST /admin/login: %s, want 303", r)
	}
	return c
}

// Cookie returns the session Cookie as a Cookie header value.
func (c *Console) Cookie(tb testing.TB) string {
	tb.Helper()
	u, _ := url.Parse(c.Base)
	var parts []string
	for _, ck := range c.HTTP.Jar.Cookies(u) {
		parts = append(parts, ck.Name+"="+ck.Value)
	}
	if len(parts) == 0 {
		tb.Fatal("no session cookie after signing in")
	}
	return strings.Join(parts, "; ")
}
