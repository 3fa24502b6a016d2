package models

import (
	"context"
	"database/sql"
	"time"

	"gorm.io/gorm"
)

// Test hooks: exported for the tests of other packages (api, web, the
// commands), which drive a real Store; the service itself never calls
// them. A hook that reaches past the Store (SQLDB) is for what no Store
// method says; prefer modelstest's helpers.

// CreateAPIKey makes a key named name with the default scopes and no
// expiry; see CreateAPIKeyFrom.
func (s *Store) CreateAPIKey(ctx context.Context, name, creator string) (APIKey, string, error) {
	return s.CreateAPIKeyFrom(ctx, APIKeyInput{Name: name, Scopes: []string{DefaultScopes.String()}}, creator)
}

// CreateUser adds a staff account with a bcrypt-hashed password, as an
// editor: the everyday role (CreateUserWithRole gives another).
func (s *Store) CreateUser(ctx context.Context, username, password, actor string) (User, error) {
	return s.CreateUserWithRole(ctx, username, password, RoleEditor, actor)
}

// DeleteUserSessions ends every session of an account at once, and
// returns how many there were.
func (s *Store) DeleteUserSessions(ctx context.Context, userID int64) (int64, error) {
	var n int64
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		res := tx.Where("user_id = ?", userID).Delete(&sessionRow{})
		n = res.RowsAffected
		return res.Error
	})
	return n, s.dbErr("delete user sessions", err)
}

// Driver returns the driver the store was opened with (DriverSQLite or
// DriverMySQL). It is a test hook: tests use it to expect what differs by
// engine; the program itself knows its driver from the configuration.
func (s *Store) Driver() string { return s.driver }

// SQLDB exposes the primary pool: MySQL's, or SQLite's single writer.
func (s *Store) SQLDB() *sql.DB { return s.sqlDB }

// NameKeys returns the search index's keys of a pet's name: the rows of
// pet_name_words a test writes beside a pet it inserts itself.
func NameKeys(name string) []string { return nameKeys(name) }

// SetClock replaces the store's clock; tests use it to pin times.
func (s *Store) SetClock(now func() time.Time) {
	utc := func() time.Time { return now().UTC() }
	s.clock.Store(&utc)
}

// SetCreateTimeout replaces the bound on a batch of creates'
// transaction, so that a test can pass it without waiting 15 s.
func (s *Store) SetCreateTimeout(d time.Duration) { s.pets.createTimeout.Store(int64(d)) }

// KeyReads returns how many times this store has read a key's row to
// authenticate a request: the database work that API keys cost, which
// tests bound.
func (s *Store) KeyReads() int64 {
	s.keys.cache.mu.RLock()
	defer s.keys.cache.mu.RUnlock()
	return s.keys.cache.reads
}

// SignInCounts returns the sign-in counts of this instance.
func (s *Store) SignInCounts() SignInCounts {
	return SignInCounts{s.signIns.counters.checks.Load(), s.signIns.counters.throttled.Load(), s.signIns.counters.busy.Load()}
}

// SeedPetAt is the example pet number i a seed adds.
func SeedPetAt(i int) NewPet { return seedPet(i) }
