package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
)

// observed is the server as serve builds it with metrics on: the metrics
// middleware on the whole engine (outside recovery), and the metrics served
// by a server of their own (METRICS_ADDR), never by the engine's. It has
// one API key.
type observed struct {
	t       *testing.T
	srv     *httptest.Server
	scraper *httptest.Server // the metrics address
	metrics *server.Metrics
	key     string
	// answered counts the responses read, for settle.
	answered atomic.Int64
}

func newObserved(t *testing.T, store *models.Store) *observed {
	t.Helper()
	m := server.NewMetrics(store.Pools())
	o := &observed{t: t, srv: httptest.NewServer(newHandler(t, server.Deps{Store: store, Metrics: m})),
		scraper: httptest.NewServer(m.Handler()), metrics: m}
	t.Cleanup(o.srv.Close)
	t.Cleanup(o.scraper.Close)
	_, key, err := store.CreateAPIKey(context.Background(), "partner", "test")
	if err != nil {
		t.Fatal(err)
	}
	o.key = key
	return o
}

// do sends a request with key as bearer credential ("" for none).
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
	return r
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

// wantSample asserts the value of one series (name and labels exactly as
// exposed, labels in name order) in a text exposition.
func wantSample(t *testing.T, exposition, series string, want float64) {
	t.Helper()
	for line := range strings.Lines(exposition) {
		if v, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), series+" "); ok {
			if got, err := strconv.ParseFloat(v, 64); err != nil || got != want {
				t.Errorf("%s = %s, want %v", series, v, want)
			}
			return
		}
	}
	t.Errorf("no series %s in /metrics", series)
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		o := newObserved(t, s)
		key := o.key

		// The API's address serves no metrics, whatever the key: partners
		// must not read the runtime, pool and console-route counters.
		for _, k := range []string{"", key, "pst_aaaaaaaa_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"} {
			wantError(t, o.do("GET", "/metrics", k, ""), http.StatusNotFound, models.CodeNotFound)
		}

		requests := []struct {
			method, path, key, body string
			status                  int
		}{
			{"GET", "/v1/pets", key, "", 200},
			{"GET", "/v1/pets?limit=1", key, "", 200},
			{"GET", "/v1/pets?limit=abc", key, "", 400},
			{"POST", "/v1/pets", key, `{"name":"Rex","categoryId":1}`, 201},
			{"GET", "/v1/pets/987654", key, "", 404},
			{"GET", "/v1/secret-path-1", key, "", 404},
			{"GET", "/secret-path-2/x", "", "", 404},
			{"DELETE", "/v1/pets", key, "", 405},
			{"BREW", "/v1/pets", key, "", 405},
		}
		for _, rq := range requests {
			if r := o.do(rq.method, rq.path, rq.key, rq.body); r.Status != rq.status {
				t.Fatalf("%s %s: status %d, want %d; body %s", rq.method, rq.path, r.Status, rq.status, r.Body)
			}
		}

		m := o.scrape()
		for series, want := range map[string]float64{
			`petstore_http_requests_total{method="GET",route="/v1/pets",status="200"}`:               2,
			`petstore_http_requests_total{method="GET",route="/v1/pets",status="400"}`:               1,
			`petstore_http_requests_total{method="POST",route="/v1/pets",status="201"}`:              1,
			`petstore_http_requests_total{method="GET",route="/v1/pets/:petId",status="404"}`:        1,
			`petstore_http_requests_total{method="GET",route="unmatched",status="404"}`:              5, // 2 + 3 of /metrics
			`petstore_http_requests_total{method="DELETE",route="unmatched",status="405"}`:           1,
			`petstore_http_requests_total{method="other",route="unmatched",status="405"}`:            1,
			`petstore_http_request_duration_seconds_count{method="GET",route="/v1/pets"}`:            3,
			`petstore_http_request_duration_seconds_bucket{method="GET",route="/v1/pets",le="+Inf"}`: 3,
			`petstore_rate_limited_total`: 0,
		} {
			wantSample(t, m, series, want)
		}
		// modelstest.Open's pool size; SQLite's readers are at most four per CPU.
		pool := 20
		if s.Driver() == models.DriverSQLite {
			pool = min(pool, 4*runtime.GOMAXPROCS(0))
		}
		wantSample(t, m, `go_sql_max_open_connections{db_name="petstore"}`, float64(pool))
		// SQLite's writes go through one connection of their own.
		if _, ok := s.Pools()["petstore_writer"]; ok != (s.Driver() == models.DriverSQLite) {
			t.Errorf("writer pool listed: %v, want it on SQLite only", ok)
		} else if ok {
			wantSample(t, m, `go_sql_max_open_connections{db_name="petstore_writer"}`, 1)
		}
		for _, name := range []string{
			"# TYPE petstore_http_request_duration_seconds histogram",
			`petstore_http_request_duration_seconds_bucket{method="GET",route="/v1/pets",le="0.001"} `,
			`go_sql_open_connections{db_name="petstore"} `,
			`go_sql_in_use_connections{db_name="petstore"} `,
			`go_sql_wait_count_total{db_name="petstore"} `,
			"go_goroutines ",
			"go_build_info{",
		} {
			if !strings.Contains(m, "\n"+name) {
				t.Errorf("no %q in /metrics", name)
			}
		}
		if runtime.GOOS == "linux" && !strings.Contains(m, "\nprocess_cpu_seconds_total ") {
			t.Error("no process metrics in /metrics")
		}
		if strings.Contains(m, "secret-path") {
			t.Error("a raw request path became a label")
		}

		// Scrapes are not requests to the API: they are not counted there.
		if strings.Contains(o.scrape(), `route="/metrics"`) {
			t.Error("a scrape was counted as an API request")
		}
	})
}

// The handler for a separate metrics address (METRICS_ADDR) needs no
// credential, and each Metrics has its own registry.
func TestMetricsHandler(t *testing.T) {
	t.Parallel()
	for range 2 {
		m := server.NewMetrics(nil)
		srv := httptest.NewServer(m.Handler())
		res, err := srv.Client().Get(srv.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		r := readResponse(t, res)
		srv.Close()
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), "\ngo_goroutines ") {
			t.Fatalf("status %d, body %.300s", r.Status, r.Body)
		}
		if strings.Contains(string(r.Body), "go_sql_") {
			t.Error("pool metrics without a database")
		}
	}
}

// There is no /metrics route on the API's engine, and a nil *Metrics
// records nothing without failing.
func TestNoMetrics(t *testing.T) {
	t.Parallel()
	s := modelstest.Open(t, models.DriverSQLite)
	_, key, err := s.CreateAPIKey(context.Background(), "partner", "test")
	if err != nil {
		t.Fatal(err)
	}
	var m *server.Metrics
	srv := httptest.NewServer(newHandler(t, server.Deps{Store: s, Metrics: m}))
	defer srv.Close()
	for path, want := range map[string]int{"/metrics": http.StatusNotFound, "/v1/pets": http.StatusOK} {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if r := readResponse(t, res); r.Status != want {
			t.Errorf("GET %s: status %d, want %d", path, r.Status, want)
		}
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("a nil Metrics serves its metrics: status %d, want 404", rec.Code)
	}
}
