package web_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
)

// exportHeader is the export's first line.
const exportHeader = "id,name,category_id,status,created_at,updated_at\r\n"

// readCSV parses an export's body, checking its shape: the header row,
// six cells a row, CRLF line ends, UTF-8.
func readCSV(t *testing.T, body string) [][]string {
	t.Helper()
	if !strings.HasPrefix(body, exportHeader) {
		t.Fatalf("the export does not start with the header row:\n%.300q", body)
	}
	if !utf8.ValidString(body) {
		t.Error("the export is not UTF-8")
	}
	if i := strings.Index(strings.ReplaceAll(body, "\r\n", ""), "\n"); i >= 0 {
		t.Errorf("a bare LF in the export (RFC 4180 ends lines with CRLF)")
	}
	r := csv.NewReader(strings.NewReader(body))
	r.FieldsPerRecord = 6
	records, err := r.ReadAll()
	if err != nil {
		t.Fatalf("the export is not valid CSV: %v\n%.500q", err, body)
	}
	return records[1:]
}

// rowIDs returns the ids of an export's rows.
func rowIDs(t *testing.T, rows [][]string) []int64 {
	t.Helper()
	ids := make([]int64, len(rows))
	for i, r := range rows {
		id, err := strconv.ParseInt(r[0], 10, 64)
		if err != nil {
			t.Fatalf("row %d: id %q", i, r[0])
		}
		ids[i] = id
	}
	return ids
}

// insertOldPets stores pets the way rows written before the current name
// rules may stand (control characters included), straight into the table.
func (e *env) insertOldPets(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		modelstest.InsertBarePet(t, e.store, name, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	}
}

// exportEvents returns the details of the export audit events, newest first.
func (e *env) exportEvents(t *testing.T) []string {
	t.Helper()
	events, _, err := e.store.ListAuditEvents(context.Background(), models.AuditQuery{Action: models.ActionPetsExported, Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range events {
		out = append(out, ev.Actor+": "+ev.Detail)
	}
	return out
}

// setDate sets the console's clock to noon UTC of a day.
func (e *env) setDate(day string) {
	e.t.Helper()
	now, err := time.Parse(time.DateTime, day+" 12:00:00")
	if err != nil {
		e.t.Fatal(err)
	}
	e.clock.Store(&now)
}

// The file: headers, the header row, RFC 4180 quoting, and names that a
// spreadsheet would run as formulas made text.
func TestExportCSV(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		e.setDate("2026-11-24")
		// name as stored -> the name cell as a spreadsheet reads it.
		created := [][2]string{
			{`=HYPERLINK("http://evil.example","x")`, `'=HYPERLINK("http://evil.example","x")`},
			{"+1", "'+1"},
			{"-2", "'-2"},
			{"@SUM(A1:A9)", "'@SUM(A1:A9)"},
			{"=1+2", "'=1+2"},
			{"Rex, the good boy", "Rex, the good boy"},
			{`Say "hi"`, `Say "hi"`},
			{"'quoted", "''quoted"}, // the ' the export adds is taken away exactly
			{"Pépé", "Pépé"},
			{"Mochi 🐾", "Mochi 🐾"},
			{"👨‍👩‍👧 Ñandú", "👨‍👩‍👧 Ñandú"},
			{"a=1", "a=1"},
		}
		// The name rules refuse control characters; older rows may hold them.
		// Inside a quoted cell RFC 4180 has CRLF line breaks only: a lone
		// CR is dropped, a lone LF becomes CRLF (read back as LF).
		old := [][2]string{
			{"\tx", "'\tx"},
			{"\rx", "'x"},
			{"line 1\nline 2", "line 1\nline 2"},
			{"\r\n=cmd", "'\n'=cmd"},
		}
		for i, c := range created {
			if _, err := e.store.CreatePet(context.Background(), models.NewPet{Name: c[0], CategoryID: int64(i + 1), Status: models.StatusSold}, "test"); err != nil {
				t.Fatalf("create %q: %v", c[0], err)
			}
		}
		for _, c := range old {
			e.insertOldPets(t, c[0])
		}
		// Newest first, as the list: by creation time, then by id; the old
		// rows were created long before the others.
		want := slices.Clone(created)
		slices.Reverse(want)
		olds := slices.Clone(old)
		slices.Reverse(olds)
		want = append(want, olds...)

		b, _ := e.signedIn()
		p := b.get("/admin/pets/export.csv")
		wantStatus(t, p, http.StatusOK)
		for name, want := range map[string]string{
			"Content-Type":        "text/csv; charset=utf-8",
			"Content-Disposition": `attachment; filename="pets-2026-11-24.csv"`,
			"Cache-Control":       "no-store",
		} {
			if got := p.Header.Get(name); got != want {
				t.Errorf("%s: %q, want %q", name, got, want)
			}
		}
		rows := readCSV(t, p.Body)
		if len(rows) != len(want) {
			t.Fatalf("%d rows, want %d", len(rows), len(want))
		}
		for i, r := range rows {
			if r[1] != want[i][1] {
				t.Errorf("row %d: name cell %q, want %q (stored %q)", i, r[1], want[i][1], want[i][0])
			}
			if i > 0 && i != len(created) && rowIDs(t, rows[i:i+1])[0] >= rowIDs(t, rows[i-1:i])[0] {
				t.Errorf("row %d: ids not newest first", i)
			}
			for _, cell := range []string{r[4], r[5]} {
				if _, err := time.Parse(time.RFC3339, cell); err != nil || !strings.HasSuffix(cell, "Z") {
					t.Errorf("row %d: time %q is not RFC 3339 UTC", i, cell)
				}
			}
		}
		if r := rows[len(created)-1]; r[2] != "1" || r[3] != "sold" {
			t.Errorf("the oldest row %q: want category 1, sold", r)
		}
		// The quoting itself, as written.
		for _, raw := range []string{`,"'=HYPERLINK(""http://evil.example"",""x"")",`, `,"Rex, the good boy",`, `,"Say ""hi""",`,
			",'+1,", ",'-2,", ",Pépé,", ",\"line 1\r\nline 2\",", ",\"'\tx\",", ",\"'x\","} {
			if !strings.Contains(p.Body, raw) {
				t.Errorf("the export lacks %q", raw)
			}
		}
		if got := e.exportEvents(t); len(got) != 1 || got[0] != fmt.Sprintf("%s: exported %d pets as CSV; filter: all pets", staffName, len(want)) {
			t.Errorf("audit %q", got)
		}
	})
}

// formulaStart reports whether a cell, trimmed of spaces and quotes as a
// lenient spreadsheet trims it, starts with a formula character.
func formulaStart(cell string) bool {
	c := strings.TrimLeftFunc(cell, func(r rune) bool { return r == '"' || unicode.IsSpace(r) })
	r, _ := utf8.DecodeRuneInString(c)
	return c != "" && strings.ContainsRune("=+-@\uFF1D\uFF0B\uFF0D\uFF20", r)
}

// Names a spreadsheet could run, stored on either engine and exported
// through the console: the file reads back as CSV with each name cell the
// name with a ' before each formula start, and a spreadsheet that splits
// the file on ';' or a tab, ignoring the comma file's quotes (Excel with a
// European list separator), or on every line break, finds no cell that
// starts with a formula character.
func TestExportHostileNames(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		// name as stored -> the name cell as a CSV reader reads it.
		created := [][2]string{
			{"x;=1+1; y", "x;'=1+1; y"},
			{"x;@SUM(1+1)", "x;'@SUM(1+1)"},
			{"x; -2+3", "x; '-2+3"},
			{`x;"=1+1"`, `x;"'=1+1"`},
			{"x, +1", "x, '+1"},
			{"＝1+1", "'＝1+1"},
			{"＋1", "'＋1"},
			{"x;－1", "x;'－1"},
			{"＠SUM(1+1)", "'＠SUM(1+1)"},
			{"-1", "'-1"},
			{"'quoted", "''quoted"},
			{"a=1;b", "a=1;b"},
		}
		old := [][2]string{ // control characters: rows from before the current name rules
			{"x\t=1+1", "x\t'=1+1"},
			{"\t@SUM(1)", "'\t'@SUM(1)"},
			{"line 1\n=cmd", "line 1\n'=cmd"},
		}
		for i, c := range created {
			if _, err := e.store.CreatePet(context.Background(), models.NewPet{Name: c[0], CategoryID: int64(i + 1), Status: models.StatusSold}, "test"); err != nil {
				t.Fatalf("create %q: %v", c[0], err)
			}
		}
		for _, c := range old {
			e.insertOldPets(t, c[0])
		}
		// Newest first, as the list: by creation time, then by id; the old
		// rows were created long before the others.
		want := slices.Clone(created)
		slices.Reverse(want)
		olds := slices.Clone(old)
		slices.Reverse(olds)
		want = append(want, olds...)

		b, _ := e.signedIn()
		p := b.get("/admin/pets/export.csv")
		wantStatus(t, p, http.StatusOK)
		rows := readCSV(t, p.Body)
		if len(rows) != len(want) {
			t.Fatalf("%d rows, want %d", len(rows), len(want))
		}
		for i, r := range rows {
			if r[1] != want[i][1] {
				t.Errorf("row %d: name cell %q, want %q (stored %q)", i, r[1], want[i][1], want[i][0])
			}
		}
		// A name holding a separator of any reading is quoted.
		for _, raw := range []string{`,"x;'=1+1; y",`, `,"x;'@SUM(1+1)",`, ",'＝1+1,", ",\"x\t'=1+1\",", `,"a=1;b",`} {
			if !strings.Contains(p.Body, raw) {
				t.Errorf("the export lacks %q", raw)
			}
		}
		for _, sep := range []string{",", ";", "\t"} {
			for _, line := range strings.FieldsFunc(p.Body, func(r rune) bool { return r == '\r' || r == '\n' }) {
				for _, cell := range strings.Split(line, sep) {
					if formulaStart(cell) {
						t.Errorf("split on %q, the line %q has the formula cell %q", sep, line, cell)
					}
				}
			}
		}
	})
}

// auditCount is the number of audit events of every kind.
func (e *env) auditCount(t *testing.T) int {
	t.Helper()
	return modelstest.CountRows(t, e.store, modelstest.AuditEvents)
}

// An export another site started (a link or a redirect there that the
// browser followed: Sec-Fetch-Site cross-site) is refused with the
// console's error page and writes no audit event. Without the header (an
// old browser, curl with a session cookie), and from the console itself, a
// sibling site or the address bar, the export is sent.
func TestExportCrossSite(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		e.addPets(t, 2, models.StatusSold, "Sold")
		b, _ := e.signedIn()
		before := e.auditCount(t)
		for _, headers := range [][]string{
			{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document"},
			{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document", "HX-Request", "true"},
			{"Sec-Fetch-Site", "cross-site", "Referer", e.srv.URL + "/admin/pets"},
		} {
			p := b.get("/admin/pets/export.csv?status=sold", headers...)
			wantStatus(t, p, http.StatusForbidden)
			if ct := p.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" || p.Header.Get("Content-Disposition") != "" ||
				p.Header.Get("Content-Security-Policy") == "" {
				t.Errorf("%q: Content-Type %q, Content-Disposition %q: want the HTML error page", headers, ct, p.Header.Get("Content-Disposition"))
			}
			if h := text(p, "h1"); h != "Request refused" {
				t.Errorf("%q: heading %q", headers, h)
			}
			if msg := text(p, ".error-page p"); !strings.Contains(msg, "from another site, so nothing was exported") {
				t.Errorf("%q: message %q", headers, msg)
			}
			if strings.Contains(p.Body, "id,name") {
				t.Errorf("%q: the refusal holds the export", headers)
			}
		}
		if n := e.auditCount(t); n != before {
			t.Errorf("refused cross-site exports wrote %d audit events", n-before)
		}
		for _, headers := range [][]string{nil, {"Sec-Fetch-Site", "same-origin"}, {"Sec-Fetch-Site", "same-site"}, {"Sec-Fetch-Site", "none"}} {
			seen := len(e.exportEvents(t))
			p := b.get("/admin/pets/export.csv?status=sold", headers...)
			wantStatus(t, p, http.StatusOK)
			if got := len(readCSV(t, p.Body)); got != 2 {
				t.Errorf("%q: %d rows, want 2", headers, got)
			}
			if got := e.exportEvents(t); len(got) != seen+1 {
				t.Errorf("%q: %d export events, want %d", headers, len(got), seen+1)
			}
		}
	})
}

// pageIDs follows the pets page's Older links from path and returns the
// ids of the rows of every page, top to bottom.
func pageIDs(t *testing.T, b *browser, path string) []int64 {
	t.Helper()
	var ids []int64
	for pages := 0; path != ""; pages++ {
		if pages > 500 {
			t.Fatalf("more than 500 pages from %s", path)
		}
		p := b.get(path)
		wantStatus(t, p, http.StatusOK)
		for _, row := range p.Doc.Find(`tr[data-testid="pet-row"]`).EachIter() {
			id, err := strconv.ParseInt(strings.TrimPrefix(row.AttrOr("id", ""), "pet-"), 10, 64)
			if err != nil {
				t.Fatalf("row id %q", row.AttrOr("id", ""))
			}
			ids = append(ids, id)
		}
		path = p.Doc.Find(`.pager a[rel="next"]`).AttrOr("href", "")
	}
	return ids
}

// The export link of each filter lists what the page lists over all its
// pages, in its order, through chunks of 1000 (2500 pets: a pet skipped or
// repeated where chunks meet fails), and is audited with its count.
func TestExportMatchesPage(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		if _, err := e.store.SeedPets(context.Background(), 2500, "test", nil); err != nil {
			t.Fatal(err)
		}
		sold := modelstest.CountPetsWithStatus(t, e.store, models.StatusSold)
		b, _ := e.signedIn()
		for _, tt := range []struct {
			query, export string
			count         int // -1: whatever the page shows
		}{
			{"", "/admin/pets/export.csv", 2500},
			{"status=sold", "/admin/pets/export.csv?status=sold", sold},
			{"q=p%C3%A9p%C3%A9", "/admin/pets/export.csv?q=p%C3%A9p%C3%A9", -1},
			{"q=Mochi+%F0%9F%90%BE", "/admin/pets/export.csv?q=Mochi+%F0%9F%90%BE", -1},
			{"status=pending&q=luna+2", "/admin/pets/export.csv?q=luna+2&status=pending", -1},
			{"q=1&before=2000", "/admin/pets/export.csv?q=1", -1},
			{"q=zzz", "/admin/pets/export.csv?q=zzz", 0},
		} {
			t.Run(tt.query, func(t *testing.T) {
				p := b.get("/admin/pets?" + tt.query)
				wantStatus(t, p, http.StatusOK)
				link := p.Doc.Find(`a[data-testid="export-link"]`)
				if href := link.AttrOr("href", ""); href != tt.export {
					t.Fatalf("export link %q, want %q", href, tt.export)
				}
				q, _ := url.ParseQuery(tt.query)
				q.Del("before")
				want := pageIDs(t, b, "/admin/pets?"+q.Encode())
				if tt.count >= 0 && len(want) != tt.count {
					t.Fatalf("the pages list %d pets, want %d", len(want), tt.count)
				}
				if len(want) == 0 && tt.count != 0 {
					t.Fatal("the filter matches nothing: the case tests nothing")
				}
				ex := b.get(link.AttrOr("href", ""))
				wantStatus(t, ex, http.StatusOK)
				got := rowIDs(t, readCSV(t, ex.Body))
				if !slices.Equal(got, want) {
					t.Errorf("the export lists %d pets, the pages %d; first difference at %d", len(got), len(want), firstDiff(got, want))
				}
				if ev := e.exportEvents(t)[0]; !strings.HasPrefix(ev, fmt.Sprintf("%s: exported %d pet", staffName, len(want))) {
					t.Errorf("audit %q, want %d pets", ev, len(want))
				}
			})
		}
	})
}

func firstDiff(a, b []int64) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// The file name carries the date and the filter; the search keeps its
// letters and digits, at most 40, with an ASCII name beside a UTF-8 one
// (RFC 6266) when it has others.
func TestExportFileName(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		e.setDate("2026-11-24")
		b, _ := e.signedIn()
		tests := []struct{ query, want string }{
			{"", `attachment; filename="pets-2026-11-24.csv"`},
			{"status=sold&q=cat", `attachment; filename="pets-2026-11-24-status-sold-q-cat.csv"`},
			{"status=pending", `attachment; filename="pets-2026-11-24-status-pending.csv"`},
			{"q=++Luna+++7++", `attachment; filename="pets-2026-11-24-q-Luna-7.csv"`},
			{"q=" + url.QueryEscape(`../../etc/passwd"; x=1`), `attachment; filename="pets-2026-11-24-q-etc-passwd-x-1.csv"`},
			{"q=%25", `attachment; filename="pets-2026-11-24-q-search.csv"`},
			{"q=" + strings.Repeat("a", 200), `attachment; filename="pets-2026-11-24-q-` + strings.Repeat("a", 40) + `.csv"`},
			{"q=" + url.QueryEscape("Pépé 🐾"),
				`attachment; filename="pets-2026-11-24-q-Pepe.csv"; filename*=UTF-8''pets-2026-11-24-q-P%C3%A9p%C3%A9.csv`},
			{"status=sold&q=" + url.QueryEscape("猫 cat"),
				`attachment; filename="pets-2026-11-24-status-sold-q-cat.csv"; filename*=UTF-8''pets-2026-11-24-status-sold-q-%E7%8C%AB-cat.csv`},
			{"q=" + url.QueryEscape("猫"), `attachment; filename="pets-2026-11-24-q-search.csv"; filename*=UTF-8''pets-2026-11-24-q-%E7%8C%AB.csv`},
		}
		for _, tt := range tests {
			t.Run(tt.query, func(t *testing.T) {
				p := b.get("/admin/pets/export.csv?" + tt.query)
				wantStatus(t, p, http.StatusOK)
				if got := p.Header.Get("Content-Disposition"); got != tt.want {
					t.Errorf("Content-Disposition\n got %s\nwant %s", got, tt.want)
				}
			})
		}
	})
}

// Every role may export (viewers read everything); signed out, the export
// sends the browser to sign in (htmx: 401) and writes nothing.
func TestExportAccess(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		e.addPets(t, 3, models.StatusSold, "Sold")
		for _, r := range models.Roles {
			u, b, _ := e.member("member-"+string(r), r)
			p := b.get("/admin/pets/export.csv?status=sold")
			wantStatus(t, p, http.StatusOK)
			if len(readCSV(t, p.Body)) != 3 {
				t.Errorf("%s: %d rows, want 3", r, len(readCSV(t, p.Body)))
			}
			if ev := e.exportEvents(t)[0]; ev != u.Username+": exported 3 pets as CSV; filter: status sold" {
				t.Errorf("%s: audit %q", r, ev)
			}
		}
		before := e.fingerprint()
		anon := e.browser()
		p := anon.get("/admin/pets/export.csv?status=sold")
		wantStatus(t, p, http.StatusSeeOther)
		if loc := p.Header.Get("Location"); loc != "/admin/login?next="+url.QueryEscape("/admin/pets/export.csv?status=sold") {
			t.Errorf("signed out: Location %q", loc)
		}
		p = anon.get("/admin/pets/export.csv", "HX-Request", "true")
		wantStatus(t, p, http.StatusUnauthorized)
		if strings.Contains(p.Body, "id,name") || e.fingerprint() != before {
			t.Error("a signed-out request exported or wrote something")
		}
	})
}

// Bad filter input gets the pets page's 400 page and changes nothing (no
// audit event).
func TestExportBadInput(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		e.addPets(t, 1, models.StatusSold, "Sold")
		b, _ := e.signedIn()
		before := e.fingerprint()
		for _, tt := range []struct{ query, msg string }{
			{"status=lost", models.StatusMessage},
			{"status=SOLD", models.StatusMessage},
			{"q=" + strings.Repeat("a", 201), "Search text must be at most 200 characters."},
			{"q=" + strings.Repeat("a", 50_000), "Search text must be at most 200 characters."},
			{"status=sold;q=x", "separate parameters with &amp; (not ;)"},
			{"q=%zz", "a % must start an escape"},
			{"before=abc", "before must be a pet id"},
			{"after=-1", "After must be a pet id"},
		} {
			t.Run(tt.query[:min(len(tt.query), 30)], func(t *testing.T) {
				p := b.get("/admin/pets/export.csv?" + tt.query)
				wantStatus(t, p, http.StatusBadRequest)
				if ct := p.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" || p.Header.Get("Content-Disposition") != "" {
					t.Errorf("Content-Type %q, Content-Disposition %q: want the HTML error page", ct, p.Header.Get("Content-Disposition"))
				}
				if !strings.Contains(p.Body, tt.msg) {
					t.Errorf("no %q on the page:\n%.2000s", tt.msg, p.Body)
				}
			})
		}
		if e.fingerprint() != before {
			t.Error("a refused export changed the store")
		}
		if got := e.exportEvents(t); len(got) != 0 {
			t.Errorf("refused exports were audited: %q", got)
		}
	})
}

// The link on the pets page: labelled, carrying the filter (not the page
// position), in the region htmx replaces when the filter changes, for
// every role.
func TestExportLink(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		e.addPets(t, 3, models.StatusSold, "Cat")
		b, _ := e.signedIn()
		_, viewer, _ := e.member("vera", models.RoleViewer)
		for _, tt := range []struct {
			b       *browser
			query   string
			headers []string
			want    string
		}{
			{b, "", nil, "/admin/pets/export.csv"},
			{b, "status=sold&q=cat&before=3", nil, "/admin/pets/export.csv?q=cat&status=sold"},
			{b, "status=sold&q=" + url.QueryEscape("Pépé & co"), []string{"HX-Request", "true", "HX-Target", "pets-table"},
				"/admin/pets/export.csv?q=P%C3%A9p%C3%A9+%26+co&status=sold"},
			{viewer, "q=cat", nil, "/admin/pets/export.csv?q=cat"},
		} {
			p := tt.b.get("/admin/pets?"+tt.query, tt.headers...)
			wantStatus(t, p, http.StatusOK)
			link := p.Doc.Find(`#pets-table a[data-testid="export-link"]`)
			if link.Length() != 1 || link.AttrOr("href", "") != tt.want || strings.TrimSpace(link.Text()) != "Export CSV" {
				t.Errorf("%s: link %q to %q, want one Export CSV to %q", tt.query, link.Text(), link.AttrOr("href", ""), tt.want)
			}
			help := p.Doc.Find("#" + link.AttrOr("aria-describedby", "none"))
			if !strings.Contains(help.Text(), "every page of this filter") {
				t.Errorf("%s: the link is not described: %q", tt.query, help.Text())
			}
		}
	})
}

// ---- a slow or failing client ----

// smallBuffers shrinks the send buffer of each accepted connection, so that
// a server writing faster than its client reads blocks within a chunk.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// slowServer serves the console on a server of its own, with small socket
// buffers and the given read and write timeouts (0: none), and returns a
// client with a small receive buffer that shares b's cookies (a cookie is
// not bound to a port). A chunk of 1000 pets (about 60 KB) is far more
// than the buffers hold: the server waits for the client within each.
func (e *env) slowServer(b *browser, timeout time.Duration) (*httptest.Server, *http.Client) {
	e.t.Helper()
	h, err := server.New(context.Background(), server.Deps{Store: e.store, Now: func() time.Time { return *e.clock.Load() }})
	if err != nil {
		e.t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = smallBuffers{srv.Listener}
	srv.Config.ReadTimeout, srv.Config.WriteTimeout = timeout, timeout
	srv.Start()
	e.t.Cleanup(srv.Close)
	dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	tr := &http.Transport{DialContext: dialer.DialContext, DisableCompression: true}
	e.t.Cleanup(tr.CloseIdleConnections)
	return srv, &http.Client{Transport: tr, Jar: b.client.Jar}
}

// slowExport stores 2500 pets, signs in and asks a slowServer (with the
// timeouts) for the export of query, as the staff account; it returns the
// answer once its headers are read.
func (e *env) slowExport(t *testing.T, query string, timeout time.Duration) *http.Response {
	t.Helper()
	if _, err := e.store.SeedPets(context.Background(), 2500, "test", nil); err != nil {
		t.Fatal(err)
	}
	b, _ := e.signedIn()
	srv, client := e.slowServer(b, timeout)
	res, err := client.Get(srv.URL + "/admin/pets/export.csv" + query)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	return res
}

// waitExportEvent waits for the audit event of an export that ended
// without the client reading it to the end.
func (e *env) waitExportEvent(t *testing.T, seen int) string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got := e.exportEvents(t); len(got) > seen {
			return got[0]
		}
	}
	t.Fatal("no audit event for the export")
	return ""
}

// An export that outlasts the server's read and write timeouts (a slow
// client, a large table) still arrives whole: the deadline moves on with
// each chunk.
func TestExportOutlastsServerTimeouts(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		res := e.slowExport(t, "", 300*time.Millisecond)
		var body strings.Builder
		buf := make([]byte, 1024)
		start := time.Now()
		for {
			n, err := res.Body.Read(buf)
			body.Write(buf[:n])
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("after %d bytes in %s: %v", body.Len(), time.Since(start).Round(time.Millisecond), err)
			}
			time.Sleep(8 * time.Millisecond)
		}
		if took := time.Since(start); took < time.Second {
			t.Fatalf("the client read the export in %s: not slower than the timeouts, the case tests nothing", took)
		}
		if rows := readCSV(t, body.String()); len(rows) != 2500 {
			t.Errorf("%d rows, want 2500", len(rows))
		}
		if ev := e.exportEvents(t)[0]; ev != staffName+": exported 2500 pets as CSV; filter: all pets" {
			t.Errorf("audit %q", ev)
		}
	})
}

// A client that goes away stops the export; its audit event says so, with
// the pets sent so far.
func TestExportClientGone(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		res := e.slowExport(t, "?status=available", 0)
		if _, err := io.ReadFull(res.Body, make([]byte, 2000)); err != nil {
			t.Fatal(err)
		}
		res.Body.Close() // unread: the connection closes
		ev := e.waitExportEvent(t, 0)
		var rows int
		if _, err := fmt.Sscanf(ev, staffName+": CSV export aborted by the client after %d pets; filter: status available", &rows); err != nil || rows >= 1500 {
			t.Errorf("audit %q: want an aborted export of fewer than the 1500 available pets", ev)
		}
	})
}

// A read that fails after the first chunk went out ends the connection
// without ending the answer: the client sees an incomplete download, not
// a complete-looking file. The audit event says so.
func TestExportFailsMidway(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		res := e.slowExport(t, "", 0)
		if _, err := io.ReadFull(res.Body, make([]byte, 2000)); err != nil {
			t.Fatal(err)
		}
		// The server is within the first chunk, waiting for the client:
		// the next chunk's read fails.
		modelstest.BreakTable(t, e.store, modelstest.Pets)
		rest, err := io.ReadAll(res.Body)
		if err == nil {
			t.Fatalf("the client read a complete answer (%d more bytes) from a failed export", len(rest))
		}
		if n := strings.Count(string(rest), "\r\n"); n < 900 || n > 1000 {
			t.Errorf("%d more lines before the end, want the rest of the first chunk", n)
		}
		if ev := e.waitExportEvent(t, 0); ev != staffName+": CSV export failed on the server after 1000 pets; filter: all pets" {
			t.Errorf("audit %q", ev)
		}
	})
}
