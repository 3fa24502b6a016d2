// Package webhooks delivers the change feed's events to the endpoints
// admins register: the dispatcher that queues and sends them, the HTTP
// client that refuses the server's own network, and the signatures.
package webhooks

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"petstore/models"
)

// Options configure a Dispatcher; the zero values of the durations and
// counts are the defaults of config (WEBHOOK_*).
type Options struct {
	Timeout      time.Duration // one attempt, answer included
	RetryBase    time.Duration // the first wait after a failure, doubled after each
	MaxAttempts  int
	DisableAfter time.Duration // an endpoint failing this long is disabled
	AllowPrivate bool          // let deliveries reach private and loopback addresses
	// Workers bounds how many endpoints this instance delivers to at once;
	// each endpoint gets one delivery at a time, so a slow receiver holds
	// one worker and delays no other endpoint.
	Workers int
	// Poll is how often the dispatcher looks for new events, endpoints and
	// due retries (so endpoint changes apply within it on every instance).
	Poll time.Duration
	// Encode writes an event's body exactly as the feed gives it.
	Encode func(models.Event) []byte
	Logger *slog.Logger
}

func (o *Options) defaults() {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.RetryBase <= 0 {
		o.RetryBase = 30 * time.Second
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 12
	}
	if o.DisableAfter <= 0 {
		o.DisableAfter = 72 * time.Hour
	}
	if o.Workers <= 0 {
		o.Workers = 8
	}
	if o.Poll <= 0 {
		o.Poll = 500 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// fanOutBatch is how many events one fan-out transaction reads.
const fanOutBatch = 500

// maxBackoff caps the wait between two attempts.
const maxBackoff = 24 * time.Hour

// Dispatcher delivers events to the endpoints, beside any number of
// dispatchers of other instances over the same database: each queues the
// events of every endpoint (FanOutWebhook; an event is queued once), and
// an endpoint's deliveries are sent by whichever instance holds its lease.
type Dispatcher struct {
	store  *models.Store
	o      Options
	client *http.Client
	owner  string // this instance's name in leases

	mu   sync.Mutex
	busy map[int64]bool // endpoints this instance is delivering to
	work sync.WaitGroup

	delivered, retried, failed atomic.Int64
	pending, oldestUnix        atomic.Int64
}

// New returns a dispatcher over store; Run starts it.
func New(store *models.Store, o Options) *Dispatcher {
	o.defaults()
	return &Dispatcher{store: store, o: o, client: NewClient(o.Timeout, o.AllowPrivate), owner: crand.Text()[:16], busy: map[int64]bool{}}
}

// Stats are what the dispatcher counted since it started, and the queue
// as last read.
type Stats struct {
	Delivered, Retried, Failed int64 // attempts by outcome (failed: no attempt left)
	Pending                    int64 // deliveries waiting, across all instances
	OldestPending              time.Time
}

// Stats returns the dispatcher's figures.
func (d *Dispatcher) Stats() Stats {
	s := Stats{Delivered: d.delivered.Load(), Retried: d.retried.Load(), Failed: d.failed.Load(), Pending: d.pending.Load()}
	if u := d.oldestUnix.Load(); u != 0 {
		s.OldestPending = time.Unix(0, u).UTC()
	}
	return s
}

// Run delivers until ctx ends, then waits for the deliveries under way
// (each bounded by the timeout).
func (d *Dispatcher) Run(ctx context.Context) {
	t := time.NewTicker(d.o.Poll)
	defer t.Stop()
	var statsAt time.Time
	for {
		d.tick(ctx)
		if time.Since(statsAt) > 5*time.Second {
			statsAt = time.Now()
			if q, err := d.store.WebhookQueueStats(ctx); err == nil {
				d.pending.Store(q.Pending)
				if q.Oldest.IsZero() {
					d.oldestUnix.Store(0)
				} else {
					d.oldestUnix.Store(q.Oldest.UnixNano())
				}
			}
		}
		select {
		case <-ctx.Done():
			d.work.Wait()
			return
		case <-t.C:
		}
	}
}

// tick queues new events for every enabled endpoint and starts a worker
// for each endpoint with deliveries due, as workers are free.
func (d *Dispatcher) tick(ctx context.Context) {
	ws, err := d.store.ListWebhooks(ctx)
	if err != nil {
		if ctx.Err() == nil {
			d.o.Logger.Warn("webhooks: could not list endpoints", "error", err)
		}
		return
	}
	if len(ws) == 0 {
		return
	}
	head, err := d.store.EventHead(ctx)
	if err != nil {
		return
	}
	for _, w := range ws {
		if !w.Enabled || w.CursorEventID >= head {
			continue
		}
		for range 20 { // at most 10,000 events a tick, so that due deliveries are not starved
			n, err := d.store.FanOutWebhook(ctx, w.ID, fanOutBatch, d.o.Encode)
			if err != nil {
				if ctx.Err() == nil {
					d.o.Logger.Warn("webhooks: could not queue events", "endpoint", w.ID, "error", err)
				}
				break
			}
			if n < fanOutBatch {
				break
			}
		}
	}
	due, err := d.store.WebhooksDue(ctx, time.Now().UTC())
	if err != nil {
		return
	}
	for _, id := range due {
		if !d.start(id) {
			continue
		}
		ok, err := d.store.ClaimWebhook(ctx, id, d.owner, d.lease())
		if err != nil || !ok {
			d.done(id)
			continue
		}
		d.work.Add(1)
		go func() {
			defer d.work.Done()
			defer d.done(id)
			d.deliverAll(ctx, id)
		}()
	}
}

// start marks endpoint id busy; false when this instance already
// delivers to it (a worker that stalled past its lease must not get a
// second one beside it) or every worker is busy.
func (d *Dispatcher) start(id int64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.busy[id] || len(d.busy) >= d.o.Workers {
		return false
	}
	d.busy[id] = true
	return true
}

func (d *Dispatcher) done(id int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.busy, id)
}

// lease is how long a claim of an endpoint lasts: renewed before each
// attempt, it outlasts one attempt and its record; a lease left by an
// instance that died runs out that long after its last attempt began.
func (d *Dispatcher) lease() time.Duration { return 2*d.o.Timeout + 5*time.Second }

// deliverAll sends endpoint id's due deliveries one at a time, in the order
// they were queued, while it holds the endpoint's lease. It stops at the
// first failure: the endpoint's other deliveries then wait as long as the
// failed one (RecordWebhookAttempt), so a receiver that is down gets one
// attempt per retry, not one per queued event.
func (d *Dispatcher) deliverAll(ctx context.Context, id int64) {
	defer d.store.ReleaseWebhook(context.WithoutCancel(ctx), id, d.owner)
	for ctx.Err() == nil {
		w, err := d.store.GetWebhook(ctx, id)
		if err != nil || !w.Enabled {
			return
		}
		ds, err := d.store.DueWebhookDeliveries(ctx, id, time.Now().UTC(), 10)
		if err != nil || len(ds) == 0 {
			return
		}
		for _, dl := range ds {
			if ok, err := d.store.ClaimWebhook(ctx, id, d.owner, d.lease()); err != nil || !ok {
				return
			}
			// A worker that stalled past its lease may hold a batch that
			// another instance delivered meanwhile: send only what is
			// still waiting as it was read.
			if still, err := d.store.WebhookDeliveryWaiting(ctx, dl); err != nil || !still {
				return
			}
			a := d.attempt(ctx, w, dl)
			if ctx.Err() != nil && !a.Delivered {
				return // shutting down: the attempt was cut, not failed
			}
			disabled, err := d.store.RecordWebhookAttempt(context.WithoutCancel(ctx), dl, a, d.o.DisableAfter)
			if err != nil {
				d.o.Logger.Warn("webhooks: could not record an attempt", "endpoint", id, "delivery", dl.ID, "error", err)
				return
			}
			switch {
			case a.Delivered:
				d.delivered.Add(1)
			case a.Final:
				d.failed.Add(1)
			default:
				d.retried.Add(1)
			}
			if !a.Delivered {
				d.o.Logger.Info("webhook delivery failed", "endpoint", id, "event", dl.EventID, "attempt", dl.Attempts+1,
					"status", a.Status, "error", a.Error, "final", a.Final)
			}
			if disabled {
				d.o.Logger.Warn("webhook endpoint disabled: its deliveries failed too long", "endpoint", id)
				return
			}
			if !a.Delivered {
				return
			}
		}
	}
}

// attempt sends delivery dl to endpoint w once.
func (d *Dispatcher) attempt(ctx context.Context, w models.Webhook, dl models.WebhookDelivery) models.WebhookAttempt {
	now := time.Now().UTC()
	a := models.WebhookAttempt{At: now}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(dl.Body))
	if err == nil {
		h := req.Header
		h.Set("Content-Type", "application/json")
		h.Set("User-Agent", "petstore-webhooks/1")
		h.Set("Petstore-Event-Id", dl.EventID)
		h.Set("Petstore-Event-Type", dl.EventType)
		h.Set("Petstore-Signature", Signature(now, dl.Body, w.Secrets(now)...))
		var res *http.Response
		if res, err = d.client.Do(req); err == nil {
			a.Status = res.StatusCode
			ReadLimited(res.Body, 4<<10)
			res.Body.Close()
		}
	}
	a.Duration = time.Since(now)
	switch {
	case err != nil:
		a.Error = describe(err)
	case a.Status >= 200 && a.Status < 300:
		a.Delivered = true
		return a
	default:
		a.Error = "answered " + strconv.Itoa(a.Status) + " " + http.StatusText(a.Status)
	}
	attempts := dl.Attempts + 1
	if attempts >= d.o.MaxAttempts {
		a.Final = true
		return a
	}
	a.NextAttemptAt = now.Add(backoff(d.o.RetryBase, attempts))
	return a
}

// backoff is the wait after the n-th failed attempt: base doubled n-1
// times, at most maxBackoff, jittered by ±25% so that the retries of many
// deliveries that failed together spread out.
func backoff(base time.Duration, n int) time.Duration {
	wait := base
	for i := 1; i < n && wait < maxBackoff; i++ {
		wait *= 2
	}
	wait = min(wait, maxBackoff)
	return wait*3/4 + rand.N(wait/2+1)
}

// describe is an attempt's error without the URL (which may carry a
// receiver's token) that net/http puts in front.
func describe(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "no answer within the timeout"
	}
	return err.Error()
}

// Create checks in (its URL may not reach the server's own network unless
// allowPrivate) and stores the endpoint with a new signing secret, which it
// returns: the one time it is shown.
func Create(ctx context.Context, store *models.Store, in models.WebhookInput, allowPrivate bool, actor string) (models.Webhook, string, error) {
	if err := in.Validate(func(raw string) error { _, err := CheckURL(raw, allowPrivate); return err }); err != nil {
		return models.Webhook{}, "", err
	}
	secret := NewSecret()
	w, err := store.CreateWebhook(ctx, in, secret, actor)
	return w, secret, err
}

// RotationGrace is how long a replaced secret still signs deliveries.
const RotationGrace = 24 * time.Hour

// Rotate gives endpoint id a new secret and returns it; the old one stays
// valid for RotationGrace.
func Rotate(ctx context.Context, store *models.Store, id int64, actor string) (string, error) {
	secret := NewSecret()
	_, err := store.RotateWebhookSecret(ctx, id, secret, RotationGrace, actor)
	return secret, err
}

// Ping is the test event's body.
type Ping struct {
	ID         string    `json:"id"`
	Type       string    `json:"type"`
	OccurredAt time.Time `json:"occurredAt"`
}

// SendPing queues a ping event for endpoint id, to go at once.
func SendPing(ctx context.Context, store *models.Store, id int64, actor string) error {
	p := Ping{ID: "ping_" + crand.Text()[:20], Type: models.EventPing, OccurredAt: time.Now().UTC()}
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return store.QueueWebhookPing(ctx, id, p.ID, body, actor)
}
