// Command petstore serves the animal store: the bearer-authenticated JSON
// API under /v1 for partner apps (and, in time, the admin console under
// /admin), over one database. It also carries the operator commands:
// migrate, user create|list|disable|enable|reset-password, apikey
// create|list|revoke, seed and version.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"petstore/api"
	"petstore/config"
	"petstore/models"
	"petstore/server"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// cli is what a command may touch; tests give their own.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

const usage = `petstore serves the animal store's JSON API and admin console.

Usage:
  petstore [serve]                        run the server (the default)
  petstore migrate                        bring the database schema up to date
  petstore user create --username NAME    add a staff account (password: first line of stdin)
  petstore user list                      list staff accounts and their state
  petstore user disable --username NAME   disable an account: its sessions end, sign-in is refused
  petstore user enable --username NAME    enable a disabled account again
  petstore user reset-password --username NAME
                                          give an account a one-time password (printed alone on stdout)
  petstore apikey create --name NAME      issue an API key (printed alone on stdout)
  petstore apikey list                    list API keys (no secrets)
  petstore apikey revoke ID               revoke an API key at once
  petstore seed --pets N                  add N example pets (1 to 10000000), to try the console or measure
  petstore version                        print the version
  petstore healthcheck [--ready]          probe the local server (for container health checks)

Configuration is read from the environment: LISTEN_ADDR, DATABASE_URL,
PETSTORE_PUBLIC_URL, DATABASE_MAX_OPEN_CONNS, DATABASE_MAX_IDLE_CONNS,
DATABASE_CONN_MAX_LIFETIME, DATABASE_CONNECT_TIMEOUT, DATABASE_REPLICA_URLS,
TRUSTED_PROXIES, LOG_FORMAT,
RATE_LIMIT_RPS, RATE_LIMIT_BURST, METRICS_ADDR.
See README.md.
`

// run is the whole program; it returns the exit code: 0 success, 1 failure,
// 2 bad usage.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	c := cli{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	cmd, rest := "serve", args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, rest = args[0], args[1:]
	}
	if len(args) == 1 && isHelp(args[0]) {
		cmd = "help"
	}
	switch cmd {
	case "serve":
		return c.serve(ctx, rest)
	case "migrate":
		return c.migrate(ctx, rest)
	case "user":
		return c.sub(ctx, "user", rest, map[string]func(context.Context, []string) int{"create": c.userCreate,
			"list": c.userList, "disable": c.userDisable, "enable": c.userEnable, "reset-password": c.userResetPassword})
	case "apikey":
		return c.sub(ctx, "apikey", rest, map[string]func(context.Context, []string) int{
			"create": c.apikeyCreate, "list": c.apikeyList, "revoke": c.apikeyRevoke})
	case "seed":
		return c.seed(ctx, rest)
	case "version":
		fmt.Fprintf(stdout, "petstore %s (%s)\n", buildVersion(), runtime.Version())
		return 0
	case "healthcheck":
		return c.healthcheck(ctx, rest)
	case "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "petstore: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
}

func (c cli) sub(ctx context.Context, name string, args []string, cmds map[string]func(context.Context, []string) int) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		w := c.stdout
		code := 0
		if len(args) == 0 {
			w, code = c.stderr, 2
		}
		fmt.Fprintf(w, "Usage: petstore %s COMMAND (one of:", name)
		for _, k := range []string{"create", "list", "disable", "enable", "reset-password", "revoke"} {
			if cmds[k] != nil {
				fmt.Fprint(w, " "+k)
			}
		}
		fmt.Fprintf(w, "); petstore %s COMMAND --help for details\n", name)
		return code
	}
	fn, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(c.stderr, "petstore: unknown command %q for %s\n", args[0], name)
		return 2
	}
	return fn(ctx, args[1:])
}

// flags parses a command's flags; it returns ok=false with the exit code
// when the command should stop (after --help or a usage error).
func (c cli) flags(name, synopsis string, args []string, define func(*flag.FlagSet)) (*flag.FlagSet, int, bool) {
	fs := flag.NewFlagSet("petstore "+name, flag.ContinueOnError)
	// Asked-for help goes to stdout (so it can be paged); usage errors to stderr.
	fs.SetOutput(c.stderr)
	for _, a := range args {
		if isHelp(a) {
			fs.SetOutput(c.stdout)
		}
	}
	if define != nil {
		define(fs)
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: petstore %s\n\n%s\n", name, synopsis)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, 0, false
		}
		return nil, 2, false
	}
	return fs, 0, true
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}

// fail prints one line and returns exit code 1. Configuration errors name
// their variable.
func (c cli) fail(err error) int {
	fmt.Fprintf(c.stderr, "petstore: %v\n", err)
	return 1
}

// open loads the configuration, connects and migrates.
func (c cli) open(ctx context.Context, log *slog.Logger) (config.Config, *models.Store, error) {
	cfg, err := config.Load(c.getenv)
	if err != nil {
		return cfg, nil, err
	}
	db := cfg.Database
	store, err := models.Open(ctx, models.Options{
		Driver: string(db.Driver), DSN: db.DSN, ReplicaDSNs: db.ReplicaDSNs, MaxOpenConns: db.MaxOpenConns, MaxIdleConns: db.MaxIdleConns,
		ConnMaxLifetime: db.ConnMaxLifetime, ConnectTimeout: db.ConnectTimeout, Logger: log,
	})
	if err != nil {
		return cfg, nil, fmt.Errorf("DATABASE_URL: cannot use %s: %w", db.Redacted, err)
	}
	res, err := store.Migrate(ctx)
	if err != nil {
		store.Close()
		return cfg, nil, fmt.Errorf("DATABASE_URL: cannot migrate %s: %w", db.Redacted, err)
	}
	if len(res.Applied) > 0 {
		log.Info("database migrated", "database", db.Redacted, "applied", res.Applied, "version", res.Version)
	}
	return cfg, store, nil
}

func (c cli) logger() *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if strings.EqualFold(c.getenv("LOG_FORMAT"), "json") {
		return slog.New(slog.NewJSONHandler(c.stderr, opts))
	}
	return slog.New(slog.NewTextHandler(c.stderr, opts))
}

func (c cli) serve(ctx context.Context, args []string) int {
	if _, code, ok := c.flags("serve", "Runs the HTTP server until SIGINT or SIGTERM; configured by the environment (see petstore --help).", args, nil); !ok {
		return code
	}
	logs := newLogBuffer(c.stderr) // one write per batch of lines, not per request
	defer logs.Flush()
	c.stderr = logs
	log := c.logger()
	cfg, err := config.Load(c.getenv)
	if err != nil {
		return c.fail(err)
	}
	// Take the port first: a taken port fails at once, not after migrating.
	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return c.fail(fmt.Errorf("LISTEN_ADDR: cannot listen on %s: %w", cfg.ListenAddr, err))
	}
	defer ln.Close()
	var metricsLn net.Listener
	if cfg.MetricsAddr != "" {
		if metricsLn, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			return c.fail(fmt.Errorf("METRICS_ADDR: cannot listen on %s: %w", cfg.MetricsAddr, err))
		}
		defer metricsLn.Close()
	}
	_, store, err := c.open(ctx, log)
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	base := cfg.PublicURL
	if base == "" {
		base = localURL(ln.Addr())
	}
	boot, err := store.EnsureBootstrap(ctx)
	if err != nil {
		return c.fail(fmt.Errorf("create the first staff account: %w", err))
	}
	if boot != nil {
		printBootstrap(c.stdout, boot, base)
	}

	metrics := api.NewMetrics(store.Pools())
	router, err := server.New(ctx, server.Deps{Config: cfg, Store: store, Logger: log, Now: time.Now, Metrics: metrics})
	if err != nil {
		return c.fail(err)
	}
	var metricsSrv *http.Server
	if metricsLn != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", metrics.Handler())
		// The runtime's profiles, for operators only (like the metrics):
		// go tool pprof http://METRICS_ADDR/debug/pprof/profile?seconds=20
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
		metricsSrv = newHTTPServer(mux, log)
		go func() {
			if err := metricsSrv.Serve(metricsLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("metrics server stopped", "error", err)
			}
		}()
		log.Info("metrics listening", "addr", metricsLn.Addr().String())
	}
	srv := newHTTPServer(router, log)
	go cleanSessions(ctx, store, log)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("petstore listening", "addr", ln.Addr().String(), "url", base, "database", cfg.Database.Redacted, "version", buildVersion())

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

// newHTTPServer returns a server whose timeouts keep slow or stalled
// clients from pinning connections: headers within 10 s, the whole request
// within 30 s, the answer within 60 s, idle connections closed after 2 min.
// Request bodies are capped by the handlers (1 MiB API, 64 KiB forms).
func newHTTPServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
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

// localURL turns a listener address into a URL a person on this machine can open.
func localURL(addr net.Addr) string {
	host, port, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
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

// healthcheck asks the server on LISTEN_ADDR whether it is alive (or, with
// --ready, whether its database answers). Containers use it as their
// HEALTHCHECK, as they have no shell or curl.
func (c cli) healthcheck(ctx context.Context, args []string) int {
	var ready bool
	var target string
	_, code, ok := c.flags("healthcheck [--ready] [--url URL]", "Exits 0 when the local server answers /healthz (or /readyz with --ready) with 200 within 3 seconds, else 1.", args,
		func(fs *flag.FlagSet) {
			fs.BoolVar(&ready, "ready", false, "check /readyz (the database answers) instead of /healthz")
			fs.StringVar(&target, "url", "", "base URL of the server (default: from LISTEN_ADDR)")
		})
	if !ok {
		return code
	}
	if target == "" {
		cfg, err := config.Load(c.getenv)
		if err != nil {
			return c.fail(err)
		}
		host, port, _ := net.SplitHostPort(cfg.ListenAddr)
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			host = "127.0.0.1"
		}
		target = "http://" + net.JoinHostPort(host, port)
	}
	path := "/healthz"
	if ready {
		path = "/readyz"
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(target, "/")+path, nil)
	if err != nil {
		return c.fail(fmt.Errorf("healthcheck: %w", err))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return c.fail(fmt.Errorf("healthcheck: %w", err))
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return c.fail(fmt.Errorf("healthcheck: %s answered %s", path, res.Status))
	}
	fmt.Fprintf(c.stdout, "%s: %s\n", path, res.Status)
	return 0
}

func (c cli) migrate(ctx context.Context, args []string) int {
	if _, code, ok := c.flags("migrate", "Applies the pending schema migrations to DATABASE_URL and prints the schema version.", args, nil); !ok {
		return code
	}
	cfg, err := config.Load(c.getenv)
	if err != nil {
		return c.fail(err)
	}
	_, store, err := c.open(ctx, c.logger())
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	res, err := store.Migrate(ctx)
	if err != nil {
		return c.fail(err)
	}
	fmt.Fprintf(c.stdout, "%s: schema at version %d\n", cfg.Database.Redacted, res.Version)
	return 0
}

func (c cli) userCreate(ctx context.Context, args []string) int {
	var username string
	fs, code, ok := c.flags("user create --username NAME", "Adds a staff account for the admin console. The password is the first line of standard input: at least 12 characters, not a common password, not the username, not one character repeated.", args,
		func(fs *flag.FlagSet) {
			fs.StringVar(&username, "username", "", "the new account's username (required)")
		})
	if !ok {
		return code
	}
	if username == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	line, err := bufio.NewReader(c.stdin).ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		return c.fail(errors.New("no password on standard input: pipe it in, as in: echo 'a long password' | petstore user create --username NAME"))
	}
	password := strings.TrimRight(line, "\r\n")
	_, store, err := c.open(ctx, c.quietLogger())
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	u, err := store.CreateUser(ctx, username, password, "cli")
	if err != nil {
		return c.fail(userMessage(err))
	}
	fmt.Fprintf(c.stdout, "created staff account %s (id %d)\n", u.Username, u.ID)
	return 0
}

func (c cli) userList(ctx context.Context, args []string) int {
	if _, code, ok := c.flags("user list", "Lists the staff accounts: id, username, state (enabled, disabled, or must-change-password after a reset) and creation time.", args, nil); !ok {
		return code
	}
	_, store, err := c.open(ctx, c.quietLogger())
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	users, err := store.ListUsers(ctx)
	if err != nil {
		return c.fail(userMessage(err))
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUSERNAME\tSTATE\tCREATED")
	for _, u := range users {
		state := "enabled"
		switch {
		case u.Disabled():
			state = "disabled"
		case u.MustChangePassword:
			state = "must-change-password"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", u.ID, u.Username, state, u.CreatedAt.Format(time.RFC3339))
	}
	tw.Flush()
	return 0
}

// userAction parses --username for a command that acts on one account,
// opens the store, finds the account and runs act on it. An unknown
// account is one line on stderr and exit code 1; bad usage is exit code 2.
func (c cli) userAction(ctx context.Context, name, synopsis string, args []string, act func(*models.Store, models.User) int) int {
	var username string
	fs, code, ok := c.flags(name+" --username NAME", synopsis, args, func(fs *flag.FlagSet) {
		fs.StringVar(&username, "username", "", "the account's username (required)")
	})
	if !ok {
		return code
	}
	if username == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	_, store, err := c.open(ctx, c.quietLogger())
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	u, err := store.FindUser(ctx, username)
	if err != nil {
		return c.fail(userMessage(err))
	}
	return act(store, u)
}

func (c cli) userDisable(ctx context.Context, args []string) int {
	return c.userAction(ctx, "user disable", "Disables a staff account: its console sessions end at once and its sign-in is refused. "+
		"API keys it created keep working until revoked (petstore apikey list). The last enabled account cannot be disabled.", args,
		func(store *models.Store, u models.User) int {
			u, err := store.DisableUser(ctx, u.ID, "cli")
			if err != nil {
				return c.fail(userMessage(err))
			}
			fmt.Fprintf(c.stdout, "disabled staff account %s (id %d): its sessions have ended; its API keys keep working until revoked\n", u.Username, u.ID)
			return 0
		})
}

func (c cli) userEnable(ctx context.Context, args []string) int {
	return c.userAction(ctx, "user enable", "Enables a disabled staff account: it can sign in again with its password.", args,
		func(store *models.Store, u models.User) int {
			u, err := store.EnableUser(ctx, u.ID, "cli")
			if err != nil {
				return c.fail(userMessage(err))
			}
			fmt.Fprintf(c.stdout, "enabled staff account %s (id %d)\n", u.Username, u.ID)
			return 0
		})
}

func (c cli) userResetPassword(ctx context.Context, args []string) int {
	return c.userAction(ctx, "user reset-password", "Gives a staff account a random one-time password and prints it alone on stdout; it is shown only this once. "+
		"The account's sessions end, and at its next sign-in it must choose a new password.", args,
		func(store *models.Store, u models.User) int {
			_, password, err := store.ResetPassword(ctx, u.ID, "cli")
			if err != nil {
				return c.fail(userMessage(err))
			}
			fmt.Fprintln(c.stdout, password)
			return 0
		})
}

func (c cli) apikeyCreate(ctx context.Context, args []string) int {
	var name string
	fs, code, ok := c.flags("apikey create --name NAME", "Issues an API key for a partner and prints it alone on stdout. It is shown only this once.", args,
		func(fs *flag.FlagSet) {
			fs.StringVar(&name, "name", "", "who or what the key is for, such as the partner's app (required)")
		})
	if !ok {
		return code
	}
	if name == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	_, store, err := c.open(ctx, c.quietLogger())
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	_, key, err := store.CreateAPIKey(ctx, name, "cli")
	if err != nil {
		return c.fail(userMessage(err))
	}
	fmt.Fprintln(c.stdout, key)
	return 0
}

func (c cli) apikeyList(ctx context.Context, args []string) int {
	if _, code, ok := c.flags("apikey list", "Lists API keys: id, name, public prefix, creator, times. Keys themselves are never stored, so never shown.", args, nil); !ok {
		return code
	}
	_, store, err := c.open(ctx, c.quietLogger())
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	keys, err := store.ListAPIKeys(ctx)
	if err != nil {
		return c.fail(userMessage(err))
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tPREFIX\tCREATED BY\tCREATED\tLAST USED\tREVOKED")
	for _, k := range keys {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, k.Prefix, k.CreatedBy,
			k.CreatedAt.Format(time.RFC3339), timeOrDash(k.LastUsedAt), timeOrDash(k.RevokedAt))
	}
	tw.Flush()
	return 0
}

func (c cli) apikeyRevoke(ctx context.Context, args []string) int {
	fs, code, ok := c.flags("apikey revoke ID", "Revokes the API key with this id (see apikey list). It is refused at once.", args, nil)
	if !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	id, err := strconv.ParseInt(fs.Arg(0), 10, 64)
	if err != nil || id < 1 {
		fmt.Fprintf(c.stderr, "petstore: %q is not an API key id (a whole number; see petstore apikey list)\n", fs.Arg(0))
		return 2
	}
	_, store, err := c.open(ctx, c.quietLogger())
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	k, err := store.RevokeAPIKey(ctx, id, "cli")
	if err != nil {
		return c.fail(userMessage(err))
	}
	fmt.Fprintf(c.stdout, "revoked API key %d (%s, %s)\n", k.ID, k.Name, k.Prefix)
	return 0
}

// seed adds example pets. The count is checked before the database is
// opened; progress goes to stderr at most once a second, the result to
// stdout.
func (c cli) seed(ctx context.Context, args []string) int {
	var pets string
	fs, code, ok := c.flags("seed --pets N", fmt.Sprintf("Adds N example pets (N a whole number from 1 to %d) to DATABASE_URL, created now, "+
		"named like \"Luna 1\" and \"Mochi 🐾 11\" (accents and emoji included), with categories 1 to 100 and statuses "+
		"60%% available, 25%% pending, 15%% sold. Existing pets are kept. Prints progress on stderr and, at the end, "+
		"how many were added; the audit trail records it. A million take well under 30 seconds.", models.MaxSeedPets), args,
		func(fs *flag.FlagSet) {
			fs.StringVar(&pets, "pets", "", "how many pets to add: `N`, a whole number from 1 to 10000000 (required)")
		})
	if !ok {
		return code
	}
	if pets == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	n, err := models.ParseSeedCount(pets)
	if err != nil {
		fmt.Fprintf(c.stderr, "petstore: --pets %q: %s\n", pets, userMessage(err))
		return 2
	}
	_, store, err := c.open(ctx, c.quietLogger())
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	start := time.Now()
	var shown time.Time
	progress := func(done int) {
		if done < n && time.Since(shown) < time.Second {
			return
		}
		shown = time.Now()
		fmt.Fprintf(c.stderr, "seeded %d/%d pets (%.1f s)\n", done, n, time.Since(start).Seconds())
	}
	res, err := store.SeedPets(ctx, n, "cli", progress)
	if err != nil {
		if res.Added > 0 {
			return c.fail(fmt.Errorf("stopped after adding %d of %d pets (ids %d to %d): %w", res.Added, n, res.FirstID, res.LastID, userMessage(err)))
		}
		return c.fail(userMessage(err))
	}
	fmt.Fprintf(c.stdout, "added %d example pets (ids %d to %d) in %.1f s\n", res.Added, res.FirstID, res.LastID, time.Since(start).Seconds())
	return 0
}

// quietLogger logs only warnings, so commands print just their result.
func (c cli) quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// userMessage turns a models error into its user-facing message.
func userMessage(err error) error {
	var e *models.Error
	if errors.As(err, &e) && e.Code != models.CodeInternal {
		return errors.New(e.Message)
	}
	return err
}

func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format(time.RFC3339)
}

func buildVersion() string {
	if version != "dev" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return version
}
