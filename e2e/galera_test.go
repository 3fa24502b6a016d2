package e2e

// The Galera test: petstore on a real multi-primary cluster.
// The cluster, its health checks and HAProxy are in galera_harness_test.go;
// figures are appended to testdata/figures.jsonl (see figure).

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/go-sql-driver/mysql"

	"petstore/api"
	"petstore/internal/testkit"
	"petstore/models"
)

// galeraSite is the cluster, HAProxy and the two instances.
type galeraSite struct {
	cluster *galeraCluster
	proxy   *haproxy
	a, b    *testkit.Instance
	boot    testkit.Boot
	// urls are the DATABASE_URLs of the frontends, by frontend name.
	urls map[string]string
}

// The HAProxy frontends: A's and B's ways to the cluster.
const (
	frontendA = "petstore_a"
	frontendB = "petstore_b"
)

// galeraDBPassword is the petstore account's password on the cluster.
const galeraDBPassword = "galera-petstore-pass-7"

// TestGalera runs petstore on a MariaDB Galera cluster as operators deploy
// one: three nodes behind HAProxy, and two instances of the built binary,
// each through its own HAProxy frontend, which prefers another node (A:
// node1, then node2, node3; B: node2, then node3, node1). So A and B write
// on different nodes at once, and each fails over when its node is lost.
// A and B start at the same moment and migrate on different nodes.
//
// The instances' DATABASE_URL sets wsrep_sync_wait=3: every read, UPDATE
// and DELETE waits until its node has applied what the cluster committed
// before it (a causal read), so that what a client wrote through one
// instance is what it reads (and changes) through the other (see
// testGaleraReadYourWrites).
func TestGalera(t *testing.T) {
	// Not parallel: it runs three database servers and loads the machine,
	// and its failure windows are measured.
	start := time.Now()
	g := startGaleraSite(t)
	testkit.FigureDuration(t, "galera_setup", time.Since(start))

	t.Run("schema fits Galera", func(t *testing.T) { testGaleraSchema(t, g) })
	t.Run("read your writes across nodes", func(t *testing.T) { testGaleraReadYourWrites(t, g) })
	t.Run("sessions, sign-in limits, revocation and audit across nodes", func(t *testing.T) { testGaleraAcrossNodes(t, g) })
	t.Run("a node lost under load, then another", func(t *testing.T) { testGaleraNodeLoss(t, g) })
	t.Run("ids with gaps: paging, Location, console", func(t *testing.T) { testGaleraIDGaps(t, g) })
	t.Run("the change feed through a node's loss: nothing missed, nothing twice", func(t *testing.T) { testGaleraFeedNodeLoss(t, g) })
	t.Run("webhooks through a node's loss: every event delivered", func(t *testing.T) { testGaleraWebhooksNodeLoss(t, g) })
	t.Run("a seed's pets and their events under ids that step by the cluster's size", func(t *testing.T) { testGaleraSeed(t, g) })

	for _, p := range []*testkit.Instance{g.a, g.b} {
		p.Stop(t)
	}
	testkit.FigureDuration(t, "galera_test", time.Since(start))
}

// startGaleraSite starts the cluster, creates petstore's database and
// account, starts HAProxy with A's and B's frontends, and starts A and B
// at the same moment: both migrate, on different nodes, and one
// bootstraps.
func startGaleraSite(t *testing.T) *galeraSite {
	t.Helper()
	testkit.Binary(t) // built before the clock starts
	clusterStart := time.Now()
	c := startGaleraCluster(t, 3)
	testkit.FigureDuration(t, "galera_cluster_start_with_two_sst", time.Since(clusterStart))
	n1, n2, n3 := c.nodes[0], c.nodes[1], c.nodes[2]
	for _, q := range []string{
		"CREATE DATABASE petstore CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci",
		"CREATE USER 'petstore'@'127.0.0.1' IDENTIFIED BY '" + galeraDBPassword + "'",
		"GRANT ALL PRIVILEGES ON petstore.* TO 'petstore'@'127.0.0.1'",
	} {
		if _, err := n1.admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	g := &galeraSite{cluster: c, urls: map[string]string{}}
	g.proxy = c.startHAProxy(t, []haproxyFrontend{
		{frontendA, []*galeraNode{n1, n2, n3}},
		{frontendB, []*galeraNode{n2, n3, n1}},
	})
	t.Logf("HAProxy configuration:\n%s", g.proxy.config)
	for name, port := range g.proxy.ports {
		g.urls[name] = fmt.Sprintf("mysql://petstore:%s@127.0.0.1:%d/petstore?wsrep_sync_wait=3", galeraDBPassword, port)
	}
	g.a = testkit.StartBinaryLogging(t, "instance A", testkit.ServeVars(g.urls[frontendA]), filepath.Join(c.dir, "instance-a.log"), "serve")
	g.b = testkit.StartBinaryLogging(t, "instance B", testkit.ServeVars(g.urls[frontendB]), filepath.Join(c.dir, "instance-b.log"), "serve")
	g.a.WaitListening(t, time.Minute)
	g.b.WaitListening(t, time.Minute)
	outA, outB := g.a.Stdout.String(), g.b.Stdout.String()
	if n := strings.Count(outA, "First start") + strings.Count(outB, "First start"); n != 1 {
		t.Fatalf("the bootstrap block was printed %d times, want once:\nA:\n%s\nB:\n%s", n, testkit.Tail(outA, 30), testkit.Tail(outB, 30))
	}
	if strings.Contains(outA, "First start") {
		g.boot = testkit.BootstrapOf(t, outA)
	} else {
		g.boot = testkit.BootstrapOf(t, outB)
	}
	return g
}

// nodeDB opens root's pool on a node's petstore database, reading with
// wsrep_sync_wait=3 (what the cluster committed, whichever node it came
// through).
func nodeDB(t *testing.T, n *galeraNode) *sql.DB {
	t.Helper()
	return openNodeDB(t, n.port, "petstore", "3")
}

// testGaleraSchema checks what Galera needs of petstore's schema: every
// table InnoDB with a primary key (Galera replicates rows by key; a table
// without one is replicated badly or not at all), and ids taken three
// apart, each node on its own offset.
func testGaleraSchema(t *testing.T, g *galeraSite) {
	n3 := g.cluster.nodes[2]
	rows, err := n3.admin.Query(`SELECT t.TABLE_NAME, t.ENGINE FROM information_schema.TABLES t
		WHERE t.TABLE_SCHEMA = 'petstore' AND t.TABLE_TYPE = 'BASE TABLE' AND (t.ENGINE <> 'InnoDB' OR NOT EXISTS (
			SELECT 1 FROM information_schema.TABLE_CONSTRAINTS c
			WHERE c.TABLE_SCHEMA = t.TABLE_SCHEMA AND c.TABLE_NAME = t.TABLE_NAME AND c.CONSTRAINT_TYPE = 'PRIMARY KEY'))`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, engine string
		if err := rows.Scan(&name, &engine); err != nil {
			t.Fatal(err)
		}
		t.Errorf("table %s (%s) is not InnoDB with a primary key, as Galera needs", name, engine)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var tables int
	if err := n3.admin.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'petstore'").Scan(&tables); err != nil || tables < 5 {
		t.Fatalf("node3 has %d petstore tables (%v): the migrations did not replicate", tables, err)
	}
	offsets := map[int]string{}
	for _, n := range g.cluster.nodes {
		var inc, off int
		if err := n.admin.QueryRow("SELECT @@auto_increment_increment, @@auto_increment_offset").Scan(&inc, &off); err != nil {
			t.Fatal(err)
		}
		if inc != 3 || offsets[off] != "" {
			t.Errorf("%s: auto_increment_increment %d, offset %d (taken by %s); want 3 and an offset of its own", n.name, inc, off, offsets[off])
		}
		offsets[off] = n.name
	}
}

// testGaleraReadYourWrites answers whether a client that creates through A
// (node1) and reads through B (node2) sees its pet. Galera certifies a
// commit on every node before it is acknowledged, but each node applies
// what others committed a moment later: a read on node2 right after a
// commit on node1 can miss it, and so can an UPDATE or DELETE, which then
// changes nothing (and, writing nothing, conflicts with nothing): a claim
// given back that way stays held. wsrep_sync_wait=1 makes reads wait until
// their node has caught up, 3 also UPDATE and DELETE. (An INSERT of a row
// its node has not applied yet needs no wait: it conflicts with that row's
// write set, and the Store retries it.) Measured first in SQL at 0, 1 and
// 3, then through petstore (DATABASE_URL with wsrep_sync_wait=3), where a
// read must never miss.
func testGaleraReadYourWrites(t *testing.T, g *galeraSite) {
	const tries = 300
	n1, n2 := g.cluster.nodes[0], g.cluster.nodes[1]
	ctx := t.Context()
	if _, err := n1.admin.ExecContext(ctx, "CREATE TABLE petstore.sync_probe (id BIGINT PRIMARY KEY, seen INT NOT NULL DEFAULT 0)"); err != nil {
		t.Fatal(err)
	}
	defer n1.admin.Exec("DROP TABLE IF EXISTS petstore.sync_probe")
	next := 0
	for _, wait := range []int{0, 1, 3} {
		conn, err := n2.admin.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, "SET SESSION wsrep_sync_wait = "+strconv.Itoa(wait)); err != nil {
			t.Fatal(err)
		}
		missedReads, missedUpdates := 0, 0
		for i := range 2 * tries {
			next++
			if _, err := n1.admin.ExecContext(ctx, "INSERT INTO petstore.sync_probe (id) VALUES (?)", next); err != nil {
				t.Fatal(err)
			}
			if i%2 == 0 {
				var n int
				if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM petstore.sync_probe WHERE id = ?", next).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					missedReads++
				}
				continue
			}
			// Without a wait, the UPDATE may also meet the row's write set
			// being applied, and be aborted for it (1213): missed too.
			res, err := conn.ExecContext(ctx, "UPDATE petstore.sync_probe SET seen = 1 WHERE id = ?", next)
			var me *mysql.MySQLError
			if err != nil && (wait == 3 || !errors.As(err, &me) || me.Number != 1213) {
				t.Fatal(err)
			}
			if err != nil {
				missedUpdates++
			} else if n, err := res.RowsAffected(); err != nil || n == 0 {
				missedUpdates++
			}
		}
		conn.Close()
		testkit.Figure(t, fmt.Sprintf("galera_sql_reads_missing_a_commit_of_another_node_sync_wait_%d", wait), float64(missedReads), fmt.Sprintf("of %d", tries))
		testkit.Figure(t, fmt.Sprintf("galera_sql_updates_missing_a_commit_of_another_node_sync_wait_%d", wait), float64(missedUpdates), fmt.Sprintf("of %d", tries))
		if wait > 0 && missedReads > 0 {
			t.Errorf("with wsrep_sync_wait=%d, %d of %d reads on node2 missed a row just committed on node1", wait, missedReads, tries)
		}
		if wait == 3 && missedUpdates > 0 {
			t.Errorf("with wsrep_sync_wait=3, %d of %d updates on node2 missed a row just committed on node1", missedUpdates, tries)
		}
	}

	// Through petstore: create on A, read the Location on B at once.
	const creates = 100
	onA, onB := testkit.NewAPIClient(g.a.Base, g.boot.Key), testkit.NewAPIClient(g.b.Base, g.boot.Key)
	missed := 0
	for i := range creates {
		name := fmt.Sprintf("read-your-writes %d", i)
		p := testkit.WantCreated(t, onA.CreatePet(name), name)
		if r := onB.Get("/v1/pets/" + strconv.FormatInt(p.ID, 10)); r.Status != http.StatusOK {
			missed++
			if missed <= 3 {
				t.Errorf("pet %d created through A: B answered %s", p.ID, r)
			}
		}
	}
	testkit.Figure(t, "galera_http_reads_through_B_missing_a_create_through_A", float64(missed), fmt.Sprintf("of %d", creates))
}

// testGaleraAcrossNodes: a session made through A works through B (and a
// sign-out through B ends it on A); the strict sign-in limit holds for
// attempts spread over both; a key revoked through A is refused through B
// within the second the service promises; and the audit trail read
// through B shows what was done through A.
func testGaleraAcrossNodes(t *testing.T, g *galeraSite) {
	plain := testkit.NewHTTPClient(15 * time.Second)
	for frontend, want := range map[string]string{frontendA: "node1", frontendB: "node2"} {
		var node string
		if err := openNodeDB(t, g.proxy.ports[frontend], "", "").QueryRow("SELECT @@wsrep_node_name").Scan(&node); err != nil || node != want {
			t.Fatalf("HAProxy's %s leads to %q (%v), want %s", frontend, node, err, want)
		}
	}

	t.Run("a session made on A works on B, a sign-out on B ends it on A", func(t *testing.T) {
		staff := testkit.SignedIn(t, g.a.Base, g.boot.Username, g.boot.Password)
		cookie := http.Header{"Cookie": {staff.Cookie(t)}}
		if r := testkit.Send(plain, http.MethodGet, g.b.Base, "/admin/pets", cookie, ""); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `data-testid="sign-out"`) {
			t.Fatalf("B with A's session, at once: %s, want the pets page, signed in", r)
		}
		onB := testkit.NewConsole(g.b.Base)
		onB.HTTP.Jar = staff.HTTP.Jar
		page := onB.Get("/admin/pets")
		if r := onB.Post("/admin/logout", url.Values{"csrf_token": {testkit.CSRFToken(t, page)}}); r.Status != http.StatusSeeOther {
			t.Fatalf("sign out on B: %s, want 303", r)
		}
		if r := testkit.Send(plain, http.MethodGet, g.a.Base, "/admin/pets", cookie, ""); r.Status != http.StatusSeeOther {
			t.Errorf("A with the session signed out on B: %s, want 303 to sign in", r)
		}
	})

	t.Run("the strict sign-in limit holds across instances and nodes", func(t *testing.T) {
		// Ten wrong passwords for one name from one address, five through
		// each instance, all at once: the limit lets exactly
		// MaxFailuresPerUsernameAddress be checked. A sign-in that finds
		// the instance's password checks all busy (503, Retry-After) is
		// sent again, as a browser's user would.
		const attempts = 2 * models.MaxFailuresPerUsernameAddress
		consoles := make([]*testkit.Console, attempts)
		tokens := make([]string, attempts)
		for i := range consoles {
			base := g.a.Base
			if i%2 == 1 {
				base = g.b.Base
			}
			consoles[i] = testkit.NewConsole(base)
			login := consoles[i].Get("/admin/login")
			tokens[i] = testkit.CSRFToken(t, login)
		}
		statuses := make([]int, attempts)
		var wg sync.WaitGroup
		for i, c := range consoles {
			wg.Go(func() {
				form := url.Values{"csrf_token": {tokens[i]}, "username": {"galera-limit"}, "password": {"wrong-password-" + strconv.Itoa(i)}}
				r := c.Post("/admin/login", form)
				for try := 0; r.Status == http.StatusServiceUnavailable && try < 50; try++ {
					time.Sleep(100 * time.Millisecond)
					r = c.Post("/admin/login", form)
				}
				statuses[i] = r.Status
			})
		}
		wg.Wait()
		count := map[int]int{}
		for _, s := range statuses {
			count[s]++
		}
		if count[http.StatusUnauthorized] != models.MaxFailuresPerUsernameAddress || count[http.StatusTooManyRequests] != attempts-models.MaxFailuresPerUsernameAddress {
			t.Errorf("answers %v to %d wrong passwords through A and B at once; want %d checked (401) and the rest refused (429)",
				count, attempts, models.MaxFailuresPerUsernameAddress)
		}
	})

	t.Run("a key revoked through A is refused through B within 1 s", func(t *testing.T) {
		cli := testkit.RunBinary(t, map[string]string{"DATABASE_URL": g.urls[frontendA]}, "apikey", "create", "--name", "galera-partner")
		testkit.WantCode(t, cli, 0)
		key := testkit.WantOneLine(t, "apikey create stdout", cli.Stdout)
		onA, onB := testkit.NewAPIClient(g.a.Base, key), testkit.NewAPIClient(g.b.Base, key)
		for _, c := range []*testkit.APIClient{onA, onB} {
			if r := c.Get("/v1/pets?limit=1"); r.Status != http.StatusOK {
				t.Fatalf("the new key on %s: %s, want 200", c.Base, r)
			}
		}
		list := testkit.RunBinary(t, map[string]string{"DATABASE_URL": g.urls[frontendB]}, "apikey", "list")
		testkit.WantCode(t, list, 0)
		m := regexp.MustCompile(`(?m)^(\d+)\s+galera-partner\s+(\S+)\s`).FindStringSubmatch(list.Stdout)
		if m == nil || m[2] != key[:models.KeyPrefixLen] {
			t.Fatalf("apikey list through B's frontend does not show the key %s:\n%s", key[:models.KeyPrefixLen], list.Stdout)
		}
		keyID := m[1]
		staff := testkit.SignedIn(t, g.a.Base, g.boot.Username, g.boot.Password)
		confirm := staff.Get("/admin/api-keys/" + keyID + "/revoke")
		if confirm.Status != http.StatusOK {
			t.Fatalf("A's revoke confirmation page: %s", confirm)
		}
		if r := staff.Post("/admin/api-keys/"+keyID+"/revoke", url.Values{"csrf_token": {testkit.CSRFToken(t, confirm)}, "confirm": {"yes"}}); r.Status != http.StatusSeeOther {
			t.Fatalf("revoke on A's console: %s, want 303", r)
		}
		revoked := time.Now()
		testkit.WaitFor(t, "B refuses the key revoked through A", 5*time.Second, 5*time.Millisecond, func() bool {
			return onB.Get("/v1/pets?limit=1").Status == http.StatusUnauthorized
		})
		delay := time.Since(revoked)
		testkit.FigureDuration(t, "galera_revocation_through_A_refused_through_B", delay)
		if delay > time.Second {
			t.Errorf("B refused the revoked key %s after the revocation through A, want within 1 s", delay)
		}
		testkit.WantAPIError(t, "the revoked key on A", onA.Get("/v1/pets?limit=1"), http.StatusUnauthorized, models.CodeUnauthorized)

		t.Run("the audit trail read through B shows it", func(t *testing.T) {
			onB := testkit.SignedIn(t, g.b.Base, g.boot.Username, g.boot.Password)
			r := onB.Get("/admin/audit?action=" + models.ActionKeyRevoked)
			rows := testkit.HTMLDoc(t, r).Find(`tr[data-testid="audit-row"]`)
			if r.Status != http.StatusOK || rows.Length() != 1 || !strings.Contains(rows.Find("td.history a").AttrOr("href", ""), "target="+models.TargetAPIKey+"%3A"+keyID) {
				t.Errorf("B's audit trail of revocations: %s (%d rows), want the revocation of key %s", r, rows.Length(), keyID)
			}
			r = onB.Get("/admin/audit?action=" + models.ActionLoginFailed)
			if n := testkit.HTMLDoc(t, r).Find(`tr[data-testid="audit-row"]`).Length(); n != models.MaxFailuresPerUsernameAddress {
				t.Errorf("B's audit trail shows %d failed sign-ins, want the %d checked through A and B", n, models.MaxFailuresPerUsernameAddress)
			}
		})
	})
}

// loadRecord is one request of the load.
type loadRecord struct {
	start, end time.Time
	instance   string // "A" or "B"
	create     bool   // a create (else a list)
	status     int
	err        error
	failure    *testkit.Reply // the answer, when it failed
}

func (r loadRecord) failed() bool {
	return r.err != nil || (r.create && r.status != http.StatusCreated) || (!r.create && r.status != http.StatusOK)
}

// galeraLoad is the steady load of testGaleraNodeLoss: workers that
// create through A and B (each create with an Idempotency-Key, retried
// with it until 201), and list.
type galeraLoad struct {
	t    *testing.T
	mu   sync.Mutex
	recs []loadRecord
	// acked is every create answered 201: name -> id.
	acked   map[string]int64
	ackedBy map[string]*atomic.Int64 // creates answered 201, by instance
	// replayed counts the creates whose 201 was a replay: an attempt that
	// failed for the client had been stored, and its key made the retry
	// return that pet instead of a second one.
	replayed atomic.Int64
	stop     chan struct{}
	wg       sync.WaitGroup
	lastID   atomic.Int64
}

// The bounds of the load: it stops when the test says, or at these.
const (
	galeraLoadWorkers  = 8
	galeraLoadMaxTime  = 3 * time.Minute
	galeraCreatesMax   = 40000
	galeraCreateGiveUp = 30 * time.Second // half an idempotency key's lease
)

func startGaleraLoad(t *testing.T, g *galeraSite) *galeraLoad {
	l := &galeraLoad{t: t, acked: map[string]int64{}, stop: make(chan struct{}),
		ackedBy: map[string]*atomic.Int64{"A": {}, "B": {}}}
	deadline := time.Now().Add(galeraLoadMaxTime)
	for w := range galeraLoadWorkers {
		name, base := "A", g.a.Base
		if w%2 == 1 {
			name, base = "B", g.b.Base
		}
		c := testkit.NewAPIClient(base, g.boot.Key)
		c.HTTP.Transport = &http.Transport{MaxIdleConnsPerHost: 1}
		l.wg.Go(func() {
			for seq := 0; ; seq++ {
				select {
				case <-l.stop:
					return
				default:
				}
				if time.Now().After(deadline) || l.ackedCount() >= galeraCreatesMax {
					return
				}
				l.create(c, name, fmt.Sprintf("galera-%s-%d-%d", name, w, seq))
				if seq%3 == 2 {
					after := max(0, l.lastID.Load()-500)
					r := c.Get("/v1/pets?limit=20&after=" + strconv.FormatInt(after, 10))
					l.record(loadRecord{start: time.Now().Add(-r.Took), end: time.Now(), instance: name, status: r.Status, err: r.Err}, r)
				}
			}
		})
	}
	return l
}

// create sends one create until it is answered 201, with the same key
// each time, as a careful partner does, for at most galeraCreateGiveUp.
func (l *galeraLoad) create(c *testkit.APIClient, instance, name string) {
	body, _ := json.Marshal(map[string]any{"name": name, "categoryId": 7})
	header := http.Header{"Content-Type": {"application/json"}, "Idempotency-Key": {"key-" + name}}
	giveUp := time.Now().Add(galeraCreateGiveUp)
	for {
		start := time.Now()
		r := c.Do(http.MethodPost, "/v1/pets", header, string(body))
		l.record(loadRecord{start: start, end: time.Now(), instance: instance, create: true, status: r.Status, err: r.Err}, r)
		if r.Err == nil && r.Status == http.StatusCreated {
			var pet api.Pet
			if err := json.Unmarshal(r.Body, &pet); err != nil || pet.Name != name || pet.ID < 1 {
				l.t.Errorf("create %q: 201 with body %s", name, r.Body)
				return
			}
			if loc := r.Header.Get("Location"); loc != "/v1/pets/"+strconv.FormatInt(pet.ID, 10) {
				l.t.Errorf("create %q: Location %q for pet %d", name, loc, pet.ID)
			}
			if r.Header.Get("Idempotent-Replayed") == "true" {
				l.replayed.Add(1)
			}
			l.mu.Lock()
			l.acked[name] = pet.ID
			l.mu.Unlock()
			l.ackedBy[instance].Add(1)
			l.lastID.Store(max(l.lastID.Load(), pet.ID))
			return
		}
		if time.Now().After(giveUp) {
			l.t.Errorf("create %q through %s still failing after %s of retries: %s", name, instance, galeraCreateGiveUp, r)
			return
		}
		pause := 20 * time.Millisecond // no hot loop while a node is away
		if r.Status == http.StatusConflict {
			pause = 200 * time.Millisecond // the key's first request is still held
		}
		time.Sleep(pause)
	}
}

// record notes one request of the load and, if it failed, its answer.
func (l *galeraLoad) record(r loadRecord, answer testkit.Reply) {
	if r.failed() {
		r.failure = &answer
	}
	l.mu.Lock()
	l.recs = append(l.recs, r)
	l.mu.Unlock()
}

// ackedCount is the number of creates answered 201 so far.
func (l *galeraLoad) ackedCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// waitAcked waits until n more creates are answered 201 through instance.
func (l *galeraLoad) waitAcked(t *testing.T, instance string, n int64, why string) {
	t.Helper()
	from := l.ackedBy[instance].Load()
	testkit.WaitFor(t, why, 30*time.Second, 10*time.Millisecond, func() bool { return l.ackedBy[instance].Load() >= from+n })
}

// end stops the workers; each finishes its create first.
func (l *galeraLoad) end() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
}

// killPhase is one node's loss: when it was killed, until the next phase.
type killPhase struct {
	node     *galeraNode
	from, to time.Time
}

// testGaleraNodeLoss puts a steady create and list load on both instances,
// kills node1 (A's first node) with SIGKILL, brings it back (IST), then
// kills node2 (B's first node) and brings it back. Every create carries an
// Idempotency-Key and is retried with it until 201. Then: no create
// answered 201 is missing on any node, none was stored twice, no request
// failed with a 5xx other than 503 (or without an answer), and the nodes
// hold the same data.
func testGaleraNodeLoss(t *testing.T, g *galeraSite) {
	n1, n2 := g.cluster.nodes[0], g.cluster.nodes[1]
	load := startGaleraLoad(t, g)
	t.Cleanup(load.end)
	testkit.WaitFor(t, "200 creates before the first loss", 30*time.Second, 10*time.Millisecond, func() bool { return load.ackedCount() >= 200 })
	time.Sleep(3 * time.Second)

	var phases []killPhase
	for i, lost := range []struct {
		node     *galeraNode
		frontend string
		instance string
	}{{n1, frontendA, "A"}, {n2, frontendB, "B"}} {
		k := i + 1
		killed := lost.node.kill(t)
		phases = append(phases, killPhase{node: lost.node, from: killed})
		g.proxy.waitServer(t, lost.frontend, lost.node.name, "DOWN", 30*time.Second)
		testkit.FigureDuration(t, fmt.Sprintf("galera_kill_%d_haproxy_marked_%s_down", k, lost.node.name), time.Since(killed))
		// The instance whose node it was keeps creating, on another node.
		load.waitAcked(t, lost.instance, 50, fmt.Sprintf("creates through %s after %s was killed", lost.instance, lost.node.name))
		testkit.FigureDuration(t, fmt.Sprintf("galera_kill_%d_first_50_creates_through_%s", k, lost.instance), time.Since(killed))
		survivor := g.cluster.nodes[2]
		if size, err := survivor.status(t.Context(), "wsrep_cluster_size"); err != nil || size != "2" {
			t.Errorf("after killing %s, %s sees a cluster of %q (%v), want 2", lost.node.name, survivor.name, size, err)
		}
		time.Sleep(time.Until(killed.Add(6 * time.Second)))

		restarted := time.Now()
		lost.node.restart(t)
		lost.node.waitSynced(t, 2*time.Minute)
		testkit.FigureDuration(t, fmt.Sprintf("galera_kill_%d_%s_restarted_and_synced_by_ist", k, lost.node.name), time.Since(restarted))
		log := lost.node.logSinceStart()
		if !strings.Contains(log, "IST received") || strings.Contains(log, "SST completed on joiner") {
			t.Errorf("%s rejoined without IST (or with SST):\n%s", lost.node.name, testkit.Tail(log, 40))
		}
		g.proxy.waitServer(t, lost.frontend, lost.node.name, "UP", 30*time.Second)
		testkit.FigureDuration(t, fmt.Sprintf("galera_kill_%d_%s_back_in_haproxy", k, lost.node.name), time.Since(restarted))
		time.Sleep(4 * time.Second)
	}
	load.end()
	for i := range phases {
		phases[i].to = time.Now()
		if i+1 < len(phases) {
			phases[i].to = phases[i+1].from
		}
	}
	g.checkLoad(t, load, phases)
	g.checkStoredCreates(t, load)
}

// checkLoad checks every answer of the load and writes its figures: per
// kill, the failed requests, the longest window in which requests failed,
// and the longest request.
func (g *galeraSite) checkLoad(t *testing.T, load *galeraLoad, phases []killPhase) {
	load.mu.Lock()
	recs := slices.Clone(load.recs)
	load.mu.Unlock()
	failed, other5xx, noAnswer := 0, 0, 0
	byStatus := map[string]int{}
	for _, r := range recs {
		kind := "list"
		if r.create {
			kind = "create"
		}
		key := fmt.Sprintf("%s %s %d", r.instance, kind, r.status)
		if r.err != nil {
			key = fmt.Sprintf("%s %s no answer", r.instance, kind)
		}
		byStatus[key]++
		if !r.failed() {
			continue
		}
		failed++
		switch {
		case r.err != nil:
			noAnswer++
			if noAnswer <= 3 {
				t.Errorf("%s %s: no answer after %s: %v", r.instance, kind, r.end.Sub(r.start), r.err)
			}
		case r.status >= 500 && r.status != http.StatusServiceUnavailable:
			other5xx++
			t.Errorf("%s %s: %s, want 201/200 or 503", r.instance, kind, r.failure)
		case r.status == http.StatusServiceUnavailable:
			testkit.WantAPIError(t, r.instance+" "+kind, *r.failure, http.StatusServiceUnavailable, models.CodeUnavailable)
		case r.create && r.status == http.StatusConflict:
			testkit.WantAPIError(t, r.instance+" "+kind, *r.failure, http.StatusConflict, models.CodeIdempotencyKeyInUse)
		default:
			t.Errorf("%s %s: %s, want 201/200, or 503 (409 for a create whose key is held)", r.instance, kind, r.failure)
		}
	}
	t.Logf("answers by instance, kind and status: %v", byStatus)
	for _, p := range []*testkit.Instance{g.a, g.b} {
		t.Logf("causes of failed requests logged by %s: %v", p.Name, failureCauses(p.Stderr.String()))
	}
	load.mu.Lock()
	acked := len(load.acked)
	load.mu.Unlock()
	testkit.Figure(t, "galera_requests_attempted", float64(len(recs)), "requests")
	testkit.Figure(t, "galera_creates_acknowledged", float64(acked), "creates")
	testkit.Figure(t, "galera_requests_failed", float64(failed), "requests")
	testkit.Figure(t, "galera_5xx_other_than_503", float64(other5xx), "requests")
	testkit.Figure(t, "galera_requests_without_answer", float64(noAnswer), "requests")
	if other5xx > 0 {
		t.Errorf("%d requests failed with a 5xx other than 503", other5xx)
	}
	for i, p := range phases {
		// A request belongs to the loss it ended after: one in flight on
		// the node when it was killed fails then.
		var in []loadRecord
		for _, r := range recs {
			if !r.end.Before(p.from) && r.end.Before(p.to) {
				in = append(in, r)
			}
		}
		n, window, longest := failureWindows(in)
		k := i + 1
		var lines []string
		for _, r := range in {
			if r.failed() && len(lines) < 40 {
				lines = append(lines, fmt.Sprintf("%+.3fs..%+.3fs %s create=%t %d %v", r.start.Sub(p.from).Seconds(), r.end.Sub(p.from).Seconds(), r.instance, r.create, r.status, r.err))
			}
		}
		t.Logf("failed requests after %s was killed (times from the kill):\n%s", p.node.name, strings.Join(lines, "\n"))
		testkit.Figure(t, fmt.Sprintf("galera_kill_%d_%s_requests_failed", k, p.node.name), float64(n), "requests")
		testkit.FigureDuration(t, fmt.Sprintf("galera_kill_%d_%s_longest_failure_window", k, p.node.name), window)
		testkit.FigureDuration(t, fmt.Sprintf("galera_kill_%d_%s_longest_request", k, p.node.name), longest)
	}
}

// failureWindowGap is how far apart two failed requests may be and still
// count as one window: a client retries a failed create after 20 ms.
const failureWindowGap = 500 * time.Millisecond

// failureWindows returns how many of recs failed, the longest window in
// which requests kept failing (the failed requests' spans merged when less
// than failureWindowGap apart), and the longest request.
func failureWindows(recs []loadRecord) (failed int, window, longest time.Duration) {
	var spans [][2]time.Time
	for _, r := range recs {
		longest = max(longest, r.end.Sub(r.start))
		if r.failed() {
			failed++
			spans = append(spans, [2]time.Time{r.start, r.end})
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0].Before(spans[j][0]) })
	for i := 0; i < len(spans); {
		from, to := spans[i][0], spans[i][1]
		j := i + 1
		for ; j < len(spans) && spans[j][0].Sub(to) < failureWindowGap; j++ {
			if spans[j][1].After(to) {
				to = spans[j][1]
			}
		}
		window = max(window, to.Sub(from))
		i = j
	}
	return failed, window, longest
}

// checkStoredCreates reads every node directly: each create answered 201
// is there under its id (none lost), no name is stored twice (no
// duplicate from a retried create), each pet has its one creation event,
// and the nodes hold the same tables.
func (g *galeraSite) checkStoredCreates(t *testing.T, load *galeraLoad) {
	for _, n := range g.cluster.nodes {
		n.waitSynced(t, time.Minute)
	}
	load.mu.Lock()
	acked := maps.Clone(load.acked)
	load.mu.Unlock()
	lost, duplicates := 0, 0
	checksums := map[string]string{}
	for _, n := range g.cluster.nodes {
		db := nodeDB(t, n)
		nodeLost, nodeDup := checkNodeCreates(t, n.name, db, acked)
		lost, duplicates = max(lost, nodeLost), max(duplicates, nodeDup)
		for table, sum := range tableChecksums(t, db) {
			if prev, ok := checksums[table]; ok && prev != sum {
				t.Errorf("%s: table %s differs from the other nodes' (checksum %s, not %s)", n.name, table, sum, prev)
			}
			checksums[table] = sum
		}
	}
	answeredTo := map[int64]string{}
	for name, id := range acked {
		if other, ok := answeredTo[id]; ok {
			duplicates++
			t.Errorf("pet %d was answered to the creates of %q and %q", id, other, name)
		}
		answeredTo[id] = name
	}
	testkit.Figure(t, "galera_creates_replayed_after_a_failed_attempt_was_stored", float64(load.replayed.Load()), "creates")
	testkit.Figure(t, "galera_creates_lost", float64(lost), "creates")
	testkit.Figure(t, "galera_creates_duplicated", float64(duplicates), "creates")
	if len(acked) == 0 {
		t.Error("no create was answered 201")
	}
}

// checkNodeCreates checks one node's pets against the creates answered
// 201 (name -> id), and returns how many of those it lacks and how many
// pets it stores more than once (by name: each create had its own).
func checkNodeCreates(t *testing.T, node string, db *sql.DB, acked map[string]int64) (lost, duplicates int) {
	t.Helper()
	stored := map[int64]string{}
	names := map[string]int{}
	rows, err := db.QueryContext(t.Context(), "SELECT id, name FROM pets")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			t.Fatal(err)
		}
		stored[id] = name
		names[name]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for name, id := range acked {
		if stored[id] != name {
			if lost++; lost <= 3 {
				t.Errorf("%s: pet %d %q was answered 201 but the node holds %q", node, id, name, stored[id])
			}
		}
	}
	for name, c := range names {
		if c > 1 {
			if duplicates += c - 1; duplicates <= 3 {
				t.Errorf("%s: pet %q stored %d times", node, name, c)
			}
		}
	}
	var uneven, orphans int
	if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM pets p
		WHERE (SELECT COUNT(*) FROM audit_events a WHERE a.action = ? AND a.target_type = ? AND a.target_id = p.id) <> 1`,
		models.ActionPetCreated, models.TargetPet).Scan(&uneven); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM audit_events a LEFT JOIN pets p ON p.id = a.target_id
		WHERE a.action = ? AND a.target_type = ? AND p.id IS NULL`, models.ActionPetCreated, models.TargetPet).Scan(&orphans); err != nil {
		t.Fatal(err)
	}
	if uneven != 0 || orphans != 0 {
		t.Errorf("%s: %d pets without exactly one creation event, %d creation events without their pet", node, uneven, orphans)
	}
	return lost, duplicates
}

// tableChecksums returns CHECKSUM TABLE of the tables the test wrote, by
// name: equal on every node when the nodes hold the same rows.
func tableChecksums(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	sums := map[string]string{}
	for _, table := range []string{"pets", "audit_events", "pet_name_words", "idempotency_keys", "api_keys", "sessions", "login_limits"} {
		var name, sum string
		if err := db.QueryRowContext(t.Context(), "CHECKSUM TABLE "+table).Scan(&name, &sum); err != nil {
			t.Fatal(err)
		}
		sums[table] = sum
	}
	return sums
}

// testGaleraIDGaps pages over the ids the cluster gave (three apart per
// node, interleaved by time): the API's keyset pages and their Link next,
// the Location of creates through both instances, and the console's
// keyset pages in their own order (newest created first), older and back.
func testGaleraIDGaps(t *testing.T, g *galeraSite) {
	ids := g.storedIDs(t)
	gaps, residues := 0, map[int64]bool{}
	for i, id := range ids {
		residues[id%3] = true
		if i > 0 && id != ids[i-1]+1 {
			gaps++
		}
	}
	testkit.Figure(t, "galera_pets", float64(len(ids)), "pets")
	testkit.Figure(t, "galera_pet_id_gaps", float64(gaps), "gaps")
	if len(ids) < 100 || gaps == 0 || len(residues) < 2 {
		t.Fatalf("%d pets, %d gaps, ids from %d nodes: the test needs ids from several nodes, with gaps", len(ids), gaps, len(residues))
	}

	t.Run("API pages follow Link next over the gaps", func(t *testing.T) {
		for _, inst := range []*testkit.Instance{g.a, g.b} {
			got := pagedIDs(t, testkit.NewAPIClient(inst.Base, g.boot.Key), 37)
			if !slices.Equal(got, ids) {
				t.Errorf("%s's pages of 37 list %d pets, want the %d stored, in id order (first difference at %d)", inst.Name, len(got), len(ids), firstDifference(got, ids))
			}
		}
	})

	t.Run("Location names the created pet, readable through the other instance", func(t *testing.T) {
		for _, pair := range [][2]*testkit.Instance{{g.a, g.b}, {g.b, g.a}} {
			on, other := testkit.NewAPIClient(pair[0].Base, g.boot.Key), testkit.NewAPIClient(pair[1].Base, g.boot.Key)
			for i := range 5 {
				name := fmt.Sprintf("located %s %d", pair[0].Name, i)
				r := on.CreatePet(name)
				p := testkit.WantCreated(t, r, name)
				loc := r.Header.Get("Location")
				if loc != "/v1/pets/"+strconv.FormatInt(p.ID, 10) {
					t.Errorf("create through %s: Location %q for pet %d", pair[0].Name, loc, p.ID)
					continue
				}
				if got := testkit.WantPet(t, "GET "+loc+" through "+pair[1].Name, other.Get(loc), http.StatusOK); got.ID != p.ID || got.Name != name {
					t.Errorf("GET %s through %s: %+v, want %d %q", loc, pair[1].Name, got, p.ID, name)
				}
			}
		}
	})

	t.Run("console pages, older and newer, over the gaps", func(t *testing.T) {
		staff := testkit.SignedIn(t, g.b.Base, g.boot.Username, g.boot.Password)
		newestFirst := g.storedIDs(t, "created_at DESC, id DESC")
		// From the newest, older pages: each page the next 20 pets, in the
		// console's default order (newest created first), which on Galera
		// is not the ids' order.
		target, seen, pages := "/admin/pets", []int64{}, []string{}
		for page := 0; page < 10 && target != ""; page++ {
			pages = append(pages, target)
			got, _, older := consolePage(t, staff, target)
			seen = append(seen, got...)
			target = older
		}
		if want := newestFirst[:len(seen)]; len(seen) != 200 || !slices.Equal(seen, want) {
			t.Errorf("the console's first 10 pages list %d pets (first difference at %d), want the 200 newest in order", len(seen), firstDifference(seen, want))
		}
		// Back again: each page's newer link leads to the page before it.
		for i := len(pages) - 1; i > 0; i-- {
			_, newer, _ := consolePage(t, staff, pages[i])
			got, _, _ := consolePage(t, staff, newer)
			if want := newestFirst[(i-1)*20 : i*20]; !slices.Equal(got, want) {
				t.Errorf("the newer page from page %d: %v, want %v", i+1, got, want)
			}
		}
	})
}

// storedIDs returns every pet's id, read on node3, in the order given
// (ascending ids when none).
func (g *galeraSite) storedIDs(t *testing.T, order ...string) []int64 {
	t.Helper()
	var ids []int64
	by := "id"
	if len(order) > 0 {
		by = order[0]
	}
	rows, err := nodeDB(t, g.cluster.nodes[2]).QueryContext(t.Context(), "SELECT id FROM pets ORDER BY "+by)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// pagedIDs follows the API's Link next from /v1/pets?limit=limit to the
// last page and returns the ids listed, in order.
func pagedIDs(t *testing.T, c *testkit.APIClient, limit int) []int64 {
	t.Helper()
	var ids []int64
	target := "/v1/pets?limit=" + strconv.Itoa(limit)
	for range 100000 {
		r := c.Get(target)
		var page []api.Pet
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &page) != nil {
			t.Fatalf("GET %s: %s", target, r)
		}
		for _, p := range page {
			ids = append(ids, p.ID)
		}
		m := testkit.NextLink.FindStringSubmatch(r.Header.Get("Link"))
		if m == nil {
			return ids
		}
		u, err := url.Parse(m[1])
		if err != nil || u.Query().Get("limit") != strconv.Itoa(limit) || len(page) != limit {
			t.Fatalf("GET %s: Link %q after a page of %d (%v), want the next page with limit=%d", target, r.Header.Get("Link"), len(page), err, limit)
		}
		target = u.RequestURI()
	}
	t.Fatal("too many pages")
	return nil
}

// consolePage reads a console pets page: its pets' ids in order, and its
// Newer and Older links.
func consolePage(t *testing.T, staff *testkit.Console, target string) (ids []int64, newer, older string) {
	t.Helper()
	r := staff.Get(target)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s: %s", target, r)
	}
	doc := testkit.HTMLDoc(t, r)
	doc.Find(`tr[data-testid="pet-row"]`).Each(func(_ int, s *goquery.Selection) {
		id, _ := s.Attr("id")
		n, err := strconv.ParseInt(strings.TrimPrefix(id, "pet-"), 10, 64)
		if err != nil {
			t.Fatalf("GET %s: a row with id %q", target, id)
		}
		ids = append(ids, n)
	})
	newer, _ = doc.Find(`nav.pager a[rel="prev"]`).Attr("href")
	older, _ = doc.Find(`nav.pager a[rel="next"]`).Attr("href")
	return ids, newer, older
}

// firstDifference is the first index at which a and b differ.
func firstDifference(a, b []int64) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// testGaleraSeed seeds pets through node1, whose ids step by three, and
// checks that each seeded pet's creation event names the pet stored under
// its id: the seed numbers a multi-row INSERT's rows by the node's step.
func testGaleraSeed(t *testing.T, g *galeraSite) {
	partner := testkit.NewAPIClient(g.a.Base, g.boot.Key)
	f := testkit.NewFollower(partner, "/v1/events?limit=1000")
	if err := f.CatchUp(t.Context(), 5); err != nil {
		t.Fatal(err)
	}
	before := f.Count()
	const seeded = 60
	if r := testkit.RunBinary(t, map[string]string{"DATABASE_URL": g.urls[frontendA]}, "seed", "--pets", strconv.Itoa(seeded)); r.Code != 0 {
		t.Fatalf("petstore seed: exit %d\n%s", r.Code, r.Stderr)
	}
	if err := f.CatchUp(t.Context(), 5); err != nil {
		t.Fatal(err)
	}
	events := f.Events()[before:]
	if len(events) != seeded {
		t.Fatalf("%d events after seeding %d pets", len(events), seeded)
	}
	steps := 0
	for i, e := range events {
		if e.Type != "pet.created" {
			t.Errorf("event %s: %s, want pet.created", e.ID, e.Type)
			continue
		}
		if i > 0 && e.Pet.ID-events[i-1].Pet.ID > 1 {
			steps++
		}
		got := testkit.WantPet(t, "a seeded pet", partner.Get("/v1/pets/"+strconv.FormatInt(e.Pet.ID, 10)), http.StatusOK)
		if got.Name != e.Pet.Name || got.CategoryID != e.Pet.CategoryID {
			t.Errorf("event %s names pet %d %q (category %d); stored under that id: %q (category %d)", e.ID, e.Pet.ID, e.Pet.Name, e.Pet.CategoryID, got.Name, got.CategoryID)
		}
	}
	if steps == 0 {
		t.Errorf("the seeded ids are consecutive: the test needs a node whose ids step by the cluster's size")
	}
}
