package web_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"petstore/models"
)

// The operations page shows admins the newest good backup and warns when
// the schedule falls behind or the last backup failed; other roles are
// refused and do not see it in the navigation.
func TestOperationsPage(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		b, _ := e.signedIn()
		p := b.get("/admin/operations")
		wantStatus(t, p, http.StatusOK)
		if text(p, `[data-testid="no-backups"]`) == "" || text(p, `[data-testid="backup-warning"]`) != "" {
			t.Errorf("without backups: %s", p.Body)
		}
		if nav := navLabels(b.get("/admin/pets")); !strings.Contains(strings.Join(nav, "|"), "Operations") {
			t.Errorf("admin's navigation lacks Operations: %q", nav)
		}

		slot := time.Now().UTC().Truncate(time.Hour)
		if ok, err := e.store.ClaimBackup(ctx, slot, 10*time.Minute, "host/1"); !ok || err != nil {
			t.Fatalf("claim: %v, %v", ok, err)
		}
		if ok, _ := e.store.ClaimBackup(ctx, slot, 10*time.Minute, "host/2"); ok {
			t.Fatal("a second claim of one interval succeeded")
		}
		sum := models.BackupSummary{Header: models.BackupHeader{SchemaVersion: 16, Petstore: "v9.9.9"}}
		if err := e.store.FinishBackup(ctx, slot, sum, "/var/backups/petstore-x.backup", 3<<20, nil); err != nil {
			t.Fatal(err)
		}
		p = b.get("/admin/operations")
		if text(p, `[data-testid="backup-size"]`) != "3.0 MiB" || text(p, `[data-testid="backup-version"]`) != "v9.9.9" ||
			text(p, `[data-testid="backup-schema"]`) != "16" || !strings.Contains(text(p, `[data-testid="backup-file"]`), "petstore-x.backup") {
			t.Errorf("after a backup: %s", text(p, `[data-testid="last-backup"]`))
		}
		if w := text(p, `[data-testid="backup-warning"]`); w != "" {
			t.Errorf("a fresh backup warns: %q", w)
		}

		// Within the console's idle timeout, so the admin stays signed in.
		e.advance(30 * time.Minute)
		if w := text(b.get("/admin/operations"), `[data-testid="backup-warning"]`); !strings.Contains(w, "more than twice the interval") {
			t.Errorf("a backup three intervals old: warning %q", w)
		}

		next := slot.Add(10 * time.Minute)
		e.store.ClaimBackup(ctx, next, 10*time.Minute, "host/1")
		e.store.FinishBackup(ctx, next, models.BackupSummary{}, "", 0, errors.New("backup: no space left on device"))
		p = b.get("/admin/operations")
		if w := text(p, `[data-testid="backup-warning"]`); !strings.Contains(w, "failed: backup: no space left on device") {
			t.Errorf("after a failed backup: warning %q", w)
		}
		if text(p, `[data-testid="backup-version"]`) != "v9.9.9" {
			t.Error("the newest good backup is no longer shown after a failure")
		}

		for _, role := range []models.Role{models.RoleViewer, models.RoleEditor} {
			_, m, _ := e.member("m-"+string(role), role)
			wantRefused(t, m.get("/admin/operations"), role)
			if nav := navLabels(m.get("/admin/pets")); strings.Contains(strings.Join(nav, "|"), "Operations") {
				t.Errorf("%s sees Operations in the navigation: %q", role, nav)
			}
		}
	})
}
