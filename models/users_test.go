package models_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"petstore/models"
	"petstore/models/modelstest"
)

func TestValidateUsername(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // "" means invalid
	}{
		{"admin", "admin"},
		{"  alice\t", "alice"},
		{"Bob.Smith-2_x", "bob.smith-2_x"},
		{"7", "7"},
		{strings.Repeat("u", 64), strings.Repeat("u", 64)},
		{"", ""},
		{"   ", ""},
		{strings.Repeat("u", 65), ""},
		{"bad name", ""},
		{".dot", ""},
		{"-dash", ""},
		{"_under", ""},
		{"a@b", ""},
		{"a/b", ""},
		{"naïve", ""},
		{"a\nb", ""},
		{"admin\x00", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := models.ValidateUsername(tt.in)
			if tt.want != "" {
				if err != nil || got != tt.want {
					t.Fatalf("ValidateUsername(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
				}
				return
			}
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeInvalidRequest || e.Field("username") == "" {
				t.Fatalf("ValidateUsername(%q) = %q, %v; want invalid_request on username", tt.in, got, err)
			}
		})
	}
}

func TestValidatePassword(t *testing.T) {
	t.Parallel()
	const (
		tooShort = "Password must be at least 12 characters."
		tooLong  = "Password must be at most 72 bytes."
		repeated = "Password must not be one character repeated."
		username = "Password must not be the username."
		common   = "This password is on a list of commonly used passwords; choose another."
	)
	tests := []struct {
		name, pw, username string
		want               string // "" means accepted
	}{
		{"good", "correct horse battery staple", "alice", ""},
		{"12 characters", "tuvw-xyz2-7q", "alice", ""},
		{"72 bytes", "pq" + strings.Repeat("r", 70), "alice", ""},
		{"18 emoji (72 bytes)", strings.Repeat("🐾", 17) + "🐕", "alice", ""},
		{"spaces inside are fine", "my dog likes long walks", "alice", ""},
		{"contains the username", "alice in wonderland 1865", "alice", ""},
		{"empty", "", "alice", tooShort},
		{"11 characters", "tuvw-xyz2-7", "alice", tooShort},
		{"11 code points in 22 bytes", strings.Repeat("é", 11), "alice", tooShort},
		{"73 bytes", "pq" + strings.Repeat("r", 71), "alice", tooLong},
		{"19 emoji (76 bytes)", strings.Repeat("🐾", 19), "alice", tooLong},
		{"ten spaces", "          ", "alice", tooShort},
		{"twelve spaces", "            ", "alice", repeated},
		{"twelve a", "aaaaaaaaaaaa", "alice", repeated},
		{"one emoji repeated", strings.Repeat("🐾", 12), "alice", repeated},
		{"password12", "password12", "alice", tooShort},
		{"password12 padded to 12", " password12 ", "alice", common},
		{"password12 with a space inside", "password 12 ", "alice", common},
		{"common, 12 characters", "password1234", "alice", common},
		{"common, other case", "QWERTY123456", "alice", common},
		{"common, 16 characters", "passwordpassword", "alice", common},
		{"the username", "bartholomew.x", "Bartholomew.X", username},
		{"the username in capitals", "BARTHOLOMEW.X", "bartholomew.x", username},
		{"the username and digits", "annabelle2024", "annabelle", username},
		{"the username between spaces", "  annabelle   ", "annabelle", username},
		{"the username that ends in digits", "rtpolab12c45678", "rtpolab12c45678", username},
		{"the username that ends in digits, in capitals", "RTPOLAB12C45678", "rtpolab12c45678", username},
		{"the username with other trailing digits", "rtpolab12c 2024", "rtpolab12c45678", username},
		{"the username that starts with digits, other digits around", "2024 99bartholomew 7", "99bartholomew", username},
		{"a digits-only username", "  31415926535  ", "31415926535", username},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := models.ValidatePassword(tt.pw, tt.username)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("ValidatePassword(%q, %q) = %v, want ok", tt.pw, tt.username, err)
				}
				return
			}
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeInvalidRequest || e.Field("password") != tt.want || e.Message != tt.want {
				t.Fatalf("ValidatePassword(%q, %q) = %v, want invalid_request on password: %q", tt.pw, tt.username, err, tt.want)
			}
			if strings.TrimSpace(tt.pw) != "" && strings.Contains(err.Error(), tt.pw) {
				t.Errorf("error %q repeats the password", err)
			}
		})
	}
}

// The embedded list is a well-known list of at least 10,000 passwords.
func TestCommonPasswordList(t *testing.T) {
	t.Parallel()
	if n := models.CommonPasswordCount(); n < 10000 {
		t.Fatalf("%d common passwords, want at least 10,000", n)
	}
	for _, pw := range []string{"123456789012", "qwertyuiop12", "1qaz2wsx3edc", "123qweasdzxc"} {
		if err := models.ValidatePassword(pw, "alice"); models.ErrorCode(err) != models.CodeInvalidRequest {
			t.Errorf("ValidatePassword(%q) = %v, want refused as common", pw, err)
		}
	}
}

func TestCreateUser(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		const pw = "correct horse battery"
		invalid := []struct {
			name, username, password, field string
		}{
			{"short password", "alice", "short", "password"},
			{"73-byte password", "alice", strings.Repeat("p", 73), "password"},
			{"empty username", "", pw, "username"},
			{"username with space", "alice smith", pw, "username"},
			{"username with slash", "alice/bob", pw, "username"},
			{"65-char username", strings.Repeat("a", 65), pw, "username"},
		}
		for _, tt := range invalid {
			t.Run(tt.name, func(t *testing.T) {
				u, err := s.CreateUser(ctx, tt.username, tt.password, "tester")
				var e *models.Error
				if !errors.As(err, &e) || e.Code != models.CodeInvalidRequest || e.Field(tt.field) == "" {
					t.Fatalf("CreateUser(%q, %d-byte password) = %+v, %v; want invalid_request on %s",
						tt.username, len(tt.password), u, err, tt.field)
				}
			})
		}
		if n, err := s.CountUsers(ctx); err != nil || n != 0 {
			t.Fatalf("after invalid input, CountUsers = %d, %v; want 0", n, err)
		}

		u, err := s.CreateUser(ctx, " alice ", pw, "tester")
		if err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		if u.ID == 0 || u.Username != "alice" || u.CreatedAt.IsZero() {
			t.Fatalf("CreateUser = %+v", u)
		}
		checkHash(t, u.PasswordHash, pw)

		_, err = s.CreateUser(ctx, "alice", "another password", "tester")
		var e *models.Error
		if !errors.As(err, &e) || e.Code != models.CodeConflict || e.Field("username") == "" {
			t.Fatalf("CreateUser(duplicate) = %v, want conflict on username", err)
		}
		if n, err := s.CountUsers(ctx); err != nil || n != 1 {
			t.Fatalf("CountUsers = %d, %v; want 1", n, err)
		}
	})
}

// checkHash fails unless hash is a bcrypt hash of pw (at the test stores'
// minimum cost; TestPasswordCost checks the production cost).
func checkHash(tb testing.TB, hash, pw string) {
	tb.Helper()
	if !strings.HasPrefix(hash, "$2") || strings.Contains(hash, pw) {
		tb.Fatalf("stored password hash %q is not a bcrypt hash", hash)
	}
	if _, err := bcrypt.Cost([]byte(hash)); err != nil {
		tb.Errorf("bcrypt cost: %v", err)
	}
	if err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)); err != nil {
		tb.Errorf("stored hash does not match the password: %v", err)
	}
}

func TestCheckPassword(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		const pw = "  Tr0ub4dor&3 é  "
		created, err := s.CreateUser(ctx, "carol", pw, "tester")
		if err != nil {
			t.Fatal(err)
		}
		u, err := s.CheckPassword(ctx, "carol", pw)
		if err != nil {
			t.Fatalf("CheckPassword(right password): %v", err)
		}
		if u.ID != created.ID || u.Username != "carol" {
			t.Fatalf("CheckPassword = %+v, want user %d", u, created.ID)
		}
		checkHash(t, u.PasswordHash, pw)

		rejected := []struct {
			name, username, password string
		}{
			{"wrong password", "carol", "Tr0ub4dor&4"},
			{"password trimmed", "carol", strings.TrimSpace(pw)},
			{"empty password", "carol", ""},
			{"unknown user", "mallory", pw},
			{"empty username", "", pw},
		}
		for _, tt := range rejected {
			t.Run(tt.name, func(t *testing.T) {
				u, err := s.CheckPassword(ctx, tt.username, tt.password)
				if models.ErrorCode(err) != models.CodeUnauthorized || !errors.Is(err, models.ErrUnauthorized) {
					t.Fatalf("CheckPassword(%q, %q) = %+v, %v; want unauthorized", tt.username, tt.password, u, err)
				}
				if u.ID != 0 || u.PasswordHash != "" {
					t.Fatalf("CheckPassword returned user %+v with an error", u)
				}
			})
		}
	})
}

func TestEnsureBootstrap(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		b, err := s.EnsureBootstrap(ctx)
		if err != nil || b == nil {
			t.Fatalf("EnsureBootstrap(empty db) = %+v, %v; want the new account", b, err)
		}
		if b.Username != "admin" || models.FirstUsername != "admin" {
			t.Errorf("bootstrap username = %q, want admin", b.Username)
		}
		if err := models.ValidatePassword(b.Password, b.Username); err != nil {
			t.Errorf("bootstrap password %q breaks the password rules: %v", b.Password, err)
		}
		if _, err := s.CheckPassword(ctx, "admin", b.Password); err != nil {
			t.Errorf("CheckPassword(admin, bootstrap password): %v", err)
		}
		k, err := s.Authenticate(ctx, b.APIKey)
		if err != nil {
			t.Fatalf("Authenticate(bootstrap key): %v", err)
		}
		keys, err := s.ListAPIKeys(ctx)
		if err != nil || len(keys) != 1 || keys[0].ID != k.ID {
			t.Fatalf("ListAPIKeys = %+v, %v; want only the bootstrap key", keys, err)
		}
		if n, err := s.CountUsers(ctx); err != nil || n != 1 {
			t.Fatalf("CountUsers = %d, %v; want 1", n, err)
		}

		again, err := s.EnsureBootstrap(ctx)
		if err != nil || again != nil {
			t.Fatalf("second EnsureBootstrap = %+v, %v; want nil, nil", again, err)
		}
		if keys, err := s.ListAPIKeys(ctx); err != nil || len(keys) != 1 {
			t.Fatalf("second EnsureBootstrap left %d keys (err %v), want 1", len(keys), err)
		}
	})
}

func TestEnsureBootstrapSkipsWhenUsersExist(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		if _, err := s.CreateUser(ctx, "dave", "a long enough password", "tester"); err != nil {
			t.Fatal(err)
		}
		b, err := s.EnsureBootstrap(ctx)
		if err != nil || b != nil {
			t.Fatalf("EnsureBootstrap with a user = %+v, %v; want nil, nil", b, err)
		}
		if keys, err := s.ListAPIKeys(ctx); err != nil || len(keys) != 0 {
			t.Fatalf("EnsureBootstrap with a user made %d keys (err %v)", len(keys), err)
		}
	})
}

func TestEnsureBootstrapConcurrent(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		const n = 2
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			got   [n]*models.Bootstrap
			errs  [n]error
		)
		for i := range n {
			wg.Go(func() {
				<-start
				got[i], errs[i] = s.EnsureBootstrap(ctx)
			})
		}
		close(start)
		wg.Wait()
		var winner *models.Bootstrap
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("EnsureBootstrap %d: %v", i, errs[i])
			}
			if got[i] != nil {
				if winner != nil {
					t.Fatal("two concurrent EnsureBootstrap calls both created the first account")
				}
				winner = got[i]
			}
		}
		if winner == nil {
			t.Fatal("no concurrent EnsureBootstrap call created the first account")
		}
		if _, err := s.CheckPassword(ctx, "admin", winner.Password); err != nil {
			t.Errorf("winner's password does not work: %v", err)
		}
		if _, err := s.Authenticate(ctx, winner.APIKey); err != nil {
			t.Errorf("winner's key does not work: %v", err)
		}
		if users, err := s.CountUsers(ctx); err != nil || users != 1 {
			t.Errorf("CountUsers = %d, %v; want 1", users, err)
		}
		if keys, err := s.ListAPIKeys(ctx); err != nil || len(keys) != 1 {
			t.Errorf("%d keys (err %v), want 1", len(keys), err)
		}
	})
}

// Usernames are one account whatever their case, on both engines.
func TestUsernamesIgnoreCase(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		if _, err := s.CreateUser(ctx, "Alice", "a long password", "test"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateUser(ctx, "alice", "another password", "test"); models.ErrorCode(err) != models.CodeConflict {
			t.Fatalf("second alice: %v, want conflict", err)
		}
		u, err := s.CheckPassword(ctx, "ALICE", "a long password")
		if err != nil || u.Username != "alice" {
			t.Fatalf("CheckPassword(ALICE) = %+v, %v", u, err)
		}
	})
}

// A store opened as main opens it hashes passwords at cost 12.
func TestPasswordCost(t *testing.T) {
	t.Parallel()
	db := modelstest.Database(t, models.DriverSQLite)
	s, err := models.Open(context.Background(), models.Options{Driver: models.DriverSQLite, DSN: db.DSN})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	u, err := s.CreateUser(context.Background(), "carol", "a long password", "test")
	if err != nil {
		t.Fatal(err)
	}
	if cost, err := bcrypt.Cost([]byte(u.PasswordHash)); err != nil || cost != 12 {
		t.Errorf("production bcrypt cost = %d, %v; want 12", cost, err)
	}
}

// Sign-ins are also limited per address: many usernames tried from one
// address lock that address out, not others.
func TestLoginLimitedPerAddress(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		if _, err := s.CreateUser(ctx, "dora", "a long password", "test"); err != nil {
			t.Fatal(err)
		}
		for i := range models.MaxFailuresPerAddress {
			// A different name each time: the per-username limit never trips.
			if _, err := s.Login(ctx, fmt.Sprintf("guess%d", i), "wrong password", "203.0.113.9"); models.ErrorCode(err) != models.CodeUnauthorized {
				t.Fatalf("attempt %d: %v, want unauthorized", i, err)
			}
		}
		if _, err := s.Login(ctx, "dora", "a long password", "203.0.113.9"); models.ErrorCode(err) != models.CodeRateLimited {
			t.Fatalf("right password from the locked address: %v, want rate_limited", err)
		}
		if _, err := s.Login(ctx, "dora", "a long password", "198.51.100.7"); err != nil {
			t.Fatalf("right password from another address: %v", err)
		}
	})
}

// auditActions returns the actions recorded on account id, oldest first,
// each as "actor action detail".
func auditActions(tb testing.TB, s *models.Store, id int64) []string {
	tb.Helper()
	events, _, err := s.ListAuditEvents(context.Background(), models.AuditQuery{TargetType: models.TargetUser, TargetID: id, Limit: 200})
	if err != nil {
		tb.Fatal(err)
	}
	var got []string
	for i := len(events) - 1; i >= 0; i-- {
		got = append(got, events[i].Actor+" "+events[i].Action+" "+events[i].Detail)
	}
	return got
}

// newAccounts creates accounts with the password "correct horse battery staple".
func newAccounts(tb testing.TB, s *models.Store, names ...string) []models.User {
	tb.Helper()
	var users []models.User
	for _, n := range names {
		u, err := s.CreateUser(context.Background(), n, "correct horse battery staple", "test")
		if err != nil {
			tb.Fatal(err)
		}
		users = append(users, u)
	}
	return users
}

func TestDisableAndEnableUser(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		const pw = "correct horse battery staple"
		users := newAccounts(t, s, "alice", "bob")
		bob := users[1]

		u, err := s.DisableUser(ctx, bob.ID, "alice")
		if err != nil || !u.Disabled() || u.SessionVersion != bob.SessionVersion+1 {
			t.Fatalf("DisableUser = %+v, %v; want disabled with the session version bumped", u, err)
		}
		if got, _ := s.GetUser(ctx, bob.ID); !got.Disabled() || got.SessionVersion != bob.SessionVersion+1 {
			t.Fatalf("stored after disable: %+v", got)
		}
		// The right password learns the account is disabled; a wrong one does not.
		if _, err := s.CheckPassword(ctx, "bob", pw); err != models.ErrAccountDisabled {
			t.Errorf("CheckPassword(disabled, right password) = %v, want ErrAccountDisabled", err)
		}
		var e *models.Error
		if _, err := s.CheckPassword(ctx, "bob", "not bob's password"); !errors.As(err, &e) || e.Message != "Wrong username or password." {
			t.Errorf("CheckPassword(disabled, wrong password) = %v, want the usual refusal", err)
		}
		if _, err := s.Login(ctx, "bob", pw, "192.0.2.1"); err != models.ErrAccountDisabled {
			t.Errorf("Login(disabled) = %v, want ErrAccountDisabled", err)
		}
		// Disabling again changes nothing and records nothing.
		if u, err := s.DisableUser(ctx, bob.ID, "alice"); err != nil || !u.Disabled() || u.SessionVersion != bob.SessionVersion+1 {
			t.Errorf("second DisableUser = %+v, %v", u, err)
		}

		u, err = s.EnableUser(ctx, bob.ID, "cli")
		if err != nil || u.Disabled() {
			t.Fatalf("EnableUser = %+v, %v", u, err)
		}
		if _, err := s.CheckPassword(ctx, "bob", pw); err != nil {
			t.Errorf("CheckPassword after enable: %v", err)
		}
		if _, err := s.EnableUser(ctx, bob.ID, "cli"); err != nil {
			t.Errorf("second EnableUser: %v", err)
		}
		// The right password of a disabled account is a failed sign-in
		// (it counts against the sign-in limits) that says why.
		want := []string{
			"test user.created username=bob; role=editor",
			"alice user.disabled username=bob; sessions ended; API keys not revoked",
			"bob user.login_failed sign-in of a disabled account from 192.0.2.1",
			"cli user.enabled username=bob",
		}
		if got := auditActions(t, s, bob.ID); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("audit trail of bob:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}

		for name, act := range map[string]func(context.Context, int64, string) (models.User, error){
			"DisableUser": s.DisableUser, "EnableUser": s.EnableUser, "EndSessions": s.EndSessions} {
			if _, err := act(ctx, 999, "alice"); models.ErrorCode(err) != models.CodeNotFound {
				t.Errorf("%s(unknown id) = %v, want not_found", name, err)
			}
		}
		if _, _, err := s.ResetPassword(ctx, 999, "alice"); models.ErrorCode(err) != models.CodeNotFound {
			t.Errorf("ResetPassword(unknown id) = %v, want not_found", err)
		}
		if u, err := s.FindUser(ctx, " BOB "); err != nil || u.ID != bob.ID {
			t.Errorf("FindUser(BOB) = %+v, %v", u, err)
		}
		if _, err := s.FindUser(ctx, "nobody"); models.ErrorCode(err) != models.CodeNotFound || !strings.Contains(err.Error(), `"nobody"`) {
			t.Errorf("FindUser(nobody) = %v, want not_found naming it", err)
		}
	})
}

func TestDisableLastEnabledUser(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		users := newAccounts(t, s, "alice", "bob")
		if _, err := s.DisableUser(ctx, users[0].ID, "bob"); err != nil {
			t.Fatal(err)
		}
		u, err := s.DisableUser(ctx, users[1].ID, "bob")
		var e *models.Error
		if !errors.As(err, &e) || e.Code != models.CodeConflict || !strings.Contains(e.Message, "last enabled staff account") {
			t.Fatalf("disabling the last enabled account = %+v, %v; want conflict", u, err)
		}
		if got, _ := s.GetUser(ctx, users[1].ID); got.Disabled() || got.SessionVersion != users[1].SessionVersion {
			t.Errorf("the refused disable changed the account: %+v", got)
		}
		if got := auditActions(t, s, users[1].ID); len(got) != 1 {
			t.Errorf("a refused disable was audited: %v", got)
		}
	})
}

// Two members disabling each other at the same moment must not leave the
// console with no enabled account: exactly one of them wins, every time.
func TestDisableEachOtherConcurrently(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		users := newAccounts(t, s, "alice", "bob")
		for round := range 10 {
			var (
				wg    sync.WaitGroup
				start = make(chan struct{})
				errs  [2]error
			)
			for i := range 2 {
				wg.Go(func() {
					<-start
					// users[i] disables the other one.
					_, errs[i] = s.DisableUser(ctx, users[1-i].ID, users[i].Username)
				})
			}
			close(start)
			wg.Wait()
			won := 0
			for i, err := range errs {
				switch models.ErrorCode(err) {
				case models.CodeConflict:
				default:
					if err != nil {
						t.Fatalf("round %d, disable %d: %v", round, i, err)
					}
					won++
				}
			}
			list, err := s.ListUsers(ctx)
			if err != nil {
				t.Fatal(err)
			}
			enabled := 0
			for _, u := range list {
				if !u.Disabled() {
					enabled++
				}
			}
			if won != 1 || enabled != 1 {
				t.Fatalf("round %d: %d disables succeeded (%v), %d accounts left enabled; want 1 and 1", round, won, errs, enabled)
			}
			for _, u := range users {
				if _, err := s.EnableUser(ctx, u.ID, "test"); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

func TestResetPassword(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		const old, next = "correct horse battery staple", "a fresh password of mine"
		bob := newAccounts(t, s, "alice", "bob")[1]

		u, otp, err := s.ResetPassword(ctx, bob.ID, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if !u.MustChangePassword || u.SessionVersion != bob.SessionVersion+1 || u.Disabled() {
			t.Errorf("after reset: %+v; want must change, session version bumped", u)
		}
		if err := models.ValidatePassword(otp, "bob"); err != nil || len(otp) != 24 {
			t.Errorf("one-time password %q: %v; want 24 characters within the rules", otp, err)
		}
		if _, other, _ := s.ResetPassword(ctx, bob.ID, "alice"); other == otp {
			t.Error("two resets gave the same one-time password")
		} else {
			otp = other
		}
		if _, err := s.CheckPassword(ctx, "bob", old); models.ErrorCode(err) != models.CodeUnauthorized {
			t.Errorf("old password after reset: %v, want refused", err)
		}
		got, err := s.CheckPassword(ctx, "bob", otp)
		if err != nil || !got.MustChangePassword {
			t.Fatalf("CheckPassword(one-time password) = %+v, %v; want the account, must change", got, err)
		}
		for _, ev := range auditActions(t, s, bob.ID) {
			if strings.Contains(ev, otp) {
				t.Errorf("audit event %q holds the one-time password", ev)
			}
		}
		if a := auditActions(t, s, bob.ID); a[len(a)-1] != "alice user.password_reset username=bob; one-time password issued; sessions ended" {
			t.Errorf("last audit event %q", a[len(a)-1])
		}

		// The new password may not be the one-time password.
		var e *models.Error
		if _, err := s.ChangePassword(ctx, bob.ID, otp, otp, "192.0.2.1", ""); !errors.As(err, &e) || e.Field(models.FieldNewPassword) == "" {
			t.Errorf("ChangePassword(to the one-time password) = %v, want refused on new", err)
		}
		changed, err := s.ChangePassword(ctx, bob.ID, otp, next, "192.0.2.1", "")
		if err != nil || changed.MustChangePassword {
			t.Fatalf("ChangePassword after reset = %+v, %v; want must change cleared", changed, err)
		}
		if _, err := s.CheckPassword(ctx, "bob", next); err != nil {
			t.Errorf("new password: %v", err)
		}
	})
}

func TestEndSessions(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		bob := newAccounts(t, s, "bob")[0]
		u, err := s.EndSessions(ctx, bob.ID, "bob")
		if err != nil || u.SessionVersion != bob.SessionVersion+1 || u.Disabled() {
			t.Fatalf("EndSessions = %+v, %v", u, err)
		}
		if got, _ := s.GetUser(ctx, bob.ID); got.SessionVersion != u.SessionVersion {
			t.Errorf("stored session version %d, want %d", got.SessionVersion, u.SessionVersion)
		}
		if a := auditActions(t, s, bob.ID); a[len(a)-1] != "bob user.sessions_ended username=bob" {
			t.Errorf("audit trail %v", a)
		}
	})
}

// The names the system acts under cannot be taken by a staff account, in
// any case: an account named cli would be credited with what the command
// line did.
func TestReservedUsernamesRefused(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		for _, name := range []string{"cli", "CLI", " bootstrap ", "system", "anonymous"} {
			_, err := s.CreateUser(context.Background(), name, "correct horse battery staple", "test")
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeInvalidRequest || !strings.Contains(e.Field(models.FieldUsername), "reserved for the system") {
				t.Errorf("CreateUser(%q) = %v; want refused on username as reserved", name, err)
			}
		}
		if n, _ := s.CountUsers(context.Background()); n != 0 {
			t.Errorf("%d accounts after refused creates", n)
		}
	})
}

// Every audit row says what kind of actor wrote it, and the actor filter
// keeps the kinds apart.
func TestAuditActorKinds(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		if _, err := s.EnsureBootstrap(ctx); err != nil {
			t.Fatal(err)
		}
		alice := newAccounts(t, s, "alice")[0]
		if _, err := s.CreateUser(ctx, "carol", "correct horse battery staple", models.ActorCLI); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DisableUser(ctx, alice.ID, "carol"); err != nil {
			t.Fatal(err)
		}
		// Creates go through the group commit's own SQL on each engine.
		for _, actor := range []string{"apikey pst_abcd1234 (partner)", "carol"} {
			if _, err := s.CreatePet(ctx, models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable}, actor); err != nil {
				t.Fatal(err)
			}
		}
		events, _, err := s.ListAuditEvents(ctx, models.AuditQuery{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]models.ActorKind{}
		for _, ev := range events {
			got[ev.Actor+" "+ev.Action] = ev.ActorKind
		}
		want := map[string]models.ActorKind{
			"bootstrap user.created":                    models.ActorKindSystem,
			"bootstrap apikey.created":                  models.ActorKindSystem,
			"cli user.created":                          models.ActorKindCLI,
			"carol user.disabled":                       models.ActorKindStaff,
			"apikey pst_abcd1234 (partner) pet.created": models.ActorKindAPIKey,
			"carol pet.created":                         models.ActorKindStaff,
		}
		for k, kind := range want {
			if got[k] != kind {
				t.Errorf("%s: actor kind %q, want %q (all: %v)", k, got[k], kind, got)
			}
		}
		q, err := models.ParseAuditQuery("", "cli", "", "")
		if err != nil || q.ActorKind != models.ActorKindCLI {
			t.Fatalf("ParseAuditQuery(actor cli) = %+v, %v", q, err)
		}
		byCLI, _, err := s.ListAuditEvents(ctx, q)
		if err != nil || len(byCLI) != 1 || byCLI[0].ActorKind != models.ActorKindCLI {
			t.Errorf("events by the command line: %+v, %v", byCLI, err)
		}
	})
}

// The one-time password of a reset signs in once, and not after
// OneTimePasswordLifetime; of many sign-ins with it at once, one gets in.
func TestOneTimePasswordSignsInOnce(t *testing.T) {
	t.Parallel()
	forEachSignIn(t, 20, bcrypt.MinCost, func(t *testing.T, e *signInEnv) {
		ctx := context.Background()
		u, err := e.s.FindUser(ctx, victim)
		if err != nil {
			t.Fatal(err)
		}
		_, otp, err := e.s.ResetPassword(ctx, u.ID, models.ActorCLI)
		if err != nil {
			t.Fatal(err)
		}
		const n = 10
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { _, errs[i] = e.s.Login(ctx, victim, otp, fmt.Sprintf("192.0.2.%d", i+1)) })
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case !spent(err):
				t.Errorf("sign-in with a spent one-time password: %v; want ErrOneTimePasswordSpent", err)
			}
		}
		if ok != 1 {
			t.Errorf("%d of %d sign-ins at once with one one-time password got in; want 1", ok, n)
		}
		if _, err := e.s.Login(ctx, victim, otp, "198.51.100.1"); !spent(err) {
			t.Errorf("a later sign-in with it: %v; want ErrOneTimePasswordSpent", err)
		}
		// The session that got in still chooses the new password with it.
		if _, err := e.s.ChangePassword(ctx, u.ID, otp, "a fresh password of mine", "192.0.2.1", ""); err != nil {
			t.Fatalf("ChangePassword with the spent one-time password: %v", err)
		}
		if _, err := e.s.Login(ctx, victim, "a fresh password of mine", "192.0.2.1"); err != nil {
			t.Errorf("the new password, twice in a row: %v", err)
		}

		// A one-time password unused for a day has expired.
		_, otp, err = e.s.ResetPassword(ctx, u.ID, models.ActorCLI)
		if err != nil {
			t.Fatal(err)
		}
		e.advance(models.OneTimePasswordLifetime - time.Second)
		_, otp2, err := e.s.ResetPassword(ctx, u.ID, models.ActorCLI)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.Login(ctx, victim, otp, "192.0.2.1"); models.ErrorCode(err) != models.CodeUnauthorized || spent(err) {
			t.Errorf("the one-time password of an earlier reset: %v; want the usual wrong password", err)
		}
		e.advance(models.OneTimePasswordLifetime)
		if _, err := e.s.Login(ctx, victim, otp2, "192.0.2.1"); !spent(err) {
			t.Errorf("a one-time password a day old: %v; want ErrOneTimePasswordSpent", err)
		}
	})
}

// spent reports the refusal of a spent one-time password (errors.Is
// matches any error of its code).
func spent(err error) bool {
	var e *models.Error
	return errors.As(err, &e) && e == models.ErrOneTimePasswordSpent
}
