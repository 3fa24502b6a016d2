package web

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"strconv"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"petstore/httpcode"
	"petstore/models"
	"petstore/templates"
)

// The CSV import of pets: an upload form, a preview of what the file adds
// and of every row's errors, the member's choice (import the valid rows,
// or cancel), and the import's progress. The file is kept in the database
// between the preview and the choice (models.UploadImport), so any
// instance serves each step.

func (ui *Web) registerImport(r gin.IRouter) {
	r.GET("/pets/import", ui.showImportForm) // editor or admin
	r.POST("/pets/import", ui.uploadImport)
	r.GET("/pets/import/:id", ui.showImport)
	r.POST("/pets/import/:id", ui.chooseImport)
}

// uploadLimits are the routes that take a file (multipart/form-data), with
// the most bytes their body may hold: the file and a little for the form
// around it.
var uploadLimits = map[string]int64{Prefix + "/pets/import": models.MaxImportBytes + MaxFormBytes}

// keyUpload holds an upload's multipart reader, its token already read.
const keyUpload = "upload"

// checkUploadToken checks the CSRF token of an upload: the form's first
// part, read before the file, whose reader the handler then goes on with.
// The body is capped at limit while it is read.
func (ui *Web) checkUploadToken(c *gin.Context, limit int64) {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
	mr, err := c.Request.MultipartReader()
	if err != nil {
		ui.fail(c, formUnread(err))
		return
	}
	part, err := mr.NextPart()
	if err != nil || part.FormName() != "csrf_token" {
		ui.fail(c, errForged)
		return
	}
	got, err := io.ReadAll(io.LimitReader(part, 1024))
	if err != nil {
		ui.fail(c, formUnread(err))
		return
	}
	want, _ := session(c).Get(keyCSRF).(string)
	if want == "" || subtle.ConstantTimeCompare([]byte(unmaskToken(string(got))), []byte(want)) != 1 {
		ui.fail(c, errForged)
		return
	}
	c.Set(keyUpload, mr)
	c.Next()
}

// isMultipart reports a form that carries files.
func isMultipart(r *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt == "multipart/form-data"
}

// importPath is the address of an import's preview or progress.
func importPath(id int64) string { return Prefix + "/pets/import/" + strconv.FormatInt(id, 10) }

// showImportForm shows the upload form.
func (ui *Web) showImportForm(c *gin.Context) {
	ui.render(c, http.StatusOK, templates.ImportPage(ui.page(c, "Import pets", "pets"), templates.ImportFormView{}))
}

// errNoFile refuses an upload without a file.
var errNoFile = models.Error{Code: models.CodeInvalidRequest, Message: "Choose a CSV file to import."}

// uploadImport reads the uploaded file and shows what it would add. A
// file refused as a whole is shown on the form with the reason, and
// nothing is kept; rows already imported say when, and add nothing; rows
// whose import runs show its progress.
func (ui *Web) uploadImport(c *gin.Context) {
	name, file, err := uploadedFile(c)
	if err != nil {
		ui.refuseImport(c, err)
		return
	}
	imp, _, err := ui.store.UploadImport(c.Request.Context(), name, file, currentUser(c).Username)
	if err != nil {
		ui.refuseImport(c, err)
		return
	}
	if imp.State == models.ImportDone {
		v := ui.importJobView(c, imp)
		v.Repeat = true
		v.Summary = fmt.Sprintf("This file was imported %s by %s (%s). Nothing was added.",
			ui.when(*imp.FinishedAt).Text, imp.Actor, petCount(imp.Done))
		ui.render(c, http.StatusOK, templates.ImportJobPage(ui.page(c, "Already imported", "pets"), v))
		return
	}
	c.Redirect(http.StatusSeeOther, importPath(imp.ID))
}

// refuseImport shows the upload form again with why the file was refused;
// a server error gets the error page.
func (ui *Web) refuseImport(c *gin.Context, err error) {
	if tooBig := (*http.MaxBytesError)(nil); errors.As(err, &tooBig) || err == models.ErrImportTooLarge {
		err = tooLarge()
	}
	var e *models.Error
	if !errors.As(err, &e) {
		if c.Request.Context().Err() == nil && errors.Is(err, errUploadRead) {
			err = uploadUnread
		}
		if !errors.As(err, &e) {
			ui.fail(c, err)
			return
		}
	}
	if e.Code != models.CodeInvalidRequest && e.Code != httpcode.PayloadTooLarge {
		ui.fail(c, err)
		return
	}
	status := http.StatusUnprocessableEntity
	if e.Code == httpcode.PayloadTooLarge {
		status = http.StatusRequestEntityTooLarge
	}
	ui.render(c, status, templates.ImportPage(ui.page(c, "Import pets", "pets"), templates.ImportFormView{Error: e.Message}))
}

// uploadedFile finds the file of an upload: its name (without any folder
// a browser sends) and a reader of its bytes, which the body's cap stops
// past models.MaxImportBytes and a little more. Reading it fails with
// errUploadRead when the body is cut short.
func uploadedFile(c *gin.Context) (string, io.Reader, error) {
	v, ok := c.Get(keyUpload)
	if !ok {
		return "", nil, &errNoFile
	}
	mr := v.(*multipart.Reader)
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return "", nil, &errNoFile
		}
		if err != nil {
			return "", nil, fmt.Errorf("%w: %w", errUploadRead, err)
		}
		if part.FormName() != "file" {
			continue
		}
		if part.FileName() == "" {
			return "", nil, &errNoFile // the browser's way of sending no file
		}
		return path.Base(part.FileName()), uploadReader{part}, nil
	}
}

// errUploadRead marks a failure to read the upload's body.
var errUploadRead = errors.New("read the upload")

// uploadReader marks its read failures with errUploadRead.
type uploadReader struct{ r io.Reader }

func (u uploadReader) Read(p []byte) (int, error) {
	n, err := u.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%w: %w", errUploadRead, err)
	}
	return n, err
}

// tooLarge is the refusal of a file over models.MaxImportBytes.
func tooLarge() error {
	e := *models.ErrImportTooLarge.(*models.Error)
	e.Code = httpcode.PayloadTooLarge
	return &e
}

// uploadUnread refuses an upload whose body could not be read whole.
var uploadUnread = &models.Error{Code: models.CodeInvalidRequest, Message: "The upload could not be read: try again. Nothing was imported."}

// petCount is "1 pet" or "N pets", digits grouped.
func petCount(n int) string {
	if n == 1 {
		return "1 pet"
	}
	return groupDigits(int64(n)) + " pets"
}

// noSuchImport answers an import id that names nothing.
var noSuchImport = refuse(models.CodeNotFound, "Import not found", "There is no such import: it was cancelled, or never uploaded.")

// importOf reads the import of the request's id.
func (ui *Web) importOf(c *gin.Context) (models.Import, error) {
	id, ok := models.ParseID(c.Param("id"))
	if !ok {
		return models.Import{}, noSuchImport
	}
	imp, err := ui.store.GetImport(c.Request.Context(), id)
	if models.ErrorCode(err) == models.CodeNotFound {
		return models.Import{}, noSuchImport
	}
	return imp, err
}

// showImport shows an import: its preview while it waits for the member's
// choice, else its progress or how it ended (htmx's polling gets only the
// progress region).
func (ui *Web) showImport(c *gin.Context) {
	imp, err := ui.importOf(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	if imp.State != models.ImportPreview {
		v := ui.importJobView(c, imp)
		fl, err := ui.importUndo(c, imp)
		if err != nil {
			ui.fail(c, err)
			return
		}
		if isHTMX(c) {
			// Only the region: a poll must not take the flash meant for a page.
			var progress templ.Component = templates.ImportProgress(templates.Page{CSRFToken: ui.csrfToken(c)}, v)
			if fl.Undo != nil {
				progress = templ.Join(progress, templates.FlashOOB(fl))
			}
			ui.render(c, http.StatusOK, progress)
			return
		}
		p := ui.page(c, "Import of "+imp.FileName, "pets")
		if fl.Undo != nil && p.Flash.Kind == "" {
			p.Flash = fl
		}
		ui.render(c, http.StatusOK, templates.ImportJobPage(p, v))
		return
	}
	check, err := ui.store.CheckKeptImport(c.Request.Context(), imp.ID)
	if err != nil {
		ui.fail(c, err)
		return
	}
	v := templates.ImportPreviewView{FileName: imp.FileName, Uploader: imp.Actor, Uploaded: ui.when(imp.CreatedAt),
		Valid: check.Valid, Invalid: check.Invalid, ValidText: groupDigits(int64(check.Valid)), InvalidText: groupDigits(int64(check.Invalid)),
		Action: importPath(imp.ID)}
	errs := "none"
	if check.Invalid > 0 {
		errs = v.InvalidText
	}
	v.Counts = fmt.Sprintf("%s to add, %s with errors.", plural(check.Valid, "row", "rows"), errs)
	for _, r := range check.Rows {
		v.Rows = append(v.Rows, templates.ImportPreviewRow{Row: r.Row, Name: r.Pet.Name, CategoryID: strconv.FormatInt(r.Pet.CategoryID, 10), Status: string(r.Pet.Status)})
	}
	if more := check.Valid - len(check.Rows); more > 0 {
		v.More = groupDigits(int64(more))
	}
	for _, e := range check.Errors {
		v.Errors = append(v.Errors, templates.ImportErrorRow{Row: e.Row, Field: importFieldNames[e.Field], Message: e.Message})
	}
	ui.render(c, http.StatusOK, templates.ImportPreviewPage(ui.page(c, "Import "+imp.FileName+"?", "pets"), v))
}

// importUndo is the Undo offer of an ended import the member started,
// while it may be undone: its undo archives the pets it added that nobody
// changed since.
func (ui *Web) importUndo(c *gin.Context, imp models.Import) (templates.Flash, error) {
	user := currentUser(c).Username
	if imp.UndoID == nil || imp.Actor != user || (imp.State != models.ImportDone && imp.State != models.ImportFailed) {
		return templates.Flash{}, nil
	}
	act, err := ui.store.GetUndoAction(c.Request.Context(), *imp.UndoID, user)
	if models.ErrorCode(err) == models.CodeNotFound {
		return templates.Flash{}, nil // purged once its window ended
	}
	if err != nil || !act.Undoable(ui.now(), ui.undoWindow) {
		return templates.Flash{}, err
	}
	return templates.Flash{Kind: "success", Undo: ui.undoOffer(c, act.ID, importPath(imp.ID), act.Summary)}, nil
}

// importFieldNames name an error's field as the file's column does.
var importFieldNames = map[string]string{models.FieldName: "name", models.FieldCategoryID: "category_id", models.FieldStatus: "status", models.FieldRow: "the row"}

// chooseImport carries out the member's choice on a preview: import its
// valid rows (or the rest of an import that stopped), or cancel.
func (ui *Web) chooseImport(c *gin.Context) {
	imp, err := ui.importOf(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	switch c.PostForm("action") {
	case "import":
		if _, err := ui.store.StartImport(c.Request.Context(), imp.ID, currentUser(c).Username); err != nil {
			ui.fail(c, err)
			return
		}
		c.Redirect(http.StatusSeeOther, importPath(imp.ID))
	case "cancel":
		if err := ui.store.CancelImport(c.Request.Context(), imp.ID); err != nil {
			ui.fail(c, err)
			return
		}
		flash(c, "success", "Import cancelled: nothing was added.")
		c.Redirect(http.StatusSeeOther, Prefix+"/pets/import")
	default:
		ui.fail(c, refuse(models.CodeInvalidRequest, "Choose what to do", "Choose whether to import the valid rows or to cancel. Nothing was changed."))
	}
}

// importJobView is an import's progress in words, and once ended what it
// did.
func (ui *Web) importJobView(c *gin.Context, imp models.Import) templates.ImportJobView {
	v := templates.ImportJobView{FileName: imp.FileName, Actor: imp.Actor, Total: imp.RowsValid, Done: imp.Done,
		Finished: imp.State == models.ImportDone || imp.State == models.ImportFailed, Failed: imp.State == models.ImportFailed,
		ProgressURL: importPath(imp.ID)}
	v.ProgressText = fmt.Sprintf("%s of %s pets added", groupDigits(int64(imp.Done)), groupDigits(int64(imp.RowsValid)))
	skipped := ""
	if imp.RowsInvalid > 0 {
		skipped = fmt.Sprintf(" %s with errors skipped.", plural(imp.RowsInvalid, "row", "rows"))
	}
	switch imp.State {
	case models.ImportDone:
		v.Summary = fmt.Sprintf("%s imported %s.%s", imp.Actor, petCount(imp.Done), skipped)
	case models.ImportFailed:
		v.Error = "The import stopped part way: " + imp.Error
		v.Summary = fmt.Sprintf("%s of %s were added; the rest were not.", groupDigits(int64(imp.Done)), petCount(imp.RowsValid))
		if currentUser(c).Role.Allows(models.RoleEditor) {
			v.ResumeAction, v.Left = importPath(imp.ID), groupDigits(int64(imp.RowsValid-imp.Done))
		}
	}
	return v
}

// plural writes n, digits grouped, with the noun's singular or plural.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return groupDigits(int64(n)) + " " + many
}
