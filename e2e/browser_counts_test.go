package e2e

// Browser journey of the numbers at a glance: the pets page shows
// how many pets each status has; they follow a bulk change and a row's
// status change without a reload, lead to each status's list by keyboard,
// and fit a phone in light and dark mode. Helpers are browser_test.go's.

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"petstore/internal/testkit"
	"petstore/models"
)

// waitCounts waits until the numbers at a glance read want, in order
// ("All 6 pets", "Available 3 pets", ...: the text a screen reader reads).
func (j *journey) waitCounts(want ...string) {
	j.t.Helper()
	w, _ := json.Marshal(want)
	j.waitJS(fmt.Sprintf("the counts to read %q", want), fmt.Sprintf(
		`JSON.stringify([...document.querySelectorAll('nav[aria-label="Pets by status"] a')].map(a => a.textContent.replace(/\s+/g, " ").trim())) === JSON.stringify(%s)`, w))
}

// currentCount is the text of the count marked as the current filter.
func (j *journey) currentCount() string {
	j.t.Helper()
	return j.text(`nav[aria-label="Pets by status"] a[aria-current="true"]`)
}

// Journey: the counts on the pets page, a bulk change and a row's change
// updating them in place, a count followed with the keyboard; light, dark
// and phone screenshots.
func TestBrowserStatusCounts(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		j := newJourney(t, driver)
		j.addPets(
			models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable},
			models.NewPet{Name: "Tom", CategoryID: 2, Status: models.StatusSold},
			models.NewPet{Name: "Polly", CategoryID: 3, Status: models.StatusAvailable},
			models.NewPet{Name: "Kiki", CategoryID: 3, Status: models.StatusPending},
			models.NewPet{Name: "Ñandú", CategoryID: 4, Status: models.StatusAvailable},
			models.NewPet{Name: "Bo", CategoryID: 4, Status: models.StatusPending},
		)
		shots := driver == models.DriverSQLite // one set of screenshots
		j.signedIn()
		j.waitPetNames("Bo", "Ñandú", "Kiki", "Polly", "Tom", "Rex")
		j.waitCounts("All 6 pets", "Available 3 pets", "Pending 2 pets", "Sold 1 pet")
		if got := j.currentCount(); got != "All 6 pets" {
			t.Errorf("the current count is %q, want All (no filter)", got)
		}
		if shots {
			j.screenshot("counts-desktop.png")
		}
		j.markPage()

		// A bulk change: Rex and Polly sold; the counts follow, no reload.
		for _, name := range []string{"Rex", "Polly"} {
			j.within("tick "+name, chromedp.Click(chromedp.CSS(fmt.Sprintf(`input[aria-label="Select %s"]`, name))))
		}
		j.choose(j.control("#bulk-form", "Set the selected pets to"), "sold")
		j.within("click Apply to selected", chromedp.Click(button("//form[@id='bulk-form']", "Apply to selected")))
		j.waitText("#bulk-summary", "Changed 2 pets to sold.")
		j.waitCounts("All 6 pets", "Available 1 pet", "Pending 2 pets", "Sold 3 pets")
		j.wantNoReload("a bulk status change")
		j.waitJS("focus back on Apply to selected", `document.activeElement?.textContent.trim() === "Apply to selected"`)
		if shots {
			j.screenshot("counts-bulk.png")
		}

		// One row's status: Kiki available; the counts come with the row.
		j.choose(chromedp.CSS(`select[aria-label="Status of Kiki"]`), "available")
		j.within("click Update on Kiki's row", chromedp.Click(button(`//tr[.//a[normalize-space()='Kiki']]`, "Update")))
		j.waitText(`[data-testid="flash"]`, "Kiki is now available.")
		j.waitCounts("All 6 pets", "Available 2 pets", "Pending 1 pet", "Sold 3 pets")
		j.wantNoReload("a row's status change")

		// By keyboard: Tab from the filter's button reaches All, then
		// Available, Pending, Sold; Enter opens the sold pets.
		j.do("focus the Filter button", chromedp.Focus(chromedp.CSS(`#pet-filter button[type="submit"]`)))
		for _, want := range []string{"All 6 pets", "Available 2 pets", "Pending 1 pet", "Sold 3 pets"} {
			j.do("press Tab", chromedp.KeyEvent(kb.Tab))
			j.waitJS("focus on "+want, fmt.Sprintf(`document.activeElement?.textContent.replace(/\s+/g, " ").trim() === %s`, jsString(want)))
		}
		j.do("press Enter on Sold", chromedp.KeyEvent(kb.Enter))
		j.waitJS("the sold pets' list", `new URLSearchParams(location.search).get("status") === "sold"`)
		j.waitPetNames("Polly", "Tom", "Rex")
		j.waitJS("the counts marking Sold", `document.querySelector('nav[aria-label="Pets by status"] a[aria-current="true"]')?.textContent.includes("Sold")`)
		if got := j.value("#filter-status"); got != "sold" {
			t.Errorf("the filter's Status shows %q on the sold pets' list, want sold", got)
		}
		if !shots {
			return
		}

		// Dark, then a phone: the counts wrap instead of widening the page.
		if _, err := chromedp.Call(j.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}},
		}); err != nil {
			t.Fatalf("emulate dark mode: %v", err)
		}
		j.open("/admin/pets")
		j.waitCounts("All 6 pets", "Available 2 pets", "Pending 1 pet", "Sold 3 pets")
		if lb := luminance(t, j.background()); lb > 0.2 {
			t.Errorf("dark mode: background luminance %.2f, want dark", lb)
		}
		j.screenshot("counts-dark.png")
		if _, err := chromedp.Call(j.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}},
		}); err != nil {
			t.Fatalf("emulate light mode: %v", err)
		}
		j.do("emulate a phone",
			chromedp.EmulateViewport(phoneWidth, phoneHeight, chromedp.EmulatePortrait, chromedp.EmulateMobile),
			chromedp.Reload())
		j.waitCounts("All 6 pets", "Available 2 pets", "Pending 1 pet", "Sold 3 pets")
		if sw := evalJS[int](j, `document.documentElement.scrollWidth`); sw > phoneWidth {
			t.Errorf("the pets page is %d px wide on a %d px phone: it scrolls sideways", sw, phoneWidth)
		}
		if right := evalJS[int](j, `Math.ceil(document.querySelector('nav[aria-label="Pets by status"] ul').getBoundingClientRect().right)`); right > phoneWidth {
			t.Errorf("the counts end at %d px, past the %d px screen", right, phoneWidth)
		}
		j.screenshot("counts-phone.png")
	})
}
