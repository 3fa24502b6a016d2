package templates

// APIKeysView is the API keys page: the create form, the key just created
// (if any) and the list of keys.
type APIKeysView struct {
	Keys []APIKeyRow
	Form APIKeyForm
	// NewKey is the key created by this very request, shown once; nil otherwise.
	NewKey *NewAPIKey
	// ReadOnly hides the create form and the revoke links: the member's
	// role may not manage keys.
	ReadOnly bool
}

// APIKeyRow is one key in the list. Times are ready to show, in UTC.
type APIKeyRow struct {
	ID        int64
	Name      string
	Prefix    string
	CreatedBy string
	Created   string
	// LastUsed is "never" for a key not used yet.
	LastUsed string
	// Revoked is when the key was revoked, "" while it is live.
	Revoked string
	// ReadOnly leaves out the row's Action cell (no revoke link).
	ReadOnly bool
}

// APIKeyForm is the create form as typed, with the name's error if any.
type APIKeyForm struct {
	Name      string
	NameError string
}

// NewAPIKey is a key just created. It exists only in the response that
// creates it: it is never stored, flashed or shown again.
type NewAPIKey struct {
	Name string
	Key  string
}

// RevokeAPIKeyView is the confirmation page before revoking a key.
type RevokeAPIKeyView struct {
	Key APIKeyRow
}
