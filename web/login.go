package web

import (
	"errors"
	"math"
	"net/http"
	"strconv"

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
	if err := ui.startSession(c, u); err != nil {
		ui.fail(c, err)
		return
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
