package e2e

// Browser journeys: Debian's Chromium, headless, driven through chromedp
// against the product's whole HTTP surface (/v1, /admin and /static: a
// site) served on loopback over a fresh database. They act as staff do, by label and button
// text, and check what staff and the store then see. JavaScript is evaluated
// only to read the page's state (and to set the no-reload marker); the
// pages' strict CSP stays in force, and a CSP violation or an uncaught
// exception fails the journey.
//
// Without Chromium the journeys skip, unless CI=true or
// PETSTORE_REQUIRE_BROWSER=1 (as make test sets), where they fail.
// Screenshots go to PETSTORE_SCREENSHOTS (default testdata/screenshots).

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"petstore/internal/testkit"
	"petstore/models"
)

const (
	// journeyTimeout bounds a whole journey, browser start included;
	// waitTimeout bounds one wait for the page to reach a state. Both are
	// generous: under -race on two CPUs (make test) one bcrypt sign-in
	// takes over 3 s, and other packages' tests compete for the CPUs.
	journeyTimeout = 90 * time.Second
	waitTimeout    = 20 * time.Second

	// The desktop and phone viewports of the screenshots.
	desktopWidth, desktopHeight = 1280, 900
	phoneWidth, phoneHeight     = 390, 844
)

// journey is one visitor's browser tab on a console of its own.
type journey struct {
	t     *testing.T
	ctx   context.Context // the tab, bounded by journeyTimeout
	store *models.Store
	base  string // http://127.0.0.1:PORT

	mu       sync.Mutex
	dialogs  []string // messages of the JavaScript dialogs accepted
	problems []string // CSP violations and uncaught exceptions
}

// chromiumPath finds Debian's Chromium. Without it the test is skipped, or
// fails where the journeys are required.
func chromiumPath(tb testing.TB) string {
	tb.Helper()
	if fi, err := os.Stat("/usr/bin/chromium"); err == nil && !fi.IsDir() {
		return "/usr/bin/chromium"
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	const msg = "Chromium not found (/usr/bin/chromium, or chromium on PATH); make test installs chromium"
	if os.Getenv("CI") == "true" || os.Getenv("PETSTORE_REQUIRE_BROWSER") == "1" {
		tb.Fatal(msg + "; the browser journeys are required here (CI=true or PETSTORE_REQUIRE_BROWSER=1)")
	}
	tb.Skip(msg + "; skipping the browser journeys")
	return ""
}

// newJourney starts a site on a fresh database on driver (holding the
// staff account) and opens a headless Chromium tab on a desktop viewport.
// Everything stops when the test ends.
func newJourney(t *testing.T, driver string) *journey {
	t.Helper()
	exe := chromiumPath(t)
	s := startSite(t, driver)

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox, // the tests may run as root
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "chromium")),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-features", "Translate,OptimizationHints"),
		chromedp.WindowSize(desktopWidth, desktopHeight),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	tabCtx, cancelTab := chromedp.NewContext(allocCtx)
	t.Cleanup(cancelTab)
	ctx, cancel := context.WithTimeout(tabCtx, journeyTimeout)
	t.Cleanup(cancel)

	j := &journey{t: t, ctx: ctx, store: s.store, base: s.base}
	start := time.Now()
	// The first action starts the browser. Focus emulation makes the tab
	// behave as a focused window: autofocus, :focus-visible, keyboard focus.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(desktopWidth, desktopHeight)); err != nil {
		t.Fatalf("start Chromium (%s): %v", exe, err)
	}
	if _, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		t.Fatalf("emulate focus: %v", err)
	}
	t.Logf("Chromium started in %s", time.Since(start).Round(time.Millisecond))
	j.watch()
	t.Cleanup(func() {
		j.mu.Lock()
		defer j.mu.Unlock()
		for _, p := range j.problems {
			t.Errorf("the page reported: %s", p)
		}
	})
	return j
}

// watch accepts every JavaScript dialog (noting its message) and collects
// CSP violations and uncaught exceptions, which fail the journey.
func (j *journey) watch() {
	dialogs := chromedp.Events(j.ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			j.mu.Lock()
			j.dialogs = append(j.dialogs, ev.Message)
			j.mu.Unlock()
			// The click that opened it waits until it is answered; an
			// error here means the tab is closing.
			_, _ = chromedp.Call(j.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	console := chromedp.Console(j.ctx)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.IsException() || strings.Contains(m.Text, "Content Security Policy") {
				j.mu.Lock()
				j.problems = append(j.problems, m.String())
				j.mu.Unlock()
			}
		}
	}()
}

// acceptedDialogs returns the messages of the dialogs accepted so far.
func (j *journey) acceptedDialogs() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.dialogs)
}

// do runs steps, failing the journey with what was being done.
func (j *journey) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	j.t.Helper()
	if err := chromedp.Do(j.ctx, steps...); err != nil {
		j.t.Fatalf("%s: %v (page: %s)", what, err, j.where())
	}
}

// within runs steps that wait for the page, bounded by waitTimeout.
func (j *journey) within(what string, steps ...chromedp.Action[chromedp.Void]) {
	j.t.Helper()
	ctx, cancel := context.WithTimeout(j.ctx, waitTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		j.t.Fatalf("%s: %v (page: %s)", what, err, j.where())
	}
}

// where describes the page for failure messages.
func (j *journey) where() string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(j.ctx), 2*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`location.pathname + location.search + " | " + document.title + " | " + (document.body ? document.body.innerText.replace(/\s+/g, " ").slice(0, 400) : "")`))
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return s
}

// evalJS evaluates a JavaScript expression that reads the page.
func evalJS[T any](j *journey, expr string) T {
	j.t.Helper()
	v, err := chromedp.Run(j.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		j.t.Fatalf("evaluate %s: %v (page: %s)", expr, err, j.where())
	}
	return v
}

// waitJS polls a JavaScript expression until it is true. It survives
// navigations, unlike chromedp.Poll, and needs no eval in the page, which
// the CSP forbids.
func (j *journey) waitJS(what, expr string) {
	j.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		ok, err := chromedp.Run(j.ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) || j.ctx.Err() != nil {
			j.t.Fatalf("waited %s for %s: %s is not true (last error: %v) (page: %s)", waitTimeout, what, expr, err, j.where())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// xpathString quotes s as an XPath 1.0 string literal (which has no
// escapes: s must not hold both kinds of quote).
func xpathString(s string) string {
	if !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	return `"` + s + `"`
}

// button selects the button or link whose visible text is name, within
// the element an XPath scope selects (such as //main or
// //form[@id='pet-form']), as a person finds it.
func button(scope, name string) chromedp.Search {
	return chromedp.Search(fmt.Sprintf(`%s//*[self::button or self::a][normalize-space()=%s]`, scope, xpathString(name)))
}

// text returns the trimmed text of the first element matching css, or ""
// when there is none.
func (j *journey) text(css string) string {
	j.t.Helper()
	return evalJS[string](j, fmt.Sprintf(`(document.querySelector(%s)?.textContent ?? "").trim()`, jsString(css)))
}

// waitText waits until the first element matching css has text containing want.
func (j *journey) waitText(css, want string) {
	j.t.Helper()
	j.waitJS(fmt.Sprintf("%s to say %q", css, want),
		fmt.Sprintf(`(document.querySelector(%s)?.textContent ?? "").includes(%s)`, jsString(css), jsString(want)))
}

// value returns the current value of the form control matching css.
func (j *journey) value(css string) string {
	j.t.Helper()
	return evalJS[string](j, fmt.Sprintf(`document.querySelector(%s)?.value ?? "<no such control>"`, jsString(css)))
}

// control returns a CSS selector of the form control labelled label within
// the element matching scope, as a person finds it; it fails when no label
// with that text points at a control.
func (j *journey) control(scope, label string) chromedp.CSS {
	j.t.Helper()
	expr := fmt.Sprintf(`(() => {
		const scope = document.querySelector(%s);
		const l = scope && [...scope.querySelectorAll("label")].find(l => l.textContent.trim() === %s);
		return l && l.control && l.control.id ? l.control.id : "";
	})()`, jsString(scope), jsString(label))
	j.waitJS(fmt.Sprintf("a control labelled %q in %s", label, scope), expr+` !== ""`)
	return chromedp.CSS("#" + evalJS[string](j, expr))
}

// fill types text into the (empty) control labelled label within scope.
func (j *journey) fill(scope, label, text string) {
	j.t.Helper()
	sel := j.control(scope, label)
	j.within(fmt.Sprintf("type %q into %q", text, label), chromedp.SendKeys(sel, text))
}

// choose picks option in a select by typing its name, as a keyboard user
// does; the browser fires input and change as for a pick with the mouse.
func (j *journey) choose(sel chromedp.CSS, option string) {
	j.t.Helper()
	j.within(fmt.Sprintf("choose %q in %s", option, sel), chromedp.SendKeys(sel, option))
	j.waitJS(fmt.Sprintf("%s to show %q", sel, option),
		fmt.Sprintf(`document.querySelector(%s)?.value === %s`, jsString(string(sel)), jsString(option)))
}

// open loads a console path and waits for it.
func (j *journey) open(path string) {
	j.t.Helper()
	j.do("open "+path, chromedp.Navigate(j.base+path))
}

// location returns the tab's current URL.
func (j *journey) location() *url.URL {
	j.t.Helper()
	u, err := url.Parse(evalJS[string](j, `location.href`))
	if err != nil {
		j.t.Fatal(err)
	}
	return u
}

// waitPath waits until the tab's URL has path.
func (j *journey) waitPath(path string) {
	j.t.Helper()
	// The address changes when a new page commits, before its body is
	// parsed: wait for the document too, or a read right after finds
	// nothing (a heading read as "" failed a run in CI).
	j.waitJS("the browser to be at "+path, fmt.Sprintf(`location.pathname === %s && document.readyState !== "loading"`, jsString(path)))
}

// signIn fills and submits the sign-in form on the current page.
func (j *journey) signIn(username, password string) {
	j.t.Helper()
	j.within("see the sign-in form", chromedp.WaitVisible(chromedp.CSS(`form[action="/admin/login"]`)))
	j.fill("main", "Username", username)
	j.fill("main", "Password", password)
	j.within("click Sign in", chromedp.Click(button("//main", "Sign in")))
}

// signedIn opens the sign-in page, signs in as the staff account and waits
// for the pets page.
func (j *journey) signedIn() {
	j.t.Helper()
	j.open("/admin/login")
	j.signIn(staffUser, staffPassword)
	j.within("land on a signed-in page", chromedp.WaitVisible(chromedp.CSS(`[data-testid="sign-out"]`)))
	j.waitPath("/admin/pets")
}

// markPage sets a marker on the window that only a full page load clears.
func (j *journey) markPage() {
	j.t.Helper()
	j.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.__noReload = 1`))
}

// wantNoReload fails unless the marker set by markPage is still there.
func (j *journey) wantNoReload(after string) {
	j.t.Helper()
	if got := evalJS[int](j, `window.__noReload ?? 0`); got != 1 {
		j.t.Errorf("%s reloaded the whole page (marker %d, want 1)", after, got)
	}
}

// waitPetNames waits until the table lists exactly want, top to bottom.
func (j *journey) waitPetNames(want ...string) {
	j.t.Helper()
	w, _ := json.Marshal(want) // a JavaScript array literal
	j.waitJS(fmt.Sprintf("the pets table to list %q", want),
		fmt.Sprintf(`JSON.stringify([...document.querySelectorAll('tr[data-testid="pet-row"] [data-testid="pet-name"]')].map(e => e.textContent.trim())) === JSON.stringify(%s)`, w))
}

// searchParam returns a parameter of the tab's URL ("" when absent).
func (j *journey) searchParam(name string) string {
	j.t.Helper()
	return evalJS[string](j, fmt.Sprintf(`new URLSearchParams(location.search).get(%s) ?? ""`, jsString(name)))
}

// screenshot saves a full-page PNG as name in the screenshots directory.
func (j *journey) screenshot(name string) {
	j.t.Helper()
	dir := os.Getenv("PETSTORE_SCREENSHOTS")
	if dir == "" {
		dir = testkit.RepoPath(j.t, "testdata", "screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		j.t.Fatal(err)
	}
	// Quality 100 makes chromedp capture PNG (anything less is JPEG).
	png, err := chromedp.Run(j.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		j.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		j.t.Fatal(err)
	}
	j.t.Logf("screenshot: %s", path)
}

// addPets stores pets directly, oldest first.
func (j *journey) addPets(pets ...models.NewPet) []models.Pet {
	j.t.Helper()
	var out []models.Pet
	for _, np := range pets {
		p, err := j.store.CreatePet(context.Background(), np, "test")
		if err != nil {
			j.t.Fatalf("create pet %q: %v", np.Name, err)
		}
		out = append(out, p)
	}
	return out
}

// storedPets returns every pet in the store, by id.
func (j *journey) storedPets() []models.Pet {
	j.t.Helper()
	pets, _, err := j.store.ListPets(context.Background(), models.PetQuery{Limit: models.MaxPageLimit})
	if err != nil {
		j.t.Fatal(err)
	}
	return pets
}

// Journey 1: a wrong password, then the right one, lands on the pets page.
func TestBrowserSignIn(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	j.open("/admin/login")
	j.screenshot("login.png")

	j.signIn(staffUser, "not the password")
	j.within("see the sign-in error", chromedp.WaitVisible(chromedp.CSS(`[data-testid="login-error"]`)))
	if got := j.text(`[data-testid="login-error"]`); got != "Wrong username or password." {
		t.Errorf("sign-in error %q, want %q", got, "Wrong username or password.")
	}
	if u := j.location(); u.Path != "/admin/login" {
		t.Errorf("after a wrong password the browser is at %s, want the sign-in page", u)
	}
	if got := j.value("#username"); got != staffUser {
		t.Errorf("username field %q after a failed sign-in, want what was typed (%q)", got, staffUser)
	}
	if got := j.value("#password"); got != "" {
		t.Errorf("password field kept %q after a failed sign-in, want it empty", got)
	}
	if n := evalJS[int](j, `document.querySelectorAll('[data-testid="sign-out"]').length`); n != 0 {
		t.Errorf("a wrong password shows a Sign out button")
	}

	j.do("clear the username", chromedp.Clear(chromedp.CSS("#username")))
	j.signIn(staffUser, staffPassword)
	j.within("see a signed-in page", chromedp.WaitVisible(chromedp.CSS(`[data-testid="sign-out"]`)))
	j.waitPath("/admin/pets")
	if got := j.text("h1"); got != "Pets" {
		t.Errorf("heading %q after sign-in, want Pets", got)
	}
	j.within("see the empty state", chromedp.WaitVisible(chromedp.CSS(`[data-testid="empty"]`)))
	if got := j.text(`[data-testid="empty"]`); !strings.Contains(got, "No pets yet") {
		t.Errorf("empty state %q, want it to say No pets yet", got)
	}
}

// Journey 1, continued: a page opened while signed out comes back after
// signing in.
func TestBrowserSignInDeepLink(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	j.open("/admin/pets?status=sold")
	j.waitPath("/admin/login")
	if next := j.searchParam("next"); next != "/admin/pets?status=sold" {
		t.Errorf("sign-in page next=%q, want /admin/pets?status=sold", next)
	}
	j.signIn(staffUser, staffPassword)
	j.within("see a signed-in page", chromedp.WaitVisible(chromedp.CSS(`[data-testid="sign-out"]`)))
	if u := j.location(); u.Path != "/admin/pets" || u.RawQuery != "status=sold" {
		t.Errorf("after sign-in the browser is at %s, want /admin/pets?status=sold", u.RequestURI())
	}
	if got := j.value("#filter-status"); got != "sold" {
		t.Errorf("status filter %q after the deep link, want sold", got)
	}
}

// Journey 2: add a pet without a page reload (on SQLite and on MariaDB).
func TestBrowserAddPet(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		j := newJourney(t, driver)
		j.signedIn()
		j.within("see the empty state", chromedp.WaitVisible(chromedp.CSS(`[data-testid="empty"]`)))

		j.markPage()
		j.openAddPet()
		j.fill("#pet-form", "Name", "Biscuit")
		j.fill("#pet-form", "Category ID", "7")
		j.choose(j.control("#pet-form", "Status"), "pending")
		j.within("click Add pet", chromedp.Click(button("//form[@id='pet-form']", "Add pet")))

		j.waitPetNames("Biscuit")
		j.wantNoReload("adding a pet")
		j.waitText(`[data-testid="flash"]`, "Added Biscuit")
		if got := j.text(`tr[data-testid="pet-row"] [data-testid="pet-status"]`); got != "pending" {
			t.Errorf("the new row's status %q, want pending", got)
		}
		if n := evalJS[int](j, `document.querySelectorAll('[data-testid="empty"]').length`); n != 0 {
			t.Errorf("the empty state is still shown after adding a pet")
		}
		if got := j.value("#pet-name"); got != "" {
			t.Errorf("the add form kept the name %q after a success, want it cleared", got)
		}

		pets := j.storedPets()
		if len(pets) != 1 || pets[0].Name != "Biscuit" || pets[0].CategoryID != 7 || pets[0].Status != models.StatusPending {
			t.Fatalf("stored pets %+v, want one Biscuit, category 7, pending", pets)
		}
		if got := j.text(fmt.Sprintf("#pet-%d [data-testid=pet-name]", pets[0].ID)); got != "Biscuit" {
			t.Errorf("row #pet-%d shows %q, want Biscuit", pets[0].ID, got)
		}
	})
}

// Journey 3: a validation error shows beside each field, keeps what was
// typed and stores nothing.
func TestBrowserPetValidation(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	j.signedIn()

	j.markPage()
	// The name is left empty. Category ID is a number input, where Chromium
	// drops letters as they are typed ("abc" alone leaves it empty), so the
	// bad value is "abc1.5": 1.5 when the field takes numbers only, the
	// whole text if it ever takes text; either way not a whole number.
	j.openAddPet()
	j.fill("#pet-form", "Category ID", "abc1.5")
	typed := j.value("#pet-category")
	if typed != "1.5" && typed != "abc1.5" {
		t.Fatalf("the category field holds %q after typing abc1.5", typed)
	}
	j.within("click Add pet", chromedp.Click(button("//form[@id='pet-form']", "Add pet")))

	j.within("see both field errors",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="pet-name-error"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="pet-category-error"]`)))
	j.wantNoReload("a refused pet")
	if got := j.text(`[data-testid="pet-name-error"]`); got != "Name is required." {
		t.Errorf("name error %q, want %q", got, "Name is required.")
	}
	if got := j.text(`[data-testid="pet-category-error"]`); !strings.Contains(got, "whole number") {
		t.Errorf("category error %q, want it to ask for a whole number", got)
	}
	// Each message sits beside its field and is tied to it for screen readers.
	for _, f := range []struct{ field, errID string }{{"pet-name", "pet-name-error"}, {"pet-category", "pet-category-error"}} {
		ok := evalJS[bool](j, fmt.Sprintf(`(() => {
			const f = document.getElementById(%[1]s), e = document.getElementById(%[2]s);
			return !!f && !!e && f.getAttribute("aria-invalid") === "true" &&
				(f.getAttribute("aria-describedby") || "").split(" ").includes(%[2]s) &&
				f.parentElement === e.parentElement;
		})()`, jsString(f.field), jsString(f.errID)))
		if !ok {
			t.Errorf("#%s is not marked invalid and described by #%s beside it", f.field, f.errID)
		}
	}
	if got := j.value("#pet-category"); got != typed {
		t.Errorf("category field %q after the error, want what was typed (%q)", got, typed)
	}
	// The keyboard focus goes back to the first field in error.
	j.waitJS("focus on the first invalid field", `document.activeElement && document.activeElement.id === "pet-name"`)
	j.waitText(`[data-testid="flash"]`, "not added")
	if pets := j.storedPets(); len(pets) != 0 {
		t.Errorf("a refused pet was stored: %+v", pets)
	}
	j.screenshot("pets-validation.png")

	// Corrected, the same form adds the pet.
	j.fill("#pet-form", "Name", "Mango")
	j.do("correct the category", chromedp.Clear(chromedp.CSS("#pet-category")))
	j.fill("#pet-form", "Category ID", "3")
	j.within("click Add pet", chromedp.Click(button("//form[@id='pet-form']", "Add pet")))
	j.waitPetNames("Mango")
	j.within("see the errors go", chromedp.WaitNotPresent(chromedp.CSS(`[data-testid="pet-name-error"]`)))
	j.wantNoReload("the corrected pet")
	if pets := j.storedPets(); len(pets) != 1 || pets[0].Name != "Mango" || pets[0].CategoryID != 3 {
		t.Errorf("stored pets %+v, want Mango in category 3", pets)
	}
}

// Journey 4: filter by status and search by name in place; the URL keeps
// the filter across a reload and back.
func TestBrowserFilterAndSearch(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	j.addPets(
		models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable},
		models.NewPet{Name: "Tom", CategoryID: 2, Status: models.StatusSold},
		models.NewPet{Name: "Tabby", CategoryID: 2, Status: models.StatusSold},
		models.NewPet{Name: "Polly", CategoryID: 3, Status: models.StatusPending},
	)
	j.signedIn()
	j.waitPetNames("Polly", "Tabby", "Tom", "Rex")
	j.markPage()

	j.choose(j.control("#pet-filter", "Status"), "sold")
	j.waitPetNames("Tabby", "Tom")
	j.waitJS("the URL to carry status=sold", `new URLSearchParams(location.search).get("status") === "sold"`)
	j.wantNoReload("filtering by status")

	j.fill("#pet-filter", "Search by name", "tab")
	j.waitPetNames("Tabby")
	j.waitJS("the URL to carry q=tab", `new URLSearchParams(location.search).get("q") === "tab"`)
	if got := j.searchParam("status"); got != "sold" {
		t.Errorf("status=%q in the URL after searching, want sold", got)
	}
	j.wantNoReload("searching by name")

	j.do("reload", chromedp.Reload())
	if got := evalJS[int](j, `window.__noReload ?? 0`); got != 0 {
		t.Fatalf("the reload did not load a new page")
	}
	j.waitPetNames("Tabby")
	if got := j.value("#filter-status"); got != "sold" {
		t.Errorf("status filter %q after reload, want sold", got)
	}
	if got := j.value("#filter-q"); got != "tab" {
		t.Errorf("search %q after reload, want tab", got)
	}

	// Back: first to the status filter alone, then to the unfiltered list.
	j.do("go back", chromedp.NavigateBack())
	j.waitJS("the URL to lose q", `!new URLSearchParams(location.search).get("q")`)
	j.waitPetNames("Tabby", "Tom")
	if got := j.searchParam("status"); got != "sold" {
		t.Errorf("status=%q after one step back, want sold", got)
	}
	if got := j.value("#filter-q"); got != "" {
		t.Errorf("search %q after one step back, want empty", got)
	}
	j.do("go back again", chromedp.NavigateBack())
	j.waitJS("the URL to lose the filter", `location.pathname === "/admin/pets" && !new URLSearchParams(location.search).get("status")`)
	j.waitPetNames("Polly", "Tabby", "Tom", "Rex")
	if got := j.value("#filter-status"); got != "" {
		t.Errorf("status filter %q on the unfiltered list, want All (\"\")", got)
	}

	// A filter nothing matches says so.
	j.fill("#pet-filter", "Search by name", "zebra")
	j.within("see the no-match state", chromedp.WaitVisible(chromedp.CSS(`[data-testid="empty"]`)))
	if got := j.text(`[data-testid="empty"]`); !strings.Contains(got, "No pets match") {
		t.Errorf("empty state for a filter %q, want it to say no pets match", got)
	}
}

// Journey 5: change a pet's status from its row.
func TestBrowserChangeStatus(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	pets := j.addPets(
		models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable},
		models.NewPet{Name: "Polly", CategoryID: 3, Status: models.StatusPending},
	)
	rex := pets[0]
	j.signedIn()
	j.waitPetNames("Polly", "Rex")
	j.markPage()

	row := fmt.Sprintf("#pet-%d", rex.ID)
	j.choose(chromedp.CSS(`select[aria-label="Status of Rex"]`), "sold")
	j.within("click Update on Rex's row", chromedp.Click(button(fmt.Sprintf("//tr[@id='pet-%d']", rex.ID), "Update")))
	j.waitText(row+` [data-testid="pet-status"]`, "sold")
	j.wantNoReload("changing a status")
	j.waitText(`[data-testid="flash"]`, "Rex is now sold.")
	if got := j.text(fmt.Sprintf("#pet-%d [data-testid=pet-status]", pets[1].ID)); got != "pending" {
		t.Errorf("Polly's status shows %q, want it untouched (pending)", got)
	}
	if got := j.value(`select[aria-label="Status of Rex"]`); got != "sold" {
		t.Errorf("Rex's row select shows %q after the update, want sold", got)
	}

	p, err := j.store.GetPet(context.Background(), rex.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != models.StatusSold {
		t.Errorf("stored status %q, want sold", p.Status)
	}

	// The swapped row works again: a second change from the same row.
	j.choose(chromedp.CSS(`select[aria-label="Status of Rex"]`), "available")
	j.within("click Update again", chromedp.Click(button(fmt.Sprintf("//tr[@id='pet-%d']", rex.ID), "Update")))
	j.waitText(row+` [data-testid="pet-status"]`, "available")
	j.wantNoReload("a second status change")
	if p, err := j.store.GetPet(context.Background(), rex.ID); err != nil || p.Status != models.StatusAvailable {
		t.Errorf("stored status %q (err %v) after the second change, want available", p.Status, err)
	}
}

// Journey 6: create an API key, use it on the API, revoke it.
func TestBrowserAPIKeys(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	j.signedIn()
	j.within("open API keys", chromedp.Click(button("//nav", "API keys")))
	j.waitPath("/admin/api-keys")

	j.fill("main", "Name", "Partner app")
	j.within("click Create key", chromedp.Click(button("//main", "Create key")))
	j.within("see the new key", chromedp.WaitVisible(chromedp.CSS(`[data-testid="new-key"]`)))
	key := evalJS[string](j, `(() => {
		const el = document.querySelector('[data-testid="new-key"] input, [data-testid="new-key"] code');
		return el ? (el.value ?? el.textContent).trim() : "";
	})()`)
	if !testkit.KeyPattern.MatchString(key) {
		t.Fatalf("the new key %q does not look like a pst_ key", key)
	}
	if n := evalJS[int](j, `[...document.querySelectorAll('[data-testid="new-key"] button')].filter(b => b.textContent.trim().startsWith("Copy")).length`); n != 1 {
		t.Errorf("%d Copy buttons beside the new key, want 1", n)
	}
	j.screenshot("api-keys-new.png")

	partner := testkit.NewAPIClient(j.base, key)
	if r := partner.Get("/v1/pets"); r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != "[]" {
		t.Fatalf("GET /v1/pets with the new key: %s, want 200 []", r)
	}

	keys, err := j.store.ListAPIKeys(context.Background())
	if err != nil || len(keys) != 1 {
		t.Fatalf("stored keys %+v (err %v), want one", keys, err)
	}
	k := keys[0]
	if k.Name != "Partner app" || k.CreatedBy != staffUser || !strings.HasPrefix(key, k.Prefix) {
		t.Errorf("stored key %+v, want Partner app by %s with the key's prefix", k, staffUser)
	}

	// Shown once: the page again does not have it.
	j.open("/admin/api-keys")
	row := fmt.Sprintf("#api-key-%d", k.ID)
	j.within("see the key's row", chromedp.WaitVisible(chromedp.CSS(row)))
	if n := evalJS[int](j, `document.querySelectorAll('[data-testid="new-key"]').length`); n != 0 {
		t.Errorf("the new key panel is shown again on the next visit")
	}
	if evalJS[bool](j, fmt.Sprintf(`document.documentElement.outerHTML.includes(%s)`, jsString(key))) {
		t.Errorf("the key itself is in the page on the next visit")
	}
	if got := j.text(row + " th"); got != "Partner app" {
		t.Errorf("the key's row is named %q, want Partner app", got)
	}

	j.markPage()
	j.within("click Revoke", chromedp.Click(button("//tr[@id='"+strings.TrimPrefix(row, "#")+"']", "Revoke")))
	j.within("see the key revoked", chromedp.WaitVisible(chromedp.CSS(row+` [data-testid="revoked"]`)))
	j.wantNoReload("revoking a key")
	if d := j.acceptedDialogs(); len(d) != 1 || !strings.Contains(d[0], "Partner app") {
		t.Errorf("confirmation dialogs %q, want one naming the key", d)
	}
	if n := evalJS[int](j, fmt.Sprintf(`document.querySelectorAll(%s).length`, jsString(row+` [data-testid="revoke"]`))); n != 0 {
		t.Errorf("a revoked key still offers Revoke")
	}
	j.waitText(`[data-testid="flash"]`, "revoked")

	if r := partner.Get("/v1/pets"); r.Status != http.StatusUnauthorized {
		t.Errorf("GET /v1/pets with the revoked key: %s, want 401", r)
	}
	keys, err = j.store.ListAPIKeys(context.Background())
	if err != nil || len(keys) != 1 || keys[0].RevokedAt == nil {
		t.Errorf("stored keys %+v (err %v), want the one key revoked", keys, err)
	}
}

// Journey 6b: create a read-only key with an expiry date; it reads, is
// refused a create, and the list shows its scope and expiry.
func TestBrowserAPIKeyScopes(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	j.signedIn()
	j.open("/admin/api-keys")

	j.fill("main", "Name", "Reader app")
	write := j.control("main", "pets:write: add animals (POST /v1/pets)")
	if !evalJS[bool](j, fmt.Sprintf(`document.querySelector(%s).checked`, jsString(string(write)))) {
		t.Fatal("pets:write is not checked by default")
	}
	j.within("uncheck pets:write", chromedp.Click(write))
	// A date field takes the digits of the month, day and year in the
	// browser's (en-US) order.
	expiry := time.Now().UTC().AddDate(0, 3, 0)
	expires := j.control("main", "Expires on (optional)")
	j.within("type the expiry date", chromedp.SendKeys(expires, expiry.Format("01022006")))
	if got := j.value(string(expires)); got != expiry.Format(time.DateOnly) {
		t.Fatalf("the expiry field holds %q, want %s", got, expiry.Format(time.DateOnly))
	}
	j.markPage()
	j.within("click Create key", chromedp.Click(button("//main", "Create key")))
	j.within("see the new key", chromedp.WaitVisible(chromedp.CSS(`[data-testid="new-key"]`)))
	j.wantNoReload("creating a key")
	key := j.value(`[data-testid="new-key"] input`)
	if !testkit.KeyPattern.MatchString(key) {
		t.Fatalf("the new key %q does not look like a pst_ key", key)
	}
	j.screenshot("api-keys-scoped.png")

	partner := testkit.NewAPIClient(j.base, key)
	if r := partner.Get("/v1/pets"); r.Status != http.StatusOK {
		t.Errorf("GET /v1/pets with the read-only key: %s, want 200", r)
	}
	r := partner.CreatePet("Rex")
	if r.Status != http.StatusForbidden || r.Header.Get("WWW-Authenticate") != `Bearer realm="petstore", error="insufficient_scope", scope="pets:write"` {
		t.Errorf("POST /v1/pets with the read-only key: %s, WWW-Authenticate %q; want 403 insufficient_scope", r, r.Header.Get("WWW-Authenticate"))
	}
	if pets := j.storedPets(); len(pets) != 0 {
		t.Errorf("the refused create stored %d pets", len(pets))
	}

	keys, err := j.store.ListAPIKeys(context.Background())
	if err != nil || len(keys) != 1 {
		t.Fatalf("stored keys %+v (err %v), want one", keys, err)
	}
	k := keys[0]
	midnight := time.Date(expiry.Year(), expiry.Month(), expiry.Day(), 0, 0, 0, 0, time.UTC)
	if k.Scopes != models.ScopePetsRead || k.ExpiresAt == nil || !k.ExpiresAt.Equal(midnight) {
		t.Errorf("stored key: scopes %q, expires %v; want pets:read, %v", k.Scopes, k.ExpiresAt, midnight)
	}
	row := fmt.Sprintf("#api-key-%d", k.ID)
	if got := strings.Join(strings.Fields(j.text(row+` [data-testid="scopes"]`)), " "); got != "pets:read" {
		t.Errorf("the row's scopes %q, want pets:read", got)
	}
	if got := strings.Join(strings.Fields(j.text(row+` [data-testid="expires"]`)), " "); got != expiry.Format("2 Jan 2006")+", 00:00 UTC" {
		t.Errorf("the row's expiry %q", got)
	}
	// The form is back as new: the defaults checked again.
	if !evalJS[bool](j, fmt.Sprintf(`document.querySelector(%s).checked`, jsString(string(j.control("main", "pets:write: add animals (POST /v1/pets)"))))) {
		t.Error("after creating, the form does not come back with pets:write checked")
	}
}

// Journey 7: sign out ends the session.
func TestBrowserSignOut(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	j.signedIn()

	j.within("click Sign out", chromedp.Click(chromedp.CSS(`[data-testid="sign-out"]`)))
	j.waitPath("/admin/login")
	j.waitText(`[data-testid="flash"]`, "You have signed out.")
	if n := evalJS[int](j, `document.querySelectorAll('[data-testid="sign-out"]').length`); n != 0 {
		t.Errorf("the sign-in page after signing out still shows Sign out")
	}

	j.open("/admin/pets")
	j.waitPath("/admin/login")
	if next := j.searchParam("next"); next != "/admin/pets" {
		t.Errorf("next=%q after signing out, want /admin/pets", next)
	}
	j.within("see the sign-in form", chromedp.WaitVisible(chromedp.CSS("#username")))
	if n := evalJS[int](j, `document.querySelectorAll('[data-testid="sign-out"]').length`); n != 0 {
		t.Errorf("the pets page is reachable after signing out")
	}
}

// Journey 8: the sign-in form by keyboard alone.
func TestBrowserKeyboard(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	j.open("/admin/login")
	j.within("see the sign-in form", chromedp.WaitVisible(chromedp.CSS("#username")))

	// Username has autofocus; Tab moves on in reading order.
	focused := func() string {
		return evalJS[string](j, `(() => { const e = document.activeElement; return e ? (e.id ? "#" + e.id : e.tagName.toLowerCase() + ":" + e.textContent.trim()) : ""; })()`)
	}
	j.waitJS("the username field to have focus", `document.activeElement?.id === "username"`)
	steps := []string{"#password", "button:Sign in"}
	for _, want := range steps {
		j.do("press Tab", chromedp.KeyEvent(kb.Tab))
		if got := focused(); got != want {
			t.Fatalf("Tab focused %s, want %s", got, want)
		}
	}
	if style := evalJS[string](j, `getComputedStyle(document.activeElement).outlineStyle`); style == "none" {
		t.Errorf("the focused Sign in button shows no focus outline")
	}

	// Back to the fields with Shift+Tab, type, and submit with Enter.
	j.do("press Shift+Tab twice",
		chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift)),
		chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift)))
	if got := focused(); got != "#username" {
		t.Fatalf("Shift+Tab twice focused %s, want #username", got)
	}
	j.do("type the credentials",
		chromedp.KeyEvent(staffUser), chromedp.KeyEvent(kb.Tab),
		chromedp.KeyEvent(staffPassword), chromedp.KeyEvent(kb.Enter))
	j.within("land on a signed-in page", chromedp.WaitVisible(chromedp.CSS(`[data-testid="sign-out"]`)))
	j.waitPath("/admin/pets")
}

// The layout at a glance: a few pets on a desktop, on a phone and in dark
// mode. The screenshots are for people to look at; the checks catch a page
// wider than the phone, an ignored dark preference and unescaped names.
func TestBrowserLayout(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	names := []string{"Rex", "Tom", "Polly", "Sir Reginald Fluffington the Third of Upper Wallop", "Ñandú",
		`<img src=x onerror="alert(1)">`, "<script>alert(2)</script>"}
	statuses := []models.Status{models.StatusAvailable, models.StatusSold, models.StatusPending}
	var pets []models.NewPet
	for i, name := range names {
		pets = append(pets, models.NewPet{Name: name, CategoryID: int64(i%3 + 1), Status: statuses[i%3]})
	}
	pets[4].CategoryID = math.MaxInt64
	j.addPets(pets...)
	newestFirst := slices.Clone(names)
	slices.Reverse(newestFirst)

	j.signedIn()
	j.waitPetNames(newestFirst...)
	if lb := luminance(t, j.background()); lb < 0.6 {
		t.Errorf("light mode: background luminance %.2f, want a light page", lb)
	}
	j.screenshot("pets-desktop.png")

	// Phone: a table may scroll inside its own box, but the page must not.
	j.do("emulate a phone",
		chromedp.EmulateViewport(phoneWidth, phoneHeight, chromedp.EmulatePortrait, chromedp.EmulateMobile),
		chromedp.Reload())
	j.waitPetNames(newestFirst...)
	if w := evalJS[int](j, `innerWidth`); w != phoneWidth {
		t.Errorf("viewport %d px wide, want %d", w, phoneWidth)
	}
	if sw := evalJS[int](j, `document.documentElement.scrollWidth`); sw > phoneWidth {
		t.Errorf("the page is %d px wide on a %d px phone: it scrolls sideways", sw, phoneWidth)
	}
	j.screenshot("pets-phone.png")

	// Dark: the system preference is followed.
	j.do("back to the desktop", chromedp.EmulateViewport(desktopWidth, desktopHeight))
	if _, err := chromedp.Call(j.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}},
	}); err != nil {
		t.Fatalf("emulate dark mode: %v", err)
	}
	j.do("reload", chromedp.Reload())
	j.waitPetNames(newestFirst...)
	bg, fg := j.background(), evalJS[string](j, `getComputedStyle(document.body).color`)
	if lb, lf := luminance(t, bg), luminance(t, fg); lb > 0.2 || lf < 0.4 {
		t.Errorf("dark mode: background %s (luminance %.2f), text %s (%.2f); want a dark background and light text", bg, lb, fg, lf)
	}
	j.screenshot("pets-dark.png")

	// The other pages, in light mode, for review.
	if _, err := chromedp.Call(j.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}},
	}); err != nil {
		t.Fatalf("emulate light mode: %v", err)
	}
	for _, p := range []struct{ path, heading, file string }{
		{"/admin/users", "Staff", "staff.png"},
		{"/admin/audit", "Audit trail", "audit.png"},
		{"/admin/api-keys", "API keys", "api-keys.png"},
	} {
		j.open(p.path)
		j.waitText("h1", p.heading)
		j.screenshot(p.file)
	}

	if d := j.acceptedDialogs(); len(d) != 0 {
		t.Errorf("hostile pet names ran script: dialogs %q", d)
	}
}

// background returns the page's background color: the body's, or the
// root's when the body is transparent.
func (j *journey) background() string {
	j.t.Helper()
	return evalJS[string](j, `(() => {
		const b = getComputedStyle(document.body).backgroundColor;
		return b === "rgba(0, 0, 0, 0)" ? getComputedStyle(document.documentElement).backgroundColor : b;
	})()`)
}

// luminance returns the relative luminance (0 black .. 1 white) of a CSS
// rgb() or rgba() color.
func luminance(tb testing.TB, css string) float64 {
	tb.Helper()
	var r, g, b float64
	inner := css[strings.IndexByte(css, '(')+1 : strings.LastIndexByte(css, ')')]
	parts := strings.Split(inner, ",")
	if len(parts) < 3 {
		tb.Fatalf("cannot read the color %q", css)
	}
	for i, p := range []*float64{&r, &g, &b} {
		if _, err := fmt.Sscan(strings.TrimSpace(parts[i]), p); err != nil {
			tb.Fatalf("cannot read the color %q: %v", css, err)
		}
	}
	lin := func(c float64) float64 {
		c /= 255
		if c <= 0.04045 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}
