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
	Created   Time
	// LastUsed is "never" for a key not used yet.
	LastUsed Time
	// Revoked is when the key was revoked, "" while it is live.
	Revoked Time
	// Scopes are the names of the key's scopes.
	Scopes []string
	// Expires is when the key stops working, "never" for a key without
	// expiry.
	Expires Time
	// Expired is true once a live (unrevoked) key's expiry has passed.
	Expired bool
	// LastDeprecatedCall is when the key last called the deprecated
	// GET /v1/pets/{petId}, "never" if it has not.
	LastDeprecatedCall Time
	// ReadOnly leaves out the row's Action cell (no revoke link).
	ReadOnly bool
}

// APIKeyForm is the create form as typed, with each field's error if any.
type APIKeyForm struct {
	Name      string
	NameError string
	// Scopes are the scope checkboxes, in order.
	Scopes      []ScopeOption
	ScopesError string
	// Expires is the expiry date as typed (YYYY-MM-DD), "" for none.
	Expires      string
	ExpiresError string
	// MinExpires is the earliest expiry date the date picker offers.
	MinExpires string
	// Zone is the store's time zone, in which a typed date is read.
	Zone string
}

// ScopeOption is one scope's checkbox in the create form.
type ScopeOption struct {
	// ID is unique on the page and safe in an id attribute.
	ID      string
	Name    string
	Help    string
	Checked bool
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
