package templates

import "strconv"

// SecondStepView is the sign-in's second step: a code after the password.
type SecondStepView struct {
	Error string
	// Next is where to go after signing in.
	Next string
}

// AccountView is the member's own account page.
type AccountView struct {
	Username string
	// Password is the password form's refusals; MinPasswordLength its rule,
	// told before it is broken.
	Password          PasswordForm
	MinPasswordLength int
	// MustChangePassword: another member reset the password, and the page
	// holds only the form to choose a new one until it is done.
	MustChangePassword bool
	// TOTP is on once an authenticator app was confirmed; Pending while one
	// waits for its first code.
	TOTP, Pending bool
	// RecoveryCodesLeft counts the unused recovery codes.
	RecoveryCodesLeft int64
	// Required says the member's role requires a second step; MustSetUp
	// that they have none yet and may do nothing else until they do.
	Required, MustSetUp bool
	// Error is a refusal to show at the top of the two-step section.
	Error string
	// ProofError is the refusal of the password or code asked for by the
	// form ProofFor (ProofDisable, ProofRenew).
	ProofError, ProofFor string
	// Passkeys are the member's passkeys.
	Passkeys []PasskeyRow
}

// PasswordForm is the change-password form's errors; what was typed in
// password fields is never sent back.
type PasswordForm struct {
	CurrentError string
	NewError     string
	ConfirmError string
}

// PasskeyRow is one of the member's passkeys.
type PasskeyRow struct {
	ID       int64
	Name     string
	Created  Time
	LastUsed Time // "never" until used
}

// TOTPSetupView is the page that sets up an authenticator app.
type TOTPSetupView struct {
	// QR is the otpauth:// URL as a QR code, an SVG data: URL.
	QR string
	// Secret is the secret in groups of four, for typing in.
	Secret    string
	CodeError string
}

// RecoveryCodesView shows recovery codes, once.
type RecoveryCodesView struct {
	Codes []string
	// Enabled says two-step sign-in has just been turned on.
	Enabled bool
}

// ResetTwoFactorView is the confirmation of an admin's reset of another
// member's second steps.
type ResetTwoFactorView struct {
	ID       int64
	Username string
}

// The account page's forms that ask for the password or a code.
const (
	ProofDisable = "disable"
	ProofRenew   = "renew"
)

// proofError is the refusal to show in form's password or code field.
func (v AccountView) proofError(form string) string {
	if v.ProofFor != form {
		return ""
	}
	return v.ProofError
}

// RemovePasskeyView asks to confirm removing one of the member's passkeys.
type RemovePasskeyView struct {
	ID   int64
	Name string
	// TOTP says the member may prove it is them with a code from their app.
	TOTP bool
	// ProofError is the refusal of the password or code; Error another
	// refusal (the role requires the last second step, too many tries).
	ProofError, Error string
}

// PasskeyRemovePath is the address that removes the passkey id.
func PasskeyRemovePath(id int64) string {
	return "/admin/account/passkeys/" + strconv.FormatInt(id, 10) + "/delete"
}
