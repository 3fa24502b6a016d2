package models

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// The errors a MariaDB or Galera server answers, as the driver returns
// them; the messages are the servers' own.
var (
	errDeadlockFound = serverError(1213, "40001", "Deadlock found when trying to get lock; try restarting transaction")
	errLockWait      = serverError(1205, "HY000", "Lock wait timeout exceeded; try restarting transaction")
	errWSREPNotReady = serverError(1047, "08S01", "WSREP has not yet prepared node for application use")
	errNotPrimary    = serverError(1180, "HY000", "Error while appending streaming replication fragment(provider status: Not connected to Primary Component)")
	errShutdown      = serverError(1053, "08S01", "Server shutdown in progress")
	errKilled        = serverError(1927, "70100", "Connection was killed")
	errDuplicate     = serverError(1062, "23000", "Duplicate entry 'x' for key 'PRIMARY'")
)

func serverError(number uint16, state, message string) *mysql.MySQLError {
	e := &mysql.MySQLError{Number: number, Message: message}
	copy(e.SQLState[:], state)
	return e
}

// TestRetryClassification pins which failures are tried again, which are
// answered 503 and which remain internal errors (500), wrapped as the Store
// sees them (by GORM, by fmt, by errors.Join).
func TestRetryClassification(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		err       error
		retry     bool
		firstWait time.Duration
		code      Code // what dbErr makes of it once retries are over
	}{
		{"deadlock or certification conflict", errDeadlockFound, true, conflictRetryDelay, CodeUnavailable},
		{"certification conflict at COMMIT, wrapped", fmt.Errorf("store idempotent answers: %w", errDeadlockFound), true, conflictRetryDelay, CodeUnavailable},
		{"lock wait timeout", errLockWait, true, conflictRetryDelay, CodeUnavailable},
		{"WSREP node not ready", errWSREPNotReady, true, nodeRetryDelay, CodeUnavailable},
		{"WSREP node not ready, joined", errors.Join(errors.New("begin"), errWSREPNotReady), true, nodeRetryDelay, CodeUnavailable},
		{"commit not replicated: the node left the primary component", errNotPrimary, true, nodeRetryDelay, CodeUnavailable},
		{"dead pooled connection, nothing sent", driver.ErrBadConn, true, nodeRetryDelay, CodeUnavailable},
		{"connection lost mid-statement: outcome unknown", mysql.ErrInvalidConn, false, 0, CodeUnavailable},
		{"server shutting down", errShutdown, false, 0, CodeUnavailable},
		{"connection killed", errKilled, false, 0, CodeUnavailable},
		{"the caller gave up (a client hung up)", fmt.Errorf("create pet: %w", context.Canceled), false, 0, CodeCanceled},
		{"a deadline of the service's own", fmt.Errorf("create pet: %w", context.DeadlineExceeded), false, 0, CodeUnavailable},
		{"duplicate key", errDuplicate, false, 0, CodeInternal},
		{"an event id two Galera nodes took at once", &mysql.MySQLError{Number: 1062, Message: "Duplicate entry '42' for key 'PRIMARY'"}, true, conflictRetryDelay, CodeUnavailable},
		{"a pet id two Galera nodes took while the cluster shrank", &mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'galera-11506' for key 'PRIMARY'"}, true, conflictRetryDelay, CodeUnavailable},
		{"an idempotency key's row", &mysql.MySQLError{Number: 1062, Message: "Duplicate entry '5-3fa2c9e1' for key 'PRIMARY'"}, false, 0, CodeInternal},
		{"a unique name", &mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'ana' for key 'idx_users_username'"}, false, 0, CodeInternal},
		{"an event id, as MySQL names the key", fmt.Errorf("store idempotent answers: %w", &mysql.MySQLError{Number: 1062, Message: "Duplicate entry '42' for key 'events.PRIMARY'"}), true, conflictRetryDelay, CodeUnavailable},
		{"a pair key's duplicate", &mysql.MySQLError{Number: 1062, Message: "Duplicate entry '7-abc' for key 'PRIMARY'"}, false, 0, CodeInternal},
		{"a unique index's duplicate", &mysql.MySQLError{Number: 1062, Message: "Duplicate entry '42' for key 'idx_users_username'"}, false, 0, CodeInternal},
		{"anything else", errors.New("disk full"), false, 0, CodeInternal},
	}
	s := &Store{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wait, retry := retryDelay(tt.err)
			if retry != tt.retry || wait != tt.firstWait {
				t.Errorf("retryDelay = %s, %t; want %s, %t", wait, retry, tt.firstWait, tt.retry)
			}
			if got := ErrorCode(s.dbErr("op", tt.err)); got != tt.code {
				t.Errorf("dbErr code %s, want %s", got, tt.code)
			}
		})
	}
}

// TestRetryAttempts runs retry over failures that repeat: a retryable one
// is tried maxAttempts times in all and then returned; one whose outcome
// is unknown, or that no retry cures, is tried once; a retry that
// succeeds ends it.
func TestRetryAttempts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		fails     []error // the errors of the first attempts, then success
		wantCalls int
		wantErr   error
	}{
		{"conflict then success", []error{errDeadlockFound, errDeadlockFound}, 3, nil},
		{"conflict every time", slices.Repeat([]error{errDeadlockFound}, maxAttempts+1), maxAttempts, errDeadlockFound},
		{"node not ready, then a conflict, then success", []error{errWSREPNotReady, errDeadlockFound}, 3, nil},
		{"connection lost mid-COMMIT", []error{mysql.ErrInvalidConn}, 1, mysql.ErrInvalidConn},
		{"duplicate key", []error{errDuplicate}, 1, errDuplicate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			err := retry(context.Background(), func() error {
				calls++
				if calls <= len(tt.fails) {
					return tt.fails[calls-1]
				}
				return nil
			})
			if calls != tt.wantCalls || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("%d calls, error %v; want %d calls, error %v", calls, err, tt.wantCalls, tt.wantErr)
			}
		})
	}
}

// TestRetryStopsWithContext: a retry does not outlive its request.
func TestRetryStopsWithContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := retry(ctx, func() error {
		calls++
		cancel()
		return errWSREPNotReady
	})
	if calls != 1 || !errors.Is(err, errWSREPNotReady) {
		t.Errorf("%d calls, error %v; want 1 call and the node's error", calls, err)
	}
}
