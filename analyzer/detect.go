package analyzer

import (
	"math"
	"slices"
)

// baseline is the robust centre and spread of the window's residuals.
type baseline struct {
	median, scale float64
}

// baseline is the window's median and robust scale (1.4826 MAD, at least
// minScale).
func (s *State) baseline() baseline {
	var buf [window]float64
	w := buf[:s.winN]
	copy(w, s.win[:s.winN])
	med := median(w)
	for i := range w {
		w[i] = math.Abs(w[i] - med)
	}
	return baseline{median: med, scale: max(1.4826*median(w), minScale)}
}

// median sorts w and answers its median.
func median(w []float64) float64 {
	slices.Sort(w)
	n := len(w)
	if n%2 == 1 {
		return w[n/2]
	}
	return (w[n/2-1] + w[n/2]) / 2
}

// verdict is one pass's judgement of one point.
type verdict struct {
	bad      bool
	critical bool
	value    float64 // the value judged, in the metric's unit
	baseline float64 // what it was judged against, in the metric's unit
	lo, hi   float64 // the normal band, in the metric's unit
	reason   string  // data_quality: what was wrong

	ref, scale float64 // shift: the reference level and scale judged against
}

// band is a verdict on deviation dev from centre c (both on the
// transformed scale, c including the time-of-day offset) for threshold thr.
func band(r Rule, dev, c, thr, value float64) verdict {
	v := verdict{value: value, baseline: untransform(c), lo: untransform(c - thr), hi: untransform(c + thr)}
	bad := r.Direction != Down && dev > thr || r.Direction != Up && dev < -thr
	if bad {
		v.bad = true
		v.critical = math.Abs(dev) >= criticalFactor*thr
	}
	return v
}

func untransform(y float64) float64 { return max(math.Expm1(y), 0) }

// spikeVerdict: the residual res is more than spikeK robust scales from
// the window's median in the bad direction.
func spikeVerdict(r Rule, l Level, b baseline, res, off, value float64) verdict {
	if l == Off {
		return verdict{}
	}
	thr := spikeK * b.scale * multiplier(l)
	return band(r, res-b.median, b.median+off, thr, value)
}

// shiftVerdict: the median of the latest shiftN residuals (res the
// latest) lies more than the shift threshold from the reference level in
// the bad direction. The reference is the median of the older residuals
// in the window; while a shift episode is open, the level and scale it
// left (so that the new level does not become normal while it lasts).
func (s *State) shiftVerdict(r Rule, l Level, b baseline, res, off, value float64) verdict {
	older := s.winN - (shiftN - 1)
	if l == Off || older < minPoints {
		return verdict{}
	}
	var sb [shiftN]float64
	sb[0] = res
	for i := 1; i < shiftN; i++ {
		sb[i] = s.recent(i - 1)
	}
	t := &s.tracks[passIndex(Shift)]
	ref, scale := t.ref, t.scale
	if !t.open {
		var ob [window]float64
		o := ob[:older]
		for i := range o {
			o[i] = s.recent(shiftN - 1 + i)
		}
		ref, scale = median(o), b.scale
	}
	thr := max(shiftK*scale, shiftFloor) * multiplier(l)
	v := band(r, median(sb[:])-ref, ref+off, thr, value)
	v.ref, v.scale = ref, scale
	return v
}

// offset is the time-of-day correction of hour h: how far its profile
// lies from the mean of the profile's ready hours (0 until it is ready).
func (s *State) offset(h int) float64 {
	if s.profile[h].n < profileReady {
		return 0
	}
	sum, n := 0.0, 0
	for _, b := range s.profile {
		if b.n >= profileReady {
			sum += b.mean
			n++
		}
	}
	if n < hours/2 {
		return 0
	}
	return s.profile[h].mean - sum/float64(n)
}

// learnProfile moves hour h's profile towards y (a transformed value).
func (s *State) learnProfile(h int, y float64) {
	b := &s.profile[h]
	if b.n == 0 {
		b.mean = y
	} else {
		b.mean += profileAlpha * (y - b.mean)
	}
	if b.n < math.MaxUint16 {
		b.n++
	}
}
