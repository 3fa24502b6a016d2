package models

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Exporting pets: every pet of the console's list for a filter, in the
// list's order, read a chunk at a time with the list's own keyset reads
// (petPages), so that memory stays constant whatever the table's size and
// no read holds a snapshot or a lock for longer than one chunk.

// ExportChunk is the most pets one read of an export asks for.
const ExportChunk = 1000

// ExportPets reads every pet of the listing's filter (After, Before and
// Last are ignored: an export is all of its pages), in the order the
// console lists them (a name search newest first), in chunks of up to chunk pets
// (1..ExportChunk; anything else is ExportChunk), and calls each with each
// chunk in turn (the slice is reused afterwards). Each chunk is one short
// read on the primary, run when the previous chunk has been handled: a
// pet changed meanwhile is exported as it is when its chunk is read (in
// the newest-first order, pets added after the export started are not in
// it). A name search that stops on its budget goes on from where it
// stopped, as the page's Older link does. It returns how many pets each
// was called with; an error from each, or ctx ending, stops it.
func (s *Store) ExportPets(ctx context.Context, l PetListing, chunk int, each func([]Pet) error) (int, error) {
	if chunk < 1 || chunk > ExportChunk {
		chunk = ExportChunk
	}
	if l.Search == "" {
		return s.exportListing(ctx, l, chunk, each)
	}
	read, err := s.petPages(ctx, l, ExportChunk)
	if err != nil {
		return 0, err
	}
	n := 0
	for cursor := int64(math.MaxInt64); ; {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		page, err := read(PetQuery{Limit: chunk, Before: cursor})
		if err != nil {
			return n, err
		}
		if len(page.Pets) > 0 {
			// Pages are lowest id first; the next goes on below the lowest.
			next := page.Pets[0].ID
			slices.Reverse(page.Pets)
			if err := each(page.Pets); err != nil {
				return n, err
			}
			n += len(page.Pets)
			cursor = next
		}
		switch {
		case page.Resume != 0:
			cursor = page.Resume
		case !page.More || len(page.Pets) == 0:
			return n, nil
		}
	}
}

// ExportOutcome is how an export ended, as its audit event says.
type ExportOutcome string

// The outcomes of an export.
const (
	// ExportDone: every pet of the filter was sent.
	ExportDone ExportOutcome = "done"
	// ExportAborted: the client went away (or stopped reading) first.
	ExportAborted ExportOutcome = "aborted"
	// ExportFailed: a read failed on the server's side.
	ExportFailed ExportOutcome = "failed"
)

// RecordExport writes the audit event of an export of the listing's
// filter by actor: how it ended and how many pets it sent. It is written
// after the export, also when the export's request has ended (the client
// went away), so it does not use ctx's end, only its values.
func (s *Store) RecordExport(ctx context.Context, actor string, l PetListing, rows int, outcome ExportOutcome) error {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	ev := AuditEvent{At: s.now(), Actor: actor, Action: ActionPetsExported, TargetType: TargetPet,
		Detail: truncate(exportDetail(l, rows, outcome), 500)}
	return s.dbErr("record export", s.db.WithContext(actx).Create(&ev).Error)
}

// exportDetail is an export's audit detail: what was exported and how it
// ended, such as `exported 2500 pets as CSV; filter: status sold, search "cat"`.
func exportDetail(l PetListing, rows int, outcome ExportOutcome) string {
	var filter []string
	if l.Status != "" {
		filter = append(filter, "status "+string(l.Status))
	}
	if l.Search != "" {
		filter = append(filter, "search "+strconv.Quote(l.Search))
	}
	if l.Category != 0 {
		filter = append(filter, "category "+strconv.FormatInt(l.Category, 10))
	}
	if l.From != "" {
		filter = append(filter, "created from "+l.From)
	}
	if l.To != "" {
		filter = append(filter, "created to "+l.To)
	}
	what := "all pets"
	if len(filter) > 0 {
		what = strings.Join(filter, ", ")
	}
	pets := fmt.Sprintf("%d pets", rows)
	if rows == 1 {
		pets = "1 pet"
	}
	switch outcome {
	case ExportAborted:
		return fmt.Sprintf("CSV export aborted by the client after %s; filter: %s", pets, what)
	case ExportFailed:
		return fmt.Sprintf("CSV export failed on the server after %s; filter: %s", pets, what)
	}
	return fmt.Sprintf("exported %s as CSV; filter: %s", pets, what)
}

// IsFormulaStart reports whether a CSV cell starting with r may be a
// formula to a spreadsheet: =, +, -, @, and every character Unicode's
// compatibility folding (NFKC) turns into one of them: the full-width
// forms (＝＋－＠) that East Asian input methods type, the small forms
// (﹦﹢﹣﹫), and superscript and subscript ones. A reader that folds widths
// before it looks for a formula sees ＝1+1 as =1+1. The export puts a '
// before such a cell; the import (ReadTextCell) takes it away again.
func IsFormulaStart(r rune) bool {
	switch r {
	case '=', '+', '-', '@',
		'\uFF1D', '\uFF0B', '\uFF0D', '\uFF20', // ＝＋－＠
		'\uFE66', '\uFE62', '\uFE63', '\uFE6B', // ﹦﹢﹣﹫
		'\u207C', '\u207A', '\u208C', '\u208A', '\uFB29': // ⁼⁺₌₊﬩
		return true
	}
	return false
}
