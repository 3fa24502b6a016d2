package main

// The harness of the whole-product tests: every test in this package starts
// the product through one of these and talks to it through one of the two
// clients below.
//
// The product in this process, through run:
//   - runCLI runs one command to its end (runWithoutDatabase: one that must
//     not touch the database);
//   - serveInProcess runs `petstore serve` until the test stops it.
//
// The built binary (built once per test binary, without cgo, as released),
// for the fault, multi-instance and load tests:
//   - runBinary runs one command to its end;
//   - startBinary starts one as a child process; serveBinary starts
//     `petstore serve` and waits until it listens.
//
// Both kinds of running server are an *instance, with its output captured
// (waitLog, waitListening) and stopped as SIGTERM stops it (stop).
//
// The product's HTTP handler alone: startSite serves it on loopback over a
// fresh store the test reaches directly, for the tests that need the store,
// the route list or the server's limits (hostile input, routes, browser
// journeys). newProductHandler is the one call of the product's HTTP
// constructor (server.New) in this package's tests.
//
// Talking to it: apiClient calls the API with a bearer key; console is a
// browser without JavaScript on the admin console (cookie jar, CSRF token,
// sign-in). Both send through send and get a reply.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"petstore/api"
	"petstore/config"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
)

func TestMain(m *testing.M) { modelstest.Main(m) }

// ---- databases ----

// forEachDriver runs fn as a parallel subtest per database driver.
func forEachDriver(t *testing.T, fn func(t *testing.T, driver string)) {
	t.Helper()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			fn(t, driver)
		})
	}
}

// forEachDatabase runs fn as a parallel subtest per database driver, each
// with the DATABASE_URL of a fresh, empty database.
func forEachDatabase(t *testing.T, fn func(t *testing.T, databaseURL string)) {
	t.Helper()
	forEachDriver(t, func(t *testing.T, driver string) { fn(t, modelstest.URL(t, driver)) })
}

// forEachSite runs fn as a parallel subtest per database driver, each with
// a site of its own.
func forEachSite(t *testing.T, fn func(t *testing.T, s *site)) {
	t.Helper()
	forEachDriver(t, func(t *testing.T, driver string) { fn(t, startSite(t, driver)) })
}

// openStore opens the database behind databaseURL directly, to check what a
// command or a server did.
func openStore(tb testing.TB, databaseURL string) *models.Store {
	tb.Helper()
	db, err := config.ParseDatabaseURL(databaseURL)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := models.Open(context.Background(), models.Options{Driver: string(db.Driver), DSN: db.DSN, ConnectTimeout: 20 * time.Second})
	if err != nil {
		tb.Fatalf("open %s: %v", db.Redacted, err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// ---- commands ----

// result is what one command left behind.
type result struct {
	code           int
	stdout, stderr string
}

// env turns a map into the getenv the program is given; the process
// environment is never read.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// runCLI runs one command in this process, to its end, with args, stdin and
// the environment vars.
func runCLI(tb testing.TB, vars map[string]string, stdin string, args ...string) result {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, strings.NewReader(stdin), &stdout, &stderr, env(vars))
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// runWithoutDatabase runs a command that must not touch the database (help,
// usage errors) with DATABASE_URL naming a fresh SQLite file. It fails the
// test if the file appears, or if a refused command printed on stdout.
func runWithoutDatabase(tb testing.TB, args ...string) result {
	tb.Helper()
	dbPath := filepath.Join(tb.TempDir(), "petstore.db")
	r := runCLI(tb, map[string]string{"DATABASE_URL": "sqlite:" + dbPath}, "", args...)
	if r.code != 0 && r.stdout != "" {
		tb.Errorf("a usage error printed on stdout:\n%s", r.stdout)
	}
	if _, err := os.Stat(dbPath); !errors.Is(err, os.ErrNotExist) {
		tb.Errorf("the database file was created (stat: %v)", err)
	}
	return r
}

// usageCase is a command that must not touch the database (help, usage
// errors): its exit code, and a fragment of what it prints.
type usageCase struct {
	name     string
	args     []string
	wantCode int
	want     string // in stdout for help, stderr otherwise
}

// checkUsage runs each case as a parallel subtest with runWithoutDatabase;
// more, when not nil, checks a case's result further.
func checkUsage(t *testing.T, cases []usageCase, more func(t *testing.T, c usageCase, r result)) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runWithoutDatabase(t, tt.args...)
			wantCode(t, r, tt.wantCode)
			out := r.stdout
			if tt.wantCode != 0 {
				out = r.stderr
			}
			if more != nil {
				more(t, tt, r)
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("output lacks %q:\nstdout:\n%s\nstderr:\n%s", tt.want, r.stdout, r.stderr)
			}
		})
	}
}

// wantCode fails the test when r did not exit with code.
func wantCode(tb testing.TB, r result, code int) {
	tb.Helper()
	if r.code != code {
		tb.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
}

// wantOneLine fails the test unless s is exactly one newline-terminated
// line, and returns that line.
func wantOneLine(tb testing.TB, what, s string) string {
	tb.Helper()
	if !strings.HasSuffix(s, "\n") || strings.Count(s, "\n") != 1 {
		tb.Fatalf("%s is not exactly one line:\n%s", what, s)
	}
	return strings.TrimSuffix(s, "\n")
}

// lastLine returns the last line of s, without its newline.
func lastLine(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// keyPattern is the shape of an API key as printed: pst_, an 8-character
// lookup id, _, a 32-character secret.
var keyPattern = regexp.MustCompile(`^pst_[a-z2-7]{8}_[a-z2-7]{32}$`)

// createKey runs apikey create in this process and returns the key it
// printed.
func createKey(tb testing.TB, vars map[string]string, name string, flags ...string) string {
	tb.Helper()
	r := runCLI(tb, vars, "", append([]string{"apikey", "create", "--name", name}, flags...)...)
	wantCode(tb, r, 0)
	key := wantOneLine(tb, "apikey create stdout", r.stdout)
	if !keyPattern.MatchString(key) {
		tb.Fatalf("apikey create printed %q, want the key alone (pst_...)", key)
	}
	if r.stderr != "" {
		tb.Errorf("apikey create wrote on stderr:\n%s", r.stderr)
	}
	return key
}

// ---- running servers ----

// capture is output a running instance wrote so far.
type capture interface{ String() string }

// syncBuffer is a bytes.Buffer safe to write from the server's goroutines
// while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// logFile is output a child process writes straight to a file.
type logFile string

func (f logFile) String() string {
	b, _ := os.ReadFile(string(f))
	return string(b)
}

// instance is one running petstore: `petstore serve` in this process
// (serveInProcess) or the built binary as a child process (startBinary).
// Whatever it is, it is ended when the test ends, and its output is logged
// if the test failed.
type instance struct {
	name           string
	stdout, stderr capture
	cmd            *exec.Cmd // the child process; nil in this process
	pid            int       // the child process's id
	done           chan struct{}
	code           int           // exit code, once done
	exitedAt       time.Time     // once done
	addr           string        // host:port, once listening
	base           string        // http://addr, once listening
	terminate      func()        // asks it to stop, as SIGTERM does
	kill           func()        // ends it now
	stopLimit      time.Duration // how long stop waits for the exit
}

// listeningPattern finds the address in serve's listening line, in the text
// log format and in the JSON one.
var listeningPattern = regexp.MustCompile(`(?:msg="petstore listening" addr=|"msg":"petstore listening","addr":")([^"\s]+)`)

// retryWarning is the log line of one failed try to reach the database.
var retryWarning = regexp.MustCompile(`(?m)^time=\S+ level=(?:INFO|WARN) msg="database not answering yet, retrying" .*\n`)

// serveInProcess runs `petstore serve` through run in a goroutine with the
// environment vars, and waits until it listens. Stopping it cancels run's
// context, which is what main does on SIGTERM.
func serveInProcess(tb testing.TB, vars map[string]string) *instance {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	p := &instance{name: "serve", stdout: stdout, stderr: stderr, done: make(chan struct{}),
		terminate: cancel, kill: cancel, stopLimit: 5 * time.Second}
	go func() { p.exit(run(ctx, []string{"serve"}, strings.NewReader(""), stdout, stderr, env(vars))) }()
	p.endWithTest(tb)
	p.waitListening(tb, time.Minute)
	return p
}

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// petstoreBinary builds the petstore binary once per test binary, without
// cgo as the release is built, and returns its path. It is removed when the
// test binary ends.
func petstoreBinary(tb testing.TB) string {
	tb.Helper()
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "petstore-bin-")
		if err != nil {
			binaryErr = err
			return
		}
		modelstest.AtExit(func() { os.RemoveAll(dir) })
		// go test puts GOROOT/bin first on the PATH of the tests it runs.
		goBin, err := exec.LookPath("go")
		if err != nil {
			binaryErr = fmt.Errorf("the go command is not on PATH: %w", err)
			return
		}
		bin := filepath.Join(dir, "petstore")
		build := exec.Command(goBin, "build", "-o", bin, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			binaryErr = fmt.Errorf("CGO_ENABLED=0 go build: %v\n%s", err, out)
			return
		}
		binaryPath = bin
	})
	if binaryErr != nil {
		tb.Fatal(binaryErr)
	}
	return binaryPath
}

// procEnv is the environment of a child process: vars, plus only what a
// process needs to run, so the developer's own DATABASE_URL and the like
// never leak in.
func procEnv(vars map[string]string) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}

// serveVars is the environment of a serve process on databaseURL, on a
// free loopback port. The per-key rate limit is off: the fault tests load
// the service on purpose, and a 429 would hide what they look for.
func serveVars(databaseURL string) map[string]string {
	return map[string]string{"DATABASE_URL": databaseURL, "LISTEN_ADDR": "127.0.0.1:0", "RATE_LIMIT_RPS": "0"}
}

// startBinary starts the binary with args and the environment vars (see
// procEnv) as a child process; its output is kept in memory.
func startBinary(tb testing.TB, name string, vars map[string]string, args ...string) *instance {
	tb.Helper()
	return launchBinary(tb, name, vars, "", args)
}

// startBinaryLogging is startBinary with stdout and stderr written straight
// to the file logPath: a server under load would otherwise copy its request
// log through the test process, whose CPU time the load benchmark measures.
// The child is also killed if the test process dies, so that no server
// outlives a benchmark cut short.
func startBinaryLogging(tb testing.TB, name string, vars map[string]string, logPath string, args ...string) *instance {
	tb.Helper()
	return launchBinary(tb, name, vars, logPath, args)
}

func launchBinary(tb testing.TB, name string, vars map[string]string, logPath string, args []string) *instance {
	tb.Helper()
	cmd := exec.Command(petstoreBinary(tb), args...)
	cmd.Env = procEnv(vars)
	p := &instance{name: name, cmd: cmd, done: make(chan struct{}), stopLimit: 20 * time.Second}
	if logPath == "" {
		stdout, stderr := &syncBuffer{}, &syncBuffer{}
		cmd.Stdout, cmd.Stderr = stdout, stderr
		p.stdout, p.stderr = stdout, stderr
	} else {
		f, err := os.Create(logPath)
		if err != nil {
			tb.Fatal(err)
		}
		defer f.Close() // the child has its own descriptor
		cmd.Stdout, cmd.Stderr = f, f
		p.stdout, p.stderr = logFile(logPath), logFile(logPath)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", name, err)
	}
	p.pid = cmd.Process.Pid
	p.terminate = func() { cmd.Process.Signal(syscall.SIGTERM) }
	p.kill = func() { cmd.Process.Kill() }
	go func() {
		err := cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		if err != nil && code == 0 {
			code = -1
		}
		p.exit(code)
	}()
	p.endWithTest(tb)
	return p
}

// serveBinary starts `petstore serve` as a child process and waits until it
// listens.
func serveBinary(tb testing.TB, name string, vars map[string]string) *instance {
	tb.Helper()
	p := startBinary(tb, name, vars, "serve")
	p.waitListening(tb, time.Minute)
	return p
}

// runBinary runs the binary once to its end.
func runBinary(tb testing.TB, vars map[string]string, args ...string) result {
	tb.Helper()
	p := startBinary(tb, strings.Join(args, " "), vars, args...)
	code := p.wait(tb, 2*time.Minute)
	return result{code: code, stdout: p.stdout.String(), stderr: p.stderr.String()}
}

// exit records the end of the instance with its exit code.
func (p *instance) exit(code int) {
	p.code, p.exitedAt = code, time.Now()
	close(p.done)
}

// endWithTest ends the instance when the test ends, if the test has not
// stopped it, and logs its output if the test failed.
func (p *instance) endWithTest(tb testing.TB) {
	tb.Cleanup(func() {
		if !p.exited() {
			p.kill()
			select {
			case <-p.done:
			case <-time.After(20 * time.Second):
			}
		}
		if !tb.Failed() {
			return
		}
		if p.stdout == p.stderr {
			tb.Logf("%s output (last lines):\n%s", p.name, tail(p.stderr.String(), 40))
			return
		}
		tb.Logf("%s stdout:\n%s\n%s stderr (last lines):\n%s", p.name, p.stdout, p.name, tail(p.stderr.String(), 40))
	})
}

func (p *instance) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitLog waits, at most limit, until the log (stderr) holds a match of re,
// and returns the first match and its submatches. It fails the test when
// the instance ends or the time passes first.
func (p *instance) waitLog(tb testing.TB, re *regexp.Regexp, limit time.Duration) []string {
	tb.Helper()
	deadline := time.Now().Add(limit)
	for {
		ended := p.exited() // before reading: the log is complete once ended
		if m := re.FindStringSubmatch(p.stderr.String()); m != nil {
			return m
		}
		if ended {
			tb.Fatalf("%s exited with %d before logging %s\nstdout:\n%s\nstderr:\n%s", p.name, p.code, re, p.stdout, p.stderr)
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s did not log %s within %s\nstderr:\n%s", p.name, re, limit, tail(p.stderr.String(), 40))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitListening waits for the listening log line and notes the address.
func (p *instance) waitListening(tb testing.TB, limit time.Duration) {
	tb.Helper()
	p.addr = p.waitLog(tb, listeningPattern, limit)[1]
	p.base = "http://" + p.addr
}

// signal sends sig to the child process and returns when it was sent.
func (p *instance) signal(tb testing.TB, sig os.Signal) time.Time {
	tb.Helper()
	if p.cmd == nil {
		tb.Fatalf("%s runs in this process: it cannot be sent %s", p.name, sig)
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		tb.Fatalf("signal %s: %v", p.name, err)
	}
	return time.Now()
}

// wait returns the exit code, failing the test if the instance runs longer
// than limit.
func (p *instance) wait(tb testing.TB, limit time.Duration) int {
	tb.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(limit):
		tb.Fatalf("%s still running %s later\nstderr:\n%s", p.name, limit, tail(p.stderr.String(), 40))
		return -1
	}
}

// stop asks the instance to stop as SIGTERM does and wants exit code 0:
// within 5 s in this process, within 20 s for the binary (the 15 s
// shutdown bound and a margin for the process to exit).
func (p *instance) stop(tb testing.TB) {
	tb.Helper()
	if p.exited() {
		tb.Fatalf("%s had exited with %d before it was stopped\nstderr:\n%s", p.name, p.code, tail(p.stderr.String(), 40))
	}
	p.terminate()
	if code := p.wait(tb, p.stopLimit); code != 0 {
		tb.Errorf("%s exited with %d when stopped, want 0\nstderr:\n%s", p.name, code, tail(p.stderr.String(), 40))
	}
}

// ---- what the first start prints ----

var (
	bootstrapAccount = regexp.MustCompile(`(?m)^\s+Username:\s+(\S+)\n\s+Password:\s+(\S+)$`)
	bootstrapConsole = regexp.MustCompile(`(?m)^\s+Admin console:\s+(http://\S+/admin)$`)
	bootstrapKey     = regexp.MustCompile(`(?m)^\s+API key:\s+(\S+)$`)
	bootstrapCurl    = regexp.MustCompile(`(?m)^\s+curl -H 'Authorization: Bearer (\S+)' (\S+)$`)
)

// boot is what the first start printed.
type boot struct{ username, password, key string }

// bootstrapOf reads the bootstrap block a serve process printed.
func bootstrapOf(tb testing.TB, out string) boot {
	tb.Helper()
	acct := bootstrapAccount.FindStringSubmatch(out)
	key := bootstrapKey.FindStringSubmatch(out)
	if acct == nil || key == nil {
		tb.Fatalf("no bootstrap block with account and key on stdout:\n%s", out)
	}
	return boot{username: acct[1], password: acct[2], key: key[1]}
}

// ---- the HTTP handler on its own ----

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
	cfg, err := config.Load(env(nil))
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
	srv.Config = newHTTPServer(h, log)
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
	logs    *syncBuffer     // what log wrote (text lines)
	metrics *server.Metrics // what the handler counted
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
	logs := &syncBuffer{}
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("server log (last lines):\n%s", tail(logs.String(), 200))
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
func (s *site) apiClient(key string) *apiClient {
	a := newAPIClient(s.base, key)
	a.http.Timeout = siteTimeout
	return a
}

// console returns a browser on the site's console, signed out.
func (s *site) console() *console {
	c := newConsole(s.base)
	c.http.Timeout = siteTimeout
	return c
}

// ---- HTTP ----

// reply is one HTTP exchange as the test saw it.
type reply struct {
	status int
	header http.Header
	body   []byte
	took   time.Duration
	err    error // transport error (a timeout included); status is 0
}

func (r reply) String() string {
	if r.err != nil {
		return fmt.Sprintf("error after %s: %s", r.took.Round(time.Millisecond), clip(r.err.Error()))
	}
	body := tail(string(r.body), 5)
	if len(body) > 1000 {
		body = body[:1000] + "..."
	}
	return fmt.Sprintf("%d after %s: %s", r.status, r.took.Round(time.Millisecond), body)
}

// newHTTPClient returns a client that never follows redirects, so each
// answer is seen as it is, and gives up after timeout.
func newHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// send makes one request to the server at base and reads the whole answer.
// target is sent on the request line exactly as given (no cleaning, no
// re-escaping), and header as given. A transport error is in the reply,
// not a failure: some tests count them.
func send(c *http.Client, method, base, target string, header http.Header, body string) reply {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base, rd)
	if err != nil {
		return reply{err: err}
	}
	req.URL.Opaque = target
	for k, vs := range header {
		req.Header[k] = vs
	}
	start := time.Now()
	res, err := c.Do(req)
	if err != nil {
		return reply{err: err, took: time.Since(start)}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return reply{status: res.StatusCode, header: res.Header, body: b, took: time.Since(start), err: err}
}

// apiClient calls one server's API as a partner app does: with its key, if
// it has one, as a bearer token.
type apiClient struct {
	base, key string
	http      *http.Client
}

func newAPIClient(base, key string) *apiClient {
	return &apiClient{base: base, key: key, http: newHTTPClient(15 * time.Second)}
}

// do sends one request (see send), with the key unless header sets
// Authorization itself.
func (a *apiClient) do(method, target string, header http.Header, body string) reply {
	h := http.Header{}
	for k, vs := range header {
		h[k] = vs
	}
	if a.key != "" && h.Get("Authorization") == "" {
		h.Set("Authorization", "Bearer "+a.key)
	}
	return send(a.http, method, a.base, target, h, body)
}

func (a *apiClient) get(target string) reply {
	return a.do(http.MethodGet, target, nil, "")
}

// postJSON posts body as application/json.
func (a *apiClient) postJSON(target, body string) reply {
	return a.do(http.MethodPost, target, http.Header{"Content-Type": {"application/json"}}, body)
}

func (a *apiClient) createPet(name string) reply {
	body, _ := json.Marshal(map[string]any{"name": name, "categoryId": 7})
	return a.postJSON("/v1/pets", string(body))
}

var nextLink = regexp.MustCompile(`<([^>]+)>;\s*rel="next"`)

// allPets pages through GET /v1/pets, following the next links, and
// returns every pet by id.
func (a *apiClient) allPets(tb testing.TB) map[int64]api.Pet {
	tb.Helper()
	pets := map[int64]api.Pet{}
	path := "/v1/pets?limit=100"
	for range 10000 {
		r := a.get(path)
		if r.err != nil || r.status != http.StatusOK {
			tb.Fatalf("GET %s: %s", path, r)
		}
		var page []api.Pet
		if err := json.Unmarshal(r.body, &page); err != nil {
			tb.Fatalf("GET %s: %v: %s", path, err, r.body)
		}
		for _, p := range page {
			if _, dup := pets[p.ID]; dup {
				tb.Fatalf("pet %d listed twice", p.ID)
			}
			pets[p.ID] = p
		}
		link := r.header.Get("Link")
		if link == "" {
			return pets
		}
		m := nextLink.FindStringSubmatch(link)
		if m == nil {
			tb.Fatalf("GET %s: Link %q has no next URL", path, link)
		}
		u, err := url.Parse(m[1])
		if err != nil {
			tb.Fatal(err)
		}
		path = u.RequestURI()
	}
	tb.Fatal("more than 10000 pages of pets")
	return nil
}

// console is a browser without JavaScript on one server's admin console:
// it keeps the session cookie, never follows redirects, and posts forms as
// the console's pages do.
type console struct {
	base string
	http *http.Client
	csrf string // the session's CSRF token once the test has read it: sent with every post
}

func newConsole(base string) *console {
	jar, _ := cookiejar.New(nil) // never fails without options
	c := newHTTPClient(15 * time.Second)
	c.Jar = jar
	return &console{base: base, http: c}
}

// do sends one request (see send) with the session's cookie.
func (c *console) do(method, target string, header http.Header, body string) reply {
	return send(c.http, method, c.base, target, header, body)
}

func (c *console) get(target string) reply {
	return c.do(http.MethodGet, target, nil, "")
}

// post submits form as a same-origin form post, with the session's CSRF
// token unless the form carries a token of its own.
func (c *console) post(target string, form url.Values) reply {
	if form == nil {
		form = url.Values{}
	}
	if c.csrf != "" && form.Get("csrf_token") == "" {
		form.Set("csrf_token", c.csrf)
	}
	h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Sec-Fetch-Site": {"same-origin"}}
	return c.do(http.MethodPost, target, h, form.Encode())
}

// signIn signs in through the form, as a person does: the sign-in page for
// its cookie and CSRF token, then the form post, whose answer it returns
// (303 on success).
func (c *console) signIn(tb testing.TB, username, password string) reply {
	tb.Helper()
	login := c.get("/admin/login")
	if login.status != http.StatusOK {
		tb.Fatalf("GET /admin/login: %s", login)
	}
	return c.post("/admin/login", url.Values{"csrf_token": {csrfToken(tb, login)}, "username": {username}, "password": {password}})
}

// signedIn returns a console on base signed in as username.
func signedIn(tb testing.TB, base, username, password string) *console {
	tb.Helper()
	c := newConsole(base)
	if r := c.signIn(tb, username, password); r.status != http.StatusSeeOther {
		tb.Fatalf("POST /admin/login: %s, want 303", r)
	}
	return c
}

// cookie returns the session cookie as a Cookie header value.
func (c *console) cookie(tb testing.TB) string {
	tb.Helper()
	u, _ := url.Parse(c.base)
	var parts []string
	for _, ck := range c.http.Jar.Cookies(u) {
		parts = append(parts, ck.Name+"="+ck.Value)
	}
	if len(parts) == 0 {
		tb.Fatal("no session cookie after signing in")
	}
	return strings.Join(parts, "; ")
}

// htmlDoc parses a console page.
func htmlDoc(tb testing.TB, r reply) *goquery.Document {
	tb.Helper()
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(r.body))
	if err != nil {
		tb.Fatal(err)
	}
	return doc
}

// csrfToken returns the CSRF token of a console page's forms.
func csrfToken(tb testing.TB, r reply) string {
	tb.Helper()
	tok, ok := htmlDoc(tb, r).Find(`input[name="csrf_token"]`).First().Attr("value")
	if !ok || tok == "" {
		tb.Fatalf("no csrf_token on the page: %s", r)
	}
	return tok
}

// ---- what answers must be ----

// wantAPIError checks an answer of the API's error writer: status, the
// JSON type, and the Error body (nothing else) with code and a message.
func wantAPIError(tb testing.TB, what string, r reply, status int, code models.Code) {
	tb.Helper()
	if r.err != nil {
		tb.Errorf("%s: %v, want %d %s", what, r.err, status, code)
		return
	}
	var e api.Error
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	err := dec.Decode(&e)
	ct := r.header.Get("Content-Type")
	if r.status != status || ct != "application/json" || err != nil || e.Code != code || e.Status != status || e.Message == "" {
		tb.Errorf("%s: %s (Content-Type %q, decoding: %v), want %d with the Error body, code %s", what, r, ct, err, status, code)
	}
}

// wantNo5xx fails the test on a server error, or no answer at all.
func wantNo5xx(tb testing.TB, what string, r reply) {
	tb.Helper()
	if r.err != nil || r.status >= 500 {
		tb.Fatalf("%s: %s, want no server error", what, r)
	}
}

// wantPet decodes the Pet of an answer with status.
func wantPet(tb testing.TB, what string, r reply, status int) api.Pet {
	tb.Helper()
	if r.err != nil || r.status != status {
		tb.Fatalf("%s: %s, want %d", what, r, status)
	}
	var p api.Pet
	if err := json.Unmarshal(r.body, &p); err != nil {
		tb.Fatalf("%s: %s: %v", what, clip(string(r.body)), err)
	}
	return p
}

// wantCreated returns the pet of a 201 for a pet named name, failing the
// test otherwise.
func wantCreated(tb testing.TB, r reply, name string) api.Pet {
	tb.Helper()
	p := wantPet(tb, fmt.Sprintf("create %q", name), r, http.StatusCreated)
	if p.ID < 1 || p.Name != name {
		tb.Fatalf("create %q: body %s, want the pet", name, r.body)
	}
	return p
}

// ---- waiting, figures, messages ----

// waitFor polls fn every interval until it returns true, and returns how
// long that took, failing the test after limit.
func waitFor(tb testing.TB, what string, limit, interval time.Duration, fn func() bool) time.Duration {
	tb.Helper()
	start := time.Now()
	for {
		if fn() {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			tb.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(interval)
	}
}

var figuresMu sync.Mutex

// figure logs one measured figure and appends it as a JSON line to the
// file named by PETSTORE_FIGURES (default testdata/figures.jsonl), for the
// closing notes of issues. Figures are never asserted on.
func figure(tb testing.TB, name string, value float64, unit string) {
	tb.Helper()
	tb.Logf("figure %s = %g %s", name, value, unit)
	path := os.Getenv("PETSTORE_FIGURES")
	if path == "" {
		path = filepath.Join("testdata", "figures.jsonl")
	}
	line, err := json.Marshal(struct {
		Test   string    `json:"test"`
		Figure string    `json:"figure"`
		Value  float64   `json:"value"`
		Unit   string    `json:"unit"`
		Time   time.Time `json:"time"`
		CPUs   int       `json:"cpus"`
	}{tb.Name(), name, value, unit, time.Now().UTC().Round(time.Second), runtime.NumCPU()})
	if err != nil {
		tb.Fatal(err)
	}
	figuresMu.Lock()
	defer figuresMu.Unlock()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Errorf("figures: %v", err)
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		tb.Errorf("figures: %v", err)
		return
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		tb.Errorf("figures: %v", err)
	}
}

// figureDuration records a duration in milliseconds.
func figureDuration(tb testing.TB, name string, d time.Duration) {
	tb.Helper()
	figure(tb, name, float64(d.Microseconds())/1000, "ms")
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// clip quotes s for a failure message, shortened when long.
func clip(s string) string {
	if len(s) > 120 {
		return fmt.Sprintf("%q... (%d bytes)", s[:120], len(s))
	}
	return fmt.Sprintf("%q", s)
}
