// Package api serves the partner-facing JSON API under /v1: the pet
// endpoints, bearer API-key authentication with a per-key rate limit, the
// one JSON error writer, the health probes, the embedded OpenAPI document
// and the counters only the API feeds (Metrics).
package api

import (
	"log/slog"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/time/rate"

	"petstore/httpcode"
	"petstore/models"
)

// Options configures the API.
type Options struct {
	// PublicURL is the external base URL (no trailing slash) used in Link
	// headers and the OpenAPI servers list; "" gives relative links.
	PublicURL string
	// Now is the clock (the getPet sunset depends on it); nil means time.Now.
	Now func() time.Time
	// Logger receives server errors; nil discards them.
	Logger *slog.Logger
	// RateLimit is how many requests per second one API key may make,
	// sustained, on this instance (the buckets are in memory, so N
	// instances allow up to N times as much); past it, 429. 0 (the zero
	// Options, as handler tests use), a negative value or rate.Inf turns
	// the limit off: the production default (50/s, bursts of 100) is
	// config's to set, with the other defaults.
	RateLimit rate.Limit
	// RateBurst is how many requests a rested key may make at once before
	// RateLimit applies; 0 (or less) means two seconds' worth of RateLimit.
	RateBurst int
	// AuthFailureLimit is how many failed authentications per second one
	// client address (by c.ClientIP, so TRUSTED_PROXIES applies; IPv6 by
	// /64) may make, sustained, on this instance, after a burst of
	// AuthFailureBurst; past it, its failures get 429 instead of 401, while
	// a valid key from it still goes on. 0 (the zero Options, as handler
	// tests use) turns it off; server.New sets DefaultAuthFailureRate and
	// DefaultAuthFailureBurst.
	AuthFailureLimit rate.Limit
	AuthFailureBurst int
	// Metrics receives the rate-limit refusals and the calls of the
	// deprecated getPet; nil records nothing. server.NewMetrics makes it on
	// the registry it serves on METRICS_ADDR only, never under the API.
	Metrics *Metrics
}

// API holds the handlers' dependencies.
type API struct {
	store     *models.Store
	publicURL string
	now       func() time.Time
	log       *slog.Logger
	openapi   []byte
	limiter   *limiter        // nil: no rate limit
	failures  *failureLimiter // nil: failed authentications are not limited
	metrics   *Metrics        // nil: no metrics
}

// New returns the API over store.
func New(store *models.Store, o Options) *API {
	a := &API{store: store, publicURL: o.PublicURL, now: o.Now, log: o.Logger, metrics: o.Metrics}
	// The limiter keeps real time even when tests freeze Now for the
	// sunset: a frozen clock would never refill a bucket.
	a.limiter = newLimiter(o.RateLimit, o.RateBurst, time.Now)
	a.failures = newFailureLimiter(o.AuthFailureLimit, o.AuthFailureBurst, time.Now)
	if a.now == nil {
		a.now = time.Now
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	a.openapi = renderOpenAPI(o.PublicURL)
	return a
}

// Prefix is the path every API route starts with.
const Prefix = "/v1"

// Register mounts the API routes and the health probes on r.
func (a *API) Register(r gin.IRouter) {
	r.GET("/healthz", a.healthz)
	r.GET("/readyz", a.readyz)

	v1 := r.Group(Prefix, apiHeaders)
	get(v1, "/openapi.json", a.openAPI)
	get(v1, "/pets", a.require(models.ScopePetsRead), a.listPets)
	v1.POST("/pets", a.require(models.ScopePetsWrite), a.createPet)
	get(v1, "/events", a.require(models.ScopePetsRead), a.listEvents)
	// Deprecation headers come before authentication so that every
	// response of this route, errors included, carries them; the calls
	// are counted by key once authentication has run.
	get(v1, "/pets/:petId", a.deprecated, a.countDeprecatedCall, a.require(models.ScopePetsRead), a.getPet)
}

// get mounts a GET route and its HEAD twin, the same handlers: RFC 9110
// (section 9.3.2) expects HEAD wherever GET works, with the status and
// headers GET would answer, and net/http sends no body for HEAD. Every GET
// route of the API is mounted through it.
func get(r gin.IRoutes, path string, handlers ...gin.HandlerFunc) {
	r.GET(path, handlers...)
	r.HEAD(path, handlers...)
}

// IsAPIPath reports whether a request path belongs to the API (and so gets
// JSON errors).
func IsAPIPath(path string) bool {
	return path == Prefix || strings.HasPrefix(path, Prefix+"/")
}

// apiHeaders sets the headers every API response carries.
func apiHeaders(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	c.Next()
}

// NoRoute answers unknown paths: 401 first under /v1 when the request is
// not authenticated (so the API's shape is not revealed to strangers), else
// 404 with the Error body. A CORS preflight gets refusePreflight's answer.
func (a *API) NoRoute(c *gin.Context) {
	if IsAPIPath(c.Request.URL.Path) {
		apiHeaders(c)
		if isPreflight(c.Request) {
			a.refusePreflight(c)
			return
		}
		if a.authenticate(c); c.IsAborted() {
			return
		}
	}
	writeError(c, a.log, &models.Error{Code: models.CodeNotFound, Message: "No such endpoint. See /v1/openapi.json for the API."})
}

// NoMethod answers a known path with a method it does not allow (Gin has
// already set the Allow header): 401 first under /v1, else 405. A CORS
// preflight gets refusePreflight's answer.
func (a *API) NoMethod(c *gin.Context) {
	if IsAPIPath(c.Request.URL.Path) {
		apiHeaders(c)
		if isPreflight(c.Request) {
			a.refusePreflight(c)
			return
		}
		if a.authenticate(c); c.IsAborted() {
			return
		}
	}
	writeError(c, a.log, &models.Error{Code: httpcode.MethodNotAllowed,
		Message: "Method " + c.Request.Method + " is not allowed here; allowed: " + c.Writer.Header().Get("Allow") + "."})
}

// Recover answers a panic in a handler with a generic 500 and logs it.
func (a *API) Recover(c *gin.Context, recovered any) {
	a.log.Error("panic serving request", "method", c.Request.Method, "path", c.Request.URL.Path, "panic", recovered)
	if c.Writer.Written() {
		c.Abort()
		return
	}
	writeError(c, a.log, &models.Error{Code: models.CodeInternal, Message: internalMessage})
}
