package models

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
)

// The pets' prepared statements. The partner API's three pet operations
// (a page, one pet, a create) run on every partner request, so they step
// below GORM's builder: each is one statement prepared once per pool on the
// *sql.DB that GORM holds (database/sql then keeps it prepared on each
// connection it runs on), with an explicit column list (petColumns),
// scanned without reflection. The set is fixed (three reads per pool, and
// SQLite's writer four inserts), so the server's count of prepared
// statements stays bounded.

// petReads are the prepared reads of the pets table on one pool.
type petReads struct {
	list       *sql.Stmt // a page in id order
	listStatus *sql.Stmt // a page of one status in id order
	get        *sql.Stmt // one pet, all columns
}

// petStatements are the prepared statements of the hot path, made on first
// use (and on the next use again if that failed: a database that is down
// when the first request comes must not leave the API failing until a
// restart).
type petStatements struct {
	mu    sync.Mutex
	ready atomic.Bool
	// primary reads from the primary (SQLite's readers, or MySQL's pool).
	primary petReads
	// replicas read from each read replica (DATABASE_REPLICA_URLS), each
	// prepared on its own first use: a replica still catching up with a
	// migration, or down, fails only the reads sent to it, never a create
	// or a read of the primary.
	replicas []*replicaReads
	// insertPet, insertAudit and insertWord write a created pet, its audit
	// event and its search words on SQLite's writer, and insertCount a
	// batch's count of pets of one status (statuscounts.go); MySQL has none
	// of them (its creates go as one multi-statement text,
	// insertCreatesMySQL).
	insertPet   *sql.Stmt
	insertAudit *sql.Stmt
	insertWord  *sql.Stmt // a search word of a created pet (SQLite's creates)
	insertCount *sql.Stmt
	// advanceClock and insertEvent write a batch's change feed events
	// (events.go).
	advanceClock *sql.Stmt
	insertEvent  *sql.Stmt
}

// hot returns the prepared statements, preparing them on first use; a
// failed preparation is undone, so the next use tries again.
func (s *Store) petStatements(ctx context.Context) (*petStatements, error) {
	h := &s.pets.stmts
	if h.ready.Load() {
		return h, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.ready.Load() {
		if err := s.preparePetStatements(ctx); err != nil {
			s.closePetStatements()
			return nil, s.dbErr("prepare statements", err)
		}
		h.ready.Store(true)
	}
	return h, nil
}

func (s *Store) preparePetStatements(ctx context.Context) (err error) {
	h := &s.pets.stmts
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
	reads := func(db *sql.DB) petReads {
		return petReads{
			list:       prep(db, listSQL),
			listStatus: prep(db, s.listStatusSQL()),
			get:        prep(db, "SELECT "+petColumns+" FROM pets WHERE id = ?"),
		}
	}
	h.primary = reads(s.readDB)
	h.replicas = make([]*replicaReads, len(s.replicas))
	for i, db := range s.replicas {
		h.replicas[i] = &replicaReads{db: db}
	}
	if s.createDB == nil { // SQLite's creates (insertCreates); MySQL's send text (insertCreatesMySQL)
		h.insertPet = prep(s.sqlDB, createPetSQL)
		h.insertAudit = prep(s.sqlDB, "INSERT INTO audit_events (at, actor, actor_kind, action, target_type, target_id, detail) VALUES (?, ?, ?, ?, ?, ?, ?)")
		h.insertWord = prep(s.sqlDB, "INSERT INTO pet_name_words (word, pet_id) VALUES (?, ?)")
		h.insertCount = prep(s.sqlDB, insertDeltasSQL+"(?, ?)")
		h.advanceClock = prep(s.sqlDB, advanceClockSQLite)
		h.insertEvent = prep(s.sqlDB, insertEventSQL)
	}
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	return nil
}

// closePetStatements closes the prepared statements and forgets them.
func (s *Store) closePetStatements() {
	h := &s.pets.stmts
	defer func() {
		h.ready.Store(false)
		h.primary, h.replicas = petReads{}, nil
		h.insertPet, h.insertAudit, h.insertWord, h.insertCount, h.advanceClock, h.insertEvent = nil, nil, nil, nil, nil, nil
	}()
	for _, st := range []*sql.Stmt{h.primary.list, h.primary.listStatus, h.primary.get, h.insertPet, h.insertAudit, h.insertWord, h.insertCount,
		h.advanceClock, h.insertEvent} {
		if st != nil {
			st.Close()
		}
	}
	for _, r := range h.replicas {
		r.close()
	}
}

// listSQL is a page of pets in id order; listStatusSQL a page of one status.
const listSQL = "SELECT " + petListColumns + " FROM pets WHERE id > ? ORDER BY id LIMIT ?"

func (s *Store) listStatusSQL() string {
	from := "pets"
	if s.driver == DriverMySQL {
		from = petsByStatus // see ListPets
	}
	return "SELECT " + petListColumns + " FROM " + from + " WHERE status = ? AND id > ? ORDER BY id LIMIT ?"
}

// replicaReads are one read replica's prepared pages (a replica serves
// only the partner API's pages, never a pet by its id).
type replicaReads struct {
	db    *sql.DB
	mu    sync.Mutex
	ready atomic.Bool
	reads petReads
}

// prepared returns the replica's prepared pages, preparing them on first use;
// a failed preparation is undone, so the next read tries again.
func (r *replicaReads) prepared(ctx context.Context, s *Store) (petReads, error) {
	if r.ready.Load() {
		return r.reads, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ready.Load() {
		return r.reads, nil
	}
	ctx = context.WithoutCancel(ctx)
	list, err := r.db.PrepareContext(ctx, listSQL)
	if err != nil {
		return petReads{}, fmt.Errorf("prepare replica reads: %w", err)
	}
	listStatus, err := r.db.PrepareContext(ctx, s.listStatusSQL())
	if err != nil {
		list.Close()
		return petReads{}, fmt.Errorf("prepare replica reads: %w", err)
	}
	r.reads = petReads{list: list, listStatus: listStatus}
	r.ready.Store(true)
	return r.reads, nil
}

func (r *replicaReads) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, st := range []*sql.Stmt{r.reads.list, r.reads.listStatus} {
		if st != nil {
			st.Close()
		}
	}
	r.reads = petReads{}
	r.ready.Store(false)
}
