package models

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/plugin/dbresolver"
)

// Status is a pet's availability: one of StatusAvailable, StatusPending, StatusSold.
type Status string

// The pet statuses, exactly as the API spells them.
const (
	StatusAvailable Status = "available"
	StatusPending   Status = "pending"
	StatusSold      Status = "sold"
)

// Statuses lists every status in display order.
var Statuses = []Status{StatusAvailable, StatusPending, StatusSold}

// DefaultStatus is what a new pet gets when no status is given: staff list
// new animals as available.
const DefaultStatus = StatusAvailable

// Limits of pet fields and listings.
const (
	MaxNameLength    = 255
	DefaultPageLimit = 20
	MaxPageLimit     = 100
	// MaxSearchLength bounds the console's name search, in characters: a
	// name is at most MaxNameLength; a search's words beyond the first few
	// are checked on the candidates, so its length bounds that work.
	MaxSearchLength = 200
)

// ParseStatus returns the Status spelled s, or false.
func ParseStatus(s string) (Status, bool) {
	for _, st := range Statuses {
		if string(st) == s {
			return st, true
		}
	}
	return "", false
}

// Pet is an animal offered by the store.
type Pet struct {
	ID         int64
	Name       string
	CategoryID int64
	Status     Status
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// PetInput is a new pet as a client sent it, before validation. The API
// fills it from JSON and the console from a form; both then call Validate,
// so the rules live here once.
type PetInput struct {
	Name string
	// CategoryID is the number as written ("42"); "" means not given.
	CategoryID string
	// Status is nil when not given (the default applies).
	Status *string
	// Invalid holds problems the decoder found before validation, such as a
	// JSON number where a string belongs, keyed by field name.
	Invalid []FieldError
}

// NewPet is a validated new pet, ready to store.
type NewPet struct {
	Name       string
	CategoryID int64
	Status     Status
}

// Field names used in FieldError, shared by the API and the console.
const (
	FieldName       = "name"
	FieldCategoryID = "categoryId"
	FieldStatus     = "status"
	FieldLimit      = "limit"
	FieldAfter      = "after"
	FieldBefore     = "before"
	FieldPetID      = "petId"
	FieldSearch     = "q"
)

// Validate applies the new-pet rules: the name is trimmed and must then be
// 1..255 code points without control characters or the invisible and
// text-direction characters of hiddenChar; the category ID is an
// integer from 1 to 2^63-1; the status, if given, is one of the three values.
func (in PetInput) Validate() (NewPet, error) {
	// Fields are checked, and reported, in the order of the NewPet shape;
	// a field the decoder already found unreadable keeps its message.
	v := validation{}
	invalid := func(field string) bool {
		for _, f := range in.Invalid {
			if f.Field == field {
				v.add(f.Field, f.Message)
				return true
			}
		}
		return false
	}
	var out NewPet
	if !invalid(FieldName) {
		name, msg := ValidateName(in.Name)
		if msg != "" {
			v.add(FieldName, msg)
		}
		out.Name = name
	}
	if !invalid(FieldCategoryID) {
		id, msg := parseCategoryID(in.CategoryID)
		if msg != "" {
			v.add(FieldCategoryID, msg)
		}
		out.CategoryID = id
	}
	if !invalid(FieldStatus) {
		out.Status = DefaultStatus
		if in.Status != nil {
			st, ok := ParseStatus(*in.Status)
			if !ok {
				v.add(FieldStatus, StatusMessage)
			}
			out.Status = st
		}
	}
	if err := v.err(); err != nil {
		return NewPet{}, err
	}
	return out, nil
}

// StatusMessage is the one message for a status that is not allowed.
const StatusMessage = "Status must be one of available, pending, sold."

// ValidateName trims a pet name and checks it, returning the name to store
// and a message when it is not acceptable.
func ValidateName(raw string) (string, string) {
	if !utf8.ValidString(raw) {
		return "", "Name must be valid UTF-8 text."
	}
	name := strings.TrimSpace(raw)
	switch {
	case name == "":
		return "", "Name is required."
	case utf8.RuneCountInString(name) > MaxNameLength:
		return "", fmt.Sprintf("Name must be at most %d characters.", MaxNameLength)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "", "Name must not contain control characters."
	}
	if msg := hiddenCharMessage(name); msg != "" {
		return "", msg
	}
	return name, ""
}

func parseCategoryID(s string) (int64, string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, "Category ID is required."
	}
	id, err := strconv.ParseInt(s, 10, 64)
	var numErr *strconv.NumError
	if errors.As(err, &numErr) && numErr.Err == strconv.ErrRange && s[0] != '-' {
		return 0, fmt.Sprintf("Category ID is too large: at most %d.", int64(math.MaxInt64))
	}
	if err != nil || id < 1 || s[0] == '+' {
		return 0, "Category ID must be a positive whole number, such as 1 or 42."
	}
	return id, ""
}

// PetQuery selects one page of pets in id order.
type PetQuery struct {
	// Limit is the page size, 1..MaxPageLimit.
	Limit int
	// Status filters by status when not "".
	Status Status
	// After returns pets with id greater than it (keyset paging forward).
	After int64
	// Before returns pets with id less than it, nearest first; only the
	// console pages backwards. Ignored when 0.
	Before int64
	// NameContains is the console's name search: pets whose name has words
	// starting with each word of it, ignoring case and accents (see
	// search.go).
	NameContains string
	// AllowStale lets a read replica answer, a moment behind the primary
	// (partner list reads); otherwise the primary answers, so staff see
	// what they have just done.
	AllowStale bool
}

// ParseQueryString reads a raw query string as the API and the console do.
// A pair that Go's url.ParseQuery cannot read (one separated by ';', or
// with a malformed %-escape) is refused, never silently dropped: a dropped
// "status=sold" would answer an unfiltered list as if it were filtered.
func ParseQueryString(raw string) (url.Values, error) {
	params, err := url.ParseQuery(raw)
	if err != nil {
		msg := "The query string cannot be read: it has too many parameters."
		switch {
		case strings.Contains(err.Error(), "semicolon"):
			msg = "The query string cannot be read: separate parameters with & (not ;), and write ; in a value as %3B."
		case errors.As(err, new(url.EscapeError)):
			msg = "The query string cannot be read: a % must start an escape such as %25 (for %) or %3B (for ;)."
		}
		return nil, &Error{Code: CodeInvalidRequest, Message: msg, Err: err}
	}
	return params, nil
}

// ValidateSearch trims the console's name search text and checks its
// length: at most MaxSearchLength characters (a byte that is not UTF-8
// counts as one; such a search simply finds nothing).
func ValidateSearch(raw string) (string, error) {
	q := strings.TrimSpace(raw)
	if utf8.RuneCountInString(q) > MaxSearchLength {
		msg := fmt.Sprintf("Search text must be at most %d characters.", MaxSearchLength)
		return "", fieldError(FieldSearch, msg)
	}
	return q, nil
}

// ParsePetQuery validates list parameters from a query string: limit,
// status and after. A parameter given empty or more than once is invalid;
// callers that treat an empty value as "not given" (the console's "All"
// choice) remove it first. The API and the console both use it.
func ParsePetQuery(params url.Values) (PetQuery, error) {
	v := validation{}
	q := PetQuery{Limit: DefaultPageLimit}
	get := func(field, msg string) (string, bool) {
		vals, ok := params[field]
		switch {
		case !ok:
			return "", false
		case len(vals) != 1 || vals[0] == "":
			v.add(field, msg)
			return "", false
		}
		return vals[0], true
	}
	limitMsg := fmt.Sprintf("Limit must be a whole number from 1 to %d.", MaxPageLimit)
	if s, ok := get(FieldLimit, limitMsg); ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxPageLimit || s[0] == '+' {
			v.add(FieldLimit, limitMsg)
		} else {
			q.Limit = n
		}
	}
	if s, ok := get(FieldStatus, StatusMessage); ok {
		st, ok := ParseStatus(s)
		if !ok {
			v.add(FieldStatus, StatusMessage)
		}
		q.Status = st
	}
	afterMsg := "After must be a pet id: a whole number from 0 upwards."
	if s, ok := get(FieldAfter, afterMsg); ok {
		id, ok := parseID(s, 0)
		if !ok {
			v.add(FieldAfter, afterMsg)
		}
		q.After = id
	}
	if err := v.err(); err != nil {
		return PetQuery{}, err
	}
	return q, nil
}

// ParsePetID parses a pet id from a URL: a whole number from 1 to 2^63-1.
func ParsePetID(s string) (int64, error) {
	id, ok := parseID(s, 1)
	if !ok {
		return 0, &Error{Code: CodeInvalidRequest,
			Message: fmt.Sprintf("Pet id must be a whole number from 1 to %d.", int64(math.MaxInt64)),
			Fields:  []FieldError{{FieldPetID, "Must be a whole number from 1 to 9223372036854775807."}}}
	}
	return id, nil
}

func parseID(s string, lowest int64) (int64, bool) {
	if s == "" || s[0] == '+' {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id >= lowest
}

// petsByStatus names the pets table with its (status, id) index forced.
const petsByStatus = "pets FORCE INDEX (idx_pets_status_id)"

// ListPets returns one page of pets in id order, and whether more pets
// follow it. It reads Limit+1 rows to know; it never counts the table, so
// its cost does not grow with the table.
func (s *Store) ListPets(ctx context.Context, q PetQuery) ([]Pet, bool, error) {
	if q.Limit < 1 || q.Limit > MaxPageLimit {
		q.Limit = DefaultPageLimit
	}
	if q.NameContains != "" {
		// A name search reads the search index (search.go). It may stop on
		// its budget before filling the page: ListPetsPage says where to
		// go on; here that is "more".
		page, err := s.ListPetsPage(ctx, q)
		return page.Pets, page.More, err
	}
	tx := s.db.WithContext(ctx).Model(&Pet{})
	if !q.AllowStale {
		tx = tx.Clauses(dbresolver.Write)
	}
	if q.Status != "" {
		if s.driver == DriverMySQL {
			// MariaDB picks a ref read of the status prefix and filters ids
			// row by row (21 ms a page at id 800,000 of a million); forced,
			// it reads the (status, id) range: 0.3 ms.
			tx = tx.Table(petsByStatus)
		}
		tx = tx.Where("status = ?", q.Status)
	}
	backwards := q.Before > 0
	if backwards {
		tx = tx.Where("id < ?", q.Before).Order("id DESC")
	} else {
		tx = tx.Where("id > ?", q.After).Order("id ASC")
	}
	pets := make([]Pet, 0, q.Limit+1)
	if err := tx.Limit(q.Limit + 1).Find(&pets).Error; err != nil {
		return nil, false, s.dbErr("list pets", err)
	}
	more := len(pets) > q.Limit
	if more {
		pets = pets[:q.Limit]
	}
	if backwards {
		for i, j := 0, len(pets)-1; i < j; i, j = i+1, j-1 {
			pets[i], pets[j] = pets[j], pets[i]
		}
	}
	return pets, more, nil
}

// UpdatePetStatus changes a pet's status and records who did it and when.
// Setting the status it already has changes nothing.
func (s *Store) UpdatePetStatus(ctx context.Context, id int64, status Status, actor string) (Pet, error) {
	if _, ok := ParseStatus(string(status)); !ok {
		return Pet{}, fieldError(FieldStatus, StatusMessage)
	}
	var p Pet
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&p).Error; err != nil {
			return err
		}
		if p.Status == status {
			return nil
		}
		now := s.now()
		old := p.Status
		if err := tx.Model(&Pet{}).Where("id = ?", id).Updates(map[string]any{"status": status, "updated_at": now}).Error; err != nil {
			return err
		}
		p.Status, p.UpdatedAt = status, now
		return tx.Create(&AuditEvent{At: now, Actor: actor, Action: ActionPetStatusChanged, TargetType: TargetPet,
			TargetID: id, Detail: fmt.Sprintf("%s -> %s", old, status)}).Error
	})
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Pet{}, notFound("pet", id)
	}
	if err != nil {
		return Pet{}, s.dbErr("update pet status", err)
	}
	return p, nil
}
