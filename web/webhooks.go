package web

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"petstore/models"
	"petstore/templates"
	"petstore/webhooks"
)

// Every webhook route is for admins only, reading included: the pages show
// partners' endpoint URLs, which may carry their tokens, and what their
// servers answered.

// registerWebhooks mounts the webhook pages on the signed-in group.
func (ui *Web) registerWebhooks(r gin.IRouter) {
	r.GET("/webhooks", ui.listWebhooks)
	r.POST("/webhooks", ui.createWebhook)
	r.GET("/webhooks/:id", ui.showWebhook)
	r.POST("/webhooks/:id/test", ui.testWebhook)
	r.POST("/webhooks/:id/disable", ui.disableWebhook)
	r.POST("/webhooks/:id/enable", ui.enableWebhook)
	r.GET("/webhooks/:id/rotate", ui.confirmRotateWebhook)
	r.POST("/webhooks/:id/rotate", ui.rotateWebhook)
	r.GET("/webhooks/:id/delete", ui.confirmDeleteWebhook)
	r.POST("/webhooks/:id/delete", ui.deleteWebhook)
	r.POST("/webhooks/:id/deliveries/:delivery/resend", ui.resendWebhookDelivery)
}

// webhookDeliveryLimit is how many of an endpoint's latest deliveries its
// page shows.
const webhookDeliveryLimit = 50

// listWebhooks shows the endpoints and the add form.
func (ui *Web) listWebhooks(c *gin.Context) {
	v, err := ui.webhooksView(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	ui.showWebhooks(c, http.StatusOK, v)
}

// createWebhook adds an endpoint and shows its signing secret once, in this
// response only: never in the session, a flash, a URL or a redirect (and
// the response is no-store, like every console page). A refused URL, event
// type or description re-renders the form as typed.
func (ui *Web) createWebhook(c *gin.Context) {
	typed := models.WebhookInput{URL: c.PostForm("url"), EventTypes: c.PostFormArray("events"), Description: c.PostForm("description")}
	in := typed
	// Validate rewrites the types in place; the form shows them as typed.
	in.EventTypes = slices.Clone(typed.EventTypes)
	w, secret, err := webhooks.Create(c.Request.Context(), ui.store, in, ui.webhookAllowPrivate, currentUser(c).Username)
	invalid, ok := invalidFields(err)
	if err != nil && !ok {
		ui.fail(c, err)
		return
	}
	v, verr := ui.webhooksView(c)
	if verr != nil {
		ui.fail(c, verr)
		return
	}
	if ok {
		v.Form = webhookForm(typed, invalid)
		ui.showWebhooks(c, http.StatusUnprocessableEntity, v)
		return
	}
	v.Created = &templates.WebhookSecret{EndpointID: w.ID, URL: w.URL, Secret: secret}
	ui.showWebhooks(c, http.StatusOK, v)
}

// showWebhooks answers with the whole page, or for htmx with the webhooks
// section (and an emptied flash region, so no stale message stays).
func (ui *Web) showWebhooks(c *gin.Context, status int, v templates.WebhooksView) {
	if isHTMX(c) {
		ui.render(c, status, templ.Join(templates.WebhooksSection(ui.csrfToken(c), v), templates.FlashOOB(templates.Flash{})))
		return
	}
	ui.render(c, status, templates.WebhooksPage(ui.page(c, "Webhooks", "webhooks"), v))
}

// webhooksView lists the endpoints for the page, with an empty add form.
func (ui *Web) webhooksView(c *gin.Context) (templates.WebhooksView, error) {
	ws, err := ui.store.ListWebhooks(c.Request.Context())
	if err != nil {
		return templates.WebhooksView{}, err
	}
	v := templates.WebhooksView{Endpoints: make([]templates.WebhookRow, 0, len(ws)), Form: webhookForm(models.WebhookInput{}, nil)}
	for _, w := range ws {
		v.Endpoints = append(v.Endpoints, ui.webhookRow(w))
	}
	return v, nil
}

// webhookForm is the add form holding in, as typed, with the messages of
// the fields err refuses (nil: none).
func webhookForm(in models.WebhookInput, err *models.Error) templates.WebhookForm {
	f := templates.WebhookForm{URL: in.URL, Description: in.Description}
	for _, t := range models.WebhookEventTypes {
		f.Events = append(f.Events, templates.EventTypeOption{ID: strings.ReplaceAll(t, ".", "-"), Name: t,
			Checked: slices.Contains(in.EventTypes, t)})
	}
	if err != nil {
		f.URLError, f.EventsError = err.Field(models.FieldURL), err.Field(models.FieldEventTypes)
		f.DescriptionError = err.Field(models.FieldDescription)
	}
	return f
}

// webhookRow maps an endpoint to what the pages show of it. The secrets
// stay behind.
func (ui *Web) webhookRow(w models.Webhook) templates.WebhookRow {
	r := templates.WebhookRow{ID: w.ID, URL: w.URL, Events: "all", Description: w.Description, Enabled: w.Enabled,
		DisabledReason: w.DisabledReason, LastSuccess: ui.whenOr(w.LastSuccessAt, "never"), Failures: w.ConsecutiveFailures,
		CreatedBy: w.CreatedBy, Created: ui.when(w.CreatedAt)}
	if types := w.Types(); len(types) > 0 {
		r.Events = strings.Join(types, ", ")
	}
	if w.FailingSince != nil {
		r.FailingSince = ui.when(*w.FailingSince)
	}
	return r
}

// showWebhook shows one endpoint, its latest deliveries and its actions.
func (ui *Web) showWebhook(c *gin.Context) {
	w, err := ui.findWebhook(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	ui.renderWebhook(c, http.StatusOK, w, nil, "")
}

// renderWebhook answers with the page of endpoint w; rotated is a secret
// just made (shown in this response only), refused says why an action was
// refused.
func (ui *Web) renderWebhook(c *gin.Context, status int, w models.Webhook, rotated *templates.WebhookSecret, refused string) {
	ds, err := ui.store.WebhookDeliveries(c.Request.Context(), w.ID, webhookDeliveryLimit)
	if err != nil {
		ui.fail(c, err)
		return
	}
	v := templates.WebhookView{Endpoint: ui.webhookRow(w), DeliveryLimit: webhookDeliveryLimit, Rotated: rotated, Error: refused,
		Grace: graceWords(webhooks.RotationGrace)}
	if now := ui.now(); w.PreviousExpiresAt != nil && now.Before(*w.PreviousExpiresAt) {
		v.PreviousUntil = ui.when(*w.PreviousExpiresAt)
	}
	for _, d := range ds {
		v.Deliveries = append(v.Deliveries, ui.deliveryRow(d))
	}
	ui.render(c, status, templates.WebhookPage(ui.page(c, "Webhook endpoint "+strconv.FormatInt(w.ID, 10), "webhooks"), v))
}

// deliveryRow maps a delivery to its row; its body stays behind.
func (ui *Web) deliveryRow(d models.WebhookDelivery) templates.DeliveryRow {
	r := templates.DeliveryRow{ID: d.ID, EventID: d.EventID, Type: d.EventType, Status: d.Status, Attempts: d.Attempts,
		LastResponse: "not tried yet", Created: ui.when(d.CreatedAt),
		Resendable: d.Status != models.DeliveryDelivered}
	switch {
	case d.LastError != "":
		r.LastResponse = d.LastError
	case d.LastStatus != nil:
		r.LastResponse = strconv.Itoa(*d.LastStatus) + " " + http.StatusText(*d.LastStatus)
	}
	if d.LastDurationMS != nil {
		r.Duration = strconv.Itoa(*d.LastDurationMS) + " ms"
	}
	if d.Status == models.DeliveryPending {
		r.NextAttempt = ui.when(d.NextAttemptAt)
	}
	return r
}

// graceWords says a whole number of hours in words.
func graceWords(d time.Duration) string {
	if h := int(d / time.Hour); h != 1 {
		return strconv.Itoa(h) + " hours"
	}
	return "1 hour"
}

// findWebhook returns the endpoint named by the :id parameter.
func (ui *Web) findWebhook(c *gin.Context) (models.Webhook, error) {
	id, err := webhookID(c)
	if err != nil {
		return models.Webhook{}, err
	}
	return ui.store.GetWebhook(c.Request.Context(), id)
}

// webhookID reads the :id parameter; anything but a positive integer is an
// endpoint that does not exist.
func webhookID(c *gin.Context) (int64, error) {
	id, ok := models.ParseID(c.Param("id"))
	if !ok {
		return 0, &models.Error{Code: models.CodeNotFound, Message: "There is no webhook endpoint with this id."}
	}
	return id, nil
}

// webhookAction runs one action on the endpoint of the :id parameter and
// answers as the member page does: a flash and a redirect to the endpoint's
// page, or the page with why the action was refused (a conflict).
func (ui *Web) webhookAction(c *gin.Context, act func(ctx context.Context, id int64, actor string) error, done string) {
	w, err := ui.findWebhook(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	err = act(c.Request.Context(), w.ID, currentUser(c).Username)
	if e := (*models.Error)(nil); errors.As(err, &e) && e.Code == models.CodeConflict {
		ui.renderWebhook(c, http.StatusConflict, w, nil, e.Message)
		return
	}
	if err != nil {
		ui.fail(c, err)
		return
	}
	flash(c, "success", done)
	c.Redirect(http.StatusSeeOther, templates.WebhookPath(w.ID, ""))
}

// testWebhook queues a ping event for the endpoint, to go at once.
func (ui *Web) testWebhook(c *gin.Context) {
	ui.webhookAction(c, func(ctx context.Context, id int64, actor string) error {
		return webhooks.SendPing(ctx, ui.store, id, actor)
	}, "Test event queued: see it in the deliveries below.")
}

// disableWebhook stops the endpoint's deliveries; its events keep being
// queued.
func (ui *Web) disableWebhook(c *gin.Context) {
	ui.webhookAction(c, func(ctx context.Context, id int64, actor string) error {
		_, err := ui.store.SetWebhookEnabled(ctx, id, false, actor)
		return err
	}, "Endpoint disabled: no deliveries go to it until it is enabled again.")
}

// enableWebhook starts the endpoint's deliveries again.
func (ui *Web) enableWebhook(c *gin.Context) {
	ui.webhookAction(c, func(ctx context.Context, id int64, actor string) error {
		_, err := ui.store.SetWebhookEnabled(ctx, id, true, actor)
		return err
	}, "Endpoint enabled: deliveries start again, first with the events that happened meanwhile.")
}

// resendWebhookDelivery queues a failed (or retrying) delivery again, at
// once. A delivery already delivered, or of another endpoint, is refused
// on the endpoint's page.
func (ui *Web) resendWebhookDelivery(c *gin.Context) {
	delivery, ok := models.ParseID(c.Param("delivery"))
	if !ok {
		ui.fail(c, &models.Error{Code: models.CodeNotFound, Message: "There is no delivery with this id."})
		return
	}
	ui.webhookAction(c, func(ctx context.Context, id int64, actor string) error {
		return ui.store.ResendWebhookDelivery(ctx, id, delivery, actor)
	}, "Delivery queued again: it is sent at once, its attempts counted afresh.")
}

// confirmRotateWebhook asks before rotating the endpoint's secret; it
// changes nothing.
func (ui *Web) confirmRotateWebhook(c *gin.Context) {
	w, err := ui.findWebhook(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	v := templates.ConfirmWebhookView{Endpoint: ui.webhookRow(w), Grace: graceWords(webhooks.RotationGrace)}
	ui.render(c, http.StatusOK, templates.RotateWebhookPage(ui.page(c, "Rotate webhook secret", "webhooks"), v))
}

// rotateWebhook gives the endpoint a new secret and shows it in this
// response only, on the endpoint's page; the old one keeps signing for
// webhooks.RotationGrace.
func (ui *Web) rotateWebhook(c *gin.Context) {
	id, err := webhookID(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	secret, err := webhooks.Rotate(c.Request.Context(), ui.store, id, currentUser(c).Username)
	if err != nil {
		ui.fail(c, err)
		return
	}
	w, err := ui.store.GetWebhook(c.Request.Context(), id)
	if err != nil {
		ui.fail(c, err)
		return
	}
	s := &templates.WebhookSecret{EndpointID: w.ID, URL: w.URL, Secret: secret, Grace: graceWords(webhooks.RotationGrace)}
	if w.PreviousExpiresAt != nil {
		s.PreviousUntil = ui.when(*w.PreviousExpiresAt)
	}
	ui.renderWebhook(c, http.StatusOK, w, s, "")
}

// confirmDeleteWebhook asks before deleting the endpoint; it changes
// nothing.
func (ui *Web) confirmDeleteWebhook(c *gin.Context) {
	w, err := ui.findWebhook(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	v := templates.ConfirmWebhookView{Endpoint: ui.webhookRow(w)}
	ui.render(c, http.StatusOK, templates.DeleteWebhookPage(ui.page(c, "Delete webhook endpoint", "webhooks"), v))
}

// deleteWebhook deletes the endpoint and its deliveries, and goes back to
// the list. The flash names the endpoint by id: its URL may carry a
// partner's token, and flashes are stored in the session.
func (ui *Web) deleteWebhook(c *gin.Context) {
	id, err := webhookID(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	w, err := ui.store.DeleteWebhook(c.Request.Context(), id, currentUser(c).Username)
	if err != nil {
		ui.fail(c, err)
		return
	}
	flash(c, "success", "Webhook endpoint "+strconv.FormatInt(w.ID, 10)+" deleted, with its deliveries.")
	c.Redirect(http.StatusSeeOther, Prefix+"/webhooks")
}
