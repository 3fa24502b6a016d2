package templates

// Statuses lists the pet statuses in display order.
var Statuses = []string{"available", "pending", "sold"}

// PetsView is the pets page: filters, one page of the table, the add form.
type PetsView struct {
	Filter PetFilter
	Table  PetTableView
	Form   PetFormView
	// Summary says what the last bulk status change did ("" for none).
	Summary string
	// ReadOnly hides the add form: the member's role may not add pets.
	ReadOnly bool
}

// PetFilter is the filter form's state, reflected in the URL.
type PetFilter struct {
	Status   string // "" for all
	Query    string
	Category string // a category id, "" for all
	From, To string // dates, 2006-01-02, "" when open
	PerPage  string // "20", "50" or "100"
}

// PerPageChoices are the page sizes the filter offers.
var PerPageChoices = []string{"20", "50", "100"}

// SortColumn is a column header that sorts the list.
type SortColumn struct {
	Label  string // "Name"
	Column string // "name", "category", "created"
	// URL is the list sorted by the column (reversed when it is the
	// current one); "" when the list cannot be sorted by it now.
	URL string
	// AriaSort is "ascending" or "descending" on the sorted column.
	AriaSort string
	// Next is the order URL sorts in, for the link's name.
	Next string
}

// Added is what an add just did, announced beside the add form: its
// message and a link to the new pet.
type Added struct {
	Text string
	Name string
	URL  string
}

// PetTableView is one page of pets, in the list's order, with links to
// the pages around it ("" when there is none): NewerURL is the previous
// page and OlderURL the next, each with its label (newest first they are
// "← Newer" and "Older →").
type PetTableView struct {
	Rows                                        []PetRow
	NewerURL                                    string
	OlderURL                                    string
	FirstURL                                    string
	LastURL                                     string
	PrevLabel, NextLabel, FirstLabel, LastLabel string
	// Columns are the sortable column headers.
	Columns []SortColumn
	// SortNote says why the list keeps its order ("" when every column
	// sorts).
	SortNote string
	// CountNote says that the counts are of all pets, not of the filter.
	CountNote bool
	// Sort is the list's order as its address says it ("" for the
	// default), which the filter form keeps.
	Sort      string
	Filtered  bool
	CSRFToken string
	// Note says that a name search stopped before filling the page, and
	// where it goes on (the Older or Newer link).
	Note string
	// URL is this page's own address (filter and position), where a bulk
	// status change comes back to.
	URL string
	// ExportURL is the CSV export of the filter: every page of it.
	ExportURL string
	// FocusBulk puts the keyboard focus back on the bulk form's button
	// after an htmx bulk change replaced it; BulkStatus is the status it
	// chose, shown chosen again ("" for the first).
	FocusBulk  bool
	BulkStatus string
	// ReadOnly hides the status forms and the bulk change: the member's
	// role may not change pets.
	ReadOnly bool
	// Counts are how many pets each status has, all pets first; a table
	// read again shows them again (statusCounts).
	Counts []StatusCount
}

// PetRow is one pet as the table shows it.
type PetRow struct {
	ID         int64
	Name       string
	CategoryID string
	Status     string
	Created    Time
	// Version is the pet's version as shown: a bulk change of the row
	// writes only over it.
	Version int64
	// Changed marks a row just added or updated.
	Changed bool
	// URL is the pet's page, with the way back to this page of the list.
	URL string
	// ReadOnly leaves out the row's status form and its bulk checkbox.
	ReadOnly bool
}

// PetFormView is the add form: what was typed and each field's error.
type PetFormView struct {
	// Open shows the form at once (after an add, or with errors).
	Open       bool
	Name       string
	CategoryID string
	Status     string
	Errors     map[string]string
	CSRFToken  string
}

// StatusCount is one link of the numbers at a glance: a status (or all
// pets) and how many pets it has.
type StatusCount struct {
	Label  string // "All", "Available", …
	Status string // "" for all pets
	Count  string // grouped by thousands: "600,012"
	Noun   string // after the number, for screen readers: "pets", or "pet"
	URL    string // the list filtered by it
	// Current marks the status the list is filtered by (All when none).
	Current bool
}
