package api_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"petstore/api"
	"petstore/config"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
)

// Failed authentications are limited per client address: the first 20 get
// their 401, the next ones 429 with Retry-After (before any database work),
// while keys that work keep working from the same address, and other
// addresses are not affected.
func TestFailedAuthenticationsLimited(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		// The production limit, behind a trusted proxy on loopback
		// (TRUSTED_PROXIES): X-Forwarded-For names the client address.
		o := newObserved(t, s, server.Deps{Config: config.Config{TrustedProxies: []string{"127.0.0.1", "::1"}}, AuthFailureLimit: api.DefaultAuthFailureRate})
		good := o.keys[0]
		from := func(addr, key string) response {
			t.Helper()
			req, err := http.NewRequest("GET", o.srv.URL+"/v1/pets", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Forwarded-For", addr)
			if key != "" {
				req.Header.Set("Authorization", key)
			}
			res, err := o.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			r := readResponse(t, res)
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

		// A key this instance has not yet seen work waits like the rest
		// from that address: telling it apart would take a database read.
		_, fresh, err := s.CreateAPIKey(context.Background(), "new partner", "test")
		if err != nil {
			t.Fatal(err)
		}
		r := from(attacker, "Bearer "+fresh)
		wantError(t, r, http.StatusTooManyRequests, models.CodeRateLimited)
		wait, _ := strconv.Atoi(r.Header.Get("Retry-After"))
		time.Sleep(time.Duration(wait) * time.Second)
		if r := from(attacker, "Bearer "+fresh); r.Status != http.StatusOK {
			t.Fatalf("after Retry-After, a valid key: %d %s", r.Status, r.Body)
		}
		// After the wait, a failure gets its 401 again.
		time.Sleep(time.Duration(wait) * time.Second)
		wantError(t, from(attacker, "Bearer "+models.GenerateKey()), http.StatusUnauthorized, models.CodeUnauthorized)
	})
}
