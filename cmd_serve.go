package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime/debug"
	"time"

	"petstore/api"
	"petstore/config"
	"petstore/models"
	"petstore/server"
	"petstore/webhooks"
)

// serve runs the HTTP server until ctx ends (SIGINT or SIGTERM): it takes
// its ports, opens and migrates the database, creates the first staff
// account on a first start, then serves the HTTP surface (package server)
// and, on METRICS_ADDR, the metrics.
func (c cli) serve(ctx context.Context, args []string) int {
	if _, code, ok := c.flags("serve", "Runs the HTTP server until SIGINT or SIGTERM; configured by the environment (see petstore --help).", args, nil); !ok {
		return code
	}
	logs := newLogBuffer(c.stderr) // one write per batch of lines, not per request
	defer logs.Flush()
	c.stderr = logs
	cfg, err := config.Load(c.getenv)
	if err != nil {
		return c.fail(err)
	}
	log := c.logger(cfg)
	tuneGC(cfg, c.getenv)
	// Take the ports first: a taken port fails at once, not after migrating.
	ln, metricsLn, err := listen(cfg)
	if err != nil {
		return c.fail(err)
	}
	defer ln.Close()
	if metricsLn != nil {
		defer metricsLn.Close()
	}
	store, _, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	base := cfg.PublicURL
	if base == "" {
		base = localURL(ln.Addr())
	}
	if err := firstStart(ctx, c.stdout, store, base); err != nil {
		return c.fail(err)
	}
	metrics := server.NewMetrics(store.Pools())
	if cfg.Backups.Dir != "" {
		backups := newBackupSchedule(store, cfg.Backups, log)
		if err := backups.prepare(); err != nil {
			return c.fail(err)
		}
		metrics.WatchBackups(backups.LastSuccess)
		stopBackups := backups.start(ctx)
		defer stopBackups()
	}
	handler, err := server.New(ctx, server.Deps{Config: cfg, Store: store, Logger: log, Now: time.Now, Metrics: metrics})
	if err != nil {
		return c.fail(err)
	}
	var metricsSrv *http.Server
	if metricsLn != nil {
		metricsSrv = serveMetrics(metricsLn, metrics, log)
	}
	srv := server.NewHTTPServer(handler, log)
	// Readers waiting on the change feed answer at once when the shutdown
	// starts, instead of holding it up for their whole wait.
	srv.RegisterOnShutdown(store.StopEventWaits)
	store.PurgeEventsEvery(cfg.EventsRetention)
	store.PurgeArchiveEvery(cfg.ArchiveRetention)
	store.PurgeUndoEvery(cfg.UndoWindow)
	store.ResumeImportsEvery()
	go cleanSessions(ctx, store, log)
	dispatcher := startWebhooks(ctx, store, cfg, log, metrics)
	defer dispatcher.wait()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("petstore listening", "addr", ln.Addr().String(), "url", base, "database", cfg.Database.Redacted, "version", buildVersion())
	return c.waitForShutdown(ctx, log, served, srv, metricsSrv)
}

// mysqlGCPercent is the collector's target (GOGC) while serving over
// MySQL, unless GOGC is set. The server's live heap is then tiny, so at
// Go's default of 100 it collects many times a second under load; 200
// trades a few MiB of peak RSS for less CPU per request (the figures are
// in docs/performance.md). Over SQLite the default stays: the database's
// page caches live in the process, and its peak RSS is already closer to
// the memory budget.
const mysqlGCPercent = 200

// tuneGC sets mysqlGCPercent when the database is MySQL and GOGC is unset.
func tuneGC(cfg config.Config, getenv func(string) string) {
	if cfg.Database.Driver == config.MySQL && getenv("GOGC") == "" {
		debug.SetGCPercent(mysqlGCPercent)
	}
}

// listen takes LISTEN_ADDR and, when set, METRICS_ADDR.
func listen(cfg config.Config) (ln, metricsLn net.Listener, err error) {
	if ln, err = net.Listen("tcp", cfg.ListenAddr); err != nil {
		return nil, nil, fmt.Errorf("LISTEN_ADDR: cannot listen on %s: %w", cfg.ListenAddr, err)
	}
	if cfg.MetricsAddr == "" {
		return ln, nil, nil
	}
	if metricsLn, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
		ln.Close()
		return nil, nil, fmt.Errorf("METRICS_ADDR: cannot listen on %s: %w", cfg.MetricsAddr, err)
	}
	return ln, metricsLn, nil
}

// firstStart creates the first staff account and an API key when there is
// no staff account yet, and prints them on w, this once.
func firstStart(ctx context.Context, w io.Writer, store *models.Store, base string) error {
	boot, err := store.EnsureBootstrap(ctx)
	if err != nil {
		return fmt.Errorf("create the first staff account: %w", err)
	}
	if boot != nil {
		printBootstrap(w, boot, base)
	}
	return nil
}

func printBootstrap(w io.Writer, b *models.Bootstrap, base string) {
	fmt.Fprintf(w, `
First start: created a staff account and an API key. They are shown only this once; keep them safe.

  Admin console:  %s/admin
  Username:       %s
  Password:       %s
  API key:        %s

Try the API:
  curl -H 'Authorization: Bearer %s' %s/v1/pets

`, base, b.Username, b.Password, b.APIKey, b.APIKey, base)
}

// localURL turns a listener address into a URL a person on this machine can open.
func localURL(addr net.Addr) string {
	host, port, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// serveMetrics serves the metrics and the runtime's profiles on ln, the
// private METRICS_ADDR, for operators only.
func serveMetrics(ln net.Listener, metrics *server.Metrics, log *slog.Logger) *http.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics.Handler())
	// go tool pprof http://METRICS_ADDR/debug/pprof/profile?seconds=20
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	srv := server.NewHTTPServer(mux, log)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", "error", err)
		}
	}()
	log.Info("metrics listening", "addr", ln.Addr().String())
	return srv
}

// waitForShutdown waits until the server fails or ctx ends; then it lets
// the requests in flight finish, for at most 15 seconds.
func (c cli) waitForShutdown(ctx context.Context, log *slog.Logger, served <-chan error, srv, metricsSrv *http.Server) int {
	select {
	case err := <-served:
		return c.fail(fmt.Errorf("server stopped: %w", err))
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing requests in flight")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if metricsSrv != nil {
		go metricsSrv.Shutdown(shutdownCtx)
	}
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Error("shutdown did not finish in time", "error", err)
		return 1
	}
	log.Info("stopped")
	return 0
}

// cleanSessions deletes expired console sessions every hour until ctx ends.
// Every instance may run it: the DELETE is idempotent.
func cleanSessions(ctx context.Context, store *models.Store, log *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if n, err := store.DeleteExpiredSessions(ctx); err != nil && ctx.Err() == nil {
			log.Warn("could not delete expired sessions", "error", err)
		} else if n > 0 {
			log.Info("deleted expired sessions", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// webhookDispatcher is serve's webhook dispatcher, running until serve's
// context ends.
type webhookDispatcher struct{ done chan struct{} }

// startWebhooks starts delivering the change feed's events to the webhook
// endpoints, and exports the deliveries' figures.
func startWebhooks(ctx context.Context, store *models.Store, cfg config.Config, log *slog.Logger, metrics *server.Metrics) webhookDispatcher {
	o := webhookOptions(cfg)
	o.Encode, o.Logger = api.EventJSON, log
	d := webhooks.New(store, o)
	metrics.WatchWebhooks(d.Stats)
	w := webhookDispatcher{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		d.Run(ctx)
	}()
	return w
}

// wait waits for the deliveries under way to end (each within the
// webhook timeout) once serve's context has ended.
func (w webhookDispatcher) wait() { <-w.done }
