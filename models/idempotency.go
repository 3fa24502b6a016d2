package models

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"petstore/models/internal/background"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Idempotency keys make a partner's create safe to retry (the IETF httpapi
// draft "The Idempotency-Key HTTP Header Field", with Stripe's semantics).
// A request that sends a key first claims it: a pending row in
// idempotency_keys, scoped to the calling API key. Its pet is then written
// with the row made done (the answer's status, body and Location) in the
// same transaction, whether the create goes through the group commit
// alone or with others (pets_create.go): either both are stored or neither, so
// a create whose answer was lost is replayed, never made twice. A create
// that fails gives the key back (ReleaseIdempotencyKey): only answers that
// were committed are remembered, never a 5xx, so a retry after a 503 can
// still succeed. A pending row whose request died with its instance is
// taken over once its lease has passed; the request that held it can then
// no longer finish (its transaction checks that it still owns the row).
// Creates without a key do none of this.

// The codes of idempotency keys (statuses in package httpcode).
const (
	// CodeIdempotencyKeyInUse: the first request with this key is still
	// being processed (409).
	CodeIdempotencyKeyInUse Code = "idempotency_key_in_use"
	// CodeIdempotencyKeyMismatch: the key was used with another request
	// (422).
	CodeIdempotencyKeyMismatch Code = "idempotency_key_mismatch"
)

const (
	// IdempotencyTTL is how long a key is remembered after its first use.
	IdempotencyTTL = 24 * time.Hour
	// idempotencyLease is how long a pending key belongs to the request that
	// claimed it. Past it, that request is taken for dead (its instance
	// stopped) and a retry may take the key over. A create is answered far
	// sooner: its batch's transaction is bounded by defaultCreateTimeout.
	idempotencyLease = time.Minute
	// idempotencyPurgeEvery is how often an instance deletes expired keys,
	// at most; idempotencyPurgeBatch bounds each DELETE.
	idempotencyPurgeEvery = time.Minute
	idempotencyPurgeBatch = 1000
	// idempotencyReleaseEvery is how often a claim that could not be given
	// back (the database was away) is tried again, until its lease ends.
	idempotencyReleaseEvery = 250 * time.Millisecond
)

var (
	errKeyInUse = &Error{Code: CodeIdempotencyKeyInUse, RetryAfter: time.Second,
		Message: "A request with this Idempotency-Key is still being processed; retry it in a moment."}
	errKeyMismatch = &Error{Code: CodeIdempotencyKeyMismatch,
		Message: "This Idempotency-Key was already used with a different request in the last 24 hours; send a new key for a new animal."}
)

// StoredResponse is the answer remembered for an idempotency key and
// replayed to each repeat of its request.
type StoredResponse struct {
	Status   int
	Body     []byte
	Location string
}

// IdempotencyClaim is one request's hold on a pending key.
type IdempotencyClaim struct {
	apiKeyID int64
	keyHash  string
	owner    string // random, so that a taken-over claim cannot finish
	stmts    *idempotencyStatements
}

// onceCreate is what a create with an idempotency key adds to its
// createRequest: the claim to finish with the pet, and how to render the
// answer to remember once the pet has its id.
type onceCreate struct {
	claim   *IdempotencyClaim
	respond func(Pet) StoredResponse
}

// idempotency is the Store's state for idempotency keys: statements
// prepared on first use, background work (purges, delayed releases) that
// Close waits for, and when this instance last purged.
type idempotency struct {
	mu       sync.Mutex // guards stmts
	stmts    *idempotencyStatements
	bg       background.Runner // the purges
	purgedAt atomic.Int64      // unix nanoseconds
}

// idempotencyStatements are prepared on the primary (SQLite's writer), but
// get, on SQLite's readers.
type idempotencyStatements struct {
	insert, get, takeOver, release, finish *sql.Stmt
}

const (
	claimSQL    = "INSERT INTO idempotency_keys (api_key_id, key_hash, request_hash, owner, locked_at, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
	getClaimSQL = "SELECT request_hash, status, body, location, locked_at, expires_at FROM idempotency_keys WHERE api_key_id = ? AND key_hash = ?"
	// takeOverSQL claims a key that expired, or whose pending request is
	// past its lease; the condition is checked on the row as it then is,
	// so of two requests taking it over one wins.
	takeOverSQL = "UPDATE idempotency_keys SET request_hash = ?, owner = ?, status = NULL, body = NULL, location = NULL, locked_at = ?, created_at = ?, expires_at = ?" +
		" WHERE api_key_id = ? AND key_hash = ? AND (expires_at <= ? OR (status IS NULL AND locked_at <= ?))"
	releaseSQL = "DELETE FROM idempotency_keys WHERE api_key_id = ? AND key_hash = ? AND owner = ? AND status IS NULL"
	// finishSQL makes a claim done on SQLite, in its pet's transaction.
	finishSQL = "UPDATE idempotency_keys SET status = ?, body = ?, location = ?, owner = NULL WHERE api_key_id = ? AND key_hash = ? AND owner = ? AND status IS NULL"
)

// idempotencyStatements returns the prepared statements, preparing them on
// first use; a failure (the database away) is not kept.
func (s *Store) idempotencyStatements(ctx context.Context) (*idempotencyStatements, error) {
	i := &s.idem
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.stmts != nil {
		return i.stmts, nil
	}
	if i.bg.Closed() {
		return nil, s.dbErr("prepare idempotency statements", sql.ErrConnDone)
	}
	ctx = context.WithoutCancel(ctx)
	var st idempotencyStatements
	var err error
	for _, p := range []struct {
		dst   **sql.Stmt
		db    *sql.DB
		query string
	}{
		{&st.insert, s.sqlDB, claimSQL}, {&st.get, s.readDB, getClaimSQL}, {&st.takeOver, s.sqlDB, takeOverSQL},
		{&st.release, s.sqlDB, releaseSQL}, {&st.finish, s.sqlDB, finishSQL},
	} {
		if err == nil {
			*p.dst, err = p.db.PrepareContext(ctx, p.query)
		}
	}
	if err != nil {
		st.close()
		return nil, s.dbErr("prepare idempotency statements", err)
	}
	i.stmts = &st
	return i.stmts, nil
}

func (st *idempotencyStatements) close() {
	for _, s := range []*sql.Stmt{st.insert, st.get, st.takeOver, st.release, st.finish} {
		if s != nil {
			s.Close()
		}
	}
}

// close stops the background work, waits for it and closes the statements.
func (i *idempotency) close() {
	i.bg.Close()
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.stmts != nil {
		i.stmts.close()
		i.stmts = nil
	}
}

// hashHex is the hex SHA-256 of b.
func hashHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ClaimIdempotencyKey claims key for a request of the API key apiKeyID;
// request identifies what it asks (the same request must give the same
// bytes). The first request with a key, or one after it expired, gets the
// claim, and must then either create with it (CreatePetOnce) or give it
// back (ReleaseIdempotencyKey). A repeat of a finished request gets its
// stored answer; a different request with the key is refused with
// CodeIdempotencyKeyMismatch, a repeat while the first still runs with
// CodeIdempotencyKeyInUse (RetryAfter set).
func (s *Store) ClaimIdempotencyKey(ctx context.Context, apiKeyID int64, key string, request []byte) (*IdempotencyClaim, *StoredResponse, error) {
	st, err := s.idempotencyStatements(ctx)
	if err != nil {
		return nil, nil, err
	}
	s.purgeIdempotencyKeysSometimes()
	c := &IdempotencyClaim{apiKeyID: apiKeyID, keyHash: hashHex([]byte(key)), owner: rand.Text(), stmts: st}
	requestHash := hashHex(request)
	// A row that changes between the INSERT and the look at it (given
	// back, purged, finished, taken over by another) is looked at again.
	for range 3 {
		now := s.now().Truncate(time.Microsecond)
		err := retry(ctx, func() error {
			_, err := st.insert.ExecContext(ctx, apiKeyID, c.keyHash, requestHash, c.owner, now, now, now.Add(IdempotencyTTL))
			return err
		})
		if err == nil {
			return c, nil, nil
		}
		if !isDuplicate(err) {
			// The row may be stored although the answer was lost (the
			// connection broke): give it back, or its key would be in use
			// until the lease ends.
			s.ReleaseIdempotencyKey(c)
			return nil, nil, s.dbErr("claim idempotency key", err)
		}
		replay, taken, err := s.claimExisting(ctx, st, c, requestHash, now)
		if err != nil || replay != nil {
			return nil, replay, err
		}
		if taken {
			return c, nil, nil
		}
	}
	return nil, nil, errKeyInUse
}

// claimExisting decides on a key that has a row: its stored answer, a
// refusal, or taking it over when it expired or its request is past its
// lease (taken). Neither (nil, false, nil): the row changed meanwhile.
func (s *Store) claimExisting(ctx context.Context, st *idempotencyStatements, c *IdempotencyClaim, requestHash string, now time.Time) (*StoredResponse, bool, error) {
	var (
		rowHash             string
		status              sql.NullInt64
		body                []byte
		location            sql.NullString
		lockedAt, expiresAt time.Time
	)
	err := st.get.QueryRowContext(ctx, c.apiKeyID, c.keyHash).Scan(&rowHash, &status, &body, &location, &lockedAt, &expiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.dbErr("read idempotency key", err)
	}
	if expiresAt.After(now) {
		switch {
		case rowHash != requestHash:
			return nil, false, errKeyMismatch
		case status.Valid:
			return &StoredResponse{Status: int(status.Int64), Body: body, Location: location.String}, false, nil
		case lockedAt.After(now.Add(-idempotencyLease)):
			return nil, false, errKeyInUse
		}
	}
	var res sql.Result
	err = retry(ctx, func() (err error) {
		res, err = st.takeOver.ExecContext(ctx, requestHash, c.owner, now, now, now.Add(IdempotencyTTL),
			c.apiKeyID, c.keyHash, now, now.Add(-idempotencyLease))
		return err
	})
	if err != nil {
		s.ReleaseIdempotencyKey(c) // as for a lost INSERT (ClaimIdempotencyKey)
		return nil, false, s.dbErr("take over idempotency key", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return nil, false, s.dbErr("take over idempotency key", err)
	}
	return nil, n == 1, nil
}

// CreatePetOnce is CreatePet for a request holding claim: the claim is
// made done, with the answer respond renders for the stored pet, in the
// pet's own transaction. If the claim was taken over meanwhile (its lease
// passed), nothing is stored and the error has CodeIdempotencyKeyInUse.
func (s *Store) CreatePetOnce(ctx context.Context, np NewPet, actor string, claim *IdempotencyClaim, respond func(Pet) StoredResponse) (Pet, error) {
	return s.createPet(ctx, np, actor, &onceCreate{claim: claim, respond: respond})
}

// errClaimLost is the failure of a create whose claim was taken over.
var errClaimLost = &Error{Code: CodeIdempotencyKeyInUse, RetryAfter: time.Second,
	Message: "This request took too long and another request with its Idempotency-Key took over; retry it to get that request's answer."}

// finishOnceSQLite makes r's claim done in tx, the transaction that
// stores its pet (SQLite's insertCreates).
func (s *Store) finishOnceSQLite(ctx context.Context, tx *sql.Tx, r *createRequest) error {
	c, a := r.once.claim, r.once.respond(r.change.After)
	res, err := tx.StmtContext(ctx, c.stmts.finish).ExecContext(ctx, a.Status, a.Body, a.Location, c.apiKeyID, c.keyHash, c.owner)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return errors.Join(errClaimLost, err)
	}
	return nil
}

// endCreatesSQL ends a MySQL batch's text (createsSQL): when no create of
// the batch has an idempotency key, with its events. Otherwise with one
// UPDATE per claim, which changes its row only if the claim still holds it
// (and locks it): commitOnceMySQL checks what they changed, then stores the
// answers and writes the events. commitBatch commits either.
func endCreatesSQL(c *createsBatch, batch []*createRequest) {
	b := c.sql
	for _, r := range batch {
		if r.once != nil {
			cl := r.once.claim
			c.claims = append(c.claims, b.statement("UPDATE idempotency_keys SET owner = NULL WHERE api_key_id = ? AND key_hash = ? AND owner = ? AND status IS NULL",
				cl.apiKeyID, cl.keyHash, cl.owner))
		}
	}
	if len(c.claims) == 0 {
		c.clock = writeEventsSQL(b, c.events, c.petID)
	}
}

// commitOnceMySQL finishes a batch sent by insertCreatesMySQL when it
// holds creates with idempotency keys: res is its result. If each claim's
// UPDATE (c.claims, in the order of the batch's keyed creates) changed its
// row, a second round trip stores the answers, writes the batch's events
// and commits, and it returns the last event's id; otherwise the error is
// returned and the caller rolls back.
func commitOnceMySQL(ctx context.Context, dc any, res driver.Result, batch []*createRequest, c *createsBatch) (int64, error) {
	affected := res.(mysql.Result).AllRowsAffected()
	for _, k := range c.claims {
		if k >= len(affected) || affected[k] != 1 {
			return 0, errClaimLost
		}
	}
	b := newBatchSQL(256*len(c.claims) + 128*len(c.events))
	for _, r := range batch {
		if r.once == nil {
			continue
		}
		cl, a := r.once.claim, r.once.respond(r.change.After)
		b.statement("UPDATE idempotency_keys SET status = ?, body = ?, location = ? WHERE api_key_id = ? AND key_hash = ?",
			int64(a.Status), a.Body, a.Location, cl.apiKeyID, cl.keyHash)
	}
	clock := writeEventsSQL(b, c.events, c.petID)
	res, err := dc.(driver.ExecerContext).ExecContext(ctx, b.text(), b.args)
	if err != nil {
		return 0, fmt.Errorf("store idempotent answers: %w", err)
	}
	ids := res.(mysql.Result).AllLastInsertIds()
	if clock >= len(ids) {
		return 0, fmt.Errorf("store idempotent answers: %d statement results for %d statements", len(ids), b.statements())
	}
	return ids[clock], commitBatch(ctx, dc)
}

// ReleaseIdempotencyKey gives back a claim whose create failed, so that a
// retry of the request can create. It does nothing to a claim that was
// finished (its create was stored although it reported a failure: a retry
// gets the stored answer) or taken over. When the database is away the
// release is tried again in the background until the claim's lease ends.
func (s *Store) ReleaseIdempotencyKey(c *IdempotencyClaim) {
	if s.releaseClaim(c) == nil {
		return
	}
	deadline := time.Now().Add(idempotencyLease)
	s.idem.bg.Start(func(ctx context.Context) {
		t := time.NewTicker(idempotencyReleaseEvery)
		defer t.Stop()
		for time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if s.releaseClaim(c) == nil {
				return
			}
		}
	})
}

// releaseClaim deletes c's row if c still holds it pending.
func (s *Store) releaseClaim(c *IdempotencyClaim) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return retry(ctx, func() error {
		_, err := c.stmts.release.ExecContext(ctx, c.apiKeyID, c.keyHash, c.owner)
		return err
	})
}

// PurgeIdempotencyKeys deletes the keys past their 24 hours, at most
// idempotencyPurgeBatch rows per statement, until none is left, and
// returns how many it deleted.
func (s *Store) PurgeIdempotencyKeys(ctx context.Context) (int64, error) {
	// SQLite has DELETE ... LIMIT only when built with an option.
	query := "DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE expires_at <= ? LIMIT ?)"
	if s.driver == DriverMySQL {
		query = "DELETE FROM idempotency_keys WHERE expires_at <= ? LIMIT ?"
	}
	now := s.now()
	var total int64
	for {
		var res sql.Result
		err := retry(ctx, func() (err error) {
			res, err = s.sqlDB.ExecContext(ctx, query, now, idempotencyPurgeBatch)
			return err
		})
		if err != nil {
			return total, s.dbErr("purge idempotency keys", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, s.dbErr("purge idempotency keys", err)
		}
		total += n
		if n < idempotencyPurgeBatch {
			return total, nil
		}
	}
}

// purgeIdempotencyKeysSometimes purges expired keys in the background, at
// most once per idempotencyPurgeEvery on this instance. It runs only when
// keys are used, so requests without one never pay for it; keys that
// expired and were not purged yet count as absent.
func (s *Store) purgeIdempotencyKeysSometimes() {
	now := s.now().UnixNano()
	last := s.idem.purgedAt.Load()
	if now-last < int64(idempotencyPurgeEvery) || !s.idem.purgedAt.CompareAndSwap(last, now) {
		return
	}
	s.idem.bg.Start(func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if _, err := s.PurgeIdempotencyKeys(ctx); err != nil {
			s.log.Warn("could not purge expired idempotency keys", "error", err)
		}
	})
}
