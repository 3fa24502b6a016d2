package models

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"gorm.io/gorm"
)

// RecoveryCodeCount is how many recovery codes a member is given at once.
const RecoveryCodeCount = 10

// recoveryCode is one one-time recovery code, kept as the SHA-256 of the
// code. A plain hash is enough, and bcrypt would buy nothing: each code
// carries 80 random bits, which no offline search can cover however fast
// the hash, whereas a password's slow hash is there because people choose
// guessable ones. A fast hash also lets a code be found and spent by one
// conditional UPDATE on its hash.
type recoveryCode struct {
	ID        int64
	UserID    int64
	CodeHash  string
	CreatedAt time.Time
	UsedAt    *time.Time
}

func (recoveryCode) TableName() string { return "recovery_codes" }

// newRecoveryCodes returns RecoveryCodeCount random codes, each 16
// characters of a-z and 2-7 (80 bits) in four groups, easy to read and
// type.
func newRecoveryCodes() []string {
	codes := make([]string, RecoveryCodeCount)
	for i := range codes {
		t := strings.ToLower(rand.Text()[:16])
		codes[i] = t[0:4] + "-" + t[4:8] + "-" + t[8:12] + "-" + t[12:16]
	}
	return codes
}

// hashRecoveryCode is the stored form of a normalised code (normalCode).
func hashRecoveryCode(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:])
}

// replaceRecoveryCodes voids the member id's recovery codes and stores
// codes in their place, within tx.
func replaceRecoveryCodes(tx *gorm.DB, id int64, codes []string, now time.Time) error {
	if err := tx.Where("user_id = ?", id).Delete(&recoveryCode{}).Error; err != nil {
		return err
	}
	rows := make([]recoveryCode, len(codes))
	for i, c := range codes {
		rows[i] = recoveryCode{UserID: id, CodeHash: hashRecoveryCode(normalCode(c)), CreatedAt: now}
	}
	return tx.Create(&rows).Error
}

// errTwoFactorOff refuses recovery codes to a member without two-step
// sign-in: they stand in for its second step.
var errTwoFactorOff = &Error{Code: CodeConflict, Message: "Recovery codes come with two-step sign-in. Turn it on first."}

// RenewRecoveryCodes voids the member id's recovery codes and returns ten
// new ones, to be shown once. proof must be their password or a current
// code from their app (confirmIdentity): whoever holds the new codes can
// pass the second step.
func (s *Store) RenewRecoveryCodes(ctx context.Context, id int64, proof, clientIP string) ([]string, error) {
	u, err := s.GetUser(ctx, id)
	if err != nil {
		return nil, err
	}
	on := func(db *gorm.DB) error {
		var n int64
		if err := db.Model(&totpSecret{}).Where("user_id = ? AND confirmed_at IS NOT NULL", id).Count(&n).Error; err != nil {
			return err
		}
		if n == 0 {
			return errTwoFactorOff
		}
		return nil
	}
	// Refused before the proof is asked for: a refusal spends no check.
	if err := on(s.db.WithContext(ctx)); err != nil {
		return nil, s.dbErr("renew recovery codes", err)
	}
	if err := s.confirmIdentity(ctx, u, proof, clientIP, "making new recovery codes"); err != nil {
		return nil, err
	}
	codes := newRecoveryCodes()
	now := s.now()
	err = s.transaction(ctx, func(tx *gorm.DB) error {
		// Under the member's lock, so that the app turned off meanwhile
		// takes its codes with it rather than leaving these behind.
		if err := lockMember(tx, id); err != nil {
			return err
		}
		if err := on(tx); err != nil {
			return err
		}
		if err := replaceRecoveryCodes(tx, id, codes, now); err != nil {
			return err
		}
		return auditUser(tx, now, u.Username, ActionRecoveryCodesRenewed, u, "the old ones are void")
	})
	if err != nil {
		return nil, s.dbErr("renew recovery codes", err)
	}
	return codes, nil
}
