// Command analyzer measures the quality of package analyzer's detection on
// a seeded set of generated, labelled measurement series shaped like the
// catalogue's metrics (daily cycles, noise with heavy tails, zero-inflated
// stalling and loss, cadence jitter, missing points), some with injected
// anomalies (spikes, level shifts, impossible values, silences), some
// healthy. It prints the Numenta Anomaly Benchmark's three scores
// (detections = episode openings), precision and recall per pass and the
// false positives per client-metric-week on the healthy series.
//
//	go run ./bench/analyzer [-seed 1] [-series 40] [-weeks 4] [-level default] [-v]
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/fleetgraph/fleetgraph/analyzer"
)

func main() {
	seed := flag.Uint64("seed", 1, "seed of the generator")
	perShape := flag.Int("series", 40, "series per metric shape, in each of the labelled and the healthy set")
	weeks := flag.Float64("weeks", 4, "length of a series in weeks")
	level := flag.String("level", "default", "detection level: low, default or high")
	verbose := flag.Bool("v", false, "print every missed anomaly and every false positive")
	flag.Parse()
	lv := analyzer.Level(*level)
	if lv != analyzer.Low && lv != analyzer.Default && lv != analyzer.High {
		fmt.Fprintln(os.Stderr, "-level: low, default or high")
		os.Exit(2)
	}
	r := evaluate(*seed, *perShape, *weeks, lv, *verbose)
	r.print(os.Stdout)
}

// passStats counts one pass's detections and anomalies.
type passStats struct {
	openings, inWindow  int // openings after probation, of them inside a window
	anomalies, detected int
	healthyOpenings     int
}

type result struct {
	series, healthy int
	weeks           float64 // client-metric-weeks of healthy series
	scores          []float64
	passes          map[analyzer.Pass]*passStats
	points          int
	elapsed         time.Duration
}

func evaluate(seed uint64, perShape int, weeks float64, lv analyzer.Level, verbose bool) result {
	res := result{passes: map[analyzer.Pass]*passStats{}}
	for _, p := range analyzer.Passes {
		res.passes[p] = &passStats{}
	}
	var set []Scored
	begin := time.Now()
	for si, sh := range shapes {
		for k := range perShape {
			base := seed*1_000_003 + uint64(si)*10_007 + uint64(k)*2
			l := generate(base, sh, weeks, true)
			sc := score(l, detect(l, lv), res.passes, verbose)
			set = append(set, sc)
			res.series++
			res.points += len(l.points)

			h := generate(base+1, sh, weeks, false)
			for _, e := range detect(h, lv) {
				res.passes[e.Pass].healthyOpenings++
				if verbose {
					fmt.Printf("healthy FP %s %s at row %d of %d: %s value %.4g baseline %.4g band %.4g..%.4g %s\n",
						h.rule.ID, e.Pass, e.row, len(h.points), e.FirstSeen.Format(time.RFC3339), e.Value, e.Baseline, e.BandLow, e.BandHigh, e.Reason)
				}
			}
			res.healthy++
			res.weeks += h.weeks
			res.points += len(h.points)
		}
	}
	res.elapsed = time.Since(begin)
	for _, p := range Profiles {
		res.scores = append(res.scores, Normalised(set, p))
	}
	return res
}

// opening is an episode opened and the row at which the detector said so
// (a Sweep's opening counts at the next row).
type opening struct {
	analyzer.Episode
	row int
}

// detect runs a fresh State over a series, sweeping every hour as the
// server does, and answers the episodes opened.
func detect(l labelled, lv analyzer.Level) []opening {
	s := analyzer.NewState()
	level := func(analyzer.Pass) analyzer.Level { return lv }
	var opened []opening
	collect := func(row int, cs []analyzer.Change) {
		for _, c := range cs {
			if c.Kind == analyzer.Opened {
				opened = append(opened, opening{c.Episode, row})
			}
		}
	}
	var nextSweep time.Time
	for i, p := range l.points {
		for !nextSweep.IsZero() && nextSweep.Before(p.At) {
			collect(i, s.Sweep(l.rule, level, nextSweep))
			nextSweep = nextSweep.Add(time.Hour)
		}
		collect(i, s.Observe(l.rule, level, p))
		if nextSweep.IsZero() {
			nextSweep = p.At.Truncate(time.Hour).Add(time.Hour)
		}
	}
	return opened
}

// score turns a series and its detector's openings into NAB's view (rows,
// windows, detection rows: where each opening was reported) and counts
// them per pass.
func score(l labelled, eps []opening, passes map[analyzer.Pass]*passStats, verbose bool) Scored {
	rows := len(l.points)
	sc := Scored{Rows: rows}
	width := int(0.1 * float64(rows) / float64(max(len(l.anomalies), 1)))
	owner := make([]int, rows) // window row -> 1 + index of its anomaly, 0: none
	for i, a := range l.anomalies {
		for j := max(a.row-width/2, 0); j < min(a.row-width/2+width, rows); j++ {
			if owner[j] == 0 {
				owner[j] = i + 1
			}
		}
	}
	for j := 0; j < rows; j++ {
		if owner[j] != 0 && (j == 0 || owner[j-1] == 0) {
			sc.Windows = append(sc.Windows, Window{Start: j, End: j})
		}
		if owner[j] != 0 {
			sc.Windows[len(sc.Windows)-1].End = j
		}
	}
	first := probation(rows)
	found := make([]bool, len(l.anomalies))
	for _, e := range eps {
		row := e.row
		sc.Detections = append(sc.Detections, row)
		if row < first || row >= rows {
			continue
		}
		ps := passes[e.Pass]
		ps.openings++
		if owner[row] == 0 {
			if verbose {
				fmt.Printf("FP %s %s at row %d: value %.4g baseline %.4g band %.4g..%.4g %s\n", l.rule.ID, e.Pass, row, e.Value, e.Baseline, e.BandLow, e.BandHigh, e.Reason)
			}
			continue
		}
		ps.inWindow++
		// the anomaly of this pass whose window holds the row
		for i, a := range l.anomalies {
			if a.pass == e.Pass && row >= a.row-width/2 && row < a.row-width/2+width {
				found[i] = true
			}
		}
	}
	for i, a := range l.anomalies {
		passes[a.pass].anomalies++
		if found[i] {
			passes[a.pass].detected++
		} else if verbose {
			fmt.Printf("missed %s %s (%s) at row %d of %d:", l.rule.ID, a.pass, a.what, a.row, rows)
			for j := max(a.row-3, 0); j < min(a.row+4, rows); j++ {
				fmt.Printf(" %.4g%s", l.points[j].Value, l.points[j].Problem)
			}
			fmt.Println()
		}
	}
	sort.Ints(sc.Detections)
	return sc
}

func (r result) print(w *os.File) {
	fmt.Fprintf(w, "labelled series %d, healthy series %d (%.0f client-metric-weeks), %d points, %s\n",
		r.series, r.healthy, r.weeks, r.points, r.elapsed.Round(time.Millisecond))
	for i, p := range Profiles {
		fmt.Fprintf(w, "NAB %-19s %6.1f\n", p.Name, r.scores[i])
	}
	fmt.Fprintf(w, "%-13s %9s %7s %9s %9s %12s\n", "pass", "precision", "recall", "openings", "anomalies", "healthy FP/wk")
	total := 0
	for _, p := range analyzer.Passes {
		s := r.passes[p]
		total += s.healthyOpenings
		fmt.Fprintf(w, "%-13s %9.2f %7.2f %9d %9d %12.3f\n", p, ratio(s.inWindow, s.openings), ratio(s.detected, s.anomalies),
			s.openings, s.anomalies, float64(s.healthyOpenings)/r.weeks)
	}
	fmt.Fprintf(w, "false positives on healthy series: %.3f episodes per client-metric-week\n", float64(total)/r.weeks)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
