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

// Browsers' User-Agent headers, and the names the sessions page gives them.
const (
	firefoxUA = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
	chromeUA  = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	safariUA  = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1"
)

// agent sends every request with a User-Agent header.
type agent struct {
	ua   string
	next http.RoundTripper
}

func (a agent) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("User-Agent", a.ua)
	return a.next.RoundTrip(req)
}

// signedInWith returns a browser with the User-Agent ua signed in as the
// staff account, and its CSRF token.
func (e *env) signedInWith(ua string) (*browser, string) {
	e.t.Helper()
	b := e.browser()
	b.client.Transport = agent{ua, b.client.Transport}
	return b, b.signIn()
}

// sessionRows returns the rows of the sessions page as "browser | address
// | last seen", and whether each is this browser's.
func sessionRows(p page) []string {
	var rows []string
	p.Doc.Find(`[data-testid="session-row"]`).Each(func(_ int, s *goquery.Selection) {
		row := strings.TrimSpace(s.Find(`[data-testid="session-browser"]`).Text()) + " | " +
			strings.TrimSpace(s.Find(`[data-testid="session-address"]`).Text()) + " | " +
			strings.TrimSpace(s.Find(`[data-testid="session-seen"]`).Text())
		if s.Find(`[data-testid="this-session"]`).Length() > 0 {
			row += " | this"
		}
		rows = append(rows, row)
	})
	return rows
}

// handleOf returns the session handle in the sign-out form of the row
// for browser name.
func handleOf(t *testing.T, p page, name string) string {
	t.Helper()
	h, ok := p.Doc.Find(`[data-testid="session-row"]:contains("` + name + `") input[name="session"]`).Attr("value")
	if !ok {
		t.Fatalf("no sign-out form for %s:\n%s", name, p.Body)
	}
	return h
}

func TestYourSessions(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		fx, tok := e.signedInWith(firefoxUA)
		e.advance(3 * time.Minute)
		ch, _ := e.signedInWith(chromeUA)
		if _, err := e.store.CreateUser(ctx, "bob", memberPassword, "test"); err != nil {
			t.Fatal(err)
		}
		bobs := e.browser()
		wantStatus(t, bobs.signInAs("bob", memberPassword), http.StatusSeeOther)

		p := fx.get("/admin/sessions")
		wantStatus(t, p, http.StatusOK)
		if text(p, "h1") != "Your sessions" || text(p, `nav [aria-current="page"]`) != "Sessions" {
			t.Errorf("heading %q, current navigation %q", text(p, "h1"), text(p, `nav [aria-current="page"]`))
		}
		rows := sessionRows(p)
		if len(rows) != 2 || rows[0] != "Firefox 128 on Linux | 127.0.0.1 | Now | this" ||
			!strings.HasPrefix(rows[1], "Chrome 131 on Windows | 127.0.0.1 | ") || !strings.HasSuffix(rows[1], " UTC") {
			t.Fatalf("sessions %q, want this Firefox first, then the Chrome", rows)
		}
		if strings.Contains(p.Body, chromeUA) || strings.Contains(p.Body, "bob") {
			t.Errorf("the page shows a raw User-Agent or another account's session")
		}
		// Each other session has a labelled button; this one signs out.
		if got := p.Doc.Find(`[data-testid="end-session"]`).AttrOr("aria-label", ""); got != "Sign out this session: Chrome 131 on Windows at 127.0.0.1" {
			t.Errorf("button label %q", got)
		}
		if p.Doc.Find(`[data-testid="session-row"]`).First().Find(`form[action="/admin/logout"]`).Length() != 1 {
			t.Error("this browser's row does not sign out")
		}

		// Another account's session cannot be ended from here.
		bobHandle := models.SessionHandle(sessionCookie(t, bobs, e))
		res := fx.post("/admin/sessions/end", url.Values{"csrf_token": {tok}, "session": {bobHandle}})
		wantStatus(t, res, http.StatusSeeOther)
		if got := text(fx.get("/admin/sessions"), `[data-testid="flash"]`); got != "That session had ended already." {
			t.Errorf("flash %q", got)
		}
		wantStatus(t, bobs.get("/admin/pets"), http.StatusOK)

		// Sign out the Chrome.
		res = fx.post("/admin/sessions/end", url.Values{"csrf_token": {tok}, "session": {handleOf(t, p, "Chrome")}})
		wantStatus(t, res, http.StatusSeeOther)
		if loc := res.Header.Get("Location"); loc != "/admin/sessions" {
			t.Errorf("Location %q", loc)
		}
		after := fx.get("/admin/sessions")
		if got := text(after, `[data-testid="flash"]`); got != "Signed out Chrome 131 on Windows at 127.0.0.1." {
			t.Errorf("flash %q", got)
		}
		if rows := sessionRows(after); len(rows) != 1 || !strings.HasSuffix(rows[0], "this") {
			t.Errorf("sessions after signing one out: %q", rows)
		}
		if text(after, `[data-testid="only-session"]`) == "" || after.Doc.Find(`form[action="/admin/sessions/end-others"]`).Length() != 0 {
			t.Error("with one session left the page still offers to sign out the others")
		}
		p = ch.get("/admin/pets")
		wantStatus(t, p, http.StatusSeeOther)
		if !strings.HasPrefix(p.Header.Get("Location"), "/admin/login") {
			t.Errorf("the signed-out Chrome goes to %q", p.Header.Get("Location"))
		}

		// Everywhere else, with htmx: the list comes back with a message.
		sa, _ := e.signedInWith(safariUA)
		ch2, _ := e.signedInWith(chromeUA)
		// Asked first: the form's htmx dialog adds the confirmation; a post
		// without it (no JavaScript) gets the question and signs no one out.
		list := fx.get("/admin/sessions")
		if f := list.Doc.Find(`form[action="/admin/sessions/end-others"]`); f.AttrOr("hx-confirm", "") == "" ||
			f.AttrOr("hx-vals", "") != `{"confirm": "yes"}` || !f.Find("button").HasClass("danger") {
			t.Errorf("the sign-out-everywhere-else form does not ask first or is not styled as dangerous")
		}
		wantConfirmation(t, fx.post("/admin/sessions/end-others", url.Values{"csrf_token": {tok}}), "/admin/sessions/end-others", "Sign out everywhere else?")
		wantStatus(t, sa.get("/admin/pets"), http.StatusOK)
		p = fx.post("/admin/sessions/end-others", url.Values{"confirm": {"yes"}}, "HX-Request", "true", "X-CSRF-Token", tok)
		wantStatus(t, p, http.StatusOK)
		if strings.Contains(p.Body, "<html") || p.Doc.Find("section#sessions-section").Length() != 1 {
			t.Fatalf("htmx got more or less than the section:\n%s", p.Body)
		}
		if got := text(p, `#flash[hx-swap-oob] [data-testid="flash"]`); got != "Signed out 2 other sessions. This browser stays signed in." {
			t.Errorf("flash %q", got)
		}
		if rows := sessionRows(p); len(rows) != 1 {
			t.Errorf("sessions after signing out the others: %q", rows)
		}
		for _, b := range []*browser{sa, ch2} {
			wantStatus(t, b.get("/admin/pets"), http.StatusSeeOther)
		}
		wantStatus(t, fx.get("/admin/pets"), http.StatusOK)
		wantStatus(t, bobs.get("/admin/pets"), http.StatusOK)

		// This session's own handle signs out.
		me := models.SessionHandle(sessionCookie(t, fx, e))
		wantStatus(t, fx.post("/admin/sessions/end", url.Values{"csrf_token": {tok}, "session": {me}}), http.StatusSeeOther)
		wantStatus(t, fx.get("/admin/pets"), http.StatusSeeOther)

		alice, _ := e.store.FindUser(ctx, staffName)
		var got []string
		events, _, _ := e.store.ListAuditEvents(ctx, models.AuditQuery{TargetType: models.TargetUser, TargetID: alice.ID})
		for _, ev := range events {
			if ev.Action == models.ActionSessionEnded || ev.Action == models.ActionSessionsEnded {
				got = append(got, ev.Actor+" "+ev.Action+" "+ev.Detail)
			}
		}
		want := []string{
			"alice user.sessions_ended username=alice; 2 other sessions; this one kept",
			"alice user.session_ended username=alice; Chrome 131 on Windows at 127.0.0.1",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("audit, newest first:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// Last seen moves at most once a minute: page views in between write
// nothing, and the list shows the time of the last write.
func TestSessionsLastSeen(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		fx, _ := e.signedInWith(firefoxUA)
		ch, _ := e.signedInWith(chromeUA)
		seen := func() string {
			t.Helper()
			rows := sessionRows(fx.get("/admin/sessions"))
			if len(rows) != 2 {
				t.Fatalf("sessions %q", rows)
			}
			return rows[1]
		}
		first := seen()
		e.advance(20 * time.Second)
		wantStatus(t, ch.get("/admin/pets"), http.StatusOK)
		if got := seen(); got != first {
			t.Errorf("a page view within the minute moved last seen: %q -> %q", first, got)
		}
		e.advance(2 * time.Minute)
		wantStatus(t, ch.get("/admin/pets"), http.StatusOK)
		if got := seen(); got == first {
			t.Errorf("a page view after two minutes did not move last seen: %q", got)
		}
	})
}
