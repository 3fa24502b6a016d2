package testkit

import (
	"context"
	"petstore/config"
	"petstore/models"
	"petstore/models/modelstest"
	"testing"
	"time"
)

// ForEachDriver runs fn as a parallel subtest per database driver.
func ForEachDriver(t *testing.T, fn func(t *testing.T, driver string)) {
	t.Helper()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			fn(t, driver)
		})
	}
}

// ForEachDatabase runs fn as a parallel subtest per database driver, each
// with the DATABASE_URL of a fresh, empty database.
func ForEachDatabase(t *testing.T, fn func(t *testing.T, databaseURL string)) {
	t.Helper()
	ForEachDriver(t, func(t *testing.T, driver string) { fn(t, modelstest.URL(t, driver)) })
}

// OpenStore opens the database behind databaseURL directly, to check what a
// command or a server did.
func OpenStore(tb testing.TB, databaseURL string) *models.Store {
	tb.Helper()
	db, err := config.ParseDatabaseURL(databaseURL)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := models.Open(context.Background(), models.Options{Driver: string(db.Driver), DSN: db.DSN, ConnectTimeout: 20 * time.Second})
	if err != nil {
		tb.Fatalf("open %s: %v", db.Redacted, err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// StoredPets returns every stored pet, read through the store (page after
// page of ListPets), not through the API.
func StoredPets(tb testing.TB, s *models.Store) []models.Pet {
	tb.Helper()
	var all []models.Pet
	q := models.PetQuery{Limit: models.MaxPageLimit}
	for {
		page, more, err := s.ListPets(context.Background(), q)
		if err != nil {
			tb.Fatalf("list the stored pets: %v", err)
		}
		all = append(all, page...)
		if !more {
			return all
		}
		q.After = page[len(page)-1].ID
	}
}
