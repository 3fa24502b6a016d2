package models

// The console's name search.
//
// What matches: the search text and every name are folded the same way
// (compatibility forms unified, accents and other marks removed, case
// folded: "PÉPÉ", "pepe" and "Pépé" fold alike) and split into words (runs
// of letters and digits; every other visible character, an emoji, a
// punctuation mark, a CJK ideograph or kana, is a word of its own). A pet
// matches when every word of the search starts a word of its name, in any
// order: "lu" finds "Luna 7", "mochi 🐾" finds "Mochi 🐾 11", "%" finds
// "50% off". One or two characters are a search like any other. The rule
// is written once, in Go (searchWords, matchesWords), so both engines
// answer the same pets.
//
// How it is served: pet_name_words holds one row (word, pet_id) per
// distinct word of each name, words cut to maxWordKey bytes, keyed by
// (word, pet_id), and kept in step by the pets' one write path: every
// change of a name implies its words' rows (impliedRows.add). A search word is a key range there (planSearch). One
// word drives: a rare one if any (fewer than rareCount entries); else one
// that starts many indexed words but has fewer than rangeCount entries,
// read whole and sorted (exact, and bounded by that count); else one that
// starts at most maxStreams indexed words, read newest first straight off
// the key; only when every word starts very many indexed words and is
// common are pets read newest first instead (matches are then dense).
// Candidates are read in chunks; each chunk is checked by joining the
// driving word's entries between its first and last id to the other words'
// keys and to pets (status), and every name is then checked in Go. A page
// examines at most searchBudget candidates: a search whose words are each
// common but rarely together stops there and says where to go on
// (PetPage.Resume), so no page costs more than a few tens of milliseconds
// whatever the size of the table. Counting what a word covers costs as
// much as reading it, hence the caps.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Limits of the search index and of the work of one search page.
const (
	// maxWordKey is the most bytes of a word the index keeps (cut at a
	// character boundary); a longer search word finds its candidates by
	// its first maxWordKey bytes and is then checked whole.
	maxWordKey = 32
	// maxPlannedWords is how many words of a search (the longest) are
	// looked up in the index; the others are checked on the candidates.
	maxPlannedWords = 4
	// maxStreams is the most distinct indexed words one search word may
	// cover and still be read newest first straight off the index.
	maxStreams = 4
	// rareCount: a search word with fewer entries drives the search
	// whatever its kind, its entries being few.
	rareCount = 2000
	// rangeCount: a search word covering many indexed words, with fewer
	// entries than this, can be read whole and sorted in a few
	// milliseconds on either engine.
	rangeCount = 20_000
	// searchBudget is the most candidates one page examines.
	searchBudget = 5000
	// maxChunk is the most candidates read in one statement.
	maxChunk = 1024
)

// foldText returns s as the search compares it: compatibility forms
// unified and accents dropped (NFKD without nonspacing marks, format
// characters and other default-ignorable characters), each character
// case folded (the lower case of its upper case: the same for every case
// of a letter, Cherokee and final sigma included; x/text's cases.Fold
// swaps Cherokee cases instead), ß as ss, then NFC.
func foldText(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	// The decomposition stops at a byte that is not UTF-8 (only an old
	// row or a search could hold one): make it U+FFFD first.
	var b strings.Builder
	for _, r := range norm.NFKD.String(strings.ToValidUTF8(s, "\uFFFD")) {
		switch {
		case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r):
		case r == 'ß' || r == 'ẞ':
			b.WriteString("ss")
		default:
			b.WriteRune(unicode.ToLower(unicode.ToUpper(r)))
		}
	}
	return norm.NFC.String(b.String())
}

// ownWord reports characters that are a word by themselves: scripts
// written without spaces between words, where a character is the unit a
// person searches for.
func ownWord(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

// searchWords folds s and returns its distinct words in order: runs of
// letters, digits and spacing marks, and each other character that is not
// a space or a control character.
func searchWords(s string) []string {
	f := foldText(s)
	var words []string
	add := func(w string) {
		if !slices.Contains(words, w) {
			words = append(words, w)
		}
	}
	start := -1
	for i, r := range f {
		inWord := (unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Me, r)) && !ownWord(r)
		if inWord {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			add(f[start:i])
			start = -1
		}
		if !unicode.IsSpace(r) && !unicode.IsControl(r) && !unicode.Is(unicode.Z, r) {
			add(string(r))
		}
	}
	if start >= 0 {
		add(f[start:])
	}
	return words
}

// wordKey cuts a word to the index's key length at a character boundary.
func wordKey(w string) string {
	if len(w) <= maxWordKey {
		return w
	}
	cut := maxWordKey
	for cut > 0 && !utf8.RuneStart(w[cut]) {
		cut--
	}
	return w[:cut]
}

// nameKeys returns the distinct index keys of a name.
func nameKeys(name string) []string {
	var keys []string
	for _, w := range searchWords(name) {
		if k := wordKey(w); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// matchesWords reports whether every search word starts a word of name.
func matchesWords(name string, terms []string) bool {
	words := searchWords(name)
	for _, t := range terms {
		if !slices.ContainsFunc(words, func(w string) bool { return strings.HasPrefix(w, t) }) {
			return false
		}
	}
	return true
}

// searchTerms returns the words of a search text that matter: a word that
// starts another word of the search adds nothing and is dropped.
func searchTerms(q string) []string {
	words := searchWords(q)
	var terms []string
	for _, w := range words {
		if !slices.ContainsFunc(words, func(o string) bool { return o != w && strings.HasPrefix(o, w) }) {
			terms = append(terms, w)
		}
	}
	return terms
}

// insertWordsSQL is a multi-row insert of n (word, pet_id) rows; verb is
// INSERT, or the engine's insert-ignoring form for the backfill.
func insertWordsSQL(verb string, n int) string {
	var b strings.Builder
	b.WriteString(verb)
	b.WriteString(" INTO pet_name_words (word, pet_id) VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?,?)")
	}
	return b.String()
}

// searchMode is how a search reads its candidates.
type searchMode int

const (
	modeStream searchMode = iota // the driving word's few keys, newest first off the index
	modeRange                    // the driving word's whole key range, sorted (it is small)
	modeDense                    // pets newest first (every word is common)
)

// searchTerm is one planned word of a search.
type searchTerm struct {
	key   string   // the index key of a folded search word
	keys  []string // the distinct indexed words it covers, when at most maxStreams
	many  bool     // it covers more than maxStreams indexed words
	count int      // its entries, as far as counted (see planSearch)
}

// searchPlan is how one page of a search is read.
type searchPlan struct {
	mode      searchMode
	driver    searchTerm
	filters   [][]string // other words checked in SQL: each its exact keys
	terms     []string   // every word of the search, checked in Go
	backwards bool
	status    Status
}

// searchPets answers a page of a name search (q.NameContains set, q.Limit
// valid): the plan, then the page.
func (s *Store) searchPets(ctx context.Context, q PetQuery) (PetPage, error) {
	plan, ok, err := s.planFor(ctx, q.NameContains)
	if err != nil || !ok {
		return PetPage{Pets: []Pet{}}, err
	}
	return s.runSearch(ctx, plan, q)
}

// planFor plans a search text. ok is false when no name can match it:
// nothing in it is searchable, or a word of it starts no indexed word.
func (s *Store) planFor(ctx context.Context, text string) (searchPlan, bool, error) {
	terms := searchTerms(text)
	if len(terms) == 0 {
		return searchPlan{}, false, nil
	}
	return s.planSearch(ctx, terms)
}

// runSearch reads one page of a planned search (q.Limit valid; q's
// NameContains is the plan's): candidates chunk by chunk until the page is
// full, the candidates run out, or the budget is spent. A plan serves any
// number of pages.
func (s *Store) runSearch(ctx context.Context, plan searchPlan, q PetQuery) (PetPage, error) {
	plan.backwards, plan.status = q.Before > 0, q.Status
	cursor := q.After
	if plan.backwards {
		cursor = q.Before
	}
	chunk := 32
	for chunk < 4*(q.Limit+1) {
		chunk *= 4
	}
	if plan.mode == modeRange && (len(plan.filters) > 0 || plan.status != "") {
		// Each read goes through the whole range: read once.
		chunk = searchBudget
	}
	var (
		found    []Pet
		examined int
		page     PetPage
		batch    = 32 // candidates checked per statement, growing
	)
	for len(found) <= q.Limit {
		var (
			last int64
			n    int
			err  error
		)
		found, last, n, err = s.searchChunk(ctx, plan, cursor, chunk, found, q.Limit+1, &batch)
		if err != nil {
			return PetPage{}, err
		}
		examined += n
		if len(found) > q.Limit || n < chunk {
			break // a full page, or no candidates left
		}
		cursor = last
		if examined >= searchBudget {
			page.Resume = cursor
			break
		}
		chunk = min(chunk*4, maxChunk)
		if plan.mode == modeRange {
			// Each read goes through the whole range: few, large reads.
			chunk = searchBudget
		}
	}
	if len(found) > q.Limit {
		found, page.More = found[:q.Limit], true
	}
	page.More = page.More || page.Resume != 0
	var err error
	page.Pets, err = s.searchResult(ctx, plan, found)
	return page, err
}

// searchChunk reads up to chunk candidates beyond cursor in the paging
// direction and appends those that match to found (checking, off the
// index, until found holds want). It returns the last candidate read and
// how many were read.
func (s *Store) searchChunk(ctx context.Context, plan searchPlan, cursor int64, chunk int, found []Pet, want int, batch *int) ([]Pet, int64, int, error) {
	if plan.mode == modeDense {
		pets, last, n, err := s.denseChunk(ctx, plan, cursor, chunk)
		if err != nil {
			return nil, 0, 0, err
		}
		for _, p := range pets {
			if matchesWords(p.Name, plan.terms) {
				found = append(found, p)
			}
		}
		return found, last, n, nil
	}
	ids, err := s.candidates(ctx, plan, cursor, chunk)
	if err != nil {
		return nil, 0, 0, err
	}
	var last int64
	if len(ids) > 0 {
		last = ids[len(ids)-1]
	}
	found, err = s.checkCandidates(ctx, plan, ids, found, want, batch)
	return found, last, len(ids), err
}

// searchResult returns a page's matches lowest id first. A dense scan read
// names only: its pets are read whole.
func (s *Store) searchResult(ctx context.Context, plan searchPlan, found []Pet) ([]Pet, error) {
	if plan.mode == modeDense {
		ids := make([]int64, len(found))
		for i, p := range found {
			ids[i] = p.ID
		}
		return s.petsByID(ctx, ids)
	}
	slices.SortFunc(found, func(a, b Pet) int { return cmpInt64(a.ID, b.ID) })
	return found, nil
}

// planSearch looks the planned words up in the index and chooses how to
// read the candidates. ok is false when some word starts no indexed word:
// nothing matches.
func (s *Store) planSearch(ctx context.Context, terms []string) (searchPlan, bool, error) {
	plan := searchPlan{terms: terms}
	ts, ok, err := s.lookUpTerms(ctx, terms)
	if err != nil || !ok {
		return plan, false, err
	}
	driver, mode := chooseDriver(ts)
	plan.driver, plan.mode = ts[driver], mode
	for i, t := range ts {
		if i != driver && !t.many {
			plan.filters = append(plan.filters, t.keys)
		}
	}
	return plan, true, nil
}

// lookUpTerms looks the planned words (the longest few) up in the index:
// the indexed words each starts, and as many of its entries as choosing the
// driver needs. Counting costs as much as reading the entries counted:
// words of a few indexed words are counted only to rareCount, and only
// when there is a choice. ok is false when some word starts no indexed
// word.
func (s *Store) lookUpTerms(ctx context.Context, terms []string) ([]searchTerm, bool, error) {
	planned := slices.Clone(terms)
	// The longest words are the likeliest to be rare.
	slices.SortStableFunc(planned, func(a, b string) int { return len(b) - len(a) })
	planned = planned[:min(len(planned), maxPlannedWords)]
	var ts []searchTerm
	for _, w := range planned {
		t := searchTerm{key: wordKey(w)}
		keys, err := s.distinctKeys(ctx, t.key, maxStreams+1)
		if err != nil || len(keys) == 0 {
			return nil, false, err
		}
		if len(keys) > maxStreams {
			t.many = true
		} else {
			t.keys = keys
		}
		ts = append(ts, t)
	}
	for i := range ts {
		limit := rareCount
		if ts[i].many {
			limit = rangeCount
		} else if len(ts) == 1 {
			continue
		}
		n, err := s.countKeys(ctx, ts[i].key, limit)
		if err != nil {
			return nil, false, err
		}
		ts[i].count = n
	}
	return ts, true, nil
}

// chooseDriver chooses the word that drives the search, and how it is
// read. A rare word drives, whatever its kind. When every word is common:
// a word of many indexed words that can still be read whole (exact and
// bounded), else a word of a few indexed words, read newest first (bounded
// by the budget), else pets newest first.
func chooseDriver(ts []searchTerm) (int, searchMode) {
	driver, mode := -1, modeDense
	better := func(i int) bool { return driver < 0 || ts[i].count < ts[driver].count }
	for i, t := range ts {
		if (t.count < rareCount && (t.many || len(ts) > 1)) && better(i) {
			driver = i
		}
	}
	for i, t := range ts {
		if driver < 0 && t.many && t.count < rangeCount && better(i) {
			driver = i
		}
	}
	for i, t := range ts {
		if driver < 0 && !t.many {
			driver = i
		}
	}
	switch {
	case driver < 0:
		driver = 0
	case ts[driver].many && ts[driver].count < rangeCount:
		mode = modeRange
	case !ts[driver].many:
		mode = modeStream
	}
	return driver, mode
}

// keyRange returns the bounds of the keys that start with key: [key,
// key+0xFF), since no UTF-8 byte is 0xFF.
func keyRange(key string) ([]byte, []byte) {
	return []byte(key), append([]byte(key), 0xFF)
}

// distinctKeys returns up to limit distinct indexed words starting with
// key, in order, one index seek each.
func (s *Store) distinctKeys(ctx context.Context, key string, limit int) ([]string, error) {
	lo, hi := keyRange(key)
	var keys []string
	for len(keys) < limit {
		query := "SELECT word FROM pet_name_words WHERE word >= ? AND word < ? ORDER BY word LIMIT 1"
		if len(keys) > 0 {
			query, lo = "SELECT word FROM pet_name_words WHERE word > ? AND word < ? ORDER BY word LIMIT 1", []byte(keys[len(keys)-1])
		}
		var word []byte
		err := s.queryRows(ctx, query, []any{lo, hi}, func(rows *sql.Rows) error { return rows.Scan(&word) })
		if err != nil {
			return nil, err
		}
		if word == nil {
			break
		}
		keys = append(keys, string(word))
	}
	return keys, nil
}

// countKeys counts the entries of the words starting with key, up to
// limit.
func (s *Store) countKeys(ctx context.Context, key string, limit int) (int, error) {
	lo, hi := keyRange(key)
	var n int
	err := s.queryRows(ctx, "SELECT COUNT(*) FROM (SELECT 1 FROM pet_name_words WHERE word >= ? AND word < ? LIMIT ?) t",
		[]any{lo, hi, limit}, func(rows *sql.Rows) error { return rows.Scan(&n) })
	return n, err
}

// queryRows runs a search statement on the primary's pool and calls scan
// for each row. It goes
// below GORM's builder, which would spread a []byte argument that follows
// a parenthesis into one value per byte. The statements come in a few
// dozen shapes: lists of ids and keys have fixed lengths.
func (s *Store) queryRows(ctx context.Context, query string, args []any, scan func(*sql.Rows) error) error {
	traceSearch(ctx, query, args)
	rows, err := s.db.ConnPool.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// denseChunk reads the ids and names of up to chunk pets beyond cursor in
// the paging direction (with the status asked for), and returns the last
// one read and how many were read.
func (s *Store) denseChunk(ctx context.Context, p searchPlan, cursor int64, chunk int) (pets []Pet, last int64, n int, err error) {
	cmp, order := direction(p.backwards)
	from, where, args := "pets", "id "+cmp+" ?", []any{cursor}
	if p.status != "" {
		if s.driver == DriverMySQL {
			from = petsByStatus // as ListPets: a range of (status, id)
		}
		where += " AND status = ?"
		args = append(args, string(p.status))
	}
	query := "SELECT id, name FROM " + from + " WHERE " + where + " ORDER BY id " + order + " LIMIT ?"
	err = s.queryRows(ctx, query, append(args, chunk), func(rows *sql.Rows) error {
		var p Pet
		if err := rows.Scan(&p.ID, &p.Name); err != nil {
			return err
		}
		pets, last, n = append(pets, p), p.ID, n+1
		return nil
	})
	return pets, last, n, err
}

// direction returns the comparison and the order of keyset paging.
func direction(backwards bool) (string, string) {
	if backwards {
		return "<", "DESC"
	}
	return ">", "ASC"
}

// candidates reads the driving word's next pet ids beyond cursor, up to
// chunk, in the paging direction: off the index only.
func (s *Store) candidates(ctx context.Context, p searchPlan, cursor int64, chunk int) ([]int64, error) {
	cmp, order := direction(p.backwards)
	var (
		query string
		args  []any
	)
	one := "SELECT pet_id FROM pet_name_words WHERE word = ? AND pet_id " + cmp + " ? ORDER BY pet_id " + order + " LIMIT ?"
	switch keys := p.driver.keys; {
	case p.mode == modeRange:
		lo, hi := keyRange(p.driver.key)
		// A pet with two words of the range comes twice: once is enough
		// for the window the candidates are checked in.
		query = "SELECT pet_id FROM pet_name_words WHERE word >= ? AND word < ? AND pet_id " + cmp + " ? ORDER BY pet_id " + order + " LIMIT ?"
		args = []any{lo, hi, cursor, chunk}
	case len(keys) == 1:
		query, args = one, []any{[]byte(keys[0]), cursor, chunk}
	default:
		// A few words: each read in order off the index, merged.
		var parts []string
		for i, k := range keys {
			parts = append(parts, fmt.Sprintf("SELECT pet_id FROM (%s) s%d", one, i))
			args = append(args, []byte(k), cursor, chunk)
		}
		query = strings.Join(parts, " UNION ") + " ORDER BY pet_id " + order + " LIMIT ?"
		args = append(args, chunk)
	}
	var ids []int64
	err := s.queryRows(ctx, query, args, func(rows *sql.Rows) error {
		var id int64
		err := rows.Scan(&id)
		ids = append(ids, id)
		return err
	})
	return ids, err
}

// checkCandidates reads, in batches growing from *batch, the candidates
// (ids, in the paging direction) that have the status asked for and the
// other planned words' keys, and appends those whose names match to
// found, in the paging direction, until found holds want pets. A batch is
// read as the driving word's entries between its first and last id, joined
// to pets: no list of ids to bind.
func (s *Store) checkCandidates(ctx context.Context, p searchPlan, ids []int64, found []Pet, want int, batch *int) ([]Pet, error) {
	query, driverArgs, extra := s.checkSQL(p)
	if p.mode == modeRange {
		// Each batch goes through the whole (small) range: one per chunk.
		*batch = len(ids)
	}
	for len(ids) > 0 && len(found) < want {
		part := ids[:min(*batch, len(ids))]
		ids = ids[len(part):]
		*batch = min(*batch*4, maxChunk)
		lo, hi := part[0], part[len(part)-1]
		if lo > hi {
			lo, hi = hi, lo
		}
		args := append(append(slices.Clone(driverArgs), lo, hi), extra...)
		var got []Pet
		err := s.queryRows(ctx, query, args, func(rows *sql.Rows) error {
			var pet Pet
			err := rows.Scan(&pet.ID, &pet.Name, &pet.CategoryID, &pet.Status, &pet.CreatedAt, &pet.UpdatedAt, &pet.Version)
			got = append(got, pet)
			return err
		})
		if err != nil {
			return nil, err
		}
		slices.SortFunc(got, func(a, b Pet) int {
			if p.backwards {
				return cmpInt64(b.ID, a.ID)
			}
			return cmpInt64(a.ID, b.ID)
		})
		got = slices.CompactFunc(got, func(a, b Pet) bool { return a.ID == b.ID }) // a pet with two of the words
		for _, pet := range got {
			if matchesWords(pet.Name, p.terms) {
				found = append(found, pet)
			}
		}
	}
	return found, nil
}

// checkSQL is the statement that checks a batch of candidates (see
// checkCandidates), with the arguments that come before the batch's
// bounds (the driving word's) and after them (the other words', the
// status).
func (s *Store) checkSQL(p searchPlan) (query string, driverArgs, extra []any) {
	driverCond := "d.word IN (?,?,?,?)"
	if p.mode == modeRange {
		lo, hi := keyRange(p.driver.key)
		driverCond, driverArgs = "d.word >= ? AND d.word < ?", []any{lo, hi}
	} else {
		for i := range maxStreams {
			driverArgs = append(driverArgs, []byte(p.driver.keys[min(i, len(p.driver.keys)-1)]))
		}
	}
	// The driving word's entries first, then the other words' entries of
	// the same pets (joins: MariaDB would turn an EXISTS into a
	// materialization of all the word's entries), then the pets
	// (STRAIGHT_JOIN on MySQL, CROSS JOIN on SQLite fix that order). A pet
	// with two of the keys of one word comes back twice.
	from, join := "pet_name_words d", " CROSS JOIN "
	sel := "SELECT p.id, p.name, p.category_id, p.status, p.created_at, p.updated_at, p.version FROM "
	if s.driver == DriverMySQL {
		sel, join = "SELECT STRAIGHT_JOIN p.id, p.name, p.category_id, p.status, p.created_at, p.updated_at, p.version FROM ", " JOIN "
	}
	where := ""
	for i, keys := range p.filters {
		from += fmt.Sprintf("%spet_name_words f%d", join, i)
		where += fmt.Sprintf(" AND f%[1]d.pet_id = d.pet_id AND f%[1]d.word IN (?,?,?,?)", i)
		for i := range maxStreams {
			extra = append(extra, []byte(keys[min(i, len(keys)-1)]))
		}
	}
	from += join + "pets p"
	where += " AND p.id = d.pet_id"
	if p.status != "" {
		where += " AND p.status = ?"
		extra = append(extra, string(p.status))
	}
	return sel + from + " WHERE " + driverCond + " AND d.pet_id BETWEEN ? AND ?" + where, driverArgs, extra
}

// petsByID reads whole pets by id, lowest id first.
func (s *Store) petsByID(ctx context.Context, ids []int64) ([]Pet, error) {
	pets := make([]Pet, 0, len(ids))
	if len(ids) == 0 {
		return pets, nil
	}
	// A few fixed list lengths keep the prepared statements few; 0 is no
	// pet's id.
	size := 8
	for size < len(ids) {
		size *= 4
	}
	args := make([]any, size)
	for i := range args {
		args[i] = int64(0)
		if i < len(ids) {
			args[i] = ids[i]
		}
	}
	query := "SELECT " + petColumns + " FROM pets WHERE id IN (?" + strings.Repeat(",?", size-1) + ") ORDER BY id"
	err := s.queryRows(ctx, query, args, func(rows *sql.Rows) error {
		var p Pet
		if err := scanPet(rows, &p); err != nil {
			return err
		}
		pets = append(pets, p)
		return nil
	})
	return pets, err
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// searchTraceKey carries a function that sees each candidate statement of
// a search (tests use it to EXPLAIN them).
type searchTraceKey struct{}

func traceSearch(ctx context.Context, query string, args []any) {
	if fn, ok := ctx.Value(searchTraceKey{}).(func(string, []any)); ok {
		fn(query, args)
	}
}

// nameIndexSetting says "building" from migration 6 until buildNameIndex
// has indexed the names of the pets that existed then.
const nameIndexSetting = "pets.name_index"

// buildNameIndex indexes the names of the pets that existed before the
// index did (migration 6), once, after the migrations. It is safe to run
// again and from instances that start together: words already indexed are
// skipped, and the setting says "ready" only at the end, so an interrupted
// build starts over at the next start. Pets created meanwhile index
// themselves.
func (s *Store) buildNameIndex(ctx context.Context) error {
	var state string
	err := s.sqlDB.QueryRowContext(ctx, "SELECT value FROM settings WHERE name = ?", nameIndexSetting).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && state != "building") {
		return nil
	}
	if err != nil {
		return err
	}
	verb := "INSERT OR IGNORE"
	if s.driver == DriverMySQL {
		verb = "INSERT IGNORE"
	}
	indexed := 0
	for after := int64(0); ; {
		var args []any
		rows, err := s.sqlDB.QueryContext(ctx, "SELECT id, name FROM pets WHERE id > ? ORDER BY id LIMIT 2000", after)
		if err != nil {
			return err
		}
		for rows.Next() {
			var name string
			if err := rows.Scan(&after, &name); err != nil {
				rows.Close()
				return err
			}
			for _, k := range nameKeys(name) {
				args = append(args, []byte(k), after)
			}
			indexed++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(args) == 0 {
			break
		}
		if err := retry(ctx, func() error { return s.insertWords(ctx, verb, args) }); err != nil {
			return err
		}
		if indexed%100_000 < 2000 {
			s.log.Info("indexing pet names for search", "pets", indexed)
		}
	}
	_, err = s.sqlDB.ExecContext(ctx, "UPDATE settings SET value = 'ready' WHERE name = ?", nameIndexSetting)
	if err == nil && indexed > 0 {
		s.log.Info("indexed pet names for search", "pets", indexed)
	}
	return err
}

// insertWords writes (word, pet_id) pairs, flattened in args, to the
// search index in one transaction, 250 rows a statement; verb is INSERT or
// the engine's insert-ignoring form.
func (s *Store) insertWords(ctx context.Context, verb string, args []any) error {
	tx, err := s.sqlDB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for rest := args; len(rest) > 0; {
		n := min(len(rest), 2*250)
		if _, err := tx.ExecContext(ctx, insertWordsSQL(verb, n/2), rest[:n]...); err != nil {
			return err
		}
		rest = rest[n:]
	}
	return tx.Commit()
}
