package models

import (
	"context"
	"io"
	"time"
)

// BackupRows are a backup's tables, each a list of rows, each row its
// values by column name.
type BackupRows map[string][]map[string]any

// BackupContents reads a whole backup as Restore would, and returns its
// rows with each value normalized for comparison across engines: times in
// UTC at MySQL's microsecond precision, bytes as strings.
func BackupContents(r io.Reader) (BackupSummary, BackupRows, error) {
	out := BackupRows{}
	var table string
	var cols []backupColumn
	sum, err := readBackup(r, backupVisitor{
		table: func(t backupTable) error {
			table, cols = t.Table, t.Columns
			out[table] = []map[string]any{}
			return nil
		},
		row: func(vals []any) error {
			row := map[string]any{}
			for i, v := range vals {
				switch x := v.(type) {
				case time.Time:
					v = x.UTC().Truncate(time.Microsecond)
				case []byte:
					v = string(x)
				}
				row[cols[i].Name] = v
			}
			out[table] = append(out[table], row)
			return nil
		},
	})
	return sum, out, err
}

// SchemaTables lists every table of the store's database.
func (s *Store) SchemaTables(ctx context.Context) ([]string, error) {
	return s.schemaTables(ctx, s.sqlDB)
}
