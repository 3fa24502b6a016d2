package models

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"petstore/models/internal/groupcommit"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// CreatePet stores a validated pet and records who added it. Creates that
// arrive together are written together (group commit, createQueue): one
// transaction on the primary (SQLite's single writer) holds each pet and
// its audit event, so a pet is never stored without its record, and the
// answer comes only after the commit.
//
// When ctx ends, the error says whether the pet was written: a create not
// yet taken into a batch leaves the queue and is not written (CodeCanceled
// when ctx was cancelled, as when an HTTP client hangs up); one already in
// a batch is seen through, so a nil error means committed, even if ctx
// ended meanwhile.
func (s *Store) CreatePet(ctx context.Context, np NewPet, actor string) (Pet, error) {
	return s.createPet(ctx, np, actor, nil)
}

// createPet is CreatePet, and CreatePetOnce when once is not nil.
func (s *Store) createPet(ctx context.Context, np NewPet, actor string, once *onceCreate) (Pet, error) {
	h, err := s.petStatements(ctx)
	if err != nil {
		return Pet{}, err
	}
	r := &createRequest{change: newPetChange(ChangeCreate, np, s.now(), actor), once: once}
	if err := s.pets.queue.Submit(ctx, r, func(batch []*createRequest) []error { return s.writeCreates(h, batch) }); err != nil {
		return Pet{}, s.dbErr("create pet", err)
	}
	return r.change.After, nil
}

// maxCreateBatch bounds how many creates share one transaction.
const maxCreateBatch = 64

// defaultCreateTimeout bounds a batch's transaction: it runs for several
// clients, so it does not end when the one that leads it goes away. Past
// it, the batch's creates fail as a deadline of the service's own.
const defaultCreateTimeout = 15 * time.Second

// createRequest is one pet waiting to be written.
type createRequest struct {
	change PetChange   // its After.ID is set once written
	once   *onceCreate // its idempotency key's claim, if it has one (idempotency.go)
}

// createQueue is the creates' group commit: a batch of creates that
// arrive together is written in one transaction. SQLite has one writer,
// so one batch is written at a time; MySQL commits several transactions
// at once, so two (maxCreateLeaders).
type createQueue = groupcommit.Queue[*createRequest]

// writeCreates writes a batch in one transaction, retried as a whole on a
// deadlock or lock wait. If a statement fails for another reason while the
// database still answers, each create is tried alone, so that one bad
// create fails only itself.
func (s *Store) writeCreates(h *petStatements, batch []*createRequest) []error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(s.pets.createTimeout.Load()))
	defer cancel()
	insert := func(batch []*createRequest) (err error) {
		var last int64
		if s.createDB != nil {
			last, err = s.insertCreatesMySQL(ctx, batch)
		} else {
			last, err = s.insertCreates(ctx, h, batch)
		}
		if err == nil {
			// About one row of status counts per batch: most batches hold
			// one status.
			s.committed(updatesWritten{countRows: 1, lastEvent: last})
		}
		return err
	}
	err := retry(ctx, func() error { return insert(batch) })
	errs := make([]error, len(batch))
	for i, r := range batch {
		if err != nil && len(batch) > 1 && ctx.Err() == nil && !isConnErr(err) {
			errs[i] = retry(ctx, func() error { return insert([]*createRequest{r}) })
			continue
		}
		errs[i] = err
	}
	return errs
}

// insertCreates writes the batch on SQLite's writer in one transaction:
// each pet's INSERT (its id comes back in the result), then the rows the
// batch's changes imply, one prepared statement a row so that every
// statement stays compiled, then the idempotency claims; it sets each
// pet's ID and returns the last change feed event's id.
func (s *Store) insertCreates(ctx context.Context, h *petStatements, batch []*createRequest) (int64, error) {
	tx, err := s.sqlDB.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	// The statements run without ctx's deadline: with one, the driver
	// starts a watcher goroutine and a progress handler for each of them,
	// and there is nothing for it to interrupt: the writer already holds
	// the lock, and SQLite runs these few rows in microseconds. The begin
	// (a wait for the lock) and the commit keep it.
	ctx = context.WithoutCancel(ctx)
	insertPet := tx.StmtContext(ctx, h.insertPet)
	var rows impliedRows
	ids := make([]int64, len(batch))
	for i, r := range batch {
		p := &r.change.After
		if err := rows.add(i, r.change); err != nil {
			return 0, err
		}
		res, err := insertPet.ExecContext(ctx, p.Name, p.CategoryID, string(p.Status), p.CreatedAt, p.UpdatedAt)
		if err != nil {
			return 0, err
		}
		if p.ID, err = res.LastInsertId(); err != nil {
			return 0, err
		}
		ids[i] = p.ID
	}
	for _, r := range batch {
		if r.once != nil {
			if err := s.finishOnceSQLite(ctx, tx, r); err != nil {
				return 0, err
			}
		}
	}
	last, err := writeImpliedPrepared(ctx, tx, h, &rows, ids)
	if err != nil {
		return 0, err
	}
	return last, tx.Commit()
}

// writeImpliedPrepared writes rows within tx through the prepared
// statements of SQLite's writer, ids[i] being the id of the batch's change
// number i: the sink of SQLite's creates. A new pet has no words to delete.
// It returns the last change feed event's id.
func writeImpliedPrepared(ctx context.Context, tx *sql.Tx, h *petStatements, rows *impliedRows, ids []int64) (int64, error) {
	if len(rows.unwords) > 0 {
		return 0, fmt.Errorf("write created pets: %d words to delete", len(rows.unwords))
	}
	insertWord := tx.StmtContext(ctx, h.insertWord)
	for _, w := range rows.words {
		if _, err := insertWord.ExecContext(ctx, []byte(w.key), ids[w.pet]); err != nil {
			return 0, fmt.Errorf("index pet name: %w", err)
		}
	}
	insertAudit := tx.StmtContext(ctx, h.insertAudit)
	for _, a := range rows.audit {
		ev := &a.event
		if _, err := insertAudit.ExecContext(ctx, ev.At, ev.Actor, string(ev.ActorKind), ev.Action, ev.TargetType, ids[a.pet], ev.Detail); err != nil {
			return 0, err
		}
	}
	insertCount := tx.StmtContext(ctx, h.insertCount)
	for i, n := range rows.counts {
		if n != 0 {
			if _, err := insertCount.ExecContext(ctx, statusArgs[i], n); err != nil {
				return 0, fmt.Errorf("count pets by status: %w", err)
			}
		}
	}
	if len(rows.events) == 0 {
		return 0, nil
	}
	var last int64
	if err := tx.StmtContext(ctx, h.advanceClock).QueryRowContext(ctx, len(rows.events)).Scan(&last); err != nil {
		return 0, fmt.Errorf("advance the change feed: %w", err)
	}
	insertEvent := tx.StmtContext(ctx, h.insertEvent)
	first := last - int64(len(rows.events)) + 1
	for i, e := range rows.events {
		if _, err := insertEvent.ExecContext(ctx, first+int64(i), string(e.typ), e.after.UpdatedAt, e.changed, ids[e.pet],
			e.after.Name, e.after.CategoryID, string(e.after.Status)); err != nil {
			return 0, fmt.Errorf("write events: %w", err)
		}
	}
	return last, nil
}

// MySQL's creates are written in one round trip per batch: the
// transaction is sent as one multi-statement text on the creates' own pool
// (Store.createDB), the driver quoting the values. Round trips, not
// statements, are the cost; then statements: the batch's pets (createsSQL),
// search words, audit events, status counts and change feed events are
// one multi-row INSERT each.
const createPetSQL = "INSERT INTO pets (" + petInsertColumns + ") VALUES (?, ?, ?, ?, ?)"

// insertCreatesMySQL writes the batch in one transaction sent at once
// (createsSQL), sets each pet's ID and returns the last change feed
// event's id. If it fails part way, the transaction is rolled back before
// the connection goes back to the pool (or the connection is dropped,
// which rolls back).
func (s *Store) insertCreatesMySQL(ctx context.Context, batch []*createRequest) (int64, error) {
	conn, err := s.createDB.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	c, err := createsSQL(batch, s.server)
	if err != nil {
		return 0, err
	}
	var last int64
	err = conn.Raw(func(dc any) error {
		b := c.sql
		res, err := dc.(driver.ExecerContext).ExecContext(ctx, b.text(), b.args)
		if err != nil {
			return err
		}
		ids := res.(mysql.Result).AllLastInsertIds()
		if len(ids) != b.statements() {
			return fmt.Errorf("create pets: %d statement results for %d statements", len(ids), b.statements())
		}
		for i, r := range batch {
			if r.change.After.ID = ids[c.petStmt[i]] + c.petStep[i]; r.change.After.ID < 1 {
				return fmt.Errorf("create pets: no id for pet %d of %d", i+1, len(batch))
			}
		}
		if len(c.claims) == 0 {
			last = ids[c.clock]
			return commitBatch(ctx, dc)
		}
		last, err = commitOnceMySQL(ctx, dc, res, batch, c)
		return err
	})
	if err != nil {
		if _, rbErr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rbErr != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}
	return last, err
}

// createsBatch is a MySQL create batch's text and the numbers of the
// statements whose results are read.
type createsBatch struct {
	sql     *batchSQL
	petStmt []int   // the INSERT of each pet of the batch
	petStep []int64 // each pet's id less its INSERT's LAST_INSERT_ID()
	claims  []int   // the check of each idempotency claim (endCreatesSQL)
	clock   int     // the change feed clock's advance, when sent in sql
	events  []eventRow
	petID   []string // the SQL naming each pet's id
}

// commitBatch sends a batch's COMMIT, on its own once the text's results have
// been read, never in the text: a server runs a text's statements to its
// end even when the client has gone, so a batch abandoned at its deadline
// (defaultCreateTimeout) while waiting for a lock would still commit what its
// creates were told had failed. Without the COMMIT, the server rolls the
// transaction back when it finds the connection closed. On Galera, a
// certification failure at a COMMIT sent at the end of a multi-statement
// text can also be reported as success.
func commitBatch(ctx context.Context, dc any) error {
	_, err := dc.(driver.ExecerContext).ExecContext(ctx, "COMMIT", nil)
	return err
}

// createsSQL is a batch's transaction as one text: START TRANSACTION, the
// pets' INSERT, the rows the batch's changes imply (writeImpliedSQL), then
// the change feed's events, or the idempotency claims' checks, after which
// commitOnceMySQL writes the events (endCreatesSQL); commitBatch commits.
// The pets' ids are kept in session variables, since the clock's advance
// sets LAST_INSERT_ID() too: where the server gives a
// multi-row INSERT consecutive ids (mysqlServer), all pets are one INSERT
// and pet i's id is its first id plus i; elsewhere each pet is an INSERT
// of its own followed by the keeping of its id.
func createsSQL(batch []*createRequest, server mysqlServer) (*createsBatch, error) {
	c := &createsBatch{sql: newBatchSQL(len(batch)*(len(createPetSQL)+300) + 512), petStmt: make([]int, len(batch)),
		petStep: make([]int64, len(batch)), petID: make([]string, len(batch))}
	b := c.sql
	b.statement("START TRANSACTION")
	var rows impliedRows
	for i, r := range batch {
		if err := rows.add(i, r.change); err != nil {
			return nil, err
		}
	}
	if server.consecutiveIDs {
		b.write(createPetSQL)
		for i, r := range batch {
			p := &r.change.After
			if i > 0 {
				b.write(",(?, ?, ?, ?, ?)")
			}
			b.arg(p.Name, p.CategoryID, string(p.Status), p.CreatedAt, p.UpdatedAt)
			c.petStep[i] = int64(i)
			c.petID[i] = "(@petstore_pet + " + strconv.Itoa(i) + ")"
		}
		stmt := b.end()
		for i := range batch {
			c.petStmt[i] = stmt
		}
		b.statement("SET @petstore_pet = LAST_INSERT_ID()")
	} else {
		for i, r := range batch {
			p := &r.change.After
			c.petStmt[i] = b.statement(createPetSQL, p.Name, p.CategoryID, string(p.Status), p.CreatedAt, p.UpdatedAt)
			c.petID[i] = "@petstore_pet" + strconv.Itoa(i)
			b.statement("SET " + c.petID[i] + " = LAST_INSERT_ID()")
		}
	}
	writeImpliedSQL(b, &rows, c.petID)
	c.events = rows.events
	endCreatesSQL(c, batch)
	return c, nil
}

// writeImpliedSQL adds rows to b, petID[i] being the SQL that names the id
// of the batch's change number i: the sink of MySQL's creates. Each kind
// of row is one multi-row statement. The events come last, just before the
// commit, and are written by writeEventsSQL.
func writeImpliedSQL(b *batchSQL, rows *impliedRows, petID []string) {
	for _, w := range rows.unwords {
		b.statement("DELETE FROM pet_name_words WHERE word = ? AND pet_id = "+petID[w.pet], []byte(w.key))
	}
	if len(rows.words) > 0 {
		b.write("INSERT INTO pet_name_words (word, pet_id) VALUES ")
		for i, w := range rows.words {
			if i > 0 {
				b.write(",")
			}
			b.write("(?, " + petID[w.pet] + ")")
			b.arg([]byte(w.key))
		}
		b.end()
	}
	if len(rows.audit) > 0 {
		b.write("INSERT INTO audit_events (at, actor, actor_kind, action, target_type, target_id, detail) VALUES ")
		for i, a := range rows.audit {
			if i > 0 {
				b.write(",")
			}
			ev := &a.event
			b.write("(?, ?, ?, ?, ?, " + petID[a.pet] + ", ?)")
			b.arg(ev.At, ev.Actor, string(ev.ActorKind), ev.Action, ev.TargetType, ev.Detail)
		}
		b.end()
	}
	if rows.counts.rows() > 0 {
		b.write("")
		rows.counts.appendSQL(&b.q, b.arg)
		b.end()
	}
}

// writeEventsSQL adds to b the advance of the change feed's clock and the
// INSERT of events, petID[i] naming the pet id of change number i, and
// returns the number of the clock's statement, whose result's insert id is
// the last event id. The clock's row stays locked until the COMMIT that
// follows (events.go).
func writeEventsSQL(b *batchSQL, events []eventRow, petID []string) int {
	clock := b.statement(advanceClockMySQL, int64(len(events)))
	b.write("INSERT INTO events (" + eventColumns + ") VALUES ")
	for i, e := range events {
		if i > 0 {
			b.write(",")
		}
		b.write("(LAST_INSERT_ID() - " + strconv.Itoa(len(events)-1-i) + ", ?, ?, ?, " + petID[e.pet] + ", ?, ?, ?)")
		b.arg(string(e.typ), e.after.UpdatedAt, e.changed, e.after.Name, e.after.CategoryID, string(e.after.Status))
	}
	b.end()
	return clock
}

// batchSQL is a multi-statement text and its arguments, numbering its own
// statements from 0: every part of a batch adds its statements through it
// and keeps the numbers of those whose results it reads.
type batchSQL struct {
	q    strings.Builder
	args []driver.NamedValue
	n    int  // statements ended
	open bool // a statement is under way
}

func newBatchSQL(size int) *batchSQL {
	b := &batchSQL{args: make([]driver.NamedValue, 0, 16)}
	b.q.Grow(size)
	return b
}

// write adds text to the statement under way, starting one if none is.
func (b *batchSQL) write(text string) {
	if !b.open {
		if b.n > 0 {
			b.q.WriteString("; ")
		}
		b.open = true
	}
	b.q.WriteString(text)
}

// arg adds the values of the statement under way's next placeholders.
func (b *batchSQL) arg(vs ...any) {
	for _, v := range vs {
		b.args = append(b.args, driver.NamedValue{Ordinal: len(b.args) + 1, Value: v})
	}
}

// end ends the statement under way and returns its number.
func (b *batchSQL) end() int {
	b.open = false
	b.n++
	return b.n - 1
}

// statement adds a whole statement and returns its number.
func (b *batchSQL) statement(text string, args ...any) int {
	b.write(text)
	b.arg(args...)
	return b.end()
}

// text is the whole text, its statements separated by semicolons.
func (b *batchSQL) text() string { return b.q.String() }

// statements is how many statements the text holds.
func (b *batchSQL) statements() int { return b.n }

// maxCreateLeaders is how many create batches may be written at once. On
// MySQL two (one written while the next gathers) served more creates per
// second than four, which made smaller batches, each with its round trip
// and commit.
func maxCreateLeaders(driver string) int {
	if driver == DriverSQLite {
		return 1 // one writer
	}
	return 2
}
