package analyzer

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/rawjson"
)

// The reasons a value cannot be (Point.Problem, Episode.Reason).
const (
	ProblemNegative  = "negative"
	ProblemOver100   = "over_100_percent"
	ProblemNotNumber = "not_a_number"
	ProblemNaN       = "nan"
	ProblemNotFinite = "not_finite"
	ReasonStopped    = "stopped_reporting"
)

// Extract reads rule r's metric out of a stored measurement document. It
// answers false when the rule does not apply to the document (another
// measurement type or subject) or the document lacks the metric (absent
// or null). A value that is there but cannot be a measurement of it (a
// string, a negative number, a percentage over 100) is a Point with
// Problem set. At is the document's created_at (zero when it has none).
func Extract(doc []byte, r Rule) (Point, bool) {
	if !isString(rawjson.Member(doc, "type"), r.MeasurementType) {
		return Point{}, false
	}
	if r.Subject != "" && !isString(rawjson.Member(rawjson.Member(doc, "study"), "subject"), r.Subject) {
		return Point{}, false
	}
	v := doc
	for path := r.Metric; v != nil; {
		seg, rest, more := strings.Cut(path, ".")
		v = rawjson.Member(v, seg)
		if !more {
			break
		}
		path = rest
	}
	if v == nil || string(v) == "null" {
		return Point{}, false
	}
	p := Point{MeasurementID: unquoted(rawjson.Member(doc, "id"))}
	if at := unquoted(rawjson.Member(doc, "created_at")); at != "" {
		p.At, _ = time.Parse(time.RFC3339Nano, at)
	}
	switch {
	case v[0] == '"':
		p.Problem = ProblemNotNumber
		if s := strings.ToLower(unquoted(v)); s == "nan" || s == "-nan" {
			p.Problem = ProblemNaN
		}
	case v[0] == '-' || v[0] >= '0' && v[0] <= '9':
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil && !math.IsInf(f, 0) {
			p.Problem = ProblemNotNumber
			break
		}
		p.Value = f
		p.Problem = problem(r, f)
	default: // true, false, an object or an array
		p.Problem = ProblemNotNumber
	}
	return p, true
}

// problem names why v cannot be a value of r's metric, "" when it can.
// Every metric the analyzer watches (speeds, times, counts, rates) is
// finite and not negative; a percentage is at most 100.
func problem(r Rule, v float64) string {
	switch {
	case math.IsNaN(v):
		return ProblemNaN
	case math.IsInf(v, 0):
		return ProblemNotFinite
	case v < 0:
		return ProblemNegative
	case r.Unit == Percent && v > 100:
		return ProblemOver100
	}
	return ""
}

// unquoted is the text of a JSON string literal without escapes, "" for
// anything else.
func unquoted(lit []byte) string {
	if len(lit) < 2 || lit[0] != '"' {
		return ""
	}
	return string(lit[1 : len(lit)-1])
}

// isString reports whether lit is the JSON string literal of s (s without
// characters JSON escapes).
func isString(lit []byte, s string) bool {
	return len(lit) >= 2 && lit[0] == '"' && string(lit[1:len(lit)-1]) == s
}
