package models

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"
)

// User is a staff account of the admin console.
type User struct {
	ID           int64
	Username     string
	PasswordHash string
	// SessionVersion goes up when the password changes; sessions made under
	// an older version are no longer valid.
	SessionVersion int64
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Password rules. bcrypt reads at most 72 bytes, so longer is refused rather
// than silently cut.
const (
	MinPasswordLength   = 10
	maxPasswordBytes    = 72
	defaultPasswordCost = 12
)

var usernamePattern = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$`)

// ValidateUsername checks a staff username, 1..64 letters, digits, dots,
// dashes or underscores starting with a letter or digit, and returns it in
// lower case.
func ValidateUsername(raw string) (string, error) {
	// Usernames are stored in lower case so that both engines treat "Alice"
	// and "alice" as one account (MySQL's collation would, SQLite's not).
	name := normalUsername(raw)
	if !usernamePattern.MatchString(name) {
		msg := "Username must be 1 to 64 letters, digits, dots, dashes or underscores."
		return "", &Error{Code: CodeInvalidRequest, Message: msg, Fields: []FieldError{{"username", msg}}}
	}
	return name, nil
}

// ValidatePassword checks a new password's length.
func ValidatePassword(pw string) error {
	msg := ""
	switch {
	case utf8.RuneCountInString(pw) < MinPasswordLength:
		msg = fmt.Sprintf("Password must be at least %d characters.", MinPasswordLength)
	case len(pw) > maxPasswordBytes:
		msg = fmt.Sprintf("Password must be at most %d bytes.", maxPasswordBytes)
	}
	if msg != "" {
		return &Error{Code: CodeInvalidRequest, Message: msg, Fields: []FieldError{{"password", msg}}}
	}
	return nil
}

// CreateUser adds a staff account with a bcrypt-hashed password.
func (s *Store) CreateUser(ctx context.Context, username, password, actor string) (User, error) {
	u, err := s.newUser(ctx, username, password)
	if err != nil {
		return User{}, err
	}
	err = s.transaction(ctx, func(tx *gorm.DB) error { return insertUser(tx, &u, actor) })
	if err != nil {
		return User{}, s.userErr(u.Username, err)
	}
	return u, nil
}

// newUser validates a new account and hashes its password, waiting for a
// hashing slot (see Options.PasswordHashers).
func (s *Store) newUser(ctx context.Context, username, password string) (User, error) {
	username, err := ValidateUsername(username)
	if err != nil {
		return User{}, err
	}
	if err := ValidatePassword(password); err != nil {
		return User{}, err
	}
	if err := s.hashing.acquire(ctx); err != nil {
		return User{}, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.passwordCost)
	s.hashing.release()
	if err != nil {
		return User{}, internal("hash password", err)
	}
	now := s.now()
	return User{Username: username, PasswordHash: string(hash), SessionVersion: 1, CreatedAt: now, UpdatedAt: now}, nil
}

// insertUser stores u and its audit event within tx.
func insertUser(tx *gorm.DB, u *User, actor string) error {
	u.ID = 0 // a retried transaction inserts afresh
	if err := tx.Create(u).Error; err != nil {
		return err
	}
	return tx.Create(&AuditEvent{At: u.CreatedAt, Actor: actor, Action: ActionUserCreated, TargetType: TargetUser,
		TargetID: u.ID, Detail: "username=" + u.Username}).Error
}

func (s *Store) userErr(username string, err error) error {
	if isDuplicate(err) {
		msg := fmt.Sprintf("A staff account named %q already exists.", username)
		return &Error{Code: CodeConflict, Message: msg, Fields: []FieldError{{"username", msg}}}
	}
	return s.dbErr("create user", err)
}

func normalUsername(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// CountUsers returns the number of staff accounts (a small table).
func (s *Store) CountUsers(ctx context.Context) (int64, error) {
	var n int64
	if err := s.db.WithContext(ctx).Model(&User{}).Count(&n).Error; err != nil {
		return 0, s.dbErr("count users", err)
	}
	return n, nil
}

// CheckPassword returns the user when username and password match, or
// ErrUnauthorized. It is the one place a password is compared. Usernames
// are compared exactly, after lower-casing and trimming: a name that could
// not be an account's (any character outside usernamePattern, such as a
// look-alike letter or a zero-width space) names none and is not looked up.
// A missing user costs the same bcrypt work as a wrong password. It takes
// no hashing slot and no sign-in limit: callers do (Login).
func (s *Store) CheckPassword(ctx context.Context, username, password string) (User, error) {
	var u User
	if name := normalUsername(username); usernamePattern.MatchString(name) {
		err := s.db.WithContext(ctx).Where("username = ?", name).Take(&u).Error
		if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
			return User{}, s.dbErr("find user", err)
		}
	}
	hash := []byte(u.PasswordHash)
	if u.ID == 0 {
		hash = s.dummyHash()
	}
	s.signIns.checks.Add(1)
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil || u.ID == 0 {
		return User{}, &Error{Code: CodeUnauthorized, Message: "Wrong username or password."}
	}
	return u, nil
}

// dummyHash is compared against when a username does not exist, so that
// the answer takes as long as for a wrong password. It is made at the
// store's cost, once.
func (s *Store) dummyHash() []byte {
	s.dummyOnce.Do(func() {
		s.dummy, _ = bcrypt.GenerateFromPassword([]byte("petstore-no-such-user"), s.passwordCost)
	})
	return s.dummy
}
