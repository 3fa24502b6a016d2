package models_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

func TestParseScopes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		entries []string
		want    models.Scopes
		wantErr string
	}{
		{"none", nil, 0, ""},
		{"read", []string{"pets:read"}, models.ScopePetsRead, ""},
		{"write", []string{"pets:write"}, models.ScopePetsWrite, ""},
		{"repeated flags", []string{"pets:read", "pets:write"}, models.DefaultScopes, ""},
		{"comma separated", []string{"pets:read,pets:write"}, models.DefaultScopes, ""},
		{"comma and spaces", []string{" pets:write , metrics:read "}, models.ScopePetsWrite | models.ScopeMetricsRead, ""},
		{"as stored", []string{"pets:read pets:write"}, models.DefaultScopes, ""},
		{"twice", []string{"pets:read", "pets:read"}, models.ScopePetsRead, ""},
		{"empty entry", []string{"", ","}, 0, ""},
		{"unknown", []string{"pets:read", "pets:delete"}, 0, `Unknown scope "pets:delete": the scopes are pets:read, pets:write and metrics:read.`},
		{"case matters", []string{"Pets:Read"}, 0, `Unknown scope "Pets:Read"`},
		{"bare word", []string{"pets"}, 0, `Unknown scope "pets"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := models.ParseScopes(tt.entries)
			if tt.wantErr != "" {
				var e *models.Error
				if !errors.As(err, &e) || e.Code != models.CodeInvalidRequest || !strings.Contains(e.Field(models.FieldScopes), tt.wantErr) {
					t.Fatalf("ParseScopes(%q) = %v, %v; want a scopes field error %q", tt.entries, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseScopes(%q) = %v, %v; want %v", tt.entries, got, err, tt.want)
			}
		})
	}
}

func TestScopesString(t *testing.T) {
	t.Parallel()
	for s, want := range map[models.Scopes]string{
		0:                       "",
		models.ScopePetsRead:    "pets:read",
		models.DefaultScopes:    "pets:read pets:write",
		models.ScopeMetricsRead: "metrics:read",
		models.ScopePetsRead | models.ScopeMetricsRead: "pets:read metrics:read",
	} {
		if got := s.String(); got != want {
			t.Errorf("Scopes(%d).String() = %q, want %q", s, got, want)
		}
	}
	// Stored names this version does not know are ignored, not refused.
	var s models.Scopes
	if err := s.Scan([]byte("pets:read pets:delete")); err != nil || s != models.ScopePetsRead {
		t.Errorf("Scan of an unknown name = %v, %v; want pets:read", s, err)
	}
	if err := s.Scan(42); err == nil {
		t.Error("Scan of a number succeeded")
	}
}

func TestParseExpiry(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 10, 30, 15, 500, time.UTC)
	at := func(s string) *time.Time {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			panic(err)
		}
		return &t
	}
	tests := []struct {
		raw     string
		want    *time.Time
		wantErr string
	}{
		{"", nil, ""},
		{"  ", nil, ""},
		{"90d", at("2027-02-21T10:30:15Z"), ""},
		{"1d", at("2026-11-24T10:30:15Z"), ""},
		{"36500d", at("2126-10-30T10:30:15Z"), ""},
		{"2027-03-01", at("2027-03-01T00:00:00Z"), ""},
		{"2026-11-24", at("2026-11-24T00:00:00Z"), ""},
		{"2027-03-01T12:00:00Z", at("2027-03-01T12:00:00Z"), ""},
		{"2027-03-01T12:00:00+02:00", at("2027-03-01T10:00:00Z"), ""},
		{"2026-11-23T10:30:16Z", at("2026-11-23T10:30:16Z"), ""},

		{"0d", nil, "Expiry in days must be from 1d to 36500d."},
		{"36501d", nil, "Expiry in days must be from 1d to 36500d."},
		{"99999999999999999999d", nil, "Expiry in days must be from 1d to 36500d."},
		{"-5d", nil, `Expiry "-5d" is not a number of days (90d), a date (2027-03-01) or an RFC 3339 time (2027-03-01T12:00:00Z).`},
		{"d", nil, `Expiry "d" is not`},
		{"90", nil, `Expiry "90" is not`},
		{"90h", nil, `Expiry "90h" is not`},
		{"1.5d", nil, `Expiry "1.5d" is not`},
		{"soon", nil, `Expiry "soon" is not`},
		{"2027-02-30", nil, `Expiry "2027-02-30" is not`},
		{"01/03/2027", nil, `Expiry "01/03/2027" is not`},
		{"2027-03-01 12:00:00", nil, `is not`},
		{"2026-11-23", nil, "Expiry 2026-11-23T00:00:00Z is in the past: give a later time."},
		{"2020-01-01T00:00:00Z", nil, "Expiry 2020-01-01T00:00:00Z is in the past: give a later time."},
		{"2026-11-23T10:30:15Z", nil, "is in the past"}, // a second early: before now's 500 ns
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, err := models.ParseExpiry(tt.raw, now)
			if tt.wantErr != "" {
				var e *models.Error
				if !errors.As(err, &e) || !strings.Contains(e.Field(models.FieldExpires), tt.wantErr) {
					t.Fatalf("ParseExpiry(%q) = %v, %v; want an expires field error %q", tt.raw, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || (got == nil) != (tt.want == nil) || (got != nil && (!got.Equal(*tt.want) || got.Location() != time.UTC)) {
				t.Fatalf("ParseExpiry(%q) = %v, %v; want %v in UTC", tt.raw, fmtTime(got), err, fmtTime(tt.want))
			}
		})
	}
}

// Every bad field of a key is reported at once, each under its name.
func TestAPIKeyInputValidate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	_, err := models.APIKeyInput{Name: " ", Scopes: nil, Expires: "yesterday"}.Validate(now)
	var e *models.Error
	if !errors.As(err, &e) || len(e.Fields) != 3 || e.Field(models.FieldName) != "Name is required." ||
		e.Field(models.FieldScopes) != "Choose at least one scope." || !strings.HasPrefix(e.Field(models.FieldExpires), `Expiry "yesterday"`) {
		t.Fatalf("Validate = %v, want three field errors", err)
	}
	nk, err := models.APIKeyInput{Name: " partner ", Scopes: []string{"pets:read"}, Expires: "2027-01-01"}.Validate(now)
	if err != nil || nk.Name != "partner" || nk.Scopes != models.ScopePetsRead || nk.ExpiresAt == nil ||
		!nk.ExpiresAt.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("Validate = %+v, %v", nk, err)
	}
}

// A key's scopes and expiry are stored and read back by every reader:
// the list, one key, and authentication.
func TestCreateAPIKeyFrom(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		s.SetClock(func() time.Time { return t0 })
		k, key, err := s.CreateAPIKeyFrom(ctx, models.APIKeyInput{Name: "reader", Scopes: []string{"pets:read", "metrics:read"}, Expires: "30d"}, "tester")
		if err != nil {
			t.Fatal(err)
		}
		wantExpiry := t0.Add(30 * 24 * time.Hour)
		check := func(what string, got models.APIKey) {
			t.Helper()
			if got.Scopes != models.ScopePetsRead|models.ScopeMetricsRead || got.ExpiresAt == nil || !got.ExpiresAt.Equal(wantExpiry) {
				t.Errorf("%s: scopes %q, expires %s; want pets:read metrics:read, %v", what, got.Scopes, fmtTime(got.ExpiresAt), wantExpiry)
			}
		}
		check("created", k)
		check("listed", listedKey(t, s, k.ID))
		got, err := s.GetAPIKey(ctx, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		check("got", got)
		if got, err = s.Authenticate(ctx, key); err != nil {
			t.Fatal(err)
		}
		check("authenticated", got)

		// CreateAPIKey gives the default scopes and no expiry.
		d, _ := createKey(t, s, "default")
		if d = listedKey(t, s, d.ID); d.Scopes != models.DefaultScopes || d.ExpiresAt != nil || d.DeprecatedCallAt != nil {
			t.Errorf("default key: scopes %q, expires %s, deprecated call %s", d.Scopes, fmtTime(d.ExpiresAt), fmtTime(d.DeprecatedCallAt))
		}

		// A refused input stores nothing.
		_, _, err = s.CreateAPIKeyFrom(ctx, models.APIKeyInput{Name: "late", Scopes: []string{"pets:read"}, Expires: "2020-01-01"}, "tester")
		if models.ErrorCode(err) != models.CodeInvalidRequest {
			t.Fatalf("expiry in the past: %v", err)
		}
		if keys, _ := s.ListAPIKeys(ctx); len(keys) != 2 {
			t.Errorf("%d keys after a refused create, want 2", len(keys))
		}
	})
}

func TestRequireScope(t *testing.T) {
	t.Parallel()
	k := models.APIKey{Scopes: models.ScopePetsRead}
	if err := k.Require(models.ScopePetsRead); err != nil {
		t.Errorf("read key refused read: %v", err)
	}
	if err := k.Require(0); err != nil {
		t.Errorf("read key refused a request needing no scope: %v", err)
	}
	err := k.Require(models.ScopePetsWrite)
	var e *models.Error
	if !errors.As(err, &e) || e.Code != models.CodeInsufficientScope ||
		e.Message != "This API key lacks the pets:write scope this request needs (it has pets:read). Ask the store for a key with pets:write." {
		t.Errorf("read key asked for write: %v", err)
	}
	k.Scopes = models.ScopeMetricsRead
	if models.ErrorCode(k.Require(models.ScopePetsRead)) != models.CodeInsufficientScope {
		t.Error("a metrics-only key may read pets")
	}
}

// An expired key is refused on every call, from the cache too, and only a
// key whose secret matched is said to have expired.
func TestAuthenticateExpired(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		c := &clock{t0}
		s.SetClock(c.now)
		k, key, err := s.CreateAPIKeyFrom(ctx, models.APIKeyInput{Name: "short", Scopes: []string{"pets:read"}, Expires: "1d"}, "tester")
		if err != nil {
			t.Fatal(err)
		}
		expiry := t0.Add(24 * time.Hour)
		c.t = expiry.Add(-time.Second)
		if _, err := s.Authenticate(ctx, key); err != nil {
			t.Fatalf("a second before expiry: %v", err)
		}
		// Now cached: the expiry must be checked without reading the row.
		reads := s.CountReads()
		c.t = expiry
		_, err = s.Authenticate(ctx, key)
		var e *models.Error
		if !errors.As(err, &e) || e.Code != models.CodeUnauthorized || !errors.Is(err, models.ErrKeyExpired) ||
			e.Message != "This API key expired on 2030-01-03T03:04:05Z. Ask the store for a new key." {
			t.Fatalf("at expiry: %v, want unauthorized, expired on 2030-01-03T03:04:05Z", err)
		}
		if !errors.Is(err, models.ErrUnauthorized) {
			t.Error("an expired key is not an ErrUnauthorized")
		}
		if n := reads.Load(); n != 0 {
			t.Errorf("the cached key's expiry read the database %d times", n)
		}
		// Read from its row (past the cache's life), still expired.
		time.Sleep(models.KeyCacheTTL)
		if _, err := s.Authenticate(ctx, key); !errors.Is(err, models.ErrKeyExpired) {
			t.Errorf("read again after expiry: %v, want expired", err)
		}
		// A wrong secret is never told that the key expired.
		wrong := key[:len(key)-1] + map[bool]string{true: "b", false: "a"}[key[len(key)-1] == 'a']
		if _, err := s.Authenticate(ctx, wrong); !errors.Is(err, models.ErrUnauthorized) || errors.Is(err, models.ErrKeyExpired) {
			t.Errorf("wrong secret of an expired key: %v, want plain unauthorized", err)
		}
		// Revoked wins over expired: today's answer.
		if _, err := s.RevokeAPIKey(ctx, k.ID, "tester"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate(ctx, key); !errors.Is(err, models.ErrUnauthorized) || errors.Is(err, models.ErrKeyExpired) {
			t.Errorf("revoked expired key: %v, want plain unauthorized", err)
		}
		// Refused calls are not uses.
		if got := listedKey(t, s, k.ID).LastUsedAt; got == nil || !got.Equal(expiry.Add(-time.Second)) {
			t.Errorf("last used %s, want the one accepted call at %v", fmtTime(got), expiry.Add(-time.Second))
		}
	})
}

// A key's calls of the deprecated endpoint are noted at most once a minute,
// like its use, and the cached key carries the time written.
func TestNoteDeprecatedCall(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		c := &clock{t0}
		s.SetClock(c.now)
		k, key := createKey(t, s, "partner")
		other, _ := createKey(t, s, "other")
		for _, st := range onceAMinute {
			c.t = t0.Add(st.after)
			// As the API does: the key as authentication returned it.
			got, err := s.Authenticate(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			s.NoteDeprecatedCall(ctx, got)
			if stored := listedKey(t, s, k.ID).DeprecatedCallAt; stored == nil || !stored.Equal(st.want) {
				t.Errorf("%s: stored deprecated_call_at %s, want %v", st.name, fmtTime(stored), st.want)
			}
			// The cache learnt it: the next authentication carries it.
			if got, _ := s.Authenticate(ctx, key); got.DeprecatedCallAt == nil || !got.DeprecatedCallAt.Equal(st.want) {
				t.Errorf("%s: authenticated key's deprecated call %s, want %v", st.name, fmtTime(got.DeprecatedCallAt), st.want)
			}
		}
		if got := listedKey(t, s, other.ID).DeprecatedCallAt; got != nil {
			t.Errorf("the other key got a deprecated call at %v", got)
		}
		// Last use is its own column.
		if got := listedKey(t, s, k.ID).LastUsedAt; got == nil || !got.Equal(t0.Add(time.Hour)) {
			t.Errorf("last used %s, want %v", fmtTime(got), t0.Add(time.Hour))
		}
	})
}

// Within the minute, noting a call reads and writes nothing: the per-request
// cost of the deprecated endpoint's count.
func TestNoteDeprecatedCallThrottled(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		_, key := createKey(t, s, "partner")
		k, err := s.Authenticate(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		s.NoteDeprecatedCall(ctx, k)
		k, _ = s.Authenticate(ctx, key)
		writes := s.CountWrites()
		for range 100 {
			s.NoteDeprecatedCall(ctx, k)
		}
		if n := writes.Load(); n != 0 {
			t.Errorf("100 notes within the minute ran %d statements, want 0", n)
		}
	})
}

// Keys made before migration 8 keep what they could do: both pets scopes,
// no expiry.
func TestMigrationKeyScopes(t *testing.T) {
	t.Parallel()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := storeAt(t, driver, 7)
			key := models.GenerateKey()
			if _, err := s.SQLDB().Exec("INSERT INTO api_keys (name, prefix, hash, created_by, created_at) VALUES ('old', ?, ?, 'tester', ?)",
				key[:models.KeyPrefixLen], models.HashKey(key), "2026-01-02 03:04:05"); err != nil {
				t.Fatal(err)
			}
			if res, err := s.Migrate(ctx); err != nil || res.Version < 8 {
				t.Fatalf("Migrate = %+v, %v", res, err)
			}
			k, err := s.Authenticate(ctx, key)
			if err != nil || k.Scopes != models.DefaultScopes || k.ExpiresAt != nil || k.DeprecatedCallAt != nil {
				t.Fatalf("old key after migration 8: %+v, %v; want pets:read pets:write, no expiry", k, err)
			}
		})
	}
}
