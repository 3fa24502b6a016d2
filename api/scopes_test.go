package api_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"petstore/config"
	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
)

// issue creates a key with scopes (and an expiry, "" for none) in the
// store and returns its bearer header.
func issue(t *testing.T, s *models.Store, name, expires string, scopes ...string) map[string]string {
	t.Helper()
	_, key, err := s.CreateAPIKeyFrom(context.Background(), models.APIKeyInput{Name: name, Scopes: scopes, Expires: expires}, "test")
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"Authorization": "Bearer " + key}
}

// with adds a name and value to a copy of headers.
func with(headers map[string]string, name, value string) map[string]string {
	h := map[string]string{name: value}
	for k, v := range headers {
		h[k] = v
	}
	return h
}

// wantInsufficientScope asserts the exact 403 of a key lacking need when it
// has has.
func wantInsufficientScope(t *testing.T, r response, need, has string) {
	t.Helper()
	if r.Status != http.StatusForbidden {
		t.Fatalf("status = %d, want 403; body %s", r.Status, r.Body)
	}
	if got, want := r.Header.Get("WWW-Authenticate"), `Bearer realm="petstore", error="insufficient_scope", scope="`+need+`"`; got != want {
		t.Errorf("WWW-Authenticate = %q\nwant %q", got, want)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	want := `{"code":"insufficient_scope","message":"This API key lacks the ` + need + ` scope this request needs (it has ` + has +
		`). Ask the store for a key with ` + need + `.","status":403}` + "\n"
	if string(r.Body) != want {
		t.Errorf("body = %s\nwant   %s", r.Body, want)
	}
}

// A key may do what its scopes allow and nothing else: pets:read the GETs,
// pets:write the POST. A refusal is 403 insufficient_scope and changes
// nothing.
func TestScopes(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		p := decodePet(t, e.post(`{"name":"Rex","categoryId":1}`), http.StatusCreated)
		pet := "/v1/pets/" + strconv.FormatInt(p.ID, 10)
		reader := issue(t, e.store, "reader", "", "pets:read")
		writer := issue(t, e.store, "writer", "", "pets:write")
		metrics := issue(t, e.store, "scraper", "", "metrics:read")
		body := `{"name":"Sneaky","categoryId":1}`

		for _, path := range []string{"/v1/pets", pet} {
			if r := e.do("GET", path, reader, ""); r.Status != http.StatusOK {
				t.Errorf("reader GET %s: %d %s", path, r.Status, r.Body)
			}
			wantInsufficientScope(t, e.do("GET", path, writer, ""), "pets:read", "pets:write")
			wantInsufficientScope(t, e.do("GET", path, metrics, ""), "pets:read", "metrics:read")
		}
		wantInsufficientScope(t, e.do("POST", "/v1/pets", with(reader, "Content-Type", "application/json"), body), "pets:write", "pets:read")
		wantInsufficientScope(t, e.do("POST", "/v1/pets", with(metrics, "Content-Type", "application/json"), body), "pets:write", "metrics:read")
		// The scope is checked before the body: even a bad one is 403.
		wantInsufficientScope(t, e.do("POST", "/v1/pets", with(reader, "Content-Type", "text/plain"), "{nope"), "pets:write", "pets:read")
		if n := e.countPets(); n != 1 {
			t.Fatalf("%d pets after refused creates, want 1", n)
		}
		if r := e.do("POST", "/v1/pets", with(writer, "Content-Type", "application/json"), body); r.Status != http.StatusCreated {
			t.Errorf("writer POST: %d %s", r.Status, r.Body)
		}
		// Unknown paths and methods need no scope: 404 and 405, whatever the key's scopes.
		wantError(t, e.do("GET", "/v1/nothing", writer, ""), http.StatusNotFound, models.CodeNotFound)
		wantError(t, e.do("DELETE", "/v1/pets", reader, ""), http.StatusMethodNotAllowed, "method_not_allowed")
	})
}

// A refusal for scope spends the key's rate limit like any other answer:
// a read-only key sending writes gets 403 until its quota is spent, then
// 429, for writes and reads alike.
func TestScopeRefusalSpendsQuota(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		o := newObserved(t, s, server.Deps{Config: config.Config{RateLimitRPS: 0.001, RateLimitBurst: 2}})
		_, key, err := s.CreateAPIKeyFrom(context.Background(), models.APIKeyInput{Name: "reader", Scopes: []string{"pets:read"}}, "test")
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			r := o.do("POST", "/v1/pets", key, `{"name":"Rex","categoryId":1}`)
			wantInsufficientScope(t, r, "pets:write", "pets:read")
			// Every answer to an accepted key states its quota, spent.
			if got, want := r.Header.Get("RateLimit"), `"default";r=`+strconv.Itoa(1-i); !strings.HasPrefix(got, want+";") {
				t.Fatalf("refused create %d: RateLimit %q, want %s", i+1, got, want)
			}
			if got := r.Header.Get("RateLimit-Policy"); got == "" {
				t.Fatalf("refused create %d: no RateLimit-Policy", i+1)
			}
		}
		for _, rq := range []struct{ method, path, body string }{
			{"POST", "/v1/pets", `{"name":"Rex","categoryId":1}`},
			{"GET", "/v1/pets", ""},
		} {
			r := o.do(rq.method, rq.path, key, rq.body)
			wantError(t, r, http.StatusTooManyRequests, models.CodeRateLimited)
			if r.Header.Get("Retry-After") == "" {
				t.Errorf("%s %s over the limit: no Retry-After", rq.method, rq.path)
			}
		}
		testkit.WantSample(t, o.Scrape(t), "petstore_rate_limited_total", 2)
	})
}

// An expired key is refused with 401 invalid_token saying when it expired,
// on every operation, including while its check is cached; other keys go
// on.
func TestExpiredKey(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		created := time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)
		clock := created
		e.store.SetClock(func() time.Time { return clock })
		h := issue(t, e.store, "short", "1d", "pets:read", "pets:write")
		expiry := created.Add(24 * time.Hour)

		clock = expiry.Add(-time.Second)
		if r := e.do("GET", "/v1/pets", h, ""); r.Status != http.StatusOK {
			t.Fatalf("a second before expiry: %d %s", r.Status, r.Body)
		}
		// At once (the key's check is cached): refused.
		clock = expiry
		const msg = "This API key expired on 2027-01-03T03:04:05Z. Ask the store for a new key."
		requests := []struct{ method, path, body string }{
			{"GET", "/v1/pets", ""},
			{"GET", "/v1/pets/1", ""},
			{"POST", "/v1/pets", `{"name":"Rex","categoryId":1}`},
			{"GET", "/v1/nothing", ""},
		}
		for _, rq := range requests {
			r := e.do(rq.method, rq.path, with(h, "Content-Type", "application/json"), rq.body)
			if r.Status != http.StatusUnauthorized {
				t.Fatalf("%s %s with an expired key: status %d, body %s", rq.method, rq.path, r.Status, r.Body)
			}
			if got, want := r.Header.Get("WWW-Authenticate"), `Bearer realm="petstore", error="invalid_token", error_description="`+msg+`"`; got != want {
				t.Errorf("%s %s: WWW-Authenticate = %q\nwant %q", rq.method, rq.path, got, want)
			}
			if want := `{"code":"unauthorized","message":"` + msg + `","status":401}` + "\n"; string(r.Body) != want {
				t.Errorf("%s %s: body = %s\nwant   %s", rq.method, rq.path, r.Body, want)
			}
		}
		if n := e.countPets(); n != 0 {
			t.Errorf("%d pets created with an expired key", n)
		}
		// The env's own key, with no expiry, goes on.
		if r := e.get("/v1/pets"); r.Status != http.StatusOK {
			t.Errorf("a key without expiry: %d", r.Status)
		}
		// A wrong secret under the expired key's prefix is not told it expired.
		key := strings.TrimPrefix(h["Authorization"], "Bearer ")
		last := map[bool]string{true: "b", false: "a"}[key[len(key)-1] == 'a']
		wantError(t, e.do("GET", "/v1/pets", map[string]string{"Authorization": "Bearer " + key[:len(key)-1] + last}, ""),
			http.StatusUnauthorized, models.CodeUnauthorized)
	})
}

// Every call of the deprecated getPet made with a valid key is counted by
// key prefix, and the key's last deprecated call is stored.
func TestDeprecatedCallsCounted(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		o := newObserved(t, s, server.Deps{})
		a, b := o.keys[0], o.keys[1]
		lister, listerKey, err := s.CreateAPIKeyFrom(ctx, models.APIKeyInput{Name: "lister", Scopes: []string{"pets:write"}}, "test")
		if err != nil {
			t.Fatal(err)
		}
		if r := o.do("POST", "/v1/pets", a, `{"name":"Rex","categoryId":1}`); r.Status != http.StatusCreated {
			t.Fatal(r.Status)
		}
		for range 3 {
			if r := o.do("GET", "/v1/pets/1", a, ""); r.Status != http.StatusOK {
				t.Fatalf("GET /v1/pets/1: %d", r.Status)
			}
		}
		o.do("GET", "/v1/pets/999", b, "")                    // 404: a call all the same
		o.do("GET", "/v1/pets/1", listerKey, "")              // 403: a call all the same
		o.do("GET", "/v1/pets/1", "", "")                     // 401: no key, not counted
		o.do("GET", "/v1/pets/1", "pst_aaaaaaaa_"+a[13:], "") // a made-up key, not counted
		o.do("GET", "/v1/pets", b, "")                        // not the deprecated endpoint

		m := o.Scrape(t)
		prefix := func(key string) string { return key[:models.KeyPrefixLen] }
		testkit.WantSample(t, m, `petstore_deprecated_calls_total{key_prefix="`+prefix(a)+`"}`, 3)
		testkit.WantSample(t, m, `petstore_deprecated_calls_total{key_prefix="`+prefix(b)+`"}`, 1)
		testkit.WantSample(t, m, `petstore_deprecated_calls_total{key_prefix="`+lister.Prefix+`"}`, 1)
		if n := strings.Count(m, "\npetstore_deprecated_calls_total{"); n != 3 {
			t.Errorf("%d deprecated-call series, want 3:\n%s", n, m)
		}

		keys, err := s.ListAPIKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if k.DeprecatedCallAt == nil || time.Since(*k.DeprecatedCallAt) > time.Minute {
				t.Errorf("key %s: last deprecated call %v, want about now", k.Name, k.DeprecatedCallAt)
			}
		}
	})
}
