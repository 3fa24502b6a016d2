package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"petstore/config"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
)

// observed is the server as serve builds it with metrics on (server.New):
// the metrics middleware on the whole engine (outside recovery), and the
// metrics served by a server of their own (METRICS_ADDR), never by the
// API's. It has two keys.
type observed struct {
	t       *testing.T
	srv     *httptest.Server
	scraper *httptest.Server // the metrics address
	metrics *server.Metrics
	keys    [2]string
	// answered counts the responses read, for settle.
	answered atomic.Int64
}

func newObserved(t *testing.T, store *models.Store, d server.Deps) *observed {
	t.Helper()
	m := server.NewMetrics(store.Pools())
	d.Store, d.Metrics = store, m
	ob := &observed{t: t, srv: httptest.NewServer(newEngine(t, d)), scraper: httptest.NewServer(m.Handler()), metrics: m}
	t.Cleanup(ob.srv.Close)
	t.Cleanup(ob.scraper.Close)
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
	req, err := http.NewRequest(method, o.srv.URL+path, strings.NewReader(body))
	if err != nil {
		o.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := o.srv.Client().Do(req)
	if err != nil {
		o.t.Fatal(err)
	}
	r := readResponse(o.t, res)
	o.answered.Add(1)
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

// scrape reads /metrics on the metrics address and returns the text
// exposition.
func (o *observed) scrape() string {
	o.t.Helper()
	o.settle()
	res, err := o.scraper.Client().Get(o.scraper.URL + "/metrics")
	if err != nil {
		o.t.Fatal(err)
	}
	r := readResponse(o.t, res)
	if r.Status != http.StatusOK {
		o.t.Fatalf("GET /metrics: status %d, body %s", r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		o.t.Errorf("GET /metrics: Content-Type %q, want the text exposition format", ct)
	}
	return string(r.Body)
}

// settle waits until every request answered so far is counted: the
// middleware counts a request just after its response is written, so a
// client may read the answer a moment before the count.
func (o *observed) settle() {
	want := float64(o.answered.Load())
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		rec := httptest.NewRecorder()
		o.metrics.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		counted := 0.0
		for line := range strings.Lines(rec.Body.String()) {
			if series, ok := strings.CutPrefix(line, "petstore_http_requests_total{"); ok {
				_, v, _ := strings.Cut(strings.TrimSpace(series), "} ")
				n, err := strconv.ParseFloat(v, 64)
				if err != nil {
					o.t.Fatalf("petstore_http_requests_total line %q: %v", line, err)
				}
				counted += n
			}
		}
		if counted >= want {
			return
		}
	}
}

// sample returns the value of one series (name and labels exactly as
// exposed, labels in name order) in a text exposition.
func sample(exposition, series string) (float64, bool) {
	for line := range strings.Lines(exposition) {
		if v, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// wantSample asserts the value of a series.
func wantSample(t *testing.T, exposition, series string, want float64) {
	t.Helper()
	got, ok := sample(exposition, series)
	if !ok {
		t.Errorf("no series %s in /metrics", series)
	} else if got != want {
		t.Errorf("%s = %v, want %v", series, got, want)
	}
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

		m := o.scrape()
		wantSample(t, m, "petstore_rate_limited_total", refused)
		wantSample(t, m, `petstore_http_requests_total{method="GET",route="/v1/pets",status="429"}`, 1)
		wantSample(t, m, `petstore_http_requests_total{method="GET",route="/v1/pets",status="401"}`, 20)

		time.Sleep(time.Duration(wait) * time.Second)
		if r := o.do("GET", "/v1/pets", limited, ""); r.Status != http.StatusOK {
			t.Fatalf("after waiting Retry-After: status %d, body %s", r.Status, r.Body)
		}
		wantSample(t, o.scrape(), "petstore_rate_limited_total", refused)
	})
}
