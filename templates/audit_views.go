package templates

// AuditView is the audit page: filters and one page of events.
type AuditView struct {
	Action  string
	Actor   string
	Target  string
	Actions []string
	Rows    []AuditRow
	// OlderURL leads to the next page; NewestURL back to the first ("" when on it).
	OlderURL  string
	NewestURL string
	Filtered  bool
	Error     string
}

// AuditRow is one event as the table shows it.
type AuditRow struct {
	When      string
	Actor     string
	Action    string
	Target    string
	TargetURL string
	Detail    string
}
