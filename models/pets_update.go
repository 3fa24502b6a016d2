package models

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Changes to existing pets: the console's edit (EditPet), a status change
// of several pets at once (ChangePetsStatus) and of one (UpdatePetStatus,
// a bulk change of one). Each is optimistic: a pet is written only by an
// UPDATE ... WHERE id = ? AND version = ?, which also adds one to the
// version. The database decides between concurrent saves of one version:
// exactly one matches, the others find a newer version and write nothing.
// There is no lock held between showing a form and saving it.

// errStale says a pet no longer has the version an edit was made from.
var errStale = errors.New("the pet changed since the version edited")

// errArchived ends the transaction of a change of an archived pet.
var errArchived = errors.New("the pet is archived")

// EditPet saves np, a validated edit of pet id made from its version
// version. The pet is written only if it still has that version; it then
// has the next one, and the rows the change implies (impliedRows) are
// written in the same transaction. An edit that changes nothing writes
// nothing.
//
// If the pet changed since version, nothing is written: the error has
// CodeConflict and a message naming who changed what (from the pet's
// latest audit event), and the Pet returned is the pet as it now stands,
// so the console can show both values and save again over its version.
func (s *Store) EditPet(ctx context.Context, id, version int64, np NewPet, actor string) (Pet, error) {
	p, _, err := s.editPet(ctx, id, version, np, actor, false)
	return p, err
}

// EditPetUndoable is EditPet made by a member in the console: the edit is
// recorded as an action they may undo (undo.go), whose id it returns (0
// when nothing was written).
func (s *Store) EditPetUndoable(ctx context.Context, id, version int64, np NewPet, actor string) (Pet, int64, error) {
	return s.editPet(ctx, id, version, np, actor, true)
}

// editPet is EditPet, recorded for undo when undoable.
func (s *Store) editPet(ctx context.Context, id, version int64, np NewPet, actor string, undoable bool) (Pet, int64, error) {
	var (
		p       Pet
		written updatesWritten
		undoID  int64
	)
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		written, undoID = updatesWritten{}, 0
		if err := tx.Where("id = ?", id).Take(&p).Error; errors.Is(err, gorm.ErrRecordNotFound) {
			if archived, aerr := isArchived(tx, id); aerr != nil || archived {
				return cmp.Or(aerr, errArchived)
			}
			return err
		} else if err != nil {
			return err
		}
		if p.Version != version {
			return errStale
		}
		after := p
		after.Name, after.CategoryID, after.Status = np.Name, np.CategoryID, np.Status
		ch := PetChange{Kind: ChangeEdit, Before: &p, After: after, Actor: actor}
		if !ch.changed() {
			return nil
		}
		if undoable {
			act, err := s.newUndoAction(tx, UndoEdit, actor, "Edited "+p.Name+": "+editDetail(p, after), true, 1)
			if err != nil {
				return err
			}
			ch.Undo, undoID = act, act.ID
		}
		var err error
		if written, err = s.writeUpdates(tx, []PetChange{ch}); err != nil {
			return err
		}
		if len(written.pets) == 0 {
			return errStale
		}
		p = written.pets[0]
		return nil
	})
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return Pet{}, 0, notFound("pet", id)
	case errors.Is(err, errStale):
		p, err := s.editConflict(ctx, id)
		return p, 0, err
	case errors.Is(err, errArchived):
		return Pet{}, 0, archivedConflict()
	case err != nil:
		return Pet{}, 0, s.dbErr("edit pet", err)
	}
	s.committed(written)
	return p, undoID, nil
}

// UpdatePetStatus changes a pet's status whatever its version, and records
// who did it and when: a bulk change of one. Setting the status it already
// has changes nothing.
func (s *Store) UpdatePetStatus(ctx context.Context, id int64, status Status, actor string) (Pet, error) {
	p, _, err := s.updatePetStatus(ctx, id, status, actor, nil)
	return p, err
}

// UpdatePetStatusUndoable is UpdatePetStatus made by a member in the
// console: the change is recorded as an action they may undo (undo.go),
// whose id it returns (0 when nothing was written).
func (s *Store) UpdatePetStatusUndoable(ctx context.Context, id int64, status Status, actor string) (Pet, int64, error) {
	return s.updatePetStatus(ctx, id, status, actor, &UndoAction{Kind: UndoStatus})
}

func (s *Store) updatePetStatus(ctx context.Context, id int64, status Status, actor string, undo *UndoAction) (Pet, int64, error) {
	res, err := s.changeStatus(ctx, StatusChange{Pets: []PetVersion{{ID: id}}, Status: status}, actor, true, undo)
	switch {
	case err != nil:
		return Pet{}, 0, err
	case len(res.Changed) == 1:
		return res.Changed[0], res.UndoID, nil
	case len(res.Already) == 1:
		return res.Already[0], 0, nil
	}
	if _, err := s.GetArchivedPet(ctx, id); err == nil {
		return Pet{}, 0, archivedConflict()
	}
	return Pet{}, 0, notFound("pet", id)
}

// ChangePetsStatus sets the status of the pets of ch, in one transaction:
// each is written only if it still has the version given, and each change
// gets its audit event and counts as a single status change does.
func (s *Store) ChangePetsStatus(ctx context.Context, ch StatusChange, actor string) (StatusChangeResult, error) {
	return s.changeStatus(ctx, ch, actor, false, nil)
}

// ChangePetsStatusUndoable is ChangePetsStatus made by a member in the
// console: the change is recorded as one action they may undo (undo.go),
// whose id the result holds.
func (s *Store) ChangePetsStatusUndoable(ctx context.Context, ch StatusChange, actor string) (StatusChangeResult, error) {
	return s.changeStatus(ctx, ch, actor, false, &UndoAction{Kind: UndoBulkStatus})
}

// changeStatus is ChangePetsStatus; with anyVersion the pets are locked
// when read and written whatever version they have (UpdatePetStatus).
// With undo the changes are recorded for undo: under that action when it
// has an id (a bulk job's, one chunk after another), else under a new
// action of undo's kind.
func (s *Store) changeStatus(ctx context.Context, sc StatusChange, actor string, anyVersion bool, undo *UndoAction) (StatusChangeResult, error) {
	if _, ok := ParseStatus(string(sc.Status)); !ok {
		return StatusChangeResult{}, fieldError(FieldStatus, StatusMessage)
	}
	ids := make([]int64, len(sc.Pets))
	for i, pv := range sc.Pets {
		ids[i] = pv.ID
	}
	var (
		res     StatusChangeResult
		written updatesWritten
	)
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		res, written = StatusChangeResult{}, updatesWritten{} // a retried transaction starts over
		read := tx
		if anyVersion {
			read = tx.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		var pets []Pet
		if err := read.Where("id IN ?", ids).Order("id").Find(&pets).Error; err != nil {
			return err
		}
		var changes []PetChange
		for _, pv := range sc.Pets {
			i := slices.IndexFunc(pets, func(p Pet) bool { return p.ID == pv.ID })
			switch {
			case i < 0:
				res.Missing = append(res.Missing, pv.ID)
			case pets[i].Status == sc.Status:
				res.Already = append(res.Already, pets[i])
			case !anyVersion && pets[i].Version != pv.Version:
				res.Stale = append(res.Stale, pets[i])
			default:
				after := pets[i]
				after.Status = sc.Status
				changes = append(changes, PetChange{Kind: ChangeStatus, Before: &pets[i], After: after, Actor: actor})
			}
		}
		act, err := s.undoActionOf(tx, undo, actor, changes, sc.Status)
		if err != nil {
			return err
		}
		if written, err = s.writeUpdates(tx, changes); err != nil {
			return err
		}
		res.Changed = written.pets
		if res.UndoID, err = s.settleUndoAction(tx, undo, act, written.pets, sc.Status); err != nil {
			return err
		}
		for _, ch := range changes {
			if !slices.ContainsFunc(written.pets, func(p Pet) bool { return p.ID == ch.Before.ID }) {
				res.Stale = append(res.Stale, *ch.Before)
			}
		}
		slices.SortFunc(res.Stale, func(a, b Pet) int { return cmpInt64(a.ID, b.ID) })
		return nil
	})
	if err != nil {
		return StatusChangeResult{}, s.dbErr("change pets' status", err)
	}
	s.committed(written)
	return res, nil
}

// updatesWritten is what writeUpdates wrote: the pets, as they now stand,
// and what the writer tells others once the transaction has committed.
type updatesWritten struct {
	pets      []Pet
	countRows int   // status count rows added
	lastEvent int64 // the last change feed event's id
}

// committed tells the Store's watchers of what a committed transaction
// wrote: SQLite's log checkpoints, the status counts' compaction, and the
// change feed's waiting readers.
func (s *Store) committed(w updatesWritten) {
	s.checkpointSometimes()
	if w.countRows > 0 {
		s.noteDeltas(w.countRows)
	}
	if w.lastEvent > 0 {
		s.feed.advance(w.lastEvent)
	}
}

// writeUpdates writes each change to an existing pet within tx, if the pet
// still has the version it was read at (ch.Before.Version), and the rows
// the changes written imply. It returns the pets written, as they now
// stand, in the order of changes; the caller passes the result to
// committed once the transaction has committed.
func (s *Store) writeUpdates(tx *gorm.DB, changes []PetChange) (updatesWritten, error) {
	if len(changes) == 0 {
		return updatesWritten{}, nil
	}
	now := s.now()
	var (
		rows    impliedRows
		written []Pet
		ids     []int64
	)
	for _, ch := range changes {
		b, a := ch.Before, &ch.After
		res := tx.Exec("UPDATE pets SET name = ?, category_id = ?, status = ?, updated_at = ?, version = version + 1 WHERE id = ? AND version = ?",
			a.Name, a.CategoryID, string(a.Status), now, b.ID, b.Version)
		if res.Error != nil {
			return updatesWritten{}, res.Error
		}
		if res.RowsAffected != 1 {
			continue
		}
		a.ID, a.UpdatedAt, a.Version = b.ID, now, b.Version+1
		if err := rows.add(len(written), ch); err != nil {
			return updatesWritten{}, err
		}
		written = append(written, *a)
		ids = append(ids, b.ID)
	}
	last, err := s.writeImplied(tx, &rows, ids)
	if err != nil {
		return updatesWritten{}, err
	}
	return updatesWritten{pets: written, countRows: rows.counts.rows(), lastEvent: last}, nil
}

// writeImplied writes rows within tx, ids[i] being the id of the batch's
// change number i: the sink of changes to existing pets, on either engine.
// It returns the last change feed event's id.
func (s *Store) writeImplied(tx *gorm.DB, rows *impliedRows, ids []int64) (int64, error) {
	// The words' keys are bound as []byte through the connection itself:
	// GORM's builder would expand them as lists.
	ctx, conn := tx.Statement.Context, tx.Statement.ConnPool
	for _, w := range rows.unwords {
		if _, err := conn.ExecContext(ctx, "DELETE FROM pet_name_words WHERE word = ? AND pet_id = ?", []byte(w.key), ids[w.pet]); err != nil {
			return 0, fmt.Errorf("unindex pet name: %w", err)
		}
	}
	if len(rows.words) > 0 {
		args := make([]any, 0, 2*len(rows.words))
		for _, w := range rows.words {
			args = append(args, []byte(w.key), ids[w.pet])
		}
		if _, err := conn.ExecContext(ctx, insertWordsSQL("INSERT", len(rows.words)), args...); err != nil {
			return 0, fmt.Errorf("index pet name: %w", err)
		}
	}
	if err := writeStatusDeltas(tx, rows.counts); err != nil {
		return 0, err
	}
	if len(rows.audit) > 0 {
		audit := make([]AuditEvent, len(rows.audit))
		for i, a := range rows.audit {
			audit[i] = a.event
			audit[i].TargetID = ids[a.pet]
		}
		if err := tx.Create(&audit).Error; err != nil {
			return 0, err
		}
	}
	if err := writeUndoItems(ctx, conn, rows.undo, ids); err != nil {
		return 0, err
	}
	return s.writeEvents(ctx, conn, nil, rows.events, ids)
}
