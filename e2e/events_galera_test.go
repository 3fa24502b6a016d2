package e2e

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"petstore/api"
	"petstore/internal/testkit"
)

// testGaleraFeedNodeLoss follows the change feed through A, from its
// start, while writers create pets (some with an Idempotency-Key, sent
// again with it until 201, some without, sent once) and change their
// status on the console, through A and B, first with A and B on different
// nodes, then while node1, A's node, is killed and brought back. The
// feed's ids are in the cluster's commit order only because two nodes
// that advance its clock at once conflict at certification and one
// retries: the first phase is long so that they do, often. The follower,
// moved to another node with A, must miss no change and read none twice:
// each pet's events are exactly its versions, each the state its writer
// was answered at that version, and every pet answered is stored.
func testGaleraFeedNodeLoss(t *testing.T, g *galeraSite) {
	n1 := g.cluster.nodes[0]
	// The instances keep their pooled connections where an earlier
	// failover left them (HAProxy does not move sessions back to a node
	// that returns): end those on backup nodes, as an operator would, so
	// that A writes through node1 and B through node2.
	for _, server := range []string{frontendA + "/node2", frontendA + "/node3", frontendB + "/node3", frontendB + "/node1"} {
		if out := strings.TrimSpace(haproxyCommand(t, g.proxy, "shutdown sessions server "+server)); out != "" {
			t.Fatalf("haproxy: shutdown sessions server %s: %s", server, out)
		}
	}
	log := newChangeLog()
	follower := startFeedFollower(t, g.feedClient(g.a), "/v1/events?limit=1000&wait=5", true)
	load := startGaleraFeedLoad(t, g, log)
	t.Cleanup(load.end)
	load.waitAcked(t, "A", 1000, "changes through A with A and B on different nodes")
	sessions := frontendSessions(t, g.proxy)
	for _, server := range []string{frontendA + "/node1", frontendB + "/node2"} {
		if sessions[server] == 0 {
			t.Errorf("HAProxy holds no session on %s: A and B do not write through different nodes (%v)", server, sessions)
		}
	}
	for server, n := range sessions {
		if n > 0 && server != frontendA+"/node1" && server != frontendB+"/node2" {
			t.Errorf("HAProxy holds %d sessions on %s: A and B do not write through node1 and node2 alone (%v)", n, server, sessions)
		}
	}

	killed := n1.kill(t)
	g.proxy.waitServer(t, frontendA, n1.name, "DOWN", 30*time.Second)
	load.waitAcked(t, "A", 50, "changes through A after node1 was killed")
	testkit.FigureDuration(t, "galera_feed_kill_first_50_changes_through_A", time.Since(killed))
	n1.restart(t)
	n1.waitSynced(t, 2*time.Minute)
	g.proxy.waitServer(t, frontendA, n1.name, "UP", 30*time.Second)
	load.waitAcked(t, "A", 200, "changes through A with node1 back")
	load.end()
	load.checkWrong(t, g.a, g.b)

	for _, n := range g.cluster.nodes {
		n.waitSynced(t, time.Minute)
	}
	stored := storedPets(t, nodeDB(t, g.cluster.nodes[2]))
	follower.finish(t, totalVersions(stored), time.Minute, 50)
	events := follower.Events()
	rep := checkFeed(t, events, stored, log)
	pages, empty, failed := follower.Stats()
	t.Logf("%d pets, %d changes, %d events read in %d pages (%d empty, %d answers other than 200 read again); %d changes acknowledged during the load, %d writes failed",
		len(stored), rep.changes, rep.events, pages, empty, failed, log.acked(), load.failed.Load())
	testkit.Figure(t, "galera_feed_events_read", float64(rep.events), "events")
	testkit.Figure(t, "galera_feed_changes_acknowledged", float64(log.acked()), "changes")
	testkit.Figure(t, "galera_feed_follower_answers_not_200", float64(failed), "answers")
	testkit.Figure(t, "galera_feed_changes_missed", float64(rep.missed), "changes")
	testkit.Figure(t, "galera_feed_duplicate_event_ids", float64(rep.duplicateIDs), "events")
	testkit.Figure(t, "galera_feed_acknowledged_changes_not_stored", float64(rep.notStored), "changes")
}

// feedClient is an API client of an instance for the feed tests, patient
// enough for a long poll.
func (g *galeraSite) feedClient(inst *testkit.Instance) *testkit.APIClient {
	c := testkit.NewAPIClient(inst.Base, g.boot.Key)
	c.HTTP.Timeout = time.Minute
	return c
}

// galeraFeedLoad is the writers of testGaleraFeedNodeLoss.
type galeraFeedLoad struct {
	t       *testing.T
	log     *changeLog
	pool    []int64 // pets whose status the console writers change
	stop    chan struct{}
	wg      sync.WaitGroup
	ackedBy map[string]*atomic.Int64 // changes answered, by instance
	failed  atomic.Int64             // writes answered otherwise (503, or 409 while a key is held)

	// wrong are answers no write should get even while a node is lost
	// (a 500): counted, the first few kept, and the write sent again as
	// after a 503, so that the load and its checks go on.
	wrongMu sync.Mutex
	wrong   []string
	wrongN  int
}

// noteWrong notes an answer no write should get.
func (l *galeraFeedLoad) noteWrong(format string, args ...any) {
	l.wrongMu.Lock()
	defer l.wrongMu.Unlock()
	if l.wrongN++; len(l.wrong) < 5 {
		l.wrong = append(l.wrong, fmt.Sprintf(format, args...))
	}
}

// checkWrong fails the test if any write got an answer it should not,
// with the causes the instances logged for their 5xx other than 503.
func (l *galeraFeedLoad) checkWrong(t *testing.T, instances ...*testkit.Instance) {
	l.wrongMu.Lock()
	defer l.wrongMu.Unlock()
	testkit.Figure(t, "galera_feed_writes_answered_wrongly", float64(l.wrongN), "answers")
	if l.wrongN == 0 {
		return
	}
	var causes []string
	for _, inst := range instances {
		for line := range strings.Lines(inst.Stderr.String()) {
			if strings.Contains(line, "level=ERROR") && strings.Contains(line, " status=50") && !strings.Contains(line, " status=503") && len(causes) < 5 {
				causes = append(causes, inst.Name+": "+strings.TrimSpace(line))
			}
		}
	}
	t.Errorf("%d writes were answered other than with success or 503 (409 while a key is held), such as:\n%s\nlogged:\n%s",
		l.wrongN, strings.Join(l.wrong, "\n"), strings.Join(causes, "\n"))
}

func startGaleraFeedLoad(t *testing.T, g *galeraSite, log *changeLog) *galeraFeedLoad {
	l := &galeraFeedLoad{t: t, log: log, stop: make(chan struct{}), ackedBy: map[string]*atomic.Int64{"A": {}, "B": {}}}
	seed := g.feedClient(g.a)
	for i := range 6 {
		name := fmt.Sprintf("feed pool %d", i)
		if id := l.send(seed, "A", name, true); id != 0 {
			l.pool = append(l.pool, id)
		}
	}
	if len(l.pool) != 6 {
		t.FailNow()
	}
	// Per instance: three creators with keys, one without, and a console.
	for w := range 10 {
		inst, name := g.a, "A"
		if w%2 == 1 {
			inst, name = g.b, "B"
		}
		if w < 8 {
			keyed := w < 6
			c := g.feedClient(inst)
			c.HTTP.Transport = &http.Transport{MaxIdleConnsPerHost: 1}
			l.wg.Go(func() {
				for i := 0; l.running(); i++ {
					pet := fmt.Sprintf("feed %s-%d-%d", name, w, i)
					if l.send(c, name, pet, keyed) == 0 && keyed {
						return
					}
				}
			})
			continue
		}
		staff := staffConsole(t, inst.Base, g.boot)
		l.wg.Go(func() {
			for l.running() {
				l.setStatus(staff, name, l.pool[rand.IntN(len(l.pool))])
			}
		})
	}
	return l
}

func (l *galeraFeedLoad) running() bool {
	select {
	case <-l.stop:
		return false
	default:
		return true
	}
}

// send sends one create through instance and notes the pet answered.
// With a key it is sent again with it until it is answered 201 (a replay
// answers an attempt that failed for the client but was stored), and it
// returns 0 after 30 s of failures. Without, it is sent once: one that
// fails may have been stored or not, which the pet's row says, not the
// log.
func (l *galeraFeedLoad) send(c *testkit.APIClient, instance, name string, keyed bool) int64 {
	st := petState{name, 1 + rand.Int64N(9), randomStatus()}
	body, _ := json.Marshal(map[string]any{"name": st.Name, "categoryId": st.CategoryID, "status": st.Status})
	h := http.Header{"Content-Type": {"application/json"}}
	if keyed {
		h.Set("Idempotency-Key", "galera-"+name)
	}
	giveUp := time.Now().Add(30 * time.Second)
	for {
		r := c.Do(http.MethodPost, "/v1/pets", h, string(body))
		var p api.Pet
		if r.Err == nil && r.Status == http.StatusCreated && json.Unmarshal(r.Body, &p) == nil && p.ID > 0 {
			if got := (petState{p.Name, p.CategoryID, p.Status}); got != st {
				l.t.Errorf("create %v through %s: answered %v", st, instance, got)
			}
			l.log.ack(p.ID, 1, st, "a create through "+instance)
			l.ackedBy[instance].Add(1)
			return p.ID
		}
		if r.Err == nil && r.Status != http.StatusServiceUnavailable && (r.Status != http.StatusConflict || !keyed) {
			l.noteWrong("create %v through %s: %s, want 201, or 503 (409 while its key is held)", st, instance, r)
		}
		l.failed.Add(1)
		if !keyed {
			time.Sleep(20 * time.Millisecond)
			return 0
		}
		if time.Now().After(giveUp) {
			l.t.Errorf("create %v through %s: still failing after 30 s: %s", st, instance, r)
			return 0
		}
		pause := 20 * time.Millisecond
		if r.Status == http.StatusConflict {
			pause = 200 * time.Millisecond
		}
		time.Sleep(pause)
	}
}

// setStatus changes a pet's status on the console of instance and notes
// the row answered. A change that fails is not sent again: whether it was
// stored is for the database to say (its version), not the log.
func (l *galeraFeedLoad) setStatus(c *testkit.Console, instance string, id int64) {
	st := randomStatus()
	r := hxPost(c, "/admin/pets/"+strconv.FormatInt(id, 10)+"/status", url.Values{"status": {string(st)}})
	if r.Err != nil || r.Status == http.StatusServiceUnavailable {
		l.failed.Add(1)
		time.Sleep(50 * time.Millisecond)
		return
	}
	doc, err := rowAnswer(r)
	if r.Status != http.StatusOK || err != nil {
		l.noteWrong("status of pet %d to %s through %s: %s, want 200 or 503", id, st, instance, r)
		l.failed.Add(1)
		time.Sleep(50 * time.Millisecond)
		return
	}
	gotID, version, got, err := rowOf(doc.Find(`tr[data-testid="pet-row"]`).First())
	if err != nil || gotID != id || got.Status != st {
		l.t.Errorf("status of pet %d to %s through %s: the row answered is pet %d %v (%v)", id, st, instance, gotID, got, err)
		return
	}
	l.log.ack(id, version, got, "a console status change through "+instance)
	l.ackedBy[instance].Add(1)
}

// waitAcked waits until n more changes are answered through instance.
func (l *galeraFeedLoad) waitAcked(t *testing.T, instance string, n int64, why string) {
	t.Helper()
	from := l.ackedBy[instance].Load()
	testkit.WaitFor(t, why, time.Minute, 10*time.Millisecond, func() bool { return l.ackedBy[instance].Load() >= from+n })
}

// end stops the writers; each finishes its write first.
func (l *galeraFeedLoad) end() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
}

// haproxyCommand sends one command to HAProxy's admin socket and returns
// its answer.
func haproxyCommand(t *testing.T, h *haproxy, cmd string) string {
	t.Helper()
	conn, err := net.DialTimeout("unix", h.socket, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(conn, cmd+"\n"); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("haproxy %q: %v", cmd, err)
	}
	return string(b)
}

// frontendSessions returns how many sessions HAProxy holds open to each
// node for each frontend ("petstore_a/node1": 3): which nodes A and B
// write through.
func frontendSessions(t *testing.T, h *haproxy) map[string]int {
	t.Helper()
	b := haproxyCommand(t, h, "show stat")
	rows, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(b, "# "))).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("haproxy stats: %v: %q", err, b)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	sessions := map[string]int{}
	for _, row := range rows[1:] {
		if sv := row[col["svname"]]; strings.HasPrefix(sv, "node") {
			sessions[row[col["pxname"]]+"/"+sv], _ = strconv.Atoi(row[col["scur"]])
		}
	}
	return sessions
}
