package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
	"petstore/webhooks"
)

// observed is the server as serve builds it with metrics on (the kit's
// Observed), with one API key.
type observed struct {
	*testkit.Observed
	t   *testing.T
	key string
}

func newObserved(t *testing.T, store *models.Store) *observed {
	t.Helper()
	o := &observed{Observed: testkit.NewObserved(t, server.Deps{Store: store}), t: t}
	_, key, err := store.CreateAPIKey(context.Background(), "partner", "test")
	if err != nil {
		t.Fatal(err)
	}
	o.key = key
	return o
}

// do sends a request with key as bearer credential ("" for none).
func (o *observed) do(method, path, key, body string) testkit.Reply {
	o.t.Helper()
	return o.Do(o.t, o.Request(o.t, method, path, key, body))
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		o := newObserved(t, s)
		key := o.key

		// The API's address serves no metrics, whatever the key: partners
		// must not read the runtime, pool and console-route counters.
		for _, k := range []string{"", key, "pst_aaaaaaaa_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"} {
			testkit.WantAPIError(t, fmt.Sprintf("GET /metrics with key %q", k), o.do("GET", "/metrics", k, ""), http.StatusNotFound, models.CodeNotFound)
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

		m := o.Scrape(t)
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
			testkit.WantSample(t, m, series, want)
		}
		// modelstest.Open's pool size; SQLite's readers are at most four per CPU.
		pool := 20
		if s.Driver() == models.DriverSQLite {
			pool = min(pool, 4*runtime.GOMAXPROCS(0))
		}
		testkit.WantSample(t, m, `go_sql_max_open_connections{db_name="petstore"}`, float64(pool))
		// SQLite's writes go through one connection of their own.
		if _, ok := s.Pools()["petstore_writer"]; ok != (s.Driver() == models.DriverSQLite) {
			t.Errorf("writer pool listed: %v, want it on SQLite only", ok)
		} else if ok {
			testkit.WantSample(t, m, `go_sql_max_open_connections{db_name="petstore_writer"}`, 1)
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
		if strings.Contains(o.Scrape(t), `route="/metrics"`) {
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
		r := testkit.ReadReply(t, res)
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
	srv := httptest.NewServer(testkit.NewHandler(t, server.Deps{Store: s, Metrics: m}))
	defer srv.Close()
	for path, want := range map[string]int{"/metrics": http.StatusNotFound, "/v1/pets": http.StatusOK} {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if r := testkit.ReadReply(t, res); r.Status != want {
			t.Errorf("GET %s: status %d, want %d", path, r.Status, want)
		}
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("a nil Metrics serves its metrics: status %d, want 404", rec.Code)
	}
}

// The webhook dispatcher's figures are exported: attempts by outcome, the
// queue's depth and the age of its oldest delivery.
func TestWebhookMetrics(t *testing.T) {
	t.Parallel()
	m := server.NewMetrics(nil)
	oldest := time.Now().Add(-90 * time.Second)
	m.WatchWebhooks(func() webhooks.Stats {
		return webhooks.Stats{Delivered: 7, Retried: 3, Failed: 1, Pending: 4, OldestPending: oldest}
	})
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`petstore_webhook_deliveries_total{outcome="delivered"} 7`,
		`petstore_webhook_deliveries_total{outcome="retry"} 3`,
		`petstore_webhook_deliveries_total{outcome="failed"} 1`,
		`petstore_webhook_queue_depth 4`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
	var age float64
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, "petstore_webhook_oldest_pending_seconds "); ok {
			fmt.Sscan(v, &age)
		}
	}
	if age < 89 || age > 200 {
		t.Errorf("oldest pending age %v s, want about 90", age)
	}
}
