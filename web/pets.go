package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"petstore/models"
	"petstore/templates"
)

func (ui *Web) registerPets(r gin.IRouter) {
	r.GET("/pets", ui.listPets)
	r.POST("/pets", ui.createPet)
	r.POST("/pets/:id/status", ui.updatePetStatus)
	// A pet's page and its edit (petedits.go). The edit and the bulk status
	// change are editor or admin routes.
	r.GET("/pets/:id", ui.showPet)
	r.POST("/pets/:id", ui.editPet)                  // editor or admin
	r.POST("/pets/bulk-status", ui.changePetsStatus) // editor or admin
	r.GET("/pets/bulk", ui.confirmBulk)              // every pet of a filter: editor or admin
	r.POST("/pets/bulk", ui.startBulk)
	r.GET("/pets/bulk/:id", ui.showBulkJob)
}

// petsPageSize is how many pets a console page shows.
const petsPageSize = 20

// petsURL returns the console URL of the listing's filter, at a page
// boundary when key ("after" or "before") is not "".
func petsURL(l models.PetListing, key string, id int64) string {
	v := url.Values{}
	if l.Status != "" {
		v.Set(models.FieldStatus, string(l.Status))
	}
	if l.Search != "" {
		v.Set(models.FieldSearch, l.Search)
	}
	if key != "" {
		v.Set(key, strconv.FormatInt(id, 10))
	}
	if len(v) == 0 {
		return Prefix + "/pets"
	}
	return Prefix + "/pets?" + v.Encode()
}

// petTable reads one page of the listing, newest first, with the links to
// its neighbours and the status counts; changed is a pet to highlight.
func (ui *Web) petTable(c *gin.Context, l models.PetListing, changed int64) (templates.PetTableView, error) {
	page, err := ui.store.ListPetsNewestFirst(c.Request.Context(), l, petsPageSize)
	if err != nil {
		return templates.PetTableView{}, err
	}
	counts, err := ui.statusCounts(c, l)
	if err != nil {
		return templates.PetTableView{}, err
	}
	t := templates.PetTableView{
		Counts:    counts,
		Filtered:  l.Status != "" || l.Search != "",
		CSRFToken: ui.csrfToken(c),
		Rows:      make([]templates.PetRow, 0, len(page.Pets)),
		URL:       listingURL(l),
		ExportURL: exportURL(l),
		ReadOnly:  !ui.may(c, "POST "+Prefix+"/pets/:id/status"),
	}
	for _, p := range page.Pets {
		r := ui.petRow(p)
		r.Changed, r.ReadOnly = p.ID == changed, t.ReadOnly
		t.Rows = append(t.Rows, r)
	}
	t.NewerURL, t.OlderURL, t.Note = pager(l, page)
	return t, nil
}

// statusCounts reads how many pets each status has (models keeps the
// counts with the writes: a read of a few rows), each with the link to its
// list; the status the list is filtered by is marked current, and "All"
// only while nothing narrows the list (not during a search).
func (ui *Web) statusCounts(c *gin.Context, l models.PetListing) ([]templates.StatusCount, error) {
	counts, err := ui.store.PetStatusCounts(c.Request.Context())
	if err != nil {
		return nil, err
	}
	count := func(label string, st models.Status, n int64) templates.StatusCount {
		noun := "pets"
		if n == 1 {
			noun = "pet"
		}
		return templates.StatusCount{Label: label, Status: string(st), Count: groupDigits(n), Noun: noun,
			URL: petsURL(models.PetListing{Status: st}, "", 0), Current: st == l.Status && (st != "" || l.Search == "")}
	}
	out := []templates.StatusCount{count("All", "", counts.Total())}
	for _, st := range models.Statuses {
		out = append(out, count(strings.ToUpper(string(st[:1]))+string(st[1:]), st, counts[st]))
	}
	return out, nil
}

// groupDigits writes n with its digits grouped by thousands: 1,000,016.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return sign + s
}

// pager returns the links to a page's neighbours. An empty page far out
// links back to the newest. A name search that stopped on its budget
// before filling the page goes on from where it stopped, and says so.
func pager(l models.PetListing, page models.PetListingPage) (newer, older, note string) {
	if pets := page.Pets; len(pets) > 0 {
		if page.Newer {
			newer = petsURL(l, models.FieldAfter, pets[0].ID)
		}
		if page.Older {
			older = petsURL(l, models.FieldBefore, pets[len(pets)-1].ID)
		}
	} else if l.After > 0 || l.Before > 0 {
		newer = petsURL(l, "", 0)
	}
	switch {
	case page.Resume != 0 && l.After > 0:
		newer = petsURL(l, models.FieldAfter, page.Resume)
		note = "Only part of the pets were searched for this page, to keep it quick: newer pets may match too. “← Newer” searches on."
	case page.Resume != 0:
		older = petsURL(l, models.FieldBefore, page.Resume)
		note = "Only part of the pets were searched for this page, to keep it quick: older pets may match too. “Older →” searches on."
	}
	return newer, older, note
}

// listingURL is the console URL of a listing's page: its filter and where
// the page starts.
func listingURL(l models.PetListing) string {
	switch {
	case l.After > 0:
		return petsURL(l, models.FieldAfter, l.After)
	case l.Before > 0:
		return petsURL(l, models.FieldBefore, l.Before)
	}
	return petsURL(l, "", 0)
}

func (ui *Web) petRow(p models.Pet) templates.PetRow {
	return templates.PetRow{ID: p.ID, Name: p.Name, CategoryID: strconv.FormatInt(p.CategoryID, 10),
		Status: string(p.Status), Created: ui.when(p.CreatedAt), Version: p.Version}
}

// petListing reads the pets page's parameters (status, q, after, before)
// from the request's query, strictly (ParseQueryString).
func petListing(c *gin.Context) (models.PetListing, error) {
	params, err := models.ParseQueryString(c.Request.URL.RawQuery)
	if err != nil {
		return models.PetListing{}, err
	}
	return models.ParsePetListing(params)
}

// listPets shows the pets page, or for htmx only the table region.
func (ui *Web) listPets(c *gin.Context) {
	l, err := petListing(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	table, err := ui.petTable(c, l, 0)
	if err != nil {
		ui.fail(c, err)
		return
	}
	if isHTMX(c) && c.GetHeader("HX-Target") == "pets-table" {
		ui.render(c, http.StatusOK, templates.PetTable(table))
		return
	}
	p := ui.page(c, "Pets", "pets")
	filter := templates.PetFilter{Status: string(l.Status), Query: l.Search}
	v := templates.PetsView{Filter: filter, Table: table, Form: templates.PetFormView{CSRFToken: p.CSRFToken},
		ReadOnly: !ui.may(c, "POST "+Prefix+"/pets")}
	if p.Flash.Kind == bulkFlashKind { // a bulk change's summary, after its redirect
		v.Summary, p.Flash = p.Flash.Text, templates.Flash{}
	}
	ui.render(c, http.StatusOK, templates.PetsPage(p, v))
}

// createPet adds a pet with the API's validation rules.
func (ui *Web) createPet(c *gin.Context) {
	status := c.PostForm("status")
	in := models.PetInput{Name: c.PostForm("name"), CategoryID: c.PostForm("categoryId")}
	if _, ok := c.GetPostForm("status"); ok {
		in.Status = &status
	}
	form := templates.PetFormView{Name: in.Name, CategoryID: in.CategoryID, Status: status, CSRFToken: ui.csrfToken(c)}
	np, err := in.Validate()
	if e, ok := invalidFields(err); ok {
		form.Errors = fieldErrors(e)
		ui.petFormFailed(c, form)
		return
	}
	if err != nil {
		ui.fail(c, err)
		return
	}
	pet, err := ui.store.CreatePet(c.Request.Context(), np, currentUser(c).Username)
	if err != nil {
		ui.fail(c, err)
		return
	}
	msg := fmt.Sprintf("Added %s (id %d).", pet.Name, pet.ID)
	if !isHTMX(c) {
		flash(c, "success", msg)
		c.Redirect(http.StatusSeeOther, Prefix+"/pets")
		return
	}
	table, err := ui.petTable(c, shownListing(c), pet.ID)
	if err != nil {
		ui.fail(c, err)
		return
	}
	ui.render(c, http.StatusOK, templates.PetFormResponse(templates.PetFormView{CSRFToken: form.CSRFToken}, &table,
		templates.Flash{Kind: "success", Text: msg}))
}

// shownListing is the filter of the pets page htmx says the browser shows
// (its filter comes from the browser's URL), at its newest page, where a
// new pet stands.
func shownListing(c *gin.Context) models.PetListing {
	cur, err := url.Parse(c.GetHeader("HX-Current-URL"))
	if err != nil {
		return models.PetListing{}
	}
	l, err := models.ParsePetListing(cur.Query())
	if err != nil {
		return models.PetListing{}
	}
	l.After, l.Before = 0, 0
	return l
}

// petFormFailed shows the add form again with its errors and what was typed.
func (ui *Web) petFormFailed(c *gin.Context, form templates.PetFormView) {
	if isHTMX(c) {
		ui.render(c, http.StatusUnprocessableEntity, templates.PetFormResponse(form, nil,
			templates.Flash{Kind: "error", Text: "The pet was not added: correct the fields marked below."}))
		return
	}
	table, err := ui.petTable(c, models.PetListing{}, 0)
	if err != nil {
		ui.fail(c, err)
		return
	}
	p := ui.page(c, "Pets", "pets")
	p.Flash = templates.Flash{Kind: "error", Text: "The pet was not added: correct the fields marked below."}
	ui.render(c, http.StatusUnprocessableEntity, templates.PetsPage(p, templates.PetsView{Table: table, Form: form}))
}

// fieldErrors turns validation errors into messages by field name.
func fieldErrors(e *models.Error) map[string]string {
	m := map[string]string{}
	for _, f := range e.Fields {
		m[f.Field] = f.Message
	}
	return m
}

// updatePetStatus changes a pet's status from its row.
func (ui *Web) updatePetStatus(c *gin.Context) {
	id, ok := models.ParseID(c.Param("id"))
	if !ok {
		ui.fail(c, &models.Error{Code: models.CodeNotFound, Message: "There is no such pet."})
		return
	}
	st, ok := models.ParseStatus(c.PostForm("status"))
	if !ok {
		ui.fail(c, &models.Error{Code: models.CodeInvalidRequest, Message: models.StatusMessage})
		return
	}
	pet, err := ui.store.UpdatePetStatus(c.Request.Context(), id, st, currentUser(c).Username)
	if err != nil {
		ui.fail(c, err)
		return
	}
	msg := fmt.Sprintf("%s is now %s.", pet.Name, pet.Status)
	if isHTMX(c) {
		counts, err := ui.statusCounts(c, shownListing(c))
		if err != nil {
			ui.fail(c, err)
			return
		}
		row := ui.petRow(pet)
		row.Changed = true
		ui.render(c, http.StatusOK, templates.PetRowResponse(row, ui.csrfToken(c), counts, templates.Flash{Kind: "success", Text: msg}))
		return
	}
	flash(c, "success", msg)
	c.Redirect(http.StatusSeeOther, backToPets(c.Request.Referer()))
}

// backToPets returns the pets page the browser came from (keeping its
// filter and page), or the first page.
func backToPets(referer string) string {
	if u, err := url.Parse(referer); err == nil && u.Path == Prefix+"/pets" {
		if u.RawQuery == "" {
			return u.Path
		}
		return u.Path + "?" + u.RawQuery
	}
	return Prefix + "/pets"
}
