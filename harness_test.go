package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"petstore/internal/testkit"
	"petstore/models/modelstest"
	"strings"
	"testing"
	"time"
)

// The harness of the commands' tests: runCLI runs one command in this
// process through run, runWithoutDatabase one that must not touch the
// database, and serveInProcess runs `petstore serve` until the test stops
// it. The built binary, the clients and the checks of answers are in
// internal/testkit; the whole-product tests are in e2e/.

func TestMain(m *testing.M) { modelstest.Main(m) }

// runCLI runs one command in this process, to its end, with args, stdin and
// the environment vars.
func runCLI(tb testing.TB, vars map[string]string, stdin string, args ...string) testkit.Result {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, strings.NewReader(stdin), &stdout, &stderr, testkit.Env(vars))
	return testkit.Result{Code: code, Stdout: stdout.String(), Stderr: stderr.String()}
}

// runWithoutDatabase runs a command that must not touch the database (help,
// usage errors) with DATABASE_URL naming a fresh SQLite file. It fails the
// test if the file appears, or if a refused command printed on stdout.
func runWithoutDatabase(tb testing.TB, args ...string) testkit.Result {
	tb.Helper()
	dbPath := filepath.Join(tb.TempDir(), "petstore.db")
	r := runCLI(tb, map[string]string{"DATABASE_URL": "sqlite:" + dbPath}, "", args...)
	if r.Code != 0 && r.Stdout != "" {
		tb.Errorf("a usage error printed on stdout:\n%s", r.Stdout)
	}
	if _, err := os.Stat(dbPath); !errors.Is(err, os.ErrNotExist) {
		tb.Errorf("the database file was created (stat: %v)", err)
	}
	return r
}

// usageCase is a command that must not touch the database (help, usage
// errors): its exit code, and a fragment of what it prints.
type usageCase struct {
	name     string
	args     []string
	wantCode int
	want     string // in stdout for help, stderr otherwise
}

// checkUsage runs each case as a parallel subtest with runWithoutDatabase;
// more, when not nil, checks a case's result further.
func checkUsage(t *testing.T, cases []usageCase, more func(t *testing.T, c usageCase, r testkit.Result)) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runWithoutDatabase(t, tt.args...)
			testkit.WantCode(t, r, tt.wantCode)
			out := r.Stdout
			if tt.wantCode != 0 {
				out = r.Stderr
			}
			if more != nil {
				more(t, tt, r)
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("output lacks %q:\nstdout:\n%s\nstderr:\n%s", tt.want, r.Stdout, r.Stderr)
			}
		})
	}
}

// createKey runs apikey create in this process and returns the key it
// printed.
func createKey(tb testing.TB, vars map[string]string, name string, flags ...string) string {
	tb.Helper()
	r := runCLI(tb, vars, "", append([]string{"apikey", "create", "--name", name}, flags...)...)
	testkit.WantCode(tb, r, 0)
	key := testkit.WantOneLine(tb, "apikey create stdout", r.Stdout)
	if !testkit.KeyPattern.MatchString(key) {
		tb.Fatalf("apikey create printed %q, want the key alone (pst_...)", key)
	}
	if r.Stderr != "" {
		tb.Errorf("apikey create wrote on stderr:\n%s", r.Stderr)
	}
	return key
}

// serveInProcess runs `petstore serve` through run in a goroutine with the
// environment vars, and waits until it listens. Stopping it cancels run's
// context, which is what main does on SIGTERM.
func serveInProcess(tb testing.TB, vars map[string]string) *testkit.Instance {
	tb.Helper()
	p := testkit.StartInProcess(tb, "serve", func(ctx context.Context, stdout, stderr io.Writer) int {
		return run(ctx, []string{"serve"}, strings.NewReader(""), stdout, stderr, testkit.Env(vars))
	})
	p.WaitListening(tb, time.Minute)
	return p
}
