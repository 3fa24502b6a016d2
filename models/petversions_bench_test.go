package models_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"petstore/models/modelstest"
)

// TestMigration11Timing measures migration 11 (pets.version) on a table of
// MIGRATION_BENCH_ROWS pets (default a million) on each engine, and appends
// the figures to MIGRATION_BENCH_OUT when set. Its point is that the ALTER
// takes as long on a million pets as on none; the time is measured, never
// asserted. It seeds a million pets per engine, so it runs only with
// PETSTORE_MIGRATION_BENCH=1.
func TestMigration11Timing(t *testing.T) {
	if os.Getenv("PETSTORE_MIGRATION_BENCH") != "1" {
		t.Skip("set PETSTORE_MIGRATION_BENCH=1 to seed a million pets and time migration 11")
	}
	rows := 1_000_000
	if s := os.Getenv("MIGRATION_BENCH_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		rows = n
	}
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			ctx := context.Background()
			s := openUnmigrated(t, driver, modelstest.Database(t, driver).DSN)
			if err := s.MigrateUpTo(ctx, 10); err != nil {
				t.Fatal(err)
			}
			seedStart := time.Now()
			if _, err := s.SeedPets(ctx, rows, "bench", nil); err != nil {
				t.Fatal(err)
			}
			seeded := time.Since(seedStart)
			start := time.Now()
			if err := s.MigrateUpTo(ctx, 11); err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			var n int
			if err := s.SQLDB().QueryRow("SELECT COUNT(*) FROM pets WHERE version = 1").Scan(&n); err != nil || n != rows {
				t.Fatalf("%d pets at version 1 (%v), want %d", n, err, rows)
			}
			res, err := s.Migrate(ctx)
			if err != nil || slices.Contains(res.Applied, 11) {
				t.Fatalf("Migrate after 11: %+v, %v", res, err)
			}
			line := fmt.Sprintf("%s migration 11 on %d pets: %s (seeding them took %s)\n", driver, rows,
				took.Round(time.Microsecond), seeded.Round(time.Millisecond))
			t.Log(line)
			if out := os.Getenv("MIGRATION_BENCH_OUT"); out != "" {
				f, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if _, err := f.WriteString(time.Now().UTC().Format(time.RFC3339) + " " + line); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
