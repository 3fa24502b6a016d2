package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"petstore/internal/testkit"
	"petstore/models"
)

// Help and bad usage of the account commands never touch the database.
func TestUserCommandsUsage(t *testing.T) {
	t.Parallel()
	checkUsage(t, []usageCase{
		{"user --help lists the commands", []string{"user", "--help"}, 0, "create list disable enable reset-password"},
		{"list --help", []string{"user", "list", "--help"}, 0, "Usage: petstore user list"},
		{"disable --help", []string{"user", "disable", "--help"}, 0, "Usage: petstore user disable --username NAME"},
		{"enable --help", []string{"user", "enable", "--help"}, 0, "Usage: petstore user enable --username NAME"},
		{"reset-password --help", []string{"user", "reset-password", "--help"}, 0, "Usage: petstore user reset-password --username NAME"},
		{"disable without --username", []string{"user", "disable"}, 2, "Usage: petstore user disable --username NAME"},
		{"enable with empty --username", []string{"user", "enable", "--username", ""}, 2, "Usage: petstore user enable"},
		{"reset-password without --username", []string{"user", "reset-password"}, 2, "Usage: petstore user reset-password"},
		{"disable with an extra argument", []string{"user", "disable", "--username", "bob", "now"}, 2, "Usage: petstore user disable"},
		{"list with an argument", []string{"user", "list", "--all"}, 2, "-all"},
		{"create --help names the roles", []string{"user", "create", "--help"}, 0, "Usage: petstore user create --username NAME [--role viewer|editor|admin]"},
		{"create --help says the default", []string{"user", "create", "--help"}, 0, "default editor; the first account on an empty database is an admin"},
		{"list --help names the role", []string{"user", "list", "--help"}, 0, "role (viewer, editor or admin)"},
		{"create with an unknown role", []string{"user", "create", "--username", "bob", "--role", "owner"}, 2, `invalid value "owner" for flag -role: must be viewer, editor or admin`},
		{"create with a capitalised role", []string{"user", "create", "--username", "bob", "--role", "Admin"}, 2, `invalid value "Admin" for flag -role`},
	}, nil)
}

// otpPattern is the shape of a one-time password as printed.
var otpPattern = regexp.MustCompile(`^[a-z2-7]{4}(-[a-z2-7]{4}){4}$`)

func TestUserCommands(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabase(t, func(t *testing.T, databaseURL string) {
		vars := map[string]string{"DATABASE_URL": databaseURL}
		const pw = "correct horse battery staple"
		for _, name := range []string{"alice", "bob"} {
			testkit.WantCode(t, runCLI(t, vars, pw+"\n", "user", "create", "--username", name), 0)
		}
		// A password that is the username is refused, digits at its end too.
		r := runCLI(t, vars, "rtpolab12c45678\n", "user", "create", "--username", "rtpolab12c45678")
		testkit.WantCode(t, r, 1)
		if line := testkit.LastLine(r.Stderr); !strings.Contains(line, "Password must not be the username.") {
			t.Errorf("a password equal to the username said %q", line)
		}
		// The names the system acts under are not for staff.
		for _, name := range []string{"cli", "Bootstrap"} {
			r := runCLI(t, vars, pw+"\n", "user", "create", "--username", name)
			testkit.WantCode(t, r, 1)
			if line := testkit.LastLine(r.Stderr); !strings.Contains(line, "is reserved for the system") {
				t.Errorf("user create --username %s said %q", name, line)
			}
		}
		// ok runs a command that must print one line on stdout and nothing on stderr.
		ok := func(args ...string) string {
			t.Helper()
			r := runCLI(t, vars, "", args...)
			testkit.WantCode(t, r, 0)
			if r.Stderr != "" {
				t.Errorf("%v: stderr not empty:\n%s", args, r.Stderr)
			}
			return testkit.WantOneLine(t, "stdout", r.Stdout)
		}
		// refused runs a command that must fail with one line on stderr.
		refused := func(want string, args ...string) {
			t.Helper()
			r := runCLI(t, vars, "", args...)
			testkit.WantCode(t, r, 1)
			if line := testkit.WantOneLine(t, "stderr", r.Stderr); !strings.HasPrefix(line, "petstore: ") || !strings.Contains(line, want) {
				t.Errorf("%v: stderr %q lacks %q", args, line, want)
			}
			if r.Stdout != "" {
				t.Errorf("%v: stdout not empty:\n%s", args, r.Stdout)
			}
		}
		// list returns each account's "role state".
		list := func() map[string]string {
			t.Helper()
			r := runCLI(t, vars, "", "user", "list")
			testkit.WantCode(t, r, 0)
			lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
			if strings.Join(strings.Fields(lines[0]), " ") != "ID USERNAME ROLE STATE CREATED" {
				t.Fatalf("list header %q", lines[0])
			}
			states := map[string]string{}
			for _, l := range lines[1:] {
				f := strings.Fields(l)
				if len(f) != 5 {
					t.Fatalf("list row %q", l)
				}
				states[f[1]] = f[2] + " " + f[3]
			}
			return states
		}

		// The first account is an admin, the next an editor by default.
		if got := list(); got["alice"] != "admin enabled" || got["bob"] != "editor enabled" || len(got) != 2 {
			t.Errorf("list %v", got)
		}
		if line := ok("user", "disable", "--username", "Bob"); !strings.Contains(line, "disabled staff account bob") || !strings.Contains(line, "API keys keep working") {
			t.Errorf("disable said %q", line)
		}
		if got := list(); got["bob"] != "editor disabled" {
			t.Errorf("after disable: %v", got)
		}
		store := testkit.OpenStore(t, databaseURL)
		ctx := context.Background()
		if _, err := store.CheckPassword(ctx, "bob", pw); err != models.ErrAccountDisabled {
			t.Errorf("bob signs in after disable: %v", err)
		}
		refused("last enabled staff account", "user", "disable", "--username", "alice")
		refused(`No staff account is named "nobody".`, "user", "disable", "--username", "nobody")
		refused(`No staff account is named "nobody".`, "user", "enable", "--username", "nobody")
		refused(`No staff account is named "nobody".`, "user", "reset-password", "--username", "nobody")

		if line := ok("user", "enable", "--username", "bob"); !strings.Contains(line, "enabled staff account bob") {
			t.Errorf("enable said %q", line)
		}
		if _, err := store.CheckPassword(ctx, "bob", pw); err != nil {
			t.Errorf("bob cannot sign in after enable: %v", err)
		}

		otp := ok("user", "reset-password", "--username", "bob")
		if !otpPattern.MatchString(otp) {
			t.Fatalf("reset-password printed %q, want the one-time password alone", otp)
		}
		if _, err := store.CheckPassword(ctx, "bob", pw); models.ErrorCode(err) != models.CodeUnauthorized {
			t.Errorf("old password after reset: %v", err)
		}
		if u, err := store.CheckPassword(ctx, "bob", otp); err != nil || !u.MustChangePassword {
			t.Errorf("one-time password: %+v, %v; want it to sign in, must change", u, err)
		}
		if got := list(); got["bob"] != "editor must-change-password" || got["alice"] != "admin enabled" {
			t.Errorf("after reset: %v", got)
		}
		bob, _ := store.FindUser(ctx, "bob")
		events, _, err := store.ListAuditEvents(ctx, models.AuditQuery{Actor: "cli", TargetType: models.TargetUser, TargetID: bob.ID})
		if err != nil {
			t.Fatal(err)
		}
		var actions []string
		for _, ev := range events {
			actions = append(actions, ev.Action)
			if strings.Contains(ev.Detail, otp) {
				t.Errorf("audit event %+v holds the one-time password", ev)
			}
		}
		if got := strings.Join(actions, " "); got != "user.password_reset user.enabled user.disabled user.created" {
			t.Errorf("audit by cli on bob, newest first: %s", got)
		}
	})
}

// user create --role gives the account that role, and says it.
func TestUserCreateRoles(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabase(t, func(t *testing.T, databaseURL string) {
		vars := map[string]string{"DATABASE_URL": databaseURL}
		const pw = "correct-horse-battery-9"
		tests := []struct{ name, role, want string }{
			{"vera", "viewer", "viewer"},
			{"ed", "", "editor"}, // not the first: vera is
			{"eve", "editor", "editor"},
			{"ada", "admin", "admin"},
		}
		for _, tt := range tests {
			args := []string{"user", "create", "--username", tt.name}
			if tt.role != "" {
				args = append(args, "--role", tt.role)
			}
			r := runCLI(t, vars, pw+"\n", args...)
			testkit.WantCode(t, r, 0)
			if line := testkit.WantOneLine(t, "stdout", r.Stdout); !strings.HasPrefix(line, "created staff account "+tt.name+" (id ") ||
				!strings.HasSuffix(line, "), role "+tt.want) {
				t.Errorf("%v said %q", args, line)
			}
		}
		store := testkit.OpenStore(t, databaseURL)
		for _, tt := range tests {
			u, err := store.FindUser(context.Background(), tt.name)
			if err != nil || string(u.Role) != tt.want {
				t.Errorf("%s: %+v, %v; want %s", tt.name, u, err, tt.want)
			}
		}
		// The console keeps an admin: the CLI cannot disable the last one.
		r := runCLI(t, vars, "", "user", "disable", "--username", "ada")
		testkit.WantCode(t, r, 1)
		if line := testkit.LastLine(r.Stderr); !strings.Contains(line, "last enabled admin") {
			t.Errorf("disabling the last admin said %q", line)
		}
	})
}
