package web

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"petstore/models"
	"petstore/templates"
)

// registerAPIKeys mounts the API keys page on the signed-in group.
func (ui *Web) registerAPIKeys(r gin.IRouter) {
	r.GET("/api-keys", ui.listAPIKeys)
	r.POST("/api-keys", ui.createAPIKey)
	r.GET("/api-keys/:id/revoke", ui.confirmRevokeAPIKey)
	r.POST("/api-keys/:id/revoke", ui.revokeAPIKey)
}

// listAPIKeys shows the keys and the create form.
func (ui *Web) listAPIKeys(c *gin.Context) {
	v, err := ui.apiKeysView(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	ui.showAPIKeys(c, http.StatusOK, v)
}

// createAPIKey makes a key and shows it once, in this response only: it is
// never put in the session, so it cannot be shown again (and the response
// is no-store, like every console page). A refused name, scope choice or
// expiry re-renders the form as typed.
func (ui *Web) createAPIKey(c *gin.Context) {
	in := models.APIKeyInput{Name: c.PostForm("name"), Scopes: c.PostFormArray("scope"), Expires: c.PostForm("expires")}
	k, key, err := ui.store.CreateAPIKeyFrom(c.Request.Context(), ui.storeDay(in), currentUser(c).Username)
	invalid, ok := invalidFields(err)
	if err != nil && !ok {
		ui.fail(c, err)
		return
	}
	v, verr := ui.apiKeysView(c)
	if verr != nil {
		ui.fail(c, verr)
		return
	}
	if ok {
		v.Form = ui.apiKeyForm(in, invalid)
		ui.showAPIKeys(c, http.StatusUnprocessableEntity, v)
		return
	}
	v.NewKey = &templates.NewAPIKey{Name: k.Name, Key: key}
	ui.showAPIKeys(c, http.StatusOK, v)
}

// showAPIKeys answers with the whole page, or for htmx with the keys
// section (and an emptied flash region, so no stale message stays).
func (ui *Web) showAPIKeys(c *gin.Context, status int, v templates.APIKeysView) {
	if isHTMX(c) {
		ui.render(c, status, templ.Join(templates.APIKeysSection(ui.csrfToken(c), v), templates.FlashOOB(templates.Flash{})))
		return
	}
	ui.render(c, status, templates.APIKeysPage(ui.page(c, "API keys", "api-keys"), v))
}

// confirmRevokeAPIKey asks before revoking a key; it changes nothing.
func (ui *Web) confirmRevokeAPIKey(c *gin.Context) {
	k, err := ui.findAPIKey(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	v := templates.RevokeAPIKeyView{Key: ui.apiKeyRow(k, ui.now())}
	ui.render(c, http.StatusOK, templates.RevokeAPIKeyPage(ui.page(c, "Revoke API key", "api-keys"), v))
}

// revokeAPIKey revokes a key at once: htmx gets the updated row, a plain
// form post goes back to the list.
//
// A post without the confirmation (confirm=yes, sent by the confirmation
// page and by the htmx link once its dialog was accepted) revokes nothing
// and answers with the confirmation page.
func (ui *Web) revokeAPIKey(c *gin.Context) {
	if c.PostForm("confirm") != "yes" {
		if isHTMX(c) {
			c.Header("HX-Retarget", "body")
			c.Header("HX-Reswap", "innerHTML")
		}
		ui.confirmRevokeAPIKey(c)
		return
	}
	id, err := apiKeyID(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	k, err := ui.store.RevokeAPIKey(c.Request.Context(), id, currentUser(c).Username)
	if err != nil {
		ui.fail(c, err)
		return
	}
	msg := fmt.Sprintf("API key “%s” revoked.", k.Name)
	if isHTMX(c) {
		// The row comes first: htmx parses a leading <tr> as table content.
		f := templates.Flash{Kind: "success", Text: msg}
		ui.render(c, http.StatusOK, templ.Join(templates.APIKeyTableRow(ui.apiKeyRow(k, ui.now())), templates.FlashOOB(f)))
		return
	}
	flash(c, "success", msg)
	c.Redirect(http.StatusSeeOther, Prefix+"/api-keys")
}

// apiKeysView lists the keys for the page, with an empty create form.
func (ui *Web) apiKeysView(c *gin.Context) (templates.APIKeysView, error) {
	keys, err := ui.store.ListAPIKeys(c.Request.Context())
	if err != nil {
		return templates.APIKeysView{}, err
	}
	v := templates.APIKeysView{Keys: make([]templates.APIKeyRow, 0, len(keys)),
		Form:     ui.apiKeyForm(models.APIKeyInput{Scopes: models.DefaultScopes.Names()}, nil),
		ReadOnly: !ui.may(c, "POST "+Prefix+"/api-keys/:id/revoke")}
	now := ui.now()
	for _, k := range keys {
		row := ui.apiKeyRow(k, now)
		row.ReadOnly = v.ReadOnly
		v.Keys = append(v.Keys, row)
	}
	return v, nil
}

// scopeHelp says what each scope allows, beside its checkbox.
var scopeHelp = map[models.Scopes]string{
	models.ScopePetsRead:  "list and fetch animals (the GET operations)",
	models.ScopePetsWrite: "add animals (POST /v1/pets)",
	models.ScopeMetricsRead: "read the service's own figures (requests, timings), for whoever runs the service; " +
		"no partner needs it",
}

// storeDay reads an expiry typed as a date (the form's date field) as the
// start of that day in the store's time zone, not in UTC.
func (ui *Web) storeDay(in models.APIKeyInput) models.APIKeyInput {
	if d, err := time.ParseInLocation(time.DateOnly, strings.TrimSpace(in.Expires), ui.location); err == nil {
		in.Expires = d.Format(time.RFC3339)
	}
	return in
}

// apiKeyForm is the create form holding in, as typed, with the messages of
// the fields err refuses (nil: none). The scopes in are checked.
func (ui *Web) apiKeyForm(in models.APIKeyInput, err *models.Error) templates.APIKeyForm {
	f := templates.APIKeyForm{Name: in.Name, Expires: in.Expires,
		MinExpires: ui.now().In(ui.location).AddDate(0, 0, 1).Format(time.DateOnly), Zone: ui.location.String()}
	for _, s := range models.KnownScopes {
		name := s.String()
		f.Scopes = append(f.Scopes, templates.ScopeOption{ID: strings.ReplaceAll(name, ":", "-"), Name: name,
			Help: scopeHelp[s], Checked: slices.Contains(in.Scopes, name)})
	}
	if err != nil {
		f.NameError, f.ScopesError, f.ExpiresError = err.Field(models.FieldName), err.Field(models.FieldScopes), err.Field(models.FieldExpires)
	}
	return f
}

// findAPIKey returns the key named by the :id parameter.
func (ui *Web) findAPIKey(c *gin.Context) (models.APIKey, error) {
	id, err := apiKeyID(c)
	if err != nil {
		return models.APIKey{}, err
	}
	return ui.store.GetAPIKey(c.Request.Context(), id)
}

// apiKeyID reads the :id parameter; anything but a positive integer is a
// key that does not exist.
func apiKeyID(c *gin.Context) (int64, error) {
	id, ok := models.ParseID(c.Param("id"))
	if !ok {
		return 0, &models.Error{Code: models.CodeNotFound, Message: "There is no API key with this id."}
	}
	return id, nil
}

// apiKeyRow maps a key to its row, as it stands at now. The hash stays
// behind.
func (ui *Web) apiKeyRow(k models.APIKey, now time.Time) templates.APIKeyRow {
	row := templates.APIKeyRow{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Scopes: k.Scopes.Names(), CreatedBy: k.CreatedBy,
		Created: ui.when(k.CreatedAt), LastUsed: ui.whenOr(k.LastUsedAt, "never"), Expires: ui.whenOr(k.ExpiresAt, "never"),
		LastDeprecatedCall: ui.whenOr(k.DeprecatedCallAt, "never"), Expired: !k.Revoked() && k.Expired(now)}
	if k.Revoked() {
		row.Revoked = ui.when(*k.RevokedAt)
	}
	return row
}

// invalidFields returns err as a *models.Error when it names bad form
// fields, which the form shows beside them (422) instead of an error page.
func invalidFields(err error) (*models.Error, bool) {
	var e *models.Error
	if errors.As(err, &e) && len(e.Fields) > 0 {
		return e, true
	}
	return nil, false
}
