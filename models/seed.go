package models

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxSeedPets is the most example pets one seed may add.
const MaxSeedPets = 10_000_000

// SeedCountMessage is the one message for a number of pets to seed that is
// not allowed.
var SeedCountMessage = fmt.Sprintf("The number of pets must be a whole number from 1 to %d.", MaxSeedPets)

// ParseSeedCount reads the number of example pets to add, as typed: a
// whole number from 1 to MaxSeedPets.
func ParseSeedCount(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 || n > MaxSeedPets || strings.HasPrefix(strings.TrimSpace(s), "+") {
		return 0, &Error{Code: CodeInvalidRequest, Message: SeedCountMessage}
	}
	return n, nil
}

// seedNames are the example names, the benchmark baseline's: pet i is
// called seedNames[i%12] followed by i, so names carry accents and an emoji.
var seedNames = [...]string{"Rex", "Luna", "Milo", "Bella", "Max", "Coco", "Oscar", "Nala", "Simba", "Kiwi", "Pépé", "Mochi 🐾"}

// seedPet returns example pet i (from 0), with the baseline's mix: 60%
// available, 25% pending, 15% sold, categories 1 to 100.
func seedPet(i int) NewPet {
	return NewPet{Name: seedNames[i%len(seedNames)] + " " + strconv.Itoa(i), CategoryID: int64(1 + i%100), Status: seedStatus(i)}
}

// seedStatus is example pet i's status.
func seedStatus(i int) Status {
	switch m := i % 20; {
	case m < 12:
		return StatusAvailable
	case m < 17:
		return StatusPending
	}
	return StatusSold
}

// SeedResult says what a seed added.
type SeedResult struct {
	// Added is how many pets were added (all asked for, unless an error
	// stopped the seed).
	Added int
	// FirstID and LastID are the lowest and highest ids given to them.
	FirstID, LastID int64
}

// Seeding writes up to seedTxRows pets per transaction, in multi-row
// INSERTs of seedRows(driver) pets. A transaction of 20,000 rows holds
// SQLite's write lock for a fraction of a second, so the API's writers
// wait briefly and never time out.
const seedTxRows = 20_000

// seedRows is how many pets one INSERT of a seed writes: 1000 on MySQL
// (5000 values, far below its 65535 and its packet size), where each
// statement is a round trip; 100 on SQLite, where statements cost no round
// trip but the glebarez driver binds values in time quadratic in their
// number per statement (5000 values bind 20 times slower than 500).
func seedRows(driver string) int {
	if driver == DriverMySQL {
		return 1000
	}
	return 100
}

// SeedPets adds n example pets (see seedPet), all created now, in
// multi-row inserts, several per transaction, with their names in the
// search index and their status counts (in the same transactions), then
// compacts the status counts, refreshes MySQL's planner statistics and
// records one audit event by actor saying how many were added. It never
// removes or changes existing pets. progress, when not nil, is called with
// the number added so far after each committed transaction.
//
// A SQLite file is not analysed: its statistics would include STAT4
// samples, and with them SQLite prepares again, on every run, each
// statement whose plan a bound value could change (a status page: 15% of
// its CPU, 19% of a 100-pet page's throughput), while the plans without
// statistics are as good (BenchmarkListPets: no case slower on a million
// pets). Nothing else analyses it, so a seeded file is what a file grown
// by use is.
// If an error stops it, the pets of the transactions already committed
// stay, the audit event says how many, and the error is returned with the
// result so far.
func (s *Store) SeedPets(ctx context.Context, n int, actor string, progress func(done int)) (SeedResult, error) {
	if n < 1 || n > MaxSeedPets {
		return SeedResult{}, &Error{Code: CodeInvalidRequest, Message: SeedCountMessage}
	}
	var res SeedResult
	err := s.seedPets(ctx, n, &res, progress)
	if res.Added > 0 {
		// The audit event is written even when the seed was cancelled:
		// the pets it added stay.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		detail := fmt.Sprintf("added %d example pets, ids %d to %d", res.Added, res.FirstID, res.LastID)
		if res.Added < n {
			detail = fmt.Sprintf("added %d of %d example pets (stopped by an error), ids %d to %d", res.Added, n, res.FirstID, res.LastID)
		}
		ev := AuditEvent{At: s.now(), Actor: actor, Action: ActionPetsSeeded, TargetType: TargetPet, Detail: detail}
		if aerr := s.db.WithContext(actx).Create(&ev).Error; aerr != nil && err == nil {
			err = aerr
		}
	}
	if err != nil {
		return res, s.dbErr("seed pets", err)
	}
	return res, nil
}

func (s *Store) seedPets(ctx context.Context, n int, res *SeedResult, progress func(done int)) error {
	for res.Added < n {
		k := min(seedTxRows, n-res.Added)
		first, last, err := s.seedTx(ctx, res.Added, k)
		if err != nil {
			return err
		}
		if res.FirstID == 0 {
			res.FirstID = first
		}
		res.LastID = max(res.LastID, last)
		res.Added += k
		if progress != nil {
			progress(res.Added)
		}
	}
	if _, err := s.CompactPetStatusCounts(ctx); err != nil {
		return err
	}
	if s.driver != DriverMySQL {
		return nil
	}
	if _, err := s.sqlDB.ExecContext(ctx, "ANALYZE TABLE pets, pet_name_words"); err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	return nil
}

// seedTx adds example pets from..from+k-1 in one transaction, with the
// rows their changes imply (impliedRows: search words, status counts and
// change feed events; a seed is audited once, by SeedPets), and returns
// the lowest and highest ids they were given.
func (s *Store) seedTx(ctx context.Context, from, k int) (first, last int64, err error) {
	tx, err := s.sqlDB.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, err
	}
	defer tx.Rollback()
	exec := preparedExec(ctx, tx)
	changes := make([]PetChange, k)
	now := s.now()
	for i := range changes {
		changes[i] = newPetChange(ChangeSeed, seedPet(from+i), now, "")
	}
	step := int64(1)
	if s.driver == DriverMySQL {
		// Galera steps each node's ids by the cluster's size.
		if err := tx.QueryRowContext(ctx, "SELECT @@auto_increment_increment").Scan(&step); err != nil {
			return 0, 0, err
		}
	}
	ids, err := s.insertSeedPets(exec, changes, step)
	if err != nil {
		return 0, 0, err
	}
	var rows impliedRows
	for i, ch := range changes {
		if err := rows.add(i, ch); err != nil {
			return 0, 0, err
		}
	}
	if err := s.writeImpliedBulk(exec, &rows, ids); err != nil {
		return 0, 0, err
	}
	lastEvent, err := s.writeEvents(ctx, tx, exec, rows.events, ids)
	if err != nil {
		return 0, 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, err
	}
	s.feed.advance(lastEvent)
	return ids[0], ids[len(ids)-1], nil
}

// writeImpliedBulk writes rows through exec in multi-row statements of
// seedRows rows, ids[i] being the id of change number i: the sink of a
// seed's thousands of new pets, which have no words to delete and no audit
// events of their own; their feed events follow (writeEvents). The index rows go in key order: each word's entries
// then go in at the end of its range instead of all over the index.
func (s *Store) writeImpliedBulk(exec execFunc, rows *impliedRows, ids []int64) error {
	if len(rows.unwords) > 0 || len(rows.audit) > 0 {
		return fmt.Errorf("seed pets: %d words to delete, %d audit events", len(rows.unwords), len(rows.audit))
	}
	words := rows.words
	slices.SortFunc(words, func(a, b wordRow) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmpInt64(ids[a.pet], ids[b.pet])
	})
	per := seedRows(s.driver)
	for len(words) > 0 {
		n := min(per, len(words))
		args := make([]any, 0, 2*n)
		for _, w := range words[:n] {
			args = append(args, []byte(w.key), ids[w.pet])
		}
		if _, err := exec(insertWordsSQL("INSERT", n), args); err != nil {
			return err
		}
		words = words[n:]
	}
	if q, args := rows.counts.sql(); q != "" {
		if _, err := exec(q, args); err != nil {
			return fmt.Errorf("count pets by status: %w", err)
		}
	}
	return nil
}

// execFunc runs one statement of a transaction.
type execFunc func(query string, args []any) (sql.Result, error)

// preparedExec runs statements on tx, each text prepared once.
func preparedExec(ctx context.Context, tx *sql.Tx) execFunc {
	stmts := map[string]*sql.Stmt{}
	return func(query string, args []any) (sql.Result, error) {
		stmt := stmts[query]
		if stmt == nil {
			var err error
			if stmt, err = tx.PrepareContext(ctx, query); err != nil {
				return nil, err
			}
			stmts[query] = stmt
		}
		return stmt.ExecContext(ctx, args...)
	}
}

// insertSeedPets inserts the pets of changes, many a statement, sets
// their IDs and returns them in order. step is the auto-increment's step
// (MySQL's auto_increment_increment; 1 on SQLite).
func (s *Store) insertSeedPets(exec execFunc, changes []PetChange, step int64) ([]int64, error) {
	ids := make([]int64, 0, len(changes))
	for done := 0; done < len(changes); {
		rows := min(seedRows(s.driver), len(changes)-done)
		args := make([]any, 0, rows*5)
		if s.driver != DriverMySQL {
			args = append(args, changes[done].After.CreatedAt)
		}
		for _, ch := range changes[done : done+rows] {
			p := &ch.After
			args = append(args, p.Name, p.CategoryID, string(p.Status))
			if s.driver == DriverMySQL {
				args = append(args, p.CreatedAt, p.UpdatedAt)
			}
		}
		r, err := exec(s.insertPetsSQL(rows), args)
		if err != nil {
			return nil, err
		}
		id, err := r.LastInsertId()
		if err != nil {
			return nil, err
		}
		lo := s.firstInsertedID(id, rows, step)
		for j := range rows {
			changes[done+j].After.ID = lo + int64(j)*step
			ids = append(ids, changes[done+j].After.ID)
		}
		done += rows
	}
	return ids, nil
}

// firstInsertedID returns the first id a multi-row INSERT of rows rows
// gave, from the id the driver reports: SQLite reports the last row's,
// MySQL the first's. The rows of one such statement are numbered in
// steps of step: SQLite has one writer at a time; InnoDB reserves the ids
// of an INSERT whose row count is known in advance at once in lock modes
// 0 and 1, and in mode 2 (Galera) leaves gaps only between statements
// inserting at the same moment: a seed fills a store before it serves.
func (s *Store) firstInsertedID(reported int64, rows int, step int64) int64 {
	if s.driver == DriverMySQL {
		return reported
	}
	return reported - (int64(rows)-1)*step
}

// insertPetsSQL is a multi-row INSERT of rows pets. On SQLite the
// creation time is bound once (?1) for all rows: fewer values to bind.
func (s *Store) insertPetsSQL(rows int) string {
	var b strings.Builder
	if s.driver == DriverMySQL {
		b.WriteString("INSERT INTO pets (" + petInsertColumns + ") VALUES ")
		for i := range rows {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("(?,?,?,?,?)")
		}
		return b.String()
	}
	b.WriteString("INSERT INTO pets (" + petInsertColumns + ") SELECT column1, column2, column3, ?1, ?1 FROM (VALUES ")
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?,?,?)")
	}
	b.WriteString(")")
	return b.String()
}
