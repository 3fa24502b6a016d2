package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"petstore/api"
	"petstore/models"
)

func decodeEvents(t *testing.T, r response) []api.Event {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("status = %d, want 200; body %s", r.Status, r.Body)
	}
	var events []api.Event
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&events); err != nil {
		t.Fatalf("events %s: %v", r.Body, err)
	}
	return events
}

// wantNext asserts the Link of a page of events.
func wantNext(t *testing.T, r response, want string) {
	t.Helper()
	if got := r.Header.Get("Link"); got != "<"+want+`>; rel="next"` {
		t.Errorf("Link = %q, want <%s>; rel=\"next\"", got, want)
	}
}

// The change feed as a partner reads it: every change in order, a Link on
// every page (an empty one too), and paging by the cursor it gives.
func TestEventsFeed(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		first := e.get("/v1/events")
		if events := decodeEvents(t, first); len(events) != 0 {
			t.Fatalf("a new store's feed: %s", first.Body)
		}
		wantNext(t, first, "/v1/events?after=0&limit=100")
		rex := decodePet(t, e.post(`{"name":"Rex","categoryId":1,"status":"available"}`), http.StatusCreated)
		if _, err := e.store.UpdatePetStatus(context.Background(), rex.ID, models.StatusSold, "test"); err != nil {
			t.Fatal(err)
		}
		tom := decodePet(t, e.post(`{"name":"Tom","categoryId":2,"status":"pending"}`), http.StatusCreated)

		all := e.get("/v1/events")
		events := decodeEvents(t, all)
		if len(events) != 3 {
			t.Fatalf("3 changes, feed %s", all.Body)
		}
		want := []api.Event{
			{ID: "1", Type: "pet.created", Pet: api.Pet{ID: rex.ID, Name: "Rex", CategoryID: 1, Status: models.StatusAvailable}},
			{ID: "2", Type: "pet.updated", Pet: api.Pet{ID: rex.ID, Name: "Rex", CategoryID: 1, Status: models.StatusSold}, Changed: []string{"status"}},
			{ID: "3", Type: "pet.created", Pet: tom},
		}
		for i, ev := range events {
			if ev.OccurredAt.IsZero() || ev.OccurredAt.Location() != time.UTC || time.Since(ev.OccurredAt) > time.Minute {
				t.Errorf("event %s occurred at %v", ev.ID, ev.OccurredAt)
			}
			ev.OccurredAt = time.Time{}
			if w := want[i]; ev.ID != w.ID || ev.Type != w.Type || ev.Pet != w.Pet || strings.Join(ev.Changed, ",") != strings.Join(w.Changed, ",") {
				t.Errorf("event %d = %+v, want %+v", i, ev, w)
			}
		}
		wantNext(t, all, "/v1/events?after=3&limit=100")

		page := e.get("/v1/events?limit=2&after=0")
		if got := decodeEvents(t, page); len(got) != 2 || got[1].ID != "2" {
			t.Fatalf("first page of 2: %s", page.Body)
		}
		wantNext(t, page, "/v1/events?after=2&limit=2")
		page = e.get("/v1/events?after=2&limit=2&wait=0")
		if got := decodeEvents(t, page); len(got) != 1 || got[0].ID != "3" {
			t.Fatalf("second page: %s", page.Body)
		}
		wantNext(t, page, "/v1/events?after=3&limit=2&wait=0")
		// An empty page keeps the reader's cursor.
		page = e.get("/v1/events?after=3")
		if got := decodeEvents(t, page); len(got) != 0 {
			t.Fatalf("after the last event: %s", page.Body)
		}
		wantNext(t, page, "/v1/events?after=3&limit=100")
	})
}

// With wait, a reader with nothing to read is answered when a change
// commits, or with an empty page when the wait passes.
func TestEventsLongPoll(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		start := time.Now()
		r := e.get("/v1/events?wait=1")
		if got := decodeEvents(t, r); len(got) != 0 || time.Since(start) < time.Second {
			t.Fatalf("an empty feed after %v: %s", time.Since(start), r.Body)
		}
		wantNext(t, r, "/v1/events?after=0&limit=100&wait=1")
		go func() {
			time.Sleep(200 * time.Millisecond)
			e.post(`{"name":"Late","categoryId":1,"status":"sold"}`)
		}()
		start = time.Now()
		r = e.get("/v1/events?after=0&wait=30")
		if got := decodeEvents(t, r); len(got) != 1 || got[0].Pet.Name != "Late" {
			t.Fatalf("a waiting reader: %s", r.Body)
		}
		// Answered well before the wait ends: the commit woke it.
		if took := time.Since(start); took > 15*time.Second {
			t.Fatalf("a waiting reader was answered after %v", took)
		}
	})
}

// Bad parameters are refused with 400 and a message per parameter;
// unknown ones too, so that a typo never reads something else.
func TestEventsBadQueries(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		for _, q := range []string{
			"after=abc", "after=-1", "after=01", "after=1.5", "after=", "after=99999999999999999999", "after=1&after=2",
			"limit=0", "limit=1001", "limit=ten", "limit=", "wait=31", "wait=-1", "wait=1.5", "wait=1s",
			"stauts=sold", "cursor=1", "after=1;limit=2", "after=%zz",
		} {
			r := e.get("/v1/events?" + q)
			body := wantError(t, r, http.StatusBadRequest, models.CodeInvalidRequest)
			if strings.Contains(q, "=") && !strings.Contains(q, ";") && !strings.Contains(q, "%") {
				name := q[:strings.IndexByte(q, '=')]
				if len(body.Details) == 0 || body.Details[0].Field != name {
					t.Errorf("?%s: details %+v, want one naming %s", q, body.Details, name)
				}
			}
		}
	})
}

// The feed needs pets:read; a cursor older than what is kept is 410
// cursor_expired, and a reader without a cursor starts after the purge.
func TestEventsScopeAndRetention(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		wantError(t, e.do("GET", "/v1/events", nil, ""), http.StatusUnauthorized, models.CodeUnauthorized)
		writeOnly := issue(t, e.store, "writer", "", "pets:write")
		wantInsufficientScope(t, e.do("GET", "/v1/events", writeOnly, ""), "pets:read", "pets:write")
		readOnly := issue(t, e.store, "reader", "", "pets:read")
		if r := e.do("GET", "/v1/events", readOnly, ""); r.Status != http.StatusOK {
			t.Fatalf("a pets:read key: %d %s", r.Status, r.Body)
		}
		for range 3 {
			decodePet(t, e.post(`{"name":"Old","categoryId":1,"status":"sold"}`), http.StatusCreated)
		}
		if n, err := e.store.PurgeEvents(context.Background(), time.Now().Add(time.Hour)); err != nil || n != 3 {
			t.Fatalf("purge = %d, %v", n, err)
		}
		for _, q := range []string{"after=0", "after=2", "after=0&wait=5"} {
			wantError(t, e.get("/v1/events?"+q), http.StatusGone, models.CodeCursorExpired)
		}
		r := e.get("/v1/events")
		if got := decodeEvents(t, r); len(got) != 0 {
			t.Fatalf("after the purge: %s", r.Body)
		}
		wantNext(t, r, "/v1/events?after=3&limit=100")
	})
}
