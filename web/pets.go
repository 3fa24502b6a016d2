package web

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"petstore/models"
	"petstore/templates"
)

func (w *Web) registerPets(r gin.IRouter) {
	r.GET("/pets", w.listPets)
	r.POST("/pets", w.createPet)
	r.POST("/pets/:id/status", w.updatePetStatus)
}

// petsPageSize is how many pets a console page shows.
const petsPageSize = 20

// petListing is a parsed pets URL: the filter and where the page starts.
type petListing struct {
	filter templates.PetFilter
	query  models.PetQuery
	// after set: the page of pets just newer than it (the "Newer" link).
	after int64
	// before set: the page of pets just older than it; 0 is the newest page.
	before int64
}

// parsePetListing reads status, q, before and after. The empty status is
// the "All" choice. The rules of status and ids are the API's.
func parsePetListing(q url.Values) (petListing, error) {
	var l petListing
	params := url.Values{"limit": {strconv.Itoa(petsPageSize)}}
	if st := q.Get("status"); st != "" {
		params.Set("status", st)
	}
	if a := q.Get("after"); a != "" {
		params.Set("after", a)
	}
	pq, err := models.ParsePetQuery(params)
	if err != nil {
		return l, err
	}
	if b := q.Get("before"); b != "" {
		id, err := strconv.ParseInt(b, 10, 64)
		if err != nil || id < 1 {
			return l, &models.Error{Code: models.CodeInvalidRequest, Message: "The page address is not valid: before must be a pet id."}
		}
		l.before = id
	}
	if pq.NameContains, err = models.ValidateSearch(q.Get("q")); err != nil {
		return l, err
	}
	l.query, l.after = pq, pq.After
	l.filter = templates.PetFilter{Status: string(pq.Status), Query: pq.NameContains}
	return l, nil
}

// url returns the console URL of this listing's filter at a page boundary.
func (l petListing) url(key string, id int64) string {
	v := url.Values{}
	if l.filter.Status != "" {
		v.Set("status", l.filter.Status)
	}
	if l.filter.Query != "" {
		v.Set("q", l.filter.Query)
	}
	if key != "" {
		v.Set(key, strconv.FormatInt(id, 10))
	}
	if len(v) == 0 {
		return Prefix + "/pets"
	}
	return Prefix + "/pets?" + v.Encode()
}

// loadPetTable reads one page, newest first, and works out the links to
// the neighbouring pages with keyset reads (never a COUNT). A name search
// may stop on its budget before filling the page: the link onwards then
// starts where it stopped, and the page says so.
func (w *Web) loadPetTable(c *gin.Context, l petListing, changed int64) (templates.PetTableView, error) {
	ctx := c.Request.Context()
	q := l.query
	var hasNewer, hasOlder bool
	if l.after > 0 {
		q.After = l.after
	} else {
		q.After, q.Before = 0, l.before
		if q.Before == 0 {
			q.Before = math.MaxInt64
		}
	}
	page, err := w.store.ListPetsPage(ctx, q)
	if err != nil {
		return templates.PetTableView{}, err
	}
	pets := page.Pets
	if l.after > 0 {
		hasNewer = page.More
	} else {
		hasOlder = page.More
	}
	if len(pets) > 0 {
		// The other direction: one row beyond the page tells whether it exists.
		probe := l.query
		probe.Limit = 1
		if l.after > 0 {
			probe.After, probe.Before = 0, pets[0].ID
			hasOlder, err = w.exists(c, probe)
		} else if l.before > 0 {
			probe.After, probe.Before = pets[len(pets)-1].ID, 0
			hasNewer, err = w.exists(c, probe)
		}
		if err != nil {
			return templates.PetTableView{}, err
		}
	}
	t := templates.PetTableView{
		Filtered:  l.filter.Status != "" || l.filter.Query != "",
		CSRFToken: w.csrfToken(c),
		Rows:      make([]templates.PetRow, 0, len(pets)),
	}
	for i := len(pets) - 1; i >= 0; i-- { // newest first
		r := petRow(pets[i])
		r.Changed = pets[i].ID == changed
		t.Rows = append(t.Rows, r)
	}
	if len(pets) > 0 {
		if hasNewer {
			t.NewerURL = l.url("after", pets[len(pets)-1].ID)
		}
		if hasOlder {
			t.OlderURL = l.url("before", pets[0].ID)
		}
	} else if l.after > 0 || l.before > 0 {
		t.NewerURL = l.url("", 0) // an empty page far out: back to the start
	}
	if page.Resume != 0 {
		if l.after > 0 {
			t.NewerURL = l.url("after", page.Resume)
			t.Note = fmt.Sprintf("The search stopped at pet %d before filling this page: newer pets may match.", page.Resume)
		} else {
			t.OlderURL = l.url("before", page.Resume)
			t.Note = fmt.Sprintf("The search stopped at pet %d before filling this page: older pets may match.", page.Resume)
		}
	}
	return t, nil
}

// exists reports whether the probe finds a pet; a search that stopped on
// its budget may find one further on, so it counts as yes.
func (w *Web) exists(c *gin.Context, q models.PetQuery) (bool, error) {
	page, err := w.store.ListPetsPage(c.Request.Context(), q)
	return len(page.Pets) > 0 || page.Resume != 0, err
}

func petRow(p models.Pet) templates.PetRow {
	return templates.PetRow{ID: p.ID, Name: p.Name, CategoryID: strconv.FormatInt(p.CategoryID, 10),
		Status: string(p.Status), Created: formatTime(p.CreatedAt)}
}

// formatTime shows a time in UTC to the minute, the same on every instance.
func formatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04") + " UTC"
}

// listPets shows the pets page, or for htmx only the table region.
func (w *Web) listPets(c *gin.Context) {
	params, err := models.ParseQueryString(c.Request.URL.RawQuery)
	if err != nil {
		w.fail(c, err)
		return
	}
	l, err := parsePetListing(params)
	if err != nil {
		w.fail(c, err)
		return
	}
	table, err := w.loadPetTable(c, l, 0)
	if err != nil {
		w.fail(c, err)
		return
	}
	if isHTMX(c) && c.GetHeader("HX-Target") == "pets-table" {
		w.render(c, http.StatusOK, templates.PetTable(table))
		return
	}
	p := w.page(c, "Pets", "pets")
	v := templates.PetsView{Filter: l.filter, Table: table, Form: templates.PetFormView{CSRFToken: p.CSRFToken}}
	w.render(c, http.StatusOK, templates.PetsPage(p, v))
}

// createPet adds a pet with the API's validation rules.
func (w *Web) createPet(c *gin.Context) {
	status := c.PostForm("status")
	in := models.PetInput{Name: c.PostForm("name"), CategoryID: c.PostForm("categoryId")}
	if _, ok := c.GetPostForm("status"); ok {
		in.Status = &status
	}
	form := templates.PetFormView{Name: in.Name, CategoryID: in.CategoryID, Status: status, CSRFToken: w.csrfToken(c)}
	np, err := in.Validate()
	if err != nil {
		e, ok := invalidFields(err)
		if !ok {
			w.fail(c, err)
			return
		}
		form.Errors = fieldErrors(e)
		w.petFormFailed(c, form)
		return
	}
	u := currentUser(c)
	pet, err := w.store.CreatePet(c.Request.Context(), np, u.Username)
	if err != nil {
		w.fail(c, err)
		return
	}
	msg := fmt.Sprintf("Added %s (id %d).", pet.Name, pet.ID)
	if !isHTMX(c) {
		flash(c, "success", msg)
		c.Redirect(http.StatusSeeOther, Prefix+"/pets")
		return
	}
	// The table the page shows (its filter comes from the browser's URL)
	// is redrawn from its first page, where the new pet stands.
	l := petListing{query: models.PetQuery{Limit: petsPageSize}}
	if cur, err := url.Parse(c.GetHeader("HX-Current-URL")); err == nil {
		if parsed, err := parsePetListing(cur.Query()); err == nil {
			l = parsed
			l.after, l.before, l.query.After = 0, 0, 0
		}
	}
	table, err := w.loadPetTable(c, l, pet.ID)
	if err != nil {
		w.fail(c, err)
		return
	}
	w.render(c, http.StatusOK, templates.PetFormResponse(templates.PetFormView{CSRFToken: form.CSRFToken}, &table,
		templates.Flash{Kind: "success", Text: msg}))
}

// petFormFailed shows the add form again with its errors and what was typed.
func (w *Web) petFormFailed(c *gin.Context, form templates.PetFormView) {
	if isHTMX(c) {
		w.render(c, http.StatusUnprocessableEntity, templates.PetFormResponse(form, nil,
			templates.Flash{Kind: "error", Text: "The pet was not added: correct the fields marked below."}))
		return
	}
	l, _ := parsePetListing(url.Values{})
	table, err := w.loadPetTable(c, l, 0)
	if err != nil {
		w.fail(c, err)
		return
	}
	p := w.page(c, "Pets", "pets")
	p.Flash = templates.Flash{Kind: "error", Text: "The pet was not added: correct the fields marked below."}
	w.render(c, http.StatusUnprocessableEntity, templates.PetsPage(p, templates.PetsView{Table: table, Form: form}))
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
func (w *Web) updatePetStatus(c *gin.Context) {
	id, err := models.ParsePetID(c.Param("id"))
	if err != nil {
		w.fail(c, &models.Error{Code: models.CodeNotFound, Message: "There is no such pet."})
		return
	}
	st, ok := models.ParseStatus(c.PostForm("status"))
	if !ok {
		w.fail(c, &models.Error{Code: models.CodeInvalidRequest, Message: models.StatusMessage})
		return
	}
	pet, err := w.store.UpdatePetStatus(c.Request.Context(), id, st, currentUser(c).Username)
	if err != nil {
		w.fail(c, err)
		return
	}
	msg := fmt.Sprintf("%s is now %s.", pet.Name, pet.Status)
	if isHTMX(c) {
		row := petRow(pet)
		row.Changed = true
		w.render(c, http.StatusOK, templates.PetRowResponse(row, w.csrfToken(c), templates.Flash{Kind: "success", Text: msg}))
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
