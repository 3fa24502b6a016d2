package e2e

// Browser journey of the CSV import: from the pets page, with the
// keyboard alone but for choosing the file (a native dialog), staff reach
// the import, preview a sheet with a formula-looking name, a Hebrew name,
// an emoji and a bad row, see its error beside the rows to add, import the
// valid rows and watch the progress end. Helpers are browser_test.go's.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"petstore/internal/testkit"
	"petstore/models"
)

func TestBrowserImport(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		j := newJourney(t, driver)
		file := filepath.Join(t.TempDir(), "stock.csv")
		sheet := "\xef\xbb\xbfname;category_id;status\r\n" +
			"Rex;1;sold\r\n" +
			"\"=HYPERLINK(\"\"http://evil.example\"\")\";2;\r\n" +
			"Mochi 🐾;3;pending\r\n" +
			"שלום;4;\r\n" +
			"Nameless;0;lost\r\n"
		if err := os.WriteFile(file, []byte(sheet), 0o600); err != nil {
			t.Fatal(err)
		}
		j.signedIn()

		// The pets page links the import; Tab reaches it, Enter follows it.
		j.do("focus the page", chromedp.Focus(chromedp.CSS(`[data-testid="add-pet"]`)))
		j.tabTo(`[data-testid="import-link"]`, 5)
		j.do("press Enter on the import link", chromedp.KeyEvent(kb.Enter))
		j.waitPath("/admin/pets/import")

		// Choosing a file is the one step a native dialog does; then Tab
		// from the file field reaches Preview.
		j.do("choose the file", chromedp.SetUploadFiles(chromedp.CSS(`#import-file`), []string{file}))
		j.do("focus the file field", chromedp.Focus(chromedp.CSS(`#import-file`)))
		j.tabTo(`[data-testid="import-preview-button"]`, 3)
		j.do("press Enter on Preview", chromedp.KeyEvent(kb.Enter))
		j.within("see the preview", chromedp.WaitVisible(chromedp.CSS(`[data-testid="import-preview"]`)))
		if got := j.text(`[data-testid="import-counts"]`); !containsAll(got, "4 rows to add, 1 with errors.", "Nothing has been written yet.") {
			t.Errorf("counts: %q", got)
		}
		if got := evalJS[[]string](j, `[...document.querySelectorAll('[data-testid="import-errors"] tbody td')].map(td => td.textContent.trim())`); !slices.Equal(got,
			[]string{"6", "category_id", "Category ID must be a positive whole number, such as 1 or 42.", "6", "status", models.StatusMessage}) {
			t.Errorf("errors: %q", got)
		}
		if got := evalJS[[]string](j, `[...document.querySelectorAll('[data-testid="import-rows"] tbody tr td:nth-child(2)')].map(td => td.textContent)`); !slices.Equal(got,
			[]string{"Rex", `=HYPERLINK("http://evil.example")`, "Mochi 🐾", "שלום"}) {
			t.Errorf("rows to add: %q", got)
		}
		if len(j.storedPets()) != 0 {
			t.Fatal("the preview wrote pets")
		}
		if driver == models.DriverSQLite {
			j.screenshot("pets-import-preview.png")
		}

		// Tab reaches the explicit choice; Enter imports the valid rows.
		j.do("focus the page", chromedp.Focus(chromedp.CSS(`main`)))
		j.tabTo(`[data-testid="import-confirm"]`, 10)
		if got := j.text(`[data-testid="import-confirm"]`); got != "Import the valid rows (4), skip 1 with errors" {
			t.Errorf("the import button says %q", got)
		}
		j.do("press Enter on Import", chromedp.KeyEvent(kb.Enter))
		j.waitJS("the import to end", `document.querySelector('[data-testid="import-summary"]')?.textContent.includes("imported 4 pets")`)
		var names []string
		for _, p := range j.storedPets() {
			names = append(names, p.Name)
		}
		slices.Sort(names)
		if want := []string{`=HYPERLINK("http://evil.example")`, "Mochi 🐾", "Rex", "שלום"}; !slices.Equal(names, want) {
			t.Errorf("stored %q, want %q", names, want)
		}
		if driver == models.DriverSQLite {
			j.screenshot("pets-import-done.png")
		}
	})
}

// containsAll reports whether s holds every part.
func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
