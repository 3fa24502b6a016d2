package models_test

import (
	"context"
	"testing"

	"petstore/models"
	"petstore/models/modelstest"
)

// AuditNames names what events act on as it is called now, and leaves out
// what no longer exists.
func TestAuditNames(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		p, err := s.CreatePet(ctx, models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable}, "test")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.EditPet(ctx, p.ID, p.Version, models.NewPet{Name: "Luna", CategoryID: 1, Status: models.StatusAvailable}, "test"); err != nil {
			t.Fatal(err)
		}
		u, err := s.CreateUserWithRole(ctx, "bob", "correct-horse-battery-9", models.RoleEditor, "test")
		if err != nil {
			t.Fatal(err)
		}
		k, _, err := s.CreateAPIKey(ctx, "shop", "test")
		if err != nil {
			t.Fatal(err)
		}
		w, err := s.CreateWebhook(ctx, models.WebhookInput{URL: "https://partner.example/hook"}, "whsec_test", "test")
		if err != nil {
			t.Fatal(err)
		}
		events := []models.AuditEvent{
			{TargetType: models.TargetPet, TargetID: p.ID}, {TargetType: models.TargetPet, TargetID: p.ID},
			{TargetType: models.TargetPet, TargetID: p.ID + 1000},
			{TargetType: models.TargetUser, TargetID: u.ID}, {TargetType: models.TargetAPIKey, TargetID: k.ID},
			{TargetType: models.TargetWebhook, TargetID: w.ID}, {TargetType: models.TargetPet},
		}
		names, err := s.AuditNames(ctx, events)
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			typ  string
			id   int64
			want string
		}{
			{models.TargetPet, p.ID, "Luna"}, {models.TargetUser, u.ID, "bob"}, {models.TargetAPIKey, k.ID, "shop"},
			{models.TargetWebhook, w.ID, "https://partner.example/hook"},
		} {
			if got := names[tt.typ][tt.id]; got != tt.want {
				t.Errorf("%s %d is named %q, want %q", tt.typ, tt.id, got, tt.want)
			}
		}
		if n, ok := names[models.TargetPet][p.ID+1000]; ok {
			t.Errorf("a pet that does not exist is named %q", n)
		}
		if none, err := s.AuditNames(ctx, nil); err != nil || len(none) != 0 {
			t.Errorf("no events: %v, %v", none, err)
		}
	})
}
