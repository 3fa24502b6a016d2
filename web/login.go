package web

import (
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"petstore/httpcode"
	"petstore/models"
	"petstore/templates"
)

// showLogin shows the sign-in form (or skips it for a signed-in session).
func (ui *Web) showLogin(c *gin.Context) {
	v := templates.LoginView{Next: safeNext(c.Query("next"))}
	if c.Query("signed_out") == "1" {
		p := ui.page(c, "Sign in", "")
		p.Flash = templates.Flash{Kind: "success", Text: "You have signed out."}
		ui.render(c, http.StatusOK, templates.LoginPage(p, v))
		return
	}
	ui.render(c, http.StatusOK, templates.LoginPage(ui.page(c, "Sign in", ""), v))
}

// login checks the credentials and starts a fresh session. A sign-in
// refused before its password was checked (a limit: 429; the password
// checks all busy: 503) says why and when to retry, in the page and in
// Retry-After.
func (ui *Web) login(c *gin.Context) {
	username, password := c.PostForm("username"), c.PostForm("password")
	next := safeNext(c.PostForm("next"))
	u, err := ui.store.Login(c.Request.Context(), username, password, c.ClientIP())
	if err != nil {
		var e *models.Error
		status, msg := http.StatusUnauthorized, "Wrong username or password."
		switch {
		case models.ErrorCode(err) == models.CodeUnauthorized:
			// Said only after the right password: a guesser sees the usual message.
			if errors.As(err, &e) && (e == models.ErrAccountDisabled || e == models.ErrOneTimePasswordSpent) {
				msg = e.Message
			}
		case errors.As(err, &e) && e.RetryAfter > 0:
			status, msg = httpcode.Status(e.Code), e.Message
			c.Header("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
		default:
			ui.fail(c, err)
			return
		}
		v := templates.LoginView{Username: username, Error: msg, Next: next}
		ui.render(c, status, templates.LoginPage(ui.page(c, "Sign in", ""), v))
		return
	}
	if u.SecondStep {
		if err := ui.startSecondStep(c, u); err != nil {
			ui.fail(c, err)
			return
		}
		c.Redirect(http.StatusSeeOther, secondStepPath+"?next="+url.QueryEscape(next))
		return
	}
	if err := ui.startSession(c, u); err != nil {
		ui.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, next)
}

// secondStepPath is the sign-in's second step, after the password.
const secondStepPath = Prefix + "/login/code"

// SecondStepTimeout is how long the right password waits for its second
// step: then the sign-in starts again from the password.
const SecondStepTimeout = 5 * time.Minute

// Session values of a sign-in waiting for its second step. The session
// holds no keyUserID meanwhile, so it opens nothing.
const (
	keyPendingUID = "pending_uid"
	keyPendingVer = "pending_ver"
	keyPendingAt  = "pending_at"
)

// startSecondStep remembers, on a new session id, that u gave the right
// password: the second step completes the sign-in within SecondStepTimeout.
func (ui *Web) startSecondStep(c *gin.Context, u models.User) error {
	if err := ui.sessions.renew(c.Request, ui.cookie); err != nil {
		return err
	}
	s := session(c)
	s.Clear()
	s.Set(keyPendingUID, u.ID)
	s.Set(keyPendingVer, u.SessionVersion)
	s.Set(keyPendingAt, ui.now().Unix())
	s.Set(keyCSRF, randomToken())
	return s.Save()
}

// pendingSignIn returns the member waiting for the second step, or 0 when
// none is or the wait is over.
func (ui *Web) pendingSignIn(c *gin.Context) (uid, ver int64) {
	s := session(c)
	uid, _ = s.Get(keyPendingUID).(int64)
	ver, _ = s.Get(keyPendingVer).(int64)
	at, _ := s.Get(keyPendingAt).(int64)
	if uid <= 0 || ui.now().Sub(time.Unix(at, 0)) >= SecondStepTimeout {
		return 0, 0
	}
	return uid, ver
}

// secondStepExpired sends a sign-in whose second step waited too long
// back to the password.
const secondStepExpired = "Your sign-in took too long. Sign in again with your password."

// showSecondStep asks for the code after the password.
func (ui *Web) showSecondStep(c *gin.Context) {
	next := safeNext(c.Query("next"))
	if uid, _ := ui.pendingSignIn(c); uid == 0 {
		ui.render(c, http.StatusUnauthorized, templates.LoginPage(ui.page(c, "Sign in", ""), templates.LoginView{Next: next, Error: secondStepExpired}))
		return
	}
	ui.render(c, http.StatusOK, templates.SecondStepPage(ui.page(c, "Two-step sign-in", ""), templates.SecondStepView{Next: next}))
}

// secondStep checks the code of a sign-in waiting for it and, when right,
// signs the member in on a new session id. Wrong codes count against the
// sign-in limits; a limit answers 429 with Retry-After.
func (ui *Web) secondStep(c *gin.Context) {
	next := safeNext(c.PostForm("next"))
	uid, ver := ui.pendingSignIn(c)
	if uid == 0 {
		ui.render(c, http.StatusUnauthorized, templates.LoginPage(ui.page(c, "Sign in", ""), templates.LoginView{Next: next, Error: secondStepExpired}))
		return
	}
	u, how, err := ui.store.VerifySecondStep(c.Request.Context(), uid, c.PostForm("code"), c.ClientIP())
	if err == nil && u.SessionVersion != ver {
		err = models.ErrAccountDisabled // changed since the password: start again
		if !u.Disabled() {
			err = &models.Error{Code: models.CodeUnauthorized, Message: secondStepExpired}
		}
	}
	if err != nil {
		var e *models.Error
		status, msg := http.StatusUnauthorized, ""
		switch {
		case errors.As(err, &e) && e.Code == models.CodeUnauthorized:
			msg = e.Message
		case errors.As(err, &e) && e.RetryAfter > 0:
			status, msg = httpcode.Status(e.Code), e.Message
			c.Header("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
		case errors.As(err, &e) && e.Code == models.CodeUnavailable && e.Message != "":
			status, msg = http.StatusServiceUnavailable, e.Message
		default:
			ui.fail(c, err)
			return
		}
		ui.render(c, status, templates.SecondStepPage(ui.page(c, "Two-step sign-in", ""), templates.SecondStepView{Next: next, Error: msg}))
		return
	}
	if err := ui.startSession(c, u); err != nil {
		ui.fail(c, err)
		return
	}
	if how == "recovery code" {
		flash(c, "success", "You signed in with a recovery code, which now no longer works. Your account page says how many are left.")
	}
	c.Redirect(http.StatusSeeOther, next)
}

// startSession signs u in on a new session id: a session the browser
// held before is deleted, so an id known before sign-in (session fixation)
// is worth nothing after it. The visitor's cookie kept nothing on the server.
func (ui *Web) startSession(c *gin.Context, u models.User) error {
	if err := ui.sessions.renew(c.Request, ui.cookie); err != nil {
		return err
	}
	s := session(c)
	now := ui.now().Unix()
	s.Clear()
	s.Set(keyUserID, u.ID)
	s.Set(keyVersion, u.SessionVersion)
	s.Set(keyAuthAt, now)
	s.Set(keySeenAt, now)
	s.Set(keyCSRF, randomToken())
	return s.Save()
}

// logout ends the session on the server and in the browser.
func (ui *Web) logout(c *gin.Context) {
	s := session(c)
	s.Clear()
	s.Options(ui.sessionOptions(-1))
	if err := s.Save(); err != nil {
		ui.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, Prefix+"/login?signed_out=1")
}
