package models

import (
	"context"
	"errors"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// TwoFactor is where a member stands with two-step sign-in.
type TwoFactor struct {
	// TOTP is on once an authenticator app was confirmed; Pending while one
	// waits for its first code.
	TOTP, Pending bool
	// RecoveryCodesLeft counts the recovery codes not yet used.
	RecoveryCodesLeft int64
	// Required is set when the member's role requires a second step.
	Required bool
	// Passkeys are the member's passkeys, oldest first.
	Passkeys []Passkey
}

// On reports whether the member has a second step to sign in with.
func (t TwoFactor) On() bool { return t.TOTP || len(t.Passkeys) > 0 }

// TwoFactorState returns where the member id stands with two-step sign-in.
func (s *Store) TwoFactorState(ctx context.Context, id int64) (TwoFactor, error) {
	u, err := s.GetUser(ctx, id)
	if err != nil {
		return TwoFactor{}, err
	}
	var t TwoFactor
	db := s.db.WithContext(ctx)
	var rows []totpSecret
	if err := db.Select("user_id", "confirmed_at").Where("user_id = ?", id).Find(&rows).Error; err != nil {
		return TwoFactor{}, s.dbErr("read totp", err)
	}
	if len(rows) == 1 {
		t.TOTP, t.Pending = rows[0].ConfirmedAt != nil, rows[0].ConfirmedAt == nil
	}
	if err := db.Model(&recoveryCode{}).Where("user_id = ? AND used_at IS NULL", id).Count(&t.RecoveryCodesLeft).Error; err != nil {
		return TwoFactor{}, s.dbErr("count recovery codes", err)
	}
	if t.Required, err = s.RoleRequiresTwoFactor(ctx, u.Role); err != nil {
		return TwoFactor{}, err
	}
	if t.Passkeys, err = s.ListPasskeys(ctx, id); err != nil {
		return TwoFactor{}, err
	}
	return t, nil
}

// errLastFactor refuses to remove a member's last second step while their
// role requires one.
var errLastFactor = &Error{Code: CodeConflict,
	Message: "Your role requires two-step sign-in, so it cannot be turned off. An admin can lift the requirement on the Staff page."}

// errTOTPOff refuses to turn off an authenticator app that is not on.
var errTOTPOff = &Error{Code: CodeConflict, Message: "Two-step sign-in with an authenticator app is off already."}

// DisableTOTP turns the member id's authenticator app off and voids their
// recovery codes, unless their role requires a second step and they have
// no passkey. proof must be their password or a current code from the app
// (confirmIdentity). The member's other sessions end; keep is kept.
func (s *Store) DisableTOTP(ctx context.Context, id int64, proof, clientIP, keep string) (User, error) {
	u, err := s.GetUser(ctx, id)
	if err != nil {
		return User{}, err
	}
	st, err := s.TwoFactorState(ctx, id)
	if err != nil {
		return User{}, err
	}
	switch {
	case !st.TOTP:
		return User{}, errTOTPOff
	case st.Required && len(st.Passkeys) == 0:
		return User{}, errLastFactor
	}
	if err := s.confirmIdentity(ctx, u, proof, clientIP, "turning off two-step sign-in"); err != nil {
		return User{}, err
	}
	now := s.now()
	err = s.transaction(ctx, func(tx *gorm.DB) error {
		// Again under the member's lock: a passkey removed meanwhile must not
		// leave a required role's member with no second step.
		if err := lockMember(tx, id); err != nil {
			return err
		}
		if st.Required {
			var keys int64
			if err := tx.Model(&Passkey{}).Where("user_id = ?", id).Count(&keys).Error; err != nil {
				return err
			}
			if keys == 0 {
				return errLastFactor
			}
		}
		if err := removeSecondFactors(tx, id, false); err != nil {
			return err
		}
		if err := endOtherSessions(tx, id, keep, now); err != nil {
			return err
		}
		return auditUser(tx, now, u.Username, ActionTwoFactorDisabled, u, "authenticator app and recovery codes removed; other sessions ended")
	})
	if err != nil {
		return User{}, s.dbErr("disable totp", err)
	}
	return s.GetUser(ctx, id)
}

// FieldProof is the field in which a member proves it is them before
// changing their own second steps: their password, or a current code from
// their authenticator app.
const FieldProof = "proof"

// errWrongProof refuses a proof that is neither the password nor a current
// code.
var errWrongProof = fieldError(FieldProof, "That is neither your password nor a current code from your authenticator app.")

// ConfirmIdentity checks proof, the password of the member id or a current
// code from their app, before a change that is theirs to make only (adding
// a passkey): as confirmIdentity, what naming the change.
func (s *Store) ConfirmIdentity(ctx context.Context, id int64, proof, clientIP, what string) error {
	u, err := s.GetUser(ctx, id)
	if err != nil {
		return err
	}
	return s.confirmIdentity(ctx, u, proof, clientIP, what)
}

// PasswordCheckBefore starts the detail of a wrong password given to
// confirm a change (ActionLoginFailed), which names the change.
const PasswordCheckBefore = "password check before "

// confirmIdentity checks proof before a signed-in member u removes or
// replaces one of their second steps, or adds a passkey, so that a session
// left open or stolen cannot strip the account's second step, read new
// recovery codes or give itself a way back in without the password (NIST
// SP 800-63B asks the same before an authenticator is removed). proof is a current code of their authenticator app, spent
// like a sign-in's (the six digits of a code are never a password, which
// has at least twelve characters), or else their password. Either counts
// against the sign-in limits and a wrong one is audited, as at sign-in;
// what says which change it was for.
func (s *Store) confirmIdentity(ctx context.Context, u User, proof, clientIP, what string) error {
	if code := normalCode(proof); isTOTPCode(code) {
		var row totpSecret
		err := s.db.WithContext(ctx).Where("user_id = ? AND confirmed_at IS NOT NULL", u.ID).Take(&row).Error
		switch {
		case err == nil:
			secret, err := s.openTOTP(row)
			if err != nil {
				return err
			}
			err = s.checkCode(ctx, u, clientIP, what, func() (bool, error) {
				return spendCode(s.db.WithContext(ctx), u.ID, secret, code, s.now())
			})
			if err == ErrWrongCode {
				return errWrongProof
			}
			return err
		case !errors.Is(err, gorm.ErrRecordNotFound):
			return s.dbErr("read totp", err)
		}
	}
	if _, err := s.checkWithinLimits(ctx, u.Username, proof, clientIP, PasswordCheckBefore+what); err != nil {
		if ErrorCode(err) == CodeUnauthorized {
			return errWrongProof
		}
		return err
	}
	return nil
}

// lockMember locks the member id's row until tx ends, so that changes to
// their second steps that check what is left (the last one a role
// requires) run one at a time, on any instance.
func lockMember(tx *gorm.DB, id int64) error {
	var u User
	return tx.Clauses(clause.Locking{Strength: "UPDATE"}).Select("id").Where("id = ?", id).Take(&u).Error
}

// removeSecondFactors deletes every second step of the member id, within
// tx: the app and recovery codes, and with all, their passkeys too.
func removeSecondFactors(tx *gorm.DB, id int64, all bool) error {
	if err := tx.Where("user_id = ?", id).Delete(&totpSecret{}).Error; err != nil {
		return err
	}
	if all {
		if err := tx.Where("user_id = ?", id).Delete(&Passkey{}).Error; err != nil {
			return err
		}
	}
	return tx.Where("user_id = ?", id).Delete(&recoveryCode{}).Error
}

// ResetTwoFactor removes every second step of the member id (the break
// glass for a member who lost them) and ends all their sessions; actor
// is who did it. Their next sign-in needs only the password, and leads
// them to set up a second step again if their role requires one.
func (s *Store) ResetTwoFactor(ctx context.Context, id int64, actor string) (User, error) {
	var u User
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		u = User{}
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&u).Error; err != nil {
			return err
		}
		now := s.now()
		if err := removeSecondFactors(tx, id, true); err != nil {
			return err
		}
		if err := endOtherSessions(tx, id, "", now); err != nil {
			return err
		}
		u.SessionVersion++
		return auditUser(tx, now, actor, ActionTwoFactorReset, u, "second steps removed; sessions ended")
	})
	return u, s.accountErr(id, "reset two-step sign-in", err)
}

// twoFactorRole is a role whose members must sign in with a second step.
type twoFactorRole struct {
	Role       Role `gorm:"primaryKey"`
	RequiredBy string
	CreatedAt  time.Time
}

func (twoFactorRole) TableName() string { return "two_factor_roles" }

// RolesRequiringTwoFactor returns the roles whose members must sign in
// with a second step, in Roles' order.
func (s *Store) RolesRequiringTwoFactor(ctx context.Context) ([]Role, error) {
	var rows []twoFactorRole
	if err := s.db.WithContext(ctx).Find(&rows).Error; err != nil {
		return nil, s.dbErr("read two-step roles", err)
	}
	var out []Role
	for _, r := range Roles {
		if slices.ContainsFunc(rows, func(x twoFactorRole) bool { return x.Role == r }) {
			out = append(out, r)
		}
	}
	return out, nil
}

// RoleRequiresTwoFactor reports whether members of role must sign in with
// a second step.
func (s *Store) RoleRequiresTwoFactor(ctx context.Context, role Role) (bool, error) {
	var n int64
	if err := s.db.WithContext(ctx).Model(&twoFactorRole{}).Where("role = ?", role).Count(&n).Error; err != nil {
		return false, s.dbErr("read two-step roles", err)
	}
	return n > 0, nil
}

// RequireTwoFactor makes a second step required (or not) for members of
// role; actor is the admin who chose it.
func (s *Store) RequireTwoFactor(ctx context.Context, role Role, required bool, actor string) error {
	if _, err := ParseRole(string(role)); err != nil {
		return err
	}
	now := s.now()
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		var res *gorm.DB
		action := ActionTwoFactorOptional
		if required {
			action = ActionTwoFactorRequired
			res = tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&twoFactorRole{Role: role, RequiredBy: actor, CreatedAt: now})
		} else {
			res = tx.Where("role = ?", role).Delete(&twoFactorRole{})
		}
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error // no change: nothing to audit
		}
		return tx.Create(&AuditEvent{At: now, Actor: actor, Action: action, TargetType: TargetUser, Detail: "role=" + string(role)}).Error
	})
	return s.dbErr("set two-step role", err)
}

// NeedsSecondFactorSetup reports whether u's role requires a second step
// that u has not set up: such a member may only set one up.
func (s *Store) NeedsSecondFactorSetup(ctx context.Context, u User) (bool, error) {
	required, err := s.RoleRequiresTwoFactor(ctx, u.Role)
	if err != nil || !required {
		return false, err
	}
	on, err := s.HasSecondFactor(ctx, u.ID)
	return !on, err
}

// HasSecondFactor reports whether the member id signs in with a second step.
func (s *Store) HasSecondFactor(ctx context.Context, id int64) (bool, error) {
	on, err := hasSecondFactor(s.db.WithContext(ctx), id)
	return on, s.dbErr("read second steps", err)
}

func hasSecondFactor(db *gorm.DB, id int64) (bool, error) {
	var n, keys int64
	if err := db.Model(&totpSecret{}).Where("user_id = ? AND confirmed_at IS NOT NULL", id).Count(&n).Error; err != nil {
		return false, err
	}
	if err := db.Model(&Passkey{}).Where("user_id = ?", id).Count(&keys).Error; err != nil {
		return false, err
	}
	return n+keys > 0, nil
}
