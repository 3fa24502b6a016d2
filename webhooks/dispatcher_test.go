package webhooks_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/api"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/webhooks"
)

func TestMain(m *testing.M) { modelstest.Main(m) }

// receiver is a real webhook receiver on loopback that records what it
// got and answers as told.
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []delivery
	answer func(n int) int // the status of the n-th request (from 1)
	hang   chan struct{}   // closed to let a hanging receiver go
}

type delivery struct {
	header http.Header
	body   []byte
	at     time.Time
}

func newReceiver(t *testing.T, answer func(n int) int) *receiver {
	t.Helper()
	r := &receiver{answer: answer, hang: make(chan struct{})}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, delivery{req.Header.Clone(), body, time.Now()})
		n := len(r.got)
		r.mu.Unlock()
		status := r.answer(n)
		if status == 0 {
			select {
			case <-r.hang:
			case <-req.Context().Done():
			}
			return
		}
		w.WriteHeader(status)
		fmt.Fprint(w, strings.Repeat("x", 100_000)) // read only in part
	}))
	t.Cleanup(func() { close(r.hang); r.srv.Close() })
	return r
}

func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

func ok(int) int { return http.StatusNoContent }

// start runs a dispatcher over s until the test ends.
func start(t *testing.T, s *models.Store, o webhooks.Options) {
	t.Helper()
	o.Encode, o.Poll, o.AllowPrivate = api.EventJSON, 50*time.Millisecond, true
	if o.RetryBase == 0 {
		o.RetryBase = 50 * time.Millisecond
	}
	if o.Timeout == 0 {
		o.Timeout = 2 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	d := webhooks.New(s, o)
	go func() { defer close(done); d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

func create(t *testing.T, s *models.Store, url string, types ...string) (models.Webhook, string) {
	t.Helper()
	w, secret, err := webhooks.Create(context.Background(), s, models.WebhookInput{URL: url, EventTypes: types}, true, "alice")
	if err != nil {
		t.Fatal(err)
	}
	return w, secret
}

func waitFor(t *testing.T, what string, fn func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !fn() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20 s for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func addPet(t *testing.T, s *models.Store, name string) models.Pet {
	t.Helper()
	p, err := s.CreatePet(context.Background(), models.NewPet{Name: name, CategoryID: 1, Status: models.StatusAvailable}, "test")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A delivery is the event exactly as the feed gives it, signed with the
// endpoint's secret, with its id and type in headers.
func TestDelivery(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		r := newReceiver(t, ok)
		_, secret := create(t, s, r.srv.URL+"/hook")
		start(t, s, webhooks.Options{})
		p := addPet(t, s, "Rex")
		waitFor(t, "the delivery", func() bool { return len(r.deliveries()) == 1 })
		d := r.deliveries()[0]
		page, err := s.ReadEvents(context.Background(), models.FeedStart, 10)
		if err != nil || len(page.Events) != 1 || page.Events[0].Pet.ID != p.ID {
			t.Fatalf("feed %+v, %v", page, err)
		}
		if want := api.EventJSON(page.Events[0]); string(d.body) != string(want) {
			t.Errorf("body %s, want the feed's %s", d.body, want)
		}
		h := d.header
		if h.Get("Content-Type") != "application/json" || h.Get("Petstore-Event-Id") != "1" || h.Get("Petstore-Event-Type") != "pet.created" {
			t.Errorf("headers %v", h)
		}
		if err := webhooks.Verify(h.Get("Petstore-Signature"), d.body, secret, 5*time.Minute, time.Now()); err != nil {
			t.Errorf("signature %q does not verify: %v", h.Get("Petstore-Signature"), err)
		}
		if webhooks.Verify(h.Get("Petstore-Signature"), d.body, "whsec_other", 5*time.Minute, time.Now()) == nil {
			t.Error("the signature verifies with another secret")
		}
	})
}

// A failed attempt is retried after a doubling wait until it succeeds; one
// that never does stops after the last attempt and can be sent again.
func TestRetries(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		flaky := newReceiver(t, func(n int) int {
			if n <= 2 {
				return http.StatusInternalServerError
			}
			return http.StatusOK
		})
		down := newReceiver(t, func(int) int { return http.StatusBadGateway })
		wf, _ := create(t, s, flaky.srv.URL)
		wd, _ := create(t, s, down.srv.URL)
		start(t, s, webhooks.Options{MaxAttempts: 3, RetryBase: 100 * time.Millisecond})
		addPet(t, s, "Rex")
		waitFor(t, "three attempts at the flaky receiver", func() bool { return len(flaky.deliveries()) == 3 })
		waitFor(t, "three attempts at the receiver that is down", func() bool { return len(down.deliveries()) == 3 })
		got := flaky.deliveries()
		first, second := got[1].at.Sub(got[0].at), got[2].at.Sub(got[1].at)
		if first < 75*time.Millisecond || second < 150*time.Millisecond {
			t.Errorf("waits %v then %v; want about 100 ms then 200 ms (±25%%)", first, second)
		}
		waitFor(t, "the flaky delivery recorded", func() bool {
			ds, _ := s.WebhookDeliveries(ctx, wf.ID, 10)
			return len(ds) == 1 && ds[0].Status == models.DeliveryDelivered && ds[0].Attempts == 3
		})
		waitFor(t, "the failed delivery recorded", func() bool {
			ds, _ := s.WebhookDeliveries(ctx, wd.ID, 10)
			return len(ds) == 1 && ds[0].Status == models.DeliveryFailed && ds[0].Attempts == 3 && *ds[0].LastStatus == 502
		})
		time.Sleep(500 * time.Millisecond)
		if n := len(down.deliveries()); n != 3 {
			t.Fatalf("%d attempts after the last, want 3", n)
		}
		ds, _ := s.WebhookDeliveries(ctx, wd.ID, 10)
		if err := s.ResendWebhookDelivery(ctx, wd.ID, ds[0].ID, "alice"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the resent delivery", func() bool { return len(down.deliveries()) >= 4 })
	})
}

// A receiver that hangs holds its own endpoint only: another endpoint's
// deliveries go on at once, and the hanging one is cut at the timeout.
func TestSlowReceiverDelaysNoOther(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		hanging := newReceiver(t, func(int) int { return 0 })
		fast := newReceiver(t, ok)
		create(t, s, hanging.srv.URL)
		create(t, s, fast.srv.URL)
		start(t, s, webhooks.Options{Timeout: 3 * time.Second})
		addPet(t, s, "Rex")
		waitFor(t, "the hanging receiver's first request", func() bool { return len(hanging.deliveries()) == 1 })
		began := time.Now()
		for i := range 5 {
			addPet(t, s, fmt.Sprint("Pet ", i))
		}
		waitFor(t, "the fast receiver's six deliveries", func() bool { return len(fast.deliveries()) == 6 })
		if took := time.Since(began); took > 2*time.Second {
			t.Errorf("the fast receiver got its deliveries %v after they were made, while the other hung", took)
		}
	})
}

// Two instances deliver at once over one database: every event reaches
// the receiver, each once (no failure, no lease lost).
func TestTwoInstancesDeliverOnce(t *testing.T) {
	t.Parallel()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			a, b := modelstest.OpenPair(t, driver)
			r := newReceiver(t, ok)
			create(t, a, r.srv.URL)
			start(t, a, webhooks.Options{})
			start(t, b, webhooks.Options{})
			const n = 40
			for i := range n {
				s := a
				if i%2 == 1 {
					s = b
				}
				addPet(t, s, fmt.Sprint("Pet ", i))
			}
			waitFor(t, "every delivery", func() bool { return len(r.deliveries()) >= n })
			time.Sleep(300 * time.Millisecond)
			seen := map[string]int{}
			for _, d := range r.deliveries() {
				seen[d.header.Get("Petstore-Event-Id")]++
			}
			for id, c := range seen {
				if c != 1 {
					t.Errorf("event %s delivered %d times", id, c)
				}
			}
			if len(seen) != n {
				t.Errorf("%d events delivered, want %d", len(seen), n)
			}
		})
	}
}

// During a rotation deliveries carry two signatures, one per secret; a
// ping goes at once; a redirect is an answer, not followed.
func TestRotationPingAndRedirects(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		target := newReceiver(t, ok)
		redirect := httptest.NewServer(http.RedirectHandler(target.srv.URL, http.StatusFound))
		t.Cleanup(redirect.Close)
		r := newReceiver(t, ok)
		w, old := create(t, s, r.srv.URL)
		wr, _ := create(t, s, redirect.URL)
		newSecret, err := webhooks.Rotate(ctx, s, w.ID, "alice")
		if err != nil {
			t.Fatal(err)
		}
		start(t, s, webhooks.Options{MaxAttempts: 1})
		if err := webhooks.SendPing(ctx, s, w.ID, "alice"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the ping", func() bool { return len(r.deliveries()) == 1 })
		d := r.deliveries()[0]
		if d.header.Get("Petstore-Event-Type") != "ping" || !strings.HasPrefix(d.header.Get("Petstore-Event-Id"), "ping_") {
			t.Errorf("ping headers %v", d.header)
		}
		sig := d.header.Get("Petstore-Signature")
		if strings.Count(sig, "v1=") != 2 {
			t.Errorf("signature during a rotation %q, want two v1", sig)
		}
		for _, secret := range []string{newSecret, old} {
			if err := webhooks.Verify(sig, d.body, secret, time.Minute, time.Now()); err != nil {
				t.Errorf("does not verify with %s…: %v", secret[:10], err)
			}
		}
		addPet(t, s, "Rex")
		waitFor(t, "the redirect's answer recorded", func() bool {
			ds, _ := s.WebhookDeliveries(ctx, wr.ID, 10)
			return len(ds) == 1 && ds[0].Status == models.DeliveryFailed && ds[0].LastStatus != nil && *ds[0].LastStatus == http.StatusFound
		})
		if n := len(target.deliveries()); n != 0 {
			t.Fatalf("the redirect was followed: its target got %d requests", n)
		}
	})
}

// With private destinations refused (the default), a delivery to a
// loopback receiver never reaches it and records why.
func TestPrivateDestinationRefusedAtDial(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		r := newReceiver(t, ok)
		// Made while allowed (as an intranet would), delivered while not.
		w, _ := create(t, s, r.srv.URL)
		o := webhooks.Options{Encode: api.EventJSON, Poll: 50 * time.Millisecond, MaxAttempts: 1, Timeout: 2 * time.Second}
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); webhooks.New(s, o).Run(runCtx) }()
		t.Cleanup(func() { cancel(); <-done })
		addPet(t, s, "Rex")
		waitFor(t, "the refused attempt recorded", func() bool {
			ds, _ := s.WebhookDeliveries(ctx, w.ID, 10)
			return len(ds) == 1 && ds[0].Status == models.DeliveryFailed && strings.Contains(ds[0].LastError, "loopback")
		})
		if n := len(r.deliveries()); n != 0 {
			t.Fatalf("the loopback receiver got %d requests", n)
		}
		if _, _, err := webhooks.Create(ctx, s, models.WebhookInput{URL: "http://127.0.0.1:9/"}, false, "alice"); models.ErrorCode(err) != models.CodeInvalidRequest {
			t.Fatalf("creating a loopback endpoint: %v", err)
		}
	})
}

// An instance that died holding an endpoint's lease (its claim is made
// here and never released) leaves its deliveries to another instance once
// the lease runs out: none is lost.
func TestLeaseOfADeadInstanceRunsOut(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		r := newReceiver(t, ok)
		w, _ := create(t, s, r.srv.URL)
		addPet(t, s, "Rex")
		// The dead instance queued the event and took the lease with the
		// lease a dispatcher of a 1 s timeout takes (7 s).
		if _, err := s.FanOutWebhook(context.Background(), w.ID, 100, api.EventJSON); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.ClaimWebhook(context.Background(), w.ID, "dead instance", 7*time.Second); !ok || err != nil {
			t.Fatalf("claim: %v, %v", ok, err)
		}
		claimed := time.Now()
		start(t, s, webhooks.Options{Timeout: time.Second})
		waitFor(t, "the delivery by the live instance", func() bool { return len(r.deliveries()) == 1 })
		if took := time.Since(claimed); took < 6*time.Second {
			t.Fatalf("delivered %v after the dead instance's claim, inside its lease", took)
		}
	})
}
