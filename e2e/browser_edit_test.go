package e2e

// Browser journeys of the pet edits: editing a pet from the list,
// a conflict between two staff members in two browser contexts, a bulk
// status change (with htmx and without JavaScript), and the same pages on
// a phone in dark mode. Helpers are browser_test.go's.

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

// A second staff member, for the journeys where two people act.
const (
	otherUser     = "bob"
	otherPassword = "correct-horse-battery-9"
)

// otherContext opens a tab in a new browser context (its own cookies,
// like another person's browser) on the same site as j.
func (j *journey) otherContext() *journey {
	j.t.Helper()
	ctx, cancel := chromedp.NewContext(j.ctx, chromedp.WithNewBrowserContext())
	j.t.Cleanup(cancel)
	o := &journey{t: j.t, ctx: ctx, store: j.store, base: j.base}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(desktopWidth, desktopHeight)); err != nil {
		j.t.Fatalf("open a second browser context: %v", err)
	}
	if _, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		j.t.Fatalf("emulate focus: %v", err)
	}
	o.watch()
	j.t.Cleanup(func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		for _, p := range o.problems {
			j.t.Errorf("the second browser's page reported: %s", p)
		}
	})
	return o
}

// signedInAs signs in as username and waits for the pets page.
func (j *journey) signedInAs(username, password string) {
	j.t.Helper()
	j.open("/admin/login")
	j.signIn(username, password)
	j.within("land on a signed-in page", chromedp.WaitVisible(chromedp.CSS(`[data-testid="sign-out"]`)))
	j.waitPath("/admin/pets")
}

// retype replaces the text of the control labelled label within scope.
func (j *journey) retype(scope, label, text string) {
	j.t.Helper()
	sel := j.control(scope, label)
	j.within("clear "+label, chromedp.Clear(sel))
	j.within(fmt.Sprintf("type %q into %q", text, label), chromedp.SendKeys(sel, text))
}

// stored reads a pet with its version.
func (j *journey) stored(id int64) models.Pet {
	j.t.Helper()
	p, err := j.store.GetPet(context.Background(), id)
	if err != nil {
		j.t.Fatal(err)
	}
	return p
}

// Journey: open a pet from the list, see a validation message, save an
// edit by keyboard, and find the change in its history and the list.
func TestBrowserEditPet(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		j := newJourney(t, driver)
		pets := j.addPets(
			models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable},
			models.NewPet{Name: "Polly", CategoryID: 3, Status: models.StatusPending},
		)
		rex := pets[0]
		j.signedIn()
		j.waitPetNames("Polly", "Rex")

		j.within("click Rex in the list", chromedp.Click(button(fmt.Sprintf("//tr[@id='pet-%d']", rex.ID), "Rex")))
		path := fmt.Sprintf("/admin/pets/%d", rex.ID)
		j.waitPath(path)
		j.waitText("h1", "Rex")
		if got := j.value("#edit-name"); got != "Rex" {
			t.Errorf("the edit form's name %q, want Rex", got)
		}
		j.waitText(`[data-testid="history-row"]`, "added Rex")
		if driver == models.DriverSQLite { // one set of screenshots
			j.screenshot("pet-page.png")
		}

		// A blank name: refused beside the field, which gets the focus.
		j.retype("#pet-edit", "Name", " ")
		j.within("click Save changes", chromedp.Click(button("//form[@id='pet-edit']", "Save changes")))
		j.within("see the name error", chromedp.WaitVisible(chromedp.CSS(`[data-testid="edit-name-error"]`)))
		if got := j.text(`[data-testid="edit-name-error"]`); got != "Name is required." {
			t.Errorf("name error %q", got)
		}
		j.waitJS("focus on the name field", `document.activeElement?.id === "edit-name"`)
		if p := j.stored(rex.ID); p.Name != "Rex" || p.Version != 1 {
			t.Errorf("a refused edit stored %+v", p)
		}

		// Corrected and saved with the keyboard: type, choose, Enter.
		j.do("clear the name", chromedp.Clear(chromedp.CSS("#edit-name")))
		j.do("type the new name", chromedp.SendKeys(chromedp.CSS("#edit-name"), "Rex the Brave"))
		j.retype("#pet-edit", "Category ID", "4")
		j.choose(j.control("#pet-edit", "Status"), "sold")
		j.do("submit with Enter", chromedp.Focus(chromedp.CSS("#edit-category")), chromedp.KeyEvent(kb.Enter))
		j.waitText(`[data-testid="flash"]`, "Saved the changes to Rex the Brave.")
		j.waitPath(path)
		if got := j.text("h1"); got != "Rex the Brave" {
			t.Errorf("heading %q after saving", got)
		}
		j.waitText(`[data-testid="history-row"]`, "edited Rex the Brave")
		if got := j.text(`[data-testid="history-row"] td.detail`); !strings.HasSuffix(got, "edited Rex the Brave: name from “Rex” to “Rex the Brave”, category from 1 to 4, status from available to sold") {
			t.Errorf("newest history row %q", got)
		}
		if driver == models.DriverSQLite {
			j.screenshot("pet-edited.png")
		}
		if p := j.stored(rex.ID); p.Name != "Rex the Brave" || p.CategoryID != 4 || p.Status != models.StatusSold || p.Version != 2 {
			t.Errorf("stored %+v, want the edit at version 2", p)
		}

		// Back in the list, found by the new name.
		j.within("click All pets", chromedp.Click(button("//main", "← All pets")))
		j.waitPath("/admin/pets")
		j.waitPetNames("Polly", "Rex the Brave")
		j.fill("#pet-filter", "Search by name", "brave")
		j.waitPetNames("Rex the Brave")
	})
}

// Journey: two staff members edit the same pet in two browsers; the later
// save is refused with who changed what and both values, and goes through
// when saved again.
func TestBrowserEditConflict(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	if _, err := j.store.CreateUser(context.Background(), otherUser, otherPassword, "test"); err != nil {
		t.Fatal(err)
	}
	rex := j.addPets(models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable})[0]
	path := fmt.Sprintf("/admin/pets/%d", rex.ID)

	// Alice opens the pet; Bob, in his own browser, too.
	j.signedIn()
	j.open(path)
	j.waitText("h1", "Rex")
	bob := j.otherContext()
	bob.signedInAs(otherUser, otherPassword)
	bob.open(path)
	bob.waitText("h1", "Rex")

	// Bob renames it and saves first.
	bob.retype("#pet-edit", "Name", "Max")
	bob.within("Bob clicks Save changes", chromedp.Click(button("//form[@id='pet-edit']", "Save changes")))
	bob.waitText(`[data-testid="flash"]`, "Saved the changes to Max.")

	// Alice, still on the old version, sells it.
	j.retype("#pet-edit", "Category ID", "2")
	j.choose(j.control("#pet-edit", "Status"), "sold")
	j.within("Alice clicks Save changes", chromedp.Click(button("//form[@id='pet-edit']", "Save changes")))
	j.within("see the conflict", chromedp.WaitVisible(chromedp.CSS(`[data-testid="edit-conflict"]`)))
	msg := j.text(`[data-testid="edit-conflict"]`)
	for _, want := range []string{"bob changed this pet at", `name "Rex" -> "Max"`, "Their change is kept"} {
		if !strings.Contains(msg, want) {
			t.Errorf("conflict message %q lacks %q", msg, want)
		}
	}
	j.waitJS("focus on the conflict message", `document.activeElement?.id === "edit-conflict"`)
	if got := j.text(`[data-testid="edit-name-theirs"]`); got != "Saved meanwhile: Max" {
		t.Errorf("beside the name: %q, want Bob's value", got)
	}
	if got, cat, st := j.value("#edit-name"), j.value("#edit-category"), j.value("#edit-status"); got != "Rex" || cat != "2" || st != "sold" {
		t.Errorf("Alice's form shows %q, %q, %q; want what she typed (Rex, 2, sold)", got, cat, st)
	}
	if got := j.text("h1"); got != "Max" {
		t.Errorf("the page's heading %q, want the stored name Max", got)
	}
	j.screenshot("pet-conflict.png")
	if p := j.stored(rex.ID); p.Name != "Max" || p.Status != models.StatusAvailable || p.CategoryID != 1 || p.Version != 2 {
		t.Errorf("stored %+v after the conflict, want Bob's rename only, version 2", p)
	}

	// Alice keeps Bob's name and saves her sale again: it goes through.
	j.retype("#pet-edit", "Name", "Max")
	j.within("Alice saves again", chromedp.Click(button("//form[@id='pet-edit']", "Save changes")))
	j.waitText(`[data-testid="flash"]`, "Saved the changes to Max.")
	if n := evalJS[int](j, `document.querySelectorAll('[data-testid="edit-conflict"]').length`); n != 0 {
		t.Error("the conflict message is still shown after the second save")
	}
	if p := j.stored(rex.ID); p.Name != "Max" || p.Status != models.StatusSold || p.CategoryID != 2 || p.Version != 3 {
		t.Errorf("stored %+v, want Max, sold, category 2 at version 3", p)
	}

	// Bob's page is now out of date too: his next save is refused.
	bob.choose(bob.control("#pet-edit", "Status"), "pending")
	bob.within("Bob saves his old page", chromedp.Click(button("//form[@id='pet-edit']", "Save changes")))
	bob.within("Bob sees the conflict", chromedp.WaitVisible(chromedp.CSS(`[data-testid="edit-conflict"]`)))
	bob.waitText(`[data-testid="edit-conflict"]`, "alice changed this pet")
}

// Journey: select pets on the list, change their status at once; the
// summary says what changed and what was skipped; then "Select all on
// this page" without JavaScript.
func TestBrowserBulkStatus(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	pets := j.addPets(
		models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable},
		models.NewPet{Name: "Tom", CategoryID: 2, Status: models.StatusSold},
		models.NewPet{Name: "Polly", CategoryID: 3, Status: models.StatusAvailable},
		models.NewPet{Name: "Kiki", CategoryID: 3, Status: models.StatusPending},
	)
	rex, tom, polly, kiki := pets[0], pets[1], pets[2], pets[3]
	j.signedIn()
	j.waitPetNames("Kiki", "Polly", "Tom", "Rex")
	j.markPage()

	// Polly is renamed by someone else after the page was loaded.
	if _, err := j.store.EditPet(context.Background(), polly.ID, 1, models.NewPet{Name: "Polly Ann", CategoryID: 3, Status: models.StatusAvailable}, otherUser); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Rex", "Tom", "Polly"} {
		j.within("tick "+name, chromedp.Click(chromedp.CSS(fmt.Sprintf(`input[aria-label="Select %s"]`, name))))
	}
	j.choose(j.control("#bulk-form", "Set the selected pets to"), "sold")
	j.within("click Apply to selected", chromedp.Click(button("//form[@id='bulk-form']", "Apply to selected")))
	want := "Changed 1 pet to sold. Skipped 2: Tom (already sold); Polly Ann (changed by someone else meanwhile: check it and try again)."
	j.waitText("#bulk-summary", want)
	j.wantNoReload("a bulk status change")
	if role, live := evalJS[string](j, `document.getElementById("bulk-summary").getAttribute("role")`),
		evalJS[string](j, `document.getElementById("bulk-summary").getAttribute("aria-live")`); role != "status" || live != "polite" {
		t.Errorf("the summary region is role=%q aria-live=%q, want status, polite", role, live)
	}
	j.waitJS("focus back on Apply to selected", `document.activeElement?.textContent.trim() === "Apply to selected"`)
	j.waitText(fmt.Sprintf(`#pet-%d [data-testid="pet-status"]`, rex.ID), "sold")
	if got := j.value("#bulk-status"); got != "sold" {
		t.Errorf("the bulk form's status shows %q after the change, want sold kept", got)
	}
	// The table was read again: Polly shows her new name, unticked.
	j.waitPetNames("Kiki", "Polly Ann", "Tom", "Rex")
	if n := evalJS[int](j, `document.querySelectorAll("[data-select-row]:checked").length`); n != 0 {
		t.Errorf("%d rows still ticked after the change", n)
	}
	j.screenshot("pets-bulk.png")
	for _, tt := range []struct {
		pet    models.Pet
		status models.Status
	}{{rex, models.StatusSold}, {tom, models.StatusSold}, {polly, models.StatusAvailable}, {kiki, models.StatusPending}} {
		if p := j.stored(tt.pet.ID); p.Status != tt.status {
			t.Errorf("%s is %s, want %s", p.Name, p.Status, tt.status)
		}
	}

	// Select all follows the rows: all, then mixed.
	j.within("tick Select all on this page", chromedp.Click(chromedp.CSS("#bulk-all")))
	if n := evalJS[int](j, `document.querySelectorAll("[data-select-row]:checked").length`); n != 4 {
		t.Errorf("Select all ticked %d rows, want 4", n)
	}
	j.within("untick Kiki", chromedp.Click(chromedp.CSS(`input[aria-label="Select Kiki"]`)))
	if all, mixed := evalJS[bool](j, `document.getElementById("bulk-all").checked`), evalJS[bool](j, `document.getElementById("bulk-all").indeterminate`); all || !mixed {
		t.Errorf("Select all is checked=%v indeterminate=%v with one row unticked, want mixed", all, mixed)
	}

	// Without JavaScript: Select all on this page, a plain form post.
	if _, err := chromedp.Call(j.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatalf("disable JavaScript: %v", err)
	}
	j.do("reload without JavaScript", chromedp.Reload())
	j.waitPetNames("Kiki", "Polly Ann", "Tom", "Rex")
	j.within("tick Select all on this page", chromedp.Click(chromedp.CSS("#bulk-all")))
	j.choose(j.control("#bulk-form", "Set the selected pets to"), "pending")
	j.within("click Apply to selected", chromedp.Click(button("//form[@id='bulk-form']", "Apply to selected")))
	j.waitText("#bulk-summary", "Changed 3 pets to pending. Skipped 1: Kiki (already pending).")
	j.screenshot("pets-bulk-nojs.png")
	for _, p := range pets {
		if got := j.stored(p.ID); got.Status != models.StatusPending {
			t.Errorf("%s is %s after Select all, want pending", got.Name, got.Status)
		}
	}
}

// Journey: on a phone in dark mode, a bulk change and a pet's page fit the
// screen and follow the dark preference.
func TestBrowserEditPhoneDark(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	pets := j.addPets(
		models.NewPet{Name: "Sir Reginald Fluffington the Third of Upper Wallop", CategoryID: 1, Status: models.StatusAvailable},
		models.NewPet{Name: "Ñandú", CategoryID: 2, Status: models.StatusAvailable},
	)
	j.signedIn()
	j.do("emulate a phone",
		chromedp.EmulateViewport(phoneWidth, phoneHeight, chromedp.EmulatePortrait, chromedp.EmulateMobile))
	if _, err := chromedp.Call(j.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}},
	}); err != nil {
		t.Fatalf("emulate dark mode: %v", err)
	}
	fits := func(where string) {
		t.Helper()
		if sw := evalJS[int](j, `document.documentElement.scrollWidth`); sw > phoneWidth {
			t.Errorf("%s is %d px wide on a %d px phone: it scrolls sideways", where, sw, phoneWidth)
		}
		bg, fg := j.background(), evalJS[string](j, `getComputedStyle(document.body).color`)
		if lb, lf := luminance(t, bg), luminance(t, fg); lb > 0.2 || lf < 0.4 {
			t.Errorf("%s in dark mode: background %s, text %s; want dark and light", where, bg, fg)
		}
	}
	j.do("reload", chromedp.Reload())
	j.waitPetNames("Ñandú", "Sir Reginald Fluffington the Third of Upper Wallop")
	j.markPage()
	j.within("tick Ñandú", chromedp.Click(chromedp.CSS(`input[aria-label="Select Ñandú"]`)))
	j.choose(j.control("#bulk-form", "Set the selected pets to"), "pending")
	j.within("tap Apply to selected", chromedp.Click(button("//form[@id='bulk-form']", "Apply to selected")))
	j.waitText("#bulk-summary", "Changed 1 pet to pending.")
	j.wantNoReload("a bulk change on a phone")
	fits("the pets page")
	j.screenshot("pets-bulk-phone-dark.png")

	j.open(fmt.Sprintf("/admin/pets/%d", pets[0].ID))
	j.waitText("h1", "Sir Reginald")
	fits("a pet's page")
	if w := evalJS[int](j, `document.getElementById("edit-name").getBoundingClientRect().right`); w > phoneWidth {
		t.Errorf("the name field ends at %d px, past the %d px screen", w, phoneWidth)
	}
	j.screenshot("pet-phone-dark.png")
}
