package models_test

import (
	"context"
	"fmt"
	"testing"

	"petstore/models"
	"petstore/models/modelstest"
)

// benchRows is the catalogue size the paging benchmarks run on: the
// console and the API must stay fast on a million pets.
const benchRows = 1_000_000

// seedPets fills a fresh store with benchRows pets, 100,000 per statement
// (each well within the store's 10 s statement timeout on MySQL).
func seedPets(b *testing.B, driver string) *models.Store {
	b.Helper()
	s := modelstest.Open(b, driver)
	const batch = 100_000
	insert := `INSERT INTO pets (name, category_id, status, created_at, updated_at)
		WITH RECURSIVE seq(n) AS (SELECT %[1]d UNION ALL SELECT n + 1 FROM seq WHERE n < %[2]d)
		SELECT CONCAT('pet ', n), 1 + n %% 50, CASE n %% 3 WHEN 0 THEN 'available' WHEN 1 THEN 'pending' ELSE 'sold' END,
		       '2026-01-01 00:00:00', '2026-01-01 00:00:00'
		FROM seq`
	if driver == models.DriverSQLite {
		insert = `WITH RECURSIVE seq(n) AS (SELECT %[1]d UNION ALL SELECT n + 1 FROM seq WHERE n < %[2]d)
		INSERT INTO pets (name, category_id, status, created_at, updated_at)
		SELECT 'pet ' || n, 1 + n %% 50, CASE n %% 3 WHEN 0 THEN 'available' WHEN 1 THEN 'pending' ELSE 'sold' END,
		       '2026-01-01 00:00:00', '2026-01-01 00:00:00'
		FROM seq`
	}
	ctx := context.Background()
	conn, err := s.SQLDB().Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	if driver == models.DriverMySQL {
		// The recursive sequence needs more than MariaDB's default 1000 steps.
		if _, err := conn.ExecContext(ctx, "SET SESSION max_recursive_iterations = 2000000"); err != nil {
			b.Fatal(err)
		}
	}
	for from := 1; from <= benchRows; from += batch {
		if _, err := conn.ExecContext(ctx, fmt.Sprintf(insert, from, from+batch-1)); err != nil {
			b.Fatalf("seed rows from %d: %v", from, err)
		}
	}
	return s
}

// BenchmarkListPets pages through a million pets: the first page, a page
// deep in the table, a status-filtered page, and the console's newest-first
// page. Keyset paging keeps each one an index range read.
//
//	make bench   (writes testdata/bench.txt)
func BenchmarkListPets(b *testing.B) {
	for _, driver := range modelstest.Drivers {
		b.Run(driver, func(b *testing.B) {
			s := seedPets(b, driver)
			ctx := context.Background()
			cases := []struct {
				name string
				q    models.PetQuery
			}{
				{"first-page", models.PetQuery{Limit: 20}},
				{"deep-page", models.PetQuery{Limit: 100, After: 900_000}},
				{"status-deep", models.PetQuery{Limit: 20, Status: models.StatusSold, After: 800_000}},
				{"newest-first", models.PetQuery{Limit: 20, Before: 1 << 62}},
				{"status-newest-first", models.PetQuery{Limit: 20, Status: models.StatusPending, Before: 1 << 62}},
			}
			for _, c := range cases {
				b.Run(c.name, func(b *testing.B) {
					for b.Loop() {
						pets, _, err := s.ListPets(ctx, c.q)
						if err != nil || len(pets) == 0 {
							b.Fatalf("%d pets, %v", len(pets), err)
						}
					}
				})
			}
		})
	}
}
