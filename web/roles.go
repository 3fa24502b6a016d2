package web

import (
	"maps"
	"net/http"

	"github.com/gin-gonic/gin"

	"petstore/httpcode"
	"petstore/models"
	"petstore/templates"
)

// Roles, shorter, for the table below.
const (
	viewer = models.RoleViewer
	editor = models.RoleEditor
	admin  = models.RoleAdmin
)

// routeRoles is the least role each signed-in console route needs, by
// method and route pattern as Gin registers them. It is the one place the
// console's permissions are written: authorize checks every request against
// it, and pages ask it (may) which links and forms to show. A route missing
// here is refused to everyone, so a new route cannot open by mistake.
//
// Viewers read every page but the webhooks'; they change only their own
// password and sessions. Editors also add pets and change them. Admins
// also manage API keys, webhooks and staff accounts: add them, change their
// roles, disable, enable, reset their passwords and end their sessions.
var routeRoles = map[string]models.Role{
	"GET " + Prefix:                           viewer,
	"POST " + Prefix + "/logout":              viewer,
	"GET " + Prefix + "/pets":                 viewer,
	"GET " + Prefix + "/pets/:id":             viewer, // a pet's page and history
	"GET " + Prefix + "/pets/export.csv":      viewer, // every page of the list, as CSV
	"GET " + Prefix + "/audit":                viewer,
	"GET " + Prefix + "/api-keys":             viewer,
	"GET " + Prefix + "/users":                viewer,
	"GET " + Prefix + "/users/:id":            viewer,
	"GET " + Prefix + "/password":             viewer,
	"POST " + Prefix + "/password":            viewer,
	"GET " + Prefix + "/sessions":             viewer,
	"POST " + Prefix + "/sessions/end":        viewer,
	"POST " + Prefix + "/sessions/end-others": viewer,

	// The member's own account: two-step sign-in and passkeys.
	"GET " + Prefix + "/account":                      viewer,
	"POST " + Prefix + "/account/totp":                viewer,
	"GET " + Prefix + "/account/totp":                 viewer,
	"POST " + Prefix + "/account/totp/confirm":        viewer,
	"POST " + Prefix + "/account/totp/disable":        viewer,
	"POST " + Prefix + "/account/recovery-codes":      viewer,
	"POST " + Prefix + "/account/passkeys/options":    viewer,
	"POST " + Prefix + "/account/passkeys":            viewer,
	"GET " + Prefix + "/account/passkeys/:id/delete":  viewer,
	"POST " + Prefix + "/account/passkeys/:id/delete": viewer,
	"GET " + Prefix + "/users/:id/reset-2fa":          admin,
	"POST " + Prefix + "/users/:id/reset-2fa":         admin,
	"POST " + Prefix + "/users/two-factor-roles":      admin,

	"POST " + Prefix + "/pets":             editor,
	"POST " + Prefix + "/pets/:id/status":  editor,
	"POST " + Prefix + "/pets/:id":         editor, // a pet's edit form
	"POST " + Prefix + "/pets/bulk-status": editor,
	"GET " + Prefix + "/pets/bulk":         editor, // confirm a change of every pet of a filter
	"POST " + Prefix + "/pets/bulk":        editor,
	"GET " + Prefix + "/pets/bulk/:id":     editor, // its progress
	// Undo of the member's own changes of pets, their list and an undo's
	// progress: only editors and admins change pets.
	"GET " + Prefix + "/undo":      editor,
	"POST " + Prefix + "/undo/:id": editor,
	"GET " + Prefix + "/undo/:id":  editor,

	// The archive: everyone reads it; editors archive and restore.
	"GET " + Prefix + "/pets/archive":          viewer,
	"POST " + Prefix + "/pets/archive/restore": editor,
	"POST " + Prefix + "/pets/:id/archive":     editor, // asks first, then archives
	"GET " + Prefix + "/pets/bulk-archive":     editor, // confirm archiving the selected pets
	"POST " + Prefix + "/pets/bulk-archive":    editor,
	"GET " + Prefix + "/pets/import":           editor, // a CSV file: upload, preview, import
	"POST " + Prefix + "/pets/import":          editor,
	"GET " + Prefix + "/pets/import/:id":       editor,
	"POST " + Prefix + "/pets/import/:id":      editor,

	"POST " + Prefix + "/api-keys":                 admin,
	"GET " + Prefix + "/api-keys/:id/revoke":       admin,
	"POST " + Prefix + "/api-keys/:id/revoke":      admin,
	"POST " + Prefix + "/users":                    admin,
	"POST " + Prefix + "/users/:id/role":           admin,
	"POST " + Prefix + "/users/:id/disable":        admin,
	"POST " + Prefix + "/users/:id/enable":         admin,
	"POST " + Prefix + "/users/:id/end-sessions":   admin,
	"POST " + Prefix + "/users/:id/reset-password": admin,

	// Webhooks, reading included: the pages show partners' endpoint URLs
	// (which may carry their tokens) and what their servers answered.
	"GET " + Prefix + "/webhooks":                                  admin,
	"POST " + Prefix + "/webhooks":                                 admin,
	"GET " + Prefix + "/webhooks/:id":                              admin,
	"POST " + Prefix + "/webhooks/:id/test":                        admin,
	"POST " + Prefix + "/webhooks/:id/disable":                     admin,
	"POST " + Prefix + "/webhooks/:id/enable":                      admin,
	"GET " + Prefix + "/webhooks/:id/rotate":                       admin,
	"POST " + Prefix + "/webhooks/:id/rotate":                      admin,
	"GET " + Prefix + "/webhooks/:id/delete":                       admin,
	"POST " + Prefix + "/webhooks/:id/delete":                      admin,
	"POST " + Prefix + "/webhooks/:id/deliveries/:delivery/resend": admin,

	// Operations: where backups are written and whether they work.
	"GET " + Prefix + "/operations": admin,
}

// RouteRoles returns a copy of the least role of each signed-in console
// route, keyed "METHOD /admin/pattern", for tests and documentation.
func RouteRoles() map[string]models.Role { return maps.Clone(routeRoles) }

// authorize lets the request through when the signed-in member's role
// allows its route, and otherwise refuses it with a 403 page and an audit
// row (one per member, route pattern and minute, with a count), before any
// handler runs: a refused request changes nothing.
// It runs after requireStaff and checkAccount.
func (ui *Web) authorize(c *gin.Context) {
	route := c.Request.Method + " " + c.FullPath()
	need, ok := routeRoles[route]
	if !ok {
		ui.log.Error("console route missing from routeRoles: refused to every role", "route", route)
	}
	u := currentUser(c)
	if u.Role.Allows(need) {
		c.Next()
		return
	}
	why := "needs " + string(need) + "; role " + string(u.Role)
	if !ok {
		why = "is open to no role; role " + string(u.Role)
	}
	if err := ui.store.RecordForbidden(c.Request.Context(), u, route, why); err != nil {
		ui.fail(c, err)
		return
	}
	// app.js shows the page's message when an htmx request is refused.
	c.Header("Petstore-Refusal", "role")
	ui.fail(c, refuse(httpcode.Forbidden, "Not allowed for your role", forbiddenMessage(u.Role, need)))
}

// forbiddenMessage says why a member of role have was refused what needs
// the role need.
func forbiddenMessage(have, need models.Role) string {
	you := "Your account is " + withArticle(have) + ", so nothing was changed. An admin can change your role on the Staff page."
	switch need {
	case editor:
		return "Adding and changing pets needs the editor or admin role. " + you
	case admin:
		return "Managing API keys, webhooks and staff accounts needs the admin role. " + you
	}
	return "This page is not open to any role, so nothing was changed."
}

// withArticle returns "a viewer", "an editor" or "an admin".
func withArticle(r models.Role) string {
	if r == editor || r == admin {
		return "an " + string(r)
	}
	return "a " + string(r)
}

// may reports whether the signed-in member's role allows route ("METHOD
// /admin/pattern"), for pages that show only what the member may do.
func (ui *Web) may(c *gin.Context, route string) bool {
	need, ok := routeRoles[route]
	return ok && currentUser(c).Role.Allows(need)
}

// navItems are the navigation's entries; each shows only to the roles
// that may open it.
var navItems = []templates.NavItem{
	{Href: Prefix + "/pets", Label: "Pets", Section: "pets"},
	{Href: Prefix + "/pets/archive", Label: "Archive", Section: "archive"},
	{Href: Prefix + "/api-keys", Label: "API keys", Section: "api-keys"},
	{Href: Prefix + "/webhooks", Label: "Webhooks", Section: "webhooks"},
	{Href: Prefix + "/users", Label: "Staff", Section: "users"},
	{Href: Prefix + "/audit", Label: "Audit", Section: "audit"},
	{Href: Prefix + "/sessions", Label: "Sessions", Section: "sessions"},
	{Href: Prefix + "/account", Label: "Account", Section: "account"},
	{Href: Prefix + "/operations", Label: "Operations", Section: "operations"},
}

// nav returns the navigation entries the signed-in member may open; none
// when no one is signed in.
func (ui *Web) nav(c *gin.Context) []templates.NavItem {
	var items []templates.NavItem
	for _, it := range navItems {
		if ui.may(c, http.MethodGet+" "+it.Href) {
			items = append(items, it)
		}
	}
	return items
}
