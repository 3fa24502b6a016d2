package main

import (
	"context"
	"strings"
	"testing"

	"petstore/internal/testkit"
	"petstore/models"
)

// Bad webhook flags are refused in one line, exit 2, before the database
// is opened; --help says what each command does.
func TestWebhookUsage(t *testing.T) {
	t.Parallel()
	checkUsage(t, []usageCase{
		{"create without url", []string{"webhook", "create"}, 2, "Usage: petstore webhook create --url URL"},
		{"loopback url", []string{"webhook", "create", "--url", "http://127.0.0.1:8080/hook"}, 2, "loopback"},
		{"metadata address", []string{"webhook", "create", "--url", "http://169.254.169.254/latest"}, 2, "link-local"},
		{"localhost", []string{"webhook", "create", "--url", "https://localhost/hook"}, 2, "WEBHOOK_ALLOW_PRIVATE"},
		{"not http", []string{"webhook", "create", "--url", "ftp://hooks.example.com/"}, 2, "http"},
		{"unknown event", []string{"webhook", "create", "--url", "https://hooks.example.com/", "--event", "pet.deleted"}, 2, `Unknown event type "pet.deleted"`},
		{"delete without id", []string{"webhook", "delete"}, 2, "Usage: petstore webhook delete ID"},
		{"rotate a name", []string{"webhook", "rotate", "abc"}, 2, `"abc" is not a webhook id`},
		{"create help", []string{"webhook", "create", "--help"}, 0, "signing secret"},
		{"rotate help", []string{"webhook", "rotate", "--help"}, 0, "24h"},
		{"group help", []string{"webhook", "--help"}, 0, "create list delete rotate"},
	}, func(t *testing.T, c usageCase, r testkit.Result) {
		if c.wantCode == 2 && !strings.HasPrefix(c.want, "Usage") {
			testkit.WantOneLine(t, "stderr", r.Stderr)
		}
	})
}

// create prints the secret alone; list shows the endpoint without it;
// rotate prints a new one and keeps the old valid; delete removes it; each
// is audited as the command line's.
func TestWebhookCommands(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabase(t, func(t *testing.T, databaseURL string) {
		vars := map[string]string{"DATABASE_URL": databaseURL}
		r := runCLI(t, vars, "", "migrate")
		testkit.WantCode(t, r, 0)
		r = runCLI(t, vars, "", "webhook", "create", "--url", "https://hooks.example.com/petstore", "--event", "pet.updated",
			"--event", "pet.created", "--description", "Acme's copy")
		testkit.WantCode(t, r, 0)
		secret := testkit.WantOneLine(t, "stdout", r.Stdout)
		if !strings.HasPrefix(secret, "whsec_") || len(secret) < 40 {
			t.Fatalf("create printed %q, want a whsec_ secret", secret)
		}
		r = runCLI(t, vars, "", "webhook", "list")
		testkit.WantCode(t, r, 0)
		if !strings.Contains(r.Stdout, "https://hooks.example.com/petstore") || !strings.Contains(r.Stdout, "pet.created,pet.updated") ||
			!strings.Contains(r.Stdout, "enabled") || strings.Contains(r.Stdout, "whsec_") {
			t.Fatalf("list:\n%s", r.Stdout)
		}
		r = runCLI(t, vars, "", "webhook", "rotate", "1")
		testkit.WantCode(t, r, 0)
		rotated := testkit.WantOneLine(t, "stdout", r.Stdout)
		if !strings.HasPrefix(rotated, "whsec_") || rotated == secret {
			t.Fatalf("rotate printed %q", rotated)
		}
		store := testkit.OpenStore(t, databaseURL)
		w, err := store.GetWebhook(context.Background(), 1)
		if err != nil || w.Secret != rotated || w.PreviousSecret == nil || *w.PreviousSecret != secret {
			t.Fatalf("after rotate: %+v, %v", w, err)
		}
		r = runCLI(t, vars, "", "webhook", "delete", "1")
		testkit.WantCode(t, r, 0)
		r = runCLI(t, vars, "", "webhook", "delete", "1")
		testkit.WantCode(t, r, 1)
		events, _, err := store.ListAuditEvents(context.Background(), models.AuditQuery{TargetType: models.TargetWebhook, TargetID: 1})
		if err != nil || len(events) != 3 {
			t.Fatalf("audit: %+v, %v", events, err)
		}
		for _, e := range events {
			if e.Actor != models.ActorCLI || e.ActorKind != models.ActorKindCLI {
				t.Errorf("audit event %s by %s (%s), want the command line", e.Action, e.Actor, e.ActorKind)
			}
		}
	})
}
