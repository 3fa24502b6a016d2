package models

import (
	"context"
	"io/fs"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pressly/goose/v3"
	"gorm.io/gorm"
)

// Transaction exposes the Store's retrying transaction to the tests.
func (s *Store) Transaction(ctx context.Context, fn func(tx *gorm.DB) error) error {
	return s.transaction(ctx, fn)
}

// CommonPasswordCount returns the number of passwords in the embedded list.
func CommonPasswordCount() int { return len(commonPasswords()) }

// HashingPeak is the most bcrypt hashes or comparisons that ran at once.
func (s *Store) HashingPeak() int64 { return s.signIns.hashing.peak.Load() }

// TraceSearch returns a context under which every statement a name search
// runs is passed to fn, for tests that EXPLAIN them.
func TraceSearch(ctx context.Context, fn func(query string, args []any)) context.Context {
	return context.WithValue(ctx, searchTraceKey{}, fn)
}

// SearchWords exposes how names and searches are split into words.
var SearchWords = searchWords

// MigrateUpTo applies the migrations up to version only, without what
// Migrate does after them: tests of a later migration start from it.
func (s *Store) MigrateUpTo(ctx context.Context, version int64) error {
	sub, err := fs.Sub(migrations, "migrations/"+s.driver)
	if err != nil {
		return err
	}
	dialect := goose.DialectSQLite3
	if s.driver == DriverMySQL {
		dialect = goose.DialectMySQL
	}
	p, err := goose.NewProvider(dialect, s.sqlDB, sub, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return err
	}
	_, err = p.UpTo(ctx, version)
	return err
}

// RenamePet changes a pet's name through EditPet, the console's edit, for
// the tests of the search index.
func (s *Store) RenamePet(ctx context.Context, id int64, name string) error {
	p, err := s.GetPet(ctx, id)
	if err != nil {
		return err
	}
	_, err = s.EditPet(ctx, id, p.Version, NewPet{Name: name, CategoryID: p.CategoryID, Status: p.Status}, "test")
	return err
}

// MatchesWords exposes the search rule: every word of the search starts
// a word of the name.
func MatchesWords(name, search string) bool { return matchesWords(name, searchTerms(search)) }

// countKey carries the counter of CountStatements.
type countKey struct{}

// counting holds the stores whose GORM queries are counted.
var counting sync.Map

// CountStatements returns a context under which the statements of pet
// listings (GORM's queries and the name search's own) are counted in n.
// Call it before the store runs queries on other goroutines: it may add a
// callback to the store's GORM instance.
func (s *Store) CountStatements(ctx context.Context) (_ context.Context, n *atomic.Int64) {
	n = new(atomic.Int64)
	if _, done := counting.LoadOrStore(s, true); !done {
		err := s.db.Callback().Query().After("gorm:query").Register("petstore:count", func(db *gorm.DB) {
			if c, ok := db.Statement.Context.Value(countKey{}).(*atomic.Int64); ok {
				c.Add(1)
			}
		})
		if err != nil {
			panic(err)
		}
	}
	ctx = context.WithValue(ctx, countKey{}, n)
	return TraceSearch(ctx, func(string, []any) { n.Add(1) }), n
}

// ListPetsAPI is EachPetAPI into a slice, for the tests: the page
// appended to dst[:0], CreatedAt and UpdatedAt left zero.
func (s *Store) ListPetsAPI(ctx context.Context, q PetQuery, dst []Pet) ([]Pet, bool, error) {
	pets := dst[:0]
	more, err := s.EachPetAPI(ctx, q, func(p PetRow) {
		pets = append(pets, Pet{ID: p.ID, Name: string(p.Name), CategoryID: p.CategoryID, Status: p.Status})
	})
	if err != nil {
		return nil, false, err
	}
	return pets, more, nil
}

// ConsecutiveIDs says the MySQL server gives a multi-row INSERT consecutive
// ids, so that a create batch's pets are one INSERT.
func (s *Store) ConsecutiveIDs() bool { return s.server.consecutiveIDs }

// InsertPetsOneByOne makes each pet of a MySQL create batch an INSERT of
// its own, as on a server whose ids may interleave.
func (s *Store) InsertPetsOneByOne() { s.server.consecutiveIDs = false }

// SetZone sets the store's time zone, in which its messages name times.
func (s *Store) SetZone(loc *time.Location) { s.zone = loc }

// WALPagesCopied waits for SQLite's log checkpoint under way, if any, and
// returns how many pages the Store's own checkpoints have copied.
func (s *Store) WALPagesCopied() int64 {
	s.wal.bg.Wait()
	return s.wal.copied.Load()
}
