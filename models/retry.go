package models

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/go-sql-driver/mysql"
	"gorm.io/gorm"
)

// maxAttempts bounds how often a write that the database aborted for a
// deadlock or a lock wait is tried in all. Each retry waits a little longer,
// with jitter, so the transactions that collided do not collide again.
const maxAttempts = 5

// isRetryable reports an abort that leaves nothing behind and that a retry
// of the whole transaction may get past: InnoDB's deadlock (1213) and lock
// wait timeout (1205). SQLite waits for its lock through busy_timeout.
func isRetryable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1213 || me.Number == 1205)
}

// transaction runs fn in a transaction, again from the start when the
// database aborts it for a deadlock or a lock wait, up to maxAttempts in
// all. fn may run more than once: it must set every value it writes from
// scratch (for example, leave the ID of a record to create at zero).
// Every write of the Store goes through it.
func (s *Store) transaction(ctx context.Context, fn func(tx *gorm.DB) error) error {
	return retry(ctx, func() error { return s.db.WithContext(ctx).Transaction(fn) })
}

// retry runs op until it succeeds, fails for a reason other than a
// deadlock or a lock wait, or has run maxAttempts times.
func retry(ctx context.Context, op func() error) error {
	delay := 2 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil || attempt == maxAttempts || !isRetryable(err) {
			return err
		}
		t := time.NewTimer(delay/2 + rand.N(delay))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		delay *= 2
	}
}
