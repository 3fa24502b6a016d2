package e2e

// Browser journey of the archive: archiving a pet from its page, and
// restoring it from the archive, with the keyboard alone. Helpers are
// browser_test.go's and browser_list_test.go's.

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp/kb"

	"petstore/models"
)

// Journey: on a pet's page, Tab to "Archive…" and press Enter; confirm on
// the confirmation page the same way; the pet leaves the list. Then Tab to
// the archive in the navigation, find the pet there with who archived it,
// and restore it with Enter: it is back in the list with its id.
func TestBrowserArchiveAndRestore(t *testing.T) {
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
	j.waitPath(path + "/archive")
	j.waitText("h1", "Archive Rex?")
	if _, err := j.store.GetPet(context.Background(), rex.ID); err != nil {
		t.Fatalf("the pet was archived before the confirmation: %v", err)
	}
	j.screenshot("archive-confirm.png")
	j.tabTo(`[data-testid="confirm-button"]`, 60)
	j.press("Enter on the confirmation", kb.Enter)
	j.waitPath("/admin/pets")
	j.waitText(`[data-testid="flash"]`, fmt.Sprintf("Archived Rex (id %d). It can be restored from the archive.", rex.ID))
	j.waitPetNames("Polly")
	if a, err := j.store.GetArchivedPet(context.Background(), rex.ID); err != nil || a.ArchivedBy != staffUser {
		t.Fatalf("the archive holds %+v, %v; want Rex archived by %s", a, err, staffUser)
	}

	// To the archive through the navigation, by keyboard.
	j.tabTo(`nav a[href="/admin/pets/archive"]`, 30)
	j.press("Enter on Archive", kb.Enter)
	j.waitPath("/admin/pets/archive")
	j.waitText(`[data-testid="archive-name"]`, "Rex")
	if got := j.text(`[data-testid="archive-by"]`); got != staffUser {
		t.Errorf("archived by %q, want %s", got, staffUser)
	}
	j.screenshot("archive.png")
	j.tabTo(`[data-testid="restore-one"]`, 60)
	j.press("Enter on Restore", kb.Enter)
	j.waitText(`[data-testid="archive-summary"]`, fmt.Sprintf("Restored Rex (id %d).", rex.ID))
	j.waitText(`[data-testid="archive-empty"]`, "The archive is empty.")

	p := j.stored(rex.ID)
	if p.Name != "Rex" || p.Status != models.StatusAvailable || p.Version != 3 {
		t.Errorf("the restored pet %+v, want Rex as he was at version 3", p)
	}
	j.open("/admin/pets")
	j.waitPetNames("Polly", "Rex")
}
