package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"petstore/internal/testkit"
	"petstore/models"
)

// Bad --scope and --expires values are refused in one line, exit 2, before
// the database is opened.
func TestAPIKeyCreateBadFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown scope", []string{"--scope", "pets:delete"}, `petstore: Unknown scope "pets:delete": the scopes are pets:read, pets:write and metrics:read.`},
		{"unknown among commas", []string{"--scope", "pets:read,admin"}, `petstore: Unknown scope "admin"`},
		{"unknown among repeats", []string{"--scope", "pets:read", "--scope", "Pets:Write"}, `petstore: Unknown scope "Pets:Write"`},
		{"empty scope", []string{"--scope", ""}, "petstore: Choose at least one scope."},
		{"only separators", []string{"--scope", " , "}, "petstore: Choose at least one scope."},
		{"blank name", []string{"--name", "  "}, "petstore: Name is required."},
		{"name with a control character", []string{"--name", "partner\x1b[2J"}, "petstore: Name must not contain control characters."},
		{"malformed expiry", []string{"--expires", "soon"}, `petstore: Expiry "soon" is not a number of days (90d), a date (2027-03-01) or an RFC 3339 time (2027-03-01T12:00:00Z).`},
		{"hours", []string{"--expires", "48h"}, `petstore: Expiry "48h" is not`},
		{"zero days", []string{"--expires", "0d"}, "petstore: Expiry in days must be from 1d to 36500d."},
		{"too many days", []string{"--expires", "36501d"}, "petstore: Expiry in days must be from 1d to 36500d."},
		{"past date", []string{"--expires", "2020-01-01"}, "petstore: Expiry 2020-01-01T00:00:00Z is in the past: give a later time."},
		{"past time", []string{"--expires", "2020-01-01T10:00:00+02:00"}, "petstore: Expiry 2020-01-01T08:00:00Z is in the past: give a later time."},
		{"impossible date", []string{"--expires", "2027-02-30"}, `petstore: Expiry "2027-02-30" is not`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runWithoutDatabase(t, append([]string{"apikey", "create", "--name", "partner"}, tt.args...)...)
			testkit.WantCode(t, r, 2)
			if line := testkit.WantOneLine(t, "stderr", r.Stderr); !strings.HasPrefix(line, tt.want) {
				t.Errorf("stderr %q, want %q", line, tt.want)
			}
		})
	}
}

func TestAPIKeyCreateHelp(t *testing.T) {
	t.Parallel()
	r := runWithoutDatabase(t, "apikey", "create", "--help")
	testkit.WantCode(t, r, 0)
	for _, want := range []string{
		"Usage: petstore apikey create --name NAME [--scope pets:read] [--scope pets:write] [--expires 90d|RFC 3339 time]",
		"-scope", "pets:read", "pets:write", "metrics:read", "(default pets:read,pets:write)", "commas",
		"-expires", "90d", "2027-03-01", "RFC 3339", "default: never",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("apikey create --help lacks %q:\n%s", want, r.Stdout)
		}
	}
}

// Keys get the scopes and expiry asked for; apikey list shows them, and a
// key past its expiry as expired.
func TestAPIKeyCreateScopesAndExpiry(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabase(t, func(t *testing.T, databaseURL string) {
		vars := map[string]string{"DATABASE_URL": databaseURL}
		ctx := context.Background()
		before := time.Now().Truncate(time.Second)
		keys := map[string]string{
			"default":   createKey(t, vars, "default"),
			"reader":    createKey(t, vars, "reader", "--scope", "pets:read", "--expires", "90d"),
			"writer":    createKey(t, vars, "writer", "--scope", "pets:write", "--expires", "2099-03-01"),
			"commas":    createKey(t, vars, "commas", "--scope", "pets:read,metrics:read", "--expires", "2099-03-01T12:00:00+02:00"),
			"repeated":  createKey(t, vars, "repeated", "--scope", "pets:write", "--scope", "pets:read"),
			"soon-over": createKey(t, vars, "soon-over", "--expires", time.Now().Add(2*time.Second).UTC().Format(time.RFC3339)),
		}
		after := time.Now()
		want := []struct {
			name    string
			scopes  models.Scopes
			listed  string
			expires string // RFC 3339, "-" none, "90d"
		}{
			{"default", models.DefaultScopes, "pets:read,pets:write", "-"},
			{"reader", models.ScopePetsRead, "pets:read", "90d"},
			{"writer", models.ScopePetsWrite, "pets:write", "2099-03-01T00:00:00Z"},
			{"commas", models.ScopePetsRead | models.ScopeMetricsRead, "pets:read,metrics:read", "2099-03-01T10:00:00Z"},
			{"repeated", models.DefaultScopes, "pets:read,pets:write", "-"},
		}
		store := testkit.OpenStore(t, databaseURL)
		rows := listKeys(t, vars)
		for _, w := range want {
			k, err := store.Authenticate(ctx, keys[w.name])
			if err != nil || k.Scopes != w.scopes {
				t.Errorf("%s: authenticates as %q, %v; want scopes %q", w.name, k.Scopes, err, w.scopes)
			}
			row := rows[w.name]
			if row.scopes != w.listed || row.state != "active" {
				t.Errorf("%s: listed scopes %q, state %q; want %q, active", w.name, row.scopes, row.state, w.listed)
			}
			switch w.expires {
			case "90d":
				at, err := time.Parse(time.RFC3339, row.expires)
				if err != nil || at.Before(before.Add(90*24*time.Hour)) || at.After(after.Add(90*24*time.Hour)) {
					t.Errorf("%s: expires %q, want 90 days after creation", w.name, row.expires)
				}
			default:
				if row.expires != w.expires {
					t.Errorf("%s: expires %q, want %q", w.name, row.expires, w.expires)
				}
			}
		}
		// Past its expiry, the list says so and the key is refused.
		time.Sleep(time.Until(after.Add(2 * time.Second).Truncate(time.Second).Add(time.Second)))
		if row := listKeys(t, vars)["soon-over"]; row.state != "expired" || row.revokedAt != "-" {
			t.Errorf("expired key's row %+v, want state expired", row)
		}
		if _, err := store.Authenticate(ctx, keys["soon-over"]); !errors.Is(err, models.ErrKeyExpired) {
			t.Errorf("expired key authenticates: %v", err)
		}
	})
}
