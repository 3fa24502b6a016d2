package models

import (
	"context"
	"crypto/subtle"
	"encoding/base32"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"
	"github.com/pquerna/otp/totp"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Two-step sign-in with an authenticator app: TOTP as RFC 6238 and every
// common app use it (SHA-1, 6 digits, 30-second steps). A code is accepted
// for the current step and one either side (a phone's clock a little off,
// a code typed as it turned over), and never twice: the last step a code
// was accepted for is kept per member and moved only forward by one
// conditional UPDATE, so two instances cannot both accept one code.
const (
	TOTPPeriod  = 30
	TOTPDigits  = 6
	TOTPIssuer  = "Petstore"
	totpSkew    = 1
	totpContext = "totp:" // sealing context, with the member's id
)

// Audit actions of two-step sign-in.
const (
	ActionTwoFactorEnabled     = "user.2fa_enabled"
	ActionTwoFactorDisabled    = "user.2fa_disabled"
	ActionTwoFactorReset       = "user.2fa_reset"
	ActionRecoveryCodesRenewed = "user.recovery_codes_renewed"
	ActionRecoveryCodeUsed     = "user.recovery_code_used"
	ActionSecondStepFailed     = "user.second_step_failed"
	ActionTwoFactorRequired    = "role.2fa_required"
	ActionTwoFactorOptional    = "role.2fa_optional"
)

// FieldCode is the code field of the second-step forms.
const FieldCode = "code"

// totpSecret is a member's authenticator app secret, sealed (secretKeys).
type totpSecret struct {
	UserID      int64 `gorm:"primaryKey;autoIncrement:false"`
	KeyID       string
	Sealed      string
	ConfirmedAt *time.Time
	LastStep    int64
	CreatedAt   time.Time
}

func (totpSecret) TableName() string { return "totp_secrets" }

// TOTPEnrolment is what an authenticator app is set up with: the secret
// (base32, for typing in) and the otpauth:// URL the QR code carries.
type TOTPEnrolment struct {
	Secret string
	URL    string
}

// ErrWrongCode refuses a second-step code that is not right, already used,
// or out of its window.
var ErrWrongCode = &Error{Code: CodeUnauthorized, Message: "That code is not right. Type the current code from your authenticator app, or a recovery code."}

// errTOTPOn refuses to start an enrolment over a confirmed one.
var errTOTPOn = &Error{Code: CodeConflict, Message: "Two-step sign-in with an authenticator app is already on. Turn it off first to set up another app."}

// errNoPendingTOTP refuses to confirm an enrolment that was not started.
var errNoPendingTOTP = &Error{Code: CodeConflict, Message: "There is no authenticator app waiting to be confirmed. Start again from your account page."}

// BeginTOTP starts setting up an authenticator app for the member id: a new
// secret, sealed and stored as pending (replacing a pending one), that does
// nothing until ConfirmTOTP.
func (s *Store) BeginTOTP(ctx context.Context, id int64) (TOTPEnrolment, error) {
	u, err := s.GetUser(ctx, id)
	if err != nil {
		return TOTPEnrolment{}, err
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: TOTPIssuer, AccountName: u.Username, Period: TOTPPeriod,
		Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return TOTPEnrolment{}, internal("generate totp secret", err)
	}
	keyID, sealed, err := s.secrets.seal([]byte(key.Secret()), totpContext+strconv.FormatInt(id, 10))
	if err != nil {
		return TOTPEnrolment{}, err
	}
	now := s.now()
	err = s.transaction(ctx, func(tx *gorm.DB) error {
		var cur []totpSecret
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("user_id = ?", id).Find(&cur).Error; err != nil {
			return err
		}
		if len(cur) == 1 && cur[0].ConfirmedAt != nil {
			return errTOTPOn
		}
		if err := tx.Where("user_id = ?", id).Delete(&totpSecret{}).Error; err != nil {
			return err
		}
		return tx.Create(&totpSecret{UserID: id, KeyID: keyID, Sealed: sealed, CreatedAt: now}).Error
	})
	if err == errTOTPOn {
		return TOTPEnrolment{}, err
	}
	if err != nil {
		return TOTPEnrolment{}, s.dbErr("begin totp", err)
	}
	return TOTPEnrolment{Secret: key.Secret(), URL: key.URL()}, nil
}

// PendingTOTP returns the enrolment BeginTOTP started for id and not yet
// confirmed: not_found when there is none.
func (s *Store) PendingTOTP(ctx context.Context, id int64) (TOTPEnrolment, error) {
	u, err := s.GetUser(ctx, id)
	if err != nil {
		return TOTPEnrolment{}, err
	}
	var row totpSecret
	err = s.db.WithContext(ctx).Where("user_id = ? AND confirmed_at IS NULL", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return TOTPEnrolment{}, &Error{Code: CodeNotFound, Message: errNoPendingTOTP.Message}
	}
	if err != nil {
		return TOTPEnrolment{}, s.dbErr("read totp", err)
	}
	secret, err := s.openTOTP(row)
	if err != nil {
		return TOTPEnrolment{}, err
	}
	raw, _ := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(secret)
	key, err := totp.Generate(totp.GenerateOpts{Issuer: TOTPIssuer, AccountName: u.Username, Period: TOTPPeriod,
		Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1, Secret: raw})
	if err != nil {
		return TOTPEnrolment{}, internal("totp url", err)
	}
	return TOTPEnrolment{Secret: secret, URL: key.URL()}, nil
}

// openTOTP unseals a stored secret. A key that is missing is the operator's
// to fix: it is logged, and the member is told the step is unavailable.
func (s *Store) openTOTP(row totpSecret) (string, error) {
	plain, err := s.secrets.open(row.KeyID, row.Sealed, totpContext+strconv.FormatInt(row.UserID, 10))
	if err != nil {
		s.log.Error("cannot open a member's authenticator app secret: set PETSTORE_SECRET_KEY (or PETSTORE_SECRET_KEYS_OLD) to the key it was sealed with",
			"user_id", row.UserID, "key_id", row.KeyID, "error", err)
		return "", &Error{Code: CodeUnavailable, Err: err,
			Message: "Two-step sign-in cannot be checked right now because the server is missing its secret key. Tell the team that runs the console."}
	}
	return string(plain), nil
}

// totpStep is the time step of t.
func totpStep(t time.Time) int64 { return t.Unix() / TOTPPeriod }

// matchTOTP returns the step within the window around now that code is
// the code of, or 0.
func matchTOTP(secret, code string, now time.Time) int64 {
	cur := totpStep(now)
	opts := hotp.ValidateOpts{Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}
	for step := cur - totpSkew; step <= cur+totpSkew; step++ {
		want, err := hotp.GenerateCodeCustom(secret, uint64(step), opts)
		if err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return step
		}
	}
	return 0
}

// TOTPCode returns the code of secret at t, for tests and tools.
func TOTPCode(secret string, t time.Time) string {
	code, err := totp.GenerateCodeCustom(secret, t, totp.ValidateOpts{Period: TOTPPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		panic(err)
	}
	return code
}

// normalCode is a code as typed without spaces and dashes, lower case.
func normalCode(code string) string {
	return strings.ToLower(strings.NewReplacer(" ", "", "-", "", "\t", "").Replace(code))
}

// isTOTPCode reports whether a normalised code has the form of a TOTP code.
func isTOTPCode(code string) bool {
	if len(code) != TOTPDigits {
		return false
	}
	for _, r := range code {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// ConfirmTOTP turns two-step sign-in on for the member id once code is a
// current code of the pending secret, and returns ten new recovery codes to
// show once. Wrong codes count against the sign-in limits, from clientIP.
// The member's other sessions end; keep (a Session.Handle) is kept.
func (s *Store) ConfirmTOTP(ctx context.Context, id int64, code, clientIP, keep string) (User, []string, error) {
	u, err := s.GetUser(ctx, id)
	if err != nil {
		return User{}, nil, err
	}
	var row totpSecret
	err = s.db.WithContext(ctx).Where("user_id = ? AND confirmed_at IS NULL", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return User{}, nil, errNoPendingTOTP
	}
	if err != nil {
		return User{}, nil, s.dbErr("read totp", err)
	}
	secret, err := s.openTOTP(row)
	if err != nil {
		return User{}, nil, err
	}
	var step int64
	err = s.checkCode(ctx, u, clientIP, "authenticator app confirmation", func() (bool, error) {
		step = matchTOTP(secret, normalCode(code), s.now())
		return step != 0, nil
	})
	if err != nil {
		if err == ErrWrongCode {
			return User{}, nil, fieldError(FieldCode, "That code is not right. Type the code your app shows now.")
		}
		return User{}, nil, err
	}
	codes := newRecoveryCodes()
	now := s.now()
	err = s.transaction(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&totpSecret{}).Where("user_id = ? AND confirmed_at IS NULL AND sealed = ?", id, row.Sealed).
			Updates(map[string]any{"confirmed_at": now, "last_step": step})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return errNoPendingTOTP
		}
		if err := replaceRecoveryCodes(tx, id, codes, now); err != nil {
			return err
		}
		if err := endOtherSessions(tx, id, keep, now); err != nil {
			return err
		}
		return auditUser(tx, now, u.Username, ActionTwoFactorEnabled, u, "authenticator app; 10 recovery codes; other sessions ended")
	})
	if err == errNoPendingTOTP {
		return User{}, nil, err
	}
	if err != nil {
		return User{}, nil, s.dbErr("confirm totp", err)
	}
	u, err = s.GetUser(ctx, id)
	return u, codes, err
}

// endOtherSessions ends every session of the account id but keep, within
// tx: the session version goes up (the kept session must be moved to it by
// the caller) and the other sessions' rows are deleted.
func endOtherSessions(tx *gorm.DB, id int64, keep string, now time.Time) error {
	err := tx.Model(&User{}).Where("id = ?", id).Updates(map[string]any{
		"session_version": gorm.Expr("session_version + 1"), "updated_at": now}).Error
	if err != nil {
		return err
	}
	return tx.Where("user_id = ? AND id_hash <> ?", id, keep).Delete(&sessionRow{}).Error
}

// VerifySecondStep checks the second step of the sign-in of the member id
// after the right password: a current authenticator app code not used
// before, or an unused recovery code (spent by this use). It counts against
// the same limits as passwords (a wrong code keeps its reservation and is
// audited), so a burst of codes at once is checked at most as often as the
// limits allow. It returns how the step was passed ("authenticator app",
// "recovery code").
func (s *Store) VerifySecondStep(ctx context.Context, id int64, code, clientIP string) (User, string, error) {
	u, err := s.GetUser(ctx, id)
	if err != nil {
		return User{}, "", err
	}
	if u.Disabled() {
		return User{}, "", ErrAccountDisabled
	}
	code = normalCode(code)
	how := "recovery code"
	if isTOTPCode(code) {
		how = "authenticator app"
	}
	var row totpSecret
	err = s.db.WithContext(ctx).Where("user_id = ? AND confirmed_at IS NOT NULL", id).Take(&row).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		row = totpSecret{}
	case err != nil:
		return User{}, "", s.dbErr("read totp", err)
	}
	var secret string
	if how == "authenticator app" && row.UserID != 0 {
		if secret, err = s.openTOTP(row); err != nil {
			return User{}, "", err
		}
	}
	var left int64
	err = s.checkCode(ctx, u, clientIP, "second step", func() (bool, error) {
		now := s.now()
		if how == "authenticator app" {
			if secret == "" {
				return false, nil
			}
			return spendCode(s.db.WithContext(ctx), id, secret, code, now)
		}
		ok := false
		err := s.transaction(ctx, func(tx *gorm.DB) error {
			res := tx.Model(&recoveryCode{}).Where("user_id = ? AND code_hash = ? AND used_at IS NULL", id, hashRecoveryCode(code)).
				Update("used_at", now)
			if res.Error != nil || res.RowsAffected != 1 {
				return res.Error
			}
			ok = true
			if err := tx.Model(&recoveryCode{}).Where("user_id = ? AND used_at IS NULL", id).Count(&left).Error; err != nil {
				return err
			}
			return auditUser(tx, now, u.Username, ActionRecoveryCodeUsed, u, "from "+clientIP+"; "+strconv.FormatInt(left, 10)+" left")
		})
		return ok, err
	})
	if err != nil {
		return User{}, "", err
	}
	if how == "authenticator app" {
		now := s.now()
		err := s.transaction(ctx, func(tx *gorm.DB) error {
			return tx.Create(&AuditEvent{At: now, Actor: u.Username, Action: ActionLogin, TargetType: TargetUser, TargetID: u.ID,
				Detail: "from " + clientIP + " with an authenticator app"}).Error
		})
		if err != nil {
			return User{}, "", s.dbErr("audit sign-in", err)
		}
		if row.KeyID != s.secrets.current && s.secrets.current != "" {
			s.resealTOTP(ctx, row, secret)
		}
	}
	return u, how, nil
}

// spendCode spends code, of the authenticator app with secret, for id at
// now: it reports whether code is a code of the window around now that
// was not used before (spendStep).
func spendCode(db *gorm.DB, id int64, secret, code string, now time.Time) (bool, error) {
	step := matchTOTP(secret, code, now)
	if step == 0 {
		return false, nil
	}
	return spendStep(db, id, step)
}

// spendStep records step as used for id: of any number of uses at once,
// on any instance, one conditional UPDATE lets exactly one through, and
// none for a step at or before one already used.
func spendStep(db *gorm.DB, id, step int64) (bool, error) {
	res := db.Model(&totpSecret{}).Where("user_id = ? AND confirmed_at IS NOT NULL AND last_step < ?", id, step).Update("last_step", step)
	return res.RowsAffected == 1, res.Error
}

// checkCode reserves a check within the sign-in limits of u from clientIP,
// runs check, gives the reservation back when it passed, and audits a
// failure as what.
func (s *Store) checkCode(ctx context.Context, u User, clientIP, what string, check func() (bool, error)) error {
	limits := signInLimits(normalUsername(u.Username), clientIP)
	if err := s.reserve(ctx, limits); err != nil {
		return err
	}
	ok, err := check()
	if err != nil {
		s.refund(ctx, limits)
		return s.dbErr("check code", err)
	}
	if ok {
		return s.refund(ctx, limits)
	}
	now := s.now()
	err = s.transaction(ctx, func(tx *gorm.DB) error {
		return auditUser(tx, now, u.Username, ActionSecondStepFailed, u, "wrong or used code at "+what+" from "+clientIP)
	})
	if err != nil {
		return s.dbErr("audit failed code", err)
	}
	return ErrWrongCode
}

// resealTOTP seals a secret opened with an old key again under the current
// one. A failure is only logged: the old key still opens it.
func (s *Store) resealTOTP(ctx context.Context, row totpSecret, secret string) {
	keyID, sealed, err := s.secrets.seal([]byte(secret), totpContext+strconv.FormatInt(row.UserID, 10))
	if err == nil {
		err = s.db.WithContext(ctx).Model(&totpSecret{}).Where("user_id = ? AND key_id = ? AND sealed = ?", row.UserID, row.KeyID, row.Sealed).
			Updates(map[string]any{"key_id": keyID, "sealed": sealed}).Error
	}
	if err != nil {
		s.log.Warn("could not seal an authenticator app secret under the current key", "user_id", row.UserID, "error", err)
	}
}

// RekeySecrets seals every authenticator app secret that is not under the
// current key again under it, and returns how many it sealed again. Rows
// whose key is not configured are left and counted in missing.
func (s *Store) RekeySecrets(ctx context.Context) (resealed, missing int, err error) {
	if s.secrets.current == "" {
		return 0, 0, ErrNoSecretKey
	}
	var rows []totpSecret
	if err := s.db.WithContext(ctx).Where("key_id <> ?", s.secrets.current).Find(&rows).Error; err != nil {
		return 0, 0, s.dbErr("list totp secrets", err)
	}
	for _, row := range rows {
		plain, err := s.secrets.open(row.KeyID, row.Sealed, totpContext+strconv.FormatInt(row.UserID, 10))
		if err != nil {
			missing++
			continue
		}
		keyID, sealed, err := s.secrets.seal(plain, totpContext+strconv.FormatInt(row.UserID, 10))
		if err != nil {
			return resealed, missing, err
		}
		res := s.db.WithContext(ctx).Model(&totpSecret{}).Where("user_id = ? AND key_id = ? AND sealed = ?", row.UserID, row.KeyID, row.Sealed).
			Updates(map[string]any{"key_id": keyID, "sealed": sealed})
		if res.Error != nil {
			return resealed, missing, s.dbErr("reseal totp secret", res.Error)
		}
		resealed += int(res.RowsAffected)
	}
	return resealed, missing, nil
}
