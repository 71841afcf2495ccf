package analyzer

import (
	"math"
	"strconv"
	"time"
)

// judge applies pass's verdict v on point p to its episode: an anomalous
// point opens an episode or extends the open one; a normal one counts
// towards resolving it.
//
// A spike is a short excursion: unless it is critical at once, it opens
// when the metric is back inside its band after at most maxSpikeLen
// anomalous points (the episode's first_seen is then its first point);
// an excursion that lasts longer is a level change, the shift pass's.
func (s *State) judge(r Rule, l Level, pass Pass, p Point, v verdict, changes []Change) []Change {
	t := &s.tracks[passIndex(pass)]
	if l == Off {
		t.pending = false
	}
	if v.bad && l != Off {
		switch {
		case t.open:
			return s.extend(pass, p, v, changes)
		case t.pending:
			s.add(t, p, v)
			if t.ep.Severity == Critical {
				return s.publish(t, changes)
			}
			if t.pendingN++; t.pendingN > maxSpikeLen {
				t.pending = false
			}
			return changes
		case pass == Spike && !v.critical:
			s.start(r, t, pass, p, v)
			t.pending, t.pendingN = true, 1
			return changes
		}
		s.start(r, t, pass, p, v)
		return s.publish(t, changes)
	}
	if t.pending { // back inside the band: it was a spike
		changes = s.publish(t, changes)
	}
	if !t.open {
		return changes
	}
	t.calm++
	if t.calm >= calmPoints[passIndex(pass)] && p.At.UnixNano()-t.lastBad >= int64(calmTime[passIndex(pass)]) {
		return s.resolve(pass, p.At, changes)
	}
	return changes
}

// open opens an episode of pass at p.
func (s *State) open(r Rule, pass Pass, p Point, v verdict, changes []Change) []Change {
	t := &s.tracks[passIndex(pass)]
	s.start(r, t, pass, p, v)
	return s.publish(t, changes)
}

// start drafts t's episode from its first point p.
func (s *State) start(r Rule, t *track, pass Pass, p Point, v verdict) {
	at := p.At.UTC()
	t.calm, t.lastBad = 0, at.UnixNano()
	t.ref, t.scale, t.values = v.ref, v.scale, 0
	t.ep = Episode{
		ID:        r.ID + "::" + string(pass) + "::" + strconv.FormatInt(at.Unix(), 10),
		RuleID:    r.ID,
		Pass:      pass,
		Severity:  severity(v),
		FirstSeen: at,
		LastSeen:  at,
		Value:     v.value,
		Baseline:  v.baseline,
		BandLow:   v.lo,
		BandHigh:  v.hi,
		Reason:    v.reason,
	}
	if p.MeasurementID != "" {
		t.ep.MeasurementIDs = []string{p.MeasurementID}
	}
}

// publish opens t's drafted episode.
func (s *State) publish(t *track, changes []Change) []Change {
	t.open, t.pending = true, false
	return append(changes, Change{Kind: Opened, Episode: cloneEpisode(t.ep)})
}

// extend adds p to pass's open episode.
func (s *State) extend(pass Pass, p Point, v verdict, changes []Change) []Change {
	t := &s.tracks[passIndex(pass)]
	s.add(t, p, v)
	return append(changes, Change{Kind: Extended, Episode: cloneEpisode(t.ep)})
}

// add adds anomalous point p to t's episode (open or drafted).
func (s *State) add(t *track, p Point, v verdict) {
	ep := &t.ep
	t.calm, t.lastBad = 0, p.At.UnixNano()
	ep.LastSeen = p.At.UTC()
	if severity(v) == Critical {
		ep.Severity = Critical
	}
	if v.reason != "" {
		ep.Reason = v.reason
	}
	if math.Abs(v.value-v.baseline) > math.Abs(ep.Value-ep.Baseline) || v.reason != "" {
		ep.Value, ep.Baseline, ep.BandLow, ep.BandHigh = v.value, v.baseline, v.lo, v.hi
	}
	if p.MeasurementID != "" {
		ep.MeasurementIDs = appendBounded(ep.MeasurementIDs, p.MeasurementID)
	}
}

// resolve resolves pass's open episode, if any, at time at.
func (s *State) resolve(pass Pass, at time.Time, changes []Change) []Change {
	t := &s.tracks[passIndex(pass)]
	if !t.open {
		return changes
	}
	t.open, t.ref, t.scale, t.values = false, 0, 0, 0
	t.ep.Resolved = true
	t.ep.ResolvedAt = at.UTC()
	changes = append(changes, Change{Kind: Resolved, Episode: cloneEpisode(t.ep)})
	t.ep = Episode{}
	return changes
}

func severity(v verdict) Severity {
	if v.critical {
		return Critical
	}
	return Warning
}

// appendBounded appends id to ids keeping at most MaxMeasurementIDs: the
// first half of them and the latest.
func appendBounded(ids []string, id string) []string {
	if len(ids) < MaxMeasurementIDs {
		return append(ids, id)
	}
	keep := MaxMeasurementIDs / 2
	copy(ids[keep:], ids[keep+1:])
	ids[len(ids)-1] = id
	return ids
}

// cloneEpisode is e with its own MeasurementIDs, so that a Change stays
// as it was when the state moves on.
func cloneEpisode(e Episode) Episode {
	e.MeasurementIDs = append([]string(nil), e.MeasurementIDs...)
	return e
}
