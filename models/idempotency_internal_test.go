package models

import (
	"strings"
	"testing"
)

// A MySQL batch without idempotency keys is sent as one text ending in its
// events, and never names idempotency_keys. With keys, each claim's check
// takes the events' place, which commitOnceMySQL sends after it. No text
// holds the COMMIT: commitBatch sends it on its own, after the results.
func TestCreatesSQLWithoutKeys(t *testing.T) {
	t.Parallel()
	batch := []*createRequest{
		{change: PetChange{After: Pet{Name: "Rex", CategoryID: 1, Status: StatusAvailable}, Actor: "a"}},
		{change: PetChange{After: Pet{Name: "Tom", CategoryID: 2, Status: StatusSold}, Actor: "a"}},
	}
	c, err := createsSQL(batch, mysqlServer{})
	b := c.sql
	if err != nil || strings.Contains(b.text(), "COMMIT") || !strings.Contains(b.text(), "INTO events") || strings.Contains(b.text(), "idempotency") || len(c.claims) != 0 {
		t.Fatalf("a batch without keys: %s, %v", b.text(), err)
	}
	// START, pet, SET, pet, SET, words, audit events, counts, clock, events.
	if b.statements() != 10 || c.petStmt[0] != 1 || c.petStmt[1] != 3 || c.clock != 8 {
		t.Fatalf("%d statements, pets at %v, clock at %d: %s", b.statements(), c.petStmt, c.clock, b.text())
	}
	if n := strings.Count(b.text(), "?"); n != len(b.args) {
		t.Fatalf("%d placeholders for %d arguments", n, len(b.args))
	}
	// Where ids are consecutive, the pets are one INSERT and pet i's id is
	// its first id plus i.
	one, err := createsSQL(batch, mysqlServer{consecutiveIDs: true})
	ob := one.sql
	// START, pets, SET, words, audit events, counts, clock, events.
	if err != nil || ob.statements() != 8 || one.petStmt[0] != 1 || one.petStmt[1] != 1 || one.petStep[1] != 1 || one.clock != 6 ||
		strings.Count(ob.text(), "INSERT INTO pets") != 1 || !strings.Contains(ob.text(), "(@petstore_pet + 1)") {
		t.Fatalf("a batch of one INSERT (%d statements, pets at %v, clock at %d): %s, %v", ob.statements(), one.petStmt, one.clock, ob.text(), err)
	}
	if n := strings.Count(ob.text(), "?"); n != len(ob.args) {
		t.Fatalf("%d placeholders for %d arguments", n, len(ob.args))
	}
	batch[1].once = &onceCreate{claim: &IdempotencyClaim{apiKeyID: 1, keyHash: "h", owner: "o"}}
	withKey, err := createsSQL(batch, mysqlServer{})
	kb := withKey.sql
	if err != nil || strings.Contains(kb.text(), "COMMIT") || strings.Count(kb.text(), "UPDATE idempotency_keys") != 1 ||
		strings.Contains(kb.text(), "INTO events") || kb.statements() != b.statements()-1 || len(withKey.claims) != 1 || withKey.claims[0] != kb.statements()-1 {
		t.Fatalf("a batch with a key (%d statements, %d without, claims %v): %s", kb.statements(), b.statements(), withKey.claims, kb.text())
	}
	if n := strings.Count(kb.text(), "?"); n != len(kb.args) {
		t.Fatalf("%d placeholders for %d arguments", n, len(kb.args))
	}
}
