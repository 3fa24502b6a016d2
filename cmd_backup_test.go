package main

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
