package models

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"
)

// Audit actions of passkeys.
const (
	ActionPasskeyAdded   = "user.passkey_added"
	ActionPasskeyRemoved = "user.passkey_removed"
)

// Passkey is a WebAuthn credential of a member. The web package runs the
// ceremonies with the WebAuthn library; the store keeps what it records
// (Credential, the library's JSON: public key, sign counter, flags) as
// given, and finds a passkey by its credential id.
type Passkey struct {
	ID     int64
	UserID int64
	// Name is what the member called it.
	Name string
	// CredentialID is the credential's id, base64url without padding.
	CredentialID string
	Credential   string
	CreatedAt    time.Time
	LastUsedAt   *time.Time
}

func (Passkey) TableName() string { return "passkeys" }

// FieldPasskeyName is the name field of the passkey form.
const FieldPasskeyName = "name"

// ListPasskeys returns the member id's passkeys, oldest first.
func (s *Store) ListPasskeys(ctx context.Context, id int64) ([]Passkey, error) {
	var out []Passkey
	err := s.db.WithContext(ctx).Where("user_id = ?", id).Order("id").Find(&out).Error
	return out, s.dbErr("list passkeys", err)
}

// PasskeyByCredentialID finds a passkey by its credential id: not_found
// when none has it.
func (s *Store) PasskeyByCredentialID(ctx context.Context, credentialID string) (Passkey, error) {
	var p Passkey
	err := s.db.WithContext(ctx).Where("credential_id = ?", credentialID).Take(&p).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Passkey{}, &Error{Code: CodeNotFound, Message: "This passkey is not registered here."}
	}
	return p, s.dbErr("find passkey", err)
}

// AddPasskey stores a passkey the member id just registered, and ends
// their other sessions (keep is kept).
func (s *Store) AddPasskey(ctx context.Context, id int64, name, credentialID, credential, keep string) (User, error) {
	u, err := s.GetUser(ctx, id)
	if err != nil {
		return User{}, err
	}
	name = strings.TrimSpace(name)
	if name == "" {
		name = "Passkey"
	}
	if utf8.RuneCountInString(name) > 100 {
		return User{}, fieldError(FieldPasskeyName, "The name must be at most 100 characters.")
	}
	now := s.now()
	err = s.transaction(ctx, func(tx *gorm.DB) error {
		if err := tx.Create(&Passkey{UserID: id, Name: name, CredentialID: credentialID, Credential: credential, CreatedAt: now}).Error; err != nil {
			return err
		}
		if err := endOtherSessions(tx, id, keep, now); err != nil {
			return err
		}
		return auditUser(tx, now, u.Username, ActionPasskeyAdded, u, "passkey "+name+"; other sessions ended")
	})
	if err != nil {
		return User{}, s.dbErr("add passkey", err)
	}
	return s.GetUser(ctx, id)
}

// RemovePasskey deletes the member id's passkey pk, unless their role
// requires a second step and it is their last. proof must be their
// password or a current code from their app (confirmIdentity). Their
// other sessions end; keep is kept.
func (s *Store) RemovePasskey(ctx context.Context, id, pk int64, proof, clientIP, keep string) (User, error) {
	u, err := s.GetUser(ctx, id)
	if err != nil {
		return User{}, err
	}
	required, err := s.RoleRequiresTwoFactor(ctx, u.Role)
	if err != nil {
		return User{}, err
	}
	// Refused before the proof is asked for: a refusal spends no check.
	if _, err := removablePasskey(s.db.WithContext(ctx), id, pk, required); err != nil {
		return User{}, s.passkeyErr(err)
	}
	if err := s.confirmIdentity(ctx, u, proof, clientIP, "removing a passkey"); err != nil {
		return User{}, err
	}
	now := s.now()
	err = s.transaction(ctx, func(tx *gorm.DB) error {
		if err := lockMember(tx, id); err != nil {
			return err
		}
		p, err := removablePasskey(tx, id, pk, required)
		if err != nil {
			return err
		}
		if err := tx.Delete(&Passkey{}, p.ID).Error; err != nil {
			return err
		}
		if err := endOtherSessions(tx, id, keep, now); err != nil {
			return err
		}
		return auditUser(tx, now, u.Username, ActionPasskeyRemoved, u, "passkey "+p.Name+"; other sessions ended")
	})
	if err != nil {
		return User{}, s.passkeyErr(err)
	}
	return s.GetUser(ctx, id)
}

// GetPasskey returns the member id's passkey pk: not_found when they have
// no such passkey.
func (s *Store) GetPasskey(ctx context.Context, id, pk int64) (Passkey, error) {
	var p Passkey
	err := s.db.WithContext(ctx).Where("id = ? AND user_id = ?", pk, id).Take(&p).Error
	return p, s.passkeyErr(err)
}

// removablePasskey returns the member id's passkey pk, or errLastFactor
// when required (their role requires a second step) and it is their last.
func removablePasskey(db *gorm.DB, id, pk int64, required bool) (Passkey, error) {
	var p Passkey
	if err := db.Where("id = ? AND user_id = ?", pk, id).Take(&p).Error; err != nil || !required {
		return p, err
	}
	var others, app int64
	if err := db.Model(&Passkey{}).Where("user_id = ? AND id <> ?", id, pk).Count(&others).Error; err != nil {
		return p, err
	}
	if err := db.Model(&totpSecret{}).Where("user_id = ? AND confirmed_at IS NOT NULL", id).Count(&app).Error; err != nil {
		return p, err
	}
	if others+app == 0 {
		return p, errLastFactor
	}
	return p, nil
}

// passkeyErr classifies an error of reading or removing a member's passkey.
func (s *Store) passkeyErr(err error) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return &Error{Code: CodeNotFound, Message: "You have no such passkey."}
	}
	return s.dbErr("remove passkey", err)
}

// UsePasskey records a sign-in with the passkey p: its credential as the
// library updated it (the sign counter) and when. It is a compare and
// swap on the stored credential, so of two sign-ins at once with the same
// counter only one goes through.
func (s *Store) UsePasskey(ctx context.Context, p Passkey, credential string) error {
	res := s.db.WithContext(ctx).Model(&Passkey{}).Where("id = ? AND credential = ?", p.ID, p.Credential).
		Updates(map[string]any{"credential": credential, "last_used_at": s.now()})
	if res.Error != nil {
		return s.dbErr("use passkey", res.Error)
	}
	if res.RowsAffected != 1 {
		return &Error{Code: CodeUnauthorized, Message: "This passkey was just used. Try again."}
	}
	return nil
}

// webauthnChallenge is a WebAuthn ceremony under way: the library's
// session data, kept server-side so that any instance can finish it, once.
type webauthnChallenge struct {
	ID        string `gorm:"primaryKey"`
	UserID    int64
	Purpose   string
	Session   string
	ExpiresAt time.Time
}

func (webauthnChallenge) TableName() string { return "webauthn_challenges" }

// ChallengeLifetime is how long a WebAuthn ceremony may take.
const ChallengeLifetime = 5 * time.Minute

// errChallengeGone refuses a ceremony whose challenge was used, expired or
// never made.
var errChallengeGone = &Error{Code: CodeUnauthorized, Message: "This passkey request has expired or was used already. Try again."}

// SaveChallenge keeps the session data of a ceremony begun for purpose
// (and the member id, 0 for a sign-in without a username), and returns
// the token that finishes it within ChallengeLifetime.
func (s *Store) SaveChallenge(ctx context.Context, id int64, purpose, session string) (string, error) {
	b := make([]byte, 32)
	rand.Read(b)
	token := base64.RawURLEncoding.EncodeToString(b)
	now := s.now()
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		// Old ceremonies go as new ones come: the table stays small.
		if err := tx.Where("expires_at < ?", now).Delete(&webauthnChallenge{}).Error; err != nil {
			return err
		}
		return tx.Create(&webauthnChallenge{ID: token, UserID: id, Purpose: purpose, Session: session, ExpiresAt: now.Add(ChallengeLifetime)}).Error
	})
	return token, s.dbErr("save challenge", err)
}

// TakeChallenge returns the session data of the ceremony token, begun for
// purpose and the member id, and deletes it: of any number of answers to
// one challenge, on any instance, one gets it.
func (s *Store) TakeChallenge(ctx context.Context, token string, id int64, purpose string) (string, error) {
	var c webauthnChallenge
	db := s.db.WithContext(ctx)
	err := db.Where("id = ?", token).Take(&c).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", errChallengeGone
	}
	if err != nil {
		return "", s.dbErr("read challenge", err)
	}
	res := db.Where("id = ?", token).Delete(&webauthnChallenge{})
	if res.Error != nil {
		return "", s.dbErr("take challenge", res.Error)
	}
	if res.RowsAffected != 1 || c.UserID != id || c.Purpose != purpose || !s.now().Before(c.ExpiresAt) {
		return "", errChallengeGone
	}
	return c.Session, nil
}

// PasskeySignIn records a sign-in with a passkey: from clientIP, as the
// first step (without a password) or as the second.
func (s *Store) PasskeySignIn(ctx context.Context, u User, clientIP string, second bool) error {
	detail := "from " + clientIP + " with a passkey"
	if second {
		detail += " as the second step"
	}
	now := s.now()
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		return tx.Create(&AuditEvent{At: now, Actor: u.Username, Action: ActionLogin, TargetType: TargetUser, TargetID: u.ID, Detail: detail}).Error
	})
	return s.dbErr("audit passkey sign-in", err)
}

// PasskeyRefused audits a passkey answer that did not verify.
func (s *Store) PasskeyRefused(ctx context.Context, u User, clientIP, why string) error {
	now := s.now()
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		return auditUser(tx, now, u.Username, ActionSecondStepFailed, u, "passkey refused from "+clientIP+": "+why)
	})
	return s.dbErr("audit passkey", err)
}
