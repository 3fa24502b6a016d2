package e2e

// Accessibility and layout, checked by machine and left for people to look
// at: axe-core (vendored in testdata/axe-core, injected through the
// DevTools protocol, to which the pages' CSP does not apply) on every
// console page as an admin and as a viewer, in light and dark; the pets
// page's first screen on a desktop and a phone; and screenshots of the
// pages staff use most, at both sizes and in both schemes.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"petstore/internal/testkit"
	"petstore/models"
)

// axeTags are the rule sets every page must pass: WCAG 2.0, 2.1 and 2.2,
// levels A and AA.
var axeTags = []string{"wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"}

// axeSource is axe.min.js, read once.
var axeSource = sync.OnceValues(func() (string, error) {
	b, err := os.ReadFile(filepath.Join("testdata", "axe-core", "axe.min.js"))
	return string(b), err
})

// axeViolation is one failed rule on a page, with the elements it failed on.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target  string `json:"target"`
		Summary string `json:"summary"`
	} `json:"nodes"`
}

// axe runs axe-core on the page as it stands and returns its violations,
// one line per failing element.
func (j *journey) axe() []string {
	j.t.Helper()
	src, err := axeSource()
	if err != nil {
		j.t.Fatalf("read axe-core: %v", err)
	}
	// A new document has no axe: inject it once per page.
	if !evalJS[bool](j, `typeof window.axe === "object"`) {
		if _, err := chromedp.Run(j.ctx, chromedp.Evaluate[bool](src+"\n;true")); err != nil {
			j.t.Fatalf("inject axe-core: %v", err)
		}
	}
	// Transitions (Pico fades colours) must end before contrast is read.
	j.waitJS("transitions to end", `document.getAnimations().every(a => a.playState !== "running")`)
	expr := fmt.Sprintf(`axe.run(document, {runOnly: {type: "tag", values: %s}, resultTypes: ["violations"]})
		.then(r => r.violations.map(v => ({id: v.id, impact: v.impact || "", help: v.help,
			nodes: v.nodes.map(n => ({target: JSON.stringify(n.target), summary: n.failureSummary || ""}))})))`,
		jsonList(axeTags))
	vs, err := chromedp.Run(j.ctx, chromedp.Evaluate[[]axeViolation](expr, func(p *runtime.EvaluateParams) {
		p.AwaitPromise = new(bool)
		*p.AwaitPromise = true
	}))
	if err != nil {
		j.t.Fatalf("run axe-core: %v (page: %s)", err, j.where())
	}
	var out []string
	for _, v := range vs {
		for _, n := range v.Nodes {
			out = append(out, fmt.Sprintf("%s (%s): %s at %s: %s", v.ID, v.Impact, v.Help, n.Target,
				strings.Join(strings.Fields(n.Summary), " ")))
		}
	}
	return out
}

// jsonList writes strings as a JavaScript array literal.
func jsonList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = jsString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// scheme switches the emulated colour scheme without reloading.
func (j *journey) scheme(s string) {
	j.t.Helper()
	if _, err := chromedp.Call(j.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: s}},
	}); err != nil {
		j.t.Fatalf("emulate %s mode: %v", s, err)
	}
}

// checkAxe runs axe on the current page, named what, in light and dark,
// and reports every violation.
func (j *journey) checkAxe(what string) {
	j.t.Helper()
	for _, s := range []string{"light", "dark"} {
		j.scheme(s)
		for _, v := range j.axe() {
			j.t.Errorf("%s, %s: %s", what, s, v)
		}
	}
	j.scheme("light")
}

// checkAxeSizes runs checkAxe on the page as it stands at the desktop's
// size and then at a phone's, without reloading (the page may be the
// answer to a form), and fails if the page scrolls sideways on the phone.
func (j *journey) checkAxeSizes(what string) {
	j.t.Helper()
	j.checkAxe(what)
	j.do("emulate a phone", chromedp.EmulateViewport(phoneWidth, phoneHeight, chromedp.EmulatePortrait, chromedp.EmulateMobile))
	if sw := evalJS[int](j, `document.documentElement.scrollWidth`); sw > phoneWidth {
		j.t.Errorf("%s is %d px wide on a %d px phone: it scrolls sideways", what, sw, phoneWidth)
	}
	j.checkAxe("on a phone, " + what)
	j.do("back to the desktop", chromedp.EmulateViewport(desktopWidth, desktopHeight))
}

// viewShots saves the first screen of the page as it stands, at 1280x800
// and a phone's size, light and dark, as name-size-scheme.png.
func (j *journey) viewShots(name string) {
	j.t.Helper()
	for _, size := range []string{"desktop", "phone"} {
		if size == "phone" {
			j.do("emulate a phone", chromedp.EmulateViewport(phoneWidth, phoneHeight, chromedp.EmulatePortrait, chromedp.EmulateMobile))
		} else {
			j.do("emulate a 1280x800 desktop", chromedp.EmulateViewport(1280, 800))
		}
		for _, sc := range []string{"light", "dark"} {
			j.scheme(sc)
			j.waitJS("transitions to end", `document.getAnimations().every(a => a.playState !== "running")`)
			j.viewShot(fmt.Sprintf("%s-%s-%s.png", name, size, sc))
		}
	}
	j.scheme("light")
	j.do("back to the desktop", chromedp.EmulateViewport(desktopWidth, desktopHeight))
}

// axeSite fills a site with what every page shows: pets, an archived pet,
// an API key, a webhook, a viewer, and the audit events they leave.
type axeSite struct {
	pet     models.Pet
	other   models.Pet // a pet of the list besides pet
	keyID   int64
	hookID  int64
	viewer  models.User
	viewerP string
}

func newAxeSite(j *journey) axeSite {
	j.t.Helper()
	ctx := context.Background()
	var pets []models.NewPet
	for i, name := range []string{"Rex", "Luna", "Polly", "Sir Reginald Fluffington the Third of Upper Wallop", "Ñandú", "Tom", "Bella", "Max"} {
		pets = append(pets, models.NewPet{Name: name, CategoryID: int64(i%3 + 1), Status: []models.Status{models.StatusAvailable, models.StatusPending, models.StatusSold}[i%3]})
	}
	added := j.addPets(pets...)
	if _, err := j.store.UpdatePetStatus(ctx, added[1].ID, models.StatusSold, staffUser); err != nil {
		j.t.Fatal(err)
	}
	gone := j.addPets(models.NewPet{Name: "Biscuit", CategoryID: 2, Status: models.StatusPending})[0]
	if _, err := j.store.ArchivePets(ctx, []models.PetVersion{{ID: gone.ID, Version: gone.Version}}, staffUser); err != nil {
		j.t.Fatal(err)
	}
	k, _, err := j.store.CreateAPIKeyFrom(ctx, models.APIKeyInput{Name: "shop", Scopes: []string{"pets:read"}}, staffUser)
	if err != nil {
		j.t.Fatal(err)
	}
	w, err := j.store.CreateWebhook(ctx, models.WebhookInput{URL: "https://partner.example/hooks", Description: "The partner's shop"}, "whsec_test", staffUser)
	if err != nil {
		j.t.Fatal(err)
	}
	return axeSite{pet: added[0], other: added[2], keyID: k.ID, hookID: w.ID, viewer: j.addMember("vera", models.RoleViewer), viewerP: memberPassword}
}

// Every console page and /docs pass axe-core's WCAG 2.2 A and AA rules, as
// an admin and as a viewer, in light and dark, with the states a member
// meets: errors, a conflict, confirmations, empty results.
func TestBrowserAxe(t *testing.T) {
	t.Parallel()
	// Each part is a journey of its own, within the journey's time bound.
	t.Run("signed out", func(t *testing.T) {
		t.Parallel()
		j := newJourney(t, models.DriverSQLite)
		j.open("/admin/login")
		j.waitText("h1", "Sign in")
		j.checkAxe("the sign-in page")
		j.signIn(staffUser, "not the password")
		j.within("see the sign-in error", chromedp.WaitVisible(chromedp.CSS(`[data-testid="login-error"]`)))
		j.checkAxe("the sign-in page with an error")
		j.open("/docs")
		j.waitJS("the reference to load", `document.readyState === "complete"`)
		j.checkAxe("/docs")
	})

	for part, pages := range [][]string{
		{"/admin/pets", "/admin/pets?q=nothing-matches", "/admin/pets?status=sold", "pet", "/admin/pets/999999999",
			"/admin/api-keys", "revoke", "/admin/users", "member", "/admin/pets/archive", "archive selected"},
		{"/admin/sessions", "/admin/audit", "/admin/audit?action=pet.status_changed", "/admin/audit?target=nonsense",
			"/admin/webhooks", "hook", "hook/rotate", "hook/delete",
			"/admin/operations", "reset 2fa"},
	} {
		t.Run(fmt.Sprintf("admin, part %d", part+1), func(t *testing.T) {
			t.Parallel()
			j := newJourney(t, models.DriverSQLite)
			s := newAxeSite(j)
			j.signedIn()
			hook := fmt.Sprintf("/admin/webhooks/%d", s.hookID)
			named := map[string]string{
				"pet":         fmt.Sprintf("/admin/pets/%d", s.pet.ID),
				"revoke":      fmt.Sprintf("/admin/api-keys/%d/revoke", s.keyID),
				"member":      fmt.Sprintf("/admin/users/%d", s.viewer.ID),
				"hook":        hook,
				"hook/rotate": hook + "/rotate",
				"hook/delete": hook + "/delete",
				"reset 2fa":   fmt.Sprintf("/admin/users/%d/reset-2fa", s.viewer.ID),
				"archive selected": fmt.Sprintf("/admin/pets/bulk-archive?pet=%d:%d&pet=%d:%d&back=/admin/pets",
					s.pet.ID, s.pet.Version, s.other.ID, s.other.Version),
			}
			for _, p := range pages {
				if path, ok := named[p]; ok {
					p = path
				}
				j.open(p)
				j.waitJS("the page to load", `document.readyState === "complete"`)
				j.checkAxe(p)
			}
		})
	}

	t.Run("admin, a pet's errors", func(t *testing.T) {
		t.Parallel()
		j := newJourney(t, models.DriverSQLite)
		s := newAxeSite(j)
		j.signedIn()
		pet := fmt.Sprintf("/admin/pets/%d", s.pet.ID)
		// A pet's page after a validation error, and after a conflict.
		j.open(pet)
		j.retype("#pet-edit", "Name", " ")
		j.within("click Save changes", chromedp.Click(button("//form[@id='pet-edit']", "Save changes")))
		j.within("see the error", chromedp.WaitVisible(chromedp.CSS(`#edit-name-error`)))
		j.checkAxe("a pet's page with an error")
		j.open(pet)
		j.waitText("h1", s.pet.Name)
		if _, err := j.store.EditPet(context.Background(), s.pet.ID, j.stored(s.pet.ID).Version,
			models.NewPet{Name: "Rex the Brave", CategoryID: 1, Status: models.StatusAvailable}, "bob"); err != nil {
			t.Fatal(err)
		}
		j.retype("#pet-edit", "Name", "Rex II")
		j.within("click Save changes", chromedp.Click(button("//form[@id='pet-edit']", "Save changes")))
		j.within("see the conflict", chromedp.WaitVisible(chromedp.CSS(`[data-testid="edit-conflict"]`)))
		j.checkAxe("a pet's page after a conflict")
	})

	t.Run("admin, on a phone", func(t *testing.T) {
		t.Parallel()
		j := newJourney(t, models.DriverSQLite)
		newAxeSite(j)
		j.signedIn()
		// The cards and the compact rows.
		for _, p := range []string{"/admin/pets", "/admin/api-keys", "/admin/audit", "/admin/sessions", "/admin/users", "/admin/webhooks", "/admin/pets/archive"} {
			j.open(p)
			j.onPhone(p)
			j.checkAxe("on a phone, " + p)
		}
	})

	t.Run("admin, undo and import", func(t *testing.T) {
		t.Parallel()
		j := newJourney(t, models.DriverSQLite)
		s := newAxeSite(j)
		j.signedIn()
		j.open("/admin/undo")
		j.waitText("h1", "Your recent changes")
		j.checkAxeSizes("/admin/undo with no change")

		// A status change from the list: its message offers Undo.
		j.open("/admin/pets")
		j.waitJS("the page to load", `document.readyState === "complete"`)
		row := fmt.Sprintf("tr#pet-%d", s.pet.ID)
		j.choose(chromedp.CSS(fmt.Sprintf(`select[aria-label="Status of %s"]`, s.pet.Name)), "sold")
		j.within("click the row's Change", chromedp.Click(chromedp.CSS(row+` button[type="submit"]`)))
		j.waitText(`[data-testid="flash"]`, s.pet.Name+" is now sold.")
		j.checkAxeSizes("the pets list offering Undo")
		j.within("click Undo", chromedp.Click(chromedp.CSS(`[data-testid="undo"]`)))
		j.waitText(`[data-testid="flash"]`, "Reverted 1 of 1.")
		j.checkAxeSizes("the pets list after an undo")
		j.open("/admin/undo")
		j.within("see the recent changes", chromedp.WaitVisible(chromedp.CSS(`[data-testid="recent-actions"]`)))
		j.checkAxeSizes("/admin/undo with changes")

		// The import: the form, a refused file, a preview with row
		// errors, and the import done.
		dir := t.TempDir()
		bad, good := filepath.Join(dir, "photo.csv"), filepath.Join(dir, "stock.csv")
		if err := os.WriteFile(bad, []byte("\x89PNG\r\n\x1a\n\x00\x00\x00"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(good, []byte("name,category_id,status\nMochi,3,pending\nשלום,4,\nNameless,0,lost\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		j.open("/admin/pets/import")
		j.waitText("h1", "Import pets from a CSV file")
		j.checkAxeSizes("/admin/pets/import")
		j.do("choose a binary file", chromedp.SetUploadFiles(chromedp.CSS(`#import-file`), []string{bad}))
		j.within("click Preview", chromedp.Click(chromedp.CSS(`[data-testid="import-preview-button"]`)))
		j.within("see the refusal", chromedp.WaitVisible(chromedp.CSS(`[data-testid="import-error"]`)))
		j.checkAxeSizes("/admin/pets/import refusing a file")
		j.do("choose a sheet", chromedp.SetUploadFiles(chromedp.CSS(`#import-file`), []string{good}))
		j.within("click Preview", chromedp.Click(chromedp.CSS(`[data-testid="import-preview-button"]`)))
		j.within("see the preview", chromedp.WaitVisible(chromedp.CSS(`[data-testid="import-errors"]`)))
		j.checkAxeSizes("an import's preview with row errors")
		j.within("click Import", chromedp.Click(chromedp.CSS(`[data-testid="import-confirm"]`)))
		j.waitJS("the import to end", `document.querySelector('[data-testid="import-summary"]') !== null`)
		j.checkAxeSizes("an import done")
		j.viewShots("import-done")
		j.open("/admin/pets")
		j.waitJS("the page to load", `document.readyState === "complete"`)
		j.checkAxe("the pets list after an import")
	})

	t.Run("admin, account and sign-in steps", func(t *testing.T) {
		t.Parallel()
		j, _ := passkeyJourney(t, models.DriverSQLite)
		j.signedIn()
		j.open("/admin/account")
		j.waitText("h1", "Your account")
		j.checkAxeSizes("/admin/account")
		j.addPasskey("Front desk laptop")
		j.checkAxeSizes("/admin/account with a passkey")
		remove := evalJS[string](j, `document.querySelector('main a[href^="/admin/account/passkeys/"]')?.getAttribute("href") ?? ""`)
		if remove == "" {
			t.Fatal("no link removes the passkey")
		}
		j.open(remove)
		j.waitJS("the page to load", `document.readyState === "complete"`)
		j.checkAxeSizes("removing a passkey")

		// The authenticator app: its QR code, a wrong code, the recovery
		// codes, and the account with two-step sign-in on.
		j.open("/admin/account")
		j.within("click Set up an authenticator app", chromedp.Click(button("//main", "Set up an authenticator app")))
		j.waitPath("/admin/account/totp")
		j.waitJS("the QR code to load", `document.querySelector('[data-testid="totp-qr"]')?.complete ?? false`)
		j.checkAxeSizes("setting up an authenticator app")
		j.viewShots("totp-setup")
		j.fill("main", "Code from the app", "000000")
		j.within("click Turn on", chromedp.Click(button("//main", "Turn on two-step sign-in")))
		j.waitJS("the refusal", `document.querySelector('main [aria-invalid="true"]') !== null`)
		j.checkAxeSizes("setting up an authenticator app, a wrong code")
		secret := strings.ReplaceAll(j.text(`[data-testid="totp-secret"]`), " ", "")
		j.fill("main", "Code from the app", models.TOTPCode(secret, time.Now()))
		j.within("click Turn on", chromedp.Click(button("//main", "Turn on two-step sign-in")))
		j.waitText("main h1", "Two-step sign-in is on")
		j.checkAxeSizes("the recovery codes")
		j.open("/admin/account")
		j.waitText("h1", "Your account")
		j.checkAxeSizes("/admin/account with two-step sign-in on")

		// The second step of the sign-in, and its error.
		j.signOut()
		j.signIn(staffUser, staffPassword)
		j.waitPath("/admin/login/code")
		j.checkAxeSizes("the sign-in's second step")
		j.fill("main", "Code", "000000")
		j.within("click Sign in", chromedp.Click(button("//main", "Sign in")))
		j.waitText(`[data-testid="login-error"]`, "not right")
		j.checkAxeSizes("the sign-in's second step with an error")
		j.viewShots("second-step-error")
	})

	t.Run("viewer, two-step sign-in required", func(t *testing.T) {
		t.Parallel()
		j := newJourney(t, models.DriverSQLite)
		s := newAxeSite(j)
		if err := j.store.RequireTwoFactor(context.Background(), models.RoleViewer, true, staffUser); err != nil {
			t.Fatal(err)
		}
		j.open("/admin/login")
		j.signIn(s.viewer.Username, s.viewerP)
		j.waitPath("/admin/account")
		j.checkAxeSizes("as a viewer led to set up two-step sign-in")
	})

	t.Run("viewer", func(t *testing.T) {
		t.Parallel()
		j := newJourney(t, models.DriverSQLite)
		s := newAxeSite(j)
		j.signedInAs(s.viewer.Username, s.viewerP)
		paths := strings.Split(evalJS[string](j, `[...document.querySelectorAll('nav[aria-label="Main"] a[href^="/admin/"]')].map(a => a.getAttribute("href")).join(" ")`), " ")
		paths = append(paths, fmt.Sprintf("/admin/pets/%d", s.pet.ID), "/admin/users")
		for _, p := range paths {
			j.open(p)
			j.waitJS("the page to load", `document.readyState === "complete"`)
			j.checkAxe("as a viewer, " + p)
		}
	})
}

// The pets page's first screen holds more than three of twenty rows on a
// desktop and the first row on a phone; on a phone no control that acts
// on a row (a pet's status, a key's Revoke, a session's sign-out, a
// member's actions) lies off-screen or clipped, and no page scrolls
// sideways. Screenshots of the pages staff use most are written at both
// sizes, light and dark, for people to look at.
func TestBrowserFitsScreens(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	s := newAxeSite(j)
	var more []models.NewPet
	for i := range 14 {
		more = append(more, models.NewPet{Name: fmt.Sprintf("Kitten %d", i+1), CategoryID: 2, Status: models.StatusAvailable})
	}
	j.addPets(more...)
	ctx := context.Background()
	// A change to undo, and a sheet waiting in its preview with a row's
	// errors.
	if _, _, err := j.store.UpdatePetStatusUndoable(ctx, s.other.ID, models.StatusSold, staffUser); err != nil {
		t.Fatal(err)
	}
	imp, _, err := j.store.UploadImport(ctx, "stock.csv", strings.NewReader("name,category_id,status\nMochi,3,pending\nSir Reginald Fluffington the Third of Upper Wallop,2,\nNameless,0,lost\n"), staffUser)
	if err != nil {
		t.Fatal(err)
	}
	preview := fmt.Sprintf("/admin/pets/import/%d", imp.ID)
	j.signedIn()
	other := j.otherBrowser(firefoxUA)
	other.signedIn()

	pet := fmt.Sprintf("/admin/pets/%d", s.pet.ID)
	shots := []struct{ path, name string }{
		{"/admin/pets", "pets"},
		{pet, "pet"},
		{"/admin/api-keys", "api-keys"},
		{"/admin/audit", "audit"},
		{preview, "import-preview"},
		{"/admin/pets/archive", "archive"},
	}
	for _, size := range []struct {
		name          string
		width, height int64
		phone         bool
	}{{"desktop", 1280, 800, false}, {"phone", phoneWidth, phoneHeight, true}} {
		if size.phone {
			j.do("emulate a phone", chromedp.EmulateViewport(size.width, size.height, chromedp.EmulatePortrait, chromedp.EmulateMobile))
		} else {
			j.do("emulate a desktop", chromedp.EmulateViewport(size.width, size.height))
		}
		for _, sh := range shots {
			j.open(sh.path)
			j.waitJS("the page to load", `document.readyState === "complete"`)
			for _, sc := range []string{"light", "dark"} {
				j.scheme(sc)
				j.waitJS("transitions to end", `document.getAnimations().every(a => a.playState !== "running")`)
				j.viewShot(fmt.Sprintf("%s-%s-%s.png", sh.name, size.name, sc))
			}
			if size.phone {
				j.screenshot(fmt.Sprintf("%s-%s-whole.png", sh.name, size.name))
			}
			j.scheme("light")
		}

		j.open("/admin/pets")
		j.waitJS("the page to load", `document.readyState === "complete"`)
		rows := evalJS[int](j, `[...document.querySelectorAll('[data-testid="pet-row"]')].filter(r => r.getBoundingClientRect().bottom <= innerHeight).length`)
		if size.phone && rows < 1 {
			t.Errorf("on a phone no pet row fits the first screen")
		}
		if !size.phone && rows <= 3 {
			t.Errorf("on a 1280x800 desktop %d pet rows fit the first screen, want more than 3", rows)
		}
		if !size.phone {
			continue
		}
		for _, p := range []struct{ path, controls string }{
			{"/admin/pets", `[data-testid="pet-row"] select, [data-testid="pet-row"] button, [data-testid="pet-row"] input`},
			{"/admin/api-keys", `[id^="api-key-"] a, [id^="api-key-"] button`},
			{"/admin/sessions", `main tbody button, main tbody a`},
			{"/admin/users", `main tbody a, main tbody button`},
			{fmt.Sprintf("/admin/users/%d", s.viewer.ID), `main form button`},
			{"/admin/audit", `main tbody a, main form button, main form select, main form input`},
			{"/admin/webhooks", `main tbody a, main tbody button`},
			{"/admin/pets/archive", `main tbody a, main tbody button, main tbody input, main form button`},
			{"/admin/account", `main button, main input`},
			{"/admin/pets/import", `main form button, main form input`},
			{preview, `main form button`},
		} {
			j.open(p.path)
			j.waitJS("the page to load", `document.readyState === "complete"`)
			if sw := evalJS[int](j, `document.documentElement.scrollWidth`); sw > phoneWidth {
				t.Errorf("%s is %d px wide on a %d px phone: it scrolls sideways", p.path, sw, phoneWidth)
			}
			j.screenshot(strings.NewReplacer("/admin/", "", "/", "-").Replace(p.path) + "-phone-whole.png")
			n := evalJS[int](j, fmt.Sprintf(`document.querySelectorAll(%s).length`, jsString(p.controls)))
			if n == 0 {
				t.Errorf("%s: no control matches %s", p.path, p.controls)
			}
			if bad := evalJS[string](j, fmt.Sprintf(`[...document.querySelectorAll(%s)].filter(e => e.getClientRects().length > 0).filter(e => {
				const r = e.getBoundingClientRect();
				if (r.left < 0 || r.right > innerWidth) return true;
				for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
					const st = getComputedStyle(a);
					if (st.overflowX === "visible" && st.overflowY === "visible") continue;
					const b = a.getBoundingClientRect();
					if (r.left < b.left - 1 || r.right > b.right + 1) return true;
				}
				return false;
			}).map(e => (e.textContent.trim() || e.getAttribute("aria-label") || e.name || e.tagName).slice(0, 40)).join(" | ")`, jsString(p.controls))); bad != "" {
				t.Errorf("%s on a phone: controls off-screen or clipped: %s", p.path, bad)
			}
		}
	}
}

// viewShot saves what the viewport shows (the first screen, not the whole
// page) as a PNG named name in the screenshots directory.
func (j *journey) viewShot(name string) {
	j.t.Helper()
	dir := os.Getenv("PETSTORE_SCREENSHOTS")
	if dir == "" {
		dir = testkit.RepoPath(j.t, "testdata", "screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		j.t.Fatal(err)
	}
	png, err := chromedp.Run(j.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		j.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		j.t.Fatal(err)
	}
}
