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
		{pet: Pet{Name: "Rex", CategoryID: 1, Status: StatusAvailable}, actor: "a", detail: "d"},
		{pet: Pet{Name: "Tom", CategoryID: 2, Status: StatusSold}, actor: "a", detail: "d"},
	}
	q, _, _, stmts := createsSQL(batch)
	if !strings.HasSuffix(q, "; COMMIT") || strings.Contains(q, "idempotency") {
		t.Fatalf("a batch without keys: %s", q)
	}
	batch[1].once = &onceCreate{claim: &IdempotencyClaim{apiKeyID: 1, keyHash: "h", owner: "o"}}
	withKey, args, _, stmtsWithKey := createsSQL(batch)
	if strings.HasSuffix(withKey, "COMMIT") || strings.Count(withKey, "UPDATE idempotency_keys") != 1 || stmtsWithKey != stmts {
		t.Fatalf("a batch with a key (%d statements, %d without): %s", stmtsWithKey, stmts, withKey)
	}
	if n := strings.Count(withKey, "?"); n != len(args) {
		t.Fatalf("%d placeholders for %d arguments", n, len(args))
	}
}
