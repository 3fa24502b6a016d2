package templates

// StaffView is the staff page: the accounts and the add form.
type StaffView struct {
	Members []StaffRow
	Add     StaffAddForm
	// MinPasswordLength is the password rule, told before it is broken.
	MinPasswordLength int
	// ReadOnly hides the add form: the member's role may not manage staff.
	ReadOnly bool
	// TwoFactorRoles are the roles that require two-step sign-in.
	TwoFactorRoles []string
}

// Roles lists the role values in the order the forms offer them.
var Roles = []string{"viewer", "editor", "admin"}

// roleHelp says what each role may do, beside the role fields.
const roleHelp = "Viewers read every page; editors also add and change pets; admins also manage API keys, webhooks and staff accounts."

// StaffRow is one staff account in the list.
type StaffRow struct {
	ID       int64
	Username string
	Created  Time
	// State is "Enabled", "Disabled" or "Must change password".
	State string
	// Role is "viewer", "editor" or "admin".
	Role string
	// You marks the signed-in staff member.
	You bool
}

// StaffAddForm is the add form as typed (passwords are never sent back)
// with each field's error.
type StaffAddForm struct {
	Username      string
	UsernameError string
	PasswordError string
	// Role is the role chosen, "" for the default (editor).
	Role      string
	RoleError string
}

// MemberView is one staff member's page: the account's state, its API
// keys, and the forms that act on it.
type MemberView struct {
	ID       int64
	Username string
	// You marks the signed-in member's own page: disable and reset are
	// offered only for others.
	You      bool
	Disabled bool
	// Role is "viewer", "editor" or "admin".
	Role string
	// ReadOnly hides the actions and the revoke links: the signed-in
	// member's role may not manage staff accounts.
	ReadOnly bool
	// DisabledAt is when the account was disabled, "" while enabled.
	DisabledAt         Time
	MustChangePassword bool
	Created            Time
	// LastSignIn is the last successful sign-in, "never" without one.
	LastSignIn Time
	// Keys are the live API keys this member created.
	Keys []APIKeyRow
	// OneTimePassword is the password a reset made in this very response,
	// shown once; it is never stored, flashed or put in a URL.
	OneTimePassword string
	// Error is why the action just asked for was refused, "" otherwise.
	Error string
}
