package models_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"petstore/models"
	"petstore/models/modelstest"
)

// TestTransactionRetriesDeadlock makes two transactions lock two pets in
// opposite orders, a deadlock MariaDB breaks by aborting one of them
// (error 1213). The Store runs the aborted one again, so both succeed and
// both updates are kept. On SQLite the second writer waits for the first.
func TestTransactionRetriesDeadlock(t *testing.T) {
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		a := createPet(t, s, "Deadlock A")
		b := createPet(t, s, "Deadlock B")
		var attempts atomic.Int32
		firstLocked := make(chan struct{}, 2)
		var once [2]sync.Once
		run := func(i int, first, second int64) error {
			return s.Transaction(ctx, func(tx *gorm.DB) error {
				attempts.Add(1)
				if err := tx.Exec("UPDATE pets SET category_id = category_id + 1 WHERE id = ?", first).Error; err != nil {
					return err
				}
				once[i].Do(func() {
					// Hold the first lock until the other transaction has
					// its own (bounded: SQLite serialises the two instead).
					firstLocked <- struct{}{}
					deadline := time.After(2 * time.Second)
					for len(firstLocked) < 2 {
						select {
						case <-deadline:
							return
						case <-time.After(5 * time.Millisecond):
						}
					}
				})
				return tx.Exec("UPDATE pets SET category_id = category_id + 10 WHERE id = ?", second).Error
			})
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Add(2)
		go func() { defer wg.Done(); errs[0] = run(0, a.ID, b.ID) }()
		go func() { defer wg.Done(); errs[1] = run(1, b.ID, a.ID) }()
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("transaction %d: %v (a deadlock must be retried, not returned)", i, err)
			}
		}
		for _, id := range []int64{a.ID, b.ID} {
			p, err := s.GetPet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if p.CategoryID != 1+1+10 {
				t.Errorf("pet %d category %d, want 12: both transactions' updates, once each", id, p.CategoryID)
			}
		}
		if s.Driver() == models.DriverMySQL && attempts.Load() < 3 {
			t.Errorf("%d attempts: MariaDB should have aborted one transaction for a deadlock", attempts.Load())
		}
	})
}

func createPet(t *testing.T, s *models.Store, name string) models.Pet {
	t.Helper()
	p, err := s.CreatePet(context.Background(), models.NewPet{Name: name, CategoryID: 1, Status: models.StatusAvailable}, "test")
	if err != nil {
		t.Fatal(err)
	}
	return p
}
