package models_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

const keyAlphabet = "abcdefghijklmnopqrstuvwxyz234567"

// t0 is a whole-second time, so that it survives a round trip through either
// database unchanged.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// clock is a settable clock for Store.SetClock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// createKey makes a key or fails the test.
func createKey(tb testing.TB, s *models.Store, name string) (models.APIKey, string) {
	tb.Helper()
	k, key, err := s.CreateAPIKey(context.Background(), name, "tester")
	if err != nil {
		tb.Fatalf("CreateAPIKey(%q): %v", name, err)
	}
	return k, key
}

// listedKey returns the key with id as ListAPIKeys shows it.
func listedKey(tb testing.TB, s *models.Store, id int64) models.APIKey {
	tb.Helper()
	keys, err := s.ListAPIKeys(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	for _, k := range keys {
		if k.ID == id {
			return k
		}
	}
	tb.Fatalf("key %d not listed", id)
	return models.APIKey{}
}

func fmtTime(t *time.Time) string {
	if t == nil {
		return "<nil>"
	}
	return t.String()
}

func TestGenerateKey(t *testing.T) {
	t.Parallel()
	const n = 1000
	keys := map[string]bool{}
	prefixes := map[string]bool{}
	for range n {
		key := models.GenerateKey()
		if len(key) != 45 || !strings.HasPrefix(key, "pst_") || key[models.KeyPrefixLen] != '_' {
			t.Fatalf("key %q: want pst_ + 8 chars + _ + 32 chars", key)
		}
		for i, c := range key[4:] {
			if i+4 != models.KeyPrefixLen && !strings.ContainsRune(keyAlphabet, c) {
				t.Fatalf("key %q has %q outside the lower-case base32 alphabet", key, c)
			}
		}
		if keys[key] {
			t.Fatalf("key %q generated twice", key)
		}
		keys[key] = true
		prefixes[key[:models.KeyPrefixLen]] = true
	}
	if len(prefixes) != n {
		t.Errorf("%d distinct prefixes in %d keys", len(prefixes), n)
	}
}

func TestHashKey(t *testing.T) {
	t.Parallel()
	if got, want := models.HashKey("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; got != want {
		t.Errorf("HashKey(abc) = %s, want %s", got, want)
	}
	key := models.GenerateKey()
	sum := sha256.Sum256([]byte(key))
	if got := models.HashKey(key); got != hex.EncodeToString(sum[:]) {
		t.Errorf("HashKey(%q) = %s, want its hex SHA-256", key, got)
	}
}

func TestValidateKeyName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string // "" means invalid
	}{
		{"simple", "partner app", "partner app"},
		{"trimmed", "  partner app \n", "partner app"},
		{"100 characters", strings.Repeat("k", 100), strings.Repeat("k", 100)},
		{"100 code points", strings.Repeat("é", 100), strings.Repeat("é", 100)},
		{"empty", "", ""},
		{"blank", " \t ", ""},
		{"101 characters", strings.Repeat("k", 101), ""},
		{"101 code points", strings.Repeat("é", 101), ""},
		{"invalid utf-8", "app\xff", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := models.ValidateKeyName(tt.in)
			if tt.want != "" {
				if err != nil || got != tt.want {
					t.Fatalf("ValidateKeyName(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
				}
				return
			}
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeInvalidRequest || e.Field("name") == "" {
				t.Fatalf("ValidateKeyName(%q) error = %v, want invalid_request on name", tt.in, err)
			}
		})
	}
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		k, key := createKey(t, s, "partner")
		if k.ID == 0 || k.Name != "partner" || k.CreatedBy != "tester" || k.Prefix != key[:models.KeyPrefixLen] ||
			k.Hash != models.HashKey(key) || k.CreatedAt.IsZero() || k.LastUsedAt != nil || k.Revoked() {
			t.Fatalf("CreateAPIKey = %+v for key %s", k, key)
		}
		got, err := s.Authenticate(ctx, key)
		if err != nil {
			t.Fatalf("Authenticate(new key): %v", err)
		}
		if got.ID != k.ID || got.Name != "partner" {
			t.Fatalf("Authenticate = %+v, want key %d", got, k.ID)
		}

		// A second key whose lookup id is unknown but whose shape is right.
		unknown := models.GenerateKey()
		last := key[len(key)-1]
		other := byte('a')
		if last == 'a' {
			other = 'b'
		}
		rejected := []struct {
			name string
			key  string
		}{
			{"wrong secret, same prefix", key[:len(key)-1] + string(other)},
			{"other secret, same prefix", key[:models.KeyPrefixLen+1] + unknown[models.KeyPrefixLen+1:]},
			{"unknown key", unknown},
			{"empty", ""},
			{"prefix only", key[:models.KeyPrefixLen]},
			{"truncated", key[:len(key)-1]},
			{"extra character", key + "a"},
			{"upper case", strings.ToUpper(key)},
			{"upper-case secret", key[:models.KeyPrefixLen+1] + strings.ToUpper(key[models.KeyPrefixLen+1:])},
			{"other scheme", "sk_" + key[3:]},
			{"separator replaced", key[:models.KeyPrefixLen] + "-" + key[models.KeyPrefixLen+1:]},
			{"outside alphabet", key[:len(key)-1] + "1"},
			{"with bearer word", "Bearer " + key},
			{"surrounding space", " " + key},
			{"hash instead of key", models.HashKey(key)},
		}
		for _, tt := range rejected {
			t.Run(tt.name, func(t *testing.T) {
				got, err := s.Authenticate(ctx, tt.key)
				if !errors.Is(err, models.ErrUnauthorized) || models.ErrorCode(err) != models.CodeUnauthorized {
					t.Fatalf("Authenticate(%q) = %+v, %v; want ErrUnauthorized", tt.key, got, err)
				}
				if got.ID != 0 {
					t.Fatalf("Authenticate(%q) returned key %d with an error", tt.key, got.ID)
				}
			})
		}
		if _, err := s.Authenticate(ctx, key); err != nil {
			t.Fatalf("the right key no longer works after wrong ones: %v", err)
		}
	})
}

func TestRevokeAPIKey(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		c := &clock{t0}
		s.SetClock(c.now)
		k, key := createKey(t, s, "to revoke")
		keep, keepKey := createKey(t, s, "to keep")
		if _, err := s.Authenticate(ctx, key); err != nil {
			t.Fatal(err)
		}

		c.t = t0.Add(time.Hour)
		revoked, err := s.RevokeAPIKey(ctx, k.ID, "admin")
		if err != nil {
			t.Fatalf("RevokeAPIKey: %v", err)
		}
		first := c.t
		if !revoked.Revoked() || !revoked.RevokedAt.Equal(first) || revoked.ID != k.ID {
			t.Fatalf("RevokeAPIKey = %+v, want revoked at %v", revoked, first)
		}
		if _, err := s.Authenticate(ctx, key); !errors.Is(err, models.ErrUnauthorized) {
			t.Fatalf("Authenticate(revoked key) = %v, want ErrUnauthorized", err)
		}
		if _, err := s.Authenticate(ctx, keepKey); err != nil {
			t.Fatalf("revoking one key broke another: %v", err)
		}
		if got := listedKey(t, s, k.ID); got.RevokedAt == nil || !got.RevokedAt.Equal(first) {
			t.Fatalf("listed revoked_at = %s, want %v", fmtTime(got.RevokedAt), first)
		}
		if got := listedKey(t, s, keep.ID); got.Revoked() {
			t.Fatalf("the other key is listed as revoked: %+v", got)
		}

		c.t = t0.Add(2 * time.Hour)
		again, err := s.RevokeAPIKey(ctx, k.ID, "admin")
		if err != nil {
			t.Fatalf("second RevokeAPIKey: %v", err)
		}
		if again.RevokedAt == nil || !again.RevokedAt.Equal(first) {
			t.Fatalf("second revoke returned revoked_at %s, want the first time %v", fmtTime(again.RevokedAt), first)
		}
		if got := listedKey(t, s, k.ID); got.RevokedAt == nil || !got.RevokedAt.Equal(first) {
			t.Fatalf("after second revoke, listed revoked_at = %s, want %v", fmtTime(got.RevokedAt), first)
		}
		if _, err := s.Authenticate(ctx, key); !errors.Is(err, models.ErrUnauthorized) {
			t.Fatalf("Authenticate(revoked twice) = %v, want ErrUnauthorized", err)
		}

		for _, id := range []int64{k.ID + 1000, 0, -1} {
			if _, err := s.RevokeAPIKey(ctx, id, "admin"); models.ErrorCode(err) != models.CodeNotFound || !errors.Is(err, &models.Error{Code: models.CodeNotFound}) {
				t.Errorf("RevokeAPIKey(%d) = %v, want not_found", id, err)
			}
		}
	})
}

func TestListAPIKeys(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		keys, err := s.ListAPIKeys(ctx)
		if err != nil || keys == nil || len(keys) != 0 {
			t.Fatalf("ListAPIKeys(empty) = %#v, %v; want an empty, non-nil slice", keys, err)
		}
		names := []string{"first", "second", "third"}
		secrets := map[string]string{}
		for _, name := range names {
			_, key := createKey(t, s, name)
			secrets[name] = key
		}
		keys, err = s.ListAPIKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != len(names) {
			t.Fatalf("listed %d keys, want %d", len(keys), len(names))
		}
		for i, k := range keys {
			want := names[len(names)-1-i]
			if k.Name != want {
				t.Errorf("key %d is %q, want %q (newest first)", i, k.Name, want)
			}
			if i > 0 && k.ID >= keys[i-1].ID {
				t.Errorf("ids not descending: %d after %d", k.ID, keys[i-1].ID)
			}
			key := secrets[k.Name]
			if k.Prefix != key[:models.KeyPrefixLen] || k.Hash != models.HashKey(key) || k.CreatedBy != "tester" {
				t.Errorf("listed %+v, want prefix %s and the key's hash", k, key[:models.KeyPrefixLen])
			}
			if shown := fmt.Sprintf("%+v", k); strings.Contains(shown, key[models.KeyPrefixLen+1:]) {
				t.Errorf("listed key carries its secret: %s", shown)
			}
		}
	})
}

// onceAMinute are the steps of a key's time that is written at most once a
// minute (its last use, its last deprecated call): when it is noted, after
// t0, and the time then stored.
var onceAMinute = []struct {
	name  string
	after time.Duration
	want  time.Time
}{
	{"first is written", 0, t0},
	{"30 s later keeps it", 30 * time.Second, t0},
	{"59 s later keeps it", 59 * time.Second, t0},
	{"61 s later updates it", 61 * time.Second, t0.Add(61 * time.Second)},
	{"30 s after the update keeps it", 91 * time.Second, t0.Add(61 * time.Second)},
	{"an hour later updates it", time.Hour, t0.Add(time.Hour)},
}

func TestAPIKeyLastUsed(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		c := &clock{t0}
		s.SetClock(c.now)
		k, key := createKey(t, s, "partner")
		if got := listedKey(t, s, k.ID); got.LastUsedAt != nil {
			t.Fatalf("new key has last_used_at %v", got.LastUsedAt)
		}
		for _, st := range onceAMinute {
			c.t = t0.Add(st.after)
			got, err := s.Authenticate(ctx, key)
			if err != nil {
				t.Fatalf("%s: Authenticate: %v", st.name, err)
			}
			if got.LastUsedAt == nil || !got.LastUsedAt.Equal(st.want) {
				t.Errorf("%s: Authenticate returned last_used_at %s, want %v", st.name, fmtTime(got.LastUsedAt), st.want)
			}
			if stored := listedKey(t, s, k.ID).LastUsedAt; stored == nil || !stored.Equal(st.want) {
				t.Errorf("%s: stored last_used_at %s, want %v", st.name, fmtTime(stored), st.want)
			}
		}
	})
}

func TestCreateAPIKeyInvalidName(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		for _, name := range []string{"", "   ", strings.Repeat("n", 101), strings.Repeat("🔑", 101)} {
			k, key, err := s.CreateAPIKey(ctx, name, "tester")
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeInvalidRequest || e.Field("name") == "" {
				t.Errorf("CreateAPIKey(%d-byte name) = %v, want invalid_request on name", len(name), err)
			}
			if key != "" || k.ID != 0 {
				t.Errorf("CreateAPIKey(bad name) returned key %q, record %+v", key, k)
			}
		}
		k, _ := createKey(t, s, strings.Repeat("🔑", 100))
		if got := listedKey(t, s, k.ID); got.Name != strings.Repeat("🔑", 100) {
			t.Errorf("100-emoji name stored as %q", got.Name)
		}
		keys, err := s.ListAPIKeys(ctx)
		if err != nil || len(keys) != 1 {
			t.Fatalf("after rejected names, %d keys listed (err %v), want 1", len(keys), err)
		}
	})
}

// TestAPIKeyAudit reads audit_events through SQLDB: the Store has no query
// for the audit trail yet.
func TestAPIKeyAudit(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		k, key := createKey(t, s, "audited")
		if _, err := s.RevokeAPIKey(ctx, k.ID, "alice"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RevokeAPIKey(ctx, k.ID, "bob"); err != nil {
			t.Fatal(err)
		}
		rows, err := s.SQLDB().QueryContext(ctx,
			"SELECT actor, action, detail FROM audit_events WHERE target_type = ? AND target_id = ? ORDER BY id", models.TargetAPIKey, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			var actor, action, detail string
			if err := rows.Scan(&actor, &action, &detail); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(detail, key[models.KeyPrefixLen+1:]) || strings.Contains(detail, k.Hash) {
				t.Errorf("audit detail %q carries the key's secret or hash", detail)
			}
			if !strings.Contains(detail, k.Prefix) {
				t.Errorf("audit detail %q does not name the key's prefix", detail)
			}
			got = append(got, actor+" "+action)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		want := []string{"tester " + models.ActionKeyCreated, "alice " + models.ActionKeyRevoked}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("audit events = %q, want %q (one revocation recorded)", got, want)
		}
	})
}
