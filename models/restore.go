package models

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
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

// Restore loads the backup that open reads into this store's database,
// which must be migrated to the backup's schema version. It reads the
// backup twice: first to verify all of it (format, rows, counts, checksum,
// and that every table and column it holds exists here) without writing;
// then, in one transaction, to delete what the target holds and write the
// backup's rows. Any failure rolls the transaction back, so the target is
// left as it was. A target holding data is refused unless o.Replace.
// Sessions are deleted: a restore signs everyone out.
func (s *Store) Restore(ctx context.Context, open func() (io.ReadCloser, error), o RestoreOptions) (BackupSummary, error) {
	version, err := s.schemaVersion(ctx)
	if err != nil {
		return BackupSummary{}, err
	}
	target, err := s.schemaTables(ctx, s.sqlDB)
	if err != nil {
		return BackupSummary{}, err
	}
	targetCols := map[string][]backupColumn{}
	for _, t := range target {
		cols, _, err := s.tableColumns(ctx, s.sqlDB, t)
		if err != nil {
			return BackupSummary{}, err
		}
		targetCols[t] = cols
	}
	check := backupVisitor{
		header: func(h BackupHeader) error { return checkSchemaVersion(h, version) },
		table: func(name string, cols []backupColumn) error {
			have, ok := targetCols[name]
			if !ok {
				return fmt.Errorf("the backup holds table %s, which this database's schema (version %d) lacks", name, version)
			}
			for _, c := range cols {
				if !slices.ContainsFunc(have, func(h backupColumn) bool { return h.Name == c.Name }) {
					return fmt.Errorf("the backup holds column %s.%s, which this database's schema (version %d) lacks", name, c.Name, version)
				}
			}
			return nil
		},
	}
	sum, err := readFrom(open, check)
	if err != nil {
		return BackupSummary{}, err
	}
	w, err := s.beginRestore(ctx)
	if err != nil {
		return BackupSummary{}, err
	}
	defer w.close()
	if err := s.clearTarget(ctx, w.tx, sum, target, o); err != nil {
		return BackupSummary{}, err
	}
	var ins *inserter
	write := backupVisitor{
		header: func(h BackupHeader) error { return checkSchemaVersion(h, version) },
		table: func(name string, cols []backupColumn) error {
			ins = newInserter(s, w.tx, name, cols)
			return nil
		},
		row:  func(vals []any) error { return ins.add(ctx, vals) },
		done: func(string) error { return ins.flush(ctx) },
	}
	if _, err := readFrom(open, write); err != nil {
		return BackupSummary{}, err
	}
	if err := w.tx.Commit(); err != nil {
		return BackupSummary{}, fmt.Errorf("restore: commit: %w", err)
	}
	return sum, nil
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
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("restore: begin: %w", err)
	}
	return &restoreTx{tx: tx, close: func() { tx.Rollback(); db.Close() }}, nil
}

// clearTarget refuses a target that holds data unless o.Replace, then
// deletes every row of the backup's tables and of the excluded ones (the
// sessions among them), within tx.
func (s *Store) clearTarget(ctx context.Context, tx *sql.Tx, sum BackupSummary, target []string, o RestoreOptions) error {
	var tables []string
	for _, t := range sum.Tables {
		tables = append(tables, t.Name)
	}
	for _, t := range target {
		if _, ok := BackupExcluded[t]; ok && !strings.HasPrefix(t, "goose_") {
			tables = append(tables, t)
		}
	}
	if !o.Replace {
		for _, t := range tables {
			if backupSetup[t] {
				continue
			}
			var one int
			err := tx.QueryRowContext(ctx, "SELECT 1 FROM "+s.quoteIdent(t)+" LIMIT 1").Scan(&one)
			if err == nil {
				return fmt.Errorf("%w (table %s has rows): restore into an empty database, or add --replace to delete what it holds", ErrTargetNotEmpty, t)
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("restore: read %s: %w", t, err)
			}
		}
	}
	for _, t := range tables {
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

// ReadBackupHeader reads a backup's header alone, without verifying the
// rest, to learn its schema version before the database is migrated.
func ReadBackupHeader(r io.Reader) (BackupHeader, error) {
	br, err := newBackupReader(r)
	if err != nil {
		return BackupHeader{}, err
	}
	line, err := br.next()
	if err != nil {
		return BackupHeader{}, err
	}
	var h BackupHeader
	if json.Unmarshal(line, &h) != nil || h.Format != BackupFormat {
		return BackupHeader{}, badBackup("the file is not a petstore backup (no petstore-backup header)")
	}
	return h, nil
}

// MigrateAndRestore is Restore for a database that has not been migrated
// yet, as the restore command opens it. A backup of this petstore's schema
// version is restored after the database is migrated. A backup of an
// older one, into a database not past that version (a new one), is
// restored after migrating the database to the backup's version only; the
// remaining migrations then bring the restored rows up to date, as they
// would the database the backup was taken from. migrated says what those
// did.
func (s *Store) MigrateAndRestore(ctx context.Context, open func() (io.ReadCloser, error), o RestoreOptions) (sum BackupSummary, migrated MigrationResult, err error) {
	r, err := open()
	if err != nil {
		return BackupSummary{}, MigrationResult{}, err
	}
	h, err := ReadBackupHeader(r)
	r.Close()
	if err != nil {
		return BackupSummary{}, MigrationResult{}, err
	}
	latest, err := LatestSchemaVersion(s.driver)
	if err != nil {
		return BackupSummary{}, MigrationResult{}, err
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
	if sum, err = s.Restore(ctx, open, o); err != nil {
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
