package analyzer

import "time"

// The parameters of the passes (docs/analyzer.md explains each). Values
// are judged on the transformed scale y = ln(1 + value), on which a given
// ratio is a given distance whatever the metric's unit.
const (
	minPoints  = 12   // usable values a client must have reported before spike and shift judge
	minScale   = 0.05 // least robust scale: excursions under ~5 % per scale unit never count
	clipScales = 6.0  // a value enters the baseline clipped to median ± clipScales x scale

	spikeK = 4.5 // spike threshold, in robust scales from the median

	shiftN     = 6    // the latest values whose median is compared with the older ones'
	shiftK     = 3.0  // shift threshold in robust scales...
	shiftFloor = 0.22 // ...and at least this far (ln 1.25: a change of a quarter)

	maxShiftAge = 48 * time.Hour // a shift older than this is the new normal: resolved

	criticalFactor = 2.0 // an excursion this many times the threshold is critical

	profileAlpha = 0.2 // weight of a new value in its hour's profile
	profileReady = 3   // values an hour needs before the profile corrects it

	steadyIntervals  = 8   // intervals a client must have reported at before silence counts
	steadySpread     = 3.0 // ...with the upper quartile interval at most this times the median
	silenceIntervals = 6.0 // silence longer than this many median intervals: stopped reporting
	minSilence       = time.Hour
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
