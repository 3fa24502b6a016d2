package models_test

import (
	"context"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

// listBenchRows is the catalogue size of BenchmarkListPetListing:
// benchRows, or PETSTORE_BENCH_PETS for a quicker look.
func listBenchRows(b *testing.B) int {
	if s := os.Getenv("PETSTORE_BENCH_PETS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1000 {
			b.Fatalf("PETSTORE_BENCH_PETS=%q: want a whole number from 1000", s)
		}
		return n
	}
	return benchRows
}

// BenchmarkListPetListing reads the console's list in each order, with
// no filter, a status, a category, and a range of days: its first page,
// a page from the middle (the next page beyond a pet of the filter
// halfway in), and its last page,
// 100 pets each. The seed's batches are created an hour apart, so
// creation times tie within a batch and spread over weeks.
//
//	make bench   (writes testdata/bench.txt)
//	PETSTORE_BENCH_PETS=100000 go test -run '^$' -bench ListPetListing -benchtime 100x ./models
func BenchmarkListPetListing(b *testing.B) {
	n := listBenchRows(b)
	for _, driver := range modelstest.Drivers {
		b.Run(driver, func(b *testing.B) {
			s := modelstest.Open(b, driver)
			ctx := context.Background()
			base := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
			var hours atomic.Int64
			s.SetClock(func() time.Time { return base.Add(time.Duration(hours.Add(1)) * time.Hour) })
			start := time.Now()
			if _, err := s.SeedPets(ctx, n, "bench", nil); err != nil {
				b.Fatal(err)
			}
			s.SetClock(time.Now)
			b.Logf("%s: seeded %d pets in %.1f s", driver, n, time.Since(start).Seconds())
			middle, err := s.GetPet(ctx, int64(n/2))
			if err != nil {
				b.Fatal(err)
			}
			from := middle.CreatedAt.AddDate(0, 0, -3).Format("2006-01-02")
			to := middle.CreatedAt.AddDate(0, 0, 3).Format("2006-01-02")
			filters := []struct {
				name string
				l    models.PetListing
			}{
				{"all", models.PetListing{}},
				{"status", models.PetListing{Status: models.StatusPending}},
				{"category", models.PetListing{Category: 42}},
				{"status-category", models.PetListing{Status: models.StatusAvailable, Category: 42}},
				{"days", models.PetListing{From: from, To: to}},
			}
			for _, o := range models.PetSorts {
				for _, f := range filters {
					l := f.l
					l.Sort = o
					if l.Order() != o {
						continue // a range of days keeps the created order
					}
					// Beyond a pet of the filter halfway in (the seed's
					// pets take their status and category in turn).
					mid := middle
					for id := middle.ID; mid.Status != l.Status && l.Status != "" || mid.CategoryID != l.Category && l.Category != 0; id++ {
						if mid, err = s.GetPet(ctx, id); err != nil {
							b.Fatal(err)
						}
					}
					deep := l
					deep.Before, deep.Key = mid.ID, models.PetSortKey(o, mid)
					if !o.Descending() {
						deep.Before, deep.After = 0, mid.ID
					}
					last := l
					last.Last = true
					for _, c := range []struct {
						name string
						l    models.PetListing
					}{{"first", l}, {"deep", deep}, {"last", last}} {
						b.Run(string(o)+"/"+f.name+"/"+c.name, func(b *testing.B) {
							for b.Loop() {
								page, err := s.ListPetListing(ctx, c.l, 100)
								if err != nil || len(page.Pets) == 0 {
									b.Fatalf("%d pets, %v", len(page.Pets), err)
								}
							}
						})
					}
				}
			}
		})
	}
}
