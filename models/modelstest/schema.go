package modelstest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"petstore/models"
)

// The helpers below let tests outside models read and change the schema
// by name (count a table's rows, read a setting, snapshot tables, lock or
// break a table, refuse its inserts) instead of writing SQL against it:
// the schema stays models' business, and a change of it is made here
// once. They go around the Store's write paths on purpose; use them only
// to set up or observe what no Store method offers.

// Table names the tables the helpers accept, so that a caller cannot pass
// SQL through them.
type Table string

// The tables tests count, read, lock or break.
const (
	Pets        Table = "pets"
	APIKeys     Table = "api_keys"
	Users       Table = "users"
	Sessions    Table = "sessions"
	AuditEvents Table = "audit_events"
)

// keys orders each table's rows for Rows, by its primary key.
var keys = map[Table]string{Pets: "id", APIKeys: "id", Users: "id", Sessions: "id_hash", AuditEvents: "id"}

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

// BreakTable renames table away, so that every statement on it fails as on
// a broken database, until restore (or the end of the test) puts it back.
func BreakTable(tb testing.TB, s *models.Store, table Table) (restore func()) {
	tb.Helper()
	away := string(table) + "_away"
	rename := func(from, to string) {
		tb.Helper()
		if _, err := s.SQLDB().ExecContext(context.Background(), "ALTER TABLE "+from+" RENAME TO "+to); err != nil {
			tb.Fatalf("rename %s to %s: %v", from, to, err)
		}
	}
	rename(string(table), away)
	broken := true
	restore = func() {
		tb.Helper()
		if broken {
			broken = false
			rename(away, string(table))
		}
	}
	tb.Cleanup(restore)
	return restore
}

// RefuseInserts makes every insert into table fail (a trigger raises an
// error), as a database refusing writes would, until allow (or the end of
// the test) lifts it.
func RefuseInserts(tb testing.TB, s *models.Store, table Table) (allow func()) {
	tb.Helper()
	name := "refuse_" + string(table)
	trigger := "CREATE TRIGGER " + name + " BEFORE INSERT ON " + string(table) + " FOR EACH ROW BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"
	if s.Driver() == models.DriverMySQL {
		trigger = "CREATE TRIGGER " + name + " BEFORE INSERT ON " + string(table) + " FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused by the test'"
	}
	if _, err := s.SQLDB().ExecContext(context.Background(), trigger); err != nil {
		tb.Fatalf("refuse inserts into %s: %v", table, err)
	}
	refused := true
	allow = func() {
		tb.Helper()
		if refused {
			refused = false
			if _, err := s.SQLDB().ExecContext(context.Background(), "DROP TRIGGER "+name); err != nil {
				tb.Fatalf("allow inserts into %s: %v", table, err)
			}
		}
	}
	tb.Cleanup(allow)
	return allow
}

// LockTable takes a write lock on table (LOCK TABLES, MySQL only) on a
// connection of the store's pool, so that every other session's statement
// on it waits, until unlock (or the end of the test). SQLite locks no
// table: hold its one writer connection instead.
func LockTable(tb testing.TB, s *models.Store, table Table) (unlock func()) {
	tb.Helper()
	if s.Driver() != models.DriverMySQL {
		tb.Fatalf("LockTable needs MySQL, not %s", s.Driver())
	}
	ctx := context.Background()
	conn, err := s.SQLDB().Conn(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "LOCK TABLES "+string(table)+" WRITE"); err != nil {
		conn.Close()
		tb.Fatalf("lock %s: %v", table, err)
	}
	unlock = func() {
		if conn != nil {
			conn.ExecContext(ctx, "UNLOCK TABLES")
			conn.Close()
			conn = nil
		}
	}
	tb.Cleanup(unlock)
	return unlock
}

// LockWaiters returns how many sessions on the store's database wait for a
// table's metadata lock (MySQL), such as one LockTable holds.
func LockWaiters(tb testing.TB, s *models.Store) int {
	tb.Helper()
	var n int
	if err := s.SQLDB().QueryRowContext(context.Background(),
		"SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND STATE LIKE '%metadata lock%'").Scan(&n); err != nil {
		tb.Fatalf("lock waiters: %v", err)
	}
	return n
}

// Rows returns every row of table, ordered by its primary key, each value
// as the driver scans it into an any, but text and blobs as strings.
func Rows(tb testing.TB, s *models.Store, table Table) [][]any {
	tb.Helper()
	rows, err := s.SQLDB().QueryContext(context.Background(), "SELECT * FROM "+string(table)+" ORDER BY "+keys[table])
	if err != nil {
		tb.Fatalf("read %s: %v", table, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		tb.Fatal(err)
	}
	var all [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			tb.Fatalf("read %s: %v", table, err)
		}
		for i, v := range vals {
			if raw, ok := v.([]byte); ok {
				vals[i] = string(raw)
			}
		}
		all = append(all, vals)
	}
	if err := rows.Err(); err != nil {
		tb.Fatalf("read %s: %v", table, err)
	}
	return all
}

// Snapshot returns every row of the tables as text, one line a row, to be
// compared with another snapshot: equal snapshots mean nothing in them
// changed.
func Snapshot(tb testing.TB, s *models.Store, tables ...Table) string {
	tb.Helper()
	var b strings.Builder
	for _, table := range tables {
		fmt.Fprintf(&b, "%s:\n", table)
		for _, row := range Rows(tb, s, table) {
			for _, v := range row {
				fmt.Fprintf(&b, "%v|", v)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// AuditCounts returns the number of audit events by action.
func AuditCounts(tb testing.TB, s *models.Store) map[string]int {
	tb.Helper()
	rows, err := s.SQLDB().QueryContext(context.Background(), "SELECT action, COUNT(*) FROM audit_events GROUP BY action")
	if err != nil {
		tb.Fatalf("count audit events: %v", err)
	}
	defer rows.Close()
	counts := map[string]int{}
	for rows.Next() {
		var action string
		var n int
		if err := rows.Scan(&action, &n); err != nil {
			tb.Fatalf("count audit events: %v", err)
		}
		counts[action] = n
	}
	if err := rows.Err(); err != nil {
		tb.Fatalf("count audit events: %v", err)
	}
	return counts
}

// PetEvents is a stored pet and the number of its creation events.
type PetEvents struct {
	ID     int64
	Name   string
	Events int
}

// PetCreations returns every stored pet with the number of creation events
// the audit trail holds for it, and the number of creation events whose
// pet is not stored: an answered create is one pet with one event.
func PetCreations(tb testing.TB, s *models.Store) (pets []PetEvents, orphans int) {
	tb.Helper()
	ctx := context.Background()
	rows, err := s.SQLDB().QueryContext(ctx, `SELECT p.id, p.name, COUNT(a.id) FROM pets p
		LEFT JOIN audit_events a ON a.action = ? AND a.target_type = ? AND a.target_id = p.id
		GROUP BY p.id, p.name`, models.ActionPetCreated, models.TargetPet)
	if err != nil {
		tb.Fatalf("pets and their creation events: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p PetEvents
		if err := rows.Scan(&p.ID, &p.Name, &p.Events); err != nil {
			tb.Fatalf("pets and their creation events: %v", err)
		}
		pets = append(pets, p)
	}
	if err := rows.Err(); err != nil {
		tb.Fatalf("pets and their creation events: %v", err)
	}
	if err := s.SQLDB().QueryRowContext(ctx, `SELECT COUNT(*) FROM audit_events a LEFT JOIN pets p ON p.id = a.target_id
		WHERE a.action = ? AND a.target_type = ? AND p.id IS NULL`, models.ActionPetCreated, models.TargetPet).Scan(&orphans); err != nil {
		tb.Fatalf("creation events without their pet: %v", err)
	}
	return pets, orphans
}

// MigrationVersions returns the number of rows of goose's version table
// past its initial one, and of distinct versions among them: a migration
// applied twice (by two instances starting at once) shows as more rows
// than versions.
func MigrationVersions(tb testing.TB, s *models.Store) (rows, versions int) {
	tb.Helper()
	if err := s.SQLDB().QueryRowContext(context.Background(),
		"SELECT COUNT(*), COUNT(DISTINCT version_id) FROM goose_db_version WHERE version_id > 0").Scan(&rows, &versions); err != nil {
		tb.Fatalf("migration versions: %v", err)
	}
	return rows, versions
}

// InsertPets writes an available pet of category 1 for each of names, with
// ids from firstID on, created and updated at 2026-01-02 03:04:05, and the
// search index's rows of its name, 500 pets a statement: for tests that
// need thousands of pets, which CreatePet would take a minute to write.
// Like InsertBarePet, it writes no status counts and no audit events.
func InsertPets(tb testing.TB, s *models.Store, firstID int64, names []string) {
	tb.Helper()
	ctx := context.Background()
	for from := 0; from < len(names); from += 500 {
		var pets, words []string
		var petArgs, wordArgs []any
		for i, name := range names[from:min(from+500, len(names))] {
			id := firstID + int64(from+i)
			pets = append(pets, "(?, ?, 1, 'available', '2026-01-02 03:04:05', '2026-01-02 03:04:05')")
			petArgs = append(petArgs, id, name)
			for _, k := range models.NameKeys(name) {
				words = append(words, "(?, ?)")
				wordArgs = append(wordArgs, []byte(k), id)
			}
		}
		if _, err := s.SQLDB().ExecContext(ctx, "INSERT INTO pets (id, name, category_id, status, created_at, updated_at) VALUES "+strings.Join(pets, ","), petArgs...); err != nil {
			tb.Fatalf("insert pets: %v", err)
		}
		if len(words) > 0 {
			if _, err := s.SQLDB().ExecContext(ctx, "INSERT INTO pet_name_words (word, pet_id) VALUES "+strings.Join(words, ","), wordArgs...); err != nil {
				tb.Fatalf("insert pets' search words: %v", err)
			}
		}
	}
}
