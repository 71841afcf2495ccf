package rest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/fleetgraph/fleetgraph/apierr"
)

// Route maps one documented method and path onto a stored operation.
type Route struct {
	Method    string
	Path      string // chi pattern relative to the API's base path
	Operation string // name of the stored operation under ops/
	Status    int    // status of a successful answer
	// Empty answers {} instead of the operation's data (DELETE).
	Empty bool
	// Unwrap answers the value of the data's only field instead of the data.
	Unwrap bool
	// Paged: the data's only field is {items, total, page, per_page}; the
	// items are the body, the rest become Per-Page, Total and Link (paging.go).
	Paged bool
	// PagedKey: like Paged, but the body is {PagedKey: items} (a documented
	// shape that names its list), with the same headers.
	PagedKey string
	// BodyVars maps the body's top-level keys onto the operation's variables
	// of the same snake_case name, for operations with flat arguments instead
	// of one $input (stream.go); other keys are refused.
	BodyVars bool
	// RejectStatus answers a BodyVars body that does not map (unknown key,
	// wrong type, missing variable); 0 is 422. Searches answer 400.
	RejectStatus int
	// ScrollNext names the operation continuing a scroll: a request with a
	// scroll variable then streams every page as NDJSON (stream.go).
	ScrollNext string
	// Derive sets variables computed from the request (beyond path, query
	// and body, which are mapped by name); its error is the answer.
	Derive func(q url.Values, vars map[string]any) error
	// StrictQuery: a query parameter naming no variable of the operation, a
	// single-valued one given twice or as a list, is a 400 (strictQuery in
	// paging.go); blank values count as not given.
	StrictQuery bool
	// CSV answers text/csv instead of JSON: the records (header first) made
	// from the operation's data, as an attachment named CSVFile (csv.go).
	CSV     func(data json.RawMessage) ([][]string, error)
	CSVFile string
	// SSE names a subscription answering the same variables as Server-Sent
	// Events in the AI SDK's UI message stream protocol, for requests that
	// accept text/event-stream (sse.go); others get Operation's JSON.
	SSE string
}

// AdminRoutes is the Administration REST API v1: every documented path the
// server answers, and the operation that answers it.
var AdminRoutes = []Route{
	{Method: http.MethodGet, Path: "/isps", Operation: "IspList", Status: 200, Derive: compactWhenNamed},
	{Method: http.MethodPost, Path: "/isps", Operation: "IspCreate", Status: 201},
	{Method: http.MethodGet, Path: "/isps/{id}", Operation: "IspGet", Status: 200},
	{Method: http.MethodPut, Path: "/isps/{id}", Operation: "IspUpdate", Status: 200},
	{Method: http.MethodDelete, Path: "/isps/{id}", Operation: "IspDelete", Status: 200, Empty: true},
	{Method: http.MethodPost, Path: "/isps/{id}/merge_into", Operation: "IspMergeInto", Status: 200},

	{Method: http.MethodGet, Path: "/capabilities", Operation: "CapabilityList", Status: 200},
	{Method: http.MethodPost, Path: "/capabilities", Operation: "CapabilityCreate", Status: 201},
	{Method: http.MethodGet, Path: "/capabilities/{id}", Operation: "CapabilityGet", Status: 200},
	{Method: http.MethodPut, Path: "/capabilities/{id}", Operation: "CapabilityUpdate", Status: 200},
	{Method: http.MethodDelete, Path: "/capabilities/{id}", Operation: "CapabilityDelete", Status: 200, Empty: true},

	{Method: http.MethodGet, Path: "/service_credentials", Operation: "ServiceCredentialList", Status: 200},
	{Method: http.MethodPost, Path: "/service_credentials", Operation: "ServiceCredentialCreate", Status: 201},
	{Method: http.MethodGet, Path: "/service_credentials/{id}", Operation: "ServiceCredentialGet", Status: 200},
	{Method: http.MethodPut, Path: "/service_credentials/{id}", Operation: "ServiceCredentialUpdate", Status: 200},
	{Method: http.MethodDelete, Path: "/service_credentials/{id}", Operation: "ServiceCredentialDelete", Status: 200, Empty: true},

	{Method: http.MethodGet, Path: "/client_admin_api_keys", Operation: "ClientAdminApiKeyList", Status: 200},
	{Method: http.MethodPost, Path: "/client_admin_api_keys", Operation: "ClientAdminApiKeyCreate", Status: 201},
	{Method: http.MethodGet, Path: "/client_admin_api_keys/{id}", Operation: "ClientAdminApiKeyGet", Status: 200},
	{Method: http.MethodDelete, Path: "/client_admin_api_keys/{id}", Operation: "ClientAdminApiKeyDelete", Status: 200, Empty: true},
	{Method: http.MethodGet, Path: "/client_analytics_api_keys", Operation: "ClientAnalyticsApiKeyList", Status: 200},
	{Method: http.MethodPost, Path: "/client_analytics_api_keys", Operation: "ClientAnalyticsApiKeyCreate", Status: 201},
	{Method: http.MethodGet, Path: "/client_analytics_api_keys/{id}", Operation: "ClientAnalyticsApiKeyGet", Status: 200},
	{Method: http.MethodDelete, Path: "/client_analytics_api_keys/{id}", Operation: "ClientAnalyticsApiKeyDelete", Status: 200, Empty: true},
	{Method: http.MethodGet, Path: "/export_api_keys", Operation: "ExportApiKeyList", Status: 200},
	{Method: http.MethodPost, Path: "/export_api_keys", Operation: "ExportApiKeyCreate", Status: 201},
	{Method: http.MethodGet, Path: "/export_api_keys/{id}", Operation: "ExportApiKeyGet", Status: 200},
	{Method: http.MethodDelete, Path: "/export_api_keys/{id}", Operation: "ExportApiKeyDelete", Status: 200, Empty: true},

	{Method: http.MethodGet, Path: "/client_admin_users", Operation: "UserList", Status: 200},
	{Method: http.MethodPost, Path: "/client_admin_users", Operation: "UserCreate", Status: 201},
	{Method: http.MethodGet, Path: "/client_admin_users/{id}", Operation: "UserGet", Status: 200},
	{Method: http.MethodPut, Path: "/client_admin_users/{id}", Operation: "UserUpdate", Status: 200},

	{Method: http.MethodGet, Path: "/clients", Operation: "ClientList", Status: 200},
	{Method: http.MethodGet, Path: "/clients/check_label_availability", Operation: "ClientLabelAvailability", Status: 200, Unwrap: true},
	{Method: http.MethodGet, Path: "/clients/{id}", Operation: "ClientGet", Status: 200},
	{Method: http.MethodGet, Path: "/clients/{id}/system_status_records", Operation: "ClientSystemStatusRecords", Status: 200,
		PagedKey: "system_status_records", StrictQuery: true},

	{Method: http.MethodGet, Path: "/public_configs", Operation: "PublicConfigList", Status: 200, Derive: kindPublic},
	{Method: http.MethodPost, Path: "/public_configs", Operation: "PublicConfigCreate", Status: 201, Derive: kindPublic},
	{Method: http.MethodPost, Path: "/public_configs/import", Operation: "PublicConfigImport", Status: 200, Derive: kindPublic, Unwrap: true},
	{Method: http.MethodGet, Path: "/public_configs/{id}", Operation: "PublicConfigGet", Status: 200, Derive: kindPublic},
	{Method: http.MethodPut, Path: "/public_configs/{id}", Operation: "PublicConfigUpdate", Status: 200, Derive: kindPublic},
	{Method: http.MethodDelete, Path: "/public_configs/{id}", Operation: "PublicConfigDelete", Status: 200, Derive: kindPublic, Empty: true},
	{Method: http.MethodPost, Path: "/public_configs/{id}/publish", Operation: "PublicConfigPublish", Status: 200, Derive: kindPublic},
	{Method: http.MethodDelete, Path: "/public_configs/{id}/draft", Operation: "PublicConfigDiscardDraft", Status: 200, Derive: kindPublic},
	{Method: http.MethodPut, Path: "/public_configs/{id}/default", Operation: "PublicConfigSetDefault", Status: 200, Derive: kindPublic},
	{Method: http.MethodDelete, Path: "/public_configs/{id}/default", Operation: "PublicConfigUnsetDefault", Status: 200, Derive: kindPublic},
	{Method: http.MethodPost, Path: "/public_configs/{id}/assign", Operation: "PublicConfigAssign", Status: 200, Derive: kindPublic},
	{Method: http.MethodPost, Path: "/public_configs/{id}/unassign", Operation: "PublicConfigUnassign", Status: 200, Derive: kindPublic},

	{Method: http.MethodGet, Path: "/schedule_configs", Operation: "ScheduleConfigList", Status: 200, Derive: kindAutomator},
	{Method: http.MethodPost, Path: "/schedule_configs", Operation: "ScheduleConfigCreate", Status: 201, Derive: kindAutomator},
	{Method: http.MethodPost, Path: "/schedule_configs/import", Operation: "ScheduleConfigImport", Status: 200, Derive: kindAutomator, Unwrap: true},
	{Method: http.MethodGet, Path: "/schedule_configs/{id}", Operation: "ScheduleConfigGet", Status: 200, Derive: kindAutomator},
	{Method: http.MethodPut, Path: "/schedule_configs/{id}", Operation: "ScheduleConfigUpdate", Status: 200, Derive: kindAutomator},
	{Method: http.MethodDelete, Path: "/schedule_configs/{id}", Operation: "ScheduleConfigDelete", Status: 200, Derive: kindAutomator, Empty: true},
	{Method: http.MethodPost, Path: "/schedule_configs/{id}/publish", Operation: "ScheduleConfigPublish", Status: 200, Derive: kindAutomator},
	{Method: http.MethodDelete, Path: "/schedule_configs/{id}/draft", Operation: "ScheduleConfigDiscardDraft", Status: 200, Derive: kindAutomator},
	{Method: http.MethodPut, Path: "/schedule_configs/{id}/default", Operation: "ScheduleConfigSetDefault", Status: 200, Derive: kindAutomator},
	{Method: http.MethodDelete, Path: "/schedule_configs/{id}/default", Operation: "ScheduleConfigUnsetDefault", Status: 200, Derive: kindAutomator},
	{Method: http.MethodPost, Path: "/schedule_configs/{id}/assign", Operation: "ScheduleConfigAssign", Status: 200, Derive: kindAutomator},
	{Method: http.MethodPost, Path: "/schedule_configs/{id}/unassign", Operation: "ScheduleConfigUnassign", Status: 200, Derive: kindAutomator},
	{Method: http.MethodPut, Path: "/clients/{id}", Operation: "ClientUpdate", Status: 200},
	{Method: http.MethodDelete, Path: "/clients/{id}", Operation: "ClientDelete", Status: 200, Empty: true},
	{Method: http.MethodPost, Path: "/clients/{id}/disable", Operation: "ClientDisable", Status: 200},
	{Method: http.MethodPost, Path: "/clients/{id}/enable", Operation: "ClientEnable", Status: 200},

	{Method: http.MethodGet, Path: "/client_groups", Operation: "ClientGroupList", Status: 200},
	{Method: http.MethodPost, Path: "/client_groups", Operation: "ClientGroupCreate", Status: 201},
	{Method: http.MethodGet, Path: "/client_groups/{id}", Operation: "ClientGroupGet", Status: 200},
	{Method: http.MethodPut, Path: "/client_groups/{id}", Operation: "ClientGroupUpdate", Status: 200},
	{Method: http.MethodDelete, Path: "/client_groups/{id}", Operation: "ClientGroupDelete", Status: 200, Empty: true},
	{Method: http.MethodPost, Path: "/client_groups/{id}/add_clients", Operation: "ClientGroupAddClients", Status: 200},
	{Method: http.MethodPost, Path: "/client_groups/{id}/remove_clients", Operation: "ClientGroupRemoveClients", Status: 200},

	{Method: http.MethodPost, Path: "/isp_contracts", Operation: "IspContractCreate", Status: 201},
	{Method: http.MethodGet, Path: "/isp_contracts/{id}", Operation: "IspContractGet", Status: 200},
	{Method: http.MethodPut, Path: "/isp_contracts/{id}", Operation: "IspContractUpdate", Status: 200},
	{Method: http.MethodDelete, Path: "/isp_contracts/{id}", Operation: "IspContractDelete", Status: 200, Empty: true},
	{Method: http.MethodPost, Path: "/isp_contracts/{id}/end", Operation: "IspContractEnd", Status: 200},

	{Method: http.MethodGet, Path: "/data_owner/settings", Operation: "DataOwnerSettingsGet", Status: 200},
	{Method: http.MethodPut, Path: "/data_owner/settings", Operation: "DataOwnerSettingsUpdate", Status: 200},
	{Method: http.MethodGet, Path: "/ai_assistant/status", Operation: "AiAssistantStatus", Status: 200, Unwrap: true},
	{Method: http.MethodPost, Path: "/ai_assistant/explain_anomaly", Operation: "AiExplainAnomaly", Status: 200, SSE: "AiExplainAnomalyStream"},
	{Method: http.MethodGet, Path: "/ai_assistant/usage", Operation: "AiUsage", Status: 200},
	{Method: http.MethodPut, Path: "/ai_assistant/token_limit", Operation: "AiTokenLimitSet", Status: 200, BodyVars: true},
	{Method: http.MethodGet, Path: "/ai_conversations", Operation: "AiConversationList", Status: 200},
	{Method: http.MethodPost, Path: "/ai_conversations", Operation: "AiConversationCreate", Status: 201},
	{Method: http.MethodGet, Path: "/ai_conversations/{id}", Operation: "AiConversationGet", Status: 200},
	{Method: http.MethodPatch, Path: "/ai_conversations/{id}", Operation: "AiConversationUpdate", Status: 200},
	{Method: http.MethodDelete, Path: "/ai_conversations/{id}", Operation: "AiConversationDelete", Status: 200, Empty: true},
	{Method: http.MethodPut, Path: "/ai_conversations/{id}/complete", Operation: "AiConversationComplete", Status: 200,
		SSE: "AiConversationCompleteStream"},
	{Method: http.MethodPatch, Path: "/ai_conversations/{id}/generated_title", Operation: "AiConversationGenerateTitle", Status: 200},
	{Method: http.MethodGet, Path: "/fleet_health", Operation: "FleetHealth", Status: 200},
	{Method: http.MethodGet, Path: "/fleet_health/thresholds", Operation: "HealthThresholdsGet", Status: 200},
	{Method: http.MethodPut, Path: "/fleet_health/thresholds", Operation: "HealthThresholdsUpdate", Status: 200},
	{Method: http.MethodGet, Path: "/license_usage", Operation: "LicenseUsage", Status: 200, Unwrap: true, StrictQuery: true,
		Derive: keyNeedsExtended},
	{Method: http.MethodGet, Path: "/license_usage/export", Operation: "LicenseUsageExport", Status: 200, StrictQuery: true,
		CSV: licenseUsageCSV, CSVFile: "license_usage.csv"},
	{Method: http.MethodGet, Path: "/software/downloads", Operation: "SoftwareDownloads", Status: 200, Unwrap: true, StrictQuery: true},

	{Method: http.MethodPost, Path: "/measurements/search", Operation: "MeasurementSearch", Status: 200, Unwrap: true,
		BodyVars: true, RejectStatus: http.StatusBadRequest, ScrollNext: "MeasurementSearchScroll"},
	{Method: http.MethodGet, Path: "/measurements/{id}", Operation: "MeasurementGet", Status: 200, Unwrap: true},
	{Method: http.MethodGet, Path: "/measurements/{id}/p1203_client_report", Operation: "MeasurementP1203ClientReport", Status: 200, Unwrap: true},
	{Method: http.MethodGet, Path: "/measurements/{id}/network_performance_report", Operation: "MeasurementNetworkPerformanceReport", Status: 200, Unwrap: true},
	{Method: http.MethodGet, Path: "/measurements/{id}/lightweight_video_player_performance_report", Operation: "MeasurementLightweightVideoPlayerPerformanceReport", Status: 200, Unwrap: true},
	{Method: http.MethodPost, Path: "/anomaly_events/search", Operation: "AnomalyEventSearch", Status: 200, Unwrap: true,
		BodyVars: true, RejectStatus: http.StatusBadRequest},
	{Method: http.MethodPatch, Path: "/anomaly_events/resolve", Operation: "AnomalyEventsResolve", Status: 200, Unwrap: true, BodyVars: true},
	{Method: http.MethodGet, Path: "/anomaly_events/{anomalyId}", Operation: "AnomalyEventGet", Status: 200},

	{Method: http.MethodGet, Path: "/anomaly_detection_overrides", Operation: "AnomalyDetectionOverrideList", Status: 200},
	{Method: http.MethodPost, Path: "/anomaly_detection_overrides", Operation: "AnomalyDetectionOverrideCreate", Status: 201},
	{Method: http.MethodDelete, Path: "/anomaly_detection_overrides", Operation: "AnomalyDetectionOverridesDelete", Status: 200, StrictQuery: true},
	{Method: http.MethodPost, Path: "/anomaly_detection_overrides/feedback", Operation: "AnomalyDetectionOverrideFeedback", Status: 200, Unwrap: true},
	{Method: http.MethodGet, Path: "/anomaly_detection_overrides/dimensions", Operation: "AnomalyDetectionDimensions", Status: 200},
	{Method: http.MethodGet, Path: "/anomaly_detection_overrides/{id}", Operation: "AnomalyDetectionOverrideGet", Status: 200},

	// An extension of the spec (docs/admin-api.md "Anomaly rules").
	{Method: http.MethodGet, Path: "/anomaly_rules", Operation: "AnomalyRuleList", Status: 200},
	{Method: http.MethodPost, Path: "/anomaly_rules", Operation: "AnomalyRuleCreate", Status: 201},
	{Method: http.MethodGet, Path: "/anomaly_rules/{id}", Operation: "AnomalyRuleGet", Status: 200},
	{Method: http.MethodPut, Path: "/anomaly_rules/{id}", Operation: "AnomalyRuleUpdate", Status: 200},
	{Method: http.MethodDelete, Path: "/anomaly_rules/{id}", Operation: "AnomalyRuleDelete", Status: 200, Empty: true},

	{Method: http.MethodGet, Path: "/webhooks/event_types", Operation: "WebhookEventTypes", Status: 200, Unwrap: true},
	{Method: http.MethodGet, Path: "/webhooks", Operation: "WebhookList", Status: 200},
	{Method: http.MethodPost, Path: "/webhooks", Operation: "WebhookCreate", Status: 201},
	{Method: http.MethodGet, Path: "/webhooks/{id}", Operation: "WebhookGet", Status: 200},
	{Method: http.MethodPut, Path: "/webhooks/{id}", Operation: "WebhookUpdate", Status: 200},
	{Method: http.MethodDelete, Path: "/webhooks/{id}", Operation: "WebhookDelete", Status: 200, Empty: true},
	{Method: http.MethodPost, Path: "/webhooks/{id}/enable", Operation: "WebhookEnable", Status: 200},
	{Method: http.MethodPost, Path: "/webhooks/{id}/test", Operation: "WebhookTest", Status: 200},
	{Method: http.MethodGet, Path: "/webhooks/{webhook_id}/deliveries", Operation: "WebhookDeliveryList", Status: 200,
		Unwrap: true, StrictQuery: true},
	{Method: http.MethodGet, Path: "/webhooks/{webhook_id}/deliveries/{id}", Operation: "WebhookDeliveryGet", Status: 200},
	{Method: http.MethodPost, Path: "/webhooks/{webhook_id}/deliveries/{id}/redeliver", Operation: "WebhookDeliveryRedeliver", Status: 200},
}

// kindPublic and kindAutomator set the kind of /public_configs and
// /schedule_configs: the path decides it, not a parameter.
func kindPublic(_ url.Values, vars map[string]any) error {
	vars["kind"] = "public"
	return nil
}

func kindAutomator(_ url.Values, vars map[string]any) error {
	vars["kind"] = "automator"
	return nil
}

// compactWhenNamed: GET /isps with a name filter answers the compact shape.
func compactWhenNamed(q url.Values, vars map[string]any) error {
	vars["compact"] = q.Has("name")
	return nil
}

// keyNeedsExtended: registration_key_id limits the extended report only
// (spec: 400 without extended=true).
func keyNeedsExtended(q url.Values, _ map[string]any) error {
	if q.Get("registration_key_id") == "" {
		return nil
	}
	if ext, err := strconv.ParseBool(q.Get("extended")); err != nil || !ext {
		return apierr.BadRequestf("registration_key_id needs extended=true: it limits the extended report")
	}
	return nil
}

// ExportRoutes is the Data Export REST API v1. Listings are Paged; /search
// with scroll streams NDJSON, one _source a line (stream.go). /search covers
// the data owner's measurements (analytics-production-<data_owner>-measurements*):
// the other kinds have their listings, and /esql reads any of the data
// owner's indices.
var ExportRoutes = []Route{
	{Method: http.MethodGet, Path: "/measurements", Operation: "ExportMeasurements", Status: 200, Paged: true, StrictQuery: true},
	{Method: http.MethodGet, Path: "/client_reports", Operation: "ExportClientReports", Status: 200, Paged: true, StrictQuery: true},
	{Method: http.MethodGet, Path: "/event_bundles", Operation: "ExportEventBundles", Status: 200, Paged: true, StrictQuery: true},
	{Method: http.MethodGet, Path: "/network_requests", Operation: "ExportNetworkRequests", Status: 200, Paged: true, StrictQuery: true},
	{Method: http.MethodGet, Path: "/clients", Operation: "ExportClients", Status: 200, Paged: true, StrictQuery: true},
	{Method: http.MethodGet, Path: "/user_feedbacks", Operation: "ExportUserFeedbacks", Status: 200, Paged: true, StrictQuery: true},

	{Method: http.MethodGet, Path: "/search", Operation: "ExportSearch", Status: 200, Unwrap: true,
		Derive: searchOtherParams, ScrollNext: "MeasurementSearchScroll"},
	{Method: http.MethodPost, Path: "/search", Operation: "ExportSearch", Status: 200, Unwrap: true,
		Derive: searchOtherParams, BodyVars: true, RejectStatus: http.StatusBadRequest, ScrollNext: "MeasurementSearchScroll"},
	{Method: http.MethodGet, Path: "/esql", Operation: "ExportEsql", Status: 200, Unwrap: true, StrictQuery: true},
	{Method: http.MethodPost, Path: "/esql", Operation: "ExportEsql", Status: 200, Unwrap: true,
		BodyVars: true, RejectStatus: http.StatusBadRequest},
	{Method: http.MethodGet, Path: "/_mapping", Operation: "ExportMapping", Status: 200, Unwrap: true, StrictQuery: true},
	{Method: http.MethodGet, Path: "/{index}/_mapping", Operation: "ExportMapping", Status: 200, Unwrap: true, StrictQuery: true},
}

// searchVariables are the query parameters ExportSearch declares.
var searchVariables = map[string]bool{"body": true, "q": true, "df": true, "default_operator": true, "analyzer": true,
	"lenient": true, "analyze_wildcard": true, "size": true, "from": true, "sort": true, "search_after": true,
	"_source": true, "_source_includes": true, "_source_excludes": true, "track_total_hits": true,
	"source_only": true, "scroll": true}

// searchOtherParams hands /search's other query parameters to the resolver
// (as otherParams), which refuses those that would choose indices and the
// unsupported ones instead of ignoring them.
func searchOtherParams(q url.Values, vars map[string]any) error {
	other := map[string]any{}
	for k, vs := range q {
		if searchVariables[strings.TrimSuffix(k, "[]")] {
			continue
		}
		if len(vs) > 1 {
			return &apierr.BadRequest{Msg: "query parameter " + k + " is given more than once"}
		}
		other[k] = vs[0]
	}
	if len(other) > 0 {
		vars["otherParams"] = other
	}
	return nil
}
