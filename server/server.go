// Package server builds petstore's whole HTTP surface as one http.Handler:
// the JSON API and its probes, the admin console and its static files, the
// answers to unknown paths and methods, and the production middleware
// around them all.
//
// It is a package of its own, not part of main, because two kinds of
// callers need the very same handler: main's serve command, and the api
// and web package tests, which cannot import package main. So those tests
// exercise what production serves, middleware included.
package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/time/rate"

	"petstore/api"
	"petstore/config"
	"petstore/models"
	"petstore/static"
	"petstore/web"
)

// Deps is what the HTTP surface depends on.
type Deps struct {
	// Config gives the public URL, the trusted proxies and the per-key
	// rate limit (0 turns it off, as in the zero Config).
	Config config.Config
	Store  *models.Store
	// Logger receives the request log and server errors; nil discards them.
	Logger *slog.Logger
	// Now is the clock of the API and the console; nil means time.Now.
	Now func() time.Time
	// Metrics counts and times every request; nil records nothing.
	Metrics *Metrics

	// AuthFailureLimit, when not zero, replaces the production limit of
	// failed authentications per client address (api.DefaultAuthFailureRate
	// a second, bursts of api.DefaultAuthFailureBurst); rate.Inf turns it
	// off. A test hook: the API's tests send more bad credentials from the
	// one loopback address than the limit allows. serve leaves it zero.
	AuthFailureLimit rate.Limit
	// TestRoutes, when not nil, adds routes behind the production
	// middleware, after the real ones. A test hook (a route that panics, to
	// see recovery answer); serve leaves it nil.
	TestRoutes func(gin.IRoutes)
}

// Handler is the whole HTTP surface.
type Handler struct {
	engine *gin.Engine
	serve  http.Handler // engine behind compression
}

// New builds the HTTP surface over d. ctx bounds the console's start (it
// reads or creates the session keys).
func New(ctx context.Context, d Deps) (*Handler, error) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	// With no TRUSTED_PROXIES, X-Forwarded-For is ignored: the peer is the client.
	if err := r.SetTrustedProxies(d.Config.TrustedProxies); err != nil {
		return nil, fmt.Errorf("TRUSTED_PROXIES: %w", err)
	}
	failures := d.AuthFailureLimit
	if failures == 0 {
		failures = api.DefaultAuthFailureRate
	}
	a := api.New(d.Store, api.Options{PublicURL: d.Config.PublicURL, Now: d.Now, Logger: d.Logger,
		RateLimit: rate.Limit(d.Config.RateLimitRPS), RateBurst: d.Config.RateLimitBurst, Metrics: d.Metrics.apiMetrics(),
		AuthFailureLimit: failures, AuthFailureBurst: api.DefaultAuthFailureBurst})
	console, err := web.New(ctx, d.Store, web.Options{PublicURL: d.Config.PublicURL, Now: d.Now, Logger: d.Logger,
		WebhookAllowPrivate: d.Config.Webhooks.AllowPrivate, Location: d.Config.TimeZone, OpenAPI: api.OpenAPIDocument,
		ArchiveRetention: d.Config.ArchiveRetention, UndoWindow: d.Config.UndoWindow})
	if err != nil {
		return nil, fmt.Errorf("start the console: %w", err)
	}
	// Metrics sit outside recovery so that recovered panics count as 500s;
	// HangUps inside both, so that both see a hung-up request as 499.
	r.Use(requestLog(d.Logger), d.Metrics.middleware(), api.HangUps(), gin.CustomRecoveryWithWriter(io.Discard, func(c *gin.Context, err any) {
		if web.IsConsolePath(c.Request.URL.Path) {
			console.Recover(c, err)
			return
		}
		a.Recover(c, err)
	}))
	routes(r, a, console, d.TestRoutes)
	serve, err := compressed(r)
	if err != nil {
		return nil, err
	}
	return &Handler{engine: r, serve: serve}, nil
}

// routes mounts every route, and the answers for paths and methods that
// match none: in the style of the part they fall in, HTML in the console
// and JSON elsewhere. Metrics are never served here but on METRICS_ADDR
// (serve): partner API keys must not read runtime, pool and console-route
// counters.
func routes(r *gin.Engine, a *api.API, console *web.Web, testRoutes func(gin.IRoutes)) {
	a.Register(r)       // GET /healthz, /readyz; /v1: GET and HEAD openapi.json, pets, pets/:petId and events; POST pets
	console.Register(r) // GET /; GET and HEAD /static/*file; /admin: sign-in, pets, API keys, webhooks, users, audit
	r.GET(static.FaviconPath, gin.WrapH(static.Favicon()))
	if testRoutes != nil {
		testRoutes(r)
	}
	r.NoRoute(byPart(console.NotFound, a.NoRoute))
	r.NoMethod(byPart(console.MethodNotAllowed, a.NoMethod))
}

// byPart answers with inConsole for console paths, else with other.
func byPart(inConsole, other gin.HandlerFunc) gin.HandlerFunc {
	return func(c *gin.Context) {
		if web.IsConsolePath(c.Request.URL.Path) {
			inConsole(c)
			return
		}
		other(c)
	}
}

// ServeHTTP serves a request. Gin builds its trailing-slash redirects from
// X-Forwarded-Prefix, which any client can send: drop it before Gin sees
// the request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	req.Header.Del("X-Forwarded-Prefix")
	h.serve.ServeHTTP(w, req)
}

// Routes lists every route (method and path pattern). It is a test hook:
// the test that checks every route refuses strangers walks this list, so a
// new route cannot slip past it.
func (h *Handler) Routes() gin.RoutesInfo { return h.engine.Routes() }
