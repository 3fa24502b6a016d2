package client_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/api/client"
	"petstore/models"
	"petstore/models/modelstest"
)

// The "keeping a copy in sync" example of docs/partners.md, run: the mirror
// a partner keeps by Sync ends equal to the store while changes are made
// before, during and after its listing.
func TestSyncExample(t *testing.T) {
	modelstest.ForEach(t, func(t *testing.T, store *models.Store) {
		p := newPartner(t, store)
		ctx := context.Background()
		change := func(i int) {
			pet, err := store.CreatePet(ctx, models.NewPet{Name: fmt.Sprint("Pet ", i), CategoryID: 1, Status: models.StatusAvailable}, "test")
			if err != nil {
				t.Error(err)
				return
			}
			if i%2 == 0 {
				if _, err := store.UpdatePetStatus(ctx, pet.ID, models.StatusSold, "test"); err != nil {
					t.Error(err)
				}
			}
		}
		for i := range 30 {
			change(i)
		}
		var (
			mu     sync.Mutex
			mirror = map[int64]client.Pet{}
		)
		syncCtx, stop := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- Sync(syncCtx, p.c, mirror, &mu) }()
		for i := 30; i < 60; i++ {
			change(i)
		}
		want := map[int64]client.Pet{}
		for _, pet := range p.allPets(t) {
			want[pet.Id] = pet
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			mu.Lock()
			same := maps.Equal(mirror, want)
			n := len(mirror)
			mu.Unlock()
			if same {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the copy has %d animals, the store %d, and they differ", n, len(want))
			}
			time.Sleep(20 * time.Millisecond)
		}
		stop()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("Sync ended with %v, want the cancel", err)
		}
	})
}

// allPets lists every pet through the client.
func (p *partner) allPets(t *testing.T) []client.Pet {
	t.Helper()
	all := map[int64]client.Pet{}
	if err := listAll(context.Background(), p.c, all, &sync.Mutex{}); err != nil {
		t.Fatal(err)
	}
	return slices.Collect(maps.Values(all))
}

// The example, as docs/partners.md shows it (with a mutex added so that
// the test can look at the copy while it runs).

// Sync keeps mirror (animal id -> animal) in step with the store, until ctx
// ends.
func Sync(ctx context.Context, c *client.ClientWithResponses, mirror map[int64]client.Pet, mu *sync.Mutex) error {
	for {
		cursor, err := head(ctx, c) // 1. the feed's position now
		if err != nil {
			return err
		}
		mu.Lock()
		clear(mirror)
		mu.Unlock()
		if err := listAll(ctx, c, mirror, mu); err != nil { // 2. every animal
			return err
		}
		err = follow(ctx, c, cursor, mirror, mu) // 3. every change after the position
		if !errors.Is(err, errCursorExpired) {
			return err
		}
		// 410: the copy fell behind the feed's retention; start again.
	}
}

// head reads the feed to its end and returns the cursor after its last
// event.
func head(ctx context.Context, c *client.ClientWithResponses) (string, error) {
	limit := int32(1000)
	p := &client.ListEventsParams{Limit: &limit}
	for {
		res, err := c.ListEventsWithResponse(ctx, p)
		if err != nil {
			return "", err
		}
		if res.JSON200 == nil {
			return "", fmt.Errorf("events: %d %s", res.StatusCode(), res.Body)
		}
		next := cursorOf(res.Headers200.Link)
		if len(*res.JSON200) == 0 {
			return next, nil
		}
		p.After = &next
	}
}

// listAll puts every animal into mirror, following the list's Link.
func listAll(ctx context.Context, c *client.ClientWithResponses, mirror map[int64]client.Pet, mu *sync.Mutex) error {
	limit := int32(100)
	p := &client.ListPetsParams{Limit: &limit}
	for {
		res, err := c.ListPetsWithResponse(ctx, p)
		if err != nil {
			return err
		}
		if res.JSON200 == nil {
			return fmt.Errorf("pets: %d %s", res.StatusCode(), res.Body)
		}
		mu.Lock()
		for _, pet := range *res.JSON200 {
			mirror[pet.Id] = pet
		}
		mu.Unlock()
		if len(*res.JSON200) == 0 || res.Headers200.Link == nil {
			return nil
		}
		last := (*res.JSON200)[len(*res.JSON200)-1].Id
		p.After = &last
	}
}

var errCursorExpired = errors.New("cursor expired")

// follow applies the events after cursor to mirror, waiting for new ones.
func follow(ctx context.Context, c *client.ClientWithResponses, cursor string, mirror map[int64]client.Pet, mu *sync.Mutex) error {
	wait := int32(30)
	for {
		res, err := c.ListEventsWithResponse(ctx, &client.ListEventsParams{After: &cursor, Wait: &wait})
		switch {
		case err != nil:
			return err
		case res.JSON410 != nil:
			return errCursorExpired
		case res.JSON200 == nil:
			return fmt.Errorf("events: %d %s", res.StatusCode(), res.Body)
		}
		mu.Lock()
		for _, e := range *res.JSON200 {
			switch e.Type {
			case "pet.created", "pet.updated", "pet.restored":
				mirror[e.Pet.Id] = e.Pet
			case "pet.archived":
				delete(mirror, e.Pet.Id)
			} // other types are not about the mirror
		}
		mu.Unlock()
		cursor = cursorOf(res.Headers200.Link)
	}
}

// cursorOf reads after= from `<.../v1/events?after=X&...>; rel="next"`.
func cursorOf(link string) string {
	target, _, _ := strings.Cut(strings.TrimPrefix(link, "<"), ">")
	u, _ := url.Parse(target)
	return u.Query().Get("after")
}
