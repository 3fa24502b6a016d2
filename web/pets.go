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

// listURL returns the console URL of a listing: its filter, order, page
// size and position.
func listURL(l models.PetListing) string {
	v := l.Query()
	if len(v) == 0 {
		return Prefix + "/pets"
	}
	return Prefix + "/pets?" + v.Encode()
}

// firstPage is the listing at its first page.
func firstPage(l models.PetListing) models.PetListing {
	l.After, l.Before, l.Key, l.Last = 0, 0, "", false
	return l
}

// petTable reads one page of the listing, in its order, with the links to
// its neighbours, its column headers and the status counts; changed is a
// pet to highlight.
func (ui *Web) petTable(c *gin.Context, l models.PetListing, changed int64) (templates.PetTableView, error) {
	if l.Zone == nil {
		l.Zone = ui.location
	}
	page, err := ui.store.ListPetListing(c.Request.Context(), l, l.Limit())
	if err != nil {
		return templates.PetTableView{}, err
	}
	counts, err := ui.statusCounts(c, l)
	if err != nil {
		return templates.PetTableView{}, err
	}
	self := listURL(l)
	t := templates.PetTableView{
		Counts:    counts,
		Filtered:  l.Filtered(),
		CSRFToken: ui.csrfToken(c),
		Rows:      make([]templates.PetRow, 0, len(page.Pets)),
		URL:       self,
		ExportURL: exportURL(l),
		ReadOnly:  !ui.may(c, "POST "+Prefix+"/pets/:id/status"),
		Columns:   sortColumns(l),
		SortNote:  sortNote(l),
		CountNote: l.Search != "" || l.Category != 0 || l.From != "" || l.To != "",
		Sort:      l.Query().Get(models.FieldSort),
	}
	for _, p := range page.Pets {
		r := ui.petRow(p)
		r.Changed, r.ReadOnly = p.ID == changed, t.ReadOnly
		t.Rows = append(t.Rows, r)
	}
	ui.pager(&t, l, page)
	return t, nil
}

// sortColumns are the sortable column headers: each a link to the list in
// its order (the reverse when it is the current one), none while the
// listing keeps its own order (sortNote).
func sortColumns(l models.PetListing) []templates.SortColumn {
	order := l.Order()
	fixed := l.Search != "" || l.From != "" || l.To != ""
	var cols []templates.SortColumn
	for _, c := range []struct {
		label, column string
		first         models.PetSort // the first click's order
	}{{"Name", "name", models.SortName}, {"Category", "category", models.SortCategory}, {"Created", "created", models.SortNewest}} {
		col := templates.SortColumn{Label: c.label, Column: c.column}
		next := c.first
		if order.Column() == c.column {
			col.AriaSort = "ascending"
			next = models.PetSort(c.column)
			if order.Descending() {
				col.AriaSort = "descending"
			} else {
				next = "-" + next
			}
		}
		if !fixed || c.column == "created" && l.Search == "" {
			s := firstPage(l)
			s.Sort = next
			col.URL = listURL(s)
			col.Next = "descending"
			if !next.Descending() {
				col.Next = "ascending"
			}
		}
		cols = append(cols, col)
	}
	return cols
}

// sortNote says why the list keeps an order other than the one asked for,
// or why only some columns sort ("" when all do).
func sortNote(l models.PetListing) string {
	switch {
	case l.Search != "":
		return "Search results are listed newest first. Clear the search to sort by a column."
	case l.From != "" || l.To != "":
		return "With dates chosen, the list is sorted by when pets were created. Clear the dates to sort by name or category."
	}
	return ""
}

// statusCounts reads how many pets each status has (models keeps the
// counts with the writes: a read of a few rows), each with the link to the
// listing of that status (its other filters and order kept); the listing's
// status is marked current, and "All" only while nothing else narrows the
// list (a search, a category, dates).
func (ui *Web) statusCounts(c *gin.Context, l models.PetListing) ([]templates.StatusCount, error) {
	counts, err := ui.store.PetStatusCounts(c.Request.Context())
	if err != nil {
		return nil, err
	}
	narrowed := l.Search != "" || l.Category != 0 || l.From != "" || l.To != ""
	count := func(label string, st models.Status, n int64) templates.StatusCount {
		noun := "pets"
		if n == 1 {
			noun = "pet"
		}
		to := firstPage(l)
		to.Status = st
		return templates.StatusCount{Label: label, Status: string(st), Count: groupDigits(n), Noun: noun,
			URL: listURL(to), Current: st == l.Status && (st != "" || !narrowed)}
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

// pager sets the links to a page's neighbours and to the first and last
// pages. An empty page far out links back to the first. A name search
// that stopped on its budget before filling the page goes on from where it
// stopped, and says so.
func (ui *Web) pager(t *templates.PetTableView, l models.PetListing, page models.PetListingPage) {
	if prev, ok := l.PrevPage(page); ok {
		t.NewerURL = listURL(prev)
	}
	if next, ok := l.NextPage(page); ok {
		t.OlderURL = listURL(next)
	}
	if len(page.Pets) == 0 && (l.After != 0 || l.Before != 0 || l.Last) {
		t.NewerURL = listURL(firstPage(l))
	}
	if t.NewerURL != "" {
		t.FirstURL = listURL(firstPage(l))
	}
	if t.OlderURL != "" {
		last := firstPage(l)
		last.Last = true
		t.LastURL = listURL(last)
	}
	t.PrevLabel, t.NextLabel, t.FirstLabel, t.LastLabel = "← Previous", "Next →", "First page", "Last page"
	if o := l.Order(); o.Column() == "created" {
		t.PrevLabel, t.NextLabel, t.FirstLabel, t.LastLabel = "← Newer", "Older →", "Newest", "Oldest"
		if !o.Descending() {
			t.PrevLabel, t.NextLabel, t.FirstLabel, t.LastLabel = "← Older", "Newer →", "Oldest", "Newest"
		}
	}
	if page.Resume != 0 {
		t.Note = "Only part of the pets were searched for this page, to keep it quick: more pets may match. “" + t.NextLabel + "” searches on."
		if l.After != 0 {
			t.Note = "Only part of the pets were searched for this page, to keep it quick: more pets may match. “" + t.PrevLabel + "” searches on."
		}
	}
}

func (ui *Web) petRow(p models.Pet) templates.PetRow {
	return templates.PetRow{ID: p.ID, Name: p.Name, CategoryID: strconv.FormatInt(p.CategoryID, 10),
		Status: string(p.Status), Created: ui.when(p.CreatedAt), Version: p.Version}
}

// petListing reads the pets page's parameters from the request's query,
// strictly (ParseQueryString), its dates in the store's time zone.
func (ui *Web) petListing(c *gin.Context) (models.PetListing, error) {
	params, err := models.ParseQueryString(c.Request.URL.RawQuery)
	if err != nil {
		return models.PetListing{}, err
	}
	l, err := models.ParsePetListing(params)
	l.Zone = ui.location
	return l, err
}

// listPets shows the pets page, or for htmx only the table region. A
// search "#N" opens pet N's page, or says there is no such pet.
func (ui *Web) listPets(c *gin.Context) {
	l, err := ui.petListing(c)
	if err != nil {
		ui.listRefused(c, err)
		return
	}
	if id, ok := models.PetNumber(l.Search); ok {
		ui.openPetNumber(c, l, id)
		return
	}
	table, err := ui.petTable(c, l, 0)
	if err != nil {
		ui.fail(c, err)
		return
	}
	if isHTMX(c) && c.GetHeader("HX-Target") == "pets-table" {
		ui.render(c, http.StatusOK, templates.PetTableResponse(table, templates.Flash{}))
		return
	}
	p := ui.page(c, "Pets", "pets")
	v := templates.PetsView{Filter: petFilter(l), Table: table, Form: templates.PetFormView{CSRFToken: p.CSRFToken},
		ReadOnly: !ui.may(c, "POST "+Prefix+"/pets")}
	if p.Flash.Kind == bulkFlashKind { // a bulk change's summary, after its redirect
		undo := p.Flash.Undo
		v.Summary, p.Flash = p.Flash.Text, templates.Flash{}
		if undo != nil {
			p.Flash = templates.Flash{Kind: "success", Undo: undo}
		}
	}
	ui.render(c, http.StatusOK, templates.PetsPage(p, v))
}

// petFilter is the filter form's state of a listing.
func petFilter(l models.PetListing) templates.PetFilter {
	f := templates.PetFilter{Status: string(l.Status), Query: l.Search, From: l.From, To: l.To,
		PerPage: strconv.Itoa(l.Limit())}
	if l.Category != 0 {
		f.Category = strconv.FormatInt(l.Category, 10)
	}
	return f
}

// listRefused answers a list address with a bad parameter: 400 and the
// message, on the pets page with the filter form as it was typed and the
// first page of all pets (for htmx, the message alone: the table and the
// address stay as they were).
func (ui *Web) listRefused(c *gin.Context, err error) {
	e, ok := invalidFields(err)
	if !ok {
		ui.fail(c, err)
		return
	}
	fl := templates.Flash{Kind: "error", Text: e.Message}
	if isHTMX(c) {
		// Not swapped (an error status): app.js shows the message.
		ui.render(c, http.StatusBadRequest, templates.FlashOOB(fl))
		return
	}
	table, terr := ui.petTable(c, models.PetListing{Zone: ui.location}, 0)
	if terr != nil {
		ui.fail(c, terr)
		return
	}
	q := c.Request.URL.Query()
	p := ui.page(c, "Pets", "pets")
	p.Flash = fl
	f := templates.PetFilter{Status: q.Get(models.FieldStatus), Query: q.Get(models.FieldSearch), Category: q.Get(models.FieldCategory),
		From: q.Get(models.FieldCreatedFrom), To: q.Get(models.FieldCreatedTo), PerPage: q.Get(models.FieldPerPage)}
	ui.render(c, http.StatusBadRequest, templates.PetsPage(p, templates.PetsView{Filter: f, Table: table,
		Form: templates.PetFormView{CSRFToken: p.CSRFToken}, ReadOnly: !ui.may(c, "POST "+Prefix+"/pets")}))
}

// openPetNumber answers a search "#N": pet N's page, or the list with a
// message saying there is no such pet. Typed into the live search (htmx),
// it only says what Enter will do: the page changes on Enter (app.js
// sends that search as a plain form), not on a keystroke.
func (ui *Web) openPetNumber(c *gin.Context, l models.PetListing, id int64) {
	_, err := ui.store.GetPet(c.Request.Context(), id)
	if err != nil && models.ErrorCode(err) != models.CodeNotFound {
		ui.fail(c, err)
		return
	}
	if err == nil && !isHTMX(c) {
		c.Redirect(http.StatusSeeOther, petPath(id))
		return
	}
	l = firstPage(l)
	l.Search = ""
	table, terr := ui.petTable(c, l, 0)
	if terr != nil {
		ui.fail(c, terr)
		return
	}
	none := fmt.Sprintf("There is no pet #%d.", id)
	table.Note = none
	if err == nil {
		table.Note = fmt.Sprintf("Press Enter to open pet #%d.", id)
	}
	if isHTMX(c) && c.GetHeader("HX-Target") == "pets-table" {
		ui.render(c, http.StatusOK, templates.PetTableResponse(table, templates.Flash{}))
		return
	}
	p := ui.page(c, "Pets", "pets")
	p.Flash = templates.Flash{Kind: "error", Text: none + " Search by name, or type # and a pet's number."}
	f := petFilter(l)
	f.Query = "#" + strconv.FormatInt(id, 10)
	ui.render(c, http.StatusNotFound, templates.PetsPage(p, templates.PetsView{Filter: f, Table: table,
		Form: templates.PetFormView{CSRFToken: p.CSRFToken}, ReadOnly: !ui.may(c, "POST "+Prefix+"/pets")}))
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
		c.Redirect(http.StatusSeeOther, backToPets(c.Request.Referer()))
		return
	}
	table, err := ui.petTable(c, firstPage(ui.shownListing(c)), pet.ID)
	if err != nil {
		ui.fail(c, err)
		return
	}
	added := templates.Added{Text: msg, Name: pet.Name, URL: petPath(pet.ID) + "?back=" + url.QueryEscape(table.URL)}
	ui.render(c, http.StatusOK, templates.PetFormResponse(templates.PetFormView{CSRFToken: form.CSRFToken, Open: true}, &table,
		templates.Flash{Kind: "success", Text: msg}, added))
}

// shownListing is the listing of the pets page htmx says the browser
// shows (from the browser's URL), as the list reads it.
func (ui *Web) shownListing(c *gin.Context) models.PetListing {
	return ui.listingOf(c.GetHeader("HX-Current-URL"))
}

// petFormFailed shows the add form again with its errors and what was typed.
func (ui *Web) petFormFailed(c *gin.Context, form templates.PetFormView) {
	if isHTMX(c) {
		form.Open = true
		ui.render(c, http.StatusUnprocessableEntity, templates.PetFormResponse(form, nil,
			templates.Flash{Kind: "error", Text: "The pet was not added: correct the fields marked below."}, templates.Added{}))
		return
	}
	table, err := ui.petTable(c, models.PetListing{Zone: ui.location}, 0)
	if err != nil {
		ui.fail(c, err)
		return
	}
	p := ui.page(c, "Pets", "pets")
	p.Flash = templates.Flash{Kind: "error", Text: "The pet was not added: correct the fields marked below."}
	form.Open = true
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
	pet, undoID, err := ui.store.UpdatePetStatusUndoable(c.Request.Context(), id, st, currentUser(c).Username)
	if isArchivedErr(err) {
		err = archivedRefusal()
	}
	if err != nil {
		ui.fail(c, err)
		return
	}
	msg := fmt.Sprintf("%s is now %s.", pet.Name, pet.Status)
	back := backToPets(c.Request.Referer())
	if isHTMX(c) {
		counts, err := ui.statusCounts(c, ui.shownListing(c))
		if err != nil {
			ui.fail(c, err)
			return
		}
		row := ui.petRow(pet)
		row.Changed = true
		fl := templates.Flash{Kind: "success", Text: msg, Undo: ui.undoOffer(c, undoID, back, msg)}
		ui.render(c, http.StatusOK, templates.PetRowResponse(row, ui.csrfToken(c), counts, fl))
		return
	}
	flashUndo(c, "success", msg, undoID)
	c.Redirect(http.StatusSeeOther, back)
}

// petsBack is the page of the pets list a pet's page leads back to: its
// back parameter (a link that names where it came from, such as the
// "Added" announcement's), else the page the browser came from (the list's
// links carry no parameter: the browser's Referer is the list's address,
// htmx's changes included, as pushed).
func petsBack(c *gin.Context) string {
	if b := c.Query("back"); b != "" {
		return backToPets(b)
	}
	return backToPets(c.Request.Referer())
}

// backToPets returns the pets page an address names (a back parameter
// or the Referer), keeping its filter, order and page, or the first page:
// only the path and query of an address of the pets list are taken, so
// it never leads elsewhere.
func backToPets(referer string) string {
	if u, err := url.Parse(referer); err == nil && u.Path == Prefix+"/pets" {
		if u.RawQuery == "" {
			return u.Path
		}
		return u.Path + "?" + u.RawQuery
	}
	return Prefix + "/pets"
}
