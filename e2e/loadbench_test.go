package e2e

// The HTTP load benchmark: the real binary, on each engine,
// under a closed-loop load of keep-alive clients, written to
// testdata/loadbench.txt (a table) and testdata/loadbench.json. It is a test
// that runs only when asked, so that `make test` stays fast:
//
//	make bench
//	PETSTORE_LOADBENCH=1 PETSTORE_REQUIRE_MARIADB=1 go test -count=1 -v -timeout 60m -run '^TestLoadBench$' .
//
// Knobs (environment): LOADBENCH_ROWS (pets seeded, default 100000),
// LOADBENCH_CONNS (concurrent connections, 16), LOADBENCH_DURATION (per
// case, 5s), LOADBENCH_WARMUP (unrecorded load before each case, 2s),
// LOADBENCH_CLIENT_PROCS (GOMAXPROCS of the load generator while it runs,
// 1: like `wrk -t1`, it leaves the other core to the server).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
)

// loadSettings are the knobs of one run.
type loadSettings struct {
	rows        int
	conns       int
	duration    time.Duration
	warmup      time.Duration
	clientProcs int
}

// loadCase is one kind of request the load repeats.
type loadCase struct {
	name   string
	method string
	path   string
	body   []byte // POST body; nil for GET
	want   int    // the status of a correct answer
}

// caseResult is what one case measured; JSON names are the file's.
type caseResult struct {
	Case              string         `json:"case"`
	Request           string         `json:"request"`
	Requests          int            `json:"requests"` // correct answers only
	Seconds           float64        `json:"seconds"`
	ReqPerSec         float64        `json:"req_per_s"`
	P50ms             float64        `json:"p50_ms"`
	P99ms             float64        `json:"p99_ms"`
	Errors            int            `json:"errors"`
	ErrorKinds        map[string]int `json:"error_kinds,omitempty"`
	PeakRSSMiB        float64        `json:"peak_rss_mib"`          // the server's VmHWM after this case
	ServerCPUusPerReq float64        `json:"server_cpu_us_per_req"` // petstore serve
	DBCPUusPerReq     float64        `json:"db_cpu_us_per_req"`     // the private mariadbd; 0 on SQLite
	ClientCPUPct      float64        `json:"client_cpu_pct"`        // the load generator, % of one core
	ClientCPUusPerReq float64        `json:"client_cpu_us_per_req"`
	OtherCPUPct       float64        `json:"other_cpu_pct"`    // every other process, % of one core: noise
	MachineBusyPct    float64        `json:"machine_busy_pct"` // % of all cores, every process
}

// engineResult is one engine's run.
type engineResult struct {
	Engine      string       `json:"engine"`
	Version     string       `json:"version"`
	Seed        string       `json:"seed"` // how the pets were seeded: "petstore seed"
	SeedSeconds float64      `json:"seed_seconds"`
	MaxID       int64        `json:"max_id"`
	PeakRSSMiB  float64      `json:"peak_rss_mib"` // the server's VmHWM at the end
	Cases       []caseResult `json:"cases"`
}

// loadReport is testdata/loadbench.json.
type loadReport struct {
	Date    string `json:"date"`
	Machine struct {
		CPUs       int    `json:"cpus"`
		GOMAXPROCS int    `json:"gomaxprocs"`
		CPUModel   string `json:"cpu_model"`
	} `json:"machine"`
	GoVersion       string         `json:"go_version"`
	Commit          string         `json:"commit"`
	Rows            int            `json:"rows"`
	Conns           int            `json:"conns"`
	DurationSeconds float64        `json:"duration_s"`
	WarmupSeconds   float64        `json:"warmup_s"`
	ClientProcs     int            `json:"client_gomaxprocs"`
	Engines         []engineResult `json:"engines"`
	Passed          bool           `json:"passed"`
}

// maxErrorRate is the share of wrong answers above which a case fails.
const maxErrorRate = 0.001

// TestLoadBench measures req/s, p50, p99 and the server's peak RSS of four
// API cases on SQLite and MariaDB. It asserts no times (the targets
// are judged from the figures): it fails when something is missing, when
// the server does not answer correctly, or when more than 0.1% of the
// answers under load are wrong.
func TestLoadBench(t *testing.T) {
	if os.Getenv("PETSTORE_LOADBENCH") != "1" {
		t.Skip("the HTTP load benchmark runs only with PETSTORE_LOADBENCH=1 (make bench)")
	}
	set := loadSettings{
		rows:        envInt(t, "LOADBENCH_ROWS", 100_000, 1000),
		conns:       envInt(t, "LOADBENCH_CONNS", 16, 1),
		duration:    envDuration(t, "LOADBENCH_DURATION", 5*time.Second),
		warmup:      envDuration(t, "LOADBENCH_WARMUP", 2*time.Second),
		clientProcs: envInt(t, "LOADBENCH_CLIENT_PROCS", 1, 1),
	}
	if set.duration <= 0 {
		t.Fatalf("LOADBENCH_DURATION must be more than 0")
	}
	for _, f := range []string{"/proc/self/status", "/proc/self/stat", "/proc/stat"} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("the load benchmark reads peak RSS and CPU time from /proc (Linux): %v", err)
		}
	}

	rep := loadReport{Date: time.Now().UTC().Format(time.RFC3339), GoVersion: runtime.Version(), Commit: gitCommit(),
		Rows: set.rows, Conns: set.conns, DurationSeconds: set.duration.Seconds(), WarmupSeconds: set.warmup.Seconds(),
		ClientProcs: set.clientProcs}
	rep.Machine.CPUs, rep.Machine.GOMAXPROCS, rep.Machine.CPUModel = runtime.NumCPU(), runtime.GOMAXPROCS(0), cpuModel()
	testkit.Binary(t) // build once, before any engine is timed

	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			res := benchEngine(t, driver, set)
			rep.Engines = append(rep.Engines, res)
		})
	}
	rep.Passed = !t.Failed()
	table := loadTable(rep)
	fmt.Print("\n" + table)
	dir := testkit.RepoPath(t, "testdata")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetEscapeHTML(false) // the query strings keep their &
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"loadbench.txt": []byte(table), "loadbench.json": js.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("wrote testdata/loadbench.txt and testdata/loadbench.json")
}

// benchEngine prepares a fresh database on driver, starts the server on it
// and measures every case.
func benchEngine(t testing.TB, driver string, set loadSettings) engineResult {
	databaseURL := modelstest.URL(t, driver) // fails when MariaDB is required and missing
	vars := map[string]string{"DATABASE_URL": databaseURL}
	testkit.WantCode(t, testkit.RunBinary(t, vars, "migrate"), 0)
	keyRun := testkit.RunBinary(t, vars, "apikey", "create", "--name", "bench")
	testkit.WantCode(t, keyRun, 0)
	key := testkit.LastLine(strings.TrimSpace(keyRun.Stdout))
	if key == "" || strings.ContainsAny(key, " \t") {
		t.Fatalf("apikey create printed no key on its last line:\n%s", keyRun.Stdout)
	}

	store := testkit.OpenStore(t, databaseURL)
	var res engineResult
	res.Engine, res.Version = engineVersion(t, driver, store)
	start := time.Now()
	seedPets(t, vars, store, set.rows)
	res.Seed = "petstore seed"
	res.SeedSeconds = roundTo(time.Since(start).Seconds(), 1)
	res.MaxID = modelstest.MaxPetID(t, store)
	store.Close() // the server is the only client while it is measured
	t.Logf("%s %s: %d pets seeded with %s in %.1f s, max id %d", res.Engine, res.Version, set.rows, res.Seed, res.SeedSeconds, res.MaxID)

	srv := startBenchServer(t, databaseURL)
	cases := []loadCase{
		{"list20", http.MethodGet, "/v1/pets?limit=20", nil, http.StatusOK},
		{"sold100", http.MethodGet, "/v1/pets?limit=100&status=sold", nil, http.StatusOK},
		{"deep20", http.MethodGet, fmt.Sprintf("/v1/pets?limit=20&after=%d", res.MaxID-200), nil, http.StatusOK},
		{"create", http.MethodPost, "/v1/pets", []byte(`{"name":"bench pet","categoryId":7,"status":"available"}`), http.StatusCreated},
	}
	for _, c := range cases {
		preflight(t, srv.Base, key, c, res.MaxID)
	}
	for _, c := range cases {
		r := measureCase(t, srv, key, c, set)
		res.Cases = append(res.Cases, r)
		t.Logf("%s %-8s %8.1f req/s  p50 %6.2f ms  p99 %7.2f ms  errors %d  peak RSS %.1f MiB  server %.0f us/req  client %.0f%% of a core",
			res.Engine, c.name, r.ReqPerSec, r.P50ms, r.P99ms, r.Errors, r.PeakRSSMiB, r.ServerCPUusPerReq, r.ClientCPUPct)
		if total := r.Requests + r.Errors; r.Requests == 0 || float64(r.Errors) > maxErrorRate*float64(total) {
			t.Errorf("%s %s: %d wrong answers of %d (%v), more than %.1f%%", res.Engine, c.name, r.Errors, total, r.ErrorKinds, 100*maxErrorRate)
		}
	}
	res.PeakRSSMiB = srv.peakRSS(t)
	srv.Stop(t)
	return res
}

// ---- seeding ----

// seedPets fills the database with rows pets through `petstore seed`.
func seedPets(t testing.TB, vars map[string]string, store *models.Store, rows int) {
	t.Helper()
	p := testkit.StartBinary(t, "seed", vars, "seed", "--pets", strconv.Itoa(rows))
	if code := p.Wait(t, 30*time.Minute); code != 0 {
		t.Fatalf("petstore seed --pets %d exited with %d\nstdout:\n%s\nstderr:\n%s", rows, code, testkit.Tail(p.Stdout.String(), 20), testkit.Tail(p.Stderr.String(), 20))
	}
	n := modelstest.CountRows(t, store, modelstest.Pets)
	if n < rows {
		t.Fatalf("petstore seed --pets %d left %d pets", rows, n)
	}
}

// engineVersion names the database engine and its version.
func engineVersion(t testing.TB, driver string, store *models.Store) (string, string) {
	t.Helper()
	engine := "sqlite"
	if driver == models.DriverMySQL {
		engine = "mysql"
	}
	v := modelstest.EngineVersion(t, store)
	if strings.Contains(strings.ToLower(v), "mariadb") {
		engine = "mariadb"
	}
	return engine, v
}

// ---- the server ----

// benchServer is `petstore serve` as a child process whose log goes to a
// file (see startBinaryLogging).
type benchServer struct {
	*testkit.Instance
	dbPIDs []int // the private mariadbd, for its CPU time
}

func startBenchServer(t testing.TB, databaseURL string) *benchServer {
	t.Helper()
	vars := map[string]string{"DATABASE_URL": databaseURL, "LISTEN_ADDR": "127.0.0.1:0",
		"RATE_LIMIT_RPS": "1000000", "RATE_LIMIT_BURST": "1000000"}
	s := &benchServer{Instance: testkit.StartBinaryLogging(t, "petstore serve", vars, filepath.Join(t.TempDir(), "serve.log"), "serve")}
	if strings.HasPrefix(databaseURL, "mysql:") {
		s.dbPIDs = childDatabases()
	}
	s.WaitListening(t, time.Minute)
	plain := testkit.NewHTTPClient(10 * time.Second)
	testkit.WaitFor(t, "GET /readyz answers 200", time.Minute, 50*time.Millisecond, func() bool {
		return testkit.Send(plain, http.MethodGet, s.Base, "/readyz", nil, "").Status == http.StatusOK
	})
	return s
}

// alive fails the test when the server has ended.
func (s *benchServer) alive(t testing.TB) {
	t.Helper()
	if s.Exited() {
		t.Fatalf("petstore serve has exited (%d):\n%s", s.Code, testkit.Tail(s.Stderr.String(), 30))
	}
}

// peakRSS is the server's peak resident set so far (VmHWM), in MiB.
func (s *benchServer) peakRSS(t testing.TB) float64 {
	t.Helper()
	s.alive(t)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.Pid))
	if err != nil {
		t.Fatalf("peak RSS of petstore serve: %v", err)
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				t.Fatalf("VmHWM line %q: %v", line, err)
			}
			return roundTo(kb/1024, 1)
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", s.Pid)
	return 0
}

// ---- the load ----

// preflight sends one request of case c and checks that the answer is the
// right one, so that a fast wrong answer is never measured.
func preflight(t testing.TB, base, key string, c loadCase, maxID int64) {
	t.Helper()
	header := http.Header{}
	if c.body != nil {
		header.Set("Content-Type", "application/json")
	}
	resp := testkit.NewAPIClient(base, key).Do(c.method, c.path, header, string(c.body))
	if resp.Err != nil || resp.Status != c.want {
		t.Fatalf("preflight %s %s %s: %s, want %d", c.name, c.method, c.path, resp, c.want)
	}
	body := resp.Body
	if c.method == http.MethodPost {
		if resp.Header.Get("Location") == "" {
			t.Fatalf("preflight %s: 201 without a Location", c.name)
		}
		return
	}
	var pets []struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal(body, &pets); err != nil {
		t.Fatalf("preflight %s: %v in %s", c.name, err, testkit.Tail(string(body), 5))
	}
	want, _ := url.Parse(c.path)
	limit, _ := strconv.Atoi(want.Query().Get("limit"))
	if len(pets) != limit {
		t.Fatalf("preflight %s: %d pets, want a full page of %d", c.name, len(pets), limit)
	}
	for _, p := range pets {
		if st := want.Query().Get("status"); st != "" && p.Status != st {
			t.Fatalf("preflight %s: pet %d has status %q", c.name, p.ID, p.Status)
		}
		if want.Query().Has("after") && p.ID <= maxID-200 {
			t.Fatalf("preflight %s: pet %d is not after the cursor %d", c.name, p.ID, maxID-200)
		}
	}
}

// measureCase runs the warm-up, then the measured load, and gathers the
// figures of case c.
func measureCase(t testing.TB, srv *benchServer, key string, c loadCase, set loadSettings) caseResult {
	t.Helper()
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          set.conns,
		MaxIdleConnsPerHost:   set.conns,
		MaxConnsPerHost:       set.conns,
		IdleConnTimeout:       time.Minute,
		ResponseHeaderTimeout: 30 * time.Second,
		DisableCompression:    true, // as wrk: no Accept-Encoding
	}
	defer tr.CloseIdleConnections()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(set.clientProcs))

	waitQuiet(t, c.name, 10*time.Second)
	if set.warmup > 0 {
		runLoad(tr, srv.Base, key, c, set.conns, set.warmup)
	}
	srv.alive(t)
	runtime.GC() // not during the measured load
	cpu0 := takeCPU(t, srv)
	run := runLoad(tr, srv.Base, key, c, set.conns, set.duration)
	cpu := takeCPU(t, srv).since(cpu0)

	r := caseResult{Case: c.name, Request: c.method + " " + c.path, Requests: len(run.latencies), Seconds: roundTo(run.elapsed.Seconds(), 3),
		Errors: run.errors, ErrorKinds: run.kinds, PeakRSSMiB: srv.peakRSS(t)}
	r.ReqPerSec = roundTo(float64(r.Requests)/run.elapsed.Seconds(), 1)
	slices.Sort(run.latencies)
	r.P50ms, r.P99ms = percentileMS(run.latencies, 0.50), percentileMS(run.latencies, 0.99)
	if done := float64(r.Requests + r.Errors); done > 0 {
		r.ServerCPUusPerReq = roundTo(cpu.server.Seconds()*1e6/done, 1)
		r.DBCPUusPerReq = roundTo(cpu.db.Seconds()*1e6/done, 1)
		r.ClientCPUusPerReq = roundTo(cpu.client.Seconds()*1e6/done, 1)
	}
	wall := cpu.wall.Seconds()
	r.ClientCPUPct = roundTo(100*cpu.client.Seconds()/wall, 1)
	r.OtherCPUPct = roundTo(100*max(cpu.busy-cpu.client-cpu.server-cpu.db, 0).Seconds()/wall, 1)
	r.MachineBusyPct = roundTo(100*cpu.busy.Seconds()/wall/float64(runtime.NumCPU()), 1)
	if run.firstErr != "" {
		t.Logf("%s: first wrong answer: %s", c.name, run.firstErr)
	}
	if r.OtherCPUPct > 20 {
		t.Logf("%s: other processes took %.0f%% of a core during the run: a noisy machine, the figures are low", c.name, r.OtherCPUPct)
	}
	return r
}

// loadRun is what one closed-loop load saw.
type loadRun struct {
	latencies []time.Duration // of the correct answers
	errors    int
	kinds     map[string]int // "HTTP 500", "transport", ...
	firstErr  string
	elapsed   time.Duration
}

// runLoad keeps conns clients busy for d, each sending its next request as
// soon as the previous answer has been read in full.
func runLoad(tr *http.Transport, base, key string, c loadCase, conns int, d time.Duration) loadRun {
	u, err := url.Parse(base + c.path)
	if err != nil {
		panic(err)
	}
	header := http.Header{"Authorization": {"Bearer " + key}}
	if c.body != nil {
		header.Set("Content-Type", "application/json")
	}
	var stop atomic.Bool
	runs := make([]loadRun, conns)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range runs {
		wg.Go(func() { runs[i] = loadClient(tr, u, header, c, &stop) })
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	all := loadRun{elapsed: time.Since(start), kinds: map[string]int{}}
	for _, r := range runs {
		all.latencies = append(all.latencies, r.latencies...)
		all.errors += r.errors
		for k, n := range r.kinds {
			all.kinds[k] += n
		}
		if all.firstErr == "" {
			all.firstErr = r.firstErr
		}
	}
	if len(all.kinds) == 0 {
		all.kinds = nil
	}
	return all
}

// loadClient is one closed-loop client on its own keep-alive connection. A GET
// request is built once and reused (allowed once its answer is closed); a
// POST gets a new request per send, as its body is read by the transport.
func loadClient(tr *http.Transport, u *url.URL, header http.Header, c loadCase, stop *atomic.Bool) loadRun {
	run := loadRun{latencies: make([]time.Duration, 0, 1<<14)}
	get := &http.Request{Method: c.method, URL: u, Header: header, Host: u.Host, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	for !stop.Load() {
		req := get
		if c.body != nil {
			req = &http.Request{Method: c.method, URL: u, Header: header, Host: u.Host, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
				Body: io.NopCloser(bytes.NewReader(c.body)), ContentLength: int64(len(c.body))}
		}
		t0 := time.Now()
		resp, err := tr.RoundTrip(req)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		took := time.Since(t0)
		switch {
		case err != nil:
			run.fail("transport", err.Error())
		case resp.StatusCode != c.want:
			run.fail("HTTP "+strconv.Itoa(resp.StatusCode), resp.Status)
		default:
			run.latencies = append(run.latencies, took)
		}
	}
	return run
}

func (r *loadRun) fail(kind, detail string) {
	r.errors++
	if r.kinds == nil {
		r.kinds = map[string]int{}
	}
	r.kinds[kind]++
	if r.firstErr == "" {
		r.firstErr = kind + ": " + detail
	}
}

// percentileMS is the nearest-rank percentile q of sorted, in milliseconds.
func percentileMS(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := max(int(math.Ceil(q*float64(len(sorted))))-1, 0)
	return float64(sorted[i].Microseconds()) / 1000
}

// round rounds x to places decimals, for figures that are not more exact.
func roundTo(x float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(x*p) / p
}

// ---- CPU and machine ----

// cpuSample is the CPU time used so far by each party to a run.
type cpuSample struct {
	wall   time.Duration // for a sample's difference: the time it spans
	at     time.Time
	client time.Duration // this process: the load generator
	server time.Duration // petstore serve
	db     time.Duration // the private mariadbd, when there is one
	busy   time.Duration // every CPU, every process (kernel time included)
}

func takeCPU(t testing.TB, srv *benchServer) cpuSample {
	t.Helper()
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru) // children (mariadbd) are not in RUSAGE_SELF
	server, err := procCPU(srv.Pid)
	if err != nil {
		t.Fatalf("CPU time of petstore serve: %v", err)
	}
	c := cpuSample{at: time.Now(), client: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), server: server, busy: machineBusy(t)}
	for _, pid := range srv.dbPIDs {
		d, _ := procCPU(pid) // gone: counted as nothing
		c.db += d
	}
	return c
}

// since is the CPU time each party used from c0 to c.
func (c cpuSample) since(c0 cpuSample) cpuSample {
	return cpuSample{wall: c.at.Sub(c0.at), client: c.client - c0.client, server: c.server - c0.server,
		db: c.db - c0.db, busy: c.busy - c0.busy}
}

// jiffy is the unit of CPU times in /proc: USER_HZ is 100 on every Linux
// platform Go runs on.
const jiffy = 10 * time.Millisecond

// procCPU is the user+system CPU time of process pid.
func procCPU(pid int) (time.Duration, error) {
	_, f, err := procStat(pid)
	if err != nil {
		return 0, err
	}
	// f starts at the 3rd field of the line (state): utime and stime are
	// the 14th and 15th.
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * jiffy, nil
}

// procStat reads /proc/PID/stat: the command name, and the fields after it.
func procStat(pid int) (string, []string, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", nil, err
	}
	open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return "", nil, fmt.Errorf("unexpected /proc/%d/stat: %s", pid, stat)
	}
	f := strings.Fields(string(stat[end+1:]))
	if len(f) < 13 {
		return "", nil, fmt.Errorf("unexpected /proc/%d/stat: %s", pid, stat)
	}
	return string(stat[open+1 : end]), f, nil
}

// childDatabases returns the ids of the database servers this process
// started (modelstest's private mariadbd); none for an outside server.
func childDatabases() []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, f, err := procStat(pid)
		if err == nil && (comm == "mariadbd" || comm == "mysqld") && f[1] == strconv.Itoa(os.Getpid()) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitQuiet waits, at most limit, for the machine to be idle (under 15%
// busy over half a second), so that on a shared machine a case does not
// start in the middle of other work. The other-CPU figure says whether it
// stayed so.
func waitQuiet(t testing.TB, what string, limit time.Duration) {
	t.Helper()
	const span = 500 * time.Millisecond
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		b0 := machineBusy(t)
		time.Sleep(span)
		if busy := machineBusy(t) - b0; busy < span*time.Duration(runtime.NumCPU())*15/100 {
			return
		}
	}
	t.Logf("%s: the machine stayed busy for %s; measuring anyway", what, limit)
}

// machineBusy is the CPU time every CPU has spent busy since boot.
func machineBusy(t testing.TB) time.Duration {
	t.Helper()
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(stat), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	var busy int64
	for i, v := range f[1:min(len(f), 9)] {
		n, _ := strconv.ParseInt(v, 10, 64)
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return time.Duration(busy) * jiffy
}

func cpuModel() string {
	info, _ := os.ReadFile("/proc/cpuinfo")
	for line := range strings.Lines(string(info)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// gitCommit names the checkout measured, "-dirty" when it has changes.
func gitCommit() string {
	out, err := exec.Command("git", "describe", "--always", "--dirty", "--abbrev=12").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// ---- settings and output ----

// envInt reads a whole number of at least lowest from name, or def.
func envInt(t testing.TB, name string, def, lowest int) int {
	t.Helper()
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(strings.ReplaceAll(v, "_", ""))
	if err != nil || n < lowest {
		t.Fatalf("%s=%q: want a whole number of at least %d", name, v, lowest)
	}
	return n
}

// envDuration reads a duration ("5s", "1m") or a number of seconds from
// name, or def.
func envDuration(t testing.TB, name string, def time.Duration) time.Duration {
	t.Helper()
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return def
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		t.Fatalf("%s=%q: want a duration such as 5s or a number of seconds", name, v)
	}
	return d
}

// loadTable renders the report for people: testdata/loadbench.txt and stdout.
func loadTable(rep loadReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "petstore HTTP load benchmark, %s\n", rep.Date)
	fmt.Fprintf(&b, "machine: %d CPUs (GOMAXPROCS %d), %s; %s; commit %s\n", rep.Machine.CPUs, rep.Machine.GOMAXPROCS,
		rep.Machine.CPUModel, rep.GoVersion, rep.Commit)
	fmt.Fprintf(&b, "%d pets, %d keep-alive connections, %s per case after %s of warm-up; load generator at GOMAXPROCS %d\n\n",
		rep.Rows, rep.Conns, time.Duration(rep.DurationSeconds*float64(time.Second)), time.Duration(rep.WarmupSeconds*float64(time.Second)), rep.ClientProcs)
	const row = "%-8s %-8s %9s %9s %8s %8s %7s %9s %8s %8s %8s %8s\n"
	fmt.Fprintf(&b, row, "engine", "case", "requests", "req/s", "p50", "p99", "errors", "peak RSS", "server", "db", "client", "other")
	fmt.Fprintf(&b, row, "", "", "", "", "ms", "ms", "", "MiB", "us/req", "us/req", "% core", "% core")
	for _, e := range rep.Engines {
		for _, c := range e.Cases {
			fmt.Fprintf(&b, "%-8s %-8s %9d %9.1f %8.2f %8.2f %7d %9.1f %8.0f %8.0f %8.0f %8.0f\n", e.Engine, c.Case, c.Requests, c.ReqPerSec,
				c.P50ms, c.P99ms, c.Errors, c.PeakRSSMiB, c.ServerCPUusPerReq, c.DBCPUusPerReq, c.ClientCPUPct, c.OtherCPUPct)
		}
	}
	b.WriteString("\nserver, db: CPU time of petstore serve and of the private mariadbd per request; client: the load generator;\n")
	b.WriteString("other: every other process on the machine (above 20% the machine was busy and the figures are low).\n\n")
	for _, e := range rep.Engines {
		fmt.Fprintf(&b, "%s %s: seeded with %s in %.1f s; peak RSS at the end %.1f MiB\n", e.Engine, e.Version, e.Seed, e.SeedSeconds, e.PeakRSSMiB)
	}
	if !rep.Passed {
		b.WriteString("THE RUN FAILED: see the test output\n")
	}
	return b.String()
}
