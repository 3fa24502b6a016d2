package models

import "context"

// CreatePetsTogether writes the creates as one batch of the group commit
// (one transaction, unless one of them fails), creates[i] with claims[i]
// when it is not nil, and returns each one's pet and error: tests of the
// batch path cannot rely on concurrent creates landing in one batch.
func (s *Store) CreatePetsTogether(ctx context.Context, creates []NewPet, claims []*IdempotencyClaim, respond func(Pet) StoredResponse) ([]Pet, []error) {
	h, err := s.petStatements(ctx)
	if err != nil {
		panic(err)
	}
	batch := make([]*createRequest, len(creates))
	now := s.now()
	for i, np := range creates {
		batch[i] = &createRequest{change: newPetChange(ChangeCreate, np, now, "together")}
		if claims[i] != nil {
			batch[i].once = &onceCreate{claim: claims[i], respond: respond}
		}
	}
	errs := s.writeCreates(h, batch)
	pets := make([]Pet, len(batch))
	for i, r := range batch {
		if errs[i] == nil {
			pets[i] = r.change.After
		}
	}
	return pets, errs
}

// WaitIdempotencyWork waits for the background work of idempotency keys
// started so far (purges, releases retried).
func (s *Store) WaitIdempotencyWork() { s.idem.bg.Wait() }
