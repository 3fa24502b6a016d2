package web_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"petstore/models"
	"petstore/models/modelstest"
)

// upload posts a file to the import form as a browser does: the CSRF
// token first, then the file; headers are optional name, value pairs.
func (b *browser) upload(tok, name string, data []byte, headers ...string) page {
	b.e.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	if tok != "" {
		w.WriteField("csrf_token", tok)
	}
	fw, err := w.CreateFormFile("file", name)
	if err != nil {
		b.e.t.Fatal(err)
	}
	fw.Write(data)
	w.Close()
	req, err := http.NewRequest("POST", b.e.srv.URL+"/admin/pets/import", &body)
	if err != nil {
		b.e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return b.do(req)
}

// previewOf uploads a file and follows the redirect to its preview.
func (b *browser) previewOf(tok, name string, data []byte) (string, page) {
	b.e.t.Helper()
	p := b.upload(tok, name, data)
	wantStatus(b.e.t, p, http.StatusSeeOther)
	loc := p.Header.Get("Location")
	if !strings.HasPrefix(loc, "/admin/pets/import/") {
		b.e.t.Fatalf("upload redirects to %q", loc)
	}
	return loc, b.get(loc)
}

// cells returns the text of each cell of a table's body rows.
func cells(p page, selector string) [][]string {
	var out [][]string
	p.Doc.Find(selector + " tbody tr").Each(func(_ int, tr *goquery.Selection) {
		var row []string
		tr.Find("td").Each(func(_ int, td *goquery.Selection) { row = append(row, strings.TrimSpace(td.Text())) })
		out = append(out, row)
	})
	return out
}

func TestImportPreviewAndImport(t *testing.T) {
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		if href, _ := b.get("/admin/pets").Doc.Find(`[data-testid="import-link"]`).Attr("href"); href != "/admin/pets/import" {
			t.Fatalf("the pets page links the import at %q", href)
		}
		form := b.get("/admin/pets/import")
		wantStatus(t, form, http.StatusOK)
		if enc, _ := form.Doc.Find(`form[action="/admin/pets/import"]`).Attr("enctype"); enc != "multipart/form-data" {
			t.Fatalf("the upload form's enctype is %q", enc)
		}
		labelled(t, form, "CSV file")

		file := []byte("\xef\xbb\xbfname;category_id;status\r\nRex;1;sold\r\n\"'=HYPERLINK(\"\"x\"\")\";2;\r\n;0;lost\r\nMochi 🐾;3;pending\r\nLuna;abc;\r\n")
		loc, p := b.previewOf(tok, "stock.csv", file)
		wantStatus(t, p, http.StatusOK)
		if got := text(p, `[data-testid="import-counts"]`); !strings.HasPrefix(got, "3 rows to add, 2 with errors.") {
			t.Fatalf("counts: %q", got)
		}
		wantRows := [][]string{{"2", "Rex", "1", "sold"}, {"3", `=HYPERLINK("x")`, "2", "available"}, {"5", "Mochi 🐾", "3", "pending"}}
		if got := cells(p, `[data-testid="import-rows"]`); !slices.EqualFunc(got, wantRows, slices.Equal) {
			t.Fatalf("rows to add: %q", got)
		}
		// Every error with its row and field, in the add form's words:
		// the add form, sent the same row, says the same.
		add := b.post("/admin/pets", url.Values{"csrf_token": {tok}, "name": {""}, "categoryId": {"0"}, "status": {"lost"}})
		wantStatus(t, add, http.StatusUnprocessableEntity)
		addName, addCategory := text(add, "#pet-name-error"), text(add, "#pet-category-error")
		if addName == "" || addCategory == "" {
			t.Fatalf("the add form's messages: %q, %q\n%s", addName, addCategory, add.Body)
		}
		wantErrors := [][]string{{"4", "name", addName}, {"4", "category_id", addCategory}, {"4", "status", models.StatusMessage},
			{"6", "category_id", "Category ID must be a positive whole number, such as 1 or 42."}}
		if got := cells(p, `[data-testid="import-errors"]`); !slices.EqualFunc(got, wantErrors, slices.Equal) {
			t.Fatalf("errors: %q, want %q", got, wantErrors)
		}
		if got := text(p, `[data-testid="import-confirm"]`); got != "Import the valid rows (3), skip 2 with errors" {
			t.Fatalf("the import button says %q", got)
		}
		if n := modelstest.CountRows(t, e.store, modelstest.Pets); n != 0 {
			t.Fatalf("a preview wrote %d pets", n)
		}

		// A post without a choice changes nothing.
		wantStatus(t, b.post(loc, url.Values{"csrf_token": {tok}}), http.StatusBadRequest)
		done := b.post(loc, url.Values{"csrf_token": {tok}, "action": {"import"}})
		wantStatus(t, done, http.StatusSeeOther)
		e.store.WaitImports()
		p = b.get(loc)
		wantStatus(t, p, http.StatusOK)
		if got := text(p, `[data-testid="import-summary"]`); got != "alice imported 3 pets. 2 rows with errors skipped." {
			t.Fatalf("summary: %q", got)
		}
		if _, polls := p.Doc.Find(`[data-testid="import-job"]`).Attr("hx-get"); polls {
			t.Fatal("a finished import still polls")
		}
		// htmx's poll gets the progress region alone.
		region := b.get(loc, "HX-Request", "true")
		wantStatus(t, region, http.StatusOK)
		if strings.Contains(region.Body, "<html") || region.Doc.Find(`section#import-job [data-testid="import-summary"]`).Length() != 1 {
			t.Fatalf("the poll's answer is not the progress region:\n%s", region.Body)
		}
		var names []string
		for _, pet := range importedPets(t, e) {
			names = append(names, pet.Name)
		}
		slices.Sort(names)
		if want := []string{"=HYPERLINK(\"x\")", "Mochi 🐾", "Rex"}; !slices.Equal(names, want) {
			t.Fatalf("pets %q, want %q", names, want)
		}
		// Audited once, with its count.
		if n := modelstest.AuditCounts(t, e.store)[models.ActionPetsImported]; n != 1 {
			t.Fatalf("%d import audit events", n)
		}
		audit := b.get("/admin/audit")
		if !strings.Contains(audit.Body, `imported 3 pets from &#34;stock.csv&#34;, ids `) {
			t.Fatalf("the audit trail does not say the import:\n%s", audit.Body)
		}

		// The same rows again, even as another file: nothing added.
		again := b.upload(tok, "copy.csv", []byte("name,category_id,status\nRex,1,sold\n\"'=HYPERLINK(\"\"x\"\")\",2,\n,0,lost\nMochi 🐾,3,pending\nLuna,abc,\n"))
		wantStatus(t, again, http.StatusOK)
		if got := text(again, `[data-testid="import-summary"]`); !strings.HasPrefix(got, "This file was imported ") ||
			!strings.HasSuffix(got, " by alice (3 pets). Nothing was added.") {
			t.Fatalf("repeat: %q", got)
		}
		if n := modelstest.CountRows(t, e.store, modelstest.Pets); n != 3 {
			t.Fatalf("%d pets after the repeat, want 3", n)
		}
	})
}

// importedPets returns every pet.
func importedPets(t *testing.T, e *env) []models.Pet {
	t.Helper()
	var out []models.Pet
	if _, err := e.store.ExportPets(context.Background(), models.PetListing{}, models.ExportChunk, func(pets []models.Pet) error {
		out = append(out, pets...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestImportCancel(t *testing.T) {
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		loc, p := b.previewOf(tok, "a.csv", []byte("name,category_id\nRex,1\n"))
		wantStatus(t, p, http.StatusOK)
		cancel := b.post(loc, url.Values{"csrf_token": {tok}, "action": {"cancel"}})
		wantStatus(t, cancel, http.StatusSeeOther)
		if got := cancel.Header.Get("Location"); got != "/admin/pets/import" {
			t.Fatalf("cancel goes to %q", got)
		}
		if got := text(b.get("/admin/pets/import"), `[data-testid="flash"]`); got != "Import cancelled: nothing was added." {
			t.Fatalf("flash: %q", got)
		}
		wantStatus(t, b.get(loc), http.StatusNotFound)
		wantStatus(t, b.post(loc, url.Values{"csrf_token": {tok}, "action": {"import"}}), http.StatusNotFound)
		e.store.WaitImports()
		if n := modelstest.CountRows(t, e.store, modelstest.Pets); n != 0 {
			t.Fatalf("%d pets after a cancel", n)
		}
	})
}

func TestImportBadFiles(t *testing.T) {
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		var many bytes.Buffer
		many.WriteString("name,category_id\n")
		for i := range models.MaxImportRows + 1 {
			fmt.Fprintf(&many, "Pet %d,1\n", i)
		}
		tests := []struct {
			name   string
			data   []byte
			status int
			want   string
		}{
			{"empty", nil, http.StatusUnprocessableEntity, "The file is empty"},
			{"binary", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), http.StatusUnprocessableEntity, "This is not a CSV text file"},
			{"not UTF-8", []byte("name,category_id\nP\xe9p\xe9,1\n"), http.StatusUnprocessableEntity, "This is not a CSV text file"},
			{"wrong columns", []byte("pet,kind\nRex,dog\n"), http.StatusUnprocessableEntity, `a column this import does not read: "pet"`},
			{"missing column", []byte("name\nRex\n"), http.StatusUnprocessableEntity, "The file has no category_id column."},
			{"a header alone", []byte("name,category_id\n"), http.StatusUnprocessableEntity, "column names but no rows"},
			{"too many rows", many.Bytes(), http.StatusUnprocessableEntity, "more than 100,000 rows"},
			{"too large", append([]byte("name,category_id\n"), bytes.Repeat([]byte(strings.Repeat("x", 250)+",1\n"), models.MaxImportRows)...), http.StatusRequestEntityTooLarge, "larger than 20 MiB"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := b.upload(tok, tt.name+".csv", tt.data)
				wantStatus(t, p, tt.status)
				if got := text(p, `[data-testid="import-error"]`); !strings.Contains(got, tt.want) {
					t.Fatalf("message %q, want %q", got, tt.want)
				}
				if inv, _ := labelled(t, p, "CSV file").Attr("aria-invalid"); inv != "true" {
					t.Error("the file field is not marked invalid")
				}
			})
		}
		if n := modelstest.CountRows(t, e.store, modelstest.Pets); n != 0 {
			t.Fatalf("%d pets", n)
		}
		// Nothing was kept of them: a good file is a new preview.
		_, p := b.previewOf(tok, "good.csv", []byte("name,category_id\nRex,1\n"))
		if got := text(p, `[data-testid="import-counts"]`); !strings.HasPrefix(got, "1 row to add, none with errors.") {
			t.Fatalf("counts: %q", got)
		}
	})
}

func TestImportRefused(t *testing.T) {
	forEach(t, func(t *testing.T, e *env) {
		file := []byte("name,category_id\nRex,1\n")
		_, viewer, vtok := e.member("vera", models.RoleViewer)
		wantStatus(t, viewer.get("/admin/pets/import"), http.StatusForbidden)
		wantStatus(t, viewer.upload(vtok, "v.csv", file), http.StatusForbidden)
		if viewer.get("/admin/pets").Doc.Find(`[data-testid="import-link"]`).Length() != 0 {
			t.Error("a viewer is shown the import link")
		}

		b, tok := e.signedIn()
		for name, p := range map[string]page{
			"no token":    b.upload("", "a.csv", file),
			"wrong token": b.upload("not-the-token", "a.csv", file),
			"cross-site":  b.upload(tok, "a.csv", file, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"),
		} {
			if p.Status != http.StatusForbidden {
				t.Errorf("%s: status %d, want 403", name, p.Status)
			}
		}
		// None of them kept anything: this is a new preview.
		_, p := b.previewOf(tok, "a.csv", file)
		if p.Doc.Find(`[data-testid="import-preview"]`).Length() != 1 {
			t.Fatalf("not a preview:\n%s", p.Body)
		}
		if n := modelstest.CountRows(t, e.store, modelstest.Pets); n != 0 {
			t.Fatalf("%d pets", n)
		}
	})
}

// TestImportRoundTrip exports pets whose names a spreadsheet would run as
// formulas, with emoji and right-to-left scripts, imports that file into
// another store and exports again: the same names, categories and
// statuses, byte for byte.
func TestImportRoundTrip(t *testing.T) {
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		from := newEnv(t, s)
		names := []string{"Rex", "=1+1", "+33 6 12 34 56 78", "-minus", "@SUM(A1:A2)", "'quoted", "''twice", "＝full width", "﹢small",
			"a,=b", "x;'=1+1; y", "a=1;b", `=HYPERLINK("http://evil.example","click")`, `say "hi"`, "Mochi 🐾", "🐕‍🦺 Guide",
			"مرحبا بالعالم", "שלום =עולם", "-٣ قطط", "Émile ' =x", "a, -b; +c", "'", "tail'"}
		for i, n := range names {
			if _, err := s.CreatePet(context.Background(), models.NewPet{Name: n, CategoryID: int64(i + 1), Status: []models.Status{models.StatusAvailable, models.StatusPending, models.StatusSold}[i%3]}, "test"); err != nil {
				t.Fatalf("create %q: %v", n, err)
			}
		}
		b, _ := from.signedIn()
		first := b.get("/admin/pets/export.csv")
		wantStatus(t, first, http.StatusOK)

		to := newEnv(t, modelstest.Open(t, s.Driver()))
		b2, tok := to.signedIn()
		loc, p := b2.previewOf(tok, "pets.csv", []byte(first.Body))
		if got := text(p, `[data-testid="import-counts"]`); !strings.HasPrefix(got, fmt.Sprintf("%d rows to add, none with errors.", len(names))) {
			t.Fatalf("counts: %q\n%s", got, p.Body)
		}
		wantStatus(t, b2.post(loc, url.Values{"csrf_token": {tok}, "action": {"import"}}), http.StatusSeeOther)
		to.store.WaitImports()
		second := b2.get("/admin/pets/export.csv")
		wantStatus(t, second, http.StatusOK)

		// The name, category and status cells as written, the ids and
		// times aside; the import keeps the file's order, so the newest
		// of the second store is the file's last row.
		a, z := exportedCells(t, first.Body), exportedCells(t, second.Body)
		slices.Reverse(z)
		if !slices.Equal(a, z) {
			t.Fatalf("export, import, export:\n%q\n%q", a, z)
		}
		stored := map[string]bool{}
		for _, p := range importedPets(t, to) {
			stored[p.Name] = true
		}
		for _, n := range names {
			if !stored[n] {
				t.Errorf("%q was not imported as it was", n)
			}
		}
	})
}

// exportedCells returns each row of an export's body as its raw bytes
// without the id and time cells: name, category and status as written.
func exportedCells(t *testing.T, body string) []string {
	t.Helper()
	r := csv.NewReader(strings.NewReader(body))
	r.FieldsPerRecord = 6
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rec := range recs[1:] {
		out = append(out, strings.Join(rec[1:4], "\x1f"))
	}
	return out
}
