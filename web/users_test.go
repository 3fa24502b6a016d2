package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"petstore/models"
)

// staffNames returns the usernames in the staff table, top to bottom.
func staffNames(p page) []string {
	var names []string
	p.Doc.Find(`[data-testid="staff-row"] th`).Each(func(_ int, s *goquery.Selection) {
		names = append(names, strings.Join(strings.Fields(s.Text()), " "))
	})
	return names
}

// wantFieldError checks that the field labelled label is marked invalid
// and described by an element holding msg.
func wantFieldError(t *testing.T, p page, label, msg string) {
	t.Helper()
	field := labelled(t, p, label)
	if field.AttrOr("aria-invalid", "") != "true" {
		t.Errorf("%s: not marked invalid", label)
	}
	ids := strings.Fields(field.AttrOr("aria-describedby", ""))
	if len(ids) == 0 || strings.TrimSpace(p.Doc.Find("#"+ids[0]).Text()) != msg {
		t.Errorf("%s: description %v does not hold %q:\n%s", label, ids, msg, p.Body)
	}
}

// passwordsSentBack reports whether any password field comes back filled in.
func passwordsSentBack(p page) bool {
	return p.Doc.Find(`input[type="password"]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
		return s.AttrOr("value", "") != ""
	}).Length() > 0
}

func TestStaffPageNeedsSignIn(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b := e.browser()
		p := b.get("/admin/users")
		wantStatus(t, p, http.StatusSeeOther)
		if got := p.Header.Get("Location"); got != "/admin/login?next=%2Fadmin%2Fusers" {
			t.Errorf("Location %q", got)
		}
		tok := csrf(t, b.get("/admin/login"))
		wantStatus(t, b.post("/admin/users", url.Values{"csrf_token": {tok}, "username": {"mallory"}, "password": {"long enough password"}}), http.StatusSeeOther)
		wantStatus(t, b.post("/admin/password", url.Values{"csrf_token": {tok}, "current": {staffPassword}, "new": {"long enough password"},
			"confirm": {"long enough password"}}), http.StatusSeeOther)
		if users, _ := e.store.ListUsers(context.Background()); len(users) != 1 {
			t.Errorf("%d accounts after refused adds", len(users))
		}
		if _, err := e.store.CheckPassword(context.Background(), staffName, staffPassword); err != nil {
			t.Errorf("password changed without a session: %v", err)
		}
	})
}

func TestStaffPage(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		if _, err := e.store.CreateUser(context.Background(), "bob", "bob's long password", "test"); err != nil {
			t.Fatal(err)
		}
		b, _ := e.signedIn()
		p := b.get("/admin/users")
		wantStatus(t, p, http.StatusOK)
		if n := p.Doc.Find("h1").Length(); n != 1 || text(p, "h1") != "Staff" {
			t.Errorf("%d h1, first %q; want one \"Staff\"", n, text(p, "h1"))
		}
		if got := strings.Join(staffNames(p), "|"); got != "alice (you)|bob" {
			t.Errorf("staff list %q", got)
		}
		if !strings.HasSuffix(text(p, `[data-testid="staff-row"] td.nowrap`), " UTC") {
			t.Errorf("created %q", text(p, `[data-testid="staff-row"] td.nowrap`))
		}
		if text(p, `nav [aria-current="page"]`) != "Staff" {
			t.Errorf("current navigation entry %q", text(p, `nav [aria-current="page"]`))
		}
		forms := []struct {
			action, button string
			fields         map[string]string // label -> name
		}{
			{"/admin/users", "Add staff member", map[string]string{"Username": "username", "Password": "password", "Role": "role"}},
		}
		for _, f := range forms {
			form := p.Doc.Find(`form[method="post"][action="` + f.action + `"]`)
			if form.Length() != 1 || form.Find(`input[name="csrf_token"]`).Length() != 1 ||
				strings.TrimSpace(form.Find(`button[type="submit"]`).Text()) != f.button {
				t.Errorf("no form to %s with a token and the button %q", f.action, f.button)
			}
			for label, name := range f.fields {
				field := labelled(t, p, label)
				if field.AttrOr("name", "") != name || field.Closest("form").AttrOr("action", "") != f.action {
					t.Errorf("%q is %q in the form to %q", label, field.AttrOr("name", ""), field.Closest("form").AttrOr("action", ""))
				}
			}
		}
		// Headings go h1, then h2s.
		var levels []string
		p.Doc.Find("main h1, main h2, main h3").Each(func(_ int, s *goquery.Selection) { levels = append(levels, goquery.NodeName(s)) })
		if strings.Join(levels, " ") != "h1 h2 h2 h2" {
			t.Errorf("headings %v", levels)
		}
	})
}

func TestAddStaffMember(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		p := b.post("/admin/users", url.Values{"csrf_token": {tok}, "username": {"Bob"}, "password": {"bob's long password"}})
		wantStatus(t, p, http.StatusSeeOther)
		if loc := p.Header.Get("Location"); loc != "/admin/users" {
			t.Errorf("Location %q", loc)
		}
		if _, err := e.store.CheckPassword(context.Background(), "bob", "bob's long password"); err != nil {
			t.Fatalf("the new member cannot sign in: %v", err)
		}
		list := b.get("/admin/users")
		if got := text(list, `[data-testid="flash"]`); got != "Staff member bob added as an editor." {
			t.Errorf("flash %q", got)
		}
		if got := strings.Join(staffNames(list), "|"); got != "alice (you)|bob" {
			t.Errorf("staff list %q", got)
		}
		if strings.Contains(list.Body, "bob's long password") {
			t.Error("the password is on the page")
		}

		// htmx gets the section back, with the new member and a message.
		p = b.post("/admin/users", url.Values{"username": {"carol"}, "password": {"carol's long password"}}, "HX-Request", "true", "X-CSRF-Token", tok)
		wantStatus(t, p, http.StatusOK)
		if strings.Contains(p.Body, "<html") || p.Doc.Find("section#staff-section").Length() != 1 {
			t.Fatalf("htmx got more or less than the section:\n%s", p.Body)
		}
		if got := strings.Join(staffNames(p), "|"); got != "alice (you)|bob|carol" {
			t.Errorf("staff list %q", got)
		}
		if got := text(p, `#flash[hx-swap-oob] [data-testid="flash"]`); got != "Staff member carol added as an editor." {
			t.Errorf("flash %q", got)
		}
		if labelled(t, p, "Username").AttrOr("value", "x") != "" {
			t.Error("the add form is not emptied after success")
		}
	})
}

func TestAddStaffMemberInvalid(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		tests := []struct {
			name, username, password string
			label, msg               string
			htmx                     bool
		}{
			{"short password", "dave", "short", "Password", "Password must be at least 12 characters.", false},
			{"bad username", "<script>alert(1)</script>", "a long enough password", "Username",
				"Username must be 1 to 64 letters, digits, dots, dashes or underscores.", false},
			{"empty username", "", "a long enough password", "Username",
				"Username must be 1 to 64 letters, digits, dots, dashes or underscores.", false},
			{"duplicate", "Alice", "a long enough password", "Username", `A staff account named "alice" already exists.`, false},
			{"short password via htmx", "dave", "short", "Password", "Password must be at least 12 characters.", true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var headers []string
				if tt.htmx {
					headers = []string{"HX-Request", "true"}
				}
				p := b.post("/admin/users", url.Values{"csrf_token": {tok}, "username": {tt.username}, "password": {tt.password}}, headers...)
				wantStatus(t, p, http.StatusUnprocessableEntity)
				if tt.htmx == (p.Doc.Find("html body main").Length() == 1) {
					t.Errorf("htmx %v: got the whole page %v", tt.htmx, !tt.htmx)
				}
				wantFieldError(t, p, tt.label, tt.msg)
				if got := labelled(t, p, "Username").AttrOr("value", ""); got != tt.username {
					t.Errorf("typed username not kept: %q", got)
				}
				if passwordsSentBack(p) || strings.Contains(p.Body, "<script>alert") {
					t.Error("password sent back, or the username unescaped")
				}
				if users, _ := e.store.ListUsers(context.Background()); len(users) != 1 {
					t.Errorf("%d accounts, want only alice", len(users))
				}
			})
		}
	})
}

func TestChangePassword(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		const newPassword = "a brand new password"
		b, tok := e.signedIn()
		other, _ := e.signedIn() // the same account in another browser
		check := func(password string) bool {
			_, err := e.store.CheckPassword(context.Background(), staffName, password)
			return err == nil
		}

		// The form is the account page's first section, and posts to
		// /admin/password; the old address leads to it.
		account := b.get("/admin/account")
		wantStatus(t, account, http.StatusOK)
		if id := account.Doc.Find("main section").First().AttrOr("id", ""); id != "password" {
			t.Errorf("first section of the account page %q, want the password", id)
		}
		form := account.Doc.Find(`#password form[method="post"][action="/admin/password"]`)
		if form.Length() != 1 || form.Find(`input[name="csrf_token"]`).Length() != 1 ||
			strings.TrimSpace(form.Find(`button[type="submit"]`).Text()) != "Change password" {
			t.Fatalf("no password form with a token and the button \"Change password\":\n%s", account.Body)
		}
		for label, name := range map[string]string{"Current password": "current", "New password": "new", "New password again": "confirm"} {
			field := labelled(t, account, label)
			if field.AttrOr("name", "") != name || field.AttrOr("type", "") != "password" || field.Closest("form").AttrOr("action", "") != "/admin/password" {
				t.Errorf("%q is %q (%s) in the form to %q", label, field.AttrOr("name", ""), field.AttrOr("type", ""), field.Closest("form").AttrOr("action", ""))
			}
		}
		if p := b.get("/admin/password"); p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/admin/account#password" {
			t.Errorf("GET /admin/password: %d to %q", p.Status, p.Header.Get("Location"))
		}
		// The Staff page no longer holds it.
		if n := b.get("/admin/users").Doc.Find(`input[name="current"]`).Length(); n != 0 {
			t.Errorf("%d current-password fields on the Staff page", n)
		}

		tests := []struct {
			name, current, next, confirm, label, msg string
		}{
			{"wrong current password", "not my password", newPassword, newPassword, "Current password", "The current password is not right."},
			{"short new password", staffPassword, "short", "short", "New password", "Password must be at least 12 characters."},
			{"confirmation differs", staffPassword, newPassword, newPassword + "!", "New password again", "The two new passwords are not the same."},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := b.post("/admin/password", url.Values{"csrf_token": {tok}, "current": {tt.current}, "new": {tt.next}, "confirm": {tt.confirm}})
				wantStatus(t, p, http.StatusUnprocessableEntity)
				wantFieldError(t, p, tt.label, tt.msg)
				// The refusal is shown on the account page, whole.
				if text(p, "h1") != "Your account" || p.Doc.Find(`[data-testid="two-step"]`).Length() != 1 {
					t.Errorf("refusal not on the account page:\n%s", p.Body)
				}
				if passwordsSentBack(p) {
					t.Error("a typed password is sent back")
				}
				if !check(staffPassword) || check(tt.next) {
					t.Error("the password changed")
				}
				wantStatus(t, other.get("/admin/users"), http.StatusOK)
			})
		}

		// A forged request changes nothing.
		wantStatus(t, b.post("/admin/password", url.Values{"csrf_token": {"forged"}, "current": {staffPassword}, "new": {newPassword},
			"confirm": {newPassword}}), http.StatusForbidden)
		if !check(staffPassword) {
			t.Fatal("a refused request changed the password")
		}

		p := b.post("/admin/password", url.Values{"csrf_token": {tok}, "current": {staffPassword}, "new": {newPassword}, "confirm": {newPassword}})
		wantStatus(t, p, http.StatusSeeOther)
		if loc := p.Header.Get("Location"); loc != "/admin/account" {
			t.Errorf("Location %q", loc)
		}
		if !check(newPassword) || check(staffPassword) {
			t.Fatal("the password did not change")
		}
		// This browser stays signed in and is back on its account page; the
		// other one is signed out.
		back := b.get("/admin/account")
		wantStatus(t, back, http.StatusOK)
		if got := text(back, `[data-testid="flash"]`); got != "Your password was changed. Other sessions of your account have been signed out." {
			t.Errorf("flash %q", got)
		}
		wantStatus(t, b.get("/admin/api-keys"), http.StatusOK)
		// Before the other browser comes back, its session is gone from
		// the list: the change ended it, it is not merely refused later.
		if rows := sessionRows(b.get("/admin/sessions")); len(rows) != 1 || !strings.HasSuffix(rows[0], "| this") {
			t.Errorf("sessions after a password change: %q, want only this one", rows)
		}
		wantStatus(t, other.get("/admin/users"), http.StatusSeeOther)
		// And the new password signs in.
		again := e.browser()
		login := again.get("/admin/login")
		res := again.post("/admin/login", url.Values{"csrf_token": {csrf(t, login)}, "username": {staffName}, "password": {newPassword}})
		wantStatus(t, res, http.StatusSeeOther)
		if u, err := e.store.CheckPassword(context.Background(), staffName, newPassword); err != nil || u.SessionVersion < 2 {
			t.Errorf("after the change: %+v, %v", u, err)
		}
	})
}

// otherPassword is the password of the second account the tests make.
const otherPassword = "bob's very own passphrase"

// signInAs posts the sign-in form as username (the kit's sign-in) and
// returns the answer.
func (b *browser) signInAs(username, password string) page {
	b.e.t.Helper()
	return b.pageOf(b.c.SignIn(b.e.t, username, password))
}

// newMember creates bob and returns his id and a browser signed in as him.
func (e *env) newMember(t *testing.T) (int64, *browser) {
	t.Helper()
	u, err := e.store.CreateUser(context.Background(), "bob", otherPassword, "test")
	if err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	wantStatus(t, b.signInAs("bob", otherPassword), http.StatusSeeOther)
	wantStatus(t, b.get("/admin/pets"), http.StatusOK)
	return u.ID, b
}

// wantSignedOut fails unless the browser is sent to the sign-in page.
func wantSignedOut(t *testing.T, b *browser) {
	t.Helper()
	p := b.get("/admin/pets")
	wantStatus(t, p, http.StatusSeeOther)
	if loc := p.Header.Get("Location"); !strings.HasPrefix(loc, "/admin/login") {
		t.Errorf("signed-out browser sent to %q, want the sign-in page", loc)
	}
}

func TestMemberPage(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		id, _ := e.newMember(t)
		if _, _, err := e.store.CreateAPIKey(context.Background(), "bob's app", "bob"); err != nil {
			t.Fatal(err)
		}
		b, _ := e.signedIn()
		list := b.get("/admin/users")
		link := list.Doc.Find(`[data-testid="staff-row"] a:contains("bob")`)
		if href := link.AttrOr("href", ""); href != fmt.Sprintf("/admin/users/%d", id) {
			t.Fatalf("link to bob's page %q", href)
		}
		if got := text(list, `[data-testid="staff-row"]:contains("bob") [data-testid="staff-state"]`); got != "Enabled" {
			t.Errorf("bob's state in the list %q", got)
		}
		p := b.get(fmt.Sprintf("/admin/users/%d", id))
		wantStatus(t, p, http.StatusOK)
		if got := text(p, "h1"); got != "Staff member bob" {
			t.Errorf("h1 %q", got)
		}
		if got := text(p, `[data-testid="state"]`); got != "Enabled" {
			t.Errorf("state %q", got)
		}
		if got := text(p, `dd:contains("UTC")`); got == "" {
			t.Error("no created or sign-in time")
		}
		if !strings.Contains(text(p, `[data-testid="keys-note"]`), "keep working after the account is disabled") ||
			!strings.Contains(text(p, `[data-testid="member-keys"]`), "bob's app") {
			t.Errorf("the page does not say bob's keys keep working, or does not list them:\n%s", p.Body)
		}
		for _, action := range []string{"disable", "reset-password", "end-sessions"} {
			form := p.Doc.Find(fmt.Sprintf(`form[method="post"][action="/admin/users/%d/%s"]`, id, action))
			if form.Length() != 1 || form.Find(`input[name="csrf_token"]`).Length() != 1 {
				t.Errorf("no %s form with a CSRF token", action)
			}
		}
		// One's own page offers neither disable nor reset.
		me, _ := e.store.FindUser(context.Background(), staffName)
		own := b.get(fmt.Sprintf("/admin/users/%d", me.ID))
		if own.Doc.Find(`[data-testid="action-disable"], [data-testid="action-reset-password"]`).Length() != 0 {
			t.Error("one's own page offers to disable or reset it")
		}
		for _, path := range []string{"/admin/users/999", "/admin/users/x", "/admin/users/0"} {
			wantStatus(t, b.get(path), http.StatusNotFound)
		}
	})
}

func TestDisableMember(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		id, bob := e.newMember(t)
		b, tok := e.signedIn()
		member := fmt.Sprintf("/admin/users/%d", id)

		// A forged request changes nothing.
		wantStatus(t, b.post(member+"/disable", url.Values{"csrf_token": {"forged"}}), http.StatusForbidden)
		wantStatus(t, bob.get("/admin/pets"), http.StatusOK)

		// Without the confirmation: the question, nothing done.
		wantConfirmation(t, b.post(member+"/disable", url.Values{"csrf_token": {tok}}), member+"/disable", "Disable bob's account?")
		wantStatus(t, bob.get("/admin/pets"), http.StatusOK)

		p := b.post(member+"/disable", url.Values{"csrf_token": {tok}, "confirm": {"yes"}})
		wantStatus(t, p, http.StatusSeeOther)
		if loc := p.Header.Get("Location"); loc != member {
			t.Errorf("Location %q", loc)
		}
		page := b.get(member)
		if got := text(page, `[data-testid="flash"]`); !strings.Contains(got, "bob is disabled") || !strings.Contains(got, "API keys keep working") {
			t.Errorf("flash %q", got)
		}
		if got := text(page, `[data-testid="state"]`); !strings.HasPrefix(got, "Disabled since ") {
			t.Errorf("state %q", got)
		}
		if page.Doc.Find(`[data-testid="action-enable"]`).Length() != 1 {
			t.Error("no enable form on a disabled member's page")
		}
		// bob's live session ends at once, and sign-in is refused with a
		// clear message, but only to the right password.
		wantSignedOut(t, bob)
		res := e.browser().signInAs("bob", otherPassword)
		wantStatus(t, res, http.StatusUnauthorized)
		if got := text(res, `[data-testid="login-error"]`); got != "This account is disabled." {
			t.Errorf("sign-in error %q", got)
		}
		res = e.browser().signInAs("bob", "not bob's password at all")
		if got := text(res, `[data-testid="login-error"]`); got != "Wrong username or password." {
			t.Errorf("wrong password on a disabled account: %q", got)
		}

		// Nobody disables themself from the console.
		me, _ := e.store.FindUser(context.Background(), staffName)
		p = b.post(fmt.Sprintf("/admin/users/%d/disable", me.ID), url.Values{"csrf_token": {tok}})
		wantStatus(t, p, http.StatusConflict)
		if got := text(p, `[data-testid="member-error"]`); got != "You cannot disable your own account." {
			t.Errorf("refusal %q", got)
		}
		if u, _ := e.store.GetUser(context.Background(), me.ID); u.Disabled() {
			t.Fatal("alice disabled herself")
		}

		p = b.post(member+"/enable", url.Values{"csrf_token": {tok}})
		wantStatus(t, p, http.StatusSeeOther)
		if got := text(b.get(member), `[data-testid="state"]`); got != "Enabled" {
			t.Errorf("state after enable %q", got)
		}
		wantStatus(t, e.browser().signInAs("bob", otherPassword), http.StatusSeeOther)
		audit := b.get("/admin/audit?target=" + url.QueryEscape(fmt.Sprintf("user:%d", id)))
		for _, action := range []string{"user.disabled", "user.enabled"} {
			if !strings.Contains(audit.Body, action) {
				t.Errorf("audit trail lacks %s", action)
			}
		}
	})
}

func TestResetMemberPassword(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		id, bob := e.newMember(t)
		b, tok := e.signedIn()
		member := fmt.Sprintf("/admin/users/%d", id)

		wantConfirmation(t, b.post(member+"/reset-password", url.Values{"csrf_token": {tok}}), member+"/reset-password", "Reset bob's password?")
		wantStatus(t, bob.get("/admin/pets"), http.StatusOK)

		p := b.post(member+"/reset-password", url.Values{"csrf_token": {tok}, "confirm": {"yes"}})
		wantStatus(t, p, http.StatusOK)
		otp := p.Doc.Find(`[data-testid="one-time-password"] input`).AttrOr("value", "")
		if len(otp) != 24 {
			t.Fatalf("one-time password %q not shown:\n%s", otp, p.Body)
		}
		if p.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("Cache-Control %q", p.Header.Get("Cache-Control"))
		}
		// Shown once: not on the next page, not in the audit trail.
		again := b.get(member)
		if strings.Contains(again.Body, otp) || strings.Contains(b.get("/admin/audit").Body, otp) {
			t.Error("the one-time password is shown again")
		}
		if got := text(again, `[data-testid="password-state"]`); !strings.HasPrefix(got, "Reset") {
			t.Errorf("password state %q", got)
		}
		wantSignedOut(t, bob)
		wantStatus(t, e.browser().signInAs("bob", otherPassword), http.StatusUnauthorized)

		// The one-time password signs in, to the account page's password
		// form only.
		bob = e.browser()
		wantStatus(t, bob.signInAs("bob", otp), http.StatusSeeOther)
		for _, path := range []string{"/admin/pets", "/admin/users", "/admin/api-keys", "/admin", member, "/admin/sessions", "/admin/account/totp"} {
			p := bob.get(path)
			wantStatus(t, p, http.StatusSeeOther)
			if loc := p.Header.Get("Location"); loc != "/admin/account#password" {
				t.Errorf("GET %s went to %q, want /admin/account#password", path, loc)
			}
		}
		if p := bob.get("/admin/pets", "HX-Request", "true"); p.Header.Get("HX-Redirect") != "/admin/account#password" {
			t.Errorf("htmx request: status %d, HX-Redirect %q", p.Status, p.Header.Get("HX-Redirect"))
		}
		forced := bob.get("/admin/account")
		wantStatus(t, forced, http.StatusOK)
		if text(forced, `[data-testid="must-change-password"]`) == "" || text(forced, "#password-heading") != "Choose a new password" {
			t.Errorf("the account page does not ask for a new password:\n%s", forced.Body)
		}
		// Only the password: the rest is closed until it is done.
		if n := forced.Doc.Find(`[data-testid="two-step"], [data-testid="passkeys"]`).Length(); n != 0 {
			t.Errorf("%d other sections shown to a member who must change their password", n)
		}
		if f := labelled(t, forced, "One-time password"); f.AttrOr("name", "") != "current" || f.Closest("form").AttrOr("action", "") != "/admin/password" {
			t.Errorf("one-time password field %q in the form to %q", f.AttrOr("name", ""), f.Closest("form").AttrOr("action", ""))
		}
		btok := csrf(t, forced)
		// It signed in once: another browser is refused, and told why.
		second := e.browser().signInAs("bob", otp)
		wantStatus(t, second, http.StatusUnauthorized)
		if !strings.Contains(second.Body, "This one-time password has expired or has been used already.") {
			t.Errorf("a second sign-in with the one-time password:\n%s", second.Body)
		}
		// Nothing else can be done either.
		p = bob.post("/admin/api-keys", url.Values{"csrf_token": {btok}, "name": {"sneaky"}})
		wantStatus(t, p, http.StatusSeeOther)
		if keys, _ := e.store.ListAPIKeys(context.Background()); len(keys) != 0 {
			t.Error("a member who must change their password created a key")
		}
		p = bob.post("/admin/account/totp", url.Values{"csrf_token": {btok}})
		wantStatus(t, p, http.StatusSeeOther)
		if st, _ := e.store.TwoFactorState(context.Background(), id); st.Pending || st.On() {
			t.Error("a member who must change their password began two-step sign-in")
		}
		p = bob.post("/admin/password", url.Values{"csrf_token": {btok}, "current": {otp}, "new": {"password1234"}, "confirm": {"password1234"}})
		wantStatus(t, p, http.StatusUnprocessableEntity)
		wantFieldError(t, p, "New password", "This password is on a list of commonly used passwords; choose another.")
		if p.Doc.Find(`[data-testid="two-step"]`).Length() != 0 || text(p, "#password-heading") != "Choose a new password" {
			t.Errorf("the refusal does not keep to the password form:\n%s", p.Body)
		}
		const chosen = "my own new passphrase"
		p = bob.post("/admin/password", url.Values{"csrf_token": {btok}, "current": {otp}, "new": {chosen}, "confirm": {chosen + " "}})
		wantStatus(t, p, http.StatusUnprocessableEntity)
		wantFieldError(t, p, "New password again", "The two new passwords are not the same.")
		p = bob.post("/admin/password", url.Values{"csrf_token": {btok}, "current": {otp}, "new": {chosen}, "confirm": {chosen}})
		wantStatus(t, p, http.StatusSeeOther)
		if loc := p.Header.Get("Location"); loc != "/admin/account" {
			t.Errorf("after the change: Location %q", loc)
		}
		back := bob.get("/admin/account")
		wantStatus(t, back, http.StatusOK)
		if got := text(back, `[data-testid="flash"]`); got != "Your new password is set. Welcome back." {
			t.Errorf("flash %q", got)
		}
		if back.Doc.Find(`[data-testid="two-step"]`).Length() != 1 || text(back, "#password-heading") != "Password" {
			t.Errorf("the account page is not whole again:\n%s", back.Body)
		}
		wantStatus(t, bob.get("/admin/pets"), http.StatusOK)
		wantStatus(t, bob.get("/admin/users"), http.StatusOK)
		wantStatus(t, e.browser().signInAs("bob", chosen), http.StatusSeeOther)
		wantStatus(t, e.browser().signInAs("bob", otp), http.StatusUnauthorized)

		// Nobody resets their own password from here.
		me, _ := e.store.FindUser(context.Background(), staffName)
		wantStatus(t, b.post(fmt.Sprintf("/admin/users/%d/reset-password", me.ID), url.Values{"csrf_token": {tok}}), http.StatusConflict)
	})
}

// A member who must change their password can still sign out.
func TestForcedPasswordSignOut(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		id, _ := e.newMember(t)
		_, otp, err := e.store.ResetPassword(context.Background(), id, "test")
		if err != nil {
			t.Fatal(err)
		}
		bob := e.browser()
		wantStatus(t, bob.signInAs("bob", otp), http.StatusSeeOther)
		tok := csrf(t, bob.get("/admin/account"))
		p := bob.post("/admin/logout", url.Values{"csrf_token": {tok}})
		wantStatus(t, p, http.StatusSeeOther)
		if loc := p.Header.Get("Location"); loc != "/admin/login?signed_out=1" {
			t.Errorf("Location %q", loc)
		}
		wantSignedOut(t, bob)
	})
}

func TestEndMemberSessions(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		id, bob := e.newMember(t)
		bob2 := e.browser()
		wantStatus(t, bob2.signInAs("bob", otherPassword), http.StatusSeeOther)
		b, tok := e.signedIn()

		end := fmt.Sprintf("/admin/users/%d/end-sessions", id)
		wantConfirmation(t, b.post(end, url.Values{"csrf_token": {tok}}), end, "End all of bob's sessions?")
		wantStatus(t, bob.get("/admin/pets"), http.StatusOK)

		p := b.post(end, url.Values{"csrf_token": {tok}, "confirm": {"yes"}})
		wantStatus(t, p, http.StatusSeeOther)
		if got := text(b.get(fmt.Sprintf("/admin/users/%d", id)), `[data-testid="flash"]`); got != "All sessions of bob have ended." {
			t.Errorf("flash %q", got)
		}
		wantSignedOut(t, bob)
		wantSignedOut(t, bob2)
		wantStatus(t, b.get("/admin/pets"), http.StatusOK)
		// bob can sign in again.
		wantStatus(t, e.browser().signInAs("bob", otherPassword), http.StatusSeeOther)

		// Ending one's own sessions signs this browser out too.
		other, _ := e.signedIn()
		me, _ := e.store.FindUser(context.Background(), staffName)
		p = b.post(fmt.Sprintf("/admin/users/%d/end-sessions", me.ID), url.Values{"csrf_token": {tok}, "confirm": {"yes"}})
		wantStatus(t, p, http.StatusSeeOther)
		wantSignedOut(t, b)
		wantSignedOut(t, other)
	})
}

// wantConfirmation checks that a dangerous action posted without its
// confirmation answered with the question: a form posting the action
// again with confirm=yes, its button styled as dangerous, and a Cancel.
func wantConfirmation(t *testing.T, p page, action, heading string) {
	t.Helper()
	wantStatus(t, p, http.StatusOK)
	form := p.Doc.Find(`[data-testid="confirm"] form`)
	if got := text(p, "h1"); got != heading {
		t.Errorf("confirmation heading %q, want %q", got, heading)
	}
	if form.AttrOr("action", "") != action || form.Find(`input[name="confirm"]`).AttrOr("value", "") != "yes" ||
		!form.Find(`button[type="submit"]`).HasClass("danger") || form.Find(`a[role="button"]`).Text() != "Cancel" {
		t.Errorf("confirmation of %s:\n%s", action, p.Body)
	}
}

// A member whose password was reset and whose role requires a second step
// they lack chooses the password first, then is led to the second step.
func TestForcedPasswordThenSecondStep(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		id, _ := e.newMember(t)
		if err := e.store.RequireTwoFactor(ctx, models.RoleEditor, true, "test"); err != nil {
			t.Fatal(err)
		}
		_, otp, err := e.store.ResetPassword(ctx, id, "test")
		if err != nil {
			t.Fatal(err)
		}
		bob := e.browser()
		wantStatus(t, bob.signInAs("bob", otp), http.StatusSeeOther)
		if p := bob.get("/admin/pets"); p.Header.Get("Location") != "/admin/account#password" {
			t.Errorf("first led to %q, want the password", p.Header.Get("Location"))
		}
		const chosen = "my own new passphrase"
		tok := csrf(t, bob.get("/admin/account"))
		p := bob.post("/admin/password", url.Values{"csrf_token": {tok}, "current": {otp}, "new": {chosen}, "confirm": {chosen}})
		wantStatus(t, p, http.StatusSeeOther)
		if _, err := e.store.CheckPassword(ctx, "bob", chosen); err != nil {
			t.Fatalf("the new password was not set: %v", err)
		}
		acct := bob.get("/admin/account")
		wantStatus(t, acct, http.StatusOK)
		if acct.Doc.Find(`[data-testid="must-set-up"]`).Length() != 1 {
			t.Errorf("not asked to set up a second step:\n%s", acct.Body)
		}
		if p := bob.get("/admin/pets"); p.Header.Get("Location") != "/admin/account" {
			t.Errorf("then led to %q, want the account page", p.Header.Get("Location"))
		}
	})
}
