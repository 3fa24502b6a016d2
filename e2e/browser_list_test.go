package e2e

// Browser journeys of the pets list: sort by a column's header and back,
// a bigger page, a filter by category and dates, the way back from a
// pet's page, adding from the top, the focus after a row's change, the
// status filter's one step per choice, and all of it from the keyboard.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"petstore/models"
)

// openAddPet opens the add form from its control at the top of the list
// (a <details>), unless it is open.
func (j *journey) openAddPet() {
	j.t.Helper()
	if evalJS[bool](j, `document.querySelector("#add-pet")?.open ?? false`) {
		return
	}
	j.within("click Add pet", chromedp.Click(chromedp.CSS(`#add-pet > summary`)))
	j.within("see the add form", chromedp.WaitVisible(chromedp.CSS(`#pet-name`)))
}

// petAt adds a pet created at a given time.
func (j *journey) petAt(np models.NewPet, at time.Time) models.Pet {
	j.t.Helper()
	j.store.SetClock(func() time.Time { return at })
	defer j.store.SetClock(time.Now)
	p, err := j.store.CreatePet(context.Background(), np, "test")
	if err != nil {
		j.t.Fatal(err)
	}
	return p
}

// historyLength is how many entries the tab's session history has.
func (j *journey) historyLength() int {
	j.t.Helper()
	return evalJS[int](j, `history.length`)
}

// press sends one key to the focused element.
func (j *journey) press(what, key string) {
	j.t.Helper()
	j.do("press "+what, chromedp.KeyEvent(key))
}

// tabTo presses Tab until the focused element matches css, at most max
// times, and returns how many presses it took.
func (j *journey) tabTo(css string, max int) int {
	j.t.Helper()
	for n := 1; n <= max; n++ {
		j.press("Tab", kb.Tab)
		if evalJS[bool](j, fmt.Sprintf(`document.activeElement?.matches(%s) ?? false`, jsString(css))) {
			return n
		}
	}
	j.t.Fatalf("%s not reached in %d Tab presses (focus on %s)", css, max,
		evalJS[string](j, `document.activeElement?.outerHTML.slice(0, 200) ?? ""`))
	return 0
}

// Sort by clicking a header and reverse it, filter by category and dates,
// and page 50 at a time.
func TestBrowserListSortFilter(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	day := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	j.petAt(models.NewPet{Name: "Cleo", CategoryID: 2, Status: models.StatusSold}, day)
	j.petAt(models.NewPet{Name: "Ada", CategoryID: 1, Status: models.StatusAvailable}, day.AddDate(0, 0, 1))
	j.petAt(models.NewPet{Name: "Bo", CategoryID: 2, Status: models.StatusAvailable}, day.AddDate(0, 0, 2))
	j.signedIn()
	j.waitPetNames("Bo", "Ada", "Cleo")
	j.markPage()

	// Name, then Name again: ascending, then descending, said by aria-sort.
	nameHeader := `th[data-column="name"]`
	j.within("click the Name header", chromedp.Click(chromedp.CSS(nameHeader+` a`)))
	j.waitPetNames("Ada", "Bo", "Cleo")
	j.waitJS("aria-sort ascending on Name", `document.querySelector('th[data-column="name"]')?.getAttribute("aria-sort") === "ascending"`)
	if got := j.searchParam("sort"); got != "name" {
		t.Errorf("sort=%q in the URL, want name", got)
	}
	j.within("click the Name header again", chromedp.Click(chromedp.CSS(nameHeader+` a`)))
	j.waitPetNames("Cleo", "Bo", "Ada")
	j.waitJS("aria-sort descending on Name", `document.querySelector('th[data-column="name"]')?.getAttribute("aria-sort") === "descending"`)
	if n := evalJS[int](j, `document.querySelectorAll("th[aria-sort]").length`); n != 1 {
		t.Errorf("%d headers carry aria-sort, want the sorted one alone", n)
	}
	j.wantNoReload("sorting")

	// Category 2 from 2 March: Bo alone, still sorted by name descending.
	j.fill("#pet-filter", "Category", "2")
	j.fill("#pet-filter", "Created from", "03022026") // mm dd yyyy, as the date field takes it typed
	if got := j.value("#filter-from"); got != "2026-03-02" {
		t.Fatalf("Created from holds %q after typing, want 2026-03-02", got)
	}
	j.within("click Filter", chromedp.Click(button("//form[@id='pet-filter']", "Filter")))
	j.waitJS("the URL to carry the filter", `new URLSearchParams(location.search).get("created_from") === "2026-03-02" && new URLSearchParams(location.search).get("category") === "2"`)
	j.waitPetNames("Bo")
	// Created to is inclusive: Bo, created on 3 March, stays.
	j.fill("#pet-filter", "Created to", "03032026")
	j.within("click Filter", chromedp.Click(button("//form[@id='pet-filter']", "Filter")))
	j.waitJS("the URL to carry created_to", `new URLSearchParams(location.search).get("created_to") === "2026-03-03"`)
	j.waitPetNames("Bo")
	if got := j.searchParam("sort"); got != "-name" {
		t.Errorf("filtering dropped the sort: sort=%q", got)
	}
	j.wantNoReload("filtering by category and dates")

	// 50 a page, with a next page of the rest.
	for i := range 55 {
		j.petAt(models.NewPet{Name: fmt.Sprintf("Zed %02d", i), CategoryID: 3, Status: models.StatusPending}, day.AddDate(0, 1, 0))
	}
	j.open("/admin/pets?category=3")
	j.markPage()
	j.choose(chromedp.CSS("#filter-per-page"), "50")
	j.within("click Filter", chromedp.Click(button("//form[@id='pet-filter']", "Filter")))
	j.waitJS("50 rows", `document.querySelectorAll('tr[data-testid="pet-row"]').length === 50`)
	if got := j.searchParam("per_page"); got != "50" {
		t.Errorf("per_page=%q in the URL, want 50", got)
	}
	j.within("click Older", chromedp.Click(chromedp.CSS(`.pager a[rel="next"]`)))
	j.waitJS("the 5 left", `document.querySelectorAll('tr[data-testid="pet-row"]').length === 5`)
	j.wantNoReload("paging 50 at a time")
	j.screenshot("pets-list-sorted.png")
}

// goBack goes one step back in the tab's history, as the Back button
// does, without waiting for a load (a page may come from the back-forward
// cache, which fires none).
func (j *journey) goBack() {
	j.t.Helper()
	h, err := chromedp.Call(j.ctx, page.GetNavigationHistory, cdp.Empty{})
	if err != nil || h.CurrentIndex < 1 {
		j.t.Fatalf("go back: history %+v, %v", h, err)
	}
	if _, err := chromedp.Call(j.ctx, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: h.Entries[h.CurrentIndex-1].ID}); err != nil {
		j.t.Fatalf("go back: %v", err)
	}
}

// Come back from a pet's page, by its "← All pets" link and by Back, to
// the same filtered, sorted page of the list.
func TestBrowserListComeBack(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	cleo := j.addPets(models.NewPet{Name: "Cleo", CategoryID: 2, Status: models.StatusSold})[0]
	j.addPets(models.NewPet{Name: "Ada", CategoryID: 1, Status: models.StatusAvailable})
	bo := j.addPets(models.NewPet{Name: "Bo", CategoryID: 2, Status: models.StatusAvailable})[0]
	j.signedIn()
	j.waitPetNames("Bo", "Ada", "Cleo")

	// Category 2 by name, descending, through the form and a header.
	j.fill("#pet-filter", "Category", "2")
	j.within("click Filter", chromedp.Click(button("//form[@id='pet-filter']", "Filter")))
	j.waitPetNames("Bo", "Cleo")
	j.within("click the Name header", chromedp.Click(chromedp.CSS(`th[data-column="name"] a`)))
	// The names' order is the same before and after this click: wait for
	// the answer itself, or the next click finds the header being replaced.
	j.waitJS("the URL to carry the name order", `new URLSearchParams(location.search).get("sort") === "name"`)
	j.within("see the header say the order", chromedp.WaitVisible(chromedp.CSS(`th[data-column="name"][aria-sort="ascending"] a`)))
	j.waitPetNames("Bo", "Cleo")
	j.within("click the Name header again", chromedp.Click(chromedp.CSS(`th[data-column="name"] a`)))
	j.waitPetNames("Cleo", "Bo")
	j.waitJS("the URL to carry the order", `new URLSearchParams(location.search).get("sort") === "-name"`)
	j.waitPetNames("Cleo", "Bo")
	listURL := j.location().RequestURI()
	j.within("open Bo's page", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#pet-%d [data-testid="pet-name"] a`, bo.ID))))
	j.within("see Bo's page", chromedp.WaitVisible(chromedp.CSS(`[data-testid="pet-heading"]`)))
	j.within("click ← All pets", chromedp.Click(chromedp.CSS(`[data-testid="back-to-pets"]`)))
	j.waitPath("/admin/pets")
	if got := j.location().RequestURI(); got != listURL {
		t.Errorf("← All pets led to %s, want %s", got, listURL)
	}
	j.waitPetNames("Cleo", "Bo")
	j.within("open Cleo's page", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#pet-%d [data-testid="pet-name"] a`, cleo.ID))))
	j.within("see Cleo's page", chromedp.WaitVisible(chromedp.CSS(`[data-testid="pet-heading"]`)))
	j.goBack()
	j.waitPath("/admin/pets")
	if got := j.location().RequestURI(); got != listURL {
		t.Errorf("Back led to %s, want %s", got, listURL)
	}
	j.waitPetNames("Cleo", "Bo")
	if got := j.value("#filter-category"); got != "2" {
		t.Errorf("the category field shows %q after Back, want 2", got)
	}
}

// Add a pet from the top of the list: the control is on the first screen,
// the result is announced beside the form, and the new pet is at the top
// of the list with a link to it.
func TestBrowserAddFromTop(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	for i := range 30 {
		j.addPets(models.NewPet{Name: fmt.Sprintf("Old %02d", i), CategoryID: 1, Status: models.StatusSold})
	}
	j.signedIn()
	if y := evalJS[float64](j, `document.querySelector("#add-pet > summary").getBoundingClientRect().bottom`); y > 300 {
		t.Errorf("the Add pet control ends %.0f px down, want it near the top", y)
	}
	j.markPage()
	j.openAddPet()
	j.fill("#pet-form", "Name", "Luna")
	j.fill("#pet-form", "Category ID", "4")
	j.within("click Add pet", chromedp.Click(button("//form[@id='pet-form']", "Add pet")))
	j.waitText(`[data-testid="add-result"]`, "Added Luna (id ")
	if got := evalJS[string](j, `document.querySelector('[data-testid="add-result"]').closest("[aria-live]")?.getAttribute("aria-live") ?? ""`); got != "polite" {
		t.Errorf("the add result is not in a live region (aria-live %q)", got)
	}
	if y := evalJS[float64](j, `document.querySelector('[data-testid="add-result"]').getBoundingClientRect().top`); y < 0 || y > 800 {
		t.Errorf("the add result is at %.0f px, off the screen the member is on", y)
	}
	j.waitJS("Luna at the top of the list", `document.querySelector('tr[data-testid="pet-row"] [data-testid="pet-name"]')?.textContent.trim() === "Luna"`)
	luna := j.storedPets()
	id := luna[len(luna)-1].ID
	if href := evalJS[string](j, `document.querySelector('[data-testid="add-result"] a')?.getAttribute("href") ?? ""`); !strings.HasPrefix(href, fmt.Sprintf("/admin/pets/%d", id)) {
		t.Errorf("the result links to %q, want Luna's page", href)
	}
	if got := j.value("#pet-name"); got != "" {
		t.Errorf("the form kept %q after the add, want it cleared for the next", got)
	}
	j.wantNoReload("adding from the top")
	j.screenshot("pets-added-from-top.png")
}

// After a row's status change the focus is back on that row's status
// control; the status filter moves through its options with arrow keys
// without a request, and applies once, one Back step, on Enter.
func TestBrowserListFocusAndStatusChoice(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	pets := j.addPets(
		models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable},
		models.NewPet{Name: "Kiki", CategoryID: 1, Status: models.StatusPending},
	)
	j.signedIn()
	j.waitPetNames("Kiki", "Rex")
	row := fmt.Sprintf("#pet-%d", pets[0].ID)
	j.choose(chromedp.CSS(row+` select[name="status"]`), "sold")
	j.within("click Update", chromedp.Click(chromedp.CSS(row+` button[type="submit"]`)))
	j.waitText(`[data-testid="flash"]`, "Rex is now sold.")
	j.waitJS("focus on Rex's status control", fmt.Sprintf(`document.activeElement === document.querySelector(%s)`, jsString(row+` select[name="status"]`)))

	// The status filter: arrows browse, Enter applies once.
	before := j.historyLength()
	j.do("focus the status filter", chromedp.Focus(chromedp.CSS("#filter-status")))
	j.press("ArrowDown", kb.ArrowDown)
	j.press("ArrowDown", kb.ArrowDown)
	if got := j.value("#filter-status"); got != "pending" {
		t.Fatalf("two arrow keys from All reached %q, want pending", got)
	}
	time.Sleep(500 * time.Millisecond) // what a request would have taken to change the URL
	if got := j.searchParam("status"); got != "" || j.historyLength() != before {
		t.Errorf("arrow keys changed the list: status=%q, history %d → %d", got, before, j.historyLength())
	}
	j.press("Enter", kb.Enter)
	j.waitJS("the URL to carry status=pending", `new URLSearchParams(location.search).get("status") === "pending"`)
	j.waitPetNames("Kiki")
	if got := j.historyLength(); got != before+1 {
		t.Errorf("history grew from %d to %d, want one step", before, got)
	}
}

// Filter, sort and add with the keyboard alone: Tab to each control,
// Enter to act.
func TestBrowserListKeyboard(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	j.addPets(
		models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable},
		models.NewPet{Name: "Bella", CategoryID: 2, Status: models.StatusAvailable},
		models.NewPet{Name: "Tom", CategoryID: 3, Status: models.StatusSold},
	)
	j.signedIn()
	j.waitPetNames("Tom", "Bella", "Rex")
	j.markPage()
	// Add: the control is a few Tabs from the page's start (past the
	// skip link, the brand and the navigation).
	if n := j.tabTo(`#add-pet > summary`, 20); n > 15 {
		t.Errorf("Add pet took %d Tab presses from the page's start", n)
	}
	j.press("Enter", kb.Enter)
	j.waitJS("the add form open", `document.querySelector("#add-pet").open`)
	j.tabTo(`#pet-name`, 3)
	j.do("type the name", chromedp.KeyEvent("Mochi"))
	j.tabTo(`#pet-category`, 3)
	j.do("type the category", chromedp.KeyEvent("2"))
	j.tabTo(`#pet-form button[type="submit"]`, 3)
	j.press("Enter", kb.Enter)
	j.waitText(`[data-testid="add-result"]`, "Added Mochi")
	j.waitPetNames("Mochi", "Tom", "Bella", "Rex")

	// Filter: the status filter, an arrow to "available", Enter.
	j.tabTo(`#filter-status`, 20)
	j.press("ArrowDown", kb.ArrowDown)
	j.press("Enter", kb.Enter)
	j.waitJS("status=available", `new URLSearchParams(location.search).get("status") === "available"`)
	j.waitPetNames("Mochi", "Bella", "Rex")

	// Sort: Tab to the Name header's link, Enter.
	j.tabTo(`th[data-column="name"] a`, 40)
	j.press("Enter", kb.Enter)
	j.waitJS("sort=name", `new URLSearchParams(location.search).get("sort") === "name"`)
	j.waitPetNames("Bella", "Mochi", "Rex")
	if got := j.searchParam("status"); got != "available" {
		t.Errorf("sorting dropped the status filter: status=%q", got)
	}
	j.wantNoReload("the keyboard journey")
}
