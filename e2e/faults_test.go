package e2e

// Fault tests, each against the real binary over loopback HTTP: graceful
// shutdown with requests in flight (TestShutdown), MariaDB stopped
// (TestOutage) or frozen (TestOutageFrozenDatabase) under a running server,
// a database that is not up yet at start (TestStartup), and no lost writes
// while MariaDB restarts (TestNoLostWrites).
//
// The MariaDB server is shared by every test of this binary, so the tests
// that stop or freeze it (all but TestShutdown) do not call t.Parallel:
// sequential top-level tests run before any parallel test resumes, so no
// other test sees the outage.
//
// Every figure measured is logged and appended as one JSON line to the file
// named by PETSTORE_FIGURES (default testdata/figures.jsonl): see figure.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"petstore/api"
	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
)

// stackTrace matches what must never reach a client: Go panics, stack
// frames, or the raw database driver error.
var stackTrace = regexp.MustCompile(`goroutine \d+|panic|\.go:\d+|runtime/|dial tcp|connection refused|Error \d{4}`)

// TestShutdown sends SIGTERM while requests are in flight: each has sent
// its headers and half its body, and the handler is reading it. All must
// complete with 201, new connections must be refused from the signal on,
// the process must exit 0 within the 15 s bound, and every pet is stored.
func TestShutdown(t *testing.T) {
	t.Parallel()
	const inFlight = 10
	databaseURL := modelstest.URL(t, models.DriverSQLite)
	p := testkit.ServeBinary(t, "serve", testkit.ServeVars(databaseURL))
	key := testkit.BootstrapOf(t, p.Stdout.String()).Key

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
		res       chan testkit.Reply
	}
	calls := make([]*call, inFlight)
	for i := range calls {
		pr, pw := io.Pipe()
		c := &call{name: fmt.Sprintf("in flight %d", i), pw: pw, continued: make(chan struct{}), res: make(chan testkit.Reply, 1)}
		c.body = fmt.Sprintf(`{"name": %q, "categoryId": %d, "status": "pending"}`, c.name, 100+i)
		calls[i] = c
		var once sync.Once
		trace := &httptrace.ClientTrace{Got100Continue: func() { once.Do(func() { close(c.continued) }) }}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), http.MethodPost, p.Base+"/v1/pets", pr)
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
				c.res <- testkit.Reply{Err: err, Took: time.Since(start)}
				return
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			c.res <- testkit.Reply{Status: res.StatusCode, Header: res.Header, Body: b, Took: time.Since(start), Err: err}
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

	signalled := p.Signal(t, syscall.SIGTERM)
	// Shutdown closes the listener first: new connections are refused.
	refused := testkit.WaitFor(t, "new connections refused after SIGTERM", 5*time.Second, 10*time.Millisecond, func() bool {
		conn, err := net.DialTimeout("tcp", p.Addr, time.Second)
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
	testkit.FigureDuration(t, "shutdown_listener_closed_after_signal", refused)
	for _, c := range calls {
		select {
		case r := <-c.res:
			t.Fatalf("%s answered before its body was complete: %s", c.name, r)
		default:
		}
		if p.Exited() {
			t.Fatalf("the process exited (%d) with requests in flight", p.Code)
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
			pet := testkit.WantCreated(t, r, c.name)
			created[pet.ID] = pet.Name
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: no answer", c.name)
		}
	}
	if code := p.Wait(t, 20*time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0\nstderr:\n%s", code, p.Stderr)
	}
	took := p.ExitedAt.Sub(signalled)
	testkit.Figure(t, "shutdown_requests_in_flight", inFlight, "requests")
	testkit.FigureDuration(t, "shutdown_signal_to_exit", took)
	if took > 15*time.Second {
		t.Errorf("shutdown took %s, more than the 15 s bound", took)
	}
	if !strings.Contains(p.Stderr.String(), `msg=stopped`) {
		t.Errorf("no 'stopped' log line:\n%s", testkit.Tail(p.Stderr.String(), 10))
	}

	store := testkit.OpenStore(t, databaseURL)
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
	p := testkit.ServeBinary(t, "serve", testkit.ServeVars(databaseURL))
	b := testkit.BootstrapOf(t, p.Stdout.String())
	partner := testkit.NewAPIClient(p.Base, b.Key)
	staff := testkit.SignedIn(t, p.Base, b.Username, b.Password)
	plain := testkit.NewHTTPClient(15 * time.Second)

	before := testkit.WantCreated(t, partner.CreatePet("before the outage"), "before the outage")
	if r := staff.Get("/admin/pets"); r.Status != http.StatusOK {
		t.Fatalf("console before the outage: %s", r)
	}

	stopStart := time.Now()
	modelstest.Stop(t)
	testkit.FigureDuration(t, "mariadb_stop", time.Since(stopStart))

	// Twice: the first round meets the pool's dead connections, the second
	// fresh refused dials.
	for round := 1; round <= 2; round++ {
		check := func(what string, r testkit.Reply) {
			t.Helper()
			if r.Took > 5*time.Second {
				t.Errorf("round %d: %s took %s, want an answer within 5 s", round, what, r.Took)
			}
		}
		r := testkit.Send(plain, http.MethodGet, p.Base, "/readyz", nil, "")
		check("GET /readyz", r)
		testkit.WantAPIError(t, fmt.Sprintf("round %d: GET /readyz", round), r, http.StatusServiceUnavailable, models.CodeUnavailable)

		r = testkit.Send(plain, http.MethodGet, p.Base, "/healthz", nil, "")
		check("GET /healthz", r)
		if r.Status != http.StatusOK {
			t.Errorf("round %d: GET /healthz during the outage: %s, want 200", round, r)
		}

		r = partner.Get("/v1/pets")
		check("GET /v1/pets", r)
		testkit.WantAPIError(t, fmt.Sprintf("round %d: GET /v1/pets", round), r, http.StatusServiceUnavailable, models.CodeUnavailable)

		r = partner.CreatePet("during the outage")
		check("POST /v1/pets", r)
		testkit.WantAPIError(t, fmt.Sprintf("round %d: POST /v1/pets", round), r, http.StatusServiceUnavailable, models.CodeUnavailable)

		r = staff.Get("/admin/pets")
		check("GET /admin/pets", r)
		if r.Status != http.StatusServiceUnavailable || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") ||
			!bytes.Contains(r.Body, []byte("<html")) {
			t.Errorf("round %d: console during the outage: %s (Content-Type %q), want an HTML 503 page", round, r, r.Header.Get("Content-Type"))
		}
		if m := stackTrace.Find(r.Body); m != nil {
			t.Errorf("round %d: the console's error page shows %q:\n%s", round, m, r.Body)
		}
		if p.Exited() {
			t.Fatalf("the server exited (%d) during the outage", p.Code)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if strings.Contains(p.Stderr.String(), "panic") {
		t.Errorf("the server logged a panic:\n%s", testkit.Tail(p.Stderr.String(), 20))
	}
	// An outage is logged as one: at ERROR, 503, with its reason.
	if !outageLogged.MatchString(p.Stderr.String()) {
		t.Errorf("no ERROR line with status=503 reason=unavailable for the outage:\n%s", testkit.Tail(p.Stderr.String(), 20))
	}

	startStart := time.Now()
	modelstest.Start(t)
	back := time.Now()
	testkit.FigureDuration(t, "mariadb_start", back.Sub(startStart))
	ready := testkit.WaitFor(t, "/readyz 200 after MariaDB came back", 30*time.Second, 20*time.Millisecond, func() bool {
		return testkit.Send(plain, http.MethodGet, p.Base, "/readyz", nil, "").Status == http.StatusOK
	})
	testkit.FigureDuration(t, "recovery_readyz", ready)
	var after api.Pet
	wrote := testkit.WaitFor(t, "an API create after MariaDB came back", 30*time.Second, 20*time.Millisecond, func() bool {
		r := partner.CreatePet("after the outage")
		if r.Status == http.StatusCreated {
			after = testkit.WantCreated(t, r, "after the outage")
			return true
		}
		return false
	})
	testkit.FigureDuration(t, "recovery_create", ready+wrote)

	if r := staff.Get("/admin/pets"); r.Status != http.StatusOK {
		t.Errorf("console after the outage (same session): %s, want 200", r)
	}
	pets := partner.AllPets(t)
	if len(pets) != 2 || pets[before.ID].Name != before.Name || pets[after.ID].Name != after.Name {
		t.Errorf("pets after the outage: %v, want %q and %q", pets, before.Name, after.Name)
	}
	p.Stop(t)
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
	p := testkit.ServeBinary(t, "serve", testkit.ServeVars(databaseURL))
	b := testkit.BootstrapOf(t, p.Stdout.String())
	partner := testkit.NewAPIClient(p.Base, b.Key)
	partner.HTTP.Timeout = 2 * bound
	staff := testkit.SignedIn(t, p.Base, b.Username, b.Password)
	staff.HTTP.Timeout = 2 * bound
	plain := testkit.NewHTTPClient(2 * bound)
	testkit.WantCreated(t, partner.CreatePet("before the freeze"), "before the freeze")

	modelstest.Freeze(t)
	// All at once, each on its own connection: each waits for the database.
	probes := []struct {
		name  string
		do    func() testkit.Reply
		check func(string, testkit.Reply)
	}{
		{"GET /readyz", func() testkit.Reply { return testkit.Send(plain, http.MethodGet, p.Base, "/readyz", nil, "") },
			func(what string, r testkit.Reply) {
				testkit.WantAPIError(t, what, r, http.StatusServiceUnavailable, models.CodeUnavailable)
			}},
		{"GET /healthz", func() testkit.Reply { return testkit.Send(plain, http.MethodGet, p.Base, "/healthz", nil, "") },
			func(what string, r testkit.Reply) {
				if r.Status != http.StatusOK {
					t.Errorf("%s: %s, want 200", what, r)
				}
			}},
		{"GET /v1/pets", func() testkit.Reply { return partner.Get("/v1/pets") },
			func(what string, r testkit.Reply) {
				testkit.WantAPIError(t, what, r, http.StatusServiceUnavailable, models.CodeUnavailable)
			}},
		{"POST /v1/pets", func() testkit.Reply { return partner.CreatePet("during the freeze") },
			func(what string, r testkit.Reply) {
				testkit.WantAPIError(t, what, r, http.StatusServiceUnavailable, models.CodeUnavailable)
			}},
		{"GET /admin/pets", func() testkit.Reply { return staff.Get("/admin/pets") },
			func(what string, r testkit.Reply) {
				if r.Status != http.StatusServiceUnavailable || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
					t.Errorf("%s: %s, want an HTML 503 page", what, r)
				}
			}},
	}
	replies := make([]testkit.Reply, len(probes))
	var wg sync.WaitGroup
	for i, pr := range probes {
		wg.Go(func() { replies[i] = pr.do() })
	}
	wg.Wait()
	var longest time.Duration
	for i, pr := range probes {
		r := replies[i]
		longest = max(longest, r.Took)
		what := pr.name + " with the database frozen"
		if r.Err != nil || r.Took > bound {
			t.Errorf("%s: %s, want an answer within %s", what, r, bound)
			continue
		}
		pr.check(what, r)
	}
	testkit.FigureDuration(t, "frozen_db_longest_answer", longest)
	if p.Exited() {
		t.Fatalf("the server exited (%d) with the database frozen", p.Code)
	}

	modelstest.Thaw(t)
	back := testkit.WaitFor(t, "an API create after MariaDB resumed", 30*time.Second, 20*time.Millisecond, func() bool {
		return partner.CreatePet("after the freeze").Status == http.StatusCreated
	})
	testkit.FigureDuration(t, "frozen_db_recovery_create", back)
	if r := testkit.Send(plain, http.MethodGet, p.Base, "/readyz", nil, ""); r.Status != http.StatusOK {
		t.Errorf("GET /readyz after the freeze: %s", r)
	}
	p.Stop(t)
}

// TestStartup starts servers while MariaDB is down: one with the default
// connect timeout waits with backoff and serves once MariaDB starts 2 s
// later; one with DATABASE_CONNECT_TIMEOUT=2s gives up with exit code 1 and
// one line naming DATABASE_URL.
func TestStartup(t *testing.T) {
	// Not parallel: it stops the MariaDB server all tests share.
	waitURL := modelstest.URL(t, models.DriverMySQL)
	giveUpURL := modelstest.URL(t, models.DriverMySQL)
	testkit.Binary(t) // built before the clock starts
	modelstest.Stop(t)

	started := time.Now()
	waiting := testkit.StartBinary(t, "waiting serve", testkit.ServeVars(waitURL), "serve")
	impatient := testkit.ServeVars(giveUpURL)
	impatient["DATABASE_CONNECT_TIMEOUT"] = "2s"
	givingUp := testkit.StartBinary(t, "impatient serve", impatient, "serve")

	code := givingUp.Wait(t, 15*time.Second)
	gaveUp := givingUp.ExitedAt.Sub(started)
	testkit.FigureDuration(t, "startup_give_up_with_2s_timeout", gaveUp)
	if code != 1 {
		t.Errorf("with the database down and DATABASE_CONNECT_TIMEOUT=2s: exit %d, want 1", code)
	}
	if gaveUp < 2*time.Second || gaveUp > 7*time.Second {
		t.Errorf("gave up after %s, want about 2 s", gaveUp)
	}
	stderr := givingUp.Stderr.String()
	if n := len(testkit.RetryWarning.FindAllString(stderr, -1)); n < 2 {
		t.Errorf("%d retries logged in 2 s, want several (backoff from 100 ms):\n%s", n, stderr)
	}
	line := testkit.WantOneLine(t, "stderr without the retry lines", testkit.RetryWarning.ReplaceAllString(stderr, ""))
	if !strings.HasPrefix(line, "petstore: DATABASE_URL: ") {
		t.Errorf("final line %q, want petstore: DATABASE_URL: ...", line)
	}
	if givingUp.Stdout.String() != "" {
		t.Errorf("the impatient server printed on stdout:\n%s", givingUp.Stdout)
	}

	time.Sleep(time.Until(started.Add(2 * time.Second)))
	if waiting.Exited() {
		t.Fatalf("the waiting server exited (%d) while the database was down:\n%s", waiting.Code, waiting.Stderr)
	}
	if testkit.ListeningPattern.MatchString(waiting.Stderr.String()) {
		t.Fatal("the waiting server serves without a database")
	}
	modelstest.Start(t)
	back := time.Now()
	waiting.WaitListening(t, time.Minute)
	up := time.Since(back)
	testkit.FigureDuration(t, "startup_serving_after_db_back", up)
	if n := len(testkit.RetryWarning.FindAllString(waiting.Stderr.String(), -1)); n < 2 {
		t.Errorf("the waiting server logged %d retries, want several", n)
	}
	b := testkit.BootstrapOf(t, waiting.Stdout.String())
	if r := testkit.Send(testkit.NewHTTPClient(15*time.Second), http.MethodGet, waiting.Base, "/readyz", nil, ""); r.Status != http.StatusOK {
		t.Errorf("GET /readyz: %s, want 200", r)
	}
	testkit.WantCreated(t, testkit.NewAPIClient(waiting.Base, b.Key).CreatePet("after a late database"), "after a late database")
	waiting.Stop(t)
}

// TestNoLostWrites creates pets from several goroutines while MariaDB is
// stopped and started again, twice. Each create carries an Idempotency-Key
// and is retried with it until it is answered 201, as a careful partner
// would. Every failure must be a 503 unavailable (or a 409 while the key's
// first request is still held); every create must end up stored exactly
// once (no duplicate from a retry whose first attempt had committed, no
// create answered 201 and lost), whole (the pet and its audit event).
func TestNoLostWrites(t *testing.T) {
	// Not parallel: it stops the MariaDB server all tests share.
	const (
		workers  = 8
		restarts = 2
	)
	databaseURL := modelstest.URL(t, models.DriverMySQL)
	p := testkit.ServeBinary(t, "serve", testkit.ServeVars(databaseURL))
	partner := testkit.NewAPIClient(p.Base, testkit.BootstrapOf(t, p.Stdout.String()).Key)
	partner.HTTP.Transport = &http.Transport{MaxIdleConnsPerHost: workers}

	type failure struct {
		name string
		r    testkit.Reply
	}
	var (
		mu        sync.Mutex
		created   = map[int64]string{} // id -> name of every create, once answered 201
		failed    []failure            // every failed request
		attempted atomic.Int64         // creates started
		succeeded atomic.Int64         // creates answered 201
		retried   atomic.Int64         // creates that needed more than one request
		replayed  atomic.Int64         // creates whose 201 was a replay: a failed attempt had been stored
		stop      = make(chan struct{})
		wg        sync.WaitGroup
	)
	// create sends one create until it is answered 201, with the same key
	// each time. It gives up after 30 s, half a key's lease: a key whose
	// failed request was not given back stays in use (409) for the whole
	// lease, however soon the database returns.
	create := func(name string) {
		body, _ := json.Marshal(map[string]any{"name": name, "categoryId": 7})
		header := http.Header{"Content-Type": {"application/json"}, "Idempotency-Key": {"nlw-key-" + name}}
		deadline := time.Now().Add(30 * time.Second)
		for try := 0; ; try++ {
			r := partner.Do(http.MethodPost, "/v1/pets", header, string(body))
			if r.Err == nil && r.Status == http.StatusCreated {
				var pet api.Pet
				if err := json.Unmarshal(r.Body, &pet); err != nil || pet.Name != name {
					t.Errorf("create %q: 201 with body %s", name, r.Body)
				}
				if try > 0 {
					retried.Add(1)
				}
				if r.Header.Get("Idempotent-Replayed") == "true" {
					replayed.Add(1)
				}
				mu.Lock()
				if other, ok := created[pet.ID]; ok {
					t.Errorf("pet %d answered to %q and to %q", pet.ID, other, name)
				}
				created[pet.ID] = name
				mu.Unlock()
				succeeded.Add(1)
				return
			}
			mu.Lock()
			failed = append(failed, failure{name, r})
			mu.Unlock()
			if time.Now().After(deadline) {
				t.Errorf("create %q still failing after 30 s of retries: %s", name, r)
				return
			}
			time.Sleep(20 * time.Millisecond) // no hot loop while the database is away
		}
	}
	for w := range workers {
		wg.Go(func() {
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				attempted.Add(1)
				create(fmt.Sprintf("nlw-%d-%d", w, seq))
			}
		})
	}
	stopWorkers := sync.OnceFunc(func() { close(stop); wg.Wait() })
	t.Cleanup(stopWorkers)

	progress := func(what string, n int64) {
		t.Helper()
		from := succeeded.Load()
		testkit.WaitFor(t, what, 30*time.Second, 10*time.Millisecond, func() bool { return succeeded.Load() >= from+n })
	}
	progress("creates before the first restart", 100)
	for i := 1; i <= restarts; i++ {
		modelstest.Stop(t)
		time.Sleep(500 * time.Millisecond) // down for a moment, with creates failing
		modelstest.Start(t)
		from := succeeded.Load()
		d := testkit.WaitFor(t, "a create after MariaDB came back", 30*time.Second, 5*time.Millisecond,
			func() bool { return succeeded.Load() > from })
		testkit.FigureDuration(t, fmt.Sprintf("restart_%d_first_201_after_db_back", i), d)
		progress("creates after the restart", 100)
	}
	stopWorkers() // each worker finishes its create first

	// Every failure is the service saying the database is away, or that
	// the key's first request is still held; never a 500 or a broken
	// connection.
	byKind := map[string]int{}
	for _, f := range failed {
		kind := fmt.Sprint(f.r.Status)
		if f.r.Err != nil {
			kind = "transport error"
		}
		byKind[kind]++
		if byKind[kind] > 3 {
			continue
		}
		if f.r.Status == http.StatusConflict {
			testkit.WantAPIError(t, "failed create "+f.name, f.r, http.StatusConflict, models.CodeIdempotencyKeyInUse)
		} else {
			testkit.WantAPIError(t, "failed create "+f.name, f.r, http.StatusServiceUnavailable, models.CodeUnavailable)
		}
	}
	t.Logf("failures by status: %v", byKind)
	t.Logf("causes logged by the server: %v", failureCauses(p.Stderr.String()))

	// Every 201 is listed by the API, under its name.
	listed := partner.AllPets(t)
	lost := 0
	for id, name := range created {
		if listed[id].Name != name {
			lost++
			if lost <= 5 {
				t.Errorf("pet %d %q was answered 201 but is not listed (got %+v)", id, name, listed[id])
			}
		}
	}

	// In the database, every create is one pet with exactly its one
	// creation event, and no creation event lacks its pet.
	pets, orphans := modelstest.PetCreations(t, testkit.OpenStore(t, databaseURL))
	stored := map[string]int{} // name -> audit events
	halfStored, duplicates := 0, 0
	for _, p := range pets {
		if _, dup := stored[p.Name]; dup {
			duplicates++
			t.Errorf("pet name %q stored twice", p.Name)
		}
		stored[p.Name] = p.Events
		if p.Events != 1 {
			halfStored++
			t.Errorf("pet %d %q has %d creation events, want 1", p.ID, p.Name, p.Events)
		}
	}
	if orphans != 0 {
		t.Errorf("%d pet creation events without their pet", orphans)
	}
	if len(stored) != len(listed) {
		t.Errorf("%d pets in the database, %d listed by the API", len(stored), len(listed))
	}

	testkit.Figure(t, "creates_attempted", float64(attempted.Load()), "creates")
	testkit.Figure(t, "creates_succeeded", float64(len(created)), "creates")
	testkit.Figure(t, "creates_retried", float64(retried.Load()), "creates")
	testkit.Figure(t, "create_requests_failed", float64(len(failed)), "requests")
	testkit.Figure(t, "creates_replayed_after_a_failed_attempt_was_stored", float64(replayed.Load()), "creates")
	testkit.Figure(t, "creates_duplicated", float64(duplicates), "creates")
	testkit.Figure(t, "creates_half_stored", float64(halfStored+orphans), "creates")
	testkit.Figure(t, "creates_lost", float64(lost), "creates")
	if int(attempted.Load()) != len(created) || len(stored) != len(created) {
		t.Errorf("%d creates attempted, %d answered 201, %d stored; want all the same", attempted.Load(), len(created), len(stored))
	}
	if len(failed) == 0 {
		t.Error("no create failed: the restarts were not seen")
	}
	if lost != 0 {
		t.Errorf("%d acknowledged creates lost", lost)
	}
	if p.Exited() {
		t.Fatalf("the server exited (%d) during the restarts", p.Code)
	}
	p.Stop(t)
}

var (
	outageLogged  = regexp.MustCompile(`level=ERROR msg="request failed" method=GET path=/v1/pets status=503 reason=unavailable `)
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
