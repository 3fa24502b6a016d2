package templates

// StaffView is the staff page: the accounts, the add form and the form to
// change one's own password.
type StaffView struct {
	Members  []StaffRow
	Add      StaffAddForm
	Password PasswordForm
	// MinPasswordLength is the password rule, told before it is broken.
	MinPasswordLength int
}

// StaffRow is one staff account in the list.
type StaffRow struct {
	Username string
	Created  string
	// You marks the signed-in staff member.
	You bool
}

// StaffAddForm is the add form as typed (passwords are never sent back)
// with each field's error.
type StaffAddForm struct {
	Username      string
	UsernameError string
	PasswordError string
}

// PasswordForm is the change-password form's errors; what was typed in
// password fields is never sent back.
type PasswordForm struct {
	CurrentError string
	NewError     string
}
