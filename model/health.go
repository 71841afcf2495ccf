package model

import (
	"fmt"
	"io"
	"time"
)

// SystemStatusRecord is the spec's "System status record".
type SystemStatusRecord struct {
	ID                        int64
	ClientUUID                string
	RunID                     string
	StudyIds                  []string
	MeasurementIds            []int64
	StartedAt                 *time.Time
	FinishedAt                *time.Time
	Platform                  *string
	RuntimeScope              *string
	SampleIntervalSeconds     int64
	ConnectionDetailTraceID   *int64
	CPUValidSampleCount       int64
	CPUAveragePercent         *float64
	CPUMaxPercent             *float64
	CPUFinalPercent           *float64
	MemoryValidSampleCount    int64
	MemoryEffectiveTotalBytes *int64
	MemoryAveragePercent      *float64
	MemoryMaxPercent          *float64
	MemoryFinalPercent        *float64
	Filesystems               []SystemStatusFilesystem
	ConnectionDetails         []JSON
	CollectionErrors          []string
	CreatedAt                 time.Time
}

type SystemStatusFilesystem struct {
	Writable              bool
	ValidSampleCount      int64
	Device                *string
	Mount                 *string
	Type                  *string
	TotalBytes            *int64
	MinimumAvailableBytes *int64
	FinalAvailableBytes   *int64
	AveragePercent        *float64
	MaximumPercent        *float64
	FinalPercent          *float64
}

type SystemStatusRecordPage struct {
	Items   []SystemStatusRecord
	Total   int64
	Page    int64
	PerPage int64
}

type ClientHealthState struct {
	ClientID                   int64
	ClientUUID                 string
	ClientLabel                *string
	State                      HealthState
	Reasons                    []HealthReason
	MetricSummary              HealthMetricSummaries
	EvaluatedAt                *time.Time
	ThresholdSnapshot          HealthThresholdSnapshot
	ThresholdsOutdated         bool
	SourceSystemStatusRecordID *int64
	NetworkTransport           *string
}

type HealthReason struct {
	Metric   string
	Percent  float64
	Severity HealthSeverity
}

type HealthMetricSummary struct {
	Percent         *float64
	WarningPercent  float64
	CriticalPercent float64
}

type HealthMetricSummaries struct {
	CPU        HealthMetricSummary
	Memory     HealthMetricSummary
	Filesystem HealthMetricSummary
}

type HealthThresholdSnapshot struct {
	CPUWarningPercent              int64
	CPUCriticalPercent             int64
	MemoryWarningPercent           int64
	MemoryCriticalPercent          int64
	FilesystemWarningPercent       int64
	FilesystemCriticalPercent      int64
	OfflineThresholdMinutes        int64
	ClientDegradedDetectionEnabled bool
}

type HealthMetricThresholds struct {
	WarningPercent  int64
	CriticalPercent int64
}

type HealthThresholds struct {
	CPU        HealthMetricThresholds
	Memory     HealthMetricThresholds
	Filesystem HealthMetricThresholds
}

// HealthState is a client's health: healthy, warning, critical, unknown.
type HealthState string

func (h HealthState) MarshalGQL(w io.Writer) { fmt.Fprintf(w, "%q", string(h)) }

func (h *HealthState) UnmarshalGQL(v any) error {
	s, _ := v.(string)
	switch s {
	case "healthy", "warning", "critical", "unknown":
		*h = HealthState(s)
		return nil
	}
	return fmt.Errorf("%v is not a valid HealthState", v)
}

// HealthSeverity is a reason's severity: warning or critical.
type HealthSeverity string

func (h HealthSeverity) MarshalGQL(w io.Writer) { fmt.Fprintf(w, "%q", string(h)) }

func (h *HealthSeverity) UnmarshalGQL(v any) error {
	s, _ := v.(string)
	if s != "warning" && s != "critical" {
		return fmt.Errorf("%v is not a valid HealthSeverity", v)
	}
	*h = HealthSeverity(s)
	return nil
}
