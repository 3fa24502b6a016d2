package testkit

import (
	"net/http"
	"net/http/httptest"
	"petstore/server"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Observed is the HTTP surface served as serve serves it with metrics on:
// the metrics middleware on the whole engine (outside recovery), and the
// metrics served by a server of their own (METRICS_ADDR), never by the
// engine's.
type Observed struct {
	Srv     *httptest.Server // the API and the console
	Scraper *httptest.Server // the metrics address
	Metrics *server.Metrics
	// answered counts the answers Do read, for Scrape to wait for.
	answered atomic.Int64
}

// NewObserved serves d (whose Store is set) through NewHandler with metrics
// of its own; both servers close when the test ends.
func NewObserved(tb testing.TB, d server.Deps) *Observed {
	tb.Helper()
	d.Metrics = server.NewMetrics(d.Store.Pools())
	o := &Observed{Srv: httptest.NewServer(NewHandler(tb, d)), Scraper: httptest.NewServer(d.Metrics.Handler()), Metrics: d.Metrics}
	tb.Cleanup(o.Srv.Close)
	tb.Cleanup(o.Scraper.Close)
	return o
}

// Request returns a request to the server with key as bearer credential
// ("" for none) and body as JSON ("" for none).
func (o *Observed) Request(tb testing.TB, method, path, key, body string) *http.Request {
	tb.Helper()
	req, err := http.NewRequest(method, o.Srv.URL+path, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// Do sends req and reads the answer, failing the test on a transport
// error. Scrape counts on it: an answer read elsewhere is not waited for.
func (o *Observed) Do(tb testing.TB, req *http.Request) Reply {
	tb.Helper()
	r := Do(o.Srv.Client(), req)
	if r.Err != nil {
		tb.Fatal(r.Err)
	}
	o.answered.Add(1)
	return r
}

// Scrape reads /metrics on the metrics address, once every answer Do read
// is counted, and returns the text exposition.
func (o *Observed) Scrape(tb testing.TB) string {
	tb.Helper()
	o.settle(tb)
	res, err := o.Scraper.Client().Get(o.Scraper.URL + "/metrics")
	if err != nil {
		tb.Fatal(err)
	}
	r := ReadReply(tb, res)
	if r.Status != http.StatusOK {
		tb.Fatalf("GET /metrics: status %d, body %s", r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		tb.Errorf("GET /metrics: Content-Type %q, want the text exposition format", ct)
	}
	return string(r.Body)
}

// settle waits, at most 5 s, until every answer Do read is counted: the
// middleware counts a request just after its response is written, so a
// client may read the answer a moment before the count.
func (o *Observed) settle(tb testing.TB) {
	tb.Helper()
	want := float64(o.answered.Load())
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		counted := 0.0
		for line := range strings.Lines(Exposition(o.Metrics)) {
			if series, ok := strings.CutPrefix(line, "petstore_http_requests_total{"); ok {
				_, v, _ := strings.Cut(strings.TrimSpace(series), "} ")
				n, err := strconv.ParseFloat(v, 64)
				if err != nil {
					tb.Fatalf("petstore_http_requests_total line %q: %v", line, err)
				}
				counted += n
			}
		}
		if counted >= want {
			return
		}
	}
}

// Exposition returns m's metrics in the text format, as a scrape reads
// them, without a server.
func Exposition(m *server.Metrics) string {
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

// Sample returns the value of one series (name and labels exactly as
// exposed, labels in name order) in a text exposition.
func Sample(exposition, series string) (float64, bool) {
	for line := range strings.Lines(exposition) {
		if v, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// WantSample checks the value of a series in a text exposition.
func WantSample(tb testing.TB, exposition, series string, want float64) {
	tb.Helper()
	got, ok := Sample(exposition, series)
	if !ok {
		tb.Errorf("no series %s in /metrics", series)
	} else if got != want {
		tb.Errorf("%s = %v, want %v", series, got, want)
	}
}
