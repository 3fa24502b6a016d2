package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"petstore/api"
	"petstore/config"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
)

// routePublic lists the routes anyone may use, each with why. Every other
// route of the production router must refuse a signed-out visitor (under
// /admin) or an unauthenticated caller (under /v1); a route under neither
// prefix must be listed here.
var routePublic = map[string]string{
	"GET /":                "redirects to the console",
	"GET /static/*file":    "CSS, JavaScript and icons",
	"HEAD /static/*file":   "CSS, JavaScript and icons",
	"GET /healthz":         "liveness probe",
	"GET /readyz":          "readiness probe",
	"GET /v1/openapi.json": "the API's own description",
	"GET /admin/login":     "the sign-in page",
	"POST /admin/login":    "signing in",
}

// routePath fills a route's parameters with plausible values.
func routePath(pattern string) string {
	parts := strings.Split(pattern, "/")
	for i, p := range parts {
		switch {
		case strings.HasPrefix(p, ":"):
			parts[i] = "1"
		case strings.HasPrefix(p, "*"):
			parts[i] = "x"
		}
	}
	return strings.Join(parts, "/")
}

// TestEveryRouteProtected walks the production router's own route list:
// each console route but sign-in sends a signed-out visitor to the sign-in
// page (401 with HX-Redirect for htmx) and refuses a signed-out POST, even
// one with a valid CSRF token, without changing anything; each /v1 route
// but the OpenAPI document answers 401 with the Error body. A new route
// fails this test until it is protected or listed in routePublic.
func TestEveryRouteProtected(t *testing.T) {
	t.Parallel()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			store := modelstest.Open(t, driver)
			rt, err := server.New(t.Context(), server.Deps{Config: config.Config{}, Store: store, Logger: slog.New(slog.DiscardHandler), Now: time.Now, Metrics: api.NewMetrics(store.Pools())})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(rt)
			t.Cleanup(srv.Close)
			ctx := context.Background()
			if _, err := store.CreateUser(ctx, "alice", "correct horse battery staple", "test"); err != nil {
				t.Fatal(err)
			}
			if _, err := store.CreatePet(ctx, models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable}, "test"); err != nil {
				t.Fatal(err)
			}
			if _, _, err := store.CreateAPIKey(ctx, "partner", "test"); err != nil {
				t.Fatal(err)
			}
			before := routeState(t, store)

			// A signed-out visitor with a session: the sign-in page gave
			// it a cookie and a CSRF token.
			jar, _ := cookiejar.New(nil)
			visitor := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			login := routeSend(t, visitor, "GET", srv.URL+"/admin/login", nil, "")
			doc, err := goquery.NewDocumentFromReader(bytes.NewReader(login.body))
			if err != nil {
				t.Fatal(err)
			}
			token := doc.Find(`input[name="csrf_token"]`).First().AttrOr("value", "")
			if login.status != http.StatusOK || token == "" {
				t.Fatalf("sign-in page: %d, csrf token %q", login.status, token)
			}
			stranger := &http.Client{CheckRedirect: visitor.CheckRedirect}

			routes := rt.Routes()
			if len(routes) < 10 {
				t.Fatalf("only %d routes: %v", len(routes), routes)
			}
			for _, r := range routes {
				name := r.Method + " " + r.Path
				t.Run(name, func(t *testing.T) {
					target := srv.URL + routePath(r.Path)
					switch {
					case routePublic[name] != "":
						return
					case r.Path == "/admin" || strings.HasPrefix(r.Path, "/admin/"):
						if r.Method == http.MethodGet || r.Method == http.MethodHead {
							res := routeSend(t, stranger, r.Method, target, nil, "")
							routeWantSignIn(t, "signed out", res)
							res = routeSend(t, visitor, r.Method, target, http.Header{"HX-Request": {"true"}}, "")
							if res.status != http.StatusUnauthorized || !strings.HasPrefix(res.header.Get("HX-Redirect"), "/admin/login") {
								t.Errorf("htmx, signed out: %d, HX-Redirect %q; want 401 to the sign-in page", res.status, res.header.Get("HX-Redirect"))
							}
							return
						}
						// No session, no token: the CSRF check refuses it.
						form := url.Values{"name": {"Mallory"}, "categoryId": {"1"}, "status": {"sold"}, "password": {"another long passphrase"}}
						res := routeSend(t, stranger, r.Method, target, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, form.Encode())
						if res.status != http.StatusForbidden && !routeIsSignIn(res) {
							t.Errorf("no session: %d (Location %q), want 403 or the sign-in page", res.status, res.header.Get("Location"))
						}
						// A session and its token, but nobody signed in.
						form.Set("csrf_token", token)
						h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Sec-Fetch-Site": {"same-origin"}}
						routeWantSignIn(t, "signed out with a CSRF token", routeSend(t, visitor, r.Method, target, h, form.Encode()))
						h.Set("HX-Request", "true")
						h.Set("X-CSRF-Token", token)
						res = routeSend(t, visitor, r.Method, target, h, form.Encode())
						if res.status != http.StatusUnauthorized || !strings.HasPrefix(res.header.Get("HX-Redirect"), "/admin/login") {
							t.Errorf("htmx, signed out with a CSRF token: %d, HX-Redirect %q; want 401 to the sign-in page", res.status, res.header.Get("HX-Redirect"))
						}
					case r.Path == api.Prefix || strings.HasPrefix(r.Path, api.Prefix+"/"):
						h := http.Header{"Content-Type": {"application/json"}}
						for _, auth := range []string{"", "Bearer " + models.GenerateKey()} {
							if auth != "" {
								h.Set("Authorization", auth)
							}
							res := routeSend(t, stranger, r.Method, target, h, `{"name":"Mallory","categoryId":1}`)
							var body api.Error
							if res.status != http.StatusUnauthorized || json.Unmarshal(res.body, &body) != nil ||
								body.Code != models.CodeUnauthorized || body.Status != 401 || res.header.Get("WWW-Authenticate") == "" {
								t.Errorf("Authorization %q: %d %s, want 401 with the Error body", auth, res.status, res.body)
							}
						}
					default:
						t.Errorf("new route %s: protect it, or add it to routePublic in routes_test.go with the reason it is public", name)
					}
				})
			}
			if after := routeState(t, store); after != before {
				t.Errorf("signed-out and unauthenticated requests changed the data: %+v, was %+v", after, before)
			}
		})
	}
}

// routeReply is what a request got back.
type routeReply struct {
	status int
	header http.Header
	body   []byte
}

func routeSend(t *testing.T, c *http.Client, method, target string, header http.Header, body string) routeReply {
	t.Helper()
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return routeReply{status: res.StatusCode, header: res.Header, body: b}
}

func routeIsSignIn(r routeReply) bool {
	return r.status == http.StatusSeeOther && strings.HasPrefix(r.header.Get("Location"), "/admin/login")
}

func routeWantSignIn(t *testing.T, what string, r routeReply) {
	t.Helper()
	if !routeIsSignIn(r) {
		t.Errorf("%s: %d (Location %q), want 303 to the sign-in page", what, r.status, r.header.Get("Location"))
	}
}

// routeCounts is what a refused request must not change.
type routeCounts struct {
	pets, keys, liveKeys int
	firstPet             models.Pet
}

func routeState(t *testing.T, s *models.Store) routeCounts {
	t.Helper()
	pets, _, err := s.ListPets(context.Background(), models.PetQuery{Limit: models.MaxPageLimit})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := s.ListAPIKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := routeCounts{pets: len(pets), keys: len(keys)}
	if len(pets) > 0 {
		c.firstPet = pets[0]
	}
	for _, k := range keys {
		if k.RevokedAt == nil {
			c.liveKeys++
		}
	}
	return c
}
