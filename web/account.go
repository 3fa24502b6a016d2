package web

import (
	"encoding/base64"
	"errors"
	"fmt"
	"image/color"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/boombuler/barcode/qr"
	"github.com/gin-gonic/gin"

	"petstore/models"
	"petstore/templates"
)

// registerAccount mounts the member's own account pages on the signed-in
// group.
func (ui *Web) registerAccount(r gin.IRouter) {
	r.GET("/account", ui.showAccount)
	r.GET("/password", ui.showPasswordForm)
	r.POST("/password", ui.changePassword)
	r.POST("/account/totp", ui.beginTOTP)
	r.GET("/account/totp", ui.showTOTPSetup)
	r.POST("/account/totp/confirm", ui.confirmTOTP)
	r.POST("/account/totp/disable", ui.disableTOTP)
	r.POST("/account/recovery-codes", ui.renewRecoveryCodes)
	r.GET("/users/:id/reset-2fa", ui.confirmResetTwoFactor)
	r.POST("/users/:id/reset-2fa", ui.resetTwoFactor)
	r.POST("/users/two-factor-roles", ui.setTwoFactorRoles)
}

// accountPath is the account page, the one page (with its two-step
// routes) a member whose role requires a second step they lack may use.
const accountPath = Prefix + "/account"

// passwordPath is where the account page's password form posts.
const passwordPath = Prefix + "/password"

// forcedPasswordPaths are the routes a member whose password was reset may
// use: the account page (which then holds only the password form), the
// form's target, and sign-out.
var forcedPasswordPaths = map[string]bool{accountPath: true, passwordPath: true, logoutPath: true}

// setupPaths are the routes a member who must set up a second step may use.
// The password is among them, so that a member whose password was reset
// and whose role requires a second step can do the one, then the other.
var setupPaths = map[string]bool{
	accountPath: true, accountPath + "/totp": true, accountPath + "/totp/confirm": true, logoutPath: true, passwordPath: true,
	accountPath + "/passkeys/options": true, accountPath + "/passkeys": true,
}

// showAccount shows the password form and where the member stands with
// two-step sign-in and passkeys.
func (ui *Web) showAccount(c *gin.Context) {
	ui.renderAccount(c, http.StatusOK, "")
}

func (ui *Web) renderAccount(c *gin.Context, status int, refusal string) {
	ui.renderAccountWith(c, status, refusal, templates.PasswordForm{})
}

// renderAccountWith shows the account page with a refusal in the two-step
// section and the password form's errors.
func (ui *Web) renderAccountWith(c *gin.Context, status int, refusal string, password templates.PasswordForm) {
	u := currentUser(c)
	st, err := ui.store.TwoFactorState(c.Request.Context(), u.ID)
	if err != nil {
		ui.fail(c, err)
		return
	}
	ui.render(c, status, templates.AccountPage(ui.page(c, "Your account", "account"), ui.accountView(u, st, refusal, password)))
}

// accountView is the account page of u, whose second steps are st.
func (ui *Web) accountView(u models.User, st models.TwoFactor, refusal string, password templates.PasswordForm) templates.AccountView {
	v := templates.AccountView{Username: u.Username, TOTP: st.TOTP, Pending: st.Pending, RecoveryCodesLeft: st.RecoveryCodesLeft,
		Required: st.Required, MustSetUp: st.Required && !st.On(), Error: refusal,
		Password: password, MinPasswordLength: models.MinPasswordLength, MustChangePassword: u.MustChangePassword}
	for _, k := range st.Passkeys {
		row := templates.PasskeyRow{ID: k.ID, Name: k.Name, Created: ui.when(k.CreatedAt), LastUsed: ui.whenOr(k.LastUsedAt, "never")}
		v.Passkeys = append(v.Passkeys, row)
	}
	return v
}

// showPasswordForm leads to the password form, which lives on the account
// page; the address stays for bookmarks and for the form's own target.
func (ui *Web) showPasswordForm(c *gin.Context) {
	c.Redirect(http.StatusSeeOther, accountPath+"#password")
}

// passwordMismatch is the refusal when the new password and its
// confirmation differ.
const passwordMismatch = "The two new passwords are not the same."

// changePassword changes the signed-in member's password. A confirmation
// that differs is refused here, before the store is asked: nothing was
// checked, so nothing counts against the sign-in limits. The store ends
// every other session of the account (version and rows); this one is kept
// and moved to the new version. After a reset the console opens again.
func (ui *Web) changePassword(c *gin.Context) {
	forced := currentUser(c).MustChangePassword
	if c.PostForm("new") != c.PostForm("confirm") {
		ui.renderAccountWith(c, http.StatusUnprocessableEntity, "", templates.PasswordForm{ConfirmError: passwordMismatch})
		return
	}
	u, err := ui.store.ChangePassword(c.Request.Context(), currentUser(c).ID, c.PostForm("current"), c.PostForm("new"), c.ClientIP(),
		ui.sessionHandle(c))
	if invalid, ok := invalidFields(err); ok {
		ui.renderAccountWith(c, http.StatusUnprocessableEntity, "",
			templates.PasswordForm{CurrentError: invalid.Field(models.FieldCurrentPassword), NewError: invalid.Field(models.FieldNewPassword)})
		return
	}
	if err != nil {
		ui.fail(c, err)
		return
	}
	s := session(c)
	s.Set(keyVersion, u.SessionVersion)
	if err := s.Save(); err != nil {
		ui.fail(c, err)
		return
	}
	if forced {
		flash(c, "success", "Your new password is set. Welcome back.")
	} else {
		flash(c, "success", "Your password was changed. Other sessions of your account have been signed out.")
	}
	c.Redirect(http.StatusSeeOther, accountPath)
}

// beginTOTP makes a new secret for an authenticator app, pending until
// confirmed, and shows it.
func (ui *Web) beginTOTP(c *gin.Context) {
	_, err := ui.store.BeginTOTP(c.Request.Context(), currentUser(c).ID)
	if code := models.ErrorCode(err); code == models.CodeConflict || code == models.CodeUnavailable {
		ui.renderAccount(c, http.StatusConflict, errMessage(err))
		return
	}
	if err != nil {
		ui.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, accountPath+"/totp")
}

// showTOTPSetup shows the pending secret as a QR code and as text.
func (ui *Web) showTOTPSetup(c *gin.Context) {
	ui.renderTOTPSetup(c, http.StatusOK, "")
}

func (ui *Web) renderTOTPSetup(c *gin.Context, status int, codeError string) {
	en, err := ui.store.PendingTOTP(c.Request.Context(), currentUser(c).ID)
	if models.ErrorCode(err) == models.CodeNotFound {
		c.Redirect(http.StatusSeeOther, accountPath)
		return
	}
	if err != nil {
		ui.fail(c, err)
		return
	}
	img, err := qrDataURL(en.URL)
	if err != nil {
		ui.fail(c, err)
		return
	}
	v := templates.TOTPSetupView{QR: img, Secret: groupsOfFour(en.Secret), CodeError: codeError}
	ui.render(c, status, templates.TOTPSetupPage(ui.page(c, "Set up an authenticator app", "account"), v))
}

// confirmTOTP turns two-step sign-in on with a code from the app, and
// shows the recovery codes once. The member's other sessions end; this
// one moves to the account's new session version.
func (ui *Web) confirmTOTP(c *gin.Context) {
	u, codes, err := ui.store.ConfirmTOTP(c.Request.Context(), currentUser(c).ID, c.PostForm("code"), c.ClientIP(), ui.sessionHandle(c))
	if invalid, ok := invalidFields(err); ok {
		ui.renderTOTPSetup(c, http.StatusUnprocessableEntity, invalid.Field(models.FieldCode))
		return
	}
	if models.ErrorCode(err) == models.CodeRateLimited {
		ui.renderTOTPSetup(c, http.StatusTooManyRequests, errMessage(err))
		return
	}
	if err != nil {
		ui.fail(c, err)
		return
	}
	if !ui.keepSession(c, u) {
		return
	}
	ui.render(c, http.StatusOK, templates.RecoveryCodesPage(ui.page(c, "Two-step sign-in is on", "account"),
		templates.RecoveryCodesView{Codes: codes, Enabled: true}))
}

// disableTOTP turns two-step sign-in off, unless the role requires it,
// once the member gave their password or a current code.
func (ui *Web) disableTOTP(c *gin.Context) {
	u, err := ui.store.DisableTOTP(c.Request.Context(), currentUser(c).ID, c.PostForm("proof"), c.ClientIP(), ui.sessionHandle(c))
	if ui.refusedOnAccount(c, err, templates.ProofDisable) {
		return
	}
	ui.secondStepsChanged(c, u, err, "Two-step sign-in is off. Your other sessions have been signed out.")
}

// refusedOnAccount answers a refusal of a change asked for by the account
// page's form: a wrong password or code beside its field (422), too many
// tries (429, with Retry-After) or a refused change (409) at the top of
// the two-step section. It reports whether it answered.
func (ui *Web) refusedOnAccount(c *gin.Context, err error, form string) bool {
	return ui.proofRefused(c, err, func(status int, refusal, proofError string) {
		u := currentUser(c)
		st, err := ui.store.TwoFactorState(c.Request.Context(), u.ID)
		if err != nil {
			ui.fail(c, err)
			return
		}
		v := ui.accountView(u, st, refusal, templates.PasswordForm{})
		v.ProofError, v.ProofFor = proofError, form
		ui.render(c, status, templates.AccountPage(ui.page(c, "Your account", "account"), v))
	})
}

// proofRefused answers err when it refuses a change to the member's second
// steps (a wrong password or code: 422; too many tries: 429 with
// Retry-After; a change the state forbids: 409) with render, given the
// status and the refusal to show at the top or beside the field. It
// reports whether it answered.
func (ui *Web) proofRefused(c *gin.Context, err error, render func(status int, refusal, proofError string)) bool {
	var e *models.Error
	switch {
	case err == nil || !errors.As(err, &e):
		return false
	case e.Code == models.CodeInvalidRequest && e.Field(models.FieldProof) != "":
		render(http.StatusUnprocessableEntity, "", e.Field(models.FieldProof))
	case e.Code == models.CodeRateLimited:
		c.Header("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
		render(http.StatusTooManyRequests, e.Message, "")
	case e.Code == models.CodeConflict:
		render(http.StatusConflict, e.Message, "")
	default:
		return false
	}
	return true
}

// secondStepsChanged answers a change of the member's own second steps
// that ended their other sessions: done as a message on the account page,
// this session kept.
func (ui *Web) secondStepsChanged(c *gin.Context, u models.User, err error, done string) {
	if err != nil {
		ui.fail(c, err)
		return
	}
	if !ui.keepSession(c, u) {
		return
	}
	flash(c, "success", done)
	c.Redirect(http.StatusSeeOther, accountPath)
}

// renewRecoveryCodes voids the member's recovery codes and shows new ones,
// once the member gave their password or a current code.
func (ui *Web) renewRecoveryCodes(c *gin.Context) {
	codes, err := ui.store.RenewRecoveryCodes(c.Request.Context(), currentUser(c).ID, c.PostForm("proof"), c.ClientIP())
	if ui.refusedOnAccount(c, err, templates.ProofRenew) {
		return
	}
	if err != nil {
		ui.fail(c, err)
		return
	}
	ui.render(c, http.StatusOK, templates.RecoveryCodesPage(ui.page(c, "New recovery codes", "account"),
		templates.RecoveryCodesView{Codes: codes}))
}

// keepSession moves this session to u's new session version after a change
// that ended the account's other sessions.
func (ui *Web) keepSession(c *gin.Context, u models.User) bool {
	s := session(c)
	s.Set(keyVersion, u.SessionVersion)
	if err := s.Save(); err != nil {
		ui.fail(c, err)
		return false
	}
	return true
}

// errMessage is the user-safe message of a models error.
func errMessage(err error) string {
	if e := (*models.Error)(nil); errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	return "Something went wrong on our side. Please try again."
}

// groupsOfFour spaces a base32 secret for reading and typing.
func groupsOfFour(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// qrDataURL draws text as a QR code in SVG, made here (no outside
// service sees the secret), as a data: URL the page's CSP allows for
// images: one path of unit squares, with the quiet zone the standard asks.
func qrDataURL(text string) (string, error) {
	code, err := qr.Encode(text, qr.M, qr.Auto)
	if err != nil {
		return "", err
	}
	const quiet = 4
	b := code.Bounds()
	n := b.Dx() + 2*quiet
	var path strings.Builder
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if color.GrayModel.Convert(code.At(x, y)).(color.Gray).Y < 128 {
				fmt.Fprintf(&path, "M%d %dh1v1h-1z", x-b.Min.X+quiet, y-b.Min.Y+quiet)
			}
		}
	}
	svg := fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" shape-rendering="crispEdges">`+
		`<rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="%s"/></svg>`, n, n, n, n, path.String())
	return "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(svg)), nil
}

// checkSecondFactorSetup leads a member whose role requires a second step
// they have not set up to the account page, and lets them use nothing
// else (but sign-out) until it is set up. It reports whether the request
// may go on.
func (ui *Web) checkSecondFactorSetup(c *gin.Context, u models.User) bool {
	if setupPaths[c.FullPath()] {
		return true
	}
	need, err := ui.store.NeedsSecondFactorSetup(c.Request.Context(), u)
	if err != nil {
		ui.fail(c, err)
		return false
	}
	if need {
		redirectAway(c, accountPath, http.StatusForbidden)
		return false
	}
	return true
}

// twoFactorRoles lists the roles that require two-step sign-in, for the
// Staff page.
func (ui *Web) twoFactorRoles(c *gin.Context) ([]string, error) {
	roles, err := ui.store.RolesRequiringTwoFactor(c.Request.Context())
	out := make([]string, len(roles))
	for i, r := range roles {
		out[i] = string(r)
	}
	return out, err
}

// setTwoFactorRoles requires two-step sign-in for the roles checked on the
// Staff page, and for no other.
func (ui *Web) setTwoFactorRoles(c *gin.Context) {
	checked := c.PostFormArray("role")
	for _, r := range models.Roles {
		if err := ui.store.RequireTwoFactor(c.Request.Context(), r, slices.Contains(checked, string(r)), currentUser(c).Username); err != nil {
			ui.fail(c, err)
			return
		}
	}
	msg := "Two-step sign-in is required for no role."
	if len(checked) > 0 {
		roles, _ := ui.twoFactorRoles(c)
		msg = "Two-step sign-in is required for: " + strings.Join(roles, ", ") + "."
	}
	flash(c, "success", msg)
	c.Redirect(http.StatusSeeOther, Prefix+"/users")
}

// confirmResetTwoFactor asks an admin to confirm resetting another
// member's second steps.
func (ui *Web) confirmResetTwoFactor(c *gin.Context) {
	u, err := ui.findMember(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	ui.render(c, http.StatusOK, templates.ResetTwoFactorPage(ui.page(c, "Reset two-step sign-in", "users"),
		templates.ResetTwoFactorView{ID: u.ID, Username: u.Username}))
}

// resetTwoFactor removes another member's second steps and ends their
// sessions: the break glass for a lost phone and lost recovery codes.
func (ui *Web) resetTwoFactor(c *gin.Context) {
	ui.memberAction(c, "You cannot reset your own two-step sign-in here: use your account page.", nil, ui.store.ResetTwoFactor,
		"Two-step sign-in of {name} is reset: their sessions have ended, and their password alone signs them in until they set it up again.")
}
