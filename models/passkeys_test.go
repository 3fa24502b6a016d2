package models_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

// A challenge made on one instance is answered on the other, once; an
// expired one or one for another purpose or member is refused.
func TestWebAuthnChallenges(t *testing.T) {
	t.Parallel()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			a, b := modelstest.OpenPair(t, driver)
			e := newTOTPEnv(t, a)
			b.SetClock(e.now)
			ctx := context.Background()
			tok, err := a.SaveChallenge(ctx, e.u.ID, "register", `{"challenge":"x"}`)
			if err != nil {
				t.Fatal(err)
			}
			var got atomic.Int32
			var wg sync.WaitGroup
			for i := range 10 {
				st := a
				if i%2 == 1 {
					st = b
				}
				wg.Go(func() {
					if sess, err := st.TakeChallenge(ctx, tok, e.u.ID, "register"); err == nil && sess == `{"challenge":"x"}` {
						got.Add(1)
					}
				})
			}
			wg.Wait()
			if got.Load() != 1 {
				t.Fatalf("one challenge answered 10 times at once on two instances: %d took it, want 1", got.Load())
			}
			tok, _ = a.SaveChallenge(ctx, 0, "login", "{}")
			if _, err := b.TakeChallenge(ctx, tok, 0, "second"); models.ErrorCode(err) != models.CodeUnauthorized {
				t.Fatalf("a sign-in challenge taken for a second step: %v", err)
			}
			tok, _ = a.SaveChallenge(ctx, 0, "login", "{}")
			e.advance(models.ChallengeLifetime)
			if _, err := b.TakeChallenge(ctx, tok, 0, "login"); models.ErrorCode(err) != models.CodeUnauthorized {
				t.Fatalf("an expired challenge: %v", err)
			}
		})
	}
}

// Passkeys count as a second step: the last one cannot be removed while the
// role requires one; a use swaps the stored credential once.
func TestPasskeysStore(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		e := newTOTPEnv(t, s)
		ctx := context.Background()
		u, err := s.AddPasskey(ctx, e.u.ID, "  Laptop  ", "cred-1", `{"n":0}`, "")
		if err != nil || u.SessionVersion <= e.u.SessionVersion {
			t.Fatalf("add: %+v, %v", u, err)
		}
		if on, _ := s.HasSecondFactor(ctx, e.u.ID); !on {
			t.Fatal("a passkey is not a second step")
		}
		p, err := s.PasskeyByCredentialID(ctx, "cred-1")
		if err != nil || p.Name != "Laptop" || p.UserID != e.u.ID {
			t.Fatalf("find: %+v, %v", p, err)
		}
		if err := s.UsePasskey(ctx, p, `{"n":1}`); err != nil {
			t.Fatal(err)
		}
		if err := s.UsePasskey(ctx, p, `{"n":1}`); models.ErrorCode(err) != models.CodeUnauthorized {
			t.Fatalf("a second use from the same stored state: %v", err)
		}
		if p2, _ := s.PasskeyByCredentialID(ctx, "cred-1"); p2.LastUsedAt == nil || p2.Credential != `{"n":1}` {
			t.Fatalf("after use: %+v", p2)
		}
		if err := s.RequireTwoFactor(ctx, e.u.Role, true, "boss"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RemovePasskey(ctx, e.u.ID, p.ID, anaPassword, "192.0.2.1", ""); models.ErrorCode(err) != models.CodeConflict {
			t.Fatalf("remove the last passkey while required: %v", err)
		}
		e.enrol(t)
		if _, err := s.DisableTOTP(ctx, e.u.ID, anaPassword, "192.0.2.1", ""); err != nil {
			t.Fatalf("turn the app off with a passkey left: %v", err)
		}
		if _, err := s.AddPasskey(ctx, e.u.ID, "Phone", "cred-2", "{}", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RemovePasskey(ctx, e.u.ID, p.ID, anaPassword, "192.0.2.1", ""); err != nil {
			t.Fatalf("remove one of two passkeys: %v", err)
		}
		if _, err := s.ResetTwoFactor(ctx, e.u.ID, "boss"); err != nil {
			t.Fatal(err)
		}
		if keys, _ := s.ListPasskeys(ctx, e.u.ID); len(keys) != 0 {
			t.Fatalf("passkeys after a reset: %d", len(keys))
		}
	})
}

// A member whose role requires a second step, with an app and one passkey,
// turning the app off and removing the passkey at once: one goes through,
// the other is refused, and a second step is left, on either engine.
func TestLastFactorAtOnce(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		e := newTOTPEnv(t, s)
		ctx := context.Background()
		if err := s.RequireTwoFactor(ctx, e.u.Role, true, "boss"); err != nil {
			t.Fatal(err)
		}
		for round := range 8 {
			st, err := s.TwoFactorState(ctx, e.u.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !st.TOTP {
				e.advance(time.Minute)
				e.enrol(t)
			}
			if len(st.Passkeys) == 0 {
				if _, err := s.AddPasskey(ctx, e.u.ID, "Key", "cred-"+strconv.Itoa(round), "{}", ""); err != nil {
					t.Fatal(err)
				}
			}
			keys, _ := s.ListPasskeys(ctx, e.u.ID)
			var (
				wg     sync.WaitGroup
				start  = make(chan struct{})
				passed atomic.Int32
			)
			for _, change := range []func() error{
				func() error { _, err := s.DisableTOTP(ctx, e.u.ID, anaPassword, "192.0.2.1", ""); return err },
				func() error {
					_, err := s.RemovePasskey(ctx, e.u.ID, keys[0].ID, anaPassword, "192.0.2.1", "")
					return err
				},
			} {
				wg.Go(func() {
					<-start
					switch err := change(); {
					case err == nil:
						passed.Add(1)
					case models.ErrorCode(err) != models.CodeConflict:
						t.Errorf("round %d: %v; want done or conflict", round, err)
					}
				})
			}
			close(start)
			wg.Wait()
			if on, err := s.HasSecondFactor(ctx, e.u.ID); err != nil || !on || passed.Load() != 1 {
				t.Fatalf("round %d: %d of the two changes went through, a second step left: %v (%v); want one, and one left", round, passed.Load(), on, err)
			}
		}
	})
}
