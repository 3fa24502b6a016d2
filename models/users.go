package models

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// User is a staff account of the admin console.
type User struct {
	ID           int64
	Username     string
	PasswordHash string
	// SessionVersion goes up when the password changes, the account is
	// disabled or its sessions are ended; sessions made under an older
	// version are no longer valid.
	SessionVersion int64
	// DisabledAt is when the account was disabled; nil while it is enabled.
	// A disabled account cannot sign in; its API keys keep working.
	DisabledAt *time.Time
	// MustChangePassword is set when another member reset the password: the
	// console lets the account do nothing but choose a new one.
	MustChangePassword bool
	// OneTimeExpiresAt is when the one-time password of a reset stops
	// signing in (OneTimePasswordLifetime after the reset); OneTimeUsedAt
	// is when it signed in, after which it signs in no more. Both are nil
	// once the member has chosen a password.
	OneTimeExpiresAt *time.Time
	OneTimeUsedAt    *time.Time
	// Role is what the account may do in the console.
	Role      Role
	CreatedAt time.Time
	UpdatedAt time.Time
	// SecondStep is set by Login when the member signs in with a second
	// step, which the password alone does not replace.
	SecondStep bool `gorm:"-"`
}

// Disabled reports whether the account is disabled.
func (u User) Disabled() bool { return u.DisabledAt != nil }

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
		return "", fieldError(FieldUsername, msg)
	}
	return name, nil
}

// CreateUserWithRole adds a staff account with a bcrypt-hashed password
// and the role. The names the system acts under (ReservedUsername) are
// refused.
func (s *Store) CreateUserWithRole(ctx context.Context, username, password string, role Role, actor string) (User, error) {
	if _, err := ParseRole(string(role)); err != nil {
		return User{}, err
	}
	if ReservedUsername(normalUsername(username)) {
		return User{}, fieldError(FieldUsername, fmt.Sprintf("The username %q is reserved for the system; choose another.", normalUsername(username)))
	}
	u, err := s.newUser(ctx, username, password)
	if err != nil {
		return User{}, err
	}
	u.Role = role
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
	if err := ValidatePassword(password, username); err != nil {
		return User{}, err
	}
	if err := s.signIns.hashing.acquire(ctx); err != nil {
		return User{}, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.passwordCost)
	s.signIns.hashing.release()
	if err != nil {
		return User{}, internal("hash password", err)
	}
	now := s.now()
	return User{Username: username, PasswordHash: string(hash), SessionVersion: 1, Role: RoleEditor, CreatedAt: now, UpdatedAt: now}, nil
}

// insertUser stores u and its audit event within tx.
func insertUser(tx *gorm.DB, u *User, actor string) error {
	u.ID = 0 // a retried transaction inserts afresh
	if err := tx.Create(u).Error; err != nil {
		return err
	}
	return tx.Create(&AuditEvent{At: u.CreatedAt, Actor: actor, Action: ActionUserCreated, TargetType: TargetUser,
		TargetID: u.ID, Detail: "username=" + u.Username + "; role=" + string(u.Role)}).Error
}

func (s *Store) userErr(username string, err error) error {
	if isDuplicate(err) {
		msg := fmt.Sprintf("A staff account named %q already exists.", username)
		return &Error{Code: CodeConflict, Message: msg, Fields: []FieldError{{FieldUsername, msg}}}
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
	s.signIns.counters.checks.Add(1)
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil || u.ID == 0 {
		return User{}, &Error{Code: CodeUnauthorized, Message: "Wrong username or password."}
	}
	// Only the right password learns that the account is disabled: to a
	// guesser a disabled account looks like any other.
	if u.Disabled() {
		return User{}, ErrAccountDisabled
	}
	return u, nil
}

// dummyHash is compared against when a username does not exist, so that
// the answer takes as long as for a wrong password. It is made at the
// store's cost, once.
func (s *Store) dummyHash() []byte {
	s.signIns.dummyOnce.Do(func() {
		s.signIns.dummy, _ = bcrypt.GenerateFromPassword([]byte("petstore-no-such-user"), s.passwordCost)
	})
	return s.signIns.dummy
}

// ErrAccountDisabled is the answer to the right password of a disabled account.
var ErrAccountDisabled = &Error{Code: CodeUnauthorized, Message: "This account is disabled."}

// errLastEnabled refuses to disable the only enabled account: nobody could
// sign in to enable it again.
var errLastEnabled = &Error{Code: CodeConflict,
	Message: "This is the last enabled staff account, so it cannot be disabled: enable or add another account first."}

// GetUser returns one staff account.
func (s *Store) GetUser(ctx context.Context, id int64) (User, error) {
	var u User
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&u).Error
	return u, s.accountErr(id, "get user", err)
}

// ListUsers returns every staff account by username.
func (s *Store) ListUsers(ctx context.Context) ([]User, error) {
	users := []User{}
	err := s.db.WithContext(ctx).Order("username").Find(&users).Error
	return users, s.dbErr("list users", err)
}

// FindUser returns the staff account named username (in any case).
func (s *Store) FindUser(ctx context.Context, username string) (User, error) {
	var u User
	err := s.db.WithContext(ctx).Where("username = ?", normalUsername(username)).Take(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return User{}, &Error{Code: CodeNotFound, Message: fmt.Sprintf("No staff account is named %q.", normalUsername(username))}
	}
	return u, s.dbErr("find user", err)
}

// DisableUser disables the account id: its sign-in is refused and its
// sessions end at once (the session version goes up in the same
// transaction). Its API keys keep working until revoked. Disabling a
// disabled account changes nothing. The last enabled account, and the last
// enabled admin, cannot be disabled, even when two members disable each
// other at the same moment (see lockAccounts).
func (s *Store) DisableUser(ctx context.Context, id int64, actor string) (User, error) {
	var u User
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		accounts, err := lockAccounts(tx)
		if err != nil {
			return err
		}
		if u, err = findAccount(accounts, id); err != nil || u.Disabled() {
			return err
		}
		switch enabled, admins := enabledCount(accounts); {
		case enabled == 1:
			return errLastEnabled
		case u.Role == RoleAdmin && admins == 1:
			return errLastAdminDisable
		}
		now := s.now()
		err = tx.Model(&User{}).Where("id = ?", id).Updates(map[string]any{
			"disabled_at": now, "session_version": gorm.Expr("session_version + 1"), "updated_at": now}).Error
		if err != nil {
			return err
		}
		u.DisabledAt, u.SessionVersion, u.UpdatedAt = &now, u.SessionVersion+1, now
		if err := endSessions(tx, id); err != nil {
			return err
		}
		return auditUser(tx, now, actor, ActionUserDisabled, u, "sessions ended; API keys not revoked")
	})
	return u, s.accountErr(id, "disable user", err)
}

// EnableUser enables the account id again. Enabling an enabled account
// changes nothing.
func (s *Store) EnableUser(ctx context.Context, id int64, actor string) (User, error) {
	var u User
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		u = User{}
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&u).Error; err != nil {
			return err
		}
		if !u.Disabled() {
			return nil
		}
		now := s.now()
		if err := tx.Model(&User{}).Where("id = ?", id).Updates(map[string]any{"disabled_at": nil, "updated_at": now}).Error; err != nil {
			return err
		}
		u.DisabledAt, u.UpdatedAt = nil, now
		return auditUser(tx, now, actor, ActionUserEnabled, u, "")
	})
	return u, s.accountErr(id, "enable user", err)
}

// EndSessions signs the account id out of every session at once.
func (s *Store) EndSessions(ctx context.Context, id int64, actor string) (User, error) {
	var u User
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		u = User{}
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&u).Error; err != nil {
			return err
		}
		now := s.now()
		err := tx.Model(&User{}).Where("id = ?", id).Updates(map[string]any{
			"session_version": gorm.Expr("session_version + 1"), "updated_at": now}).Error
		if err != nil {
			return err
		}
		u.SessionVersion, u.UpdatedAt = u.SessionVersion+1, now
		if err := endSessions(tx, id); err != nil {
			return err
		}
		return auditUser(tx, now, actor, ActionSessionsEnded, u, "")
	})
	return u, s.accountErr(id, "end sessions", err)
}

// OneTimePasswordLifetime is how long the one-time password of a reset
// signs in: long enough to reach a colleague on another shift, short
// enough that one read off a note days later is worth nothing.
const OneTimePasswordLifetime = 24 * time.Hour

// ResetPassword gives the account id a new random one-time password, which
// it returns to be shown once and never stores in the clear. The account's
// sessions end, and at its next sign-in it must choose a new password
// before it can do anything else. The one-time password signs in once,
// within OneTimePasswordLifetime (Login). A disabled account stays disabled.
func (s *Store) ResetPassword(ctx context.Context, id int64, actor string) (User, string, error) {
	u, err := s.GetUser(ctx, id)
	if err != nil {
		return User{}, "", err
	}
	password := oneTimePassword(u.Username)
	if err := s.signIns.hashing.acquire(ctx); err != nil {
		return User{}, "", err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.passwordCost)
	s.signIns.hashing.release()
	if err != nil {
		return User{}, "", internal("hash password", err)
	}
	err = s.transaction(ctx, func(tx *gorm.DB) error {
		u = User{}
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&u).Error; err != nil {
			return err
		}
		now := s.now()
		expires := now.Add(OneTimePasswordLifetime)
		err := tx.Model(&User{}).Where("id = ?", id).Updates(map[string]any{"password_hash": string(hash),
			"must_change_password": true, "one_time_expires_at": expires, "one_time_used_at": nil,
			"session_version": gorm.Expr("session_version + 1"), "updated_at": now}).Error
		if err != nil {
			return err
		}
		u.PasswordHash, u.MustChangePassword, u.SessionVersion, u.UpdatedAt = string(hash), true, u.SessionVersion+1, now
		u.OneTimeExpiresAt, u.OneTimeUsedAt = &expires, nil
		if err := endSessions(tx, id); err != nil {
			return err
		}
		return auditUser(tx, now, actor, ActionPasswordReset, u, "one-time password issued; sessions ended")
	})
	if err != nil {
		return User{}, "", s.accountErr(id, "reset password", err)
	}
	return u, password, nil
}

// The fields of a staff account's forms, as this package names them in
// FieldError: each form maps them to its own controls.
const (
	FieldUsername = "username"
	FieldPassword = "password"
	// FieldCurrentPassword and FieldNewPassword are ChangePassword's.
	FieldCurrentPassword = "currentPassword"
	FieldNewPassword     = "newPassword"
)

// ChangePassword replaces a user's password after checking the current
// one (which after a reset is the one-time password), clears a pending
// must-change, and ends the account's other sessions: the session version
// goes up and their rows are deleted in the same transaction, as disable,
// reset and end-sessions do, so the list of sessions shows only the one
// kept (keep, a Session.Handle; "" keeps none). A refusal names
// FieldCurrentPassword or FieldNewPassword.
// Wrong current passwords count as failed sign-ins, so a stolen session
// cannot be used to guess the password faster than the sign-in form allows.
func (s *Store) ChangePassword(ctx context.Context, id int64, current, next, clientIP, keep string) (User, error) {
	u, err := s.GetUser(ctx, id)
	if err != nil {
		return User{}, err
	}
	if _, err := s.checkWithinLimits(ctx, u.Username, current, clientIP, "password change"); err != nil {
		if ErrorCode(err) == CodeUnauthorized {
			return User{}, fieldError(FieldCurrentPassword, "The current password is not right.")
		}
		return User{}, err
	}
	if err := ValidatePassword(next, u.Username); err != nil {
		var e *Error
		errors.As(err, &e)
		return User{}, fieldError(FieldNewPassword, e.Message)
	}
	if next == current {
		return User{}, fieldError(FieldNewPassword, "The new password must differ from the current one.")
	}
	nu, err := s.newUser(ctx, u.Username, next)
	if err != nil {
		return User{}, err
	}
	now := s.now()
	err = s.transaction(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&User{}).Where("id = ?", id).Updates(map[string]any{
			"password_hash": nu.PasswordHash, "must_change_password": false, "one_time_expires_at": nil, "one_time_used_at": nil,
			"session_version": gorm.Expr("session_version + 1"), "updated_at": now})
		if res.Error != nil {
			return res.Error
		}
		if err := tx.Where("user_id = ? AND id_hash <> ?", id, keep).Delete(&sessionRow{}).Error; err != nil {
			return err
		}
		return tx.Create(&AuditEvent{At: now, Actor: u.Username, Action: ActionPasswordChanged, TargetType: TargetUser,
			TargetID: id, Detail: "own password; other sessions ended"}).Error
	})
	if err != nil {
		return User{}, s.dbErr("change password", err)
	}
	return s.GetUser(ctx, id)
}

// oneTimePassword returns a random password that is easy to read out and
// type: five groups of four characters from a-z and 2-7 (no 0, 1, 8 or 9
// to mistake for letters), 100 random bits, within the password rules.
func oneTimePassword(username string) string {
	for {
		t := strings.ToLower(rand.Text()[:20])
		pw := t[0:4] + "-" + t[4:8] + "-" + t[8:12] + "-" + t[12:16] + "-" + t[16:20]
		if ValidatePassword(pw, username) == nil {
			return pw
		}
	}
}

// auditUser records an action on the account u within tx.
func auditUser(tx *gorm.DB, at time.Time, actor, action string, u User, detail string) error {
	d := "username=" + u.Username
	if detail != "" {
		d += "; " + detail
	}
	return tx.Create(&AuditEvent{At: at, Actor: actor, Action: action, TargetType: TargetUser, TargetID: u.ID, Detail: d}).Error
}

// accountErr classifies an error of an account read or change.
func (s *Store) accountErr(id int64, op string, err error) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return notFound("staff account", id)
	}
	return s.dbErr(op, err)
}
