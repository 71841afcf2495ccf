package analyzer

import "time"

// The parameters of the passes (docs/analyzer.md explains each). Values
// are judged on the transformed scale y = ln(1 + value), on which a given
// ratio is a given distance whatever the metric's unit.
const (
	minPoints  = 12   // usable values a client must have reported before spike and shift judge
	minScale   = 0.05 // least robust scale (ln 1.05)
	clipScales = 6.0  // a value enters the baseline clipped to median ± clipScales x scale

	spikeK = 4.5 // spike threshold, in robust scales from the median, at least...

	// ...and at least the client's own tail extrapolated: qh + tailMult x
	// (qh - ql), where qh and ql are the distances from the median (on the
	// transformed scale, bad direction) exceeded by tailHigh and tailLow
	// of its values (no farther out than tailFewest values, ql's share at
	// least tailRatio times qh's), read off a decayed histogram (memory
	// tailMemory values, tailBins bins from tailFirst, each tailGrowth
	// times the previous). A jumpy or heavy-tailed metric gets a wider
	// band; a metric that is mostly 0 is judged against its nonzero values.
	// Until tailWarm values are counted (the learning period), nothing is
	// a spike.
	tailMult   = 2.5
	tailHigh   = 0.005
	tailLow    = 0.015
	tailFewest = 3 // the quantiles lie no farther out than this many values
	tailRatio  = 3 // the lower quantile's share is at least this times the higher one's
	tailMemory = 2000
	tailBins   = 50
	tailFirst  = 0.01
	tailGrowth = 1.2
	tailWarm   = 100

	maxSpikeLen = 3 // a non-critical excursion of more points than this is no spike

	criticalSpike = 0.6931 // a spike beyond its band's edge by ln 2 (twice / half the edge value) is critical

	shiftN     = 6    // the latest values whose winsorised mean is the current level
	shiftClip  = 2.5  // CUSUM: z clipped to ±shiftClip...
	shiftDrift = 1.0  // ...less this drift per value...
	shiftH     = 6.0  // ...summed beyond this: a shift...
	shiftFloor = 0.22 // ...when the current level lies this far from the reference (ln 1.25: a quarter)
	levelClip  = 1.0  // the current level's values are clipped to the reference ± this (ln e)

	maxShiftAge    = 48 * time.Hour // a shift older than this...
	maxShiftValues = 40             // ...and this many values is the new normal: resolved

	criticalShift = 2.0 // a shift this many times its floor is critical

	profileAlpha = 0.2  // weight of a new value in its hour's profile
	profileReady = 3    // values an hour needs before the profile corrects it
	profileStep  = 0.15 // an hour's profile moves by at most profileAlpha x this a value

	steadyIntervals  = 8              // intervals a client must have reported at before silence counts
	steadySpread     = 3.0            // ...with the upper quartile interval at most this times the median
	silenceIntervals = 12.0           // silence longer than this many median intervals: stopped reporting...
	minSilence       = 6 * time.Hour  // ...and at least this long
	unsteadySilence  = 72 * time.Hour // an unsteady client's episodes resolve after this silence
)

// How an episode resolves: after this many consecutive values inside the
// band, the last anomalous value at least this long ago.
var calmPoints = [3]int{2, 6, 1} // by passIndex: spike, shift, data_quality
var calmTime = [3]time.Duration{30 * time.Minute, 3 * time.Hour, 0}

// multiplier scales every threshold of a pass by its level: low is
// quieter (thresholds 1.5 times as far), high louder (0.75 times).
func multiplier(l Level) float64 {
	switch l {
	case Low:
		return 1.5
	case High:
		return 0.75
	}
	return 1
}
