package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"petstore/api"
	"petstore/internal/testkit"
	"petstore/models"
)

// routePublic lists the routes anyone may use, each with why. Every other
// route of the production router must refuse a signed-out visitor (under
// /admin) or an unauthenticated caller (under /v1); a route under neither
// prefix must be listed here.
var routePublic = map[string]string{
	"GET /":                 "redirects to the console",
	"GET /static/*file":     "CSS, JavaScript and icons",
	"HEAD /static/*file":    "CSS, JavaScript and icons",
	"GET /favicon.ico":      "the site's icon, for pages that name none",
	"GET /healthz":          "liveness probe",
	"GET /readyz":           "readiness probe",
	"GET /v1/openapi.json":  "the API's own description",
	"HEAD /v1/openapi.json": "the API's own description",
	"GET /docs":             "the interactive API reference, built from that description",
	"GET /admin/login":      "the sign-in page",
	"POST /admin/login":     "signing in",
	// The sign-in's second step: open only to the session that gave the
	// right password in the last 5 minutes, refused to anyone else.
	"GET /admin/login/code":                  "the sign-in's second step",
	"POST /admin/login/code":                 "the sign-in's second step",
	"POST /admin/login/code/passkey/options": "the sign-in's second step with a passkey",
	"POST /admin/login/code/passkey":         "the sign-in's second step with a passkey",
	"POST /admin/login/passkey/options":      "signing in with a passkey",
	"POST /admin/login/passkey":              "signing in with a passkey",
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
// but the OpenAPI document answers 401 with the Error body (HEAD with
// GET's status and headers, and no body). A new route
// fails this test until it is protected or listed in routePublic.
func TestEveryRouteProtected(t *testing.T) {
	t.Parallel()
	forEachSite(t, func(t *testing.T, s *site) {
		ctx := context.Background()
		if _, err := s.store.CreatePet(ctx, models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable}, "test"); err != nil {
			t.Fatal(err)
		}
		s.newKey(t)
		before := routeState(t, s.store)

		// A signed-out visitor with a session: the sign-in page gave it a
		// cookie and a CSRF token. A stranger has neither.
		visitor := s.console()
		login := visitor.Get("/admin/login")
		if login.Status != http.StatusOK {
			t.Fatalf("sign-in page: %s", login)
		}
		token := testkit.CSRFToken(t, login)
		stranger := s.apiClient("")

		routes := s.handler.Routes()
		if len(routes) < 10 {
			t.Fatalf("only %d routes: %v", len(routes), routes)
		}
		for _, r := range routes {
			name := r.Method + " " + r.Path
			t.Run(name, func(t *testing.T) {
				target := routePath(r.Path)
				switch {
				case routePublic[name] != "":
					return
				case r.Path == "/admin" || strings.HasPrefix(r.Path, "/admin/"):
					if r.Method == http.MethodGet || r.Method == http.MethodHead {
						wantSignInRedirect(t, "signed out", stranger.Do(r.Method, target, nil, ""))
						res := visitor.Do(r.Method, target, http.Header{"HX-Request": {"true"}}, "")
						if res.Status != http.StatusUnauthorized || !strings.HasPrefix(res.Header.Get("HX-Redirect"), "/admin/login") {
							t.Errorf("htmx, signed out: %d, HX-Redirect %q; want 401 to the sign-in page", res.Status, res.Header.Get("HX-Redirect"))
						}
						return
					}
					// No session, no token: the CSRF check refuses it.
					form := url.Values{"name": {"Mallory"}, "categoryId": {"1"}, "status": {"sold"}, "password": {"another long passphrase"}}
					res := stranger.Do(r.Method, target, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, form.Encode())
					if res.Status != http.StatusForbidden && !isSignInRedirect(res) {
						t.Errorf("no session: %d (Location %q), want 403 or the sign-in page", res.Status, res.Header.Get("Location"))
					}
					// A session and its token, but nobody signed in.
					form.Set("csrf_token", token)
					h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Sec-Fetch-Site": {"same-origin"}}
					wantSignInRedirect(t, "signed out with a CSRF token", visitor.Do(r.Method, target, h, form.Encode()))
					h.Set("HX-Request", "true")
					h.Set("X-CSRF-Token", token)
					res = visitor.Do(r.Method, target, h, form.Encode())
					if res.Status != http.StatusUnauthorized || !strings.HasPrefix(res.Header.Get("HX-Redirect"), "/admin/login") {
						t.Errorf("htmx, signed out with a CSRF token: %d, HX-Redirect %q; want 401 to the sign-in page", res.Status, res.Header.Get("HX-Redirect"))
					}
				case r.Path == api.Prefix || strings.HasPrefix(r.Path, api.Prefix+"/"):
					h := http.Header{"Content-Type": {"application/json"}}
					for _, auth := range []string{"", "Bearer " + models.GenerateKey()} {
						if auth != "" {
							h.Set("Authorization", auth)
						}
						res := stranger.Do(r.Method, target, h, `{"name":"Mallory","categoryId":1}`)
						if r.Method == http.MethodHead { // GET's answer without its body
							if res.Status != http.StatusUnauthorized || len(res.Body) != 0 {
								t.Errorf("Authorization %q: %s, want 401 without a body", auth, res)
							}
						} else {
							testkit.WantAPIError(t, fmt.Sprintf("Authorization %q", auth), res, http.StatusUnauthorized, models.CodeUnauthorized)
						}
						if res.Header.Get("WWW-Authenticate") == "" {
							t.Errorf("Authorization %q: 401 without WWW-Authenticate", auth)
						}
					}
				default:
					t.Errorf("new route %s: protect it, or add it to routePublic in routes_test.go with the reason it is public", name)
				}
			})
		}
		if after := routeState(t, s.store); after != before {
			t.Errorf("signed-out and unauthenticated requests changed the data: %+v, was %+v", after, before)
		}
	})
}

// isSignInRedirect reports whether r sends the browser to the sign-in page.
func isSignInRedirect(r testkit.Reply) bool {
	return r.Status == http.StatusSeeOther && strings.HasPrefix(r.Header.Get("Location"), "/admin/login")
}

func wantSignInRedirect(t *testing.T, what string, r testkit.Reply) {
	t.Helper()
	if !isSignInRedirect(r) {
		t.Errorf("%s: %d (Location %q), want 303 to the sign-in page", what, r.Status, r.Header.Get("Location"))
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
