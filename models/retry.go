package models

import (
	"context"
	"database/sql/driver"
	"errors"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"gorm.io/gorm"
)

// maxAttempts bounds how often a write that the database aborted for a
// reason a retry may get past is tried in all. Each retry waits a little
// longer, with jitter, so the transactions that collided do not collide
// again. Writers through several Galera nodes at once all meet on the
// change feed's clock row, so conflicts there come in runs: eight attempts
// span about half a second of waits.
const maxAttempts = 8

// The MySQL errors after which a whole transaction may be tried again:
// each means that it was rolled back, so that nothing of it is stored.
const (
	// errLockWaitTimeout: InnoDB gave up waiting for a row lock, or a
	// Galera node for a causal read or a commit (ER_LOCK_WAIT_TIMEOUT).
	errLockWaitTimeout = 1205
	// errDeadlock: InnoDB broke a deadlock, or a Galera cluster aborted the
	// transaction for a certification conflict with a write set committed
	// on another node, or to apply one (a brute-force abort); both are
	// reported as ER_LOCK_DEADLOCK, at any statement or at COMMIT.
	errDeadlock = 1213
	// errNodeNotReady: "WSREP has not yet prepared node for application
	// use" (ER_UNKNOWN_COM_ERROR), from a Galera node that is not part of
	// the primary component or not yet synced. Nothing was run; another
	// node, or this one a moment later, takes the transaction.
	errNodeNotReady = 1047
	// errCommitFailed: the commit could not be replicated, so it was
	// rolled back (ER_ERROR_DURING_COMMIT: a Galera node that lost the
	// primary component while committing says "Not connected to Primary
	// Component"); like errNodeNotReady, another node takes the retry.
	errCommitFailed = 1180
)

// The MySQL errors of a server that ended the connection (a node shut
// down or restarted, or an operator killed the session): what the
// statement did is unknown if it was a COMMIT, so it is not retried here,
// but it is the database being away, not a fault of the request.
const (
	errServerShutdown   = 1053 // ER_SERVER_SHUTDOWN
	errQueryInterrupted = 1317 // ER_QUERY_INTERRUPTED, also a Galera node leaving the cluster mid-commit
	errConnectionKilled = 1927 // ER_CONNECTION_KILLED
)

// First waits before a retry, doubled at each further one: a lock
// conflict clears in milliseconds; a node that is not ready, or a
// connection that went to a dead node, takes the load balancer's health
// check (about a second) to be routed around.
const (
	conflictRetryDelay = 2 * time.Millisecond
	nodeRetryDelay     = 50 * time.Millisecond
)

// retryDelay reports whether err aborted an attempt that a retry of the
// whole transaction may get past, and how long to wait before the first
// retry. These leave nothing behind: InnoDB's deadlock (1213) and lock
// wait timeout (1205), which are also how a Galera cluster reports a
// certification conflict; a Galera node that is not ready (1047), or that
// could not replicate a commit and rolled it back (1180); and a
// pooled connection found dead before anything was sent on it
// (driver.ErrBadConn: the driver returns it only then, and database/sql
// has already tried other pooled connections). A connection lost after
// the statement was sent is not retried: a COMMIT may have been applied.
// SQLite waits for its lock through busy_timeout.
func retryDelay(err error) (time.Duration, bool) {
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &me) && (me.Number == errDeadlock || me.Number == errLockWaitTimeout || idTaken(me)):
		return conflictRetryDelay, true
	case errors.As(err, &me) && (me.Number == errNodeNotReady || me.Number == errCommitFailed):
		return nodeRetryDelay, true
	case errors.Is(err, driver.ErrBadConn):
		return nodeRetryDelay, true
	}
	return 0, false
}

// errDuplicateKey is ER_DUP_ENTRY.
const errDuplicateKey = 1062

// idTaken reports the other face of a Galera conflict on an id: two nodes
// handed out the same one (the change feed's clock advanced from the same
// value on both, or an auto-increment while the cluster's size, and so
// each node's step and offset, changed), and the transaction that applied
// second met the first's row in a primary key ("Duplicate entry '42' for
// key 'PRIMARY'", or a pet's search word "'luna-42'") instead of being
// aborted by certification. Run again, it takes a fresh id. Only these
// keys are a whole number or a word and a whole number: the idempotency
// keys' is a key's id and a hex hash, and their duplicates are handled
// where they are claimed.
func idTaken(me *mysql.MySQLError) bool {
	if me.Number != errDuplicateKey {
		return false
	}
	entry, key, ok := strings.Cut(strings.TrimPrefix(me.Message, "Duplicate entry '"), "' for key '")
	if !ok || entry == "" {
		return false
	}
	if i := strings.LastIndexByte(entry, '-'); i > 0 && !strings.Contains(entry[:i], "-") {
		entry = entry[i+1:] // a word and a pet's id
	}
	if entry == "" || strings.Trim(entry, "0123456789") != "" {
		return false
	}
	return key == "PRIMARY'" || strings.HasSuffix(key, ".PRIMARY'")
}

// isRetryable reports an abort that a retry of the whole transaction may
// get past (see retryDelay).
func isRetryable(err error) bool {
	_, ok := retryDelay(err)
	return ok
}

// isTransient reports a failure that is the database's passing state, not
// a fault of the request: one that retries did not get past (a conflict
// that kept recurring, a node that stayed unready), or a server that ended
// the connection. The Store answers them as unavailable (503), never as an
// internal error.
func isTransient(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case errServerShutdown, errQueryInterrupted, errConnectionKilled:
			return true
		}
	}
	return isRetryable(err)
}

// transaction runs fn in a transaction, again from the start when the
// database aborts it for a reason a retry may get past (retryDelay), up to
// maxAttempts in all. fn may run more than once: it must set every value
// it writes from scratch (for example, leave the ID of a record to create
// at zero). The Store's GORM writes go through it; the group-commit
// batches, the idempotency claims and the background purges run their own
// statements and retry them with retry.
func (s *Store) transaction(ctx context.Context, fn func(tx *gorm.DB) error) error {
	return retry(ctx, func() error { return s.db.WithContext(ctx).Transaction(fn) })
}

// retry runs op until it succeeds, fails for a reason a retry does not
// get past, or has run maxAttempts times.
func retry(ctx context.Context, op func() error) error {
	var delay time.Duration
	for attempt := 1; ; attempt++ {
		err := op()
		first, ok := retryDelay(err)
		if err == nil || attempt == maxAttempts || !ok {
			return err
		}
		delay = max(2*delay, first)
		t := time.NewTimer(delay/2 + rand.N(delay))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}
