package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"petstore/models"
	"petstore/server"
	"petstore/web"
)

// memberPassword is the password of the accounts these tests add.
const memberPassword = "correct-horse-battery-9"

// member adds an account with the role and returns it with a browser
// signed in as it and that session's CSRF token.
func (e *env) member(name string, role models.Role) (models.User, *browser, string) {
	e.t.Helper()
	u, err := e.store.CreateUserWithRole(context.Background(), name, memberPassword, role, "test")
	if err != nil {
		e.t.Fatal(err)
	}
	b := e.browser()
	wantStatus(e.t, b.signInAs(name, memberPassword), http.StatusSeeOther)
	return u, b, csrf(e.t, b.get("/admin/sessions"))
}

// fingerprint is everything a console request could change but the audit
// trail's refusals: every row of pets, keys, accounts and sessions, and the
// other audit events.
func (e *env) fingerprint() string {
	e.t.Helper()
	var b strings.Builder
	for _, q := range []string{
		"SELECT * FROM pets ORDER BY id",
		"SELECT * FROM api_keys ORDER BY id",
		"SELECT * FROM users ORDER BY id",
		"SELECT * FROM sessions ORDER BY id_hash",
		"SELECT COUNT(*) FROM audit_events WHERE action <> '" + models.ActionForbidden + "'",
	} {
		rows, err := e.store.SQLDB().QueryContext(context.Background(), q)
		if err != nil {
			e.t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				e.t.Fatal(err)
			}
			for _, v := range vals {
				if raw, ok := v.([]byte); ok {
					v = string(raw)
				}
				fmt.Fprintf(&b, "%v|", v)
			}
			b.WriteString("\n")
		}
		if err := rows.Close(); err != nil {
			e.t.Fatal(err)
		}
	}
	return b.String()
}

// refusals returns the audit rows of refused requests, newest first, as
// "actor target detail".
func (e *env) refusals() []string {
	e.t.Helper()
	events, _, err := e.store.ListAuditEvents(context.Background(), models.AuditQuery{Action: models.ActionForbidden, Limit: 200})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, ev := range events {
		out = append(out, fmt.Sprintf("%s %s:%d %s", ev.Actor, ev.TargetType, ev.TargetID, ev.Detail))
	}
	return out
}

// wantRefused checks that p is the console's 403 page for a member of
// role refused what needs need, and that it named them.
func wantRefused(t *testing.T, p page, role models.Role) {
	t.Helper()
	wantStatus(t, p, http.StatusForbidden)
	if got := text(p, "h1"); got != "Not allowed for your role" {
		t.Errorf("heading %q", got)
	}
	msg := text(p, ".error-page p")
	article := map[models.Role]string{models.RoleViewer: "a viewer", models.RoleEditor: "an editor"}[role]
	if !strings.Contains(msg, "Your account is "+article+", so nothing was changed.") {
		t.Errorf("message %q does not name the role %s", msg, role)
	}
	if !strings.HasPrefix(p.Header.Get("Content-Type"), "text/html") || p.Header.Get("Petstore-Refusal") != "role" ||
		p.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("headers %v", p.Header)
	}
}

// routeCase is one signed-in console route as a member of each role
// reaches it: the status each gets, where 403 is a refusal for the role.
type routeCase struct {
	method, route string // the route as registered
	path          string
	form          func(role models.Role) url.Values
	want          map[models.Role]int
}

func everyone(status int) map[models.Role]int {
	return map[models.Role]int{models.RoleViewer: status, models.RoleEditor: status, models.RoleAdmin: status}
}

func editors(status int) map[models.Role]int {
	return map[models.Role]int{models.RoleViewer: http.StatusForbidden, models.RoleEditor: status, models.RoleAdmin: status}
}

func admins(status int) map[models.Role]int {
	return map[models.Role]int{models.RoleViewer: http.StatusForbidden, models.RoleEditor: http.StatusForbidden, models.RoleAdmin: status}
}

func fixed(v url.Values) func(models.Role) url.Values {
	return func(models.Role) url.Values { return v }
}

// routeCases lists every signed-in console route with what each role gets,
// in an order in which the allowed requests all work: bob is the account
// acted on, pet and key the pet and API key. Logout comes last.
func routeCases(pet, key, bob int64) []routeCase {
	p, k, m := strconv.FormatInt(pet, 10), strconv.FormatInt(key, 10), strconv.FormatInt(bob, 10)
	wrongPassword := fixed(url.Values{"current": {"not my password at all"}, "new": {"a new password 123"}})
	return []routeCase{
		{"GET", "/admin", "/admin", nil, everyone(http.StatusFound)},
		{"GET", "/admin/pets", "/admin/pets", nil, everyone(http.StatusOK)},
		{"GET", "/admin/audit", "/admin/audit", nil, everyone(http.StatusOK)},
		{"GET", "/admin/api-keys", "/admin/api-keys", nil, everyone(http.StatusOK)},
		{"GET", "/admin/users", "/admin/users", nil, everyone(http.StatusOK)},
		{"GET", "/admin/users/:id", "/admin/users/" + m, nil, everyone(http.StatusOK)},
		{"POST", "/admin/users/password", "/admin/users/password", wrongPassword, everyone(http.StatusUnprocessableEntity)},
		{"GET", "/admin/password", "/admin/password", nil, everyone(http.StatusSeeOther)},
		{"POST", "/admin/password", "/admin/password", wrongPassword, everyone(http.StatusUnprocessableEntity)},
		{"GET", "/admin/sessions", "/admin/sessions", nil, everyone(http.StatusOK)},
		{"POST", "/admin/sessions/end", "/admin/sessions/end", fixed(url.Values{"session": {"no-such-session"}}), everyone(http.StatusSeeOther)},
		{"POST", "/admin/sessions/end-others", "/admin/sessions/end-others", nil, everyone(http.StatusSeeOther)},

		{"POST", "/admin/pets", "/admin/pets", fixed(url.Values{"name": {"Rex"}, "categoryId": {"1"}}), editors(http.StatusSeeOther)},
		{"POST", "/admin/pets/:id/status", "/admin/pets/" + p + "/status", fixed(url.Values{"status": {"sold"}}), editors(http.StatusSeeOther)},

		{"POST", "/admin/api-keys", "/admin/api-keys", fixed(url.Values{"name": {"Partner"}}), admins(http.StatusOK)},
		{"GET", "/admin/api-keys/:id/revoke", "/admin/api-keys/" + k + "/revoke", nil, admins(http.StatusOK)},
		{"POST", "/admin/api-keys/:id/revoke", "/admin/api-keys/" + k + "/revoke", nil, admins(http.StatusSeeOther)},
		{"POST", "/admin/users", "/admin/users", func(r models.Role) url.Values {
			return url.Values{"username": {"new-" + string(r)}, "password": {memberPassword}, "role": {"viewer"}}
		}, admins(http.StatusSeeOther)},
		{"POST", "/admin/users/:id/role", "/admin/users/" + m + "/role", fixed(url.Values{"role": {"viewer"}}), admins(http.StatusSeeOther)},
		{"POST", "/admin/users/:id/disable", "/admin/users/" + m + "/disable", nil, admins(http.StatusSeeOther)},
		{"POST", "/admin/users/:id/enable", "/admin/users/" + m + "/enable", nil, admins(http.StatusSeeOther)},
		{"POST", "/admin/users/:id/end-sessions", "/admin/users/" + m + "/end-sessions", nil, admins(http.StatusSeeOther)},
		{"POST", "/admin/users/:id/reset-password", "/admin/users/" + m + "/reset-password", nil, admins(http.StatusOK)},

		{"POST", "/admin/logout", "/admin/logout", nil, everyone(http.StatusSeeOther)},
	}
}

// send makes the case's request as a member of role.
func (c routeCase) send(b *browser, tok string, role models.Role) page {
	if c.method == http.MethodGet {
		return b.get(c.path)
	}
	form := url.Values{}
	if c.form != nil {
		form = c.form(role)
	}
	form.Set("csrf_token", tok)
	return b.post(c.path, form)
}

// The route table's cases are every signed-in console route, and agree
// with the table the console checks: a new route fails here until it is
// given a role and a case.
func TestRouteCasesCoverEveryRoute(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		h, err := server.New(context.Background(), server.Deps{Store: e.store})
		if err != nil {
			t.Fatal(err)
		}
		var registered []string
		for _, r := range h.Routes() {
			if (r.Path == web.Prefix || strings.HasPrefix(r.Path, web.Prefix+"/")) && r.Path != web.Prefix+"/login" {
				registered = append(registered, r.Method+" "+r.Path)
			}
		}
		table := web.RouteRoles()
		var cased []string
		for _, c := range routeCases(1, 1, 1) {
			key := c.method + " " + c.route
			cased = append(cased, key)
			need, ok := table[key]
			if !ok {
				t.Errorf("%s has a case but no role in the console's table", key)
			}
			for _, r := range models.Roles {
				if refused := c.want[r] == http.StatusForbidden; refused == r.Allows(need) {
					t.Errorf("%s: the case says %s gets %d, the console's table needs %s", key, r, c.want[r], need)
				}
			}
		}
		slices.Sort(registered)
		slices.Sort(cased)
		if !slices.Equal(registered, cased) {
			t.Errorf("registered console routes:\n%s\nroutes with a case:\n%s", strings.Join(registered, "\n"), strings.Join(cased, "\n"))
		}
	})
}

// Each role against each route: a refused request is the 403 page, changes
// nothing and is audited; an allowed one does what it does.
func TestRolesByRoute(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		pet, err := e.store.CreatePet(ctx, models.NewPet{Name: "Mochi", CategoryID: 2, Status: models.StatusAvailable}, "test")
		if err != nil {
			t.Fatal(err)
		}
		key, _, err := e.store.CreateAPIKey(ctx, "app", "test")
		if err != nil {
			t.Fatal(err)
		}
		bob, err := e.store.CreateUser(ctx, "bob", memberPassword, "test")
		if err != nil {
			t.Fatal(err)
		}
		type visitor struct {
			u   models.User
			b   *browser
			tok string
		}
		visitors := map[models.Role]visitor{}
		for _, r := range models.Roles {
			u, b, tok := e.member("member-"+string(r), r)
			visitors[r] = visitor{u, b, tok}
		}
		cases := routeCases(pet.ID, key.ID, bob.ID)

		// Refusals first: they change nothing, so every later request
		// meets the same state.
		for _, r := range models.Roles {
			v := visitors[r]
			for _, c := range cases {
				if c.want[r] != http.StatusForbidden {
					continue
				}
				t.Run(string(r)+" "+c.method+" "+c.route, func(t *testing.T) {
					before, seen := e.fingerprint(), len(e.refusals())
					p := c.send(v.b, v.tok, r)
					wantRefused(t, p, r)
					if after := e.fingerprint(); after != before {
						t.Errorf("a refused request changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
					}
					got := e.refusals()
					want := fmt.Sprintf("%s user:%d %s %s needs %s; role %s", v.u.Username, v.u.ID, c.method, c.path,
						web.RouteRoles()[c.method+" "+c.route], r)
					if len(got) != seen+1 || got[0] != want {
						t.Errorf("audit of refusals %q, want one more: %q", got, want)
					}
				})
			}
		}
		for _, r := range models.Roles {
			v := visitors[r]
			for _, c := range cases {
				if c.want[r] == http.StatusForbidden {
					continue
				}
				t.Run(string(r)+" "+c.method+" "+c.route+" allowed", func(t *testing.T) {
					wantStatus(t, c.send(v.b, v.tok, r), c.want[r])
				})
			}
		}
		// What the allowed requests did.
		if got, _ := e.store.GetPet(ctx, pet.ID); got.Status != models.StatusSold {
			t.Errorf("pet status %q after the editors' changes", got.Status)
		}
		if keys, _ := e.store.ListAPIKeys(ctx); len(keys) != 2 || keys[0].RevokedAt == nil && keys[1].RevokedAt == nil {
			t.Errorf("keys after the admin's requests: %+v", keys)
		}
		if u, err := e.store.FindUser(ctx, "new-admin"); err != nil || u.Role != models.RoleViewer {
			t.Errorf("the account the admin added: %+v, %v", u, err)
		}
		if u, _ := e.store.GetUser(ctx, bob.ID); u.Role != models.RoleViewer || u.Disabled() || !u.MustChangePassword {
			t.Errorf("bob after the admin's requests: %+v", u)
		}
	})
}

// The refusal page, also for htmx (whose error handler shows its message),
// and its audit row.
func TestForbiddenPage(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		vera, b, tok := e.member("vera", models.RoleViewer)
		p := b.post("/admin/pets", url.Values{"csrf_token": {tok}, "name": {"Rex"}, "categoryId": {"1"}})
		wantRefused(t, p, models.RoleViewer)
		if got := text(p, ".error-page p"); got != "Adding and changing pets needs the editor or admin role. "+
			"Your account is a viewer, so nothing was changed. An admin can change your role on the Staff page." {
			t.Errorf("message %q", got)
		}
		if got := text(p, "title"); got != "Not allowed for your role · Petstore admin" {
			t.Errorf("title %q", got)
		}
		// The page keeps the frame: the member's navigation and name.
		if nav := navLabels(p); strings.Join(nav, "|") != "Pets|API keys|Staff|Audit|Sessions" {
			t.Errorf("navigation %q", nav)
		}
		if got := text(p, `footer [data-testid="role"]`); got != "(viewer)" {
			t.Errorf("footer role %q", got)
		}
		if n := e.countPets(t); n != 0 {
			t.Errorf("%d pets after a refused add", n)
		}
		htmx := b.post("/admin/pets", url.Values{"name": {"Rex"}, "categoryId": {"1"}}, "HX-Request", "true", "X-CSRF-Token", tok)
		wantRefused(t, htmx, models.RoleViewer)

		_, eb, etok := e.member("eddie", models.RoleEditor)
		wantRefused(t, eb.get("/admin/api-keys/1/revoke"), models.RoleEditor)
		wantRefused(t, eb.post("/admin/users/"+strconv.FormatInt(vera.ID, 10)+"/disable", url.Values{"csrf_token": {etok}}), models.RoleEditor)
		if u, _ := e.store.GetUser(context.Background(), vera.ID); u.Disabled() {
			t.Error("an editor disabled an account")
		}
		events, _, err := e.store.ListAuditEvents(context.Background(), models.AuditQuery{Action: models.ActionForbidden, Actor: "vera"})
		if err != nil || len(events) != 2 {
			t.Fatalf("vera's refusals %+v, %v; want 2", events, err)
		}
		if ev := events[1]; ev.TargetType != models.TargetUser || ev.TargetID != vera.ID || ev.Detail != "POST /admin/pets needs editor; role viewer" {
			t.Errorf("audit row %+v", ev)
		}
		// The audit page lists them, filterable by their action.
		audit := b.get("/admin/audit?action=" + models.ActionForbidden)
		wantStatus(t, audit, http.StatusOK)
		if got := auditActions(audit); len(got) != 4 {
			t.Errorf("audit page lists %q, want the 4 refusals", got)
		}
		// A forged form is refused for its token first, as before roles.
		wantStatus(t, b.post("/admin/api-keys", url.Values{"csrf_token": {"forged"}, "name": {"x"}}), http.StatusForbidden)
		if n := len(e.refusals()); n != 4 {
			t.Errorf("%d refusals audited after a forged form, want still 4", n)
		}
	})
}

// navLabels returns the navigation's entries, in order.
func navLabels(p page) []string {
	var out []string
	p.Doc.Find(`nav[aria-label="Main"] ul:nth-of-type(2) li a`).Each(func(_ int, s *goquery.Selection) {
		out = append(out, strings.TrimSpace(s.Text()))
	})
	return out
}
