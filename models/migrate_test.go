package models_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

// openUnmigrated opens a store on the database at dsn without
// migrating it, and closes it when the test ends.
func openUnmigrated(tb testing.TB, driver, dsn string) *models.Store {
	tb.Helper()
	s, err := models.Open(context.Background(), models.Options{Driver: driver, DSN: dsn, ConnectTimeout: 20 * time.Second, MaxOpenConns: 10})
	if err != nil {
		tb.Fatalf("open %s: %v", driver, err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// storeAt opens a fresh database of driver migrated up to version, for
// tests of the migrations after it.
func storeAt(t *testing.T, driver string, version int64) *models.Store {
	t.Helper()
	s := openUnmigrated(t, driver, modelstest.Database(t, driver).DSN)
	if err := s.MigrateUpTo(context.Background(), version); err != nil {
		t.Fatal(err)
	}
	return s
}

// schemaTables are the tables the migrations create.
var schemaTables = []string{"pets", "users", "api_keys", "audit_events"}

func TestMigrateIdempotent(t *testing.T) {
	t.Parallel()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			ctx := context.Background()
			cfg := modelstest.Database(t, driver)
			s := openUnmigrated(t, driver, cfg.DSN)

			first, err := s.Migrate(ctx)
			if err != nil {
				t.Fatalf("first Migrate: %v", err)
			}
			if len(first.Applied) == 0 || !slices.IsSorted(first.Applied) || first.Version != first.Applied[len(first.Applied)-1] {
				t.Fatalf("first Migrate = %+v, want every version applied in order, ending at Version", first)
			}

			second, err := s.Migrate(ctx)
			if err != nil {
				t.Fatalf("second Migrate: %v", err)
			}
			if len(second.Applied) != 0 || second.Version != first.Version {
				t.Fatalf("second Migrate = %+v, want nothing applied and version %d", second, first.Version)
			}

			// A restarted instance finds nothing to do either.
			restarted := openUnmigrated(t, driver, cfg.DSN)
			third, err := restarted.Migrate(ctx)
			if err != nil || len(third.Applied) != 0 || third.Version != first.Version {
				t.Fatalf("Migrate after restart = %+v, %v; want nothing applied and version %d", third, err, first.Version)
			}
			if _, err := restarted.CreatePet(ctx, models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable}, "test"); err != nil {
				t.Fatalf("CreatePet after migrations: %v", err)
			}
		})
	}
}

func TestMigrateConcurrentMySQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := modelstest.Database(t, models.DriverMySQL)
	const n = 3
	stores := make([]*models.Store, n)
	for i := range stores {
		stores[i] = openUnmigrated(t, models.DriverMySQL, cfg.DSN)
	}
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		results [n]models.MigrationResult
		errs    [n]error
	)
	for i, s := range stores {
		wg.Go(func() {
			<-start
			results[i], errs[i] = s.Migrate(ctx)
		})
	}
	close(start)
	wg.Wait()

	var applied []int64
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("Migrate %d: %v", i, errs[i])
		}
		if results[i].Version != results[0].Version || results[i].Version == 0 {
			t.Errorf("Migrate %d reached version %d, Migrate 0 version %d", i, results[i].Version, results[0].Version)
		}
		applied = append(applied, results[i].Applied...)
	}
	slices.Sort(applied)
	if len(applied) == 0 || len(slices.Compact(slices.Clone(applied))) != len(applied) {
		t.Errorf("versions applied across instances = %v, want each exactly once", applied)
	}

	p, err := stores[0].CreatePet(ctx, models.NewPet{Name: "Rex 🐶", CategoryID: 1, Status: models.StatusPending}, "test")
	if err != nil {
		t.Fatalf("CreatePet: %v", err)
	}
	got, err := stores[n-1].GetPet(ctx, p.ID)
	if err != nil || got.Name != "Rex 🐶" {
		t.Fatalf("GetPet from another instance = %+v, %v", got, err)
	}
	if _, key, err := stores[1].CreateAPIKey(ctx, "k", "test"); err != nil {
		t.Fatalf("CreateAPIKey: %v", err)
	} else if _, err := stores[2].Authenticate(ctx, key); err != nil {
		t.Fatalf("Authenticate on another instance: %v", err)
	}
}

func TestMySQLSchemaCharset(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := modelstest.Open(t, models.DriverMySQL)
	db := s.SQLDB()

	rows, err := db.QueryContext(ctx, `SELECT TABLE_NAME, ENGINE, TABLE_COLLATION FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()`)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for rows.Next() {
		var name, engine, collation string
		if err := rows.Scan(&name, &engine, &collation); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(schemaTables, name) {
			seen[name] = true
			if engine != "InnoDB" || !strings.HasPrefix(collation, "utf8mb4_") {
				t.Errorf("table %s: engine %s collation %s, want InnoDB and utf8mb4", name, engine, collation)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	for _, name := range schemaTables {
		if !seen[name] {
			t.Errorf("table %s missing", name)
		}
	}

	rows, err = db.QueryContext(ctx, `SELECT TABLE_NAME, COLUMN_NAME, CHARACTER_SET_NAME FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = DATABASE() AND CHARACTER_SET_NAME IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	textColumns := 0
	for rows.Next() {
		var table, column, charset string
		if err := rows.Scan(&table, &column, &charset); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(schemaTables, table) {
			continue
		}
		textColumns++
		if charset != "utf8mb4" {
			t.Errorf("column %s.%s has character set %s, want utf8mb4", table, column, charset)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if textColumns == 0 {
		t.Error("no text columns found in information_schema")
	}

	// Connections talk utf8mb4 in UTC, whatever the server defaults are.
	var charset, collation, zone string
	if err := db.QueryRowContext(ctx, `SELECT @@character_set_connection, @@collation_connection, @@time_zone`).Scan(&charset, &collation, &zone); err != nil {
		t.Fatal(err)
	}
	if charset != "utf8mb4" || !strings.HasPrefix(collation, "utf8mb4_") || zone != "+00:00" {
		t.Errorf("connection charset %s collation %s time zone %s, want utf8mb4 in +00:00", charset, collation, zone)
	}
}

// index is one index of a table: its columns in order, and whether it is unique.
type index struct {
	columns string
	unique  bool
}

// tableIndexes lists a table's indexes by name, on either driver.
func tableIndexes(tb testing.TB, s *models.Store, table string) map[string]index {
	tb.Helper()
	q := `SELECT INDEX_NAME, COLUMN_NAME, NON_UNIQUE = 0 FROM information_schema.STATISTICS
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY INDEX_NAME, SEQ_IN_INDEX`
	if s.Driver() == models.DriverSQLite {
		q = `SELECT il.name, ii.name, il."unique" FROM pragma_index_list(?) AS il, pragma_index_info(il.name) AS ii
			ORDER BY il.name, ii.seqno`
	}
	rows, err := s.SQLDB().Query(q, table)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	out := map[string]index{}
	for rows.Next() {
		var name, column string
		var unique bool
		if err := rows.Scan(&name, &column, &unique); err != nil {
			tb.Fatal(err)
		}
		ix := out[name]
		if ix.columns != "" {
			ix.columns += ","
		}
		ix.columns += column
		ix.unique = unique
		out[name] = ix
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

func TestSchemaIndexes(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		// Status pages read (status, id); on SQLite the index also covers
		// the columns the API's page returns (migration 7).
		byStatus := "status,id"
		if s.Driver() == models.DriverSQLite {
			byStatus = "status,id,category_id,name"
		}
		tests := []struct {
			table, columns string
			unique         bool
		}{
			{"pets", byStatus, false},
			{"users", "username", true},
			{"api_keys", "prefix", true},
		}
		for _, tt := range tests {
			indexes := tableIndexes(t, s, tt.table)
			found := false
			for _, ix := range indexes {
				if ix.columns == tt.columns && ix.unique == tt.unique {
					found = true
				}
			}
			if !found {
				t.Errorf("%s has indexes %+v, want one on (%s) with unique=%v", tt.table, indexes, tt.columns, tt.unique)
			}
		}
	})
}

// The API's prepared statements are made on first use; when that fails
// (here: the tables are not there yet, as when the database is away) the
// next use tries again instead of failing until a restart.
func TestHotPathPreparesAgainAfterAFailure(t *testing.T) {
	t.Parallel()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			ctx := context.Background()
			s := openUnmigrated(t, driver, modelstest.Database(t, driver).DSN)
			if _, _, err := s.ListPetsAPI(ctx, models.PetQuery{Limit: 20}, nil); err == nil {
				t.Fatal("a page before the schema exists: no error")
			}
			if _, err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := s.CreatePet(ctx, models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable}, "test"); err != nil {
				t.Fatalf("create after migrating: %v", err)
			}
			page, _, err := s.ListPetsAPI(ctx, models.PetQuery{Limit: 20}, nil)
			if err != nil || len(page) != 1 {
				t.Fatalf("page after migrating: %v, %v", page, err)
			}
		})
	}
}
