package analyzer

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func rule(id string) Rule {
	for _, r := range Catalogue() {
		if r.ID == id {
			return r
		}
	}
	panic("no rule " + id)
}

// series is n points every 30 minutes from t0 of value f(i), with
// measurement ids m<i>.
func series(n int, f func(i int) float64) []Point {
	ps := make([]Point, n)
	for i := range ps {
		ps[i] = Point{At: t0.Add(time.Duration(i) * 30 * time.Minute), MeasurementID: "m" + itoa(i), Value: f(i)}
	}
	return ps
}

func itoa(i int) string { return strconv.Itoa(i) }

func unix(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }

// noisy is base times a lognormal noise of relative spread sd, seeded.
func noisy(seed uint64, base, sd float64) func(int) float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	return func(int) float64 { return base * math.Exp(sd*rng.NormFloat64()) }
}

// run feeds ps to a new state at level l and answers every change.
func run(r Rule, l Level, ps []Point) (*State, []Change) {
	s := NewState()
	var all []Change
	for _, p := range ps {
		all = append(all, s.Observe(r, func(Pass) Level { return l }, p)...)
	}
	return s, all
}

func opened(cs []Change, pass Pass) []Episode {
	var eps []Episode
	for _, c := range cs {
		if c.Kind == Opened && c.Episode.Pass == pass {
			eps = append(eps, c.Episode)
		}
	}
	return eps
}

func kinds(cs []Change) map[ChangeKind]int {
	m := map[ChangeKind]int{}
	for _, c := range cs {
		m[c.Kind]++
	}
	return m
}

func TestSteadyNoiseRaisesNothing(t *testing.T) {
	for _, id := range []string{"speedtest-download", "speedtest-ping", "web-plt"} {
		_, cs := run(rule(id), Default, series(2000, noisy(7, 80, 0.08)))
		if len(cs) != 0 {
			t.Errorf("%s: %d changes on plain noise, first %+v", id, len(cs), cs[0])
		}
	}
}

func TestSpikeInTheBadDirectionOnly(t *testing.T) {
	base := noisy(3, 80, 0.05)
	ps := series(300, base)
	ps[200].Value = 20 // download falls to a quarter: bad
	ps[250].Value = 400
	_, cs := run(rule("speedtest-download"), Default, ps)
	eps := opened(cs, Spike)
	if len(eps) != 1 {
		t.Fatalf("spike episodes %d, want 1: %+v", len(eps), cs)
	}
	e := eps[0]
	if e.ID != "speedtest-download::spike::"+unix(ps[200].At) || e.Value != 20 || e.Severity != Critical {
		t.Fatalf("episode %+v", e)
	}
	if !(e.BandLow < e.Baseline && e.Baseline < e.BandHigh && e.BandLow > 20 && e.Baseline > 70 && e.Baseline < 90) {
		t.Fatalf("baseline %v band %v..%v", e.Baseline, e.BandLow, e.BandHigh)
	}
	if k := kinds(cs); k[Resolved] != 1 {
		t.Fatalf("changes %v, want the spike resolved", k)
	}
	for _, c := range cs {
		if c.Kind == Resolved && !c.Episode.ResolvedAt.Equal(ps[202].At) {
			t.Fatalf("resolved at %v, want after two calm points %v", c.Episode.ResolvedAt, ps[202].At)
		}
	}
}

func TestShiftOpensOnALastingDrop(t *testing.T) {
	base := noisy(5, 80, 0.06)
	ps := series(400, func(i int) float64 {
		v := base(i)
		if i >= 200 && i < 260 { // 30 hours at 60 %
			v *= 0.6
		}
		return v
	})
	_, cs := run(rule("speedtest-download"), Default, ps)
	eps := opened(cs, Shift)
	if len(eps) != 1 {
		t.Fatalf("shift episodes %+v", eps)
	}
	if e := eps[0]; e.FirstSeen.Before(ps[200].At) || e.FirstSeen.After(ps[206].At) {
		t.Fatalf("shift %+v, want it opened within 6 points of %v", e, ps[200].At)
	}
	var last Episode
	for _, c := range cs {
		if c.Episode.Pass == Shift {
			last = c.Episode
		}
	}
	if last.Severity != Critical || !last.Resolved || last.ID != eps[0].ID {
		t.Fatalf("shift at its end %+v, want critical and resolved", last)
	}
	if n := len(opened(cs, Spike)); n > 1 {
		t.Fatalf("%d spike episodes on a shift", n)
	}
}

func TestImpossibleValuesAreDataQuality(t *testing.T) {
	r := rule("ping-loss")
	ps := series(40, noisy(1, 0.5, 0.3))
	ps[20].Value = 130
	ps[21].Value = -1
	ps[30].Problem = ProblemNotNumber
	_, cs := run(r, Default, ps)
	eps := opened(cs, DataQuality)
	if len(eps) != 2 || eps[0].Reason != ProblemOver100 || eps[1].Reason != ProblemNotNumber {
		t.Fatalf("episodes %+v", eps)
	}
	for _, c := range cs {
		if c.Kind == Extended && (c.Episode.Reason != ProblemNegative || len(c.Episode.MeasurementIDs) != 2) {
			t.Fatalf("extension %+v", c.Episode)
		}
	}
	if k := kinds(cs); k[Resolved] != 2 || k[Extended] != 1 {
		t.Fatalf("changes %v", k)
	}
}

func TestStoppedReporting(t *testing.T) {
	r := rule("speedtest-ping")
	ps := series(50, noisy(2, 15, 0.1))
	s, cs := run(r, Default, ps)
	if len(cs) != 0 {
		t.Fatalf("changes %+v", cs)
	}
	last := ps[49].At
	if cs := s.Sweep(r, nil, last.Add(5*time.Hour)); len(cs) != 0 {
		t.Fatalf("five hours of silence raised %+v", cs)
	}
	cs = s.Sweep(r, nil, last.Add(7*time.Hour))
	if len(cs) != 1 || cs[0].Kind != Opened || cs[0].Episode.Reason != ReasonStopped ||
		!cs[0].Episode.FirstSeen.Equal(last.Add(6*time.Hour)) {
		t.Fatalf("sweep %+v, want stopped_reporting from 12 intervals after the last point", cs)
	}
	if again := s.Sweep(r, nil, last.Add(9*time.Hour)); len(again) != 0 {
		t.Fatalf("second sweep %+v", again)
	}
	back := Point{At: last.Add(10 * time.Hour), MeasurementID: "back", Value: 15}
	cs = s.Observe(r, nil, back)
	if len(cs) != 1 || cs[0].Kind != Resolved || !cs[0].Episode.ResolvedAt.Equal(back.At) {
		t.Fatalf("return %+v", cs)
	}

	// Without a sweep, the same point tells the same story.
	s2, _ := run(r, Default, ps)
	cs = s2.Observe(r, nil, back)
	if len(cs) != 2 || cs[0].Kind != Opened || cs[1].Kind != Resolved || cs[0].Episode.ID != "speedtest-ping::data_quality::"+unix(last.Add(6*time.Hour)) {
		t.Fatalf("unswept return %+v", cs)
	}
}

func TestLevels(t *testing.T) {
	ps := series(300, noisy(9, 80, 0.05))
	ps[200].Value = 60 // a quarter down: within the low level's band, outside high's
	count := func(l Level) int {
		_, cs := run(rule("speedtest-download"), l, ps)
		return len(opened(cs, Spike))
	}
	if got := []int{count(Off), count(Low), count(Default), count(High)}; got[0] != 0 || got[1] != 0 || got[3] != 1 {
		t.Fatalf("spike episodes at off, low, default, high = %v", got)
	}
	bad := series(20, noisy(1, 1, 0.1))
	bad[5].Value = -3
	if _, cs := run(rule("ping-loss"), Off, bad); len(cs) != 0 {
		t.Fatalf("off still raised %+v", cs)
	}
}

func TestLevelAppliesToThePointItIsGivenFor(t *testing.T) {
	r := rule("speedtest-download")
	ps := series(300, noisy(9, 80, 0.05))
	ps[200].Value = 10
	s := NewState()
	for i, p := range ps {
		l := Default
		if i == 200 {
			l = Off
		}
		if cs := s.Observe(r, func(Pass) Level { return l }, p); len(cs) != 0 {
			t.Fatalf("point %d: %+v", i, cs)
		}
	}
}

func TestOlderPointsAreIgnored(t *testing.T) {
	r := rule("speedtest-download")
	ps := series(100, noisy(4, 80, 0.05))
	s, _ := run(r, Default, ps)
	before, _ := s.MarshalBinary()
	if cs := s.Observe(r, nil, Point{At: ps[10].At, Value: -5}); cs != nil {
		t.Fatalf("older point: %+v", cs)
	}
	after, _ := s.MarshalBinary()
	if !bytes.Equal(before, after) {
		t.Fatal("an older point changed the state")
	}
}

func TestEncodingRoundTripsAndIsDeterministic(t *testing.T) {
	r := rule("speedtest-download")
	ps := series(400, noisy(11, 80, 0.07))
	for i := 150; i < 170; i++ {
		ps[i].Value *= 0.5
	}
	ps[160].Value = -1
	_, want := run(r, Default, ps)
	if len(want) == 0 {
		t.Fatal("no episodes to compare")
	}
	// The same points through a state stored and loaded after every point.
	s := NewState()
	var got []Change
	for _, p := range ps {
		got = append(got, s.Observe(r, nil, p)...)
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 8192 {
			t.Fatalf("state of %d bytes", len(b))
		}
		s = NewState()
		if err := s.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("stored and loaded: %d changes, straight: %d", len(got), len(want))
	}
	b, _ := s.MarshalBinary()
	for _, bad := range [][]byte{nil, {9}, b[:len(b)-1], append(append([]byte{}, b...), 0)} {
		if err := NewState().UnmarshalBinary(bad); err == nil {
			t.Fatalf("decoded %d bad bytes", len(bad))
		}
	}
}

func TestMeasurementIDsAreBounded(t *testing.T) {
	ps := series(200, func(int) float64 { return 5 })
	for i := 100; i < 200; i++ {
		ps[i].Value = -1
	}
	s, _ := run(rule("speedtest-download"), Default, ps)
	open := s.Open()
	if len(open) != 1 {
		t.Fatalf("open %+v", open)
	}
	ids := open[0].MeasurementIDs
	if len(ids) != MaxMeasurementIDs || ids[0] != "m100" || ids[len(ids)-1] != "m199" || ids[MaxMeasurementIDs/2] != "m175" {
		t.Fatalf("ids %v", ids)
	}
}

func TestExtract(t *testing.T) {
	lines, err := os.ReadFile("../testdata/measurements.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	docs := bytes.Split(bytes.TrimSpace(lines), []byte("\n"))
	dl := rule("speedtest-download")
	var got []float64
	for _, d := range docs {
		if p, ok := Extract(d, dl); ok {
			if p.Problem != "" || p.At.IsZero() || !strings.HasPrefix(p.MeasurementID, "6a1f0c00-") {
				t.Fatalf("point %+v", p)
			}
			got = append(got, p.Value)
		}
	}
	if !reflect.DeepEqual(got, []float64{64.2, 94.2, 86.7, 79.2, 71.7}) {
		t.Fatalf("downloads %v", got)
	}
	ookla := dl
	ookla.Subject = "ookla"
	n := 0
	for _, d := range docs {
		if _, ok := Extract(d, ookla); ok {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("ookla downloads %d, want 2", n)
	}

	loss := rule("ping-loss")
	for _, c := range []struct {
		doc     string
		ok      bool
		value   float64
		problem string
	}{
		{`{"type":"NetworkMeasurement","statistic_values":{"packet_loss":2.5}}`, true, 2.5, ""},
		{`{"type":"NetworkMeasurement","statistic_values":{"packet_loss":120}}`, true, 120, ProblemOver100},
		{`{"type":"NetworkMeasurement","statistic_values":{"packet_loss":-0.1}}`, true, -0.1, ProblemNegative},
		{`{"type":"NetworkMeasurement","statistic_values":{"packet_loss":"3"}}`, true, 0, ProblemNotNumber},
		{`{"type":"NetworkMeasurement","statistic_values":{"packet_loss":"NaN"}}`, true, 0, ProblemNaN},
		{`{"type":"NetworkMeasurement","statistic_values":{"packet_loss":true}}`, true, 0, ProblemNotNumber},
		{`{"type":"NetworkMeasurement","statistic_values":{"packet_loss":1e999}}`, true, math.Inf(1), ProblemNotFinite},
		{`{"type":"NetworkMeasurement","statistic_values":{"packet_loss":null}}`, false, 0, ""},
		{`{"type":"NetworkMeasurement","statistic_values":{"rtt_avg":3}}`, false, 0, ""},
		{`{"type":"GamingMeasurement","statistic_values":{"packet_loss":1}}`, false, 0, ""},
		{`not json`, false, 0, ""},
	} {
		p, ok := Extract([]byte(c.doc), loss)
		if ok != c.ok || p.Value != c.value || p.Problem != c.problem {
			t.Errorf("%s: got %+v %v", c.doc, p, ok)
		}
	}
}

func TestCatalogue(t *testing.T) {
	want := map[string]Direction{
		"SpeedtestMeasurement.download": Down, "SpeedtestMeasurement.upload": Down,
		"SpeedtestMeasurement.ping": Up, "SpeedtestMeasurement.jitter": Up,
		"WebMeasurement.page_load_time": Up, "WebMeasurement.time_to_first_byte": Up,
		"VideoMeasurement.initial_loading_time": Up, "VideoMeasurement.total_stalling_time": Up,
		"VideoMeasurement.stalling_number": Up, "NetworkMeasurement.resolve_time": Up,
		"ConferencingMeasurement.packet_loss": Up, "ConferencingMeasurement.round_trip_time": Up,
		"GamingMeasurement.latency": Up, "GamingMeasurement.packet_loss": Up, "GamingMeasurement.fps": Down,
	}
	ids := map[string]bool{}
	for _, r := range Catalogue() {
		if ids[r.ID] || r.Unit == "" || !r.Enabled || !r.Builtin || len(r.Passes) != 3 {
			t.Errorf("rule %+v", r)
		}
		ids[r.ID] = true
		key := r.MeasurementType + "." + r.MetricName()
		if d, ok := want[key]; ok {
			if d != r.Direction {
				t.Errorf("%s: direction %s, want %s", key, r.Direction, d)
			}
			delete(want, key)
		}
	}
	if len(want) != 0 {
		t.Errorf("not covered: %v", want)
	}
	for _, id := range []string{"speedtest-download", "video-stalling", "web-plt", "ping-loss", "meet-jitter"} {
		if !ids[id] {
			t.Errorf("no rule %s (testdata's episodes use it)", id)
		}
	}
}

// The incremental sorted window answers what sorting the window answers.
func TestBaselineMatchesSorting(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	s := NewState()
	for i := range 500 {
		v := rng.NormFloat64()
		if rng.IntN(3) == 0 {
			v = 0 // ties, as a mostly-0 metric has
		}
		s.push(v)
		w := append([]float64(nil), s.win[:s.winN]...)
		med := median(w)
		dev := make([]float64, len(w))
		mean := 0.0
		for j := range w {
			dev[j] = math.Abs(w[j] - med)
			mean += dev[j]
		}
		want := max(1.4826*median(dev), 1.2533*mean/float64(len(w)), minScale)
		if b := s.baseline(); math.Abs(b.median-med) > 1e-12 || math.Abs(b.scale-want) > 1e-12 {
			t.Fatalf("after %d values: %+v, want median %v scale %v", i+1, b, med, want)
		}
	}
}
