package models

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A pet has one write path. Every write of a pet (a create from the API or
// the console, an edit, a status change alone or in bulk, a seed, an
// archive or a restore, an import) is a
// PetChange, and impliedRows.add, the one function below, derives every
// row the change implies besides the pet's own: its search words, the
// status counts' deltas, its audit event and its event in the change feed
// (events.go). The writers differ only in how
// a batch reaches the database:
//
//   - SQLite's creates: prepared statements on the single writer
//     (pets_create.go, writeImpliedPrepared);
//   - MySQL's creates: one multi-statement text per batch (pets_create.go,
//     batchSQL), where a new pet's id is an SQL variable;
//   - edits and status changes on either engine: a transaction
//     (pets_update.go, writeImplied);
//   - archives and restores: the same transaction sink, the pet's row
//     moving between pets and archived_pets (pets_archive.go);
//   - seeding and CSV imports: multi-row statements of thousands of rows
//     (seed.go, pets_import.go).
//
// A new derived row is added in impliedRows and written by each of those
// four sinks; no writer derives anything itself. Undo items (undo.go) are
// derived only for changes that carry a member's action, which the
// transaction sink (edits, status changes, archives, restores) and the
// import's chunks write: API creates and seeds carry none.

// ChangeKind is what a PetChange does, which decides its audit event.
type ChangeKind int

// The kinds of change.
const (
	// ChangeCreate adds a pet (Before is nil).
	ChangeCreate ChangeKind = iota
	// ChangeEdit saves the console's edit form: any field.
	ChangeEdit
	// ChangeStatus sets the status alone, of one pet or many at once.
	ChangeStatus
	// ChangeSeed adds an example pet; a seed is audited once as a whole,
	// not per pet.
	ChangeSeed
	// ChangeArchive moves a pet into the archive: Before is the pet as it
	// stood, After its last state as archived (same fields, the next
	// version). It leaves every list, count and search.
	ChangeArchive
	// ChangeRestore moves an archived pet back with its id: Before is the
	// pet as archived, After as restored (the next version).
	ChangeRestore
	// ChangeUndo puts back the values a pet had before an action that is
	// being undone (undo.go): any field.
	ChangeUndo
	// ChangeImport adds a pet read from an imported CSV file; an import is
	// audited once as a whole, with its count, not per pet.
	ChangeImport
)

// PetChange is one write of a pet: the pet before it (nil for a new pet),
// the pet after it, and who made it (an audit actor). Undo, when set, is
// the member's action the change is part of: the change is then recorded
// for undo (an undo item) in its own transaction.
type PetChange struct {
	Kind   ChangeKind
	Before *Pet
	After  Pet
	Actor  string
	Undo   *UndoAction
}

// changed reports whether the change writes anything: a new pet always
// does; an update only when a field differs.
func (ch PetChange) changed() bool {
	b := ch.Before
	return b == nil || b.Name != ch.After.Name || b.CategoryID != ch.After.CategoryID || b.Status != ch.After.Status
}

// wordRow is one row of the name search index; pet is the index of its
// change in the batch, whose id the sink knows (or, for MySQL's creates,
// names in SQL).
type wordRow struct {
	key string
	pet int
}

// auditRow is the audit event of the change at index pet of the batch,
// whose TargetID the sink fills in.
type auditRow struct {
	event AuditEvent
	pet   int
}

// eventRow is the change feed's event of the change at index pet of the
// batch: the pet as it stands after the change, whose id the sink fills
// in. Its own id is given by the sink too, last in the transaction
// (events.go).
type eventRow struct {
	typ     EventType
	changed string // the changed fields of a pet.updated, comma separated
	after   Pet
	pet     int
}

// impliedRows are the rows a batch of changes implies beyond the pets' own
// rows.
type impliedRows struct {
	unwords []wordRow // index rows to delete: words a renamed pet lost
	words   []wordRow // index rows to insert
	counts  statusDeltas
	audit   []auditRow
	events  []eventRow
	undo    []undoItemRow // what an undo of the changes puts back
}

// add derives the rows the change ch implies, ch being the batch's change
// number i. It is the one place that knows them.
func (r *impliedRows) add(i int, ch PetChange) error {
	b, a := ch.Before, &ch.After
	// A pet in the archive has no words and counts in no status: an
	// archive is the pet going from its state to none, a restore from
	// none to its state.
	oldName, newName := "", a.Name
	if b != nil {
		oldName = b.Name
	}
	switch ch.Kind {
	case ChangeArchive:
		newName = ""
	case ChangeRestore:
		oldName = ""
	}
	if oldName != newName {
		oldKeys, newKeys := nameKeys(oldName), nameKeys(newName)
		for _, k := range oldKeys {
			if !slices.Contains(newKeys, k) {
				r.unwords = append(r.unwords, wordRow{k, i})
			}
		}
		for _, k := range newKeys {
			if !slices.Contains(oldKeys, k) {
				r.words = append(r.words, wordRow{k, i})
			}
		}
	}
	switch {
	case ch.Kind == ChangeArchive:
		if !r.counts.add(b.Status, -1) {
			return fmt.Errorf("count an archived pet: status %q", b.Status)
		}
	case b == nil || ch.Kind == ChangeRestore:
		if !r.counts.add(a.Status, 1) {
			return fmt.Errorf("count a new pet: status %q", a.Status)
		}
	case b.Status != a.Status:
		if err := r.counts.move(b.Status, a.Status); err != nil {
			return err
		}
	}
	if ev, ok := ch.auditEvent(); ok {
		r.audit = append(r.audit, auditRow{ev, i})
	}
	r.events = append(r.events, ch.feedEvent(i))
	if ch.Undo != nil {
		r.undo = append(r.undo, ch.undoItem(i))
	}
	return nil
}

// feedEvent is the change's event in the change feed, the change being the
// batch's number i.
func (ch PetChange) feedEvent(i int) eventRow {
	b, a := ch.Before, ch.After
	switch {
	case ch.Kind == ChangeArchive:
		return eventRow{typ: EventPetArchived, after: a, pet: i}
	case ch.Kind == ChangeRestore:
		return eventRow{typ: EventPetRestored, after: a, pet: i}
	case b == nil:
		return eventRow{typ: EventPetCreated, after: a, pet: i}
	}
	var changed []string
	if b.Name != a.Name {
		changed = append(changed, "name")
	}
	if b.CategoryID != a.CategoryID {
		changed = append(changed, "categoryId")
	}
	if b.Status != a.Status {
		changed = append(changed, "status")
	}
	return eventRow{typ: EventPetUpdated, changed: strings.Join(changed, ","), after: a, pet: i}
}

// auditEvent is the change's audit event, its TargetID left to the sink;
// false for a change audited otherwise (a seed or an import, once as a
// whole).
func (ch PetChange) auditEvent() (AuditEvent, bool) {
	ev := AuditEvent{At: ch.After.UpdatedAt, Actor: ch.Actor, ActorKind: ActorKindOf(ch.Actor), TargetType: TargetPet}
	switch ch.Kind {
	case ChangeCreate:
		ev.At, ev.Action, ev.Detail = ch.After.CreatedAt, ActionPetCreated, createdDetail(ch.After)
	case ChangeEdit:
		ev.Action, ev.Detail = ActionPetEdited, editDetail(*ch.Before, ch.After)
	case ChangeStatus:
		ev.Action, ev.Detail = ActionPetStatusChanged, string(ch.Before.Status)+" -> "+string(ch.After.Status)
	case ChangeArchive:
		ev.Action, ev.Detail = ActionPetArchived, createdDetail(ch.After)
	case ChangeRestore:
		ev.Action, ev.Detail = ActionPetRestored, createdDetail(ch.After)
	case ChangeUndo:
		ev.Action, ev.Detail = ActionPetUndone, editDetail(*ch.Before, ch.After)
	default:
		return AuditEvent{}, false
	}
	return ev, true
}

// createdDetail is a created pet's audit detail, name=%q categoryId=%d
// status=%s without fmt (once per create).
func createdDetail(p Pet) string {
	b := make([]byte, 0, 48+len(p.Name))
	b = strconv.AppendQuote(append(b, "name="...), p.Name)
	b = strconv.AppendInt(append(b, " categoryId="...), p.CategoryID, 10)
	return string(append(append(b, " status="...), p.Status...))
}

// editDetail is the audit detail of an edit: each changed field, before
// and after, such as `name "Rex" -> "Max"; status available -> sold`.
func editDetail(p, np Pet) string {
	var parts []string
	if p.Name != np.Name {
		parts = append(parts, "name "+strconv.Quote(p.Name)+" -> "+strconv.Quote(np.Name))
	}
	if p.CategoryID != np.CategoryID {
		parts = append(parts, fmt.Sprintf("categoryId %d -> %d", p.CategoryID, np.CategoryID))
	}
	if p.Status != np.Status {
		parts = append(parts, fmt.Sprintf("status %s -> %s", p.Status, np.Status))
	}
	return strings.Join(parts, "; ")
}

// newPetChange is the change that creates np, at now, by actor.
func newPetChange(kind ChangeKind, np NewPet, now time.Time, actor string) PetChange {
	return PetChange{Kind: kind, Actor: actor,
		After: Pet{Name: np.Name, CategoryID: np.CategoryID, Status: np.Status, CreatedAt: now, UpdatedAt: now, Version: 1}}
}
