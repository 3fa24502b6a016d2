package models_test

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

// These tests start bulk jobs and some set the package's chunk hook, so
// none of them runs in parallel.

// seedBulk adds n example pets (SeedPets: 12 of 20 available).
func seedBulk(tb testing.TB, s *models.Store, n int) {
	tb.Helper()
	if _, err := s.SeedPets(context.Background(), n, "test", nil); err != nil {
		tb.Fatal(err)
	}
}

// runBulk starts a bulk change of the filter to status and waits for it
// to end; it returns the job as it ended.
func runBulk(tb testing.TB, s *models.Store, filter url.Values, status models.Status) models.BulkJob {
	tb.Helper()
	ctx := context.Background()
	l, _, err := models.BulkFilter(filter, time.UTC)
	if err != nil {
		tb.Fatal(err)
	}
	total, err := s.CountMatching(ctx, l)
	if err != nil {
		tb.Fatal(err)
	}
	job, err := s.StartBulkStatus(ctx, filter, time.UTC, status, total, "ana")
	if err != nil {
		tb.Fatalf("StartBulkStatus: %v", err)
	}
	s.WaitBulkJobs()
	job, err = s.GetBulkJob(ctx, job.ID)
	if err != nil {
		tb.Fatal(err)
	}
	return job
}

// Every pet of the filter is changed, in several chunks, each with what a
// single status change writes; pets outside the filter are not; the job is
// audited once with its count and filter.
func TestBulkStatusChangesEveryMatch(t *testing.T) {
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		seedBulk(t, s, 2*models.BulkChunk+100)
		available := modelstest.CountPetsWithStatus(t, s, models.StatusAvailable)
		pending := modelstest.CountPetsWithStatus(t, s, models.StatusPending)
		sold := modelstest.CountPetsWithStatus(t, s, models.StatusSold)
		if available <= models.BulkChunk {
			t.Fatalf("only %d available pets: the test needs more than a chunk", available)
		}
		chunks := 0
		defer models.SetBulkChunkHook(func(models.BulkJob) { chunks++ })()
		auditBefore := modelstest.AuditCounts(t, s)[models.ActionPetStatusChanged]

		job := runBulk(t, s, url.Values{"status": {"available"}, "before": {"99"}}, models.StatusSold)

		if job.State != models.BulkDone || job.Total != available || job.Changed != available || job.Processed != available ||
			job.Already != 0 || job.Stale != 0 || job.RunningSlot != nil || job.FinishedAt == nil {
			t.Errorf("job = %+v; want done with %d changed", job, available)
		}
		if chunks < 2 {
			t.Errorf("%d chunks; want one transaction per %d pets", chunks, models.BulkChunk)
		}
		if got := modelstest.CountPetsWithStatus(t, s, models.StatusAvailable); got != 0 {
			t.Errorf("%d pets still available", got)
		}
		if got := modelstest.CountPetsWithStatus(t, s, models.StatusSold); got != sold+available {
			t.Errorf("%d pets sold; want %d", got, sold+available)
		}
		if got := modelstest.CountPetsWithStatus(t, s, models.StatusPending); got != pending {
			t.Errorf("%d pets pending; want %d (outside the filter)", got, pending)
		}
		if got := modelstest.AuditCounts(t, s)[models.ActionPetStatusChanged] - auditBefore; got != available {
			t.Errorf("%d status change audit events; want one per pet, %d", got, available)
		}
		counts, err := s.PetStatusCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if counts[models.StatusAvailable] != 0 || counts[models.StatusSold] != int64(sold+available) {
			t.Errorf("status counts = %+v; want them to follow the change", counts)
		}
		events, _, err := s.ListAuditEvents(ctx, models.AuditQuery{Action: models.ActionPetsBulkStatus, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 1 || events[0].Actor != "ana" ||
			!strings.Contains(events[0].Detail, "set "+strconv.Itoa(available)+" pets to sold") ||
			!strings.Contains(events[0].Detail, "filter: status available") {
			t.Errorf("bulk audit events = %+v; want one with its count and filter", events)
		}
		// Again: nothing matches any more.
		if again := runBulk(t, s, url.Values{"status": {"available"}}, models.StatusSold); again.Changed != 0 || again.State != models.BulkDone {
			t.Errorf("second job = %+v; want done, nothing changed", again)
		}
	})
}

// A name search is followed too, and a pet already in the status is
// counted as such, not written.
func TestBulkStatusSearch(t *testing.T) {
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		a := newPet(t, s, "Luna", models.StatusAvailable)
		b := newPet(t, s, "Luna Two", models.StatusPending)
		c := newPet(t, s, "Rex", models.StatusAvailable)
		job := runBulk(t, s, url.Values{"q": {"luna"}}, models.StatusPending)
		if job.Changed != 1 || job.Already != 1 || job.Total != 2 {
			t.Errorf("job = %+v; want 1 changed, 1 already", job)
		}
		for _, want := range []struct {
			p  models.Pet
			st models.Status
			v  int64
		}{{a, models.StatusPending, 2}, {b, models.StatusPending, 1}, {c, models.StatusAvailable, 1}} {
			if got := getForEdit(t, s, want.p.ID); got.Status != want.st || got.Version != want.v {
				t.Errorf("%s = %s v%d; want %s v%d", want.p.Name, got.Status, got.Version, want.st, want.v)
			}
		}
	})
}

// Each chunk reads the filter afresh: a pet that someone else moved out of
// the filter after the job started is not changed.
func TestBulkStatusRereadsFilter(t *testing.T) {
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		seedBulk(t, s, 2*models.BulkChunk)
		// The oldest available pet is in the last chunk (newest first).
		var oldest models.Pet
		if _, err := s.ExportPets(ctx, models.PetListing{Status: models.StatusAvailable}, 1000, func(ps []models.Pet) error {
			oldest = ps[len(ps)-1]
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		once := sync.Once{}
		defer models.SetBulkChunkHook(func(models.BulkJob) {
			once.Do(func() {
				if _, err := s.UpdatePetStatus(ctx, oldest.ID, models.StatusPending, "bob"); err != nil {
					t.Error(err)
				}
			})
		})()
		job := runBulk(t, s, url.Values{"status": {"available"}}, models.StatusSold)
		if got := getForEdit(t, s, oldest.ID); got.Status != models.StatusPending {
			t.Errorf("the pet moved out of the filter is %s; want pending, as bob left it", got.Status)
		}
		if job.Processed != job.Total-1 || job.Changed != job.Total-1 {
			t.Errorf("job = %+v; want every match but one changed", job)
		}
	})
}

// One bulk change at a time, whichever instance starts it: of two started
// at once on two instances exactly one runs, and the other is refused with
// the running one named.
func TestBulkStatusOneAtATime(t *testing.T) {
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			ctx := context.Background()
			a, b := modelstest.OpenPair(t, driver)
			seedBulk(t, a, 2*models.BulkChunk)
			release := make(chan struct{})
			defer models.SetBulkChunkHook(func(models.BulkJob) { <-release })()
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, s := range []*models.Store{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = s.StartBulkStatus(ctx, url.Values{}, time.UTC, models.StatusSold, 1, "ana")
				}()
			}
			wg.Wait()
			refused := 0
			for _, err := range errs {
				switch {
				case errors.Is(err, models.ErrBulkRunning) && models.ErrorCode(err) == models.CodeConflict:
					refused++
				case err != nil:
					t.Errorf("start: %v", err)
				}
			}
			if refused != 1 {
				t.Errorf("errors = %v; want exactly one refused", errs)
			}
			if job, ok, err := b.RunningBulkJob(ctx); err != nil || !ok || job.State != models.BulkRunning {
				t.Errorf("RunningBulkJob = %+v, %v, %v; want the running job", job, ok, err)
			}
			close(release)
			a.WaitBulkJobs()
			b.WaitBulkJobs()
			if _, ok, err := a.RunningBulkJob(ctx); err != nil || ok {
				t.Errorf("RunningBulkJob after the end = %v, %v; want none", ok, err)
			}
			if _, err := b.StartBulkStatus(ctx, url.Values{}, time.UTC, models.StatusPending, 1, "ana"); err != nil {
				t.Errorf("start after the end: %v", err)
			}
			b.WaitBulkJobs()
		})
	}
}

// A job whose process died is not "running" for ever: once its lease has
// run out, the next look marks it failed, saying how far it got, and a new
// job may start.
func TestBulkStatusDeadRunner(t *testing.T) {
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		live, err := s.InsertOrphanBulkJob(ctx, time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.StartBulkStatus(ctx, url.Values{}, time.UTC, models.StatusSold, 0, "ana"); !errors.Is(err, models.ErrBulkRunning) {
			t.Fatalf("start beside a live job: %v; want ErrBulkRunning", err)
		}
		if _, err := s.GetBulkJob(ctx, live.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.ExpireBulkLease(ctx, live.ID); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetBulkJob(ctx, live.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != models.BulkFailed || got.RunningSlot != nil || got.Error == "" || got.Changed != 4 {
			t.Errorf("dead job = %+v; want failed with its progress kept", got)
		}
		events, _, err := s.ListAuditEvents(ctx, models.AuditQuery{Action: models.ActionPetsBulkStatus, Limit: 10})
		if err != nil || len(events) != 1 || !strings.Contains(events[0].Detail, "stopped after 4") {
			t.Errorf("audit = %+v, %v; want the failed job recorded once", events, err)
		}
		if _, err := s.StartBulkStatus(ctx, url.Values{}, time.UTC, models.StatusSold, 0, "ana"); err != nil {
			t.Errorf("start after the dead job: %v", err)
		}
		s.WaitBulkJobs()
	})
}

func TestFilterWords(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want string
	}{
		{"", "all pets"},
		{"before=5&sort=name", "all pets"},
		{"status=sold", "status sold"},
		{"q=cat&status=sold", `status sold, name search "cat"`},
		{"created_to=2026-02-01&category=3&created_from=2026-01-01", "category 3, added on or after 2026-01-01, added on or before 2026-02-01"},
	} {
		params, _ := url.ParseQuery(tc.q)
		if got := models.FilterWords(params); got != tc.want {
			t.Errorf("FilterWords(%q) = %q; want %q", tc.q, got, tc.want)
		}
	}
}
