package main

// Fault tests of issue 4, run against the real binary over loopback HTTP:
// graceful shutdown with requests in flight, a MariaDB outage, a database
// that is not up yet at start, and no lost writes while MariaDB restarts.
//
// The MariaDB server is shared by every test of this binary, so the tests
// that stop it (TestOutage, TestStartup, TestNoLostWrites) do not call
// t.Parallel: sequential top-level tests run before any parallel test
// resumes, so no other test sees the outage.
//
// Every figure measured is logged and appended as one JSON line to the file
// named by PETSTORE_FIGURES (default testdata/figures.jsonl).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptrace"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

// ---- the binary and its processes ----

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// petstoreBinary builds the petstore binary once per test binary, without
// cgo as the release does, and returns its path. It is removed when the
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
			binaryErr = fmt.Errorf("go build: %v\n%s", err, out)
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

// proc is one running petstore process.
type proc struct {
	name           string
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{} // closed when the process has exited
	code           int           // exit code, once done
	exitedAt       time.Time     // once done
	addr           string        // host:port, once listening
	base           string        // http://addr, once listening
}

// startProc starts the binary with args. If the test ends with the process
// still running, it is killed; if the test failed, its output is logged.
func startProc(tb testing.TB, name string, vars map[string]string, args ...string) *proc {
	tb.Helper()
	p := &proc{name: name, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(petstoreBinary(tb), args...)
	p.cmd.Env = procEnv(vars)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", name, err)
	}
	go func() {
		err := p.cmd.Wait()
		p.exitedAt = time.Now()
		p.code = p.cmd.ProcessState.ExitCode()
		if err != nil && p.code == 0 {
			p.code = -1
		}
		close(p.done)
	}()
	tb.Cleanup(func() {
		if !p.exited() {
			p.cmd.Process.Kill()
			select {
			case <-p.done:
			case <-time.After(10 * time.Second):
			}
		}
		if tb.Failed() {
			tb.Logf("%s stdout:\n%s\n%s stderr (last lines):\n%s", name, p.stdout, name, tail(p.stderr.String(), 40))
		}
	})
	return p
}

// serveVars is the environment of a serve process on databaseURL, on a
// free loopback port. The per-key rate limit is off: these tests load the
// service on purpose, and a 429 would hide what they look for.
func serveVars(databaseURL string) map[string]string {
	return map[string]string{"DATABASE_URL": databaseURL, "LISTEN_ADDR": "127.0.0.1:0", "RATE_LIMIT_RPS": "0"}
}

// serveProc starts `petstore serve` and waits until it listens.
func serveProc(tb testing.TB, name string, vars map[string]string) *proc {
	tb.Helper()
	p := startProc(tb, name, vars, "serve")
	p.waitListening(tb, time.Minute)
	return p
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitListening waits for the listening log line and notes the address.
func (p *proc) waitListening(tb testing.TB, limit time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(limit)
	for {
		if m := listeningPattern.FindStringSubmatch(p.stderr.String()); m != nil {
			p.addr = m[1]
			p.base = "http://" + p.addr
			return
		}
		select {
		case <-p.done:
			tb.Fatalf("%s exited with %d before listening\nstdout:\n%s\nstderr:\n%s", p.name, p.code, p.stdout, p.stderr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s did not log its address within %s\nstderr:\n%s", p.name, limit, p.stderr)
		}
	}
}

// signal sends sig to the process and returns when it was sent.
func (p *proc) signal(tb testing.TB, sig os.Signal) time.Time {
	tb.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		tb.Fatalf("signal %s: %v", p.name, err)
	}
	return time.Now()
}

// wait returns the exit code, failing the test if the process runs longer
// than limit.
func (p *proc) wait(tb testing.TB, limit time.Duration) int {
	tb.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(limit):
		tb.Fatalf("%s still running %s later\nstderr:\n%s", p.name, limit, tail(p.stderr.String(), 40))
		return -1
	}
}

// stop sends SIGTERM and wants exit code 0 within the 15 s shutdown bound
// (plus a margin for the process to start exiting).
func (p *proc) stop(tb testing.TB) {
	tb.Helper()
	p.signal(tb, syscall.SIGTERM)
	if code := p.wait(tb, 20*time.Second); code != 0 {
		tb.Errorf("%s exited with %d after SIGTERM, want 0\nstderr:\n%s", p.name, code, tail(p.stderr.String(), 40))
	}
}

// runBinary runs the binary once to its end.
func runBinary(tb testing.TB, vars map[string]string, args ...string) result {
	tb.Helper()
	p := startProc(tb, strings.Join(args, " "), vars, args...)
	code := p.wait(tb, 2*time.Minute)
	return result{code: code, stdout: p.stdout.String(), stderr: p.stderr.String()}
}

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

// ---- HTTP ----

// reply is one HTTP exchange as the test saw it.
type reply struct {
	status int
	header http.Header
	body   []byte
	took   time.Duration
	err    error // transport error; status is 0
}

func (r reply) String() string {
	if r.err != nil {
		return fmt.Sprintf("error after %s: %v", r.took.Round(time.Millisecond), r.err)
	}
	return fmt.Sprintf("%d after %s: %s", r.status, r.took.Round(time.Millisecond), tail(string(r.body), 5))
}

// do sends one request; header is pairs of name, value.
func do(client *http.Client, method, url, body string, header ...string) reply {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return reply{err: err}
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	start := time.Now()
	res, err := client.Do(req)
	if err != nil {
		return reply{err: err, took: time.Since(start)}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return reply{status: res.StatusCode, header: res.Header, body: b, took: time.Since(start), err: err}
}

// apiClient calls one instance's API with one key.
type apiClient struct {
	base, key string
	http      *http.Client
}

func newAPIClient(base, key string) *apiClient {
	return &apiClient{base: base, key: key, http: &http.Client{Timeout: 15 * time.Second}}
}

func (a *apiClient) get(path string) reply {
	return do(a.http, http.MethodGet, a.base+path, "", "Authorization", "Bearer "+a.key)
}

func (a *apiClient) createPet(name string) reply {
	body, _ := json.Marshal(map[string]any{"name": name, "categoryId": 7})
	return do(a.http, http.MethodPost, a.base+"/v1/pets", string(body),
		"Authorization", "Bearer "+a.key, "Content-Type", "application/json")
}

// petBody is a pet as the API returns it.
type petBody struct {
	ID         int64  `json:"id"`
	Name       string `json:"name"`
	CategoryID int64  `json:"categoryId"`
	Status     string `json:"status"`
}

// wantCreated returns the pet of a 201, failing the test otherwise.
func wantCreated(tb testing.TB, r reply, name string) petBody {
	tb.Helper()
	var p petBody
	if r.err != nil || r.status != http.StatusCreated {
		tb.Fatalf("create %q: %s, want 201", name, r)
	}
	if err := json.Unmarshal(r.body, &p); err != nil || p.ID < 1 || p.Name != name {
		tb.Fatalf("create %q: body %s (%v), want the pet", name, r.body, err)
	}
	return p
}

// allPets pages through GET /v1/pets, following the next links, and
// returns every pet by id.
func (a *apiClient) allPets(tb testing.TB) map[int64]petBody {
	tb.Helper()
	pets := map[int64]petBody{}
	path := "/v1/pets?limit=100"
	for range 10000 {
		r := a.get(path)
		if r.err != nil || r.status != http.StatusOK {
			tb.Fatalf("GET %s: %s", path, r)
		}
		var page []petBody
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

var nextLink = regexp.MustCompile(`<([^>]+)>;\s*rel="next"`)

// errorBody is the API's Error body.
type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Status  int    `json:"status"`
}

// wantError checks an API error response: status, JSON type and the Error
// body with code.
func wantAPIError(tb testing.TB, what string, r reply, status int, code models.Code) {
	tb.Helper()
	if r.err != nil {
		tb.Errorf("%s: %v, want %d %s", what, r.err, status, code)
		return
	}
	var e errorBody
	err := json.Unmarshal(r.body, &e)
	if r.status != status || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") ||
		err != nil || e.Code != string(code) || e.Status != status || e.Message == "" {
		tb.Errorf("%s: %s (Content-Type %q), want %d with the Error body, code %s", what, r, r.header.Get("Content-Type"), status, code)
	}
}

// stackTrace matches what must never reach a client: Go panics, stack
// frames, or the raw database driver error.
var stackTrace = regexp.MustCompile(`goroutine \d+|panic|\.go:\d+|runtime/|dial tcp|connection refused|Error \d{4}`)

// console is a signed-in console session.
type console struct {
	base   string
	client *http.Client // keeps the cookie; never follows redirects
}

var csrfInput = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// signIn signs in through the console's form, as a browser without
// JavaScript would.
func signIn(tb testing.TB, base, username, password string) *console {
	tb.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		tb.Fatal(err)
	}
	c := &console{base: base, client: &http.Client{Jar: jar, Timeout: 15 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	r := do(c.client, http.MethodGet, base+"/admin/login", "")
	if r.err != nil || r.status != http.StatusOK {
		tb.Fatalf("GET /admin/login: %s", r)
	}
	tok := c.csrf(tb, r)
	form := url.Values{"csrf_token": {tok}, "username": {username}, "password": {password}}
	r = do(c.client, http.MethodPost, base+"/admin/login", form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
	if r.err != nil || r.status != http.StatusSeeOther {
		tb.Fatalf("POST /admin/login: %s, want 303", r)
	}
	return c
}

// csrf returns the CSRF token of a console page.
func (c *console) csrf(tb testing.TB, r reply) string {
	tb.Helper()
	m := csrfInput.FindSubmatch(r.body)
	if m == nil {
		tb.Fatalf("no csrf_token input on the page:\n%s", r.body)
	}
	return string(m[1])
}

func (c *console) get(path string) reply { return do(c.client, http.MethodGet, c.base+path, "") }

// cookie returns the session cookie as a Cookie header value.
func (c *console) cookie(tb testing.TB) string {
	tb.Helper()
	u, _ := url.Parse(c.base)
	var parts []string
	for _, ck := range c.client.Jar.Cookies(u) {
		parts = append(parts, ck.Name+"="+ck.Value)
	}
	if len(parts) == 0 {
		tb.Fatal("no session cookie after signing in")
	}
	return strings.Join(parts, "; ")
}

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

// ---- figures ----

var figuresMu sync.Mutex

// figure logs one measured figure and appends it as a JSON line to the
// file named by PETSTORE_FIGURES (default testdata/figures.jsonl), for the
// closing note of the hardening issue.
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

// ---- the tests ----

// TestShutdown sends SIGTERM while requests are in flight: each has sent
// its headers and half its body, and the handler is reading it. All must
// complete with 201, new connections must be refused from the signal on,
// the process must exit 0 within the 15 s bound, and every pet is stored.
func TestShutdown(t *testing.T) {
	t.Parallel()
	const inFlight = 10
	databaseURL := modelstest.URL(t, models.DriverSQLite)
	p := serveProc(t, "serve", serveVars(databaseURL))
	key := bootstrapOf(t, p.stdout.String()).key

	// One connection per request. The client waits for 100 Continue before
	// sending the body: the server sends it when the handler first reads the
	// body, so a request that got it is in flight on the server.
	tr := &http.Transport{DisableKeepAlives: true, ExpectContinueTimeout: 30 * time.Second}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	type call struct {
		name      string
		body      string
		pw        *io.PipeWriter
		continued chan struct{}
		res       chan reply
	}
	calls := make([]*call, inFlight)
	for i := range calls {
		pr, pw := io.Pipe()
		c := &call{name: fmt.Sprintf("in flight %d", i), pw: pw, continued: make(chan struct{}), res: make(chan reply, 1)}
		c.body = fmt.Sprintf(`{"name": %q, "categoryId": %d, "status": "pending"}`, c.name, 100+i)
		calls[i] = c
		var once sync.Once
		trace := &httptrace.ClientTrace{Got100Continue: func() { once.Do(func() { close(c.continued) }) }}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), http.MethodPost, p.base+"/v1/pets", pr)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Expect", "100-continue")
		go func() {
			start := time.Now()
			res, err := client.Do(req)
			if err != nil {
				pr.CloseWithError(err)
				c.res <- reply{err: err, took: time.Since(start)}
				return
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			c.res <- reply{status: res.StatusCode, header: res.Header, body: b, took: time.Since(start), err: err}
		}()
		t.Cleanup(func() { pw.Close() })
	}
	write := func(c *call, s string) {
		t.Helper()
		done := make(chan error, 1)
		go func() { _, err := io.WriteString(c.pw, s); done <- err }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: write body: %v", c.name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the body is not being read", c.name)
		}
	}
	for _, c := range calls {
		select {
		case <-c.continued:
		case r := <-c.res:
			t.Fatalf("%s answered before its body was sent: %s", c.name, r)
		case <-time.After(15 * time.Second):
			t.Fatalf("%s: no 100 Continue: the handler never started reading the body", c.name)
		}
		write(c, c.body[:len(c.body)/2])
	}

	signalled := p.signal(t, syscall.SIGTERM)
	// Shutdown closes the listener first: new connections are refused.
	refused := waitFor(t, "new connections refused after SIGTERM", 5*time.Second, 10*time.Millisecond, func() bool {
		conn, err := net.DialTimeout("tcp", p.addr, time.Second)
		switch {
		case err == nil:
			conn.Close() // the listener is not closed yet
			return false
		case errors.Is(err, syscall.ECONNRESET):
			return false // queued just as the listener closed: reset, not served
		case !errors.Is(err, syscall.ECONNREFUSED):
			t.Fatalf("dial after SIGTERM: %v, want connection refused", err)
		}
		return true
	})
	figureDuration(t, "shutdown_listener_closed_after_signal", refused)
	for _, c := range calls {
		select {
		case r := <-c.res:
			t.Fatalf("%s answered before its body was complete: %s", c.name, r)
		default:
		}
		if p.exited() {
			t.Fatalf("the process exited (%d) with requests in flight", p.code)
		}
	}

	for _, c := range calls {
		write(c, c.body[len(c.body)/2:])
		c.pw.Close()
	}
	created := map[int64]string{}
	for _, c := range calls {
		select {
		case r := <-c.res:
			pet := wantCreated(t, r, c.name)
			created[pet.ID] = pet.Name
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: no answer", c.name)
		}
	}
	if code := p.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0\nstderr:\n%s", code, p.stderr)
	}
	took := p.exitedAt.Sub(signalled)
	figure(t, "shutdown_requests_in_flight", inFlight, "requests")
	figureDuration(t, "shutdown_signal_to_exit", took)
	if took > 15*time.Second {
		t.Errorf("shutdown took %s, more than the 15 s bound", took)
	}
	if !strings.Contains(p.stderr.String(), `msg=stopped`) {
		t.Errorf("no 'stopped' log line:\n%s", tail(p.stderr.String(), 10))
	}

	store := openStore(t, databaseURL)
	pets, _, err := store.ListPets(t.Context(), models.PetQuery{Limit: models.MaxPageLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(pets) != inFlight {
		t.Errorf("%d pets stored, want %d", len(pets), inFlight)
	}
	for _, pet := range pets {
		if created[pet.ID] != pet.Name {
			t.Errorf("stored pet %d %q was not answered as created (%q)", pet.ID, pet.Name, created[pet.ID])
		}
	}
}

// TestOutage stops MariaDB under a running server: readiness and the API
// answer 503 unavailable with the Error body, quickly; liveness stays 200;
// the console shows an HTML 503 page; the process stays up. When MariaDB
// returns, the service recovers by itself.
func TestOutage(t *testing.T) {
	// Not parallel: it stops the MariaDB server all tests share.
	databaseURL := modelstest.URL(t, models.DriverMySQL)
	p := serveProc(t, "serve", serveVars(databaseURL))
	b := bootstrapOf(t, p.stdout.String())
	api := newAPIClient(p.base, b.key)
	staff := signIn(t, p.base, b.username, b.password)
	plain := &http.Client{Timeout: 15 * time.Second}

	before := wantCreated(t, api.createPet("before the outage"), "before the outage")
	if r := staff.get("/admin/pets"); r.status != http.StatusOK {
		t.Fatalf("console before the outage: %s", r)
	}

	stopStart := time.Now()
	modelstest.Stop(t)
	figureDuration(t, "mariadb_stop", time.Since(stopStart))

	// Twice: the first round meets the pool's dead connections, the second
	// fresh refused dials.
	for round := 1; round <= 2; round++ {
		check := func(what string, r reply) {
			t.Helper()
			if r.took > 5*time.Second {
				t.Errorf("round %d: %s took %s, want an answer within 5 s", round, what, r.took)
			}
		}
		r := do(plain, http.MethodGet, p.base+"/readyz", "")
		check("GET /readyz", r)
		wantAPIError(t, fmt.Sprintf("round %d: GET /readyz", round), r, http.StatusServiceUnavailable, models.CodeUnavailable)

		r = do(plain, http.MethodGet, p.base+"/healthz", "")
		check("GET /healthz", r)
		if r.status != http.StatusOK {
			t.Errorf("round %d: GET /healthz during the outage: %s, want 200", round, r)
		}

		r = api.get("/v1/pets")
		check("GET /v1/pets", r)
		wantAPIError(t, fmt.Sprintf("round %d: GET /v1/pets", round), r, http.StatusServiceUnavailable, models.CodeUnavailable)

		r = api.createPet("during the outage")
		check("POST /v1/pets", r)
		wantAPIError(t, fmt.Sprintf("round %d: POST /v1/pets", round), r, http.StatusServiceUnavailable, models.CodeUnavailable)

		r = staff.get("/admin/pets")
		check("GET /admin/pets", r)
		if r.status != http.StatusServiceUnavailable || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") ||
			!bytes.Contains(r.body, []byte("<html")) {
			t.Errorf("round %d: console during the outage: %s (Content-Type %q), want an HTML 503 page", round, r, r.header.Get("Content-Type"))
		}
		if m := stackTrace.Find(r.body); m != nil {
			t.Errorf("round %d: the console's error page shows %q:\n%s", round, m, r.body)
		}
		if p.exited() {
			t.Fatalf("the server exited (%d) during the outage", p.code)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if strings.Contains(p.stderr.String(), "panic") {
		t.Errorf("the server logged a panic:\n%s", tail(p.stderr.String(), 20))
	}

	startStart := time.Now()
	modelstest.Start(t)
	back := time.Now()
	figureDuration(t, "mariadb_start", back.Sub(startStart))
	ready := waitFor(t, "/readyz 200 after MariaDB came back", 30*time.Second, 20*time.Millisecond, func() bool {
		return do(plain, http.MethodGet, p.base+"/readyz", "").status == http.StatusOK
	})
	figureDuration(t, "recovery_readyz", ready)
	var after petBody
	wrote := waitFor(t, "an API create after MariaDB came back", 30*time.Second, 20*time.Millisecond, func() bool {
		r := api.createPet("after the outage")
		if r.status == http.StatusCreated {
			after = wantCreated(t, r, "after the outage")
			return true
		}
		return false
	})
	figureDuration(t, "recovery_create", ready+wrote)

	if r := staff.get("/admin/pets"); r.status != http.StatusOK {
		t.Errorf("console after the outage (same session): %s, want 200", r)
	}
	pets := api.allPets(t)
	if len(pets) != 2 || pets[before.ID].Name != before.Name || pets[after.ID].Name != after.Name {
		t.Errorf("pets after the outage: %v, want %q and %q", pets, before.Name, after.Name)
	}
	p.stop(t)
}

// TestOutageFrozenDatabase pauses MariaDB instead of stopping it: it
// accepts connections but answers nothing, like a hung host or a network
// partition. Requests must still end with 503 unavailable within a bound
// (the store's 10 s I/O timeout plus a margin), never hang; and the
// service resumes by itself when the database does.
func TestOutageFrozenDatabase(t *testing.T) {
	// Not parallel: it freezes the MariaDB server all tests share.
	const bound = 15 * time.Second
	databaseURL := modelstest.URL(t, models.DriverMySQL)
	p := serveProc(t, "serve", serveVars(databaseURL))
	b := bootstrapOf(t, p.stdout.String())
	api := newAPIClient(p.base, b.key)
	api.http.Timeout = 2 * bound
	staff := signIn(t, p.base, b.username, b.password)
	staff.client.Timeout = 2 * bound
	plain := &http.Client{Timeout: 2 * bound}
	wantCreated(t, api.createPet("before the freeze"), "before the freeze")

	modelstest.Freeze(t)
	// All at once, each on its own connection: each waits for the database.
	probes := []struct {
		name  string
		do    func() reply
		check func(string, reply)
	}{
		{"GET /readyz", func() reply { return do(plain, http.MethodGet, p.base+"/readyz", "") },
			func(what string, r reply) {
				wantAPIError(t, what, r, http.StatusServiceUnavailable, models.CodeUnavailable)
			}},
		{"GET /healthz", func() reply { return do(plain, http.MethodGet, p.base+"/healthz", "") },
			func(what string, r reply) {
				if r.status != http.StatusOK {
					t.Errorf("%s: %s, want 200", what, r)
				}
			}},
		{"GET /v1/pets", func() reply { return api.get("/v1/pets") },
			func(what string, r reply) {
				wantAPIError(t, what, r, http.StatusServiceUnavailable, models.CodeUnavailable)
			}},
		{"POST /v1/pets", func() reply { return api.createPet("during the freeze") },
			func(what string, r reply) {
				wantAPIError(t, what, r, http.StatusServiceUnavailable, models.CodeUnavailable)
			}},
		{"GET /admin/pets", func() reply { return staff.get("/admin/pets") },
			func(what string, r reply) {
				if r.status != http.StatusServiceUnavailable || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
					t.Errorf("%s: %s, want an HTML 503 page", what, r)
				}
			}},
	}
	replies := make([]reply, len(probes))
	var wg sync.WaitGroup
	for i, pr := range probes {
		wg.Go(func() { replies[i] = pr.do() })
	}
	wg.Wait()
	var longest time.Duration
	for i, pr := range probes {
		r := replies[i]
		longest = max(longest, r.took)
		what := pr.name + " with the database frozen"
		if r.err != nil || r.took > bound {
			t.Errorf("%s: %s, want an answer within %s", what, r, bound)
			continue
		}
		pr.check(what, r)
	}
	figureDuration(t, "frozen_db_longest_answer", longest)
	if p.exited() {
		t.Fatalf("the server exited (%d) with the database frozen", p.code)
	}

	modelstest.Thaw(t)
	back := waitFor(t, "an API create after MariaDB resumed", 30*time.Second, 20*time.Millisecond, func() bool {
		return api.createPet("after the freeze").status == http.StatusCreated
	})
	figureDuration(t, "frozen_db_recovery_create", back)
	if r := do(plain, http.MethodGet, p.base+"/readyz", ""); r.status != http.StatusOK {
		t.Errorf("GET /readyz after the freeze: %s", r)
	}
	p.stop(t)
}

// TestStartup starts servers while MariaDB is down: one with the default
// connect timeout waits with backoff and serves once MariaDB starts 2 s
// later; one with DATABASE_CONNECT_TIMEOUT=2s gives up with exit code 1 and
// one line naming DATABASE_URL.
func TestStartup(t *testing.T) {
	// Not parallel: it stops the MariaDB server all tests share.
	waitURL := modelstest.URL(t, models.DriverMySQL)
	giveUpURL := modelstest.URL(t, models.DriverMySQL)
	petstoreBinary(t) // built before the clock starts
	modelstest.Stop(t)

	started := time.Now()
	waiting := startProc(t, "waiting serve", serveVars(waitURL), "serve")
	impatient := serveVars(giveUpURL)
	impatient["DATABASE_CONNECT_TIMEOUT"] = "2s"
	givingUp := startProc(t, "impatient serve", impatient, "serve")

	code := givingUp.wait(t, 15*time.Second)
	gaveUp := givingUp.exitedAt.Sub(started)
	figureDuration(t, "startup_give_up_with_2s_timeout", gaveUp)
	if code != 1 {
		t.Errorf("with the database down and DATABASE_CONNECT_TIMEOUT=2s: exit %d, want 1", code)
	}
	if gaveUp < 2*time.Second || gaveUp > 7*time.Second {
		t.Errorf("gave up after %s, want about 2 s", gaveUp)
	}
	stderr := givingUp.stderr.String()
	if n := len(retryWarning.FindAllString(stderr, -1)); n < 2 {
		t.Errorf("%d retries logged in 2 s, want several (backoff from 100 ms):\n%s", n, stderr)
	}
	line := wantOneLine(t, "stderr without the retry lines", retryWarning.ReplaceAllString(stderr, ""))
	if !strings.HasPrefix(line, "petstore: DATABASE_URL: ") {
		t.Errorf("final line %q, want petstore: DATABASE_URL: ...", line)
	}
	if givingUp.stdout.String() != "" {
		t.Errorf("the impatient server printed on stdout:\n%s", givingUp.stdout)
	}

	time.Sleep(time.Until(started.Add(2 * time.Second)))
	if waiting.exited() {
		t.Fatalf("the waiting server exited (%d) while the database was down:\n%s", waiting.code, waiting.stderr)
	}
	if listeningPattern.MatchString(waiting.stderr.String()) {
		t.Fatal("the waiting server serves without a database")
	}
	modelstest.Start(t)
	back := time.Now()
	waiting.waitListening(t, time.Minute)
	up := time.Since(back)
	figureDuration(t, "startup_serving_after_db_back", up)
	if n := len(retryWarning.FindAllString(waiting.stderr.String(), -1)); n < 2 {
		t.Errorf("the waiting server logged %d retries, want several", n)
	}
	b := bootstrapOf(t, waiting.stdout.String())
	if r := do(&http.Client{Timeout: 15 * time.Second}, http.MethodGet, waiting.base+"/readyz", ""); r.status != http.StatusOK {
		t.Errorf("GET /readyz: %s, want 200", r)
	}
	wantCreated(t, newAPIClient(waiting.base, b.key).createPet("after a late database"), "after a late database")
	waiting.stop(t)
}

// TestNoLostWrites creates pets from several goroutines while MariaDB is
// stopped and started again, twice. Every create answered 201 must be found
// afterwards; every failure must be a 503 unavailable and leave the pet
// either wholly absent or wholly present (the pet and its audit event).
func TestNoLostWrites(t *testing.T) {
	// Not parallel: it stops the MariaDB server all tests share.
	const (
		workers  = 8
		restarts = 2
	)
	databaseURL := modelstest.URL(t, models.DriverMySQL)
	p := serveProc(t, "serve", serveVars(databaseURL))
	api := newAPIClient(p.base, bootstrapOf(t, p.stdout.String()).key)
	api.http.Transport = &http.Transport{MaxIdleConnsPerHost: workers}

	type failure struct {
		name string
		r    reply
	}
	var (
		mu        sync.Mutex
		created   = map[int64]string{} // id -> name of every 201
		failed    []failure
		attempted atomic.Int64
		succeeded atomic.Int64
		stop      = make(chan struct{})
		wg        sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("nlw-%d-%d", w, seq)
				attempted.Add(1)
				r := api.createPet(name)
				if r.err == nil && r.status == http.StatusCreated {
					var pet petBody
					if err := json.Unmarshal(r.body, &pet); err != nil || pet.Name != name {
						t.Errorf("create %q: 201 with body %s", name, r.body)
					}
					mu.Lock()
					created[pet.ID] = name
					mu.Unlock()
					succeeded.Add(1)
					continue
				}
				mu.Lock()
				failed = append(failed, failure{name, r})
				mu.Unlock()
				time.Sleep(20 * time.Millisecond) // no hot loop while the database is away
			}
		})
	}
	stopWorkers := sync.OnceFunc(func() { close(stop); wg.Wait() })
	t.Cleanup(stopWorkers)

	progress := func(what string, n int64) {
		t.Helper()
		from := succeeded.Load()
		waitFor(t, what, 30*time.Second, 10*time.Millisecond, func() bool { return succeeded.Load() >= from+n })
	}
	progress("creates before the first restart", 100)
	for i := 1; i <= restarts; i++ {
		modelstest.Stop(t)
		time.Sleep(500 * time.Millisecond) // down for a moment, with creates failing
		modelstest.Start(t)
		from := succeeded.Load()
		d := waitFor(t, "a create after MariaDB came back", 30*time.Second, 5*time.Millisecond,
			func() bool { return succeeded.Load() > from })
		figureDuration(t, fmt.Sprintf("restart_%d_first_201_after_db_back", i), d)
		progress("creates after the restart", 100)
	}
	stopWorkers()

	// Every failure is the service saying the database is away, never a
	// 500 or a broken connection.
	byKind := map[string]int{}
	for _, f := range failed {
		kind := fmt.Sprint(f.r.status)
		if f.r.err != nil {
			kind = "transport error"
		}
		byKind[kind]++
		if byKind[kind] <= 3 {
			wantAPIError(t, "failed create "+f.name, f.r, http.StatusServiceUnavailable, models.CodeUnavailable)
		}
	}
	t.Logf("failures by status: %v", byKind)
	t.Logf("causes logged by the server: %v", failureCauses(p.stderr.String()))

	// Every 201 is listed by the API, under its name.
	listed := api.allPets(t)
	lost := 0
	for id, name := range created {
		if listed[id].Name != name {
			lost++
			if lost <= 5 {
				t.Errorf("pet %d %q was answered 201 but is not listed (got %+v)", id, name, listed[id])
			}
		}
	}

	// In the database, every pet has exactly its one creation event, and
	// no creation event lacks its pet.
	db := openStore(t, databaseURL).SQLDB()
	rows, err := db.QueryContext(t.Context(), `SELECT p.id, p.name, COUNT(a.id) FROM pets p
		LEFT JOIN audit_events a ON a.action = ? AND a.target_type = ? AND a.target_id = p.id
		GROUP BY p.id, p.name`, models.ActionPetCreated, models.TargetPet)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]int64{} // name -> audit events
	halfStored := 0
	for rows.Next() {
		var (
			id     int64
			name   string
			events int64
		)
		if err := rows.Scan(&id, &name, &events); err != nil {
			t.Fatal(err)
		}
		if _, dup := stored[name]; dup {
			t.Errorf("pet name %q stored twice", name)
		}
		stored[name] = events
		if events != 1 {
			halfStored++
			t.Errorf("pet %d %q has %d creation events, want 1", id, name, events)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	var orphans int
	if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM audit_events a LEFT JOIN pets p ON p.id = a.target_id
		WHERE a.action = ? AND a.target_type = ? AND p.id IS NULL`, models.ActionPetCreated, models.TargetPet).Scan(&orphans); err != nil {
		t.Fatal(err)
	}
	if orphans != 0 {
		t.Errorf("%d pet creation events without their pet", orphans)
	}
	if len(stored) != len(listed) {
		t.Errorf("%d pets in the database, %d listed by the API", len(stored), len(listed))
	}
	// A failed create may still have committed (the answer was lost with
	// the connection); then it is whole, as checked above.
	failedStored := 0
	for _, f := range failed {
		if _, ok := stored[f.name]; ok {
			failedStored++
		}
	}

	figure(t, "creates_attempted", float64(attempted.Load()), "creates")
	figure(t, "creates_succeeded", float64(len(created)), "creates")
	figure(t, "creates_failed", float64(len(failed)), "creates")
	figure(t, "creates_failed_but_stored_whole", float64(failedStored), "creates")
	figure(t, "creates_half_stored", float64(halfStored+orphans), "creates")
	figure(t, "creates_lost", float64(lost), "creates")
	if int(attempted.Load()) != len(created)+len(failed) {
		t.Errorf("%d attempted, %d succeeded + %d failed", attempted.Load(), len(created), len(failed))
	}
	if len(failed) == 0 {
		t.Error("no create failed: the restarts were not seen")
	}
	if lost != 0 {
		t.Errorf("%d acknowledged creates lost", lost)
	}
	if p.exited() {
		t.Fatalf("the server exited (%d) during the restarts", p.code)
	}
	p.stop(t)
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

var (
	requestFailed = regexp.MustCompile(`msg="request failed" .*? error="((?:[^"\\]|\\.)*)"`)
	addresses     = regexp.MustCompile(`\d+\.\d+\.\d+\.\d+:\d+(->\d+\.\d+\.\d+\.\d+:\d+)?`)
)

// failureCauses counts the distinct causes of the failed requests a server
// logged, with addresses removed, for the test log.
func failureCauses(log string) map[string]int {
	causes := map[string]int{}
	for _, m := range requestFailed.FindAllStringSubmatch(log, -1) {
		causes[addresses.ReplaceAllString(m[1], "ADDR")]++
	}
	return causes
}
