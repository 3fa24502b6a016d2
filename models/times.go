package models

import (
	"strings"
	"time"
)

// LocalTime writes t as staff read it: in the zone loc, to the minute,
// with the zone named by its abbreviation ("27 Nov 2026, 14:05 CET").
// Where the zone's data has no letters for it (it says "+03"), the offset
// is written as "UTC+03".
func LocalTime(t time.Time, loc *time.Location) string {
	local := t.In(loc)
	zone := local.Format("MST")
	if strings.HasPrefix(zone, "+") || strings.HasPrefix(zone, "-") {
		zone = "UTC" + zone
	}
	return local.Format("2 Jan 2006, 15:04") + " " + zone
}
