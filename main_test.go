package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"petstore/internal/testkit"
	"petstore/models"
)

func TestUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string // fragments of stdout
		wantOutput []string // fragments of stdout or stderr (flag usage goes to stderr)
		wantStderr []string // fragments of stderr
	}{
		{name: "version", args: []string{"version"}, wantStdout: []string{"petstore "}},
		{name: "help", args: []string{"help"}, wantStdout: []string{"Usage:", "petstore migrate", "petstore apikey revoke ID", "DATABASE_URL"}},
		{name: "--help", args: []string{"--help"}, wantStdout: []string{"Usage:", "petstore apikey create --name NAME", "DATABASE_URL"}},
		{name: "-h", args: []string{"-h"}, wantStdout: []string{"Usage:", "petstore user create"}},
		{name: "serve --help", args: []string{"serve", "--help"}, wantOutput: []string{"Usage: petstore serve"}},
		{name: "migrate --help", args: []string{"migrate", "--help"}, wantOutput: []string{"Usage: petstore migrate"}},
		{name: "user --help", args: []string{"user", "--help"}, wantOutput: []string{"Usage: petstore user", "create"}},
		{name: "user create --help", args: []string{"user", "create", "--help"}, wantOutput: []string{"Usage: petstore user create --username NAME", "-username", "standard input"}},
		{name: "apikey --help", args: []string{"apikey", "--help"}, wantOutput: []string{"Usage: petstore apikey", "create", "list", "revoke"}},
		{name: "apikey create --help", args: []string{"apikey", "create", "--help"}, wantOutput: []string{"Usage: petstore apikey create --name NAME", "-name"}},
		{name: "apikey list --help", args: []string{"apikey", "list", "--help"}, wantOutput: []string{"Usage: petstore apikey list"}},
		{name: "apikey revoke --help", args: []string{"apikey", "revoke", "--help"}, wantOutput: []string{"Usage: petstore apikey revoke ID"}},

		{name: "unknown command", args: []string{"frobnicate"}, wantCode: 2, wantStderr: []string{`unknown command "frobnicate"`, "Usage:"}},
		{name: "apikey without subcommand", args: []string{"apikey"}, wantCode: 2, wantStderr: []string{"Usage: petstore apikey"}},
		{name: "user without subcommand", args: []string{"user"}, wantCode: 2, wantStderr: []string{"Usage: petstore user"}},
		{name: "apikey unknown subcommand", args: []string{"apikey", "delete"}, wantCode: 2, wantStderr: []string{`unknown command "delete"`}},
		{name: "unknown flag", args: []string{"migrate", "--bogus"}, wantCode: 2, wantStderr: []string{"-bogus"}},
		{name: "apikey create without --name", args: []string{"apikey", "create"}, wantCode: 2, wantStderr: []string{"Usage: petstore apikey create"}},
		{name: "apikey create with empty --name", args: []string{"apikey", "create", "--name", ""}, wantCode: 2, wantStderr: []string{"Usage: petstore apikey create"}},
		{name: "user create without --username", args: []string{"user", "create"}, wantCode: 2, wantStderr: []string{"Usage: petstore user create"}},
		{name: "apikey revoke without id", args: []string{"apikey", "revoke"}, wantCode: 2, wantStderr: []string{"Usage: petstore apikey revoke ID"}},
		{name: "apikey revoke non-numeric id", args: []string{"apikey", "revoke", "abc"}, wantCode: 2, wantStderr: []string{`"abc" is not an API key id`}},
		{name: "apikey revoke zero id", args: []string{"apikey", "revoke", "0"}, wantCode: 2, wantStderr: []string{`"0" is not an API key id`}},
		{name: "apikey revoke signed id", args: []string{"apikey", "revoke", "+5"}, wantCode: 2, wantStderr: []string{`"+5" is not an API key id`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// None of these may touch the database.
			r := runWithoutDatabase(t, tt.args...)
			testkit.WantCode(t, r, tt.wantCode)
			for _, f := range tt.wantStdout {
				if !strings.Contains(r.Stdout, f) {
					t.Errorf("stdout lacks %q:\n%s", f, r.Stdout)
				}
			}
			for _, f := range tt.wantOutput {
				if !strings.Contains(r.Stdout+r.Stderr, f) {
					t.Errorf("output lacks %q:\nstdout:\n%s\nstderr:\n%s", f, r.Stdout, r.Stderr)
				}
			}
			for _, f := range tt.wantStderr {
				if !strings.Contains(r.Stderr, f) {
					t.Errorf("stderr lacks %q:\n%s", f, r.Stderr)
				}
			}
		})
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	r := runCLI(t, nil, "", "version")
	testkit.WantCode(t, r, 0)
	line := testkit.WantOneLine(t, "stdout", r.Stdout)
	if !regexp.MustCompile(`^petstore \S+ \(go[^)]+\)$`).MatchString(line) {
		t.Errorf("version line %q, want petstore VERSION (GO VERSION)", line)
	}
	if r.Stderr != "" {
		t.Errorf("stderr not empty: %s", r.Stderr)
	}
}

func TestBadConfiguration(t *testing.T) {
	t.Parallel()
	// Every command that loads the configuration refuses it the same way.
	commands := []struct {
		name  string
		args  []string
		stdin string
	}{
		{"default", nil, ""},
		{"serve", []string{"serve"}, ""},
		{"migrate", []string{"migrate"}, ""},
		{"user create", []string{"user", "create", "--username", "bob"}, "a long password\n"},
		{"apikey create", []string{"apikey", "create", "--name", "partner"}, ""},
		{"apikey list", []string{"apikey", "list"}, ""},
		{"apikey revoke", []string{"apikey", "revoke", "1"}, ""},
	}
	tests := []struct {
		name    string
		vars    map[string]string // DATABASE_URL defaults to a fresh SQLite file
		wantVar string
		secret  string // must not be printed
		// retries: the database is waited for, and each failed try is
		// logged before the final line.
		retries bool
	}{
		{name: "unknown database scheme", vars: map[string]string{"DATABASE_URL": "postgres://x"}, wantVar: "DATABASE_URL"},
		{name: "listen address", vars: map[string]string{"LISTEN_ADDR": "nonsense"}, wantVar: "LISTEN_ADDR"},
		{name: "public URL scheme", vars: map[string]string{"PETSTORE_PUBLIC_URL": "ftp://x"}, wantVar: "PETSTORE_PUBLIC_URL"},
		{name: "connect timeout", vars: map[string]string{"DATABASE_CONNECT_TIMEOUT": "soon"}, wantVar: "DATABASE_CONNECT_TIMEOUT"},
		{name: "pool size", vars: map[string]string{"DATABASE_MAX_OPEN_CONNS": "0"}, wantVar: "DATABASE_MAX_OPEN_CONNS"},
		{name: "trusted proxies", vars: map[string]string{"TRUSTED_PROXIES": "10.0.0.0/99"}, wantVar: "TRUSTED_PROXIES"},
		{name: "archive kept for no time", vars: map[string]string{"ARCHIVE_RETENTION": "0"}, wantVar: "ARCHIVE_RETENTION"},
		{name: "mysql URL without database", vars: map[string]string{"DATABASE_URL": "mysql://u:Hunter2secret@127.0.0.1:1/"}, wantVar: "DATABASE_URL", secret: "Hunter2secret"},
		{
			name:    "unreachable mysql",
			vars:    map[string]string{"DATABASE_URL": "mysql://u:p@127.0.0.1:1/db", "DATABASE_CONNECT_TIMEOUT": "1s"},
			wantVar: "DATABASE_URL", secret: ":p@", retries: true,
		},
		{
			name:    "unreachable mysql with a long password",
			vars:    map[string]string{"DATABASE_URL": "mysql://u:Hunter2secret@127.0.0.1:1/db", "DATABASE_CONNECT_TIMEOUT": "1s"},
			wantVar: "DATABASE_URL", secret: "Hunter2secret", retries: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, cmd := range commands {
				t.Run(cmd.name, func(t *testing.T) {
					t.Parallel()
					vars := map[string]string{"DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "petstore.db"), "LISTEN_ADDR": "127.0.0.1:0"}
					for k, v := range tt.vars {
						vars[k] = v
					}
					r := runCLI(t, vars, cmd.stdin, cmd.args...)
					testkit.WantCode(t, r, 1)
					stderr := r.Stderr
					if tt.retries {
						// DESIGN.md asks for one line; the store also logs every
						// failed try through the command's logger.
						stderr = testkit.RetryWarning.ReplaceAllString(stderr, "")
					}
					line := testkit.WantOneLine(t, "stderr", stderr)
					if !strings.HasPrefix(line, "petstore: "+tt.wantVar+": ") {
						t.Errorf("stderr %q does not start with petstore: %s: ", line, tt.wantVar)
					}
					if tt.secret != "" && strings.Contains(r.Stdout+r.Stderr, tt.secret) {
						t.Errorf("the password was printed:\nstdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
					}
					if r.Stdout != "" {
						t.Errorf("stdout not empty:\n%s", r.Stdout)
					}
				})
			}
		})
	}
}

var schemaVersion = regexp.MustCompile(`: schema at version (\d+)$`)

func TestMigrate(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabase(t, func(t *testing.T, databaseURL string) {
		vars := map[string]string{"DATABASE_URL": databaseURL}
		var versions []int
		for i := range 2 { // the second run finds nothing to do
			r := runCLI(t, vars, "", "migrate")
			testkit.WantCode(t, r, 0)
			m := schemaVersion.FindStringSubmatch(testkit.WantOneLine(t, "stdout", r.Stdout))
			if m == nil {
				t.Fatalf("run %d: stdout %q does not give the schema version", i+1, r.Stdout)
			}
			v, _ := strconv.Atoi(m[1])
			if v < 1 {
				t.Errorf("run %d: schema version %d, want at least 1", i+1, v)
			}
			versions = append(versions, v)
		}
		if versions[0] != versions[1] {
			t.Errorf("schema version %d after the first run, %d after the second", versions[0], versions[1])
		}
	})
}

// apiKeyRow is one row of apikey list.
type apiKeyRow struct {
	id                          string
	name, prefix, scopes        string
	createdBy, created, expires string
	lastUsed, deprecatedCall    string
	revokedAt, state            string
}

// listKeys runs apikey list and parses its table; names must be one word.
func listKeys(tb testing.TB, vars map[string]string, secrets ...string) map[string]apiKeyRow {
	tb.Helper()
	r := runCLI(tb, vars, "", "apikey", "list")
	testkit.WantCode(tb, r, 0)
	for _, s := range secrets {
		if strings.Contains(r.Stdout+r.Stderr, s) {
			tb.Fatalf("apikey list shows a key or its secret %q:\n%s", s, r.Stdout)
		}
	}
	lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	if got := strings.Fields(lines[0]); strings.Join(got, " ") != "ID NAME PREFIX SCOPES CREATED BY CREATED EXPIRES LAST USED LAST DEPRECATED CALL REVOKED STATE" {
		tb.Fatalf("apikey list header %q", lines[0])
	}
	rows := map[string]apiKeyRow{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) != 11 {
			tb.Fatalf("apikey list row %q has %d columns, want 11", l, len(f))
		}
		rows[f[1]] = apiKeyRow{id: f[0], name: f[1], prefix: f[2], scopes: f[3], createdBy: f[4], created: f[5], expires: f[6],
			lastUsed: f[7], deprecatedCall: f[8], revokedAt: f[9], state: f[10]}
	}
	return rows
}

func TestAPIKeyCommands(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabase(t, func(t *testing.T, databaseURL string) {
		vars := map[string]string{"DATABASE_URL": databaseURL}
		ctx := context.Background()

		partner := createKey(t, vars, "partner")
		other := createKey(t, vars, "other")
		if partner == other {
			t.Fatal("two keys are the same")
		}
		store := testkit.OpenStore(t, databaseURL)
		if _, err := store.Authenticate(ctx, partner); err != nil {
			t.Fatalf("the printed key does not authenticate: %v", err)
		}

		secrets := []string{partner, partner[len(partner)-32:], other, other[len(other)-32:]}
		rows := listKeys(t, vars, secrets...)
		if len(rows) != 2 {
			t.Fatalf("apikey list has %d keys, want 2: %v", len(rows), rows)
		}
		p := rows["partner"]
		if p.prefix != partner[:models.KeyPrefixLen] {
			t.Errorf("partner's prefix is %q, want %q", p.prefix, partner[:models.KeyPrefixLen])
		}
		if p.createdBy != "cli" || p.revokedAt != "-" || p.lastUsed == "" || p.scopes != "pets:read,pets:write" ||
			p.expires != "-" || p.deprecatedCall != "-" || p.state != "active" {
			t.Errorf("partner's row before revocation: %+v", p)
		}
		if _, err := time.Parse(time.RFC3339, p.created); err != nil {
			t.Errorf("partner's created time %q: %v", p.created, err)
		}

		r := runCLI(t, vars, "", "apikey", "revoke", p.id)
		testkit.WantCode(t, r, 0)
		if line := testkit.WantOneLine(t, "stdout", r.Stdout); !strings.Contains(line, "partner") || !strings.Contains(line, p.prefix) {
			t.Errorf("revoke printed %q, want the key's name and prefix", line)
		}
		rows = listKeys(t, vars, secrets...)
		revokedAt, err := time.Parse(time.RFC3339, rows["partner"].revokedAt)
		if err != nil {
			t.Fatalf("partner's revoked time %q after revocation: %v", rows["partner"].revokedAt, err)
		}
		if d := time.Since(revokedAt); d < -time.Minute || d > 5*time.Minute {
			t.Errorf("partner revoked at %v, not about now", revokedAt)
		}
		if rows["partner"].state != "revoked" {
			t.Errorf("partner's state after revocation %q, want revoked", rows["partner"].state)
		}
		if rows["other"].revokedAt != "-" {
			t.Errorf("revoking partner revoked other too: %+v", rows["other"])
		}
		// The command is another instance: the test's store, which
		// verified the key before, may trust it for KeyCacheTTL.
		time.Sleep(models.KeyCacheTTL)
		if _, err := store.Authenticate(ctx, partner); !errors.Is(err, models.ErrUnauthorized) {
			t.Errorf("a revoked key authenticates: %v", err)
		}
		if _, err := store.Authenticate(ctx, other); err != nil {
			t.Errorf("the other key stopped working: %v", err)
		}

		t.Run("revoke again keeps the first time", func(t *testing.T) {
			r := runCLI(t, vars, "", "apikey", "revoke", p.id)
			testkit.WantCode(t, r, 0)
			if got := listKeys(t, vars, secrets...)["partner"].revokedAt; got != rows["partner"].revokedAt {
				t.Errorf("revoked time changed from %s to %s", rows["partner"].revokedAt, got)
			}
		})
		t.Run("revoke unknown id", func(t *testing.T) {
			r := runCLI(t, vars, "", "apikey", "revoke", "999999")
			testkit.WantCode(t, r, 1)
			line := testkit.WantOneLine(t, "stderr", r.Stderr)
			if !strings.Contains(line, "No API key has id 999999") {
				t.Errorf("stderr %q, want a message naming the id", line)
			}
			if r.Stdout != "" {
				t.Errorf("stdout not empty: %s", r.Stdout)
			}
		})
		t.Run("create without name", func(t *testing.T) {
			r := runCLI(t, vars, "", "apikey", "create")
			testkit.WantCode(t, r, 2)
			if got := len(listKeys(t, vars)); got != 2 {
				t.Errorf("%d keys after a refused create, want 2", got)
			}
		})
		t.Run("create with a blank name", func(t *testing.T) {
			r := runCLI(t, vars, "", "apikey", "create", "--name", "   ")
			testkit.WantCode(t, r, 2) // a bad value, refused before the database is opened
			if line := testkit.WantOneLine(t, "stderr", r.Stderr); !strings.Contains(line, "Name is required") {
				t.Errorf("stderr %q, want the validation message", line)
			}
		})
	})
}

func TestUserCreate(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabase(t, func(t *testing.T, databaseURL string) {
		vars := map[string]string{"DATABASE_URL": databaseURL}
		// The steps share one database and run in order.
		steps := []struct {
			name       string
			username   string
			stdin      string
			wantCode   int
			wantStdout string
			wantStderr string
		}{
			{name: "created", username: "alice", stdin: "a long password\n", wantStdout: "created staff account alice"},
			{name: "only the first line is the password", username: "bob", stdin: "another password\r\nignored\n", wantStdout: "created staff account bob"},
			{name: "no final newline", username: "carol", stdin: "carol's password", wantStdout: "created staff account carol"},
			{name: "password too short", username: "dave", stdin: "short\n", wantCode: 1, wantStderr: "at least 12 characters"},
			{name: "duplicate", username: "alice", stdin: "a long password\n", wantCode: 1, wantStderr: `"alice" already exists`},
			{name: "empty stdin", username: "erin", stdin: "", wantCode: 1, wantStderr: "no password on standard input"},
			{name: "bad username", username: "no spaces", stdin: "a long password\n", wantCode: 1, wantStderr: "Username must be"},
		}
		for _, st := range steps {
			t.Run(st.name, func(t *testing.T) {
				r := runCLI(t, vars, st.stdin, "user", "create", "--username", st.username)
				testkit.WantCode(t, r, st.wantCode)
				if st.wantStdout != "" {
					if line := testkit.WantOneLine(t, "stdout", r.Stdout); !strings.Contains(line, st.wantStdout) {
						t.Errorf("stdout %q lacks %q", line, st.wantStdout)
					}
					if r.Stderr != "" {
						t.Errorf("stderr not empty:\n%s", r.Stderr)
					}
				}
				if st.wantStderr != "" {
					// The message is the last line (the duplicate also logs the
					// failed INSERT before it).
					if line := testkit.LastLine(r.Stderr); !strings.HasPrefix(line, "petstore: ") || !strings.Contains(line, st.wantStderr) {
						t.Errorf("last line of stderr %q lacks %q", line, st.wantStderr)
					}
					if r.Stdout != "" {
						t.Errorf("stdout not empty:\n%s", r.Stdout)
					}
				}
			})
		}

		store := testkit.OpenStore(t, databaseURL)
		for user, password := range map[string]string{"alice": "a long password", "bob": "another password", "carol": "carol's password"} {
			if _, err := store.CheckPassword(context.Background(), user, password); err != nil {
				t.Errorf("%s cannot sign in with %q: %v", user, password, err)
			}
		}
		if n, err := store.CountUsers(context.Background()); err != nil || n != 3 {
			t.Errorf("%d staff accounts (err %v), want 3", n, err)
		}
	})
}

func TestServe(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabase(t, func(t *testing.T, databaseURL string) {
		vars := map[string]string{"DATABASE_URL": databaseURL, "LISTEN_ADDR": "127.0.0.1:0"}

		first := serveInProcess(t, vars)
		out := first.Stdout.String()
		if n := strings.Count(out, "First start"); n != 1 {
			t.Fatalf("the bootstrap block appears %d times, want once:\n%s", n, out)
		}
		acct := testkit.BootstrapAccount.FindStringSubmatch(out)
		key := testkit.BootstrapKey.FindStringSubmatch(out)
		curl := testkit.BootstrapCurl.FindStringSubmatch(out)
		if testkit.BootstrapConsole.FindStringSubmatch(out) == nil {
			t.Errorf("the bootstrap block lacks the console URL:\n%s", out)
		}
		if acct == nil || key == nil || curl == nil {
			t.Fatalf("the bootstrap block lacks the account, the key or the curl line:\n%s", out)
		}
		if acct[1] != "admin" || len(acct[2]) < models.MinPasswordLength {
			t.Errorf("bootstrap account %q / %q, want admin and a password of at least %d characters", acct[1], acct[2], models.MinPasswordLength)
		}
		if !testkit.KeyPattern.MatchString(key[1]) || curl[1] != key[1] {
			t.Errorf("bootstrap key %q, curl uses %q; want the same pst_ key", key[1], curl[1])
		}
		if want := "http://" + first.Addr + "/v1/pets"; curl[2] != want {
			t.Errorf("curl URL %q, want %q", curl[2], want)
		}

		// Exactly the printed curl request.
		u, err := url.Parse(curl[2])
		if err != nil {
			t.Fatalf("curl URL %q: %v", curl[2], err)
		}
		printed := u.Scheme + "://" + u.Host
		if r := testkit.NewAPIClient(printed, curl[1]).Get(u.RequestURI()); r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != "[]" {
			t.Errorf("the printed curl request: %s, want 200 []", r)
		}
		for _, path := range []string{"/healthz", "/readyz"} {
			if r := testkit.NewAPIClient(first.Base, "").Get(path); r.Status != http.StatusOK {
				t.Errorf("GET %s: %s, want 200", path, r)
			}
		}
		if r := testkit.NewAPIClient(printed, "").Get(u.RequestURI()); r.Status != http.StatusUnauthorized {
			t.Errorf("GET /v1/pets without a key: %s, want 401", r)
		}
		first.Stop(t)

		store := testkit.OpenStore(t, databaseURL)
		if _, err := store.CheckPassword(context.Background(), acct[1], acct[2]); err != nil {
			t.Errorf("the printed staff account cannot sign in: %v", err)
		}

		second := serveInProcess(t, vars)
		if out := second.Stdout.String(); out != "" {
			t.Errorf("the second start printed on stdout (no bootstrap expected):\n%s", out)
		}
		if r := testkit.NewAPIClient(second.Base, curl[1]).Get("/v1/pets"); r.Status != http.StatusOK {
			t.Errorf("the first key on the second start: %s, want 200", r)
		}
		second.Stop(t)
		if n, err := store.CountUsers(context.Background()); err != nil || n != 1 {
			t.Errorf("%d staff accounts after two starts (err %v), want 1", n, err)
		}
	})
}

func TestServeListenAddressTaken(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabase(t, func(t *testing.T, databaseURL string) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		r := runCLI(t, map[string]string{"DATABASE_URL": databaseURL, "LISTEN_ADDR": ln.Addr().String()}, "", "serve")
		testkit.WantCode(t, r, 1)
		// The log may come first; the error is the last line.
		last := testkit.LastLine(r.Stderr)
		if !strings.HasPrefix(last, "petstore: LISTEN_ADDR: ") || !strings.Contains(last, ln.Addr().String()) {
			t.Errorf("last line of stderr %q, want petstore: LISTEN_ADDR: naming %s", last, ln.Addr())
		}
		if r.Stdout != "" {
			t.Errorf("stdout not empty (no bootstrap before listening):\n%s", r.Stdout)
		}
	})
}

// TestPureGoBuild runs the binary as the harness builds it, with cgo
// disabled as the release is: it must build, and open SQLite, whose driver
// must be pure Go.
func TestPureGoBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped in -short mode")
	}
	t.Parallel()
	r := testkit.RunBinary(t, nil, "version")
	testkit.WantCode(t, r, 0)
	if !strings.HasPrefix(r.Stdout, "petstore ") {
		t.Errorf("petstore version printed %q", r.Stdout)
	}

	// Opening SQLite proves the driver works without cgo.
	r = testkit.RunBinary(t, map[string]string{"DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "petstore.db")}, "migrate")
	if r.Code != 0 || !schemaVersion.MatchString(strings.TrimSpace(r.Stdout)) {
		t.Errorf("petstore migrate with the cgo-free binary: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

func TestHealthcheck(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "petstore.db"), "LISTEN_ADDR": "127.0.0.1:0"}
	srv := serveInProcess(t, vars)
	_, port, _ := net.SplitHostPort(srv.Addr)
	probe := map[string]string{"LISTEN_ADDR": ":" + port}
	for _, args := range [][]string{{"healthcheck"}, {"healthcheck", "--ready"}} {
		if r := runCLI(t, probe, "", args...); r.Code != 0 || !strings.Contains(r.Stdout, "200 OK") {
			t.Errorf("%v against a running server: exit %d, %q %q", args, r.Code, r.Stdout, r.Stderr)
		}
	}
	// Nothing listening: exit 1 with one line.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	free := l.Addr().String()
	l.Close()
	r := runCLI(t, map[string]string{"LISTEN_ADDR": free}, "", "healthcheck")
	if r.Code != 1 || !strings.HasPrefix(r.Stderr, "petstore: healthcheck:") || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Errorf("no server: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// Metrics are served on METRICS_ADDR without a key, and never on the main
// address: not even to a valid partner API key (without METRICS_ADDR there
// are no metrics).
func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "petstore.db")
	srv := serveInProcess(t, map[string]string{"DATABASE_URL": dbURL, "LISTEN_ADDR": "127.0.0.1:0", "METRICS_ADDR": "127.0.0.1:0"})
	m := srv.WaitLog(t, regexp.MustCompile(`msg="metrics listening" addr=(\S+)`), 5*time.Second)
	metrics, public := testkit.NewAPIClient("http://"+m[1], ""), testkit.NewAPIClient(srv.Base, "")
	public.Get("/v1/openapi.json")
	// A request is counted just after its response is written: poll.
	want := `petstore_http_requests_total{method="GET",route="/v1/openapi.json",status="200"} 1`
	var r testkit.Reply
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if r = metrics.Get("/metrics"); r.Status == 200 && strings.Contains(string(r.Body), want) {
			break
		}
	}
	if r.Status != 200 || !strings.Contains(string(r.Body), want) {
		t.Errorf("metrics address: %d %v\n%.2000s", r.Status, r.Err, r.Body)
	}
	// With METRICS_ADDR set, the main address has no /metrics.
	if r := public.Get("/metrics"); r.Status != 404 {
		t.Errorf("main /metrics with METRICS_ADDR set: %s, want 404", r)
	}

	dbURL2 := "sqlite:" + filepath.Join(t.TempDir(), "petstore.db")
	srv2 := serveInProcess(t, map[string]string{"DATABASE_URL": dbURL2, "LISTEN_ADDR": "127.0.0.1:0"})
	for _, key := range []string{"", testkit.BootstrapOf(t, srv2.Stdout.String()).Key} {
		r := testkit.NewAPIClient(srv2.Base, key).Get("/metrics")
		if r.Status != 404 || strings.Contains(string(r.Body), "go_goroutines") {
			t.Errorf("main /metrics without METRICS_ADDR (with a key: %v): %d %v, want 404\n%.500s", key != "", r.Status, r.Err, r.Body)
		}
	}
	if strings.Contains(srv2.Stderr.String(), "metrics listening") {
		t.Error("metrics listening without METRICS_ADDR")
	}
}
