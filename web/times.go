package web

import (
	"time"

	"petstore/models"
	"petstore/templates"
)

// when shows t in the store's time zone, to the minute, with the zone
// named by its abbreviation ("27 Nov 2026, 14:05 CET"). Where the zone's
// data has no letters for it (it says "+03"), the offset is written as
// "UTC+03"; the element's title gives the zone's IANA name and the moment
// in UTC, so an abbreviation that two zones share (CST) is never the only
// clue.
func (ui *Web) when(t time.Time) templates.Time {
	title := ui.location.String() + "; " + t.UTC().Format("2006-01-02 15:04") + " UTC"
	if ui.location == time.UTC {
		title = t.UTC().Format("2006-01-02 15:04:05") + " UTC"
	}
	return templates.Time{Text: models.LocalTime(t, ui.location), UTC: t.UTC().Format(time.RFC3339), Title: title}
}

// whenOr shows t, or the word instead when t is nil.
func (ui *Web) whenOr(t *time.Time, word string) templates.Time {
	if t == nil {
		return templates.Time{Text: word}
	}
	return ui.when(*t)
}
