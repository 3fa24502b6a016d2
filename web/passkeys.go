package web

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"petstore/models"
	"petstore/templates"
)

// Passkeys (WebAuthn). The ceremonies run in the browser (static/js/
// passkeys.js) against these JSON routes: an options route begins one and
// keeps its session data in the database (any instance can finish it,
// once, within models.ChallengeLifetime), and a finish route checks the
// browser's answer with the go-webauthn library. User verification is
// required, so a passkey is a whole second factor on its own (something
// held and a PIN or biometric), and a discoverable one signs in without a
// username or password.

// Challenge purposes.
const (
	purposeRegister = "register"
	purposeLogin    = "login"
	purposeSecond   = "second"
)

// registerPasskeys mounts the passkey routes: account ones on the
// signed-in group, sign-in ones on the console's.
func (ui *Web) registerPasskeys(admin, staff gin.IRouter) {
	staff.POST("/account/passkeys/options", ui.passkeyRegisterOptions)
	staff.POST("/account/passkeys", ui.passkeyRegister)
	staff.GET("/account/passkeys/:id/delete", ui.confirmPasskeyRemove)
	staff.POST("/account/passkeys/:id/delete", ui.passkeyRemove)
	admin.POST("/login/passkey/options", ui.passkeyLoginOptions)
	admin.POST("/login/passkey", ui.passkeyLogin)
	admin.POST("/login/code/passkey/options", ui.passkeySecondOptions)
	admin.POST("/login/code/passkey", ui.passkeySecond)
}

// relyingParty is the WebAuthn relying party: the host of
// PETSTORE_PUBLIC_URL, or without it the request's host (local use).
func (ui *Web) relyingParty(c *gin.Context) (*webauthn.WebAuthn, error) {
	origin := ui.publicURL
	if origin == "" {
		scheme := "http"
		if c.Request.TLS != nil {
			scheme = "https"
		}
		origin = scheme + "://" + c.Request.Host
	}
	u, err := url.Parse(origin)
	if err != nil {
		return nil, err
	}
	host := u.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	rp, err := webauthn.New(&webauthn.Config{RPID: host, RPDisplayName: "Petstore admin", RPOrigins: []string{u.Scheme + "://" + u.Host}})
	if err != nil {
		// Browsers take passkeys only for a domain name, never an IP address.
		return nil, &models.Error{Code: models.CodeInvalidRequest, Err: err,
			Message: "Passkeys need the console to be opened at a domain name (such as localhost or the one in PETSTORE_PUBLIC_URL), not at an IP address."}
	}
	return rp, nil
}

// passkeyUser is a member as the WebAuthn library sees them.
type passkeyUser struct {
	u     models.User
	keys  []models.Passkey
	creds []webauthn.Credential
}

// userHandle is the member's WebAuthn user handle: their id, which says
// nothing about them.
func userHandle(id int64) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(id))
}

func (p *passkeyUser) WebAuthnID() []byte                         { return userHandle(p.u.ID) }
func (p *passkeyUser) WebAuthnName() string                       { return p.u.Username }
func (p *passkeyUser) WebAuthnDisplayName() string                { return p.u.Username }
func (p *passkeyUser) WebAuthnCredentials() []webauthn.Credential { return p.creds }

// loadPasskeyUser reads the member id with their passkeys.
func (ui *Web) loadPasskeyUser(ctx context.Context, id int64) (*passkeyUser, error) {
	u, err := ui.store.GetUser(ctx, id)
	if err != nil {
		return nil, err
	}
	keys, err := ui.store.ListPasskeys(ctx, id)
	if err != nil {
		return nil, err
	}
	p := &passkeyUser{u: u, keys: keys}
	for _, k := range keys {
		var cred webauthn.Credential
		if err := json.Unmarshal([]byte(k.Credential), &cred); err != nil {
			return nil, err
		}
		p.creds = append(p.creds, cred)
	}
	return p, nil
}

// jsonError answers a passkey route's refusal as JSON for passkeys.js.
func (ui *Web) jsonError(c *gin.Context, status int, msg string) {
	c.JSON(status, gin.H{"message": msg})
}

// jsonFail answers err as JSON: a models error's message and status, else
// a generic 500 (logged).
func (ui *Web) jsonFail(c *gin.Context, err error) {
	var e *models.Error
	if errors.As(err, &e) && e.Code != models.CodeInternal && e.Message != "" {
		status := http.StatusBadRequest
		switch e.Code {
		case models.CodeUnauthorized:
			status = http.StatusUnauthorized
		case models.CodeConflict:
			status = http.StatusConflict
		case models.CodeNotFound:
			status = http.StatusNotFound
		case models.CodeUnavailable:
			status = http.StatusServiceUnavailable
		}
		ui.jsonError(c, status, e.Message)
		return
	}
	ui.log.Error("passkey request failed", "path", c.Request.URL.Path, "error", err)
	ui.jsonError(c, http.StatusInternalServerError, "Something went wrong on our side. Please try again.")
}

// begin keeps a ceremony's session data and answers its options.
func (ui *Web) begin(c *gin.Context, id int64, purpose string, options any, sd *webauthn.SessionData) {
	raw, err := json.Marshal(sd)
	if err != nil {
		ui.jsonFail(c, err)
		return
	}
	token, err := ui.store.SaveChallenge(c.Request.Context(), id, purpose, string(raw))
	if err != nil {
		ui.jsonFail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"challenge": token, "options": options})
}

// take returns the session data of the ceremony the request answers.
func (ui *Web) take(c *gin.Context, id int64, purpose string) (webauthn.SessionData, error) {
	raw, err := ui.store.TakeChallenge(c.Request.Context(), c.Query("challenge"), id, purpose)
	if err != nil {
		return webauthn.SessionData{}, err
	}
	var sd webauthn.SessionData
	err = json.Unmarshal([]byte(raw), &sd)
	return sd, err
}

// passkeyRegisterOptions begins registering a passkey for the member: a
// discoverable credential with user verification, none they have already.
// It first asks for the member's password or a current code (the JSON
// body's proof): a passkey signs in without a password, so a session left
// open must not be able to add one.
func (ui *Web) passkeyRegisterOptions(c *gin.Context) {
	rp, err := ui.relyingParty(c)
	if err != nil {
		ui.jsonFail(c, err)
		return
	}
	var body struct {
		Proof string `json:"proof"`
	}
	if err := json.NewDecoder(c.Request.Body).Decode(&body); err != nil {
		ui.jsonError(c, http.StatusBadRequest, "The request could not be read.")
		return
	}
	err = ui.store.ConfirmIdentity(c.Request.Context(), currentUser(c).ID, body.Proof, c.ClientIP(), "adding a passkey")
	var e *models.Error
	if errors.As(err, &e) && e.Field(models.FieldProof) != "" {
		ui.jsonError(c, http.StatusUnprocessableEntity, e.Field(models.FieldProof))
		return
	}
	if errors.As(err, &e) && e.Code == models.CodeRateLimited {
		c.Header("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
		ui.jsonError(c, http.StatusTooManyRequests, e.Message)
		return
	}
	if err != nil {
		ui.jsonFail(c, err)
		return
	}
	pu, err := ui.loadPasskeyUser(c.Request.Context(), currentUser(c).ID)
	if err != nil {
		ui.jsonFail(c, err)
		return
	}
	creation, sd, err := rp.BeginRegistration(pu,
		webauthn.WithAuthenticatorSelection(protocol.AuthenticatorSelection{
			ResidentKey: protocol.ResidentKeyRequirementRequired, RequireResidentKey: protocol.ResidentKeyRequired(),
			UserVerification: protocol.VerificationRequired}),
		webauthn.WithExclusions(webauthn.Credentials(pu.creds).CredentialDescriptors()))
	if err != nil {
		ui.jsonFail(c, err)
		return
	}
	ui.begin(c, pu.u.ID, purposeRegister, creation, sd)
}

// passkeyRegister checks the new passkey and keeps it under the name the
// member gave; the member's other sessions end.
func (ui *Web) passkeyRegister(c *gin.Context) {
	ctx := c.Request.Context()
	rp, err := ui.relyingParty(c)
	if err != nil {
		ui.jsonFail(c, err)
		return
	}
	pu, err := ui.loadPasskeyUser(ctx, currentUser(c).ID)
	if err != nil {
		ui.jsonFail(c, err)
		return
	}
	sd, err := ui.take(c, pu.u.ID, purposeRegister)
	if err != nil {
		ui.jsonFail(c, err)
		return
	}
	cred, err := rp.FinishRegistration(pu, sd, c.Request)
	if err != nil {
		ui.jsonError(c, http.StatusBadRequest, "The passkey could not be verified: "+protocolReason(err))
		return
	}
	raw, err := json.Marshal(cred)
	if err != nil {
		ui.jsonFail(c, err)
		return
	}
	u, err := ui.store.AddPasskey(ctx, pu.u.ID, c.Query("name"), base64.RawURLEncoding.EncodeToString(cred.ID), string(raw), ui.sessionHandle(c))
	if err != nil {
		ui.jsonFail(c, err)
		return
	}
	s := session(c)
	s.Set(keyVersion, u.SessionVersion)
	if err := s.Save(); err != nil {
		ui.jsonFail(c, err)
		return
	}
	flash(c, "success", "Your passkey is added. Your other sessions have been signed out.")
	c.JSON(http.StatusOK, gin.H{"redirect": accountPath})
}

// errNoSuchPasskey answers a passkey id that is not one of the member's.
var errNoSuchPasskey = &models.Error{Code: models.CodeNotFound, Message: "You have no such passkey."}

// confirmPasskeyRemove asks the member to confirm removing one of their
// passkeys with their password or a current code (a page: it needs no
// JavaScript).
func (ui *Web) confirmPasskeyRemove(c *gin.Context) {
	ui.renderPasskeyRemove(c, http.StatusOK, "", "")
}

// renderPasskeyRemove shows the confirmation of a passkey's removal with
// a refusal at the top or beside the password or code.
func (ui *Web) renderPasskeyRemove(c *gin.Context, status int, refusal, proofError string) {
	ctx := c.Request.Context()
	id, ok := models.ParseID(c.Param("id"))
	if !ok {
		ui.fail(c, errNoSuchPasskey)
		return
	}
	p, err := ui.store.GetPasskey(ctx, currentUser(c).ID, id)
	if err != nil {
		ui.fail(c, err)
		return
	}
	st, err := ui.store.TwoFactorState(ctx, currentUser(c).ID)
	if err != nil {
		ui.fail(c, err)
		return
	}
	ui.render(c, status, templates.RemovePasskeyPage(ui.page(c, "Remove a passkey", "account"),
		templates.RemovePasskeyView{ID: p.ID, Name: p.Name, TOTP: st.TOTP, Error: refusal, ProofError: proofError}))
}

// passkeyRemove removes one of the member's passkeys once they gave their
// password or a current code, unless it is the last second step their
// role requires.
func (ui *Web) passkeyRemove(c *gin.Context) {
	id, ok := models.ParseID(c.Param("id"))
	if !ok {
		ui.fail(c, errNoSuchPasskey)
		return
	}
	u, err := ui.store.RemovePasskey(c.Request.Context(), currentUser(c).ID, id, c.PostForm("proof"), c.ClientIP(), ui.sessionHandle(c))
	if ui.proofRefused(c, err, func(status int, refusal, proofError string) { ui.renderPasskeyRemove(c, status, refusal, proofError) }) {
		return
	}
	ui.secondStepsChanged(c, u, err, "The passkey is removed. Your other sessions have been signed out.")
}

// passkeyLoginOptions begins a sign-in with a discoverable passkey: no
// username, no password.
func (ui *Web) passkeyLoginOptions(c *gin.Context) {
	rp, err := ui.relyingParty(c)
	if err != nil {
		ui.jsonFail(c, err)
		return
	}
	assertion, sd, err := rp.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		ui.jsonFail(c, err)
		return
	}
	ui.begin(c, 0, purposeLogin, assertion, sd)
}

// passkeyLogin signs in the member whose passkey answered.
func (ui *Web) passkeyLogin(c *gin.Context) {
	rp, err := ui.relyingParty(c)
	if err != nil {
		ui.jsonFail(c, err)
		return
	}
	sd, err := ui.take(c, 0, purposeLogin)
	if err != nil {
		ui.jsonFail(c, err)
		return
	}
	var found *passkeyUser
	cred, err := rp.FinishDiscoverableLogin(func(rawID, handle []byte) (webauthn.User, error) {
		p, err := ui.store.PasskeyByCredentialID(c.Request.Context(), base64.RawURLEncoding.EncodeToString(rawID))
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(handle, userHandle(p.UserID)) {
			return nil, errors.New("user handle does not match the passkey's member")
		}
		found, err = ui.loadPasskeyUser(c.Request.Context(), p.UserID)
		return found, err
	}, sd, c.Request)
	ui.finishPasskey(c, found, cred, err, false, safeNext(c.Query("next")))
}

// passkeySecondOptions begins a passkey as the second step of the sign-in
// waiting for it.
func (ui *Web) passkeySecondOptions(c *gin.Context) {
	uid, _, rp, pu, ok := ui.pendingPasskeyUser(c)
	if !ok {
		return
	}
	if len(pu.creds) == 0 {
		ui.jsonError(c, http.StatusConflict, "You have no passkey. Type a code instead.")
		return
	}
	assertion, sd, err := rp.BeginLogin(pu, webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		ui.jsonFail(c, err)
		return
	}
	ui.begin(c, uid, purposeSecond, assertion, sd)
}

// passkeySecond completes the sign-in waiting for its second step.
func (ui *Web) passkeySecond(c *gin.Context) {
	uid, ver, rp, pu, ok := ui.pendingPasskeyUser(c)
	if !ok {
		return
	}
	if pu.u.SessionVersion != ver {
		ui.jsonError(c, http.StatusUnauthorized, secondStepExpired)
		return
	}
	sd, err := ui.take(c, uid, purposeSecond)
	if err != nil {
		ui.jsonFail(c, err)
		return
	}
	cred, err := rp.FinishLogin(pu, sd, c.Request)
	ui.finishPasskey(c, pu, cred, err, true, safeNext(c.Query("next")))
}

// pendingPasskeyUser reads the sign-in waiting for its second step, the
// relying party and the member's passkeys; when one is missing it has
// answered and ok is false.
func (ui *Web) pendingPasskeyUser(c *gin.Context) (uid, ver int64, rp *webauthn.WebAuthn, pu *passkeyUser, ok bool) {
	if uid, ver = ui.pendingSignIn(c); uid == 0 {
		ui.jsonError(c, http.StatusUnauthorized, secondStepExpired)
		return 0, 0, nil, nil, false
	}
	rp, err := ui.relyingParty(c)
	if err != nil {
		ui.jsonFail(c, err)
		return 0, 0, nil, nil, false
	}
	if pu, err = ui.loadPasskeyUser(c.Request.Context(), uid); err != nil {
		ui.jsonFail(c, err)
		return 0, 0, nil, nil, false
	}
	return uid, ver, rp, pu, true
}

// finishPasskey records a verified passkey sign-in (its new sign counter,
// when it was used) and starts the session; a refused one is audited. A
// counter that went backwards (the library's clone warning) is refused.
func (ui *Web) finishPasskey(c *gin.Context, pu *passkeyUser, cred *webauthn.Credential, err error, second bool, next string) {
	ctx := c.Request.Context()
	if err == nil && cred.Authenticator.CloneWarning {
		err = errors.New("sign counter did not increase: the passkey may have been copied")
	}
	if err != nil {
		if pu != nil {
			if aerr := ui.store.PasskeyRefused(ctx, pu.u, c.ClientIP(), protocolReason(err)); aerr != nil {
				ui.jsonFail(c, aerr)
				return
			}
		}
		var e *models.Error
		if errors.As(err, &e) {
			ui.jsonFail(c, err)
			return
		}
		ui.jsonError(c, http.StatusUnauthorized, "The passkey was not accepted.")
		return
	}
	if pu.u.Disabled() {
		ui.jsonFail(c, models.ErrAccountDisabled)
		return
	}
	id := base64.RawURLEncoding.EncodeToString(cred.ID)
	var stored models.Passkey
	for _, k := range pu.keys {
		if k.CredentialID == id {
			stored = k
		}
	}
	raw, err := json.Marshal(cred)
	if err != nil {
		ui.jsonFail(c, err)
		return
	}
	if err := ui.store.UsePasskey(ctx, stored, string(raw)); err != nil {
		ui.jsonFail(c, err)
		return
	}
	if err := ui.store.PasskeySignIn(ctx, pu.u, c.ClientIP(), second); err != nil {
		ui.jsonFail(c, err)
		return
	}
	if err := ui.startSession(c, pu.u); err != nil {
		ui.jsonFail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"redirect": next})
}

// protocolReason is the library's short reason for a refused answer, with
// its detail (such as "User verification required but flag not set by
// authenticator"), which says more than the reason alone in the audit.
func protocolReason(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Details != "" {
		if pe.DevInfo != "" {
			return pe.Details + " (" + pe.DevInfo + ")"
		}
		return pe.Details
	}
	s := err.Error()
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}
