package main

import "math"

// The scoring of the Numenta Anomaly Benchmark (Lavin & Ahmad 2015, "Evaluating
// Real-time Anomaly Detection Algorithms - the Numenta Anomaly Benchmark"),
// written from its published description: a series is a sequence of rows;
// every labelled anomaly has a window of rows; a detection is a row.
//
//   - Rows in the probationary period (the first 15 % of a series, at most
//     750 rows) count for nothing.
//   - A window with a detection scores A_TP x sigma(p) / sigma(-1) for its
//     earliest detection, where p = -(right - row + 1) / width is the
//     detection's position (-1 at the window's left edge, near 0 at its
//     right edge) and sigma(p) = 2 / (1 + e^(5p)) - 1 the scaled sigmoid;
//     later detections in the same window count for nothing.
//   - A window without one scores -A_FN.
//   - A detection outside every window scores A_FP x sigma(d), where d is its
//     distance past the latest window's right edge in that window's widths
//     (width - 1 rows), so that a detection just after a window costs
//     little and one far from any costs A_FP; before the first window, -A_FP.
//   - The benchmark's score is 100 x (raw - null) / (perfect - null) over the
//     whole set: null is the detector that detects nothing, perfect the one
//     that detects every window at its left edge and nothing else.

// Profile is one of NAB's application profiles: the weights of a true
// positive, a false positive and a false negative.
type Profile struct {
	Name       string
	TP, FP, FN float64
}

// Profiles are NAB's three published profiles.
var Profiles = []Profile{
	{Name: "standard", TP: 1, FP: 0.11, FN: 1},
	{Name: "reward_low_FP_rate", TP: 1, FP: 0.22, FN: 1},
	{Name: "reward_low_FN_rate", TP: 1, FP: 0.11, FN: 2},
}

// Window is a labelled anomaly's window: rows Start..End, both included.
type Window struct{ Start, End int }

// Scored is one series as the scorer sees it: its number of rows, its
// windows (in order, not overlapping) and the rows of its detections.
type Scored struct {
	Rows       int
	Windows    []Window
	Detections []int
}

// scaledSigmoid is NAB's sigma: 2/(1+e^(5p)) - 1, -1 from p = 3 on.
func scaledSigmoid(p float64) float64 {
	if p >= 3 {
		return -1
	}
	return 2/(1+math.Exp(5*p)) - 1
}

// probation is the number of rows of a series that count for nothing.
func probation(rows int) int {
	return int(math.Min(math.Floor(0.15*float64(rows)), 0.15*5000))
}

// raw is the unnormalised score of series s under profile p.
func raw(s Scored, p Profile) float64 {
	first := probation(s.Rows)
	detected := make([]bool, s.Rows)
	for _, d := range s.Detections {
		if d >= 0 && d < s.Rows {
			detected[d] = true
		}
	}
	maxTP := scaledSigmoid(-1)
	total := 0.0
	w := 0                 // the next window
	prev := Window{-1, -1} // the latest window passed
	for i := 0; i < s.Rows; {
		if w < len(s.Windows) && i == s.Windows[w].Start {
			win := s.Windows[w]
			width := float64(win.End - win.Start + 1)
			score, counts := -p.FN, false
			for j := win.Start; j <= win.End && j < s.Rows; j++ {
				if j < first {
					continue
				}
				counts = true
				if detected[j] {
					score = p.TP * scaledSigmoid(-float64(win.End-j+1)/width) / maxTP
					break
				}
			}
			if counts {
				total += score
			}
			prev = win
			i = win.End + 1
			w++
			continue
		}
		if detected[i] && i >= first {
			if prev.End < 0 {
				total -= p.FP
			} else {
				d := float64(i-prev.End) / math.Max(float64(prev.End-prev.Start), 1)
				total += p.FP * scaledSigmoid(d)
			}
		}
		i++
	}
	return total
}

// Normalised is the benchmark's score of a set under profile p.
func Normalised(set []Scored, p Profile) float64 {
	var got, null, perfect float64
	for _, s := range set {
		got += raw(s, p)
		null += raw(Scored{Rows: s.Rows, Windows: s.Windows}, p)
		best := Scored{Rows: s.Rows, Windows: s.Windows}
		for _, w := range s.Windows {
			if d := max(w.Start, probation(s.Rows)); d <= w.End {
				best.Detections = append(best.Detections, d)
			}
		}
		perfect += raw(best, p)
	}
	if perfect == null {
		return 0
	}
	return 100 * (got - null) / (perfect - null)
}
