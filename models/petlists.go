package models

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gorm.io/plugin/dbresolver"
)

// Listing pets: the API's and the console's list queries, read from a URL
// and answered a page at a time with keyset reads (never a COUNT).

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

// validateSearch trims the console's name search text and checks its
// length: at most MaxSearchLength characters (a byte that is not UTF-8
// counts as one; such a search simply finds nothing).
func validateSearch(raw string) (string, error) {
	q := strings.TrimSpace(raw)
	if utf8.RuneCountInString(q) > MaxSearchLength {
		msg := fmt.Sprintf("Search text must be at most %d characters.", MaxSearchLength)
		return "", fieldError(FieldSearch, msg)
	}
	return q, nil
}

// ParsePetQuery validates the API's list parameters: limit, status and
// after. A parameter given empty or more than once is invalid, and so is
// any other parameter (unknownParams). (The console's list has its own
// parameters: ParsePetListing.)
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
	if s, ok := get(FieldLimit, limitMsg); ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxPageLimit || s[0] == '+' {
			v.add(FieldLimit, limitMsg)
		} else {
			q.Limit = n
		}
	}
	if s, ok := get(FieldStatus, StatusMessage); ok {
		q.Status = v.status(s)
	}
	if s, ok := get(FieldAfter, afterMessage); ok {
		q.After = v.after(s)
	}
	v.unknownParams(params, "the list takes limit, status and after", FieldLimit, FieldStatus, FieldAfter)
	if err := v.err(); err != nil {
		return PetQuery{}, err
	}
	return q, nil
}

// RefuseQuery refuses every parameter of a raw query string, for an API
// operation that takes none: GET /v1/pets/1?status=sold must not answer as
// if the status had been checked.
func RefuseQuery(raw string) error {
	if raw == "" {
		return nil
	}
	params, err := ParseQueryString(raw)
	if err != nil {
		return err
	}
	v := validation{}
	v.unknownParams(params, "this operation takes no query parameters")
	return v.err()
}

// unknownParams adds a message for each parameter of params not in known,
// in name order: a misspelt filter (stauts=sold) that was ignored would
// answer with more than the caller asked for, and the caller could not
// tell. takes says what the operation does take.
func (v *validation) unknownParams(params url.Values, takes string, known ...string) {
	var unknown []string
	for name := range params {
		if !slices.Contains(known, name) {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	for _, name := range unknown {
		v.add(name, fmt.Sprintf("Unknown parameter %q: %s.", name, takes))
	}
}

// limitMsg refuses a limit out of range (a constant: ParsePetQuery runs
// on every list request).
var limitMsg = "Limit must be a whole number from 1 to " + strconv.Itoa(MaxPageLimit) + "."

// afterMessage refuses an after that is not an id (or 0, the start).
const afterMessage = "After must be a pet id: a whole number from 0 upwards."

// status reads a status parameter, as the API and the console both take it.
func (v *validation) status(s string) Status {
	st, ok := ParseStatus(s)
	if !ok {
		v.add(FieldStatus, StatusMessage)
	}
	return st
}

// after reads an after parameter, as the API and the console both take it.
func (v *validation) after(s string) int64 {
	id, ok := parseID(s, 0)
	if !ok {
		v.add(FieldAfter, afterMessage)
	}
	return id
}

// petPages returns the reader of pages of a listing's filter, of at most
// maxLimit pets (MaxPageLimit for the console's pages, ExportChunk for an
// export's chunks): a name search is checked and planned once, for every
// page read with it.
func (s *Store) petPages(ctx context.Context, l PetListing, maxLimit int) (func(PetQuery) (PetPage, error), error) {
	if l.Search == "" {
		return func(q PetQuery) (PetPage, error) {
			q.Status = l.Status
			pets, more, err := s.listPets(ctx, q, maxLimit)
			return PetPage{Pets: pets, More: more}, err
		}, nil
	}
	if _, err := validateSearch(l.Search); err != nil {
		return nil, err
	}
	plan, ok, err := s.planFor(ctx, l.Search)
	if err != nil {
		return nil, s.dbErr("search pets", err)
	}
	return func(q PetQuery) (PetPage, error) {
		if q.Limit < 1 || q.Limit > maxLimit {
			q.Limit = DefaultPageLimit
		}
		if !ok {
			return PetPage{Pets: []Pet{}}, nil // nothing can match
		}
		q.Status = l.Status
		page, err := s.runSearch(ctx, plan, q)
		if err != nil {
			return PetPage{}, s.dbErr("search pets", err)
		}
		return page, nil
	}, nil
}

// petsByStatus names the pets table with its (status, id) index forced.
const petsByStatus = "pets FORCE INDEX (idx_pets_status_id)"

// ListPets returns one page of pets in id order, and whether more pets
// follow it. It reads Limit+1 rows to know; it never counts the table, so
// its cost does not grow with the table.
func (s *Store) ListPets(ctx context.Context, q PetQuery) ([]Pet, bool, error) {
	return s.listPets(ctx, q, MaxPageLimit)
}

// listPets is ListPets with pages of up to maxLimit pets.
func (s *Store) listPets(ctx context.Context, q PetQuery, maxLimit int) ([]Pet, bool, error) {
	if q.Limit < 1 || q.Limit > maxLimit {
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
			// row by row, which grows with the id a page starts at; forced,
			// it reads the (status, id) range, whose cost does not.
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

// PetPage is one page of a pet listing and where the listing goes on.
type PetPage struct {
	// Pets are in id order, lowest first, whatever the paging direction.
	Pets []Pet
	// More reports that more pets may follow in the paging direction.
	More bool
	// Resume, when not 0, is where a name search stopped on its budget
	// before filling the page: more matches may lie beyond it, and the
	// listing continues from it (exclusive) rather than from the last pet
	// shown. More is then true.
	Resume int64
}

// ListPetsPage returns one page of pets, as ListPets does; a name search
// (q.NameContains) may also stop on its budget and say where to resume.
// The console reads it through ListPetListing; the search's tests and
// benchmarks read it directly.
func (s *Store) ListPetsPage(ctx context.Context, q PetQuery) (PetPage, error) {
	if q.NameContains == "" {
		pets, more, err := s.ListPets(ctx, q)
		return PetPage{Pets: pets, More: more}, err
	}
	if _, err := validateSearch(q.NameContains); err != nil {
		return PetPage{}, err
	}
	if q.Limit < 1 || q.Limit > MaxPageLimit {
		q.Limit = DefaultPageLimit
	}
	page, err := s.searchPets(ctx, q)
	if err != nil {
		return PetPage{}, s.dbErr("search pets", err)
	}
	return page, nil
}
