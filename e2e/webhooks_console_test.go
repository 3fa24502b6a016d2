package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"petstore/api"
	"petstore/internal/testkit"
	"petstore/models"
)

// TestWebhooksConsole: an admin adds an endpoint on the console of a
// running instance; the secret the page shows, once, is the one that
// verifies the deliveries; "Send test event" sends a ping, which the
// endpoint's page then shows delivered.
func TestWebhooksConsole(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabase(t, func(t *testing.T, databaseURL string) {
		inst := testkit.ServeBinary(t, "instance", webhookVars(databaseURL))
		boot := testkit.BootstrapOf(t, inst.Stdout.String())
		partner := testkit.NewAPIClient(inst.Base, boot.Key)
		recv := testkit.NewWebhookReceiver(t, nil)
		target := recv.URL + "/from-console"

		c := testkit.SignedIn(t, inst.Base, boot.Username, boot.Password)
		list := c.Get("/admin/webhooks")
		if list.Status != http.StatusOK {
			t.Fatalf("GET /admin/webhooks: %s", list)
		}
		c.CSRF = testkit.CSRFToken(t, list)
		from := feedHead(t, partner)
		added := c.Post("/admin/webhooks", url.Values{"url": {target}, "description": {"added on the console"}})
		if added.Status != http.StatusOK {
			t.Fatalf("POST /admin/webhooks: %s, want 200 with the secret", added)
		}
		doc := testkit.HTMLDoc(t, added)
		secret := doc.Find(`[data-testid="new-secret"] #new-secret-value`).AttrOr("value", "")
		if !strings.HasPrefix(secret, "whsec_") {
			t.Fatalf("the page shows no signing secret:\n%s", added.Body)
		}
		page, ok := doc.Find(`[data-testid="new-secret"] a[href^="/admin/webhooks/"]`).Attr("href")
		if !ok {
			t.Fatalf("the page does not link to the new endpoint:\n%s", added.Body)
		}
		for _, later := range []string{"/admin/webhooks", page} {
			if r := c.Get(later); r.Status != http.StatusOK || bytes.Contains(r.Body, []byte(secret)) {
				t.Errorf("GET %s: %d, shows the secret again: %v", later, r.Status, bytes.Contains(r.Body, []byte(secret)))
			}
		}

		name := "console webhook"
		testkit.WantCreated(t, partner.CreatePet(name), name)
		events := readFeedFrom(t, partner, from)
		if len(events) != 1 {
			t.Fatalf("the feed holds %v after the endpoint's creation, want the one create", eventIDs(events))
		}
		waitAnswered(t, recv, events, 10*time.Second, "the console's endpoint")

		sent := c.Post(page+"/test", nil)
		if sent.Status != http.StatusSeeOther {
			t.Fatalf("POST %s/test: %s, want 303", page, sent)
		}
		var ping testkit.WebhookRequest
		took := testkit.WaitFor(t, "the ping at the receiver", 10*time.Second, 20*time.Millisecond, func() bool {
			for _, q := range recv.Requests() {
				if q.EventType == models.EventPing {
					ping = q
					return true
				}
			}
			return false
		})
		testkit.FigureDuration(t, "webhooks_console_ping_delivered", took)
		var body struct {
			ID, Type   string
			OccurredAt time.Time
		}
		if err := json.Unmarshal(ping.Body, &body); err != nil || body.ID != ping.EventID || body.Type != models.EventPing ||
			!strings.HasPrefix(ping.EventID, "ping_") || time.Since(body.OccurredAt) > time.Minute {
			t.Errorf("ping %q: body %s (%v), want {id: the header's, type: ping, occurredAt: now}", ping.EventID, ping.Body, err)
		}
		if err := ping.CheckSignature(secret); err != nil {
			t.Errorf("the ping's signature does not verify with the secret the console showed: %v", err)
		}
		count := checkDeliveries(t, recv, secret, append(events, feedEvent{api.Event{ID: ping.EventID, Type: models.EventPing}, ping.Body}))
		if len(count) != 2 || count[events[0].ID] != 1 || count[ping.EventID] != 1 {
			t.Errorf("requests by event id %v, want the create and the ping once each", count)
		}

		// The endpoint's page shows the ping delivered.
		testkit.WaitFor(t, "the ping shown delivered on the endpoint's page", 10*time.Second, 100*time.Millisecond, func() bool {
			p := testkit.HTMLDoc(t, c.Get(page))
			delivered := false
			p.Find(`[data-testid="delivery-row"]`).Each(func(_ int, row *goquery.Selection) {
				if strings.TrimSpace(row.Find(`[data-testid="delivery-type"]`).Text()) == models.EventPing &&
					strings.Contains(row.Find(`[data-testid="delivery-status"]`).Text(), models.DeliveryDelivered) {
					delivered = true
				}
			})
			return delivered
		})
		inst.Stop(t)
	})
}
