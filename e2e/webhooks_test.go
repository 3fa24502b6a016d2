package e2e

// Webhooks end to end: the built binary's dispatchers (one in every
// `petstore serve`) deliver the change feed's events to real receivers on
// loopback, endpoints made as admins make them (`petstore webhook create`,
// the console). What a receiver got is compared with the feed read through
// GET /v1/events: every event, its body byte for byte, its signature
// checked with the secret the admin was shown, and how often it came. The
// dispatcher's own tests (webhooks/dispatcher_test.go) cover retries,
// rotation and refusals in one process; these cover what only whole
// processes show: several instances over one database, one of them killed
// while it delivers (here), or stalled past its lease
// (webhooks_stall_test.go), a cluster node lost (webhooks_galera_test.go),
// and the secret an admin is shown on the console (webhooks_console_test.go).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"petstore/api"
	"petstore/internal/testkit"
	"petstore/models"
)

// The dispatcher settings of the instances these tests start. The timeout
// is short so that the lease a killed instance leaves (2×timeout+5 s, as
// the dispatcher takes it) runs out within seconds, yet long enough for
// the test to find and kill the instance while the receiver holds its
// request (the attempt is cut at the timeout). Retries come quickly, so
// that an unexpected failure shows as a duplicate, not as a long wait.
const (
	webhookTimeout   = 3 * time.Second
	webhookRetryBase = 200 * time.Millisecond
	webhookLease     = 2*webhookTimeout + 5*time.Second
	webhookPoll      = 500 * time.Millisecond // the dispatcher's
)

// webhookVars is the environment of an instance that delivers to
// receivers on loopback (WEBHOOK_ALLOW_PRIVATE), with the settings above.
func webhookVars(databaseURL string) map[string]string {
	v := testkit.ServeVars(databaseURL)
	v["WEBHOOK_ALLOW_PRIVATE"] = "true"
	v["WEBHOOK_TIMEOUT"] = webhookTimeout.String()
	v["WEBHOOK_RETRY_BASE"] = webhookRetryBase.String()
	return v
}

// createWebhook registers an endpoint for target with `petstore webhook
// create` (every event type unless args say otherwise) and returns the
// secret it printed, alone on stdout.
func createWebhook(t *testing.T, vars map[string]string, target string, args ...string) string {
	t.Helper()
	r := testkit.RunBinary(t, vars, append([]string{"webhook", "create", "--url", target}, args...)...)
	testkit.WantCode(t, r, 0)
	secret := testkit.WantOneLine(t, "the stdout of webhook create", r.Stdout)
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("webhook create printed %q, want the secret (whsec_...)", secret)
	}
	return secret
}

// endpointAt returns the stored endpoint whose URL is target.
func endpointAt(t *testing.T, s *models.Store, target string) models.Webhook {
	t.Helper()
	ws, err := s.ListWebhooks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if w.URL == target {
			return w
		}
	}
	t.Fatalf("no stored endpoint for %s among %d", target, len(ws))
	return models.Webhook{}
}

// feedEvent is an event of the change feed and its bytes as the feed
// wrote them, which a delivery's body must equal.
type feedEvent struct {
	api.Event
	Raw []byte
}

// readFeedFrom reads the change feed through c, from the cursor after to
// its end, without waiting. An answer other than 200 (a 503 while a
// database node is away) is read again, up to 50 times in all.
func readFeedFrom(t *testing.T, c *testkit.APIClient, after string) []feedEvent {
	t.Helper()
	var all []feedEvent
	target := "/v1/events?limit=1000&after=" + after
	failures := 0
	for {
		r := c.Get(target)
		events, next, err := testkit.EventsPage(target, r)
		if _, notOK := err.(*testkit.NotOKError); notOK && failures < 50 {
			failures++
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var raws []json.RawMessage
		if err := json.Unmarshal(r.Body, &raws); err != nil || len(raws) != len(events) {
			t.Fatalf("GET %s: %d raw events (%v) for %d events", target, len(raws), err, len(events))
		}
		if len(events) == 0 {
			return all
		}
		for i, e := range events {
			all = append(all, feedEvent{e, raws[i]})
		}
		target = next
	}
}

// eventIDs are the ids of events, in order.
func eventIDs(events []feedEvent) []string {
	ids := make([]string, len(events))
	for i, e := range events {
		ids[i] = e.ID
	}
	return ids
}

// waitAnswered waits until r has answered every event of events at least
// once, and returns how long that took.
func waitAnswered(t *testing.T, r *testkit.WebhookReceiver, events []feedEvent, limit time.Duration, what string) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		got := r.AnsweredIDs()
		var missing []string
		for _, e := range events {
			if got[e.ID] == 0 {
				missing = append(missing, e.ID)
			}
		}
		if len(missing) == 0 {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Fatalf("%s: %d of %d events not delivered within %s, such as %v", what, len(missing), len(events), limit, missing[:min(len(missing), 10)])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkDeliveries checks every request r got against the feed's events:
// a POST of an event of the feed, with its id and type in the headers,
// its body exactly the feed's, signed with secret. It returns how many
// requests came for each event (answered or not).
func checkDeliveries(t *testing.T, r *testkit.WebhookReceiver, secret string, events []feedEvent) map[string]int {
	t.Helper()
	byID := map[string]feedEvent{}
	for _, e := range events {
		byID[e.ID] = e
	}
	count := map[string]int{}
	bad := 0
	for _, q := range r.Requests() {
		count[q.EventID]++
		e, ok := byID[q.EventID]
		var problems []string
		if !ok {
			problems = append(problems, "an event id the feed does not have")
		}
		if q.Method != http.MethodPost || q.ContentType != "application/json" {
			problems = append(problems, fmt.Sprintf("%s with Content-Type %q, want a POST of application/json", q.Method, q.ContentType))
		}
		if ok && q.EventType != e.Type {
			problems = append(problems, fmt.Sprintf("Petstore-Event-Type %q, want %q", q.EventType, e.Type))
		}
		if ok && !bytes.Equal(q.Body, e.Raw) {
			problems = append(problems, fmt.Sprintf("body %s, want the feed's %s", testkit.Clip(string(q.Body)), testkit.Clip(string(e.Raw))))
		}
		if err := q.CheckSignature(secret); err != nil {
			problems = append(problems, fmt.Sprintf("Petstore-Signature %q does not verify with the endpoint's secret: %v", q.Signature, err))
		}
		if len(problems) > 0 {
			if bad++; bad <= 5 {
				t.Errorf("request %d (event %q): %s", q.N, q.EventID, strings.Join(problems, "; "))
			}
		}
	}
	if bad > 5 {
		t.Errorf("... %d requests wrong in all", bad)
	}
	return count
}

// wantOnce fails the test unless every event came exactly once, saving
// the events of except, which may come twice.
func wantOnce(t *testing.T, what string, count map[string]int, events []feedEvent, except ...string) (duplicates int) {
	t.Helper()
	for _, e := range events {
		n := count[e.ID]
		if n > 1 {
			duplicates += n - 1
		}
		switch {
		case slices.Contains(except, e.ID) && n <= 2:
		case n != 1:
			t.Errorf("%s: event %s (%s of pet %d) came %d times, want once", what, e.ID, e.Type, e.Pet.ID, n)
		}
	}
	return duplicates
}

// waitRecorded waits until every delivery of endpoint id is recorded as
// delivered (the receiver answers before the dispatcher records it), and
// that there are as many as events.
func waitRecorded(t *testing.T, s *models.Store, id int64, events int) {
	t.Helper()
	var ds []models.WebhookDelivery
	testkit.WaitFor(t, fmt.Sprintf("endpoint %d's %d deliveries recorded as delivered", id, events), 10*time.Second, 50*time.Millisecond, func() bool {
		var err error
		ds, err = s.WebhookDeliveries(context.Background(), id, events+10)
		if err != nil || len(ds) != events {
			return false
		}
		for _, d := range ds {
			if d.Status != models.DeliveryDelivered {
				return false
			}
		}
		return true
	})
}

// TestWebhooksTwoInstances runs two `petstore serve` over one database,
// on each engine, both dispatching: every event of the feed, from creates
// and console changes made through both, reaches an endpoint made with
// `petstore webhook create` exactly once, as the feed wrote it and signed
// with the secret printed. Then an instance is killed (SIGKILL) while a
// receiver holds its delivery: the other delivers it once the killed
// instance's lease runs out, and every event after it, none lost; the one
// delivery cut by the kill is the only one that comes twice.
func TestWebhooksTwoInstances(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabase(t, func(t *testing.T, databaseURL string) {
		vars := webhookVars(databaseURL)
		a := testkit.ServeBinary(t, "instance A", vars)
		b := testkit.ServeBinary(t, "instance B", vars)
		boot := testkit.BootstrapOf(t, a.Stdout.String())
		store := testkit.OpenStore(t, databaseURL)
		clients := map[*testkit.Instance]*testkit.APIClient{a: testkit.NewAPIClient(a.Base, boot.Key), b: testkit.NewAPIClient(b.Base, boot.Key)}

		from := feedHead(t, clients[a])
		all := testkit.NewWebhookReceiver(t, nil)
		allURL := all.URL + "/petstore?token=abc"
		secret := createWebhook(t, vars, allURL, "--description", "every event")
		allEndpoint := endpointAt(t, store, allURL)

		t.Run("every event delivered once, by one of the two", func(t *testing.T) {
			const creates, changes = 24, 6
			answered := map[int64]time.Time{} // pet id: when its create was answered
			var pets []int64
			for i := range creates {
				inst := []*testkit.Instance{a, b}[i%2]
				name := "webhook pet " + strconv.Itoa(i)
				p := testkit.WantCreated(t, clients[inst].CreatePet(name), name)
				answered[p.ID] = time.Now()
				pets = append(pets, p.ID)
			}
			consoles := []*testkit.Console{staffConsole(t, a.Base, boot), staffConsole(t, b.Base, boot)}
			for i := range changes {
				r := hxPost(consoles[i%2], "/admin/pets/"+strconv.FormatInt(pets[i], 10)+"/status", url.Values{"status": {string(models.StatusSold)}})
				if r.Status != http.StatusOK {
					t.Fatalf("status of pet %d to sold: %s, want 200", pets[i], r)
				}
			}
			events := readFeedFrom(t, clients[b], from)
			if len(events) != creates+changes {
				t.Fatalf("the feed holds %d events after the endpoint's creation, want %d: %v", len(events), creates+changes, eventIDs(events))
			}
			took := waitAnswered(t, all, events, 30*time.Second, "the endpoint of every event")
			// Long enough for a second dispatcher's duplicate to arrive too.
			time.Sleep(3 * webhookPoll)
			count := checkDeliveries(t, all, secret, events)
			wantOnce(t, "two instances", count, events)
			if n := len(all.Requests()); n != len(events) {
				t.Errorf("%d requests for %d events", n, len(events))
			}
			waitRecorded(t, store, allEndpoint.ID, len(events))

			var latency []time.Duration
			for _, q := range all.Requests() {
				for _, e := range events {
					if e.ID == q.EventID && e.Type == "pet.created" {
						latency = append(latency, q.At.Sub(answered[e.Pet.ID]))
					}
				}
			}
			slices.Sort(latency)
			t.Logf("%d events delivered, the last %s after the feed was read; from a create's answer to its delivery: %v",
				len(events), took.Round(time.Millisecond), latency)
			testkit.FigureDuration(t, "webhooks_delivery_latency_median", percentile(latency, 0.5))
			testkit.FigureDuration(t, "webhooks_delivery_latency_max", latency[len(latency)-1])
		})

		t.Run("an instance killed mid-delivery: the other delivers after its lease, none lost", func(t *testing.T) {
			before := feedHead(t, clients[a])
			// The first request hangs, as at a receiver that stalls: the
			// test kills the instance sending it before its timeout.
			hung := testkit.NewWebhookReceiver(t, func(n int) bool { return n == 1 })
			hungURL := hung.URL + "/petstore"
			hungSecret := createWebhook(t, vars, hungURL, "--description", "hangs on its first request")
			hungEndpoint := endpointAt(t, store, hungURL)

			testkit.WantCreated(t, clients[a].CreatePet("held delivery"), "held delivery")
			var held testkit.WebhookRequest
			select {
			case held = <-hung.Held():
			case <-time.After(10 * time.Second):
				t.Fatalf("no delivery reached the receiver within 10 s of the create")
			}
			sender, err := hung.Sender(held, a, b)
			if err != nil {
				t.Fatal(err)
			}
			survivor := a
			if sender == a {
				survivor = b
			}
			w, err := store.GetWebhook(context.Background(), hungEndpoint.ID)
			if err != nil {
				t.Fatal(err)
			}
			if w.LeaseOwner == nil || w.LeaseUntil == nil || !w.LeaseUntil.After(time.Now()) {
				t.Fatalf("while %s delivers, the endpoint's lease is %v until %v, want a live one", sender.Name, w.LeaseOwner, w.LeaseUntil)
			}
			leaseEnd := *w.LeaseUntil
			// The other endpoint got the same event, maybe from the instance
			// about to be killed: its delivery must be recorded first, so
			// that the kill cannot cut it between answer and record (which
			// would be an allowed duplicate, there).
			testkit.WaitFor(t, "the other endpoint's delivery of the held event recorded", webhookTimeout/2, 10*time.Millisecond, func() bool {
				ds, err := store.WebhookDeliveries(context.Background(), allEndpoint.ID, 1)
				return err == nil && len(ds) == 1 && ds[0].EventID == held.EventID && ds[0].Status == models.DeliveryDelivered
			})

			// Before the signal: the kernel may close the sender's
			// connection before Signal returns.
			killing := time.Now()
			killed := sender.Signal(t, syscall.SIGKILL)
			sender.Wait(t, 10*time.Second)
			var cut testkit.WebhookRequest
			testkit.WaitFor(t, "the held request to end with its sender", 5*time.Second, 10*time.Millisecond, func() bool {
				cut = hung.Requests()[0]
				return !cut.Ended.IsZero()
			})
			if cut.Answered || cut.Ended.Before(killing) {
				t.Fatalf("the held request ended %s before the kill (answered: %v): the attempt was cut by its %s timeout, not by the kill; the test was too slow to kill %s in time",
					killing.Sub(cut.Ended), cut.Answered, webhookTimeout, sender.Name)
			}
			t.Logf("%s was delivering event %s (lease until %s, %s after the kill); killed it, %s goes on",
				sender.Name, held.EventID, leaseEnd.Format(time.StampMilli), leaseEnd.Sub(killed).Round(time.Millisecond), survivor.Name)

			// Events made meanwhile queue behind the cut delivery.
			for i := range 5 {
				name := "after the kill " + strconv.Itoa(i)
				testkit.WantCreated(t, clients[survivor].CreatePet(name), name)
			}
			hung.Release()
			events := readFeedFrom(t, clients[survivor], before)
			if len(events) != 6 || events[0].ID != held.EventID {
				t.Fatalf("the feed after the endpoint's creation holds %v, want the held event %s and 5 more", eventIDs(events), held.EventID)
			}
			waitAnswered(t, hung, events, webhookLease+15*time.Second, "the hung endpoint after the kill")
			var again time.Time
			for _, q := range hung.Requests() {
				if q.EventID == held.EventID && q.Answered {
					again = q.At
					break
				}
			}
			t.Logf("the cut delivery came again %s after the kill, %s after the lease ran out", again.Sub(killed).Round(time.Millisecond),
				again.Sub(leaseEnd).Round(time.Millisecond))
			testkit.FigureDuration(t, "webhooks_redelivery_after_kill", again.Sub(killed))
			testkit.FigureDuration(t, "webhooks_redelivery_after_lease_end", again.Sub(leaseEnd))
			// Not before the lease ran out (the survivor must not deliver
			// what the killed one held), and within a poll of it (plus
			// the time a loaded machine takes).
			if again.Before(leaseEnd.Add(-5*time.Millisecond)) || again.After(leaseEnd.Add(webhookPoll+3*time.Second)) {
				t.Errorf("the cut delivery came again at %s, want after the lease ran out at %s and within %s of it",
					again.Format(time.StampMilli), leaseEnd.Format(time.StampMilli), webhookPoll+3*time.Second)
			}

			feed := readFeedFrom(t, clients[survivor], from)
			waitAnswered(t, all, feed, webhookLease+15*time.Second, "the first endpoint after the kill")
			time.Sleep(3 * webhookPoll)
			dups := wantOnce(t, "the hung endpoint", checkDeliveries(t, hung, hungSecret, events), events, held.EventID)
			if n := len(hung.Requests()); n != len(events)+1 {
				t.Errorf("the hung endpoint got %d requests for %d events, want one more (the delivery cut by the kill)", n, len(events))
			}
			wantOnce(t, "the first endpoint", checkDeliveries(t, all, secret, feed), feed)
			testkit.Figure(t, "webhooks_duplicates_after_kill", float64(dups), "deliveries")
			waitRecorded(t, store, hungEndpoint.ID, len(events))
			waitRecorded(t, store, allEndpoint.ID, len(feed))
			survivor.Stop(t)
		})
	})
}
