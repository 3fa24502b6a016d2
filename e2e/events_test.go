package e2e

// The change feed (GET /v1/events) end to end: a partner that follows it
// while staff and other partners write every kind of change must see each
// committed change exactly once, in each pet's order. The feed's own
// checks of one answer are in internal/testkit/events.go; this file holds
// what the tests know of the pets: every state a client was told of, the
// rows the database holds afterwards, and the comparison of both with the
// events followed. The tests across instances, on Galera and with many
// idle readers are in events_*_test.go.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
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

	"petstore/api"
	"petstore/internal/testkit"
	"petstore/models"
)

// petState is what an event tells of a pet besides its id.
type petState struct {
	Name       string
	CategoryID int64
	Status     models.Status
}

func (s petState) String() string { return fmt.Sprintf("%q/%d/%s", s.Name, s.CategoryID, s.Status) }

func eventState(e api.Event) petState {
	return petState{Name: e.Pet.Name, CategoryID: e.Pet.CategoryID, Status: e.Pet.Status}
}

// changedFields names the fields that differ from a to b as the feed
// names them, in the feed's order.
func changedFields(a, b petState) []string {
	var f []string
	if a.Name != b.Name {
		f = append(f, "name")
	}
	if a.CategoryID != b.CategoryID {
		f = append(f, "categoryId")
	}
	if a.Status != b.Status {
		f = append(f, "status")
	}
	return f
}

// loggedState is a state of a pet at one version that a client was
// shown: acked when a write was answered with it, else read on a page.
type loggedState struct {
	state petState
	how   string
	acked bool
	at    time.Time
}

// changeLog is every state of every pet at a version that clients were
// shown. A pet's version counts its changes (a create is version 1, each
// change that writes adds one), so the feed's k-th event of a pet must be
// its state at version k: that is how a change acknowledged to a writer
// is found in the feed, and its order checked, whatever the event ids.
type changeLog struct {
	mu     sync.Mutex
	states map[int64]map[int64]loggedState
	// clashes are two different states shown for one version: the
	// product gave one version two states, or the test misread an answer.
	clashes []string
}

func newChangeLog() *changeLog { return &changeLog{states: map[int64]map[int64]loggedState{}} }

// ack notes that a write was answered with the pet's state at version.
func (l *changeLog) ack(pet, version int64, s petState, how string) {
	l.note(pet, version, s, how, true)
}

// saw notes that a page showed the pet's state at version.
func (l *changeLog) saw(pet, version int64, s petState, how string) {
	l.note(pet, version, s, how, false)
}

func (l *changeLog) note(pet, version int64, s petState, how string, acked bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	byVersion := l.states[pet]
	if byVersion == nil {
		byVersion = map[int64]loggedState{}
		l.states[pet] = byVersion
	}
	prev, ok := byVersion[version]
	switch {
	case !ok:
		byVersion[version] = loggedState{state: s, how: how, acked: acked, at: time.Now()}
	case prev.state != s:
		l.clashes = append(l.clashes, fmt.Sprintf("pet %d version %d: %s showed %v, %s showed %v", pet, version, prev.how, prev.state, how, s))
	case acked && !prev.acked:
		byVersion[version] = loggedState{state: s, how: how, acked: true, at: time.Now()}
	}
}

// acked counts the changes acknowledged to writers.
func (l *changeLog) acked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, byVersion := range l.states {
		for _, s := range byVersion {
			if s.acked {
				n++
			}
		}
	}
	return n
}

// storedPet is a pet's row as the database holds it.
type storedPet struct {
	version int64
	state   petState
}

// storedPets reads every pet's row.
func storedPets(t *testing.T, db *sql.DB) map[int64]storedPet {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), "SELECT id, version, name, category_id, status FROM pets")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	pets := map[int64]storedPet{}
	for rows.Next() {
		var (
			id int64
			p  storedPet
		)
		if err := rows.Scan(&id, &p.version, &p.state.Name, &p.state.CategoryID, &p.state.Status); err != nil {
			t.Fatal(err)
		}
		pets[id] = p
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return pets
}

// totalVersions is how many changes the pets have had: the events the
// feed must hold.
func totalVersions(pets map[int64]storedPet) int {
	n := 0
	for _, p := range pets {
		n += int(p.version)
	}
	return n
}

// feedReport is what checkFeed found.
type feedReport struct {
	events, changes  int
	missed           int // changes of stored pets with no event (a shorter history)
	extra            int // events beyond a pet's changes
	duplicateIDs     int // events read again under an id already read
	duplicateChanges int // an event that shows its pet as the one before it did: a change repeated, or the one between missed
	missedAcked      int // acknowledged changes not in the feed
	notStored        int // pets a write was answered with that the database does not hold
	wrong            int // events that differ from the state clients were shown at their version
}

// checkFeed compares the events a follower read with the pets' rows and
// the log: every pet has exactly one event per version, the k-th being
// its state at version k (the state shown to any client at k, the row's
// at the last), created first and updated after with the fields that
// changed; no event id twice; no event of a pet that does not exist.
func checkFeed(t *testing.T, events []api.Event, stored map[int64]storedPet, log *changeLog) feedReport {
	t.Helper()
	rep := feedReport{events: len(events), changes: totalVersions(stored)}
	var problems []string
	problem := func(format string, args ...any) {
		if len(problems) < 40 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	ids := map[string]int{}
	byPet := map[int64][]api.Event{}
	for i, e := range events {
		if first, dup := ids[e.ID]; dup {
			rep.duplicateIDs++
			problem("event id %s read twice: at %d (%v) and at %d (%v)", e.ID, first, eventState(events[first]), i, eventState(e))
			continue
		}
		ids[e.ID] = i
		byPet[e.Pet.ID] = append(byPet[e.Pet.ID], e)
	}
	for id, evs := range byPet {
		if _, ok := stored[id]; !ok {
			rep.extra += len(evs)
			problem("pet %d is not stored, but the feed has %d events of it, the first %s", id, len(evs), evs[0].ID)
		}
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, c := range log.clashes {
		problem("%s", c)
	}
	for _, id := range slices.Sorted(maps.Keys(stored)) {
		p, evs := stored[id], byPet[id]
		switch {
		case int64(len(evs)) < p.version:
			rep.missed += int(p.version) - len(evs)
			problem("pet %d has had %d changes (version %d), the feed %d: %s", id, p.version, p.version, len(evs), historyOf(evs))
		case int64(len(evs)) > p.version:
			rep.extra += len(evs) - int(p.version)
			problem("pet %d has had %d changes (version %d), the feed %d: %s", id, p.version, p.version, len(evs), historyOf(evs))
		}
		for k, e := range evs {
			version, st := int64(k+1), eventState(e)
			if k == 0 && e.Type != "pet.created" {
				problem("pet %d: its first event %s is %s, want pet.created", id, e.ID, e.Type)
			}
			if k > 0 {
				prev := eventState(evs[k-1])
				if prev == st {
					rep.duplicateChanges++
					problem("pet %d: event %s shows it as event %s did (%v): a change repeated, or the one between missed", id, e.ID, evs[k-1].ID, st)
				} else if want := changedFields(prev, st); e.Type != "pet.updated" || !slices.Equal(e.Changed, want) {
					problem("pet %d: event %s is %s changing %v, want pet.updated changing %v (%v -> %v)", id, e.ID, e.Type, e.Changed, want, prev, st)
				}
			}
			if s, ok := log.states[id][version]; ok && s.state != st {
				rep.wrong++
				problem("pet %d: its event %s for version %d shows %v, but %s showed %v", id, e.ID, version, st, s.how, s.state)
			}
			if version == p.version && st != p.state {
				rep.wrong++
				problem("pet %d: its last event %s shows %v, the row %v", id, e.ID, st, p.state)
			}
		}
	}
	for id, byVersion := range log.states {
		for version, s := range byVersion {
			if !s.acked {
				continue
			}
			if _, ok := stored[id]; !ok {
				rep.notStored++
				rep.missedAcked++
				problem("pet %d: %s answered version %d (%v), but the pet is not stored, nor in the feed", id, s.how, version, s.state)
				continue
			}
			if version > int64(len(byPet[id])) {
				rep.missedAcked++
				problem("pet %d: %s answered version %d (%v), which the feed lacks: %s", id, s.how, version, s.state, historyOf(byPet[id]))
			}
		}
	}
	if len(problems) > 0 {
		t.Errorf("the feed does not hold every change exactly once (%d events read for %d changes; %d changes missed; %d acknowledged changes not in the feed, %d of them not stored at all; %d extra events; %d event ids read twice; %d events repeating the state before; %d events unlike what clients were shown):\n%s",
			rep.events, rep.changes, rep.missed, rep.missedAcked, rep.notStored, rep.extra, rep.duplicateIDs, rep.duplicateChanges, rep.wrong, strings.Join(problems, "\n"))
	}
	return rep
}

// historyOf shows a pet's events in a failure message.
func historyOf(evs []api.Event) string {
	var b strings.Builder
	for i, e := range evs {
		if i == 8 {
			fmt.Fprintf(&b, " ... (%d in all)", len(evs))
			break
		}
		fmt.Fprintf(&b, " [%s %v]", e.ID, eventState(e))
	}
	return strings.TrimSpace(b.String())
}

// feedFollower follows the feed in a goroutine of its own from the test's
// start to its end, noting when each page arrived (for the lag figure).
type feedFollower struct {
	*testkit.Follower
	t      *testing.T
	cancel context.CancelFunc
	done   chan struct{}
	// arrivals[i] is when the follower had read arrivals[i].n events.
	mu       sync.Mutex
	arrivals []arrival
}

type arrival struct {
	n  int
	at time.Time
}

// startFeedFollower starts following from first. An answer other than
// 200 fails the test unless retryNotOK, when it is sent again (a database
// node lost); any other break of the contract fails the test and ends the
// follow.
func startFeedFollower(t *testing.T, c *testkit.APIClient, first string, retryNotOK bool) *feedFollower {
	ctx, cancel := context.WithCancel(context.Background())
	ff := &feedFollower{Follower: testkit.NewFollower(c, first), t: t, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(ff.done)
		for ctx.Err() == nil {
			n, ok, err := ff.Step(ctx)
			var notOK *testkit.NotOKError
			switch {
			case ctx.Err() != nil:
				return
			case err != nil && retryNotOK && errors.As(err, &notOK):
				time.Sleep(100 * time.Millisecond)
			case err != nil:
				t.Errorf("the follower: %v", err)
				return
			case ok && n > 0:
				ff.mu.Lock()
				ff.arrivals = append(ff.arrivals, arrival{ff.Count(), time.Now()})
				ff.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-ff.done })
	return ff
}

// finish waits until the follower has read want events, or limit passes
// or it stops; then it ends its long poll (a request cut short moves no
// cursor) and reads what is left without waiting, so that events beyond
// want are read too.
func (ff *feedFollower) finish(t *testing.T, want int, limit time.Duration, tries int) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for ff.Count() < want && time.Now().Before(deadline) {
		select {
		case <-ff.done:
			deadline = time.Now()
		case <-time.After(20 * time.Millisecond):
		}
	}
	ff.cancel()
	<-ff.done
	if ff.Count() < want {
		t.Errorf("the follower read %d events within %s after the writers stopped, want %d", ff.Count(), limit, want)
	}
	ff.SetWait(0)
	if err := ff.CatchUp(context.Background(), tries); err != nil {
		t.Errorf("the follower's last pages: %v", err)
	}
}

// lags returns, for each acknowledged change the follower read, how long
// after its writer was answered the follower had it (0 when it had it
// first), sorted.
func (ff *feedFollower) lags(events []api.Event, log *changeLog) []time.Duration {
	ff.mu.Lock()
	arrivals := slices.Clone(ff.arrivals)
	ff.mu.Unlock()
	log.mu.Lock()
	defer log.mu.Unlock()
	var lags []time.Duration
	perPet := map[int64]int64{}
	for i, e := range events {
		perPet[e.Pet.ID]++
		s, ok := log.states[e.Pet.ID][perPet[e.Pet.ID]]
		if !ok || !s.acked {
			continue
		}
		j := sort.Search(len(arrivals), func(j int) bool { return arrivals[j].n > i })
		if j == len(arrivals) {
			continue // read by the last pages, after the follow
		}
		lags = append(lags, max(0, arrivals[j].at.Sub(s.at)))
	}
	slices.Sort(lags)
	return lags
}

// percentile is the p-th percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*p))]
}

// The console as the feed tests drive it: htmx requests where the
// console answers them with the changed row (the exact state written),
// plain form posts elsewhere.

// hxPost posts form as htmx does from the console's pages, with the
// session's CSRF token.
func hxPost(c *testkit.Console, target string, form url.Values) testkit.Reply {
	form.Set("csrf_token", c.CSRF)
	h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Sec-Fetch-Site": {"same-origin"}, "HX-Request": {"true"}}
	return c.Do(http.MethodPost, target, h, form.Encode())
}

// staffConsole signs in on base and keeps the session's CSRF token.
func staffConsole(t *testing.T, base string, boot testkit.Boot) *testkit.Console {
	t.Helper()
	c := testkit.SignedIn(t, base, boot.Username, boot.Password)
	c.CSRF = testkit.CSRFToken(t, c.Get("/admin/pets"))
	return c
}

// parseDoc parses a console answer (in a writer's goroutine: no Fatal).
func parseDoc(r testkit.Reply) (*goquery.Document, error) {
	return goquery.NewDocumentFromReader(strings.NewReader(string(r.Body)))
}

// rowAnswer parses the answer of a console status change: it starts with
// the row itself, which an HTML parser drops outside a table.
func rowAnswer(r testkit.Reply) (*goquery.Document, error) {
	return goquery.NewDocumentFromReader(strings.NewReader("<table><tbody>" + string(r.Body) + "</tbody></table>"))
}

// rowOf reads a pets list row: its pet, version and state.
func rowOf(s *goquery.Selection) (id, version int64, st petState, err error) {
	val, _ := s.Find(`input[name="pet"]`).Attr("value") // id:version
	idText, verText, _ := strings.Cut(val, ":")
	id, err1 := strconv.ParseInt(idText, 10, 64)
	version, err2 := strconv.ParseInt(verText, 10, 64)
	st.Name = strings.TrimSpace(s.Find(`[data-testid="pet-name"]`).Text())
	st.Status = models.Status(strings.TrimSpace(s.Find(`[data-testid="pet-status"]`).Text()))
	cat, err3 := strconv.ParseInt(strings.TrimSpace(s.Find("td.num.hide-small").First().Text()), 10, 64)
	st.CategoryID = cat
	if err := errors.Join(err1, err2, err3); err != nil || st.Name == "" || st.Status == "" {
		h, _ := s.Html()
		return 0, 0, petState{}, fmt.Errorf("a pet row without its pet, version and state (%v): %s", err, testkit.Clip(h))
	}
	return id, version, st, nil
}

var petPageVersion = regexp.MustCompile(`\(version (\d+)\)`)

// petPageOf reads a pet's page: the stored state and version it shows.
func petPageOf(doc *goquery.Document) (version int64, st petState, err error) {
	st.Name = strings.TrimSpace(doc.Find(`[data-testid="pet-heading"]`).Text())
	st.Status = models.Status(strings.TrimSpace(doc.Find(`.page-head [data-testid="pet-status"]`).Text()))
	cat, err1 := strconv.ParseInt(strings.TrimSpace(doc.Find(`[data-testid="pet-category"]`).Text()), 10, 64)
	st.CategoryID = cat
	m := petPageVersion.FindStringSubmatch(doc.Find(`[data-testid="pet-updated"]`).Text())
	if m == nil || err1 != nil || st.Name == "" || st.Status == "" {
		return 0, petState{}, fmt.Errorf("a pet page without the pet's state and version (%v)", err1)
	}
	version, _ = strconv.ParseInt(m[1], 10, 64)
	return version, st, nil
}

// feedLoad is the writers of TestEventsFollowerUnderLoad. Each knows
// exactly what its write did from its answer: an API create's body; the
// row a console status change returns; an edit saved over version v is v+1
// with the fields sent (it always renames, so it always writes); a bulk
// change writes each pet it does not name as skipped at the version its
// page showed, plus one; a console add's message names the new pet.
type feedLoad struct {
	t     *testing.T
	log   *changeLog
	until time.Time
	// hot is one pet whose status a writer changes over and over; the bulk
	// pool (hot among them) is only ever given a new status, so the names
	// a bulk change's summary gives are the names its page showed; the edit
	// pool is edited by two writers at once.
	hot      int64
	bulkPool []int64
	editPool []int64

	mu     sync.Mutex
	recent []int64 // pets created through the API lately: edited too

	apiCreates, keyedCreates, replays, statusChanges, edits, conflicts, bulkChanged, bulkSkipped, adds atomic.Int64
}

var feedStatuses = []models.Status{models.StatusAvailable, models.StatusPending, models.StatusSold}

func randomStatus() models.Status { return feedStatuses[rand.IntN(len(feedStatuses))] }

// create creates through the API, with an Idempotency-Key when key is not
// "", and notes the pet answered; replayed says the answer was a replay.
func (l *feedLoad) create(c *testkit.APIClient, st petState, key string) (id int64, replayed, ok bool) {
	body, _ := json.Marshal(map[string]any{"name": st.Name, "categoryId": st.CategoryID, "status": st.Status})
	h := http.Header{"Content-Type": {"application/json"}}
	if key != "" {
		h.Set("Idempotency-Key", key)
	}
	r := c.Do(http.MethodPost, "/v1/pets", h, string(body))
	var p api.Pet
	if r.Err != nil || r.Status != http.StatusCreated || json.Unmarshal(r.Body, &p) != nil || p.ID < 1 {
		l.t.Errorf("create %v (key %q): %s, want 201 with the pet", st, key, r)
		return 0, false, false
	}
	if got := (petState{p.Name, p.CategoryID, p.Status}); got != st {
		l.t.Errorf("create %v: answered %v", st, got)
	}
	replayed = r.Header.Get("Idempotent-Replayed") == "true"
	if replayed {
		l.replays.Add(1)
		l.log.saw(p.ID, 1, st, "a replayed API create")
	} else {
		l.log.ack(p.ID, 1, st, "an API create")
	}
	return p.ID, replayed, true
}

// setup creates the pools before the writers start.
func (l *feedLoad) setup(c *testkit.APIClient) {
	create := func(st petState) int64 {
		id, _, ok := l.create(c, st, "")
		if !ok {
			l.t.FailNow()
		}
		return id
	}
	l.hot = create(petState{"bulkpool hot", 1, models.StatusAvailable})
	l.bulkPool = append(l.bulkPool, l.hot)
	for i := range 12 {
		l.bulkPool = append(l.bulkPool, create(petState{fmt.Sprintf("bulkpool %d", i), int64(1 + i%5), randomStatus()}))
	}
	for i := range 4 {
		l.editPool = append(l.editPool, create(petState{fmt.Sprintf("editpool %d", i), int64(1 + i), models.StatusAvailable}))
	}
}

func (l *feedLoad) running() bool { return time.Now().Before(l.until) && !l.t.Failed() }

// apiCreator creates without a key until the load ends.
func (l *feedLoad) apiCreator(c *testkit.APIClient, w int) {
	for i := 0; l.running(); i++ {
		id, _, ok := l.create(c, petState{fmt.Sprintf("c%d-%d", w, i), 1 + rand.Int64N(9), randomStatus()}, "")
		if !ok {
			return
		}
		l.apiCreates.Add(1)
		l.mu.Lock()
		l.recent = append(l.recent, id)
		if len(l.recent) > 10 {
			l.recent = l.recent[1:]
		}
		l.mu.Unlock()
	}
}

// keyedCreator creates with an Idempotency-Key, sends some again with the
// same key (a replay, which must answer the same pet and write nothing),
// and sends some twice at once (one creates, the other is answered 409
// while the first runs, then replayed).
func (l *feedLoad) keyedCreator(c *testkit.APIClient, w int) {
	for i := 0; l.running(); i++ {
		st := petState{fmt.Sprintf("k%d-%d", w, i), 1 + rand.Int64N(9), randomStatus()}
		key := fmt.Sprintf("feed-%d-%d", w, i)
		switch i % 3 {
		case 0:
			if _, _, ok := l.create(c, st, key); !ok {
				return
			}
		case 1:
			first, _, ok := l.create(c, st, key)
			if !ok {
				return
			}
			again, replayed, ok := l.create(c, st, key)
			if !ok {
				return
			}
			if again != first || !replayed {
				l.t.Errorf("create %v again with key %s: pet %d (replayed: %t), want pet %d replayed", st, key, again, replayed, first)
			}
		case 2:
			var (
				wg  sync.WaitGroup
				ids [2]int64
			)
			for j := range ids {
				wg.Go(func() { ids[j] = l.createHeld(c, st, key) })
			}
			wg.Wait()
			if ids[0] == 0 || ids[1] == 0 {
				return
			}
			if ids[0] != ids[1] {
				l.t.Errorf("create %v twice at once with key %s: pets %d and %d, want one", st, key, ids[0], ids[1])
			}
		}
		l.keyedCreates.Add(1)
	}
}

// createHeld creates with key, sending the request again while the key's
// first request still runs (409).
func (l *feedLoad) createHeld(c *testkit.APIClient, st petState, key string) int64 {
	body, _ := json.Marshal(map[string]any{"name": st.Name, "categoryId": st.CategoryID, "status": st.Status})
	h := http.Header{"Content-Type": {"application/json"}, "Idempotency-Key": {key}}
	for try := 0; try < 200; try++ {
		r := c.Do(http.MethodPost, "/v1/pets", h, string(body))
		if r.Status == http.StatusConflict && strings.Contains(string(r.Body), string(models.CodeIdempotencyKeyInUse)) {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		var p api.Pet
		if r.Err != nil || r.Status != http.StatusCreated || json.Unmarshal(r.Body, &p) != nil || p.ID < 1 {
			l.t.Errorf("create %v with key %s: %s, want 201 (or 409 while held)", st, key, r)
			return 0
		}
		if r.Header.Get("Idempotent-Replayed") == "true" {
			l.replays.Add(1)
			l.log.saw(p.ID, 1, st, "a replayed API create")
		} else {
			l.log.ack(p.ID, 1, st, "an API create")
		}
		return p.ID
	}
	l.t.Errorf("create %v with key %s: still held after 200 tries", st, key)
	return 0
}

// setStatus changes one pet's status on its row, as the console's select
// does, and notes the row the console answers: the pet as written (or as
// it was, when it had that status already).
func (l *feedLoad) setStatus(c *testkit.Console, id int64) bool {
	st := randomStatus()
	r := hxPost(c, "/admin/pets/"+strconv.FormatInt(id, 10)+"/status", url.Values{"status": {string(st)}})
	if r.Status != http.StatusOK {
		l.t.Errorf("status of pet %d to %s: %s, want 200", id, st, r)
		return false
	}
	doc, err := rowAnswer(r)
	if err != nil {
		l.t.Error(err)
		return false
	}
	gotID, version, got, err := rowOf(doc.Find(`tr[data-testid="pet-row"]`).First())
	if err != nil || gotID != id || got.Status != st {
		l.t.Errorf("status of pet %d to %s: the row answered is pet %d %v (%v)", id, st, gotID, got, err)
		return false
	}
	l.log.ack(id, version, got, "a console status change")
	l.statusChanges.Add(1)
	return true
}

// hotStatus changes the hot pet's status until the load ends.
func (l *feedLoad) hotStatus(c *testkit.Console) {
	for l.running() && l.setStatus(c, l.hot) {
	}
}

// editor edits pets of the edit pool and recent creates over the version
// their page showed: saved (303) it is that version plus one with the
// fields sent; refused (409) the page shows the version that won.
func (l *feedLoad) editor(c *testkit.Console, w int) {
	for i := 0; l.running(); i++ {
		l.mu.Lock()
		targets := append(slices.Clone(l.editPool), l.recent...)
		l.mu.Unlock()
		id := targets[rand.IntN(len(targets))]
		path := "/admin/pets/" + strconv.FormatInt(id, 10)
		r := c.Get(path)
		doc, err := parseDoc(r)
		if r.Status != http.StatusOK || err != nil {
			l.t.Errorf("GET %s: %s (%v)", path, r, err)
			return
		}
		version, st, err := petPageOf(doc)
		if err != nil {
			l.t.Errorf("GET %s: %v", path, err)
			return
		}
		l.log.saw(id, version, st, "a pet's page")
		// A short pause between reading and saving, as a person takes:
		// the other editor's saves in between make conflicts.
		time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
		next := petState{fmt.Sprintf("e%d-%d", w, i), 1 + rand.Int64N(9), randomStatus()}
		form := url.Values{"name": {next.Name}, "categoryId": {strconv.FormatInt(next.CategoryID, 10)},
			"status": {string(next.Status)}, "version": {strconv.FormatInt(version, 10)}}
		r = c.Post(path, form)
		switch r.Status {
		case http.StatusSeeOther:
			l.log.ack(id, version+1, next, "a console edit")
			l.edits.Add(1)
		case http.StatusConflict:
			doc, err := parseDoc(r)
			if err != nil {
				l.t.Error(err)
				return
			}
			won, theirs, err := petPageOf(doc)
			if err != nil || won <= version {
				l.t.Errorf("edit of pet %d over version %d: a conflict page showing version %d (%v)", id, version, won, err)
				return
			}
			l.log.saw(id, won, theirs, "an edit's conflict page")
			l.conflicts.Add(1)
		default:
			l.t.Errorf("edit of pet %d over version %d: %s, want 303 or 409", id, version, r)
			return
		}
	}
}

// bulkChangedCount parses "Changed N pets to ..." (or "No pet was changed.").
var bulkChangedCount = regexp.MustCompile(`^(?:Changed (\d+) pets? to \w+\.|No pet was changed\.)`)

// bulker selects some pets of the bulk pool on its page and gives them one
// status. The summary names each pet it skipped (already in the status,
// or changed since the page was read); the others were written at the
// version the page showed, plus one.
func (l *feedLoad) bulker(c *testkit.Console) {
	const back = "/admin/pets?q=bulkpool"
	for l.running() {
		r := c.Get(back)
		doc, err := parseDoc(r)
		if r.Status != http.StatusOK || err != nil {
			l.t.Errorf("GET %s: %s (%v)", back, r, err)
			return
		}
		type row struct {
			id, version int64
			st          petState
		}
		var rows []row
		doc.Find(`tr[data-testid="pet-row"]`).EachWithBreak(func(_ int, s *goquery.Selection) bool {
			id, version, st, err2 := rowOf(s)
			if err2 != nil {
				err = err2
				return false
			}
			l.log.saw(id, version, st, "the pets list")
			rows = append(rows, row{id, version, st})
			return true
		})
		if err != nil || len(rows) != len(l.bulkPool) {
			l.t.Errorf("GET %s: %d rows (%v), want the %d pets of the bulk pool", back, len(rows), err, len(l.bulkPool))
			return
		}
		rand.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		rows = rows[:2+rand.IntN(5)]
		st := randomStatus()
		form := url.Values{"back": {back}, "status": {string(st)}}
		for _, p := range rows {
			form.Add("pet", fmt.Sprintf("%d:%d", p.id, p.version))
		}
		r = hxPost(c, "/admin/pets/bulk-status", form)
		doc, err = parseDoc(r)
		if r.Status != http.StatusOK || err != nil {
			l.t.Errorf("bulk status change to %s: %s (%v)", st, r, err)
			return
		}
		summary := strings.TrimSpace(doc.Find(`[data-testid="bulk-summary"]`).Text())
		changed := 0
		for _, p := range rows {
			if strings.Contains(summary, ": "+p.st.Name+" (") || strings.Contains(summary, "; "+p.st.Name+" (") {
				l.bulkSkipped.Add(1)
				continue
			}
			changed++
			l.log.ack(p.id, p.version+1, petState{p.st.Name, p.st.CategoryID, st}, "a bulk status change")
		}
		l.bulkChanged.Add(int64(changed))
		n := -1
		if m := bulkChangedCount.FindStringSubmatch(summary); m != nil {
			n, _ = strconv.Atoi(m[1]) // "" for none
		}
		if n != changed {
			l.t.Errorf("bulk status change to %s of %d pets: summary %q, want %d changed and the others named", st, len(rows), summary, changed)
			return
		}
		// The list the answer shows again is read after the change.
		doc.Find(`tr[data-testid="pet-row"]`).Each(func(_ int, s *goquery.Selection) {
			if id, version, st, err := rowOf(s); err == nil {
				l.log.saw(id, version, st, "the list after a bulk change")
			}
		})
	}
}

// addedMessage is a console add's message.
var addedMessage = regexp.MustCompile(`Added (.+?) \(id (\d+)\)\.`)

// adder adds pets on the console and, between adds, changes the status of
// a pet of the bulk pool (which makes bulk changes meet stale versions).
func (l *feedLoad) adder(c *testkit.Console, w int) {
	for i := 0; l.running(); i++ {
		if i%2 == 1 {
			if !l.setStatus(c, l.bulkPool[rand.IntN(len(l.bulkPool))]) {
				return
			}
			continue
		}
		st := petState{fmt.Sprintf("a%d-%d", w, i), 1 + rand.Int64N(9), randomStatus()}
		r := hxPost(c, "/admin/pets", url.Values{"name": {st.Name}, "categoryId": {strconv.FormatInt(st.CategoryID, 10)}, "status": {string(st.Status)}})
		m := addedMessage.FindStringSubmatch(string(r.Body))
		if r.Status != http.StatusOK || m == nil || m[1] != st.Name {
			l.t.Errorf("console add of %v: %s, want 200 saying it was added", st, r)
			return
		}
		id, _ := strconv.ParseInt(m[2], 10, 64)
		l.log.ack(id, 1, st, "a console add")
		l.adds.Add(1)
	}
}

// TestEventsFollowerUnderLoad follows the feed (from its start, each page
// at the Link next of the one before, waiting up to 5 s) while eight
// writers change pets for 15 s through the built binary: API creates with
// and without an Idempotency-Key (some sent again, some twice at once),
// console status changes of one pet, console edits that conflict, console
// bulk status changes that meet stale versions, console adds. Then every
// pet's history in the feed must be exactly its versions, each the state
// its writer was answered (or a page showed) at that version, none
// repeated or missing, and no event of anything else.
func TestEventsFollowerUnderLoad(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabase(t, func(t *testing.T, databaseURL string) {
		began := time.Now()
		inst := testkit.ServeBinary(t, "serve", testkit.ServeVars(databaseURL))
		boot := testkit.BootstrapOf(t, inst.Stdout.String())
		client := func() *testkit.APIClient {
			c := testkit.NewAPIClient(inst.Base, boot.Key)
			c.HTTP.Timeout = siteTimeout
			return c
		}
		log := newChangeLog()
		follower := startFeedFollower(t, client(), "/v1/events?limit=50&wait=5", false)

		l := &feedLoad{t: t, log: log}
		l.setup(client())
		consoles := make([]*testkit.Console, 5)
		for i := range consoles {
			consoles[i] = staffConsole(t, inst.Base, boot)
			consoles[i].HTTP.Timeout = siteTimeout
		}
		l.until = time.Now().Add(15 * time.Second)
		var writers sync.WaitGroup
		writers.Go(func() { l.apiCreator(client(), 0) })
		writers.Go(func() { l.apiCreator(client(), 1) })
		writers.Go(func() { l.keyedCreator(client(), 2) })
		writers.Go(func() { l.hotStatus(consoles[0]) })
		writers.Go(func() { l.editor(consoles[1], 4) })
		writers.Go(func() { l.editor(consoles[2], 5) })
		writers.Go(func() { l.bulker(consoles[3]) })
		writers.Go(func() { l.adder(consoles[4], 7) })
		writers.Wait()
		if t.Failed() {
			return
		}

		stored := storedPets(t, testkit.OpenStore(t, databaseURL).SQLDB())
		follower.finish(t, totalVersions(stored), 20*time.Second, 1)
		events := follower.Events()
		rep := checkFeed(t, events, stored, log)
		pages, empty, _ := follower.Stats()
		t.Logf("%d pets, %d changes, %d events read in %d pages (%d empty); acknowledged: %d API creates, %d keyed (%d replays), %d status changes, %d edits (%d conflicts), %d bulk (%d skipped), %d console adds",
			len(stored), rep.changes, rep.events, pages, empty, l.apiCreates.Load(), l.keyedCreates.Load(), l.replays.Load(),
			l.statusChanges.Load(), l.edits.Load(), l.conflicts.Load(), l.bulkChanged.Load(), l.bulkSkipped.Load(), l.adds.Load())
		if l.conflicts.Load() == 0 || l.bulkSkipped.Load() == 0 || l.replays.Load() == 0 {
			t.Errorf("the load made %d edit conflicts, %d skipped bulk changes and %d replays: it must make each at least once to test them",
				l.conflicts.Load(), l.bulkSkipped.Load(), l.replays.Load())
		}
		lags := follower.lags(events, log)
		testkit.Figure(t, "events_follower_changes_acknowledged", float64(log.acked()), "changes")
		testkit.Figure(t, "events_follower_events_read", float64(rep.events), "events")
		testkit.Figure(t, "events_follower_pages", float64(pages), "pages")
		testkit.FigureDuration(t, "events_follower_lag_p50", percentile(lags, 0.5))
		testkit.FigureDuration(t, "events_follower_lag_p99", percentile(lags, 0.99))
		testkit.FigureDuration(t, "events_follower_test", time.Since(began))
	})
}
