package api

import "github.com/prometheus/client_golang/prometheus"

// Metrics holds the counters only the API feeds: rate-limit refusals and
// calls of the deprecated getPet. They live on the registry of the whole
// server (server.NewMetrics), which also counts and times every request.
// Every method is safe on a nil *Metrics, which records nothing.
type Metrics struct {
	rateLimited prometheus.Counter
	// deprecatedCalls counts the calls of the deprecated getPet by API key
	// prefix: a label value per key staff issued, a bounded set.
	deprecatedCalls *prometheus.CounterVec
}

// NewMetrics returns the API's counters, registered on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		rateLimited: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "petstore_rate_limited_total",
			Help: "API requests refused with 429 because their API key exceeded its rate limit on this instance.",
		}),
		deprecatedCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "petstore_deprecated_calls_total",
			Help: "Calls of the deprecated GET /v1/pets/{petId} made with a valid API key, by the key's public prefix.",
		}, []string{"key_prefix"}),
	}
	reg.MustRegister(m.rateLimited, m.deprecatedCalls)
	return m
}

// countRateLimited records one request refused by the rate limiter.
func (m *Metrics) countRateLimited() {
	if m != nil {
		m.rateLimited.Inc()
	}
}

// countDeprecatedCall records one call of the deprecated getPet by the key
// with prefix.
func (m *Metrics) countDeprecatedCall(prefix string) {
	if m != nil {
		m.deprecatedCalls.WithLabelValues(prefix).Inc()
	}
}
