package models_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

// importFile builds a sheet: the header, then one line per row, with CRLF
// line ends as spreadsheets write them.
func importFile(header string, rows ...string) []byte {
	return []byte(header + "\r\n" + strings.Join(rows, "\r\n") + "\r\n")
}

func TestCheckImport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		data   []byte
		valid  []models.NewPet
		errors []models.ImportRowError
	}{
		{"the export's own file", importFile("id,name,category_id,status,created_at,updated_at",
			"7,Rex,1,sold,2026-01-02T03:04:05Z,2026-01-02T03:04:05Z", "8,\"Luna, the cat\",2,pending,,"),
			[]models.NewPet{{Name: "Rex", CategoryID: 1, Status: models.StatusSold}, {Name: "Luna, the cat", CategoryID: 2, Status: models.StatusPending}}, nil},
		{"a sheet without status: available", importFile("name,category_id", "Rex,3", "Mochi 🐾,4"),
			[]models.NewPet{{Name: "Rex", CategoryID: 3, Status: models.StatusAvailable}, {Name: "Mochi 🐾", CategoryID: 4, Status: models.StatusAvailable}}, nil},
		{"columns in any order and case, empty status", importFile("Status,Category_ID,NAME", ",5,Rex", "sold,6,Luna"),
			[]models.NewPet{{Name: "Rex", CategoryID: 5, Status: models.StatusAvailable}, {Name: "Luna", CategoryID: 6, Status: models.StatusSold}}, nil},
		{"byte order mark", append([]byte("\xef\xbb\xbf"), importFile("name,category_id", "Pépé,1")...),
			[]models.NewPet{{Name: "Pépé", CategoryID: 1, Status: models.StatusAvailable}}, nil},
		{"semicolons, as a French Excel writes", importFile("name;category_id;status", "Rex, le chien;1;sold", "\"Luna; the cat\";2;"),
			[]models.NewPet{{Name: "Rex, le chien", CategoryID: 1, Status: models.StatusSold}, {Name: "Luna; the cat", CategoryID: 2, Status: models.StatusAvailable}}, nil},
		{"LF line ends, blank rows skipped", []byte("name,category_id\nRex,1\n\n,\nLuna,2"),
			[]models.NewPet{{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable}, {Name: "Luna", CategoryID: 2, Status: models.StatusAvailable}}, nil},
		{"a formula-looking name is kept as text", importFile("name,category_id", `"=HYPERLINK(""http://x.example"",""click"")",1`, "+1,2", "@SUM(A1),3"),
			[]models.NewPet{{Name: `=HYPERLINK("http://x.example","click")`, CategoryID: 1, Status: models.StatusAvailable},
				{Name: "+1", CategoryID: 2, Status: models.StatusAvailable}, {Name: "@SUM(A1)", CategoryID: 3, Status: models.StatusAvailable}}, nil},
		{"the export's neutralised cells read back", importFile("name,category_id", "'=1+1,1", "'-5 kg,2", "''Tis,3", "'Tis,4", "\"'\tTab\",5"),
			[]models.NewPet{{Name: "=1+1", CategoryID: 1, Status: models.StatusAvailable}, {Name: "-5 kg", CategoryID: 2, Status: models.StatusAvailable},
				{Name: "'Tis", CategoryID: 3, Status: models.StatusAvailable}, {Name: "'Tis", CategoryID: 4, Status: models.StatusAvailable},
				{Name: "Tab", CategoryID: 5, Status: models.StatusAvailable}}, nil},
		{"every row's errors, with the add form's messages", importFile("name,category_id,status",
			"Rex,1,sold", ",0,lost", "Luna,abc,", strings.Repeat("x", 256)+",2,pending", "Milo,3", "Kiwi,4,sold"),
			[]models.NewPet{{Name: "Rex", CategoryID: 1, Status: models.StatusSold}, {Name: "Kiwi", CategoryID: 4, Status: models.StatusSold}},
			[]models.ImportRowError{
				{Row: 3, Field: models.FieldName, Message: "Name is required."},
				{Row: 3, Field: models.FieldCategoryID, Message: "Category ID must be a positive whole number, such as 1 or 42."},
				{Row: 3, Field: models.FieldStatus, Message: models.StatusMessage},
				{Row: 4, Field: models.FieldCategoryID, Message: "Category ID must be a positive whole number, such as 1 or 42."},
				{Row: 5, Field: models.FieldName, Message: "Name must be at most 255 characters."},
				{Row: 6, Field: models.FieldRow, Message: "This row has 2 cells where the first row names 3 columns."},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, err := models.CheckImport(bytes.NewReader(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			var got []models.NewPet
			for _, r := range c.Rows {
				got = append(got, r.Pet)
			}
			if !slices.Equal(got, tt.valid) {
				t.Errorf("rows = %+v, want %+v", got, tt.valid)
			}
			if !slices.Equal(c.Errors, tt.errors) {
				t.Errorf("errors = %+v, want %+v", c.Errors, tt.errors)
			}
			if c.Valid != len(tt.valid) {
				t.Errorf("valid = %d, want %d", c.Valid, len(tt.valid))
			}
		})
	}
}

func TestCheckImportRowNumbers(t *testing.T) {
	t.Parallel()
	// A cell over two lines takes two of the file's lines (and is refused,
	// as the add form refuses a line break); the row after it is numbered
	// by the line it starts on, as a text editor shows it.
	c, _, err := models.CheckImport(bytes.NewReader(importFile("name,category_id", "\"Two\nlines\",1", ",2")))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Errors) != 2 || c.Errors[0].Row != 2 || c.Errors[1].Row != 4 {
		t.Fatalf("errors = %+v, want one on row 2, one on row 4", c.Errors)
	}
}

func TestCheckImportBadFiles(t *testing.T) {
	t.Parallel()
	many := &bytes.Buffer{}
	many.WriteString("name,category_id\n")
	for i := range models.MaxImportRows + 1 {
		fmt.Fprintf(many, "Pet %d,1\n", i)
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "The file is empty"},
		{"white space", []byte(" \r\n\r\n"), "The file is empty"},
		{"a byte order mark alone", []byte("\xef\xbb\xbf"), "The file is empty"},
		{"a header alone", []byte("name,category_id\r\n"), "column names but no rows"},
		{"binary: NUL bytes", []byte("name,category_id\nRex\x00,1\n"), "This is not a CSV text file"},
		{"binary: an image", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), "This is not a CSV text file"},
		{"not UTF-8 (Latin-1)", []byte("name,category_id\nP\xe9p\xe9,1\n"), "This is not a CSV text file"},
		{"an unknown column", importFile("name,category_id,colour", "Rex,1,red"), `a column this import does not read: "colour"`},
		{"no name column", importFile("id,category_id", "1,1"), "The file has no name column"},
		{"no category column", importFile("name,status", "Rex,sold"), "The file has no category_id column"},
		{"a column twice", importFile("name,category_id,name", "Rex,1,Max"), "the column name twice"},
		{"not CSV: prose", []byte("Dear team, please add these pets\nRex and Luna\n"), "a column this import does not read"},
		{"a stray quote", importFile("name,category_id", `Rex "the" dog",1`), "The file is not valid CSV: line 2"},
		{"too many rows", many.Bytes(), "more than 100,000 rows"},
		{"too large", append([]byte("name,category_id\n"), bytes.Repeat([]byte(strings.Repeat("x", 250)+",1\n"), models.MaxImportRows)...), "larger than 20 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := models.CheckImport(bytes.NewReader(tt.data))
			if err == nil || models.ErrorCode(err) != models.CodeInvalidRequest || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want invalid_request with %q", err, tt.want)
			}
		})
	}
}

func TestCheckImportKey(t *testing.T) {
	t.Parallel()
	key := func(data []byte) string {
		t.Helper()
		_, k, err := models.CheckImport(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%x", k)
	}
	base := key(importFile("name,category_id,status", "Rex,1,sold", "Luna,2,"))
	// The same rows however the file is written: the key is of the rows.
	for name, data := range map[string][]byte{
		"semicolons and a BOM": append([]byte("\xef\xbb\xbf"), importFile("name;category_id;status", "Rex;1;sold", "Luna;2;")...),
		"the export's shape":   importFile("id,name,category_id,status,created_at,updated_at", "9,Rex,1,sold,,", "10,Luna,2,,,"),
		"LF and quotes":        []byte("name,category_id,status\n\"Rex\",1,sold\nLuna,2,\n"),
	} {
		if got := key(data); got != base {
			t.Errorf("%s: key differs from the same rows written otherwise", name)
		}
	}
	for name, data := range map[string][]byte{
		"a name changed":  importFile("name,category_id,status", "Rex!,1,sold", "Luna,2,"),
		"rows reordered":  importFile("name,category_id,status", "Luna,2,", "Rex,1,sold"),
		"a row more":      importFile("name,category_id,status", "Rex,1,sold", "Luna,2,", "Milo,3,"),
		"a status given":  importFile("name,category_id,status", "Rex,1,sold", "Luna,2,available"),
		"cells regrouped": importFile("name,category_id,status", "Rex,1,sold", "Luna,2"),
	} {
		if got := key(data); got == base {
			t.Errorf("%s: same key as other rows", name)
		}
	}
}

func TestReadTextCell(t *testing.T) {
	t.Parallel()
	// What the export writes (web's appendTextCell, tested there against
	// this function over every name) and the name it came from.
	for cell, want := range map[string]string{
		"Rex":            "Rex",
		"'=1+1":          "=1+1",
		"'＝1":            "＝1",
		"''quoted":       "'quoted",
		"'Tis":           "'Tis",
		"a,'=b;'+c\n'@d": "a,=b;+c\n@d",
		"a, '-b":         "a, -b",
		"a,\"'=b":        "a,\"=b",
		"'\tx":           "\tx",
		"x'=y":           "x'=y",
		"'":              "'",
		"''":             "'",
		"مرحبا 🐾 '=שלום": "مرحبا 🐾 '=שלום",
		"مرحبا,'=שלום":   "مرحبا,=שלום",
	} {
		if got := models.ReadTextCell(cell); got != want {
			t.Errorf("ReadTextCell(%q) = %q, want %q", cell, got, want)
		}
	}
}

// importedNames returns every pet's name, by id.
func importedNames(t *testing.T, s *models.Store) map[int64]string {
	t.Helper()
	out := map[int64]string{}
	if _, err := s.ExportPets(context.Background(), models.PetListing{}, models.ExportChunk, func(pets []models.Pet) error {
		for _, p := range pets {
			out[p.ID] = p.Name
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// sheet is a file of n valid rows named prefix 0..n-1 and bad invalid
// rows after them.
func sheet(prefix string, n, bad int) []byte {
	var b bytes.Buffer
	b.WriteString("name,category_id,status\r\n")
	for i := range n {
		fmt.Fprintf(&b, "%s %d,%d,%s\r\n", prefix, i, 1+i%7, []string{"available", "pending", "sold"}[i%3])
	}
	for i := range bad {
		fmt.Fprintf(&b, "Bad %d,0,\r\n", i)
	}
	return b.Bytes()
}

// waitImport waits for the import's runner and returns the import.
func waitImport(t *testing.T, s *models.Store, id int64) models.Import {
	t.Helper()
	s.WaitImports()
	imp, err := s.GetImport(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return imp
}

func TestImport(t *testing.T) {
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		data := sheet("Imported", 2500, 3)
		imp, check, err := s.UploadImport(ctx, "stock.csv", bytes.NewReader(data), "alice")
		if err != nil {
			t.Fatal(err)
		}
		if imp.State != models.ImportPreview || imp.RowsValid != 2500 || imp.RowsInvalid != 3 || check.Valid != 2500 ||
			len(check.Rows) != models.ImportPreviewRows || len(check.Errors) != 3 {
			t.Fatalf("upload = %+v, check %d valid, %d rows, %d errors", imp, check.Valid, len(check.Rows), len(check.Errors))
		}
		if n := modelstest.CountRows(t, s, modelstest.Pets); n != 0 {
			t.Fatalf("an upload wrote %d pets", n)
		}
		kept, err := s.CheckKeptImport(ctx, imp.ID)
		if err != nil || kept.Valid != 2500 || len(kept.Errors) != 3 {
			t.Fatalf("kept file: %+v, %v", kept.Valid, err)
		}
		if _, err := s.StartImport(ctx, imp.ID, "bob"); err != nil {
			t.Fatal(err)
		}
		done := waitImport(t, s, imp.ID)
		if done.State != models.ImportDone || done.Done != 2500 || done.Actor != "bob" || done.FinishedAt == nil {
			t.Fatalf("import = %+v", done)
		}
		names := importedNames(t, s)
		if len(names) != 2500 {
			t.Fatalf("%d pets, want 2500", len(names))
		}
		// The ids it recorded are exactly the pets it added.
		runs, err := s.ImportedIDs(ctx, imp.ID)
		if err != nil {
			t.Fatal(err)
		}
		recorded := 0
		for _, r := range runs {
			for id := r[0]; id <= r[1]; id++ {
				if _, ok := names[id]; !ok {
					t.Fatalf("recorded id %d is no imported pet", id)
				}
				recorded++
			}
		}
		if recorded != 2500 {
			t.Fatalf("recorded %d ids, want 2500", recorded)
		}
		// What the one change path writes: counts, feed events, search.
		counts, err := s.PetStatusCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if counts[models.StatusAvailable] != 834 || counts[models.StatusPending] != 833 || counts[models.StatusSold] != 833 {
			t.Fatalf("status counts = %v", counts)
		}
		page, err := s.ReadEvents(ctx, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Events) != 1000 || page.Events[0].Type != models.EventPetCreated {
			t.Fatalf("%d feed events, first %v", len(page.Events), page.Events[0].Type)
		}
		found, err := s.ExportPets(ctx, models.PetListing{Search: "Imported 2499"}, 100, func([]models.Pet) error { return nil })
		if err != nil || found != 1 {
			t.Fatalf("search found %d, %v", found, err)
		}
		// Audited once, with its count; no per-pet creation events.
		events, _, err := s.ListAuditEvents(ctx, models.AuditQuery{Action: models.ActionPetsImported, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 1 || events[0].Actor != "bob" || !strings.Contains(events[0].Detail, `imported 2500 pets from "stock.csv", ids `) ||
			!strings.Contains(events[0].Detail, "(3 rows with errors skipped)") {
			t.Fatalf("audit = %+v", events)
		}
		if n := modelstest.AuditCounts(t, s)[models.ActionPetCreated]; n != 0 {
			t.Fatalf("%d pet.created audit events", n)
		}

		// The same rows again, written otherwise: nothing more.
		again, _, err := s.UploadImport(ctx, "copy.csv", bytes.NewReader(bytes.ReplaceAll(data, []byte(","), []byte(";"))), "carol")
		if err != nil {
			t.Fatal(err)
		}
		if again.ID != imp.ID || again.State != models.ImportDone || again.Actor != "bob" {
			t.Fatalf("repeat = %+v", again)
		}
		if restarted, err := s.StartImport(ctx, imp.ID, "carol"); err != nil || restarted.State != models.ImportDone {
			t.Fatalf("start a done import: %+v, %v", restarted, err)
		}
		s.WaitImports()
		if n := modelstest.CountRows(t, s, modelstest.Pets); n != 2500 {
			t.Fatalf("%d pets after the repeat, want 2500", n)
		}
		if err := s.CancelImport(ctx, imp.ID); models.ErrorCode(err) != models.CodeConflict {
			t.Fatalf("cancel a done import: %v", err)
		}
	})
}

func TestImportCancel(t *testing.T) {
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		imp, _, err := s.UploadImport(ctx, "a.csv", bytes.NewReader(sheet("Cancelled", 10, 0)), "alice")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CancelImport(ctx, imp.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetImport(ctx, imp.ID); models.ErrorCode(err) != models.CodeNotFound {
			t.Fatalf("a cancelled import: %v", err)
		}
		if _, err := s.CheckKeptImport(ctx, imp.ID); models.ErrorCode(err) != models.CodeNotFound {
			t.Fatalf("a cancelled import's file: %v", err)
		}
		if n := modelstest.CountRows(t, s, modelstest.Pets); n != 0 {
			t.Fatalf("%d pets", n)
		}
		// Uploaded again, it is a new preview.
		again, _, err := s.UploadImport(ctx, "a.csv", bytes.NewReader(sheet("Cancelled", 10, 0)), "alice")
		if err != nil || again.State != models.ImportPreview || again.ID == imp.ID {
			t.Fatalf("upload after cancel: %+v, %v", again, err)
		}
	})
}

func TestImportConcurrentUploads(t *testing.T) {
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		data := sheet("Twice", 300, 0)
		var wg sync.WaitGroup
		ids := make([]int64, 6)
		for i := range ids {
			wg.Go(func() {
				imp, _, err := s.UploadImport(ctx, "t.csv", bytes.NewReader(data), "member"+strconv.Itoa(i))
				if err != nil {
					t.Error(err)
					return
				}
				// Each session then confirms what it saw.
				if _, err := s.StartImport(ctx, imp.ID, imp.Actor); err != nil {
					t.Error(err)
				}
				ids[i] = imp.ID
			})
		}
		wg.Wait()
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("ids = %v: one import wanted", ids)
			}
		}
		if imp := waitImport(t, s, ids[0]); imp.State != models.ImportDone || imp.Done != 300 {
			t.Fatalf("import = %+v", imp)
		}
		if n := modelstest.CountRows(t, s, modelstest.Pets); n != 300 {
			t.Fatalf("%d pets, want 300", n)
		}
		if n := modelstest.AuditCounts(t, s)[models.ActionPetsImported]; n != 1 {
			t.Fatalf("%d import audit events, want 1", n)
		}
	})
}

// TestImportResumes stops a runner after its second chunk, as a process
// that dies does, and checks that the next look at the import after its
// lease ran out goes on from there: every row imported once.
func TestImportResumes(t *testing.T) {
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		imp, pastLease := stoppedImport(t, s, "Resumed", 3500, 2)
		stopped, err := s.GetImport(ctx, imp.ID)
		if err != nil || stopped.State != models.ImportRunning || stopped.Done != 2*models.ImportChunk {
			t.Fatalf("stopped import = %+v, %v", stopped, err)
		}
		// Within its lease nobody takes it over; after it, a look does.
		s.WaitImports()
		if n := modelstest.CountRows(t, s, modelstest.Pets); n != 2*models.ImportChunk {
			t.Fatalf("%d pets while stopped", n)
		}
		pastLease()
		// Uploading the same file again is such a look.
		again, _, err := s.UploadImport(ctx, "big.csv", bytes.NewReader(sheet("Resumed", 3500, 0)), "alice")
		if err != nil || again.ID != imp.ID {
			t.Fatalf("upload again: %+v, %v", again, err)
		}
		if done := waitImport(t, s, imp.ID); done.State != models.ImportDone || done.Done != 3500 {
			t.Fatalf("resumed import = %+v", done)
		}
		wantImportedOnce(t, s, "Resumed", 3500)
		counts, err := s.PetStatusCounts(ctx)
		if err != nil || counts.Total() != 3500 {
			t.Fatalf("status counts %v, %v", counts, err)
		}
	})
}

// TestImportResumedWithoutALook stops a runner as a process that dies
// does, and checks that a serving store's sweep resumes it once its lease
// has run out, with nobody opening it: every row imported once.
func TestImportResumedWithoutALook(t *testing.T) {
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		imp, pastLease := stoppedImport(t, s, "Swept", 1200, 1)
		pastLease()

		s.ResumeImportsEvery()
		// Only the pets are read until the import is done: reading the
		// import is a look, which would resume it by itself.
		for deadline := time.Now().Add(30 * time.Second); modelstest.CountRows(t, s, modelstest.Pets) < 1200; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d pets 30 s after the lease ran out: the stopped import was not resumed", modelstest.CountRows(t, s, modelstest.Pets))
			}
		}
		if done := waitImport(t, s, imp.ID); done.State != models.ImportDone || done.Done != 1200 {
			t.Fatalf("resumed import = %+v", done)
		}
		wantImportedOnce(t, s, "Swept", 1200)
	})
}

// stoppedImport uploads and starts an import of rows rows named prefix N
// whose runner stops after chunks chunks, as a process that dies does, and
// returns it with what moves the store's clock past its lease.
func stoppedImport(t *testing.T, s *models.Store, prefix string, rows, chunks int) (imp models.Import, pastLease func()) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	var mu sync.Mutex
	s.SetClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	undo := models.SetImportChunkHook(func(imp models.Import) error {
		if imp.Done == chunks*models.ImportChunk {
			return errors.New("the process died")
		}
		return nil
	})
	imp, _, err := s.UploadImport(ctx, "big.csv", bytes.NewReader(sheet(prefix, rows, 0)), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartImport(ctx, imp.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	s.WaitImports()
	undo()
	return imp, func() {
		mu.Lock()
		now = now.Add(models.ImportLease() + time.Second)
		mu.Unlock()
	}
}

// wantImportedOnce checks that rows named prefix 0 to prefix rows-1 are
// the store's pets, each once.
func wantImportedOnce(t *testing.T, s *models.Store, prefix string, rows int) {
	t.Helper()
	names := importedNames(t, s)
	if len(names) != rows {
		t.Fatalf("%d pets, want %d", len(names), rows)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Fatalf("%q imported twice", n)
		}
		seen[n] = true
	}
	for i := range rows {
		if !seen[prefix+" "+strconv.Itoa(i)] {
			t.Fatalf("row %d not imported", i)
		}
	}
}
