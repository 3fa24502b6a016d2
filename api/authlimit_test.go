package api_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"petstore/api"
	"petstore/config"
	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
)

// Failed authentications are limited per client address: the first 20 get
// their 401, the next ones 429 with Retry-After, while keys that work keep
// working from the same address, and other addresses are not affected.
func TestFailedAuthenticationsLimited(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		// The production burst, behind a trusted proxy on loopback
		// (TRUSTED_PROXIES): X-Forwarded-For names the client address. The
		// refill is slower than production's (one failure each 4 s, not
		// each 0.5 s), so that on a loaded machine no token comes back
		// between the burst and the checks of its 429s.
		o := newObserved(t, s, server.Deps{Config: config.Config{TrustedProxies: []string{"127.0.0.1", "::1"}}, AuthFailureLimit: 0.25})
		good := o.keys[0]
		from := func(addr, key string) response {
			t.Helper()
			req, err := http.NewRequest("GET", o.Srv.URL+"/v1/pets", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Forwarded-For", addr)
			if key != "" {
				req.Header.Set("Authorization", key)
			}
			res, err := o.Srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			r := testkit.ReadReply(t, res)
			checkAgainstOpenAPI(t, req, r)
			return r
		}
		const attacker = "203.0.113.9"
		if r := from(attacker, "Bearer "+good); r.Status != http.StatusOK {
			t.Fatalf("a valid key: %d %s", r.Status, r.Body)
		}
		wrongSecret := good[:models.KeyPrefixLen+1] + models.GenerateKey()[models.KeyPrefixLen+1:]
		bad := []string{"", "Basic abc", "Bearer not-a-key", "Bearer " + models.GenerateKey(), "Bearer " + wrongSecret}
		for i := range api.DefaultAuthFailureBurst {
			wantError(t, from(attacker, bad[i%len(bad)]), http.StatusUnauthorized, models.CodeUnauthorized)
		}
		for _, key := range bad {
			r := from(attacker, key)
			body := wantError(t, r, http.StatusTooManyRequests, models.CodeRateLimited)
			if wait, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || wait < 1 {
				t.Errorf("Retry-After = %q, want whole seconds >= 1", r.Header.Get("Retry-After"))
			}
			if !strings.Contains(body.Message, "without a valid API key from this address") {
				t.Errorf("message %q", body.Message)
			}
		}
		// A key that works is not slowed down, from the same address.
		for range 5 {
			if r := from(attacker, "Bearer "+good); r.Status != http.StatusOK {
				t.Fatalf("a valid key from the throttled address: %d %s", r.Status, r.Body)
			}
		}
		// Other addresses (an IPv6 client, a neighbour) get their own budget.
		for _, addr := range []string{"198.51.100.7", "2001:db8::1"} {
			wantError(t, from(addr, "Bearer "+models.GenerateKey()), http.StatusUnauthorized, models.CodeUnauthorized)
		}

		// A key this instance has not seen yet works at once from there too:
		// keys are checked before the address's budget is.
		_, fresh, err := s.CreateAPIKey(context.Background(), "new partner", "test")
		if err != nil {
			t.Fatal(err)
		}
		if r := from(attacker, "Bearer "+fresh); r.Status != http.StatusOK {
			t.Fatalf("a new valid key from the throttled address: %d %s", r.Status, r.Body)
		}
		// After the Retry-After, a failure gets its 401 again.
		r := from(attacker, "Bearer "+models.GenerateKey())
		wantError(t, r, http.StatusTooManyRequests, models.CodeRateLimited)
		wait, _ := strconv.Atoi(r.Header.Get("Retry-After"))
		time.Sleep(time.Duration(wait) * time.Second)
		wantError(t, from(attacker, "Bearer "+models.GenerateKey()), http.StatusUnauthorized, models.CodeUnauthorized)
	})
}

// sendFrom sends GET /v1/pets with authorization ("" for none) as if from
// addr, behind the trusted proxy on loopback, and returns the answer,
// checked against openapi.json.
func sendFrom(t *testing.T, o *observed, addr, authorization string) response {
	t.Helper()
	r, err := trySendFrom(t, o, addr, authorization)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// trySendFrom is sendFrom for a goroutine other than the test's: it
// returns the error instead of stopping the test.
func trySendFrom(t *testing.T, o *observed, addr, authorization string) (response, error) {
	t.Helper()
	req, err := http.NewRequest("GET", o.Srv.URL+"/v1/pets", nil)
	if err != nil {
		return response{}, err
	}
	req.Header.Set("X-Forwarded-For", addr)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	res, err := o.Srv.Client().Do(req)
	if err != nil {
		return response{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return response{}, err
	}
	r := response{Status: res.StatusCode, Header: res.Header, Body: b}
	checkAgainstOpenAPI(t, req, r)
	return r, nil
}

// wantThrottled asserts that send, a failure from an address kept over its
// budget, gets 429. A token refills twice a second, and a failure that
// comes just then takes it and gets its 401; the next one cannot.
func wantThrottled(t *testing.T, what string, send func() response) {
	t.Helper()
	r := send()
	if r.Status == http.StatusUnauthorized {
		r = send()
	}
	body := wantError(t, r, http.StatusTooManyRequests, models.CodeRateLimited)
	if wait, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || wait < 1 {
		t.Errorf("%s: Retry-After = %q, want whole seconds >= 1", what, r.Header.Get("Retry-After"))
	}
	if !strings.Contains(body.Message, "without a valid API key from this address") {
		t.Errorf("%s: message %q", what, body.Message)
	}
}

// wrongSecret returns key's prefix with another secret.
func wrongSecret(key string) string {
	return key[:models.KeyPrefixLen+1] + models.GenerateKey()[models.KeyPrefixLen+1:]
}

// A valid key is never refused for what others do from its address: while
// a client there fails 50 times a second, keeping the address over its
// budget, a key made a moment ago, a key last used an hour ago (before this
// instance started), and the successor of a key just revoked each get 200
// on their first request, on an instance that has not seen them work; the
// failures still get 429, the revoked key's included.
func TestValidKeysPassWhileTheirAddressKeepsFailing(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		var clock atomic.Pointer[time.Time]
		setClock := func(at time.Time) { clock.Store(&at) }
		now := time.Now().UTC()
		setClock(now.Add(-time.Hour))
		s.SetClock(func() time.Time { return *clock.Load() })

		// An hour ago, before this instance started: a key made and used.
		_, idleKey := createKey(t, s, "hourly job")
		if _, err := s.Authenticate(ctx, idleKey); err != nil {
			t.Fatal(err)
		}
		setClock(now)

		o := newObserved(t, s, server.Deps{Config: config.Config{TrustedProxies: []string{"127.0.0.1", "::1"}}, AuthFailureLimit: api.DefaultAuthFailureRate})
		const shared = "203.0.113.50"
		old, retired := createKey(t, s, "old worker")
		if r := sendFrom(t, o, shared, "Bearer "+retired); r.Status != http.StatusOK {
			t.Fatalf("the key to be revoked: %d %s", r.Status, r.Body)
		}

		// The failing client: 50 bad credentials a second from the
		// shared address.
		failing, stop := context.WithCancel(ctx)
		var throttled atomic.Int64
		var wg sync.WaitGroup
		wg.Go(func() {
			bad := []string{"Bearer " + models.GenerateKey(), "Bearer " + wrongSecret(o.keys[0]), "Bearer not-a-key", "Basic abc", ""}
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for i := 0; ; i++ {
				select {
				case <-failing.Done():
					return
				case <-tick.C:
				}
				r, err := trySendFrom(t, o, shared, bad[i%len(bad)])
				if err != nil {
					t.Error(err)
					return
				}
				switch r.Status {
				case http.StatusTooManyRequests:
					throttled.Add(1)
				case http.StatusUnauthorized:
				default:
					t.Errorf("failing client: status %d %s", r.Status, r.Body)
				}
			}
		})
		defer wg.Wait()
		defer stop()
		for deadline := time.Now().Add(30 * time.Second); throttled.Load() == 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the failing client was never throttled")
			}
		}
		wantThrottled(t, "a made-up key from the throttled address", func() response {
			return sendFrom(t, o, shared, "Bearer "+models.GenerateKey())
		})

		_, fresh := createKey(t, s, "new partner")
		if r := sendFrom(t, o, shared, "Bearer "+fresh); r.Status != http.StatusOK {
			t.Errorf("a key made a moment ago, first request: %d %s", r.Status, r.Body)
		}
		if r := sendFrom(t, o, shared, "Bearer "+idleKey); r.Status != http.StatusOK {
			t.Errorf("a key last used an hour ago, first request: %d %s", r.Status, r.Body)
		}
		if _, err := s.RevokeAPIKey(ctx, old.ID, "tester"); err != nil {
			t.Fatal(err)
		}
		_, successor := createKey(t, s, "old worker, renewed")
		if r := sendFrom(t, o, shared, "Bearer "+successor); r.Status != http.StatusOK {
			t.Errorf("the successor of a key just revoked, first request: %d %s", r.Status, r.Body)
		}
		// The old workers that still send the revoked key are throttled.
		wantThrottled(t, "the revoked key from the throttled address", func() response {
			return sendFrom(t, o, shared, "Bearer "+retired)
		})
	})
}

// A throttled bad request costs little: from an address over its budget,
// 100 concurrent wrong secrets under a known prefix read that key's row at
// most once per models.KeyCacheTTL, and 100 made-up keys read no row.
func TestThrottledFailuresReadFewRows(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		o := newObserved(t, s, server.Deps{Config: config.Config{TrustedProxies: []string{"127.0.0.1", "::1"}}, AuthFailureLimit: api.DefaultAuthFailureRate})
		const addr = "203.0.113.60"
		for range api.DefaultAuthFailureBurst + 1 {
			sendFrom(t, o, addr, "Bearer "+models.GenerateKey())
		}
		const n = 100
		for _, tc := range []struct {
			name string
			key  func() string
			most func(elapsed time.Duration) int64
		}{
			{"wrong secrets under a known prefix", func() string { return wrongSecret(o.keys[0]) },
				func(elapsed time.Duration) int64 { return 1 + int64(elapsed/models.KeyCacheTTL) }},
			{"made-up keys", models.GenerateKey, func(time.Duration) int64 { return 0 }},
		} {
			t.Run(tc.name, func(t *testing.T) {
				reads := s.KeyReads()
				start := time.Now()
				var wg sync.WaitGroup
				var refused atomic.Int64
				for range n {
					wg.Go(func() {
						r, err := trySendFrom(t, o, addr, "Bearer "+tc.key())
						if err != nil {
							t.Error(err)
							return
						}
						switch r.Status {
						case http.StatusTooManyRequests:
							refused.Add(1)
						case http.StatusUnauthorized: // a token refilled meanwhile (2 a second)
						default:
							t.Errorf("status %d %s", r.Status, r.Body)
						}
					})
				}
				wg.Wait()
				elapsed := time.Since(start)
				t.Logf("%d requests in %v: %d row reads, %d throttled", n, elapsed, s.KeyReads()-reads, refused.Load())
				if got := s.KeyReads() - reads; got > tc.most(elapsed) {
					t.Errorf("%d requests in %v read a key's row %d times, want at most %d", n, elapsed, got, tc.most(elapsed))
				}
				if got, least := refused.Load(), int64(n)-1-int64(2*elapsed.Seconds()); got < least {
					t.Errorf("%d of %d throttled in %v, want at least %d", got, n, elapsed, least)
				}
			})
		}
	})
}

// createKey makes a key named name, at the store's clock.
func createKey(t *testing.T, s *models.Store, name string) (models.APIKey, string) {
	t.Helper()
	k, key, err := s.CreateAPIKey(context.Background(), name, "test")
	if err != nil {
		t.Fatal(err)
	}
	return k, key
}
