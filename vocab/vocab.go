// Package vocab declares, once, the words fleetgraph's measurement data is
// spoken in: the document kinds (the kind column of documents), the
// measurement and event bundle types (a document's "type") and the
// index_scope values of the search fields, which name measurement types.
// store, search, resolvers and rest use these instead of their own copies.
package vocab

// Document kinds: the kind column of documents.
const (
	KindMeasurement    = "measurement"
	KindClientReport   = "client_report"
	KindEventBundle    = "event_bundle"
	KindNetworkRequest = "network_request"
	KindUserFeedback   = "user_feedback"
	KindAnomalyEvent   = "anomaly_event"
	KindSystemStatus   = "system_status"
)

// Kinds lists every document kind.
var Kinds = []string{KindMeasurement, KindClientReport, KindEventBundle, KindNetworkRequest,
	KindUserFeedback, KindAnomalyEvent, KindSystemStatus}

// Measurement types: the "type" of a measurement document (the spec's four
// plus conferencing and gaming).
const (
	TypeVideoMeasurement        = "VideoMeasurement"
	TypeWebMeasurement          = "WebMeasurement"
	TypeNetworkMeasurement      = "NetworkMeasurement"
	TypeSpeedtestMeasurement    = "SpeedtestMeasurement"
	TypeConferencingMeasurement = "ConferencingMeasurement"
	TypeGamingMeasurement       = "GamingMeasurement"
)

// MeasurementTypes lists every measurement type.
var MeasurementTypes = []string{TypeVideoMeasurement, TypeWebMeasurement, TypeNetworkMeasurement,
	TypeSpeedtestMeasurement, TypeConferencingMeasurement, TypeGamingMeasurement}

// Event bundle types: the "type" of an event bundle document.
const (
	TypeVideoEventBundle = "VideoEventBundle"
	TypeWebEventBundle   = "WebEventBundle"
)

// EventBundleTypes lists every event bundle type.
var EventBundleTypes = []string{TypeVideoEventBundle, TypeWebEventBundle}

// IndexScopes maps the index_scope values of the measurement search fields
// onto the measurement type each one searches.
var IndexScopes = map[string]string{
	"web": TypeWebMeasurement, "video": TypeVideoMeasurement, "network": TypeNetworkMeasurement,
	"speedtest": TypeSpeedtestMeasurement, "conferencing": TypeConferencingMeasurement, "gaming": TypeGamingMeasurement,
}

// StudyTypes maps the "type" of a study in a public config document onto
// the measurement type its measurements carry.
var StudyTypes = map[string]string{
	"WEB": TypeWebMeasurement, "VIDEO": TypeVideoMeasurement, "SPEEDTEST": TypeSpeedtestMeasurement,
	"NETWORK": TypeNetworkMeasurement, "CONFERENCING": TypeConferencingMeasurement, "GAMING": TypeGamingMeasurement,
}

// StudyTypeNames lists the study types in the order docs/design.md names them.
var StudyTypeNames = []string{"WEB", "VIDEO", "SPEEDTEST", "NETWORK", "CONFERENCING", "GAMING"}
