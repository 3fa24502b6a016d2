package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

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
		return models.Pet{}, noSuchPet
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
	saved, err := ui.store.EditPet(c.Request.Context(), id, version, np, currentUser(c).Username)
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
	flash(c, "success", fmt.Sprintf("Saved the changes to %s.", saved.Name))
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
		Status: string(pet.Status), Created: formatTime(pet.CreatedAt), Updated: formatTime(pet.UpdatedAt),
		Version: pet.Version, Form: form, ReadOnly: !ui.may(c, "POST "+Prefix+"/pets/:id"), Back: petsBack(c)}
	for _, ev := range events {
		v.History = append(v.History, auditRow(ev))
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
	items := c.PostFormArray("pet")
	if c.PostForm("all") == "1" {
		items = c.PostFormArray("page")
	}
	ch, err := models.ParseStatusChange(items, c.PostForm("status"), listingOf(back).Limit())
	if e, ok := invalidFields(err); ok {
		ui.bulkRefused(c, back, e.Message)
		return
	}
	if err != nil {
		ui.fail(c, err)
		return
	}
	res, err := ui.store.ChangePetsStatus(c.Request.Context(), ch, currentUser(c).Username)
	if err != nil {
		ui.fail(c, err)
		return
	}
	summary := bulkSummary(res, ch.Status)
	if !isHTMX(c) {
		flash(c, bulkFlashKind, summary)
		c.Redirect(http.StatusSeeOther, back)
		return
	}
	ui.bulkAnswer(c, http.StatusOK, back, ch.Status, summary, templates.Flash{})
}

// bulkRefused answers a bulk change refused whole (nothing selected, more
// than a page, a bad status): 422 with the list and the message.
func (ui *Web) bulkRefused(c *gin.Context, back, msg string) {
	fl := templates.Flash{Kind: "error", Text: msg}
	if isHTMX(c) {
		ui.bulkAnswer(c, http.StatusUnprocessableEntity, back, models.Status(c.PostForm("status")), "", fl)
		return
	}
	l := listingOf(back)
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
	table, err := ui.petTable(c, listingOf(back), 0)
	if err != nil {
		ui.fail(c, err)
		return
	}
	table.FocusBulk, table.BulkStatus = true, string(chosen)
	ui.render(c, status, templates.BulkResponse(table, summary, fl))
}

// listingOf reads the listing of a pets page address; a bad one is the
// first page.
func listingOf(pageURL string) models.PetListing {
	u, err := url.Parse(pageURL)
	if err != nil {
		return models.PetListing{}
	}
	l, err := models.ParsePetListing(u.Query())
	if err != nil {
		return models.PetListing{}
	}
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
		skipped = append(skipped, fmt.Sprintf("pet %d (no longer exists)", id))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, " Skipped %d: %s.", len(skipped), strings.Join(skipped, "; "))
	}
	return b.String()
}
