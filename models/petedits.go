package models

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// What the console's edits of pets read and answer: the version a form
// was made from, a bulk change's list of pets, and the conflict of an edit
// made from an old version. The writes are in pets_update.go.

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

// editConflict is the answer to an edit made from an old version: the pet
// as it now stands, and a conflict naming the latest change.
func (s *Store) editConflict(ctx context.Context, id int64) (Pet, error) {
	cur, err := s.GetPet(ctx, id)
	if ErrorCode(err) == CodeNotFound {
		// Archived since the form was opened.
		if _, aerr := s.GetArchivedPet(ctx, id); aerr == nil {
			return Pet{}, archivedConflict()
		}
	}
	if err != nil {
		return Pet{}, err
	}
	events, _, err := s.ListAuditEvents(ctx, AuditQuery{TargetType: TargetPet, TargetID: id, Limit: 1})
	if err != nil {
		return Pet{}, err
	}
	msg := "Someone else changed this pet after you opened it."
	if len(events) > 0 {
		msg = changedBy(events[0], s.zone)
	}
	msg += " Their change is kept and yours is not saved: compare the values below, then save again to replace theirs with yours."
	return cur, &Error{Code: CodeConflict, Message: msg}
}

// changedBy says who changed a pet, when (in the zone loc) and how, from
// its audit event.
func changedBy(ev AuditEvent, loc *time.Location) string {
	what := ""
	switch ev.Action {
	case ActionPetEdited:
		what = " (" + ev.Detail + ")"
	case ActionPetStatusChanged:
		what = " (status " + ev.Detail + ")"
	}
	return fmt.Sprintf("%s changed this pet at %s%s after you opened it.", ev.Actor, LocalTime(ev.At, loc), what)
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
	// UndoID is the action that undoes the change (undo.go), 0 when the
	// change was not recorded for undo or wrote nothing.
	UndoID int64
}
