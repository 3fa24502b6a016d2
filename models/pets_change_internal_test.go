package models

import (
	"slices"
	"testing"
	"time"
)

// impliedRows.add is the one place that knows what a pet's change implies:
// each kind of change, its words, counts and audit event.
func TestImpliedRows(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	rex := Pet{ID: 7, Name: "Rex the dog", CategoryID: 1, Status: StatusAvailable, CreatedAt: now, UpdatedAt: now, Version: 1}
	renamed := rex
	renamed.Name, renamed.Status = "Rex the cat", StatusSold
	sold := rex
	sold.Status = StatusSold
	keys := func(ws []wordRow) []string {
		var out []string
		for _, w := range ws {
			out = append(out, w.key)
		}
		slices.Sort(out)
		return out
	}
	tests := []struct {
		name           string
		change         PetChange
		unwords, words []string
		counts         statusDeltas
		action, detail string
		noAudit        bool
	}{
		{"create", PetChange{Kind: ChangeCreate, After: rex, Actor: "apikey pst_x (p)"}, nil, []string{"dog", "rex", "the"},
			statusDeltas{1, 0, 0}, ActionPetCreated, `name="Rex the dog" categoryId=1 status=available`, false},
		{"edit", PetChange{Kind: ChangeEdit, Before: &rex, After: renamed, Actor: "alice"}, []string{"dog"}, []string{"cat"},
			statusDeltas{-1, 0, 1}, ActionPetEdited, `name "Rex the dog" -> "Rex the cat"; status available -> sold`, false},
		{"status", PetChange{Kind: ChangeStatus, Before: &rex, After: sold, Actor: "alice"}, nil, nil,
			statusDeltas{-1, 0, 1}, ActionPetStatusChanged, "available -> sold", false},
		{"seed", PetChange{Kind: ChangeSeed, After: rex}, nil, []string{"dog", "rex", "the"}, statusDeltas{1, 0, 0}, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r impliedRows
			if err := r.add(3, tt.change); err != nil {
				t.Fatal(err)
			}
			if got := keys(r.unwords); !slices.Equal(got, tt.unwords) {
				t.Errorf("words deleted %q, want %q", got, tt.unwords)
			}
			if got := keys(r.words); !slices.Equal(got, tt.words) {
				t.Errorf("words inserted %q, want %q", got, tt.words)
			}
			for _, w := range append(r.unwords, r.words...) {
				if w.pet != 3 {
					t.Errorf("word %q of change %d, want 3", w.key, w.pet)
				}
			}
			if r.counts != tt.counts {
				t.Errorf("counts %v, want %v", r.counts, tt.counts)
			}
			if tt.noAudit {
				if len(r.audit) != 0 {
					t.Errorf("audit %+v, want none", r.audit)
				}
				return
			}
			if len(r.audit) != 1 || r.audit[0].pet != 3 || r.audit[0].event.Action != tt.action || r.audit[0].event.Detail != tt.detail ||
				r.audit[0].event.Actor != tt.change.Actor || r.audit[0].event.ActorKind != ActorKindOf(tt.change.Actor) {
				t.Errorf("audit %+v, want one %s %q by %s", r.audit, tt.action, tt.detail, tt.change.Actor)
			}
		})
	}
	var r impliedRows
	if err := r.add(0, PetChange{Kind: ChangeCreate, After: Pet{Name: "x", Status: "lost"}}); err == nil {
		t.Error("a pet of no status was counted")
	}
}
