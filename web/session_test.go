package web_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/gorilla/securecookie"

	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/web"
)

// sessionRows counts the rows of the sessions table.
func (e *env) sessionRows() int {
	e.t.Helper()
	return modelstest.CountRows(e.t, e.store, modelstest.Sessions)
}

// A flood of cookie-less visits to the sign-in page (and to pages that
// send there) stores nothing on the server: before sign-in the session
// lives in a signed cookie only.
func TestCookielessVisitsStoreNothing(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		before := e.sessionRows()
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		get := func(path string, want int) {
			t.Helper()
			res, err := client.Get(e.srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != want {
				t.Fatalf("GET %s: %d, want %d", path, res.StatusCode, want)
			}
		}
		for range 1000 {
			get("/admin/login", http.StatusOK)
		}
		if after := e.sessionRows(); after != before {
			t.Errorf("sessions rows: %d before 1,000 cookie-less GETs of /admin/login, %d after; want no change", before, after)
		}
		for _, path := range []string{"/admin/login?next=%2Fadmin%2Fpets", "/admin/login?signed_out=1", "/admin/pets", "/admin"} {
			for range 50 {
				want := http.StatusSeeOther // to the sign-in page
				if strings.HasPrefix(path, "/admin/login") {
					want = http.StatusOK
				}
				get(path, want)
			}
		}
		if after := e.sessionRows(); after != before {
			t.Errorf("sessions rows: %d before, %d after cookie-less visits of other console pages; want no change", before, after)
		}
	})
}

// The sign-in form's token is a signed double-submit: it must match the
// token in this browser's signed cookie.
func TestSignInFormCSRF(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		a, other := e.browser(), e.browser()
		tok, otherTok := csrf(t, a.get("/admin/login")), csrf(t, other.get("/admin/login"))
		if tok == otherTok {
			t.Fatal("two visitors got the same token")
		}
		creds := func(token string) url.Values {
			return url.Values{"csrf_token": {token}, "username": {staffName}, "password": {staffPassword}}
		}
		tests := []struct {
			name    string
			b       *browser
			form    url.Values
			headers []string
		}{
			{"no token", a, url.Values{"username": {staffName}, "password": {staffPassword}}, nil},
			{"forged token", a, creds("forged"), nil},
			{"another visitor's token", a, creds(otherTok), nil},
			{"token without its cookie", e.browser(), creds(tok), nil},
			{"cross-site post", a, creds(tok), []string{"Sec-Fetch-Site", "cross-site"}},
			{"cross-origin by Origin", a, creds(tok), []string{"Sec-Fetch-Site", "", "Origin", "https://evil.example"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := tt.b.post("/admin/login", tt.form, tt.headers...)
				wantStatus(t, p, http.StatusForbidden)
				if !strings.Contains(p.Body, "nothing was changed") {
					t.Errorf("refusal page does not explain:\n%s", p.Body)
				}
			})
		}
		// A tampered cookie is a new visitor, not an error.
		ck := sessionCookie(t, a, e)
		tampered := e.browser()
		tampered.client.Jar.SetCookies(mustURL(t, e.srv.URL), []*http.Cookie{{Name: "petstore_session", Value: ck[:len(ck)-4] + "AAAA"}})
		csrf(t, tampered.get("/admin/login"))
		if p := tampered.post("/admin/login", creds(tok)); p.Status != http.StatusForbidden {
			t.Errorf("a tampered cookie kept its token: %d", p.Status)
		}
		wantStatus(t, a.post("/admin/login", creds(tok)), http.StatusSeeOther)
	})
}

// Whoever reads the database (the sessions table, and even the cookie keys
// of the settings table) cannot sign in with what is there.
func TestStolenSessionTableCannotSignIn(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		b, _ := e.signedIn()
		wantStatus(t, b.get("/admin/pets"), http.StatusOK)
		cookie := sessionCookie(t, b, e)

		// Every value of every row of the table.
		var stolen []string
		for _, row := range modelstest.Rows(t, e.store, modelstest.Sessions) {
			for _, v := range row {
				if v, ok := v.(string); ok {
					stolen = append(stolen, v)
				}
			}
		}
		if len(stolen) == 0 {
			t.Fatal("no session row after signing in")
		}
		sum := sha256.Sum256([]byte(cookie))
		for _, v := range stolen {
			if strings.Contains(v, cookie) {
				t.Errorf("the table holds the cookie's value %q", v)
			}
		}
		if !slicesContains(stolen, hex.EncodeToString(sum[:])) {
			t.Errorf("the table does not key the session by the SHA-256 of its id: %q", stolen)
		}

		// The cookie keys, as kept in the settings table.
		key := func(name string) []byte {
			k, err := hex.DecodeString(modelstest.Setting(t, e.store, name))
			if err != nil {
				t.Fatal(err)
			}
			return k
		}
		codec := securecookie.New(key("session_hash_key"), key("session_block_key"))
		var forged []string
		for _, v := range stolen {
			if validCookieValue(v) {
				forged = append(forged, v)
			}
			if enc, err := securecookie.EncodeMulti("petstore_session", v, codec); err == nil {
				forged = append(forged, enc)
			}
		}
		u, err := e.store.CheckPassword(ctx, staffName, staffPassword)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().Unix()
		signIn := map[any]any{"uid": u.ID, "ver": u.SessionVersion, "auth_at": now, "seen_at": now, "csrf": "x"}
		enc, err := securecookie.EncodeMulti("petstore_session", signIn, codec)
		if err != nil {
			t.Fatal(err)
		}
		forged = append(forged, enc)
		for i, v := range forged {
			thief := e.browser()
			thief.client.Jar.SetCookies(mustURL(t, e.srv.URL), []*http.Cookie{{Name: "petstore_session", Value: v}})
			if p := thief.get("/admin/pets"); p.Status != http.StatusSeeOther {
				t.Errorf("forged cookie %d (%.20q...) signs in: %d", i, v, p.Status)
			}
		}
		wantStatus(t, b.get("/admin/pets"), http.StatusOK)
	})
}

// validCookieValue reports whether a browser could send v as a cookie value.
func validCookieValue(v string) bool {
	for _, r := range v {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune(`";,\`, r) {
			return false
		}
	}
	return v != ""
}

func slicesContains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// A session that cannot be loaded answers the error page, never the
// sign-in page (which would pass a failure off as a sign-out), and the
// browser keeps its cookie for when the database is back.
func TestSessionLoadErrorAnswersErrorPage(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, _ := e.signedIn()
		cookie := sessionCookie(t, b, e)
		restore := modelstest.BreakTable(t, e.store, modelstest.Sessions)

		p := b.get("/admin/pets")
		wantStatus(t, p, http.StatusInternalServerError)
		if !strings.Contains(p.Header.Get("Content-Type"), "text/html") || !strings.Contains(p.Body, "Something went wrong") {
			t.Errorf("want the HTML error page, got %s:\n%s", p.Header.Get("Content-Type"), p.Body)
		}
		if sc := p.Header.Values("Set-Cookie"); len(sc) != 0 {
			t.Errorf("the failed request set cookies: %q", sc)
		}
		// A htmx request gets the error too, not a redirect to sign in.
		if p := b.get("/admin/pets", "HX-Request", "true"); p.Status != http.StatusInternalServerError || p.Header.Get("HX-Redirect") != "" {
			t.Errorf("htmx: %d, HX-Redirect %q", p.Status, p.Header.Get("HX-Redirect"))
		}
		// The sign-in page needs no database before sign-in.
		wantStatus(t, e.browser().get("/admin/login"), http.StatusOK)

		restore()
		if got := sessionCookie(t, b, e); got != cookie {
			t.Fatalf("the cookie changed during the failure: %q, was %q", got, cookie)
		}
		wantStatus(t, b.get("/admin/pets"), http.StatusOK)
	})
}

// While MariaDB is down, a signed-in session answers the 503 page, the
// sign-in page still shows, and the session works again once it is back.
// Not parallel: it stops the server other tests use.
func TestSessionDuringOutage(t *testing.T) {
	e := newEnv(t, modelstest.Open(t, models.DriverMySQL))
	b, _ := e.signedIn()
	modelstest.Stop(t)
	p := b.get("/admin/pets")
	wantStatus(t, p, http.StatusServiceUnavailable)
	if !strings.Contains(p.Body, "database is not answering") {
		t.Errorf("not the 503 page:\n%s", p.Body)
	}
	if sc := p.Header.Values("Set-Cookie"); len(sc) != 0 {
		t.Errorf("the failed request set cookies: %q", sc)
	}
	visitor := e.browser()
	login := visitor.get("/admin/login")
	wantStatus(t, login, http.StatusOK)
	tok := csrf(t, login)
	// Signing in needs the database: 503, not "wrong password".
	wantStatus(t, visitor.post("/admin/login", url.Values{"csrf_token": {tok}, "username": {staffName}, "password": {staffPassword}}),
		http.StatusServiceUnavailable)
	modelstest.Start(t)
	deadline := time.Now().Add(20 * time.Second)
	for {
		p := b.get("/admin/pets")
		if p.Status == http.StatusOK {
			break
		}
		if p.Status != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("after the outage: %d, want 200 with the same session\n%s", p.Status, p.Body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A session writes its row at sign-in, again only when its values change
// (last seen: once a minute), and deletes it when it ends: sign-out,
// idle timeout, a password change elsewhere, or DeleteUserSessions.
func TestSessionRows(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		seen := func(b *browser) string {
			t.Helper()
			sum := sha256.Sum256([]byte(sessionCookie(t, b, e)))
			return modelstest.SessionSeen(t, e.store, hex.EncodeToString(sum[:]))
		}
		wantRows := func(want int) {
			t.Helper()
			if got := e.sessionRows(); got != want {
				t.Fatalf("%d session rows, want %d", got, want)
			}
		}
		b1, _ := e.signedIn()
		wantRows(1)
		first := seen(b1)
		e.advance(30 * time.Second)
		wantStatus(t, b1.get("/admin/pets"), http.StatusOK)
		if got := seen(b1); got != first {
			t.Errorf("a page view within the minute wrote the session: %s -> %s", first, got)
		}
		e.advance(time.Minute)
		wantStatus(t, b1.get("/admin/pets"), http.StatusOK)
		if got := seen(b1); got == first {
			t.Errorf("a page view after a minute did not record it: %s", got)
		}

		b2, tok2 := e.signedIn()
		wantRows(2)
		wantStatus(t, b2.post("/admin/logout", url.Values{"csrf_token": {tok2}}), http.StatusSeeOther)
		wantRows(1)

		// A password change ends the account's other sessions; each row
		// goes when its session next comes.
		b3, _ := e.signedIn()
		wantRows(2)
		u, err := e.store.CheckPassword(ctx, staffName, staffPassword)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.store.ChangePassword(ctx, u.ID, staffPassword, "correct horse battery staple", "127.0.0.1", ""); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, b1.get("/admin/pets"), http.StatusSeeOther)
		wantStatus(t, b3.get("/admin/pets"), http.StatusSeeOther)
		wantRows(0)
		if _, err := e.store.ChangePassword(ctx, u.ID, "correct horse battery staple", staffPassword, "127.0.0.1", ""); err != nil {
			t.Fatal(err)
		}

		// DeleteUserSessions ends them all at once.
		b4, _ := e.signedIn()
		b5, _ := e.signedIn()
		if n, err := e.store.DeleteUserSessions(ctx, u.ID); err != nil || n != 2 {
			t.Errorf("DeleteUserSessions = %d, %v; want 2", n, err)
		}
		wantStatus(t, b4.get("/admin/pets"), http.StatusSeeOther)
		wantStatus(t, b5.get("/admin/pets"), http.StatusSeeOther)

		// Idle too long: the session ends and its row goes.
		b6, _ := e.signedIn()
		wantRows(1)
		e.advance(2*time.Hour + time.Minute)
		wantStatus(t, b6.get("/admin/pets"), http.StatusSeeOther)
		wantRows(0)
	})
}

// Signing in again from a signed-in session also moves it to a new id and
// deletes the old one.
func TestSessionIDRotatesAtSecondSignIn(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		before := sessionCookie(t, b, e)
		wantStatus(t, b.post("/admin/login", url.Values{"csrf_token": {tok}, "username": {staffName}, "password": {staffPassword}}), http.StatusSeeOther)
		after := sessionCookie(t, b, e)
		if before == after {
			t.Fatal("the session id did not change at sign-in")
		}
		if n := e.sessionRows(); n != 1 {
			t.Errorf("%d session rows, want 1: the old one deleted", n)
		}
		planted := e.browser()
		planted.client.Jar.SetCookies(mustURL(t, e.srv.URL), []*http.Cookie{{Name: "petstore_session", Value: before}})
		wantStatus(t, planted.get("/admin/pets"), http.StatusSeeOther)
		wantStatus(t, b.get("/admin/pets"), http.StatusOK)
	})
}

// Behind https both kinds of session cookie (a visitor's and a signed-in
// one) are __Host- prefixed, Secure, HttpOnly and SameSite=Lax.
func TestSessionCookieBehindHTTPS(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		w, err := web.New(context.Background(), e.store, web.Options{PublicURL: "https://pets.example.com"})
		if err != nil {
			t.Fatal(err)
		}
		r := gin.New()
		w.Register(r)
		srv := httptest.NewTLSServer(r)
		t.Cleanup(srv.Close)
		client := srv.Client()
		client.Jar, _ = cookiejar.New(nil)
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		check := func(res *http.Response) {
			t.Helper()
			var ck *http.Cookie
			for _, c := range res.Cookies() {
				if c.Name == "__Host-petstore_session" {
					ck = c
				}
			}
			if ck == nil || !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" || ck.Domain != "" {
				t.Errorf("session cookie %+v (of %q), want __Host-, Secure, HttpOnly, SameSite=Lax, Path=/", ck, res.Header.Values("Set-Cookie"))
			}
		}
		res, err := client.Get(srv.URL + "/admin/login")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		check(res)
		tok := csrfInput(t, string(body))
		form := url.Values{"csrf_token": {tok}, "username": {staffName}, "password": {staffPassword}}
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/admin/login", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err = client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign in: %d", res.StatusCode)
		}
		check(res)
	})
}

// csrfInput returns the CSRF token of a page read as raw bytes.
func csrfInput(t *testing.T, body string) string {
	t.Helper()
	return testkit.CSRFToken(t, testkit.Reply{Body: []byte(body)})
}

// Many requests at once, on one session and on several: sign-ins, page
// views that refresh last-seen, flashes across redirects, sign-outs and
// visitors. Run with -race (make test does): the store shares nothing
// mutable between requests. Every answer is one a browser expects, and
// every signed-out session is gone from the table.
func TestSessionsConcurrent(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		const (
			sessions = 4
			workers  = 4 // per session
			rounds   = 6
		)
		type visitor struct {
			b   *browser
			tok string
		}
		var vs []visitor
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range sessions {
			wg.Go(func() {
				b := e.browser()
				tok, err := goSignIn(e, b)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				vs = append(vs, visitor{b, tok})
				mu.Unlock()
			})
		}
		wg.Wait()
		if len(vs) != sessions {
			t.Fatalf("%d of %d sign-ins worked", len(vs), sessions)
		}
		ok := func(what string, status int, err error, want ...int) {
			if err != nil {
				t.Errorf("%s: %v", what, err)
				return
			}
			for _, w := range want {
				if status == w {
					return
				}
			}
			t.Errorf("%s: status %d, want one of %v", what, status, want)
		}
		for _, v := range vs {
			for w := range workers {
				wg.Go(func() {
					for i := range rounds {
						switch (w + i) % 4 {
						case 0, 1:
							st, _, err := goDo(e, v.b, http.MethodGet, "/admin/pets", nil)
							ok("page view", st, err, http.StatusOK)
						case 2:
							form := url.Values{"csrf_token": {v.tok}, "name": {fmt.Sprintf("Rex %d-%d", w, i)}, "categoryId": {"1"}}
							st, _, err := goDo(e, v.b, http.MethodPost, "/admin/pets", form)
							ok("add pet", st, err, http.StatusSeeOther)
							st, body, err := goDo(e, v.b, http.MethodGet, "/admin/pets", nil)
							ok("page after adding", st, err, http.StatusOK)
							_ = body // the flash may have been shown by a sibling request
						case 3:
							e.advance(30 * time.Second) // makes last-seen writes due
							st, _, err := goDo(e, e.browser(), http.MethodGet, "/admin/login", nil)
							ok("visitor", st, err, http.StatusOK)
						}
					}
				})
			}
		}
		// Meanwhile, more sign-ins and sign-outs.
		for range 2 {
			wg.Go(func() {
				for range rounds {
					b := e.browser()
					tok, err := goSignIn(e, b)
					if err != nil {
						t.Error(err)
						return
					}
					st, _, err := goDo(e, b, http.MethodPost, "/admin/logout", url.Values{"csrf_token": {tok}})
					ok("sign out", st, err, http.StatusSeeOther)
				}
			})
		}
		wg.Wait()
		if n := e.sessionRows(); n != sessions {
			t.Errorf("%d session rows, want %d (signed-out sessions leave none)", n, sessions)
		}
		// Sign-outs racing page views of the same session: the session ends
		// and stays ended.
		for _, v := range vs {
			for range workers {
				wg.Go(func() {
					st, _, err := goDo(e, v.b, http.MethodGet, "/admin/pets", nil)
					ok("page view while signing out", st, err, http.StatusOK, http.StatusSeeOther)
				})
			}
			wg.Go(func() {
				st, _, err := goDo(e, v.b, http.MethodPost, "/admin/logout", url.Values{"csrf_token": {v.tok}})
				ok("sign out", st, err, http.StatusSeeOther)
			})
		}
		wg.Wait()
		if n := e.sessionRows(); n != 0 {
			t.Errorf("%d session rows after every sign-out, want 0", n)
		}
		for _, v := range vs {
			st, _, err := goDo(e, v.b, http.MethodGet, "/admin/pets", nil)
			ok("after sign-out", st, err, http.StatusSeeOther)
		}
	})
}

// goDo sends a request for a goroutine (no t.Fatal): a form is posted as a
// same-origin browser would.
func goDo(e *env, b *browser, method, path string, form url.Values) (int, string, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		return 0, "", err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	res, err := b.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b2, err := io.ReadAll(res.Body)
	return res.StatusCode, string(b2), err
}

// goSignIn signs b in from a goroutine and returns its CSRF token.
func goSignIn(e *env, b *browser) (string, error) {
	token := func(body string) string {
		_, rest, _ := strings.Cut(body, `name="csrf_token" value="`)
		tok, _, _ := strings.Cut(rest, `"`)
		return tok
	}
	st, body, err := goDo(e, b, http.MethodGet, "/admin/login", nil)
	if err != nil || st != http.StatusOK {
		return "", fmt.Errorf("sign-in page: %d, %v", st, err)
	}
	form := url.Values{"csrf_token": {token(body)}, "username": {staffName}, "password": {staffPassword}}
	// Sign-ins beyond the password-hashing capacity are answered 503 at
	// once (models.Options.PasswordHashers); a browser's user tries again.
	// Tries go on for seconds, not a count: under -race on a loaded
	// 2-core machine one bcrypt takes hundreds of milliseconds.
	for deadline := time.Now().Add(15 * time.Second); ; {
		st, _, err = goDo(e, b, http.MethodPost, "/admin/login", form)
		if err != nil || st != http.StatusServiceUnavailable || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil || st != http.StatusSeeOther {
		return "", fmt.Errorf("sign in: %d, %v", st, err)
	}
	st, body, err = goDo(e, b, http.MethodGet, "/admin/pets", nil)
	if err != nil || st != http.StatusOK {
		return "", fmt.Errorf("pets after sign-in: %d, %v", st, err)
	}
	return token(body), nil
}
