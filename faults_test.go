package main

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
	p := serveBinary(t, "serve", serveVars(databaseURL))
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
	p := serveBinary(t, "serve", serveVars(databaseURL))
	b := bootstrapOf(t, p.stdout.String())
	partner := newAPIClient(p.base, b.key)
	staff := signedIn(t, p.base, b.username, b.password)
	plain := newHTTPClient(15 * time.Second)

	before := wantCreated(t, partner.createPet("before the outage"), "before the outage")
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
		r := send(plain, http.MethodGet, p.base, "/readyz", nil, "")
		check("GET /readyz", r)
		wantAPIError(t, fmt.Sprintf("round %d: GET /readyz", round), r, http.StatusServiceUnavailable, models.CodeUnavailable)

		r = send(plain, http.MethodGet, p.base, "/healthz", nil, "")
		check("GET /healthz", r)
		if r.status != http.StatusOK {
			t.Errorf("round %d: GET /healthz during the outage: %s, want 200", round, r)
		}

		r = partner.get("/v1/pets")
		check("GET /v1/pets", r)
		wantAPIError(t, fmt.Sprintf("round %d: GET /v1/pets", round), r, http.StatusServiceUnavailable, models.CodeUnavailable)

		r = partner.createPet("during the outage")
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
	// An outage is logged as one: at ERROR, 503, with its reason.
	if !outageLogged.MatchString(p.stderr.String()) {
		t.Errorf("no ERROR line with status=503 reason=unavailable for the outage:\n%s", tail(p.stderr.String(), 20))
	}

	startStart := time.Now()
	modelstest.Start(t)
	back := time.Now()
	figureDuration(t, "mariadb_start", back.Sub(startStart))
	ready := waitFor(t, "/readyz 200 after MariaDB came back", 30*time.Second, 20*time.Millisecond, func() bool {
		return send(plain, http.MethodGet, p.base, "/readyz", nil, "").status == http.StatusOK
	})
	figureDuration(t, "recovery_readyz", ready)
	var after api.Pet
	wrote := waitFor(t, "an API create after MariaDB came back", 30*time.Second, 20*time.Millisecond, func() bool {
		r := partner.createPet("after the outage")
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
	pets := partner.allPets(t)
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
	p := serveBinary(t, "serve", serveVars(databaseURL))
	b := bootstrapOf(t, p.stdout.String())
	partner := newAPIClient(p.base, b.key)
	partner.http.Timeout = 2 * bound
	staff := signedIn(t, p.base, b.username, b.password)
	staff.http.Timeout = 2 * bound
	plain := newHTTPClient(2 * bound)
	wantCreated(t, partner.createPet("before the freeze"), "before the freeze")

	modelstest.Freeze(t)
	// All at once, each on its own connection: each waits for the database.
	probes := []struct {
		name  string
		do    func() reply
		check func(string, reply)
	}{
		{"GET /readyz", func() reply { return send(plain, http.MethodGet, p.base, "/readyz", nil, "") },
			func(what string, r reply) {
				wantAPIError(t, what, r, http.StatusServiceUnavailable, models.CodeUnavailable)
			}},
		{"GET /healthz", func() reply { return send(plain, http.MethodGet, p.base, "/healthz", nil, "") },
			func(what string, r reply) {
				if r.status != http.StatusOK {
					t.Errorf("%s: %s, want 200", what, r)
				}
			}},
		{"GET /v1/pets", func() reply { return partner.get("/v1/pets") },
			func(what string, r reply) {
				wantAPIError(t, what, r, http.StatusServiceUnavailable, models.CodeUnavailable)
			}},
		{"POST /v1/pets", func() reply { return partner.createPet("during the freeze") },
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
		return partner.createPet("after the freeze").status == http.StatusCreated
	})
	figureDuration(t, "frozen_db_recovery_create", back)
	if r := send(plain, http.MethodGet, p.base, "/readyz", nil, ""); r.status != http.StatusOK {
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
	waiting := startBinary(t, "waiting serve", serveVars(waitURL), "serve")
	impatient := serveVars(giveUpURL)
	impatient["DATABASE_CONNECT_TIMEOUT"] = "2s"
	givingUp := startBinary(t, "impatient serve", impatient, "serve")

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
	if r := send(newHTTPClient(15*time.Second), http.MethodGet, waiting.base, "/readyz", nil, ""); r.status != http.StatusOK {
		t.Errorf("GET /readyz: %s, want 200", r)
	}
	wantCreated(t, newAPIClient(waiting.base, b.key).createPet("after a late database"), "after a late database")
	waiting.stop(t)
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
	p := serveBinary(t, "serve", serveVars(databaseURL))
	partner := newAPIClient(p.base, bootstrapOf(t, p.stdout.String()).key)
	partner.http.Transport = &http.Transport{MaxIdleConnsPerHost: workers}

	type failure struct {
		name string
		r    reply
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
			r := partner.do(http.MethodPost, "/v1/pets", header, string(body))
			if r.err == nil && r.status == http.StatusCreated {
				var pet api.Pet
				if err := json.Unmarshal(r.body, &pet); err != nil || pet.Name != name {
					t.Errorf("create %q: 201 with body %s", name, r.body)
				}
				if try > 0 {
					retried.Add(1)
				}
				if r.header.Get("Idempotent-Replayed") == "true" {
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
	stopWorkers() // each worker finishes its create first

	// Every failure is the service saying the database is away, or that
	// the key's first request is still held; never a 500 or a broken
	// connection.
	byKind := map[string]int{}
	for _, f := range failed {
		kind := fmt.Sprint(f.r.status)
		if f.r.err != nil {
			kind = "transport error"
		}
		byKind[kind]++
		if byKind[kind] > 3 {
			continue
		}
		if f.r.status == http.StatusConflict {
			wantAPIError(t, "failed create "+f.name, f.r, http.StatusConflict, models.CodeIdempotencyKeyInUse)
		} else {
			wantAPIError(t, "failed create "+f.name, f.r, http.StatusServiceUnavailable, models.CodeUnavailable)
		}
	}
	t.Logf("failures by status: %v", byKind)
	t.Logf("causes logged by the server: %v", failureCauses(p.stderr.String()))

	// Every 201 is listed by the API, under its name.
	listed := partner.allPets(t)
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
	db := openStore(t, databaseURL).SQLDB()
	rows, err := db.QueryContext(t.Context(), `SELECT p.id, p.name, COUNT(a.id) FROM pets p
		LEFT JOIN audit_events a ON a.action = ? AND a.target_type = ? AND a.target_id = p.id
		GROUP BY p.id, p.name`, models.ActionPetCreated, models.TargetPet)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]int64{} // name -> audit events
	halfStored, duplicates := 0, 0
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
			duplicates++
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

	figure(t, "creates_attempted", float64(attempted.Load()), "creates")
	figure(t, "creates_succeeded", float64(len(created)), "creates")
	figure(t, "creates_retried", float64(retried.Load()), "creates")
	figure(t, "create_requests_failed", float64(len(failed)), "requests")
	figure(t, "creates_replayed_after_a_failed_attempt_was_stored", float64(replayed.Load()), "creates")
	figure(t, "creates_duplicated", float64(duplicates), "creates")
	figure(t, "creates_half_stored", float64(halfStored+orphans), "creates")
	figure(t, "creates_lost", float64(lost), "creates")
	if int(attempted.Load()) != len(created) || len(stored) != len(created) {
		t.Errorf("%d creates attempted, %d answered 201, %d stored; want all the same", attempted.Load(), len(created), len(stored))
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
