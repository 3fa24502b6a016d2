package models_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"petstore/models"
	"petstore/models/modelstest"
)

// The account the sign-in tests attack.
const (
	victim         = "admin"
	victimPassword = "correct horse battery staple"
)

// openSignIn opens a fresh, migrated store on driver, as modelstest.Open
// does, with room for hashers password checks at once and bcrypt at cost.
// The limit tests give it more hashers than attempts, so that what stops
// an attempt is a limit, not the hashing capacity.
func openSignIn(tb testing.TB, driver string, hashers, cost int) *models.Store {
	tb.Helper()
	cfg := modelstest.Database(tb, driver)
	s, err := models.Open(context.Background(), models.Options{Driver: string(cfg.Driver), DSN: cfg.DSN,
		ConnectTimeout: 20 * time.Second, MaxOpenConns: 20, PasswordCost: cost, PasswordHashers: hashers})
	if err != nil {
		tb.Fatalf("open %s: %v", cfg.Redacted, err)
	}
	tb.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(context.Background()); err != nil {
		tb.Fatalf("migrate %s: %v", cfg.Redacted, err)
	}
	return s
}

// signInEnv is a store with the victim's account and a clock that stands
// still unless moved.
type signInEnv struct {
	s     *models.Store
	clock atomic.Pointer[time.Time]
}

func forEachSignIn(t *testing.T, hashers, cost int, fn func(t *testing.T, e *signInEnv)) {
	t.Helper()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			e := &signInEnv{s: openSignIn(t, driver, hashers, cost)}
			now := time.Now().UTC()
			e.clock.Store(&now)
			e.s.SetClock(func() time.Time { return *e.clock.Load() })
			if _, err := e.s.CreateUser(context.Background(), victim, victimPassword, "test"); err != nil {
				t.Fatal(err)
			}
			fn(t, e)
		})
	}
}

func (e *signInEnv) advance(d time.Duration) {
	now := e.clock.Load().Add(d)
	e.clock.Store(&now)
}

// attempt is one sign-in to fire.
type attempt struct{ username, password, addr string }

// outcome counts the answers to a burst by error code ("" for success).
type outcome struct {
	codes   map[models.Code]int
	checked int64 // passwords bcrypt compared
	audited int   // failed sign-ins in the audit trail
	errs    []error
}

// burst fires every attempt at once and waits for all.
func (e *signInEnv) burst(t *testing.T, attempts []attempt) outcome {
	t.Helper()
	ctx := context.Background()
	before := e.s.SignInCounts().PasswordChecks
	auditedBefore := countAudit(t, e.s, models.ActionLoginFailed)
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		errs  = make([]error, len(attempts))
	)
	for i, a := range attempts {
		wg.Go(func() {
			<-start
			_, errs[i] = e.s.Login(ctx, a.username, a.password, a.addr)
		})
	}
	close(start)
	wg.Wait()
	o := outcome{codes: map[models.Code]int{}, errs: errs}
	for _, err := range errs {
		code := models.Code("")
		if err != nil {
			code = models.ErrorCode(err)
		}
		o.codes[code]++
		if code != "" && code != models.CodeUnauthorized && code != models.CodeRateLimited {
			t.Errorf("sign-in answered %v; want only unauthorized or rate_limited", err)
		}
		if code == models.CodeRateLimited {
			var me *models.Error
			if !errorAs(err, &me) || me.RetryAfter < time.Second || !strings.Contains(me.Message, "Try again in") {
				t.Errorf("throttled sign-in: %+v; want RetryAfter >= 1s and a message saying when", err)
			}
		}
	}
	o.checked = e.s.SignInCounts().PasswordChecks - before
	o.audited = countAudit(t, e.s, models.ActionLoginFailed) - auditedBefore
	if o.codes[models.CodeUnauthorized] != int(o.checked) || o.audited != int(o.checked) {
		t.Errorf("burst: %d checked, %d refused as wrong, %d audited; want all three equal", o.checked, o.codes[models.CodeUnauthorized], o.audited)
	}
	return o
}

func countAudit(tb testing.TB, s *models.Store, action string) int {
	tb.Helper()
	events, _, err := s.ListAuditEvents(context.Background(), models.AuditQuery{Action: action, Limit: 1000})
	if err != nil {
		tb.Fatal(err)
	}
	return len(events)
}

func repeat(n int, a attempt) []attempt {
	out := make([]attempt, n)
	for i := range out {
		out[i] = a
	}
	return out
}

// A burst of wrong passwords for one account from one address: however
// many arrive at once, five are checked, every one of them audited, the
// rest refused unchecked. The right password then still works from
// another address, and from this one once the window has passed.
func TestSignInBurstOneAddress(t *testing.T) {
	t.Parallel()
	forEachSignIn(t, 200, bcrypt.MinCost, func(t *testing.T, e *signInEnv) {
		ctx := context.Background()
		o := e.burst(t, repeat(100, attempt{victim, "not the password at all", "203.0.113.9"}))
		if o.checked != models.MaxFailuresPerUsernameAddress {
			t.Fatalf("%d of 100 concurrent wrong passwords checked, want %d (answers %v)", o.checked, models.MaxFailuresPerUsernameAddress, o.codes)
		}
		if _, err := e.s.Login(ctx, victim, victimPassword, "198.51.100.7"); err != nil {
			t.Fatalf("right password from another address: %v", err)
		}
		_, err := e.s.Login(ctx, victim, victimPassword, "203.0.113.9")
		var me *models.Error
		if !errorAs(err, &me) || me.Code != models.CodeRateLimited || me.RetryAfter <= 0 || me.RetryAfter > models.LoginWindow {
			t.Fatalf("right password from the attacking address: %v; want rate_limited with RetryAfter within the window", err)
		}
		e.advance(me.RetryAfter)
		if _, err := e.s.Login(ctx, victim, victimPassword, "203.0.113.9"); err != nil {
			t.Fatalf("right password after Retry-After: %v", err)
		}
	})
}

// Many addresses against one account: the account's limit lets ten
// checks through, then one at a time with a growing pause, never a lock.
func TestSignInBurstManyAddresses(t *testing.T) {
	t.Parallel()
	forEachSignIn(t, 200, bcrypt.MinCost, func(t *testing.T, e *signInEnv) {
		spread := func(n, from int) []attempt {
			out := make([]attempt, n)
			for i := range out {
				out[i] = attempt{victim, "not the password at all", fmt.Sprintf("10.0.%d.%d", (from+i)/250, (from+i)%250+1)}
			}
			return out
		}
		if o := e.burst(t, spread(100, 0)); o.checked != models.FreeFailuresPerUsername {
			t.Fatalf("%d of 100 concurrent wrong passwords from 100 addresses checked, want %d (answers %v)", o.checked, models.FreeFailuresPerUsername, o.codes)
		}
		// Then one check per pause, and the pause doubles: 1 s, 2 s, 4 s.
		for i, pause := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
			e.advance(pause - time.Millisecond)
			if o := e.burst(t, spread(20, 100+40*i)); o.checked != 0 {
				t.Fatalf("pause %d: %d checked before it ended", i, o.checked)
			}
			e.advance(time.Millisecond)
			if o := e.burst(t, spread(20, 120+40*i)); o.checked != 1 {
				t.Fatalf("pause %d: %d checked when it ended, want 1 (answers %v)", i, o.checked, o.codes)
			}
		}
		// Not a lock: the owner gets in when the pause ends.
		_, err := e.s.Login(context.Background(), victim, victimPassword, "192.0.2.1")
		var me *models.Error
		if !errorAs(err, &me) || me.Code != models.CodeRateLimited || me.RetryAfter != 8*time.Second {
			t.Fatalf("right password during the pause: %v; want rate_limited, Retry-After 8 s", err)
		}
		e.advance(me.RetryAfter)
		if _, err := e.s.Login(context.Background(), victim, victimPassword, "192.0.2.1"); err != nil {
			t.Fatalf("right password after the pause: %v", err)
		}
	})
}

// One address trying many usernames is checked 20 times in the window.
func TestSignInBurstManyUsernames(t *testing.T) {
	t.Parallel()
	forEachSignIn(t, 200, bcrypt.MinCost, func(t *testing.T, e *signInEnv) {
		attempts := make([]attempt, 100)
		for i := range attempts {
			attempts[i] = attempt{fmt.Sprintf("guess%d", i), "not the password at all", "203.0.113.9"}
		}
		if o := e.burst(t, attempts); o.checked != models.MaxFailuresPerAddress {
			t.Fatalf("%d of 100 concurrent sign-ins from one address checked, want %d (answers %v)", o.checked, models.MaxFailuresPerAddress, o.codes)
		}
		if _, err := e.s.Login(context.Background(), victim, victimPassword, "198.51.100.7"); err != nil {
			t.Fatalf("right password from another address: %v", err)
		}
	})
}

// Names that look like the account's (on MariaDB its collation made them
// equal) are no account: they neither sign in with its password nor count
// against it.
func TestSignInLookAlikeUsernames(t *testing.T) {
	t.Parallel()
	forEachSignIn(t, 200, bcrypt.MinCost, func(t *testing.T, e *signInEnv) {
		ctx := context.Background()
		lookAlikes := []string{"ádmin", "ａｄｍｉｎ", "admin\u200b", "admin\u00a0x", "аdmin" /* Cyrillic а */}
		for _, name := range lookAlikes {
			if u, err := e.s.Login(ctx, name, victimPassword, "192.0.2.1"); models.ErrorCode(err) != models.CodeUnauthorized {
				t.Errorf("sign-in as %q with admin's password: %+v, %v; want unauthorized", name, u, err)
			}
		}
		// Five wrong passwords for each look-alike from one address, at once.
		var attempts []attempt
		for _, name := range lookAlikes[:3] {
			attempts = append(attempts, repeat(models.MaxFailuresPerUsernameAddress, attempt{name, "not the password at all", "203.0.113.9"})...)
		}
		if o := e.burst(t, attempts); o.codes[models.CodeRateLimited] != 0 {
			t.Errorf("look-alikes share a limit: %v", o.codes)
		}
		if _, err := e.s.Login(ctx, victim, victimPassword, "203.0.113.9"); err != nil {
			t.Fatalf("admin after failures as look-alikes from the same address: %v", err)
		}
	})
}

// A failed sign-in names the account only when there is one: what was
// typed for an unknown one (perhaps a password) is not in the audit trail.
func TestSignInFailureAudit(t *testing.T) {
	t.Parallel()
	forEachSignIn(t, 0, bcrypt.MinCost, func(t *testing.T, e *signInEnv) {
		ctx := context.Background()
		typed := "Hunter2-my-real-password"
		if _, err := e.s.Login(ctx, typed, "", "203.0.113.9"); models.ErrorCode(err) != models.CodeUnauthorized {
			t.Fatalf("unknown username: %v", err)
		}
		if _, err := e.s.Login(ctx, "Admin", "not the password at all", "203.0.113.10"); models.ErrorCode(err) != models.CodeUnauthorized {
			t.Fatalf("wrong password: %v", err)
		}
		events, _, err := e.s.ListAuditEvents(ctx, models.AuditQuery{Action: models.ActionLoginFailed, Limit: 10})
		if err != nil || len(events) != 2 {
			t.Fatalf("failed sign-ins audited: %+v, %v; want 2", events, err)
		}
		known, unknown := events[0], events[1] // newest first
		if unknown.Actor != "(unknown account)" || unknown.TargetID != 0 || unknown.Detail != "sign-in from 203.0.113.9" {
			t.Errorf("unknown account's failure audited as %+v", unknown)
		}
		u, err := e.s.CheckPassword(ctx, victim, victimPassword)
		if err != nil {
			t.Fatal(err)
		}
		if known.Actor != victim || known.TargetID != u.ID || known.Detail != "sign-in from 203.0.113.10" {
			t.Errorf("admin's failure audited as %+v", known)
		}
		for _, ev := range events {
			if strings.Contains(strings.ToLower(ev.Actor+ev.Detail), strings.ToLower(typed)) {
				t.Errorf("typed text in the audit trail: %+v", ev)
			}
		}
	})
}

// A wrong current password in a password change is a password check like
// a sign-in: it takes from the same limits and is audited.
func TestChangePasswordWithinSignInLimits(t *testing.T) {
	t.Parallel()
	forEachSignIn(t, 0, bcrypt.MinCost, func(t *testing.T, e *signInEnv) {
		ctx := context.Background()
		u, err := e.s.CheckPassword(ctx, victim, victimPassword)
		if err != nil {
			t.Fatal(err)
		}
		const next = "another battery horse staple"
		for i := range models.MaxFailuresPerUsernameAddress {
			if _, err := e.s.ChangePassword(ctx, u.ID, "not the password at all", next, "203.0.113.9", ""); models.ErrorCode(err) != models.CodeInvalidRequest {
				t.Fatalf("wrong current password %d: %v, want invalid_request", i, err)
			}
		}
		if _, err := e.s.ChangePassword(ctx, u.ID, victimPassword, next, "203.0.113.9", ""); models.ErrorCode(err) != models.CodeRateLimited {
			t.Fatalf("sixth change from the address: %v, want rate_limited", err)
		}
		if _, err := e.s.Login(ctx, victim, victimPassword, "203.0.113.9"); models.ErrorCode(err) != models.CodeRateLimited {
			t.Fatalf("sign-in from the address: %v, want rate_limited", err)
		}
		if n := countAudit(t, e.s, models.ActionLoginFailed); n != models.MaxFailuresPerUsernameAddress {
			t.Errorf("%d failures audited, want %d", n, models.MaxFailuresPerUsernameAddress)
		}
		// A right one gives its check back: changing twice from a fresh
		// address never runs into the limit.
		if _, err := e.s.ChangePassword(ctx, u.ID, victimPassword, next, "198.51.100.7", ""); err != nil {
			t.Fatal(err)
		}
	})
}

// Password hashing is bounded: at most PasswordHashers run at once, and a
// sign-in that finds them busy (and as many waiting) is answered at once,
// unchecked and unlimited, with Retry-After.
func TestSignInHashingBounded(t *testing.T) {
	t.Parallel()
	const hashers = 2
	// Cost 10: slow enough that the burst finds the hashers busy.
	forEachSignIn(t, hashers, 10, func(t *testing.T, e *signInEnv) {
		attempts := make([]attempt, 40)
		for i := range attempts {
			attempts[i] = attempt{victim, "not the password at all", fmt.Sprintf("10.1.0.%d", i+1)}
		}
		busyBefore := e.s.SignInCounts().Busy
		ctx := context.Background()
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			errs  = make([]error, len(attempts))
		)
		for i, a := range attempts {
			wg.Go(func() {
				<-start
				_, errs[i] = e.s.Login(ctx, a.username, a.password, a.addr)
			})
		}
		close(start)
		wg.Wait()
		busy := 0
		for _, err := range errs {
			var me *models.Error
			switch {
			case models.ErrorCode(err) == models.CodeUnauthorized, models.ErrorCode(err) == models.CodeRateLimited:
			case errorAs(err, &me) && me.Code == models.CodeUnavailable && me.RetryAfter == time.Second:
				busy++
			default:
				t.Errorf("sign-in answered %v", err)
			}
		}
		if peak := e.s.HashingPeak(); peak > hashers || peak < 1 {
			t.Errorf("%d hashes ran at once, want 1..%d", peak, hashers)
		}
		if busy == 0 || int64(busy) != e.s.SignInCounts().Busy-busyBefore {
			t.Errorf("%d sign-ins answered busy, counted %d; want some, all counted", busy, e.s.SignInCounts().Busy-busyBefore)
		}
		// A busy answer took nothing from the limits: the account still has
		// its ten free checks minus those made.
		checked := len(attempts) - busy
		if free := models.FreeFailuresPerUsername - checked; free > 0 {
			if _, err := e.s.Login(ctx, victim, victimPassword, "192.0.2.1"); err != nil {
				t.Errorf("right password after the burst: %v", err)
			}
		}
	})
}

func errorAs(err error, target **models.Error) bool { return errors.As(err, target) }
