package api_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"petstore/api"
	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
)

// postOnce posts body with the Idempotency-Key header lines given (none, one
// or several) under the API key apiKey, and validates the answer against
// the OpenAPI document. It is safe in any goroutine.
func (e *env) postOnce(t *testing.T, apiKey string, keys []string, body string) (response, error) {
	req, err := http.NewRequest("POST", e.srv.URL+"/v1/pets", strings.NewReader(body))
	if err != nil {
		return response{}, err
	}
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("Content-Type", "application/json")
	for _, k := range keys {
		req.Header.Add("Idempotency-Key", k)
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		return response{}, err
	}
	r := testkit.ReadReply(t, res)
	checkAgainstOpenAPI(t, req, r)
	return r, nil
}

// postKey posts body with one Idempotency-Key under the env's API key.
func (e *env) postKey(t *testing.T, key, body string) response {
	t.Helper()
	r, err := e.postOnce(t, e.key, []string{key}, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// wantFirst asserts a 201 that created (not a replay) and returns it.
func wantFirst(t *testing.T, r response) api.Pet {
	t.Helper()
	p := decodePet(t, r, http.StatusCreated)
	if got := r.Header.Get("Idempotent-Replayed"); got != "" {
		t.Errorf("Idempotent-Replayed = %q on a first create", got)
	}
	if loc := r.Header.Get("Location"); loc != fmt.Sprintf("/v1/pets/%d", p.ID) {
		t.Errorf("Location = %q for pet %d", loc, p.ID)
	}
	return p
}

// wantReplay asserts that r repeats first exactly, marked as a replay.
func wantReplay(t *testing.T, r, first response) {
	t.Helper()
	if r.Status != first.Status || !bytes.Equal(r.Body, first.Body) || r.Header.Get("Location") != first.Header.Get("Location") {
		t.Fatalf("replay = %d %q Location %q; want %d %q Location %q", r.Status, r.Body, r.Header.Get("Location"),
			first.Status, first.Body, first.Header.Get("Location"))
	}
	if got := r.Header.Get("Idempotent-Replayed"); got != "true" {
		t.Errorf("Idempotent-Replayed = %q on a replay, want true", got)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q on a replay", ct)
	}
}

// A repeat with the same key answers the first 201 again and creates
// nothing, in either form of the key; the key with another pet is 422; keys
// are per API key and case-sensitive.
func TestIdempotencyKeyReplay(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		const body = `{"name":"Rex","categoryId":3,"status":"pending"}`
		first := e.postKey(t, "8e03978e-40d5-43e8-bc93-6894a57f9324", body)
		wantFirst(t, first)
		for name, tc := range map[string]struct{ key, body string }{
			"same request":               {"8e03978e-40d5-43e8-bc93-6894a57f9324", body},
			"quoted key":                 {`"8e03978e-40d5-43e8-bc93-6894a57f9324"`, body},
			"quoted key with parameters": {`"8e03978e-40d5-43e8-bc93-6894a57f9324";a=1`, body},
			"same pet, other JSON":       {"8e03978e-40d5-43e8-bc93-6894a57f9324", ` { "status":"pending", "categoryId":3, "name":"  Rex ", "id":99, "x":[] } `},
		} {
			t.Run(name, func(t *testing.T) { wantReplay(t, e.postKey(t, tc.key, tc.body), first) })
		}
		for name, other := range map[string]string{
			"other name":     `{"name":"Tom","categoryId":3,"status":"pending"}`,
			"other category": `{"name":"Rex","categoryId":4,"status":"pending"}`,
			"other status":   `{"name":"Rex","categoryId":3}`,
		} {
			t.Run(name, func(t *testing.T) {
				r := e.postKey(t, "8e03978e-40d5-43e8-bc93-6894a57f9324", other)
				wantError(t, r, http.StatusUnprocessableEntity, models.CodeIdempotencyKeyMismatch)
				if r.Header.Get("Location") != "" || r.Header.Get("Idempotent-Replayed") != "" {
					t.Errorf("422 with headers %v", r.Header)
				}
			})
		}
		if n := e.countPets(); n != 1 {
			t.Fatalf("%d pets after repeats, want 1", n)
		}

		// Another API key's requests never see this key; a key differing
		// only in case is another key; the escapes of a quoted key are
		// undone (a\"b is the key a"b).
		_, otherKey, err := e.store.CreateAPIKey(context.Background(), "other partner", "test")
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.postOnce(t, otherKey, []string{"8e03978e-40d5-43e8-bc93-6894a57f9324"}, body)
		if err != nil {
			t.Fatal(err)
		}
		wantFirst(t, r)
		wantFirst(t, e.postKey(t, "8E03978E-40D5-43E8-BC93-6894A57F9324", body))
		escaped := e.postKey(t, `"a\"b\\c"`, body)
		wantFirst(t, escaped)
		wantReplay(t, e.postKey(t, `a"b\c`, body), escaped)
		if n := e.countPets(); n != 4 {
			t.Fatalf("%d pets, want 4", n)
		}
	})
}

// A malformed key, or more than one, is refused with 400 before anything
// is remembered; so is a body that fails validation: the same key then
// still creates.
func TestIdempotencyKeyRefused(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		const body = `{"name":"Rex","categoryId":1}`
		long := strings.Repeat("k", 256)
		tests := []struct {
			name string
			keys []string
		}{
			{"empty", []string{""}},
			{"256 characters", []string{long}},
			{"quoted 256 characters", []string{`"` + long + `"`}},
			{"quoted empty", []string{`""`}},
			{"not ASCII", []string{"clé"}},
			{"tab", []string{"a\tb"}},
			{"unterminated quote", []string{`"abc`}},
			{"bad escape", []string{`"a\nb"`}},
			{"after the quote", []string{`"abc"d`}},
			{"two headers", []string{"abc", "abc"}},
			{"two different headers", []string{"abc", "def"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r, err := e.postOnce(t, e.key, tt.keys, body)
				if err != nil {
					t.Fatal(err)
				}
				b := wantError(t, r, http.StatusBadRequest, models.CodeInvalidRequest)
				if !strings.Contains(b.Message, "Idempotency-Key") {
					t.Errorf("message %q does not name the header", b.Message)
				}
				if len(b.Details) != 1 || b.Details[0].Field != "Idempotency-Key" || b.Details[0].Message == "" {
					t.Errorf("details = %+v, want one for Idempotency-Key", b.Details)
				}
			})
		}
		// Bodies refused for their input are not remembered either.
		wantError(t, e.postKey(t, "abc", `{"name":"","categoryId":1}`), http.StatusBadRequest, models.CodeInvalidRequest)
		wantError(t, e.postKey(t, "abc", `{"name":"Rex"`), http.StatusBadRequest, models.CodeInvalidRequest)
		if n := e.countPets(); n != 0 {
			t.Fatalf("refused requests stored %d pets", n)
		}
		wantFirst(t, e.postKey(t, "abc", body))
		wantFirst(t, e.postKey(t, long[:255], body))
		wantFirst(t, e.postKey(t, `"`+strings.Repeat("q", 255)+`"`, `{"name":"Tom","categoryId":1}`))
	})
}

// Many first requests with one key at once make exactly one pet: each is
// answered with that pet's 201 (once as the create, then as replays) or
// 409 with Retry-After.
func TestIdempotencyKeyConcurrent(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		const n = 40
		var wg sync.WaitGroup
		replies := make([]response, n)
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				r, err := e.postOnce(t, e.key, []string{"race"}, `{"name":"Rex","categoryId":1}`)
				if err != nil {
					t.Error(err)
				}
				replies[i] = r
			})
		}
		close(start)
		wg.Wait()
		created, replayed, inUse := 0, 0, 0
		bodies := map[string]bool{}
		for _, r := range replies {
			switch {
			case r.Status == http.StatusCreated && r.Header.Get("Idempotent-Replayed") == "true":
				replayed++
				bodies[string(r.Body)] = true
			case r.Status == http.StatusCreated:
				created++
				bodies[string(r.Body)] = true
			default:
				wantError(t, r, http.StatusConflict, models.CodeIdempotencyKeyInUse)
				if got := r.Header.Get("Retry-After"); got != "1" {
					t.Errorf("Retry-After = %q on 409", got)
				}
				inUse++
			}
		}
		t.Logf("%d created, %d replayed, %d told in use", created, replayed, inUse)
		if created != 1 || len(bodies) != 1 {
			t.Fatalf("%d creates answered, %d distinct bodies; want 1 and 1", created, len(bodies))
		}
		if got := e.countPets(); got != 1 {
			t.Fatalf("%d pets, want 1", got)
		}
	})
}

// A create that fails on the server's side (500 here, 503 in an outage)
// is not remembered: its retry with the same key creates, once.
func TestIdempotencyKeyServerErrorNotRemembered(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		allow := modelstest.RefuseInserts(t, e.store, modelstest.Pets)
		const body = `{"name":"Rex","categoryId":1}`
		wantError(t, e.postKey(t, "retry-me", body), http.StatusInternalServerError, models.CodeInternal)
		wantError(t, e.postKey(t, "retry-me", body), http.StatusInternalServerError, models.CodeInternal)
		allow()
		first := e.postKey(t, "retry-me", body)
		wantFirst(t, first)
		wantReplay(t, e.postKey(t, "retry-me", body), first)
		if n := e.countPets(); n != 1 {
			t.Fatalf("%d pets, want 1", n)
		}
	})
}

// After 24 hours a key is forgotten: the same key creates again, even for
// another animal.
func TestIdempotencyKeyExpires(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		start := time.Now().UTC()
		var now atomic.Pointer[time.Time]
		set := func(t time.Time) { now.Store(&t) }
		set(start)
		e.store.SetClock(func() time.Time { return *now.Load() })
		first := e.postKey(t, "daily", `{"name":"Rex","categoryId":1}`)
		wantFirst(t, first)
		set(start.Add(models.IdempotencyTTL - time.Second))
		wantReplay(t, e.postKey(t, "daily", `{"name":"Rex","categoryId":1}`), first)
		set(start.Add(models.IdempotencyTTL))
		wantFirst(t, e.postKey(t, "daily", `{"name":"Tom","categoryId":1}`))
	})
}
