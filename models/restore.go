package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// RestoreOptions says how Restore treats the target.
type RestoreOptions struct {
	// Replace lets Restore delete what the target holds; without it a
	// target that holds data is refused.
	Replace bool
}

// ErrTargetNotEmpty is Restore's refusal of a database that holds data
// without RestoreOptions.Replace.
var ErrTargetNotEmpty = errors.New("the database already holds data")

// restoreBatchRows and restoreBatchBytes bound a multi-row INSERT: within
// both engines' limits on placeholders, and MySQL's packet size.
const (
	restoreBatchRows   = 1000
	restoreBatchParams = 30000
	restoreBatchBytes  = 4 << 20
)

// VerifiedBackup is a backup read whole and found sound, with what a
// restore needs of it before reading it again: its tables' lines.
type VerifiedBackup struct {
	Summary BackupSummary
	tables  []backupTable
}

// VerifyBackup reads the whole backup that open gives and verifies it
// without touching any database: the format, every row against its
// table's columns, the counts and the checksum.
func VerifyBackup(open func() (io.ReadCloser, error)) (*VerifiedBackup, error) {
	v := &VerifiedBackup{}
	sum, err := readFrom(open, backupVisitor{table: func(t backupTable) error {
		v.tables = append(v.tables, t)
		return nil
	}})
	if err != nil {
		return nil, err
	}
	v.Summary = sum
	return v, nil
}

// Restore loads the backup that open reads into this store's database,
// which must be migrated to the backup's schema version. It reads the
// backup twice: first to verify all of it (VerifyBackup) without writing;
// then, in one transaction, to delete what the target holds and write the
// backup's rows. Any failure rolls the transaction back, so the target is
// left as it was. A target holding data is refused unless o.Replace.
// Sessions are deleted: a restore signs everyone out.
func (s *Store) Restore(ctx context.Context, open func() (io.ReadCloser, error), o RestoreOptions) (BackupSummary, error) {
	v, err := VerifyBackup(open)
	if err != nil {
		return BackupSummary{}, err
	}
	return s.restoreVerified(ctx, v, open, o)
}

// restoreVerified is Restore of a backup that VerifyBackup passed: it
// checks the backup against the database (schema version, tables,
// columns) before writing, then reads it a second time, verifying it
// again as it goes, to write it in one transaction.
func (s *Store) restoreVerified(ctx context.Context, v *VerifiedBackup, open func() (io.ReadCloser, error), o RestoreOptions) (BackupSummary, error) {
	version, err := s.schemaVersion(ctx)
	if err != nil {
		return BackupSummary{}, err
	}
	if err := checkSchemaVersion(v.Summary.Header, version); err != nil {
		return BackupSummary{}, err
	}
	target, err := s.schemaTables(ctx, s.sqlDB)
	if err != nil {
		return BackupSummary{}, err
	}
	for _, t := range v.tables {
		if !slices.Contains(target, t.Table) {
			return BackupSummary{}, fmt.Errorf("the backup holds table %s, which this database's schema (version %d) lacks", t.Table, version)
		}
		have, _, err := s.tableColumns(ctx, s.sqlDB, t.Table)
		if err != nil {
			return BackupSummary{}, err
		}
		for _, c := range t.Columns {
			if !slices.ContainsFunc(have, func(h backupColumn) bool { return h.Name == c.Name }) {
				return BackupSummary{}, fmt.Errorf("the backup holds column %s.%s, which this database's schema (version %d) lacks", t.Table, c.Name, version)
			}
		}
	}
	if s.driver == DriverMySQL {
		if err := s.refuseIfNotEmpty(ctx, s.sqlDB, v.Summary, target, o); err != nil {
			return BackupSummary{}, err
		}
		// Before the transaction: ALTER TABLE would commit it.
		if err := s.raiseMySQLCounters(ctx, v.tables); err != nil {
			return BackupSummary{}, err
		}
	}
	w, err := s.beginRestore(ctx)
	if err != nil {
		return BackupSummary{}, err
	}
	defer w.close()
	if err := s.clearTarget(ctx, w.tx, v.Summary, target, o); err != nil {
		return BackupSummary{}, err
	}
	var indexes []string
	if s.driver != DriverMySQL {
		if err := s.raiseSQLiteCounters(ctx, w.tx, v.tables); err != nil {
			return BackupSummary{}, err
		}
		if indexes, err = s.dropSQLiteIndexes(ctx, w.tx, v.tables); err != nil {
			return BackupSummary{}, err
		}
	}
	var ins *inserter
	write := backupVisitor{
		header: func(h BackupHeader) error {
			if !sameHeader(h, v.Summary.Header) {
				return badBackup("the file changed since it was verified")
			}
			return nil
		},
		table: func(t backupTable) error {
			ins = newInserter(s, w.tx, t.Table, t.Columns)
			return nil
		},
		row:  func(vals []any) error { return ins.add(ctx, vals) },
		done: func(string) error { return ins.flush(ctx) },
	}
	if _, err := readFrom(open, write); err != nil {
		return BackupSummary{}, err
	}
	for _, ddl := range indexes {
		if _, err := w.tx.ExecContext(ctx, ddl); err != nil {
			return BackupSummary{}, fmt.Errorf("restore: build an index again: %w", err)
		}
	}
	if err := w.tx.Commit(); err != nil {
		return BackupSummary{}, fmt.Errorf("restore: commit: %w", err)
	}
	return v.Summary, nil
}

// sameHeader says whether two headers are the same backup's.
func sameHeader(a, b BackupHeader) bool {
	return a.Format == b.Format && a.Version == b.Version && a.SchemaVersion == b.SchemaVersion && a.Engine == b.Engine &&
		a.CreatedAt.Equal(b.CreatedAt) && a.Petstore == b.Petstore
}

// raiseMySQLCounters raises each table's auto-increment counter to the
// backup's, so that no id the source ever gave (a row since moved out of
// its table or deleted among them) is given again. A counter at or above
// it is left; InnoDB keeps it above the table's ids whatever is asked.
func (s *Store) raiseMySQLCounters(ctx context.Context, tables []backupTable) error {
	for _, t := range tables {
		if t.NextID <= 0 {
			continue
		}
		var current sql.NullInt64
		if err := s.sqlDB.QueryRowContext(ctx, `SELECT auto_increment FROM information_schema.tables
			WHERE table_schema = DATABASE() AND table_name = ?`, t.Table).Scan(&current); err != nil {
			return fmt.Errorf("restore: the counter of %s: %w", t.Table, err)
		}
		if !current.Valid || current.Int64 >= t.NextID {
			continue
		}
		if _, err := s.sqlDB.ExecContext(ctx, "ALTER TABLE "+s.quoteIdent(t.Table)+" AUTO_INCREMENT = "+strconv.FormatInt(t.NextID, 10)); err != nil {
			return fmt.Errorf("restore: raise the counter of %s: %w", t.Table, err)
		}
	}
	return nil
}

// raiseSQLiteCounters raises, within tx, the counter of each table
// declared AUTOINCREMENT to the backup's (see raiseMySQLCounters).
func (s *Store) raiseSQLiteCounters(ctx context.Context, tx *sql.Tx, tables []backupTable) error {
	for _, t := range tables {
		if t.NextID <= 0 {
			continue
		}
		var decl string
		if err := tx.QueryRowContext(ctx, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", t.Table).Scan(&decl); err != nil {
			return fmt.Errorf("restore: the declaration of %s: %w", t.Table, err)
		}
		if !strings.Contains(strings.ToUpper(decl), "AUTOINCREMENT") {
			continue
		}
		seq := t.NextID - 1
		res, err := tx.ExecContext(ctx, "UPDATE sqlite_sequence SET seq = ? WHERE name = ? AND seq < ?", seq, t.Table, seq)
		if err != nil {
			return fmt.Errorf("restore: raise the counter of %s: %w", t.Table, err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO sqlite_sequence (name, seq) SELECT ?, ? WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ?)",
			t.Table, seq, t.Table); err != nil {
			return fmt.Errorf("restore: set the counter of %s: %w", t.Table, err)
		}
	}
	return nil
}

// dropSQLiteIndexes drops, within tx, the indexes of the backup's tables
// that were created by name (not those of a primary key or a UNIQUE
// constraint), and returns the statements that create them again. SQLite
// builds an index from sorted rows far faster than it inserts rows in
// random order into it, which, past what its page cache holds, writes and
// reads the same pages again and again. The drop is part of the
// transaction: a failed restore rolls it back with the rest.
func (s *Store) dropSQLiteIndexes(ctx context.Context, tx *sql.Tx, tables []backupTable) ([]string, error) {
	var names, ddls []string
	for _, t := range tables {
		rows, err := tx.QueryContext(ctx, "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY name", t.Table)
		if err != nil {
			return nil, fmt.Errorf("restore: the indexes of %s: %w", t.Table, err)
		}
		for rows.Next() {
			var name, ddl string
			if err := rows.Scan(&name, &ddl); err != nil {
				rows.Close()
				return nil, fmt.Errorf("restore: the indexes of %s: %w", t.Table, err)
			}
			if !identifier.MatchString(name) {
				rows.Close()
				return nil, fmt.Errorf("restore: unexpected index name %q", name)
			}
			names, ddls = append(names, name), append(ddls, ddl)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("restore: the indexes of %s: %w", t.Table, err)
		}
	}
	for _, name := range names {
		if _, err := tx.ExecContext(ctx, "DROP INDEX "+s.quoteIdent(name)); err != nil {
			return nil, fmt.Errorf("restore: drop index %s: %w", name, err)
		}
	}
	return ddls, nil
}

// readFrom reads the backup that open gives with v.
func readFrom(open func() (io.ReadCloser, error), v backupVisitor) (BackupSummary, error) {
	r, err := open()
	if err != nil {
		return BackupSummary{}, err
	}
	defer r.Close()
	return readBackup(r, v)
}

// checkSchemaVersion refuses a backup of another schema version than the
// database's: its rows would not fit the tables (MigrateAndRestore
// migrates a new database to the backup's version first).
func checkSchemaVersion(h BackupHeader, version int64) error {
	switch {
	case h.SchemaVersion > version:
		return fmt.Errorf("the backup's schema version is %d, newer than this petstore's %d: restore it with petstore %s or newer",
			h.SchemaVersion, version, h.Petstore)
	case h.SchemaVersion < version:
		return fmt.Errorf("the backup's schema version is %d, older than this database's %d: restore it into a new, empty database "+
			"(which is migrated to the backup's version, then on), or with petstore %s", h.SchemaVersion, version, h.Petstore)
	}
	return nil
}

// schemaVersion reads the database's schema version.
func (s *Store) schemaVersion(ctx context.Context) (int64, error) {
	var v sql.NullInt64
	if err := s.sqlDB.QueryRowContext(ctx, "SELECT MAX(version_id) FROM goose_db_version WHERE is_applied = 1").Scan(&v); err != nil {
		return 0, fmt.Errorf("read the schema version: %w", err)
	}
	return v.Int64, nil
}

// restoreTx is a restore's write transaction and what ends it.
type restoreTx struct {
	tx    *sql.Tx
	close func()
}

// beginRestore begins the restore's transaction: on SQLite's writer, or on
// a MySQL connection without the pool's timeouts (deleting a big table's
// rows takes longer than a request's statement may).
func (s *Store) beginRestore(ctx context.Context) (*restoreTx, error) {
	if s.driver != DriverMySQL {
		tx, err := s.sqlDB.BeginTx(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("restore: begin: %w", err)
		}
		return &restoreTx{tx: tx, close: func() { tx.Rollback() }}, nil
	}
	db, err := s.longDB()
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("restore: connect: %w", err)
	}
	// As MariaDB advises for loading data (and mysqldump's files do): with
	// these off, InnoDB loads an empty table in bulk, sorting each index
	// once and logging the table's undo once rather than each row's. The
	// rows come from a database with the same keys, and a duplicate primary
	// key still fails the load.
	if _, err := conn.ExecContext(ctx, "SET SESSION unique_checks = 0, foreign_key_checks = 0"); err != nil {
		conn.Close()
		db.Close()
		return nil, fmt.Errorf("restore: begin: %w", err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		conn.Close()
		db.Close()
		return nil, fmt.Errorf("restore: begin: %w", err)
	}
	return &restoreTx{tx: tx, close: func() { tx.Rollback(); conn.Close(); db.Close() }}, nil
}

// restoreTables are the tables a restore empties: the backup's, and the
// excluded ones the target has (the sessions among them).
func restoreTables(sum BackupSummary, target []string) []string {
	var tables []string
	for _, t := range sum.Tables {
		tables = append(tables, t.Name)
	}
	for _, t := range target {
		if _, ok := BackupExcluded[t]; ok && !strings.HasPrefix(t, "goose_") {
			tables = append(tables, t)
		}
	}
	return tables
}

// refuseIfNotEmpty refuses a target that holds data unless o.Replace.
func (s *Store) refuseIfNotEmpty(ctx context.Context, q queryer, sum BackupSummary, target []string, o RestoreOptions) error {
	if o.Replace {
		return nil
	}
	for _, t := range restoreTables(sum, target) {
		if backupSetup[t] {
			continue
		}
		var one int
		err := q.QueryRowContext(ctx, "SELECT 1 FROM "+s.quoteIdent(t)+" LIMIT 1").Scan(&one)
		if err == nil {
			return fmt.Errorf("%w (table %s has rows): restore into an empty database, or add --replace to delete what it holds", ErrTargetNotEmpty, t)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("restore: read %s: %w", t, err)
		}
	}
	return nil
}

// clearTarget refuses a target that holds data unless o.Replace, then
// deletes every row of the tables a restore empties, within tx.
func (s *Store) clearTarget(ctx context.Context, tx *sql.Tx, sum BackupSummary, target []string, o RestoreOptions) error {
	if err := s.refuseIfNotEmpty(ctx, tx, sum, target, o); err != nil {
		return err
	}
	for _, t := range restoreTables(sum, target) {
		// A table found empty is left untouched: a DELETE, even of nothing,
		// locks it, and InnoDB then no longer loads it in bulk.
		if !o.Replace && !backupSetup[t] {
			continue
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+s.quoteIdent(t)); err != nil {
			return fmt.Errorf("restore: empty %s: %w", t, err)
		}
	}
	return nil
}

// inserter writes one table's rows in multi-row INSERTs.
type inserter struct {
	s       *Store
	tx      *sql.Tx
	table   string
	prefix  string
	tuple   string
	perRow  int
	maxRows int
	args    []any
	rows    int
	bytes   int
	full    *sql.Stmt
}

func newInserter(s *Store, tx *sql.Tx, table string, cols []backupColumn) *inserter {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = s.quoteIdent(c.Name)
	}
	return &inserter{s: s, tx: tx, table: table,
		prefix:  "INSERT INTO " + s.quoteIdent(table) + " (" + strings.Join(names, ", ") + ") VALUES ",
		tuple:   "(" + strings.Repeat("?, ", len(cols)-1) + "?)",
		perRow:  len(cols),
		maxRows: max(1, min(restoreBatchRows, restoreBatchParams/len(cols)))}
}

func (in *inserter) add(ctx context.Context, vals []any) error {
	for _, v := range vals {
		switch x := v.(type) {
		case string:
			in.bytes += len(x)
		case []byte:
			in.bytes += len(x)
		default:
			in.bytes += 8
		}
	}
	in.args = append(in.args, vals...)
	in.rows++
	if in.rows >= in.maxRows || in.bytes >= restoreBatchBytes {
		return in.flush(ctx)
	}
	return nil
}

// flush writes the rows added since the last flush. A batch of the full
// size reuses one prepared statement.
func (in *inserter) flush(ctx context.Context) error {
	if in.rows == 0 {
		return nil
	}
	var err error
	if in.rows == in.maxRows {
		if in.full == nil {
			in.full, err = in.tx.PrepareContext(ctx, in.sql(in.rows))
			if err != nil {
				return fmt.Errorf("restore: write %s: %w", in.table, err)
			}
		}
		_, err = in.full.ExecContext(ctx, in.args...)
	} else {
		_, err = in.tx.ExecContext(ctx, in.sql(in.rows), in.args...)
	}
	if err != nil {
		return fmt.Errorf("restore: write %s: %w", in.table, err)
	}
	clear(in.args)
	in.args, in.rows, in.bytes = in.args[:0], 0, 0
	return nil
}

func (in *inserter) sql(rows int) string {
	var b strings.Builder
	b.Grow(len(in.prefix) + rows*(len(in.tuple)+2))
	b.WriteString(in.prefix)
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(in.tuple)
	}
	return b.String()
}

// MigrateAndRestore is Restore for a database that has not been migrated
// yet, as the restore command opens it, of a backup that VerifyBackup
// passed: nothing, the migrations included, is written before the whole
// file was found sound. A backup of this petstore's schema version is
// restored after the database is migrated. A backup of an older one, into
// a database not past that version (a new one), is restored after
// migrating the database to the backup's version only; the remaining
// migrations then bring the restored rows up to date, as they would the
// database the backup was taken from. migrated says what those did.
func (s *Store) MigrateAndRestore(ctx context.Context, v *VerifiedBackup, open func() (io.ReadCloser, error), o RestoreOptions) (sum BackupSummary, migrated MigrationResult, err error) {
	h := v.Summary.Header
	latest, err := LatestSchemaVersion(s.driver)
	if err != nil {
		return BackupSummary{}, MigrationResult{}, err
	}
	if h.SchemaVersion > latest {
		return BackupSummary{}, MigrationResult{}, checkSchemaVersion(h, latest)
	}
	current, err := s.currentSchemaVersion(ctx)
	if err != nil {
		return BackupSummary{}, MigrationResult{}, err
	}
	older := h.SchemaVersion > 0 && h.SchemaVersion < latest && current <= h.SchemaVersion
	if older {
		if _, err := s.migrateTo(ctx, h.SchemaVersion); err != nil {
			return BackupSummary{}, MigrationResult{}, err
		}
	} else if _, err := s.Migrate(ctx); err != nil {
		return BackupSummary{}, MigrationResult{}, err
	}
	if sum, err = s.restoreVerified(ctx, v, open, o); err != nil {
		return BackupSummary{}, MigrationResult{}, err
	}
	if older {
		if migrated, err = s.Migrate(ctx); err != nil {
			return sum, MigrationResult{}, fmt.Errorf("restored at schema version %d, then: %w (run petstore migrate)", h.SchemaVersion, err)
		}
	}
	return sum, migrated, nil
}

// currentSchemaVersion is the database's schema version, 0 for a database
// that was never migrated.
func (s *Store) currentSchemaVersion(ctx context.Context) (int64, error) {
	tables, err := s.schemaTables(ctx, s.sqlDB)
	if err != nil {
		return 0, err
	}
	if !slices.Contains(tables, "goose_db_version") {
		return 0, nil
	}
	return s.schemaVersion(ctx)
}
