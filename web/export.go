package web

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"golang.org/x/text/unicode/norm"

	"petstore/httpcode"
	"petstore/models"
)

// The CSV export of the pets page: every pet its filter
// and search show, all pages, newest first, streamed a chunk at a time
// (models.ExportPets) so that memory stays flat whatever the table's size.

func (ui *Web) registerExport(r gin.IRouter) {
	r.GET("/pets/export.csv", ui.exportPets) // every role: viewers read everything
}

// exportColumns is the CSV's header row: what the pets page shows, with
// the category as its id and both times (UTC, RFC 3339).
var exportColumns = []string{"id", "name", "category_id", "status", "created_at", "updated_at"}

// exportStall is how long the client may take to accept one chunk: the
// write deadline is moved on by it before each chunk, instead of the
// server's deadline for a whole answer, which a large export outlasts.
const exportStall = 60 * time.Second

// errClientGone marks a write to the client that failed: the client went
// away or stopped reading.
var errClientGone = errors.New("export: the client is gone")

// exportPets answers GET /admin/pets/export.csv?status=&q= with the pets
// the pets page lists for the same parameters (a page position in them is
// ignored: an export is every page), and audits it when it ends, also when
// the client went away (with the rows sent so far) or a read failed. An
// export asked for by another site is refused (errExportCrossSite).
func (ui *Web) exportPets(c *gin.Context) {
	if c.GetHeader("Sec-Fetch-Site") == "cross-site" {
		ui.fail(c, errExportCrossSite)
		return
	}
	l, err := ui.petListing(c)
	if err != nil {
		ui.fail(c, err)
		return
	}
	l.After, l.Before = 0, 0
	out := newPetCSV(c, exportFileName(l, ui.now()))
	_, err = ui.store.ExportPets(c.Request.Context(), l, models.ExportChunk, out.write)
	if err == nil {
		err = out.finish()
	}
	outcome := exportOutcome(c, err)
	if aerr := ui.store.RecordExport(c.Request.Context(), currentUser(c).Username, l, out.rows, outcome); aerr != nil {
		ui.log.Error("audit a pets export", "error", aerr)
	}
	switch {
	case outcome == models.ExportFailed && !out.started:
		ui.fail(c, err) // nothing sent yet: the error page
	case outcome == models.ExportFailed:
		ui.log.Error("pets export failed", "rows", out.rows, "error", err)
		out.abort()
	}
}

// errExportCrossSite refuses an export that another site started, such as
// a link or a redirect on another site that the browser followed with the
// console's cookie (SameSite=Lax sends it on a top-level GET): it would
// download the pets and write an audit event in the member's name. The
// browser says so in Sec-Fetch-Site; a request without it (an old browser,
// curl with a session cookie) is not refused, nor one from the console
// itself (same-origin), a sibling site (same-site) or typed in the address
// bar (none).
var errExportCrossSite = refuse(httpcode.Forbidden, "Request refused",
	"The export was asked for from another site, so nothing was exported. Use Export CSV on the pets page.")

// exportURL is the address of the CSV export of a listing's filter.
func exportURL(l models.PetListing) string {
	page := listURL(firstPage(l))
	return Prefix + "/pets/export.csv" + strings.TrimPrefix(page, Prefix+"/pets")
}

// exportOutcome tells how an export that returned err ended.
func exportOutcome(c *gin.Context, err error) models.ExportOutcome {
	switch {
	case err == nil:
		return models.ExportDone
	case errors.Is(err, errClientGone) || c.Request.Context().Err() != nil:
		return models.ExportAborted
	}
	return models.ExportFailed
}

// petCSV writes pets to the response as CSV (RFC 4180: CRLF line ends,
// quoting where needed), a chunk at a time, each flushed to the client.
// The headers and the header row go out with the first chunk, so that a
// read that fails before it still gets the error page.
type petCSV struct {
	c        *gin.Context
	rc       *http.ResponseController
	w        *bufio.Writer
	filename string
	line     []byte // one row's bytes, reused
	started  bool
	rows     int // the pets flushed to the client
}

func newPetCSV(c *gin.Context, filename string) *petCSV {
	return &petCSV{c: c, rc: http.NewResponseController(c.Writer), w: bufio.NewWriter(c.Writer), filename: filename}
}

// start sends the headers and the header row, once.
func (o *petCSV) start() {
	if o.started {
		return
	}
	o.started = true
	h := o.c.Writer.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", contentDisposition(o.filename))
	h.Set("Cache-Control", "no-store")
	o.c.Status(http.StatusOK)
	_, _ = o.w.WriteString(exportHeader)
}

// write sends one chunk of pets and flushes it to the client.
func (o *petCSV) write(pets []models.Pet) error {
	o.start()
	_ = o.rc.SetWriteDeadline(time.Now().Add(exportStall))
	for _, p := range pets {
		o.line = appendPetRow(o.line[:0], p)
		_, _ = o.w.Write(o.line) // a failed write shows in flush below
	}
	if err := o.flush(); err != nil {
		return err
	}
	o.rows += len(pets)
	return nil
}

// finish sends the headers and the header row if no chunk did (no pet
// matched) and flushes them.
func (o *petCSV) finish() error {
	o.start()
	return o.flush()
}

func (o *petCSV) flush() error {
	if err := o.w.Flush(); err != nil {
		return fmt.Errorf("%w: %w", errClientGone, err)
	}
	o.c.Writer.Flush()
	return nil
}

// abort closes the connection without ending the answer, after a read
// failed halfway: the client sees an incomplete download (no final chunk),
// not a complete-looking file that lacks pets. Gin's writer refuses to be
// hijacked once a body was written; net/http's under it does not.
func (o *petCSV) abort() {
	if u, ok := o.c.Writer.(interface{ Unwrap() http.ResponseWriter }); ok {
		if conn, _, err := http.NewResponseController(u.Unwrap()).Hijack(); err == nil {
			_ = conn.Close()
		}
	}
	o.c.Abort()
}

// exportHeader is the CSV's header row (exportColumns).
var exportHeader = strings.Join(exportColumns, ",") + "\r\n"

// appendPetRow appends a pet's row of the CSV, CRLF included. Only the
// name needs quoting or neutralising: ids and category ids are numbers (a
// negative number is a value, not a formula, and none is stored),
// statuses and times are fixed forms.
func appendPetRow(b []byte, p models.Pet) []byte {
	b = strconv.AppendInt(b, p.ID, 10)
	b = append(b, ',')
	b = appendTextCell(b, p.Name)
	b = append(b, ',')
	b = strconv.AppendInt(b, p.CategoryID, 10)
	b = append(b, ',')
	b = append(b, p.Status...)
	b = append(b, ',')
	b = p.CreatedAt.UTC().AppendFormat(b, time.RFC3339)
	b = append(b, ',')
	b = p.UpdatedAt.UTC().AppendFormat(b, time.RFC3339)
	return append(b, '\r', '\n')
}

// appendTextCell appends s as a CSV cell that no spreadsheet runs as a
// formula (OWASP, "CSV Injection"), whether it splits the file on commas,
// semicolons or tabs. A spreadsheet whose list separator is not the
// comma (Excel's default in many locales is ';') ignores the comma
// file's quotes and starts a cell after each of its own separators, and
// one that reads lines ignoring quotes starts one after a line break. So:
//
//   - s is quoted (RFC 4180) when it holds a comma, semicolon, tab, quote
//     or line break, or starts with a space;
//   - wherever a cell could start, at the start of s and after each comma,
//     semicolon, tab or line break in it, spaces and quotes skipped, a '
//     goes before a formula character (=, +, -, @ and the forms Unicode
//     folds to them, such as the full-width ＝) and before a ' already
//     there; spreadsheets show a cell starting with ' as text;
//   - an s starting with a tab or a carriage return gets a ' in front.
//
// Taking away the ' at each of those places gives s back (the ' put
// before a ' already there is what makes that exact). Inside quotes RFC
// 4180 has CRLF line breaks only: a CR is dropped and an LF is written as
// CRLF, as encoding/csv writes them.
func appendTextCell(b []byte, s string) []byte {
	quote := cellNeedsQuotes(s)
	if quote {
		b = append(b, '"')
	}
	cellStart := true
	for i := 0; i < len(s); {
		r, n := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		if cellStart {
			switch {
			case i == 0 && (r == '\t' || r == '\r'):
				b = append(b, '\'')
				cellStart = false // a tab starts a cell again (below); a CR is not written
			case isFormulaStart(r) || r == '\'':
				b = append(b, '\'')
				cellStart = false
			case r != '"' && !unicode.IsSpace(r):
				cellStart = false
			}
		}
		switch r {
		case ',', ';', '\t', '\n':
			cellStart = true
		}
		switch {
		case !quote:
			b = append(b, s[i:i+n]...)
		case r == '"':
			b = append(b, '"', '"')
		case r == '\r':
		case r == '\n':
			b = append(b, '\r', '\n')
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	if quote {
		b = append(b, '"')
	}
	return b
}

// cellNeedsQuotes reports whether a text cell is quoted: it holds a
// separator of any of the readings (comma, semicolon, tab), a quote or a
// line break, or it starts with a space (which some readers trim), or it
// is \. (which PostgreSQL's COPY reads as the end of its data), as
// encoding/csv decides for commas.
func cellNeedsQuotes(s string) bool {
	if s == "" {
		return false
	}
	if strings.ContainsAny(s, ",;\t\r\n\"") || s == `\.` {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

// isFormulaStart reports whether a cell starting with r may be a formula
// to a spreadsheet (models.IsFormulaStart: the import reads such cells
// back by the same rule).
func isFormulaStart(r rune) bool { return models.IsFormulaStart(r) }

// maxFilenameSearch is the most characters of the search a file name keeps.
const maxFilenameSearch = 40

// exportFileName names an export by its date (UTC) and filter:
// pets-2026-11-24-status-sold-q-cat.csv. The search keeps its letters and
// digits (any script) with a hyphen for each run of anything else, at most
// maxFilenameSearch characters; see contentDisposition for names that are
// not ASCII.
func exportFileName(l models.PetListing, now time.Time) string {
	name := "pets-" + now.UTC().Format(time.DateOnly)
	if l.Status != "" {
		name += "-status-" + string(l.Status)
	}
	if l.Search != "" {
		q := filenamePart(l.Search)
		if q == "" {
			q = "search" // nothing of it is a letter or a digit, such as "%"
		}
		name += "-q-" + q
	}
	return name + ".csv"
}

// filenamePart keeps the letters, digits and marks of a search (any
// script, composed), with a hyphen for each run of other characters and
// none at either end, cut to maxFilenameSearch characters.
func filenamePart(search string) string {
	var b strings.Builder
	gap := false
	for _, r := range norm.NFC.String(search) {
		if !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.Is(unicode.M, r) {
			gap = b.Len() > 0
			continue
		}
		if gap {
			b.WriteByte('-')
			gap = false
		}
		b.WriteRune(r)
	}
	part := []rune(b.String())
	return strings.TrimRight(string(part[:min(len(part), maxFilenameSearch)]), "-")
}

// contentDisposition is the attachment header of a file name (RFC 6266).
// A name that is not ASCII goes in filename* (UTF-8, percent-encoded, RFC
// 8187), with an ASCII filename beside it for old clients: accents
// dropped, other characters as hyphens.
func contentDisposition(name string) string {
	ascii := asciiFileName(name)
	if ascii == name {
		return `attachment; filename="` + name + `"`
	}
	return `attachment; filename="` + ascii + `"; filename*=UTF-8''` + percentEncode(name)
}

// asciiFileName is name with accents dropped and every other character
// that is not an ASCII letter or digit (nor '-' or '.') as a hyphen; a
// search part left empty is "search".
func asciiFileName(name string) string {
	var b strings.Builder
	for _, r := range norm.NFKD.String(name) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case r < utf8.RuneSelf && (r == '-' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := b.String()
	for strings.Contains(s, "--") {
		s = strings.ReplaceAll(s, "--", "-")
	}
	s = strings.ReplaceAll(s, "-.csv", ".csv")
	return strings.Replace(s, "-q.csv", "-q-search.csv", 1)
}

// percentEncode encodes s as an RFC 8187 value: attr-chars as they are,
// every other byte as %XX.
func percentEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < utf8.RuneSelf && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)) || strings.IndexByte("!#$&+-.^_`|~", c) >= 0) {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}
