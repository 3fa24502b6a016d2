package models

import (
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Scopes is the set of rights an API key grants. It is stored as the scope
// names separated by spaces, as OAuth 2.0 writes a scope (RFC 6749 section
// 3.3), and checked as a bit set on every request.
type Scopes uint8

// The known scopes. A key has at least one.
const (
	// ScopePetsRead allows the GET operations under /v1.
	ScopePetsRead Scopes = 1 << iota
	// ScopePetsWrite allows POST /v1/pets.
	ScopePetsWrite
	// ScopeMetricsRead is for /metrics behind an API key, should it ever be
	// served on the main address. Today /metrics is served only on the
	// private METRICS_ADDR, without authentication, so this scope guards
	// nothing yet. It is never granted unless asked for.
	ScopeMetricsRead
)

// DefaultScopes are the scopes of a key created without naming any (and of
// every key made before scopes existed).
const DefaultScopes = ScopePetsRead | ScopePetsWrite

// KnownScopes lists every scope, in the order they are shown.
var KnownScopes = []Scopes{ScopePetsRead, ScopePetsWrite, ScopeMetricsRead}

// scopeNames holds each scope's name, by bit.
var scopeNames = [...]string{"pets:read", "pets:write", "metrics:read"}

// Has reports whether s includes every scope of need.
func (s Scopes) Has(need Scopes) bool { return s&need == need }

// Names returns the names of the scopes in s, in KnownScopes order.
func (s Scopes) Names() []string {
	var names []string
	for i, name := range scopeNames {
		if s&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	return names
}

// String returns the scope names separated by spaces, as stored.
func (s Scopes) String() string { return strings.Join(s.Names(), " ") }

// Value stores the scopes as their names.
func (s Scopes) Value() (driver.Value, error) { return s.String(), nil }

// Scan reads stored scope names. A name this version does not know (one a
// newer instance wrote, during a rolling upgrade) is ignored rather than
// refused, so the key keeps the scopes this version knows.
func (s *Scopes) Scan(v any) error {
	var text string
	switch v := v.(type) {
	case string:
		text = v
	case []byte:
		text = string(v)
	default:
		return fmt.Errorf("scopes: cannot scan %T", v)
	}
	*s = 0
	for _, word := range strings.Fields(text) {
		if bit, ok := scopeByName(word); ok {
			*s |= bit
		}
	}
	return nil
}

func scopeByName(name string) (Scopes, bool) {
	for i, n := range scopeNames {
		if n == name {
			return 1 << i, true
		}
	}
	return 0, false
}

// scopeList says the known scopes in words: "pets:read, pets:write and
// metrics:read".
func scopeList() string {
	return strings.Join(scopeNames[:len(scopeNames)-1], ", ") + " and " + scopeNames[len(scopeNames)-1]
}

// ParseScopes reads scope names: each entry may hold several, separated by
// commas or spaces (--scope pets:read,pets:write). An unknown name is
// refused; no name at all gives 0.
func ParseScopes(entries []string) (Scopes, error) {
	var s Scopes
	for _, entry := range entries {
		for _, word := range strings.FieldsFunc(entry, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
			bit, ok := scopeByName(word)
			if !ok {
				return 0, fieldError(FieldScopes, fmt.Sprintf("Unknown scope %q: the scopes are %s.", word, scopeList()))
			}
			s |= bit
		}
	}
	return s, nil
}

// maxExpiryDays bounds an expiry given in days (a hundred years).
const maxExpiryDays = 36500

// ParseExpiry reads when a new key should expire, relative to now: "" is
// never (nil); "90d" is 90 days from now (to the second); a date such as
// 2027-03-01 is 00:00 UTC on that day, the first moment the key no longer
// works; an RFC 3339 time is that moment. The expiry must be after now.
func ParseExpiry(raw string, now time.Time) (*time.Time, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, nil
	}
	var at time.Time
	if days, ok := strings.CutSuffix(raw, "d"); ok && days != "" && strings.Trim(days, "0123456789") == "" {
		n, err := strconv.Atoi(days)
		if err != nil || n < 1 || n > maxExpiryDays {
			return nil, fieldError(FieldExpires, fmt.Sprintf("Expiry in days must be from 1d to %dd.", maxExpiryDays))
		}
		at = now.Add(time.Duration(n) * 24 * time.Hour).Truncate(time.Second)
	} else if t, err := time.Parse(time.DateOnly, raw); err == nil {
		at = t
	} else if t, err := time.Parse(time.RFC3339, raw); err == nil {
		at = t
	} else {
		return nil, fieldError(FieldExpires, fmt.Sprintf(
			"Expiry %q is not a number of days (90d), a date (2027-03-01) or an RFC 3339 time (2027-03-01T12:00:00Z).", raw))
	}
	at = at.UTC()
	if !at.After(now) {
		return nil, fieldError(FieldExpires, fmt.Sprintf("Expiry %s is in the past: give a later time.", at.Format(time.RFC3339)))
	}
	return &at, nil
}
