// Package isotime declares, once, the forms of a time fleetgraph reads
// (Layouts: ISO 8601's, and RFC 1123 for the export API) and the form it
// writes times in as Elasticsearch does (Millis). Three readers take
// times, each a part of the one list named by its Reader: a stored
// document's times (store.ParseTime), the absolute dates of the Query DSL
// and ES|QL (search/datemath) and the export API's time parameters
// (export.ParseTime). A reader's part is what it has always taken; a form
// one takes and another refuses says so in its row.
package isotime

import "time"

// Millis is the form fleetgraph writes times in where Elasticsearch
// would: ISO 8601 to the millisecond, Z for UTC
// (2026-11-03T06:26:34.000Z), as ES|QL answers dates, as episode documents
// and webhook payloads carry them, as an aggregation's *_as_string reads
// (in its time_zone's offset when it has one).
const Millis = "2006-01-02T15:04:05.000Z07:00"

// FormatMillis writes t in UTC with Millis.
func FormatMillis(t time.Time) string { return t.UTC().Format(Millis) }

// MillisSQL is Millis as PostgreSQL's to_char writes it, of a timestamp
// read in UTC: to_char(t AT TIME ZONE 'UTC', MillisSQL).
const MillisSQL = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`

// Reader is one reader of times, or several (a set of them).
type Reader uint8

// The readers of times.
const (
	// Documents: a stored document's times (created_at, a system status's
	// client_time, the times read into API types), a REST body's Time
	// values, fleetgraph analyze --since (store.ParseTime).
	Documents Reader = 1 << iota
	// Search: the absolute dates of the Query DSL and of ES|QL literals
	// (datemath.Parse; a date anchored in date math too).
	Search
	// Export: the export API's start_time and end_time, license usage's
	// (export.ParseTime, which first reads epoch seconds and milliseconds,
	// writes a space between date and time as T, a lower-case t and z in
	// upper case, and a + an unencoded URL turned into a space back).
	Export

	all = Documents | Search | Export
)

// Layout is one form of a time: its Go layout, the unit a time in it is
// precise to (the date-math unit of a date alone: d, M or y; "" for a
// time of day) and the readers that take it.
type Layout struct {
	Layout    string
	Precision string
	Readers   Reader
}

// Layouts is the one list of the forms of a time fleetgraph reads. A time
// without a zone is in the reader's location: UTC, but for a Query DSL
// time_zone. No two layouts take the same text (but RFC 3339's and
// Z0700's Z, read alike), so their order does not matter.
var Layouts = []Layout{
	// ISO 8601's extended format.
	{time.RFC3339Nano, "", all},
	{"2006-01-02T15:04:05.999999999Z0700", "", all},
	{"2006-01-02T15:04:05.999999999Z07", "", Export},
	{"2006-01-02T15:04:05.999999999", "", all},
	{"2006-01-02 15:04:05.999999999Z07:00", "", Documents | Search}, // Export: read as T
	{"2006-01-02 15:04:05.999999999", "", Documents | Search},       // Export: read as T
	{"2006-01-02T15:04Z07:00", "", Search | Export},
	{"2006-01-02T15:04Z0700", "", Export},
	{"2006-01-02T15:04", "", all},
	{"2006-01-02T15", "", Search},
	{"2006-01-02", "d", all},
	{"2006-01", "M", Search},
	{"2006", "y", Search}, // Export: four digits are epoch seconds
	// A zone's abbreviation; RFC 1123.
	{"2006-01-02T15:04:05.999999999 MST", "", Export},
	{time.RFC1123Z, "", Export},
	{time.RFC1123, "", Export},
	// ISO 8601's basic format.
	{"20060102T150405.999999999Z0700", "", Export},
	{"20060102T150405.999999999Z07", "", Export},
	{"20060102T150405.999999999", "", Export},
	{"20060102T1504Z0700", "", Export},
	{"20060102T1504", "", Export},
	{"20060102", "d", Export},
}

// Parse reads s in the first of r's layouts that takes it, and answers
// the layout's precision; false when none of r's layouts takes s. A time
// without a zone is in loc (time.ParseInLocation); with loc nil it is
// read as time.Parse reads: UTC, and a zone's abbreviation or offset
// matched against the local zone.
func Parse(r Reader, s string, loc *time.Location) (t time.Time, precision string, ok bool) {
	for _, l := range Layouts {
		if l.Readers&r == 0 {
			continue
		}
		var err error
		if loc == nil {
			t, err = time.Parse(l.Layout, s)
		} else {
			t, err = time.ParseInLocation(l.Layout, s, loc)
		}
		if err == nil {
			return t, l.Precision, true
		}
	}
	return time.Time{}, "", false
}
