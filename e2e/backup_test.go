package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
)

// Moving engines, as docs/operations.md tells an operator to: a service on
// SQLite with 100,000 pets is stopped and backed up; the backup is checked,
// restored into MySQL, and the service started there. Everything works as
// before, through the real binary: the bootstrap key lists pets, the admin
// signs in with the password, the webhook keeps its secret, the feed
// resumes from a cursor taken before, and new pets get ids above the old.
// The way back, MySQL to SQLite, is checked the same way with fewer pets.
func TestBackupMovesEngines(t *testing.T) {
	t.Parallel()
	pets := 100000
	if n, err := strconv.Atoi(os.Getenv("PETSTORE_MOVE_PETS")); err == nil && n > 0 {
		pets = n
	}
	t.Run("sqlite to mysql", func(t *testing.T) {
		t.Parallel()
		moveEngines(t, models.DriverSQLite, models.DriverMySQL, pets)
	})
	t.Run("mysql to sqlite", func(t *testing.T) {
		t.Parallel()
		moveEngines(t, models.DriverMySQL, models.DriverSQLite, 2000)
	})
}

// moveEngines runs a service on from with pets pets, backs it up, restores
// it into a fresh database on to and checks the service there.
func moveEngines(t *testing.T, from, to string, pets int) {
	sourceURL := modelstest.URL(t, from)
	targetURL := modelstest.URL(t, to)
	vars := testkit.ServeVars(sourceURL)
	a := testkit.ServeBinary(t, "on "+from, vars)
	boot := testkit.BootstrapOf(t, a.Stdout.String())
	partner := testkit.NewAPIClient(a.Base, boot.Key)
	for _, name := range []string{"Rex", "Mochi 🐾", "Ünë"} {
		testkit.WantCreated(t, partner.CreatePet(name), name)
	}
	first := "/v1/events?limit=2"
	events, cursor, err := testkit.EventsPage(first, partner.Get(first))
	if err != nil || len(events) != 2 {
		t.Fatalf("the feed's first page: %d events, %v", len(events), err)
	}
	hook := testkit.RunBinary(t, map[string]string{"DATABASE_URL": sourceURL}, "webhook", "create", "--url", "https://hooks.example.com/p")
	testkit.WantCode(t, hook, 0)
	secret := testkit.WantOneLine(t, "webhook create stdout", hook.Stdout)
	seed := testkit.RunBinary(t, map[string]string{"DATABASE_URL": sourceURL}, "seed", "--pets", strconv.Itoa(pets))
	testkit.WantCode(t, seed, 0)
	a.Stop(t)

	file := filepath.Join(t.TempDir(), "petstore.backup")
	start := time.Now()
	r := testkit.RunBinary(t, map[string]string{"DATABASE_URL": sourceURL}, "backup", "--out", file)
	testkit.WantCode(t, r, 0)
	testkit.FigureDuration(t, "backup_"+from+"_"+strconv.Itoa(pets)+"_pets", time.Since(start))
	if line := testkit.WantOneLine(t, "backup stdout", r.Stdout); !strings.HasPrefix(line, "wrote "+file) {
		t.Errorf("backup printed %q", line)
	}
	r = testkit.RunBinary(t, nil, "restore", "--check", "--in", file)
	testkit.WantCode(t, r, 0)
	start = time.Now()
	r = testkit.RunBinary(t, map[string]string{"DATABASE_URL": targetURL}, "restore", "--in", file)
	testkit.WantCode(t, r, 0)
	testkit.FigureDuration(t, "restore_"+to+"_"+strconv.Itoa(pets)+"_pets", time.Since(start))

	b := testkit.ServeBinary(t, "on "+to, testkit.ServeVars(targetURL))
	if strings.Contains(b.Stdout.String(), "First start") {
		t.Errorf("the restored service bootstrapped again:\n%s", b.Stdout.String())
	}
	moved := testkit.NewAPIClient(b.Base, boot.Key)
	if r := moved.Get("/v1/pets?limit=1"); r.Status != http.StatusOK {
		t.Fatalf("the old key on the restored service: %s", r)
	}
	if r := testkit.SignedIn(t, b.Base, boot.Username, boot.Password).Get("/admin/pets"); r.Status != http.StatusOK {
		t.Fatalf("the admin's console after the move: %s", r)
	}
	store := testkit.OpenStore(t, targetURL)
	if n := modelstest.CountRows(t, store, modelstest.Pets); n != pets+3 {
		t.Errorf("%d pets after the move, want %d", n, pets+3)
	}
	w, err := store.GetWebhook(t.Context(), 1)
	if err != nil || w.Secret != secret {
		t.Errorf("the webhook after the move: %+v, %v", w, err)
	}
	resumed, _, err := testkit.EventsPage(cursor, moved.Get(cursor))
	if err != nil || len(resumed) == 0 || resumed[0].Pet.Name != "Ünë" {
		t.Errorf("the feed from the old cursor %s: %d events (%v)", cursor, len(resumed), err)
	}
	maxID := modelstest.MaxPetID(t, store)
	p := testkit.WantCreated(t, moved.CreatePet("After the move"), "After the move")
	if p.ID <= maxID {
		t.Errorf("a new pet got id %d, not above the old ones (up to %d)", p.ID, maxID)
	}
}
