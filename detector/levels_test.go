package detector

import (
	"testing"

	"github.com/fleetgraph/fleetgraph/analyzer"
	"github.com/fleetgraph/fleetgraph/store"
)

// The most specific matching override wins: the pass outranks the metric,
// the metric the type, the type the subject; "*" matches anything.
func TestLevelsMostSpecificWins(t *testing.T) {
	ov := func(subject, typ, metric, pass, level string) store.Override {
		return store.Override{Subject: subject, MeasurementType: typ, Metric: metric, DetectionPass: pass, Level: level}
	}
	rule := analyzer.Rule{ID: "video-stalling", MeasurementType: "VideoMeasurement", Metric: "statistic_values.total_stalling_time"}
	for _, c := range []struct {
		name      string
		overrides []store.Override
		subject   string
		pass      analyzer.Pass
		want      analyzer.Level
	}{
		{"no override: default", nil, "youtube", analyzer.Spike, analyzer.Default},
		{"an exact scope", []store.Override{ov("youtube", "VideoMeasurement", "total_stalling_time", "spike", "off")},
			"youtube", analyzer.Spike, analyzer.Off},
		{"another subject does not match", []store.Override{ov("netflix", "VideoMeasurement", "total_stalling_time", "spike", "off")},
			"youtube", analyzer.Spike, analyzer.Default},
		{"another pass does not match", []store.Override{ov("youtube", "VideoMeasurement", "total_stalling_time", "shift", "off")},
			"youtube", analyzer.Spike, analyzer.Default},
		{"* matches any subject", []store.Override{ov("*", "VideoMeasurement", "total_stalling_time", "spike", "high")},
			"netflix", analyzer.Spike, analyzer.High},
		{"the named pass outranks the rest named", []store.Override{
			ov("youtube", "VideoMeasurement", "total_stalling_time", "*", "low"), ov("*", "*", "*", "spike", "high")},
			"youtube", analyzer.Spike, analyzer.High},
		{"the subject breaks a tie", []store.Override{
			ov("*", "VideoMeasurement", "total_stalling_time", "spike", "low"), ov("youtube", "VideoMeasurement", "total_stalling_time", "spike", "off")},
			"youtube", analyzer.Spike, analyzer.Off},
	} {
		t.Run(c.name, func(t *testing.T) {
			lv := newLevels(c.overrides).of(rule, c.subject)
			got := analyzer.Default
			if lv != nil {
				got = lv(c.pass)
			}
			if got != c.want {
				t.Errorf("level %s, want %s", got, c.want)
			}
		})
	}
}
