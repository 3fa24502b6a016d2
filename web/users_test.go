package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
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
		wantStatus(t, b.post("/admin/users/password", url.Values{"csrf_token": {tok}, "current": {staffPassword}, "new": {"long enough password"}}), http.StatusSeeOther)
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
		if !strings.HasSuffix(text(p, `[data-testid="staff-row"] td`), " UTC") {
			t.Errorf("created %q", text(p, `[data-testid="staff-row"] td`))
		}
		if text(p, `nav [aria-current="page"]`) != "Staff" {
			t.Errorf("current navigation entry %q", text(p, `nav [aria-current="page"]`))
		}
		forms := []struct {
			action, button string
			fields         map[string]string // label -> name
		}{
			{"/admin/users", "Add staff member", map[string]string{"Username": "username", "Password": "password"}},
			{"/admin/users/password", "Change password", map[string]string{"Current password": "current", "New password": "new"}},
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
		if got := text(list, `[data-testid="flash"]`); got != "Staff member bob added." {
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
		if got := text(p, `#flash[hx-swap-oob] [data-testid="flash"]`); got != "Staff member carol added." {
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
			{"short password", "dave", "short", "Password", "Password must be at least 10 characters.", false},
			{"bad username", "<script>alert(1)</script>", "a long enough password", "Username",
				"Username must be 1 to 64 letters, digits, dots, dashes or underscores.", false},
			{"empty username", "", "a long enough password", "Username",
				"Username must be 1 to 64 letters, digits, dots, dashes or underscores.", false},
			{"duplicate", "Alice", "a long enough password", "Username", `A staff account named "alice" already exists.`, false},
			{"short password via htmx", "dave", "short", "Password", "Password must be at least 10 characters.", true},
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

		tests := []struct {
			name, current, next, label, msg string
		}{
			{"wrong current password", "not my password", newPassword, "Current password", "The current password is not right."},
			{"short new password", staffPassword, "short", "New password", "Password must be at least 10 characters."},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := b.post("/admin/users/password", url.Values{"csrf_token": {tok}, "current": {tt.current}, "new": {tt.next}})
				wantStatus(t, p, http.StatusUnprocessableEntity)
				wantFieldError(t, p, tt.label, tt.msg)
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
		wantStatus(t, b.post("/admin/users/password", url.Values{"csrf_token": {"forged"}, "current": {staffPassword}, "new": {newPassword}}), http.StatusForbidden)
		if !check(staffPassword) {
			t.Fatal("a refused request changed the password")
		}

		p := b.post("/admin/users/password", url.Values{"csrf_token": {tok}, "current": {staffPassword}, "new": {newPassword}})
		wantStatus(t, p, http.StatusSeeOther)
		if loc := p.Header.Get("Location"); loc != "/admin/users" {
			t.Errorf("Location %q", loc)
		}
		if !check(newPassword) || check(staffPassword) {
			t.Fatal("the password did not change")
		}
		// This browser stays signed in; the other one is signed out.
		list := b.get("/admin/users")
		wantStatus(t, list, http.StatusOK)
		if got := text(list, `[data-testid="flash"]`); got != "Your password was changed. Other sessions of your account have been signed out." {
			t.Errorf("flash %q", got)
		}
		wantStatus(t, b.get("/admin/api-keys"), http.StatusOK)
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
