package models

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/plugin/dbresolver"
)

// Editing pets from the console: one pet's fields (EditPet), or the status
// of several pets at once (ChangePetsStatus). Both are optimistic: the
// console sends the version each pet had when it was shown, and a pet is
// written only by an UPDATE ... WHERE id = ? AND version = ?, which also
// adds one to the version. The database decides between concurrent saves
// of one version: exactly one matches, the others find a newer version and
// write nothing. There is no lock held between showing a form and saving it.

// Field names of the console's edit forms.
const (
	FieldVersion = "version"
	FieldPets    = "pets"
)

// versionMessage refuses a version that is not one.
const versionMessage = "The form is out of date: open the pet again and redo the change."

// ParseVersion reads a pet's version as a console form sent it, by the
// rule of ids in paths and query parameters (ParseID): digits only, no
// sign, no spaces around them.
func ParseVersion(s string) (int64, error) {
	v, ok := ParseID(s)
	if !ok {
		return 0, fieldError(FieldVersion, versionMessage)
	}
	return v, nil
}

// GetPetForEdit returns one pet with its version, from the primary (never
// a replica): the console edits what was last written.
func (s *Store) GetPetForEdit(ctx context.Context, id int64) (Pet, error) {
	var p Pet
	err := s.db.WithContext(ctx).Clauses(dbresolver.Write).Where("id = ?", id).Take(&p).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Pet{}, notFound("pet", id)
	}
	if err != nil {
		return Pet{}, s.dbErr("get pet", err)
	}
	return p, nil
}

// errStale says a pet no longer has the version an edit was made from.
var errStale = errors.New("the pet changed since the version edited")

// EditPet saves np, a validated edit of pet id made from its version
// version. The pet is written only if it still has that version; it then
// has the next one, its search words follow a new name and the status
// counts a new status in the same transaction, and an audit event records
// each changed field before and after. An edit that changes nothing writes
// nothing.
//
// If the pet changed since version, nothing is written: the error has
// CodeConflict and a message naming who changed what (from the pet's
// latest audit event), and the Pet returned is the pet as it now stands,
// so the console can show both values and save again over its version.
func (s *Store) EditPet(ctx context.Context, id, version int64, np NewPet, actor string) (Pet, error) {
	var p Pet
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		if err := tx.Where("id = ?", id).Take(&p).Error; err != nil {
			return err
		}
		if p.Version != version {
			return errStale
		}
		detail := editDetail(p, np)
		if detail == "" {
			return nil
		}
		now := s.now()
		res := tx.Exec("UPDATE pets SET name = ?, category_id = ?, status = ?, updated_at = ?, version = version + 1 WHERE id = ? AND version = ?",
			np.Name, np.CategoryID, string(np.Status), now, id, version)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return errStale
		}
		if np.Name != p.Name {
			if err := indexPetName(ctx, tx.Statement.ConnPool, id, p.Name, np.Name); err != nil {
				return err
			}
		}
		if np.Status != p.Status {
			if err := writeStatusMove(tx, p.Status, np.Status); err != nil {
				return err
			}
		}
		p.Name, p.CategoryID, p.Status, p.UpdatedAt, p.Version = np.Name, np.CategoryID, np.Status, now, version+1
		return tx.Create(&AuditEvent{At: now, Actor: actor, Action: ActionPetEdited, TargetType: TargetPet,
			TargetID: id, Detail: detail}).Error
	})
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return Pet{}, notFound("pet", id)
	case errors.Is(err, errStale):
		return s.editConflict(ctx, id)
	case err != nil:
		return Pet{}, s.dbErr("edit pet", err)
	}
	s.noteDeltas(2)
	return p, nil
}

// editDetail is the audit detail of an edit: each changed field, before
// and after, such as `name "Rex" -> "Max"; status available -> sold`; ""
// when nothing changes.
func editDetail(p Pet, np NewPet) string {
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

// editConflict is the answer to an edit made from an old version: the pet
// as it now stands, and a conflict naming the latest change.
func (s *Store) editConflict(ctx context.Context, id int64) (Pet, error) {
	cur, err := s.GetPetForEdit(ctx, id)
	if err != nil {
		return Pet{}, err
	}
	events, _, err := s.ListAuditEvents(ctx, AuditQuery{TargetType: TargetPet, TargetID: id, Limit: 1})
	if err != nil {
		return Pet{}, err
	}
	msg := "Someone else changed this pet after you opened it."
	if len(events) > 0 {
		msg = changedBy(events[0])
	}
	msg += " Their change is kept and yours is not saved: compare the values below, then save again to replace theirs with yours."
	return cur, &Error{Code: CodeConflict, Message: msg}
}

// changedBy says who changed a pet, when and how, from its audit event.
func changedBy(ev AuditEvent) string {
	what := ""
	switch ev.Action {
	case ActionPetEdited:
		what = " (" + ev.Detail + ")"
	case ActionPetStatusChanged:
		what = " (status " + ev.Detail + ")"
	}
	return fmt.Sprintf("%s changed this pet at %s%s after you opened it.", ev.Actor, ev.At.UTC().Format("2006-01-02 15:04:05 UTC"), what)
}

// PetVersion names a pet as the console showed it: its id and its version.
type PetVersion struct {
	ID, Version int64
}

// StatusChange is a validated change of several pets' status.
type StatusChange struct {
	// Pets are in id order, each once.
	Pets   []PetVersion
	Status Status
}

// ParseStatusChange reads a bulk status change as the console's form sends
// it: each selected pet as "id:version", and the status. At most max pets
// may be given (the console's page); more are refused whole.
func ParseStatusChange(items []string, status string, max int) (StatusChange, error) {
	switch {
	case len(items) == 0:
		return StatusChange{}, fieldError(FieldPets, "Select at least one pet to change.")
	case len(items) > max:
		return StatusChange{}, fieldError(FieldPets, fmt.Sprintf(
			"At most %d pets (one page) can be changed at once, and %d were sent. Nothing was changed.", max, len(items)))
	}
	v := validation{}
	ch := StatusChange{Status: v.status(status)}
	for _, it := range items {
		id, ver, _ := strings.Cut(it, ":")
		pv := PetVersion{}
		var okID, okVer bool
		pv.ID, okID = ParseID(id)
		pv.Version, okVer = ParseID(ver)
		if !okID || !okVer {
			v.add(FieldPets, "The list of pets is out of date: reload the page and select them again. Nothing was changed.")
			break
		}
		ch.Pets = append(ch.Pets, pv)
	}
	if err := v.err(); err != nil {
		return StatusChange{}, err
	}
	slices.SortFunc(ch.Pets, func(a, b PetVersion) int { return cmpInt64(a.ID, b.ID) })
	ch.Pets = slices.CompactFunc(ch.Pets, func(a, b PetVersion) bool { return a.ID == b.ID })
	return ch, nil
}

// StatusChangeResult says what a bulk status change did to each pet.
type StatusChangeResult struct {
	// Changed are the pets now in the status, as written.
	Changed []Pet
	// Already were in the status: nothing was written.
	Already []Pet
	// Stale changed since the version given: nothing was written, the
	// other change is kept.
	Stale []Pet
	// Missing are the ids of pets that do not exist.
	Missing []int64
}

// ChangePetsStatus sets the status of the pets of ch, in one transaction:
// each is written only if it still has the version given (the same
// conditional UPDATE as EditPet), and each change gets an audit event of
// its own, as a single status change does; the status counts follow in
// the same transaction.
func (s *Store) ChangePetsStatus(ctx context.Context, ch StatusChange, actor string) (StatusChangeResult, error) {
	if _, ok := ParseStatus(string(ch.Status)); !ok {
		return StatusChangeResult{}, fieldError(FieldStatus, StatusMessage)
	}
	ids := make([]int64, len(ch.Pets))
	for i, pv := range ch.Pets {
		ids[i] = pv.ID
	}
	var res StatusChangeResult
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		res = StatusChangeResult{} // a retried transaction starts over
		var pets []Pet
		if err := tx.Where("id IN ?", ids).Order("id").Find(&pets).Error; err != nil {
			return err
		}
		now := s.now()
		var events []AuditEvent
		var counts statusDeltas
		for _, pv := range ch.Pets {
			i := slices.IndexFunc(pets, func(p Pet) bool { return p.ID == pv.ID })
			if i < 0 {
				res.Missing = append(res.Missing, pv.ID)
				continue
			}
			p := pets[i]
			changed, err := changeStatus(tx, p, pv.Version, ch.Status, now)
			switch {
			case err != nil:
				return err
			case p.Status == ch.Status:
				res.Already = append(res.Already, p)
			case !changed:
				res.Stale = append(res.Stale, p)
			default:
				if err := counts.move(p.Status, ch.Status); err != nil {
					return err
				}
				events = append(events, AuditEvent{At: now, Actor: actor, Action: ActionPetStatusChanged,
					TargetType: TargetPet, TargetID: p.ID, Detail: fmt.Sprintf("%s -> %s", p.Status, ch.Status)})
				p.Status, p.UpdatedAt, p.Version = ch.Status, now, pv.Version+1
				res.Changed = append(res.Changed, p)
			}
		}
		if len(events) == 0 {
			return nil
		}
		if err := writeStatusDeltas(tx, counts); err != nil {
			return err
		}
		return tx.Create(&events).Error
	})
	if err != nil {
		return StatusChangeResult{}, s.dbErr("change pets' status", err)
	}
	s.noteDeltas(2) // at most three rows: the new status and up to two old ones
	return res, nil
}

// changeStatus writes one pet's new status in a bulk change if it needs
// one and still has version; it reports whether it wrote.
func changeStatus(tx *gorm.DB, p Pet, version int64, status Status, now time.Time) (bool, error) {
	if p.Status == status || p.Version != version {
		return false, nil
	}
	res := tx.Exec("UPDATE pets SET status = ?, updated_at = ?, version = version + 1 WHERE id = ? AND version = ?",
		string(status), now, p.ID, version)
	return res.RowsAffected == 1, res.Error
}
