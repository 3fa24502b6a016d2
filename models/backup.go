package models

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"
)

// A backup is petstore's own logical format, the same whichever engine wrote
// it, so that it restores into either: a gzip stream of JSON lines. The
// first line is the header (BackupHeader); then, for each table, a line
// naming the table and its columns (backupTable) followed by its rows, each
// a JSON array of the column values in that order; the last line is the
// trailer (backupTrailer): the row count of each table and the SHA-256 of
// every byte before the trailer line. docs/operations.md documents it.
const (
	// BackupFormat is the header's format name.
	BackupFormat = "petstore-backup"
	// BackupFormatVersion is the version of the layout above that this
	// petstore writes, and the newest it reads.
	BackupFormatVersion = 1
)

// The kinds of column value, as a table's line names them. A value is a
// JSON number (int, float), a string (text; time as RFC 3339 with
// nanoseconds in UTC; bytes as standard base64) or null. Text that is not
// valid UTF-8 is written as {"b": base64} so that no byte is lost.
const (
	kindInt   = "int"
	kindFloat = "float"
	kindText  = "text"
	kindBytes = "bytes"
	kindTime  = "time"
)

// BackupExcluded are the tables a backup leaves out, each with its reason;
// every other table of the schema is backed up, so a table added by a
// later migration is in the backups without a change here. A restore
// empties these tables of the target too, where it has them.
var BackupExcluded = map[string]string{
	"goose_db_version": "the schema version: it is in the header, and the target's migrations write their own",
	"goose_lock":       "the migrations' lock (MySQL)",
	"sessions":         "sign-in sessions: a restore signs everyone out",
	"login_limits":     "sign-in attempt limits: they expire within the hour",
	"backups":          "the schedule's record of the backups taken, which a restore starts afresh",
	"import_files":     "CSV files waiting for their import (up to 20 MiB each): a restored import that has not ended asks for its file again",
}

// backupFilters keep a table's rows that a restored service still needs:
// idempotency records past their expiry are never replayed.
var backupFilters = map[string]string{
	"idempotency_keys": "expires_at > ?",
}

// backupSetup are the tables whose rows the migrations write themselves: a
// freshly migrated target holds them, and is still empty for a restore.
var backupSetup = map[string]bool{"settings": true, "event_clock": true}

// backupChunk is how many rows each keyset read of a table takes.
const backupChunk = 5000

// BackupHeader is a backup's first line.
type BackupHeader struct {
	Format        string    `json:"format"`
	Version       int       `json:"version"`
	SchemaVersion int64     `json:"schema_version"`
	Engine        string    `json:"engine"`
	CreatedAt     time.Time `json:"created_at"`
	Petstore      string    `json:"petstore_version"`
}

// backupTable opens a table's rows.
type backupTable struct {
	Table   string         `json:"table"`
	Columns []backupColumn `json:"columns"`
	// NextID is the id the table's auto-increment counter gives next, when
	// the table has one: above every id the table ever gave, also those of
	// rows since moved out or deleted, which a restore must not give again.
	NextID int64 `json:"next_id,omitempty"`
}

type backupColumn struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

// backupTrailer is a backup's last line.
type backupTrailer struct {
	Trailer struct {
		Rows   map[string]int64 `json:"rows"`
		SHA256 string           `json:"sha256"`
	} `json:"trailer"`
}

// BackupTable is one table of a backup and its number of rows.
type BackupTable struct {
	Name string
	Rows int64
}

// BackupSummary says what a backup holds.
type BackupSummary struct {
	Header BackupHeader
	Tables []BackupTable
}

// Rows returns the number of rows of every table.
func (b BackupSummary) Rows() int64 {
	var n int64
	for _, t := range b.Tables {
		n += t.Rows
	}
	return n
}

// ErrBadBackup marks a file that is not a whole petstore backup this
// petstore can read; its message says what is wrong in one line.
var ErrBadBackup = errors.New("not a usable petstore backup")

func badBackup(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadBackup, fmt.Sprintf(format, args...))
}

// Backup writes a backup of the whole database to w, consistent as of one
// instant: one read transaction (SQLite, where WAL lets the writer go on)
// or one consistent-snapshot transaction (MySQL), on a connection of its
// own. Rows are read in keyset chunks and streamed, so memory stays flat
// whatever the size. petstoreVersion goes into the header.
func (s *Store) Backup(ctx context.Context, w io.Writer, petstoreVersion string) (BackupSummary, error) {
	snap, err := s.openSnapshot(ctx)
	if err != nil {
		return BackupSummary{}, err
	}
	defer snap.close()
	q := snap.q
	h := BackupHeader{Format: BackupFormat, Version: BackupFormatVersion, Engine: s.driver,
		CreatedAt: s.now().UTC(), Petstore: petstoreVersion}
	// The snapshot's first read fixes its instant (SQLite's BEGIN is
	// deferred), so the version is read from within it.
	var v sql.NullInt64
	if err := q.QueryRowContext(ctx, "SELECT MAX(version_id) FROM goose_db_version WHERE is_applied = 1").Scan(&v); err != nil || v.Int64 == 0 {
		if all, lerr := s.schemaTables(ctx, q); lerr == nil && !slices.Contains(all, "goose_db_version") {
			return BackupSummary{}, errors.New("backup: the database holds no petstore schema (is DATABASE_URL the service's database?)")
		}
		return BackupSummary{}, fmt.Errorf("backup: read the schema version: %w", err)
	}
	h.SchemaVersion = v.Int64
	tables, err := s.backupTables(ctx, q)
	if err != nil {
		return BackupSummary{}, err
	}
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return BackupSummary{}, err
	}
	sum := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(zw, sum), 256<<10)
	line, err := json.Marshal(h)
	if err != nil {
		return BackupSummary{}, err
	}
	bw.Write(append(line, '\n'))
	res := BackupSummary{Header: h}
	var trailer backupTrailer
	trailer.Trailer.Rows = map[string]int64{}
	for _, table := range tables {
		n, err := s.backupTable(ctx, q, table, h.CreatedAt, bw)
		if err != nil {
			return BackupSummary{}, err
		}
		res.Tables = append(res.Tables, BackupTable{Name: table, Rows: n})
		trailer.Trailer.Rows[table] = n
	}
	if err := bw.Flush(); err != nil {
		return BackupSummary{}, fmt.Errorf("backup: write: %w", err)
	}
	trailer.Trailer.SHA256 = hex.EncodeToString(sum.Sum(nil))
	line, err = json.Marshal(trailer)
	if err != nil {
		return BackupSummary{}, err
	}
	if _, err := zw.Write(append(line, '\n')); err != nil {
		return BackupSummary{}, fmt.Errorf("backup: write: %w", err)
	}
	if err := zw.Close(); err != nil {
		return BackupSummary{}, fmt.Errorf("backup: write: %w", err)
	}
	return res, nil
}

// snapshot is the read transaction of a backup and what closes it.
type snapshot struct {
	q     queryer
	close func()
}

// openSnapshot begins the backup's read transaction. MySQL's is on a
// connection without the pool's read timeout: a chunk of a big table may
// take longer than a request's query.
func (s *Store) openSnapshot(ctx context.Context) (*snapshot, error) {
	if s.driver != DriverMySQL {
		tx, err := s.readDB.BeginTx(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("backup: begin: %w", err)
		}
		return &snapshot{q: tx, close: func() { tx.Rollback() }}, nil
	}
	db, err := s.longDB()
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("backup: connect: %w", err)
	}
	fail := func(err error) (*snapshot, error) {
		conn.Close()
		db.Close()
		return nil, fmt.Errorf("backup: begin: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ"); err != nil {
		return fail(err)
	}
	// MySQL 8 caches information_schema's counters for a day unless told
	// not to; MariaDB reads them live and lacks the variable.
	conn.ExecContext(ctx, "SET SESSION information_schema_stats_expiry = 0")
	// database/sql's BeginTx cannot ask for a consistent snapshot, which
	// takes the snapshot at once rather than at the first read.
	if _, err := conn.ExecContext(ctx, "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"); err != nil {
		return fail(err)
	}
	return &snapshot{q: conn, close: func() {
		conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		conn.Close()
		db.Close()
	}}, nil
}

// longDB opens a one-connection MySQL pool without read or write timeouts,
// for the long statements of a backup or a restore.
func (s *Store) longDB() (*sql.DB, error) {
	connector, err := mysql.NewConnector(s.migrateCfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	return db, nil
}

// queryer is what reads a backup's tables: a transaction or a connection.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// backupTables lists the tables of the schema that a backup holds, by name.
func (s *Store) backupTables(ctx context.Context, q queryer) ([]string, error) {
	all, err := s.schemaTables(ctx, q)
	if err != nil {
		return nil, err
	}
	var tables []string
	for _, t := range all {
		if _, skip := BackupExcluded[t]; !skip {
			tables = append(tables, t)
		}
	}
	return tables, nil
}

// schemaTables lists every table of the database, sorted by name.
func (s *Store) schemaTables(ctx context.Context, q queryer) ([]string, error) {
	query := "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
	if s.driver == DriverMySQL {
		query = "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'"
	}
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	defer rows.Close()
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("list tables: %w", err)
		}
		if !identifier.MatchString(t) {
			return nil, fmt.Errorf("list tables: unexpected table name %q", t)
		}
		tables = append(tables, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	slices.Sort(tables)
	return tables, nil
}

// identifier is what a table or column name of petstore's schema looks
// like; names are checked against it before they are put into SQL.
var identifier = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// tableColumns returns table's columns in their order, with their kinds,
// and the names of its primary key's columns in the key's order.
func (s *Store) tableColumns(ctx context.Context, q queryer, table string) (cols []backupColumn, key []string, err error) {
	if s.driver == DriverMySQL {
		rows, err := q.QueryContext(ctx, `SELECT column_name, data_type FROM information_schema.columns
			WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position`, table)
		if err != nil {
			return nil, nil, fmt.Errorf("columns of %s: %w", table, err)
		}
		defer rows.Close()
		for rows.Next() {
			var name, typ string
			if err := rows.Scan(&name, &typ); err != nil {
				return nil, nil, fmt.Errorf("columns of %s: %w", table, err)
			}
			cols = append(cols, backupColumn{Name: strings.ToLower(name), Kind: mysqlKind(typ)})
		}
		if err := rows.Err(); err != nil {
			return nil, nil, fmt.Errorf("columns of %s: %w", table, err)
		}
		krows, err := q.QueryContext(ctx, `SELECT column_name FROM information_schema.statistics
			WHERE table_schema = DATABASE() AND table_name = ? AND index_name = 'PRIMARY' ORDER BY seq_in_index`, table)
		if err != nil {
			return nil, nil, fmt.Errorf("key of %s: %w", table, err)
		}
		defer krows.Close()
		for krows.Next() {
			var name string
			if err := krows.Scan(&name); err != nil {
				return nil, nil, fmt.Errorf("key of %s: %w", table, err)
			}
			key = append(key, strings.ToLower(name))
		}
		if err := krows.Err(); err != nil {
			return nil, nil, fmt.Errorf("key of %s: %w", table, err)
		}
	} else {
		rows, err := q.QueryContext(ctx, "SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid", table)
		if err != nil {
			return nil, nil, fmt.Errorf("columns of %s: %w", table, err)
		}
		defer rows.Close()
		type pkCol struct {
			name string
			pos  int
		}
		var pks []pkCol
		for rows.Next() {
			var name, typ string
			var pk int
			if err := rows.Scan(&name, &typ, &pk); err != nil {
				return nil, nil, fmt.Errorf("columns of %s: %w", table, err)
			}
			cols = append(cols, backupColumn{Name: strings.ToLower(name), Kind: sqliteKind(typ)})
			if pk > 0 {
				pks = append(pks, pkCol{strings.ToLower(name), pk})
			}
		}
		if err := rows.Err(); err != nil {
			return nil, nil, fmt.Errorf("columns of %s: %w", table, err)
		}
		slices.SortFunc(pks, func(a, b pkCol) int { return a.pos - b.pos })
		for _, p := range pks {
			key = append(key, p.name)
		}
	}
	for _, c := range cols {
		if !identifier.MatchString(c.Name) {
			return nil, nil, fmt.Errorf("columns of %s: unexpected column name %q", table, c.Name)
		}
	}
	if len(cols) == 0 {
		return nil, nil, fmt.Errorf("columns of %s: none found", table)
	}
	return cols, key, nil
}

// mysqlKind is the kind of a MySQL column of information_schema's
// data_type. TINYINT(1), MySQL's BOOLEAN, is an int on both engines.
func mysqlKind(dataType string) string {
	switch t := strings.ToLower(dataType); {
	case strings.HasSuffix(t, "int"):
		return kindInt
	case t == "datetime" || t == "timestamp" || t == "date":
		return kindTime
	case strings.HasSuffix(t, "blob") || strings.HasSuffix(t, "binary"):
		return kindBytes
	case t == "float" || t == "double" || t == "real":
		return kindFloat
	default:
		return kindText
	}
}

// sqliteKind is the kind of a SQLite column of declared type decl, by
// SQLite's own affinity rules, with the date types the driver parses as
// times.
func sqliteKind(decl string) string {
	switch t := strings.ToUpper(decl); {
	case strings.Contains(t, "INT") || strings.Contains(t, "BOOL"):
		return kindInt
	case strings.Contains(t, "DATE") || strings.Contains(t, "TIME"):
		return kindTime
	case strings.Contains(t, "CHAR") || strings.Contains(t, "CLOB") || strings.Contains(t, "TEXT"):
		return kindText
	case t == "" || strings.Contains(t, "BLOB"):
		return kindBytes
	case strings.Contains(t, "REAL") || strings.Contains(t, "FLOA") || strings.Contains(t, "DOUB"):
		return kindFloat
	default:
		return kindText
	}
}

// backupTable writes table's line and rows to w and returns the number of
// rows. It reads them in keyset chunks of its primary key; a table without
// one is read in one ordered statement.
func (s *Store) backupTable(ctx context.Context, q queryer, table string, now time.Time, w *bufio.Writer) (int64, error) {
	cols, key, err := s.tableColumns(ctx, q, table)
	if err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	next, err := s.nextID(ctx, q, table)
	if err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	line, err := json.Marshal(backupTable{Table: table, Columns: cols, NextID: next})
	if err != nil {
		return 0, err
	}
	w.Write(append(line, '\n'))
	names := make([]string, len(cols))
	keyAt := make([]int, len(key))
	for i, c := range cols {
		names[i] = s.quoteIdent(c.Name)
	}
	for i, k := range key {
		keyAt[i] = slices.IndexFunc(cols, func(c backupColumn) bool { return c.Name == k })
	}
	var where []string
	var fixed []any
	if f, ok := backupFilters[table]; ok {
		where, fixed = append(where, f), append(fixed, now)
	}
	order := ""
	if len(key) > 0 {
		qk := make([]string, len(key))
		for i, k := range key {
			qk[i] = s.quoteIdent(k)
		}
		order = " ORDER BY " + strings.Join(qk, ", ")
	}
	base := "SELECT " + strings.Join(names, ", ") + " FROM " + s.quoteIdent(table)
	var n int64
	var last []any
	buf := make([]byte, 0, 4096)
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for {
		conds, args := where, fixed
		if last != nil {
			c, a := keysetAfter(s, key, last)
			conds, args = append(slices.Clip(conds), c), append(slices.Clip(args), a...)
		}
		query := base
		if len(conds) > 0 {
			query += " WHERE " + strings.Join(conds, " AND ")
		}
		query += order
		if len(key) > 0 {
			query += " LIMIT " + strconv.Itoa(backupChunk)
		}
		rows, err := q.QueryContext(ctx, query, args...)
		if err != nil {
			return 0, fmt.Errorf("backup: read %s: %w", table, err)
		}
		got := 0
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return 0, fmt.Errorf("backup: read %s: %w", table, err)
			}
			buf, err = appendRow(buf[:0], cols, vals)
			if err != nil {
				rows.Close()
				return 0, fmt.Errorf("backup: %s: %w", table, err)
			}
			w.Write(buf)
			got++
			if len(key) > 0 {
				last = last[:0]
				for _, i := range keyAt {
					last = append(last, keyValue(vals[i]))
				}
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, fmt.Errorf("backup: read %s: %w", table, err)
		}
		n += int64(got)
		if len(key) == 0 || got < backupChunk {
			return n, nil
		}
	}
}

// nextID reads table's auto-increment counter: the id its next insert
// takes, or 0 when it has none. The counter is not part of the snapshot
// (neither engine rolls it back), so it is at or above every id the
// snapshot holds.
func (s *Store) nextID(ctx context.Context, q queryer, table string) (int64, error) {
	var next sql.NullInt64
	if s.driver == DriverMySQL {
		err := q.QueryRowContext(ctx, `SELECT auto_increment FROM information_schema.tables
			WHERE table_schema = DATABASE() AND table_name = ?`, table).Scan(&next)
		if err != nil {
			return 0, fmt.Errorf("the counter of %s: %w", table, err)
		}
		return next.Int64, nil
	}
	// sqlite_sequence exists once a table with AUTOINCREMENT does, and
	// holds a row for it after its first insert.
	err := q.QueryRowContext(ctx, "SELECT seq + 1 FROM sqlite_sequence WHERE name = ?", table).Scan(&next)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil
	case err != nil && strings.Contains(err.Error(), "no such table"):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("the counter of %s: %w", table, err)
	}
	return next.Int64, nil
}

// keyValue copies a scanned key value, whose bytes the next Scan reuses.
func keyValue(v any) any {
	if b, ok := v.([]byte); ok {
		return slices.Clone(b)
	}
	return v
}

// keysetAfter is the condition that a row's key is past last, in the form
// each engine seeks in its index: on SQLite a row value, (a, b) > (?, ?);
// on MySQL written out, a > ? OR (a = ? AND b > ?), which InnoDB reads as
// ranges (SQLite reads that form from the first a = ? on, stepping over
// every row of a common search word the chunks before took).
func keysetAfter(s *Store, key []string, last []any) (string, []any) {
	if s.driver == DriverSQLite {
		cols := make([]string, len(key))
		marks := make([]string, len(key))
		for i, k := range key {
			cols[i], marks[i] = s.quoteIdent(k), "?"
		}
		return "(" + strings.Join(cols, ", ") + ") > (" + strings.Join(marks, ", ") + ")", last
	}
	var ors []string
	var args []any
	for i := range key {
		var ands []string
		for j := 0; j < i; j++ {
			ands = append(ands, s.quoteIdent(key[j])+" = ?")
			args = append(args, last[j])
		}
		ands = append(ands, s.quoteIdent(key[i])+" > ?")
		args = append(args, last[i])
		ors = append(ors, "("+strings.Join(ands, " AND ")+")")
	}
	return "(" + strings.Join(ors, " OR ") + ")", args
}

// quoteIdent quotes a name already checked against identifier.
func (s *Store) quoteIdent(name string) string {
	if s.driver == DriverMySQL {
		return "`" + name + "`"
	}
	return `"` + name + `"`
}

// appendRow appends a row's line: the values as a JSON array.
func appendRow(buf []byte, cols []backupColumn, vals []any) ([]byte, error) {
	buf = append(buf, '[')
	for i, v := range vals {
		if i > 0 {
			buf = append(buf, ',')
		}
		var err error
		buf, err = appendValue(buf, cols[i], v)
		if err != nil {
			return nil, err
		}
	}
	return append(buf, ']', '\n'), nil
}

// appendValue appends one value of column c as its kind writes it.
func appendValue(buf []byte, c backupColumn, v any) ([]byte, error) {
	if v == nil {
		return append(buf, "null"...), nil
	}
	switch c.Kind {
	case kindInt:
		switch x := v.(type) {
		case int64:
			return strconv.AppendInt(buf, x, 10), nil
		case bool:
			if x {
				return append(buf, '1'), nil
			}
			return append(buf, '0'), nil
		case []byte:
			if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
				return append(buf, x...), nil
			}
		case string:
			if _, err := strconv.ParseInt(x, 10, 64); err == nil {
				return append(buf, x...), nil
			}
		case float64:
			return strconv.AppendInt(buf, int64(x), 10), nil
		}
	case kindFloat:
		switch x := v.(type) {
		case float64:
			return strconv.AppendFloat(buf, x, 'g', -1, 64), nil
		case int64:
			return strconv.AppendInt(buf, x, 10), nil
		case []byte:
			if _, err := strconv.ParseFloat(string(x), 64); err == nil {
				return append(buf, x...), nil
			}
		}
	case kindTime:
		var t time.Time
		switch x := v.(type) {
		case time.Time:
			t = x
		case string:
			t, _ = parseStoredTime(x)
		case []byte:
			t, _ = parseStoredTime(string(x))
		}
		if !t.IsZero() {
			buf = append(buf, '"')
			buf = t.UTC().AppendFormat(buf, time.RFC3339Nano)
			return append(buf, '"'), nil
		}
	case kindBytes:
		var b []byte
		switch x := v.(type) {
		case []byte:
			b = x
		case string:
			b = []byte(x)
		default:
			return nil, fmt.Errorf("column %s: a %T where bytes were expected", c.Name, v)
		}
		buf = append(buf, '"')
		buf = base64.StdEncoding.AppendEncode(buf, b)
		return append(buf, '"'), nil
	case kindText:
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case []byte:
			s = string(x)
		case int64:
			s = strconv.FormatInt(x, 10)
		case time.Time:
			s = x.UTC().Format(time.RFC3339Nano)
		default:
			return nil, fmt.Errorf("column %s: a %T where text was expected", c.Name, v)
		}
		if !utf8.ValidString(s) {
			buf = append(buf, `{"b":"`...)
			buf = base64.StdEncoding.AppendEncode(buf, []byte(s))
			return append(buf, `"}`...), nil
		}
		j, err := json.Marshal(s)
		if err != nil {
			return nil, err
		}
		return append(buf, j...), nil
	}
	return nil, fmt.Errorf("column %s: cannot write %T %v as %s", c.Name, v, v, c.Kind)
}

// storedTimeLayouts are the ways a time may sit in a SQLite text column
// that the driver did not parse: its own layout, and SQLite's
// CURRENT_TIMESTAMP.
var storedTimeLayouts = []string{"2006-01-02 15:04:05.999999999-07:00", time.RFC3339Nano, "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02"}

func parseStoredTime(s string) (time.Time, error) {
	for _, l := range storedTimeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not a time: %q", s)
}

// LatestSchemaVersion is the version of the newest migration of driver
// that this petstore carries: the schema version of a migrated database.
func LatestSchemaVersion(driver string) (int64, error) {
	entries, err := fs.ReadDir(migrations, "migrations/"+driver)
	if err != nil {
		return 0, err
	}
	var latest int64
	for _, e := range entries {
		digits, _, _ := strings.Cut(e.Name(), "_")
		if v, err := strconv.ParseInt(digits, 10, 64); err == nil && v > latest {
			latest = v
		}
	}
	return latest, nil
}
