package web

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"petstore/models"
	"petstore/templates"
)

// registerSessions mounts "Your sessions" on the signed-in group.
func (ui *Web) registerSessions(r gin.IRouter) {
	r.GET("/sessions", ui.listSessions)
	r.POST("/sessions/end", ui.endSession)
	r.POST("/sessions/end-others", ui.endOtherSessions)
}

// listSessions shows the signed-in member's sessions, this one first.
func (ui *Web) listSessions(c *gin.Context) {
	v, err := ui.sessionsView(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	ui.render(c, http.StatusOK, templates.SessionsPage(ui.page(c, "Your sessions", "sessions"), v))
}

// endSession signs the member out of one of their sessions, named by the
// form field "session" (its handle); this session's own is a sign-out.
func (ui *Web) endSession(c *gin.Context) {
	handle, this := c.PostForm("session"), ui.sessionHandle(c)
	if handle == this {
		ui.logout(c)
		return
	}
	list, err := ui.store.ListUserSessions(c.Request.Context(), currentUser(c).ID)
	if err != nil {
		ui.fail(c, err)
		return
	}
	describe := ""
	for _, s := range list {
		if s.Handle == handle {
			describe = browserName(s.UserAgent) + " at " + s.ClientIP
		}
	}
	if describe != "" {
		err = ui.store.EndUserSession(c.Request.Context(), currentUser(c).ID, handle, describe)
	}
	if describe == "" || models.ErrorCode(err) == models.CodeNotFound {
		ui.sessionsDone(c, templates.Flash{Kind: "error", Text: "That session had ended already."})
		return
	}
	if err != nil {
		ui.fail(c, err)
		return
	}
	ui.sessionsDone(c, templates.Flash{Kind: "success", Text: "Signed out " + describe + "."})
}

// endOtherSessions signs the member out of every session but this one.
func (ui *Web) endOtherSessions(c *gin.Context) {
	this := ui.sessionHandle(c)
	if this == "" {
		ui.fail(c, errors.New("a signed-in request without a stored session"))
		return
	}
	ask := templates.ConfirmView{Heading: "Sign out everywhere else?", Button: "Sign out everywhere else",
		Warning: "Every other browser signed in to your account is signed out at once; this one stays signed in.",
		Action:  Prefix + "/sessions/end-others", CancelURL: Prefix + "/sessions"}
	if !ui.confirmed(c, "sessions", ask) {
		return
	}
	n, err := ui.store.EndOtherSessions(c.Request.Context(), currentUser(c).ID, this)
	if err != nil {
		ui.fail(c, err)
		return
	}
	msg := "You were signed in nowhere else."
	switch {
	case n == 1:
		msg = "Signed out 1 other session. This browser stays signed in."
	case n > 1:
		msg = fmt.Sprintf("Signed out %d other sessions. This browser stays signed in.", n)
	}
	ui.sessionsDone(c, templates.Flash{Kind: "success", Text: msg})
}

// sessionsDone answers an action of the sessions page: htmx gets the list
// again and the message; a plain form post goes back to the page.
func (ui *Web) sessionsDone(c *gin.Context, f templates.Flash) {
	if !isHTMX(c) {
		flash(c, f.Kind, f.Text)
		c.Redirect(http.StatusSeeOther, Prefix+"/sessions")
		return
	}
	v, err := ui.sessionsView(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	ui.render(c, http.StatusOK, templ.Join(templates.SessionsSection(ui.csrfToken(c), v), templates.FlashOOB(f)))
}

// sessionsView lists the member's live sessions, this one first.
func (ui *Web) sessionsView(c *gin.Context) (templates.SessionsView, error) {
	list, err := ui.store.ListUserSessions(c.Request.Context(), currentUser(c).ID)
	if err != nil {
		return templates.SessionsView{}, err
	}
	this := ui.sessionHandle(c)
	v := templates.SessionsView{Sessions: make([]templates.SessionRow, 0, len(list))}
	for _, s := range list {
		row := templates.SessionRow{Handle: s.Handle, Browser: browserName(s.UserAgent), Address: s.ClientIP,
			SignedIn: ui.when(s.CreatedAt), LastSeen: ui.when(s.UpdatedAt), Current: s.Handle == this}
		if row.Current {
			row.LastSeen = templates.Time{Text: "Now"}
			v.Sessions = append([]templates.SessionRow{row}, v.Sessions...)
			continue
		}
		v.Sessions = append(v.Sessions, row)
		v.Others++
	}
	return v, nil
}

// sessionHandle returns the handle of the request's stored session, "" when
// it has none.
func (ui *Web) sessionHandle(c *gin.Context) string {
	s, err := ui.sessions.Get(c.Request, ui.cookie)
	if err != nil || s.ID == "" {
		return ""
	}
	return models.SessionHandle(s.ID)
}
