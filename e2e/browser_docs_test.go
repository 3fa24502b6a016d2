package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"petstore/models"
)

// cspListener records every securitypolicyviolation event of a page in
// window.__cspViolations. It is installed through the DevTools protocol,
// which runs it before the page's own scripts and outside the page's CSP
// (an inline script would itself be refused). It is a second net beside
// watch, which reads the violations Chromium reports on its console.
const cspListener = `window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
	window.__cspViolations.push(e.violatedDirective + " " + (e.blockedURI || "inline") + " at " + e.sourceFile + ":" + e.lineNumber);
});`

// Journey: a member follows the console's "API reference" link; there a
// partner finds the four operations, the error codes, the pagination Link
// header and the deprecation with its sunset date, pastes a key into
// Authorize and tries a list request against this server: 200, with the
// store's animals. With the system in dark mode the page and Swagger UI
// are dark; the page's link leads back to the console. The page's strict
// CSP stays in force: no violation, no script error.
func TestBrowserDocs(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	j.addPets(models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable},
		models.NewPet{Name: "Polly", CategoryID: 2, Status: models.StatusSold})
	_, key, err := j.store.CreateAPIKey(context.Background(), "Docs partner", "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(j.ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: cspListener}); err != nil {
		t.Fatalf("install the CSP listener: %v", err)
	}
	t.Cleanup(func() {
		if v := evalJS[[]string](j, `window.__cspViolations ?? ["the listener was not installed"]`); len(v) != 0 {
			t.Errorf("CSP violations: %q", v)
		}
	})

	// A member finds the reference from the console's navigation.
	j.signedIn()
	j.within("follow API reference", chromedp.Click(chromedp.CSS(`header nav a[href="/docs"]`)))
	j.waitPath("/docs")
	j.waitJS("the four operations", `document.querySelectorAll(".opblock").length === 4`)
	ops := evalJS[[]string](j, `[...document.querySelectorAll(".opblock")].map(o =>
		o.querySelector(".opblock-summary-method").textContent.trim() + " " +
		o.querySelector(".opblock-summary-path, .opblock-summary-path__deprecated").textContent.trim().replace(/\u200b/g, "") +
		(o.classList.contains("opblock-deprecated") ? " deprecated" : ""))`)
	if got, want := strings.Join(ops, ", "), "GET /pets, POST /pets, GET /pets/{petId} deprecated, GET /events"; got != want {
		t.Errorf("operations %q, want %q", got, want)
	}
	info := j.text(`[data-testid="api-intro"]`)
	for _, want := range []string{"Animal Store API", "invalid_request", "unauthorized", "not_found", "gone", "rate_limited",
		"unavailable", `rel="next"`, "5 December 2030", "RateLimit"} {
		if !strings.Contains(info, want) {
			t.Errorf("the introduction does not mention %q", want)
		}
	}

	// The deprecated operation states its sunset; the list its Link header.
	getPet := `[id$="-getPet"]`
	j.within("open GET /pets/{petId}", chromedp.Click(chromedp.CSS(getPet+" .opblock-summary-control")))
	j.waitText(getPet+" .opblock-description-wrapper", "5 December 2030")
	j.waitText(getPet+" .responses-wrapper", "Sunset")
	list := `[id$="-listPets"]`
	j.within("open GET /pets", chromedp.Click(chromedp.CSS(list+" .opblock-summary-control")))
	j.waitText(list+" .responses-wrapper", `rel="next"`)
	j.waitText(list+" .responses-wrapper", "RateLimit-Policy")
	for _, code := range []string{"400", "401", "429", "503"} {
		if !evalJS[bool](j, fmt.Sprintf(`[...document.querySelectorAll(%s)].some(c => c.textContent.trim() === %s)`,
			jsString(list+" .responses-table .response-col_status"), jsString(code))) {
			t.Errorf("GET /pets does not document %s", code)
		}
	}

	// Authorize with the key, then try the list against this server.
	j.within("click Authorize", chromedp.Click(chromedp.CSS(".scheme-container .btn.authorize")))
	j.within("see the Authorize dialog", chromedp.WaitVisible(chromedp.CSS(".dialog-ux .modal-ux input")))
	j.within("paste the key", chromedp.SendKeys(chromedp.CSS(".dialog-ux .modal-ux input"), key))
	j.within("confirm", chromedp.Click(chromedp.CSS(".dialog-ux .modal-ux .auth-btn-wrapper .authorize")))
	j.waitText(".dialog-ux .modal-ux", "Authorized")
	j.within("close the dialog", chromedp.Click(chromedp.CSS(".dialog-ux .modal-ux .btn-done")))
	j.waitJS("the dialog to close", `document.querySelector(".dialog-ux") === null`)
	if evalJS[bool](j, fmt.Sprintf(`JSON.stringify(localStorage).includes(%s)`, jsString(key))) {
		t.Error("the key was kept in localStorage")
	}

	j.within("click Execute", chromedp.Click(chromedp.CSS(list+" .btn.execute")))
	// The request sent no filter (the form is not prefilled with one).
	j.waitText(list+" .live-responses-table tbody .response-col_status", "200")
	if u := j.text(list + " .request-url pre"); u != j.base+"/v1/pets?limit=20" {
		t.Errorf("the request went to %q, want %s/v1/pets?limit=20", u, j.base)
	}
	body := j.text(list + " .live-responses-table tbody .response-col_description pre")
	if !strings.Contains(body, `"Rex"`) || !strings.Contains(body, `"Polly"`) {
		t.Errorf("the response shown is %q, want the store's two animals", body)
	}
	if headers := j.text(list + " .live-responses-table tbody .response-col_description"); !strings.Contains(headers, `ratelimit-policy: "default";q=100;w=2`) {
		t.Errorf("the response headers shown lack RateLimit-Policy: %q", headers)
	}
	j.screenshot("docs.png")

	// Dark: the page and Swagger UI follow the system's scheme.
	if _, err := chromedp.Call(j.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}},
	}); err != nil {
		t.Fatalf("emulate dark mode: %v", err)
	}
	j.do("reload", chromedp.Reload())
	j.waitJS("the four operations", `document.querySelectorAll(".opblock").length === 4`)
	bg := `(el) => { const m = getComputedStyle(el).backgroundColor.match(/\d+/g).map(Number); return (m[0] + m[1] + m[2]) / 3; }`
	// The frame, and Swagger UI's server and Authorize bar (white in light
	// mode).
	for _, el := range []string{"document.body", `document.querySelector(".swagger-ui .scheme-container")`} {
		if lum := evalJS[float64](j, "("+bg+")("+el+")"); lum > 64 {
			t.Errorf("in dark mode %s has a light background (mean %v of 255)", el, lum)
		}
	}
	if !evalJS[bool](j, `document.documentElement.classList.contains("dark-mode")`) {
		t.Error("Swagger UI's dark theme is off in dark mode")
	}
	j.screenshot("docs-dark.png")

	// And back to the console.
	j.within("follow Staff console", chromedp.Click(chromedp.CSS(`header a[data-testid="console-link"]`)))
	j.waitPath("/admin/pets")
}
