package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"petstore/config"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
	"petstore/webhooks"
)

// partnerURL is a webhook URL the console accepts without
// WEBHOOK_ALLOW_PRIVATE: a public name (nothing is ever sent to it, as no
// dispatcher runs in these tests).
const partnerURL = "https://partner.example/petstore-hook?token=t0k3n"

// webhookState is every endpoint and its deliveries as text, secrets and
// leases included: equal states mean nothing about webhooks changed.
func (e *env) webhookState() string {
	e.t.Helper()
	ctx := context.Background()
	ws, err := e.store.ListWebhooks(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	var b strings.Builder
	for _, w := range ws {
		ds, err := e.store.WebhookDeliveries(ctx, w.ID, 1000)
		if err != nil {
			e.t.Fatal(err)
		}
		// JSON, not %v: it shows what the pointer fields point at.
		j, err := json.Marshal(struct {
			W  models.Webhook
			Ds []models.WebhookDelivery
		}{w, ds})
		if err != nil {
			e.t.Fatal(err)
		}
		b.Write(j)
		b.WriteString("\n")
	}
	return "webhooks:\n" + b.String()
}

// addWebhook registers an endpoint for partnerURL as the models and the
// command line do, and returns it with its secret.
func (e *env) addWebhook(t *testing.T) (models.Webhook, string) {
	t.Helper()
	w, secret, err := webhooks.Create(context.Background(), e.store, models.WebhookInput{URL: partnerURL, Description: "Acme"}, false, "test")
	if err != nil {
		t.Fatal(err)
	}
	return w, secret
}

// failedDelivery adds an endpoint with one delivery (a test event) whose
// every attempt failed.
func (e *env) failedDelivery(t *testing.T) (models.Webhook, models.WebhookDelivery) {
	t.Helper()
	ctx := context.Background()
	w, _ := e.addWebhook(t)
	if err := webhooks.SendPing(ctx, e.store, w.ID, "test"); err != nil {
		t.Fatal(err)
	}
	d := e.deliveries(t, w.ID)[0]
	a := models.WebhookAttempt{At: time.Now().UTC(), Status: http.StatusBadGateway, Error: "answered 502 Bad Gateway",
		Duration: 42 * time.Millisecond, Final: true}
	if _, err := e.store.RecordWebhookAttempt(ctx, d, a, 72*time.Hour); err != nil {
		t.Fatal(err)
	}
	return e.webhook(t, w.ID), e.deliveries(t, w.ID)[0]
}

// webhook reads endpoint id as stored.
func (e *env) webhook(t *testing.T, id int64) models.Webhook {
	t.Helper()
	w, err := e.store.GetWebhook(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// deliveries reads endpoint id's deliveries, newest first.
func (e *env) deliveries(t *testing.T, id int64) []models.WebhookDelivery {
	t.Helper()
	ds, err := e.store.WebhookDeliveries(context.Background(), id, 100)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// webhookAudit returns the audit trail of endpoint id, oldest first, as
// "actor action".
func (e *env) webhookAudit(t *testing.T, id int64) []string {
	t.Helper()
	events, _, err := e.store.ListAuditEvents(context.Background(), models.AuditQuery{TargetType: models.TargetWebhook, TargetID: id, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(events) - 1; i >= 0; i-- {
		out = append(out, events[i].Actor+" "+events[i].Action)
	}
	return out
}

func hookPath(id int64, action string) string {
	p := "/admin/webhooks/" + strconv.FormatInt(id, 10)
	if action != "" {
		p += "/" + action
	}
	return p
}

// shownSecret returns the signing secret a page shows in its once-only
// panel, failing the test when there is none.
func shownSecret(t *testing.T, p page) string {
	t.Helper()
	panel := p.Doc.Find(`[data-testid="new-secret"]`)
	if !panel.HasClass("key-once") || !strings.Contains(panel.Text(), "it will not be shown again") {
		t.Fatalf("no once-only secret panel:\n%s", p.Body)
	}
	input := labelled(t, p, "Signing secret")
	secret := input.AttrOr("value", "")
	id := input.AttrOr("id", "")
	if !strings.HasPrefix(secret, "whsec_") || input.AttrOr("readonly", "x") == "x" ||
		panel.Find(`button[data-copy="#`+id+`"]`).Length() != 1 {
		t.Fatalf("the secret needs a readonly field with a copy button pointing at it:\n%s", p.Body)
	}
	if !strings.Contains(text(p, `[data-testid="verify-help"]`), "Petstore-Signature") {
		t.Errorf("the panel does not say how to verify a delivery: %q", text(p, `[data-testid="verify-help"]`))
	}
	return secret
}

func TestWebhooksPage(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, _ := e.signedIn()
		p := b.get("/admin/webhooks")
		wantStatus(t, p, http.StatusOK)
		if n := p.Doc.Find("h1").Length(); n != 1 || text(p, "h1") != "Webhooks" {
			t.Errorf("%d h1, first %q; want one \"Webhooks\"", n, text(p, "h1"))
		}
		if text(p, `nav [aria-current="page"]`) != "Webhooks" {
			t.Errorf("current navigation entry %q", text(p, `nav [aria-current="page"]`))
		}
		if !strings.Contains(text(p, `[data-testid="webhooks-empty"]`), "No webhook endpoints yet") || p.Doc.Find("table").Length() != 0 {
			t.Errorf("empty state %q", text(p, `[data-testid="webhooks-empty"]`))
		}
		u := labelled(t, p, "URL")
		form := u.Closest("form")
		if u.AttrOr("name", "") != "url" || form.AttrOr("method", "") != "post" || form.AttrOr("action", "") != "/admin/webhooks" ||
			form.Find(`input[name="csrf_token"]`).Length() != 1 {
			t.Error("the URL field is not in a form posting to /admin/webhooks with its CSRF token")
		}
		for _, typ := range models.WebhookEventTypes {
			box := labelled(t, p, typ)
			if box.AttrOr("type", "") != "checkbox" || box.AttrOr("name", "") != "events" || box.AttrOr("value", "") != typ {
				t.Errorf("event type %s: not a checkbox named events", typ)
			}
			if _, checked := box.Attr("checked"); checked {
				t.Errorf("event type %s checked by default (none checked means all)", typ)
			}
		}
		if labelled(t, p, "Description (optional)").AttrOr("name", "") != "description" {
			t.Error("no description field")
		}

		// The list: an endpoint's settings, state and health.
		w, _ := e.failedDelivery(t)
		p = b.get("/admin/webhooks")
		var cells []string
		p.Doc.Find(`[data-testid="webhook-row"]`).Children().Each(func(_ int, s *goquery.Selection) {
			cells = append(cells, strings.Join(strings.Fields(s.Text()), " "))
		})
		want := []string{partnerURL, "all", "Acme", "Enabled", "never", formatUTC(*w.FailingSince), "1"}
		if strings.Join(cells, "|") != strings.Join(want, "|") {
			t.Errorf("row = %q\nwant  %q", cells, want)
		}
		if href := p.Doc.Find(`[data-testid="webhook-row"] a`).AttrOr("href", ""); href != hookPath(w.ID, "") {
			t.Errorf("row links to %q", href)
		}
	})
}

// formatUTC is how the console shows a time.
func formatUTC(t time.Time) string { return t.UTC().Format("2 Jan 2006, 15:04") + " UTC" }

// An admin adds an endpoint: its secret is shown once, is the one that
// signs, and is never shown again.
func TestCreateWebhook(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		p := b.post("/admin/webhooks", url.Values{"csrf_token": {tok}, "url": {"  " + partnerURL + " "},
			"events": {"pet.updated", "pet.created"}, "description": {" Acme shop "}})
		wantStatus(t, p, http.StatusOK)
		if p.Header.Get("Location") != "" {
			t.Errorf("a create answers with the page, not a redirect to %q", p.Header.Get("Location"))
		}
		secret := shownSecret(t, p)
		ws, err := e.store.ListWebhooks(context.Background())
		if err != nil || len(ws) != 1 {
			t.Fatalf("stored endpoints %+v, %v", ws, err)
		}
		w := ws[0]
		if w.Secret != secret {
			t.Fatal("the secret shown is not the one that signs the deliveries")
		}
		if w.URL != partnerURL || w.EventTypes != "pet.created,pet.updated" || w.Description != "Acme shop" || w.CreatedBy != staffName || !w.Enabled {
			t.Errorf("stored %+v", w)
		}
		if sig := webhooks.Signature(time.Unix(1, 0), []byte("{}"), w.Secrets(time.Now())...); sig != webhooks.Signature(time.Unix(1, 0), []byte("{}"), secret) {
			t.Errorf("deliveries are signed %q, not with the secret shown", sig)
		}
		if got := e.webhookAudit(t, w.ID); strings.Join(got, "|") != staffName+" "+models.ActionWebhookCreated {
			t.Errorf("audit %q", got)
		}

		// Later pages show the endpoint, never its secret.
		for _, path := range []string{"/admin/webhooks", hookPath(w.ID, ""), hookPath(w.ID, "rotate"), hookPath(w.ID, "delete"),
			"/admin/audit"} {
			later := b.get(path)
			wantStatus(t, later, http.StatusOK)
			if strings.Contains(later.Body, secret) || strings.Contains(later.Body, strings.TrimPrefix(secret, "whsec_")) {
				t.Errorf("%s shows the secret again", path)
			}
			if later.Doc.Find(`[data-testid="new-secret"]`).Length() != 0 {
				t.Errorf("%s shows the secret panel again", path)
			}
		}
		list := b.get("/admin/webhooks")
		if got := text(list, `[data-testid="webhook-events"]`); got != "pet.created, pet.updated" {
			t.Errorf("events %q", got)
		}
	})
}

// With htmx, adding an endpoint swaps only the webhooks section, secret
// panel included.
func TestCreateWebhookHTMX(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		p := b.post("/admin/webhooks", url.Values{"url": {partnerURL}}, "HX-Request", "true", "X-CSRF-Token", tok)
		wantStatus(t, p, http.StatusOK)
		if strings.Contains(p.Body, "<html") || p.Doc.Find("section#webhooks-section").Length() != 1 {
			t.Fatalf("htmx got more or less than the section:\n%s", p.Body)
		}
		secret := shownSecret(t, p)
		ws, _ := e.store.ListWebhooks(context.Background())
		if len(ws) != 1 || ws[0].Secret != secret || ws[0].EventTypes != "" {
			t.Errorf("stored %+v", ws)
		}
		if text(p, `[data-testid="webhook-events"]`) != "all" {
			t.Errorf("an endpoint with no type checked receives %q", text(p, `[data-testid="webhook-events"]`))
		}
	})
}

// A refused form is shown again as typed, each message beside its field,
// and stores nothing.
func TestCreateWebhookRefused(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		tests := []struct {
			name      string
			form      url.Values
			errorID   string // the testid of the field's message
			message   string // part of it
			invalidID string // the field marked invalid
		}{
			{"loopback address", url.Values{"url": {"http://127.0.0.1/"}, "events": {"pet.created"}, "description": {"mine"}},
				"url-error", "loopback", "webhook-url"},
			{"no URL", url.Values{"url": {"  "}}, "url-error", "required", "webhook-url"},
			{"not http", url.Values{"url": {"ftp://partner.example/"}}, "url-error", "https://", "webhook-url"},
			{"unknown event type", url.Values{"url": {partnerURL}, "events": {"pet.created", "pet.deleted"}, "description": {"mine"}},
				"events-error", `Unknown event type "pet.deleted"`, "webhook-event-pet-created"},
			{"long description", url.Values{"url": {partnerURL}, "description": {strings.Repeat("d", 256)}},
				"description-error", "at most 255", "webhook-description"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				form := url.Values{"csrf_token": {tok}}
				for k, v := range tt.form {
					form[k] = v
				}
				p := b.post("/admin/webhooks", form)
				wantStatus(t, p, http.StatusUnprocessableEntity)
				if got := text(p, `[data-testid="`+tt.errorID+`"]`); !strings.Contains(got, tt.message) {
					t.Errorf("message %q, want it to contain %q", got, tt.message)
				}
				field := p.Doc.Find("#" + tt.invalidID)
				if field.AttrOr("aria-invalid", "") != "true" {
					t.Errorf("#%s is not marked invalid", tt.invalidID)
				}
				if _, ok := field.Attr("autofocus"); !ok {
					t.Errorf("#%s does not take the focus", tt.invalidID)
				}
				if got := labelled(t, p, "URL").AttrOr("value", "x"); got != tt.form.Get("url") {
					t.Errorf("URL field holds %q, want it as typed %q", got, tt.form.Get("url"))
				}
				if got := labelled(t, p, "Description (optional)").AttrOr("value", "x"); got != tt.form.Get("description") {
					t.Errorf("description field holds %q, want it as typed", got)
				}
				for _, typ := range models.WebhookEventTypes {
					_, checked := labelled(t, p, typ).Attr("checked")
					if want := strings.Contains(strings.Join(tt.form["events"], ","), typ); checked != want {
						t.Errorf("%s checked %v, want %v as typed", typ, checked, want)
					}
				}
				if p.Doc.Find(`[data-testid="new-secret"]`).Length() != 0 {
					t.Error("a refused form shows a secret")
				}
				if ws, _ := e.store.ListWebhooks(context.Background()); len(ws) != 0 {
					t.Errorf("a refused form stored %+v", ws)
				}
			})
		}
		if n := modelsAuditCount(t, e, models.ActionWebhookCreated); n != 0 {
			t.Errorf("%d creations audited", n)
		}
	})
}

// modelsAuditCount counts the audit events of one action.
func modelsAuditCount(t *testing.T, e *env, action string) int {
	t.Helper()
	events, _, err := e.store.ListAuditEvents(context.Background(), models.AuditQuery{Action: action, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return len(events)
}

// Viewers and editors get the 403 page on every webhook route, reading
// included, and change nothing; the page does not show them the URL.
func TestWebhooksAdminOnly(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		hook, delivery := e.failedDelivery(t)
		cases := routeCases(1, 1, 1, hook.ID, delivery.ID, func() string { return "1" })
		for _, role := range []models.Role{models.RoleViewer, models.RoleEditor} {
			_, b, tok := e.member("m-"+string(role), role)
			if nav := navLabels(b.get("/admin/pets")); strings.Contains(strings.Join(nav, "|"), "Webhooks") {
				t.Errorf("%s sees Webhooks in the navigation: %q", role, nav)
			}
			n := 0
			for _, c := range cases {
				if !strings.HasPrefix(c.route, "/admin/webhooks") {
					continue
				}
				n++
				t.Run(string(role)+" "+c.method+" "+c.route, func(t *testing.T) {
					before := e.fingerprint()
					p := c.send(b, tok, role)
					wantRefused(t, p, role)
					if strings.Contains(p.Body, "partner.example") {
						t.Error("the refusal shows the endpoint's URL")
					}
					if after := e.fingerprint(); after != before {
						t.Errorf("a refused request changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
					}
				})
			}
			if n != 11 {
				t.Errorf("%d webhook routes tried, want 11", n)
			}
		}
	})
}

// A form without the session's CSRF token changes nothing.
func TestWebhookFormsNeedCSRF(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		hook, delivery := e.failedDelivery(t)
		b, _ := e.signedIn()
		before := e.fingerprint()
		for _, path := range []string{"/admin/webhooks", hookPath(hook.ID, "test"), hookPath(hook.ID, "disable"), hookPath(hook.ID, "rotate"),
			hookPath(hook.ID, "delete"), hookPath(hook.ID, "deliveries/"+strconv.FormatInt(delivery.ID, 10)+"/resend")} {
			for name, tok := range map[string]string{"missing": "", "forged": "forged"} {
				form := url.Values{"url": {partnerURL}}
				if tok != "" {
					form.Set("csrf_token", tok)
				}
				p := b.post(path, form)
				wantStatus(t, p, http.StatusForbidden)
				if text(p, "h1") != "Request refused" || p.Doc.Find(`[data-testid="new-secret"]`).Length() != 0 {
					t.Errorf("%s, token %s: %q", path, name, text(p, "h1"))
				}
			}
		}
		if after := e.fingerprint(); after != before {
			t.Errorf("forms without the token changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})
}

// An endpoint's page: its details, its deliveries newest first, and its
// actions.
func TestWebhookPage(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		hook, failed := e.failedDelivery(t)
		if err := webhooks.SendPing(context.Background(), e.store, hook.ID, "test"); err != nil {
			t.Fatal(err)
		}
		pending := e.deliveries(t, hook.ID)[0]
		b, _ := e.signedIn()
		p := b.get(hookPath(hook.ID, ""))
		wantStatus(t, p, http.StatusOK)
		if got := text(p, "h1"); got != "Webhook endpoint "+strconv.FormatInt(hook.ID, 10) {
			t.Errorf("heading %q", got)
		}
		if strings.Contains(text(p, "title"), "partner.example") {
			t.Error("the title, kept in the browser's history, holds the URL")
		}
		if text(p, `nav [aria-current="page"]`) != "Webhooks" {
			t.Errorf("current navigation entry %q", text(p, `nav [aria-current="page"]`))
		}
		for id, want := range map[string]string{"webhook-url": partnerURL, "webhook-events": "all", "webhook-state": "Enabled",
			"last-success": "never", "failing-since": formatUTC(*hook.FailingSince), "failures": "1"} {
			if got := strings.Join(strings.Fields(text(p, `[data-testid="`+id+`"]`)), " "); got != want {
				t.Errorf("%s = %q, want %q", id, got, want)
			}
		}
		var rows [][]string
		p.Doc.Find(`[data-testid="delivery-row"]`).Each(func(_ int, r *goquery.Selection) {
			var cells []string
			r.Children().Each(func(_ int, s *goquery.Selection) { cells = append(cells, strings.Join(strings.Fields(s.Text()), " ")) })
			rows = append(rows, cells)
		})
		want := [][]string{
			{pending.EventID, "ping", "pending", "0", "not tried yet", "", formatUTC(pending.CreatedAt), formatUTC(pending.NextAttemptAt), "Resend"},
			{failed.EventID, "ping", "failed", "1", "answered 502 Bad Gateway", "42 ms", formatUTC(failed.CreatedAt), "", "Resend"},
		}
		if len(rows) != 2 || strings.Join(rows[0], "|") != strings.Join(want[0], "|") || strings.Join(rows[1], "|") != strings.Join(want[1], "|") {
			t.Errorf("deliveries\n%q\nwant\n%q", rows, want)
		}
		resend := p.Doc.Find(`form[data-testid="resend"]`).Last()
		if resend.AttrOr("action", "") != hookPath(hook.ID, "deliveries/"+strconv.FormatInt(failed.ID, 10)+"/resend") ||
			resend.Find(`input[name="csrf_token"]`).Length() != 1 || resend.Find("button").AttrOr("aria-label", "") != "Resend event "+failed.EventID {
			t.Errorf("resend form of the failed delivery:\n%s", p.Body)
		}
		for testid, action := range map[string]string{"action-test": "test", "action-disable": "disable"} {
			f := p.Doc.Find(`form[data-testid="` + testid + `"]`)
			if f.AttrOr("action", "") != hookPath(hook.ID, action) || f.AttrOr("method", "") != "post" {
				t.Errorf("%s form: %q", testid, f.AttrOr("action", ""))
			}
		}
		for testid, action := range map[string]string{"action-rotate": "rotate", "action-delete": "delete"} {
			// Confirmed on a page of their own first.
			if href := p.Doc.Find(`[data-testid="`+testid+`"] a`).AttrOr("href", ""); href != hookPath(hook.ID, action) {
				t.Errorf("%s links to %q", testid, href)
			}
		}
		if p.Doc.Find(`form[data-testid="action-enable"]`).Length() != 0 {
			t.Error("an enabled endpoint offers Enable")
		}

		for _, path := range []string{"/admin/webhooks/999999", "/admin/webhooks/abc", "/admin/webhooks/999999/rotate", "/admin/webhooks/0/delete"} {
			wantStatus(t, b.get(path), http.StatusNotFound)
		}
	})
}

// "Send test event" queues a ping delivery, audited.
func TestSendTestEvent(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		hook, _ := e.addWebhook(t)
		b, tok := e.signedIn()
		p := b.post(hookPath(hook.ID, "test"), url.Values{"csrf_token": {tok}})
		wantStatus(t, p, http.StatusSeeOther)
		if loc := p.Header.Get("Location"); loc != hookPath(hook.ID, "") {
			t.Errorf("Location %q", loc)
		}
		ds := e.deliveries(t, hook.ID)
		if len(ds) != 1 || ds[0].EventType != models.EventPing || ds[0].Status != models.DeliveryPending || !strings.HasPrefix(ds[0].EventID, "ping_") {
			t.Fatalf("deliveries %+v", ds)
		}
		page := b.get(hookPath(hook.ID, ""))
		if got := text(page, `[data-testid="flash"]`); !strings.Contains(got, "Test event queued") {
			t.Errorf("flash %q", got)
		}
		if got := text(page, `[data-testid="delivery-type"]`); got != "ping" {
			t.Errorf("the page lists a delivery of type %q", got)
		}
		if got := e.webhookAudit(t, hook.ID); strings.Join(got, "|") != "test webhook.created|"+staffName+" "+models.ActionWebhookTestSent {
			t.Errorf("audit %q", got)
		}
	})
}

// Rotating asks first, then shows the new secret once; the previous one
// still signs for a day.
func TestRotateWebhookSecret(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		hook, old := e.addWebhook(t)
		b, tok := e.signedIn()
		confirm := b.get(hookPath(hook.ID, "rotate"))
		wantStatus(t, confirm, http.StatusOK)
		form := confirm.Doc.Find(`form[action="` + hookPath(hook.ID, "rotate") + `"]`)
		if form.AttrOr("method", "") != "post" || form.Find(`input[name="csrf_token"]`).Length() != 1 ||
			!strings.Contains(text(confirm, `[data-testid="rotate-warning"]`), "24 hours") {
			t.Errorf("confirmation page:\n%s", confirm.Body)
		}
		if e.webhook(t, hook.ID).Secret != old {
			t.Fatal("asking changed the secret")
		}

		p := b.post(hookPath(hook.ID, "rotate"), url.Values{"csrf_token": {tok}})
		wantStatus(t, p, http.StatusOK)
		secret := shownSecret(t, p)
		w := e.webhook(t, hook.ID)
		if secret == old || w.Secret != secret {
			t.Fatal("the secret shown is not the endpoint's new secret")
		}
		if w.PreviousSecret == nil || *w.PreviousSecret != old || w.PreviousExpiresAt == nil ||
			time.Until(*w.PreviousExpiresAt) < 23*time.Hour || time.Until(*w.PreviousExpiresAt) > 25*time.Hour {
			t.Errorf("previous secret %v until %v, want the old one for 24 hours", w.PreviousSecret, w.PreviousExpiresAt)
		}
		if s := w.Secrets(time.Now()); len(s) != 2 || s[0] != secret || s[1] != old {
			t.Error("deliveries are not signed with both secrets")
		}
		note := text(p, "#new-secret-note")
		if !strings.Contains(note, "old secret stays valid until "+formatUTC(*w.PreviousExpiresAt)+" (24 hours)") {
			t.Errorf("note %q", note)
		}
		if strings.Contains(p.Body, old) {
			t.Error("the page shows the old secret")
		}

		later := b.get(hookPath(hook.ID, ""))
		if strings.Contains(later.Body, secret) || strings.Contains(later.Body, old) {
			t.Error("the endpoint's page shows a secret again")
		}
		if got := text(later, `[data-testid="previous-secret"]`); !strings.Contains(got, formatUTC(*w.PreviousExpiresAt)) {
			t.Errorf("previous-secret note %q", got)
		}
		if got := e.webhookAudit(t, hook.ID); strings.Join(got, "|") != "test webhook.created|"+staffName+" "+models.ActionWebhookSecretRotated {
			t.Errorf("audit %q", got)
		}
	})
}

// Disable, enable and delete, each audited with the admin's name; the
// audit page's filter offers the webhook actions.
func TestDisableEnableDeleteWebhook(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		hook, _ := e.failedDelivery(t)
		b, tok := e.signedIn()
		p := b.post(hookPath(hook.ID, "disable"), url.Values{"csrf_token": {tok}})
		wantStatus(t, p, http.StatusSeeOther)
		if w := e.webhook(t, hook.ID); w.Enabled || w.DisabledReason != "Disabled by "+staffName+"." {
			t.Errorf("after disable: enabled %v, reason %q", w.Enabled, w.DisabledReason)
		}
		page := b.get(hookPath(hook.ID, ""))
		if got := strings.Join(strings.Fields(text(page, `[data-testid="webhook-state"]`)), " "); got != "Disabled Disabled by "+staffName+"." {
			t.Errorf("state %q", got)
		}
		if page.Doc.Find(`form[data-testid="action-enable"]`).Length() != 1 || page.Doc.Find(`form[data-testid="action-disable"]`).Length() != 0 {
			t.Error("a disabled endpoint does not offer Enable (only)")
		}
		if got := text(page, `[data-testid="flash"]`); !strings.Contains(got, "Endpoint disabled") {
			t.Errorf("flash %q", got)
		}

		wantStatus(t, b.post(hookPath(hook.ID, "enable"), url.Values{"csrf_token": {tok}}), http.StatusSeeOther)
		if w := e.webhook(t, hook.ID); !w.Enabled || w.DisabledReason != "" || w.ConsecutiveFailures != 0 || w.FailingSince != nil {
			t.Errorf("after enable: %+v", w)
		}

		confirm := b.get(hookPath(hook.ID, "delete"))
		wantStatus(t, confirm, http.StatusOK)
		if !strings.Contains(text(confirm, `[data-testid="delete-warning"]`), "cannot be undone") ||
			confirm.Doc.Find(`form[action="`+hookPath(hook.ID, "delete")+`"] input[name="csrf_token"]`).Length() != 1 {
			t.Errorf("confirmation page:\n%s", confirm.Body)
		}
		e.webhook(t, hook.ID) // still there after asking
		p = b.post(hookPath(hook.ID, "delete"), url.Values{"csrf_token": {tok}})
		wantStatus(t, p, http.StatusSeeOther)
		if loc := p.Header.Get("Location"); loc != "/admin/webhooks" {
			t.Errorf("Location %q", loc)
		}
		if _, err := e.store.GetWebhook(context.Background(), hook.ID); models.ErrorCode(err) != models.CodeNotFound {
			t.Errorf("after delete: %v", err)
		}
		list := b.get("/admin/webhooks")
		if got := text(list, `[data-testid="flash"]`); got != "Webhook endpoint "+strconv.FormatInt(hook.ID, 10)+" deleted, with its deliveries." {
			t.Errorf("flash %q", got)
		}
		if list.Doc.Find(`[data-testid="webhook-row"]`).Length() != 0 {
			t.Error("the list still shows the deleted endpoint")
		}
		wantStatus(t, b.get(hookPath(hook.ID, "")), http.StatusNotFound)
		wantStatus(t, b.post(hookPath(hook.ID, "enable"), url.Values{"csrf_token": {tok}}), http.StatusNotFound)

		want := []string{"test webhook.created", "test webhook.test_sent", staffName + " webhook.disabled", staffName + " webhook.enabled",
			staffName + " webhook.deleted"}
		if got := e.webhookAudit(t, hook.ID); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("audit\n%q\nwant\n%q", got, want)
		}

		audit := b.get("/admin/audit")
		var offered []string
		audit.Doc.Find("select option").Each(func(_ int, s *goquery.Selection) { offered = append(offered, s.AttrOr("value", "")) })
		for _, a := range []string{models.ActionWebhookCreated, models.ActionWebhookDeleted, models.ActionWebhookDisabled, models.ActionWebhookEnabled,
			models.ActionWebhookSecretRotated, models.ActionWebhookTestSent, models.ActionWebhookDeliveryResent} {
			if !strings.Contains("|"+strings.Join(offered, "|")+"|", "|"+a+"|") {
				t.Errorf("the audit page's filter does not offer %s", a)
			}
		}
		filtered := b.get("/admin/audit?action=" + models.ActionWebhookDeleted)
		wantStatus(t, filtered, http.StatusOK)
		if got := auditActions(filtered); len(got) != 1 || got[0] != models.ActionWebhookDeleted {
			t.Errorf("filtered audit %q", got)
		}
	})
}

// A failed delivery is sent again from its row; a delivered one is not.
func TestResendWebhookDelivery(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		hook, failed := e.failedDelivery(t)
		b, tok := e.signedIn()
		resend := func(id int64) page {
			return b.post(hookPath(hook.ID, "deliveries/"+strconv.FormatInt(id, 10)+"/resend"), url.Values{"csrf_token": {tok}})
		}
		p := resend(failed.ID)
		wantStatus(t, p, http.StatusSeeOther)
		if loc := p.Header.Get("Location"); loc != hookPath(hook.ID, "") {
			t.Errorf("Location %q", loc)
		}
		d := e.deliveries(t, hook.ID)[0]
		if d.ID != failed.ID || d.Status != models.DeliveryPending || d.Attempts != 0 || d.NextAttemptAt.After(time.Now().Add(time.Second)) {
			t.Errorf("after resend: %+v", d)
		}
		if got := text(b.get(hookPath(hook.ID, "")), `[data-testid="flash"]`); !strings.Contains(got, "queued again") {
			t.Errorf("flash %q", got)
		}

		// Delivered: nothing to resend.
		a := models.WebhookAttempt{At: time.Now().UTC(), Status: http.StatusNoContent, Delivered: true, Duration: time.Millisecond}
		if _, err := e.store.RecordWebhookAttempt(ctx, d, a, 72*time.Hour); err != nil {
			t.Fatal(err)
		}
		before := e.webhookState()
		p = resend(failed.ID)
		wantStatus(t, p, http.StatusConflict)
		if got := text(p, `[data-testid="webhook-error"]`); !strings.Contains(got, "Only a delivery that failed") {
			t.Errorf("refusal %q", got)
		}
		if p.Doc.Find(`[data-testid="delivery-row"] form[data-testid="resend"]`).Length() != 0 {
			t.Error("a delivered delivery offers Resend")
		}
		if e.webhookState() != before {
			t.Error("a refused resend changed the deliveries")
		}
		// Another endpoint's delivery, or one that does not exist.
		other, otherFailed := e.failedDelivery(t)
		wantStatus(t, resend(otherFailed.ID), http.StatusConflict)
		if got := e.deliveries(t, other.ID)[0]; got.Status != models.DeliveryFailed {
			t.Errorf("another endpoint's delivery was resent: %+v", got)
		}
		wantStatus(t, resend(999999), http.StatusConflict)
		wantStatus(t, b.post(hookPath(hook.ID, "deliveries/x/resend"), url.Values{"csrf_token": {tok}}), http.StatusNotFound)

		want := []string{"test webhook.created", "test webhook.test_sent", staffName + " webhook.delivery_resent"}
		if got := e.webhookAudit(t, hook.ID); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("audit\n%q\nwant\n%q", got, want)
		}
	})
}

// With WEBHOOK_ALLOW_PRIVATE=true (tests, an intranet) the console accepts
// an endpoint on the server's own network, as the dispatcher then delivers
// to it.
func TestCreateWebhookAllowPrivate(t *testing.T) {
	t.Parallel()
	s := modelstest.Open(t, models.DriverSQLite)
	h, err := server.New(context.Background(), server.Deps{Store: s, Config: config.Config{Webhooks: config.Webhooks{AllowPrivate: true}}})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, store: s, srv: httptest.NewServer(h)}
	t.Cleanup(e.srv.Close)
	if _, err := s.CreateUserWithRole(context.Background(), staffName, staffPassword, models.RoleAdmin, "test"); err != nil {
		t.Fatal(err)
	}
	b, tok := e.signedIn()
	p := b.post("/admin/webhooks", url.Values{"csrf_token": {tok}, "url": {"http://127.0.0.1:9/hook"}})
	wantStatus(t, p, http.StatusOK)
	if ws, _ := s.ListWebhooks(context.Background()); len(ws) != 1 || ws[0].Secret != shownSecret(t, p) {
		t.Errorf("stored %+v", ws)
	}
}
