package server

import (
	"database/sql"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"petstore/api"
	"petstore/httpcode"
	"petstore/webhooks"
)

// unmatchedRoute is the route label of requests that matched no route (404s,
// and 405s, which Gin answers without a route). The raw path is never used as
// a label: anyone can send any path, and each distinct label value is a new
// time series kept in memory until the process ends.
const unmatchedRoute = "unmatched"

// Metrics is the server's Prometheus instrumentation: every request, API
// and console alike, the API's own counters (api.Metrics), the Go runtime,
// the process and the connection pools. It owns its own registry (not the
// process-global one), so a process or a test may build as many as it
// likes. Every method is safe on a nil *Metrics, which records nothing.
type Metrics struct {
	requests *prometheus.CounterVec
	// serverErrors counts the 5xx answers by reason (httpcode.Reason).
	serverErrors *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	api          *api.Metrics
	handler      http.Handler
	reg          *prometheus.Registry
}

// NewMetrics returns the instrumentation with the request and latency
// metrics, the API's counters, the Go runtime, process and build
// collectors and the statistics of each connection pool in pools, by name
// (exported by client_golang as go_sql_*{db_name="<name>"}; see
// models.Store.Pools).
func NewMetrics(pools map[string]*sql.DB) *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "petstore_http_requests_total",
			Help: "HTTP requests answered, by route pattern (or \"unmatched\"), method and status; 499 is a request whose client hung up before its answer.",
		}, []string{"route", "method", "status"}),
		serverErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "petstore_http_server_errors_total",
			Help: "HTTP answers of 500 or more, by reason: \"unavailable\" (the database refused, dropped or did not answer), \"timeout\" (a deadline of the service's own passed) or \"internal\".",
		}, []string{"reason"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "petstore_http_request_duration_seconds",
			Help: "Time from receiving a request to answering it, by route pattern (or \"unmatched\") and method.",
			// From a cached 1 ms answer to a database that barely answers
			// within the server's write timeout.
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method"}),
	}
	reg.MustRegister(m.requests, m.serverErrors, m.duration,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewBuildInfoCollector(),
	)
	m.api = api.NewMetrics(reg)
	for name, db := range pools {
		reg.MustRegister(collectors.NewDBStatsCollector(db, name))
	}
	// InstrumentMetricHandler adds promhttp_metric_handler_* so that
	// scrapes themselves can be watched.
	m.handler = promhttp.InstrumentMetricHandler(reg, promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	m.reg = reg
	return m
}

// WatchWebhooks exports the webhook dispatcher's figures: attempts by
// outcome on this instance, and the queue of deliveries of every instance.
func (m *Metrics) WatchWebhooks(stats func() webhooks.Stats) {
	if m == nil {
		return
	}
	outcome := func(name string, v func(webhooks.Stats) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "petstore_webhook_deliveries_total",
			Help:        "Webhook delivery attempts made by this instance, by outcome: delivered (a 2xx), retry (failed, tried again later), failed (failed, no attempt left).",
			ConstLabels: prometheus.Labels{"outcome": name}}, func() float64 { return float64(v(stats())) })
	}
	m.reg.MustRegister(
		outcome("delivered", func(s webhooks.Stats) int64 { return s.Delivered }),
		outcome("retry", func(s webhooks.Stats) int64 { return s.Retried }),
		outcome("failed", func(s webhooks.Stats) int64 { return s.Failed }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "petstore_webhook_queue_depth",
			Help: "Webhook deliveries waiting to be delivered (all endpoints, all instances; read every few seconds)."},
			func() float64 { return float64(stats().Pending) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "petstore_webhook_oldest_pending_seconds",
			Help: "Age of the oldest webhook delivery still waiting, in seconds; 0 when none waits."},
			func() float64 {
				if o := stats().OldestPending; !o.IsZero() {
					return time.Since(o).Seconds()
				}
				return 0
			}),
	)
}

// WatchBackups exports when the newest scheduled backup of any instance
// succeeded, as lastSuccess reads it (the zero time: none yet).
func (m *Metrics) WatchBackups(lastSuccess func() time.Time) {
	if m == nil {
		return
	}
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "petstore_backup_last_success_timestamp_seconds",
		Help: "Unix time at which the newest successful scheduled backup (of any instance) was written; 0 when none was."},
		func() float64 {
			if t := lastSuccess(); !t.IsZero() {
				return float64(t.UnixNano()) / 1e9
			}
			return 0
		}))
}

// Handler serves the metrics in the Prometheus text format, with no
// authentication of its own: mount it on a private listen address
// (METRICS_ADDR) only. It is never served on the API's address: partners
// are outside callers, and the runtime, pool and console-route counters are
// not theirs to read.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return m.handler
}

// apiMetrics is where the API records its own counters; nil (no metrics)
// when m is nil.
func (m *Metrics) apiMetrics() *api.Metrics {
	if m == nil {
		return nil
	}
	return m.api
}

// middleware counts and times every request, with the status api.Status
// gives (499 for a client that hung up). New installs it on the engine
// before any route, outside api.HangUps and the recovery middleware (so
// that recovered panics are counted as the 500s they become); it then also
// sees NoRoute and NoMethod answers.
func (m *Metrics) middleware() gin.HandlerFunc {
	if m == nil {
		return func(c *gin.Context) { c.Next() }
	}
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		route := c.FullPath()
		if route == "" {
			route = unmatchedRoute
		}
		method := methodLabel(c.Request.Method)
		status := api.Status(c)
		m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
		if status >= 500 {
			reason := c.GetString(httpcode.ReasonKey)
			if reason == "" {
				reason = httpcode.ReasonInternal // a panic, or an answer no error writer made
			}
			m.serverErrors.WithLabelValues(reason).Inc()
		}
		m.duration.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
	}
}

// methodLabel bounds the method label to the standard methods: a client may
// send any token as a method.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "other"
}
