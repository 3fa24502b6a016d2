package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"petstore/api"
)

// The change feed as a partner reads it: GET /v1/events, one page at a
// time, following the Link next of each answer and nothing else. A page
// is checked as strictly as the contract allows without knowing what the
// feed should hold: the JSON shape (no unknown field, each event complete),
// and the Link, which every 200 carries and which keeps the request's
// limit and wait (and, on an empty page, its cursor).

// EventTypes are the event types the feed may give.
var EventTypes = []string{"pet.created", "pet.updated"}

// EventsPage checks one answer of GET /v1/events sent to target and
// returns its events and the next page's target (path and query). Any
// break of the contract is an error; so is any status but 200, as a
// NotOKError, so that a caller can tell a 503 it retries from a
// wrong answer (a *NotOKError).
func EventsPage(target string, r Reply) ([]api.Event, string, error) {
	if r.Err != nil || r.Status != http.StatusOK {
		return nil, "", &NotOKError{Target: target, Reply: r}
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		return nil, "", fmt.Errorf("GET %s: Content-Type %q, want application/json", target, ct)
	}
	var events []api.Event
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&events); err != nil || events == nil {
		return nil, "", fmt.Errorf("GET %s: not a JSON array of events (%v): %s", target, err, Clip(string(r.Body)))
	}
	for _, e := range events {
		if err := checkEvent(e); err != nil {
			return nil, "", fmt.Errorf("GET %s: %v", target, err)
		}
	}
	links := r.Header.Values("Link")
	if len(links) != 1 {
		return nil, "", fmt.Errorf("GET %s: %d Link headers %q, want one with rel=\"next\"", target, len(links), links)
	}
	m := NextLink.FindStringSubmatch(links[0])
	if m == nil {
		return nil, "", fmt.Errorf("GET %s: Link %q has no next URL", target, links[0])
	}
	next, err := url.Parse(m[1])
	if err != nil || next.Path != "/v1/events" {
		return nil, "", fmt.Errorf("GET %s: Link %q does not lead to /v1/events (%v)", target, links[0], err)
	}
	asked, err := url.Parse(target)
	if err != nil {
		return nil, "", err
	}
	q, nq := asked.Query(), next.Query()
	if nq.Get("after") == "" {
		return nil, "", fmt.Errorf("GET %s: Link %q has no cursor", target, links[0])
	}
	for _, p := range []string{"limit", "wait"} {
		if q.Has(p) && nq.Get(p) != q.Get(p) {
			return nil, "", fmt.Errorf("GET %s: Link %q does not keep %s=%s", target, links[0], p, q.Get(p))
		}
	}
	if limit, err := strconv.Atoi(q.Get("limit")); err == nil && len(events) > limit {
		return nil, "", fmt.Errorf("GET %s: %d events, more than the limit", target, len(events))
	}
	if len(events) == 0 && q.Has("after") && nq.Get("after") != q.Get("after") {
		return nil, "", fmt.Errorf("GET %s: an empty page links to %q, want its own cursor", target, links[0])
	}
	return events, next.RequestURI(), nil
}

// NotOKError is an answer of the feed other than 200, or none.
type NotOKError struct {
	Target string
	Reply  Reply
}

func (e *NotOKError) Error() string { return fmt.Sprintf("GET %s: %s, want 200", e.Target, e.Reply) }

// checkEvent checks what an event must hold whatever the feed is.
func checkEvent(e api.Event) error {
	switch {
	case e.ID == "":
		return fmt.Errorf("an event without an id: %+v", e)
	case !slices.Contains(EventTypes, e.Type):
		return fmt.Errorf("event %s has type %q, want one of %v", e.ID, e.Type, EventTypes)
	case e.OccurredAt.IsZero() || e.OccurredAt.Location() != time.UTC:
		return fmt.Errorf("event %s occurred at %v, want a time in UTC", e.ID, e.OccurredAt)
	case e.Pet.ID < 1 || e.Pet.Name == "" || e.Pet.Status == "":
		return fmt.Errorf("event %s has pet %+v, want the whole pet", e.ID, e.Pet)
	case e.Type == "pet.created" && e.Changed != nil:
		return fmt.Errorf("event %s (pet.created) names changed fields %v", e.ID, e.Changed)
	case e.Type == "pet.updated" && len(e.Changed) == 0:
		return fmt.Errorf("event %s (pet.updated) names no changed field", e.ID)
	}
	return nil
}

// Follower reads the feed as a partner does, from a first target on,
// each page at the Link next of the one before. It is safe to read its
// counts while another goroutine follows.
type Follower struct {
	API *APIClient

	mu     sync.Mutex
	next   string
	events []api.Event
	pages  int // 200s read
	empty  int // of which empty
	failed int // answers other than 200 (a 503 while a database node is away), retried
}

// NewFollower returns a follower of the feed that starts at first, such as
// "/v1/events?limit=100&wait=5".
func NewFollower(c *APIClient, first string) *Follower {
	return &Follower{API: c, next: first}
}

// Step reads the page at the follower's cursor and moves it on. A page
// that breaks the contract is an error (the cursor stays); so is any
// answer but 200, counted as failed, which a caller may retry. A request
// cut short by ctx is neither: the cursor stays and ok is false.
func (f *Follower) Step(ctx context.Context) (n int, ok bool, err error) {
	f.mu.Lock()
	target := f.next
	f.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.API.Base+target, nil)
	if err != nil {
		return 0, false, err
	}
	req.Header.Set("Authorization", "Bearer "+f.API.Key)
	r := Do(f.API.HTTP, req)
	if ctx.Err() != nil {
		return 0, false, nil
	}
	events, next, err := EventsPage(target, r)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		if errors.As(err, new(*NotOKError)) {
			f.failed++
		}
		return 0, false, err
	}
	f.pages++
	if len(events) == 0 {
		f.empty++
	}
	f.events = append(f.events, events...)
	f.next = next
	return len(events), true, nil
}

// Next is the target of the page the follower reads next.
func (f *Follower) Next() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.next
}

// SetWait changes the wait of the follower's next target, keeping its
// cursor: to end a follow without a last long poll.
func (f *Follower) SetWait(seconds int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, err := url.Parse(f.next)
	if err != nil {
		return
	}
	q := u.Query()
	q.Set("wait", fmt.Sprint(seconds))
	u.RawQuery = q.Encode()
	f.next = u.RequestURI()
}

// Events returns a copy of the events read so far, in the order read.
func (f *Follower) Events() []api.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.events)
}

// Count is how many events the follower has read.
func (f *Follower) Count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.events)
}

// Stats says how many pages it read, how many were empty, and how many
// answers were not 200.
func (f *Follower) Stats() (pages, empty, failed int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pages, f.empty, f.failed
}

// CatchUp reads pages until one is empty, with the wait the follower's
// target has (SetWait(0) first to read without waiting), retrying an
// answer that is not 200 (a NotOKError) up to tries times in all.
func (f *Follower) CatchUp(ctx context.Context, tries int) error {
	failures := 0
	for {
		n, ok, err := f.Step(ctx)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil && !errors.As(err, new(*NotOKError)):
			return err
		case !ok:
			if failures++; failures >= tries {
				return err
			}
			time.Sleep(100 * time.Millisecond)
		case n == 0:
			return nil
		}
	}
}
