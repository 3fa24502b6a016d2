package web

import (
	"net/http"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"petstore/models"
	"petstore/templates"
)

// registerUsers mounts the staff page on the signed-in group.
func (w *Web) registerUsers(r gin.IRouter) {
	r.GET("/users", w.listUsers)
	r.POST("/users", w.createUser)
	r.POST("/users/password", w.changePassword)
}

// listUsers shows the staff accounts and the two forms.
func (w *Web) listUsers(c *gin.Context) {
	v, err := w.staffView(c)
	if err != nil {
		w.fail(c, err)
		return
	}
	w.render(c, http.StatusOK, templates.StaffPage(w.page(c, "Staff", "users"), v))
}

// createUser adds a staff account. Refused input re-renders the form with
// the messages beside the fields; the password is never sent back.
func (w *Web) createUser(c *gin.Context) {
	username := c.PostForm("username")
	u, err := w.store.CreateUser(c.Request.Context(), username, c.PostForm("password"), currentUser(c).Username)
	invalid, ok := invalidFields(err)
	if err != nil && !ok {
		w.fail(c, err)
		return
	}
	v, verr := w.staffView(c)
	if verr != nil {
		w.fail(c, verr)
		return
	}
	if ok {
		v.Add = templates.StaffAddForm{Username: username,
			UsernameError: invalid.Field("username"), PasswordError: invalid.Field("password")}
		if isHTMX(c) {
			w.render(c, http.StatusUnprocessableEntity, templ.Join(templates.StaffSection(w.csrfToken(c), v), templates.FlashOOB(templates.Flash{})))
			return
		}
		w.render(c, http.StatusUnprocessableEntity, templates.StaffPage(w.page(c, "Staff", "users"), v))
		return
	}
	msg := "Staff member " + u.Username + " added."
	if isHTMX(c) {
		f := templates.Flash{Kind: "success", Text: msg}
		w.render(c, http.StatusOK, templ.Join(templates.StaffSection(w.csrfToken(c), v), templates.FlashOOB(f)))
		return
	}
	flash(c, "success", msg)
	c.Redirect(http.StatusSeeOther, Prefix+"/users")
}

// changePassword changes the signed-in member's password. The store bumps
// the account's session version, which ends all its sessions; this one is
// moved to the new version so that only the others end.
func (w *Web) changePassword(c *gin.Context) {
	u, err := w.store.ChangePassword(c.Request.Context(), currentUser(c).ID, c.PostForm("current"), c.PostForm("new"), c.ClientIP())
	if invalid, ok := invalidFields(err); ok {
		v, verr := w.staffView(c)
		if verr != nil {
			w.fail(c, verr)
			return
		}
		v.Password = templates.PasswordForm{CurrentError: invalid.Field("current"), NewError: invalid.Field("new")}
		w.render(c, http.StatusUnprocessableEntity, templates.StaffPage(w.page(c, "Staff", "users"), v))
		return
	}
	if err != nil {
		w.fail(c, err)
		return
	}
	s := session(c)
	s.Set(keyVersion, u.SessionVersion)
	if err := s.Save(); err != nil {
		w.fail(c, err)
		return
	}
	flash(c, "success", "Your password was changed. Other sessions of your account have been signed out.")
	c.Redirect(http.StatusSeeOther, Prefix+"/users")
}

// staffView lists the accounts, marking the signed-in one.
func (w *Web) staffView(c *gin.Context) (templates.StaffView, error) {
	users, err := w.store.ListUsers(c.Request.Context())
	if err != nil {
		return templates.StaffView{}, err
	}
	me := currentUser(c).ID
	v := templates.StaffView{Members: make([]templates.StaffRow, 0, len(users)), MinPasswordLength: models.MinPasswordLength}
	for _, u := range users {
		v.Members = append(v.Members, templates.StaffRow{Username: u.Username, Created: formatTime(u.CreatedAt), You: u.ID == me})
	}
	return v, nil
}
