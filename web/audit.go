package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"petstore/models"
	"petstore/templates"
)

func (ui *Web) registerAudit(r gin.IRouter) {
	r.GET("/audit", ui.listAudit)
}

// listAudit shows one page of the audit trail with its filters.
func (ui *Web) listAudit(c *gin.Context) {
	action, actor, target := c.Query("action"), c.Query("actor"), c.Query("target")
	if models.ActorKindOf(actor) == models.ActorKindStaff {
		// Usernames are stored in lower case; the trail shows them
		// capitalised at the start of a sentence.
		actor = strings.ToLower(actor)
	}
	v := templates.AuditView{Action: action, Actor: actor, Target: target, Actions: auditActionChoices(),
		Filtered: action != "" || actor != "" || target != "", Zone: ui.location.String()}
	q, err := models.ParseAuditQuery(action, actor, target, c.Query("before"))
	if e := (*models.Error)(nil); errors.As(err, &e) {
		v.Error = e.Message
		ui.render(c, http.StatusBadRequest, templates.AuditPage(ui.page(c, "Audit trail", "audit"), v))
		return
	}
	if err != nil {
		ui.fail(c, err)
		return
	}
	events, more, err := ui.store.ListAuditEvents(c.Request.Context(), q)
	if err != nil {
		ui.fail(c, err)
		return
	}
	if v.Rows, err = ui.auditRows(c.Request.Context(), events, auditNames{petLinks: true,
		userLinks: ui.may(c, "GET "+Prefix+"/users/:id"), hookLinks: ui.may(c, "GET "+Prefix+"/webhooks/:id")}); err != nil {
		ui.fail(c, err)
		return
	}
	if more {
		v.OlderURL = auditURL(v, events[len(events)-1].ID)
	}
	if q.Before > 0 {
		v.NewestURL = auditURL(v, 0)
	}
	ui.render(c, http.StatusOK, templates.AuditPage(ui.page(c, "Audit trail", "audit"), v))
}

// auditActionChoices offers every action by its plain name, the code as
// the value the filter sends.
func auditActionChoices() []templates.Choice {
	out := make([]templates.Choice, 0, len(models.AuditActions))
	for _, a := range models.AuditActions {
		out = append(out, templates.Choice{Value: a, Label: auditActionName(a)})
	}
	return out
}

// auditURL returns the URL of the audit trail with the view's filters,
// from the newest event or, when before is not 0, from just before it.
func auditURL(v templates.AuditView, before int64) string {
	p := url.Values{}
	for k, val := range map[string]string{"action": v.Action, "actor": v.Actor, "target": v.Target} {
		if val != "" {
			p.Set(k, val)
		}
	}
	if before > 0 {
		p.Set("before", strconv.FormatInt(before, 10))
	}
	if len(p) == 0 {
		return Prefix + "/audit"
	}
	return Prefix + "/audit?" + p.Encode()
}

// auditRows turns events into sentences, naming what they acted on by its
// name now (read for the whole page, one query per kind of thing), linked
// as n says.
func (ui *Web) auditRows(ctx context.Context, events []models.AuditEvent, n auditNames) ([]templates.AuditRow, error) {
	names, err := ui.store.AuditNames(ctx, events)
	if err != nil {
		return nil, err
	}
	n.names = names
	rows := make([]templates.AuditRow, 0, len(events))
	for _, ev := range events {
		rows = append(rows, ui.auditRow(ev, n))
	}
	return rows, nil
}

// auditRow is one event as the trail shows it. When, Actor and Detail
// stay as recorded for pages that list raw events (a pet's history).
func (ui *Web) auditRow(ev models.AuditEvent, names auditNames) templates.AuditRow {
	at := ui.when(ev.At)
	s := describeEvent(ev, names, ui.when)
	r := templates.AuditRow{At: at, When: at.Text, Actor: actorName(ev), Action: ev.Action, Detail: ev.Detail,
		Sentence: s.parts, Note: s.note}
	if ev.Occurrences > 1 {
		r.Detail += " (" + strconv.Itoa(ev.Occurrences) + " times this minute)"
		r.Note = joinNote(r.Note, strconv.Itoa(ev.Occurrences)+" times this minute")
	}
	if ev.TargetID > 0 {
		target := ev.TargetType + ":" + strconv.FormatInt(ev.TargetID, 10)
		r.Target = ev.TargetType + " " + strconv.FormatInt(ev.TargetID, 10)
		r.TargetURL = Prefix + "/audit?target=" + url.QueryEscape(target)
	} else {
		r.Target = ev.TargetType
	}
	return r
}

// actorName names the actor of ev with its kind where it is not a staff
// member, so that the command line and the first start read as what they
// are.
func actorName(ev models.AuditEvent) string {
	switch ev.ActorKind {
	case models.ActorKindCLI:
		return ev.Actor + " (command line)"
	case models.ActorKindSystem:
		if ev.Actor == models.ActorFirstStart {
			return ev.Actor + " (first start)"
		}
		return ev.Actor + " (automatic)"
	}
	return ev.Actor
}
