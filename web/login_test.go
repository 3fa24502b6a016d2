package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"petstore/models"
)

func TestPagesNeedSignIn(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b := e.browser()
		for _, path := range []string{"/admin", "/admin/pets", "/admin/pets?status=sold", "/admin/api-keys", "/admin/users"} {
			p := b.get(path)
			wantStatus(t, p, http.StatusSeeOther)
			if got, want := p.Header.Get("Location"), "/admin/login?next="+url.QueryEscape(path); got != want {
				t.Errorf("%s redirects to %q, want %q", path, got, want)
			}
		}
		// htmx requests are told where to go instead.
		p := b.get("/admin/pets", "HX-Request", "true")
		if p.Status != http.StatusUnauthorized || !strings.HasPrefix(p.Header.Get("HX-Redirect"), "/admin/login?next=") {
			t.Errorf("htmx without session: %d, HX-Redirect %q", p.Status, p.Header.Get("HX-Redirect"))
		}
		// / leads to the console.
		if p := b.get("/"); p.Status != http.StatusFound || p.Header.Get("Location") != "/admin" {
			t.Errorf("/ -> %d %q", p.Status, p.Header.Get("Location"))
		}
	})
}

func TestSignInAndOut(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b := e.browser()
		login := b.get("/admin/login?next=" + url.QueryEscape("/admin/pets?status=sold"))
		wantStatus(t, login, http.StatusOK)
		if labelled(t, login, "Username").AttrOr("name", "") != "username" || labelled(t, login, "Password").AttrOr("type", "") != "password" {
			t.Fatal("sign-in form lacks its labelled fields")
		}
		if text(login, `button[type="submit"]`) != "Sign in" {
			t.Errorf("button %q", text(login, `button[type="submit"]`))
		}
		res := b.post("/admin/login", url.Values{"csrf_token": {csrf(t, login)}, "username": {"Alice"}, "password": {staffPassword},
			"next": {"/admin/pets?status=sold"}})
		wantStatus(t, res, http.StatusSeeOther)
		if loc := res.Header.Get("Location"); loc != "/admin/pets?status=sold" {
			t.Errorf("after sign-in: Location %q, want the page asked for", loc)
		}
		var cookie *http.Cookie
		for _, c := range res.Header.Values("Set-Cookie") {
			if ck, err := http.ParseSetCookie(c); err == nil && ck.Name == "petstore_session" && ck.Value != "" {
				cookie = ck
			}
		}
		if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode || cookie.Path != "/" {
			t.Fatalf("session cookie = %+v, want HttpOnly, SameSite=Lax, Path=/", cookie)
		}
		pets := b.get("/admin/pets")
		wantStatus(t, pets, http.StatusOK)
		if !strings.Contains(pets.Body, staffName) {
			t.Error("signed-in page does not name the user")
		}
		tok := csrf(t, pets)

		// Sign out ends the session on the server: the old cookie is worthless.
		stolen := e.browser()
		stolen.client.Jar.SetCookies(mustURL(t, e.srv.URL), []*http.Cookie{{Name: "petstore_session", Value: cookie.Value}})
		wantStatus(t, stolen.get("/admin/pets"), http.StatusOK)
		out := b.post("/admin/logout", url.Values{"csrf_token": {tok}})
		wantStatus(t, out, http.StatusSeeOther)
		if got := b.get(out.Header.Get("Location")); !strings.Contains(got.Body, "You have signed out.") {
			t.Errorf("no signed-out message:\n%s", got.Body)
		}
		wantStatus(t, b.get("/admin/pets"), http.StatusSeeOther)
		wantStatus(t, stolen.get("/admin/pets"), http.StatusSeeOther)
	})
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestSignInRefusals(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b := e.browser()
		login := b.get("/admin/login")
		tok := csrf(t, login)
		for _, creds := range [][2]string{{staffName, "wrong password"}, {"nobody", staffPassword}, {"", ""}} {
			p := b.post("/admin/login", url.Values{"csrf_token": {tok}, "username": {creds[0]}, "password": {creds[1]}})
			wantStatus(t, p, http.StatusUnauthorized)
			if got := text(p, `[data-testid="login-error"]`); got != "Wrong username or password." {
				t.Errorf("error %q", got)
			}
			if v := labelled(t, p, "Username").AttrOr("value", ""); v != creds[0] {
				t.Errorf("typed username not kept: %q", v)
			}
		}
		// Open redirects are refused: next stays inside the console.
		for _, next := range []string{"https://evil.example/", "//evil.example/admin", "/admin/../../x", "/adminx", "/\\evil.example"} {
			p := b.post("/admin/login", url.Values{"csrf_token": {tok}, "username": {staffName}, "password": {staffPassword}, "next": {next}})
			wantStatus(t, p, http.StatusSeeOther)
			if loc := p.Header.Get("Location"); strings.Contains(loc, "evil") || !strings.HasPrefix(loc, "/admin/") {
				t.Errorf("next %q -> Location %q", next, loc)
			}
			tok = csrf(t, b.get("/admin/pets"))
		}
	})
}

func TestSignInRateLimited(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b := e.browser()
		tok := csrf(t, b.get("/admin/login"))
		try := func(password string) page {
			return b.post("/admin/login", url.Values{"csrf_token": {tok}, "username": {staffName}, "password": {password}})
		}
		for range models.MaxFailuresPerUsernameAddress {
			wantStatus(t, try("wrong password"), http.StatusUnauthorized)
		}
		// Now even the right password is refused until the window passes.
		p := try(staffPassword)
		wantStatus(t, p, http.StatusTooManyRequests)
		if !strings.Contains(text(p, `[data-testid="login-error"]`), "Too many failed sign-ins") || p.Header.Get("Retry-After") == "" {
			t.Errorf("throttled page: %q, Retry-After %q", text(p, `[data-testid="login-error"]`), p.Header.Get("Retry-After"))
		}
		e.store.SetClock(func() time.Time { return time.Now().Add(models.LoginWindow + time.Minute) })
		wantStatus(t, try(staffPassword), http.StatusSeeOther)
	})
}

func TestSessionTimeouts(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, _ := e.signedIn()
		e.advance(90 * time.Minute)
		wantStatus(t, b.get("/admin/pets"), http.StatusOK) // used: idle clock restarts
		e.advance(90 * time.Minute)
		wantStatus(t, b.get("/admin/pets"), http.StatusOK)
		e.advance(2*time.Hour + time.Minute) // idle too long
		wantStatus(t, b.get("/admin/pets"), http.StatusSeeOther)

		b, _ = e.signedIn()
		for range 13 { // kept busy, but 12 hours after sign-in it ends
			e.advance(59 * time.Minute)
			b.get("/admin/pets")
		}
		wantStatus(t, b.get("/admin/pets"), http.StatusSeeOther)
	})
}

// A changed password ends the account's other sessions.
func TestPasswordChangeEndsOtherSessions(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, _ := e.signedIn()
		u, err := e.store.CheckPassword(context.Background(), staffName, staffPassword)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.store.ChangePassword(context.Background(), u.ID, staffPassword, "a brand new password", "127.0.0.1", ""); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, b.get("/admin/pets"), http.StatusSeeOther)
	})
}

// The session id changes at sign-in, so an id planted before is useless.
func TestSessionIDRotatesAtSignIn(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b := e.browser()
		login := b.get("/admin/login")
		before := sessionCookie(t, b, e)
		b.post("/admin/login", url.Values{"csrf_token": {csrf(t, login)}, "username": {staffName}, "password": {staffPassword}})
		after := sessionCookie(t, b, e)
		if before == "" || after == "" || before == after {
			t.Fatalf("session cookie before %q after %q: want two different ones", before, after)
		}
		planted := e.browser()
		planted.client.Jar.SetCookies(mustURL(t, e.srv.URL), []*http.Cookie{{Name: "petstore_session", Value: before}})
		wantStatus(t, planted.get("/admin/pets"), http.StatusSeeOther)
	})
}

func sessionCookie(t *testing.T, b *browser, e *env) string {
	t.Helper()
	for _, c := range b.client.Jar.Cookies(mustURL(t, e.srv.URL)) {
		if c.Name == "petstore_session" {
			return c.Value
		}
	}
	return ""
}

func TestCSRF(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		tests := []struct {
			name    string
			form    url.Values
			headers []string
		}{
			{"no token", url.Values{}, nil},
			{"wrong token", url.Values{"csrf_token": {"forged"}}, nil},
			{"token of another session", url.Values{"csrf_token": {func() string { _, t2 := e.signedIn(); return t2 }()}}, nil},
			{"cross-site form post", url.Values{"csrf_token": {tok}}, []string{"Sec-Fetch-Site", "cross-site"}},
			{"cross-origin by Origin", url.Values{"csrf_token": {tok}}, []string{"Sec-Fetch-Site", "", "Origin", "https://evil.example"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := b.post("/admin/logout", tt.form, tt.headers...)
				wantStatus(t, p, http.StatusForbidden)
				if !strings.Contains(p.Body, "nothing was changed") {
					t.Errorf("refusal page does not explain:\n%s", p.Body)
				}
				// Still signed in: the refused sign-out changed nothing.
				wantStatus(t, b.get("/admin/pets"), http.StatusOK)
			})
		}
		// The header htmx sends works like the form field.
		wantStatus(t, b.post("/admin/logout", url.Values{}, "X-CSRF-Token", tok), http.StatusSeeOther)
	})
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, _ := e.signedIn()
		for _, path := range []string{"/admin/login", "/admin/pets", "/admin/nope"} {
			p := b.get(path)
			csp := p.Header.Get("Content-Security-Policy")
			for _, want := range []string{"script-src 'self'", "frame-ancestors 'none'", "default-src 'self'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("%s: CSP %q lacks %q", path, csp, want)
				}
			}
			if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
				t.Errorf("%s: CSP allows inline code: %q", path, csp)
			}
			for k, v := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin"} {
				if got := p.Header.Get(k); got != v {
					t.Errorf("%s: %s = %q", path, k, got)
				}
			}
			// No inline scripts or styles anywhere in the markup.
			p.Doc.Find("script").Each(func(_ int, s *goquery.Selection) {
				if _, ok := s.Attr("src"); !ok || strings.TrimSpace(s.Text()) != "" {
					t.Errorf("%s: inline script", path)
				}
			})
			if p.Doc.Find("style, [style]").Length() > 0 {
				t.Errorf("%s: inline style", path)
			}
		}
		if p := b.get("/admin/nope"); p.Status != http.StatusNotFound || !strings.Contains(p.Header.Get("Content-Type"), "text/html") {
			t.Errorf("unknown console page: %d %s", p.Status, p.Header.Get("Content-Type"))
		}
	})
}
