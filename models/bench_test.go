package models_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"gorm.io/gorm"

	"petstore/models"
	"petstore/models/modelstest"
)

// benchRows is the catalogue size the paging benchmarks run on: the
// console and the API must stay fast on a million pets.
const benchRows = 1_000_000

// seedPets fills a fresh store with benchRows pets through SeedPets (what
// petstore seed runs), search index included, and reports how long that
// took.
func seedPets(b *testing.B, driver string) *models.Store {
	b.Helper()
	s := modelstest.Open(b, driver)
	start := time.Now()
	if _, err := s.SeedPets(context.Background(), benchRows, "bench", nil); err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: seeded %d pets in %.1f s", driver, benchRows, time.Since(start).Seconds())
	return s
}

// BenchmarkListPets pages through a million pets: the API's pages (first,
// deep, status-filtered) and the console's, newest first: its first page,
// a status-filtered page, a deep page, and name searches, the one that
// matches nothing first. Keyset paging keeps each one an index range read;
// a name search reads the search index (search.go).
//
//	make bench   (writes testdata/bench.txt)
func BenchmarkListPets(b *testing.B) {
	for _, driver := range modelstest.Drivers {
		b.Run(driver, func(b *testing.B) {
			s := seedPets(b, driver)
			ctx := context.Background()
			top := int64(math.MaxInt64)
			cases := []struct {
				name  string
				q     models.PetQuery
				empty bool // the page is expected empty
			}{
				{"first-page", models.PetQuery{Limit: 20}, false},
				{"deep-page", models.PetQuery{Limit: 100, After: 900_000}, false},
				{"status-deep", models.PetQuery{Limit: 20, Status: models.StatusSold, After: 800_000}, false},
				{"newest-first", models.PetQuery{Limit: 20, Before: 1 << 62}, false},
				{"status-newest-first", models.PetQuery{Limit: 20, Status: models.StatusPending, Before: 1 << 62}, false},
				// The console's four: its first page, a status, a deep page, a search that matches nothing.
				{"console-first-page", models.PetQuery{Limit: 20, Before: top}, false},
				{"console-status-page", models.PetQuery{Limit: 20, Status: models.StatusSold, Before: top}, false},
				{"console-deep-page", models.PetQuery{Limit: 20, Before: 100_000}, false},
				{"console-search-no-match", models.PetQuery{Limit: 20, Before: top, NameContains: "zzz"}, true},
				// More searches: a common word, with a status, deep; short prefixes; accents and emoji;
				// two common words never together (stops on its budget).
				{"console-search-luna", models.PetQuery{Limit: 20, Before: top, NameContains: "luna"}, false},
				{"console-search-luna-sold", models.PetQuery{Limit: 20, Before: top, NameContains: "Luna", Status: models.StatusSold}, false},
				{"console-search-luna-deep", models.PetQuery{Limit: 20, Before: 100_000, NameContains: "luna"}, false},
				{"console-search-m", models.PetQuery{Limit: 20, Before: top, NameContains: "m"}, false},
				{"console-search-12", models.PetQuery{Limit: 20, Before: top, NameContains: "12"}, false},
				{"console-search-pepe", models.PetQuery{Limit: 20, Before: top, NameContains: "PEPE"}, false},
				{"console-search-emoji", models.PetQuery{Limit: 20, Before: top, NameContains: "🐾"}, false},
				{"console-search-luna-12", models.PetQuery{Limit: 20, Before: top, NameContains: "luna 12"}, false},
				{"console-search-1-dense", models.PetQuery{Limit: 20, Before: top, NameContains: "1"}, true},
				{"console-search-luna-rex-budget", models.PetQuery{Limit: 20, Before: top, NameContains: "luna rex"}, true},
				{"console-probe-newer", models.PetQuery{Limit: 1, After: 999_000, NameContains: "luna"}, false},
			}
			for _, c := range cases {
				b.Run(c.name, func(b *testing.B) {
					for b.Loop() {
						page, err := s.ListPetsPage(ctx, c.q)
						if err != nil || (len(page.Pets) == 0) != c.empty {
							b.Fatalf("%d pets, %v", len(page.Pets), err)
						}
					}
				})
			}
		})
	}
}

// BenchmarkCreatePet measures what the API's create costs the database:
// a pet, its name's words in the search index, and the audit row, in one
// transaction; and, for comparison, the same transaction without the
// index's rows (what CreatePet wrote before the search index).
//
//	go test -run '^$' -bench CreatePet -benchtime 1000x -count 6 ./models
func BenchmarkCreatePet(b *testing.B) {
	for _, driver := range modelstest.Drivers {
		b.Run(driver, func(b *testing.B) {
			s := modelstest.Open(b, driver)
			ctx := context.Background()
			i := 0
			b.Run("with-index", func(b *testing.B) {
				for b.Loop() {
					np := models.NewPet{Name: fmt.Sprintf("Mochi 🐾 %d", i), CategoryID: 1, Status: models.StatusAvailable}
					if _, err := s.CreatePet(ctx, np, "bench"); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
			b.Run("without-index", func(b *testing.B) {
				for b.Loop() {
					now := time.Now().UTC()
					p := models.Pet{Name: fmt.Sprintf("Mochi 🐾 %d", i), CategoryID: 1, Status: models.StatusAvailable, CreatedAt: now, UpdatedAt: now}
					err := s.Transaction(ctx, func(tx *gorm.DB) error {
						if err := tx.Create(&p).Error; err != nil {
							return err
						}
						return tx.Create(&models.AuditEvent{At: now, Actor: "bench", Action: models.ActionPetCreated, TargetType: models.TargetPet,
							TargetID: p.ID, Detail: fmt.Sprintf("name=%q categoryId=%d status=%s", p.Name, p.CategoryID, p.Status)}).Error
					})
					if err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		})
	}
}
