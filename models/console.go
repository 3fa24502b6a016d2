package models

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// setting is one shared value, such as the session keys, that every
// instance reads from the database.
type setting struct {
	Name      string `gorm:"primaryKey"`
	Value     string
	CreatedAt time.Time
}

// Setting returns the shared setting name, creating it with create() the
// first time. Instances racing to create it all end up with the first value.
func (s *Store) Setting(ctx context.Context, name string, create func() string) (string, error) {
	db := s.db.WithContext(ctx)
	var st setting
	err := db.Where("name = ?", name).Take(&st).Error
	if err == nil {
		return st.Value, nil
	}
	if !errors.Is(err, gorm.ErrRecordNotFound) {
		return "", s.dbErr("read setting", err)
	}
	st = setting{Name: name, Value: create(), CreatedAt: s.now()}
	err = retry(ctx, func() error { return db.Clauses(clause.OnConflict{DoNothing: true}).Create(&st).Error })
	if err != nil {
		return "", s.dbErr("create setting", err)
	}
	if err := db.Where("name = ?", name).Take(&st).Error; err != nil {
		return "", s.dbErr("read setting", err)
	}
	return st.Value, nil
}

// randomHex returns n random bytes, hex encoded.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// GetUser returns one staff account.
func (s *Store) GetUser(ctx context.Context, id int64) (User, error) {
	var u User
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return User{}, &Error{Code: CodeNotFound, Message: fmt.Sprintf("No staff account has id %d.", id)}
	}
	return u, s.dbErr("get user", err)
}

// GetAPIKey returns one API key record.
func (s *Store) GetAPIKey(ctx context.Context, id int64) (APIKey, error) {
	var k APIKey
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&k).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return APIKey{}, &Error{Code: CodeNotFound, Message: fmt.Sprintf("No API key has id %d.", id)}
	}
	return k, s.dbErr("get api key", err)
}

// ListUsers returns every staff account by username.
func (s *Store) ListUsers(ctx context.Context) ([]User, error) {
	users := []User{}
	err := s.db.WithContext(ctx).Order("username").Find(&users).Error
	return users, s.dbErr("list users", err)
}

// ChangePassword replaces a user's password after checking the current
// one (which after a reset is the one-time password), clears a pending
// must-change, and bumps the session version so the account's other
// sessions end.
// Wrong current passwords count as failed sign-ins, so a stolen session
// cannot be used to guess the password faster than the sign-in form allows.
func (s *Store) ChangePassword(ctx context.Context, id int64, current, next, clientIP string) (User, error) {
	u, err := s.GetUser(ctx, id)
	if err != nil {
		return User{}, err
	}
	if _, err := s.checkWithinLimits(ctx, u.Username, current, clientIP, "password change"); err != nil {
		if ErrorCode(err) == CodeUnauthorized {
			msg := "The current password is not right."
			return User{}, &Error{Code: CodeInvalidRequest, Message: msg, Fields: []FieldError{{"current", msg}}}
		}
		return User{}, err
	}
	if err := ValidatePassword(next, u.Username); err != nil {
		var e *Error
		errors.As(err, &e)
		return User{}, &Error{Code: CodeInvalidRequest, Message: e.Message, Fields: []FieldError{{"new", e.Message}}}
	}
	if next == current {
		msg := "The new password must differ from the current one."
		return User{}, &Error{Code: CodeInvalidRequest, Message: msg, Fields: []FieldError{{"new", msg}}}
	}
	nu, err := s.newUser(ctx, u.Username, next)
	if err != nil {
		return User{}, err
	}
	now := s.now()
	err = s.transaction(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&User{}).Where("id = ?", id).Updates(map[string]any{
			"password_hash": nu.PasswordHash, "must_change_password": false,
			"session_version": gorm.Expr("session_version + 1"), "updated_at": now})
		if res.Error != nil {
			return res.Error
		}
		return tx.Create(&AuditEvent{At: now, Actor: u.Username, Action: ActionPasswordChanged, TargetType: TargetUser,
			TargetID: id, Detail: "own password"}).Error
	})
	if err != nil {
		return User{}, s.dbErr("change password", err)
	}
	return s.GetUser(ctx, id)
}

// UpdatePetStatus changes a pet's status and records who did it and when.
// Setting the status it already has changes nothing.
func (s *Store) UpdatePetStatus(ctx context.Context, id int64, status Status, actor string) (Pet, error) {
	if _, ok := ParseStatus(string(status)); !ok {
		return Pet{}, &Error{Code: CodeInvalidRequest, Message: StatusMessage, Fields: []FieldError{{FieldStatus, StatusMessage}}}
	}
	var p Pet
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&p).Error; err != nil {
			return err
		}
		if p.Status == status {
			return nil
		}
		now := s.now()
		old := p.Status
		if err := tx.Model(&Pet{}).Where("id = ?", id).Updates(map[string]any{"status": status, "updated_at": now}).Error; err != nil {
			return err
		}
		p.Status, p.UpdatedAt = status, now
		return tx.Create(&AuditEvent{At: now, Actor: actor, Action: ActionPetStatusChanged, TargetType: TargetPet,
			TargetID: id, Detail: fmt.Sprintf("%s -> %s", old, status)}).Error
	})
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Pet{}, &Error{Code: CodeNotFound, Message: fmt.Sprintf("No pet has id %d.", id)}
	}
	if err != nil {
		return Pet{}, s.dbErr("update pet status", err)
	}
	return p, nil
}
