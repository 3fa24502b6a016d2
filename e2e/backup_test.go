package e2e

import (
	"encoding/base64"
	"net/http"
	"net/url"
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
// before, through the real binary: the bootstrap key lists, reads and
// creates pets, the admin signs in with the password and the authenticator
// app, the webhook signs a real delivery with the secret printed before,
// the feed resumes from a cursor taken before, and new pets get ids above
// the old.
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
	// The key that seals the authenticator apps' secrets is not in the
	// backup: the moved service is given the same one.
	secretKey := base64.StdEncoding.EncodeToString([]byte("backup-move-test-secret-key-32b!"))
	vars := testkit.ServeVars(sourceURL)
	vars["PETSTORE_SECRET_KEY"] = secretKey
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
	rex := testkit.WantCreated(t, partner.CreatePet("Rex the first"), "Rex the first")
	totp := enrolTOTP(t, testkit.SignedIn(t, a.Base, boot.Username, boot.Password))
	seed := testkit.RunBinary(t, map[string]string{"DATABASE_URL": sourceURL}, "seed", "--pets", strconv.Itoa(pets))
	testkit.WantCode(t, seed, 0)
	a.Stop(t)
	// The endpoint is registered last, once the service is stopped, so
	// that only what the moved service does is delivered to it.
	receiver := testkit.NewWebhookReceiver(t, nil)
	secret := createWebhook(t, map[string]string{"DATABASE_URL": sourceURL, "WEBHOOK_ALLOW_PRIVATE": "true"}, receiver.URL)

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

	movedVars := webhookVars(targetURL)
	movedVars["PETSTORE_SECRET_KEY"] = secretKey
	b := testkit.ServeBinary(t, "on "+to, movedVars)
	if strings.Contains(b.Stdout.String(), "First start") {
		t.Errorf("the restored service bootstrapped again:\n%s", b.Stdout.String())
	}
	moved := testkit.NewAPIClient(b.Base, boot.Key)
	if r := moved.Get("/v1/pets?limit=1"); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"Rex"`) {
		t.Fatalf("the old key listing pets on the restored service: %s", r)
	}
	if r := moved.Get("/v1/pets/" + strconv.FormatInt(rex.ID, 10)); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"Rex the first"`) {
		t.Fatalf("the old key reading pet %d on the restored service: %s", rex.ID, r)
	}
	signInWithCode(t, b.Base, boot.Username, boot.Password, totp)
	store := testkit.OpenStore(t, targetURL)
	if n := modelstest.CountRows(t, store, modelstest.Pets); n != pets+4 {
		t.Errorf("%d pets after the move, want %d", n, pets+4)
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
	// The restored endpoint signs its deliveries with the secret printed
	// when it was created, before the backup.
	var got []testkit.WebhookRequest
	for deadline := time.Now().Add(time.Minute); len(got) == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for _, q := range receiver.Requests() {
			if q.EventType == "pet.created" && strings.Contains(string(q.Body), `"After the move"`) {
				got = append(got, q)
			}
		}
	}
	if len(got) == 0 {
		t.Fatalf("no delivery of the new pet's creation reached the restored endpoint (%d requests)", len(receiver.Requests()))
	}
	if err := got[0].CheckSignature(secret); err != nil {
		t.Errorf("the delivery after the move does not verify with the secret printed before the backup: %v", err)
	}
}

// enrolTOTP turns two-step sign-in with an authenticator app on for the
// member signed in to c, through the console's forms, and returns the
// app's secret.
func enrolTOTP(t *testing.T, c *testkit.Console) string {
	t.Helper()
	acct := c.Get("/admin/account")
	if acct.Status != http.StatusOK {
		t.Fatalf("GET /admin/account: %s", acct)
	}
	begun := c.Post("/admin/account/totp", url.Values{"csrf_token": {testkit.CSRFToken(t, acct)}})
	if begun.Status != http.StatusSeeOther {
		t.Fatalf("begin two-step sign-in: %s", begun)
	}
	setup := c.Get(begun.Header.Get("Location"))
	secret := strings.ReplaceAll(testkit.HTMLDoc(t, setup).Find(`[data-testid="totp-secret"]`).Text(), " ", "")
	if len(secret) != 32 {
		t.Fatalf("the setup page shows the secret as %q: %s", secret, setup)
	}
	done := c.Post("/admin/account/totp/confirm", url.Values{"csrf_token": {testkit.CSRFToken(t, setup)},
		"code": {models.TOTPCode(secret, time.Now())}})
	if done.Status != http.StatusOK {
		t.Fatalf("confirm two-step sign-in: %s", done)
	}
	return secret
}

// signInWithCode signs in to the console on base with the password, which
// asks for the second step, then with the app's next code, and opens the
// pets.
func signInWithCode(t *testing.T, base, username, password, secret string) {
	t.Helper()
	c := testkit.NewConsole(base)
	first := c.SignIn(t, username, password)
	if first.Status != http.StatusSeeOther || !strings.HasPrefix(first.Header.Get("Location"), "/admin/login/code") {
		t.Fatalf("the password after the move: %s to %q, want the second step", first, first.Header.Get("Location"))
	}
	step := c.Get("/admin/login/code")
	// The next step's code: the confirmation spent the current one's, and
	// the restored account remembers it.
	r := c.Post("/admin/login/code", url.Values{"csrf_token": {testkit.CSRFToken(t, step)},
		"code": {models.TOTPCode(secret, time.Now().Add(models.TOTPPeriod*time.Second))}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("the second step after the move: %s", r)
	}
	if pets := c.Get("/admin/pets"); pets.Status != http.StatusOK {
		t.Fatalf("the admin's console after the move: %s", pets)
	}
}
