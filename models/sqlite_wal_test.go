package models_test

import (
	"context"
	"sync"
	"testing"

	"petstore/models"
	"petstore/models/modelstest"
)

// Creates leave the copying of SQLite's log to the Store's checkpoints
// beside the writer.
func TestSQLiteLogCheckpointedBesideTheWriter(t *testing.T) {
	t.Parallel()
	s := modelstest.Open(t, models.DriverSQLite)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 250 {
				if _, err := s.CreatePet(ctx, models.NewPet{Name: "Log pet", CategoryID: int64(1 + (w+i)%9), Status: models.StatusAvailable}, "test"); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := s.WALPagesCopied(); n == 0 {
		t.Fatal("2,000 creates and no page of the log copied by the Store's checkpoints")
	}
}
