package models_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"

	"petstore/models"
	"petstore/models/modelstest"
)

// lockedBuffer is a log destination that many goroutines may write to.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A slow statement is logged as written, without its values: the log must
// never hold a password hash, a session id, a username or a client address.
// A tiny slow threshold makes every statement slow.
func TestSlowStatementsLogNoValues(t *testing.T) {
	t.Parallel()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			var logs lockedBuffer
			cfg := modelstest.Database(t, driver)
			s, err := models.Open(context.Background(), models.Options{Driver: string(cfg.Driver), DSN: cfg.DSN,
				ConnectTimeout: 20 * time.Second, PasswordCost: bcrypt.MinCost, SlowThreshold: time.Nanosecond,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			ctx := context.Background()
			if _, err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}

			const (
				username  = "zq-slowlog-keeper"
				password  = "correct horse battery staple"
				sessionID = "S3SS10N-7f3a9c1d2e4b5a6f"
				clientIP  = "203.0.113.77"
			)
			hash, err := bcrypt.GenerateFromPassword([]byte("another long passphrase"), bcrypt.MinCost)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.CreateUser(ctx, username, password, "test"); err != nil {
				t.Fatal(err)
			}
			err = s.Transaction(ctx, func(tx *gorm.DB) error {
				for _, st := range []struct {
					sql  string
					args []any
				}{
					{"UPDATE users SET password_hash = ? WHERE username = ?", []any{string(hash), username}},
					{"DELETE FROM sessions WHERE id_hash = ?", []any{sessionID}},
					{"DELETE FROM sessions WHERE client_ip = ? AND user_agent = ?", []any{clientIP, username}},
				} {
					if err := tx.Exec(st.sql, st.args...).Error; err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}

			got := logs.String()
			// The statements are there: logging did happen.
			for _, want := range []string{"UPDATE users SET password_hash = ? WHERE username = ?", "DELETE FROM sessions WHERE id_hash = ?", "INSERT INTO"} {
				if !strings.Contains(got, want) {
					t.Errorf("no slow-statement line with %q in the log:\n%.2000s", want, got)
				}
			}
			for name, value := range map[string]string{"password hash": string(hash), "bcrypt hash prefix": "$2a$", "session id": sessionID,
				"username": username, "client address": clientIP, "password": password} {
				if strings.Contains(got, value) {
					t.Errorf("the log holds the %s %q:\n%.2000s", name, value, got)
				}
			}
		})
	}
}
