package models_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

// searchNames returns the names of the pets a console search finds.
func searchFor(tb testing.TB, s *models.Store, q string) []string {
	tb.Helper()
	page, err := s.ListPetListing(context.Background(), models.PetListing{Search: q}, 100)
	if err != nil {
		tb.Fatal(err)
	}
	return names(page.Pets)
}

// wordRows counts a pet's rows in the name search index.
func wordRows(tb testing.TB, s *models.Store, id int64) int {
	tb.Helper()
	var n int
	if err := s.SQLDB().QueryRow("SELECT COUNT(*) FROM pet_name_words WHERE pet_id = ?", id).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

func statusCounts(tb testing.TB, s *models.Store) models.StatusCounts {
	tb.Helper()
	c, err := s.PetStatusCounts(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// An archive moves the pet out of every read of pets (the API's get and
// list, the console's list and search, the counts, the export) with its
// words, and writes its audit and feed events; a restore puts it back
// with the same id and the next version.
func TestArchiveAndRestore(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		now := base
		s.SetClock(func() time.Time { return now })
		luna := newPet(t, s, "Luna Lovegood", models.StatusPending)
		rex := newPet(t, s, "Rex", models.StatusAvailable)
		_, head := readAll(t, s, models.FeedStart)
		words := wordRows(t, s, luna.ID)
		if words == 0 {
			t.Fatal("a new pet has no words in the search index")
		}

		now = base.Add(time.Hour)
		res, err := s.ArchivePets(ctx, []models.PetVersion{{ID: luna.ID, Version: luna.Version}}, "ana")
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Moved) != 1 || res.Moved[0].ID != luna.ID || res.Moved[0].Version != luna.Version+1 || len(res.Stale)+len(res.Missing)+len(res.Already) != 0 {
			t.Fatalf("ArchivePets = %+v, want Luna moved at version %d", res, luna.Version+1)
		}
		if _, err := s.GetPet(ctx, luna.ID); models.ErrorCode(err) != models.CodeNotFound {
			t.Errorf("GetPet of an archived pet: %v, want not_found", err)
		}
		if got, _, err := s.ListPets(ctx, models.PetQuery{Limit: 100}); err != nil || len(got) != 1 || got[0].ID != rex.ID {
			t.Errorf("the API's list after the archive: %v, %v; want Rex alone", names(got), err)
		}
		if got := searchFor(t, s, "luna"); len(got) != 0 {
			t.Errorf("the search finds the archived pet: %v", got)
		}
		if n := wordRows(t, s, luna.ID); n != 0 {
			t.Errorf("the archived pet keeps %d rows of the search index", n)
		}
		if c := statusCounts(t, s); c[models.StatusPending] != 0 || c.Total() != 1 {
			t.Errorf("counts after the archive: %v, want only Rex", c)
		}
		var exported []string
		if _, err := s.ExportPets(ctx, models.PetListing{}, 10, func(ps []models.Pet) error { exported = append(exported, names(ps)...); return nil }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(exported, []string{"Rex"}) {
			t.Errorf("the export after the archive: %v, want Rex", exported)
		}
		a, err := s.GetArchivedPet(ctx, luna.ID)
		if err != nil || a.Name != luna.Name || a.Status != models.StatusPending || a.ArchivedBy != "ana" || !a.ArchivedAt.Equal(now) || a.Version != luna.Version+1 {
			t.Errorf("GetArchivedPet = %+v, %v", a, err)
		}
		page, err := s.ListArchivedPets(ctx, models.ArchiveCursor{}, 10)
		if err != nil || len(page.Pets) != 1 || page.Pets[0].ID != luna.ID {
			t.Errorf("ListArchivedPets = %+v, %v", page, err)
		}
		evs, head2 := readAll(t, s, head)
		if len(evs) != 1 || evs[0].Type != models.EventPetArchived || evs[0].Pet.ID != luna.ID || evs[0].Pet.Name != luna.Name ||
			evs[0].Pet.Status != models.StatusPending || !evs[0].OccurredAt.Equal(now) {
			t.Errorf("the feed after the archive: %+v, want one pet.archived of Luna's last state", evs)
		}
		if actor, detail, err := modelstest.LastAudit(t, s, models.ActionPetArchived, luna.ID); err != nil || actor != "ana" || !strings.Contains(detail, `name="Luna Lovegood"`) {
			t.Errorf("archive's audit: %q %q %v", actor, detail, err)
		}

		// Archiving again, or editing or changing the status of the
		// archived pet, changes nothing.
		again, err := s.ArchivePets(ctx, []models.PetVersion{{ID: luna.ID, Version: luna.Version}, {ID: 9999}}, "bob")
		if err != nil || len(again.Moved) != 0 || !slices.Equal(again.Already, []int64{luna.ID}) || !slices.Equal(again.Missing, []int64{9999}) {
			t.Errorf("archiving again = %+v, %v; want Luna already archived and 9999 missing", again, err)
		}
		_, err = s.EditPet(ctx, luna.ID, luna.Version+1, models.NewPet{Name: "Moon", CategoryID: 1, Status: models.StatusSold}, "bob")
		if models.ErrorCode(err) != models.CodeConflict || !errors.Is(err, models.ErrPetArchived) {
			t.Errorf("editing an archived pet: %v, want a conflict saying it is archived", err)
		}
		if _, err := s.UpdatePetStatus(ctx, luna.ID, models.StatusSold, "bob"); models.ErrorCode(err) != models.CodeConflict || !errors.Is(err, models.ErrPetArchived) {
			t.Errorf("changing an archived pet's status: %v, want a conflict saying it is archived", err)
		}
		if _, err := s.UpdatePetStatus(ctx, 9999, models.StatusSold, "bob"); models.ErrorCode(err) != models.CodeNotFound {
			t.Errorf("changing an unknown pet's status: %v, want not_found", err)
		}

		// A restore from an old version is refused; from the archived one,
		// the pet is back with its id, words, count and the next version.
		stale, err := s.RestorePets(ctx, []models.PetVersion{{ID: luna.ID, Version: luna.Version}}, "bob")
		if err != nil || len(stale.Moved) != 0 || len(stale.Stale) != 1 {
			t.Errorf("a restore from an old version = %+v, %v; want it stale", stale, err)
		}
		now = base.Add(2 * time.Hour)
		back, err := s.RestorePets(ctx, []models.PetVersion{{ID: luna.ID, Version: a.Version}}, "bob")
		if err != nil || len(back.Moved) != 1 || back.Moved[0].Version != a.Version+1 {
			t.Fatalf("RestorePets = %+v, %v", back, err)
		}
		got, err := s.GetPet(ctx, luna.ID)
		if err != nil || got.Name != luna.Name || got.Status != models.StatusPending || got.Version != a.Version+1 || !got.CreatedAt.Equal(luna.CreatedAt) {
			t.Errorf("the restored pet = %+v, %v; want Luna as she was, version %d", got, err, a.Version+1)
		}
		if got := searchFor(t, s, "luna"); !slices.Equal(got, []string{"Luna Lovegood"}) {
			t.Errorf("the search after the restore: %v", got)
		}
		if n := wordRows(t, s, luna.ID); n != words {
			t.Errorf("the restored pet has %d rows of the search index, want %d", n, words)
		}
		if c := statusCounts(t, s); c[models.StatusPending] != 1 || c.Total() != 2 {
			t.Errorf("counts after the restore: %v", c)
		}
		if _, err := s.GetArchivedPet(ctx, luna.ID); models.ErrorCode(err) != models.CodeNotFound {
			t.Errorf("the restored pet is still in the archive: %v", err)
		}
		evs, _ = readAll(t, s, head2)
		if len(evs) != 1 || evs[0].Type != models.EventPetRestored || evs[0].Pet.ID != luna.ID || !evs[0].OccurredAt.Equal(now) {
			t.Errorf("the feed after the restore: %+v, want one pet.restored", evs)
		}
		if actor, _, err := modelstest.LastAudit(t, s, models.ActionPetRestored, luna.ID); err != nil || actor != "bob" {
			t.Errorf("restore's audit: %q %v", actor, err)
		}
		// The restored pet can be edited again from its new version.
		if _, err := s.EditPet(ctx, luna.ID, got.Version, models.NewPet{Name: "Luna", CategoryID: 1, Status: models.StatusSold}, "bob"); err != nil {
			t.Errorf("editing the restored pet: %v", err)
		}
		// A restore of a pet in the list is "already".
		if r, err := s.RestorePets(ctx, []models.PetVersion{{ID: rex.ID}}, "bob"); err != nil || !slices.Equal(r.Already, []int64{rex.ID}) {
			t.Errorf("restoring a pet in the list = %+v, %v", r, err)
		}
	})
}

// Many pets archived and restored at once: one transaction each, every
// pet's events, and the archive pages newest first by keyset.
func TestArchiveManyAndPage(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		now := base
		s.SetClock(func() time.Time { return now })
		var pvs []models.PetVersion
		for i := range 7 {
			p := newPet(t, s, fmt.Sprintf("Pet %d", i), models.Statuses[i%3])
			pvs = append(pvs, models.PetVersion{ID: p.ID, Version: p.Version})
		}
		_, head := readAll(t, s, models.FeedStart)
		// Archived in three moments: the page order is newest first, by id
		// among those archived at once.
		for i, part := range [][]models.PetVersion{pvs[:3], pvs[3:5], pvs[5:]} {
			now = base.Add(time.Duration(i+1) * time.Minute)
			if res, err := s.ArchivePets(ctx, part, "ana"); err != nil || len(res.Moved) != len(part) {
				t.Fatalf("ArchivePets = %+v, %v", res, err)
			}
		}
		if c := statusCounts(t, s); c.Total() != 0 {
			t.Errorf("counts after archiving every pet: %v", c)
		}
		var order []int64
		var cur models.ArchiveCursor
		for {
			page, err := s.ListArchivedPets(ctx, cur, 3)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range page.Pets {
				order = append(order, p.ID)
			}
			if page.Next.ID == 0 {
				break
			}
			if cur, err = models.ParseArchiveCursor(page.Next.String()); err != nil {
				t.Fatal(err)
			}
		}
		ids := func(pvs ...models.PetVersion) []int64 {
			var out []int64
			for _, pv := range pvs {
				out = append(out, pv.ID)
			}
			slices.Reverse(out)
			return out
		}
		want := slices.Concat(ids(pvs[5:]...), ids(pvs[3:5]...), ids(pvs[:3]...))
		if !slices.Equal(order, want) {
			t.Errorf("the archive's pages: %v, want %v", order, want)
		}
		if n, err := s.CountArchivedPets(ctx); err != nil || n != 7 {
			t.Errorf("CountArchivedPets = %d, %v", n, err)
		}
		evs, _ := readAll(t, s, head)
		if len(evs) != 7 {
			t.Errorf("%d events for 7 archives", len(evs))
		}
		var back []models.PetVersion
		for _, pv := range pvs {
			back = append(back, models.PetVersion{ID: pv.ID, Version: pv.Version + 1})
		}
		if res, err := s.RestorePets(ctx, back, "ana"); err != nil || len(res.Moved) != 7 {
			t.Fatalf("RestorePets = %+v, %v", res, err)
		}
		if c := statusCounts(t, s); c[models.StatusAvailable] != 3 || c[models.StatusPending] != 2 || c[models.StatusSold] != 2 {
			t.Errorf("counts after restoring every pet: %v", c)
		}
		if _, err := models.ParseArchiveCursor("12.x"); err == nil {
			t.Error("a bad cursor was read")
		}
	})
}

// 50 archives of one pet at once: exactly one archives it, and the feed
// holds one event.
func TestArchiveConcurrently(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		p := newPet(t, s, "Contested", models.StatusAvailable)
		_, head := readAll(t, s, models.FeedStart)
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			moved int
		)
		for i := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Half from the version seen, half whatever the version.
				pv := models.PetVersion{ID: p.ID, Version: p.Version}
				if i%2 == 1 {
					pv.Version = 0
				}
				res, err := s.ArchivePets(ctx, []models.PetVersion{pv}, fmt.Sprintf("member%d", i))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				moved += len(res.Moved)
				mu.Unlock()
			}()
		}
		wg.Wait()
		if moved != 1 {
			t.Errorf("%d of 50 concurrent archives archived the pet, want 1", moved)
		}
		evs, _ := readAll(t, s, head)
		if len(evs) != 1 || evs[0].Type != models.EventPetArchived {
			t.Errorf("the feed holds %d events, want one pet.archived: %+v", len(evs), evs)
		}
		if c := statusCounts(t, s); c.Total() != 0 {
			t.Errorf("counts after the archives: %v", c)
		}
		if n := modelstest.AuditCounts(t, s)[models.ActionPetArchived]; n != 1 {
			t.Errorf("%d archive audit events, want 1", n)
		}

		// 20 restores at once: one restores it, with one event.
		_, head = readAll(t, s, head)
		restored := 0
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := s.RestorePets(ctx, []models.PetVersion{{ID: p.ID, Version: p.Version + 1}}, "bob")
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				restored += len(res.Moved)
				mu.Unlock()
			}()
		}
		wg.Wait()
		evs, _ = readAll(t, s, head)
		if restored != 1 || len(evs) != 1 || evs[0].Type != models.EventPetRestored {
			t.Errorf("20 concurrent restores: %d restored, events %+v; want one and one pet.restored", restored, evs)
		}
		if c := statusCounts(t, s); c.Total() != 1 || wordRows(t, s, p.ID) == 0 {
			t.Errorf("after the restores: counts %v, %d words", c, wordRows(t, s, p.ID))
		}
	})
}

// An archive and an edit of the same version at once: exactly one wins,
// and the other writes nothing.
func TestArchiveRacesEdit(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		for round := range 10 {
			p := newPet(t, s, fmt.Sprintf("Race %d", round), models.StatusAvailable)
			var (
				wg               sync.WaitGroup
				archived, edited bool
				editErr          error
			)
			wg.Add(2)
			go func() {
				defer wg.Done()
				res, err := s.ArchivePets(ctx, []models.PetVersion{{ID: p.ID, Version: p.Version}}, "ana")
				if err != nil {
					t.Error(err)
				}
				archived = len(res.Moved) == 1
			}()
			go func() {
				defer wg.Done()
				_, editErr = s.EditPet(ctx, p.ID, p.Version, models.NewPet{Name: "Renamed", CategoryID: 2, Status: models.StatusSold}, "bob")
				edited = editErr == nil
			}()
			wg.Wait()
			if archived == edited {
				t.Fatalf("round %d: archived %v, edited %v (%v); want exactly one", round, archived, edited, editErr)
			}
			if !edited && models.ErrorCode(editErr) != models.CodeConflict {
				t.Errorf("round %d: the losing edit: %v, want a conflict", round, editErr)
			}
			_, getErr := s.GetPet(ctx, p.ID)
			_, archErr := s.GetArchivedPet(ctx, p.ID)
			if archived && (getErr == nil || archErr != nil) || edited && (getErr != nil || archErr == nil) {
				t.Errorf("round %d: the pet is in the list: %v, in the archive: %v", round, getErr == nil, archErr == nil)
			}
		}
		var total int64
		for _, st := range models.Statuses {
			total += int64(modelstest.CountPetsWithStatus(t, s, st))
		}
		if c := statusCounts(t, s); c.Total() != total {
			t.Errorf("counts say %d pets, the table holds %d", c.Total(), total)
		}
	})
}

// The purge deletes pets archived longer than the retention, in batches,
// each audited with its ids, and leaves the others; two purges at once
// delete each pet once.
func TestPurgeArchive(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		now := base
		s.SetClock(func() time.Time { return now })
		names := make([]string, 1203)
		for i := range names {
			names[i] = fmt.Sprintf("Old %d", i)
		}
		first := modelstest.MaxPetID(t, s) + 1
		modelstest.InsertPets(t, s, first, names)
		var old []models.PetVersion
		for i := range names {
			old = append(old, models.PetVersion{ID: first + int64(i)})
		}
		if res, err := s.ArchivePets(ctx, old, "ana"); err != nil || len(res.Moved) != len(old) {
			t.Fatalf("ArchivePets: %d moved, %v", len(res.Moved), err)
		}
		now = base.Add(10 * 24 * time.Hour)
		young := newPet(t, s, "Young", models.StatusAvailable)
		if _, err := s.ArchivePets(ctx, []models.PetVersion{{ID: young.ID, Version: young.Version}}, "ana"); err != nil {
			t.Fatal(err)
		}
		cutoff := base.Add(24 * time.Hour)
		var (
			wg     sync.WaitGroup
			purged [2]int64
		)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, err := s.PurgeArchive(ctx, cutoff)
				if err != nil {
					t.Error(err)
				}
				purged[i] = n
			}()
		}
		wg.Wait()
		if purged[0]+purged[1] != int64(len(names)) {
			t.Errorf("the purges deleted %v, want %d in all", purged, len(names))
		}
		if n, err := s.CountArchivedPets(ctx); err != nil || n != 1 {
			t.Errorf("%d pets left in the archive (%v), want the young one", n, err)
		}
		if _, err := s.GetArchivedPet(ctx, young.ID); err != nil {
			t.Errorf("the young archived pet was purged: %v", err)
		}
		events, _, err := s.ListAuditEvents(ctx, models.AuditQuery{Action: models.ActionPetsPurged, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 3 {
			t.Errorf("%d purge audit events, want 3 batches of at most 500", len(events))
		}
		seen := map[int64]bool{}
		for _, ev := range events {
			_, list, _ := strings.Cut(ev.Detail, ": ids ")
			for _, f := range strings.Split(list, ", ") {
				var id int64
				if _, err := fmt.Sscan(f, &id); err != nil || seen[id] {
					t.Fatalf("purge detail %q: id %q unreadable or twice", ev.Detail, f)
				}
				seen[id] = true
			}
			if ev.ActorKind != models.ActorKindSystem {
				t.Errorf("purge audited as %q, want the service", ev.ActorKind)
			}
		}
		if len(seen) != len(names) || !seen[first] || !seen[first+int64(len(names))-1] {
			t.Errorf("the purge audit lists %d ids, want %d", len(seen), len(names))
		}
		if n, err := s.PurgeArchive(ctx, cutoff); err != nil || n != 0 {
			t.Errorf("a purge with nothing to purge: %d, %v", n, err)
		}
	})
}

// A restore whose id a pet of the list holds (a backup restored onto a
// database whose id counter had not passed the archive's ids) leaves both
// as they are and says so, instead of failing.
func TestRestoreOverTakenID(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		p := newPet(t, s, "Original", models.StatusAvailable)
		if _, err := s.ArchivePets(ctx, []models.PetVersion{{ID: p.ID, Version: p.Version}}, "ana"); err != nil {
			t.Fatal(err)
		}
		modelstest.InsertPets(t, s, p.ID, []string{"Usurper"})
		res, err := s.RestorePets(ctx, []models.PetVersion{{ID: p.ID, Version: p.Version + 1}}, "ana")
		if err != nil || len(res.Moved) != 0 || !slices.Equal(res.Already, []int64{p.ID}) {
			t.Fatalf("RestorePets over a taken id = %+v, %v; want it skipped as already in the list", res, err)
		}
		if got, err := s.GetPet(ctx, p.ID); err != nil || got.Name != "Usurper" {
			t.Errorf("the list's pet %+v, %v", got, err)
		}
		if a, err := s.GetArchivedPet(ctx, p.ID); err != nil || a.Name != "Original" {
			t.Errorf("the archived pet %+v, %v", a, err)
		}
	})
}

// The server's purge runs in the background from the moment it is
// started: a pet archived longer than the retention goes, a younger one
// stays.
func TestPurgeArchiveEvery(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		var mu sync.Mutex
		now := base
		s.SetClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
		old, young := newPet(t, s, "Old", models.StatusAvailable), newPet(t, s, "Young", models.StatusSold)
		if _, err := s.ArchivePets(ctx, []models.PetVersion{{ID: old.ID, Version: 1}}, "ana"); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		now = base.Add(90 * time.Minute)
		mu.Unlock()
		if _, err := s.ArchivePets(ctx, []models.PetVersion{{ID: young.ID, Version: 1}}, "ana"); err != nil {
			t.Fatal(err)
		}
		s.PurgeArchiveEvery(time.Hour)
		for range 300 {
			if _, err := s.GetArchivedPet(ctx, old.ID); models.ErrorCode(err) == models.CodeNotFound {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if _, err := s.GetArchivedPet(ctx, old.ID); models.ErrorCode(err) != models.CodeNotFound {
			t.Fatalf("the pet archived 90 minutes ago was not purged with a retention of an hour: %v", err)
		}
		if _, err := s.GetArchivedPet(ctx, young.ID); err != nil {
			t.Errorf("the pet archived just now was purged: %v", err)
		}
		if actor, detail, err := modelstest.LastAudit(t, s, models.ActionPetsPurged, 0); err != nil || actor != models.ActorArchivePurge ||
			!strings.HasSuffix(detail, ": ids "+fmt.Sprint(old.ID)) {
			t.Errorf("purge audit %q %q %v", actor, detail, err)
		}
	})
}
