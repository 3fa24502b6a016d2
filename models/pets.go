package models

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
)

// petState is what the pets keep in this process.
type petState struct {
	// queue batches concurrent creates into shared transactions
	// (pets_create.go).
	queue createQueue
	// stmts are the prepared statements (pets_statements.go).
	stmts petStatements
	// counts compacts the status counts (statuscounts.go).
	counts countsCompaction
	// createTimeout bounds a batch's transaction (pets_create.go), in
	// nanoseconds: defaultCreateTimeout, unless a test shortens it.
	createTimeout atomic.Int64
}

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
	// Version counts the pet's writes: 1 when created, one more with each
	// change (pets_update.go), so that an edit can be saved only over the
	// version it was made from. The partner API neither shows nor needs it.
	Version int64
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
