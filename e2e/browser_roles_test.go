package e2e

// Browser journeys of the staff roles and "Your sessions"
// (item 5): a viewer who sees no add form and is refused a post made
// anyway, an admin changing a role (and the last admin kept), and one
// browser signing out another. Screenshots go where the other journeys'
// go, on a desktop, a phone and in dark mode.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"petstore/internal/testkit"
	"petstore/models"
)

// memberPassword is the password of the accounts these journeys add.
const memberPassword = "correct-horse-battery-9"

// firefoxUA is the User-Agent the second browser context sends, so that
// the sessions page tells the two apart.
const firefoxUA = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"

// addMember stores an account with the role.
func (j *journey) addMember(name string, role models.Role) models.User {
	j.t.Helper()
	u, err := j.store.CreateUserWithRole(context.Background(), name, memberPassword, role, "test")
	if err != nil {
		j.t.Fatal(err)
	}
	return u
}

// otherBrowser opens a tab on j's site in a browser context of its own
// (otherContext: its own cookies, as another browser has), sending the
// User-Agent ua.
func (j *journey) otherBrowser(ua string) *journey {
	j.t.Helper()
	o := j.otherContext()
	if _, err := chromedp.Call(o.ctx, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: ua}); err != nil {
		j.t.Fatalf("set the user agent: %v", err)
	}
	return o
}

// navEntries returns the main navigation's links, in order.
func (j *journey) navEntries() string {
	j.t.Helper()
	return evalJS[string](j, `[...document.querySelectorAll('nav[aria-label="Main"] ul:nth-of-type(2) li a')].map(a => a.textContent.trim()).join("|")`)
}

// count returns how many elements match css.
func (j *journey) count(css string) int {
	j.t.Helper()
	return evalJS[int](j, fmt.Sprintf(`document.querySelectorAll(%s).length`, jsString(css)))
}

// navigationStatus returns the HTTP status of the page's own load.
func (j *journey) navigationStatus() int {
	j.t.Helper()
	return evalJS[int](j, `performance.getEntriesByType("navigation")[0]?.responseStatus ?? 0`)
}

// onPhone reloads the page on a phone's viewport and fails when the page
// scrolls sideways; offPhone goes back to the desktop.
func (j *journey) onPhone(what string) {
	j.t.Helper()
	j.do("emulate a phone", chromedp.EmulateViewport(phoneWidth, phoneHeight, chromedp.EmulatePortrait, chromedp.EmulateMobile), chromedp.Reload())
	j.waitJS("the page to load", `document.readyState === "complete"`)
	if sw := evalJS[int](j, `document.documentElement.scrollWidth`); sw > phoneWidth {
		j.t.Errorf("%s is %d px wide on a %d px phone: it scrolls sideways", what, sw, phoneWidth)
	}
}

func (j *journey) offPhone() {
	j.t.Helper()
	j.do("back to the desktop", chromedp.EmulateViewport(desktopWidth, desktopHeight), chromedp.Reload())
	j.waitJS("the page to load", `document.readyState === "complete"`)
}

// inDark switches the page to dark mode (or back) as the system's
// preference would, without reloading it (it may be the answer to a
// post), and fails unless the page follows.
func (j *journey) inDark(dark bool) {
	j.t.Helper()
	scheme := "light"
	if dark {
		scheme = "dark"
	}
	if _, err := chromedp.Call(j.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
	}); err != nil {
		j.t.Fatalf("emulate %s mode: %v", scheme, err)
	}
	if lb := luminance(j.t, j.background()); dark && lb > 0.2 || !dark && lb < 0.6 {
		j.t.Errorf("%s mode: background luminance %.2f", scheme, lb)
	}
}

// Journey: a viewer reads the pets but has no form to
// change them; a post made anyway, with htmx and without, is refused with
// the 403 page, changes nothing and is audited.
func TestBrowserViewerIsReadOnly(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	j.addPets(models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable},
		models.NewPet{Name: "Polly", CategoryID: 3, Status: models.StatusPending})
	vera := j.addMember("vera", models.RoleViewer)
	j.signedInAs("vera", memberPassword)
	j.waitPetNames("Polly", "Rex")

	if got := j.navEntries(); got != "Pets|Archive|API keys|Staff|Audit|Sessions|Account|API reference" {
		t.Errorf("navigation %q", got)
	}
	if got := j.text(`footer [data-testid="role"]`); got != "(viewer)" {
		t.Errorf("footer role %q", got)
	}
	for css, what := range map[string]string{"#pet-form": "the add form", `form[action$="/status"]`: "a status form", "#add-heading": "the add heading",
		"#bulk-form": "the bulk change", "input[data-select-row]": "a row's checkbox"} {
		if n := j.count(css); n != 0 {
			t.Errorf("a viewer sees %s (%d)", what, n)
		}
	}
	if got := j.text(`[data-testid="read-only-note"]`); !strings.Contains(got, "needs the editor role") {
		t.Errorf("read-only note %q", got)
	}
	j.screenshot("roles-viewer-pets.png")
	j.onPhone("the viewer's pets page")
	j.screenshot("roles-viewer-pets-phone.png")
	j.offPhone()

	// A pet's own page reads the same: details and history, no edit form.
	j.within("open Rex", chromedp.Click(button("//main//td", "Rex")))
	j.waitText(`[data-testid="pet-heading"]`, "Rex")
	if j.count("#pet-edit") != 0 {
		t.Error("a viewer sees the pet's edit form")
	}
	j.waitText(`[data-testid="read-only-note"]`, "changing it needs the editor role")
	j.screenshot("roles-viewer-pet.png")
	j.open("/admin/pets")
	j.waitPetNames("Polly", "Rex")

	// With htmx, as a changed page would send it: the message says why.
	j.markPage()
	j.do("post a pet with htmx anyway", chromedp.Evaluate[chromedp.Void](
		`htmx.ajax("POST", "/admin/pets", {source: document.body, values: {name: "Sneaky", categoryId: "1"}, swap: "none"})`))
	j.waitText(`[data-testid="flash"]`, "Adding and changing pets needs the editor or admin role.")
	j.wantNoReload("a refused htmx post")
	if got := evalJS[string](j, `document.querySelector('[data-testid="flash"]').getAttribute("role")`); got != "alert" {
		t.Errorf("the refusal's role %q, want alert (announced)", got)
	}

	// Without JavaScript: a form of its own, posted with the page's token.
	j.do("post a pet with a plain form anyway", chromedp.Evaluate[chromedp.Void](`(() => {
		const f = document.createElement("form");
		f.method = "post"; f.action = "/admin/pets";
		for (const [k, v] of [["csrf_token", document.querySelector('input[name="csrf_token"]').value], ["name", "Sneaky"], ["categoryId", "1"]]) {
			const i = document.createElement("input"); i.type = "hidden"; i.name = k; i.value = v; f.appendChild(i);
		}
		document.body.appendChild(f); f.submit();
	})()`))
	j.waitText("h1", "Not allowed for your role")
	if st := j.navigationStatus(); st != 403 {
		t.Errorf("the refused post answered %d, want 403", st)
	}
	if got := j.text(".error-page p"); !strings.Contains(got, "Your account is a viewer, so nothing was changed.") {
		t.Errorf("refusal %q", got)
	}
	j.screenshot("roles-viewer-403.png")
	j.inDark(true)
	j.screenshot("roles-viewer-403-dark.png")

	if pets := j.storedPets(); len(pets) != 2 {
		t.Errorf("%d pets stored after refused posts, want the 2 there were", len(pets))
	}
	events, _, err := j.store.ListAuditEvents(context.Background(), models.AuditQuery{Action: models.ActionForbidden, Actor: "vera"})
	// Refusals of one route are counted on one row a minute: two, whether
	// or not a minute turned between them.
	refused := 0
	for _, ev := range events {
		refused += ev.Occurrences
		if ev.TargetID != vera.ID || ev.Detail != "POST /admin/pets needs editor; role viewer" {
			t.Errorf("audited refusal %+v, want vera's POST /admin/pets", ev)
		}
	}
	if err != nil || refused != 2 {
		t.Errorf("audited refusals %+v, %v; want two, on vera", events, err)
	}
}

// Journey: an admin makes an editor a viewer from the
// member's page; the editor's open browser follows at once; the last
// admin cannot lower their own role.
func TestBrowserAdminChangesRole(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		j := newJourney(t, driver)
		j.addPets(models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable})
		bob := j.addMember("bob", models.RoleEditor)
		other := j.otherBrowser(firefoxUA)
		other.signedInAs("bob", memberPassword)
		if other.count("#pet-form") != 1 {
			t.Fatal("bob, an editor, has no add form")
		}

		j.signedIn()
		j.within("open Staff", chromedp.Click(button("//nav", "Staff")))
		j.waitPath("/admin/users")
		j.waitText(`tr[data-testid="staff-row"]:nth-child(2) [data-testid="staff-role"]`, "editor")
		j.within("open bob", chromedp.Click(button("//main", "bob")))
		j.waitPath(fmt.Sprintf("/admin/users/%d", bob.ID))
		j.choose(j.control(`form[data-testid="action-role"]`, "Role"), "viewer")
		j.within("click Change role", chromedp.Click(button("//main", "Change role")))
		j.waitText(`[data-testid="flash"]`, "bob is now a viewer.")
		if got := j.text(`[data-testid="member-role"]`); got != "viewer" {
			t.Errorf("bob's page shows the role %q", got)
		}
		if got := j.value("#member-role"); got != "viewer" {
			t.Errorf("the role field shows %q after the change", got)
		}
		j.screenshot("roles-change.png")
		if u, _ := j.store.GetUser(context.Background(), bob.ID); u.Role != models.RoleViewer {
			t.Errorf("stored role %q", u.Role)
		}

		// Bob's browser, still signed in, is read-only from its next page.
		other.open("/admin/pets")
		other.waitPetNames("Rex")
		if other.count("#pet-form") != 0 || other.count(`form[action$="/status"]`) != 0 {
			t.Error("bob, now a viewer, still has forms to change pets")
		}

		// The last admin keeps the role.
		me, err := j.store.FindUser(context.Background(), staffUser)
		if err != nil {
			t.Fatal(err)
		}
		j.open(fmt.Sprintf("/admin/users/%d", me.ID))
		j.choose(j.control(`form[data-testid="action-role"]`, "Role"), "editor")
		j.within("click Change role", chromedp.Click(button("//main", "Change role")))
		j.waitText(`[data-testid="member-error"]`, "last enabled admin")
		if st := j.navigationStatus(); st != 409 {
			t.Errorf("lowering the last admin answered %d, want 409", st)
		}
		j.screenshot("roles-last-admin.png")
		if u, _ := j.store.GetUser(context.Background(), me.ID); u.Role != models.RoleAdmin {
			t.Errorf("the last admin is now %q", u.Role)
		}
		if driver == models.DriverSQLite {
			j.open("/admin/users")
			j.onPhone("the staff page")
			j.screenshot("roles-staff-phone.png")
			j.offPhone()
			j.inDark(true)
			j.screenshot("roles-staff-dark.png")
		}
	})
}

// Journey: two browsers signed in to one account; the
// first lists both on "Your sessions", signs the other out, then after it
// signs in again, signs out everywhere else.
func TestBrowserSessions(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	other := j.otherBrowser(firefoxUA)
	other.signedIn()
	j.signedIn()

	j.within("open Sessions", chromedp.Click(button("//nav", "Sessions")))
	j.waitPath("/admin/sessions")
	if got := j.text("h1"); got != "Your sessions" {
		t.Errorf("heading %q", got)
	}
	rows := func() string {
		return evalJS[string](j, `[...document.querySelectorAll('[data-testid="session-row"]')].map(r =>
			r.querySelector('[data-testid="session-browser"]').textContent.trim() + (r.querySelector('[data-testid="this-session"]') ? " (this)" : "")).join("|")`)
	}
	got := rows()
	if !strings.HasPrefix(got, "Headless Chrome ") || !strings.HasSuffix(got, " on Linux (this)|Firefox 128 on Linux") {
		t.Fatalf("sessions %q, want this Headless Chrome, then Firefox", got)
	}
	j.screenshot("sessions.png")

	j.markPage()
	j.within("click Sign out this session", chromedp.Click(button(`//tr[contains(., 'Firefox')]`, "Sign out this session")))
	j.waitText(`[data-testid="flash"]`, "Signed out Firefox 128 on Linux at 127.0.0.1.")
	j.wantNoReload("signing out another session")
	if got := rows(); !strings.HasSuffix(got, "(this)") || strings.Contains(got, "|") {
		t.Errorf("sessions after signing one out %q", got)
	}
	// The keyboard focus goes to the list's heading, not back to the top.
	j.waitJS("focus on the sessions heading", `document.activeElement?.id === "sessions-heading"`)
	if got := evalJS[string](j, `document.querySelector('[data-testid="flash"]').getAttribute("role")`); got != "status" {
		t.Errorf("the message's role %q, want status (announced politely)", got)
	}
	other.open("/admin/pets")
	other.waitPath("/admin/login")

	// Everywhere else.
	other.signIn(staffUser, staffPassword)
	other.waitPath("/admin/pets")
	j.do("reload", chromedp.Reload())
	j.within("see two sessions", chromedp.WaitVisible(button("//main", "Sign out everywhere else")))
	j.onPhone("the sessions page")
	j.screenshot("sessions-phone.png")
	j.offPhone()
	j.inDark(true)
	j.screenshot("sessions-dark.png")
	// By keyboard: Enter on the focused button.
	j.do("focus Sign out everywhere else", chromedp.Focus(button("//main", "Sign out everywhere else")))
	j.do("press Enter", chromedp.KeyEvent(kb.Enter))
	j.waitText(`[data-testid="flash"]`, "Signed out 1 other session. This browser stays signed in.")
	j.within("see this session alone", chromedp.WaitVisible(chromedp.CSS(`[data-testid="only-session"]`)))
	other.open("/admin/pets")
	other.waitPath("/admin/login")
	j.open("/admin/pets")
	j.waitPath("/admin/pets")
}
