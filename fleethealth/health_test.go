package fleethealth

import (
	"reflect"
	"testing"
)

func pct(v float64) *float64 { return &v }

var defaults = Settings{Thresholds: Thresholds{CPU: Limits{80, 95}, Memory: Limits{80, 95}, Filesystem: Limits{70, 90}},
	OfflineThresholdMinutes: 60, DegradedDetectionEnabled: true}

func TestEvaluate(t *testing.T) {
	cases := []struct {
		name    string
		reading *Reading
		set     Settings
		state   string
		reasons []Reason
	}{
		{"no record is unknown", nil, defaults, StateUnknown, []Reason{}},
		{"a record without metrics is unknown", &Reading{RecordID: 1, Percent: map[string]*float64{}}, defaults, StateUnknown, []Reason{}},
		{"below every limit is healthy", &Reading{RecordID: 1, Percent: map[string]*float64{MetricCPU: pct(79.99), MetricFilesystem: pct(69)}},
			defaults, StateHealthy, []Reason{}},
		{"at the warning limit is a warning", &Reading{RecordID: 1, Percent: map[string]*float64{MetricCPU: pct(80)}},
			defaults, StateWarning, []Reason{{MetricCPU, 80, StateWarning}}},
		{"at the critical limit is critical", &Reading{RecordID: 1, Percent: map[string]*float64{MetricMemory: pct(95)}},
			defaults, StateCritical, []Reason{{MetricMemory, 95, StateCritical}}},
		{"the worst reason wins, each metric against its own limits", &Reading{RecordID: 1, Percent: map[string]*float64{
			MetricCPU: pct(85), MetricMemory: pct(10), MetricFilesystem: pct(91)}},
			defaults, StateCritical, []Reason{{MetricCPU, 85, StateWarning}, {MetricFilesystem, 91, StateCritical}}},
		{"degraded detection off is unknown", &Reading{RecordID: 1, Percent: map[string]*float64{MetricCPU: pct(99)}},
			Settings{Thresholds: defaults.Thresholds, OfflineThresholdMinutes: 60}, StateUnknown, []Reason{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := Evaluate(c.reading, c.set)
			if e.State != c.state || !reflect.DeepEqual(e.Reasons, c.reasons) {
				t.Errorf("state %s reasons %v, want %s %v", e.State, e.Reasons, c.state, c.reasons)
			}
			if e.Snapshot != c.set.Snapshot() {
				t.Errorf("snapshot %+v, want %+v", e.Snapshot, c.set.Snapshot())
			}
			if fs := e.MetricSummary[MetricFilesystem]; fs.WarningPercent != 70 || fs.CriticalPercent != 90 {
				t.Errorf("filesystem summary %+v", fs)
			}
			if (c.reading == nil) != (e.SourceRecordID == nil) {
				t.Errorf("source %v for reading %v", e.SourceRecordID, c.reading)
			}
		})
	}
}
