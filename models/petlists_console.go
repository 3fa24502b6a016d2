package models

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The console's list of pets: its filters and sorts as its URL gives
// them, and its pages, read by keyset on (sort key, id) from an index that
// holds that order (migration 17), so a page costs the same wherever it
// lies.

// The console list's own parameters (with status, q, after and before).
const (
	FieldSort        = "sort"
	FieldPerPage     = "per_page"
	FieldCategory    = "category"
	FieldCreatedFrom = "created_from"
	FieldCreatedTo   = "created_to"
	// FieldKey is the sort key of the pet a page starts beyond (after or
	// before): with its id it is the keyset cursor.
	FieldKey = "key"
	// FieldLast asks for the last page of the order ("1").
	FieldLast = "last"
)

// PetSort is an order of the console's list: a column, ascending, or
// descending when it starts with "-". Ties are broken by id, the same way.
type PetSort string

// The console list's orders.
const (
	SortNewest       PetSort = "-created" // the default
	SortOldest       PetSort = "created"
	SortName         PetSort = "name"
	SortNameDesc     PetSort = "-name"
	SortCategory     PetSort = "category"
	SortCategoryDesc PetSort = "-category"
)

// PetSorts lists every order the console's list takes.
var PetSorts = []PetSort{SortNewest, SortOldest, SortName, SortNameDesc, SortCategory, SortCategoryDesc}

// Column is the order's column: "created", "name" or "category".
func (o PetSort) Column() string { return strings.TrimPrefix(string(o), "-") }

// Descending reports a descending order.
func (o PetSort) Descending() bool { return strings.HasPrefix(string(o), "-") }

// PerPageChoices are the console list's page sizes; the first is the
// default.
var PerPageChoices = []int{20, 50, 100}

// dateLayout is how staff type a date (an HTML date input sends it so).
const dateLayout = "2006-01-02"

// PetListing is the console's list of pets as its URL gives it: a filter,
// an order, a page size, and where the page starts.
type PetListing struct {
	// Status filters by status when not "" (the "All" choice).
	Status Status
	// Search is the name search (search.go), trimmed; "" searches nothing.
	// A search lists newest first (Order) and takes no category or dates.
	Search string
	// Category filters by category id when not 0.
	Category int64
	// From and To filter by the day a pet was created, both inclusive, as
	// dates (2006-01-02) in Zone; "" leaves that end open.
	From, To string
	// Zone is the store's time zone, where the dates' days begin (nil:
	// UTC).
	Zone *time.Location
	// Sort is the order asked for ("": SortNewest); Order is the one used.
	Sort PetSort
	// PerPage is the page size, one of PerPageChoices (0: the first).
	PerPage int
	// After and Before, when not 0, are the id of the pet the page starts
	// beyond, in the order's ascending terms: After asks for the pets
	// following that pet in (sort key, id) ascending, Before for those
	// preceding it, nearest first. For a descending order Before is thus
	// the next page and After the previous. After wins over Before. Key
	// is that pet's sort key (PetSortKey); "" has it read from the pet.
	After, Before int64
	Key           string
	// Last asks for the last page of the order (no After or Before).
	Last bool
}

// Order is the order the listing is read in: Sort, except that a name
// search lists newest first (the search index is read in id order), and
// that a date range keeps the created order (only created_at's indexes
// hold a range of days in order; sorting a range by name would read every
// pet of it). SortNote says so to staff.
func (l PetListing) Order() PetSort {
	switch {
	case l.Search != "":
		return SortNewest
	case l.Sort == "":
		return SortNewest
	case (l.From != "" || l.To != "") && l.Sort.Column() != "created":
		return SortNewest
	}
	return l.Sort
}

// Limit is the listing's page size.
func (l PetListing) Limit() int {
	if slices.Contains(PerPageChoices, l.PerPage) {
		return l.PerPage
	}
	return PerPageChoices[0]
}

// Filtered reports a filter beyond all pets.
func (l PetListing) Filtered() bool {
	return l.Status != "" || l.Search != "" || l.Category != 0 || l.From != "" || l.To != ""
}

// PetNumber reads a search for a pet by its number, "#42" (spaces
// allowed around it): the pet's id, and whether the search is one.
func PetNumber(search string) (int64, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(search), "#")
	if !ok {
		return 0, false
	}
	return ParseID(strings.TrimSpace(rest))
}

// pageAddressMsg refuses a cursor that is not one the console wrote.
const pageAddressMsg = "The page address is not valid: go back to the first page of the list."

// ParsePetListing reads the console's list parameters: status, q,
// category, created_from, created_to, sort, per_page, and the cursor
// (after or before, key, last). Of a parameter given more than once the
// first counts, and an empty one is not given (the empty status is the
// "All" choice). Status and ids follow the API's rules. The dates are read
// in UTC until Zone is set.
func ParsePetListing(params url.Values) (PetListing, error) {
	var l PetListing
	v := validation{}
	if s := params.Get(FieldStatus); s != "" {
		l.Status = v.status(s)
	}
	if s := params.Get(FieldAfter); s != "" {
		l.After = v.after(s)
	}
	if err := v.err(); err != nil {
		return PetListing{}, err
	}
	if s := params.Get(FieldBefore); s != "" {
		id, ok := ParseID(s)
		if !ok {
			return PetListing{}, fieldError(FieldBefore, "The page address is not valid: before must be a pet id.")
		}
		l.Before = id
	}
	search, err := validateSearch(params.Get(FieldSearch))
	if err != nil {
		return PetListing{}, err
	}
	l.Search = search
	if err := l.parseConsole(params); err != nil {
		return PetListing{}, err
	}
	return l, nil
}

// parseConsole reads the list's sort, page size, category, dates and the
// rest of the cursor: the first bad one is the message.
func (l *PetListing) parseConsole(params url.Values) error {
	if s := params.Get(FieldSort); s != "" {
		if !slices.Contains(PetSorts, PetSort(s)) {
			return fieldError(FieldSort, fmt.Sprintf("The list cannot be sorted by %q: sort by name, category or created (a leading - reverses the order).", s))
		}
		l.Sort = PetSort(s)
	}
	if s := params.Get(FieldPerPage); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || !slices.Contains(PerPageChoices, n) || s[0] == '+' {
			return fieldError(FieldPerPage, "Pets per page must be 20, 50 or 100.")
		}
		l.PerPage = n
	}
	if s := params.Get(FieldCategory); s != "" {
		id, ok := ParseID(s)
		if !ok {
			return fieldError(FieldCategory, "The category must be a category number: a whole number from 1 upwards.")
		}
		l.Category = id
	}
	for _, d := range []struct {
		field, what string
		to          *string
	}{{FieldCreatedFrom, "“Created from”", &l.From}, {FieldCreatedTo, "“Created to”", &l.To}} {
		s := params.Get(d.field)
		if s == "" {
			continue
		}
		if _, err := time.Parse(dateLayout, s); err != nil {
			return fieldError(d.field, d.what+" must be a date written as year-month-day, such as 2026-03-01.")
		}
		*d.to = s
	}
	if l.From != "" && l.To != "" && l.From > l.To {
		return fieldError(FieldCreatedTo, "“Created to” must be the same day as “Created from” or later.")
	}
	if l.Search != "" && (l.Category != 0 || l.From != "" || l.To != "") {
		return fieldError(FieldSearch, "A name search cannot be combined with a category or dates: clear the search, or the category and dates.")
	}
	switch s := params.Get(FieldLast); s {
	case "":
	case "1":
		l.Last = l.After == 0 && l.Before == 0
	default:
		return fieldError(FieldLast, pageAddressMsg)
	}
	if s := params.Get(FieldKey); s != "" && (l.After != 0 || l.Before != 0) {
		if _, err := parseSortKey(l.Order(), s); err != nil {
			return fieldError(FieldKey, pageAddressMsg)
		}
		l.Key = s
	}
	return nil
}

// PetSortKey is a pet's key in an order, as a cursor's key parameter
// carries it.
func PetSortKey(o PetSort, p Pet) string {
	switch o.Column() {
	case "name":
		return p.Name
	case "category":
		return strconv.FormatInt(p.CategoryID, 10)
	}
	return p.CreatedAt.UTC().Format(time.RFC3339Nano)
}

// parseSortKey reads a cursor's key for an order, as the database
// compares it.
func parseSortKey(o PetSort, s string) (any, error) {
	switch o.Column() {
	case "name":
		if utf8.RuneCountInString(s) > 255 {
			return nil, fmt.Errorf("key longer than a name")
		}
		return s, nil
	case "category":
		id, ok := ParseID(s)
		if !ok {
			return nil, fmt.Errorf("key %q is no category", s)
		}
		return id, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil, err
	}
	return t.UTC(), nil
}

// dayBounds are the instants the listing's dates stand for: From's day's
// start and the end of To's day (exclusive), zero when open.
func (l PetListing) dayBounds() (from, to time.Time) {
	zone := l.Zone
	if zone == nil {
		zone = time.UTC
	}
	if d, err := time.ParseInLocation(dateLayout, l.From, zone); err == nil {
		from = d.UTC()
	}
	if d, err := time.ParseInLocation(dateLayout, l.To, zone); err == nil {
		to = d.AddDate(0, 0, 1).UTC()
	}
	return from, to
}

// within reports whether a creation time lies within the listing's dates.
func (l PetListing) within(t time.Time) bool {
	lo, hi := l.dayBounds()
	return !t.Before(lo) && (hi.IsZero() || t.Before(hi))
}

// createdBound is the time of a cursor's condition on created_at.
func createdBound(cond string, args []any) (time.Time, bool) {
	if !strings.HasPrefix(cond, "created_at ") || len(args) == 0 {
		return time.Time{}, false
	}
	t, ok := args[0].(time.Time)
	return t, ok
}

// PetListingPage is one page of the console's list of pets.
type PetListingPage struct {
	// Pets are in the listing's order.
	Pets []Pet
	// Prev and Next report pets beyond the page on either side, in the
	// listing's order.
	Prev, Next bool
	// Resume, when not 0, is where a name search stopped on its budget
	// before filling the page (PetPage.Resume): matches may lie beyond it
	// in the paging direction (newer on a page asked for with After, else
	// older), and the listing goes on from it.
	Resume int64
}

// ListPetListing reads one page of the console's list, limit pets in the
// listing's order, and whether pets lie beyond it on either side: limit+1
// pets in the paging direction, and for a page asked for with a cursor one
// probe for a pet the other way.
func (s *Store) ListPetListing(ctx context.Context, l PetListing, limit int) (PetListingPage, error) {
	if l.Search != "" {
		return s.searchListing(ctx, l, limit)
	}
	desc := l.Order().Descending()
	var from *keysetCursor
	ascending := !desc // the read's direction in (key, id) terms
	switch {
	case l.After != 0:
		ascending = true
		c, err := s.cursorOf(ctx, l, l.After)
		if err != nil {
			return PetListingPage{}, err
		}
		from = &c
	case l.Before != 0:
		ascending = false
		c, err := s.cursorOf(ctx, l, l.Before)
		if err != nil {
			return PetListingPage{}, err
		}
		from = &c
	case l.Last:
		ascending = desc
	}
	pets, more, err := s.keysetRead(ctx, l, ascending, from, limit)
	if err != nil {
		return PetListingPage{}, err
	}
	// Forward is the read in the listing's own order.
	forward := ascending != desc
	if !forward {
		slices.Reverse(pets)
	}
	out := PetListingPage{Pets: pets}
	if forward {
		out.Next = more
	} else {
		out.Prev = more
	}
	if len(pets) == 0 || from == nil {
		return out, nil
	}
	// One pet beyond the page's other end tells whether that side exists.
	edge := pets[0]
	if !forward {
		edge = pets[len(pets)-1]
	}
	c := keysetCursor{id: edge.ID}
	c.key, _ = parseSortKey(l.Order(), PetSortKey(l.Order(), edge))
	beyond, _, err := s.keysetRead(ctx, l, !ascending, &c, 1)
	if err != nil {
		return PetListingPage{}, err
	}
	if forward {
		out.Prev = len(beyond) > 0
	} else {
		out.Next = len(beyond) > 0
	}
	return out, nil
}

// keysetCursor is a pet's place in an order: its sort key as the database
// compares it, and its id.
type keysetCursor struct {
	key any
	id  int64
}

// cursorOf is the cursor of the pet id: with the key the URL carries, or,
// for an address written without one, the pet's own.
func (s *Store) cursorOf(ctx context.Context, l PetListing, id int64) (keysetCursor, error) {
	if l.Key != "" {
		key, err := parseSortKey(l.Order(), l.Key)
		if err != nil {
			return keysetCursor{}, fieldError(FieldKey, pageAddressMsg)
		}
		return keysetCursor{key: key, id: id}, nil
	}
	p, err := s.GetPet(ctx, id)
	if err != nil {
		if ErrorCode(err) == CodeNotFound {
			return keysetCursor{}, fieldError(FieldKey, pageAddressMsg)
		}
		return keysetCursor{}, err
	}
	key, _ := parseSortKey(l.Order(), PetSortKey(l.Order(), p))
	return keysetCursor{key: key, id: id}, nil
}

// sortColumns are the database columns of the orders' keys.
var sortColumns = map[string]string{"created": "created_at", "name": "name", "category": "category_id"}

// listIndex is the index that holds the listing's filter's pets in its
// order's (key, id) order (migration 17): the status's or the category's
// when filtered by one, else the column's own. With both status and
// category filters, the category's (the status is checked per pet), but
// for the category order, where status and category both are equalities
// on (status, category_id, id). A status filter in name order is checked
// per pet on the name index (see the migration for why).
func listIndex(l PetListing) string {
	col := l.Order().Column()
	switch {
	case col == "category" && l.Status != "":
		return "idx_pets_status_category"
	case col == "category":
		return "idx_pets_category"
	case l.Category != 0:
		return "idx_pets_category_" + col
	case l.Status != "" && col != "name":
		return "idx_pets_status_" + col
	}
	return "idx_pets_" + col
}

// listSQL is the statement of a read of the listing's filter in (key,
// id) order, ascending or not, with cond added (a cursor's bound) and,
// when byID, in id order alone (within one key), and its arguments up to
// the limit's.
func (s *Store) listSQL(l PetListing, ascending bool, cond string, condArgs []any, byID bool) (string, []any) {
	index := listIndex(l)
	table := "pets INDEXED BY " + index
	if s.driver == DriverMySQL {
		table = "pets FORCE INDEX (" + index + ")"
	}
	var where []string
	var args []any
	if l.Status != "" {
		where, args = append(where, "status = ?"), append(args, string(l.Status))
	}
	if l.Category != 0 {
		where, args = append(where, "category_id = ?"), append(args, l.Category)
	}
	lo, hi := l.dayBounds()
	if t, ok := createdBound(cond, condArgs); ok {
		// A cursor's created_at and the dates bound the same column: only
		// the tighter bound of each side is written, since SQLite ranges an
		// index by one bound a side and would test the other on every
		// entry between them.
		switch {
		case strings.HasPrefix(cond, "created_at = "):
			lo, hi = time.Time{}, time.Time{} // within the dates: keysetRead checks
		case strings.HasPrefix(cond, "created_at < ") && !hi.IsZero() && !hi.After(t):
			cond, condArgs = "", nil
		case strings.HasPrefix(cond, "created_at < "):
			hi = time.Time{}
		case strings.HasPrefix(cond, "created_at > ") && !lo.IsZero() && t.Before(lo):
			cond, condArgs = "", nil
		case strings.HasPrefix(cond, "created_at > "):
			lo = time.Time{}
		}
	}
	if !lo.IsZero() {
		where, args = append(where, "created_at >= ?"), append(args, lo)
	}
	if !hi.IsZero() {
		where, args = append(where, "created_at < ?"), append(args, hi)
	}
	if cond != "" {
		where, args = append(where, cond), append(args, condArgs...)
	}
	dir := "ASC"
	if !ascending {
		dir = "DESC"
	}
	q := "SELECT " + petColumns + " FROM " + table
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	if byID {
		return q + " ORDER BY id " + dir + " LIMIT ?", args
	}
	return q + fmt.Sprintf(" ORDER BY %s %s, id %s LIMIT ?", sortColumns[l.Order().Column()], dir, dir), args
}

// keysetRead reads up to limit pets of the listing's filter in (key, id)
// order, ascending or not, beyond from when not nil, and whether more
// follow, on the primary (staff see what they have just done). Beyond a
// cursor it reads in two index ranges: the rest of the cursor's key (its
// ties, by id), then the keys beyond it. One condition "key <= k AND (key
// < k OR id < i)" would start its range at the key's first entry and step
// over every tie before the cursor's id, and a seed or an import writes
// thousands of pets with one created_at.
func (s *Store) keysetRead(ctx context.Context, l PetListing, ascending bool, from *keysetCursor, limit int) ([]Pet, bool, error) {
	pets := make([]Pet, 0, limit+1)
	read := func(q string, args []any) error {
		args = append(args, limit+1-len(pets))
		err := s.queryRows(ctx, q, args, func(rows *sql.Rows) error {
			var p Pet
			if err := scanPet(rows, &p); err != nil {
				return err
			}
			pets = append(pets, p)
			return nil
		})
		return s.dbErr("list pets", err)
	}
	op := ">"
	if !ascending {
		op = "<"
	}
	col := sortColumns[l.Order().Column()]
	// A category order of one category is an id order.
	byID := col == "category_id" && l.Category != 0
	switch {
	case from == nil:
		q, args := s.listSQL(l, ascending, "", nil, byID)
		if err := read(q, args); err != nil {
			return nil, false, err
		}
	case byID:
		q, args := s.listSQL(l, ascending, "id "+op+" ?", []any{from.id}, true)
		if err := read(q, args); err != nil {
			return nil, false, err
		}
	default:
		if t, ok := from.key.(time.Time); !ok || l.within(t) {
			q, args := s.listSQL(l, ascending, col+" = ? AND id "+op+" ?", []any{from.key, from.id}, true)
			if err := read(q, args); err != nil {
				return nil, false, err
			}
		}
		if len(pets) <= limit {
			q, args := s.listSQL(l, ascending, col+" "+op+" ?", []any{from.key}, false)
			if err := read(q, args); err != nil {
				return nil, false, err
			}
		}
	}
	more := len(pets) > limit
	if more {
		pets = pets[:limit]
	}
	return pets, more, nil
}

// exportListing reads every pet of a listing without a name search, in
// its order, in chunks of chunk pets, as ExportPets does.
func (s *Store) exportListing(ctx context.Context, l PetListing, chunk int, each func([]Pet) error) (int, error) {
	ascending := !l.Order().Descending()
	var from *keysetCursor
	n := 0
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		pets, more, err := s.keysetRead(ctx, l, ascending, from, chunk)
		if err != nil {
			return n, err
		}
		if len(pets) == 0 {
			return n, nil
		}
		last := pets[len(pets)-1]
		if err := each(pets); err != nil {
			return n, err
		}
		n += len(pets)
		if !more {
			return n, nil
		}
		key, _ := parseSortKey(l.Order(), PetSortKey(l.Order(), last))
		from = &keysetCursor{key: key, id: last.ID}
	}
}

// searchListing reads a page of a name search, newest first (the search
// index is read in id order): limit+1 pets in the paging direction, and
// for a page asked for with After or Before one probe for a pet the other
// way (the newest page has nothing newer). The search is planned once for
// both.
func (s *Store) searchListing(ctx context.Context, l PetListing, limit int) (PetListingPage, error) {
	read, err := s.petPages(ctx, l, MaxPageLimit)
	if err != nil {
		return PetListingPage{}, err
	}
	q := PetQuery{Limit: limit, After: l.After}
	if l.After == 0 {
		q.Before = l.Before
		if q.Before == 0 {
			q.Before = math.MaxInt64 // the newest page
		}
		if l.Last {
			q.Before, q.After = 0, 0 // the oldest: read upwards from the start
		}
	}
	page, err := read(q)
	if err != nil {
		return PetListingPage{}, err
	}
	out := PetListingPage{Pets: page.Pets, Resume: page.Resume}
	slices.Reverse(out.Pets)
	upwards := l.After > 0 || (l.Last && l.Before == 0)
	if upwards {
		out.Prev = page.More
	} else {
		out.Next = page.More
	}
	if len(out.Pets) == 0 || (!upwards && l.Before == 0) {
		return out, nil
	}
	// One pet beyond the page's other end tells whether that side exists;
	// a search that stopped on its budget may find one further on.
	probe := PetQuery{Limit: 1, After: out.Pets[0].ID}
	if upwards {
		probe = PetQuery{Limit: 1, Before: out.Pets[len(out.Pets)-1].ID}
	}
	beyond, err := read(probe)
	if err != nil {
		return PetListingPage{}, err
	}
	if exists := len(beyond.Pets) > 0 || beyond.Resume != 0; upwards {
		out.Next = exists
	} else {
		out.Prev = exists
	}
	return out, nil
}

// NextPage is the listing of the page after p in the listing's order,
// and whether there is one: beyond its last pet, or where a name search
// stopped on its budget.
func (l PetListing) NextPage(p PetListingPage) (PetListing, bool) {
	return l.beyond(p, true)
}

// PrevPage is the listing of the page before p in the listing's order,
// and whether there is one.
func (l PetListing) PrevPage(p PetListingPage) (PetListing, bool) {
	return l.beyond(p, false)
}

// beyond is the listing of the page next to p, forward or not.
func (l PetListing) beyond(p PetListingPage, forward bool) (PetListing, bool) {
	n := l
	n.After, n.Before, n.Key, n.Last = 0, 0, "", false
	// Ascending in (key, id) terms.
	up := forward != l.Order().Descending()
	if p.Resume != 0 && l.Search != "" && forward == (l.After == 0) {
		// The search stopped before filling the page: on from there.
		if up {
			n.After = p.Resume
		} else {
			n.Before = p.Resume
		}
		return n, true
	}
	if len(p.Pets) == 0 || (forward && !p.Next) || (!forward && !p.Prev) {
		return PetListing{}, false
	}
	edge := p.Pets[len(p.Pets)-1]
	if !forward {
		edge = p.Pets[0]
	}
	n.Key = PetSortKey(l.Order(), edge)
	if up {
		n.After = edge.ID
	} else {
		n.Before = edge.ID
	}
	return n, true
}

// Query is the listing as the console's URL carries it, parameters at
// their defaults left out.
func (l PetListing) Query() url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set(FieldStatus, string(l.Status))
	set(FieldSearch, l.Search)
	if l.Category != 0 {
		v.Set(FieldCategory, strconv.FormatInt(l.Category, 10))
	}
	set(FieldCreatedFrom, l.From)
	set(FieldCreatedTo, l.To)
	if l.Sort != "" && l.Sort != SortNewest {
		v.Set(FieldSort, string(l.Sort))
	}
	if l.PerPage != 0 && l.PerPage != PerPageChoices[0] {
		v.Set(FieldPerPage, strconv.Itoa(l.PerPage))
	}
	switch {
	case l.After != 0:
		v.Set(FieldAfter, strconv.FormatInt(l.After, 10))
	case l.Before != 0:
		v.Set(FieldBefore, strconv.FormatInt(l.Before, 10))
	case l.Last:
		v.Set(FieldLast, "1")
	}
	if l.After != 0 || l.Before != 0 {
		set(FieldKey, l.Key)
	}
	return v
}
