package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"petstore/models"
	"petstore/templates"
)

// A pet's page and its edit form, and the bulk status change of the pets
// list. The edit and the bulk change are optimistic: each form
// carries the version of every pet it shows, and the store writes a pet
// only over that version (models/petedits.go).

// petHistoryLimit is how many of a pet's audit events its page shows.
const petHistoryLimit = 20

// noSuchPet answers a pet id that names nothing.
var noSuchPet = refuse(models.CodeNotFound, "Pet not found", "There is no such pet.")

// findPet reads the pet the URL's :id names.
func (ui *Web) findPet(c *gin.Context) (models.Pet, error) {
	id, ok := models.ParseID(c.Param("id"))
	if !ok {
		return models.Pet{}, noSuchPet
	}
	p, err := ui.store.GetPet(c.Request.Context(), id)
	if models.ErrorCode(err) == models.CodeNotFound {
		return models.Pet{}, ui.petNotFound(c, id)
	}
	return p, err
}

// showPet shows a pet's page: its fields, the edit form and its history.
func (ui *Web) showPet(c *gin.Context) {
	pet, err := ui.findPet(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	form := templates.PetEditForm{Name: pet.Name, CategoryID: strconv.FormatInt(pet.CategoryID, 10),
		Status: string(pet.Status), Version: strconv.FormatInt(pet.Version, 10)}
	ui.renderPet(c, http.StatusOK, pet, form, templates.Flash{})
}

// editPet saves the edit form with the API's validation rules, over the
// version the form was loaded with: a pet changed meanwhile answers 409
// with both values and the new version, and nothing is written.
func (ui *Web) editPet(c *gin.Context) {
	id, ok := models.ParseID(c.Param("id"))
	if !ok {
		ui.fail(c, noSuchPet)
		return
	}
	form, np, version, err := readEditForm(c)
	if e, ok := invalidFields(err); ok && e.Field(models.FieldVersion) == "" {
		form.Errors = fieldErrors(e)
		ui.editRefused(c, form)
		return
	}
	if err != nil {
		ui.fail(c, err)
		return
	}
	saved, undoID, err := ui.store.EditPetUndoable(c.Request.Context(), id, version, np, currentUser(c).Username)
	if isArchivedErr(err) {
		ui.fail(c, archivedRefusal())
		return
	}
	if e := (*models.Error)(nil); errors.As(err, &e) && e.Code == models.CodeConflict {
		form.Conflict, form.Theirs, form.Version = e.Message, theirValues(saved, np), strconv.FormatInt(saved.Version, 10)
		ui.renderPet(c, http.StatusConflict, saved, form, templates.Flash{})
		return
	}
	if models.ErrorCode(err) == models.CodeNotFound {
		err = noSuchPet
	}
	if err != nil {
		ui.fail(c, err)
		return
	}
	flashUndo(c, "success", fmt.Sprintf("Saved the changes to %s.", saved.Name), undoID)
	c.Redirect(http.StatusSeeOther, petPath(saved.ID))
}

// editRefused shows the pet's page again with the form's errors and what
// was typed: 422, nothing written.
func (ui *Web) editRefused(c *gin.Context, form templates.PetEditForm) {
	pet, err := ui.findPet(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	ui.renderPet(c, http.StatusUnprocessableEntity, pet, form,
		templates.Flash{Kind: "error", Text: "The pet was not saved: correct the fields marked below."})
}

// readEditForm reads the edit form: what was typed, for showing it again,
// and the validated pet and version. The status is always sent by the
// form, so a missing one is refused rather than defaulted.
func readEditForm(c *gin.Context) (templates.PetEditForm, models.NewPet, int64, error) {
	status := c.PostForm("status")
	in := models.PetInput{Name: c.PostForm("name"), CategoryID: c.PostForm("categoryId"), Status: &status}
	form := templates.PetEditForm{Name: in.Name, CategoryID: in.CategoryID, Status: status, Version: c.PostForm("version")}
	version, err := models.ParseVersion(form.Version)
	if err != nil {
		return form, models.NewPet{}, 0, err
	}
	np, err := in.Validate()
	return form, np, version, err
}

// theirValues are the stored values of the fields where an edit refused
// for a conflict differs from them, by field name.
func theirValues(stored models.Pet, yours models.NewPet) map[string]string {
	m := map[string]string{}
	if stored.Name != yours.Name {
		m[models.FieldName] = stored.Name
	}
	if stored.CategoryID != yours.CategoryID {
		m[models.FieldCategoryID] = strconv.FormatInt(stored.CategoryID, 10)
	}
	if stored.Status != yours.Status {
		m[models.FieldStatus] = string(stored.Status)
	}
	return m
}

// renderPet renders a pet's page with the form given and its history.
func (ui *Web) renderPet(c *gin.Context, status int, pet models.Pet, form templates.PetEditForm, fl templates.Flash) {
	q := models.AuditQuery{TargetType: models.TargetPet, TargetID: pet.ID, Limit: petHistoryLimit}
	events, more, err := ui.store.ListAuditEvents(c.Request.Context(), q)
	if err != nil {
		ui.fail(c, err)
		return
	}
	p := ui.page(c, pet.Name, "pets")
	if fl.Kind != "" {
		p.Flash = fl
	}
	form.CSRFToken = p.CSRFToken
	v := templates.PetPageView{ID: pet.ID, Name: pet.Name, CategoryID: strconv.FormatInt(pet.CategoryID, 10),
		Status: string(pet.Status), Created: ui.when(pet.CreatedAt), Updated: ui.when(pet.UpdatedAt),
		Version: pet.Version, Form: form, ReadOnly: !ui.may(c, "POST "+Prefix+"/pets/:id"), Back: petsBack(c)}
	// The pet's own page names it without a link to itself.
	self := auditNames{names: map[string]map[int64]string{models.TargetPet: {pet.ID: pet.Name}}}
	for _, ev := range events {
		v.History = append(v.History, ui.auditRow(ev, self))
	}
	if more {
		v.HistoryURL = Prefix + "/audit?target=" + url.QueryEscape("pet:"+strconv.FormatInt(pet.ID, 10)) +
			"&before=" + strconv.FormatInt(events[len(events)-1].ID, 10)
	}
	ui.render(c, status, templates.PetPage(p, v))
}

// petPath is the address of a pet's page.
func petPath(id int64) string { return Prefix + "/pets/" + strconv.FormatInt(id, 10) }

// bulkFlashKind marks a flash that carries a bulk change's summary to the
// pets page after a redirect: the page shows it in its live region.
const bulkFlashKind = "bulk"

// changePetsStatus sets one status on the pets selected on a page of the
// list (or all of the page's pets), at most a page of them, each over the
// version the page showed.
func (ui *Web) changePetsStatus(c *gin.Context) {
	back := c.PostForm("back")
	if back == "" {
		back = c.Request.Referer()
	}
	back = backToPets(back)
	if c.PostForm("scope") == "all" {
		toEveryMatch(c, back)
		return
	}
	items := c.PostFormArray("pet")
	if c.PostForm("all") == "1" {
		items = c.PostFormArray("page")
	}
	if scope := c.PostForm("scope"); scope == "archive" || scope == "archive-all" {
		ui.toArchive(c, back, items, scope == "archive-all")
		return
	}
	ch, err := models.ParseStatusChange(items, c.PostForm("status"), ui.listingOf(back).Limit())
	if e, ok := invalidFields(err); ok {
		ui.bulkRefused(c, back, e.Message)
		return
	}
	if err != nil {
		ui.fail(c, err)
		return
	}
	res, err := ui.store.ChangePetsStatusUndoable(c.Request.Context(), ch, currentUser(c).Username)
	if err != nil {
		ui.fail(c, err)
		return
	}
	summary := bulkSummary(res, ch.Status)
	if !isHTMX(c) {
		flashUndo(c, bulkFlashKind, summary, res.UndoID)
		c.Redirect(http.StatusSeeOther, back)
		return
	}
	fl := templates.Flash{}
	if undo := ui.undoOffer(c, res.UndoID, back, summary); undo != nil {
		fl = templates.Flash{Kind: "success", Undo: undo}
	}
	ui.bulkAnswer(c, http.StatusOK, back, ch.Status, summary, fl)
}

// bulkRefused answers a bulk change refused whole (nothing selected, more
// than a page, a bad status): 422 with the list and the message.
func (ui *Web) bulkRefused(c *gin.Context, back, msg string) {
	fl := templates.Flash{Kind: "error", Text: msg}
	if isHTMX(c) {
		ui.bulkAnswer(c, http.StatusUnprocessableEntity, back, models.Status(c.PostForm("status")), "", fl)
		return
	}
	l := ui.listingOf(back)
	table, err := ui.petTable(c, l, 0)
	if err != nil {
		ui.fail(c, err)
		return
	}
	p := ui.page(c, "Pets", "pets")
	p.Flash = fl
	filter := templates.PetFilter{Status: string(l.Status), Query: l.Search}
	v := templates.PetsView{Filter: filter, Table: table, Form: templates.PetFormView{CSRFToken: p.CSRFToken}}
	ui.render(c, http.StatusUnprocessableEntity, templates.PetsPage(p, v))
}

// bulkAnswer answers an htmx bulk change: the page of the list the browser
// shows, read again with the status chosen kept, the summary in its live
// region, and the flash.
func (ui *Web) bulkAnswer(c *gin.Context, status int, back string, chosen models.Status, summary string, fl templates.Flash) {
	table, err := ui.petTable(c, ui.listingOf(back), 0)
	if err != nil {
		ui.fail(c, err)
		return
	}
	table.FocusBulk, table.BulkStatus = true, string(chosen)
	ui.render(c, status, templates.BulkResponse(table, summary, fl))
}

// listingOf reads the listing of a pets page address, its dates in the
// store's time zone; a bad one is the first page.
func (ui *Web) listingOf(pageURL string) models.PetListing {
	first := models.PetListing{Zone: ui.location}
	u, err := url.Parse(pageURL)
	if err != nil {
		return first
	}
	l, err := models.ParsePetListing(u.Query())
	if err != nil {
		return first
	}
	l.Zone = ui.location
	return l
}

// bulkSummary says how many pets a bulk change changed and which it
// skipped, and why.
func bulkSummary(res models.StatusChangeResult, status models.Status) string {
	var b strings.Builder
	switch n := len(res.Changed); n {
	case 0:
		b.WriteString("No pet was changed.")
	case 1:
		fmt.Fprintf(&b, "Changed 1 pet to %s.", status)
	default:
		fmt.Fprintf(&b, "Changed %d pets to %s.", n, status)
	}
	var skipped []string
	for _, p := range res.Already {
		skipped = append(skipped, fmt.Sprintf("%s (already %s)", p.Name, status))
	}
	for _, p := range res.Stale {
		skipped = append(skipped, fmt.Sprintf("%s (changed by someone else meanwhile: check it and try again)", p.Name))
	}
	for _, id := range res.Missing {
		skipped = append(skipped, fmt.Sprintf("pet %d (archived, or no longer exists)", id))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, " Skipped %d: %s.", len(skipped), strings.Join(skipped, "; "))
	}
	return b.String()
}

// A status change of every pet matching the list's filter: the bulk form's
// "every pet of this filter" button leads to a confirmation page stating
// the count (GET, so it works without JavaScript and changes nothing);
// its form starts the change in the background (models/bulk.go) and leads
// to the change's progress page.

// bulkJobsPath is the confirmation page's address; a job's page is below it.
const bulkJobsPath = Prefix + "/pets/bulk"

// bulkJobPath is the address of bulk job id's progress page.
func bulkJobPath(id int64) string { return bulkJobsPath + "/" + strconv.FormatInt(id, 10) }

// bulkConfirmURL is the confirmation page of setting every pet of the
// filter of the pets page back (its query) to status.
func bulkConfirmURL(back string, status string) string {
	v := url.Values{}
	if u, err := url.Parse(back); err == nil {
		v = u.Query()
	}
	v.Del(models.FieldAfter)
	v.Del(models.FieldBefore)
	v.Set("set", status)
	return bulkJobsPath + "?" + v.Encode()
}

// toEveryMatch sends the bulk form's "every pet of this filter" choice to
// its confirmation page.
func toEveryMatch(c *gin.Context, back string) {
	to := bulkConfirmURL(back, c.PostForm("status"))
	if isHTMX(c) {
		c.Header("HX-Redirect", to)
		c.Status(http.StatusOK)
		return
	}
	c.Redirect(http.StatusSeeOther, to)
}

// confirmBulk asks before setting every pet of a filter to a status: how
// many match now and which, in words. Nothing is changed.
func (ui *Web) confirmBulk(c *gin.Context) {
	params, err := models.ParseQueryString(c.Request.URL.RawQuery)
	if err != nil {
		ui.fail(c, err)
		return
	}
	status := params.Get("set")
	params.Del("set")
	ui.renderBulkConfirm(c, http.StatusOK, params, status, "")
}

// renderBulkConfirm shows the confirmation of setting every pet of the
// filter params to status, with refused saying why nothing started.
func (ui *Web) renderBulkConfirm(c *gin.Context, code int, params url.Values, status, refused string) {
	st, ok := models.ParseStatus(status)
	if !ok && status != bulkArchive {
		ui.fail(c, refuse(models.CodeInvalidRequest, "Choose a status", "Choose the status to set the pets to, then try again."))
		return
	}
	l, kept, err := models.BulkFilter(params, ui.location)
	if err != nil {
		ui.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	running, busy, err := ui.store.RunningBulkJob(ctx)
	if err != nil {
		ui.fail(c, err)
		return
	}
	n, err := ui.store.CountMatching(ctx, l)
	if err != nil {
		ui.fail(c, err)
		return
	}
	v := templates.BulkConfirmView{Count: n, Total: groupDigits(int64(n)), Filter: models.FilterWords(kept),
		FilterQuery: kept.Encode(), Status: string(st), BackURL: listURL(firstPage(l)), Error: refused, Archive: status == bulkArchive}
	if busy {
		v.Running = bulkJobPath(running.ID)
	}
	ui.render(c, code, templates.BulkConfirmPage(ui.page(c, "Change every matching pet", "pets"), v))
}

// startBulk starts the confirmed change and shows its progress page. A
// post without the confirmation changes nothing and shows the
// confirmation; while another bulk change runs, anywhere, it is refused.
func (ui *Web) startBulk(c *gin.Context) {
	params, err := models.ParseQueryString(c.PostForm("filter"))
	if err != nil {
		ui.fail(c, err)
		return
	}
	status := c.PostForm("set")
	if c.PostForm("confirm") != "yes" {
		ui.renderBulkConfirm(c, http.StatusOK, params, status, "")
		return
	}
	total, _ := strconv.Atoi(c.PostForm("total"))
	var job models.BulkJob
	if status == bulkArchive {
		job, err = ui.store.StartBulkArchive(c.Request.Context(), params, ui.location, total, currentUser(c).Username)
	} else {
		job, err = ui.store.StartBulkStatus(c.Request.Context(), params, ui.location, models.Status(status), total, currentUser(c).Username)
	}
	if errors.Is(err, models.ErrBulkRunning) {
		ui.renderBulkConfirm(c, http.StatusConflict, params, status, "Nothing was changed: another bulk change is running.")
		return
	}
	if err != nil {
		ui.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, bulkJobPath(job.ID))
}

// showBulkJob shows a bulk change's progress, or its summary once it has
// ended; htmx's polling gets only the progress region.
func (ui *Web) showBulkJob(c *gin.Context) {
	id, ok := models.ParseID(c.Param("id"))
	if !ok {
		ui.fail(c, noSuchBulkJob)
		return
	}
	job, err := ui.store.GetBulkJob(c.Request.Context(), id)
	if models.ErrorCode(err) == models.CodeNotFound {
		err = noSuchBulkJob
	}
	if err != nil {
		ui.fail(c, err)
		return
	}
	v := bulkJobView(job)
	fl, err := ui.bulkJobUndo(c, job)
	if err != nil {
		ui.fail(c, err)
		return
	}
	if isHTMX(c) {
		progress := templates.BulkJobProgress(v)
		if fl.Undo != nil {
			progress = templ.Join(progress, templates.FlashOOB(fl))
		}
		ui.render(c, http.StatusOK, progress)
		return
	}
	p := ui.page(c, "Bulk status change", "pets")
	if fl.Undo != nil && p.Flash.Kind == "" {
		p.Flash = fl
	}
	ui.render(c, http.StatusOK, templates.BulkJobPage(p, v))
}

// bulkJobUndo is the Undo offer of an ended bulk job of the member's,
// while it may be undone.
func (ui *Web) bulkJobUndo(c *gin.Context, job models.BulkJob) (templates.Flash, error) {
	user := currentUser(c).Username
	if job.State == models.BulkRunning || job.Actor != user {
		return templates.Flash{}, nil
	}
	id, err := ui.store.BulkJobUndoID(c.Request.Context(), job.ID)
	if err != nil || id == 0 {
		return templates.Flash{}, err
	}
	act, err := ui.store.GetUndoAction(c.Request.Context(), id, user)
	if err != nil || !act.Undoable(ui.now(), ui.undoWindow) {
		return templates.Flash{}, nil
	}
	return templates.Flash{Kind: "success", Undo: ui.undoOffer(c, id, bulkJobPath(job.ID), act.Summary)}, nil
}

// noSuchBulkJob answers a bulk change id that names nothing.
var noSuchBulkJob = refuse(models.CodeNotFound, "Bulk change not found", "There is no such bulk change.")

// bulkJobView is a job's page: its progress in words, and once ended what
// it did.
func bulkJobView(job models.BulkJob) templates.BulkJobView {
	params, _ := url.ParseQuery(job.Filter)
	v := templates.BulkJobView{ID: job.ID, Status: string(job.TargetStatus), Filter: models.FilterWords(params), Actor: job.Actor,
		Total: job.Total, Processed: job.Processed, Done: job.State != models.BulkRunning, Failed: job.State == models.BulkFailed,
		Error: job.Error, ProgressURL: bulkJobPath(job.ID), BackURL: Prefix + "/pets", Archive: job.Kind == models.BulkKindArchive}
	if job.Filter != "" {
		v.BackURL = Prefix + "/pets?" + job.Filter
	}
	v.ProgressText = fmt.Sprintf("%s of %s pets done", groupDigits(int64(min(job.Processed, job.Total))), groupDigits(int64(job.Total)))
	if job.State == models.BulkFailed {
		v.Error = "The change stopped part way: " + job.Error + " The pets not reached keep their status; start the change again to set them."
		if v.Archive {
			v.Error = "The archiving stopped part way: " + job.Error + " The pets not reached are still in the list; start it again to archive them."
		}
	}
	if !v.Done {
		return v
	}
	var b strings.Builder
	switch {
	case v.Archive && job.Changed == 1:
		b.WriteString("Archived 1 pet.")
	case v.Archive:
		fmt.Fprintf(&b, "Archived %s pets.", groupDigits(int64(job.Changed)))
	case job.Changed == 1:
		fmt.Fprintf(&b, "Changed 1 pet to %s.", job.TargetStatus)
	default:
		fmt.Fprintf(&b, "Changed %s pets to %s.", groupDigits(int64(job.Changed)), job.TargetStatus)
	}
	if job.Already > 0 {
		fmt.Fprintf(&b, " %s already %s.", groupDigits(int64(job.Already)), job.TargetStatus)
	}
	if job.Stale > 0 {
		fmt.Fprintf(&b, " %s changed by someone else meanwhile and left as they made them.", groupDigits(int64(job.Stale)))
	}
	if left := job.Total - job.Processed; left > 0 && job.State == models.BulkDone {
		fmt.Fprintf(&b, " %s no longer matched the filter when their turn came and were not changed.", groupDigits(int64(left)))
	}
	v.Summary = b.String()
	return v
}
