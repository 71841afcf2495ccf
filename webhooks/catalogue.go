// Package webhooks is fleetgraph's outbound webhook engine: the catalogue
// of event types (GET /webhooks/event_types), the payload formats
// (standard, slack, microsoft_teams), Standard Webhooks signing, the HTTP
// client that refuses private addresses (SSRF), and the River worker that
// makes each attempt of a delivery on the schedule docs/design.md decides.
// Events and deliveries are written by the store (store.Emit); this
// package only sends them.
package webhooks

import (
	"github.com/fleetgraph/fleetgraph/fleethealth"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// Filter keys of a webhook's filters.
const (
	FilterClientTags       = "client_tags"
	FilterMeasurementTypes = "measurement_types"
	FilterMinSeverity      = "min_severity"
	FilterHealthMetrics    = "health_metrics"
)

// EventTest is the type of the event test-send delivers (not subscribable).
const EventTest = "webhook.test"

// Severities are the values of min_severity, from low to high.
var Severities = []string{"warning", "critical"}

// eventType is one catalogue entry.
type eventType struct {
	Type, Group, Description string
	Filters                  []string
	Data                     map[string]any // the sample's data
}

var sampleClient = map[string]any{"id": 1042, "uuid": "0b6f3c1e-7d4a-4c2b-9e51-1a2b3c4d5e01",
	"label": "Berlin Kitchen probe", "tags": []string{"berlin", "fiber"}}

var sampleAnomaly = map[string]any{"id": "video-stalling::spike::1793687194", "rule_id": "video-stalling",
	"client_uuid": "0b6f3c1e-7d4a-4c2b-9e51-1a2b3c4d5e01", "measurement_type": "VideoMeasurement",
	"subject": "youtube", "metric": "total_stalling_time", "detection_pass": "spike", "severity": "warning",
	"status": "new", "first_seen_at": "2026-11-03T06:26:34.000Z", "last_seen_at": "2026-11-03T09:26:34.000Z",
	"created_at": "2026-11-03T06:31:34.000Z", "value": 1280,
	"measurement_ids": []string{"6a1f0c00-2026-4b11-8000-000000000003"}}

func resolvedAnomaly() map[string]any {
	out := map[string]any{}
	for k, v := range sampleAnomaly {
		out[k] = v
	}
	out["status"], out["resolved_at"] = "resolved", "2026-11-03T11:02:10.000Z"
	return out
}

func healthData(from, to string, reasons []map[string]any) map[string]any {
	return map[string]any{"client": sampleClient, "from_state": from, "to_state": to, "reasons": reasons,
		"metric_summary": map[string]any{
			"cpu":        map[string]any{"percent": 91.5, "warning_percent": 80, "critical_percent": 95},
			"memory":     map[string]any{"percent": 62.0, "warning_percent": 80, "critical_percent": 95},
			"filesystem": map[string]any{"percent": 48.3, "warning_percent": 80, "critical_percent": 95}}}
}

var clientFilters = []string{FilterClientTags}

// catalogue is every event type of store.EventTypes with a sample.
var catalogue = []eventType{
	{store.EventAnomalyCreated, "anomalies", "An anomaly event was detected (imported or reported).",
		[]string{FilterClientTags, FilterMeasurementTypes, FilterMinSeverity},
		map[string]any{"anomaly_event": sampleAnomaly, "client": sampleClient}},
	{store.EventAnomalyResolved, "anomalies", "An anomaly event was resolved.",
		[]string{FilterClientTags, FilterMeasurementTypes, FilterMinSeverity},
		map[string]any{"anomaly_event": resolvedAnomaly(), "client": sampleClient}},
	{store.EventClientRegistered, "clients", "A probe registered with a registration key.", clientFilters,
		map[string]any{"client": sampleClient, "registration_key_id": 7, "client_type": "automator", "client_version": "3.6.0"}},
	{store.EventClientOffline, "clients", "A client was not seen within the offline threshold.", clientFilters,
		map[string]any{"client": sampleClient, "last_seen_at": "2026-11-24T08:14:03Z", "offline_threshold_minutes": 60}},
	{store.EventClientOnline, "clients", "A client that was offline checked in again.", clientFilters,
		map[string]any{"client": sampleClient, "offline_since": "2026-11-24T09:15:00Z", "last_seen_at": "2026-11-24T10:02:41Z"}},
	{store.EventClientDisabled, "clients", "A client was disabled.", clientFilters,
		map[string]any{"client": sampleClient, "reason": "device returned by the customer"}},
	{store.EventHealthWarning, "health", "A client's health went to warning.",
		[]string{FilterClientTags, FilterMinSeverity, FilterHealthMetrics},
		healthData("healthy", "warning", []map[string]any{{"metric": "cpu", "percent": 91.5, "severity": "warning"}})},
	{store.EventHealthCritical, "health", "A client's health went to critical.",
		[]string{FilterClientTags, FilterMinSeverity, FilterHealthMetrics},
		healthData("warning", "critical", []map[string]any{{"metric": "cpu", "percent": 97.2, "severity": "critical"}})},
	{store.EventHealthRecovered, "health", "A client's health is healthy again after warning or critical.",
		[]string{FilterClientTags},
		healthData("critical", "healthy", []map[string]any{})},
	{store.EventStudyExecutionFailed, "studies", "A probe reported a measurement whose study failed to run.",
		[]string{FilterClientTags, FilterMeasurementTypes},
		map[string]any{"client": sampleClient, "measurement": map[string]any{"id": "6a1f0c00-2026-4b11-8000-000000000018",
			"type": "NetworkMeasurement", "created_at": "2026-11-08T13:41:49.629Z",
			"study": map[string]any{"subject": "icmpping", "study_id": "ping-gateway", "study_name": "ping gateway"},
			"error": map[string]any{"code": "TIMEOUT", "message": "no answer within 30 s"}}}},
	{store.EventWebhookAutoDisabled, "webhooks", "A webhook was disabled automatically after failing.", []string{},
		map[string]any{"webhook": map[string]any{"id": 12, "name": "Ops receiver", "url": "https://hooks.example.com/fleet"},
			"reason": store.ReasonFailures, "consecutive_failures": 50, "auto_disabled_at": "2026-11-24T10:30:00Z"}},
	{store.EventWebClientsLimited, "clients", "The client analytics keys' reports named more new clients than the data owner's " +
		"bound allows (FLEETGRAPH_ANALYTICS_NEW_CLIENTS); the reports of the clients past it were refused with 429. " +
		"Once per period of the bound.", []string{},
		map[string]any{"limit": 1000, "period": "24h0m0s", "refused_client_uuids": []string{"5f0c2a4e-1b7d-4c3e-9a8f-2d6e0b1c7a93"}}},
}

// groups of the catalogue, in order.
var groups = []model.WebhookEventGroup{{Key: "anomalies", Label: "Anomaly events"}, {Key: "clients", Label: "Clients"},
	{Key: "health", Label: "Fleet health"}, {Key: "studies", Label: "Study execution"}, {Key: "webhooks", Label: "Webhooks"}}

var filterInfo = []model.WebhookFilterInfo{
	{Key: FilterClientTags, Description: "Only events of clients carrying at least one of these tags."},
	{Key: FilterMeasurementTypes, Description: "Only events of these measurement types."},
	{Key: FilterMinSeverity, Description: "Only events of this severity or higher (warning or critical)."},
	{Key: FilterHealthMetrics, Description: "Only health events about at least one of these metrics (cpu, memory, filesystem)."},
}

// Sample is the envelope of a sample event of type typ.
func Sample(typ string) map[string]any {
	for _, e := range catalogue {
		if e.Type == typ {
			return envelope("8d7c3f0e-4b1a-4f4e-9a51-2f6d1c0b9e11", typ, "2026-11-24T10:30:00.000Z", e.Data)
		}
	}
	return nil
}

func envelope(id, typ, ts string, data map[string]any) map[string]any {
	return map[string]any{"id": id, "type": typ, "timestamp": ts, "data": data}
}

// Catalogue answers GET /webhooks/event_types.
func Catalogue() model.WebhookCatalogue {
	c := model.WebhookCatalogue{Groups: groups, Filters: filterInfo, Severities: Severities,
		HealthMetrics: fleethealth.Metrics, MeasurementTypes: vocab.MeasurementTypes}
	for _, e := range catalogue {
		c.EventTypes = append(c.EventTypes, model.WebhookEventType{Type: e.Type, Group: e.Group,
			Description: e.Description, Filters: e.Filters, Sample: model.JSON{Value: Sample(e.Type)}})
	}
	return c
}

// IsEventType reports whether typ is in the catalogue.
func IsEventType(typ string) bool {
	for _, e := range catalogue {
		if e.Type == typ {
			return true
		}
	}
	return false
}
