package models

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"petstore/models/internal/background"
)

// The change feed: every change of a pet (pets_change.go) writes one
// event in its own transaction, holding the pet as it stood after the
// change. A partner reads the feed in order after a cursor, the id of the
// last event it has seen.
//
// An event's id is given by event_clock's 'seq' row, advanced by the
// writing transaction as its last statement but the events' own INSERT
// (takeEventIDs). On MySQL that UPDATE holds the row's lock until the
// transaction commits, so the next writer gets its ids only after this
// one's are visible: ids are handed out in commit order, and a reader that
// read up to id N has seen every event that will ever get an id up to N.
// On SQLite one writer at a time gives the same. On Galera two nodes that
// advance the clock at once conflict at certification and one retries, so
// the cluster's order of commits is the ids' order too. docs/architecture.md
// says why this holds in full.

// EventType is what an event of the change feed tells.
type EventType string

// The event types.
const (
	EventPetCreated EventType = "pet.created"
	EventPetUpdated EventType = "pet.updated"
	// EventPetArchived carries the pet's last state; EventPetRestored the
	// pet as restored, with its id.
	EventPetArchived EventType = "pet.archived"
	EventPetRestored EventType = "pet.restored"
)

// Event is one change in the change feed.
type Event struct {
	// ID is the event's place in the feed: a reader passes the last it has
	// seen as its cursor.
	ID         int64
	Type       EventType
	OccurredAt time.Time
	// Changed names the Pet fields a pet.updated changed, as the API names
	// them (name, categoryId, status).
	Changed []string
	// Pet is the pet as it stood after the change (its ID, Name, CategoryID
	// and Status).
	Pet Pet
}

// The feed's page sizes and longest wait.
const (
	DefaultEventsLimit = 100
	MaxEventsLimit     = 1000
	MaxEventsWait      = 30 * time.Second
)

// FeedStart is the cursor before the oldest event kept.
const FeedStart int64 = -1

// EventPage is a page of the feed.
type EventPage struct {
	Events []Event
	// Next is the cursor after the page: its last event's id, or the
	// request's cursor when the page is empty (the oldest kept position
	// when that was FeedStart).
	Next int64
}

// CursorExpiredMessage says a cursor has lost events to the retention.
const CursorExpiredMessage = "The events after this cursor are no longer kept; read the pets again with GET /v1/pets and follow the feed from a new cursor."

// eventColumns are an event row as scanEvents reads it.
const eventColumns = "id, type, occurred_at, changed, pet_id, name, category_id, status"

// insertEventSQL is one event's INSERT; its id and pet id are bound.
const insertEventSQL = "INSERT INTO events (" + eventColumns + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?)"

// takeEventIDs advances the feed's clock by n within the transaction q
// runs in and returns the last id given; the n ids end there. It must be
// the transaction's last write but its events' INSERT: on MySQL the clock's
// row stays locked until the commit, and every writer waits for it.
func (s *Store) takeEventIDs(ctx context.Context, q querier, n int) (int64, error) {
	var last int64
	if s.driver == DriverMySQL {
		res, err := q.ExecContext(ctx, advanceClockMySQL, n)
		if err == nil {
			last, err = res.LastInsertId()
		}
		if err != nil {
			return 0, fmt.Errorf("advance the change feed: %w", err)
		}
		return last, nil
	}
	if err := q.QueryRowContext(ctx, advanceClockSQLite, n).Scan(&last); err != nil {
		return 0, fmt.Errorf("advance the change feed: %w", err)
	}
	return last, nil
}

const (
	// advanceClockMySQL leaves the new value in LAST_INSERT_ID(), which the
	// result reports and the next statement of a batch reads.
	advanceClockMySQL  = "UPDATE event_clock SET value = LAST_INSERT_ID(value + ?) WHERE name = 'seq'"
	advanceClockSQLite = "UPDATE event_clock SET value = value + ? WHERE name = 'seq' RETURNING value"
)

// writeEvents writes events within the transaction q runs in, ids[i]
// being the pet id of the batch's change number i, and returns the last
// event id, or 0 when there were none. exec, when not nil, runs the
// INSERTs (a seed's prepared ones); q runs them otherwise. It must be the
// transaction's last write (takeEventIDs).
func (s *Store) writeEvents(ctx context.Context, q querier, exec execFunc, events []eventRow, ids []int64) (int64, error) {
	if len(events) == 0 {
		return 0, nil
	}
	if exec == nil {
		exec = func(query string, args []any) (sql.Result, error) { return q.ExecContext(ctx, query, args...) }
	}
	last, err := s.takeEventIDs(ctx, q, len(events))
	if err != nil {
		return 0, err
	}
	first := last - int64(len(events)) + 1
	for len(events) > 0 {
		n := min(len(events), seedRows(s.driver))
		args := make([]any, 0, 8*n)
		for i, e := range events[:n] {
			args = append(args, first+int64(i), string(e.typ), e.after.UpdatedAt, e.changed, ids[e.pet],
				e.after.Name, e.after.CategoryID, string(e.after.Status))
		}
		if _, err := exec(insertEventsSQL(n), args); err != nil {
			return 0, fmt.Errorf("write events: %w", err)
		}
		events, first = events[n:], first+int64(n)
	}
	return last, nil
}

// insertEventsSQL is a multi-row INSERT of n events.
func insertEventsSQL(n int) string {
	var b strings.Builder
	b.Grow(len(insertEventSQL) + 18*n)
	b.WriteString("INSERT INTO events (" + eventColumns + ") VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?)")
	}
	return b.String()
}

// ReadEvents reads up to limit events after the cursor after (FeedStart:
// from the oldest kept), oldest first. A cursor from before what the
// retention keeps is refused with CodeCursorExpired; a cursor beyond the
// newest event reads an empty page (a reader of one Galera node may hold a
// cursor from another that this one has not applied yet).
func (s *Store) ReadEvents(ctx context.Context, after int64, limit int) (EventPage, error) {
	page, _, err := s.readEvents(ctx, after, limit)
	return page, err
}

// readEvents is ReadEvents, also returning the clock's head as read after
// the page.
func (s *Store) readEvents(ctx context.Context, after int64, limit int) (EventPage, int64, error) {
	if limit < 1 || limit > MaxEventsLimit {
		limit = DefaultEventsLimit
	}
	from := max(after, 0)
	rows, err := s.readDB.QueryContext(ctx, "SELECT "+eventColumns+" FROM events WHERE id > ? ORDER BY id LIMIT ?", from, limit)
	if err != nil {
		return EventPage{}, 0, s.dbErr("read events", err)
	}
	events, err := scanEvents(rows)
	if err != nil {
		return EventPage{}, 0, s.dbErr("read events", err)
	}
	// The clock is read after the page: a purge that deleted events after
	// the cursor before or while the page was read shows here.
	head, purged, err := s.eventClock(ctx)
	if err != nil {
		return EventPage{}, 0, err
	}
	if after == FeedStart {
		after = purged
		// A purge that ran since may have deleted the first events read.
		for len(events) > 0 && events[0].ID <= purged {
			events = events[1:]
		}
	} else if after < purged {
		return EventPage{}, 0, &Error{Code: CodeCursorExpired, Message: CursorExpiredMessage}
	}
	next := after
	if len(events) > 0 {
		next = events[len(events)-1].ID
	}
	return EventPage{Events: events, Next: next}, head, nil
}

func scanEvents(rows *sql.Rows) ([]Event, error) {
	defer rows.Close()
	var events []Event
	for rows.Next() {
		var (
			e       Event
			typ     string
			changed string
			status  string
		)
		if err := rows.Scan(&e.ID, &typ, &e.OccurredAt, &changed, &e.Pet.ID, &e.Pet.Name, &e.Pet.CategoryID, &status); err != nil {
			return nil, err
		}
		e.Type, e.Pet.Status, e.OccurredAt = EventType(typ), Status(status), e.OccurredAt.UTC()
		if changed != "" {
			e.Changed = strings.Split(changed, ",")
		}
		events = append(events, e)
	}
	return events, rows.Err()
}

// EventHead returns the id of the newest event (0 when there is none).
func (s *Store) EventHead(ctx context.Context) (int64, error) {
	head, _, err := s.eventClock(ctx)
	return head, err
}

// eventClock reads the feed's clock: the last id given and the last purged.
func (s *Store) eventClock(ctx context.Context) (head, purged int64, err error) {
	rows, err := s.readDB.QueryContext(ctx, "SELECT name, value FROM event_clock")
	if err != nil {
		return 0, 0, s.dbErr("read the change feed's clock", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			name  string
			value int64
		)
		if err := rows.Scan(&name, &value); err != nil {
			return 0, 0, s.dbErr("read the change feed's clock", err)
		}
		switch name {
		case "seq":
			head = value
		case "purged":
			purged = value
		}
	}
	if err := rows.Err(); err != nil {
		return 0, 0, s.dbErr("read the change feed's clock", err)
	}
	return head, purged, nil
}

// WaitEvents reads a page of events after the cursor after as ReadEvents
// does; when there is none it waits for one to commit, on this instance or
// any other, until wait passes, ctx ends or the feed stops (StopEventWaits),
// and then answers with what there is.
func (s *Store) WaitEvents(ctx context.Context, after int64, limit int, wait time.Duration) (EventPage, error) {
	deadline := time.Now().Add(wait)
	for {
		page, head, err := s.readEvents(ctx, after, limit)
		if err != nil || len(page.Events) > 0 || wait <= 0 {
			return page, err
		}
		after = page.Next // FeedStart becomes the oldest kept position
		if head > after {
			// Events beyond the page committed between its read and the
			// clock's: read again at once.
			continue
		}
		if !s.feed.wait(ctx, head, deadline) {
			return page, nil
		}
	}
}

// StopEventWaits ends every wait for events at once, and makes later ones
// answer without waiting: the server calls it as it shuts down, so that
// the waits do not hold it up.
func (s *Store) StopEventWaits() { s.feed.stop() }

// feedWatchEvery is how often an instance with readers waiting reads the
// clock, to hear of events other instances committed.
const feedWatchEvery = 200 * time.Millisecond

// feedState tells waiting readers when the feed moves: at once when this
// instance commits events, within feedWatchEvery when another does.
type feedState struct {
	mu       sync.Mutex
	head     int64         // the last event id known to be committed
	moved    chan struct{} // closed when head moves or the feed stops
	waiters  int
	watching bool
	stopped  bool
	watch    background.Runner // reads the clock while readers wait
	read     func(ctx context.Context) (int64, error)
}

// advance notes that events up to id are committed.
func (f *feedState) advance(id int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id > f.head {
		f.head = id
		if f.moved != nil {
			close(f.moved)
			f.moved = nil
		}
	}
}

// wait waits until an event after seen is committed (true), or until
// deadline passes, ctx ends or the feed stops (false).
func (f *feedState) wait(ctx context.Context, seen int64, deadline time.Time) bool {
	f.mu.Lock()
	moved, done, moreThanSeen := f.look(seen)
	if done {
		f.mu.Unlock()
		return moreThanSeen
	}
	f.waiters++
	if !f.watching && f.read != nil {
		f.watching = f.watch.Start(f.watchClock)
	}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.waiters--
		f.mu.Unlock()
	}()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	for {
		select {
		case <-moved:
			f.mu.Lock()
			moved, done, moreThanSeen = f.look(seen)
			f.mu.Unlock()
			if done {
				return moreThanSeen
			}
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// look says, with f.mu held, whether a wait for an event after seen is
// over (done), and then whether one came (moreThanSeen); if not, the
// channel closed when the feed next moves.
func (f *feedState) look(seen int64) (moved chan struct{}, done, moreThanSeen bool) {
	if f.stopped {
		return nil, true, false
	}
	if f.head > seen {
		return nil, true, true
	}
	if f.moved == nil {
		f.moved = make(chan struct{})
	}
	return f.moved, false, false
}

// watchClock reads the clock every feedWatchEvery while readers wait.
func (f *feedState) watchClock(ctx context.Context) {
	t := time.NewTicker(feedWatchEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		f.mu.Lock()
		if f.waiters == 0 || f.stopped {
			f.watching = false
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		head, err := f.read(rctx)
		cancel()
		if err == nil {
			f.advance(head)
		}
	}
}

// stop ends every wait, now and later, and the clock's watch.
func (f *feedState) stop() {
	f.mu.Lock()
	f.stopped = true
	if f.moved != nil {
		close(f.moved)
		f.moved = nil
	}
	f.mu.Unlock()
	f.watch.Close()
}

// eventPurgeBatch bounds the events one purge transaction deletes.
const eventPurgeBatch = 1000

// PurgeEvents deletes the events that occurred before cutoff, oldest
// first, at most eventPurgeBatch per transaction, and returns how many it
// deleted. It stops at the first event kept: ids are in commit order, not
// quite in time order, and the feed loses only a prefix. Instances that
// purge at once take turns on the clock's 'purged' row.
func (s *Store) PurgeEvents(ctx context.Context, cutoff time.Time) (int64, error) {
	var total int64
	for {
		var n int64
		err := retry(ctx, func() (err error) {
			n, err = s.purgeEventsOnce(ctx, cutoff)
			return err
		})
		if err != nil {
			return total, s.dbErr("purge events", err)
		}
		total += n
		if n < eventPurgeBatch {
			return total, nil
		}
	}
}

func (s *Store) purgeEventsOnce(ctx context.Context, cutoff time.Time) (int64, error) {
	tx, err := s.sqlDB.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	lock := "SELECT value FROM event_clock WHERE name = 'purged'"
	if s.driver == DriverMySQL {
		lock += " FOR UPDATE"
	}
	var purged int64
	if err := tx.QueryRowContext(ctx, lock).Scan(&purged); err != nil {
		return 0, err
	}
	rows, err := tx.QueryContext(ctx, "SELECT id, occurred_at FROM events WHERE id > ? ORDER BY id LIMIT ?", purged, eventPurgeBatch)
	if err != nil {
		return 0, err
	}
	bound, n := purged, int64(0)
	for rows.Next() {
		var (
			id int64
			at time.Time
		)
		if err := rows.Scan(&id, &at); err != nil {
			rows.Close()
			return 0, err
		}
		if !at.Before(cutoff) {
			break
		}
		bound, n = id, n+1
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM events WHERE id > ? AND id <= ?", purged, bound); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE event_clock SET value = ? WHERE name = 'purged'", bound); err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

// eventPurgeEvery is how often a serving instance purges old events.
const eventPurgeEvery = time.Minute

// PurgeEventsEvery purges the events older than retention, and the
// webhook deliveries done by then, now and every eventPurgeEvery until the
// Store closes. The server starts it; commands
// that open the Store for a moment do not.
func (s *Store) PurgeEventsEvery(retention time.Duration) {
	s.feed.watch.Start(func(ctx context.Context) {
		t := time.NewTicker(eventPurgeEvery)
		defer t.Stop()
		for {
			cutoff := s.now().Add(-retention)
			n, err := s.PurgeEvents(ctx, cutoff)
			switch {
			case err != nil && ctx.Err() == nil:
				s.log.Warn("could not purge old events", "error", err)
			case n > 0:
				s.log.Info("purged old events", "count", n)
			}
			// The deliveries' log is kept as long as the events.
			if n, err := s.PurgeWebhookDeliveries(ctx, cutoff); err != nil && ctx.Err() == nil {
				s.log.Warn("could not purge old webhook deliveries", "error", err)
			} else if n > 0 {
				s.log.Info("purged old webhook deliveries", "count", n)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}

// FormatEventID is an event id as the API shows it, and as its cursors
// are written.
func FormatEventID(id int64) string { return strconv.FormatInt(id, 10) }

// ParseEventCursor reads a cursor (an event id as FormatEventID writes
// it); false for anything else.
func ParseEventCursor(s string) (int64, bool) {
	if s == "" || len(s) > 19 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil
}

// EventQuery is a read of the change feed as a partner asks for it.
type EventQuery struct {
	After int64 // FeedStart when not given
	Limit int
	Wait  time.Duration
	// WaitGiven says the request named a wait, which the next page's link
	// then repeats.
	WaitGiven bool
}

// FieldWait names the change feed's long-poll parameter.
const FieldWait = "wait"

var (
	eventsLimitMsg  = "Limit must be a whole number from 1 to " + strconv.Itoa(MaxEventsLimit) + "."
	eventsWaitMsg   = "Wait must be a whole number of seconds from 0 to " + strconv.Itoa(int(MaxEventsWait/time.Second)) + "."
	eventsCursorMsg = "After must be a cursor taken from the Link header of a page of events."
)

// ParseEventQuery reads the change feed's query parameters (after, limit,
// wait); anything else, or a bad value, is refused with a message per
// field.
func ParseEventQuery(params url.Values) (EventQuery, error) {
	v := validation{}
	q := EventQuery{After: FeedStart, Limit: DefaultEventsLimit}
	for _, name := range slices.Sorted(maps.Keys(params)) {
		vals := params[name]
		msg := ""
		switch name {
		case FieldAfter:
			msg = eventsCursorMsg
		case FieldLimit:
			msg = eventsLimitMsg
		case FieldWait:
			msg = eventsWaitMsg
		default:
			v.add(name, "Unknown parameter "+strconv.Quote(name)+": the events take after, limit and wait.")
			continue
		}
		if len(vals) != 1 {
			v.add(name, msg)
			continue
		}
		s := vals[0]
		switch name {
		case FieldAfter:
			if id, ok := ParseEventCursor(s); ok {
				q.After = id
			} else {
				v.add(name, msg)
			}
		case FieldLimit:
			if n, ok := wholeNumber(s, MaxEventsLimit); ok && n >= 1 {
				q.Limit = n
			} else {
				v.add(name, msg)
			}
		case FieldWait:
			if n, ok := wholeNumber(s, int(MaxEventsWait/time.Second)); ok {
				q.Wait, q.WaitGiven = time.Duration(n)*time.Second, true
			} else {
				v.add(name, msg)
			}
		}
	}
	if err := v.err(); err != nil {
		return EventQuery{}, err
	}
	return q, nil
}

// wholeNumber reads s as digits only, at most max.
func wholeNumber(s string, max int) (int, bool) {
	if s == "" || len(s) > 10 {
		return 0, false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n <= max
}
