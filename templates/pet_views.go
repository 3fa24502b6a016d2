package templates

// PetPageView is one pet's page: its fields, the edit form and its history.
type PetPageView struct {
	ID         int64
	Name       string
	CategoryID string
	Status     string
	Created    Time
	Updated    Time
	Version    int64
	Form       PetEditForm
	// History is the pet's audit trail, newest first; HistoryURL leads to
	// the whole of it on the audit page when there is more than shown.
	History    []AuditRow
	HistoryURL string
	// ReadOnly leaves out the edit form: the member's role may not change
	// pets.
	ReadOnly bool
	// Back is the page of the pets list the pet was opened from ("": the
	// first page).
	Back string
}

// PetEditForm is the edit form: what it shows (the stored values, or what
// was typed), the version it saves over, and each field's error.
type PetEditForm struct {
	Name       string
	CategoryID string
	Status     string
	Version    string
	Errors     map[string]string
	CSRFToken  string
	// Conflict says who changed the pet since the form was loaded; the
	// form then shows what was typed, Theirs the values now stored (by
	// field name, for the fields that differ), and Version the pet's new
	// version, so that saving again replaces theirs.
	Conflict string
	Theirs   map[string]string
}
