package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
)

// passkeyJourney is a journey on localhost (browsers take passkeys only at
// a domain name, never an IP address) with a virtual authenticator that
// keeps discoverable credentials and verifies its user, as a phone or a
// laptop's fingerprint reader does. It returns the authenticator's id too.
func passkeyJourney(t *testing.T, driver string) (*journey, webauthn.AuthenticatorID) {
	t.Helper()
	j := newJourney(t, driver)
	j.base = strings.Replace(j.base, "127.0.0.1", "localhost", 1)
	off := false
	if _, err := chromedp.Call(j.ctx, webauthn.Enable, webauthn.EnableParams{EnableUI: &off}); err != nil {
		t.Fatalf("enable the WebAuthn domain: %v", err)
	}
	auth, err := chromedp.Call(j.ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{
		Options: &webauthn.VirtualAuthenticatorOptions{Protocol: webauthn.AuthenticatorProtocolCtap2, Ctap2version: webauthn.Ctap2versionCtap21,
			Transport: webauthn.AuthenticatorTransportInternal, HasResidentKey: true, HasUserVerification: true, IsUserVerified: true,
			AutomaticPresenceSimulation: true}})
	if err != nil {
		t.Fatalf("add a virtual authenticator: %v", err)
	}
	return j, auth.AuthenticatorID
}

// addPasskey adds a passkey named name on the account page, with the
// password.
func (j *journey) addPasskey(name string) {
	j.t.Helper()
	j.open("/admin/account")
	j.waitPath("/admin/account")
	j.fill("main", "Name of the new passkey", name)
	j.fill("[data-passkey-box]", "Your password", staffPassword)
	j.within("click Add a passkey", chromedp.Click(button("//main", "Add a passkey")))
	j.waitText(`[data-testid="flash"]`, "Your passkey is added.")
}

// passkeyRefused clicks "Sign in with a passkey" and waits for the refusal
// it shows, still on the sign-in page.
func (j *journey) passkeyRefused(what string) string {
	j.t.Helper()
	j.open("/admin/login")
	j.waitPath("/admin/login")
	j.within("click Sign in with a passkey ("+what+")", chromedp.Click(button("//main", "Sign in with a passkey")))
	j.waitJS("the refusal ("+what+")", `!document.getElementById("passkey-error").hidden`)
	if p := j.location().Path; p != "/admin/login" {
		j.t.Fatalf("%s: the browser went on to %s", what, p)
	}
	return j.text("#passkey-error")
}

// signOut clicks Sign out and waits for the sign-in page.
func (j *journey) signOut() {
	j.t.Helper()
	j.within("click Sign out", chromedp.Click(chromedp.CSS(`[data-testid="sign-out"]`)))
	j.waitPath("/admin/login")
}

// A passkey is registered on the account page, signs in with no username
// or password, serves as the second step after the password, and once
// removed (after the password again) is neither; on SQLite and on MariaDB,
// where its challenges and sign counter are kept.
func TestBrowserPasskeys(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		j, _ := passkeyJourney(t, driver)
		j.signedIn()
		j.open("/admin/account")
		j.waitPath("/admin/account")
		j.fill("main", "Name of the new passkey", "Shop laptop")
		// A passkey signs in without a password: adding one asks for it.
		j.fill("[data-passkey-box]", "Your password", "not my password at all")
		j.within("click Add a passkey", chromedp.Click(button("//main", "Add a passkey")))
		j.waitText("#passkey-error", "That is neither your password nor a current code from your authenticator app.")
		if keys, err := j.store.ListPasskeys(context.Background(), 1); err != nil || len(keys) != 0 {
			t.Fatalf("passkeys after a wrong password: %d, %v", len(keys), err)
		}
		evalJS[string](j, `document.getElementById("passkey-proof").value = ""`) // typed into: Clear would only reset the attribute
		j.fill("[data-passkey-box]", "Your password", staffPassword)
		j.within("click Add a passkey", chromedp.Click(button("//main", "Add a passkey")))
		j.waitText(`[data-testid="passkey-row"] th`, "Shop laptop")
		j.waitText(`[data-testid="flash"]`, "Your passkey is added.")
		if got := j.text(`[data-testid="passkey-last-used"]`); got != "never" {
			t.Errorf("a new passkey's last use: %q", got)
		}

		// Passwordless: no username, no password.
		j.signOut()
		j.within("click Sign in with a passkey", chromedp.Click(button("//main", "Sign in with a passkey")))
		j.waitPath("/admin/pets")
		j.open("/admin/account")
		j.waitPath("/admin/account")
		if got := j.text(`[data-testid="passkey-last-used"]`); got == "never" || got == "" {
			t.Errorf("after signing in with it, the passkey's last use is %q", got)
		}

		// The second step after the password.
		j.signOut()
		j.signIn(staffUser, staffPassword)
		j.waitPath("/admin/login/code")
		j.within("click Use a passkey instead", chromedp.Click(button("//main", "Use a passkey instead")))
		j.waitPath("/admin/pets")

		// Removed: the password alone signs in again, and the passkey does not.
		j.open("/admin/account")
		j.waitPath("/admin/account")
		j.within("click Remove", chromedp.Click(chromedp.CSS(`[data-testid="passkey-remove"]`)))
		j.waitText("main h1", "Remove passkey Shop laptop?")
		j.fill("main", "Your password", "not my password at all")
		j.within("click Remove passkey", chromedp.Click(button("//main", "Remove passkey")))
		j.waitText("#remove-proof-error", "That is neither your password nor a current code from your authenticator app.")
		j.fill("main", "Your password", staffPassword)
		j.within("click Remove passkey", chromedp.Click(button("//main", "Remove passkey")))
		j.waitText(`[data-testid="flash"]`, "The passkey is removed.")
		if n := evalJS[int](j, `document.querySelectorAll('[data-testid="passkey-row"]').length`); n != 0 {
			t.Fatalf("%d passkeys listed after removing the only one", n)
		}
		j.signOut()
		j.within("click Sign in with a passkey", chromedp.Click(button("//main", "Sign in with a passkey")))
		j.waitJS("the refusal", `!document.getElementById("passkey-error").hidden`)
		if got := j.text("#passkey-error"); !strings.Contains(got, "not registered") {
			t.Errorf("a removed passkey's sign-in said %q", got)
		}
		j.signIn(staffUser, staffPassword)
		j.waitPath("/admin/pets")

		events, _, err := j.store.ListAuditEvents(context.Background(), models.AuditQuery{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var seen []string
		for _, e := range events {
			if e.Action == models.ActionPasskeyAdded || e.Action == models.ActionPasskeyRemoved ||
				e.Action == models.ActionLogin && strings.Contains(e.Detail, "passkey") {
				seen = append(seen, e.Action+" "+e.Detail)
			}
		}
		if len(seen) != 4 {
			t.Errorf("passkey audit rows: %q; want added, two sign-ins, removed", seen)
		}
	})
}

// An authenticator app through the pages, as a member sets it up: the QR
// code and the key, a code to confirm, recovery codes shown once; then the
// sign-in asks for a code after the password, and turning it off asks for
// the password or a code not used yet.
func TestBrowserAuthenticatorApp(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		j := newJourney(t, driver)
		j.signedIn()
		j.open("/admin/account")
		j.within("click Set up an authenticator app", chromedp.Click(button("//main", "Set up an authenticator app")))
		j.waitPath("/admin/account/totp")
		if ok := evalJS[bool](j, `(() => { const i = document.querySelector('[data-testid="totp-qr"]'); return !!i && i.complete && i.naturalWidth > 0; })()`); !ok {
			t.Fatal("the QR code image did not load")
		}
		secret := strings.ReplaceAll(j.text(`[data-testid="totp-secret"]`), " ", "")
		j.fill("main", "Code from the app", models.TOTPCode(secret, time.Now()))
		j.within("click Turn on", chromedp.Click(button("//main", "Turn on two-step sign-in")))
		j.waitText("main h1", "Two-step sign-in is on")
		if n := evalJS[int](j, `document.querySelectorAll('[data-testid="recovery-codes"] li').length`); n != 10 {
			t.Fatalf("%d recovery codes shown", n)
		}
		j.signOut()
		j.signIn(staffUser, staffPassword)
		j.waitPath("/admin/login/code")
		j.fill("main", "Code", "000000")
		j.within("click Sign in", chromedp.Click(button("//main", "Sign in")))
		j.waitText(`[data-testid="login-error"]`, "not right")
		// The next step's code: the confirmation spent this one's.
		used := models.TOTPCode(secret, time.Now().Add(models.TOTPPeriod*time.Second))
		j.fill("main", "Code", used)
		j.within("click Sign in", chromedp.Click(button("//main", "Sign in")))
		j.waitPath("/admin/pets")

		// Turning it off asks who it is: the code just used is spent; the
		// password does it.
		j.open("/admin/account")
		j.waitPath("/admin/account")
		off, offX := `form[action="/admin/account/totp/disable"]`, `//form[@action="/admin/account/totp/disable"]`
		j.fill(off, "Your password or a code from your app", used)
		j.within("click Turn off", chromedp.Click(button(offX, "Turn off two-step sign-in")))
		j.waitText("#disable-proof-error", "That is neither your password nor a current code from your authenticator app.")
		j.fill(off, "Your password or a code from your app", staffPassword)
		j.within("click Turn off", chromedp.Click(button(offX, "Turn off two-step sign-in")))
		j.waitText(`[data-testid="flash"]`, "Two-step sign-in is off.")
		j.signOut()
		j.signIn(staffUser, staffPassword)
		j.waitPath("/admin/pets")
	})
}

// The server checks what the library advises: an answer without user
// verification, with a bad signature, or from a copy of the passkey (its
// sign counter behind the one last seen) is refused and audited, and signs
// nobody in. The virtual authenticator is told to answer so, as a broken or
// cloned one would; the browser passes its answers on unchanged.
func TestBrowserPasskeyRefusals(t *testing.T) {
	t.Parallel()
	j, auth := passkeyJourney(t, models.DriverSQLite)
	j.signedIn()
	j.addPasskey("Shop laptop")
	j.signOut()
	override := func(p webauthn.SetResponseOverrideBitsParams) {
		t.Helper()
		p.AuthenticatorID = auth
		if _, err := chromedp.Call(j.ctx, webauthn.SetResponseOverrideBits, p); err != nil {
			t.Fatalf("override the authenticator's answers: %v", err)
		}
	}
	yes := true
	override(webauthn.SetResponseOverrideBitsParams{IsBadUV: &yes})
	j.passkeyRefused("no user verification")
	override(webauthn.SetResponseOverrideBitsParams{IsBogusSignature: &yes})
	j.passkeyRefused("a bad signature")
	override(webauthn.SetResponseOverrideBitsParams{})

	// A sign-in, so that the server has seen a counter; then a copy of the
	// key that is behind it.
	j.within("click Sign in with a passkey", chromedp.Click(button("//main", "Sign in with a passkey")))
	j.waitPath("/admin/pets")
	j.signOut()
	creds, err := chromedp.Call(j.ctx, webauthn.GetCredentials, webauthn.GetCredentialsParams{AuthenticatorID: auth})
	if err != nil || len(creds.Credentials) != 1 || creds.Credentials[0].SignCount < 1 {
		t.Fatalf("the authenticator's credentials: %+v, %v; want one that has counted its uses", creds, err)
	}
	zero := 0.0
	if _, err := chromedp.Call(j.ctx, webauthn.SetCredentialProperties, webauthn.SetCredentialPropertiesParams{
		AuthenticatorID: auth, CredentialID: creds.Credentials[0].CredentialID, SignCount: &zero}); err != nil {
		t.Fatalf("set the sign counter back: %v", err)
	}
	j.passkeyRefused("a counter behind")

	events, _, err := j.store.ListAuditEvents(context.Background(), models.AuditQuery{Action: models.ActionSecondStepFailed, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var details []string
	for _, e := range events {
		details = append(details, e.Detail)
	}
	all := strings.Join(details, "\n")
	for _, want := range []string{"User verification required", "Signature invalid", "sign counter did not increase"} {
		if len(events) != 3 || !strings.Contains(all, want) {
			t.Errorf("refused passkeys audited as:\n%s\nwant three refusals, one saying %q", all, want)
		}
	}
	if n := modelstest.AuditCounts(t, j.store)[models.ActionLogin]; n != 2 {
		t.Errorf("%d sign-ins audited, want 2 (the password, the one passkey sign-in)", n)
	}
}
