package main

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"petstore/config"
	"petstore/internal/testkit"
	"petstore/models"
)

// openWithKeys opens the store at databaseURL with the secret keys.
func openWithKeys(t *testing.T, databaseURL string, keys ...[]byte) *models.Store {
	t.Helper()
	db, err := config.ParseDatabaseURL(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	s, err := models.Open(context.Background(), models.Options{Driver: string(db.Driver), DSN: db.DSN, ConnectTimeout: 20 * time.Second,
		PasswordCost: 4, SecretKeys: keys})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// user reset-2fa removes a member's second steps, whoever lost them, and
// is audited as the command line; user rekey-2fa seals the secrets again
// under a new key, after which the old key is not needed.
func TestUserTwoFactorCommands(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabase(t, func(t *testing.T, databaseURL string) {
		oldKey := []byte("0123456789abcdef0123456789abcdef")
		newKey := []byte("fedcba9876543210fedcba9876543210")
		vars := map[string]string{"DATABASE_URL": databaseURL, "PETSTORE_SECRET_KEY": base64.StdEncoding.EncodeToString(oldKey)}
		testkit.WantCode(t, runCLI(t, vars, "correct horse battery staple\n", "user", "create", "--username", "alice"), 0)
		s := openWithKeys(t, databaseURL, oldKey)
		ctx := context.Background()
		alice, err := s.FindUser(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		enrol := func(s *models.Store) string {
			t.Helper()
			en, err := s.BeginTOTP(ctx, alice.ID)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.ConfirmTOTP(ctx, alice.ID, models.TOTPCode(en.Secret, time.Now()), "192.0.2.1", ""); err != nil {
				t.Fatal(err)
			}
			return en.Secret
		}
		secret := enrol(s)

		// Rotation: the new key seals, the old one still opens until rekeyed.
		vars["PETSTORE_SECRET_KEY"] = base64.StdEncoding.EncodeToString(newKey)
		r := runCLI(t, vars, "", "user", "rekey-2fa")
		testkit.WantCode(t, r, 1) // the old key is not configured
		if !strings.Contains(r.Stderr, "1 are sealed with keys neither") {
			t.Errorf("rekey without the old key said %q", r.Stderr)
		}
		vars["PETSTORE_SECRET_KEYS_OLD"] = base64.StdEncoding.EncodeToString(oldKey)
		r = runCLI(t, vars, "", "user", "rekey-2fa")
		testkit.WantCode(t, r, 0)
		if line := testkit.WantOneLine(t, "stdout", r.Stdout); line != "sealed 1 secrets again under the current key; none left under other keys" {
			t.Errorf("rekey said %q", line)
		}
		onlyNew := openWithKeys(t, databaseURL, newKey)
		onlyNew.SetClock(func() time.Time { return time.Now().Add(30 * time.Second) })
		if _, _, err := onlyNew.VerifySecondStep(ctx, alice.ID, models.TOTPCode(secret, time.Now().Add(30*time.Second)), "192.0.2.1"); err != nil {
			t.Fatalf("sign in with the new key alone after rekey: %v", err)
		}

		// The reset removes every second step (the app, its recovery codes and
		// the passkeys) and ends every session, whoever lost them.
		before, err := s.AddPasskey(ctx, alice.ID, "Laptop", "cred-1", "{}", "")
		if err != nil {
			t.Fatal(err)
		}
		r = runCLI(t, vars, "", "user", "reset-2fa", "--username", "alice")
		testkit.WantCode(t, r, 0)
		if line := testkit.WantOneLine(t, "stdout", r.Stdout); !strings.Contains(line, "reset two-step sign-in of staff account alice") {
			t.Errorf("reset-2fa said %q", line)
		}
		st, err := s.TwoFactorState(ctx, alice.ID)
		if err != nil || st.On() || st.Pending || st.RecoveryCodesLeft != 0 || len(st.Passkeys) != 0 {
			t.Fatalf("after reset-2fa: %+v, %v; want no second step left", st, err)
		}
		if after, _ := s.GetUser(ctx, alice.ID); after.SessionVersion <= before.SessionVersion {
			t.Fatalf("after reset-2fa the session version is %d (was %d): sessions not ended", after.SessionVersion, before.SessionVersion)
		}
		if u, err := s.Login(ctx, "alice", "correct horse battery staple", "192.0.2.1"); err != nil || u.SecondStep {
			t.Fatalf("sign-in after reset-2fa: second step %v, %v; want the password alone", u.SecondStep, err)
		}
		events, _, err := s.ListAuditEvents(ctx, models.AuditQuery{Action: models.ActionTwoFactorReset, Actor: "cli"})
		if err != nil || len(events) != 1 || events[0].TargetID != alice.ID {
			t.Fatalf("reset-2fa audit: %+v, %v", events, err)
		}
		r = runCLI(t, vars, "", "user", "reset-2fa", "--username", "nobody")
		testkit.WantCode(t, r, 1)
		testkit.WantCode(t, runCLI(t, vars, "", "user", "reset-2fa"), 2)
	})
}
