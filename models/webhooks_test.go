package models_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

func anyURL(string) error { return nil }

func newWebhook(tb testing.TB, s *models.Store, types ...string) models.Webhook {
	tb.Helper()
	in := models.WebhookInput{URL: "https://hooks.example.com/petstore", EventTypes: types}
	if err := in.Validate(anyURL); err != nil {
		tb.Fatal(err)
	}
	w, err := s.CreateWebhook(context.Background(), in, "whsec_test", "alice")
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

func encodeID(e models.Event) []byte { return []byte(fmt.Sprintf(`{"id":"%d"}`, e.ID)) }

// An endpoint gets the events committed after it was made, of the types
// it asked for, each queued once even when instances fan out at once.
func TestWebhookFanOut(t *testing.T) {
	t.Parallel()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			a, b := modelstest.OpenPair(t, driver)
			ctx := context.Background()
			before := newPet(t, a, "Before", models.StatusAvailable)
			all := newWebhook(t, a)
			updates := newWebhook(t, a, "pet.updated")
			var pets []models.Pet
			for i := range 30 {
				pets = append(pets, newPet(t, a, fmt.Sprint("Pet ", i), models.StatusAvailable))
			}
			if _, err := a.UpdatePetStatus(ctx, pets[0].ID, models.StatusSold, "test"); err != nil {
				t.Fatal(err)
			}
			if _, err := a.UpdatePetStatus(ctx, before.ID, models.StatusSold, "test"); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for _, s := range []*models.Store{a, b, a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for _, w := range []models.Webhook{all, updates} {
						for {
							n, err := s.FanOutWebhook(ctx, w.ID, 7, encodeID)
							if err != nil {
								t.Error(err)
								return
							}
							if n < 7 {
								break
							}
						}
					}
				}()
			}
			wg.Wait()
			got := func(w models.Webhook) []string {
				ds, err := a.WebhookDeliveries(ctx, w.ID, 100)
				if err != nil {
					t.Fatal(err)
				}
				var s []string
				for i := len(ds) - 1; i >= 0; i-- {
					d := ds[i]
					if d.Status != models.DeliveryPending || d.Attempts != 0 || string(d.Body) != `{"id":"`+d.EventID+`"}` {
						t.Errorf("delivery %+v", d)
					}
					s = append(s, d.EventType)
				}
				return s
			}
			if g := got(all); len(g) != 32 || g[0] != "pet.created" || g[30] != "pet.updated" || g[31] != "pet.updated" {
				t.Errorf("every type: %d deliveries %v; want 30 creates and 2 updates, each once", len(g), g)
			}
			if g := got(updates); strings.Join(g, " ") != "pet.updated pet.updated" {
				t.Errorf("updates only: %v", g)
			}
		})
	}
}

// One instance at a time holds an endpoint's lease; a lease that runs out
// (a dead instance) is taken over.
func TestWebhookLease(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		w := newWebhook(t, s)
		claims := make(chan bool, 20)
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := s.ClaimWebhook(ctx, w.ID, fmt.Sprint("owner", i), time.Minute)
				if err != nil {
					t.Error(err)
				}
				claims <- ok
			}()
		}
		wg.Wait()
		close(claims)
		n := 0
		for ok := range claims {
			if ok {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d of 20 owners claimed the endpoint at once, want 1", n)
		}
		// Only the holder's release frees the endpoint.
		if err := s.ReleaseWebhook(ctx, w.ID, "nobody"); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.ClaimWebhook(ctx, w.ID, "latecomer", time.Minute); ok || err != nil {
			t.Fatalf("after a release by one that holds no lease, another claimed the endpoint: %v, %v", ok, err)
		}
		// A short lease, as one a dead instance left: it runs out.
		w2 := newWebhook(t, s)
		if ok, _ := s.ClaimWebhook(ctx, w2.ID, "dead", time.Millisecond); !ok {
			t.Fatal("a free endpoint was not claimed")
		}
		time.Sleep(5 * time.Millisecond)
		if ok, _ := s.ClaimWebhook(ctx, w2.ID, "alive", time.Minute); !ok {
			t.Fatal("an endpoint whose lease ran out was not taken over")
		}
		if ok, _ := s.ClaimWebhook(ctx, w2.ID, "dead", time.Minute); ok {
			t.Fatal("the dead owner took its endpoint back from a live lease")
		}
	})
}

// Attempts: a success clears the endpoint's failures; a failure puts off
// the endpoint's other deliveries until its retry; one failing past the
// limit disables the endpoint (audited); a failed delivery can be sent
// again.
func TestWebhookAttempts(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		w := newWebhook(t, s)
		for i := range 3 {
			newPet(t, s, fmt.Sprint("Pet ", i), models.StatusAvailable)
		}
		if _, err := s.FanOutWebhook(ctx, w.ID, 100, encodeID); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now().UTC()
		due, err := s.DueWebhookDeliveries(ctx, w.ID, t0.Add(time.Second), 10)
		if err != nil || len(due) != 3 {
			t.Fatalf("due = %d, %v", len(due), err)
		}
		retryAt := t0.Add(time.Hour)
		if _, err := s.RecordWebhookAttempt(ctx, due[0], models.WebhookAttempt{At: t0, Status: 500, Error: "answered 500", NextAttemptAt: retryAt}, 72*time.Hour); err != nil {
			t.Fatal(err)
		}
		if left, _ := s.DueWebhookDeliveries(ctx, w.ID, t0.Add(time.Minute), 10); len(left) != 0 {
			t.Fatalf("after a failure %d deliveries are still due before the retry", len(left))
		}
		if again, _ := s.DueWebhookDeliveries(ctx, w.ID, retryAt, 10); len(again) != 3 {
			t.Fatalf("at the retry %d deliveries are due, want 3", len(again))
		}
		w, _ = s.GetWebhook(ctx, w.ID)
		if w.ConsecutiveFailures != 1 || w.FailingSince == nil || !w.Enabled {
			t.Fatalf("after a failure: %+v", w)
		}
		if _, err := s.RecordWebhookAttempt(ctx, due[1], models.WebhookAttempt{At: t0, Status: 204, Delivered: true}, 72*time.Hour); err != nil {
			t.Fatal(err)
		}
		w, _ = s.GetWebhook(ctx, w.ID)
		if w.ConsecutiveFailures != 0 || w.FailingSince != nil || w.LastSuccessAt == nil {
			t.Fatalf("after a success: %+v", w)
		}
		// Failing from t0 to t0+73h: disabled.
		for _, at := range []time.Time{t0, t0.Add(73 * time.Hour)} {
			d, _ := s.DueWebhookDeliveries(ctx, w.ID, at.Add(100*time.Hour), 1)
			disabled, err := s.RecordWebhookAttempt(ctx, d[0], models.WebhookAttempt{At: at, Error: "connection refused", Final: true}, 72*time.Hour)
			if err != nil || disabled != at.After(t0) {
				t.Fatalf("attempt at %v: disabled %v, %v", at, disabled, err)
			}
		}
		w, _ = s.GetWebhook(ctx, w.ID)
		if w.Enabled || !strings.Contains(w.DisabledReason, "72h") {
			t.Fatalf("after failing 73 h: %+v", w)
		}
		events, _, _ := s.ListAuditEvents(ctx, models.AuditQuery{Action: models.ActionWebhookDisabled})
		if len(events) != 1 || events[0].ActorKind != models.ActorKindSystem {
			t.Fatalf("audit of the disabling: %+v", events)
		}
		if ok, _ := s.ClaimWebhook(ctx, w.ID, "x", time.Minute); ok {
			t.Fatal("a disabled endpoint was claimed")
		}
		ds, _ := s.WebhookDeliveries(ctx, w.ID, 10)
		var failed models.WebhookDelivery
		for _, d := range ds {
			if d.Status == models.DeliveryFailed {
				failed = d
			}
		}
		if err := s.ResendWebhookDelivery(ctx, w.ID, failed.ID, "alice"); err != nil {
			t.Fatal(err)
		}
		if err := s.ResendWebhookDelivery(ctx, w.ID, failed.ID+1000, "alice"); models.ErrorCode(err) != models.CodeConflict {
			t.Fatalf("resending an unknown delivery: %v", err)
		}
		if _, err := s.SetWebhookEnabled(ctx, w.ID, true, "alice"); err != nil {
			t.Fatal(err)
		}
		w, _ = s.GetWebhook(ctx, w.ID)
		if !w.Enabled || w.FailingSince != nil || w.ConsecutiveFailures != 0 {
			t.Fatalf("enabled again: %+v", w)
		}
	})
}

// A rotated secret signs beside the new one for its grace, then not.
func TestWebhookRotation(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		w := newWebhook(t, s)
		now := time.Now().UTC()
		w, err := s.RotateWebhookSecret(ctx, w.ID, "whsec_new", 24*time.Hour, "alice")
		if err != nil {
			t.Fatal(err)
		}
		w, _ = s.GetWebhook(ctx, w.ID)
		if got := w.Secrets(now.Add(time.Hour)); strings.Join(got, " ") != "whsec_new whsec_test" {
			t.Fatalf("secrets during the grace: %v", got)
		}
		if got := w.Secrets(now.Add(25 * time.Hour)); strings.Join(got, " ") != "whsec_new" {
			t.Fatalf("secrets after the grace: %v", got)
		}
		if _, err := s.DeleteWebhook(ctx, w.ID, "alice"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetWebhook(ctx, w.ID); models.ErrorCode(err) != models.CodeNotFound {
			t.Fatalf("a deleted endpoint: %v", err)
		}
	})
}

// Bad input names its field and is refused.
func TestWebhookInputValidate(t *testing.T) {
	t.Parallel()
	refuse := func(string) error { return fmt.Errorf("That address is refused.") }
	for _, tc := range []struct {
		in    models.WebhookInput
		check func(string) error
		field string
	}{
		{models.WebhookInput{URL: " "}, anyURL, models.FieldURL},
		{models.WebhookInput{URL: "https://x.example/" + strings.Repeat("a", 2000)}, anyURL, models.FieldURL},
		{models.WebhookInput{URL: "http://127.0.0.1/"}, refuse, models.FieldURL},
		{models.WebhookInput{URL: "https://x.example/", EventTypes: []string{"pet.deleted"}}, anyURL, models.FieldEventTypes},
		{models.WebhookInput{URL: "https://x.example/", Description: strings.Repeat("é", 256)}, anyURL, models.FieldDescription},
	} {
		err := tc.in.Validate(tc.check)
		var e *models.Error
		if !errors.As(err, &e) || len(e.Fields) == 0 || e.Fields[0].Field != tc.field {
			t.Errorf("%+v: %v, want an error on %s", tc.in, err, tc.field)
		}
	}
	in := models.WebhookInput{URL: " https://x.example/ ", EventTypes: []string{"pet.restored", "pet.created", "pet.created"}}
	if err := in.Validate(anyURL); err != nil || in.URL != "https://x.example/" || strings.Join(in.EventTypes, ",") != "pet.created,pet.restored" {
		t.Fatalf("a good input: %+v, %v", in, err)
	}
	every := models.WebhookInput{URL: "https://x.example/", EventTypes: models.WebhookEventTypes}
	if err := every.Validate(anyURL); err != nil || every.EventTypes != nil {
		t.Fatalf("every type named is every type, those added later too: %+v, %v", every, err)
	}
}
