package models

import (
	"strings"
	"testing"
)

// A MySQL batch without idempotency keys is sent as it was before keys
// existed: its text ends in COMMIT and never names idempotency_keys. With
// keys, each claim's check takes COMMIT's place, which commitOnceMySQL
// sends after it.
func TestCreatesSQLWithoutKeys(t *testing.T) {
	t.Parallel()
	batch := []*createRequest{
		{change: PetChange{After: Pet{Name: "Rex", CategoryID: 1, Status: StatusAvailable}, Actor: "a"}},
		{change: PetChange{After: Pet{Name: "Tom", CategoryID: 2, Status: StatusSold}, Actor: "a"}},
	}
	b, petStmt, claims, err := createsSQL(batch)
	if err != nil || !strings.HasSuffix(b.text(), "; COMMIT") || strings.Contains(b.text(), "idempotency") || len(claims) != 0 {
		t.Fatalf("a batch without keys: %s, %v", b.text(), err)
	}
	// START, pet, SET, pet, words, audit events, counts, COMMIT.
	if b.statements() != 8 || petStmt[0] != 1 || petStmt[1] != 3 {
		t.Fatalf("%d statements, pets at %v: %s", b.statements(), petStmt, b.text())
	}
	batch[1].once = &onceCreate{claim: &IdempotencyClaim{apiKeyID: 1, keyHash: "h", owner: "o"}}
	withKey, _, claims, err := createsSQL(batch)
	if err != nil || strings.HasSuffix(withKey.text(), "COMMIT") || strings.Count(withKey.text(), "UPDATE idempotency_keys") != 1 ||
		withKey.statements() != b.statements() || len(claims) != 1 || claims[0] != b.statements()-1 {
		t.Fatalf("a batch with a key (%d statements, %d without, claims %v): %s", withKey.statements(), b.statements(), claims, withKey.text())
	}
	if n := strings.Count(withKey.text(), "?"); n != len(withKey.args) {
		t.Fatalf("%d placeholders for %d arguments", n, len(withKey.args))
	}
}
