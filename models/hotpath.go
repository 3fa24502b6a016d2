package models

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// The partner API's three pet operations run on every partner request, so
// they step below GORM's builder: each is one statement prepared once per
// pool on the *sql.DB that GORM holds (database/sql then keeps it prepared
// on each connection it runs on), with an explicit column list, scanned
// without reflection. They answer exactly what ListPets, GetPet and
// CreatePet answer through GORM. The set is fixed (three reads per pool,
// and SQLite's writer four inserts), so the server's count of prepared
// statements stays bounded.

// petReads are the prepared reads of the pets table on one pool.
type petReads struct {
	list       *sql.Stmt // a page in id order
	listStatus *sql.Stmt // a page of one status in id order
	get        *sql.Stmt // one pet, all columns
}

// hotStatements are the prepared statements of the hot path, made on first
// use (and on the next use again if that failed: a database that is down
// when the first request comes must not leave the API failing until a
// restart).
type hotStatements struct {
	mu    sync.Mutex
	ready atomic.Bool
	// primary reads from the primary (SQLite's readers, or MySQL's pool);
	// replicas from each read replica (DATABASE_REPLICA_URLS).
	primary  petReads
	replicas []petReads
	// insertPet, insertAudit and insertWord write a created pet, its audit
	// event and its search words on SQLite's writer, and insertCount a
	// batch's count of pets of one status (statuscounts.go); MySQL has none
	// of them (its creates go as one multi-statement text,
	// insertCreatesMySQL).
	insertPet   *sql.Stmt
	insertAudit *sql.Stmt
	insertWord  *sql.Stmt // a search word of a created pet (SQLite's creates)
	insertCount *sql.Stmt
}

// hot returns the prepared statements, preparing them on first use; a
// failed preparation is undone, so the next use tries again.
func (s *Store) hot(ctx context.Context) (*hotStatements, error) {
	h := &s.stmts
	if h.ready.Load() {
		return h, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.ready.Load() {
		if err := s.prepareHot(ctx); err != nil {
			s.closeHot()
			return nil, s.dbErr("prepare statements", err)
		}
		h.ready.Store(true)
	}
	return h, nil
}

func (s *Store) prepareHot(ctx context.Context) (err error) {
	h := &s.stmts
	// Preparing must not depend on the request that happens to come first.
	ctx = context.WithoutCancel(ctx)
	prep := func(db *sql.DB, query string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		st, err = db.PrepareContext(ctx, query)
		return st
	}
	const cols = "SELECT id, name, category_id, status FROM "
	byStatus := "pets"
	if s.driver == DriverMySQL {
		byStatus = petsByStatus // see ListPets
	}
	reads := func(db *sql.DB) petReads {
		return petReads{
			list:       prep(db, cols+"pets WHERE id > ? ORDER BY id LIMIT ?"),
			listStatus: prep(db, cols+byStatus+" WHERE status = ? AND id > ? ORDER BY id LIMIT ?"),
			get:        prep(db, "SELECT id, name, category_id, status, created_at, updated_at FROM pets WHERE id = ?"),
		}
	}
	h.primary = reads(s.readDB)
	for _, r := range s.replicas {
		h.replicas = append(h.replicas, reads(r))
	}
	if s.createDB == nil { // SQLite's creates (insertCreates); MySQL's send text (insertCreatesMySQL)
		h.insertPet = prep(s.sqlDB, "INSERT INTO pets (name, category_id, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?)")
		h.insertAudit = prep(s.sqlDB, "INSERT INTO audit_events (at, actor, actor_kind, action, target_type, target_id, detail) VALUES (?, ?, ?, ?, ?, ?, ?)")
		h.insertWord = prep(s.sqlDB, "INSERT INTO pet_name_words (word, pet_id) VALUES (?, ?)")
		h.insertCount = prep(s.sqlDB, insertDeltasSQL+"(?, ?)")
	}
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	return nil
}

// closeHot closes the prepared statements and forgets them.
func (s *Store) closeHot() {
	h := &s.stmts
	defer func() {
		h.ready.Store(false)
		h.primary, h.replicas = petReads{}, nil
		h.insertPet, h.insertAudit, h.insertWord, h.insertCount = nil, nil, nil, nil
	}()
	for _, st := range []*sql.Stmt{h.primary.list, h.primary.listStatus, h.primary.get, h.insertPet, h.insertAudit, h.insertWord, h.insertCount} {
		if st != nil {
			st.Close()
		}
	}
	for _, r := range h.replicas {
		for _, st := range []*sql.Stmt{r.list, r.listStatus, r.get} {
			if st != nil {
				st.Close()
			}
		}
	}
}

// PetRow is a pet of the partner API's list as EachPetAPI reads it: the
// four fields the API returns, the name as the driver's bytes, valid only
// until the function it is given to returns.
type PetRow struct {
	ID, CategoryID int64
	Name           []byte
	Status         Status
}

// EachPetAPI reads a page of pets for the partner API: in id order after
// q.After, optionally of one status, and calls fn with each pet in order;
// more reports that pets follow the page. q.Before and q.NameContains are
// the console's and are not served here. With q.AllowStale a read replica
// answers when there are some. The rows go to fn as the driver reads them,
// names unconverted: a page of a hundred pets makes no string and no Pet
// for the API to encode and drop. On an error fn may have seen part of
// the page.
func (s *Store) EachPetAPI(ctx context.Context, q PetQuery, fn func(PetRow)) (more bool, err error) {
	if q.Before != 0 || q.NameContains != "" {
		return false, internal("pet page", errors.New("EachPetAPI serves forward pages without search"))
	}
	if q.Limit < 1 || q.Limit > MaxPageLimit {
		q.Limit = DefaultPageLimit
	}
	h, err := s.hot(ctx)
	if err != nil {
		return false, err
	}
	if ctx, err = quickRead(ctx); err != nil {
		return false, s.dbErr("list pets", err)
	}
	r := h.primary
	if q.AllowStale && len(h.replicas) > 0 {
		r = h.replicas[rand.IntN(len(h.replicas))]
	}
	var rows *sql.Rows
	if q.Status != "" {
		rows, err = r.listStatus.QueryContext(ctx, string(q.Status), q.After, q.Limit+1)
	} else {
		rows, err = r.list.QueryContext(ctx, q.After, q.Limit+1)
	}
	if err != nil {
		return false, s.dbErr("list pets", err)
	}
	defer rows.Close()
	// One set of destinations for every row (each row's own would escape
	// to the heap), integers that scan without reflection, and the name
	// and status read as bytes.
	var (
		id, category scannedInt
		name, status sql.RawBytes
	)
	dest := []any{&id, &name, &category, &status}
	n := 0
	for rows.Next() {
		if n == q.Limit {
			more = true // the row after the page: not read
			break
		}
		if err := rows.Scan(dest...); err != nil {
			return false, s.dbErr("list pets", err)
		}
		fn(PetRow{ID: int64(id), Name: name, CategoryID: int64(category), Status: statusOf(status)})
		n++
	}
	if err := rows.Err(); err != nil {
		return false, s.dbErr("list pets", err)
	}
	return more, nil
}

// quickRead is the context of a hot read (a page or a pet by its key: a
// few index pages, well under a millisecond): ctx without its end, or ctx's
// error if it has already ended. A context that can end costs each query
// a goroutine in database/sql that waits on it, and a second one in the
// SQLite driver (a hand-over to the connection's watcher in the MySQL
// driver): 6% of the server's CPU per 20-pet page on MariaDB (median of 15
// alternating pairs), to interrupt a query that is over before a client's
// going away is even noticed. A stuck database is
// bounded by the MySQL driver's I/O timeout (ioTimeout) instead,
// as writes are (createBatch).
func quickRead(ctx context.Context) (context.Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return context.WithoutCancel(ctx), nil
}

// scannedInt is an integer column's destination that database/sql fills
// through Scan rather than through reflection (which its conversion of an
// int64 into an *int64 takes).
type scannedInt int64

// Scan implements sql.Scanner.
func (n *scannedInt) Scan(src any) error {
	v, ok := src.(int64)
	if !ok {
		return fmt.Errorf("scan integer: got %T", src)
	}
	*n = scannedInt(v)
	return nil
}

// statusOf is the Status spelled b, without copying b for the three that
// exist.
func statusOf(b []byte) Status {
	switch string(b) {
	case string(StatusAvailable):
		return StatusAvailable
	case string(StatusPending):
		return StatusPending
	case string(StatusSold):
		return StatusSold
	}
	return Status(b)
}

// GetPet returns one pet, or an error with CodeNotFound. It reads the
// primary: a client fetches the Location of a pet it has just made.
func (s *Store) GetPet(ctx context.Context, id int64) (Pet, error) {
	h, err := s.hot(ctx)
	if err != nil {
		return Pet{}, err
	}
	if ctx, err = quickRead(ctx); err != nil {
		return Pet{}, s.dbErr("get pet", err)
	}
	var p Pet
	err = h.primary.get.QueryRowContext(ctx, id).Scan(&p.ID, &p.Name, &p.CategoryID, &p.Status, &p.CreatedAt, &p.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return Pet{}, notFound("pet", id)
	}
	if err != nil {
		return Pet{}, s.dbErr("get pet", err)
	}
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	return p, nil
}

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
	h, err := s.hot(ctx)
	if err != nil {
		return Pet{}, err
	}
	now := s.now()
	r := &createRequest{
		pet:    Pet{Name: np.Name, CategoryID: np.CategoryID, Status: np.Status, CreatedAt: now, UpdatedAt: now},
		actor:  actor,
		detail: createdDetail(np),
		done:   make(chan createResult, 1),
		once:   once,
	}
	if err := s.creates.submit(ctx, r, func(batch []*createRequest) { s.writeCreates(h, batch) }); err != nil {
		return Pet{}, s.dbErr("create pet", err)
	}
	return r.pet, nil
}

// createdDetail is a created pet's audit detail, name=%q categoryId=%d
// status=%s without fmt (once per create).
func createdDetail(np NewPet) string {
	b := make([]byte, 0, 48+len(np.Name))
	b = strconv.AppendQuote(append(b, "name="...), np.Name)
	b = strconv.AppendInt(append(b, " categoryId="...), np.CategoryID, 10)
	return string(append(append(b, " status="...), np.Status...))
}

// maxCreateBatch bounds how many creates share one transaction.
const maxCreateBatch = 64

// createTimeout bounds a batch's transaction: it runs for several clients,
// so it does not end when the one that leads it goes away.
const createTimeout = 15 * time.Second

// createRequest is one pet waiting to be written.
type createRequest struct {
	pet           Pet // its ID is set once written
	actor, detail string
	done          chan createResult
	once          *onceCreate // its idempotency key's claim, if it has one (idempotency.go)
}

// createResult tells a waiting create that it was written (or why not), or
// that it leads the batch given.
type createResult struct {
	err   error
	batch []*createRequest // not nil: write this batch (it holds the receiver)
}

// createQueue is group commit without a goroutine of its own: a create
// that arrives while fewer than maxLeaders batches are being written leads,
// taking every create waiting at that moment (itself included) as its batch
// and writing it in one transaction; those arriving meanwhile wait, and
// when a leader is done the oldest of them leads the next batch, taken
// likewise. Before taking a batch a leader yields the processor once
// (runtime.Gosched), so that creates already on their way (their bodies
// being read and checked by other goroutines) join it: under load that
// took SQLite's batches from about 2 creates to 6 and the server's CPU per
// create from 137-154 us to 102-112 (wrk, 16 connections, 2 cores), each
// transaction's begin, commit and shared pages being paid by more
// creates; a create alone waits for nothing. Batches are only ever taken
// under the lock, so each create is in one batch and hears exactly one
// thing (its result, or its batch to lead) besides, as a leader, its own
// result. A leader writes one batch, so no client waits for more than its
// own. SQLite has one writer, so one leader; MySQL commits several
// transactions at once, so two.
type createQueue struct {
	mu         sync.Mutex
	pending    []*createRequest
	leaders    int
	maxLeaders int // 0 means 1
}

// take removes and returns the next batch; q.mu is held.
func (q *createQueue) take() []*createRequest {
	n := min(len(q.pending), maxCreateBatch)
	batch := q.pending[:n:n]
	q.pending = q.pending[n:]
	if len(q.pending) == 0 {
		q.pending = nil
	}
	return batch
}

// submit queues r and returns once it is written. write writes a batch and
// answers each of its requests on done.
func (q *createQueue) submit(ctx context.Context, r *createRequest, write func([]*createRequest)) error {
	q.mu.Lock()
	q.pending = append(q.pending, r)
	lead := q.leaders < max(1, q.maxLeaders)
	if lead {
		q.leaders++
	}
	q.mu.Unlock()
	var batch []*createRequest
	if lead {
		runtime.Gosched()
		q.mu.Lock()
		if batch = q.take(); batch == nil {
			batch = []*createRequest{} // another leader took r meanwhile
		}
		q.mu.Unlock()
	}
	for {
		if batch != nil {
			if len(batch) > 0 {
				write(batch)
			}
			runtime.Gosched()
			q.mu.Lock()
			if len(q.pending) > 0 {
				next := q.take()
				next[0].done <- createResult{batch: next}
			} else {
				q.leaders--
			}
			q.mu.Unlock()
			batch = nil
		}
		select {
		case res := <-r.done:
			if res.batch == nil {
				return res.err
			}
			batch = res.batch
		case <-ctx.Done():
			// Not yet in a batch: leave the queue, not written (ctx's
			// error says so to createPet). In one (being written by
			// another, or handed to this one to lead): see it through and
			// return its result, so that the caller knows whether it
			// committed although its client is gone or out of time; a
			// batch's transaction does not use ctx (writeCreates).
			q.mu.Lock()
			i := slices.Index(q.pending, r)
			if i >= 0 {
				q.pending = slices.Delete(q.pending, i, i+1)
			}
			q.mu.Unlock()
			if i >= 0 {
				return ctx.Err()
			}
			res := <-r.done
			if res.batch == nil {
				return res.err
			}
			batch = res.batch
		}
	}
}

// writeCreates writes a batch in one transaction, retried as a whole on a
// deadlock or lock wait. If a statement fails for another reason while the
// database still answers, each create is tried alone, so that one bad
// create fails only itself.
func (s *Store) writeCreates(h *hotStatements, batch []*createRequest) {
	ctx, cancel := context.WithTimeout(context.Background(), createTimeout)
	defer cancel()
	insert := func(batch []*createRequest) error {
		if s.createDB != nil {
			return s.insertCreatesMySQL(ctx, batch)
		}
		return s.insertCreates(ctx, h, batch)
	}
	err := retry(ctx, func() error { return insert(batch) })
	s.noteDeltas(1) // about one row of status counts per batch
	if err != nil && len(batch) > 1 && ctx.Err() == nil && !isConnErr(err) {
		for _, r := range batch {
			r.done <- createResult{err: retry(ctx, func() error { return insert([]*createRequest{r}) })}
		}
		return
	}
	for _, r := range batch {
		r.done <- createResult{err: err}
	}
}

// insertCreates inserts the batch's pets, audit events and status counts
// in one transaction, setting each pet's ID.
func (s *Store) insertCreates(ctx context.Context, h *hotStatements, batch []*createRequest) error {
	tx, err := s.sqlDB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// The statements run without ctx's deadline: with one, the driver
	// starts a watcher goroutine and a progress handler for each of them
	// (a tenth of these statements' time), and there is nothing for
	// it to interrupt: the writer already holds the lock, and SQLite runs
	// these few rows in microseconds. The begin (a wait for the lock) and
	// the commit keep it.
	ctx = context.WithoutCancel(ctx)
	insertPet, insertWord, insertAudit := tx.StmtContext(ctx, h.insertPet), tx.StmtContext(ctx, h.insertWord), tx.StmtContext(ctx, h.insertAudit)
	var counts statusDeltas
	for _, r := range batch {
		p := &r.pet
		if !counts.add(p.Status, 1) {
			return fmt.Errorf("create pet: status %q", p.Status)
		}
		res, err := insertPet.ExecContext(ctx, p.Name, p.CategoryID, string(p.Status), p.CreatedAt, p.UpdatedAt)
		if err != nil {
			return err
		}
		if p.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		// The search index's words (search.go's indexPetName, for a new
		// pet), one prepared row at a time: the statement stays compiled.
		for _, k := range nameKeys(p.Name) {
			if _, err := insertWord.ExecContext(ctx, []byte(k), p.ID); err != nil {
				return fmt.Errorf("index pet name: %w", err)
			}
		}
		if _, err := insertAudit.ExecContext(ctx, p.CreatedAt, r.actor, string(ActorKindOf(r.actor)), ActionPetCreated, TargetPet, p.ID, r.detail); err != nil {
			return err
		}
		if r.once != nil {
			if err := s.finishOnceSQLite(ctx, tx, r); err != nil {
				return err
			}
		}
	}
	// One row per status of the batch, with its number of pets.
	insertCount := tx.StmtContext(ctx, h.insertCount)
	for i, n := range counts {
		if n != 0 {
			if _, err := insertCount.ExecContext(ctx, statusArgs[i], n); err != nil {
				return fmt.Errorf("count pets by status: %w", err)
			}
		}
	}
	return tx.Commit()
}

// MySQL's creates are written in one round trip per batch: the
// transaction is sent as one multi-statement text on the creates' own pool
// (Store.createDB), the driver quoting the values. Round trips, not
// statements, were the cost: four per create took two thirds of the API's
// CPU per create. Then statements: each pet is one INSERT of its own (its
// id comes back in that statement's result), but the batch's search words
// and audit events are one multi-row INSERT each, which halved the
// database's CPU per create. The batch's status counts are one more
// multi-row INSERT (one row per status of the batch, statuscounts.go).
const createPetSQL = " INSERT INTO pets (name, category_id, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?);"

// insertCreatesMySQL writes the batch's pets, their search words, their
// audit events and status counts in one transaction sent at once, and sets each pet's ID. A
// pet's id is LAST_INSERT_ID() right after its INSERT: the last pet's is
// still that when the words and events are written (pet_name_words has no
// AUTO_INCREMENT, and a statement sees the value of the one before it), the
// others' are kept in session variables. If it fails part way, the
// transaction is rolled back before the connection goes back to the pool
// (or the connection is dropped, which rolls back).
func (s *Store) insertCreatesMySQL(ctx context.Context, batch []*createRequest) error {
	conn, err := s.createDB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	q, args, petStmt, stmts := createsSQL(batch)
	err = conn.Raw(func(dc any) error {
		res, err := dc.(driver.ExecerContext).ExecContext(ctx, q, args)
		if err != nil {
			return err
		}
		// One entry per statement: START, each pet's and its SET, the
		// words, the events, the status counts, COMMIT (or the idempotency claims' checks,
		// and commitOnceMySQL commits).
		ids := res.(mysql.Result).AllLastInsertIds()
		if len(ids) != stmts+1 {
			return fmt.Errorf("create pets: %d statement results for %d statements", len(ids), stmts+1)
		}
		for i, r := range batch {
			if r.pet.ID = ids[petStmt[i]]; r.pet.ID < 1 {
				return fmt.Errorf("create pets: no id for pet %d of %d", i+1, len(batch))
			}
		}
		return commitOnceMySQL(ctx, dc, res, batch)
	})
	if err != nil {
		if _, rbErr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rbErr != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}
	return err
}

// createsSQL is the text of a batch's transaction and its arguments, with
// the statement (counted from START's 0) that inserts each pet, and how
// many statements it holds.
func createsSQL(batch []*createRequest) (string, []driver.NamedValue, []int, int) {
	var q strings.Builder
	q.Grow(len(batch)*(len(createPetSQL)+160) + 384)
	q.WriteString("START TRANSACTION;")
	args := make([]driver.NamedValue, 0, 16*len(batch))
	arg := func(vs ...any) {
		for _, v := range vs {
			args = append(args, driver.NamedValue{Ordinal: len(args) + 1, Value: v})
		}
	}
	// petStmt[i] is the statement that inserts batch[i]'s pet; petID[i]
	// is the SQL that names its id afterwards.
	petStmt := make([]int, len(batch))
	petID := make([]string, len(batch))
	stmts := 1
	var counts statusDeltas
	for i, r := range batch {
		p := &r.pet
		counts.add(p.Status, 1) // a status not counted fails the pet's INSERT (its CHECK)
		q.WriteString(createPetSQL)
		petStmt[i] = stmts
		stmts++
		arg(p.Name, p.CategoryID, string(p.Status), p.CreatedAt, p.UpdatedAt)
		petID[i] = "LAST_INSERT_ID()"
		if i < len(batch)-1 {
			petID[i] = "@petstore_pet" + strconv.Itoa(i)
			q.WriteString(" SET " + petID[i] + " = LAST_INSERT_ID();")
			stmts++
		}
	}
	// The search index's words (search.go's indexPetName, for new pets).
	words := 0
	for i, r := range batch {
		for _, k := range nameKeys(r.pet.Name) {
			if words == 0 {
				q.WriteString(" INSERT INTO pet_name_words (word, pet_id) VALUES ")
			} else {
				q.WriteByte(',')
			}
			q.WriteString("(?, " + petID[i] + ")")
			arg([]byte(k))
			words++
		}
	}
	if words > 0 {
		q.WriteByte(';')
		stmts++
	}
	q.WriteString(" INSERT INTO audit_events (at, actor, actor_kind, action, target_type, target_id, detail) VALUES ")
	for i, r := range batch {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteString("(?, ?, ?, ?, ?, " + petID[i] + ", ?)")
		arg(r.pet.CreatedAt, r.actor, string(ActorKindOf(r.actor)), ActionPetCreated, TargetPet, r.detail)
	}
	if counts.rows() > 0 {
		q.WriteString("; ")
		counts.appendSQL(&q, arg)
		stmts++
	}
	stmts += endCreatesSQL(&q, arg, batch)
	return q.String(), args, petStmt, stmts
}

// maxCreateLeaders is how many create batches may be written at once. On
// MySQL two (one written while the next gathers) served more creates per
// second than four, which made smaller batches, each with its round trip
// and commit (measured with wrk, 16 connections: 0.61 vs 0.59 of the
// baseline).
func maxCreateLeaders(driver string) int {
	if driver == DriverSQLite {
		return 1 // one writer
	}
	return 2
}
