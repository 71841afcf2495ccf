package analyzer

import (
	"math"
	"slices"
)

// baseline is the robust centre and spread of the window's residuals.
type baseline struct {
	median, scale float64
}

// baseline is the window's median and robust scale: the larger of
// 1.4826 x the median absolute deviation and 1.2533 x the mean absolute
// deviation (both estimate a normal sd; the second stays above zero for
// a metric that is mostly 0, such as stalling time), at least minScale.
// It reads the sorted window: no sorting, no allocation.
func (s *State) baseline() baseline {
	w := s.sorted[:s.winN]
	med := sortedMedian(w)
	split, _ := slices.BinarySearch(w, med) // w[:split] < med <= w[split:]
	mean := 0.0
	for _, v := range w {
		mean += math.Abs(v - med)
	}
	mean /= float64(len(w))
	return baseline{median: med, scale: max(1.4826*deviationMedian(w, med, split), 1.2533*mean, minScale)}
}

// sortedMedian is the median of w, sorted.
func sortedMedian(w []float64) float64 {
	n := len(w)
	if n%2 == 1 {
		return w[n/2]
	}
	return (w[n/2-1] + w[n/2]) / 2
}

// deviationMedian is the median of |w[i] - med| for w sorted, split the
// first index of a value not below med: the deviations grow outwards
// from split on both sides, so merging the two runs finds the middle
// ones in len(w)/2 steps.
func deviationMedian(w []float64, med float64, split int) float64 {
	n := len(w)
	lo, hi := split-1, split
	next := func() float64 {
		if hi >= n || lo >= 0 && med-w[lo] <= w[hi]-med {
			lo--
			return med - w[lo+1]
		}
		hi++
		return w[hi-1] - med
	}
	var prev, cur float64
	for range n/2 + 1 {
		prev, cur = cur, next()
	}
	if n%2 == 1 {
		return cur
	}
	return (prev + cur) / 2
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

// sign is +1 when the bad direction is up, -1 when it is down, 0 for both.
func sign(d Direction) float64 {
	switch d {
	case Up:
		return 1
	case Down:
		return -1
	}
	return 0
}

// badness is how far dev lies in the bad direction (negative: the good one).
func badness(d Direction, dev float64) float64 {
	if d == Both {
		return math.Abs(dev)
	}
	return sign(d) * dev
}

// judgeValue runs spike and shift on a usable value and learns from it.
func (s *State) judgeValue(r Rule, ls levels, p Point, changes []Change) []Change {
	y := math.Log1p(p.Value)
	h := p.At.UTC().Hour()
	off := s.offset(h)
	res := y - off
	if s.winN < minPoints {
		centre := y
		if s.winN > 0 {
			centre = sortedMedian(s.sorted[:s.winN])
		}
		s.push(res, math.Inf(-1), math.Inf(1))
		s.learnProfile(h, y, centre, 0)
		return changes
	}
	b := s.baseline()
	z := (res - b.median) / b.scale

	hl := ls.of(Shift)
	long := s.longTerm(h)
	changes = s.judge(r, hl, Shift, p, s.shiftVerdict(r, hl, b, res, z, off, long, p.Value), changes)
	// While a shift lasts, spikes are excursions from the shifted level
	// (the median of the latest values as they were). The excursion that
	// opened the shift, its opening value included, is the shift's: the
	// spike drafted from it is dropped and that value judges no spike.
	sb := b
	spikeV := verdict{}
	if t := &s.tracks[passIndex(Shift)]; t.open {
		sb = baseline{median: s.latestMedian(), scale: t.scale}
	}
	thr := s.spikeThreshold(sb)
	sl := ls.of(Spike)
	if t := &s.tracks[passIndex(Shift)]; t.open && t.ep.FirstSeen.Equal(p.At) {
		s.tracks[passIndex(Spike)].pending = false
	} else {
		spikeV = s.spikeVerdict(r, sl, sb, thr, (res-sb.median)/sb.scale, off, y-long, p.Value)
	}
	changes = s.judge(r, sl, Spike, p, spikeV, changes)

	// Once warm, the tail learns a value no farther out than the threshold
	// (a spike widens the band no more than a normal value could), shiftN values
	// later and only if no shift opened meanwhile (a shifted level, even
	// before it is recognised, does not widen it at all).
	d := badness(r.Direction, res-b.median)
	if s.tailTotal >= tailWarm {
		d = min(d, thr)
	}
	s.learnTailLater(d)
	s.push(res, b.median-clipScales*b.scale, b.median+clipScales*b.scale)
	s.learnProfile(h, y, b.median, b.scale)
	return changes
}

// spikeThreshold is the distance from the median (transformed scale)
// beyond which a value is a spike at the default level: spikeK robust
// scales, or the client's own tail if that lies farther out.
func (s *State) spikeThreshold(b baseline) float64 {
	return max(spikeK*b.scale, s.tailThreshold())
}

// spikeVerdict: z lies beyond the spike threshold thr times the level's
// multiplier in the bad direction, and so does the value's distance from
// its hour's long-term level, fromLong (NaN: no long-term level yet).
// Nothing is a spike while the client's tail is being learnt (its first
// tailWarm values).
func (s *State) spikeVerdict(r Rule, l Level, b baseline, thr, z, off, fromLong, value float64) verdict {
	if l == Off || s.tailTotal < tailWarm {
		return verdict{}
	}
	thr *= multiplier(l)
	c := b.median + off
	v := verdict{value: value, baseline: untransform(c), lo: untransform(c - thr), hi: untransform(c + thr)}
	if out := badness(r.Direction, z*b.scale) - thr; out > 0 && !(badness(r.Direction, fromLong) <= thr) {
		v.bad = true
		v.critical = out >= criticalSpike
	}
	return v
}

// shiftVerdict: a lasting change of level. Page's CUSUM of the values'
// z (clipped to ±shiftClip, less shiftDrift) in the bad direction passes
// shiftH, and the current level (the winsorised mean of the latest shiftN
// residuals) lies at least shiftFloor from the reference (the median of
// the older ones), both times the level's multiplier. While the episode
// is open, the reference and scale it left are held: it lasts as long as
// the current level stays shiftFloor away.
func (s *State) shiftVerdict(r Rule, l Level, b baseline, res, z, off, long, value float64) verdict {
	t := &s.tracks[passIndex(Shift)]
	if l == Off {
		s.cusum = [2]float64{}
		return verdict{}
	}
	m := multiplier(l)
	alarm := false
	if !t.open {
		for i, dir := range [2]float64{1, -1} {
			s.cusum[i] = f32(max(0, s.cusum[i]+clamp(dir*z, -shiftClip, shiftClip)-shiftDrift))
			if s.cusum[i] > shiftH*m && (r.Direction == Both || sign(r.Direction) == dir) {
				alarm = true
			}
		}
		if !alarm {
			return verdict{}
		}
	}
	ref, scale := t.ref, t.scale
	if !t.open {
		ref, scale = s.reference(), b.scale
	}
	level := s.currentLevel(res, ref, scale)
	thr := shiftFloor * m
	c := ref + off
	v := verdict{value: value, baseline: untransform(c), lo: untransform(c - thr), hi: untransform(c + thr), ref: ref, scale: scale}
	if dev := badness(r.Direction, level-ref); dev >= thr && !(badness(r.Direction, level+off-long) < thr) {
		v.bad = true
		v.critical = dev >= criticalShift*thr
		s.cusum = [2]float64{}
	}
	return v
}

// longTerm is hour h's long-term level on the transformed scale (its
// profile bin, which moves by at most profileAlpha x scale a value), NaN
// until the profile is ready. A value or level is anomalous only if it
// is also beyond the threshold from it: returning to the usual level
// after a stretch on the good side is no anomaly.
func (s *State) longTerm(h int) float64 {
	if s.profile[h].n < profileReady {
		return math.NaN()
	}
	return s.profile[h].mean
}

// reference is the median of the window's residuals older than the latest
// shiftN-1 (the current one is not in the window yet).
func (s *State) reference() float64 {
	var buf [window]float64
	o := buf[:max(s.winN-(shiftN-1), 1)]
	for i := range o {
		o[i] = s.recent(shiftN - 1 + i)
	}
	return median(o)
}

// latestMedian is the median of the latest shiftN residuals.
func (s *State) latestMedian() float64 {
	var buf [shiftN]float64
	for i := range buf {
		buf[i] = s.recentRaw(i)
	}
	return median(buf[:])
}

// currentLevel is the mean of res and the latest shiftN-1 residuals, each
// clipped to ref ± levelClip (at least clipScales x scale): one outlier
// cannot make a level.
func (s *State) currentLevel(res, ref, scale float64) float64 {
	w := max(clipScales*scale, levelClip)
	lo, hi := ref-w, ref+w
	sum := clamp(res, lo, hi)
	for i := range shiftN - 1 {
		sum += clamp(s.recentRaw(i), lo, hi)
	}
	return sum / shiftN
}

func untransform(y float64) float64 { return max(math.Expm1(y), 0) }

// learnTailLater queues d for the tail and learns the one queued shiftN
// values ago, unless a shift is open; opening a shift empties the queue.
func (s *State) learnTailLater(d float64) {
	if s.tracks[passIndex(Shift)].open {
		s.tailQueueN = 0
		return
	}
	if s.tailQueueN == shiftN {
		s.learnTail(s.tailQueue[0])
		copy(s.tailQueue[:], s.tailQueue[1:])
		s.tailQueueN--
	}
	s.tailQueue[s.tailQueueN] = f32(d)
	s.tailQueueN++
}

// tailEdges are the lower edges of the tail's bins.
var tailEdges = func() (e [tailBins + 1]float64) {
	for j := range e {
		e[j] = tailFirst * math.Pow(tailGrowth, float64(j))
	}
	return e
}()

// learnTail counts a value that lay d from the median in the bad
// direction (transformed scale) and lets the older counts decay.
func (s *State) learnTail(d float64) {
	const keep = 1 - 1.0/tailMemory
	for j := range s.tail {
		s.tail[j] = f32(s.tail[j] * keep)
	}
	s.tailTotal = f32(s.tailTotal*keep + 1)
	if d < tailFirst {
		return
	}
	j := min(int(math.Log(d/tailFirst)/math.Log(tailGrowth)), tailBins-1)
	s.tail[j] = f32(s.tail[j] + 1)
}

// tailThreshold is the spike threshold the client's own tail asks for
// (transformed scale): qh + tailMult x (qh - ql).
func (s *State) tailThreshold() float64 {
	hi := max(tailHigh, tailFewest/s.tailTotal) // no fewer than tailFewest values decide
	lo := max(tailLow, tailRatio*hi)
	qh, ql := s.tailQuantile(hi), s.tailQuantile(lo)
	return qh + tailMult*(qh-ql)
}

// tailQuantile is the distance exceeded by a fraction p of the counted
// values, interpolated geometrically inside its bin (tailFirst when
// fewer than p lay beyond tailFirst).
func (s *State) tailQuantile(p float64) float64 {
	want := p * s.tailTotal
	beyond := 0.0
	for j := tailBins - 1; j >= 0; j-- {
		if c := s.tail[j]; beyond+c >= want && c > 0 {
			f := (want - beyond) / c // the share of bin j beyond the quantile
			return tailEdges[j+1] * math.Pow(tailGrowth, -f)
		}
		beyond += s.tail[j]
	}
	return tailFirst
}

// offset is the time-of-day correction of hour h: how far its profile
// lies from the mean of the profile's ready hours (0 until at least half
// the hours are ready).
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

// learnProfile moves hour h's profile towards y (a transformed value) by
// profileAlpha of the difference clipped to ±scale: the bin follows the
// hour's typical value, not its outliers. An hour's first value sets it
// to centre, the window's median (y itself while there is none).
func (s *State) learnProfile(h int, y, centre, scale float64) {
	b := &s.profile[h]
	switch {
	case b.n == 0:
		b.mean = f32(centre)
	case scale > 0:
		scale = min(scale, profileStep)
		b.mean = f32(b.mean + profileAlpha*clamp(y-b.mean, -scale, scale))
	default:
		b.mean = f32(b.mean + profileAlpha*(y-b.mean))
	}
	if b.n < math.MaxUint16 {
		b.n++
	}
}
