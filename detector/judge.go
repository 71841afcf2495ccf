// Package detector runs the analyzer (package analyzer, which is pure) on
// the stored measurements: the River job that judges a client's new
// measurements as they are stored, the periodic resolution sweep, and the
// replay of `fleetgraph analyze`. The durable parts (inbox, states,
// episodes as anomaly event documents, events) are store's
// (store/analyzer.go); docs/analyzer.md "The pipeline" tells the design.
package detector

import (
	"fmt"
	"sort"
	"time"

	"github.com/fleetgraph/fleetgraph/analyzer"
	"github.com/fleetgraph/fleetgraph/isotime"
	"github.com/fleetgraph/fleetgraph/store"
)

// Judge holds one client's detector states while measurements are fed to
// it in time order, and collects the episodes that changed.
type Judge struct {
	client   string
	rules    []analyzer.Rule
	levels   levels
	states   map[store.StateKey]*state
	episodes map[string]map[string]any
	order    []string // episode ids in the order they first changed
}

type state struct {
	st     *analyzer.State
	rule   analyzer.Rule
	key    store.StateKey
	lastAt time.Time
	dirty  bool
}

// NewJudge starts judging a batch of a client: its stored states, the
// data owner's enabled rules and overrides.
func NewJudge(b store.AnalyzerBatch) (*Judge, error) {
	j := &Judge{client: b.ClientUUID, rules: b.Rules, levels: newLevels(b.Overrides),
		states: map[store.StateKey]*state{}, episodes: map[string]map[string]any{}}
	for k, blob := range b.States {
		r, ok := j.rule(k.RuleID)
		if !ok {
			continue // a rule deleted or disabled: its state waits
		}
		st := analyzer.NewState()
		if err := st.UnmarshalBinary(blob); err != nil {
			// A state that cannot be read (a format no longer known)
			// starts again rather than stopping the client's analysis.
			st = analyzer.NewState()
		}
		j.states[k] = &state{st: st, rule: r, key: k}
	}
	return j, nil
}

func (j *Judge) rule(id string) (analyzer.Rule, bool) {
	for _, r := range j.rules {
		if r.ID == id {
			return r, true
		}
	}
	return analyzer.Rule{}, false
}

// Observe judges one stored measurement against every rule it concerns.
func (j *Judge) Observe(d store.Document) {
	subject := ""
	if d.Subject != nil {
		subject = *d.Subject
	}
	for _, r := range j.rules {
		p, ok := analyzer.Extract(d.Doc, r)
		if !ok {
			continue
		}
		p.At = d.CreatedAt // the stored column: every ISO 8601 form parsed
		if p.MeasurementID == "" {
			p.MeasurementID = d.DocID
		}
		k := store.StateKey{RuleID: r.ID, Subject: subject}
		s := j.states[k]
		if s == nil {
			s = &state{st: analyzer.NewState(), rule: r, key: k}
			j.states[k] = s
		}
		changes := s.st.Observe(r, j.levels.of(r, subject), p)
		if !p.At.Before(s.lastAt) {
			s.lastAt = p.At
		}
		s.dirty = true
		j.record(s, changes)
	}
}

// Sweep runs the resolution sweep of every state at now.
func (j *Judge) Sweep(now time.Time) {
	for _, k := range j.keys() {
		s := j.states[k]
		if changes := s.st.Sweep(s.rule, j.levels.of(s.rule, k.Subject), now); len(changes) > 0 {
			s.dirty = true
			j.record(s, changes)
		}
	}
}

func (j *Judge) keys() []store.StateKey {
	ks := make([]store.StateKey, 0, len(j.states))
	for k := range j.states {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(a, b int) bool {
		return ks[a].RuleID < ks[b].RuleID || ks[a].RuleID == ks[b].RuleID && ks[a].Subject < ks[b].Subject
	})
	return ks
}

// record keeps the latest document of each changed episode.
func (j *Judge) record(s *state, changes []analyzer.Change) {
	for _, c := range changes {
		if _, seen := j.episodes[c.Episode.ID]; !seen {
			j.order = append(j.order, c.Episode.ID)
		}
		j.episodes[c.Episode.ID] = episodeDoc(j.client, s, c.Episode)
	}
}

// Result is what to write: the changed states and episodes.
func (j *Judge) Result() (store.AnalyzerResult, error) {
	var res store.AnalyzerResult
	for _, k := range j.keys() {
		s := j.states[k]
		if !s.dirty {
			continue
		}
		blob, err := s.st.MarshalBinary()
		if err != nil {
			return res, fmt.Errorf("encode detector state: %w", err)
		}
		res.States = append(res.States, store.DetectorState{Key: k, State: blob, LastAt: s.lastAt,
			Open: len(s.st.Open()) > 0})
		s.dirty = false
	}
	for _, id := range j.order {
		res.Episodes = append(res.Episodes, j.episodes[id])
	}
	j.episodes, j.order = map[string]map[string]any{}, nil
	return res, nil
}

// episodeDoc is an episode as an anomaly event document: the fields of
// testdata/anomaly_events.ndjson (times as written there: isotime.Millis)
// plus what a person needs to judge it (baseline, band, unit, direction,
// reason) and detected_by.
func episodeDoc(client string, s *state, e analyzer.Episode) map[string]any {
	r := s.rule
	doc := map[string]any{
		"id":               e.ID,
		"rule_id":          e.RuleID,
		"client_uuid":      client,
		"measurement_type": r.MeasurementType,
		"metric":           r.MetricName(),
		"metric_path":      r.Metric,
		"detection_pass":   string(e.Pass),
		"severity":         string(e.Severity),
		"status":           "new",
		"first_seen_at":    isotime.FormatMillis(e.FirstSeen),
		"last_seen_at":     isotime.FormatMillis(e.LastSeen),
		"created_at":       isotime.FormatMillis(e.FirstSeen),
		"value":            finite(e.Value),
		"baseline":         finite(e.Baseline),
		"band_low":         finite(e.BandLow),
		"band_high":        finite(e.BandHigh),
		"unit":             r.Unit,
		"direction":        string(r.Direction),
		"measurement_ids":  append([]string{}, e.MeasurementIDs...),
		"detected_by":      "analyzer",
	}
	if s.key.Subject != "" {
		doc["subject"] = s.key.Subject
	}
	if e.Reason != "" {
		doc["reason"] = e.Reason
	}
	if e.Resolved {
		doc["status"] = "resolved"
		doc["resolved_at"] = isotime.FormatMillis(e.ResolvedAt)
	}
	return doc
}

// finite is v, or nil for what JSON cannot hold (a NaN value of a
// data_quality episode).
func finite(v float64) any {
	if v != v || v > 1e308 || v < -1e308 {
		return nil
	}
	return v
}
