package main

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"petstore/config"
	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
)

// Bad backup and restore flags are refused before the database is opened;
// --help says what each command does.
func TestBackupUsage(t *testing.T) {
	t.Parallel()
	checkUsage(t, []usageCase{
		{"backup without out", []string{"backup"}, 2, "Usage: petstore backup --out PATH|-"},
		{"backup help", []string{"backup", "--help"}, 0, "keep it where only operators can read it"},
		{"restore without in", []string{"restore"}, 2, "Usage: petstore restore --in PATH"},
		{"restore check and replace", []string{"restore", "--check", "--replace", "--in", "x"}, 2, "Usage: petstore restore"},
		{"restore help", []string{"restore", "--help"}, 0, "--replace"},
		{"top-level help lists them", []string{"--help"}, 0, "petstore backup --out PATH|-"},
		{"restore a missing file", []string{"restore", "--in", "/nonexistent/petstore.backup"}, 1, "cannot read the backup"},
	}, nil)
}

// The commands end to end on each engine: backup to a file and to stdout,
// check, restore into a fresh database; a second restore is refused
// without --replace; a damaged file is refused in one line with exit 1 and
// the target unchanged.
func TestBackupCommands(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabase(t, func(t *testing.T, databaseURL string) {
		vars := map[string]string{"DATABASE_URL": databaseURL}
		key := createKey(t, vars, "before")
		r := runCLI(t, vars, "", "seed", "--pets", "50")
		testkit.WantCode(t, r, 0)
		dir := t.TempDir()
		file := filepath.Join(dir, "petstore.backup")
		r = runCLI(t, vars, "", "backup", "--out", file)
		testkit.WantCode(t, r, 0)
		if line := testkit.WantOneLine(t, "stdout", r.Stdout); !strings.HasPrefix(line, "wrote "+file+" (") || !strings.Contains(line, "schema version") {
			t.Errorf("backup printed %q", line)
		}
		if info, err := os.Stat(file); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("backup file: %v, %v; want mode 0600", info, err)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(left) > 0 {
			t.Errorf("temporary files left: %v", left)
		}
		r = runCLI(t, vars, "", "backup", "--out", "-")
		testkit.WantCode(t, r, 0)
		if zr, err := gzip.NewReader(strings.NewReader(r.Stdout)); err != nil || !strings.Contains(r.Stderr, "wrote a backup to stdout") {
			t.Errorf("backup to stdout: %v, stderr %q", err, r.Stderr)
		} else {
			zr.Close()
		}
		r = runCLI(t, map[string]string{}, "", "restore", "--check", "--in", file)
		testkit.WantCode(t, r, 0)
		if !strings.Contains(r.Stdout, "is a whole backup") {
			t.Errorf("check printed %q", r.Stdout)
		}
		// Into the other engine.
		other := models.DriverSQLite
		if strings.HasPrefix(databaseURL, "sqlite:") {
			other = models.DriverMySQL
		}
		target := map[string]string{"DATABASE_URL": modelstest.URL(t, other)}
		r = runCLI(t, target, "", "restore", "--in", file)
		testkit.WantCode(t, r, 0)
		store := testkit.OpenStore(t, target["DATABASE_URL"])
		if _, err := store.Authenticate(t.Context(), key); err != nil {
			t.Errorf("the key after restore: %v", err)
		}
		if n := modelstest.CountRows(t, store, modelstest.Pets); n != 50 {
			t.Errorf("%d pets after restore", n)
		}
		before := modelstest.Snapshot(t, store, modelstest.Pets, modelstest.APIKeys, modelstest.AuditEvents)
		r = runCLI(t, target, "", "restore", "--in", file)
		testkit.WantCode(t, r, 1)
		if line := testkit.WantOneLine(t, "stderr", r.Stderr); !strings.Contains(line, "--replace") {
			t.Errorf("restore over data said %q", line)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		damaged := filepath.Join(dir, "damaged.backup")
		os.WriteFile(damaged, data[:len(data)/2], 0o600)
		for _, args := range [][]string{{"restore", "--in", damaged, "--replace"}, {"restore", "--check", "--in", damaged}} {
			r = runCLI(t, target, "", args...)
			testkit.WantCode(t, r, 1)
			if line := testkit.WantOneLine(t, "stderr", r.Stderr); !strings.HasPrefix(line, "petstore: "+damaged+": ") {
				t.Errorf("%v said %q", args, line)
			}
		}
		if after := modelstest.Snapshot(t, store, modelstest.Pets, modelstest.APIKeys, modelstest.AuditEvents); after != before {
			t.Error("a refused restore changed the target")
		}
		r = runCLI(t, target, "", "restore", "--in", file, "--replace")
		testkit.WantCode(t, r, 0)
	})
}

// Two instances on one database, each with its own directory, tick
// through ten intervals: each interval's backup is taken once, by one of
// them; each keeps its newest BACKUP_KEEP files; the files are whole
// backups; the status names the newest. A backup that cannot be written
// is recorded as failed.
func TestBackupSchedule(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		a, b := modelstest.OpenPair(t, driver)
		clock := time.Date(2026, 3, 1, 10, 30, 0, 0, time.UTC)
		now := func() time.Time { return clock }
		log := slog.New(slog.DiscardHandler)
		cfg := config.Backups{Interval: time.Hour, Keep: 3}
		var scheds []*backupSchedule
		for i, s := range []*models.Store{a, b} {
			cfg.Dir = filepath.Join(t.TempDir(), "backups")
			sc := newBackupSchedule(s, cfg, log)
			sc.instance, sc.now = fmt.Sprintf("instance %d", i), now
			if err := sc.prepare(); err != nil {
				t.Fatal(err)
			}
			scheds = append(scheds, sc)
		}
		ctx := context.Background()
		for round := range 10 {
			var took int
			for _, sc := range scheds {
				if sc.tick(ctx) {
					took++
				}
				if sc.tick(ctx) {
					t.Fatalf("round %d: a second tick in one interval took a backup", round)
				}
			}
			if took != 1 {
				t.Fatalf("round %d: %d instances took the interval's backup, want 1", round, took)
			}
			clock = clock.Add(time.Hour)
		}
		var files []string
		for _, sc := range scheds {
			got, _ := filepath.Glob(filepath.Join(sc.dir, "*"))
			if len(got) > 3 {
				t.Errorf("%s keeps %d files, want at most 3: %v", sc.dir, len(got), got)
			}
			files = append(files, got...)
		}
		newest := filepath.Base(slices.MaxFunc(files, func(x, y string) int { return strings.Compare(filepath.Base(x), filepath.Base(y)) }))
		if newest != "petstore-20260301T190000Z.backup" {
			t.Errorf("newest backup %s, want the last interval's", newest)
		}
		for _, f := range files {
			r := runCLI(t, nil, "", "restore", "--check", "--in", f)
			testkit.WantCode(t, r, 0)
		}
		st, err := a.BackupStatus(ctx)
		if err != nil || st.LastSuccess == nil || !st.LastSuccess.Slot.Equal(time.Date(2026, 3, 1, 19, 0, 0, 0, time.UTC)) ||
			st.LastSuccess.Size == 0 || st.LastSuccess.SchemaVersion == 0 {
			t.Fatalf("status: %+v, %v", st.LastSuccess, err)
		}
		if scheds[0].LastSuccess().IsZero() {
			t.Error("the metrics' last success is not known")
		}
		// Both directories gone, replaced by files: the next backup fails,
		// whichever instance takes it.
		for _, sc := range scheds {
			os.RemoveAll(sc.dir)
			os.WriteFile(sc.dir, nil, 0o600)
		}
		for _, sc := range scheds {
			sc.tick(ctx)
		}
		st, err = a.BackupStatus(ctx)
		if err != nil || st.Latest == nil || st.Latest.Error == "" || st.Latest.Succeeded() || !st.LastSuccess.Slot.Equal(time.Date(2026, 3, 1, 19, 0, 0, 0, time.UTC)) {
			t.Fatalf("status after a failed backup: %+v, %+v, %v", st.Latest, st.LastSuccess, err)
		}
	})
}

// serve with BACKUP_DIR takes a backup at its start (the interval has
// none yet), logs it, and its metrics carry the time it succeeded; a
// BACKUP_DIR that cannot be a directory stops the start in one line.
func TestServeScheduledBackups(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "backups")
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "petstore.db")
	srv := serveInProcess(t, map[string]string{"DATABASE_URL": dbURL, "LISTEN_ADDR": "127.0.0.1:0", "METRICS_ADDR": "127.0.0.1:0",
		"BACKUP_DIR": dir, "BACKUP_INTERVAL": "1h"})
	m := srv.WaitLog(t, regexp.MustCompile(`msg="metrics listening" addr=(\S+)`), 5*time.Second)
	srv.WaitLog(t, regexp.MustCompile(`msg="scheduled backup written" file=(\S+)`), time.Minute)
	files, _ := filepath.Glob(filepath.Join(dir, "petstore-*.backup"))
	if len(files) != 1 {
		t.Fatalf("backups in %s: %v", dir, files)
	}
	r := runCLI(t, nil, "", "restore", "--check", "--in", files[0])
	testkit.WantCode(t, r, 0)
	metrics := testkit.NewAPIClient("http://"+m[1], "")
	// The schedule reads the outcome back just after logging it: poll.
	var v float64
	var ok bool
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && v == 0; time.Sleep(20 * time.Millisecond) {
		v, ok = testkit.Sample(string(metrics.Get("/metrics").Body), "petstore_backup_last_success_timestamp_seconds")
	}
	if !ok || v < float64(time.Now().Add(-time.Hour).Unix()) {
		t.Errorf("petstore_backup_last_success_timestamp_seconds = %v (%v)", v, ok)
	}

	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, nil, 0o600)
	r = runCLI(t, map[string]string{"DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "p.db"), "LISTEN_ADDR": "127.0.0.1:0",
		"BACKUP_DIR": notDir}, "", "serve")
	testkit.WantCode(t, r, 1)
	if line := testkit.LastLine(r.Stderr); !strings.HasPrefix(line, "petstore: BACKUP_DIR: ") {
		t.Errorf("serve with a file as BACKUP_DIR said %q", line)
	}
}

// A backup of a database that holds no petstore schema (a wrong
// DATABASE_URL) is refused in one line, and creates no schema there.
func TestBackupOfNoSchema(t *testing.T) {
	t.Parallel()
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "empty.db")
	r := runCLI(t, map[string]string{"DATABASE_URL": dbURL}, "", "backup", "--out", filepath.Join(t.TempDir(), "x.backup"))
	testkit.WantCode(t, r, 1)
	if line := testkit.WantOneLine(t, "stderr", r.Stderr); !strings.Contains(line, "holds no petstore schema") {
		t.Errorf("backup of an empty database said %q", line)
	}
}

// A damaged, truncated or foreign file is refused by restore, on each
// engine, in one line naming the file, with exit code 1, and nothing is
// written: a populated database given --replace keeps its rows, and a new
// database stays as it was (no SQLite file appears; MySQL gets no schema,
// which backup then says).
func TestRestoreRefusesBadFilesUntouched(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		populated := map[string]string{"DATABASE_URL": modelstest.URL(t, driver)}
		testkit.WantCode(t, runCLI(t, populated, "", "seed", "--pets", "20"), 0)
		dir := t.TempDir()
		good := filepath.Join(dir, "good.backup")
		testkit.WantCode(t, runCLI(t, populated, "", "backup", "--out", good), 0)
		data, err := os.ReadFile(good)
		if err != nil {
			t.Fatal(err)
		}
		store := testkit.OpenStore(t, populated["DATABASE_URL"])
		tables := []modelstest.Table{modelstest.Pets, modelstest.Users, modelstest.APIKeys, modelstest.AuditEvents}
		before := modelstest.Snapshot(t, store, tables...)
		flipped := slices.Clone(data)
		flipped[len(flipped)/2] ^= 0x10
		var foreignGzip strings.Builder
		zw := gzip.NewWriter(&foreignGzip)
		zw.Write([]byte(`{"id":1,"name":"Rex"}` + "\n"))
		zw.Close()
		cases := []struct {
			name, want string
			data       []byte
		}{
			{"empty", "not gzip-compressed", nil},
			{"foreign", "not gzip-compressed", []byte("id,name\n1,Rex\n")},
			{"foreign gzip", "not a petstore backup", []byte(foreignGzip.String())},
			{"truncated", "truncated", data[:len(data)*3/4]},
			{"damaged", "not a usable petstore backup", flipped},
		}
		for _, c := range cases {
			file := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".backup")
			if err := os.WriteFile(file, c.data, 0o600); err != nil {
				t.Fatal(err)
			}
			fresh := modelstest.URL(t, driver)
			for _, run := range []struct {
				what string
				vars map[string]string
				args []string
			}{
				{"--replace over data", populated, []string{"restore", "--in", file, "--replace"}},
				{"into a new database", map[string]string{"DATABASE_URL": fresh}, []string{"restore", "--in", file}},
				{"--check", nil, []string{"restore", "--check", "--in", file}},
			} {
				r := runCLI(t, run.vars, "", run.args...)
				testkit.WantCode(t, r, 1)
				if line := testkit.WantOneLine(t, c.name+" "+run.what+" stderr", r.Stderr); !strings.HasPrefix(line, "petstore: "+file+": ") ||
					!strings.Contains(line, c.want) {
					t.Errorf("%s, %s: said %q, want one line naming the file with %q", c.name, run.what, line, c.want)
				}
				if r.Stdout != "" {
					t.Errorf("%s, %s: printed %q", c.name, run.what, r.Stdout)
				}
			}
			if after := modelstest.Snapshot(t, store, tables...); after != before {
				t.Errorf("%s: the populated database changed", c.name)
			}
			if path, ok := strings.CutPrefix(fresh, "sqlite:"); ok {
				if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s: the new SQLite database was created (%v)", c.name, err)
				}
			} else {
				r := runCLI(t, map[string]string{"DATABASE_URL": fresh}, "", "backup", "--out", filepath.Join(dir, "x.backup"))
				if r.Code != 1 || !strings.Contains(r.Stderr, "holds no petstore schema") {
					t.Errorf("%s: the new MySQL database got a schema: backup said %d %q", c.name, r.Code, r.Stderr)
				}
			}
		}
	})
}

// A backup that fails midway (here: stopped while it waits for a table
// another session holds locked) leaves no file under its name, no
// temporary file, and the previous backup of that name as it was.
func TestBackupFileFailingMidway(t *testing.T) {
	t.Parallel()
	// MariaDB: SQLite locks no table for a reader to wait on. The code
	// under test is the same for both engines.
	databaseURL := modelstest.URL(t, models.DriverMySQL)
	vars := map[string]string{"DATABASE_URL": databaseURL}
	testkit.WantCode(t, runCLI(t, vars, "", "seed", "--pets", "50"), 0)
	holder := testkit.OpenStore(t, databaseURL)
	store := testkit.OpenStore(t, databaseURL)
	dir := t.TempDir()
	path := filepath.Join(dir, "petstore.backup")
	if err := os.WriteFile(path, []byte("the previous backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	unlock := modelstest.LockTable(t, holder, modelstest.Users)
	defer unlock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := writeBackupFile(ctx, store, path)
		done <- err
	}()
	// The backup has begun once its temporary file exists; it cannot end
	// before users is unlocked.
	for {
		if tmp, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(tmp) > 0 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the backup ended while a table it reads was locked: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the stopped backup reported success")
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "the previous backup" {
		t.Errorf("the file under the backup's name: %q, %v; want the previous one untouched", data, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
