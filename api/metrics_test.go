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

// observed is the server as serve builds it with metrics on (the kit's
// Observed, with GET /test/panic), with two keys.
type observed struct {
	*testkit.Observed
	t    *testing.T
	keys [2]string
}

func newObserved(t *testing.T, store *models.Store, d server.Deps) *observed {
	t.Helper()
	d.Store = store
	ob := &observed{Observed: testkit.NewObserved(t, withPanicRoute(d)), t: t}
	for i := range ob.keys {
		_, key, err := store.CreateAPIKey(context.Background(), "partner "+strconv.Itoa(i), "test")
		if err != nil {
			t.Fatal(err)
		}
		ob.keys[i] = key
	}
	return ob
}

// do sends a request with key as bearer credential ("" for none) and checks
// the response against openapi.json, except for a 429 of an operation
// whose entry does not document 429 yet.
func (o *observed) do(method, path, key, body string) response {
	o.t.Helper()
	req := o.Request(o.t, method, path, key, body)
	r := o.Do(o.t, req)
	if r.Status != http.StatusTooManyRequests || documents(req, http.StatusTooManyRequests) {
		checkAgainstOpenAPI(o.t, req, r)
	}
	return r
}

// documents reports whether the operation req matches in openapi.json
// lists status among its responses.
func documents(req *http.Request, status int) bool {
	m := req.Clone(context.Background())
	m.URL.Scheme, m.URL.Host = "http", specHost
	route, _, err := specRouter.FindRoute(m)
	return err == nil && route.Operation.Responses.Value(strconv.Itoa(status)) != nil
}

// TestRateLimit drives a low limit (1 request/s, bursts of 5) over real
// HTTP: the 6th rapid request of a key is refused with 429, an Error body
// and Retry-After, without touching other keys or the 401 of strangers, and
// the key works again after the announced wait.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		o := newObserved(t, s, server.Deps{Config: config.Config{RateLimitRPS: 1, RateLimitBurst: 5}})
		limited, other := o.keys[0], o.keys[1]

		for i := range 5 {
			if r := o.do("GET", "/v1/pets", limited, ""); r.Status != http.StatusOK {
				t.Fatalf("request %d of the burst: status %d, body %s", i+1, r.Status, r.Body)
			}
		}
		r := o.do("GET", "/v1/pets", limited, "")
		body := wantError(t, r, http.StatusTooManyRequests, models.CodeRateLimited)
		if !strings.Contains(body.Message, "1 per second with bursts of 5") {
			t.Errorf("message %q does not state the limit", body.Message)
		}
		wait, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if err != nil || wait < 1 {
			t.Fatalf("Retry-After = %q, want whole seconds >= 1", r.Header.Get("Retry-After"))
		}
		if r.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("429 without the API headers: Cache-Control %q", r.Header.Get("Cache-Control"))
		}

		// The bucket is the key's, whatever the route.
		for _, path := range []string{"/v1/pets/1", "/v1/nothing-here"} {
			wantError(t, o.do("GET", path, limited, ""), http.StatusTooManyRequests, models.CodeRateLimited)
		}
		wantError(t, o.do("POST", "/v1/pets", limited, `{"name":"Rex","categoryId":1}`), http.StatusTooManyRequests, models.CodeRateLimited)
		refused := 4.0

		if r := o.do("GET", "/v1/pets", other, ""); r.Status != http.StatusOK {
			t.Fatalf("another key: status %d, body %s", r.Status, r.Body)
		}
		// Strangers get their 401 first, however many they send.
		for range 10 {
			wantError(t, o.do("GET", "/v1/pets", "", ""), http.StatusUnauthorized, models.CodeUnauthorized)
			wantError(t, o.do("GET", "/v1/pets", "pst_aaaaaaaa_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", ""), http.StatusUnauthorized, models.CodeUnauthorized)
		}

		m := o.Scrape(t)
		testkit.WantSample(t, m, "petstore_rate_limited_total", refused)
		testkit.WantSample(t, m, `petstore_http_requests_total{method="GET",route="/v1/pets",status="429"}`, 1)
		testkit.WantSample(t, m, `petstore_http_requests_total{method="GET",route="/v1/pets",status="401"}`, 20)

		time.Sleep(time.Duration(wait) * time.Second)
		if r := o.do("GET", "/v1/pets", limited, ""); r.Status != http.StatusOK {
			t.Fatalf("after waiting Retry-After: status %d, body %s", r.Status, r.Body)
		}
		testkit.WantSample(t, o.Scrape(t), "petstore_rate_limited_total", refused)
	})
}
