package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"petstore/models"
	"petstore/templates"
)

// Undo of the member's own console changes (models/undo.go): the answer to
// each change offers "Undo" for the undo window, and the member's recent
// changes page lists them until it ends. An undo is refused to anyone but
// the member who made the change, admins included: it is the member's own
// "oops"; an admin puts right someone else's change with an ordinary edit
// or bulk change, audited under their own name.

func (ui *Web) registerUndo(r gin.IRouter) {
	r.GET("/undo", ui.recentActions)
	r.POST("/undo/:id", ui.undo)
	r.GET("/undo/:id", ui.showUndo)
}

// undoPath is the address that undoes action id (POST), or shows its
// undo's progress (GET).
func undoPath(id int64) string { return Prefix + "/undo/" + strconv.FormatInt(id, 10) }

// noSuchAction answers an action id that names none of the member's.
var noSuchAction = refuse(models.CodeNotFound, "Change not found", "There is no such change of yours to undo.")

// undoOffer is the Undo of action id (none for 0, or for a member who may
// not undo), back being the page to come back to and what the change's
// words for screen readers.
func (ui *Web) undoOffer(c *gin.Context, id int64, back, what string) *templates.UndoOffer {
	if id == 0 || !ui.may(c, http.MethodPost+" "+Prefix+"/undo/:id") {
		return nil
	}
	return &templates.UndoOffer{URL: undoPath(id), CSRFToken: ui.csrfToken(c), Back: safeNext(back), What: what}
}

// flashUndo stores a message for the next page that offers to undo action
// id (flash's kind carries the id: "success;undo=12").
func flashUndo(c *gin.Context, kind, text string, id int64) {
	if id != 0 {
		kind += ";undo=" + strconv.FormatInt(id, 10)
	}
	flash(c, kind, text)
}

// flashUndoID splits a flash's kind as flashUndo wrote it.
func flashUndoID(kind string) (string, int64) {
	k, undo, ok := strings.Cut(kind, ";undo=")
	if !ok {
		return kind, 0
	}
	id, _ := models.ParseID(undo)
	return k, id
}

// undo undoes one of the member's changes and answers what it did. An
// undo of many pets runs in the background: the answer is its progress
// page. Without JavaScript the answer is the page the Undo was offered on,
// with the result; with htmx, on the pets list, the list again in place.
func (ui *Web) undo(c *gin.Context) {
	id, ok := models.ParseID(c.Param("id"))
	if !ok {
		ui.fail(c, noSuchAction)
		return
	}
	back := safeNext(c.PostForm("back"))
	act, err := ui.store.Undo(c.Request.Context(), id, currentUser(c).Username, ui.undoWindow)
	if e := (*models.Error)(nil); errors.As(err, &e) && isHTMX(c) && (e.Code == models.CodeConflict || e.Code == models.CodeNotFound) {
		ui.render(c, http.StatusOK, templates.FlashMessage(templates.Flash{Kind: "error", Text: e.Message}))
		return
	}
	if models.ErrorCode(err) == models.CodeNotFound {
		err = noSuchAction
	}
	if err != nil {
		ui.fail(c, err)
		return
	}
	if act.State == models.UndoRunning {
		ui.redirect(c, undoPath(act.ID))
		return
	}
	msg := undoResult(act, ui.undoneKind(c, act))
	if isHTMX(c) && strings.HasPrefix(back, Prefix+"/pets") && !strings.HasPrefix(back, Prefix+"/pets/") {
		table, err := ui.petTable(c, ui.listingOf(back), 0)
		if err != nil {
			ui.fail(c, err)
			return
		}
		fl := templates.Flash{Kind: "success", Text: msg, Undo: ui.undoOffer(c, act.ID, back, msg)}
		c.Header("HX-Retarget", "#pets-table")
		c.Header("HX-Reswap", "outerHTML")
		ui.render(c, http.StatusOK, templates.PetTableResponse(table, fl))
		return
	}
	flashUndo(c, "success", msg, act.ID)
	ui.redirect(c, back)
}

// redirect sends the browser to another page after a POST: a 303, or for
// htmx a full page load there.
func (ui *Web) redirect(c *gin.Context, to string) {
	if isHTMX(c) {
		c.Header("HX-Redirect", to)
		c.Status(http.StatusOK)
		return
	}
	c.Redirect(http.StatusSeeOther, to)
}

// undoneKind is the kind of the action undo undid ("" when it is no
// longer kept), which names what the undo did.
func (ui *Web) undoneKind(c *gin.Context, undo models.UndoAction) models.UndoKind {
	if undo.UndoesID == nil {
		return ""
	}
	orig, err := ui.store.GetUndoAction(c.Request.Context(), *undo.UndoesID, undo.Actor)
	if err != nil {
		return ""
	}
	return orig.Kind
}

// undoMoves words the undo of each kind of action that moves pets between
// the list and the archive: its verb and what its pets were.
var undoMoves = map[models.UndoKind][2]string{
	models.UndoArchive: {"Restored", "archived"},
	models.UndoRestore: {"Archived", "restored"},
	models.UndoImport:  {"Archived", "imported"},
}

// undoResult says what an undo of an action of kind orig did: "Reverted
// 18 of 20; 2 changed since by ana (Rex, Tom).", or for an import
// "Archived 98 of 100 imported pets; 2 changed since by ana (...)."
func undoResult(a models.UndoAction, orig models.UndoKind) string {
	var b strings.Builder
	if m, ok := undoMoves[orig]; ok {
		noun := m[1] + " pets"
		if a.Processed == 1 {
			noun = m[1] + " pet"
		}
		fmt.Fprintf(&b, "%s %s of %s %s", m[0], groupDigits(int64(a.Reverted)), groupDigits(int64(a.Processed)), noun)
	} else {
		fmt.Fprintf(&b, "Reverted %s of %s", groupDigits(int64(a.Reverted)), groupDigits(int64(a.Processed)))
	}
	skipped := a.SkippedList()
	gone := 0
	for _, p := range skipped {
		if p.Gone {
			gone++
		}
	}
	if changed := a.Skipped - gone; changed > 0 {
		fmt.Fprintf(&b, "; %s changed since", groupDigits(int64(changed)))
		if by := a.SkippedActors(); len(by) > 0 {
			b.WriteString(" by " + andList(by))
		}
	}
	if gone > 0 {
		fmt.Fprintf(&b, "; %d no longer %s", gone, map[bool]string{true: "exists", false: "exist"}[gone == 1])
	}
	if len(skipped) > 0 {
		names := make([]string, len(skipped))
		for i, p := range skipped {
			names[i] = p.Name
		}
		list := strings.Join(names, ", ")
		if more := a.Skipped - len(skipped); more > 0 {
			list += fmt.Sprintf(" and %s more", groupDigits(int64(more)))
		}
		b.WriteString(" (" + list + ")")
	}
	b.WriteString(".")
	return b.String()
}

// andList joins words as a sentence does: "ana", "ana and bob", "ana, bob
// and eve".
func andList(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// skippedLines lists each skipped pet with why it was left.
func skippedLines(a models.UndoAction) []string {
	var l []string
	for _, p := range a.SkippedList() {
		switch {
		case p.Gone:
			l = append(l, fmt.Sprintf("%s (#%d) no longer exists.", p.Name, p.ID))
		case p.By != "":
			l = append(l, fmt.Sprintf("%s (#%d) was changed since by %s: their change is kept.", p.Name, p.ID, p.By))
		default:
			l = append(l, fmt.Sprintf("%s (#%d) was changed since: that change is kept.", p.Name, p.ID))
		}
	}
	return l
}

// showUndo shows an undo's progress, or once it has ended what it did;
// htmx's polling gets only the progress region.
func (ui *Web) showUndo(c *gin.Context) {
	id, ok := models.ParseID(c.Param("id"))
	if !ok {
		ui.fail(c, noSuchAction)
		return
	}
	act, err := ui.store.GetUndoAction(c.Request.Context(), id, currentUser(c).Username)
	if models.ErrorCode(err) == models.CodeNotFound {
		err = noSuchAction
	}
	if err != nil {
		ui.fail(c, err)
		return
	}
	v := templates.UndoJobView{Summary: act.Summary, Total: max(act.Total, act.Processed), Processed: act.Processed,
		Done: act.State != models.UndoRunning, ProgressURL: undoPath(act.ID)}
	if act.State == models.UndoRunning {
		v.Total = act.Total
	}
	if v.Done {
		v.Result, v.Skipped = undoResult(act, ui.undoneKind(c, act)), skippedLines(act)
		if act.State == models.UndoFailed {
			v.Error = "The undo stopped part way: " + act.Error + " The pets not reached keep the change; undo the undo, or change them yourself."
		}
		if act.Undoable(ui.now(), ui.undoWindow) {
			v.Undo = ui.undoOffer(c, act.ID, undoPath(act.ID), act.Summary)
		}
	}
	if isHTMX(c) {
		ui.render(c, http.StatusOK, templates.UndoProgress(v))
		return
	}
	ui.render(c, http.StatusOK, templates.UndoJobPage(ui.page(c, "Undo", ""), v))
}

// recentActions lists the member's changes of the undo window, each with
// its Undo while it may be undone.
func (ui *Web) recentActions(c *gin.Context) {
	user := currentUser(c).Username
	actions, err := ui.store.RecentUndoActions(c.Request.Context(), user, ui.undoWindow)
	if err != nil {
		ui.fail(c, err)
		return
	}
	p := ui.page(c, "Your recent changes", "")
	v := templates.RecentActionsView{CSRFToken: p.CSRFToken, Window: windowWords(ui.undoWindow)}
	now := ui.now()
	for _, a := range actions {
		r := templates.RecentAction{ID: a.ID, When: ui.when(a.CreatedAt).Text, Summary: a.Summary}
		switch {
		case a.State == models.UndoRunning:
			r.State = fmt.Sprintf("Undoing: %s of %s done", groupDigits(int64(a.Processed)), groupDigits(int64(a.Total)))
		case a.CompletedAt == nil:
			r.State = "Still running"
		case a.UndoneAt != nil:
			r.State = "Undone at " + ui.when(*a.UndoneAt).Text
		case a.Undoable(now, ui.undoWindow):
			r.State = "Can be undone until " + ui.when(a.CompletedAt.Add(ui.undoWindow)).Text
			r.UndoURL = undoPath(a.ID)
		default:
			r.State = "Nothing to undo"
		}
		if a.UndoesID != nil { // an undo: its page says what it did
			r.ProgressURL = undoPath(a.ID)
		}
		v.Actions = append(v.Actions, r)
	}
	ui.render(c, http.StatusOK, templates.RecentActionsPage(p, v))
}

// windowWords says a window in words: "10 minutes".
func windowWords(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return countOf(int(d/time.Hour), "hour")
	case d >= time.Minute && d%time.Minute == 0:
		return countOf(int(d/time.Minute), "minute")
	}
	return d.String()
}

// countOf writes n with its noun, plural unless n is 1.
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
