package rest

import (
	"net/http"
	"net/url"
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
	// Derive sets variables computed from the request (beyond path, query
	// and body, which are mapped by name).
	Derive func(q url.Values, vars map[string]any)
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

	{Method: http.MethodGet, Path: "/data_owner/settings", Operation: "DataOwnerSettingsGet", Status: 200},
	{Method: http.MethodPut, Path: "/data_owner/settings", Operation: "DataOwnerSettingsUpdate", Status: 200},
	{Method: http.MethodGet, Path: "/ai_assistant/status", Operation: "AiAssistantStatus", Status: 200, Unwrap: true},
}

// compactWhenNamed: GET /isps with a name filter answers the compact shape.
func compactWhenNamed(q url.Values, vars map[string]any) {
	vars["compact"] = q.Has("name")
}
