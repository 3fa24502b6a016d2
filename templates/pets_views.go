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
	Status string // "" for all
	Query  string
}

// PetTableView is one page of pets, newest first, with links to the pages
// around it ("" when there is none).
type PetTableView struct {
	Rows      []PetRow
	NewerURL  string
	OlderURL  string
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
	// ReadOnly leaves out the row's status form and its bulk checkbox.
	ReadOnly bool
}

// PetFormView is the add form: what was typed and each field's error.
type PetFormView struct {
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
