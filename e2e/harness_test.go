package e2e

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"petstore/config"
	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
	"testing"
	"time"
)

// The harness of the whole-product tests. They start the product in one of
// two ways: as the built binary (testkit.StartBinary, testkit.ServeBinary,
// testkit.RunBinary: built once per test binary, without cgo, as released),
// for the fault, multi-instance and load tests; or as the product's HTTP
// handler alone, startSite, served on loopback over a fresh store the test
// reaches directly, for the tests that need the store, the route list or
// the server's limits (hostile input, routes, browser journeys).
// newProductHandler is the one call of the product's HTTP constructor
// (server.New) in this package's tests. They talk to it through the kit's
// API client and console (internal/testkit).

func TestMain(m *testing.M) { modelstest.Main(m) }

// forEachSite runs fn as a parallel subtest per database driver, each with
// a site of its own.
func forEachSite(t *testing.T, fn func(t *testing.T, s *site)) {
	t.Helper()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) { fn(t, startSite(t, driver)) })
}

// The staff account of every site.
const (
	staffUser     = "alice"
	staffPassword = "correct horse battery"
)

// siteTimeout bounds each request to a site: a hang fails the test instead
// of stalling it, while bodies of several MiB under -race still fit.
const siteTimeout = 30 * time.Second

// newProductHandler builds the product's HTTP surface, as serve serves it,
// over store with the configuration serve has when the environment sets
// nothing. It is the one place this package's tests call server.New.
func newProductHandler(tb testing.TB, store *models.Store, log *slog.Logger, metrics *server.Metrics) *server.Handler {
	tb.Helper()
	cfg, err := config.Load(testkit.Env(nil))
	if err != nil {
		tb.Fatal(err)
	}
	h, err := server.New(tb.Context(), server.Deps{Config: cfg, Store: store, Logger: log, Now: time.Now, Metrics: metrics})
	if err != nil {
		tb.Fatalf("build the HTTP handler: %v", err)
	}
	return h
}

// serveOnLoopback serves h on a loopback port with the limits serve gives
// its server (header size, timeouts); adjust, when not nil, changes them
// first. The server is closed when the test ends.
func serveOnLoopback(tb testing.TB, h http.Handler, log *slog.Logger, adjust func(*http.Server)) *httptest.Server {
	tb.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config = server.NewHTTPServer(h, log)
	if adjust != nil {
		adjust(srv.Config)
	}
	srv.Start()
	tb.Cleanup(srv.Close)
	return srv
}

// site is the product's HTTP handler served on loopback over a fresh
// database holding one staff account (staffUser, an admin), which the test reaches
// directly through store. Its log is shown if the test fails.
type site struct {
	store   *models.Store
	handler *server.Handler
	log     *slog.Logger
	logs    *testkit.SyncBuffer // what log wrote (text lines)
	metrics *server.Metrics     // what the handler counted
	srv     *httptest.Server
	base    string // http://127.0.0.1:PORT
}

// startSite starts a site on a fresh database on driver; it stops when the
// test ends.
func startSite(tb testing.TB, driver string) *site {
	tb.Helper()
	store := modelstest.Open(tb, driver)
	if _, err := store.CreateUserWithRole(context.Background(), staffUser, staffPassword, models.RoleAdmin, "test"); err != nil {
		tb.Fatalf("create the staff account: %v", err)
	}
	logs := &testkit.SyncBuffer{}
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("server log (last lines):\n%s", testkit.Tail(logs.String(), 200))
		}
	})
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	metrics := server.NewMetrics(store.Pools())
	h := newProductHandler(tb, store, log, metrics)
	srv := serveOnLoopback(tb, h, log, nil)
	return &site{store: store, handler: h, log: log, logs: logs, metrics: metrics, srv: srv, base: srv.URL}
}

// addr is the site's host:port, for raw connections.
func (s *site) addr() string { return s.srv.Listener.Addr().String() }

// newKey issues a fresh API key through the store.
func (s *site) newKey(tb testing.TB) string {
	tb.Helper()
	_, key, err := s.store.CreateAPIKey(context.Background(), "partner", "test")
	if err != nil {
		tb.Fatal(err)
	}
	return key
}

// apiClient returns a client of the site's API with key ("" for none).
func (s *site) apiClient(key string) *testkit.APIClient {
	a := testkit.NewAPIClient(s.base, key)
	a.HTTP.Timeout = siteTimeout
	return a
}

// console returns a browser on the site's console, signed out.
func (s *site) console() *testkit.Console {
	c := testkit.NewConsole(s.base)
	c.HTTP.Timeout = siteTimeout
	return c
}
