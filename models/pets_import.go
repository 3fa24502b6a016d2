package models

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"gorm.io/gorm"

	"petstore/models/internal/background"
)

// CSV imports of pets. A file is read whole (at most MaxImportBytes), its
// rows checked with the add form's rules (PetInput.Validate), and kept in
// the database, gzip'd, under the SHA-256 of its rows (importKey) until
// the member chooses to import its valid rows or cancels: any instance can
// then serve the preview, the import and its progress. The import runs in
// the background, ImportChunk pets per transaction, through the pets' one
// write path (a ChangeImport each); each transaction also moves the
// import's count of rows written forward, so a runner that stops (its
// process died, the database failed) is resumed exactly after the last
// committed chunk, by whoever looks at the import next or uploads the
// same rows again: each row is written once. An import is audited once,
// when it ends, with its count. The ids it gave are kept (import_pets) as
// runs of consecutive ids. It is one undoable action (undo.go), which its
// row names (undo_id) so that whichever runner writes a chunk records the
// chunk's pets under it; its end completes it, and its undo archives the
// pets nobody changed since.

// Limits of an import.
const (
	// MaxImportBytes is the largest file an import reads.
	MaxImportBytes = 20 << 20
	// MaxImportRows is the most data rows a file may hold.
	MaxImportRows = 100_000
	// ImportChunk is how many pets one transaction of an import writes.
	ImportChunk = 1000
	// ImportPreviewRows is how many of the rows to add a preview lists.
	ImportPreviewRows = 50
)

// importLease is how long a runner holds an import without moving its
// lease forward (after every chunk) before another instance may resume
// it; importMinPause and importMaxPause bound the pause between chunks:
// on a loaded machine, where a chunk takes long, a tenth of a second still
// lets every write queued behind it through.
var (
	importLease    = 30 * time.Second
	importMinPause = 5 * time.Millisecond
	importMaxPause = 100 * time.Millisecond
)

// importChunkHook, when set (by tests), is called after each committed
// chunk with the import's progress; an error stops the runner there, as a
// process that dies does.
var importChunkHook atomic.Pointer[func(Import) error]

// ImportState is where an import stands.
type ImportState string

// The states of an import.
const (
	// ImportPreview: uploaded and checked; nothing written yet.
	ImportPreview ImportState = "preview"
	ImportRunning ImportState = "running"
	ImportDone    ImportState = "done"
	// ImportFailed: stopped part way by an error; uploading the same rows
	// again, or starting it again, goes on from where it stopped.
	ImportFailed ImportState = "failed"
)

// Import is a CSV import: its file's rows, and how far writing them got.
type Import struct {
	ID int64
	// ContentHash is importKey of the file's rows, in hex: the same rows
	// are one import.
	ContentHash string
	// FileName is the name the file was uploaded with.
	FileName string
	State    ImportState
	// Actor uploaded the file, then whoever started the import.
	Actor string
	// RowsValid rows of the file are pets to add; RowsInvalid have errors
	// and are skipped.
	RowsValid, RowsInvalid int
	// Done is how many of the valid rows have been written.
	Done       int
	LeaseOwner string
	LeaseUntil *time.Time
	// Error says why a failed import stopped, in words for staff.
	Error      string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	StartedAt  *time.Time
	FinishedAt *time.Time
	// UndoID is the member's undoable action the import's pets are
	// recorded under (undo.go): complete once the import has ended.
	UndoID *int64
}

// importFile is an import's file, gzip'd.
type importFile struct {
	ImportID int64 `gorm:"primaryKey;autoIncrement:false"`
	Data     []byte
}

func (importFile) TableName() string { return "import_files" }

// ImportRowError is one problem of one row: its row number in the file
// (the header is row 1, as a spreadsheet numbers it), the field, and the
// add form's message.
type ImportRowError struct {
	Row     int
	Field   string
	Message string
}

// ImportRow is a valid row: its row number and the pet it adds.
type ImportRow struct {
	Row int
	Pet NewPet
}

// ImportCheck is what a file holds: how many rows are valid and invalid,
// the first ImportPreviewRows valid ones, and every row's errors.
type ImportCheck struct {
	Valid, Invalid int
	Rows           []ImportRow
	Errors         []ImportRowError
}

// importState is what the Store keeps of imports in this process: the
// runner of the imports it runs.
type importState struct {
	bg background.Runner
	// sweep looks for imports whose runner stopped (ResumeImportsEvery).
	sweep background.Runner
}

// FieldRow is the field of an ImportRowError about the row as a whole.
const FieldRow = "row"

// importColumnsHelp ends every message about a file's columns.
const importColumnsHelp = " The first row must name the columns: name, category_id and, if you like, status" +
	" (or the export's own id, name, category_id, status, created_at, updated_at). Nothing was imported."

// importFileError is a file refused as a whole.
func importFileError(msg string) error {
	return &Error{Code: CodeInvalidRequest, Message: msg}
}

// ErrImportTooLarge is the message of a file over MaxImportBytes.
var ErrImportTooLarge = importFileError(fmt.Sprintf(
	"The file is larger than %d MiB: split it into smaller files and import each. Nothing was imported.", MaxImportBytes>>20))

// importColumns are the columns an import knows, by header name; the
// export's id and times are read and never applied (an import adds pets).
var importColumns = map[string]string{
	"id": "id", "name": "name", "category_id": "category_id", "categoryid": "category_id", "status": "status",
	"created_at": "created_at", "updated_at": "updated_at",
}

// importLayout is where a file's columns are: the index of each, -1 when
// absent, and how many the header names.
type importLayout struct {
	name, category, status, width int
	comma                         rune
}

// readImportHeader reads the file's header line: its delimiter (a
// semicolon when the line holds more semicolons than commas, as
// spreadsheets of many locales write them; else a comma) and its columns.
func readImportHeader(line []byte) (importLayout, error) {
	l := importLayout{name: -1, category: -1, status: -1, comma: ','}
	if bytes.Count(line, []byte{';'}) > bytes.Count(line, []byte{','}) {
		l.comma = ';'
	}
	r := csv.NewReader(bytes.NewReader(line))
	r.Comma = l.comma
	header, err := r.Read()
	if err != nil {
		return l, importFileError("The first row of the file could not be read as column names." + importColumnsHelp)
	}
	l.width = len(header)
	seen := map[string]bool{}
	for i, h := range header {
		col, ok := importColumns[strings.ToLower(strings.TrimSpace(h))]
		if !ok {
			return l, importFileError(fmt.Sprintf("The file has a column this import does not read: %s.", strconv.Quote(truncate(h, 40))) + importColumnsHelp)
		}
		if seen[col] {
			return l, importFileError(fmt.Sprintf("The file has the column %s twice.", col) + importColumnsHelp)
		}
		seen[col] = true
		switch col {
		case "name":
			l.name = i
		case "category_id":
			l.category = i
		case "status":
			l.status = i
		}
	}
	switch {
	case l.name < 0:
		return l, importFileError("The file has no name column." + importColumnsHelp)
	case l.category < 0:
		return l, importFileError("The file has no category_id column." + importColumnsHelp)
	}
	return l, nil
}

// importHead is how much of a file is looked at before its rows are read:
// its header line, and whether it is text at all.
const importHead = 64 << 10

// errNotText refuses a file that is not UTF-8 text.
var errNotText = importFileError("This is not a CSV text file: it holds binary data, or text that is not UTF-8." +
	" Save the sheet as \"CSV UTF-8\" and try again. Nothing was imported.")

// errStopScan stops a scan early, without an error, from each.
var errStopScan = errors.New("stop the scan")

// scanImport reads a file from in, a row at a time (memory does not grow
// with the file), and calls each with every data row that is not blank:
// its row number, and the pet it adds or its errors; an error from each
// stops it (errStopScan without an error). It returns importKey of the
// rows, or an error (CodeInvalidRequest, a message for staff) for a file
// refused as a whole: empty, binary or not UTF-8, with unknown or missing
// columns, not CSV, larger than MaxImportBytes or with more than
// MaxImportRows rows. A failure of in itself is returned wrapped. The
// file is UTF-8, with or without a byte order mark.
func scanImport(in io.Reader, each func(row int, p NewPet, errs []FieldError) error) ([sha256.Size]byte, error) {
	var key [sha256.Size]byte
	counted := &countingReader{r: io.LimitReader(in, MaxImportBytes+1)}
	br := bufio.NewReaderSize(counted, importHead)
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
	}
	head, err := br.Peek(importHead)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return key, fmt.Errorf("read the file: %w", err)
	}
	if len(bytes.TrimSpace(head)) == 0 {
		return key, importFileError("The file is empty: there is nothing to import.")
	}
	if len(head) == importHead {
		// Its last character may be cut: leave it to the rows' check.
		i := len(head) - 1
		for i > 0 && !utf8.RuneStart(head[i]) {
			i--
		}
		head = head[:i]
	}
	if bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(head) {
		return key, errNotText
	}
	line, _, _ := bytes.Cut(head, []byte{'\n'})
	l, err := readImportHeader(line)
	if err != nil {
		return key, err
	}
	r := csv.NewReader(br)
	r.Comma, r.FieldsPerRecord, r.ReuseRecord = l.comma, -1, true
	if _, err := r.Read(); err != nil {
		return key, importFileError("The first row of the file could not be read as column names." + importColumnsHelp)
	}
	h := sha256.New()
	h.Write([]byte("petstore import v1\n"))
	rows := 0
	for {
		rec, err := r.Read()
		if counted.n > MaxImportBytes {
			return key, ErrImportTooLarge
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) && isCSVSyntax(pe.Err) {
				return key, importFileError(fmt.Sprintf("The file is not valid CSV: line %d: %v. Nothing was imported.", pe.Line, pe.Err))
			}
			return key, fmt.Errorf("read the file: %w", err)
		}
		if blankRecord(rec) {
			continue
		}
		for _, c := range rec {
			if strings.IndexByte(c, 0) >= 0 || !utf8.ValidString(c) {
				return key, errNotText
			}
		}
		rows++
		if rows > MaxImportRows {
			return key, importFileError(fmt.Sprintf("The file has more than %s rows: split it into files of at most %s rows and import each. Nothing was imported.",
				groupThousands(MaxImportRows), groupThousands(MaxImportRows)))
		}
		line, _ := r.FieldPos(0)
		var p NewPet
		var fields []FieldError
		if len(rec) != l.width {
			writeKeyPart(h, strings.Join(rec, "\x1f"), "", "")
			fields = []FieldError{{FieldRow, fmt.Sprintf("This row has %d cells where the first row names %d columns.", len(rec), l.width)}}
		} else {
			in := PetInput{Name: ReadTextCell(rec[l.name]), CategoryID: rec[l.category]}
			status := ""
			if l.status >= 0 {
				if status = strings.TrimSpace(rec[l.status]); status != "" {
					in.Status = &status
				}
			}
			writeKeyPart(h, in.Name, strings.TrimSpace(in.CategoryID), status)
			var e *Error
			if p, err = in.Validate(); errors.As(err, &e) {
				fields = e.Fields
			}
		}
		if err := each(line, p, fields); err == errStopScan {
			return key, nil
		} else if err != nil {
			return key, err
		}
	}
	if rows == 0 {
		return key, importFileError("The file has column names but no rows: there is nothing to import.")
	}
	h.Sum(key[:0])
	return key, nil
}

// isCSVSyntax reports an encoding/csv error about the file's text (a
// stray or missing quote, a field count), rather than about reading it.
func isCSVSyntax(err error) bool {
	return errors.Is(err, csv.ErrBareQuote) || errors.Is(err, csv.ErrQuote) || errors.Is(err, csv.ErrFieldCount)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// writeKeyPart adds a row's cells to importKey, each with its length, so
// that no two different rows write the same bytes.
func writeKeyPart(h io.Writer, cells ...string) {
	for _, c := range cells {
		fmt.Fprintf(h, "%d:%s", len(c), c)
	}
	h.Write([]byte{'\n'})
}

// blankRecord reports a row whose every cell is empty or white space, as
// spreadsheets write below a sheet's last row; it is skipped.
func blankRecord(rec []string) bool {
	for _, c := range rec {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

// groupThousands writes n with commas between thousands: 100,000.
func groupThousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// ReadTextCell reads back a text cell of the export: the export (the
// console's CSV) puts a ' wherever a spreadsheet could start a cell before
// a formula character (IsFormulaStart) or a ' already there, and before a
// leading tab; taking away each of those gives the text back exactly. A
// ' elsewhere, or before any other character, is text and kept, so a
// sheet typed by hand reads as typed ('Tis stays 'Tis).
func ReadTextCell(v string) string {
	if !strings.Contains(v, "'") {
		return v
	}
	var b strings.Builder
	b.Grow(len(v))
	cellStart := true
	for i := 0; i < len(v); {
		r, n := utf8.DecodeRuneInString(v[i:])
		if cellStart && r == '\'' && i+1 < len(v) {
			next, _ := utf8.DecodeRuneInString(v[i+1:])
			if IsFormulaStart(next) || next == '\'' || (i == 0 && next == '\t') {
				// The export's ': drop it and keep what it guards.
				i += n
				r, n = next, utf8.RuneLen(next)
				if r != '\t' {
					b.WriteString(v[i : i+n])
					i += n
					cellStart = false
					continue
				}
			}
		}
		if cellStart && r != '"' && !unicode.IsSpace(r) {
			cellStart = false
		}
		switch r {
		case ',', ';', '\t', '\n':
			cellStart = true
		}
		b.WriteString(v[i : i+n])
		i += n
	}
	return b.String()
}

// CheckImport reads a file as an import would and says what it holds
// (ImportCheck), without writing anything, and returns importKey of its
// rows; a file refused as a whole is an error with the reason.
func CheckImport(in io.Reader) (ImportCheck, [sha256.Size]byte, error) {
	var c ImportCheck
	key, err := scanImport(in, func(row int, p NewPet, errs []FieldError) error {
		if errs != nil {
			c.Invalid++
			for _, f := range errs {
				c.Errors = append(c.Errors, ImportRowError{Row: row, Field: f.Field, Message: f.Message})
			}
			return nil
		}
		c.Valid++
		if len(c.Rows) < ImportPreviewRows {
			c.Rows = append(c.Rows, ImportRow{Row: row, Pet: p})
		}
		return nil
	})
	return c, key, err
}

// UploadImport checks an uploaded file and keeps it for its import,
// returning the import and what the file holds. A file whose rows were
// uploaded before (the same content, whatever its name, delimiter, byte
// order mark, ids or times) is the import already kept for them, in
// whatever state it is: done (nothing more will be added), running, or
// waiting for its member's choice. Nothing is written for a file refused
// as a whole, and no pet is written by an upload.
func (s *Store) UploadImport(ctx context.Context, fileName string, in io.Reader, actor string) (Import, ImportCheck, error) {
	// The file is read once, a row at a time, and kept gzip'd as it is read.
	var packed bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&packed, gzip.BestSpeed) // a valid level: no error
	check, key, err := CheckImport(io.TeeReader(in, zw))
	if err != nil {
		return Import{}, ImportCheck{}, err
	}
	if err := zw.Close(); err != nil {
		return Import{}, ImportCheck{}, err
	}
	hash := hex.EncodeToString(key[:])
	if err := s.purgeStalePreviews(ctx); err != nil {
		return Import{}, ImportCheck{}, err
	}
	if imp, ok, err := s.importByHash(ctx, hash); err != nil || ok {
		return imp, check, err
	}
	now := s.now()
	imp := Import{ContentHash: hash, FileName: truncate(fileName, 255), State: ImportPreview, Actor: actor,
		RowsValid: check.Valid, RowsInvalid: check.Invalid, CreatedAt: now, UpdatedAt: now}
	err = s.transaction(ctx, func(tx *gorm.DB) error {
		imp.ID = 0
		if err := tx.Create(&imp).Error; err != nil {
			return err
		}
		return tx.Create(&importFile{ImportID: imp.ID, Data: packed.Bytes()}).Error
	})
	if isDuplicate(err) {
		// The same rows, uploaded at the same moment by someone else.
		other, ok, rerr := s.importByHash(ctx, hash)
		if rerr == nil && ok {
			return other, check, nil
		}
	}
	if err != nil {
		return Import{}, ImportCheck{}, s.dbErr("keep import", err)
	}
	return imp, check, nil
}

// importPreviewKept is how long an import nobody started or cancelled
// keeps its file.
const importPreviewKept = 24 * time.Hour

// purgeStalePreviews forgets the imports left in preview for longer than
// importPreviewKept, and their files.
func (s *Store) purgeStalePreviews(ctx context.Context) error {
	before := s.now().Add(-importPreviewKept)
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		if err := tx.Exec("DELETE FROM import_files WHERE import_id IN (SELECT id FROM imports WHERE state = ? AND updated_at < ?)",
			string(ImportPreview), before).Error; err != nil {
			return err
		}
		return tx.Exec("DELETE FROM imports WHERE state = ? AND updated_at < ?", string(ImportPreview), before).Error
	})
	return s.dbErr("forget old imports", err)
}

// importByHash returns the import of the rows whose importKey is hash, if
// there is one.
func (s *Store) importByHash(ctx context.Context, hash string) (Import, bool, error) {
	var imps []Import
	if err := s.db.WithContext(ctx).Where("content_hash = ?", hash).Limit(1).Find(&imps).Error; err != nil {
		return Import{}, false, s.dbErr("read imports", err)
	}
	if len(imps) == 0 {
		return Import{}, false, nil
	}
	imp, err := s.resumeOrphan(ctx, imps[0])
	return imp, true, err
}

// GetImport returns the import id. A running import whose runner died
// (its lease ran out) is resumed here first, by this process.
func (s *Store) GetImport(ctx context.Context, id int64) (Import, error) {
	var imp Import
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&imp).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Import{}, notFound("import", id)
	}
	if err != nil {
		return Import{}, s.dbErr("read import", err)
	}
	return s.resumeOrphan(ctx, imp)
}

// CheckKeptImport reads an import's kept file again: what it holds, for
// its preview. An import that is done keeps no file.
func (s *Store) CheckKeptImport(ctx context.Context, id int64) (ImportCheck, error) {
	in, err := s.importData(ctx, id)
	if err != nil {
		return ImportCheck{}, err
	}
	check, _, err := CheckImport(in)
	return check, err
}

// importData returns a reader of an import's file, unpacking it as it is
// read.
func (s *Store) importData(ctx context.Context, id int64) (io.Reader, error) {
	var f importFile
	err := s.db.WithContext(ctx).Where("import_id = ?", id).Take(&f).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, &Error{Code: CodeNotFound, Message: "The file of this import is no longer kept: upload it again."}
	}
	if err != nil {
		return nil, s.dbErr("read import file", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(f.Data))
	if err != nil {
		return nil, fmt.Errorf("unpack import file: %w", err)
	}
	return zr, nil
}

// StartImport starts writing the valid rows of import id in the background
// for actor: an import waiting in preview, or one that failed part way
// (which goes on from where it stopped). An import already running or
// done is returned as it stands, and nothing else starts: of two members
// confirming at once, one starts it.
func (s *Store) StartImport(ctx context.Context, id int64, actor string) (Import, error) {
	now := s.now()
	owner, until := rand.Text(), now.Add(importLease)
	// In a transaction, which is tried again when InnoDB picks it as a
	// deadlock's victim (two members confirming while the runner writes).
	var started bool
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		res := tx.Exec("UPDATE imports SET state = ?, actor = ?, lease_owner = ?, lease_until = ?, error = '', started_at = ?, updated_at = ?"+
			" WHERE id = ? AND state IN (?, ?)", string(ImportRunning), actor, owner, until, now, now, id, string(ImportPreview), string(ImportFailed))
		if started = res.RowsAffected == 1; !started || res.Error != nil {
			return res.Error
		}
		return s.startImportUndo(tx, id, actor)
	})
	if err != nil {
		return Import{}, s.dbErr("start import", err)
	}
	if !started {
		return s.GetImport(ctx, id)
	}
	imp, err := s.GetImport(ctx, id)
	if err != nil {
		return Import{}, err
	}
	if imp.LeaseOwner == owner {
		s.runImportInBackground(imp)
	}
	return imp, nil
}

// startImportUndo records, within tx, the undoable action import id's pets
// go under, not complete until the import ends (endImport). An import
// that starts again after failing goes on under its action, reopened,
// unless that was undone or purged meanwhile: its rest is then a new
// action.
func (s *Store) startImportUndo(tx *gorm.DB, id int64, actor string) error {
	var imp Import
	if err := tx.Where("id = ?", id).Take(&imp).Error; err != nil {
		return err
	}
	if imp.UndoID != nil {
		res := tx.Exec("UPDATE undo_actions SET completed_at = NULL, summary = ? WHERE id = ? AND undone_at IS NULL AND actor = ?",
			importUndoSummary(imp, 0), *imp.UndoID, actor)
		if res.Error != nil || res.RowsAffected == 1 {
			return res.Error
		}
	}
	act, err := s.newUndoAction(tx, UndoImport, actor, importUndoSummary(imp, 0), false, 0)
	if err != nil {
		return err
	}
	return tx.Exec("UPDATE imports SET undo_id = ? WHERE id = ?", act.ID, id).Error
}

// importUndoSummary says what an import did, as its action's summary:
// "Importing stock.csv" while it runs, "Imported 950 pets from stock.csv"
// once n were written.
func importUndoSummary(imp Import, n int) string {
	if imp.State == ImportRunning || imp.State == ImportPreview {
		return "Importing " + imp.FileName
	}
	return fmt.Sprintf("Imported %s from %s", plural(n, "pet", "pets"), imp.FileName)
}

// completeImportUndo marks the action of import imp, ended within tx,
// complete: its window starts, with the count of pets recorded under it.
func (s *Store) completeImportUndo(tx *gorm.DB, imp Import, now time.Time) error {
	if imp.UndoID == nil {
		return nil
	}
	var n int64
	if err := tx.Raw("SELECT COUNT(*) FROM undo_items WHERE action_id = ?", *imp.UndoID).Scan(&n).Error; err != nil {
		return err
	}
	return tx.Exec("UPDATE undo_actions SET completed_at = ?, total = ?, summary = ? WHERE id = ? AND completed_at IS NULL",
		now, n, truncate(importUndoSummary(imp, int(n)), 500), *imp.UndoID).Error
}

// ImportUndoID returns the undoable action of import id, 0 if it has
// none.
func (s *Store) ImportUndoID(ctx context.Context, id int64) (int64, error) {
	imp, err := s.GetImport(ctx, id)
	if err != nil || imp.UndoID == nil {
		return 0, err
	}
	return *imp.UndoID, nil
}

// CancelImport forgets an import waiting in preview and its file: nothing
// was written, and nothing will be. An import that has started cannot be
// cancelled (CodeConflict).
func (s *Store) CancelImport(ctx context.Context, id int64) error {
	var gone bool
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		res := tx.Exec("DELETE FROM imports WHERE id = ? AND state = ?", id, string(ImportPreview))
		if res.Error != nil {
			return res.Error
		}
		gone = res.RowsAffected == 1
		if !gone {
			return nil
		}
		return tx.Exec("DELETE FROM import_files WHERE import_id = ?", id).Error
	})
	if err != nil {
		return s.dbErr("cancel import", err)
	}
	if !gone {
		if _, err := s.GetImport(ctx, id); err != nil {
			return err
		}
		return &Error{Code: CodeConflict, Message: "This import has already started, so it can no longer be cancelled."}
	}
	return nil
}

// ImportedIDs returns the runs of pet ids import id gave, lowest first,
// each as its first and last id.
func (s *Store) ImportedIDs(ctx context.Context, id int64) ([][2]int64, error) {
	var runs []struct{ FirstID, LastID int64 }
	err := s.db.WithContext(ctx).Table("import_pets").Select("first_id", "last_id").Where("import_id = ?", id).Order("first_id").Find(&runs).Error
	if err != nil {
		return nil, s.dbErr("read imported ids", err)
	}
	out := make([][2]int64, len(runs))
	for i, r := range runs {
		out[i] = [2]int64{r.FirstID, r.LastID}
	}
	return out, nil
}

// WaitImports waits for the imports this Store runs to end, for tests.
func (s *Store) WaitImports() { s.imports.bg.Wait() }

// resumeOrphan takes over a running import whose lease ran out (the
// process running it died) and resumes it in this process; any other
// import is returned as it is.
func (s *Store) resumeOrphan(ctx context.Context, imp Import) (Import, error) {
	now := s.now()
	if imp.State != ImportRunning || imp.LeaseUntil == nil || !imp.LeaseUntil.Before(now) {
		return imp, nil
	}
	owner, until := rand.Text(), now.Add(importLease)
	var taken bool
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		res := tx.Exec("UPDATE imports SET lease_owner = ?, lease_until = ?, updated_at = ? WHERE id = ? AND state = ? AND lease_owner = ?",
			owner, until, now, imp.ID, string(ImportRunning), imp.LeaseOwner)
		taken = res.RowsAffected == 1
		return res.Error
	})
	if err != nil {
		return imp, s.dbErr("resume import", err)
	}
	if taken {
		imp.LeaseOwner, imp.LeaseUntil, imp.UpdatedAt = owner, &until, now
		s.log.Info("resuming an import whose runner stopped", "import", imp.ID, "done", imp.Done, "of", imp.RowsValid)
		s.runImportInBackground(imp)
	}
	return imp, nil
}

// resumeImportsEvery is how often a serving instance looks for imports
// whose runner stopped.
const resumeImportsEvery = time.Minute

// ResumeImportsEvery resumes, now and every resumeImportsEvery until the
// Store closes, the running imports whose lease ran out (the process
// running them died), so that an import goes on without anyone opening its
// page. Instances that look at once resume each import once: resumeOrphan
// takes it over with a conditional UPDATE of its lease.
func (s *Store) ResumeImportsEvery() {
	s.imports.sweep.Start(func(ctx context.Context) {
		t := time.NewTicker(resumeImportsEvery)
		defer t.Stop()
		for {
			if err := s.resumeOrphans(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("could not look for stopped imports", "error", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}

// resumeOrphans resumes every running import whose lease ran out.
func (s *Store) resumeOrphans(ctx context.Context) error {
	var imps []Import
	err := s.db.WithContext(ctx).Where("state = ? AND lease_until < ?", string(ImportRunning), s.now()).Order("id").Find(&imps).Error
	if err != nil {
		return s.dbErr("read stopped imports", err)
	}
	for _, imp := range imps {
		if _, err := s.resumeOrphan(ctx, imp); err != nil {
			return err
		}
	}
	return nil
}

// runImportInBackground runs imp on this Store's runner; when the Store
// is closing, the lease runs out and another instance resumes it.
func (s *Store) runImportInBackground(imp Import) {
	if !s.imports.bg.Start(func(ctx context.Context) { s.runImport(ctx, imp) }) {
		s.log.Warn("import not run: the store is closing", "import", imp.ID)
	}
}

// errImportLeaseLost stops a runner whose import another runner took.
var errImportLeaseLost = errors.New("import lease lost")

// runImport writes imp's valid rows from imp.Done on, ImportChunk a
// transaction, reading its file again a row at a time (memory does not
// grow with the file), with a pause after each chunk half as long as it
// took, up to importMaxPause (so the database's writer stays free for
// everyone else between chunks while a file of MaxImportRows still goes
// in within a minute), then ends it.
func (s *Store) runImport(ctx context.Context, imp Import) {
	in, err := s.importData(ctx, imp.ID)
	if err == nil {
		skip := imp.Done
		chunk := make([]NewPet, 0, ImportChunk)
		write := func() error {
			start := time.Now()
			if err := retry(ctx, func() error { return s.importChunk(ctx, &imp, chunk) }); err != nil {
				return err
			}
			chunk = chunk[:0]
			if hook := importChunkHook.Load(); hook != nil {
				if err := (*hook)(imp); err != nil {
					return errImportStopped
				}
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(min(max(importMinPause, time.Since(start)/2), importMaxPause)):
				return nil
			}
		}
		valid := 0
		_, err = scanImport(in, func(_ int, p NewPet, errs []FieldError) error {
			if errs != nil {
				return nil
			}
			if valid++; valid <= skip {
				return nil
			}
			if chunk = append(chunk, p); len(chunk) == ImportChunk {
				return write()
			}
			return nil
		})
		if err == nil && len(chunk) > 0 {
			err = write()
		}
		if err == nil && imp.Done != imp.RowsValid {
			err = fmt.Errorf("import %d: wrote %d of %d valid rows: the file has %d", imp.ID, imp.Done, imp.RowsValid, valid)
		}
	}
	switch {
	case errors.Is(err, errImportLeaseLost) || errors.Is(err, errImportStopped):
		return // whoever took it goes on
	case ctx.Err() != nil:
		return // the server stops: the lease runs out, and another instance resumes it
	case err != nil:
		s.log.Error("import", "import", imp.ID, "done", imp.Done, "err", err)
		err = s.endImport(context.WithoutCancel(ctx), imp, "The database failed part way.")
	default:
		err = s.endImport(context.WithoutCancel(ctx), imp, "")
	}
	if err != nil {
		s.log.Error("end import", "import", imp.ID, "err", err)
	}
}

// errImportStopped stops a runner as a test hook asks, as if its process
// had died.
var errImportStopped = errors.New("import runner stopped")

// importChunk writes pets, the valid rows imp.Done on, in one transaction:
// first it moves the import's count forward over the count it read (a
// runner that lost its lease, or a chunk already written, changes
// nothing), then the pets through the one change path (as a seed writes
// them: multi-row inserts, impliedRows, their feed events), then the runs
// of ids they were given.
func (s *Store) importChunk(ctx context.Context, imp *Import, pets []NewPet) error {
	tx, err := s.sqlDB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	exec := preparedExec(ctx, tx)
	now := s.now()
	until := now.Add(importLease)
	res, err := exec("UPDATE imports SET done = ?, lease_until = ?, updated_at = ? WHERE id = ? AND lease_owner = ? AND state = ? AND done = ?",
		[]any{imp.Done + len(pets), until, now, imp.ID, imp.LeaseOwner, string(ImportRunning), imp.Done})
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return errImportLeaseLost
	}
	var undo *UndoAction
	if imp.UndoID != nil {
		undo = &UndoAction{ID: *imp.UndoID}
	}
	changes := make([]PetChange, len(pets))
	for i, p := range pets {
		changes[i] = newPetChange(ChangeImport, p, now, imp.Actor)
		changes[i].Undo = undo
	}
	ids, err := s.insertImportPets(ctx, tx, exec, changes)
	if err != nil {
		return err
	}
	var rows impliedRows
	for i, ch := range changes {
		if err := rows.add(i, ch); err != nil {
			return err
		}
	}
	if err := s.writeImpliedBulk(exec, &rows, ids); err != nil {
		return err
	}
	// Only the import's sink records undo items (the API's creates and
	// seeds carry no action), seedRows a statement as the pets go in.
	for u, per := rows.undo, seedRows(s.driver); len(u) > 0; u = u[min(per, len(u)):] {
		if err := writeUndoItems(ctx, tx, u[:min(per, len(u))], ids); err != nil {
			return err
		}
	}
	lastEvent, err := s.writeEvents(ctx, tx, exec, rows.events, ids)
	if err != nil {
		return err
	}
	if err := insertIDRuns(exec, imp.ID, ids); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.feed.advance(lastEvent)
	imp.Done += len(pets)
	imp.LeaseUntil, imp.UpdatedAt = &until, now
	return nil
}

// insertImportPets inserts the pets of changes and returns their ids in
// order: in multi-row inserts where those take consecutive ids (SQLite's
// one writer; MySQL with consecutiveIDs), else one INSERT per pet, each
// reading its own id, as the API's creates do on such a server (Galera):
// the service runs meanwhile, and other inserts may take ids between ours.
func (s *Store) insertImportPets(ctx context.Context, tx *sql.Tx, exec execFunc, changes []PetChange) ([]int64, error) {
	if s.driver != DriverMySQL || s.server.consecutiveIDs {
		return s.insertSeedPets(exec, changes, 1)
	}
	var step int64 = 1
	if err := tx.QueryRowContext(ctx, "SELECT @@auto_increment_increment").Scan(&step); err != nil {
		return nil, err
	}
	ids := make([]int64, 0, len(changes))
	for i := range changes {
		one, err := s.insertSeedPets(exec, changes[i:i+1], step)
		if err != nil {
			return nil, err
		}
		ids = append(ids, one...)
	}
	return ids, nil
}

// insertIDRuns records the ids an import gave as runs of consecutive ids.
func insertIDRuns(exec execFunc, importID int64, ids []int64) error {
	var args []any
	n := 0
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		args = append(args, importID, ids[i], ids[j])
		n++
		i = j + 1
	}
	for len(args) > 0 {
		k := min(n, 500)
		q := "INSERT INTO import_pets (import_id, first_id, last_id) VALUES " + strings.Repeat("(?,?,?),", k-1) + "(?,?,?)"
		if _, err := exec(q, args[:3*k]); err != nil {
			return err
		}
		args, n = args[3*k:], n-k
	}
	return nil
}

// endImport ends imp, as done when why is "" and else as failed for that
// reason, with its audit event, in one transaction; the file of a done
// import is no longer kept. An import its runner no longer holds is left.
func (s *Store) endImport(ctx context.Context, imp Import, why string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	state := ImportDone
	if why != "" {
		state = ImportFailed
	}
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		now := s.now()
		res := tx.Exec("UPDATE imports SET state = ?, error = ?, lease_owner = '', lease_until = NULL, finished_at = ?, updated_at = ? WHERE id = ? AND state = ? AND lease_owner = ?",
			string(state), why, now, now, imp.ID, string(ImportRunning), imp.LeaseOwner)
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		var ended Import
		if err := tx.Where("id = ?", imp.ID).Take(&ended).Error; err != nil {
			return err
		}
		var span struct{ First, Last int64 }
		if err := tx.Table("import_pets").Select("MIN(first_id) AS first, MAX(last_id) AS last").Where("import_id = ?", imp.ID).Take(&span).Error; err != nil {
			return err
		}
		ev := AuditEvent{At: now, Actor: ended.Actor, ActorKind: ActorKindOf(ended.Actor), Action: ActionPetsImported, TargetType: TargetPet,
			Detail: truncate(importDetail(ended, span.First, span.Last), 500)}
		if err := tx.Create(&ev).Error; err != nil {
			return err
		}
		// A failed import's pets may be undone too; starting it again
		// reopens the action.
		if err := s.completeImportUndo(tx, ended, now); err != nil {
			return err
		}
		if state != ImportDone {
			return nil
		}
		return tx.Exec("DELETE FROM import_files WHERE import_id = ?", imp.ID).Error
	})
	if err != nil {
		return s.dbErr("end import", err)
	}
	if state == ImportDone {
		if _, err := s.CompactPetStatusCounts(ctx); err != nil {
			s.log.Warn("compact status counts after an import", "err", err)
		}
	}
	return nil
}

// importDetail is an import's audit detail, such as `imported 950 pets
// from "stock.csv", ids 101 to 1050 (50 rows with errors skipped)`.
func importDetail(imp Import, first, last int64) string {
	var b strings.Builder
	if imp.State == ImportFailed {
		fmt.Fprintf(&b, "imported %d of %d pets from %s before it stopped (%s)", imp.Done, imp.RowsValid, strconv.Quote(imp.FileName), imp.Error)
	} else {
		fmt.Fprintf(&b, "imported %s from %s", plural(imp.Done, "pet", "pets"), strconv.Quote(imp.FileName))
	}
	if imp.Done > 0 {
		fmt.Fprintf(&b, ", ids %d to %d", first, last)
	}
	if imp.RowsInvalid > 0 {
		fmt.Fprintf(&b, " (%s with errors skipped)", plural(imp.RowsInvalid, "row", "rows"))
	}
	return b.String()
}
