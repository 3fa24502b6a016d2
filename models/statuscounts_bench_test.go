package models_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

// BenchmarkPetStatusCounts reads how many of a million pets each status
// has: the sums of the deltas as a seed leaves them (a row per status per
// seed transaction), with 10,000 rows more (what an instance may write
// before it compacts), compacted (a row per status), and, for comparison,
// counting the pets on the (status, id) index.
//
//	go test -run '^$' -bench PetStatusCounts -benchtime 200x -v ./models   (figures: testdata/statuscounts-bench.txt)
func BenchmarkPetStatusCounts(b *testing.B) {
	for _, driver := range modelstest.Drivers {
		b.Run(driver, func(b *testing.B) {
			ctx := context.Background()
			s := modelstest.Open(b, driver)
			start := time.Now()
			if err := s.SeedPetsUncompacted(ctx, benchRows); err != nil {
				b.Fatal(err)
			}
			b.Logf("%s: seeded %d pets in %.1f s", driver, benchRows, time.Since(start).Seconds())
			resume := s.PauseCountsCompaction() // each read the same rows
			defer resume()
			read := func(b *testing.B) {
				for b.Loop() {
					counts, err := s.PetStatusCounts(ctx)
					if err != nil || counts.Total() != benchRows {
						b.Fatalf("%v, %v", counts, err)
					}
				}
				b.ReportMetric(float64(deltaRows(b, s)), "rows")
			}
			b.Run("seeded", read)
			insertDeltas(b, s, models.StatusAvailable, 5_000)
			b.Run("seeded+10000", read)
			start = time.Now()
			if _, err := s.CompactPetStatusCounts(ctx); err != nil {
				b.Fatal(err)
			}
			b.Logf("%s: compacted in %.1f ms", driver, float64(time.Since(start).Microseconds())/1000)
			b.Run("compacted", read)
			b.Logf("%s: %s", driver, strings.Join(explain(b, s, "SELECT status, COUNT(*) FROM pets GROUP BY status", nil), "; "))
			b.Run("count-index", func(b *testing.B) {
				for b.Loop() {
					if counts := countedPets(b, s); counts.Total() != benchRows {
						b.Fatalf("%v", counts)
					}
				}
			})
		})
	}
}
