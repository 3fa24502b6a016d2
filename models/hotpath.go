package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
)

// The partner API's three pet operations run on every partner request, so
// they step below GORM's builder: each is one statement prepared once per
// pool on the *sql.DB that GORM holds (database/sql then keeps it prepared
// on each connection it runs on), with an explicit column list, scanned
// without reflection. They answer exactly what ListPets, GetPet and
// CreatePet answer through GORM. The set is fixed (six statements per
// pool), so the server's count of prepared statements stays bounded.

// petReads are the prepared reads of the pets table on one pool.
type petReads struct {
	list       *sql.Stmt // a page in id order
	listStatus *sql.Stmt // a page of one status in id order
	get        *sql.Stmt // one pet, all columns
}

// hotStatements are the prepared statements of the hot path, made on first
// use.
type hotStatements struct {
	once sync.Once
	err  error
	// primary reads from the primary (SQLite's readers, or MySQL's pool);
	// replicas from each read replica (DATABASE_REPLICA_URLS).
	primary  petReads
	replicas []petReads
	// insertPet and insertAudit write a created pet and its audit event,
	// on the primary (SQLite's writer).
	insertPet   *sql.Stmt
	insertAudit *sql.Stmt
}

// hot returns the prepared statements, preparing them on first use.
func (s *Store) hot(ctx context.Context) (*hotStatements, error) {
	h := &s.stmts
	h.once.Do(func() { h.err = s.prepareHot(ctx) })
	if h.err != nil {
		return nil, s.dbErr("prepare statements", h.err)
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
	h.insertPet = prep(s.sqlDB, "INSERT INTO pets (name, category_id, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?)")
	h.insertAudit = prep(s.sqlDB, "INSERT INTO audit_events (at, actor, action, target_type, target_id, detail) VALUES (?, ?, ?, ?, ?, ?)")
	if err != nil {
		// A statement that failed leaves the others prepared: close them
		// with the store.
		return fmt.Errorf("prepare: %w", err)
	}
	return nil
}

// closeHot closes the prepared statements.
func (s *Store) closeHot() {
	h := &s.stmts
	for _, st := range []*sql.Stmt{h.primary.list, h.primary.listStatus, h.primary.get, h.insertPet, h.insertAudit} {
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

// PetPage is ListPets for the partner API: a page in id order after
// q.After, optionally of one status, with the four fields the API returns
// (CreatedAt and UpdatedAt are left zero). q.Before and q.NameContains are
// the console's and are not served here. With q.AllowStale a read replica
// answers when there are some.
func (s *Store) PetPage(ctx context.Context, q PetQuery) ([]Pet, bool, error) {
	if q.Before != 0 || q.NameContains != "" {
		return nil, false, internal("pet page", errors.New("PetPage serves forward pages without search"))
	}
	if q.Limit < 1 || q.Limit > MaxPageLimit {
		q.Limit = DefaultPageLimit
	}
	h, err := s.hot(ctx)
	if err != nil {
		return nil, false, err
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
		return nil, false, s.dbErr("list pets", err)
	}
	defer rows.Close()
	pets := make([]Pet, 0, q.Limit+1)
	for rows.Next() {
		var (
			p      Pet
			status string // a plain string scans without reflection
		)
		if err := rows.Scan(&p.ID, &p.Name, &p.CategoryID, &status); err != nil {
			return nil, false, s.dbErr("list pets", err)
		}
		p.Status = Status(status)
		pets = append(pets, p)
	}
	if err := rows.Err(); err != nil {
		return nil, false, s.dbErr("list pets", err)
	}
	more := len(pets) > q.Limit
	if more {
		pets = pets[:q.Limit]
	}
	return pets, more, nil
}

// GetPet returns one pet, or an error with CodeNotFound. It reads the
// primary: a client fetches the Location of a pet it has just made.
func (s *Store) GetPet(ctx context.Context, id int64) (Pet, error) {
	h, err := s.hot(ctx)
	if err != nil {
		return Pet{}, err
	}
	var p Pet
	err = h.primary.get.QueryRowContext(ctx, id).Scan(&p.ID, &p.Name, &p.CategoryID, &p.Status, &p.CreatedAt, &p.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return Pet{}, &Error{Code: CodeNotFound, Message: fmt.Sprintf("No pet has id %d.", id)}
	}
	if err != nil {
		return Pet{}, s.dbErr("get pet", err)
	}
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	return p, nil
}

// CreatePet stores a validated pet and records who added it, in one
// transaction on the primary (SQLite's single writer).
func (s *Store) CreatePet(ctx context.Context, np NewPet, actor string) (Pet, error) {
	h, err := s.hot(ctx)
	if err != nil {
		return Pet{}, err
	}
	now := s.now()
	p := Pet{Name: np.Name, CategoryID: np.CategoryID, Status: np.Status, CreatedAt: now, UpdatedAt: now}
	detail := fmt.Sprintf("name=%q categoryId=%d status=%s", p.Name, p.CategoryID, p.Status)
	err = retry(ctx, func() error {
		tx, err := s.sqlDB.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		res, err := tx.StmtContext(ctx, h.insertPet).ExecContext(ctx, p.Name, p.CategoryID, string(p.Status), now, now)
		if err != nil {
			return err
		}
		if p.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		if _, err := tx.StmtContext(ctx, h.insertAudit).ExecContext(ctx, now, actor, ActionPetCreated, TargetPet, p.ID, detail); err != nil {
			return err
		}
		return tx.Commit()
	})
	if err != nil {
		return Pet{}, s.dbErr("create pet", err)
	}
	return p, nil
}
