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
	if n := len(opened(cs, Spike)); n != 0 {
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
		s.push(v, math.Inf(-1), math.Inf(1))
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

// stalls is a mostly-0 stalling time: 10 % of sessions stall, for about a
// second (lognormal), more often in the evening.
func stalls(seed uint64) func(int) float64 {
	rng := rand.New(rand.NewPCG(seed, 2))
	return func(i int) float64 {
		evening := 1 + math.Cos(2*math.Pi*float64(i%48-40)/48)
		if rng.Float64() >= 0.07*evening {
			return 0
		}
		return math.Round(1000 * math.Exp(0.6*rng.NormFloat64()))
	}
}

func TestHeavyTailedStallingAlarmsOnlyOnOutsizedStalls(t *testing.T) {
	r := rule("video-stalling")
	ps := series(4*7*48, stalls(5))
	_, cs := run(r, Default, ps)
	var late []Episode
	for _, e := range opened(cs, Spike) {
		if e.FirstSeen.After(t0.Add(7 * 24 * time.Hour)) { // after the first week's learning
			late = append(late, e)
		}
	}
	if len(late) > 1 || len(opened(cs, Shift)) > 1 {
		t.Fatalf("ordinary stalls raised %d spikes after the first week, %d shifts", len(late), len(opened(cs, Shift)))
	}
	ps[1000].Value = 60000 // a minute of stalling
	_, cs = run(r, Default, ps)
	for _, e := range opened(cs, Spike) {
		if e.FirstSeen.Equal(ps[1000].At) {
			if e.Severity != Critical {
				t.Fatalf("a minute of stalling: %+v, want critical", e)
			}
			return
		}
	}
	t.Fatal("a minute of stalling raised no spike")
}

func TestADailyCycleIsNotAnAnomaly(t *testing.T) {
	noise := noisy(8, 1, 0.05)
	ps := series(4*7*48, func(i int) float64 {
		evening := (1 + math.Cos(2*math.Pi*float64(i%48-42)/48)) / 2
		return 100 * math.Exp(-0.4*evening) * noise(i) // a third less every evening
	})
	_, cs := run(rule("speedtest-download"), Default, ps)
	var after []Episode
	for _, c := range cs {
		if c.Kind == Opened && c.Episode.FirstSeen.After(t0.Add(4*24*time.Hour)) {
			after = append(after, c.Episode)
		}
	}
	if len(after) > 1 {
		t.Fatalf("%d episodes on a daily cycle after it was learnt: %+v", len(after), after[0])
	}
}

func TestLatencyDoublingIsACriticalShift(t *testing.T) {
	base := noisy(12, 20, 0.1)
	ps := series(400, func(i int) float64 {
		if i >= 250 && i < 274 { // twelve hours at twice the latency
			return 2 * base(i)
		}
		return base(i)
	})
	_, cs := run(rule("speedtest-ping"), Default, ps)
	eps := opened(cs, Shift)
	if len(eps) != 1 || eps[0].FirstSeen.Before(ps[250].At) || eps[0].FirstSeen.After(ps[254].At) {
		t.Fatalf("shift episodes %+v", eps)
	}
	var last Episode
	for _, c := range cs {
		if c.Episode.ID == eps[0].ID {
			last = c.Episode
		}
	}
	if last.Severity != Critical || !last.Resolved || last.ResolvedAt.Before(ps[274].At) {
		t.Fatalf("at its end %+v", last)
	}
}

func TestBothDirectionsAlarm(t *testing.T) {
	r := Rule{ID: "custom", MeasurementType: "SpeedtestMeasurement", Metric: "statistic_values.ping",
		Direction: Both, Unit: "ms", Passes: []Pass{Spike}, Enabled: true}
	ps := series(300, noisy(13, 20, 0.05))
	ps[200].Value, ps[250].Value = 80, 5
	_, cs := run(r, Default, ps)
	if eps := opened(cs, Spike); len(eps) != 2 || eps[0].Value != 80 || eps[1].Value != 5 {
		t.Fatalf("spikes %+v", eps)
	}
	for _, c := range cs {
		if c.Episode.Pass != Spike {
			t.Fatalf("a pass the rule does not run: %+v", c)
		}
	}
}

func TestRecurrenceOpensANewEpisode(t *testing.T) {
	ps := series(300, noisy(14, 80, 0.05))
	ps[200].Value, ps[220].Value = 10, 10
	_, cs := run(rule("speedtest-download"), Default, ps)
	eps := opened(cs, Spike)
	if len(eps) != 2 || eps[0].ID == eps[1].ID || kinds(cs)[Resolved] != 2 {
		t.Fatalf("changes %+v", cs)
	}
}

func TestASilentClientsEpisodesResolve(t *testing.T) {
	r := rule("speedtest-download")
	ps := series(200, noisy(15, 80, 0.05))
	ps[199].Value = 10
	s, cs := run(r, Default, ps)
	if len(s.Open()) != 1 || len(opened(cs, Spike)) != 1 {
		t.Fatalf("open %+v", s.Open())
	}
	off := func(p Pass) Level {
		if p == DataQuality {
			return Off
		}
		return Default
	}
	cs = s.Sweep(r, off, ps[199].At.Add(7*time.Hour))
	if len(cs) != 1 || cs[0].Kind != Resolved || !cs[0].Episode.ResolvedAt.Equal(ps[199].At.Add(6*time.Hour)) {
		t.Fatalf("sweep %+v, want the spike resolved six hours (12 intervals) after the last point", cs)
	}
	if len(s.Open()) != 0 {
		t.Fatalf("still open %+v", s.Open())
	}
}

func TestAModerateSpikeOpensWhenItIsOver(t *testing.T) {
	r := rule("speedtest-download")
	ps := series(300, noisy(16, 80, 0.05))
	ps[200].Value, ps[201].Value = 45, 48 // about 45 % down for two points: not critical
	s := NewState()
	for i, p := range ps {
		cs := s.Observe(r, nil, p)
		switch {
		case i < 202 && len(cs) != 0:
			t.Fatalf("point %d: %+v", i, cs)
		case i == 202:
			if len(cs) != 1 || cs[0].Kind != Opened || !cs[0].Episode.FirstSeen.Equal(ps[200].At) ||
				!cs[0].Episode.LastSeen.Equal(ps[201].At) || cs[0].Episode.Value != 45 ||
				cs[0].Episode.Severity != Warning || len(cs[0].Episode.MeasurementIDs) != 2 {
				t.Fatalf("when the excursion ended: %+v", cs)
			}
		}
	}
}

// The acceptance scenario at the analyzer's level: a month of a
// probe's hourly measurements with a 40 % download shift for two days and
// three stalling spikes raises exactly those episodes; the untouched probe
// raises none.
func TestAMonthOfAProbe(t *testing.T) {
	const n = 30 * 24
	for _, injected := range []bool{false, true} {
		dlNoise, stall := noisy(21, 1, 0.06), stalls(22)
		download := series(n, func(i int) float64 {
			evening := (1 + math.Cos(2*math.Pi*float64(i%24-20)/24)) / 2
			v := 100 * math.Exp(-0.2*evening) * dlNoise(i)
			if injected && i >= 400 && i < 448 {
				v *= 0.6
			}
			return math.Round(v*10) / 10
		})
		for i := range download {
			download[i].At = t0.Add(time.Duration(i) * time.Hour)
		}
		video := series(n, stall)
		for i := range video {
			video[i].At = t0.Add(time.Duration(i)*time.Hour + 30*time.Minute)
			if injected && (i == 300 || i == 500 || i == 600) {
				video[i].Value = 45000 + float64(i)
			}
		}
		_, dl := run(rule("speedtest-download"), Default, download)
		_, vs := run(rule("video-stalling"), Default, video)
		var got []string
		for _, c := range append(dl, vs...) {
			if c.Kind == Resolved {
				e := c.Episode
				got = append(got, string(e.Pass)+" "+e.FirstSeen.Format("01-02T15"))
				if e.Pass == Shift && e.Severity != Critical || e.Pass == Spike && e.Value > 2*e.BandHigh != (e.Severity == Critical) {
					t.Errorf("severity of %+v", e)
				}
			}
		}
		want := []string(nil)
		if injected {
			want = []string{"shift " + download[403].At.Format("01-02T15"),
				"spike " + video[300].At.Format("01-02T15"),
				"spike " + video[500].At.Format("01-02T15"),
				"spike " + video[600].At.Format("01-02T15")}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("injected %v: episodes %q, want %q", injected, got, want)
		}
		if kinds(dl)[Opened] != kinds(dl)[Resolved] || kinds(vs)[Opened] != kinds(vs)[Resolved] {
			t.Errorf("not every episode resolved: %v %v", kinds(dl), kinds(vs))
		}
	}
}

func TestShiftLevelsAndDirection(t *testing.T) {
	base := noisy(17, 80, 0.02)
	step := func(factor float64) []Point {
		return series(500, func(i int) float64 {
			if i >= 300 && i < 360 {
				return factor * base(i)
			}
			return base(i)
		})
	}
	count := func(l Level, ps []Point) int {
		_, cs := run(rule("speedtest-download"), l, ps)
		return len(opened(cs, Shift)) + len(opened(cs, Spike))
	}
	quarter := step(0.75) // a quarter down for 30 hours
	if got := []int{count(Off, quarter), count(Low, quarter), count(Default, quarter), count(High, quarter)}; !reflect.DeepEqual(got, []int{0, 0, 1, 1}) {
		t.Fatalf("episodes of a 25 %% drop at off, low, default, high = %v", got)
	}
	if n := count(High, step(2)); n != 0 {
		t.Fatalf("download doubling raised %d episodes", n)
	}
}

// A client measuring three times a day whose download drops for good: one
// shift episode, resolved once the new level has filled the window.
func TestALastingDropOfASparseClientIsOneEpisode(t *testing.T) {
	base := noisy(18, 80, 0.05)
	ps := series(260, func(i int) float64 {
		if i >= 120 {
			return 0.55 * base(i)
		}
		return base(i)
	})
	for i := range ps {
		ps[i].At = t0.Add(time.Duration(i) * 8 * time.Hour)
	}
	_, cs := run(rule("speedtest-download"), Default, ps)
	eps := opened(cs, Shift)
	if len(eps) != 1 || len(opened(cs, Spike)) != 0 {
		t.Fatalf("episodes %v", kinds(cs))
	}
	for _, c := range cs {
		if c.Kind == Resolved && c.Episode.Pass == Shift {
			if n := c.Episode.ResolvedAt.Sub(eps[0].FirstSeen) / (8 * time.Hour); n < maxShiftValues {
				t.Fatalf("resolved after %d values", n)
			}
			return
		}
	}
	t.Fatal("the shift never resolved")
}

// Whether and when the sweep runs changes when a change is reported, never
// which episodes there are, their ids or times.
func TestSweepingChangesNothingButWhen(t *testing.T) {
	r := rule("speedtest-ping")
	rng := rand.New(rand.NewPCG(19, 19))
	var ps []Point
	at := t0
	for i := range 3000 {
		at = at.Add(time.Duration(25+rng.IntN(10)) * time.Minute)
		if rng.IntN(400) == 0 {
			at = at.Add(time.Duration(rng.IntN(40)) * time.Hour) // silences, some long enough
		}
		v := 20 * math.Exp(0.1*rng.NormFloat64())
		switch {
		case rng.IntN(300) == 0:
			v *= 6
		case rng.IntN(500) == 0:
			v = -1
		}
		ps = append(ps, Point{At: at, MeasurementID: itoa(i), Value: v})
	}
	story := func(sweep bool) []string {
		s := NewState()
		var out []string
		add := func(cs []Change) {
			for _, c := range cs {
				if c.Kind != Extended {
					out = append(out, string(c.Kind)+" "+c.Episode.ID+" "+c.Episode.ResolvedAt.String())
				}
			}
		}
		next := ps[0].At
		for _, p := range ps {
			for sweep && next.Before(p.At) {
				add(s.Sweep(r, nil, next))
				next = next.Add(time.Hour)
			}
			add(s.Observe(r, nil, p))
		}
		return out
	}
	plain, swept := story(false), story(true)
	if len(plain) < 10 || !reflect.DeepEqual(plain, swept) {
		t.Fatalf("without sweeps %d changes, with %d:\n%q\n%q", len(plain), len(swept), plain, swept)
	}
}

// A level shift raises a shift and no spike of the same metric, however
// far it moves the level: while the shift is open, spikes are judged
// against the shifted level, read from the latest values as they were
// (the window keeps them clipped to clipScales scales, less than a 40 %
// drop of a quiet metric). 8 seeds x 24 phases of the daily cycle, a
// download falling by 40 % and a ping doubling for a day.
func TestALevelShiftRaisesNoSpike(t *testing.T) {
	for _, c := range []struct {
		rule   string
		base   float64
		factor float64
	}{{"speedtest-download", 230, 0.6}, {"speedtest-ping", 12, 2}} {
		spikes, shifts := 0, 0
		for seed := range uint64(8) {
			for phase := range 24 {
				rng := rand.New(rand.NewPCG(seed, 2026))
				ps := series(30*24, func(i int) float64 {
					v := c.base * (1 + 0.07*math.Sin(2*math.Pi*float64(i+phase)/24)) * (1 + 0.02*rng.NormFloat64())
					if i >= 26*24-phase && i < 27*24-phase {
						v *= c.factor
					}
					return math.Round(v*10) / 10
				})
				for i := range ps {
					ps[i].At = t0.Add(time.Duration(i) * time.Hour)
				}
				_, cs := run(rule(c.rule), Default, ps)
				for _, e := range opened(cs, Spike) {
					spikes++
					t.Logf("%s seed %d phase %d: spike at %s", c.rule, seed, phase, e.FirstSeen.Format("01-02T15"))
				}
				shifts += len(opened(cs, Shift))
			}
		}
		if spikes != 0 || shifts != 8*24 {
			t.Errorf("%s: %d spikes and %d shifts in %d series, want none and one each", c.rule, spikes, shifts, 8*24)
		}
	}
}
