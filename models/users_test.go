package models_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

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
	tests := []struct {
		name string
		pw   string
		ok   bool
	}{
		{"10 characters", "0123456789", true},
		{"72 bytes", strings.Repeat("p", 72), true},
		{"18 emoji (72 bytes)", strings.Repeat("🐾", 18), true},
		{"spaces count", "          ", true},
		{"empty", "", false},
		{"9 characters", "012345678", false},
		{"9 code points in 18 bytes", strings.Repeat("é", 9), false},
		{"73 bytes", strings.Repeat("p", 73), false},
		{"19 emoji (76 bytes)", strings.Repeat("🐾", 19), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := models.ValidatePassword(tt.pw)
			if tt.ok {
				if err != nil {
					t.Fatalf("ValidatePassword(%q) = %v, want ok", tt.pw, err)
				}
				return
			}
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeInvalidRequest || e.Field("password") == "" {
				t.Fatalf("ValidatePassword(%q) = %v, want invalid_request on password", tt.pw, err)
			}
			if strings.Contains(err.Error(), tt.pw) && tt.pw != "" {
				t.Errorf("error %q repeats the password", err)
			}
		})
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
		if err := models.ValidatePassword(b.Password); err != nil {
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
