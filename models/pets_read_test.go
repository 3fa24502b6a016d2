package models_test

import (
	"context"
	"testing"

	"petstore/models"
	"petstore/models/modelstest"
)

// The hot reads run their query without the request's cancellation (a
// watcher goroutine per query cost more than the query), yet a request
// whose client is already gone starts no query: it gets the unavailable
// error, as a canceled query would have.
func TestHotReadsOfAGoneClient(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		p, err := s.CreatePet(ctx, models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable}, "tester")
		if err != nil {
			t.Fatal(err)
		}
		q := models.PetQuery{Limit: 20}
		if pets, _, err := s.ListPetsAPI(ctx, q, nil); err != nil || len(pets) != 1 {
			t.Fatalf("ListPetsAPI = %d pets, %v; want the one pet", len(pets), err)
		}
		gone, cancel := context.WithCancel(ctx)
		cancel()
		if pets, _, err := s.ListPetsAPI(gone, q, nil); models.ErrorCode(err) != models.CodeCanceled || len(pets) != 0 {
			t.Errorf("ListPetsAPI of a gone client = %d pets, %v; want canceled", len(pets), err)
		}
		if _, err := s.GetPet(gone, p.ID); models.ErrorCode(err) != models.CodeCanceled {
			t.Errorf("GetPet of a gone client: %v; want canceled", err)
		}
		if got, err := s.GetPet(ctx, p.ID); err != nil || got.ID != p.ID {
			t.Errorf("GetPet after = %+v, %v", got, err)
		}
	})
}
