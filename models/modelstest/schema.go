package modelstest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"petstore/models"
)

// The helpers below let tests outside models read and change the schema
// by name (count a table's rows, set a setting, age a session, break a
// table) instead of writing SQL against it: the schema stays models'
// business, and a change of it is made here once. They go around the
// Store's write paths on purpose; use them only to set up or observe what
// no Store method offers.

// Table names the tables the helpers accept, so that a caller cannot pass
// SQL through them.
type Table string

// The tables tests count or break.
const (
	Pets        Table = "pets"
	Sessions    Table = "sessions"
	AuditEvents Table = "audit_events"
)

// CountRows returns the number of rows of table.
func CountRows(tb testing.TB, s *models.Store, table Table) int {
	tb.Helper()
	var n int
	if err := s.SQLDB().QueryRowContext(context.Background(), "SELECT COUNT(*) FROM "+string(table)).Scan(&n); err != nil {
		tb.Fatalf("count %s: %v", table, err)
	}
	return n
}

// CountPetsWithStatus returns the number of pets whose status is status,
// read from the pets table (not from the status counts).
func CountPetsWithStatus(tb testing.TB, s *models.Store, status models.Status) int {
	tb.Helper()
	var n int
	if err := s.SQLDB().QueryRowContext(context.Background(), "SELECT COUNT(*) FROM pets WHERE status = ?", string(status)).Scan(&n); err != nil {
		tb.Fatalf("count %s pets: %v", status, err)
	}
	return n
}

// MaxPetID returns the highest pet id (0 without pets).
func MaxPetID(tb testing.TB, s *models.Store) int64 {
	tb.Helper()
	var id *int64
	if err := s.SQLDB().QueryRowContext(context.Background(), "SELECT MAX(id) FROM pets").Scan(&id); err != nil {
		tb.Fatalf("max pet id: %v", err)
	}
	if id == nil {
		return 0
	}
	return *id
}

// EngineVersion returns the database server's version string: SQLite's
// library version, or MySQL's or MariaDB's VERSION().
func EngineVersion(tb testing.TB, s *models.Store) string {
	tb.Helper()
	q := "SELECT sqlite_version()"
	if s.Driver() == models.DriverMySQL {
		q = "SELECT VERSION()"
	}
	var v string
	if err := s.SQLDB().QueryRowContext(context.Background(), q).Scan(&v); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return v
}

// InsertBarePet writes a pending pet of category 9 named name, created and
// updated at, as a bare row: without its search words, status counts or
// audit event. It stands for rows an older version left behind.
func InsertBarePet(tb testing.TB, s *models.Store, name string, at time.Time) {
	tb.Helper()
	ts := at.UTC().Format(time.DateTime)
	if _, err := s.SQLDB().ExecContext(context.Background(),
		"INSERT INTO pets (name, category_id, status, created_at, updated_at) VALUES (?, 9, 'pending', ?, ?)", name, ts, ts); err != nil {
		tb.Fatalf("insert pet %q: %v", name, err)
	}
}

// LastAudit returns the actor and detail of the newest audit event of
// action on the target id.
func LastAudit(tb testing.TB, s *models.Store, action string, targetID int64) (actor, detail string, err error) {
	tb.Helper()
	err = s.SQLDB().QueryRowContext(context.Background(),
		"SELECT actor, detail FROM audit_events WHERE action = ? AND target_id = ? ORDER BY id DESC LIMIT 1", action, targetID).Scan(&actor, &detail)
	return actor, detail, err
}

// Setting returns the stored value of the setting name (for example a
// cookie key, hex-encoded).
func Setting(tb testing.TB, s *models.Store, name string) string {
	tb.Helper()
	var v string
	if err := s.SQLDB().QueryRowContext(context.Background(), "SELECT value FROM settings WHERE name = ?", name).Scan(&v); err != nil {
		tb.Fatalf("setting %s: %v", name, err)
	}
	return v
}

// SessionSeen returns, as text, when the session stored under idHash (the
// hex SHA-256 of its cookie value) was last written.
func SessionSeen(tb testing.TB, s *models.Store, idHash string) string {
	tb.Helper()
	var v any
	if err := s.SQLDB().QueryRowContext(context.Background(), "SELECT updated_at FROM sessions WHERE id_hash = ?", idHash).Scan(&v); err != nil {
		tb.Fatalf("session %s: %v", idHash, err)
	}
	return fmt.Sprint(v)
}

// RenameTable renames table to name, on both engines: a test breaks the
// schema under a running server this way, and puts it back with
// RenameTable(tb, s, name, table).
func RenameTable(tb testing.TB, s *models.Store, table Table, name Table) {
	tb.Helper()
	if _, err := s.SQLDB().ExecContext(context.Background(), "ALTER TABLE "+string(table)+" RENAME TO "+string(name)); err != nil {
		tb.Fatalf("rename %s to %s: %v", table, name, err)
	}
}
