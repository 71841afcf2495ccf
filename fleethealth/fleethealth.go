// Package fleethealth evaluates a client's system health (docs/design.md "Health and
// licensing"): the metrics of its latest system status record against the
// data owner's thresholds give a state (healthy, warning, critical or
// unknown), the reasons for it and a summary per metric. It is pure: the
// store reads the records and settings, calls Evaluate and keeps the
// result (store/health.go).
package fleethealth

// States of a client's health.
const (
	StateHealthy  = "healthy"
	StateWarning  = "warning"
	StateCritical = "critical"
	StateUnknown  = "unknown"
)

// Metrics evaluated, in the order reasons list them.
const (
	MetricCPU        = "cpu"
	MetricMemory     = "memory"
	MetricFilesystem = "filesystem"
)

// Metrics lists every metric.
var Metrics = []string{MetricCPU, MetricMemory, MetricFilesystem}

// Default thresholds, in percent, of every metric.
const (
	DefaultWarningPercent  = 80
	DefaultCriticalPercent = 95
)

// Limits are one metric's thresholds in percent: Warning < Critical, both
// 0 to 100. A value at or above a limit reaches it.
type Limits struct {
	Warning  int `json:"warning_percent"`
	Critical int `json:"critical_percent"`
}

// Thresholds are a data owner's limits per metric.
type Thresholds struct {
	CPU        Limits `json:"cpu"`
	Memory     Limits `json:"memory"`
	Filesystem Limits `json:"filesystem"`
}

// Of returns the limits of metric.
func (t Thresholds) Of(metric string) Limits {
	switch metric {
	case MetricCPU:
		return t.CPU
	case MetricMemory:
		return t.Memory
	default:
		return t.Filesystem
	}
}

// Snapshot is every setting an evaluation depended on; an evaluation whose
// snapshot differs from the data owner's current one is outdated.
type Snapshot struct {
	CPUWarningPercent         int  `json:"cpu_warning_percent"`
	CPUCriticalPercent        int  `json:"cpu_critical_percent"`
	MemoryWarningPercent      int  `json:"memory_warning_percent"`
	MemoryCriticalPercent     int  `json:"memory_critical_percent"`
	FilesystemWarningPercent  int  `json:"filesystem_warning_percent"`
	FilesystemCriticalPercent int  `json:"filesystem_critical_percent"`
	OfflineThresholdMinutes   int  `json:"offline_threshold_minutes"`
	DegradedDetectionEnabled  bool `json:"client_degraded_detection_enabled"`
}

// Settings are the data owner's settings an evaluation reads.
type Settings struct {
	Thresholds Thresholds
	// OfflineThresholdMinutes: a record older than this does not count
	// (the client's state is unknown).
	OfflineThresholdMinutes int
	// DegradedDetectionEnabled: the data owner's
	// client_degraded_detection_enabled (and the server's).
	DegradedDetectionEnabled bool
}

// Snapshot returns the snapshot of s.
func (s Settings) Snapshot() Snapshot {
	t := s.Thresholds
	return Snapshot{CPUWarningPercent: t.CPU.Warning, CPUCriticalPercent: t.CPU.Critical,
		MemoryWarningPercent: t.Memory.Warning, MemoryCriticalPercent: t.Memory.Critical,
		FilesystemWarningPercent: t.Filesystem.Warning, FilesystemCriticalPercent: t.Filesystem.Critical,
		OfflineThresholdMinutes: s.OfflineThresholdMinutes, DegradedDetectionEnabled: s.DegradedDetectionEnabled}
}

// Reading is what a system status record says about the metrics: the
// percent of each (nil when the record has none) and its network transport.
type Reading struct {
	RecordID         int64
	Percent          map[string]*float64 // by metric
	NetworkTransport *string
}

// Reason is a metric at or above one of its limits.
type Reason struct {
	Metric   string  `json:"metric"`
	Percent  float64 `json:"percent"`
	Severity string  `json:"severity"` // warning or critical
}

// MetricSummary is one metric's value and limits in an evaluation.
type MetricSummary struct {
	Percent         *float64 `json:"percent"`
	WarningPercent  float64  `json:"warning_percent"`
	CriticalPercent float64  `json:"critical_percent"`
}

// Evaluation is a client's health at one time.
type Evaluation struct {
	State            string
	Reasons          []Reason
	MetricSummary    map[string]MetricSummary
	Snapshot         Snapshot
	SourceRecordID   *int64
	NetworkTransport *string
}

// Evaluate judges reading (nil when the client has no record within the
// offline threshold) against s. Without a reading, with one that carries no
// metric at all, or with degraded detection off, the state is unknown (the
// summary still shows the reading's values); else the worst severity of the
// metrics' reasons, healthy when none reaches a limit.
func Evaluate(r *Reading, s Settings) Evaluation {
	e := Evaluation{State: StateUnknown, Reasons: []Reason{}, MetricSummary: map[string]MetricSummary{},
		Snapshot: s.Snapshot()}
	for _, m := range Metrics {
		l := s.Thresholds.Of(m)
		sum := MetricSummary{WarningPercent: float64(l.Warning), CriticalPercent: float64(l.Critical)}
		if r != nil {
			sum.Percent = r.Percent[m]
		}
		e.MetricSummary[m] = sum
	}
	if r == nil {
		return e
	}
	e.SourceRecordID, e.NetworkTransport = &r.RecordID, r.NetworkTransport
	if !s.DegradedDetectionEnabled {
		return e
	}
	measured := false
	e.State = StateHealthy
	for _, m := range Metrics {
		p := r.Percent[m]
		if p == nil {
			continue
		}
		measured = true
		l := s.Thresholds.Of(m)
		switch {
		case *p >= float64(l.Critical):
			e.Reasons = append(e.Reasons, Reason{Metric: m, Percent: *p, Severity: StateCritical})
			e.State = StateCritical
		case *p >= float64(l.Warning):
			e.Reasons = append(e.Reasons, Reason{Metric: m, Percent: *p, Severity: StateWarning})
			if e.State != StateCritical {
				e.State = StateWarning
			}
		}
	}
	if !measured {
		e.State = StateUnknown
	}
	return e
}

// Changed reports whether a client's state moved from before (nil: never
// evaluated) to after: the event the webhooks publish.
func Changed(before *string, after string) bool { return before == nil || *before != after }
