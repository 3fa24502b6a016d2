package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"petstore/models"
	"petstore/templates"
)

// The archive: archiving a pet from its page or from the list's bulk bar
// (the selection, or every pet of the filter as a bulk job), each after a
// confirmation page that works without JavaScript; the archive's own page,
// newest first, which restores one pet or the selected ones. The store
// moves the pets (models/pets_archive.go); viewers see the archive but
// change nothing (routeRoles).

// archivePath is the archive's page.
const archivePath = Prefix + "/pets/archive"

// archivePerPage is how many archived pets a page of the archive shows.
const archivePerPage = 50

func (ui *Web) registerArchive(r gin.IRouter) {
	r.GET("/pets/archive", ui.showArchive)
	r.POST("/pets/archive/restore", ui.restorePets) // editor or admin
	r.POST("/pets/:id/archive", ui.archivePet)      // editor or admin
	r.GET("/pets/bulk-archive", ui.confirmArchiveSelected)
	r.POST("/pets/bulk-archive", ui.archiveSelected)
}

// retentionWords says how long the archive keeps a pet: "30 days", or the
// duration as written when it is not whole days.
func retentionWords(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		n := int64(d / (24 * time.Hour))
		if n == 1 {
			return "1 day"
		}
		return strconv.FormatInt(n, 10) + " days"
	}
	return d.String()
}

// archivedRefusal is the console's answer to a change of an archived pet:
// 409, saying so, with nothing changed.
func archivedRefusal() error {
	return refuse(models.CodeConflict, "This pet is archived", models.ArchivedMessage)
}

// petNotFound is the refusal of a pet id that is not in the list: its
// archive entry when it is archived, else noSuchPet.
func (ui *Web) petNotFound(c *gin.Context, id int64) error {
	a, err := ui.store.GetArchivedPet(c.Request.Context(), id)
	if models.ErrorCode(err) == models.CodeNotFound {
		return noSuchPet
	}
	if err != nil {
		return err
	}
	return refuse(models.CodeNotFound, "This pet is archived", fmt.Sprintf(
		"%s (id %d) was archived by %s on %s. Restore it from the archive to see or change it.",
		a.Name, a.ID, a.ArchivedBy, ui.when(a.ArchivedAt).Text))
}

// archivePet archives the pet of its page, over the version the page
// showed, after a confirmation page (a post without confirm=yes shows it
// and changes nothing).
func (ui *Web) archivePet(c *gin.Context) {
	pet, err := ui.findPet(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	version, err := models.ParseVersion(c.PostForm("version"))
	if err != nil {
		ui.fail(c, refuse(models.CodeInvalidRequest, "The page is out of date", "Open the pet again, then archive it. Nothing was changed."))
		return
	}
	if c.PostForm("confirm") != "yes" {
		ui.render(c, http.StatusOK, templates.ConfirmPage(ui.page(c, "Archive "+pet.Name+"?", "pets"), templates.ConfirmView{
			Heading: "Archive " + pet.Name + "?",
			Warning: fmt.Sprintf("%s (id %d) leaves the pets list, its counts, search and exports, and the partner API, which then answers "+
				"as for an unknown pet. It stays in the archive for %s, where it can be restored with the same id; after that it is deleted for good.",
				pet.Name, pet.ID, retentionWords(ui.archiveRetention)),
			Action: petPath(pet.ID) + "/archive", Button: "Archive " + pet.Name,
			Hidden:    [][2]string{{"version", strconv.FormatInt(version, 10)}},
			CancelURL: petPath(pet.ID),
		}))
		return
	}
	res, err := ui.store.ArchivePetsUndoable(c.Request.Context(), []models.PetVersion{{ID: pet.ID, Version: version}}, currentUser(c).Username)
	switch {
	case err != nil:
		ui.fail(c, err)
	case len(res.Moved) == 1:
		flashUndo(c, "success", fmt.Sprintf("Archived %s (id %d). It can be restored from the archive.", pet.Name, pet.ID), res.UndoID)
		c.Redirect(http.StatusSeeOther, Prefix+"/pets")
	case len(res.Stale) == 1:
		ui.fail(c, refuse(models.CodeConflict, "The pet changed", fmt.Sprintf(
			"Someone changed %s after you opened it, so it was not archived. Open it again to see their change, then archive it if you still want to.", pet.Name)))
	case len(res.Already) == 1:
		flash(c, "success", fmt.Sprintf("%s was already archived.", pet.Name))
		c.Redirect(http.StatusSeeOther, archivePath)
	default:
		ui.fail(c, noSuchPet)
	}
}

// toArchive sends the bulk bar's archive buttons to their confirmation:
// of the pets selected (items, "id:version"), or of every pet of the
// list's filter (all) as a bulk job.
func (ui *Web) toArchive(c *gin.Context, back string, items []string, all bool) {
	to := bulkConfirmURL(back, bulkArchive)
	if !all {
		if _, err := models.ParsePetSelection(items, ui.listingOf(back).Limit(), "archive"); err != nil {
			if e, ok := invalidFields(err); ok {
				ui.bulkRefused(c, back, e.Message)
				return
			}
			ui.fail(c, err)
			return
		}
		to = Prefix + "/pets/bulk-archive?" + url.Values{"pet": items, "back": {back}}.Encode()
	}
	if isHTMX(c) {
		c.Header("HX-Redirect", to)
		c.Status(http.StatusOK)
		return
	}
	c.Redirect(http.StatusSeeOther, to)
}

// bulkArchive is the bulk job confirmation's "set" that archives.
const bulkArchive = "archive"

// confirmArchiveSelected asks before archiving the pets selected on a
// page of the list: their names and what archiving does. Nothing changes.
func (ui *Web) confirmArchiveSelected(c *gin.Context) {
	ui.renderArchiveSelected(c, c.QueryArray("pet"), backToPets(c.Query("back")))
}

// renderArchiveSelected shows the confirmation of archiving the pets items
// ("id:version"), with back the list to return to.
func (ui *Web) renderArchiveSelected(c *gin.Context, items []string, back string) {
	pvs, err := models.ParsePetSelection(items, models.MaxPageLimit, "archive")
	if err != nil {
		ui.fail(c, err)
		return
	}
	var names []string
	for _, pv := range pvs {
		p, err := ui.store.GetPet(c.Request.Context(), pv.ID)
		if models.ErrorCode(err) == models.CodeNotFound {
			continue
		}
		if err != nil {
			ui.fail(c, err)
			return
		}
		names = append(names, p.Name)
	}
	hidden := [][2]string{{"back", back}}
	for _, it := range items {
		hidden = append(hidden, [2]string{"pet", it})
	}
	n := plural(len(pvs), "pet", "pets")
	ui.render(c, http.StatusOK, templates.ConfirmPage(ui.page(c, "Archive "+n+"?", "pets"), templates.ConfirmView{
		Heading: "Archive " + n + "?",
		Warning: fmt.Sprintf("%s: they leave the pets list, its counts, search and exports, and the partner API. They stay in the archive for %s, "+
			"where they can be restored with the same ids; after that they are deleted for good. A pet someone changes meanwhile is left as they made it.",
			strings.Join(names, ", "), retentionWords(ui.archiveRetention)),
		Action: Prefix + "/pets/bulk-archive", Button: "Archive " + n, Hidden: hidden, CancelURL: back,
	}))
}

// archiveSelected archives the pets selected on a page of the list, each
// over the version the page showed, once confirmed; the list then says
// what was archived and what was skipped.
func (ui *Web) archiveSelected(c *gin.Context) {
	items, back := c.PostFormArray("pet"), backToPets(c.PostForm("back"))
	if c.PostForm("confirm") != "yes" {
		ui.renderArchiveSelected(c, items, back)
		return
	}
	pvs, err := models.ParsePetSelection(items, models.MaxPageLimit, "archive")
	if err != nil {
		ui.fail(c, err)
		return
	}
	res, err := ui.store.ArchivePetsUndoable(c.Request.Context(), pvs, currentUser(c).Username)
	if err != nil {
		ui.fail(c, err)
		return
	}
	flashUndo(c, bulkFlashKind, moveSummary(res, "Archived", "already archived"), res.UndoID)
	c.Redirect(http.StatusSeeOther, back)
}

// moveSummary says what an archive or a restore did: done is its verb
// ("Archived"), already what a pet already there is.
func moveSummary(res models.ArchiveResult, done, already string) string {
	var b strings.Builder
	switch n := len(res.Moved); n {
	case 0:
		b.WriteString("No pet was changed.")
	case 1:
		fmt.Fprintf(&b, "%s %s (id %d).", done, res.Moved[0].Name, res.Moved[0].ID)
	default:
		names := make([]string, n)
		for i, p := range res.Moved {
			names[i] = p.Name
		}
		fmt.Fprintf(&b, "%s %d pets: %s.", done, n, strings.Join(names, ", "))
	}
	var skipped []string
	for _, p := range res.Stale {
		skipped = append(skipped, fmt.Sprintf("%s (changed by someone else meanwhile: check it and try again)", p.Name))
	}
	for _, id := range res.Already {
		skipped = append(skipped, fmt.Sprintf("pet %d (%s)", id, already))
	}
	for _, id := range res.Missing {
		skipped = append(skipped, fmt.Sprintf("pet %d (no longer exists)", id))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, " Skipped %d: %s.", len(skipped), strings.Join(skipped, "; "))
	}
	return b.String()
}

// showArchive lists the archived pets, newest first, a page at a time.
func (ui *Web) showArchive(c *gin.Context) {
	cur, err := models.ParseArchiveCursor(c.Query(models.FieldAfter))
	if err != nil {
		ui.fail(c, refuse(models.CodeInvalidRequest, "The page is out of date", "Open the archive again from its first page."))
		return
	}
	ui.renderArchive(c, http.StatusOK, cur)
}

// renderArchive renders the archive's page after cur.
func (ui *Web) renderArchive(c *gin.Context, status int, cur models.ArchiveCursor) {
	ctx := c.Request.Context()
	page, err := ui.store.ListArchivedPets(ctx, cur, archivePerPage)
	if err != nil {
		ui.fail(c, err)
		return
	}
	n, err := ui.store.CountArchivedPets(ctx)
	if err != nil {
		ui.fail(c, err)
		return
	}
	p := ui.page(c, "Archive", "archive")
	v := templates.ArchiveView{Count: groupDigits(n), Retention: retentionWords(ui.archiveRetention), CSRFToken: p.CSRFToken,
		ReadOnly: !ui.may(c, "POST "+archivePath+"/restore"), Self: archiveURL(cur)}
	if p.Flash.Kind == bulkFlashKind { // a restore's summary, after its redirect, with its Undo
		undo := p.Flash.Undo
		v.Summary, p.Flash = p.Flash.Text, templates.Flash{}
		if undo != nil {
			p.Flash = templates.Flash{Kind: "success", Undo: undo}
		}
	}
	for _, a := range page.Pets {
		v.Rows = append(v.Rows, templates.ArchiveRow{ID: a.ID, Name: a.Name, CategoryID: strconv.FormatInt(a.CategoryID, 10),
			Status: string(a.Status), Version: a.Version, ArchivedAt: ui.when(a.ArchivedAt), ArchivedBy: a.ArchivedBy,
			History: Prefix + "/audit?target=" + url.QueryEscape("pet:"+strconv.FormatInt(a.ID, 10))})
	}
	if page.Next.ID != 0 {
		v.NextURL = archiveURL(page.Next)
	}
	if cur.ID != 0 {
		v.FirstURL = archivePath
	}
	ui.render(c, status, templates.ArchivePage(p, v))
}

// archiveURL is the archive's page after cur.
func archiveURL(cur models.ArchiveCursor) string {
	if cur.ID == 0 {
		return archivePath
	}
	return archivePath + "?" + models.FieldAfter + "=" + cur.String()
}

// backToArchive is the page of the archive a restore form names (its
// back field), or the first: only an address of the archive is taken.
func backToArchive(back string) string {
	if u, err := url.Parse(back); err == nil && u.Path == archivePath {
		if _, err := models.ParseArchiveCursor(u.Query().Get(models.FieldAfter)); err == nil && u.RawQuery != "" {
			return u.Path + "?" + u.RawQuery
		}
	}
	return archivePath
}

// restorePets restores one archived pet or the selected ones, each over
// the version the archive showed (restoring changes nothing that cannot be
// archived again, so it asks no confirmation), and says what it did on the
// archive's page.
func (ui *Web) restorePets(c *gin.Context) {
	back := backToArchive(c.PostForm("back"))
	pvs, err := models.ParsePetSelection(c.PostFormArray("pet"), archivePerPage, "restore")
	if e, ok := invalidFields(err); ok {
		flash(c, "error", e.Message)
		c.Redirect(http.StatusSeeOther, back)
		return
	}
	if err != nil {
		ui.fail(c, err)
		return
	}
	res, err := ui.store.RestorePetsUndoable(c.Request.Context(), pvs, currentUser(c).Username)
	if err != nil {
		ui.fail(c, err)
		return
	}
	flashUndo(c, bulkFlashKind, moveSummary(res, "Restored", "already back in the pets list"), res.UndoID)
	c.Redirect(http.StatusSeeOther, back)
}

// isArchivedErr reports a refusal because the pet is archived.
func isArchivedErr(err error) bool { return errors.Is(err, models.ErrPetArchived) }
