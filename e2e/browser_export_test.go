package e2e

// Browser journey of the CSV export: staff filter the pets page,
// reach "Export CSV" with the keyboard and get the file of the filter,
// named by date and filter, with every matching pet in the page's order;
// the page with the link on a desktop, a phone and in dark mode. Helpers
// are browser_test.go's and browser_roles_test.go's.

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"petstore/internal/testkit"
	"petstore/models"
)

// download is a file the browser downloaded.
type download struct {
	suggested string // the name the server suggested (Content-Disposition)
	path      string // where it was saved
}

// downloads collects the tab's finished downloads.
type downloads struct {
	mu    sync.Mutex
	names map[string]string // GUID -> suggested name
	done  []download
}

// allowDownloads lets the browser save downloads in dir, each under its
// GUID, and reports them.
func (j *journey) allowDownloads(dir string) *downloads {
	j.t.Helper()
	d := &downloads{names: map[string]string{}}
	seen := func(ev any) {
		d.mu.Lock()
		defer d.mu.Unlock()
		switch ev := ev.(type) {
		case *browser.EventDownloadWillBegin:
			d.names[ev.GUID] = ev.SuggestedFilename
		case *browser.EventDownloadProgress:
			if ev.State == browser.DownloadProgressStateCompleted && !slices.ContainsFunc(d.done, func(x download) bool { return x.path == filepath.Join(dir, ev.GUID) }) {
				d.done = append(d.done, download{suggested: d.names[ev.GUID], path: filepath.Join(dir, ev.GUID)})
			}
		}
	}
	// The events come to the session that asked for them; which one that
	// is has changed between Chromium versions: listen to both.
	if err := chromedp.Listen(j.ctx, seen); err != nil {
		j.t.Fatal(err)
	}
	if err := chromedp.ListenBrowser(j.ctx, seen); err != nil {
		j.t.Fatal(err)
	}
	events := true
	if _, err := chromedp.Call(j.ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &events,
	}); err != nil {
		j.t.Fatalf("allow downloads: %v", err)
	}
	return d
}

// wait waits for the first finished download.
func (d *downloads) wait(j *journey) download {
	j.t.Helper()
	for deadline := time.Now().Add(waitTimeout); time.Now().Before(deadline); time.Sleep(25 * time.Millisecond) {
		d.mu.Lock()
		done := slices.Clone(d.done)
		d.mu.Unlock()
		if len(done) > 0 {
			return done[0]
		}
	}
	j.t.Fatalf("no download finished within %s (page: %s)", waitTimeout, j.where())
	return download{}
}

// Journey: filter, reach Export CSV by keyboard, get the
// filter's file; the page with the link on a phone and in dark mode.
func TestBrowserExport(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		j := newJourney(t, driver)
		pets := j.addPets(
			models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable},
			models.NewPet{Name: "Tabby", CategoryID: 2, Status: models.StatusSold},
			models.NewPet{Name: "Tara", CategoryID: 2, Status: models.StatusAvailable},
			models.NewPet{Name: "Tom", CategoryID: 3, Status: models.StatusSold},
			models.NewPet{Name: "Pépé Tamsin 🐾", CategoryID: 4, Status: models.StatusSold},
			models.NewPet{Name: "@Tasha", CategoryID: 5, Status: models.StatusSold},
		)
		j.signedIn()
		j.waitPetNames("@Tasha", "Pépé Tamsin 🐾", "Tom", "Tara", "Tabby", "Rex")

		// Filter in place: the link follows the filter htmx shows.
		j.choose(j.control("#pet-filter", "Status"), "sold")
		j.fill("#pet-filter", "Search by name", "ta")
		j.waitPetNames("@Tasha", "Pépé Tamsin 🐾", "Tabby")
		link := `#pets-table a[data-testid="export-link"]`
		j.waitJS("the export link to carry the filter",
			`document.querySelector(`+jsString(link)+`)?.getAttribute("href") === "/admin/pets/export.csv?q=ta&status=sold"`)
		if got := evalJS[string](j, `(() => { const a = document.querySelector(`+jsString(link)+`);
			return a.textContent.trim() + " | " + document.getElementById(a.getAttribute("aria-describedby")).textContent.trim(); })()`); got != "Export CSV | every page of this filter, as a spreadsheet file" {
			t.Errorf("the link and its description: %q", got)
		}
		if driver == models.DriverSQLite { // one set of screenshots
			j.screenshot("pets-export.png")
		}

		// From the search box, Tab reaches the Filter button, the four
		// status counts (All, Available, Pending, Sold), then the link;
		// Enter downloads the file, and the page stays.
		d := j.allowDownloads(t.TempDir())
		j.do("reload", chromedp.Reload())
		j.waitPetNames("@Tasha", "Pépé Tamsin 🐾", "Tabby")
		day := time.Now().UTC().Format(time.DateOnly)
		j.do("focus the search box", chromedp.Focus(chromedp.CSS("#filter-q")))
		for range 6 {
			j.do("press Tab", chromedp.KeyEvent(kb.Tab))
		}
		if got := evalJS[string](j, `document.activeElement?.dataset?.testid ?? ""`); got != "export-link" {
			t.Fatalf("Tab six times from the search box focused %q, want the export link", got)
		}
		j.do("press Enter on Export CSV", chromedp.KeyEvent(kb.Enter))
		file := d.wait(j)
		if want := "pets-" + day + "-status-sold-q-ta.csv"; file.suggested != want && file.suggested != strings.Replace(want, day, time.Now().UTC().Format(time.DateOnly), 1) {
			t.Errorf("downloaded as %q, want %q", file.suggested, want)
		}
		body, err := os.ReadFile(file.path)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
		if err != nil {
			t.Fatalf("the download is not CSV: %v\n%s", err, body)
		}
		want := [][]string{{"id", "name", "category_id", "status"}}
		for _, p := range []models.Pet{pets[5], pets[4], pets[1]} {
			name := p.Name
			if strings.HasPrefix(name, "@") {
				name = "'" + name // a spreadsheet would run it as a formula
			}
			want = append(want, []string{strconv.FormatInt(p.ID, 10), name, strconv.FormatInt(p.CategoryID, 10), "sold"})
		}
		if len(rows) != len(want) {
			t.Fatalf("the download has %d lines, want %d:\n%s", len(rows), len(want), body)
		}
		for i, r := range rows {
			if !slices.Equal(r[:4], want[i]) {
				t.Errorf("line %d: %q, want %q", i+1, r[:4], want[i])
			}
		}
		if u := j.location(); u.Path != "/admin/pets" || u.Query().Get("q") != "ta" {
			t.Errorf("after the download the tab is at %s, want the filtered pets page", u)
		}
		events, _, err := j.store.ListAuditEvents(context.Background(), models.AuditQuery{Action: models.ActionPetsExported})
		if err != nil || len(events) != 1 || events[0].Actor != staffUser || events[0].Detail != `exported 3 pets as CSV; filter: status sold, search "ta"` {
			t.Errorf("audit of the export: %+v, %v", events, err)
		}
		if driver != models.DriverSQLite {
			return
		}

		// On a phone the link stays on the screen; in dark mode it reads.
		j.onPhone("the pets page with the export link")
		if right := evalJS[float64](j, `document.querySelector(`+jsString(link)+`).getBoundingClientRect().right`); right > phoneWidth {
			t.Errorf("the export link ends at %.0f px, past the %d px screen", right, phoneWidth)
		}
		j.screenshot("pets-export-phone.png")
		j.offPhone()
		j.inDark(true)
		j.screenshot("pets-export-dark.png")
	})
}
