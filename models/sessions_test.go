package models_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

// The table keeps only the SHA-256 of a session id: the id itself appears
// nowhere, and the stored hash is not an id that loads the session.
func TestSessionsStoreOnlyHashes(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		now := time.Now().UTC()
		id, err := s.CreateSession(ctx, models.Session{UserID: 7, Data: []byte("values"), CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if !models.IsSessionID(id) {
			t.Fatalf("session id %q is not 32 random bytes, base64url", id)
		}
		var key string
		var n int
		row := s.SQLDB().QueryRowContext(ctx, "SELECT id_hash, COUNT(*) FROM sessions GROUP BY id_hash")
		if err := row.Scan(&key, &n); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(id))
		if n != 1 || key != hex.EncodeToString(sum[:]) {
			t.Errorf("stored key %q (%d rows), want the hex SHA-256 of the id", key, n)
		}
		var found int
		if err := s.SQLDB().QueryRowContext(ctx, "SELECT COUNT(*) FROM sessions WHERE id_hash = ? OR data = ? OR client_ip = ? OR user_agent = ?",
			id, id, id, id).Scan(&found); err != nil || found != 0 {
			t.Errorf("the raw id is stored (%d rows, %v)", found, err)
		}
		if got, err := s.GetSession(ctx, id); err != nil || got.UserID != 7 || string(got.Data) != "values" {
			t.Errorf("GetSession(id) = %+v, %v", got, err)
		}
		if _, err := s.GetSession(ctx, key); models.ErrorCode(err) != models.CodeNotFound {
			t.Errorf("GetSession(stored hash) = %v, want not_found", err)
		}
	})
}

func TestSessionLifecycle(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		now := time.Now().UTC().Truncate(time.Microsecond)
		create := func(uid int64, expires time.Time) string {
			t.Helper()
			id, err := s.CreateSession(ctx, models.Session{UserID: uid, Data: []byte{1}, CreatedAt: now, UpdatedAt: now, ExpiresAt: expires,
				ClientIP: "192.0.2.1", UserAgent: strings.Repeat("é", 200) + "\xff"})
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		a := create(1, now.Add(time.Hour))
		got, err := s.GetSession(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		// The user agent is cut to its column, to valid UTF-8, whole characters.
		if got.ClientIP != "192.0.2.1" || len(got.UserAgent) > 255 || !strings.HasPrefix(got.UserAgent, "éé") || strings.ContainsRune(got.UserAgent, '\uFFFD') {
			t.Errorf("stored client %q / %q", got.ClientIP, got.UserAgent)
		}

		// Update replaces the data and the times.
		later := now.Add(time.Minute)
		if err := s.UpdateSession(ctx, a, []byte{2}, later, later.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		got, err = s.GetSession(ctx, a)
		if err != nil || string(got.Data) != "\x02" || !got.UpdatedAt.Equal(later) || !got.ExpiresAt.Equal(later.Add(time.Hour)) || !got.CreatedAt.Equal(now) {
			t.Errorf("after update: %+v, %v", got, err)
		}
		// Deleted stays deleted: a late update does not bring it back.
		if err := s.DeleteSession(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := s.UpdateSession(ctx, a, []byte{3}, later, later.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetSession(ctx, a); models.ErrorCode(err) != models.CodeNotFound {
			t.Errorf("deleted session: %v, want not_found", err)
		}

		// DeleteUserSessions ends every session of one account, and no other.
		b1, b2, other := create(2, now.Add(time.Hour)), create(2, now.Add(time.Hour)), create(3, now.Add(time.Hour))
		if n, err := s.DeleteUserSessions(ctx, 2); err != nil || n != 2 {
			t.Errorf("DeleteUserSessions = %d, %v; want 2", n, err)
		}
		for _, id := range []string{b1, b2} {
			if _, err := s.GetSession(ctx, id); models.ErrorCode(err) != models.CodeNotFound {
				t.Errorf("session of the account: %v, want not_found", err)
			}
		}
		if _, err := s.GetSession(ctx, other); err != nil {
			t.Errorf("another account's session: %v", err)
		}

		// DeleteExpiredSessions removes only expired rows.
		create(3, time.Now().UTC().Add(-time.Minute))
		if n, err := s.DeleteExpiredSessions(ctx); err != nil || n != 1 {
			t.Errorf("DeleteExpiredSessions = %d, %v; want 1", n, err)
		}
		if _, err := s.GetSession(ctx, other); err != nil {
			t.Errorf("live session after cleaning: %v", err)
		}
	})
}

func TestIsSessionID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{strings.Repeat("A", 43), true},
		{"abcdefghijklmnopqrstuvwxyz0123456789-_ABCDE", true},
		{strings.Repeat("A", 42), false},
		{strings.Repeat("A", 44), false},
		{strings.Repeat("A", 42) + "=", false},
		{strings.Repeat("A", 42) + "+", false},
		{strings.Repeat("A", 42) + "/", false},
		{strings.Repeat("a", 64), false}, // a stored hash
		{"", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			if got := models.IsSessionID(tt.in); got != tt.want {
				t.Errorf("IsSessionID(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

// TestAccountActionsDeleteSessionRows checks that disabling an account,
// ending its sessions and resetting its password delete its stored
// sessions at once (the session-version bump alone would leave the rows
// until they expire), and nobody else's.
func TestAccountActionsDeleteSessionRows(t *testing.T) {
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		alice, err := s.CreateUser(ctx, "alice", "correct horse battery staple", "test")
		if err != nil {
			t.Fatal(err)
		}
		bob, err := s.CreateUser(ctx, "bob", "another long passphrase", "test")
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		create := func(uid int64) string {
			t.Helper()
			id, err := s.CreateSession(ctx, models.Session{UserID: uid, Data: []byte{1}, CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		keep := create(alice.ID)
		actions := []struct {
			name string
			do   func() error
		}{
			{"disable", func() error { _, err := s.DisableUser(ctx, bob.ID, "alice"); return err }},
			{"end sessions", func() error { _, err := s.EndSessions(ctx, bob.ID, "alice"); return err }},
			{"reset password", func() error { _, _, err := s.ResetPassword(ctx, bob.ID, "alice"); return err }},
		}
		for _, a := range actions {
			ids := []string{create(bob.ID), create(bob.ID)}
			if err := a.do(); err != nil {
				t.Fatalf("%s: %v", a.name, err)
			}
			for _, id := range ids {
				if _, err := s.GetSession(ctx, id); models.ErrorCode(err) != models.CodeNotFound {
					t.Errorf("%s: bob's session still stored (%v)", a.name, err)
				}
			}
			if _, err := s.GetSession(ctx, keep); err != nil {
				t.Errorf("%s: alice's session: %v", a.name, err)
			}
			if _, err := s.EnableUser(ctx, bob.ID, "alice"); err != nil {
				t.Fatal(err)
			}
		}
	})
}
