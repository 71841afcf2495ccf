package main

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/fleetgraph/fleetgraph/analyzer"
)

// shape is how one metric of the catalogue behaves on a healthy client.
type shape struct {
	rule string // catalogue rule id

	baseLo, baseHi float64 // a client's typical value is drawn from this range (log-uniform)
	sdLo, sdHi     float64 // relative noise (sd of ln value)
	tailDF         float64 // Student-t degrees of freedom of the noise (heavier tails when small)
	dailyLo        float64 // evening swing of ln value, drawn from dailyLo..dailyHi
	dailyHi        float64

	// zero-inflated metrics (stalling, loss): the chance of a nonzero value;
	// base/sd are then those of the nonzero values.
	nonzeroLo, nonzeroHi float64

	capAt float64 // values are capped here (fps), 0: no cap
}

var shapes = []shape{
	{rule: "speedtest-download", baseLo: 20, baseHi: 500, sdLo: 0.04, sdHi: 0.15, tailDF: 4, dailyLo: 0.05, dailyHi: 0.35},
	{rule: "speedtest-ping", baseLo: 6, baseHi: 60, sdLo: 0.06, sdHi: 0.2, tailDF: 3, dailyLo: 0.05, dailyHi: 0.3},
	{rule: "web-plt", baseLo: 500, baseHi: 4000, sdLo: 0.1, sdHi: 0.25, tailDF: 3, dailyLo: 0, dailyHi: 0.2},
	{rule: "dns-resolve-time", baseLo: 5, baseHi: 80, sdLo: 0.15, sdHi: 0.35, tailDF: 2.5, dailyLo: 0, dailyHi: 0.15},
	{rule: "video-stalling", baseLo: 300, baseHi: 2000, sdLo: 0.5, sdHi: 0.8, tailDF: 5, dailyLo: 0, dailyHi: 0.6, nonzeroLo: 0.03, nonzeroHi: 0.15},
	{rule: "conferencing-packet-loss", baseLo: 0.05, baseHi: 0.6, sdLo: 0.5, sdHi: 0.9, tailDF: 5, dailyLo: 0, dailyHi: 0.4, nonzeroLo: 0.1, nonzeroHi: 0.5},
	{rule: "gaming-latency", baseLo: 15, baseHi: 80, sdLo: 0.05, sdHi: 0.15, tailDF: 3, dailyLo: 0.05, dailyHi: 0.25},
	{rule: "gaming-fps", baseLo: 45, baseHi: 60, sdLo: 0.02, sdHi: 0.06, tailDF: 3, dailyLo: 0, dailyHi: 0.08, capAt: 60},
}

// anomaly is one labelled anomaly of a series: what was injected, from
// when, and the row where it shows first.
type anomaly struct {
	pass  analyzer.Pass
	what  string // spike, shift, impossible, silence
	start time.Time
	row   int
}

// labelled is a generated series of one client x metric.
type labelled struct {
	rule      analyzer.Rule
	points    []analyzer.Point
	anomalies []anomaly
	weeks     float64
}

// client is a healthy client's parameters for one shape.
type client struct {
	base, sd, daily, peakHour, nonzero float64
	cadence                            time.Duration
}

func (sh shape) client(rng *rand.Rand) client {
	cadences := []time.Duration{15 * time.Minute, 30 * time.Minute, time.Hour}
	return client{
		base:     math.Exp(uniform(rng, math.Log(sh.baseLo), math.Log(sh.baseHi))),
		sd:       uniform(rng, sh.sdLo, sh.sdHi),
		daily:    uniform(rng, sh.dailyLo, sh.dailyHi),
		peakHour: uniform(rng, 17, 23) + float64(rng.IntN(12)-6), // the client's evening in UTC
		nonzero:  uniform(rng, sh.nonzeroLo, sh.nonzeroHi),
		cadence:  cadences[rng.IntN(len(cadences))],
	}
}

func uniform(rng *rand.Rand, lo, hi float64) float64 { return lo + (hi-lo)*rng.Float64() }

// studentT draws from Student's t with df degrees of freedom, scaled to a
// unit-ish spread.
func studentT(rng *rand.Rand, df float64) float64 {
	chi := 0.0
	n := int(math.Round(df))
	for range n {
		z := rng.NormFloat64()
		chi += z * z
	}
	return rng.NormFloat64() / math.Sqrt(chi/float64(n)) * math.Sqrt(float64(n-2)/float64(n))
}

// evening is the daily cycle: 1 at the client's peak hour, 0 twelve hours away.
func (c client) evening(at time.Time) float64 {
	h := float64(at.Hour()) + float64(at.Minute())/60
	return (1 + math.Cos(2*math.Pi*(h-c.peakHour)/24)) / 2
}

// effect is an injected change applied to a healthy value.
type effect struct {
	what     string // spike, shift, impossible, silence
	from, to time.Time
	factor   float64 // multiplies the value (bad direction)
	nonzero  float64 // zero-inflated: the chance of a nonzero value during it, 0: unchanged
	absolute float64 // a spike of a zero-inflated metric: this value
}

// generate makes one series of weeks weeks. With anomalies, 1 to 3 are
// injected and labelled; without, the series is healthy (still noisy, with
// daily cycles, heavy tails and short unlabelled gaps).
func generate(seed uint64, sh shape, weeks float64, withAnomalies bool) labelled {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	r := catalogueRule(sh.rule)
	c := sh.client(rng)
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.IntN(3600)) * time.Second)
	end := start.Add(time.Duration(weeks * float64(7*24*time.Hour)))
	bad := 1.0 // multiplies ln value in the bad direction
	if r.Direction == analyzer.Down {
		bad = -1
	}

	var effects []effect
	var labels []anomaly
	if withAnomalies {
		n := 1 + rng.IntN(3)
		// anomalies after the scorer's probation (15 %) and the analyzer's
		// learning: after 5 days and a fifth of the series
		first := max(5*24*time.Hour, end.Sub(start)/5)
		slot := (end.Sub(start) - first) / time.Duration(n)
		for k := range n {
			at := start.Add(first + time.Duration(k)*slot + time.Duration(rng.Float64()*0.5*float64(slot)))
			switch what := []string{"spike", "spike", "shift", "shift", "impossible", "silence"}[rng.IntN(6)]; what {
			case "spike":
				e := effect{what: what, from: at, to: at.Add(time.Duration(1+rng.IntN(2)) * c.cadence)}
				// well beyond the client's own variability: 6 to 10 noise sds out
				// on the log scale, and at least 2.7x (down: to 37 %)
				e.factor = math.Exp(bad * max(1, uniform(rng, 6, 10)*c.sd))
				if sh.nonzeroHi > 0 { // far beyond the usual nonzero values
					e.absolute = min(c.base*math.Exp(uniform(rng, 4.5, 6)*c.sd), 120_000)
				}
				effects = append(effects, e)
				labels = append(labels, anomaly{pass: analyzer.Spike, what: what, start: at})
			case "shift":
				e := effect{what: what, from: at, to: at.Add(time.Duration(uniform(rng, 6, 48) * float64(time.Hour)))}
				e.factor = math.Exp(bad * uniform(rng, 0.45, 0.9)) // 1.6x to 2.5x (down: to 64 % .. 41 %)
				if sh.nonzeroHi > 0 {
					e.nonzero = uniform(rng, 0.5, 0.8)
					e.factor = math.Exp(uniform(rng, 0.7, 1.4))
				}
				effects = append(effects, e)
				labels = append(labels, anomaly{pass: analyzer.Shift, what: what, start: at})
			case "impossible":
				effects = append(effects, effect{what: what, from: at, to: at.Add(c.cadence * 23 / 20)}) // the next one or two points
				labels = append(labels, anomaly{pass: analyzer.DataQuality, what: what, start: at})
			case "silence":
				effects = append(effects, effect{what: what, from: at, to: at.Add(time.Duration(uniform(rng, 12, 48) * float64(time.Hour)))})
				labels = append(labels, anomaly{pass: analyzer.DataQuality, what: what, start: at})
			}
		}
	}

	var points []analyzer.Point
	skipUntil := time.Time{}
	for at, i := start, 0; at.Before(end); i++ {
		t := at
		at = at.Add(c.cadence + time.Duration((rng.Float64()-0.5)*0.2*float64(c.cadence)))
		for _, e := range effects {
			if e.what == "silence" && !t.Before(e.from) && t.Before(e.to) {
				skipUntil = e.to
			}
		}
		if t.Before(skipUntil) || rng.Float64() < 0.01 { // labelled silences; 1 % of points just missing
			continue
		}
		if rng.Float64() < 0.002 { // now and then an hour or two missing
			at = at.Add(time.Duration(1+rng.IntN(2)) * time.Hour)
		}
		p := analyzer.Point{At: t, MeasurementID: "m" + itoa(i)}
		p.Value = c.value(rng, sh, t, bad, effects, &p)
		points = append(points, p)
	}
	for i := range labels {
		labels[i].row = firstRow(points, labels[i].start)
	}
	return labelled{rule: r, points: points, anomalies: labels, weeks: weeks}
}

// value is a healthy value at t with every effect active at t applied.
func (c client) value(rng *rand.Rand, sh shape, t time.Time, bad float64, effects []effect, p *analyzer.Point) float64 {
	nonzero, factor := c.nonzero, 1.0
	for _, e := range effects {
		if t.Before(e.from) || !t.Before(e.to) {
			continue
		}
		switch {
		case e.what == "silence":
			continue
		case e.what == "impossible":
			switch rng.IntN(3) {
			case 0:
				p.Problem = "not_a_number"
				return 0
			case 1:
				return -1 - rng.Float64()*10
			}
			if catalogueRule(sh.rule).Unit == analyzer.Percent {
				return 100 + rng.Float64()*100
			}
			return math.NaN()
		case e.absolute > 0:
			return e.absolute
		}
		factor *= e.factor
		if e.nonzero > 0 {
			nonzero = e.nonzero
		}
	}
	y := math.Log(c.base) + bad*c.daily*c.evening(t) + c.sd*studentT(rng, sh.tailDF)
	if sh.nonzeroHi > 0 {
		if rng.Float64() >= nonzero*(0.5+c.evening(t)) {
			return 0
		}
	}
	v := math.Exp(y) * factor
	if sh.capAt > 0 {
		v = min(v, sh.capAt)
	}
	return math.Round(v*100) / 100
}

func firstRow(points []analyzer.Point, t time.Time) int {
	for i, p := range points {
		if !p.At.Before(t) {
			return i
		}
	}
	return len(points)
}

func catalogueRule(id string) analyzer.Rule {
	for _, r := range analyzer.Catalogue() {
		if r.ID == id {
			return r
		}
	}
	panic("no catalogue rule " + id)
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		if i /= 10; i == 0 {
			return string(b[n:])
		}
	}
}
