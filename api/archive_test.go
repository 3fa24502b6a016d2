package api_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"petstore/models"
)

// An archived pet is gone for partners: GET answers 404 not_found exactly
// as for a pet that never existed, the list leaves it out, and the feed
// says pet.archived with its last state; once restored it answers again
// with the same id, and the feed says pet.restored.
func TestArchivedPetIsGone(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		rex := decodePet(t, e.post(`{"name":"Rex","categoryId":3,"status":"pending"}`), http.StatusCreated)
		tom := decodePet(t, e.post(`{"name":"Tom","categoryId":1}`), http.StatusCreated)
		res, err := e.store.ArchivePets(ctx, []models.PetVersion{{ID: rex.ID, Version: 1}}, "ana")
		if err != nil || len(res.Moved) != 1 {
			t.Fatalf("ArchivePets = %+v, %v", res, err)
		}

		path := "/v1/pets/" + strconv.FormatInt(rex.ID, 10)
		gone := e.get(path)
		wantDeprecationHeaders(t, gone)
		body := wantError(t, gone, http.StatusNotFound, models.CodeNotFound)
		unknown := wantError(t, e.get("/v1/pets/987654321"), http.StatusNotFound, models.CodeNotFound)
		if want := strings.Replace(unknown.Message, "987654321", strconv.FormatInt(rex.ID, 10), 1); body.Message != want {
			t.Errorf("archived pet's message %q, want the unknown pet's %q", body.Message, want)
		}
		if pets := decodePets(t, e.get("/v1/pets")); len(pets) != 1 || pets[0] != tom {
			t.Errorf("the list after the archive: %+v, want Tom alone", pets)
		}
		events := decodeEvents(t, e.get("/v1/events"))
		last := events[len(events)-1]
		if last.Type != "pet.archived" || last.Pet != rex || last.Changed != nil {
			t.Errorf("last event %+v, want pet.archived of %+v", last, rex)
		}

		if _, err := e.store.RestorePets(ctx, []models.PetVersion{{ID: rex.ID, Version: 2}}, "ana"); err != nil {
			t.Fatal(err)
		}
		if got := decodePet(t, e.get(path), http.StatusOK); got != rex {
			t.Errorf("the restored pet %+v, want %+v", got, rex)
		}
		events = decodeEvents(t, e.get("/v1/events?after="+last.ID))
		if len(events) != 1 || events[0].Type != "pet.restored" || events[0].Pet != rex {
			t.Errorf("events after the archive %+v, want one pet.restored", events)
		}
	})
}
