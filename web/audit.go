package web

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"

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
	v := templates.AuditView{Action: action, Actor: actor, Target: target, Actions: models.AuditActions,
		Filtered: action != "" || actor != "" || target != ""}
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
	for _, ev := range events {
		v.Rows = append(v.Rows, auditRow(ev))
	}
	if more {
		v.OlderURL = auditURL(v, events[len(events)-1].ID)
	}
	if q.Before > 0 {
		v.NewestURL = auditURL(v, 0)
	}
	ui.render(c, http.StatusOK, templates.AuditPage(ui.page(c, "Audit trail", "audit"), v))
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

func auditRow(ev models.AuditEvent) templates.AuditRow {
	r := templates.AuditRow{When: ev.At.UTC().Format("2006-01-02 15:04:05") + " UTC", Actor: actorName(ev), Action: ev.Action, Detail: ev.Detail}
	if ev.Occurrences > 1 {
		r.Detail += " (" + strconv.Itoa(ev.Occurrences) + " times this minute)"
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
