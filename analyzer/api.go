// Package analyzer judges measurement values against the same client's own
// history and turns the verdicts into anomaly episodes. It is pure: no I/O,
// no clock, no database. The caller (the detector that runs on every write
// path, `fleetgraph analyze`, the quality benchmark) keeps one State per
// data owner x client x rule, feeds it points in time order and stores it.
//
// This file is the contract between the algorithms and their callers; the
// algorithms live beside it (state.go, detect.go, episodes.go, encode.go,
// params.go; docs/analyzer.md describes them).
package analyzer

import "time"

// Direction is the direction of a metric that is bad.
type Direction string

const (
	Up   Direction = "up"
	Down Direction = "down"
	Both Direction = "both"
)

// Pass is one detection pass of a rule.
type Pass string

const (
	Spike       Pass = "spike"
	Shift       Pass = "shift"
	DataQuality Pass = "data_quality"
)

// Passes are every pass, in the order the dimensions endpoint lists them.
var Passes = []Pass{Spike, Shift, DataQuality}

// Level is how loud detection is for a scope, from quiet to loud.
type Level string

const (
	Off     Level = "off"
	Low     Level = "low"
	Default Level = "default"
	High    Level = "high"
)

// Levels are every level from quiet to loud (the overrides' vocabulary).
var Levels = []Level{Off, Low, Default, High}

// Severity of an episode, by magnitude.
type Severity string

const (
	Warning  Severity = "warning"
	Critical Severity = "critical"
)

// Rule names what to watch: a measurement type, a metric path into the
// document (dotted, e.g. "statistic_values.download"), optionally a subject
// ("" = any), the bad direction, a unit and the passes it runs.
type Rule struct {
	ID              string
	Name            string
	MeasurementType string
	Metric          string
	Subject         string
	Direction       Direction
	Unit            string
	Passes          []Pass
	Enabled         bool
	Builtin         bool
}

// MetricName is the last segment of the rule's path: an episode's `metric`.
func (r Rule) MetricName() string {
	for i := len(r.Metric) - 1; i >= 0; i-- {
		if r.Metric[i] == '.' {
			return r.Metric[i+1:]
		}
	}
	return r.Metric
}

// Point is one stored measurement's value of a rule's metric.
// Problem is empty for a usable number; otherwise it names why the value
// cannot be (e.g. "negative", "over_100_percent", "not_a_number", "nan"),
// and Value is meaningless.
type Point struct {
	At            time.Time
	MeasurementID string
	Value         float64
	Problem       string
}

// LevelFunc answers the effective level of a pass for the point being
// judged (overrides resolved by the caller; Default when none applies).
type LevelFunc func(Pass) Level

// Episode is an anomaly episode: what the API serves as an anomaly event.
type Episode struct {
	ID             string // {rule_id}::{pass}::{first_seen_epoch seconds}
	RuleID         string
	Pass           Pass
	Severity       Severity
	Resolved       bool
	FirstSeen      time.Time
	LastSeen       time.Time
	ResolvedAt     time.Time // zero while open
	Value          float64   // the most anomalous value seen in the episode
	Baseline       float64   // the baseline the value was judged against
	BandLow        float64   // the normal band the value left
	BandHigh       float64
	Reason         string   // data_quality: what was wrong; else empty
	MeasurementIDs []string // bounded: at most MaxMeasurementIDs, first and latest kept
}

// MaxMeasurementIDs bounds an episode's measurement_ids.
const MaxMeasurementIDs = 50

// ChangeKind says what happened to an episode.
type ChangeKind string

const (
	Opened   ChangeKind = "opened"
	Extended ChangeKind = "extended"
	Resolved ChangeKind = "resolved"
)

// Change is one episode's change; Episode is its state after the change.
type Change struct {
	Kind    ChangeKind
	Episode Episode
}

// The State type (state.go) holds one client x rule's detector state. Its
// methods, the whole contract with callers:
//
//	func NewState() *State
//	func (s *State) Observe(r Rule, lv LevelFunc, p Point) []Change
//	    judges p against what came before it (never the future); points
//	    older than the last one seen are ignored (returns nil). Its changes
//	    may open, extend and resolve episodes: an episode whose metric
//	    stayed inside its band long enough resolves at the value that
//	    showed it; a silence p ends is applied first, as Sweep would have.
//	    A spike that is not critical opens at the value after it (back
//	    inside the band), its first_seen the spike's.
//	func (s *State) Sweep(r Rule, lv LevelFunc, now time.Time) []Change
//	    the resolution sweep: resolves the episodes of a client that
//	    stopped reporting and opens a data_quality episode for a metric
//	    that stopped arriving (both dated from the data, not from now, so
//	    ids do not depend on when the sweep runs). Sweep only with a now
//	    no later than the data still to come for this state: a sweep ahead
//	    of an import or replay sees a silence that is not there.
//	func (s *State) MarshalBinary() ([]byte, error)
//	func (s *State) UnmarshalBinary([]byte) error
//	    a bounded, versioned encoding stored in PostgreSQL.
//	func (s *State) Open() []Episode   // the open episodes
//
// and the rule catalogue and extraction (catalogue.go, extract.go):
//
//	func Catalogue() []Rule
//	func Extract(doc []byte, r Rule) (Point, bool)   // false: metric absent
