// Package datemath reads the dates of Query DSL requests: absolute dates in
// the ISO 8601 forms Elasticsearch accepts (the Search part of the one list
// of layouts, isotime.Layouts), time zones, and date math anchored
// at now or at a date (now-7d/d, 2026-01-01||+1M/M), rounded down or, as
// gt and lte do, up to the last millisecond of the unit. Errors are a 400
// (search.ErrBadRequest).
package datemath

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/isotime"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/dateformat"
)

// Parse reads an absolute date in loc (UTC when nil) unless it names its
// offset, in the forms isotime.Layouts lets the Query DSL read
// (isotime.Search). precision is the unit a date without a time of day is
// precise to (d, M or y; rounded up to the unit's end by gt and lte), else
// "".
func Parse(s string, loc *time.Location) (t time.Time, precision string, err error) {
	if loc == nil {
		loc = time.UTC
	}
	if t, precision, ok := isotime.Parse(isotime.Search, s, loc); ok {
		return t, precision, nil
	}
	return time.Time{}, "", search.Badf("cannot parse date %q", s)
}

// TimeZone reads a time_zone option: UTC, an offset (+01:00) or an IANA name.
func TimeZone(tz string) (*time.Location, error) {
	if tz == "" || tz == "Z" || strings.EqualFold(tz, "UTC") {
		return time.UTC, nil
	}
	if len(tz) == 6 && (tz[0] == '+' || tz[0] == '-') && tz[3] == ':' {
		h, err1 := strconv.Atoi(tz[1:3])
		m, err2 := strconv.Atoi(tz[4:])
		if err1 == nil && err2 == nil {
			off := h*3600 + m*60
			if tz[0] == '-' {
				off = -off
			}
			return time.FixedZone(tz, off), nil
		}
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, search.Badf("unknown time_zone %q", tz)
	}
	return loc, nil
}

var mathOp = regexp.MustCompile(`^([+-])(\d+)([yMwdhHms])|^/([yMwdhHms])`)

// numericText is a number written as text: epoch milliseconds when it has
// more than four characters (four digits are a year).
var numericText = regexp.MustCompile(`^\s*-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?\s*$`)

// Eval evaluates a date or date-math expression in loc (UTC when nil),
// reading absolute dates with f's patterns first. roundUp moves a rounded
// value to the last millisecond of its unit.
func Eval(s string, now time.Time, roundUp bool, loc *time.Location, f dateformat.Format) (time.Time, error) {
	if loc == nil {
		loc = time.UTC
	}
	s = strings.TrimSpace(s)
	var t time.Time
	var rest string
	switch {
	case strings.HasPrefix(s, "now"):
		t, rest = now.In(loc), s[3:]
	default:
		anchor := s
		if i := strings.Index(s, "||"); i >= 0 {
			anchor, rest = s[:i], s[i+2:]
		}
		if numericText.MatchString(anchor) && len(anchor) > 4 {
			f, _ := strconv.ParseFloat(anchor, 64)
			t = time.UnixMilli(int64(f)).In(loc)
			break
		}
		var prec string
		var err error
		var ok bool
		if t, prec, ok = f.Read(anchor, loc); !ok {
			if t, prec, err = Parse(anchor, loc); err != nil {
				return time.Time{}, err
			}
		}
		if rest == "" && prec != "" && roundUp {
			return endOf(t, prec), nil
		}
	}
	return apply(t, s, rest, roundUp)
}

// apply applies the operations rest (+1d, -2h, /M ...) of expression s to t.
func apply(t time.Time, s, rest string, roundUp bool) (time.Time, error) {
	for rest != "" {
		m := mathOp.FindStringSubmatch(rest)
		if m == nil {
			return time.Time{}, search.Badf("cannot parse date math %q", s)
		}
		rest = rest[len(m[0]):]
		if m[4] != "" {
			t = startOf(t, m[4])
			if roundUp {
				t = endOf(t, m[4])
			}
			continue
		}
		n, err := strconv.Atoi(m[2])
		if err != nil || n > 1e6 {
			return time.Time{}, search.Badf("date math %q is out of range", s)
		}
		if m[1] == "-" {
			n = -n
		}
		t = Step(t, n, m[3])
	}
	return t, nil
}

// Step moves t by n calendar units: y, q (three months), M, w, d, h or H,
// m, s (date math's units); t itself for another unit. Years, months and
// days step in t's location (a day is 23 or 25 hours across a DST change).
// It is the one calendar stepper: date math, the last millisecond of a
// rounded unit, and date_histogram's calendar buckets step with it.
func Step(t time.Time, n int, unit string) time.Time {
	switch unit {
	case "y":
		return t.AddDate(n, 0, 0)
	case "q":
		return t.AddDate(0, 3*n, 0)
	case "M":
		return t.AddDate(0, n, 0)
	case "w":
		return t.AddDate(0, 0, 7*n)
	case "d":
		return t.AddDate(0, 0, n)
	case "h", "H":
		return t.Add(time.Duration(n) * time.Hour)
	case "m":
		return t.Add(time.Duration(n) * time.Minute)
	case "s":
		return t.Add(time.Duration(n) * time.Second)
	}
	return t
}

// startOf is the start of the unit holding t (weeks start on Monday).
func startOf(t time.Time, unit string) time.Time {
	y, mo, d := t.Date()
	loc := t.Location()
	switch unit {
	case "y":
		return time.Date(y, 1, 1, 0, 0, 0, 0, loc)
	case "M":
		return time.Date(y, mo, 1, 0, 0, 0, 0, loc)
	case "w":
		wd := (int(t.Weekday()) + 6) % 7 // Monday first
		return time.Date(y, mo, d-wd, 0, 0, 0, 0, loc)
	case "d":
		return time.Date(y, mo, d, 0, 0, 0, 0, loc)
	case "h", "H":
		return time.Date(y, mo, d, t.Hour(), 0, 0, 0, loc)
	case "m":
		return time.Date(y, mo, d, t.Hour(), t.Minute(), 0, 0, loc)
	case "s":
		return time.Date(y, mo, d, t.Hour(), t.Minute(), t.Second(), 0, loc)
	}
	return t
}

// endOf is the last millisecond of the unit starting at t.
func endOf(t time.Time, unit string) time.Time {
	next := Step(t, 1, unit)
	if next.Equal(t) {
		return t
	}
	return next.Add(-time.Millisecond)
}
