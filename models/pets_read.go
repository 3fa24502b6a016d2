package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
)

// The pets' column lists, one per shape, shared by every statement that
// reads or writes that shape.
const (
	// petListColumns are a page of the partner API (PetRow).
	petListColumns = "id, name, category_id, status"
	// petColumns are a whole pet (Pet), as scanPet reads them.
	petColumns = "id, name, category_id, status, created_at, updated_at, version"
	// petInsertColumns are what a new pet's INSERT writes (its id and
	// version come from the database).
	petInsertColumns = "name, category_id, status, created_at, updated_at"
)

// scanPet reads a row of petColumns into p, its times in UTC.
func scanPet(row interface{ Scan(...any) error }, p *Pet) error {
	if err := row.Scan(&p.ID, &p.Name, &p.CategoryID, &p.Status, &p.CreatedAt, &p.UpdatedAt, &p.Version); err != nil {
		return err
	}
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	return nil
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
	h, err := s.petStatements(ctx)
	if err != nil {
		return false, err
	}
	if ctx, err = quickRead(ctx); err != nil {
		return false, s.dbErr("list pets", err)
	}
	r := h.primary
	if q.AllowStale && len(h.replicas) > 0 {
		if r, err = h.replicas[rand.IntN(len(h.replicas))].prepared(ctx, s); err != nil {
			return false, s.dbErr("list pets", err)
		}
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

// GetPet returns one pet with its version, or an error with CodeNotFound.
// It reads the primary (never a replica): a client fetches the Location of
// a pet it has just made, and the console edits what was last written.
func (s *Store) GetPet(ctx context.Context, id int64) (Pet, error) {
	h, err := s.petStatements(ctx)
	if err != nil {
		return Pet{}, err
	}
	if ctx, err = quickRead(ctx); err != nil {
		return Pet{}, s.dbErr("get pet", err)
	}
	var p Pet
	err = scanPet(h.primary.get.QueryRowContext(ctx, id), &p)
	if errors.Is(err, sql.ErrNoRows) {
		return Pet{}, notFound("pet", id)
	}
	if err != nil {
		return Pet{}, s.dbErr("get pet", err)
	}
	return p, nil
}
