package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"petstore/models"
	"petstore/models/modelstest"
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
// trail's refusals: every row of pets, keys, accounts, sessions, webhook
// endpoints and their deliveries, and the number of other audit events.
func (e *env) fingerprint() string {
	e.t.Helper()
	others := 0
	for action, n := range modelstest.AuditCounts(e.t, e.store) {
		if action != models.ActionForbidden {
			others += n
		}
	}
	return modelstest.Snapshot(e.t, e.store, modelstest.Pets, modelstest.APIKeys, modelstest.Users, modelstest.Sessions) +
		e.webhookState() + fmt.Sprintf("other audit events: %d\n", others)
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
// acted on, pet and key the pet and API key, hook a webhook endpoint and
// delivery one of its failed deliveries, version returns the pet's version
// as stored. Logout comes last.
func routeCases(pet, key, bob, hook, delivery int64, version func() string) []routeCase {
	p, k, m := strconv.FormatInt(pet, 10), strconv.FormatInt(key, 10), strconv.FormatInt(bob, 10)
	w, d := "/admin/webhooks/"+strconv.FormatInt(hook, 10), strconv.FormatInt(delivery, 10)
	wrongPassword := fixed(url.Values{"current": {"not my password at all"}, "new": {"a new password 123"}, "confirm": {"a new password 123"}})
	return []routeCase{
		{"GET", "/admin", "/admin", nil, everyone(http.StatusFound)},
		{"GET", "/admin/pets", "/admin/pets", nil, everyone(http.StatusOK)},
		{"GET", "/admin/audit", "/admin/audit", nil, everyone(http.StatusOK)},
		{"GET", "/admin/api-keys", "/admin/api-keys", nil, everyone(http.StatusOK)},
		{"GET", "/admin/users", "/admin/users", nil, everyone(http.StatusOK)},
		{"GET", "/admin/users/:id", "/admin/users/" + m, nil, everyone(http.StatusOK)},
		{"GET", "/admin/password", "/admin/password", nil, everyone(http.StatusSeeOther)},
		{"POST", "/admin/password", "/admin/password", wrongPassword, everyone(http.StatusUnprocessableEntity)},
		{"GET", "/admin/sessions", "/admin/sessions", nil, everyone(http.StatusOK)},
		{"POST", "/admin/sessions/end", "/admin/sessions/end", fixed(url.Values{"session": {"no-such-session"}}), everyone(http.StatusSeeOther)},
		{"POST", "/admin/sessions/end-others", "/admin/sessions/end-others", fixed(url.Values{"confirm": {"yes"}}), everyone(http.StatusSeeOther)},
		{"GET", "/admin/account", "/admin/account", nil, everyone(http.StatusOK)},
		{"POST", "/admin/account/totp", "/admin/account/totp", nil, everyone(http.StatusSeeOther)},
		{"GET", "/admin/account/totp", "/admin/account/totp", nil, everyone(http.StatusOK)},
		{"POST", "/admin/account/totp/confirm", "/admin/account/totp/confirm", fixed(url.Values{"code": {"not a code"}}), everyone(http.StatusUnprocessableEntity)},
		{"POST", "/admin/account/totp/disable", "/admin/account/totp/disable", nil, everyone(http.StatusConflict)},
		{"POST", "/admin/account/recovery-codes", "/admin/account/recovery-codes", nil, everyone(http.StatusConflict)},
		// On an IP address (these tests' server) passkeys are refused as browsers refuse them.
		{"POST", "/admin/account/passkeys/options", "/admin/account/passkeys/options", nil, everyone(http.StatusBadRequest)},
		{"POST", "/admin/account/passkeys", "/admin/account/passkeys", nil, everyone(http.StatusBadRequest)},
		{"GET", "/admin/account/passkeys/:id/delete", "/admin/account/passkeys/999999/delete", nil, everyone(http.StatusNotFound)},
		{"POST", "/admin/account/passkeys/:id/delete", "/admin/account/passkeys/999999/delete", nil, everyone(http.StatusNotFound)},

		{"GET", "/admin/pets/:id", "/admin/pets/" + p, nil, everyone(http.StatusOK)},
		{"GET", "/admin/pets/export.csv", "/admin/pets/export.csv?status=sold", nil, everyone(http.StatusOK)},
		{"POST", "/admin/pets", "/admin/pets", fixed(url.Values{"name": {"Rex"}, "categoryId": {"1"}}), editors(http.StatusSeeOther)},
		{"POST", "/admin/pets/:id", "/admin/pets/" + p, func(r models.Role) url.Values {
			return url.Values{"name": {"Mochi the " + string(r)}, "categoryId": {"2"}, "status": {"pending"}, "version": {version()}}
		}, editors(http.StatusSeeOther)},
		{"POST", "/admin/pets/bulk-status", "/admin/pets/bulk-status",
			fixed(url.Values{"pet": {p + ":1"}, "status": {"available"}, "back": {"/admin/pets"}}), editors(http.StatusSeeOther)},
		{"GET", "/admin/pets/bulk", "/admin/pets/bulk?set=sold&status=pending", nil, editors(http.StatusOK)},
		{"POST", "/admin/pets/bulk", "/admin/pets/bulk", fixed(url.Values{"filter": {"status=pending"}, "set": {"sold"}}), editors(http.StatusOK)},
		{"GET", "/admin/pets/bulk/:id", "/admin/pets/bulk/999999", nil, editors(http.StatusNotFound)},
		{"GET", "/admin/undo", "/admin/undo", nil, editors(http.StatusOK)},
		{"POST", "/admin/undo/:id", "/admin/undo/999999", nil, editors(http.StatusNotFound)},
		{"GET", "/admin/undo/:id", "/admin/undo/999999", nil, editors(http.StatusNotFound)},
		{"GET", "/admin/pets/import", "/admin/pets/import", nil, editors(http.StatusOK)},
		// A form without a file: the upload form again, saying to choose one.
		{"POST", "/admin/pets/import", "/admin/pets/import", nil, editors(http.StatusUnprocessableEntity)},
		{"GET", "/admin/pets/import/:id", "/admin/pets/import/999999", nil, editors(http.StatusNotFound)},
		{"POST", "/admin/pets/import/:id", "/admin/pets/import/999999", fixed(url.Values{"action": {"import"}}), editors(http.StatusNotFound)},
		{"POST", "/admin/pets/:id/status", "/admin/pets/" + p + "/status", fixed(url.Values{"status": {"sold"}}), editors(http.StatusSeeOther)},
		{"GET", "/admin/pets/archive", "/admin/pets/archive", nil, everyone(http.StatusOK)},
		// Without confirm=yes the archive forms only ask.
		{"POST", "/admin/pets/:id/archive", "/admin/pets/" + p + "/archive", func(models.Role) url.Values { return url.Values{"version": {version()}} }, editors(http.StatusOK)},
		{"GET", "/admin/pets/bulk-archive", "/admin/pets/bulk-archive?pet=" + p + ":1&back=/admin/pets", nil, editors(http.StatusOK)},
		{"POST", "/admin/pets/bulk-archive", "/admin/pets/bulk-archive", fixed(url.Values{"pet": {p + ":1"}, "back": {"/admin/pets"}}), editors(http.StatusOK)},
		{"POST", "/admin/pets/archive/restore", "/admin/pets/archive/restore", fixed(url.Values{"pet": {"999999:1"}}), editors(http.StatusSeeOther)},

		{"POST", "/admin/api-keys", "/admin/api-keys", fixed(url.Values{"name": {"Partner"}, "scope": {"pets:read"}}), admins(http.StatusOK)},
		{"GET", "/admin/api-keys/:id/revoke", "/admin/api-keys/" + k + "/revoke", nil, admins(http.StatusOK)},
		{"POST", "/admin/api-keys/:id/revoke", "/admin/api-keys/" + k + "/revoke", fixed(url.Values{"confirm": {"yes"}}), admins(http.StatusSeeOther)},
		{"POST", "/admin/users", "/admin/users", func(r models.Role) url.Values {
			return url.Values{"username": {"new-" + string(r)}, "password": {memberPassword}, "role": {"viewer"}}
		}, admins(http.StatusSeeOther)},
		{"POST", "/admin/users/:id/role", "/admin/users/" + m + "/role", fixed(url.Values{"role": {"viewer"}}), admins(http.StatusSeeOther)},
		{"POST", "/admin/users/:id/disable", "/admin/users/" + m + "/disable", fixed(url.Values{"confirm": {"yes"}}), admins(http.StatusSeeOther)},
		{"POST", "/admin/users/:id/enable", "/admin/users/" + m + "/enable", nil, admins(http.StatusSeeOther)},
		{"POST", "/admin/users/:id/end-sessions", "/admin/users/" + m + "/end-sessions", fixed(url.Values{"confirm": {"yes"}}), admins(http.StatusSeeOther)},
		{"POST", "/admin/users/:id/reset-password", "/admin/users/" + m + "/reset-password", fixed(url.Values{"confirm": {"yes"}}), admins(http.StatusOK)},
		{"GET", "/admin/users/:id/reset-2fa", "/admin/users/" + m + "/reset-2fa", nil, admins(http.StatusOK)},
		{"POST", "/admin/users/:id/reset-2fa", "/admin/users/" + m + "/reset-2fa", nil, admins(http.StatusSeeOther)},
		{"POST", "/admin/users/two-factor-roles", "/admin/users/two-factor-roles", nil, admins(http.StatusSeeOther)},

		{"GET", "/admin/webhooks", "/admin/webhooks", nil, admins(http.StatusOK)},
		{"POST", "/admin/webhooks", "/admin/webhooks", fixed(url.Values{"url": {"https://partner.example/new-hook"}}), admins(http.StatusOK)},
		{"GET", "/admin/webhooks/:id", w, nil, admins(http.StatusOK)},
		{"POST", "/admin/webhooks/:id/test", w + "/test", nil, admins(http.StatusSeeOther)},
		{"POST", "/admin/webhooks/:id/disable", w + "/disable", nil, admins(http.StatusSeeOther)},
		{"POST", "/admin/webhooks/:id/enable", w + "/enable", nil, admins(http.StatusSeeOther)},
		{"GET", "/admin/webhooks/:id/rotate", w + "/rotate", nil, admins(http.StatusOK)},
		{"POST", "/admin/webhooks/:id/rotate", w + "/rotate", nil, admins(http.StatusOK)},
		{"POST", "/admin/webhooks/:id/deliveries/:delivery/resend", w + "/deliveries/" + d + "/resend", nil, admins(http.StatusSeeOther)},
		{"GET", "/admin/webhooks/:id/delete", w + "/delete", nil, admins(http.StatusOK)},
		{"POST", "/admin/webhooks/:id/delete", w + "/delete", nil, admins(http.StatusSeeOther)},

		{"GET", "/admin/operations", "/admin/operations", nil, admins(http.StatusOK)},

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
			if (r.Path == web.Prefix || strings.HasPrefix(r.Path, web.Prefix+"/")) && r.Path != web.Prefix+"/login" && !strings.HasPrefix(r.Path, web.Prefix+"/login/") {
				registered = append(registered, r.Method+" "+r.Path)
			}
		}
		table := web.RouteRoles()
		var cased []string
		for _, c := range routeCases(1, 1, 1, 1, 1, func() string { return "1" }) {
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
		hook, delivery := e.failedDelivery(t)
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
		cases := routeCases(pet.ID, key.ID, bob.ID, hook.ID, delivery.ID, func() string {
			p, err := e.store.GetPet(ctx, pet.ID)
			if err != nil {
				t.Error(err)
			}
			return strconv.FormatInt(p.Version, 10)
		})

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
					want := fmt.Sprintf("%s user:%d %s %s needs %s; role %s", v.u.Username, v.u.ID, c.method, c.route,
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
		if got, _ := e.store.GetPet(ctx, pet.ID); got.Status != models.StatusSold || got.Name != "Mochi the admin" {
			t.Errorf("pet %+v after the editors' changes", got)
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
		if ws, _ := e.store.ListWebhooks(ctx); len(ws) != 1 || ws[0].URL != "https://partner.example/new-hook" {
			t.Errorf("webhooks after the admin's requests (one added, the other deleted): %+v", ws)
		}
	})
}

// The refusal page, also for htmx (whose error handler shows its message),
// and its audit row.
func TestForbiddenPage(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		e.store.SetClock(func() time.Time { return *e.clock.Load() }) // one minute of refusals
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
		if nav := navLabels(p); strings.Join(nav, "|") != "Pets|Archive|API keys|Staff|Audit|Sessions|Account" {
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
		// Her two refusals of one route in one minute are one row that
		// counts them.
		if err != nil || len(events) != 1 {
			t.Fatalf("vera's refusals %+v, %v; want 1 row", events, err)
		}
		if ev := events[0]; ev.TargetType != models.TargetUser || ev.TargetID != vera.ID || ev.Detail != "POST /admin/pets needs editor; role viewer" || ev.Occurrences != 2 {
			t.Errorf("audit row %+v", ev)
		}
		// The audit page lists them, filterable by their action.
		audit := b.get("/admin/audit?action=" + models.ActionForbidden)
		wantStatus(t, audit, http.StatusOK)
		if got := auditActions(audit); len(got) != 3 {
			t.Errorf("audit page lists %q, want the 3 rows of 4 refusals", got)
		}
		if !strings.Contains(audit.Body, "POST /admin/pets needs editor; role viewer (2 times this minute)") {
			t.Error("the audit page does not say how often vera was refused")
		}
		// A forged form is refused for its token first, before any role check.
		wantStatus(t, b.post("/admin/api-keys", url.Values{"csrf_token": {"forged"}, "name": {"x"}}), http.StatusForbidden)
		if n := len(e.refusals()); n != 3 {
			t.Errorf("%d refusals audited after a forged form, want still 3", n)
		}
	})
}

// navLabels returns the navigation's console entries, in order (the link
// to the API reference, the same for every role, left out).
func navLabels(p page) []string {
	var out []string
	p.Doc.Find(`nav[aria-label="Main"] ul:nth-of-type(2) li a[href^="/admin"]`).Each(func(_ int, s *goquery.Selection) {
		out = append(out, strings.TrimSpace(s.Text()))
	})
	return out
}

// Each role sees the navigation and the forms it may use, and no others.
func TestPagesShowWhatTheRoleMay(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		pet, err := e.store.CreatePet(ctx, models.NewPet{Name: "Mochi", CategoryID: 2, Status: models.StatusAvailable}, "test")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.store.CreateAPIKey(ctx, "app", staffName); err != nil {
			t.Fatal(err)
		}
		alice, err := e.store.FindUser(ctx, staffName)
		if err != nil {
			t.Fatal(err)
		}
		type shown struct {
			addPet, statusForms, bulk, editPet, createKey, revoke, addStaff, memberActions, roleForm int
			notes                                                                                    int
		}
		readers := "Pets|Archive|API keys|Staff|Audit|Sessions|Account"
		tests := []struct {
			role models.Role
			nav  string
			want shown
		}{
			{models.RoleViewer, readers, shown{notes: 5}},
			{models.RoleEditor, readers, shown{addPet: 1, statusForms: 1, bulk: 3, editPet: 1, notes: 3}},
			{models.RoleAdmin, "Pets|Archive|API keys|Webhooks|Staff|Audit|Sessions|Account|Operations",
				shown{addPet: 1, statusForms: 1, bulk: 3, editPet: 1, createKey: 1, revoke: 2, addStaff: 1, memberActions: 4, roleForm: 1}},
		}
		for _, tt := range tests {
			t.Run(string(tt.role), func(t *testing.T) {
				_, b, _ := e.member("m-"+string(tt.role), tt.role)
				pets, keys, staff := b.get("/admin/pets"), b.get("/admin/api-keys"), b.get("/admin/users")
				member := b.get("/admin/users/" + strconv.FormatInt(alice.ID, 10))
				petPage := b.get("/admin/pets/" + strconv.FormatInt(pet.ID, 10))
				for _, p := range []page{pets, keys, staff, member, petPage} {
					wantStatus(t, p, http.StatusOK)
					if nav := navLabels(p); strings.Join(nav, "|") != tt.nav {
						t.Errorf("navigation %q, want %q", nav, tt.nav)
					}
					if got := text(p, `footer [data-testid="role"]`); got != "("+string(tt.role)+")" {
						t.Errorf("footer role %q", got)
					}
				}
				got := shown{
					addPet:        pets.Doc.Find(`form#pet-form[action="/admin/pets"]`).Length(),
					statusForms:   pets.Doc.Find(`form[action$="/status"]`).Length(),
					bulk:          pets.Doc.Find(`form#bulk-form, input[data-select-all], input[data-select-row]`).Length(),
					editPet:       petPage.Doc.Find(`form#pet-edit`).Length(),
					createKey:     keys.Doc.Find(`form[action="/admin/api-keys"]`).Length(),
					revoke:        keys.Doc.Find(`[data-testid="revoke"]`).Length() + member.Doc.Find(`a[href$="/revoke"]`).Length(),
					addStaff:      staff.Doc.Find(`form[action="/admin/users"]`).Length(),
					memberActions: member.Doc.Find(`form[data-testid^="action-"]`).Length(),
					roleForm:      member.Doc.Find(`form[data-testid="action-role"] select[name="role"]`).Length(),
				}
				for _, p := range []page{pets, keys, staff, member, petPage} {
					got.notes += p.Doc.Find(`[data-testid="read-only-note"]`).Length()
				}
				if got != tt.want {
					t.Errorf("shown %+v, want %+v", got, tt.want)
				}
				// A read-only table has no column for the forms it lacks.
				if th := pets.Doc.Find(`th:contains("Change status")`).Length(); th != tt.want.statusForms {
					t.Errorf("%d Change status headings", th)
				}
				if th := keys.Doc.Find(`th:contains("Action")`).Length(); th != tt.want.createKey {
					t.Errorf("%d Action headings on the keys page", th)
				}
				if got := text(staff, `[data-testid="staff-row"]:contains("m-`+string(tt.role)+`") [data-testid="staff-role"]`); got != string(tt.role) {
					t.Errorf("the staff list shows the role %q", got)
				}
				if got := text(member, `[data-testid="member-role"]`); got != "admin" {
					t.Errorf("alice's page shows the role %q", got)
				}
			})
		}
	})
}

// An admin changes roles from a member's page; the change applies at once
// to the member's open session; the last enabled admin keeps the role.
func TestChangeRole(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		admin, tok := e.signedIn()
		alice, err := e.store.FindUser(ctx, staffName)
		if err != nil {
			t.Fatal(err)
		}
		bob, bb, btok := e.member("bob", models.RoleEditor)
		bobPath := "/admin/users/" + strconv.FormatInt(bob.ID, 10)

		page := admin.get(bobPath)
		form := page.Doc.Find(`form[data-testid="action-role"]`)
		if form.AttrOr("action", "") != bobPath+"/role" || labelled(t, page, "Role").AttrOr("name", "") != "role" ||
			strings.TrimSpace(form.Find(`option[selected]`).Text()) != "editor" {
			t.Fatalf("role form:\n%s", page.Body)
		}
		p := admin.post(bobPath+"/role", url.Values{"csrf_token": {tok}, "role": {"viewer"}})
		wantStatus(t, p, http.StatusSeeOther)
		if loc := p.Header.Get("Location"); loc != bobPath {
			t.Errorf("Location %q", loc)
		}
		if got := text(admin.get(bobPath), `[data-testid="flash"]`); got != "bob is now a viewer." {
			t.Errorf("flash %q", got)
		}
		// Bob's open session follows at once.
		pets := bb.get("/admin/pets")
		wantStatus(t, pets, http.StatusOK)
		if pets.Doc.Find("form#pet-form").Length() != 0 {
			t.Error("bob, now a viewer, still sees the add form")
		}
		wantRefused(t, bb.post("/admin/pets", url.Values{"csrf_token": {btok}, "name": {"Rex"}, "categoryId": {"1"}}), models.RoleViewer)

		// Alice is the only admin: she keeps the role.
		alicePath := "/admin/users/" + strconv.FormatInt(alice.ID, 10)
		p = admin.post(alicePath+"/role", url.Values{"csrf_token": {tok}, "role": {"editor"}})
		wantStatus(t, p, http.StatusConflict)
		if got := text(p, `[data-testid="member-error"]`); !strings.Contains(got, "last enabled admin") {
			t.Errorf("refusal %q", got)
		}
		if u, _ := e.store.GetUser(ctx, alice.ID); u.Role != models.RoleAdmin {
			t.Errorf("alice is %q after the refused change", u.Role)
		}
		// Nor can she be disabled (she is not anyway allowed to disable
		// herself; a second admin tries).
		wantStatus(t, admin.post(bobPath+"/role", url.Values{"csrf_token": {tok}, "role": {"admin"}}), http.StatusSeeOther)
		wantStatus(t, admin.post(alicePath+"/role", url.Values{"csrf_token": {tok}, "role": {"editor"}}), http.StatusSeeOther)
		if got := admin.get("/admin/users"); got.Doc.Find(`form[action="/admin/users"]`).Length() != 0 {
			t.Error("alice, now an editor, still sees the add-staff form")
		}
		wantRefused(t, admin.post(bobPath+"/role", url.Values{"csrf_token": {tok}, "role": {"viewer"}}), models.RoleEditor)
		btok = csrf(t, bb.get("/admin/users"))
		p = bb.post(bobPath+"/disable", url.Values{"csrf_token": {btok}})
		wantStatus(t, p, http.StatusConflict) // his own account
		if u, _ := e.store.GetUser(ctx, bob.ID); u.Role != models.RoleAdmin || u.Disabled() {
			t.Errorf("bob %+v", u)
		}

		// A role that does not exist changes nothing.
		wantStatus(t, bb.post(alicePath+"/role", url.Values{"csrf_token": {btok}, "role": {"owner"}}), http.StatusBadRequest)
		if u, _ := e.store.GetUser(ctx, alice.ID); u.Role != models.RoleEditor {
			t.Errorf("alice is %q after a bad role", u.Role)
		}
		want := []string{"alice user.role_changed username=bob; role editor -> viewer", "alice user.role_changed username=bob; role viewer -> admin"}
		events, _, err := e.store.ListAuditEvents(ctx, models.AuditQuery{Action: models.ActionRoleChanged, TargetType: models.TargetUser, TargetID: bob.ID})
		var got []string
		for i := len(events) - 1; i >= 0; i-- {
			got = append(got, events[i].Actor+" "+events[i].Action+" "+events[i].Detail)
		}
		if err != nil || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("audit of bob's roles %q, %v", got, err)
		}
	})
}

// The add form takes a role; a bad one is shown beside the field.
func TestAddStaffMemberWithRole(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		p := b.get("/admin/users")
		role := labelled(t, p, "Role")
		if role.Closest("form").AttrOr("action", "") != "/admin/users" || strings.TrimSpace(role.Find("option[selected]").Text()) != "editor" {
			t.Errorf("role field %s, want editor chosen", role.Text())
		}
		wantStatus(t, b.post("/admin/users", url.Values{"csrf_token": {tok}, "username": {"bob"}, "password": {memberPassword}, "role": {"admin"}}), http.StatusSeeOther)
		if u, err := e.store.FindUser(context.Background(), "bob"); err != nil || u.Role != models.RoleAdmin {
			t.Errorf("bob %+v, %v; want an admin", u, err)
		}
		if got := text(b.get("/admin/users"), `[data-testid="flash"]`); got != "Staff member bob added as an admin." {
			t.Errorf("flash %q", got)
		}
		p = b.post("/admin/users", url.Values{"csrf_token": {tok}, "username": {"carol"}, "password": {memberPassword}, "role": {"owner"}})
		wantStatus(t, p, http.StatusUnprocessableEntity)
		wantFieldError(t, p, "Role", models.RoleMessage)
		if labelled(t, p, "Username").AttrOr("value", "") != "carol" {
			t.Error("the username typed is lost")
		}
		if _, err := e.store.FindUser(context.Background(), "carol"); models.ErrorCode(err) != models.CodeNotFound {
			t.Errorf("carol stored with a bad role: %v", err)
		}
	})
}

// A hundred requests at once, two admins each lowering or disabling the
// other, leave exactly one enabled admin, on both engines.
func TestLastAdminConcurrentRequests(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		alice, err := e.store.FindUser(ctx, staffName)
		if err != nil {
			t.Fatal(err)
		}
		bob, bb, btok := e.member("bob", models.RoleAdmin)
		// An enabled editor, so that only the admin rule stops the disables.
		if _, err := e.store.CreateUser(ctx, "carol", memberPassword, "test"); err != nil {
			t.Fatal(err)
		}
		aliceB, aliceTok := e.signedIn()
		const n = 100
		statuses := make([]int, n)
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				b, tok, target := aliceB, aliceTok, bob.ID
				if i%2 == 1 {
					b, tok, target = bb, btok, alice.ID
				}
				action := "/role"
				form := url.Values{"csrf_token": {tok}, "role": {"viewer"}}
				if i%4 >= 2 {
					action, form = "/disable", url.Values{"csrf_token": {tok}, "confirm": {"yes"}}
				}
				<-start
				statuses[i], _, errs[i] = goDo(e, b, http.MethodPost, "/admin/users/"+strconv.FormatInt(target, 10)+action, form)
			})
		}
		close(start)
		wg.Wait()
		count := map[int]int{}
		for i, st := range statuses {
			if errs[i] != nil {
				t.Fatalf("request %d: %v", i, errs[i])
			}
			count[st]++
		}
		for st := range count {
			// Done, refused as the last admin, refused for a role just
			// lost, or sent to sign in by a session just ended.
			if st != http.StatusSeeOther && st != http.StatusConflict && st != http.StatusForbidden {
				t.Errorf("statuses %v", count)
			}
		}
		users, err := e.store.ListUsers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		for _, u := range users {
			if u.Role == models.RoleAdmin && !u.Disabled() {
				left = append(left, u.Username)
			}
		}
		// Once one admin has lost the role, their requests are refused for
		// it (403); on InnoDB some meet the rule first (409).
		if len(left) != 1 || count[http.StatusSeeOther] == n {
			t.Errorf("enabled admins left %q after %v; want exactly one and some refusals", left, count)
		}
		t.Logf("%s: %v", e.store.Driver(), count)
	})
}

// A viewer firing refused requests with paths of its choosing writes one
// audit row per route pattern and minute, counting them, and no path text.
func TestRefusalsAuditedBounded(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		e.store.SetClock(func() time.Time { return *e.clock.Load() }) // one minute of refusals
		_, b, tok := e.member("vera", models.RoleViewer)
		const n = 60
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				path := fmt.Sprintf("/admin/pets/%d/status", 1000+i)
				b.post(path, url.Values{"csrf_token": {tok}, "status": {"sold"}})
			})
		}
		wg.Wait()
		events, _, err := e.store.ListAuditEvents(context.Background(), models.AuditQuery{Action: models.ActionForbidden, Limit: 200})
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 1 || events[0].Occurrences != n || events[0].Detail != "POST /admin/pets/:id/status needs editor; role viewer" {
			t.Fatalf("%d refusals audited as %+v; want one row counting %d, by route pattern", n, events, n)
		}
	})
}
