package models

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gorm.io/gorm"
)

// API keys look like pst_<8-char lookup id>_<32-char secret>, all base32
// lower-case. The "pst_" prefix makes a leaked key easy to recognise (and to
// scan for); the lookup id is stored in clear so a request finds its key with
// one indexed read; the whole key is stored only as a SHA-256 hash.
const (
	keyScheme    = "pst_"
	keyIDLen     = 8
	keySecretLen = 32
	// KeyPrefixLen is the length of the public part shown in lists: "pst_" and the lookup id.
	KeyPrefixLen = len(keyScheme) + keyIDLen
	keyLen       = KeyPrefixLen + 1 + keySecretLen

	// keyTimeEvery is how often a key's last-used and last-deprecated-call
	// times are written at most.
	keyTimeEvery = time.Minute
	// MaxKeyNameLength bounds an API key's name.
	MaxKeyNameLength = 100
)

// The fields of a key to create, besides FieldName, as FieldError names them.
const (
	FieldScopes  = "scopes"
	FieldExpires = "expires"
)

const keyAlphabet = "abcdefghijklmnopqrstuvwxyz234567"

// APIKey is a partner's credential for the /v1 API. The secret itself is
// never stored.
type APIKey struct {
	ID        int64
	Name      string
	Prefix    string
	Hash      string
	Scopes    Scopes
	CreatedBy string
	CreatedAt time.Time
	// ExpiresAt is the first moment the key is refused; nil: never.
	ExpiresAt  *time.Time
	LastUsedAt *time.Time
	// DeprecatedCallAt is when the key last called the deprecated
	// GET /v1/pets/{petId}, to within a minute; nil: never.
	DeprecatedCallAt *time.Time
	RevokedAt        *time.Time
}

// Revoked reports whether the key has been revoked.
func (k APIKey) Revoked() bool { return k.RevokedAt != nil }

// Expired reports whether the key has expired at now.
func (k *APIKey) Expired(now time.Time) bool { return k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) }

// Require returns nil when the key has every scope of need, else the
// insufficient_scope refusal naming what is missing.
func (k *APIKey) Require(need Scopes) error {
	if k.Scopes.Has(need) {
		return nil
	}
	return &Error{Code: CodeInsufficientScope, Message: fmt.Sprintf(
		"This API key lacks the %s scope this request needs (it has %s). Ask the store for a key with %[1]s.",
		strings.Join((need&^k.Scopes).Names(), " and "), strings.Join(k.Scopes.Names(), " and "))}
}

// ErrKeyExpired is the cause (Error.Err) of the refusal of an expired key,
// which is otherwise an ErrUnauthorized with its own message. Only a key
// whose secret matched is said to have expired.
var ErrKeyExpired = errors.New("api key expired")

// expiredKey is the refusal of a key that expired at at.
func expiredKey(at time.Time) error {
	return &Error{Code: CodeUnauthorized, Err: ErrKeyExpired,
		Message: "This API key expired on " + at.UTC().Format(time.RFC3339) + ". Ask the store for a new key."}
}

// GenerateKey returns a new random key, 160 bits of secret plus the lookup id.
func GenerateKey() string {
	var b strings.Builder
	b.Grow(keyLen)
	b.WriteString(keyScheme)
	b.WriteString(randomString(keyIDLen))
	b.WriteByte('_')
	b.WriteString(randomString(keySecretLen))
	return b.String()
}

func randomString(n int) string {
	buf := make([]byte, n)
	if _, err := rand.Read(buf); err != nil {
		panic("crypto/rand failed: " + err.Error()) // never returns an error on Linux
	}
	for i, c := range buf {
		buf[i] = keyAlphabet[int(c)%len(keyAlphabet)] // 256 % 32 == 0: no bias
	}
	return string(buf)
}

// HashKey returns the hex SHA-256 of a key, as stored.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// splitKey checks a key's shape and returns its public prefix.
func splitKey(key string) (string, bool) {
	if len(key) != keyLen || !strings.HasPrefix(key, keyScheme) || key[KeyPrefixLen] != '_' {
		return "", false
	}
	for i := len(keyScheme); i < len(key); i++ {
		if i != KeyPrefixLen && strings.IndexByte(keyAlphabet, key[i]) < 0 {
			return "", false
		}
	}
	return key[:KeyPrefixLen], true
}

// ValidateKeyName trims an API key's name and checks it.
func ValidateKeyName(raw string) (string, error) {
	name := strings.TrimSpace(raw)
	msg := ""
	switch {
	case name == "":
		msg = "Name is required."
	case !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxKeyNameLength:
		msg = fmt.Sprintf("Name must be at most %d characters of text.", MaxKeyNameLength)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		// Names are printed raw by `petstore apikey list`: no terminal escapes.
		msg = "Name must not contain control characters."
	default:
		msg = hiddenCharMessage(name)
	}
	if msg != "" {
		return "", fieldError(FieldName, msg)
	}
	return name, nil
}

// APIKeyInput is a key to create as typed in the console's form or given
// to apikey create.
type APIKeyInput struct {
	Name string
	// Scopes are the scope names asked for (ParseScopes); at least one.
	Scopes []string
	// Expires is "" (never) or an expiry as ParseExpiry reads it.
	Expires string
}

// NewAPIKey is a validated key to create.
type NewAPIKey struct {
	Name      string
	Scopes    Scopes
	ExpiresAt *time.Time
}

// Validate checks every field of in, at now (expiries are relative to it),
// and reports all the bad ones at once.
func (in APIKeyInput) Validate(now time.Time) (NewAPIKey, error) {
	var v validation
	var nk NewAPIKey
	var err error
	if nk.Name, err = ValidateKeyName(in.Name); err != nil {
		v.add(FieldName, err.(*Error).Message)
	}
	if nk.Scopes, err = ParseScopes(in.Scopes); err != nil {
		v.add(FieldScopes, err.(*Error).Message)
	} else if nk.Scopes == 0 {
		v.add(FieldScopes, "Choose at least one scope.")
	}
	if nk.ExpiresAt, err = ParseExpiry(in.Expires, now); err != nil {
		v.add(FieldExpires, err.(*Error).Message)
	}
	return nk, v.err()
}

// CreateAPIKeyFrom makes the key in asks for, for creator, and returns the
// stored record and the key itself, which is shown once and never again.
// Expiries are checked against the store's clock.
func (s *Store) CreateAPIKeyFrom(ctx context.Context, in APIKeyInput, creator string) (APIKey, string, error) {
	nk, err := in.Validate(s.now())
	if err != nil {
		return APIKey{}, "", err
	}
	for range 3 { // a prefix collision (1 in 2^40 per pair) is retried
		k, key := s.newAPIKey(nk, creator)
		err = s.transaction(ctx, func(tx *gorm.DB) error { return insertAPIKey(tx, &k) })
		if err == nil {
			s.addKeyPrefix(k.Prefix)
			return k, key, nil
		}
		if !isDuplicate(err) {
			break
		}
	}
	return APIKey{}, "", s.dbErr("create api key", err)
}

// newAPIKey returns a new key and its record, not yet stored.
func (s *Store) newAPIKey(nk NewAPIKey, creator string) (APIKey, string) {
	key := GenerateKey()
	return APIKey{Name: nk.Name, Prefix: key[:KeyPrefixLen], Hash: HashKey(key), Scopes: nk.Scopes,
		CreatedBy: creator, CreatedAt: s.now(), ExpiresAt: nk.ExpiresAt}, key
}

// insertAPIKey stores k and its audit event within tx.
func insertAPIKey(tx *gorm.DB, k *APIKey) error {
	k.ID = 0 // a retried transaction inserts afresh
	if err := tx.Create(k).Error; err != nil {
		return err
	}
	return tx.Create(&AuditEvent{At: k.CreatedAt, Actor: k.CreatedBy, Action: ActionKeyCreated,
		TargetType: TargetAPIKey, TargetID: k.ID, Detail: fmt.Sprintf("name=%q prefix=%s scopes=%q expires=%s",
			k.Name, k.Prefix, k.Scopes.String(), timeOrNever(k.ExpiresAt))}).Error
}

// timeOrNever formats an optional time for the audit trail.
func timeOrNever(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}

// ListAPIKeys returns every key, newest first. Hashes are included but the
// keys themselves are not known to the store.
func (s *Store) ListAPIKeys(ctx context.Context) ([]APIKey, error) {
	keys := []APIKey{}
	if err := s.db.WithContext(ctx).Order("id DESC").Find(&keys).Error; err != nil {
		return nil, s.dbErr("list api keys", err)
	}
	return keys, nil
}

// GetAPIKey returns one API key record.
func (s *Store) GetAPIKey(ctx context.Context, id int64) (APIKey, error) {
	var k APIKey
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&k).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return APIKey{}, notFound("API key", id)
	}
	return k, s.dbErr("get api key", err)
}

// RevokeAPIKey revokes a key at once. Revoking a revoked key is a no-op that
// keeps the first revocation time.
func (s *Store) RevokeAPIKey(ctx context.Context, id int64, actor string) (APIKey, error) {
	var k APIKey
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		if err := tx.Where("id = ?", id).Take(&k).Error; err != nil {
			return err
		}
		if k.Revoked() {
			return nil
		}
		now := s.now()
		res := tx.Model(&APIKey{}).Where("id = ? AND revoked_at IS NULL", id).Update("revoked_at", now)
		if res.Error != nil {
			return res.Error
		}
		k.RevokedAt = &now
		return tx.Create(&AuditEvent{At: now, Actor: actor, Action: ActionKeyRevoked, TargetType: TargetAPIKey,
			TargetID: k.ID, Detail: fmt.Sprintf("name=%q prefix=%s", k.Name, k.Prefix)}).Error
	})
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return APIKey{}, notFound("API key", id)
	}
	if err != nil {
		return APIKey{}, s.dbErr("revoke api key", err)
	}
	// After the commit: a check that reads the row from now on sees the
	// revocation, and one that read it before caches nothing.
	s.keys.cache.forget(k.Prefix)
	return k, nil
}

// Authenticate returns the live key matching key, or ErrUnauthorized. A
// key is checked against its row (hash, revocation and expiry); the row is
// read at most once per KeyCacheTTL per prefix, whatever the secrets sent
// with it, and by one request at a time, the others waiting for it
// (keycache.go): a revocation made on this instance applies at once, one
// made on another instance within KeyCacheTTL, and wrong secrets under a
// known prefix cost a bounded number of reads however many arrive. A key of
// the wrong shape, or whose prefix no live key has (keyPrefixKnown), is
// refused without a database read: a flood of made-up keys does not reach
// the database. A key whose secret matched but that has expired is refused
// with ErrKeyExpired as the cause. The key's use is noted at most once a
// minute.
func (s *Store) Authenticate(ctx context.Context, key string) (APIKey, error) {
	return s.AuthenticateHashed(ctx, key, HashKey(key))
}

// AuthenticateHashed is Authenticate for a caller that has already
// computed hash, HashKey(key).
func (s *Store) AuthenticateHashed(ctx context.Context, key, hash string) (APIKey, error) {
	prefix, ok := splitKey(key)
	if !ok {
		return APIKey{}, ErrUnauthorized
	}
	k, found, err := s.keyRow(ctx, prefix)
	if err != nil {
		return APIKey{}, err
	}
	stored := k.Hash
	if !found {
		// Compare anyway so a miss takes as long as a wrong secret.
		stored = noKeyHash
	}
	if subtle.ConstantTimeCompare([]byte(hash), []byte(stored)) != 1 || !found || k.Revoked() {
		return APIKey{}, ErrUnauthorized
	}
	now := s.now()
	if k.Expired(now) {
		return APIKey{}, expiredKey(*k.ExpiresAt)
	}
	s.noteKeyTime(ctx, &k, keyUsed, now)
	return k, nil
}

// noKeyHash is what a key with no row is compared with.
var noKeyHash = strings.Repeat("0", 64)

// NoteDeprecatedCall records that k has just called the deprecated
// GET /v1/pets/{petId}: its deprecated_call_at, written at most once a
// minute like its last use.
func (s *Store) NoteDeprecatedCall(ctx context.Context, k APIKey) {
	s.noteKeyTime(ctx, &k, keyDeprecatedCall, s.now())
}

// keyTime names a time column of api_keys that notes a key's activity.
type keyTime int

const (
	keyUsed           keyTime = iota // last_used_at
	keyDeprecatedCall                // deprecated_call_at
)

// keyTimes holds each keyTime's column, the condition of its write and what
// it notes, for the log.
var keyTimes = [...]struct{ column, where, what string }{
	keyUsed:           {"last_used_at", "id = ? AND (last_used_at IS NULL OR last_used_at <= ?)", "use"},
	keyDeprecatedCall: {"deprecated_call_at", "id = ? AND (deprecated_call_at IS NULL OR deprecated_call_at <= ?)", "deprecated call"},
}

// field returns k's field of t.
func (k *APIKey) field(t keyTime) **time.Time {
	if t == keyDeprecatedCall {
		return &k.DeprecatedCallAt
	}
	return &k.LastUsedAt
}

// noteKeyTime writes now into k's column t, unless the time k holds (from
// the key cache or the row) is less than keyTimeEvery old. The condition
// repeats in SQL so that many instances write it once a minute in all.
// Once written, k and the cached key hold now. A failed write is logged:
// it is a note, not a reason to refuse the request.
func (s *Store) noteKeyTime(ctx context.Context, k *APIKey, t keyTime, now time.Time) {
	last := k.field(t)
	if *last != nil && now.Sub(**last) < keyTimeEvery {
		return
	}
	col, id := keyTimes[t], k.ID
	err := retry(ctx, func() error {
		return s.db.WithContext(ctx).Model(&APIKey{}).Where(col.where, id, now.Add(-keyTimeEvery)).Update(col.column, now).Error
	})
	if err != nil {
		s.log.Warn("could not note api key "+col.what, "key_id", id, "error", err)
		return
	}
	// Written here, or by another instance less than a minute ago:
	// either way, nothing to write for a minute.
	at := now
	*last = &at
	s.keys.cache.setTime(k.Prefix, t, at)
}
