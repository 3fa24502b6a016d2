package e2e

// Browser journey of undo: a status change from the list's row, then its
// Undo in the message, with the keyboard alone. Helpers are
// browser_test.go's.

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"petstore/models"
)

// shiftTabTo presses Shift+Tab until the focused element matches css, at
// most max times: browser_list_test.go's tabTo, backwards.
func (j *journey) shiftTabTo(css string, max int) {
	j.t.Helper()
	for range max {
		j.do("press Shift+Tab", chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift)))
		if evalJS[bool](j, fmt.Sprintf(`document.activeElement?.matches(%s) ?? false`, jsString(css))) {
			return
		}
	}
	j.t.Fatalf("%s not reached in %d Shift+Tab presses (focus on %s)", css, max,
		evalJS[string](j, `document.activeElement?.outerHTML.slice(0, 200) ?? ""`))
}

// A status change made with the keyboard offers Undo in the message; the
// keyboard reaches it and Enter undoes the change in place, without a
// page load, and the answer says what was reverted.
func TestBrowserUndoKeyboard(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	rex := j.addPets(models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable})[0]
	j.signedIn()
	j.waitPetNames("Rex")
	j.markPage()

	row := fmt.Sprintf("#pet-%d", rex.ID)
	j.choose(chromedp.CSS(`select[aria-label="Status of Rex"]`), "sold")
	j.tabTo(fmt.Sprintf(`tr%s button[type="submit"]`, row), 5)
	j.do("press Enter", chromedp.KeyEvent(kb.Enter))
	j.waitText(row+` [data-testid="pet-status"]`, "sold")
	j.waitText(`[data-testid="flash"]`, "Rex is now sold.")

	j.shiftTabTo(`[data-testid="undo"][aria-label="Undo: Rex is now sold."]`, 60)
	if style := evalJS[string](j, `getComputedStyle(document.activeElement).outlineStyle`); style == "none" {
		t.Errorf("the focused Undo button shows no focus outline")
	}
	j.do("press Enter", chromedp.KeyEvent(kb.Enter))
	j.waitText(`[data-testid="flash"]`, "Reverted 1 of 1.")
	j.waitText(row+` [data-testid="pet-status"]`, "available")
	j.wantNoReload("undoing a status change")
	j.screenshot("undo-status-change")

	p, err := j.store.GetPet(context.Background(), rex.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != models.StatusAvailable || p.Version != 3 {
		t.Errorf("stored %+v, want available again, at version 3", p)
	}
	// The answer offers to undo the undo.
	if n := evalJS[int](j, `document.querySelectorAll('[data-testid="undo-form"]').length`); n != 1 {
		t.Errorf("%d Undo forms after the undo, want the undo's own", n)
	}
}

// An archive from a pet's page offers Undo in the list's message; the
// keyboard reaches it, and Enter puts the pet back in the list in place,
// with its id.
func TestBrowserUndoArchiveKeyboard(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	pets := j.addPets(
		models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable},
		models.NewPet{Name: "Polly", CategoryID: 3, Status: models.StatusPending},
	)
	rex := pets[0]
	j.signedIn()
	j.waitPetNames("Polly", "Rex")

	path := fmt.Sprintf("/admin/pets/%d", rex.ID)
	j.open(path)
	j.waitText("h1", "Rex")
	j.tabTo(`[data-testid="archive-pet"]`, 60)
	j.press("Enter on Archive…", kb.Enter)
	j.waitText("h1", "Archive Rex?")
	j.tabTo(`[data-testid="confirm-button"]`, 60)
	j.press("Enter on the confirmation", kb.Enter)
	j.waitPath("/admin/pets")
	j.waitPetNames("Polly")
	j.markPage()

	j.tabTo(`[data-testid="undo"]`, 60)
	j.press("Enter on Undo", kb.Enter)
	j.waitText(`[data-testid="flash"]`, "Restored 1 of 1 archived pet.")
	j.waitPetNames("Polly", "Rex")
	j.wantNoReload("undoing an archive")
	j.screenshot("undo-archive")
	if n := evalJS[int](j, fmt.Sprintf(`document.querySelectorAll('#pet-%d').length`, rex.ID)); n != 1 {
		t.Errorf("the row of pet %d is shown %d times, want once", rex.ID, n)
	}
	if _, err := j.store.GetArchivedPet(context.Background(), rex.ID); models.ErrorCode(err) != models.CodeNotFound {
		t.Errorf("Rex is still in the archive: %v", err)
	}
}
