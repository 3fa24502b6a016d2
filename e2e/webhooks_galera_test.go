package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"petstore/internal/testkit"
)

// galeraWebhookDuplicateBound is how many events may reach the receiver
// more than once while node1 is lost and brought back. One instance at a
// time delivers to an endpoint, one delivery at a time, and it stops at
// the first outcome it could not write; a delivery is sent again only
// when its outcome was lost that way, or when the lease ran out under it
// (a stalled statement gives up at the 10 s read timeout, before the 11 s
// lease runs out). So each failed write of an outcome costs at most one
// duplicate. Writes that may fail here: the one in flight when the kill
// cuts A's sessions on node1, one on the instance delivering when node1
// rejoins, and, for each of those moments, one whose retries (the Store
// retries certification conflicts and a node not ready) ran out while
// the cluster changed: four. More means deliveries repeated for another
// reason: a lease that does not hold, or two workers at once.
const galeraWebhookDuplicateBound = 4

// testGaleraWebhooksNodeLoss delivers the change feed to an endpoint (every
// type) from A and B while writers create pets through both, and node1,
// A's node, is killed and brought back as in testGaleraFeedNodeLoss: every
// event of the feed, read through A afterwards, reaches the receiver, as
// the feed wrote it and signed with the secret the CLI printed. Events
// that come more than once (at least once is the promise) are counted
// and written as a figure, and fail the test only beyond
// galeraWebhookDuplicateBound.
func testGaleraWebhooksNodeLoss(t *testing.T, g *galeraSite) {
	n1 := g.cluster.nodes[0]
	// A and B were started without WEBHOOK_ALLOW_PRIVATE, so their
	// dispatchers refuse a receiver on loopback: they are started again
	// with it. New processes connect to their frontend's first node, so
	// this also puts A back on node1 and B on node2, where the feed test
	// left their sessions on backups. They belong to TestGalera, which
	// stops them at its end, as the cluster's nodes do.
	for _, p := range []*testkit.Instance{g.a, g.b} {
		p.Stop(t)
	}
	varsA, varsB := webhookVars(g.urls[frontendA]), webhookVars(g.urls[frontendB])
	g.a = testkit.StartBinaryLogging(n1.owner, "instance A", varsA, filepath.Join(g.cluster.dir, "instance-a-webhooks.log"), "serve")
	g.b = testkit.StartBinaryLogging(n1.owner, "instance B", varsB, filepath.Join(g.cluster.dir, "instance-b-webhooks.log"), "serve")
	g.a.WaitListening(t, time.Minute)
	g.b.WaitListening(t, time.Minute)

	onA := g.feedClient(g.a)
	recv := testkit.NewWebhookReceiver(t, nil)
	target := recv.URL + "/galera"
	from := feedHead(t, onA)
	secret := createWebhook(t, varsA, target)

	load := startGaleraWebhookLoad(t, g)
	t.Cleanup(load.end)
	load.waitAcked(t, "A", 100, "creates through A with A and B on their own nodes")
	sessions := frontendSessions(t, g.proxy)
	if sessions[frontendA+"/node1"] == 0 || sessions[frontendB+"/node2"] == 0 {
		t.Errorf("A and B do not write through node1 and node2 (HAProxy sessions %v): the kill would not hit A's sessions", sessions)
	}

	killed := n1.kill(t)
	g.proxy.waitServer(t, frontendA, n1.name, "DOWN", 30*time.Second)
	load.waitAcked(t, "A", 20, "creates through A after node1 was killed")
	testkit.FigureDuration(t, "galera_webhooks_kill_first_20_creates_through_A", time.Since(killed))
	n1.restart(t)
	n1.waitSynced(t, 2*time.Minute)
	g.proxy.waitServer(t, frontendA, n1.name, "UP", 30*time.Second)
	load.waitAcked(t, "A", 20, "creates through A with node1 back")
	load.end()
	load.check(t)

	events := readFeedFrom(t, onA, from)
	took := waitAnswered(t, recv, events, time.Minute, "the endpoint after node1's loss")
	time.Sleep(3 * webhookPoll) // for a late duplicate
	count := checkDeliveries(t, recv, secret, events)
	var twice []string
	duplicates := 0
	for _, e := range events {
		if n := count[e.ID]; n > 1 {
			duplicates += n - 1
			twice = append(twice, fmt.Sprintf("%s×%d", e.ID, n))
		}
	}
	var worst time.Duration // from an event's commit to its first delivery
	first := map[string]time.Time{}
	for _, q := range recv.Requests() {
		if _, seen := first[q.EventID]; !seen && q.Answered {
			first[q.EventID] = q.At
		}
	}
	for _, e := range events {
		worst = max(worst, first[e.ID].Sub(e.OccurredAt))
	}
	some := twice[:min(len(twice), 20)] // event id×times, enough to see a pattern
	t.Logf("%d events delivered in %d requests, all %s after the load ended; %d came more than once %v; longest from commit to delivery %s",
		len(events), len(recv.Requests()), took.Round(time.Millisecond), len(twice), some, worst.Round(time.Millisecond))
	testkit.Figure(t, "galera_webhooks_events", float64(len(events)), "events")
	testkit.Figure(t, "galera_webhooks_duplicate_deliveries", float64(duplicates), "deliveries")
	testkit.FigureDuration(t, "galera_webhooks_delivered_after_load", took)
	testkit.FigureDuration(t, "galera_webhooks_longest_commit_to_delivery", worst)
	if duplicates > galeraWebhookDuplicateBound {
		t.Errorf("%d deliveries repeated (%d events, such as %v), more than the %d one node's loss and return can cause",
			duplicates, len(twice), some, galeraWebhookDuplicateBound)
	}
}

// galeraWebhookLoad is the writers of testGaleraWebhooksNodeLoss: creates
// through A and B, paced so that one endpoint's deliveries (one at a
// time) keep up, and each sent once: whether one that failed was stored
// is for the feed to say.
type galeraWebhookLoad struct {
	stop    chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
	ackedBy map[string]*atomic.Int64
	failed  atomic.Int64 // 503s and transport errors

	mu     sync.Mutex
	wrong  []string // answers no create should get, even while a node is lost
	wrongN int
}

func startGaleraWebhookLoad(t *testing.T, g *galeraSite) *galeraWebhookLoad {
	l := &galeraWebhookLoad{stop: make(chan struct{}), ackedBy: map[string]*atomic.Int64{"A": {}, "B": {}}}
	for w := range 4 {
		inst, name := g.a, "A"
		if w%2 == 1 {
			inst, name = g.b, "B"
		}
		c := g.feedClient(inst)
		c.HTTP.Transport = &http.Transport{MaxIdleConnsPerHost: 1}
		l.wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				r := c.CreatePet(fmt.Sprintf("webhook %s-%d-%d", name, w, i))
				switch {
				case r.Err == nil && r.Status == http.StatusCreated:
					l.ackedBy[name].Add(1)
				case r.Err != nil || r.Status == http.StatusServiceUnavailable:
					l.failed.Add(1)
				default:
					l.mu.Lock()
					if l.wrongN++; len(l.wrong) < 5 {
						l.wrong = append(l.wrong, fmt.Sprintf("create through %s: %s", name, r))
					}
					l.mu.Unlock()
				}
			}
		})
	}
	return l
}

// waitAcked waits until n more creates are answered 201 through instance.
func (l *galeraWebhookLoad) waitAcked(t *testing.T, instance string, n int64, why string) {
	t.Helper()
	from := l.ackedBy[instance].Load()
	testkit.WaitFor(t, why, time.Minute, 10*time.Millisecond, func() bool { return l.ackedBy[instance].Load() >= from+n })
}

// end stops the writers; each finishes its create first.
func (l *galeraWebhookLoad) end() {
	l.once.Do(func() { close(l.stop) })
	l.wg.Wait()
}

// check fails the test if a create got an answer other than 201 or 503.
func (l *galeraWebhookLoad) check(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	t.Logf("creates answered 201: %d through A, %d through B; %d failed (503 or no answer)", l.ackedBy["A"].Load(), l.ackedBy["B"].Load(), l.failed.Load())
	if l.wrongN > 0 {
		t.Errorf("%d creates were answered other than 201 or 503, such as:\n%s", l.wrongN, strings.Join(l.wrong, "\n"))
	}
}
