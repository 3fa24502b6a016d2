package web

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"petstore/models"
	"petstore/templates"
)

// registerUsers mounts the staff pages on the signed-in group.
func (ui *Web) registerUsers(r gin.IRouter) {
	r.GET("/users", ui.listUsers)
	r.POST("/users", ui.createUser)
	r.GET("/users/:id", ui.showMember)
	r.POST("/users/:id/role", ui.setMemberRole)
	r.POST("/users/:id/disable", ui.disableMember)
	r.POST("/users/:id/enable", ui.enableMember)
	r.POST("/users/:id/end-sessions", ui.endMemberSessions)
	r.POST("/users/:id/reset-password", ui.resetMemberPassword)
}

// logoutPath is open to every signed-in member, whatever they must do first.
const logoutPath = Prefix + "/logout"

// checkAccount runs after requireStaff. A disabled account's sessions have
// ended already (disabling bumps the session version, which requireStaff
// checks); this refuses one all the same. A member whose password was
// reset can use nothing but the account page's password form, and sign-out.
func (ui *Web) checkAccount(c *gin.Context) {
	u := currentUser(c)
	if u.Disabled() {
		s := session(c)
		s.Clear()
		s.Save()
		ui.toLogin(c)
		return
	}
	if u.MustChangePassword && !forcedPasswordPaths[c.FullPath()] {
		redirectAway(c, accountPath+"#password", http.StatusForbidden)
		return
	}
	if !ui.checkSecondFactorSetup(c, u) {
		return
	}
	c.Next()
}

// listUsers shows the staff accounts and the two forms.
func (ui *Web) listUsers(c *gin.Context) {
	v, err := ui.staffView(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	ui.render(c, http.StatusOK, templates.StaffPage(ui.page(c, "Staff", "users"), v))
}

// createUser adds a staff account, an editor unless the form chooses
// another role. Refused input re-renders the form with the messages beside
// the fields; the password is never sent back.
func (ui *Web) createUser(c *gin.Context) {
	username, role := c.PostForm("username"), c.DefaultPostForm("role", string(models.RoleEditor))
	u, err := ui.store.CreateUserWithRole(c.Request.Context(), username, c.PostForm("password"), models.Role(role), currentUser(c).Username)
	invalid, ok := invalidFields(err)
	if err != nil && !ok {
		ui.fail(c, err)
		return
	}
	v, verr := ui.staffView(c)
	if verr != nil {
		ui.fail(c, verr)
		return
	}
	if ok {
		v.Add = templates.StaffAddForm{Username: username, Role: role, RoleError: invalid.Field(models.FieldRole),
			UsernameError: invalid.Field(models.FieldUsername), PasswordError: invalid.Field(models.FieldPassword)}
		if isHTMX(c) {
			ui.render(c, http.StatusUnprocessableEntity, templ.Join(templates.StaffSection(ui.csrfToken(c), v), templates.FlashOOB(templates.Flash{})))
			return
		}
		ui.render(c, http.StatusUnprocessableEntity, templates.StaffPage(ui.page(c, "Staff", "users"), v))
		return
	}
	msg := "Staff member " + u.Username + " added as " + withArticle(u.Role) + "."
	if isHTMX(c) {
		f := templates.Flash{Kind: "success", Text: msg}
		ui.render(c, http.StatusOK, templ.Join(templates.StaffSection(ui.csrfToken(c), v), templates.FlashOOB(f)))
		return
	}
	flash(c, "success", msg)
	c.Redirect(http.StatusSeeOther, Prefix+"/users")
}

// staffView lists the accounts, marking the signed-in one.
func (ui *Web) staffView(c *gin.Context) (templates.StaffView, error) {
	users, err := ui.store.ListUsers(c.Request.Context())
	if err != nil {
		return templates.StaffView{}, err
	}
	me := currentUser(c).ID
	v := templates.StaffView{Members: make([]templates.StaffRow, 0, len(users)), MinPasswordLength: models.MinPasswordLength,
		ReadOnly: !ui.may(c, "POST "+Prefix+"/users")}
	for _, u := range users {
		v.Members = append(v.Members, templates.StaffRow{ID: u.ID, Username: u.Username, Created: ui.when(u.CreatedAt),
			State: accountState(u), Role: string(u.Role), You: u.ID == me})
	}
	// Two-step sign-in required per role (account.go).
	if v.TwoFactorRoles, err = ui.twoFactorRoles(c); err != nil {
		return templates.StaffView{}, err
	}
	return v, nil
}

// accountState names an account's state for the staff list.
func accountState(u models.User) string {
	switch {
	case u.Disabled():
		return "Disabled"
	case u.MustChangePassword:
		return "Must change password"
	}
	return "Enabled"
}

// showMember shows one staff account and the forms that act on it.
func (ui *Web) showMember(c *gin.Context) {
	u, err := ui.findMember(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	ui.renderMember(c, http.StatusOK, u, "", "")
}

// renderMember answers with the member page of u; otp is a one-time
// password just made (shown in this response only), refused says why an
// action was refused.
func (ui *Web) renderMember(c *gin.Context, status int, u models.User, otp, refused string) {
	v, err := ui.memberView(c, u)
	if err != nil {
		ui.fail(c, err)
		return
	}
	v.OneTimePassword, v.Error = otp, refused
	ui.render(c, status, templates.MemberPage(ui.page(c, "Staff member "+u.Username, "users"), v))
}

// memberView maps an account to its page, with its last sign-in and the
// live API keys it created.
func (ui *Web) memberView(c *gin.Context, u models.User) (templates.MemberView, error) {
	ctx := c.Request.Context()
	v := templates.MemberView{ID: u.ID, Username: u.Username, You: u.ID == currentUser(c).ID, Disabled: u.Disabled(),
		MustChangePassword: u.MustChangePassword, Created: ui.when(u.CreatedAt), LastSignIn: templates.Time{Text: "never"},
		Role: string(u.Role), ReadOnly: !ui.may(c, "POST "+Prefix+"/users/:id/role")}
	if u.DisabledAt != nil {
		v.DisabledAt = ui.when(*u.DisabledAt)
	}
	logins, _, err := ui.store.ListAuditEvents(ctx, models.AuditQuery{Action: models.ActionLogin,
		TargetType: models.TargetUser, TargetID: u.ID, Limit: 1})
	if err != nil {
		return v, err
	}
	if len(logins) > 0 {
		v.LastSignIn = ui.when(logins[0].At)
	}
	keys, err := ui.store.ListAPIKeys(ctx)
	if err != nil {
		return v, err
	}
	for _, k := range keys {
		if k.CreatedBy == u.Username && !k.Revoked() {
			v.Keys = append(v.Keys, ui.apiKeyRow(k, ui.now()))
		}
	}
	return v, nil
}

// findMember returns the account named by the :id parameter.
func (ui *Web) findMember(c *gin.Context) (models.User, error) {
	id, ok := models.ParseID(c.Param("id"))
	if !ok {
		return models.User{}, &models.Error{Code: models.CodeNotFound, Message: "There is no staff member with this id."}
	}
	return ui.store.GetUser(c.Request.Context(), id)
}

// memberAction runs one action on the account of the :id parameter and
// answers as the other forms do: a flash and a redirect to the member's
// page, or the page with why the action was refused (a conflict, such as
// the last enabled account). A member may not disable or reset their own
// account from here: they would lock themself out by mistake.
//
// A dangerous action (ask not nil) acts only on a post that carries the
// confirmation; any other post answers with ask's confirmation page and
// changes nothing.
func (ui *Web) memberAction(c *gin.Context, notSelf string, ask func(u models.User) templates.ConfirmView,
	act func(ctx context.Context, id int64, actor string) (models.User, error), done string) {
	target, err := ui.findMember(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	if notSelf != "" && target.ID == currentUser(c).ID {
		ui.renderMember(c, http.StatusConflict, target, "", notSelf)
		return
	}
	if ask != nil && !ui.confirmed(c, "users", ask(target)) {
		return
	}
	u, err := act(c.Request.Context(), target.ID, currentUser(c).Username)
	if e := (*models.Error)(nil); errors.As(err, &e) && e.Code == models.CodeConflict {
		ui.renderMember(c, http.StatusConflict, target, "", e.Message)
		return
	}
	if err != nil {
		ui.fail(c, err)
		return
	}
	if u.ID == currentUser(c).ID && u.SessionVersion != currentUser(c).SessionVersion {
		// Ending one's own sessions ends this one too.
		ui.toLogin(c)
		return
	}
	flash(c, "success", strings.ReplaceAll(done, "{name}", u.Username))
	c.Redirect(http.StatusSeeOther, templates.MemberPath(u.ID))
}

// setMemberRole gives an account the role of the form field "role". The
// last enabled admin keeps the role (a conflict, shown on the page).
func (ui *Web) setMemberRole(c *gin.Context) {
	role := models.Role(c.PostForm("role"))
	ui.memberAction(c, "", nil, func(ctx context.Context, id int64, actor string) (models.User, error) {
		return ui.store.SetRole(ctx, id, role, actor)
	}, "{name} is now "+withArticle(role)+".")
}

// disableMember disables an account: its sessions end at once.
func (ui *Web) disableMember(c *gin.Context) {
	ask := func(u models.User) templates.ConfirmView {
		return memberConfirm(u, "disable", "Disable "+u.Username+"'s account?", "Disable account",
			u.Username+"'s sessions end at once and sign-in is refused until an admin enables the account again. Their API keys keep working until revoked.")
	}
	ui.memberAction(c, "You cannot disable your own account.", ask, ui.store.DisableUser,
		"{name} is disabled: their sessions have ended and sign-in is refused. Their API keys keep working until revoked.")
}

// enableMember enables an account again.
func (ui *Web) enableMember(c *gin.Context) {
	ui.memberAction(c, "", nil, ui.store.EnableUser, "{name} is enabled and can sign in again.")
}

// endMemberSessions signs an account out everywhere.
func (ui *Web) endMemberSessions(c *gin.Context) {
	ask := func(u models.User) templates.ConfirmView {
		if u.ID == currentUser(c).ID {
			return memberConfirm(u, "end-sessions", "End all your sessions?", "End all sessions",
				"Every browser signed in to your account is signed out at once, this one included: you will sign in again.")
		}
		return memberConfirm(u, "end-sessions", "End all of "+u.Username+"'s sessions?", "End all sessions",
			u.Username+" is signed out of every browser at once and must sign in again.")
	}
	ui.memberAction(c, "", ask, ui.store.EndSessions, "All sessions of {name} have ended.")
}

// resetMemberPassword gives an account a one-time password and shows it in
// this response only: never in a URL, a flash or the session (the page is
// no-store like every console page).
func (ui *Web) resetMemberPassword(c *gin.Context) {
	target, err := ui.findMember(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	if target.ID == currentUser(c).ID {
		ui.renderMember(c, http.StatusConflict, target, "", "You cannot reset your own password here: change it on the Staff page.")
		return
	}
	ask := memberConfirm(target, "reset-password", "Reset "+target.Username+"'s password?", "Reset password",
		target.Username+"'s password stops working and their sessions end at once. A one-time password is shown once on the next page: give it to them; they must choose a new password when they sign in with it.")
	if !ui.confirmed(c, "users", ask) {
		return
	}
	u, otp, err := ui.store.ResetPassword(c.Request.Context(), target.ID, currentUser(c).Username)
	if err != nil {
		ui.fail(c, err)
		return
	}
	ui.renderMember(c, http.StatusOK, u, otp, "")
}

// memberConfirm is the confirmation of a dangerous action on member u's
// account.
func memberConfirm(u models.User, action, heading, button, warning string) templates.ConfirmView {
	return templates.ConfirmView{Heading: heading, Warning: warning, Button: button,
		Action: templates.MemberPath(u.ID) + "/" + action, CancelURL: templates.MemberPath(u.ID)}
}

// confirmed reports whether the post carries the confirmation of a
// dangerous action (confirm=yes, which only the confirmation page and the
// htmx forms that asked first send); otherwise it answers with the
// confirmation page v, in the navigation's section, having changed
// nothing. An htmx request gets the page in place of the whole body.
func (ui *Web) confirmed(c *gin.Context, section string, v templates.ConfirmView) bool {
	if c.PostForm("confirm") == "yes" {
		return true
	}
	if isHTMX(c) {
		c.Header("HX-Retarget", "body")
		c.Header("HX-Reswap", "innerHTML")
	}
	ui.render(c, http.StatusOK, templates.ConfirmPage(ui.page(c, v.Heading, section), v))
	return false
}
