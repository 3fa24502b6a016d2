package models_test

import (
	"context"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

// anaPassword is the password of the member of a totpEnv.
const anaPassword = "correct horse battery staple"

// totpEnv is a store with one member and a clock that stands still unless
// moved.
type totpEnv struct {
	s     *models.Store
	u     models.User
	clock atomic.Pointer[time.Time]
}

func newTOTPEnv(t *testing.T, s *models.Store) *totpEnv {
	t.Helper()
	e := &totpEnv{s: s}
	now := time.Date(2026, 11, 27, 9, 0, 10, 0, time.UTC)
	e.clock.Store(&now)
	s.SetClock(func() time.Time { return *e.clock.Load() })
	u, err := s.CreateUser(context.Background(), "ana", anaPassword, "test")
	if err != nil {
		t.Fatal(err)
	}
	e.u = u
	return e
}

func (e *totpEnv) now() time.Time { return *e.clock.Load() }

func (e *totpEnv) advance(d time.Duration) {
	now := e.clock.Load().Add(d)
	e.clock.Store(&now)
}

// enrol turns two-step sign-in on and returns the secret and recovery codes.
func (e *totpEnv) enrol(t *testing.T) (string, []string) {
	t.Helper()
	ctx := context.Background()
	en, err := e.s.BeginTOTP(ctx, e.u.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, codes, err := e.s.ConfirmTOTP(ctx, e.u.ID, models.TOTPCode(en.Secret, e.now()), "192.0.2.1", "")
	if err != nil {
		t.Fatalf("confirm with the current code: %v", err)
	}
	return en.Secret, codes
}

func TestTOTPEnrolment(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		e := newTOTPEnv(t, s)
		ctx := context.Background()
		en, err := s.BeginTOTP(ctx, e.u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(en.URL, "otpauth://totp/Petstore:ana?") || !strings.Contains(en.URL, "secret="+en.Secret) ||
			!strings.Contains(en.URL, "period=30") || !strings.Contains(en.URL, "digits=6") || !strings.Contains(en.URL, "algorithm=SHA1") {
			t.Fatalf("otpauth URL %q", en.URL)
		}
		// Pending: not yet a second step.
		if on, err := s.HasSecondFactor(ctx, e.u.ID); err != nil || on {
			t.Fatalf("HasSecondFactor before confirming = %v, %v", on, err)
		}
		if p, err := s.PendingTOTP(ctx, e.u.ID); err != nil || p.Secret != en.Secret {
			t.Fatalf("PendingTOTP = %+v, %v; want the secret begun", p, err)
		}
		if _, _, err := s.VerifySecondStep(ctx, e.u.ID, models.TOTPCode(en.Secret, e.now()), "192.0.2.1"); err != models.ErrWrongCode {
			t.Fatalf("a pending app's code at sign-in: %v; want ErrWrongCode", err)
		}
		wrong := models.TOTPCode(en.Secret, e.now().Add(5*time.Minute))
		if _, _, err := s.ConfirmTOTP(ctx, e.u.ID, wrong, "192.0.2.1", ""); models.ErrorCode(err) != models.CodeInvalidRequest {
			t.Fatalf("confirm with a code five minutes off: %v; want invalid_request", err)
		}
		u, codes, err := s.ConfirmTOTP(ctx, e.u.ID, models.TOTPCode(en.Secret, e.now()), "192.0.2.1", "")
		if err != nil {
			t.Fatal(err)
		}
		if len(codes) != models.RecoveryCodeCount || u.SessionVersion <= e.u.SessionVersion {
			t.Fatalf("confirm: %d codes, session version %d -> %d; want 10 codes and other sessions ended", len(codes), e.u.SessionVersion, u.SessionVersion)
		}
		st, err := s.TwoFactorState(ctx, e.u.ID)
		if err != nil || !st.TOTP || st.Pending || st.RecoveryCodesLeft != 10 {
			t.Fatalf("state = %+v, %v", st, err)
		}
		if _, err := s.BeginTOTP(ctx, e.u.ID); models.ErrorCode(err) != models.CodeConflict {
			t.Fatalf("begin over a confirmed app: %v; want conflict", err)
		}
		if n := countAudit(t, s, models.ActionTwoFactorEnabled); n != 1 {
			t.Fatalf("%d enrolments audited", n)
		}
	})
}

// A code is accepted for its step and one either side, once: a code used
// is refused for the rest of its window, and so is any code of an earlier
// step.
func TestTOTPCodeOnce(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		e := newTOTPEnv(t, s)
		ctx := context.Background()
		secret, _ := e.enrol(t)
		e.advance(time.Minute)
		// The password alone is audited as accepted, not as a sign-in.
		logins := countAudit(t, s, models.ActionLogin)
		if _, err := s.Login(ctx, "ana", "correct horse battery staple", "192.0.2.1"); err != nil {
			t.Fatal(err)
		}
		if n, m := countAudit(t, s, models.ActionLogin), countAudit(t, s, models.ActionPasswordAccepted); n != logins || m != 1 {
			t.Fatalf("after the password: %d sign-ins audited (%d before), %d passwords accepted; want no sign-in and 1", n, logins, m)
		}
		verify := func(code string) error {
			_, _, err := s.VerifySecondStep(ctx, e.u.ID, code, "192.0.2.1")
			return err
		}
		prev := models.TOTPCode(secret, e.now().Add(-30*time.Second))
		if err := verify(prev); err != nil {
			t.Fatalf("the previous step's code: %v", err)
		}
		if err := verify(prev); err != models.ErrWrongCode {
			t.Fatalf("the same code again: %v; want ErrWrongCode", err)
		}
		cur := models.TOTPCode(secret, e.now())
		if err := verify(cur[:3] + " " + cur[3:]); err != nil {
			t.Fatalf("the current code, with a space: %v", err)
		}
		e.advance(20 * time.Second)
		if err := verify(cur); err != models.ErrWrongCode {
			t.Fatalf("the used code, still within its window: %v; want ErrWrongCode", err)
		}
		if err := verify(models.TOTPCode(secret, e.now().Add(time.Minute))); err != models.ErrWrongCode {
			t.Fatalf("a code two steps ahead: %v; want ErrWrongCode", err)
		}
		if err := verify(models.TOTPCode(secret, e.now().Add(30*time.Second))); err != nil {
			t.Fatalf("the next step's code: %v", err)
		}
		if n := countAudit(t, s, models.ActionSecondStepFailed); n != 3 {
			t.Fatalf("%d failed codes audited, want 3", n)
		}
		if n := countAudit(t, s, models.ActionLogin); n != logins+3 {
			t.Fatalf("%d sign-ins audited after 3 right codes, want %d", n, logins+3)
		}
	})
}

// Recovery codes each work once, in place of an app's code; the member
// sees how many remain; new ones void the old.
func TestRecoveryCodes(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		e := newTOTPEnv(t, s)
		ctx := context.Background()
		_, codes := e.enrol(t)
		for i, c := range codes[:3] {
			if _, how, err := s.VerifySecondStep(ctx, e.u.ID, strings.ToUpper(c), "192.0.2.1"); err != nil || how != "recovery code" {
				t.Fatalf("recovery code %d: %q, %v", i, how, err)
			}
			if _, _, err := s.VerifySecondStep(ctx, e.u.ID, c, "192.0.2.1"); err != models.ErrWrongCode {
				t.Fatalf("recovery code %d again: %v; want ErrWrongCode", i, err)
			}
		}
		if st, _ := s.TwoFactorState(ctx, e.u.ID); st.RecoveryCodesLeft != 7 {
			t.Fatalf("%d left, want 7", st.RecoveryCodesLeft)
		}
		if n := countAudit(t, s, models.ActionRecoveryCodeUsed); n != 3 {
			t.Fatalf("%d recovery code uses audited, want 3", n)
		}
		fresh, err := s.RenewRecoveryCodes(ctx, e.u.ID, anaPassword, "192.0.2.1")
		if err != nil || len(fresh) != 10 {
			t.Fatal(len(fresh), err)
		}
		e.advance(LoginWindowForTests)
		if _, _, err := s.VerifySecondStep(ctx, e.u.ID, codes[5], "192.0.2.2"); err != models.ErrWrongCode {
			t.Fatalf("an old code after renewal: %v", err)
		}
		if _, _, err := s.VerifySecondStep(ctx, e.u.ID, fresh[9], "192.0.2.2"); err != nil {
			t.Fatalf("a new code: %v", err)
		}
		// Many at once with the same code: exactly one is let through.
		var ok atomic.Int32
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				if _, _, err := s.VerifySecondStep(ctx, e.u.ID, fresh[0], "192.0.2.3"); err == nil {
					ok.Add(1)
				}
			})
		}
		wg.Wait()
		if ok.Load() != 1 {
			t.Fatalf("one recovery code at once from 20 sign-ins: %d accepted, want 1", ok.Load())
		}
	})
}

// LoginWindowForTests moves past every strict sign-in limit.
const LoginWindowForTests = models.LoginWindow

// A burst of wrong codes checks at most the sign-in limit's number, each
// audited; the rest are refused unchecked. The right code still works
// from another address.
func TestTOTPBurstOfWrongCodes(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		e := newTOTPEnv(t, s)
		ctx := context.Background()
		secret, _ := e.enrol(t)
		auditedBefore := countAudit(t, s, models.ActionSecondStepFailed)
		right := models.TOTPCode(secret, e.now().Add(30*time.Second))
		wrong := "000000"
		if wrong == right || wrong == models.TOTPCode(secret, e.now()) || wrong == models.TOTPCode(secret, e.now().Add(-30*time.Second)) {
			wrong = "999999"
		}
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			codes sync.Map
		)
		for i := range 100 {
			wg.Go(func() {
				<-start
				_, _, err := s.VerifySecondStep(ctx, e.u.ID, wrong, "203.0.113.9")
				codes.Store(i, models.ErrorCode(err))
			})
		}
		close(start)
		wg.Wait()
		count := map[models.Code]int{}
		codes.Range(func(_, v any) bool { count[v.(models.Code)]++; return true })
		audited := countAudit(t, s, models.ActionSecondStepFailed) - auditedBefore
		if count[models.CodeUnauthorized] != models.MaxFailuresPerUsernameAddress || audited != models.MaxFailuresPerUsernameAddress ||
			count[models.CodeRateLimited] != 100-models.MaxFailuresPerUsernameAddress {
			t.Fatalf("100 concurrent wrong codes: %v, %d audited; want %d checked and audited, the rest rate_limited",
				count, audited, models.MaxFailuresPerUsernameAddress)
		}
		if _, _, err := s.VerifySecondStep(ctx, e.u.ID, right, "203.0.113.9"); models.ErrorCode(err) != models.CodeRateLimited {
			t.Fatalf("right code from the attacking address: %v; want rate_limited", err)
		}
		if _, _, err := s.VerifySecondStep(ctx, e.u.ID, right, "198.51.100.7"); err != nil {
			t.Fatalf("right code from another address: %v", err)
		}
	})
}

// Two instances: a code used on one is refused on the other, even when
// both are sent at once.
func TestTOTPTwoInstances(t *testing.T) {
	t.Parallel()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			a, b := modelstest.OpenPair(t, driver)
			e := newTOTPEnv(t, a)
			b.SetClock(func() time.Time { return *e.clock.Load() })
			ctx := context.Background()
			secret, _ := e.enrol(t)
			e.advance(time.Minute)
			code := models.TOTPCode(secret, e.now())
			if _, _, err := a.VerifySecondStep(ctx, e.u.ID, code, "192.0.2.1"); err != nil {
				t.Fatal(err)
			}
			if _, _, err := b.VerifySecondStep(ctx, e.u.ID, code, "192.0.2.1"); err != models.ErrWrongCode {
				t.Fatalf("code used on A, on B: %v; want ErrWrongCode", err)
			}
			e.advance(30 * time.Second)
			code = models.TOTPCode(secret, e.now())
			var ok atomic.Int32
			var wg sync.WaitGroup
			for i := range 20 {
				st := a
				if i%2 == 1 {
					st = b
				}
				wg.Go(func() {
					if _, _, err := st.VerifySecondStep(ctx, e.u.ID, code, "192.0.2.5"); err == nil {
						ok.Add(1)
					}
				})
			}
			wg.Wait()
			if ok.Load() != 1 {
				t.Fatalf("one code sent 20 times at once to two instances: %d accepted, want 1", ok.Load())
			}
		})
	}
}

// The secret is sealed with a key outside the database: without the key
// it cannot be read or checked; an old key still opens it and the secret is
// sealed again under the new key.
func TestTOTPSecretKeys(t *testing.T) {
	t.Parallel()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			cfg := modelstest.Database(t, driver)
			open := func(keys ...[]byte) *models.Store {
				s, err := models.Open(context.Background(), models.Options{Driver: string(cfg.Driver), DSN: cfg.DSN,
					ConnectTimeout: 20 * time.Second, MaxOpenConns: 5, PasswordCost: 4, SecretKeys: keys})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
			oldKey := []byte("0123456789abcdef0123456789abcdef")
			newKey := []byte("fedcba9876543210fedcba9876543210")
			a := open(oldKey)
			if _, err := a.Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			e := newTOTPEnv(t, a)
			ctx := context.Background()
			secret, _ := e.enrol(t)

			none := open()
			none.SetClock(e.now)
			if _, err := none.BeginTOTP(ctx, e.u.ID); err != models.ErrNoSecretKey {
				t.Fatalf("enrol without a key: %v; want ErrNoSecretKey", err)
			}
			if _, _, err := none.VerifySecondStep(ctx, e.u.ID, models.TOTPCode(secret, e.now()), "192.0.2.1"); models.ErrorCode(err) != models.CodeUnavailable {
				t.Fatalf("sign in without the key: %v; want unavailable", err)
			}

			rotated := open(newKey, oldKey)
			rotated.SetClock(e.now)
			e.advance(30 * time.Second)
			if _, _, err := rotated.VerifySecondStep(ctx, e.u.ID, models.TOTPCode(secret, e.now()), "192.0.2.1"); err != nil {
				t.Fatalf("sign in with the old key kept: %v", err)
			}
			if n, missing, err := rotated.RekeySecrets(ctx); err != nil || n != 0 || missing != 0 {
				t.Fatalf("RekeySecrets after use = %d, %d, %v; want the use to have sealed it again", n, missing, err)
			}
			only := open(newKey)
			only.SetClock(e.now)
			e.advance(30 * time.Second)
			if _, _, err := only.VerifySecondStep(ctx, e.u.ID, models.TOTPCode(secret, e.now()), "192.0.2.1"); err != nil {
				t.Fatalf("sign in with the new key alone: %v", err)
			}
		})
	}
}

// Required per role: a member cannot turn off the last second step; an
// admin's reset removes it all and ends every session.
func TestTwoFactorRequiredAndReset(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		e := newTOTPEnv(t, s)
		ctx := context.Background()
		if need, err := s.NeedsSecondFactorSetup(ctx, e.u); err != nil || need {
			t.Fatalf("not required: NeedsSecondFactorSetup = %v, %v", need, err)
		}
		if err := s.RequireTwoFactor(ctx, e.u.Role, true, "boss"); err != nil {
			t.Fatal(err)
		}
		if need, err := s.NeedsSecondFactorSetup(ctx, e.u); err != nil || !need {
			t.Fatalf("required, none set up: NeedsSecondFactorSetup = %v, %v", need, err)
		}
		e.enrol(t)
		if need, _ := s.NeedsSecondFactorSetup(ctx, e.u); need {
			t.Fatal("required and set up: still asked to set up")
		}
		if _, err := s.DisableTOTP(ctx, e.u.ID, anaPassword, "192.0.2.1", ""); models.ErrorCode(err) != models.CodeConflict {
			t.Fatalf("turn off the last step while required: %v; want conflict", err)
		}
		u, err := s.ResetTwoFactor(ctx, e.u.ID, "boss")
		if err != nil {
			t.Fatal(err)
		}
		st, _ := s.TwoFactorState(ctx, e.u.ID)
		if st.TOTP || st.RecoveryCodesLeft != 0 || u.SessionVersion <= e.u.SessionVersion {
			t.Fatalf("after reset: %+v, version %d", st, u.SessionVersion)
		}
		if err := s.RequireTwoFactor(ctx, e.u.Role, false, "boss"); err != nil {
			t.Fatal(err)
		}
		e.enrol(t)
		if _, err := s.DisableTOTP(ctx, e.u.ID, anaPassword, "192.0.2.1", ""); err != nil {
			t.Fatalf("turn off when not required: %v", err)
		}
		for _, a := range []string{models.ActionTwoFactorRequired, models.ActionTwoFactorOptional, models.ActionTwoFactorReset, models.ActionTwoFactorDisabled} {
			if n := countAudit(t, s, a); n != 1 {
				t.Errorf("%s audited %d times, want 1", a, n)
			}
		}
	})
}

// Removing or replacing a second step asks for the member's password or a
// current code from their app: a session left open cannot turn the app
// off, read new recovery codes or remove a passkey. A wrong proof changes
// nothing, is audited and counts against the sign-in limits; a code that
// proved it is spent; a refusal for another reason spends no check.
func TestSecondStepChangesNeedProof(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		e := newTOTPEnv(t, s)
		ctx := context.Background()
		if _, err := s.DisableTOTP(ctx, e.u.ID, anaPassword, "192.0.2.1", ""); models.ErrorCode(err) != models.CodeConflict {
			t.Fatalf("turn off an app that is not on: %v; want conflict", err)
		}
		secret, codes := e.enrol(t)
		if _, err := s.AddPasskey(ctx, e.u.ID, "Laptop", "cred-1", "{}", ""); err != nil {
			t.Fatal(err)
		}
		keys, _ := s.ListPasskeys(ctx, e.u.ID)
		wantProofRefused := func(what string, err error) {
			t.Helper()
			var me *models.Error
			if !errors.As(err, &me) || me.Code != models.CodeInvalidRequest || me.Field(models.FieldProof) == "" {
				t.Fatalf("%s: %v; want the proof field refused", what, err)
			}
		}
		e.advance(time.Minute)
		failedCodes, failedPasswords := countAudit(t, s, models.ActionSecondStepFailed), countAudit(t, s, models.ActionLoginFailed)
		for _, proof := range []string{"", "not my password at all", "000000"} {
			if proof == models.TOTPCode(secret, e.now()) {
				proof = "111111"
			}
			_, err := s.DisableTOTP(ctx, e.u.ID, proof, "192.0.2.10", "")
			wantProofRefused("turn off with "+strconv.Quote(proof), err)
		}
		_, err := s.RenewRecoveryCodes(ctx, e.u.ID, "wrong password, long", "192.0.2.11")
		wantProofRefused("new recovery codes with a wrong password", err)
		_, err = s.RemovePasskey(ctx, e.u.ID, keys[0].ID, "wrong password, long", "192.0.2.12", "")
		wantProofRefused("remove a passkey with a wrong password", err)
		if st, _ := s.TwoFactorState(ctx, e.u.ID); !st.TOTP || st.RecoveryCodesLeft != 10 || len(st.Passkeys) != 1 {
			t.Fatalf("after wrong proofs: %+v; want everything kept", st)
		}
		if _, _, err := s.VerifySecondStep(ctx, e.u.ID, codes[0], "192.0.2.1"); err != nil {
			t.Fatalf("a recovery code after a refused renewal: %v", err)
		}
		if a, b := countAudit(t, s, models.ActionSecondStepFailed)-failedCodes, countAudit(t, s, models.ActionLoginFailed)-failedPasswords; a != 1 || b != 4 {
			t.Fatalf("wrong proofs audited: %d codes, %d passwords; want 1 and 4", a, b)
		}
		// Wrong proofs count against the limits of the address.
		for i := range models.MaxFailuresPerUsernameAddress - 3 {
			_, err := s.DisableTOTP(ctx, e.u.ID, "wrong password, long", "192.0.2.10", "")
			wantProofRefused("wrong proof "+strconv.Itoa(i+4), err)
		}
		if _, err := s.DisableTOTP(ctx, e.u.ID, anaPassword, "192.0.2.10", ""); models.ErrorCode(err) != models.CodeRateLimited {
			t.Fatalf("the right password after %d wrong proofs from one address: %v; want rate_limited", models.MaxFailuresPerUsernameAddress, err)
		}

		// The password proves it.
		fresh, err := s.RenewRecoveryCodes(ctx, e.u.ID, anaPassword, "192.0.2.1")
		if err != nil || len(fresh) != models.RecoveryCodeCount {
			t.Fatalf("new recovery codes with the password: %d, %v", len(fresh), err)
		}
		// So does a current code, which is then spent.
		code := models.TOTPCode(secret, e.now())
		before, _ := s.GetUser(ctx, e.u.ID)
		after, err := s.RemovePasskey(ctx, e.u.ID, keys[0].ID, code[:3]+" "+code[3:], "192.0.2.1", "")
		if err != nil {
			t.Fatalf("remove a passkey with a current code: %v", err)
		}
		if after.SessionVersion <= before.SessionVersion {
			t.Fatal("removing a passkey did not end the other sessions")
		}
		if _, _, err := s.VerifySecondStep(ctx, e.u.ID, code, "192.0.2.1"); err != models.ErrWrongCode {
			t.Fatalf("the code that removed a passkey, at sign-in: %v; want ErrWrongCode", err)
		}
		_, err = s.DisableTOTP(ctx, e.u.ID, code, "192.0.2.1", "")
		wantProofRefused("turn off with a spent code", err)
		e.advance(30 * time.Second)
		off, err := s.DisableTOTP(ctx, e.u.ID, models.TOTPCode(secret, e.now()), "192.0.2.1", "")
		if err != nil {
			t.Fatalf("turn off with a current code: %v", err)
		}
		if off.SessionVersion <= after.SessionVersion {
			t.Fatal("turning the app off did not end the other sessions")
		}
		if on, _ := s.HasSecondFactor(ctx, e.u.ID); on {
			t.Fatal("a second step is left")
		}
		for _, a := range []string{models.ActionRecoveryCodesRenewed, models.ActionPasskeyRemoved, models.ActionTwoFactorDisabled} {
			if n := countAudit(t, s, a); n != 1 {
				t.Errorf("%s audited %d times, want 1", a, n)
			}
		}
	})
}

// A dump of the database alone holds neither an authenticator app's secret
// (sealed with a key kept outside it) nor a recovery code (hashed): no
// column of their tables holds one, in any case or spacing.
func TestSecondStepsUnreadableFromDump(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		e := newTOTPEnv(t, s)
		secret, codes := e.enrol(t)
		raw, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(secret)
		if err != nil {
			t.Fatal(err)
		}
		secrets := []string{strings.ToLower(secret), strings.ToLower(hex.EncodeToString(raw)), strings.ToLower(base64.StdEncoding.EncodeToString(raw)), string(raw)}
		for _, c := range codes {
			secrets = append(secrets, c, strings.ReplaceAll(c, "-", ""))
		}
		cells := 0
		for _, table := range []string{"totp_secrets", "recovery_codes"} {
			rows, err := s.SQLDB().QueryContext(context.Background(), "SELECT * FROM "+table)
			if err != nil {
				t.Fatal(err)
			}
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				for i, v := range vals {
					cell := strings.ToLower(fmt.Sprint(v))
					if b, ok := v.([]byte); ok {
						cell = strings.ToLower(string(b))
					}
					cells++
					for _, sec := range secrets {
						if strings.Contains(cell, strings.ToLower(sec)) {
							t.Errorf("%s.%s holds a secret in the clear: %q", table, cols[i], cell)
						}
					}
				}
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
		}
		if cells == 0 {
			t.Fatal("no rows read")
		}
	})
}
