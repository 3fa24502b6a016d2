package models_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

// backupFixture is what populate wrote and a restored store must honour.
type backupFixture struct {
	password  string
	key       string
	secret    string
	webhookID int64
	cursor    int64 // a cursor in the middle of the feed
	maxPetID  int64
	userID    int64
	totp      string   // the authenticator app's secret
	recovery  []string // unused recovery codes
	passkey   string   // a passkey's credential id
	// scoped is a key that may only read, expiring in a year; revoked a
	// key that was revoked.
	scoped, revoked string
	// goneWebhook is the id of a webhook deleted before the backup: the
	// newest id the table gave, which a restored store must not give again.
	goneWebhook int64
	// fresh is an idempotency record's key within its time; stale's
	// expired before the backup.
	freshKey, staleKey int64
}

// populate gives s a bit of everything a backup must carry: an account
// with a password, an API key, a webhook, pets with names of every
// script, changes of status and name, a session, an idempotency record.
func populate(t *testing.T, s *models.Store) backupFixture {
	t.Helper()
	ctx := context.Background()
	f := backupFixture{password: "correct horse battery staple", secret: "whsec_" + strings.Repeat("k", 40)}
	u, err := s.CreateUserWithRole(ctx, "ann", f.password, models.RoleAdmin, "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, f.key, err = s.CreateAPIKey(ctx, "partner", "test"); err != nil {
		t.Fatal(err)
	}
	w, err := s.CreateWebhook(ctx, models.WebhookInput{URL: "https://hooks.example.com/p", Description: "Acme"}, f.secret, "test")
	if err != nil {
		t.Fatal(err)
	}
	f.webhookID = w.ID
	names := []string{"Rex", "Mochi 🐾", "Ünë", "猫", "O'Brien \"quoted\"", "tab\tand\\slash"}
	for i := range 30 {
		p, err := s.CreatePet(ctx, models.NewPet{Name: fmt.Sprintf("%s %d", names[i%len(names)], i), CategoryID: int64(i%5 + 1),
			Status: models.StatusAvailable}, "test")
		if err != nil {
			t.Fatal(err)
		}
		f.maxPetID = max(f.maxPetID, p.ID)
		if i == 15 {
			page, err := s.ReadEvents(ctx, models.FeedStart, 1000)
			if err != nil {
				t.Fatal(err)
			}
			f.cursor = page.Next
		}
		if i%3 == 0 {
			if _, err := s.UpdatePetStatus(ctx, p.ID, models.StatusSold, "test"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.CreateSession(ctx, models.Session{UserID: u.ID, Data: []byte("x"), CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	// Second factors: an authenticator app with its recovery codes, and a
	// passkey.
	f.userID = u.ID
	en, err := s.BeginTOTP(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	f.totp = en.Secret
	if _, f.recovery, err = s.ConfirmTOTP(ctx, u.ID, models.TOTPCode(en.Secret, time.Now()), "192.0.2.1", ""); err != nil {
		t.Fatal(err)
	}
	f.passkey = "cred-" + strings.Repeat("p", 20)
	if _, err := s.AddPasskey(ctx, u.ID, "laptop", f.passkey, `{"id":"x"}`, ""); err != nil {
		t.Fatal(err)
	}
	// Keys with scopes, an expiry and a revocation.
	if _, f.scoped, err = s.CreateAPIKeyFrom(ctx, models.APIKeyInput{Name: "reader", Scopes: []string{"pets:read"}, Expires: "365d"}, "test"); err != nil {
		t.Fatal(err)
	}
	k, revoked, err := s.CreateAPIKeyFrom(ctx, models.APIKeyInput{Name: "gone", Scopes: []string{"pets:write"}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	f.revoked = revoked
	if _, err := s.RevokeAPIKey(ctx, k.ID, "test"); err != nil {
		t.Fatal(err)
	}
	// The newest webhook deleted: its id is past every remaining one.
	gone, err := s.CreateWebhook(ctx, models.WebhookInput{URL: "https://hooks.example.com/gone"}, "whsec_"+strings.Repeat("g", 40), "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteWebhook(ctx, gone.ID, "test"); err != nil {
		t.Fatal(err)
	}
	f.goneWebhook = gone.ID
	// Idempotency records: one past its expiry (taken two days ago by the
	// store's clock), one within it.
	once := func(apiKeyID int64, key string) {
		c, _, err := s.ClaimIdempotencyKey(ctx, apiKeyID, key, []byte("POST /v1/pets "+key))
		if err != nil {
			t.Fatal(err)
		}
		respond := func(p models.Pet) models.StoredResponse {
			return models.StoredResponse{Status: 201, Body: []byte("{}")}
		}
		p, err := s.CreatePetOnce(ctx, models.NewPet{Name: key, CategoryID: 1, Status: models.StatusAvailable}, "test", c, respond)
		if err != nil {
			t.Fatal(err)
		}
		f.maxPetID = max(f.maxPetID, p.ID)
	}
	s.SetClock(func() time.Time { return time.Now().Add(-2 * models.IdempotencyTTL) })
	f.staleKey = 901
	once(f.staleKey, "stale")
	// The claim and the create start work in the background that reads
	// the clock: let it end before the clock is set back.
	s.WaitIdempotencyWork()
	s.WaitCountsCompaction()
	s.SetClock(time.Now)
	f.freshKey = 902
	once(f.freshKey, "fresh")
	return f
}

// backup writes s's backup to memory.
func backup(t *testing.T, s *models.Store) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := s.Backup(context.Background(), &buf, "test"); err != nil {
		t.Fatalf("backup: %v", err)
	}
	return buf.Bytes()
}

func restore(s *models.Store, data []byte, replace bool) error {
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	_, err := s.Restore(context.Background(), open, models.RestoreOptions{Replace: replace})
	return err
}

func contents(t *testing.T, data []byte) models.BackupRows {
	t.Helper()
	_, rows, err := models.BackupContents(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("read the backup: %v", err)
	}
	return rows
}

// Every pair of engines: what a restored store holds is, table by table
// and row by row, what the source held; and what the rows are for still
// works: the password signs in, the key authenticates, the webhook signs
// with its secret, the feed resumes from an old cursor, new pets and
// events get ids above the old ones, the counts agree, sessions are gone.
func TestBackupRoundTrip(t *testing.T) {
	t.Parallel()
	for _, from := range modelstest.Drivers {
		for _, to := range modelstest.Drivers {
			t.Run(from+"->"+to, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				src := modelstest.Open(t, from)
				f := populate(t, src)
				data := backup(t, src)
				dst := modelstest.Open(t, to)
				indexes := indexNames(t, dst)
				if err := restore(dst, data, false); err != nil {
					t.Fatalf("restore: %v", err)
				}
				if after := indexNames(t, dst); !slices.Equal(after, indexes) {
					t.Errorf("indexes after the restore:\n%v\nwant the schema's:\n%v", after, indexes)
				}
				want, got := contents(t, data), contents(t, backup(t, dst))
				for table, rows := range want {
					if !reflect.DeepEqual(got[table], rows) {
						t.Errorf("table %s differs after the restore:\nwant %v\ngot  %v", table, rows, got[table])
					}
				}
				if len(got) != len(want) {
					t.Errorf("restored store has tables %v, the backup %v", keys(got), keys(want))
				}
				if len(want["pets"]) != 32 || len(want["users"]) != 1 || len(want["events"]) == 0 || len(want["pet_name_words"]) == 0 {
					t.Errorf("the backup lacks rows: %d pets, %d users, %d events, %d words", len(want["pets"]), len(want["users"]),
						len(want["events"]), len(want["pet_name_words"]))
				}
				if _, err := dst.CheckPassword(ctx, "ann", f.password); err != nil {
					t.Errorf("password after restore: %v", err)
				}
				if _, err := dst.Authenticate(ctx, f.key); err != nil {
					t.Errorf("API key after restore: %v", err)
				}
				if w, err := dst.GetWebhook(ctx, f.webhookID); err != nil || w.Secret != f.secret {
					t.Errorf("webhook after restore: %+v, %v", w, err)
				}
				checkSecondFactors(t, dst, f)
				if k, err := dst.Authenticate(ctx, f.scoped); err != nil || k.Scopes.Has(models.ScopePetsWrite) || !k.Scopes.Has(models.ScopePetsRead) ||
					k.ExpiresAt == nil || k.ExpiresAt.Before(time.Now().Add(300*24*time.Hour)) {
					t.Errorf("the scoped, expiring key after restore: %+v, %v", k, err)
				}
				if _, err := dst.Authenticate(ctx, f.revoked); err == nil {
					t.Error("the revoked key authenticates after restore")
				}
				var idem []int64
				for _, r := range want["idempotency_keys"] {
					idem = append(idem, r["api_key_id"].(int64))
				}
				if !slices.Equal(idem, []int64{f.freshKey}) {
					t.Errorf("idempotency records in the backup: of keys %v, want only the unexpired one's (%d)", idem, f.freshKey)
				}
				if w, err := dst.CreateWebhook(ctx, models.WebhookInput{URL: "https://hooks.example.com/new"}, "whsec_"+strings.Repeat("n", 40), "test"); err != nil || w.ID <= f.goneWebhook {
					t.Errorf("a new webhook after restore: id %d (%v); want one above the deleted %d, which the source gave last", w.ID, err, f.goneWebhook)
				}
				before, err := src.ReadEvents(ctx, f.cursor, 1000)
				if err != nil {
					t.Fatal(err)
				}
				after, err := dst.ReadEvents(ctx, f.cursor, 1000)
				if err != nil {
					t.Fatalf("feed from an old cursor after restore: %v", err)
				}
				if len(before.Events) == 0 || !sameEvents(before.Events, after.Events) || before.Next != after.Next {
					t.Errorf("feed from cursor %d: %d events before, %d after (next %d, %d)", f.cursor, len(before.Events), len(after.Events),
						before.Next, after.Next)
				}
				wantCounts, _ := src.PetStatusCounts(ctx)
				if gotCounts, err := dst.PetStatusCounts(ctx); err != nil || !reflect.DeepEqual(gotCounts, wantCounts) {
					t.Errorf("status counts after restore: %v (%v), want %v", gotCounts, err, wantCounts)
				}
				if n := modelstest.CountRows(t, dst, modelstest.Sessions); n != 0 {
					t.Errorf("%d sessions after restore, want none", n)
				}
				p, err := dst.CreatePet(ctx, models.NewPet{Name: "New", CategoryID: 1, Status: models.StatusAvailable}, "test")
				if err != nil || p.ID <= f.maxPetID {
					t.Errorf("a new pet after restore: %+v, %v; want an id above %d", p, err, f.maxPetID)
				}
				next, err := dst.ReadEvents(ctx, after.Next, 10)
				if err != nil || len(next.Events) != 1 || next.Events[0].Pet.ID != p.ID {
					t.Errorf("the new pet's event after the old ones: %+v, %v", next, err)
				}
			})
		}
	}
}

// indexNames lists the indexes of s's database, each as table.index.
func indexNames(t *testing.T, s *models.Store) []string {
	t.Helper()
	query := "SELECT tbl_name || '.' || name FROM sqlite_master WHERE type = 'index' ORDER BY 1"
	if s.Driver() == models.DriverMySQL {
		query = "SELECT DISTINCT CONCAT(table_name, '.', index_name) FROM information_schema.statistics WHERE table_schema = DATABASE() ORDER BY 1"
	}
	rows, err := s.SQLDB().QueryContext(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if len(names) < 10 {
		t.Fatalf("only %d indexes: %v", len(names), names)
	}
	return names
}

// checkSecondFactors checks that f's member still has each second factor
// on s: the authenticator app's current code, an unused recovery code,
// the passkey.
func checkSecondFactors(t *testing.T, s *models.Store, f backupFixture) {
	t.Helper()
	ctx := context.Background()
	if on, err := s.HasSecondFactor(ctx, f.userID); err != nil || !on {
		t.Errorf("two-step sign-in after restore: %v, %v", on, err)
	}
	// The next step's code: the current one may be the one that confirmed
	// the app, which the restored replay guard refuses.
	if _, how, err := s.VerifySecondStep(ctx, f.userID, models.TOTPCode(f.totp, time.Now().Add(30*time.Second)), "192.0.2.1"); err != nil || how == "recovery code" {
		t.Errorf("the authenticator app's code after restore: %q, %v", how, err)
	}
	if _, how, err := s.VerifySecondStep(ctx, f.userID, f.recovery[3], "192.0.2.1"); err != nil || how != "recovery code" {
		t.Errorf("a recovery code after restore: %q, %v", how, err)
	}
	if p, err := s.PasskeyByCredentialID(ctx, f.passkey); err != nil || p.UserID != f.userID || p.Name != "laptop" {
		t.Errorf("the passkey after restore: %+v, %v", p, err)
	}
}

func sameEvents(a, b []models.Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Type != b[i].Type || a[i].Pet.ID != b[i].Pet.ID || a[i].Pet.Name != b[i].Pet.Name ||
			!a[i].OccurredAt.Truncate(time.Microsecond).Equal(b[i].OccurredAt.Truncate(time.Microsecond)) {
			return false
		}
	}
	return true
}

func keys(m models.BackupRows) []string {
	var k []string
	for t := range m {
		k = append(k, t)
	}
	slices.Sort(k)
	return k
}

// Every table of the schema is in a backup unless it is excluded by name:
// a table added by a migration is backed up without anyone remembering to.
func TestBackupHoldsEveryTable(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		tables, err := s.SchemaTables(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		rows := contents(t, backup(t, s))
		for _, table := range tables {
			_, excluded := models.BackupExcluded[table]
			if _, held := rows[table]; held == excluded {
				t.Errorf("table %s: in the backup %v, excluded %v: want exactly one", table, held, excluded)
			}
		}
		for _, table := range []string{"pets", "pet_name_words", "pet_status_counts", "users", "api_keys", "audit_events", "settings",
			"events", "event_clock", "webhook_endpoints", "webhook_deliveries", "idempotency_keys"} {
			if _, held := rows[table]; !held {
				t.Errorf("the backup lacks table %s", table)
			}
		}
	})
}

// rewrite decompresses a backup, lets edit change its lines (trailer
// excluded), and writes it again with a trailer that matches: a file that
// is whole as a file but whose content was changed.
func rewrite(t *testing.T, data []byte, edit func(lines []string) []string) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	lines = edit(lines[:len(lines)-1])
	counts := map[string]int64{}
	table := ""
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "[") {
			counts[table]++
			continue
		}
		var tl struct{ Table string }
		json.Unmarshal([]byte(l), &tl)
		table = tl.Table
		counts[table] += 0
	}
	body := strings.Join(lines, "\n") + "\n"
	sum := sha256.Sum256([]byte(body))
	trailer, _ := json.Marshal(map[string]any{"trailer": map[string]any{"rows": counts, "sha256": hex.EncodeToString(sum[:])}})
	return gz(t, body+string(trailer)+"\n")
}

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(s))
	zw.Close()
	return buf.Bytes()
}

// A damaged, truncated or foreign file is refused with one line saying
// what is wrong, and the target, which holds data and was to be replaced,
// is left exactly as it was; so is it when a write fails midway.
func TestRestoreRefusesDamagedFiles(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		src := modelstest.Open(t, s.Driver())
		populate(t, src)
		good := backup(t, src)
		populate(t, s)
		tables := []modelstest.Table{modelstest.Pets, modelstest.Users, modelstest.APIKeys, modelstest.AuditEvents, modelstest.Sessions}
		before := modelstest.Snapshot(t, s, tables...)
		flipped := slices.Clone(good)
		flipped[len(flipped)/2] ^= 0x40
		cases := []struct {
			name string
			data []byte
			want string
		}{
			{"empty", nil, "not gzip-compressed"},
			{"foreign", []byte("id,name\n1,Rex\n"), "not gzip-compressed"},
			{"foreign gzip", gz(t, "{\"hello\":1}\n"), "not a petstore backup"},
			{"truncated", good[:len(good)*2/3], "truncated"},
			{"cut at the trailer", rewriteRaw(t, good, func(s string) string { return s[:strings.LastIndex(s[:len(s)-1], "\n")+1] }), "truncated"},
			{"flipped byte", flipped, "not a usable petstore backup"},
			{"newer format", rewrite(t, good, func(l []string) []string {
				l[0] = strings.Replace(l[0], `"version":1`, `"version":2`, 1)
				return l
			}), "format version is 2"},
			{"newer schema", rewrite(t, good, func(l []string) []string {
				l[0] = strings.Replace(l[0], `"schema_version":`, `"schema_version":9`, 1)
				return l
			}), "newer than this petstore's"},
			{"wrong checksum", rewriteRaw(t, good, func(s string) string {
				i := strings.Index(s, `"Rex 0"`)
				return s[:i] + `"Rex 9"` + s[i+7:]
			}), "checksum does not match"},
			{"unknown column", rewrite(t, good, func(l []string) []string {
				for i, x := range l {
					if strings.HasPrefix(x, `{"table":"pets"`) {
						l[i] = strings.Replace(x, `"name":"name"`, `"name":"nickname"`, 1)
					}
				}
				return l
			}), "column pets.nickname"},
			// The same user twice: the write fails at the second one, after
			// other tables were written.
			{"failure midway", rewrite(t, good, func(l []string) []string {
				for i, x := range l {
					if strings.HasPrefix(x, `{"table":"users"`) {
						return slices.Insert(l, i+2, l[i+1])
					}
				}
				t.Fatal("no users")
				return nil
			}), "restore: write users"},
		}
		for _, c := range cases {
			err := restore(s, c.data, true)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: restore said %v, want one line with %q", c.name, err, c.want)
			}
			if _, err := models.CheckBackup(bytes.NewReader(c.data)); err == nil && c.name != "failure midway" && c.name != "unknown column" &&
				c.name != "newer schema" {
				t.Errorf("%s: check passed", c.name)
			}
			if after := modelstest.Snapshot(t, s, tables...); after != before {
				t.Errorf("%s: the target changed", c.name)
			}
		}
	})
}

// rewriteRaw edits a backup's decompressed bytes and compresses them
// again, trailer untouched.
func rewriteRaw(t *testing.T, data []byte, edit func(string) string) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return gz(t, edit(string(raw)))
}

// A target that holds data is refused without Replace and left alone;
// with it, it holds the backup's rows alone, and its sessions are gone.
func TestRestoreReplace(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		src := modelstest.Open(t, s.Driver())
		populate(t, src)
		data := backup(t, src)
		if _, err := s.CreatePet(context.Background(), models.NewPet{Name: "Only here", CategoryID: 1, Status: models.StatusAvailable}, "test"); err != nil {
			t.Fatal(err)
		}
		before := modelstest.Snapshot(t, s, modelstest.Pets)
		if err := restore(s, data, false); !errors.Is(err, models.ErrTargetNotEmpty) || !strings.Contains(err.Error(), "--replace") {
			t.Fatalf("restore over data: %v", err)
		}
		if modelstest.Snapshot(t, s, modelstest.Pets) != before {
			t.Fatal("a refused restore changed the pets")
		}
		populate(t, s)
		if err := restore(s, data, true); err != nil {
			t.Fatalf("restore --replace: %v", err)
		}
		want, got := contents(t, data), contents(t, backup(t, s))
		for table, rows := range want {
			if !reflect.DeepEqual(got[table], rows) {
				t.Errorf("table %s after --replace:\nwant %v\ngot  %v", table, rows, got[table])
			}
		}
		if n := modelstest.CountRows(t, s, modelstest.Sessions); n != 0 {
			t.Errorf("%d sessions after --replace", n)
		}
	})
}

// A backup taken while six writers create pets holds every pet whose
// create was answered before the backup began, and is consistent as of
// one instant: each pet it holds has its audit row and its creation event,
// and it holds no audit row or event of a pet it lacks.
func TestBackupDuringWriters(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var mu sync.Mutex
		var acked []int64
		var wg sync.WaitGroup
		for w := range 6 {
			wg.Go(func() {
				for i := 0; ctx.Err() == nil; i++ {
					p, err := s.CreatePet(ctx, models.NewPet{Name: fmt.Sprintf("w%d-%d", w, i), CategoryID: 1, Status: models.StatusAvailable}, "test")
					if err != nil {
						if ctx.Err() == nil {
							t.Errorf("writer %d: %v", w, err)
						}
						return
					}
					mu.Lock()
					acked = append(acked, p.ID)
					mu.Unlock()
				}
			})
		}
		waitFor := func(n int) {
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
				mu.Lock()
				got := len(acked)
				mu.Unlock()
				if got >= n {
					return
				}
				if t.Failed() || time.Now().After(deadline) {
					cancel()
					wg.Wait()
					t.Fatalf("%d creates answered, waiting for %d", got, n)
				}
			}
		}
		waitFor(200)
		mu.Lock()
		before := slices.Clone(acked)
		mu.Unlock()
		data := backup(t, s)
		// Writers go on during the backup; some creates after its start.
		waitFor(len(before) + 100)
		cancel()
		wg.Wait()
		rows := contents(t, data)
		pets := map[int64]bool{}
		for _, p := range rows["pets"] {
			pets[p["id"].(int64)] = true
		}
		for _, id := range before {
			if !pets[id] {
				t.Fatalf("pet %d, created before the backup began, is not in it", id)
			}
		}
		audits, events := map[int64]int{}, map[int64]int{}
		for _, a := range rows["audit_events"] {
			if a["action"] == models.ActionPetCreated {
				audits[a["target_id"].(int64)]++
			}
		}
		for _, e := range rows["events"] {
			if e["type"] == "pet.created" {
				events[e["pet_id"].(int64)]++
			}
		}
		for id := range pets {
			if audits[id] != 1 || events[id] != 1 {
				t.Errorf("pet %d: %d creation audit rows and %d creation events in the backup, want 1 each", id, audits[id], events[id])
			}
		}
		if len(audits) != len(pets) || len(events) != len(pets) {
			t.Errorf("%d pets, %d pets with audit rows, %d with events", len(pets), len(audits), len(events))
		}
		t.Logf("%d pets acknowledged before the backup, %d in it, %d in all", len(before), len(pets), len(acked))
	})
}

// A backup of an older schema restores into a new database, which is
// migrated to the backup's version, loaded, then migrated on; a database
// already past that version refuses it in a line that says what to do.
func TestRestoreOlderBackup(t *testing.T) {
	t.Parallel()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			latest, err := models.LatestSchemaVersion(driver)
			if err != nil {
				t.Fatal(err)
			}
			src := storeAt(t, driver, latest-1)
			if _, err := src.SQLDB().ExecContext(ctx, `INSERT INTO pets (name, category_id, status, created_at, updated_at)
				VALUES ('Old timer', 7, 'sold', '2025-01-02 03:04:05', '2025-01-02 03:04:05')`); err != nil {
				t.Fatal(err)
			}
			data := backup(t, src)
			open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }

			dst := openUnmigrated(t, driver, modelstest.Database(t, driver).DSN)
			v, err := models.VerifyBackup(open)
			if err != nil {
				t.Fatal(err)
			}
			sum, migrated, err := dst.MigrateAndRestore(ctx, v, open, models.RestoreOptions{})
			if err != nil {
				t.Fatalf("restore an older backup: %v", err)
			}
			if sum.Header.SchemaVersion != latest-1 || migrated.Version != latest {
				t.Errorf("backup at %d, migrated to %d; want %d then %d", sum.Header.SchemaVersion, migrated.Version, latest-1, latest)
			}
			if p, err := dst.GetPet(ctx, 1); err != nil || p.Name != "Old timer" || p.CategoryID != 7 {
				t.Errorf("the old pet after restore: %+v, %v", p, err)
			}

			current := modelstest.Open(t, driver)
			_, _, err = current.MigrateAndRestore(ctx, v, open, models.RestoreOptions{Replace: true})
			if err == nil || !strings.Contains(err.Error(), "older than this database's") || !strings.Contains(err.Error(), "new, empty database") {
				t.Errorf("an older backup over a current database: %v", err)
			}
		})
	}
}

// stallingWriter holds the first write until released, telling started
// when it begins to wait.
type stallingWriter struct {
	buf      bytes.Buffer
	once     sync.Once
	started  chan struct{}
	released chan struct{}
}

func (w *stallingWriter) Write(p []byte) (int, error) {
	w.once.Do(func() {
		close(w.started)
		<-w.released
	})
	return w.buf.Write(p)
}

// A backup does not hold up writers: while it is stopped in the middle of
// writing its file, its snapshot open, a pet is created and changed; the
// backup then holds the database as it was when it began, without them.
func TestBackupDoesNotBlockWriters(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		populate(t, s)
		w := &stallingWriter{started: make(chan struct{}), released: make(chan struct{})}
		done := make(chan error, 1)
		go func() {
			_, err := s.Backup(ctx, w, "test")
			done <- err
		}()
		select {
		case <-w.started:
		case err := <-done:
			t.Fatalf("the backup ended without writing: %v", err)
		}
		// A guard against a hang, not a measure: a writer the backup blocked
		// would wait until the backup ended, which waits for this.
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		p, err := s.CreatePet(wctx, models.NewPet{Name: "During the backup", CategoryID: 1, Status: models.StatusAvailable}, "test")
		if err == nil {
			_, err = s.UpdatePetStatus(wctx, p.ID, models.StatusSold, "test")
		}
		cancel()
		close(w.released)
		if err != nil {
			t.Fatalf("a write while the backup ran: %v", err)
		}
		if err := <-done; err != nil {
			t.Fatalf("backup: %v", err)
		}
		for _, row := range contents(t, w.buf.Bytes())["pets"] {
			if row["id"].(int64) == p.ID {
				t.Errorf("the backup holds pet %d, created after it began", p.ID)
			}
		}
	})
}
