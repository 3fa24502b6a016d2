package web

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"petstore/models"
	"petstore/templates"
)

// showLogin shows the sign-in form (or skips it for a signed-in session).
func (w *Web) showLogin(c *gin.Context) {
	v := templates.LoginView{Next: safeNext(c.Query("next"))}
	if c.Query("signed_out") == "1" {
		p := w.page(c, "Sign in", "")
		p.Flash = templates.Flash{Kind: "success", Text: "You have signed out."}
		w.render(c, http.StatusOK, templates.LoginPage(p, v))
		return
	}
	w.render(c, http.StatusOK, templates.LoginPage(w.page(c, "Sign in", ""), v))
}

// login checks the credentials and starts a fresh session.
func (w *Web) login(c *gin.Context) {
	username, password := c.PostForm("username"), c.PostForm("password")
	next := safeNext(c.PostForm("next"))
	u, err := w.store.Login(c.Request.Context(), username, password, c.ClientIP())
	if err != nil {
		status, msg := http.StatusUnauthorized, "Wrong username or password."
		switch models.ErrorCode(err) {
		case models.CodeUnauthorized:
			// Said only after the right password: a guesser sees the usual message.
			if e := (*models.Error)(nil); errors.As(err, &e) && e == models.ErrAccountDisabled {
				msg = e.Message
			}
		case models.CodeRateLimited:
			status, msg = http.StatusTooManyRequests, models.ErrLoginThrottled.Message
			c.Header("Retry-After", "900")
		default:
			w.fail(c, err)
			return
		}
		v := templates.LoginView{Username: username, Error: msg, Next: next}
		w.render(c, status, templates.LoginPage(w.page(c, "Sign in", ""), v))
		return
	}
	if err := w.startSession(c, u); err != nil {
		w.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, next)
}

// startSession signs u in on a new session id: a session the browser
// held before is deleted, so an id known before sign-in (session fixation)
// is worth nothing after it. The visitor's cookie kept nothing on the server.
func (w *Web) startSession(c *gin.Context, u models.User) error {
	if err := w.sessions.renew(c.Request, w.cookie); err != nil {
		return err
	}
	s := session(c)
	now := w.now().Unix()
	s.Clear()
	s.Set(keyUserID, u.ID)
	s.Set(keyVersion, u.SessionVersion)
	s.Set(keyAuthAt, now)
	s.Set(keySeenAt, now)
	s.Set(keyCSRF, randomToken())
	return s.Save()
}

// logout ends the session on the server and in the browser.
func (w *Web) logout(c *gin.Context) {
	s := session(c)
	s.Clear()
	s.Options(w.sessionOptions(-1))
	if err := s.Save(); err != nil {
		w.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, Prefix+"/login?signed_out=1")
}
