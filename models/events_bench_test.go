package models_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

// BenchmarkReadEvents reads pages of 100 events from a feed of a thousand
// events and then of a million (a seed writes one per pet): the first
// page, one in the middle and the last. Each page is one range read of
// the primary key, so its cost must not grow with the feed. It reports
// the 99th percentile of a page's time besides the mean.
//
//	make bench   (writes testdata/bench.txt)
func BenchmarkReadEvents(b *testing.B) {
	for _, driver := range modelstest.Drivers {
		b.Run(driver, func(b *testing.B) {
			s := modelstest.Open(b, driver)
			ctx := context.Background()
			have := 0
			for _, size := range []int{1_000, benchRows} {
				start := time.Now()
				if _, err := s.SeedPets(ctx, size-have, "bench", nil); err != nil {
					b.Fatal(err)
				}
				b.Logf("%s: seeded to %d pets and events in %.1f s", driver, size, time.Since(start).Seconds())
				have = size
				for _, c := range []struct {
					name  string
					after int64
				}{
					{"first", models.FeedStart},
					{"middle", int64(size / 2)},
					{"last", int64(size - 100)},
				} {
					b.Run(c.name+"-of-"+shortCount(size), func(b *testing.B) {
						var took []time.Duration
						for b.Loop() {
							t0 := time.Now()
							page, err := s.ReadEvents(ctx, c.after, 100)
							took = append(took, time.Since(t0))
							if err != nil || len(page.Events) != 100 {
								b.Fatalf("page after %d: %d events, %v", c.after, len(page.Events), err)
							}
						}
						slices.Sort(took)
						b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
					})
				}
			}
		})
	}
}

func shortCount(n int) string {
	if n >= 1_000_000 {
		return "1M"
	}
	return "1k"
}
