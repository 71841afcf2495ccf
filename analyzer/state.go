package analyzer

import (
	"slices"
	"time"
)

// The sizes that bound a State.
const (
	window  = 64 // residuals the baselines are computed from
	maxGaps = 16 // intervals between points the reporting rhythm is learnt from
	hours   = 24 // bins of the time-of-day profile
)

// State is one client x rule's detector state: the recent values of the
// metric (as residuals from its time-of-day profile), the profile itself,
// the rhythm the client reports at and the open episode of each pass. Its
// size is bounded (docs/analyzer.md, "State"). Use NewState; a State is
// not safe for concurrent use.
type State struct {
	points int64 // values judged (usable or not)
	last   int64 // unix nanoseconds of the latest point, 0 before the first

	win        [window]float64 // ring of residuals, oldest first from winI when full
	winN, winI int
	sorted     [window]float64 // the window's residuals in order (not encoded: rebuilt)

	// latest is a ring of the latest shiftN residuals as they were, not
	// clipped as the window's are (oldest first from latestI when full):
	// the current level of a metric that shifted by more than clipScales
	// scales is read from them.
	latest  [shiftN]float64
	latestI int

	gaps       [maxGaps]float64 // ring of seconds between consecutive points
	gapN, gapI int

	profile [hours]hourBin // time-of-day profile of the transformed value (UTC hours)

	// tail is the decayed count of values by how far from the median they
	// lay in the bad direction on the transformed scale (bin j: from
	// tailEdges[j] to tailEdges[j+1]), tailTotal the decayed count of every
	// value: the client's own tail, which widens the spike band of a jumpy
	// or mostly-0 metric.
	tail       [tailBins]float64
	tailTotal  float64
	tailQueue  [shiftN]float64 // distances waiting to be learnt (learnTailLater)
	tailQueueN int

	cusum [2]float64 // shift: Page's CUSUM of clipped z, upwards and downwards

	tracks [3]track // by passIndex
}

// hourBin is one hour of the day's smoothed transformed value.
type hourBin struct {
	mean float64
	n    int
}

// track is one pass's episode bookkeeping.
type track struct {
	open    bool
	ep      Episode
	calm    int   // consecutive points inside the band since the last anomalous one
	lastBad int64 // unix nanoseconds of the last anomalous point

	// spike: an excursion drafted in ep, not published until it proves
	// short (or critical); pendingN its anomalous points so far.
	pending  bool
	pendingN int

	// shift: the reference level (median residual) and robust scale the
	// open episode left, held while it lasts (at most maxShiftAge and
	// maxShiftValues), and the usable values judged since it opened.
	ref, scale float64
	values     int
}

// NewState is the state of a client x rule that has seen nothing yet.
func NewState() *State { return &State{} }

// Open is the open episodes, in the order of Passes.
func (s *State) Open() []Episode {
	var open []Episode
	for i := range s.tracks {
		if s.tracks[i].open {
			open = append(open, cloneEpisode(s.tracks[i].ep))
		}
	}
	return open
}

func passIndex(p Pass) int {
	switch p {
	case Spike:
		return 0
	case Shift:
		return 1
	}
	return 2
}

// runs reports whether rule r runs pass p.
func runs(r Rule, p Pass) bool { return slices.Contains(r.Passes, p) }

// levels are the level of each pass (by passIndex) for one point, asked
// of lv once each; Off for a pass the rule does not run.
type levels [3]Level

func levelsOf(r Rule, lv LevelFunc) levels {
	var ls levels
	for _, p := range Passes {
		l := Default
		switch {
		case !runs(r, p):
			l = Off
		case lv != nil:
			switch l = lv(p); l {
			case Off, Low, High:
			default:
				l = Default
			}
		}
		ls[passIndex(p)] = l
	}
	return ls
}

func (ls levels) of(p Pass) Level { return ls[passIndex(p)] }

// Observe judges p against what came before it and returns what happened
// to the episodes. Points older than the latest one seen, and points
// without a time, are ignored.
func (s *State) Observe(r Rule, lv LevelFunc, p Point) []Change {
	at := p.At.UnixNano()
	if p.At.IsZero() || s.last != 0 && at < s.last {
		return nil
	}
	ls := levelsOf(r, lv)
	changes := s.expire(r, ls, at, nil)
	if dq := &s.tracks[passIndex(DataQuality)]; dq.open && dq.ep.Reason == ReasonStopped {
		// It reports again (not before the silence began: a sweep may have
		// run ahead of a value that arrived late).
		changes = s.resolve(DataQuality, later(p.At, dq.ep.FirstSeen), changes)
	}
	if s.last != 0 {
		s.pushGap(float64(at-s.last) / 1e9)
	}
	s.last = at
	s.points++

	why := p.Problem
	if why == "" {
		why = problem(r, p.Value)
	}
	if why != "" {
		v := verdict{bad: true, value: p.Value, reason: why}
		return s.judge(r, ls.of(DataQuality), DataQuality, p, v, changes)
	}
	changes = s.judge(r, ls.of(DataQuality), DataQuality, p, verdict{}, changes)

	if t := &s.tracks[passIndex(Shift)]; t.open {
		if t.values++; t.values > maxShiftValues && p.At.Sub(t.ep.FirstSeen) >= maxShiftAge {
			changes = s.resolve(Shift, p.At, changes) // the new level has become the normal one
		}
	}
	return s.judgeValue(r, ls, p, changes)
}

// Sweep is the resolution sweep at time now: episodes of a client that
// stopped reporting are resolved and, when it reported steadily before,
// a data_quality episode is opened for the silence.
func (s *State) Sweep(r Rule, lv LevelFunc, now time.Time) []Change {
	return s.expire(r, levelsOf(r, lv), now.UnixNano(), nil)
}

// expire applies what the silence since the latest point means at now:
// a steady client silent for its silence limit has stopped reporting (its
// spike and shift episodes resolve then, and, unless data_quality is off,
// a data_quality episode opens at the limit scaled by the level); the
// episodes of an unsteady client resolve after unsteadySilence.
func (s *State) expire(r Rule, ls levels, now int64, changes []Change) []Change {
	if s.last == 0 || now-s.last < int64(minSilence)*3/4 { // no limit is shorter
		return changes
	}
	limit := s.silenceLimit()
	stale := limit
	if stale == 0 {
		stale = int64(unsteadySilence)
	}
	if now-s.last >= stale {
		at := time.Unix(0, s.last+stale).UTC()
		s.tracks[passIndex(Spike)].pending = false // an excursion nobody saw end
		changes = s.resolve(Spike, at, changes)
		changes = s.resolve(Shift, at, changes)
	}
	dl := ls.of(DataQuality)
	if limit == 0 || dl == Off {
		return changes
	}
	limit = int64(float64(limit) * multiplier(dl))
	dq := &s.tracks[passIndex(DataQuality)]
	if now-s.last < limit || dq.open && dq.ep.Reason == ReasonStopped {
		return changes
	}
	at := time.Unix(0, s.last+limit).UTC()
	changes = s.resolve(DataQuality, at, changes)
	return s.open(r, DataQuality, Point{At: at}, verdict{bad: true, reason: ReasonStopped}, changes)
}

// silenceLimit is how long a client that reported steadily may stay
// silent before it counts as having stopped (nanoseconds, default
// level), 0 when it has not reported steadily: silenceIntervals times its
// median interval, at least minSilence.
func (s *State) silenceLimit() int64 {
	if s.gapN < steadyIntervals {
		return 0
	}
	var buf [maxGaps]float64
	g := buf[:s.gapN]
	copy(g, s.gaps[:s.gapN])
	slices.Sort(g)
	med := g[len(g)/2]
	if g[len(g)*3/4] > steadySpread*med {
		return 0
	}
	return int64(max(silenceIntervals*med, minSilence.Seconds()) * 1e9)
}

func (s *State) pushGap(sec float64) {
	s.gaps[s.gapI] = f32(sec)
	s.gapI = (s.gapI + 1) % maxGaps
	s.gapN = min(s.gapN+1, maxGaps)
}

// push adds res to the latest residuals and, clipped to lo..hi, to the
// window, the oldest leaving a full one, and keeps sorted in step.
func (s *State) push(res, lo, hi float64) {
	s.latest[s.latestI] = f32(res)
	s.latestI = (s.latestI + 1) % shiftN
	res = f32(clamp(res, lo, hi))
	n := s.winN
	if n == window {
		old := s.win[s.winI]
		i, _ := slices.BinarySearch(s.sorted[:n], old)
		copy(s.sorted[i:n-1], s.sorted[i+1:n])
		n--
	}
	i, _ := slices.BinarySearch(s.sorted[:n], res)
	copy(s.sorted[i+1:n+1], s.sorted[i:n])
	s.sorted[i] = res
	s.win[s.winI] = res
	s.winI = (s.winI + 1) % window
	s.winN = min(s.winN+1, window)
}

// recent is the i-th latest residual of the window (0: the latest).
func (s *State) recent(i int) float64 {
	return s.win[(s.winI-1-i+2*window)%window]
}

// recentRaw is the i-th latest residual as it was, not clipped (i < shiftN).
func (s *State) recentRaw(i int) float64 {
	return s.latest[(s.latestI-1-i+2*shiftN)%shiftN]
}

func clamp(v, lo, hi float64) float64 { return min(max(v, lo), hi) }

// f32 rounds v to the nearest float32: every number the state keeps from
// value to value is so rounded, so that its encoding (4 bytes a number)
// loses nothing.
func f32(v float64) float64 { return float64(float32(v)) }

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
