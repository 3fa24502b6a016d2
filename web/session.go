package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/gin-contrib/sessions"
	"github.com/gin-gonic/gin"

	"petstore/httpcode"
	"petstore/models"
	"petstore/templates"
)

// sessionOptions are the cookie's settings: HttpOnly, SameSite=Lax, Secure
// behind https, living maxAge seconds (-1 deletes it).
func (ui *Web) sessionOptions(maxAge int) sessions.Options {
	return sessions.Options{Path: "/", MaxAge: maxAge, Secure: ui.secure, HttpOnly: true, SameSite: http.SameSiteLaxMode}
}

// Session values.
const (
	keyUserID   = "uid"
	keyVersion  = "ver"
	keyAuthAt   = "auth_at"
	keySeenAt   = "seen_at"
	keyCSRF     = "csrf"
	userContext = "petstore.user"
)

// session returns the request's session, or nil outside the session middleware.
func session(c *gin.Context) sessions.Session {
	if _, ok := c.Get(sessions.DefaultKey); !ok {
		return nil
	}
	return sessions.Default(c)
}

// loadSession loads the request's session before anything reads it, so that
// a database error answers the error page (503 while the database is down)
// instead of passing for a signed-out visitor.
func (ui *Web) loadSession(c *gin.Context) {
	if _, err := ui.sessions.load(c.Request, ui.cookie, c.ClientIP()); err != nil {
		ui.fail(c, err)
		return
	}
	c.Next()
}

// tokenBytes is the size of randomToken's random bytes.
const tokenBytes = 32

func randomToken() string {
	b := make([]byte, tokenBytes)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// csrfToken returns the session's CSRF token, creating (and saving) one
// when the session has none yet, masked afresh for this answer (maskToken).
func (ui *Web) csrfToken(c *gin.Context) string {
	s := session(c)
	if s == nil {
		return ""
	}
	if tok, ok := s.Get(keyCSRF).(string); ok && tok != "" {
		return maskToken(tok)
	}
	tok := randomToken()
	s.Set(keyCSRF, tok)
	if err := s.Save(); err != nil && c.Request.Context().Err() == nil { // not when the client hung up
		ui.log.Error("save session", "error", err)
	}
	return maskToken(tok)
}

// checkCSRF refuses state-changing requests that come from another origin
// (Go's CrossOriginProtection, from Sec-Fetch-Site and Origin) or that lack
// the session's token (form field csrf_token, or the X-CSRF-Token header
// htmx sends). Refused requests change nothing.
func (ui *Web) checkCSRF(c *gin.Context) {
	switch c.Request.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		c.Next()
		return
	}
	if err := ui.origin.Check(c.Request); err != nil {
		ui.fail(c, errForged)
		return
	}
	if limit, ok := uploadLimits[c.FullPath()]; ok && isMultipart(c.Request) {
		ui.checkUploadToken(c, limit) // a file: its token is read from the stream first
		return
	}
	// Console forms are small: cap the body before anything reads it.
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, MaxFormBytes)
	if err := c.Request.ParseForm(); err != nil {
		ui.fail(c, formUnread(err))
		return
	}
	want, _ := session(c).Get(keyCSRF).(string)
	got := c.GetHeader("X-CSRF-Token")
	if got == "" {
		got = c.PostForm("csrf_token")
	}
	got = unmaskToken(got)
	if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		ui.fail(c, errForged)
		return
	}
	c.Next()
}

// errForged refuses a form that came from another site or lacks the
// session's token.
var errForged = refuse(httpcode.Forbidden, "Request refused",
	"This form has expired or came from another site, so nothing was changed. Go back, reload the page and try again.")

// formUnread refuses a form body that could not be read.
func formUnread(err error) error {
	if tooBig := (*http.MaxBytesError)(nil); errors.As(err, &tooBig) {
		return refuse(httpcode.PayloadTooLarge, "Request refused", "The form is too large, so nothing was changed.")
	}
	return refuse(models.CodeInvalidRequest, "Request refused", "The form could not be read, so nothing was changed.")
}

// MaxFormBytes caps the body of a console form.
const MaxFormBytes = 64 << 10

// StaffName returns the signed-in staff member of a console request, for
// request logs, or "".
func StaffName(c *gin.Context) string {
	return currentUser(c).Username
}

// requireStaff lets signed-in staff through and sends everyone else to the
// sign-in page, remembering where they were going. A session ends after
// the idle or absolute timeout, or when the account's password changed.
func (ui *Web) requireStaff(c *gin.Context) {
	s := session(c)
	now := ui.now()
	uid, _ := s.Get(keyUserID).(int64)
	ver, _ := s.Get(keyVersion).(int64)
	authAt, _ := s.Get(keyAuthAt).(int64)
	seenAt, _ := s.Get(keySeenAt).(int64)
	valid := uid > 0 && now.Sub(time.Unix(authAt, 0)) < ui.absolute && now.Sub(time.Unix(seenAt, 0)) < ui.idle
	var u models.User
	if valid {
		var err error
		u, err = ui.store.GetUser(c.Request.Context(), uid)
		if err != nil && models.ErrorCode(err) != models.CodeNotFound {
			ui.fail(c, err)
			return
		}
		valid = err == nil && u.SessionVersion == ver
	}
	if !valid {
		if uid > 0 {
			// Expired or revoked: forget the sign-in; the store deletes
			// the session's row.
			s.Clear()
			if err := s.Save(); err != nil {
				ui.fail(c, err)
				return
			}
		}
		ui.toLogin(c)
		return
	}
	if now.Sub(time.Unix(seenAt, 0)) > time.Minute {
		// Written at most once a minute: each save is a database write.
		s.Set(keySeenAt, now.Unix())
		if err := s.Save(); err != nil {
			ui.fail(c, err)
			return
		}
	}
	c.Set(userContext, u)
	c.Next()
}

// toLogin sends the browser to the sign-in page with the wanted page as next.
func (ui *Web) toLogin(c *gin.Context) {
	next := c.Request.URL.RequestURI()
	if c.Request.Method != http.MethodGet {
		next = Prefix
	}
	redirectAway(c, Prefix+"/login?next="+url.QueryEscape(next), http.StatusUnauthorized)
}

// redirectAway sends the browser to target and ends the request. An htmx
// request, which would swap the target's page into its region, gets
// HX-Redirect and htmxStatus instead, and htmx loads the whole page.
func redirectAway(c *gin.Context, target string, htmxStatus int) {
	if c.GetHeader("HX-Request") == "true" {
		c.Header("HX-Redirect", target)
		c.AbortWithStatus(htmxStatus)
		return
	}
	c.Redirect(http.StatusSeeOther, target)
	c.Abort()
}

// currentUser returns the signed-in staff member.
func currentUser(c *gin.Context) models.User {
	u, _ := c.Get(userContext)
	user, _ := u.(models.User)
	return user
}

// safeNext keeps a post-sign-in destination within the console, so the
// sign-in form cannot be used to send people to another site.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || strings.Contains(next, "\\") || path.Clean(u.Path) != u.Path {
		return Prefix + "/pets"
	}
	if u.Path == Prefix || (strings.HasPrefix(u.Path, Prefix+"/") && u.Path != Prefix+"/login") {
		return next
	}
	return Prefix + "/pets"
}

// page builds the layout data of a page.
func (ui *Web) page(c *gin.Context, title, section string) templates.Page {
	p := ui.pageFrame(c, title, section)
	if s := session(c); s != nil {
		p.CSRFToken = ui.csrfToken(c)
		if flashes := s.Flashes(); len(flashes) > 0 {
			if f, ok := flashes[0].(string); ok {
				kind, text, _ := strings.Cut(f, ":")
				kind, undo := flashUndoID(kind)
				p.Flash = templates.Flash{Kind: kind, Text: text, Undo: ui.undoOffer(c, undo, c.Request.URL.RequestURI(), text)}
			}
			s.Save()
		}
	}
	return p
}

// pageFrame is the layout data that comes from the request alone: the
// title, the signed-in member and the navigation their role may use.
func (ui *Web) pageFrame(c *gin.Context, title, section string) templates.Page {
	u := currentUser(c)
	return templates.Page{Title: title, Section: section, Username: u.Username, Role: string(u.Role), Nav: ui.nav(c), Assets: ui.assets}
}

// flash stores a message for the next page (after a redirect).
func flash(c *gin.Context, kind, text string) {
	if s := session(c); s != nil {
		s.AddFlash(kind + ":" + text)
		s.Save()
	}
}
