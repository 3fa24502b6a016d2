package e2e

// Browser journeys of the console's dangerous and far-reaching actions: a
// status change of every pet of a filter (confirmed, then run in the
// background with its progress shown, with htmx and without JavaScript),
// and a member's account disabled after its confirmation page, with the
// danger style readable in light and dark.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"petstore/models"
)

// countStatus counts the stored pets of a status, all pages.
func (j *journey) countStatus(st models.Status) int {
	j.t.Helper()
	n, err := j.store.CountMatching(context.Background(), models.PetListing{Status: st})
	if err != nil {
		j.t.Fatal(err)
	}
	return n
}

// Journey: "every pet of this filter" from the bulk form, the confirmation
// stating the count, and the progress page ending with the summary, with
// htmx polling; then the same without JavaScript, refreshing by the link.
func TestBrowserBulkEveryMatch(t *testing.T) {
	j := newJourney(t, "sqlite")
	if _, err := j.store.SeedPets(context.Background(), 1200, "test", nil); err != nil {
		t.Fatal(err)
	}
	available, pending := j.countStatus(models.StatusAvailable), j.countStatus(models.StatusPending)
	j.signedIn()

	j.open("/admin/pets?status=available")
	j.choose(j.control("#bulk-form", "Set the selected pets to"), "sold")
	j.within("click every pet of this filter", chromedp.Click(button("//form[@id='bulk-form']", "Apply to every pet of this filter…")))
	j.waitPath("/admin/pets/bulk")
	want := fmt.Sprintf("Set all %s pets to sold?", grouped(available))
	j.waitText("h1", want)
	if got := j.text(`[data-testid="bulk-confirm-text"]`); !strings.Contains(got, "status available") {
		t.Errorf("the confirmation %q does not name the filter", got)
	}
	if got := j.countStatus(models.StatusAvailable); got != available {
		t.Fatalf("%d available pets after asking; want %d: asking changed pets", got, available)
	}
	j.screenshot("bulk-confirm.png")
	j.within("click the confirmation", chromedp.Click(chromedp.CSS(`[data-testid="bulk-confirm-button"]`)))
	j.waitJS("the job's page", `location.pathname.startsWith("/admin/pets/bulk/")`)
	j.waitText(`[data-testid="bulk-job-summary"]`, fmt.Sprintf("Changed %s pets to sold.", grouped(available)))
	j.screenshot("bulk-done.png")
	if got := j.countStatus(models.StatusAvailable); got != 0 {
		t.Errorf("%d pets still available", got)
	}

	// Without JavaScript: the same forms, and Refresh until it has ended.
	if _, err := chromedp.Call(j.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatalf("disable JavaScript: %v", err)
	}
	j.open("/admin/pets?status=pending")
	j.within("choose available", chromedp.SetValue(chromedp.CSS("#bulk-status"), "available"))
	j.within("click every pet of this filter", chromedp.Click(button("//form[@id='bulk-form']", "Apply to every pet of this filter…")))
	j.waitPath("/admin/pets/bulk")
	j.waitText("h1", fmt.Sprintf("Set all %s pets to available?", grouped(pending)))
	j.within("click the confirmation", chromedp.Click(chromedp.CSS(`[data-testid="bulk-confirm-button"]`)))
	j.waitJS("the job's page", `location.pathname.startsWith("/admin/pets/bulk/")`)
	j.store.WaitBulkJobs()
	j.within("click Refresh", chromedp.Click(chromedp.CSS(`[data-testid="bulk-refresh"], [data-testid="bulk-job-summary"]`)))
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(j.text(`[data-testid="bulk-job-summary"]`), "Changed") && time.Now().Before(deadline) {
		j.do("reload", chromedp.Reload())
	}
	j.waitText(`[data-testid="bulk-job-summary"]`, fmt.Sprintf("Changed %s pets to available.", grouped(pending)))
	if got := j.countStatus(models.StatusPending); got != 0 {
		t.Errorf("%d pets still pending", got)
	}
}

// grouped writes n as the console does, digits grouped by commas.
func grouped(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Journey: an admin disables a member's account: the button is styled as
// dangerous, readable in light and dark, and asks first; Cancel changes
// nothing, the confirmation disables.
func TestBrowserDisableConfirms(t *testing.T) {
	j := newJourney(t, "sqlite")
	bob, err := j.store.CreateUserWithRole(context.Background(), "bob", "bob's long password", models.RoleEditor, "test")
	if err != nil {
		t.Fatal(err)
	}
	j.signedIn()
	member := "/admin/users/" + strconv.FormatInt(bob.ID, 10)
	j.open(member)
	for _, dark := range []bool{false, true} {
		j.inDark(dark)
		fg := evalJS[string](j, `getComputedStyle(document.querySelector('[data-testid="action-disable"] button')).color`)
		bg := evalJS[string](j, `getComputedStyle(document.querySelector('[data-testid="action-disable"] button')).backgroundColor`)
		a, b := luminance(t, fg), luminance(t, bg)
		if ratio := (max(a, b) + 0.05) / (min(a, b) + 0.05); ratio < 4.5 {
			t.Errorf("dark %v: Disable account is %s on %s, contrast %.2f:1; want at least 4.5:1", dark, fg, bg, ratio)
		}
		if b > 0.2 {
			t.Errorf("dark %v: Disable account's background %s is not a dark red", dark, bg)
		}
	}
	j.inDark(false)
	j.within("click Disable account", chromedp.Click(button("//main", "Disable account")))
	j.waitText("h1", "Disable bob's account?")
	j.screenshot("confirm-disable.png")
	j.within("click Cancel", chromedp.Click(button("//main", "Cancel")))
	j.waitPath(member)
	if u, _ := j.store.GetUser(context.Background(), bob.ID); u.Disabled() {
		t.Fatal("Cancel disabled the account")
	}
	j.within("click Disable account", chromedp.Click(button("//main", "Disable account")))
	j.waitText("h1", "Disable bob's account?")
	j.within("confirm", chromedp.Click(chromedp.CSS(`[data-testid="confirm-button"]`)))
	j.waitPath(member)
	j.waitText(`[data-testid="flash"]`, "bob is disabled")
	if u, _ := j.store.GetUser(context.Background(), bob.ID); !u.Disabled() {
		t.Error("the confirmed action did not disable the account")
	}
}
