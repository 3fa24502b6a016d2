package web

import (
	"encoding/csv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"petstore/models"
)

// hostileNames are names a spreadsheet could run, and harmless ones that
// must stay as they are, with the name cell that a reader of the comma
// file gets.
var hostileNames = []struct{ name, cell string }{
	{"x;=1+1; y", "x;'=1+1; y"},
	{"x;@SUM(1+1)", "x;'@SUM(1+1)"},
	{"x;-2+3", "x;'-2+3"},
	{"x;+2", "x;'+2"},
	{"x;;=1", "x;;'=1"},
	{"x, =1+1", "x, '=1+1"},
	{"x;  @cmd", "x;  '@cmd"},
	{"x;\u3000=1", "x;\u3000'=1"}, // an ideographic space, which trimming removes
	{`x;"=1+1"`, `x;"'=1+1"`},
	{"＝1+1", "'＝1+1"},
	{"＋1", "'＋1"},
	{"－1", "'－1"},
	{"＠SUM(1+1)", "'＠SUM(1+1)"},
	{"﹦1", "'﹦1"},
	{"x;＝1+1", "x;'＝1+1"},
	{"x\t=1+1", "x\t'=1+1"},
	{"x\t\t@SUM(1)", "x\t\t'@SUM(1)"},
	{"\tx", "'\tx"},
	{"\t=1+1", "'\t'=1+1"},
	{"\rx", "'x"}, // a lone CR is not written
	{"\r\n=cmd", "'\n'=cmd"},
	{"line 1\n=cmd", "line 1\n'=cmd"},
	{"line 1\nline 2", "line 1\nline 2"},
	{"-1", "'-1"},
	{"+1", "'+1"},
	{"=1+1", "'=1+1"},
	{"@SUM(A1:A9)", "'@SUM(A1:A9)"},
	{`=HYPERLINK("http://evil.example","x")`, `'=HYPERLINK("http://evil.example","x")`},
	{" =1+1", " '=1+1"},
	{`"=1+1"`, `"'=1+1"`},
	{"'quoted", "''quoted"},
	{"x;'y", "x;''y"},
	{"O'Brien", "O'Brien"},
	{`Say "hi"`, `Say "hi"`},
	{"Rex, the good boy", "Rex, the good boy"},
	{"a=1;b+2", "a=1;b+2"},
	{"x;", "x;"},
	{"Pépé", "Pépé"},
	{"Mochi 🐾", "Mochi 🐾"},
	{"Rex", "Rex"},
}

// separators are the characters a spreadsheet may split a line on.
var separators = []rune{',', ';', '\t'}

// startsFormula reports whether a cell, once trimmed of spaces and quotes
// as a lenient reader trims it, starts with a formula character.
func startsFormula(cell string) bool {
	r, _ := utf8.DecodeRuneInString(strings.TrimLeftFunc(cell, func(r rune) bool { return r == '"' || unicode.IsSpace(r) }))
	return isFormulaStart(r)
}

// recoverName takes the ' out of a cell where the export puts one: at the
// start and after each separator or line break, spaces and quotes
// skipped.
func recoverName(cell string) string {
	var b strings.Builder
	start := true
	for _, r := range cell {
		if start {
			switch {
			case r == '\'':
				start = false
				continue
			case r != '"' && !unicode.IsSpace(r):
				start = false
			}
		}
		if strings.ContainsRune(",;\t\n", r) {
			start = true
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hostilePet(name string) models.Pet {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return models.Pet{ID: 7, Name: name, CategoryID: 9, Status: models.StatusSold, CreatedAt: at, UpdatedAt: at}
}

// The row of each hostile name is valid CSV; its name cell reads back as
// the name with the ' the export adds, and taking those away gives the
// name (without its CRs, which a CSV cell cannot hold alone).
func TestExportRowReadsBack(t *testing.T) {
	t.Parallel()
	for _, tt := range hostileNames {
		t.Run(tt.name, func(t *testing.T) {
			row := string(appendPetRow(nil, hostilePet(tt.name)))
			r := csv.NewReader(strings.NewReader(row))
			r.FieldsPerRecord = len(exportColumns)
			records, err := r.ReadAll()
			if err != nil || len(records) != 1 {
				t.Fatalf("row %q: %d records, %v", row, len(records), err)
			}
			want := []string{"7", tt.cell, "9", "sold", "2026-01-02T03:04:05Z", "2026-01-02T03:04:05Z"}
			if got := records[0]; strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("row %q reads as %q, want %q", row, got, want)
			}
			if got, want := recoverName(records[0][1]), strings.ReplaceAll(tt.name, "\r", ""); got != want {
				t.Errorf("cell %q recovers as %q, want %q", records[0][1], got, want)
			}
		})
	}
}

// Whatever a spreadsheet splits on, no cell is a formula: the name cell in
// a file of each separator reads as one cell (it is quoted when it holds
// any of them) that starts with no formula character, and the comma file
// read by a spreadsheet that ignores its quotes (splitting its lines on
// ';' or tab, and on every line break) has no cell that starts with one.
func TestExportNoFormulaCell(t *testing.T) {
	t.Parallel()
	for _, tt := range hostileNames {
		t.Run(tt.name, func(t *testing.T) {
			cell := string(appendTextCell(nil, tt.name))
			for _, sep := range separators {
				line := "1" + string(sep) + cell + string(sep) + "2\r\n"
				r := csv.NewReader(strings.NewReader(line))
				r.Comma = sep
				records, err := r.ReadAll()
				if err != nil || len(records) != 1 || len(records[0]) != 3 {
					t.Errorf("separator %q: %q reads as %q, %v; want 3 cells", sep, line, records, err)
					continue
				}
				if records[0][1] != tt.cell {
					t.Errorf("separator %q: the name reads as %q, want %q", sep, records[0][1], tt.cell)
				}
				for _, c := range records[0] {
					if startsFormula(c) {
						t.Errorf("separator %q: cell %q is a formula", sep, c)
					}
				}
			}
			row := string(appendPetRow(nil, hostilePet(tt.name)))
			for _, sep := range separators {
				for line := range strings.FieldsFuncSeq(row, func(r rune) bool { return r == '\r' || r == '\n' }) {
					for _, c := range strings.Split(line, string(sep)) {
						if startsFormula(c) {
							t.Errorf("split on %q ignoring quotes, row %q has the formula cell %q", sep, row, c)
						}
					}
				}
			}
		})
	}
}

// Every character that Unicode's compatibility folding turns into a
// formula character is one.
func TestFormulaStartsFolded(t *testing.T) {
	t.Parallel()
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		s := string(r)
		if !norm.NFKC.IsNormalString(s) || r < utf8.RuneSelf {
			if folded := norm.NFKC.String(s); len(folded) == 1 && strings.Contains("=+-@", folded) && !isFormulaStart(r) {
				t.Errorf("%U %c folds to %s but is not a formula start", r, r, folded)
			}
		}
	}
}

// BenchmarkExportRow measures one row of the export, a plain name and a
// hostile one.
func BenchmarkExportRow(b *testing.B) {
	for _, name := range []string{"Luna 12345", "x;=1+1; y"} {
		b.Run(name, func(b *testing.B) {
			p := hostilePet(name)
			var line []byte
			b.ReportAllocs()
			for b.Loop() {
				line = appendPetRow(line[:0], p)
			}
		})
	}
}
