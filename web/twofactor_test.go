package web_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"petstore/config"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
	"petstore/web"
)

// enrolTOTP turns two-step sign-in on for the browser's member through the
// account pages and returns the secret and the recovery codes shown.
func (b *browser) enrolTOTP(t *testing.T) (string, []string) {
	t.Helper()
	acct := b.get("/admin/account")
	wantStatus(t, acct, http.StatusOK)
	tok := csrf(t, acct)
	res := b.post("/admin/account/totp", url.Values{"csrf_token": {tok}})
	wantStatus(t, res, http.StatusSeeOther)
	setup := b.get(res.Header.Get("Location"))
	wantStatus(t, setup, http.StatusOK)
	secret := strings.ReplaceAll(text(setup, `[data-testid="totp-secret"]`), " ", "")
	src, _ := setup.Doc.Find(`img[data-testid="totp-qr"]`).Attr("src")
	svg, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(src, "data:image/svg+xml;base64,"))
	if !strings.HasPrefix(src, "data:image/svg+xml;base64,") || err != nil || !strings.HasPrefix(string(svg), "<svg") ||
		strings.Contains(string(svg), "style") || strings.Contains(string(svg), "http") && !strings.Contains(string(svg), "http://www.w3.org/2000/svg") {
		t.Fatalf("QR code image: %.80q (%v)", src, err)
	}
	if len(secret) != 32 {
		t.Fatalf("secret shown as %q", secret)
	}
	wrong := b.post("/admin/account/totp/confirm", url.Values{"csrf_token": {tok}, "code": {"12345"}})
	wantStatus(t, wrong, http.StatusUnprocessableEntity)
	if on, _ := b.e.store.HasSecondFactor(context.Background(), b.memberID(t)); on {
		t.Fatal("a wrong confirmation code turned two-step sign-in on")
	}
	done := b.post("/admin/account/totp/confirm", url.Values{"csrf_token": {tok}, "code": {models.TOTPCode(secret, *b.e.clock.Load())}})
	wantStatus(t, done, http.StatusOK)
	var codes []string
	for _, n := range done.Doc.Find(`[data-testid="recovery-codes"] code`).Nodes {
		codes = append(codes, n.FirstChild.Data)
	}
	if len(codes) != models.RecoveryCodeCount {
		t.Fatalf("%d recovery codes shown", len(codes))
	}
	return secret, codes
}

// memberID is the id of the member the browser is signed in as.
func (b *browser) memberID(t *testing.T) int64 {
	t.Helper()
	p := b.get("/admin/account")
	name := strings.TrimSpace(p.Doc.Find("footer strong").First().Text())
	u, err := b.e.store.FindUser(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

// secondStep posts a code on the sign-in's second step.
func (b *browser) secondStep(t *testing.T, code string) page {
	t.Helper()
	p := b.get("/admin/login/code")
	if p.Status != http.StatusOK {
		return p
	}
	return b.post("/admin/login/code", url.Values{"csrf_token": {csrf(t, p)}, "code": {code}, "next": {"/admin/audit"}})
}

// Enrol, then sign in: the password alone opens nothing; a wrong code, a
// used code and a late second step are refused; a recovery code works once.
func TestTwoFactorSignIn(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		e.store.SetClock(func() time.Time { return *e.clock.Load() })
		b, _ := e.signedIn()
		other, _ := e.signedIn()
		secret, codes := b.enrolTOTP(t)
		wantStatus(t, b.get("/admin/pets"), http.StatusOK)
		if p := other.get("/admin/pets"); p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Header.Get("Location"), "/admin/login") {
			t.Fatalf("the member's other session after turning two-step sign-in on: %d %s", p.Status, p.Header.Get("Location"))
		}
		acct := b.get("/admin/account")
		if s := text(acct, `[data-testid="recovery-left"]`); !strings.HasPrefix(s, "10 of 10") {
			t.Fatalf("recovery codes left: %q", s)
		}

		// The password alone grants nothing.
		c := e.browser()
		res := c.c.SignIn(t, staffName, staffPassword)
		if res.Status != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/admin/login/code") {
			t.Fatalf("password step: %d %s", res.Status, res.Header.Get("Location"))
		}
		if p := c.get("/admin/pets"); p.Status != http.StatusSeeOther {
			t.Fatalf("a page after the password alone: %d", p.Status)
		}
		wrong := c.secondStep(t, "000000")
		if models.TOTPCode(secret, *e.clock.Load()) == "000000" {
			wrong = c.secondStep(t, "111111")
		}
		wantStatus(t, wrong, http.StatusUnauthorized)
		if !strings.Contains(text(wrong, `[data-testid="login-error"]`), "not right") {
			t.Fatalf("wrong code page: %s", wrong.Body)
		}
		e.advance(time.Minute)
		code := models.TOTPCode(secret, *e.clock.Load())
		ok := c.secondStep(t, code)
		if ok.Status != http.StatusSeeOther || ok.Header.Get("Location") != "/admin/audit" {
			t.Fatalf("right code: %d %s", ok.Status, ok.Header.Get("Location"))
		}
		wantStatus(t, c.get("/admin/pets"), http.StatusOK)

		// The same code in another sign-in is refused.
		d := e.browser()
		d.c.SignIn(t, staffName, staffPassword)
		wantStatus(t, d.secondStep(t, code), http.StatusUnauthorized)

		// Waiting for its second step, the sign-in opens nothing, not even
		// the account page a member must set a second step up on.
		for _, path := range []string{"/admin/pets", "/admin/account", "/admin/account/totp"} {
			if p := d.get(path); p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Header.Get("Location"), "/admin/login?") {
				t.Fatalf("%s while the second step waits: %d %s", path, p.Status, p.Header.Get("Location"))
			}
		}
		step := d.get("/admin/login/code")
		wantStatus(t, step, http.StatusOK)
		tok := csrf(t, step)
		if p := d.post("/admin/account/totp", url.Values{"csrf_token": {tok}}); p.Status != http.StatusSeeOther ||
			!strings.HasPrefix(p.Header.Get("Location"), "/admin/login?") {
			t.Fatalf("a form posted while the second step waits: %d %s", p.Status, p.Header.Get("Location"))
		}

		// A second step just within five minutes completes the sign-in; one
		// at five minutes starts over, by code or by passkey.
		within := e.browser()
		within.c.SignIn(t, staffName, staffPassword)
		e.advance(SecondStepTimeoutForTests - time.Second)
		if p := within.secondStep(t, models.TOTPCode(secret, *e.clock.Load())); p.Status != http.StatusSeeOther {
			t.Fatalf("a second step after 4 min 59 s: %d\n%s", p.Status, p.Body)
		}
		d = e.browser()
		d.c.SignIn(t, staffName, staffPassword)
		tok = csrf(t, d.get("/admin/login/code"))
		e.advance(SecondStepTimeoutForTests)
		late := d.post("/admin/login/code", url.Values{"csrf_token": {tok}, "code": {models.TOTPCode(secret, *e.clock.Load())}})
		wantStatus(t, late, http.StatusUnauthorized)
		if got := text(late, `[data-testid="login-error"]`); !strings.Contains(got, "took too long") {
			t.Fatalf("a late second step said %q", got)
		}
		pk := d.post("/admin/login/code/passkey/options", nil, "X-CSRF-Token", tok, "Content-Type", "application/json")
		if pk.Status != http.StatusUnauthorized || !strings.Contains(pk.Body, "took too long") {
			t.Fatalf("a late passkey second step: %d %s", pk.Status, pk.Body)
		}
		if p := d.get("/admin/pets"); p.Status != http.StatusSeeOther {
			t.Fatalf("after a late second step: %d", p.Status)
		}

		// A recovery code signs in once.
		for i, want := range []int{http.StatusSeeOther, http.StatusUnauthorized} {
			r := e.browser()
			r.c.SignIn(t, staffName, staffPassword)
			if p := r.secondStep(t, codes[3]); p.Status != want {
				t.Fatalf("recovery code, use %d: %d, want %d", i+1, p.Status, want)
			}
		}
		acct = b.get("/admin/account")
		if s := text(acct, `[data-testid="recovery-left"]`); !strings.HasPrefix(s, "9 of 10") {
			t.Fatalf("recovery codes left after one use: %q", s)
		}
	})
}

// An admin requires two-step sign-in for editors: an editor without it is
// led to set it up and can do nothing else; once set up, they cannot turn
// it off. The admin resets it from the member's page, which ends the
// editor's sessions.
func TestTwoFactorRequiredForRole(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		e.store.SetClock(func() time.Time { return *e.clock.Load() })
		admin, tok := e.signedIn()
		ed, edb, _ := e.member("eddie", models.RoleEditor)
		staff := admin.get("/admin/users")
		if staff.Doc.Find(`form[data-testid="two-factor-roles"] input[value="editor"]`).Length() != 1 {
			t.Fatal("no two-step requirement form on the Staff page")
		}
		wantStatus(t, admin.post("/admin/users/two-factor-roles", url.Values{"csrf_token": {tok}, "role": {"editor"}}), http.StatusSeeOther)
		if _, ok := admin.get("/admin/users").Doc.Find(`form[data-testid="two-factor-roles"] input[value="editor"]`).Attr("checked"); !ok {
			t.Fatal("editor not shown as required")
		}

		for _, path := range []string{"/admin/pets", "/admin/users", "/admin/sessions"} {
			p := edb.get(path)
			if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/admin/account" {
				t.Fatalf("editor without a second step, %s: %d %s", path, p.Status, p.Header.Get("Location"))
			}
		}
		acct := edb.get("/admin/account")
		wantStatus(t, acct, http.StatusOK)
		if acct.Doc.Find(`[data-testid="must-set-up"]`).Length() != 1 {
			t.Fatal("the account page does not say the role requires a second step")
		}
		edb.enrolTOTP(t)
		wantStatus(t, edb.get("/admin/pets"), http.StatusOK)
		edTok := csrf(t, edb.get("/admin/account"))
		wantStatus(t, edb.post("/admin/account/totp/disable", url.Values{"csrf_token": {edTok}}), http.StatusConflict)

		confirm := admin.get("/admin/users/" + itoa(ed.ID) + "/reset-2fa")
		wantStatus(t, confirm, http.StatusOK)
		wantStatus(t, admin.post("/admin/users/"+itoa(ed.ID)+"/reset-2fa", url.Values{"csrf_token": {csrf(t, confirm)}}), http.StatusSeeOther)
		if p := edb.get("/admin/pets"); p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Header.Get("Location"), "/admin/login") {
			t.Fatalf("editor's session after the reset: %d %s", p.Status, p.Header.Get("Location"))
		}
		if on, _ := e.store.HasSecondFactor(context.Background(), ed.ID); on {
			t.Fatal("second step still on after the reset")
		}
		events, _, err := e.store.ListAuditEvents(context.Background(), models.AuditQuery{Action: models.ActionTwoFactorReset, Limit: 5})
		if err != nil || len(events) != 1 || events[0].Actor != staffName {
			t.Fatalf("reset audit: %+v, %v", events, err)
		}
	})
}

// SecondStepTimeoutForTests is how long a right password waits for its
// second step.
const SecondStepTimeoutForTests = web.SecondStepTimeout

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Two instances over one database: the password given on A is completed
// with a code on B (the half-done sign-in is in the signed session cookie,
// whose keys every instance reads from the database), and a code used
// through one is refused through the other.
func TestTwoFactorTwoInstances(t *testing.T) {
	t.Parallel()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			sa, sb := modelstest.OpenPair(t, driver)
			a := newEnv(t, sa)
			b := &env{t: t, store: sb}
			b.clock.Store(a.clock.Load())
			hb, err := server.New(context.Background(), server.Deps{Store: sb, Now: func() time.Time { return *a.clock.Load() }})
			if err != nil {
				t.Fatal(err)
			}
			b.srv = httptest.NewServer(hb)
			t.Cleanup(b.srv.Close)
			sa.SetClock(func() time.Time { return *a.clock.Load() })
			sb.SetClock(func() time.Time { return *a.clock.Load() })

			admin, _ := a.signedIn()
			secret, _ := admin.enrolTOTP(t)
			a.advance(time.Minute)
			code := models.TOTPCode(secret, *a.clock.Load())

			// Password on A, code on B: one browser, one cookie jar.
			onA := a.browser()
			onA.c.SignIn(t, staffName, staffPassword)
			onB := &browser{e: b, c: onA.c, client: onA.client}
			if p := onB.secondStep(t, code); p.Status != http.StatusSeeOther {
				t.Fatalf("code on B after the password on A: %d\n%s", p.Status, p.Body)
			}
			wantStatus(t, onA.get("/admin/pets"), http.StatusOK)

			// The same code through the other instance: refused.
			other := b.browser()
			other.c.SignIn(t, staffName, staffPassword)
			otherOnA := &browser{e: a, c: other.c, client: other.client}
			wantStatus(t, otherOnA.secondStep(t, code), http.StatusUnauthorized)
		})
	}
}

// Turning the app off, making new recovery codes and removing a passkey ask
// for the password or a current code, in a field of each form: without it
// (a session left open) nothing changes, and the page says why beside the
// field.
func TestSecondStepChangesAskForProof(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		e.store.SetClock(func() time.Time { return *e.clock.Load() })
		ctx := context.Background()
		b, _ := e.signedIn()
		secret, _ := b.enrolTOTP(t)
		id := b.memberID(t)
		if _, err := e.store.AddPasskey(ctx, id, "Shop laptop", "cred-1", "{}", ""); err != nil {
			t.Fatal(err)
		}
		b.c.SignIn(t, staffName, staffPassword) // adding the passkey ended this session
		e.advance(time.Minute)
		p := b.secondStep(t, models.TOTPCode(secret, *e.clock.Load()))
		wantStatus(t, p, http.StatusSeeOther)
		acct := b.get("/admin/account")
		tok := csrf(t, acct)
		for _, form := range []string{"/admin/account/totp/disable", "/admin/account/recovery-codes"} {
			if n := acct.Doc.Find(`form[action="` + form + `"] input[name="proof"][type="password"][required]`).Length(); n != 1 {
				t.Fatalf("the form of %s has %d password or code fields", form, n)
			}
		}
		labelled(t, acct, "Your password or a code from your app")

		// Wrong ones (with the enrolment's, four of the five the limits allow).
		p = b.post("/admin/account/totp/disable", url.Values{"csrf_token": {tok}})
		wantStatus(t, p, http.StatusUnprocessableEntity)
		field := p.Doc.Find(`#disable-proof[aria-invalid="true"]`)
		if field.Length() != 1 || !strings.Contains(text(p, "#disable-proof-error"), "neither your password") {
			t.Fatalf("turn off without a password: the field's refusal is missing\n%s", p.Body)
		}
		p = b.post("/admin/account/recovery-codes", url.Values{"csrf_token": {tok}, "proof": {"not my password at all"}})
		wantStatus(t, p, http.StatusUnprocessableEntity)
		if text(p, "#renew-proof-error") == "" || p.Doc.Find(`[data-testid="recovery-codes"]`).Length() != 0 {
			t.Fatalf("new recovery codes with a wrong password:\n%s", p.Body)
		}

		// The passkey's Remove leads to a page that asks.
		acct = b.get("/admin/account")
		href, _ := acct.Doc.Find(`a[data-testid="passkey-remove"]`).Attr("href")
		confirm := b.get(href)
		wantStatus(t, confirm, http.StatusOK)
		labelled(t, confirm, "Your password or a code from your app")
		wantStatus(t, b.post(href, url.Values{"csrf_token": {tok}, "proof": {"not my password at all"}}), http.StatusUnprocessableEntity)
		if st, _ := e.store.TwoFactorState(ctx, id); !st.TOTP || st.RecoveryCodesLeft != 10 || len(st.Passkeys) != 1 {
			t.Fatalf("after wrong proofs: %+v; want everything kept", st)
		}

		// Right: the password, then a current code.
		p = b.post(href, url.Values{"csrf_token": {tok}, "proof": {staffPassword}})
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/admin/account" {
			t.Fatalf("remove with the password: %d %s\n%s", p.Status, p.Header.Get("Location"), p.Body)
		}
		p = b.post("/admin/account/recovery-codes", url.Values{"csrf_token": {tok}, "proof": {staffPassword}})
		wantStatus(t, p, http.StatusOK)
		if n := p.Doc.Find(`[data-testid="recovery-codes"] code`).Length(); n != models.RecoveryCodeCount {
			t.Fatalf("%d new recovery codes shown", n)
		}
		e.advance(30 * time.Second)
		p = b.post("/admin/account/totp/disable", url.Values{"csrf_token": {tok}, "proof": {models.TOTPCode(secret, *e.clock.Load())}})
		wantStatus(t, p, http.StatusSeeOther)
		if on, _ := e.store.HasSecondFactor(ctx, id); on {
			t.Fatal("a second step is left")
		}
	})
}

// A passkey signs in without a password, so a session alone cannot add
// one: the registration's options answer only after the member's password
// (or a current code), and a wrong one counts as a failed sign-in.
func TestPasskeyAddAsksForProof(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		options := func(body string) page {
			t.Helper()
			req, err := http.NewRequest("POST", e.srv.URL+"/admin/account/passkeys/options", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			// Browsers take passkeys only at a domain name, never an IP address.
			req.Host = strings.Replace(strings.TrimPrefix(e.srv.URL, "http://"), "127.0.0.1", "localhost", 1)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			req.Header.Set("X-CSRF-Token", tok)
			for _, ck := range b.client.Jar.Cookies(req.URL) { // the jar goes by the Host header
				req.AddCookie(ck)
			}
			return b.do(req)
		}
		failed := modelstest.AuditCounts(t, e.store)[models.ActionLoginFailed]
		for _, body := range []string{`{}`, `{"proof":"not my password at all"}`} {
			p := options(body)
			if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "neither your password") || strings.Contains(p.Body, "challenge") {
				t.Fatalf("options with %s: %d %s", body, p.Status, p.Body)
			}
		}
		if n := modelstest.AuditCounts(t, e.store)[models.ActionLoginFailed] - failed; n != 2 {
			t.Fatalf("%d failed proofs audited, want 2", n)
		}
		p := options(`{"proof":"` + staffPassword + `"}`)
		if p.Status != http.StatusOK || !strings.Contains(p.Body, `"challenge"`) || !strings.Contains(p.Body, `"publicKey"`) {
			t.Fatalf("options with the password: %d %s", p.Status, p.Body)
		}
	})
}

// The passkeys' relying party is the host of PETSTORE_PUBLIC_URL, whatever
// host the request named, so passkeys stay bound to the public address;
// unset, it is the request's host (here localhost).
func TestPasskeyRelyingParty(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		for _, tc := range []struct{ publicURL, want string }{
			{"http://console.example.test:8080", "console.example.test"},
			{"", "localhost"},
		} {
			e := &env{t: t, store: s}
			now := time.Now()
			e.clock.Store(&now)
			h, err := server.New(context.Background(), server.Deps{Store: s, Config: config.Config{PublicURL: tc.publicURL}})
			if err != nil {
				t.Fatal(err)
			}
			e.srv = httptest.NewServer(h)
			t.Cleanup(e.srv.Close)
			b := e.browser()
			tok := csrf(t, b.get("/admin/login"))
			req, err := http.NewRequest("POST", e.srv.URL+"/admin/login/passkey/options", strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			req.Host = strings.Replace(strings.TrimPrefix(e.srv.URL, "http://"), "127.0.0.1", "localhost", 1)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			req.Header.Set("X-CSRF-Token", tok)
			for _, ck := range b.client.Jar.Cookies(req.URL) { // the jar goes by the Host header
				req.AddCookie(ck)
			}
			p := b.do(req)
			var got struct {
				Options struct {
					PublicKey struct {
						RPID             string `json:"rpId"`
						UserVerification string `json:"userVerification"`
					} `json:"publicKey"`
				} `json:"options"`
			}
			if err := json.Unmarshal([]byte(p.Body), &got); err != nil || p.Status != http.StatusOK {
				t.Fatalf("PETSTORE_PUBLIC_URL=%q: sign-in options %d %s (%v)", tc.publicURL, p.Status, p.Body, err)
			}
			if got.Options.PublicKey.RPID != tc.want || got.Options.PublicKey.UserVerification != "required" {
				t.Errorf("PETSTORE_PUBLIC_URL=%q: relying party %q, user verification %q; want %q, required",
					tc.publicURL, got.Options.PublicKey.RPID, got.Options.PublicKey.UserVerification, tc.want)
			}
		}
	})
}
