package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/rest"
	"github.com/fleetgraph/fleetgraph/store"
)

// This file checks the Administration API against spec/admin-api.md: every
// route of rest.AdminRoutes answers the documented status, envelope, keys
// and JSON types, and sends back what it was given.

// specShape is the documented key set of one JSON object: key -> JSON kind.
// Kinds: int, num, str, bool, time (an RFC 3339 string), strs (array of
// strings), obj, list; a trailing "?" also allows null.
type specShape map[string]string

func (s specShape) with(extra specShape) specShape {
	out := maps.Clone(s)
	maps.Copy(out, extra)
	return out
}

func (s specShape) without(keys ...string) specShape {
	out := maps.Clone(s)
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

// The shapes, written from the spec's tables.
var (
	specIspShape = specShape{"id": "int", "name": "str", "type": "str", "alternative_names": "strs",
		"as_numbers": "strs", "country": "str", "is_vpn": "bool?", "verified": "bool?", "created_at": "time",
		"isp_contracts_count": "int"}
	specIspGetShape      = specIspShape.with(specShape{"isp_details_count": "int", "isp_contracts": "list"})
	specIspCompactShape  = specShape{"id": "int", "name": "str", "country": "str"}
	specIspContractShape = specShape{"id": "int", "isp_id": "int", "client_id": "int", "upload_speed": "int?",
		"download_speed": "int?", "monthly_price": "num?", "currency": "str?", "assumed_tariff": "str?",
		"connection_type": "str?", "name": "str", "valid_from": "time?", "valid_until": "time?",
		"client_uuid": "str?", "client_label": "str?"}

	specCapabilityShape = specShape{"id": "int", "name": "str", "comment": "str?",
		"allowed_measurement_types": "strs", "allowed_measurement_subjects": "strs",
		"forbidden_measurement_types": "strs", "forbidden_measurement_subjects": "strs"}
	specCapabilityListShape = specCapabilityShape.with(specShape{"registration_keys_count": "int"})
	specCapabilityGetShape  = specCapabilityShape.with(specShape{"registration_keys": "list"})
	// A registration key inside a capability (the spec types valid_until as
	// a string; the fixture's keys all carry one).
	specCapabilityKeyShape = specShape{"id": "int", "registration_key": "str", "comment": "str?",
		"valid_from": "time", "valid_until": "time", "num_registrations_left": "int", "usage_limit_days": "int?",
		"testing": "bool", "clients_count": "int"}

	specCredentialShape = specShape{"id": "int", "name": "str", "service": "str", "username": "str?",
		"created_at": "time", "updated_at": "time", "password_set": "bool"}

	specAdminKeyShape = specShape{"id": "int", "name": "str?", "valid_from": "time", "valid_until": "time",
		"key_preview": "str", "effective_role": "str?", "last_used_at": "time?", "created_at": "time",
		"client_admin_user_id": "int"}
	specAdminKeyCreateShape = specAdminKeyShape.with(specShape{"api_key": "str"})
	specAnalyticsKeyShape   = specShape{"id": "int", "name": "str?", "valid_from": "time", "valid_until": "time",
		"api_key": "str"}
	specExportKeyShape = specShape{"id": "int", "name": "str?", "valid_from": "time", "valid_until": "time",
		"key_preview": "str"}
	specExportKeyCreateShape = specExportKeyShape.without("key_preview").with(specShape{"api_key": "str"})

	specUserShape = specShape{"id": "int", "email": "str", "username": "str", "role": "str",
		"first_name": "str?", "last_name": "str?", "ai_usage_accepted": "bool?", "ai_custom_prompt": "str?",
		"last_visited_dashboard_version": "str?", "dashboard_whats_new_disabled": "bool",
		"pending_email": "str?", "pending_email_token_sent_at": "time?", "pending_email_state": "str?",
		"notification_config": "obj"}
	// notification_config: every key optional, so present keys must be
	// among these (null stands for "not set").
	specNotificationShape = specShape{"anomaly_events": "bool?", "client_offline": "bool?",
		"client_degraded": "bool?", "study_execution_failures": "bool?", "anomaly_events_frequency": "str?",
		"anomaly_events_digest_hours": "int?", "anomaly_events_digest_interval_unit": "str?",
		"anomaly_events_digest_interval_count": "int?", "anomaly_events_digest_at_time": "str?",
		"anomaly_events_digest_day_of_week": "int?"}

	specClientShape = specShape{"id": "int", "uuid": "str", "type": "str", "access_level": "str",
		"label": "str?", "extra_label": "str?", "tags": "strs?", "created_at": "time", "updated_at": "time",
		"disabled_at": "time?", "disabled_reason": "str?", "last_measurement_at": "time?", "last_seen_at": "time?",
		"last_client_type": "str?", "last_client_version": "str?", "config_managed": "bool?",
		"delivered_public_config": "obj?", "delivered_automator_config": "obj?", "offline": "bool?",
		"anomalies_muted": "bool", "offline_notifications_muted": "bool", "system_health_notifications_muted": "bool",
		"registration_key": "obj?", "client_groups": "list", "current_isp_contract": "obj?"}
	specClientGetShape   = specClientShape.with(specShape{"configuration": "obj"})
	specConfigRefShape   = specShape{"id": "int", "name": "str", "is_default": "bool"}
	specClientGroupShape = specShape{"id": "int", "name": "str"}
	specClientKeyShape   = specShape{"id": "int", "registration_key": "str", "comment": "str?", "valid_from": "time",
		"valid_until": "time?", "num_registrations_left": "int?", "usage_limit_days": "int?"}
	specClientContractShape = specShape{"id": "int", "isp_id": "int", "isp_name": "str", "client_id": "int",
		"upload_speed": "int?", "download_speed": "int?", "monthly_price": "num?", "currency": "str?",
		"assumed_tariff": "str?", "connection_type": "str?", "name": "str", "valid_from": "time",
		"valid_until": "time?"}
	specLabelShape = specShape{"available": "bool", "label": "str"}
	// Our own client management shapes (docs/decisions.md, "Client management").
	specGroupShape       = specShape{"id": "int", "name": "str", "created_at": "time", "clients": "list"}
	specGroupClientShape = specShape{"id": "int", "uuid": "str", "label": "str?"}
	specContractShape    = specIspContractShape.with(specShape{"isp_name": "str"})

	specSettingsShape = specShape{"ai_system_prompt": "str?", "offline_threshold_minutes": "int?",
		"offline_threshold_minutes_default": "int", "retention_days": "int?", "retention_days_default": "int?",
		"client_offline_detection_enabled":  "bool",
		"client_degraded_detection_enabled": "bool", "study_failure_detection_enabled": "bool",
		"client_offline_detection_enabled_on_server": "bool", "client_degraded_detection_enabled_on_server": "bool",
		"study_failure_detection_enabled_on_server": "bool",
		// ours: the bound on the clients of the client analytics keys (docs/client-api.md)
		"analytics_new_clients": "int?", "analytics_new_clients_default": "int?", "analytics_new_clients_period": "str"}
	specAiStatusShape       = specShape{"enabled": "bool", "data_owner": "str"}
	specAiConversationShape = specShape{"id": "int", "title": "str?", "display_title": "str", "preview": "str",
		"message_count": "int", "created_at": "time", "updated_at": "time"}
	specAiConversationFullShape = specShape{"id": "int", "title": "str?", "display_title": "str", "preview": "str",
		"message_count": "int", "created_at": "time", "updated_at": "time", "messages": "list"}
	specAiUsageShape = specShape{"total_tokens": "int", "limit": "int", "remaining": "int", "percentage_used": "num",
		"request_count": "int", "conversation_count": "int", "resets_at": "time"}

	specStatusRecordShape = specShape{"id": "int", "run_id": "str", "study_ids": "strs", "measurement_ids": "list",
		"filesystems": "list", "connection_details": "list", "collection_errors": "strs", "created_at": "time",
		"client_uuid": "str", "started_at": "time?", "finished_at": "time?", "platform": "str?", "runtime_scope": "str?",
		"sample_interval_seconds": "int", "connection_detail_trace_id": "int?", "cpu_valid_sample_count": "int",
		"cpu_average_percent": "num?", "cpu_max_percent": "num?", "cpu_final_percent": "num?",
		"memory_valid_sample_count": "int", "memory_effective_total_bytes": "int?", "memory_average_percent": "num?",
		"memory_max_percent": "num?", "memory_final_percent": "num?"}
	specFilesystemShape = specShape{"writable": "bool", "valid_sample_count": "int", "device": "str?", "mount": "str?",
		"type": "str?", "total_bytes": "int?", "minimum_available_bytes": "int?", "final_available_bytes": "int?",
		"average_percent": "num?", "maximum_percent": "num?", "final_percent": "num?"}
	specHealthStateShape = specShape{"client_id": "int", "client_uuid": "str", "client_label": "str?", "state": "str",
		"reasons": "list", "metric_summary": "obj", "evaluated_at": "time?", "threshold_snapshot": "obj",
		"thresholds_outdated": "bool", "source_system_status_record_id": "int?", "network_transport": "str?"}
	specReasonShape        = specShape{"metric": "str", "percent": "num", "severity": "str"}
	specMetricSummaryShape = specShape{"percent": "num?", "warning_percent": "num", "critical_percent": "num"}
	specMetricLimitsShape  = specShape{"warning_percent": "int", "critical_percent": "int"}
	specThresholdsShape    = specShape{"cpu": "obj", "memory": "obj", "filesystem": "obj"}
	specLicenseReportShape = specShape{"monthly_usage": "list", "total_units": "int", "usage_by_registration_key": "list"}
	specLicenseMonthShape  = specShape{"month": "str", "license_units": "int", "unique_clients": "int", "breakdown_by_subject_count": "obj"}
	specLicenseKeyShape    = specShape{"registration_key_id": "int?", "registration_key": "str?", "comment": "str?",
		"total_units": "int", "total_unique_clients": "int", "monthly_usage": "list"}
	specLicenseKeyMonthShape = specShape{"month": "str", "license_units": "int", "unique_clients": "int"}
	specDownloadsShape       = specShape{"provider": "str", "customer": "str", "components": "list"}
)

// specCheck asserts v is an object with exactly the shape's keys, each of
// its kind, and returns it.
func specCheck(t testing.TB, where string, v any, shape specShape) map[string]any {
	t.Helper()
	obj, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: want a JSON object, got %T %v", where, v, v)
	}
	var missing, extra []string
	for k := range shape {
		if _, ok := obj[k]; !ok {
			missing = append(missing, k)
		}
	}
	for k := range obj {
		if _, ok := shape[k]; !ok {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Errorf("%s: keys missing %v, not documented %v", where, missing, extra)
	}
	for k, kind := range shape {
		if val, ok := obj[k]; ok {
			specKind(t, where+"."+k, val, kind)
		}
	}
	return obj
}

// specCheckSubset is specCheck for objects whose keys are all optional.
func specCheckSubset(t testing.TB, where string, v any, shape specShape) map[string]any {
	t.Helper()
	obj, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: want a JSON object, got %T %v", where, v, v)
	}
	for k, val := range obj {
		kind, ok := shape[k]
		if !ok {
			t.Errorf("%s: key %q is not documented", where, k)
			continue
		}
		specKind(t, where+"."+k, val, kind)
	}
	return obj
}

func specKind(t testing.TB, where string, v any, kind string) {
	t.Helper()
	base, nullable := strings.CutSuffix(kind, "?")
	if v == nil {
		if !nullable {
			t.Errorf("%s: null, want %s", where, base)
		}
		return
	}
	ok := true
	switch base {
	case "int":
		n, isNum := v.(json.Number)
		ok = isNum && apitest.IsInt(n)
	case "num":
		_, ok = v.(json.Number)
	case "str":
		_, ok = v.(string)
	case "bool":
		_, ok = v.(bool)
	case "time":
		s, isStr := v.(string)
		_, err := time.Parse(time.RFC3339, s)
		ok = isStr && err == nil
	case "strs":
		list, isList := v.([]any)
		ok = isList
		for _, item := range list {
			if _, isStr := item.(string); !isStr {
				ok = false
			}
		}
	case "obj":
		_, ok = v.(map[string]any)
	case "list":
		_, ok = v.([]any)
	default:
		t.Fatalf("%s: unknown kind %q", where, kind)
	}
	if !ok {
		t.Errorf("%s: %v (%T) is not a %s", where, v, v, kind)
	}
}

// specFind returns the item of a list with the given id.
func specFind(t testing.TB, list []any, id int64) map[string]any {
	t.Helper()
	for _, item := range list {
		if obj, ok := item.(map[string]any); ok && apitest.Int(t, obj["id"]) == id {
			return obj
		}
	}
	t.Fatalf("no item with id %d in %v", id, list)
	return nil
}

// specWant compares one field with its expected value; numbers compare by
// their JSON text, timestamps as instants.
func specWant(t testing.TB, where string, obj map[string]any, key string, want any) {
	t.Helper()
	got := obj[key]
	switch w := want.(type) {
	case nil:
		if got != nil {
			t.Errorf("%s.%s = %v, want null", where, key, got)
		}
	case int:
		if n, ok := got.(json.Number); !ok || n.String() != fmt.Sprint(w) {
			t.Errorf("%s.%s = %v, want %d", where, key, got, w)
		}
	case int64:
		if n, ok := got.(json.Number); !ok || n.String() != fmt.Sprint(w) {
			t.Errorf("%s.%s = %v, want %d", where, key, got, w)
		}
	case float64:
		n, ok := got.(json.Number)
		f, err := n.Float64()
		if !ok || err != nil || f != w {
			t.Errorf("%s.%s = %v, want %v", where, key, got, w)
		}
	case time.Time:
		s, _ := got.(string)
		ts, err := time.Parse(time.RFC3339, s)
		if err != nil || !ts.Equal(w) {
			t.Errorf("%s.%s = %v, want %s", where, key, got, w.Format(time.RFC3339Nano))
		}
	case []string:
		list, ok := got.([]any)
		gs := make([]string, 0, len(list))
		for _, item := range list {
			s, _ := item.(string)
			gs = append(gs, s)
		}
		if !ok || !slices.Equal(gs, w) {
			t.Errorf("%s.%s = %v, want %q", where, key, got, w)
		}
	default:
		if got != want {
			t.Errorf("%s.%s = %v (%T), want %v", where, key, got, got, want)
		}
	}
}

// specRecent asserts a timestamp lies within a few minutes of now.
func specRecent(t testing.TB, where string, v any) {
	t.Helper()
	if d := time.Since(apitest.Time(t, v)); d < -time.Minute || d > 5*time.Minute {
		t.Errorf("%s = %v, want about now", where, v)
	}
}

// specWorld is one data owner with a bit of everything the read routes
// show, seeded through the API where there is one and the store otherwise.
type specWorld struct {
	e        *apitest.Env
	o        *apitest.Owner
	partner  *apitest.Owner // owns the shared client
	from     time.Time      // valid_from of the current contract
	seenAt   time.Time      // last_seen_at of probe
	measured time.Time      // last_measurement_at and disabled_at of probe

	isp, contract, oldContract    int64
	capability                    int64
	regKeyID                      int64
	regKey                        string
	regKeyUntil                   time.Time
	defaultPublic, assignedPublic int64
	defaultAutomator              int64
	group                         int64
	credential, credentialNoPw    int64
	probe, bare, shared           apitest.Client
	statusRecord                  int64  // the probe's system status record
	webhook, delivery             int64  // a webhook and its (pending) test delivery
	passed                        string // what a route's call hands to its check
}

// specAcceptAI lets the spec world's user use the assistant.
func specAcceptAI(t *testing.T, w *specWorld) {
	w.e.SQL(t, `UPDATE users SET ai_usage_accepted = true WHERE data_owner_id = $1`, w.o.ID)
}

// specAIConversation makes a conversation with one user message.
func specAIConversation(t *testing.T, w *specWorld) int64 {
	t.Helper()
	specAcceptAI(t, w)
	c := w.e.AdminCreate(t, w.o.Key, "/ai_conversations", map[string]any{"message": aiUserMessage("How is my fleet?")})
	return apitest.Int(t, c["id"])
}

func (w *specWorld) admin(t testing.TB, method, path string, body any) *apitest.Response {
	t.Helper()
	return w.e.Admin(t, method, path, w.o.Key, body)
}

// create posts body and returns the id inside the {key: {...}} answer.
func (w *specWorld) create(t testing.TB, path, key string, body any) int64 {
	t.Helper()
	obj := apitest.WantEnvelope(t, w.admin(t, http.MethodPost, path, body), http.StatusCreated, key)
	return apitest.Int(t, obj.(map[string]any)["id"])
}

// specSeed builds the world:
//   - probe: label, extra label, tags, registration key, assigned public
//     config, member of group "Berlin", a current and an expired contract
//     with ISP Telekom, seen just now, disabled, muted;
//   - bare: nothing but its uuid and type (gets the default configs);
//   - shared: a partner's client shared with the owner.
func specSeed(t testing.TB, prefix string) *specWorld {
	t.Helper()
	e := apitest.Get(t)
	ctx := context.Background()
	w := &specWorld{e: e, o: e.NewOwner(t, prefix), partner: e.NewOwner(t, prefix+"-partner")}
	now := time.Now().UTC().Truncate(time.Second)
	w.from, w.seenAt, w.measured = now.AddDate(0, 0, -30), now.Add(-2*time.Minute), now.Add(-10*time.Minute)
	w.regKeyUntil = now.AddDate(0, 2, 0)

	w.defaultPublic = w.o.NewConfig(t, "public", "Default measurements", true)
	w.assignedPublic = w.o.NewConfig(t, "public", "Assigned measurements", false)
	w.defaultAutomator = w.o.NewConfig(t, "automator", "Default schedule", true)

	w.capability = w.create(t, "/capabilities", "capability", map[string]any{"name": "Fleet probes"})
	w.regKey = apitest.Unique("fleet-key-" + w.o.Slug)
	g := e.GraphQL(t, w.o.Key, `mutation($in: RegistrationKeyCreateInput!) { registrationKeyCreate(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"capabilityId": w.capability, "registrationKey": w.regKey,
			"comment": "rollout", "validUntil": w.regKeyUntil.Format(time.RFC3339), "numRegistrationsLeft": 5,
			"usageLimitDays": 30, "testing": true}})
	if len(g.Errors) > 0 {
		t.Fatalf("seed registration key: %s", g.Raw)
	}
	w.regKeyID = apitest.Int(t, g.Data["registrationKeyCreate"].(map[string]any)["id"])

	w.probe = w.o.NewClient(t, store.NewClient{Type: "automator",
		Label: apitest.Ptr("Probe Berlin 1"), ExtraLabel: apitest.Ptr("rack 4"), Tags: []string{"berlin", "fiber"},
		RegistrationKeyID: &w.regKeyID, PublicConfigID: &w.assignedPublic, LastSeenAt: &w.seenAt})
	w.e.SQL(t, `UPDATE clients SET disabled_at = $2, disabled_reason = 'maintenance', last_measurement_at = $2,
		last_client_type = 'lab', last_client_version = '4.2.0', anomalies_muted = true,
		offline_notifications_muted = true WHERE id = $1`, w.probe.ID, w.measured)
	w.bare = w.o.NewClient(t, store.NewClient{Type: "lab"})
	w.statusRecord = w.o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: w.probe.UUID, CPU: apitest.Ptr(83.5),
		Memory: apitest.Ptr(40.0), Filesystem: apitest.Ptr(20.0)})

	partnerConfig := w.partner.NewConfig(t, "public", "Partner measurements", true)
	w.shared = w.partner.NewClient(t, store.NewClient{Type: "automator",
		Label: apitest.Ptr("Partner probe"), PublicConfigID: &partnerConfig, RegistrationKeyID: nil})
	if err := e.Store.ShareClient(ctx, w.partner.ID, w.shared.ID, w.o.ID); err != nil {
		t.Fatalf("share client: %v", err)
	}

	w.group = w.o.NewGroup(t, "Berlin", w.probe.ID)

	w.isp = w.create(t, "/isps", "isp", map[string]any{"name": "Telekom", "country": "DE", "type": "fixed"})
	w.contract = w.o.NewContract(t, store.NewContract{IspID: w.isp, ClientID: w.probe.ID,
		Name: "Business 250", UploadSpeed: apitest.Ptr(int64(50)), DownloadSpeed: apitest.Ptr(int64(250)),
		MonthlyPrice: apitest.Ptr(49.99), Currency: apitest.Ptr("EUR"), ConnectionType: apitest.Ptr("fiber"), ValidFrom: &w.from})
	w.e.SQL(t, `UPDATE isp_contracts SET assumed_tariff = 'business' WHERE id = $1`, w.contract)
	w.oldContract = w.o.NewContract(t, store.NewContract{IspID: w.isp, ClientID: w.probe.ID,
		Name: "Old DSL", ValidFrom: apitest.Ptr(now.AddDate(-1, 0, 0)), ValidUntil: apitest.Ptr(now.AddDate(0, 0, -31))})
	w.e.SQL(t, `INSERT INTO isp_details (data_owner_id, isp_id, kind, value) VALUES ($1, $2, 'prefix', '192.0.2.0/24'),
		($1, $2, 'rdns', '*.dip.t-dialin.net')`, w.o.ID, w.isp)

	w.credential = w.create(t, "/service_credentials", "service_credential",
		map[string]any{"name": "Ookla account", "service": "ookla", "username": "probe", "password": "s3cret"})
	w.credentialNoPw = w.create(t, "/service_credentials", "service_credential",
		map[string]any{"name": "Open SMTP", "service": "smtp"})
	specSeedWebhook(t, w)
	return w
}

// specSealed reads a credential's stored password through the store.
func specSealed(t testing.TB, w *specWorld, id int64) (string, bool) {
	t.Helper()
	c, err := w.e.Store.ServiceCredential(context.Background(), w.o.ID, id)
	if err != nil {
		t.Fatalf("load credential %d: %v", id, err)
	}
	if len(c.SealedPassword) == 0 {
		return "", false
	}
	pw, err := w.e.Sealer.Open(c.SealedPassword)
	if err != nil {
		t.Fatalf("open sealed password: %v", err)
	}
	return pw, true
}

// specRoute checks one route: call builds the request, check reads the answer
// (whose status has been checked against status already).
type specRoute struct {
	name   string
	status int
	call   func(t *testing.T, w *specWorld) (path string, body any)
	check  func(t *testing.T, w *specWorld, r *apitest.Response)
}

// specRoutes has one entry per route of rest.AdminRoutes, keyed "METHOD path".
var specRoutes = map[string]specRoute{
	"GET /isps": {"ISP list answers {isps: [ISP]} with contract counts", 200,
		func(t *testing.T, w *specWorld) (string, any) { return "/isps", nil },
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			list := apitest.List(t, apitest.WantEnvelope(t, r, 200, "isps"))
			for i, item := range list {
				specCheck(t, fmt.Sprintf("isps[%d]", i), item, specIspShape)
			}
			isp := specFind(t, list, w.isp)
			specWant(t, "isp", isp, "name", "Telekom")
			specWant(t, "isp", isp, "isp_contracts_count", 2)
		}},
	"POST /isps": {"ISP create answers 201 {isp} with what was sent", 201,
		func(t *testing.T, w *specWorld) (string, any) {
			return "/isps", map[string]any{"name": "KPN", "country": "nl", "type": "mobile", "is_vpn": true}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			isp := specCheck(t, "isp", apitest.WantEnvelope(t, r, 201, "isp"), specIspShape)
			for k, v := range map[string]any{"name": "KPN", "country": "NL", "type": "mobile", "is_vpn": true,
				"verified": nil, "alternative_names": []string{}, "as_numbers": []string{}, "isp_contracts_count": 0} {
				specWant(t, "isp", isp, k, v)
			}
			specRecent(t, "isp.created_at", isp["created_at"])
			got := specCheck(t, "isp", apitest.WantEnvelope(t, w.admin(t, http.MethodGet, fmt.Sprintf("/isps/%v", isp["id"]), nil), 200, "isp"), specIspGetShape)
			specWant(t, "stored isp", got, "name", "KPN")
			specWant(t, "stored isp", got, "is_vpn", true)
		}},
	"GET /isps/{id}": {"ISP get adds isp_details_count and isp_contracts", 200,
		func(t *testing.T, w *specWorld) (string, any) { return fmt.Sprintf("/isps/%d", w.isp), nil },
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			isp := specCheck(t, "isp", apitest.WantEnvelope(t, r, 200, "isp"), specIspGetShape)
			specWant(t, "isp", isp, "isp_details_count", 2)
			specWant(t, "isp", isp, "isp_contracts_count", 2)
			contracts := apitest.List(t, isp["isp_contracts"])
			if len(contracts) != 2 {
				t.Fatalf("isp_contracts has %d items, want 2", len(contracts))
			}
			for i, c := range contracts {
				specCheck(t, fmt.Sprintf("isp_contracts[%d]", i), c, specIspContractShape)
			}
			c := specFind(t, contracts, w.contract)
			for k, v := range map[string]any{"isp_id": w.isp, "client_id": w.probe.ID, "upload_speed": 50,
				"download_speed": 250, "monthly_price": 49.99, "currency": "EUR", "assumed_tariff": "business",
				"connection_type": "fiber", "name": "Business 250", "valid_from": w.from, "valid_until": nil,
				"client_uuid": w.probe.UUID, "client_label": w.probe.Label} {
				specWant(t, "contract", c, k, v)
			}
			old := specFind(t, contracts, w.oldContract)
			specWant(t, "old contract", old, "upload_speed", nil)
			specWant(t, "old contract", old, "monthly_price", nil)
			apitest.Time(t, old["valid_until"])
		}},
	"PUT /isps/{id}": {"ISP update writes the given fields and keeps the others", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			id := w.create(t, "/isps", "isp", map[string]any{"name": "Vodafone", "country": "DE", "type": "fixed", "is_vpn": true})
			return fmt.Sprintf("/isps/%d", id), map[string]any{"name": "Vodafone Kabel", "type": "satellite", "is_vpn": nil}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			isp := specCheck(t, "isp", apitest.WantEnvelope(t, r, 200, "isp"), specIspShape)
			for k, v := range map[string]any{"name": "Vodafone Kabel", "type": "satellite", "is_vpn": nil, "country": "DE"} {
				specWant(t, "isp", isp, k, v)
			}
			got := apitest.WantEnvelope(t, w.admin(t, http.MethodGet, fmt.Sprintf("/isps/%v", isp["id"]), nil), 200, "isp").(map[string]any)
			specWant(t, "stored isp", got, "name", "Vodafone Kabel")
			specWant(t, "stored isp", got, "type", "satellite")
		}},
	"DELETE /isps/{id}": {"ISP delete answers {} and the ISP is gone", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/isps/%d", w.create(t, "/isps", "isp", map[string]any{"name": "Gone", "country": "AT", "type": "other"})), nil
		},
		nil},
	"POST /isps/{id}/merge_into": {"ISP merge answers 200 {isp: target}", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			src := w.create(t, "/isps", "isp", map[string]any{"name": "1&1 Versatel", "country": "DE", "type": "fixed"})
			target := w.create(t, "/isps", "isp", map[string]any{"name": "1&1", "country": "DE", "type": "fixed"})
			return fmt.Sprintf("/isps/%d/merge_into", src), map[string]any{"target_id": target}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			isp := specCheck(t, "isp", apitest.WantEnvelope(t, r, 200, "isp"), specIspShape)
			specWant(t, "isp", isp, "name", "1&1")
			if !slices.Contains(apitest.Strings(t, isp["alternative_names"]), "1&1 Versatel") {
				t.Errorf("target's alternative_names %v lack the merged ISP's name", isp["alternative_names"])
			}
		}},

	"GET /capabilities": {"capability list answers {capabilities: [..]} with registration_keys_count", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			w.create(t, "/capabilities", "capability", map[string]any{"name": "Keyless"})
			return "/capabilities", nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			list := apitest.List(t, apitest.WantEnvelope(t, r, 200, "capabilities"))
			counts := map[string]int64{}
			for i, item := range list {
				c := specCheck(t, fmt.Sprintf("capabilities[%d]", i), item, specCapabilityListShape)
				counts[c["name"].(string)] = apitest.Int(t, c["registration_keys_count"])
			}
			if n, ok := counts["Keyless"]; counts["Fleet probes"] != 1 || !ok || n != 0 {
				t.Errorf("registration_keys_count by name = %v, want Fleet probes 1, Keyless 0", counts)
			}
		}},
	"POST /capabilities": {"capability create answers 201 {capability} with what was sent", 201,
		func(t *testing.T, w *specWorld) (string, any) {
			return "/capabilities", map[string]any{"name": "Video only", "comment": "pilot",
				"allowed_measurement_types": []string{"VideoMeasurement"}, "allowed_measurement_subjects": []string{"youtube", "netflix"},
				"forbidden_measurement_types": []string{"GamingMeasurement"}, "forbidden_measurement_subjects": []string{"amazon_trailer"}}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			c := specCheck(t, "capability", apitest.WantEnvelope(t, r, 201, "capability"), specCapabilityShape)
			for k, v := range map[string]any{"name": "Video only", "comment": "pilot",
				"allowed_measurement_types": []string{"VideoMeasurement"}, "allowed_measurement_subjects": []string{"youtube", "netflix"},
				"forbidden_measurement_types": []string{"GamingMeasurement"}, "forbidden_measurement_subjects": []string{"amazon_trailer"}} {
				specWant(t, "capability", c, k, v)
			}
			got := specCheck(t, "stored capability", apitest.WantEnvelope(t, w.admin(t, http.MethodGet, fmt.Sprintf("/capabilities/%v", c["id"]), nil), 200, "capability"), specCapabilityGetShape)
			specWant(t, "stored capability", got, "allowed_measurement_subjects", []string{"youtube", "netflix"})
			if keys := apitest.List(t, got["registration_keys"]); len(keys) != 0 {
				t.Errorf("a new capability has registration_keys %v", keys)
			}
		}},
	"GET /capabilities/{id}": {"capability get answers {capability} with registration_keys", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/capabilities/%d", w.capability), nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			c := specCheck(t, "capability", apitest.WantEnvelope(t, r, 200, "capability"), specCapabilityGetShape)
			specWant(t, "capability", c, "name", "Fleet probes")
			specWant(t, "capability", c, "comment", nil)
			specWant(t, "capability", c, "allowed_measurement_types", []string{})
			keys := apitest.List(t, c["registration_keys"])
			if len(keys) != 1 {
				t.Fatalf("registration_keys has %d items, want 1", len(keys))
			}
			k := specCheck(t, "registration_keys[0]", keys[0], specCapabilityKeyShape)
			for key, v := range map[string]any{"id": w.regKeyID, "registration_key": w.regKey, "comment": "rollout",
				"valid_until": w.regKeyUntil, "num_registrations_left": 5, "usage_limit_days": 30, "testing": true,
				"clients_count": 1} {
				specWant(t, "registration key", k, key, v)
			}
			specRecent(t, "registration key valid_from", k["valid_from"])
		}},
	"PUT /capabilities/{id}": {"capability update writes the given fields and keeps the others", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			id := w.create(t, "/capabilities", "capability", map[string]any{"name": "Web", "comment": "old",
				"allowed_measurement_types": []string{"WebMeasurement"}})
			return fmt.Sprintf("/capabilities/%d", id), map[string]any{"comment": nil, "forbidden_measurement_subjects": []string{"lighthouse"}}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			c := specCheck(t, "capability", apitest.WantEnvelope(t, r, 200, "capability"), specCapabilityShape)
			for k, v := range map[string]any{"name": "Web", "comment": nil, "allowed_measurement_types": []string{"WebMeasurement"},
				"forbidden_measurement_subjects": []string{"lighthouse"}, "forbidden_measurement_types": []string{}} {
				specWant(t, "capability", c, k, v)
			}
		}},
	"DELETE /capabilities/{id}": {"capability delete answers {} and the capability is gone", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/capabilities/%d", w.create(t, "/capabilities", "capability", map[string]any{"name": "Doomed"})), nil
		}, nil},

	"GET /service_credentials": {"credential list answers {service_credentials: [..]} without passwords", 200,
		func(t *testing.T, w *specWorld) (string, any) { return "/service_credentials", nil },
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			list := apitest.List(t, apitest.WantEnvelope(t, r, 200, "service_credentials"))
			for i, item := range list {
				specCheck(t, fmt.Sprintf("service_credentials[%d]", i), item, specCredentialShape)
			}
			specWant(t, "ookla", specFind(t, list, w.credential), "password_set", true)
			specWant(t, "smtp", specFind(t, list, w.credentialNoPw), "password_set", false)
			if strings.Contains(string(r.Raw), "s3cret") {
				t.Errorf("a password leaked into the list: %s", r.Raw)
			}
		}},
	"POST /service_credentials": {"credential create answers 201 {service_credential} and seals the password", 201,
		func(t *testing.T, w *specWorld) (string, any) {
			return "/service_credentials", map[string]any{"name": "Netflix", "service": "netflix", "username": "viewer@example.org", "password": "hunter22"}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			c := specCheck(t, "service_credential", apitest.WantEnvelope(t, r, 201, "service_credential"), specCredentialShape)
			for k, v := range map[string]any{"name": "Netflix", "service": "netflix", "username": "viewer@example.org", "password_set": true} {
				specWant(t, "service_credential", c, k, v)
			}
			specRecent(t, "created_at", c["created_at"])
			if pw, ok := specSealed(t, w, apitest.Int(t, c["id"])); !ok || pw != "hunter22" {
				t.Errorf("stored password = %q (set %v), want hunter22", pw, ok)
			}
			if strings.Contains(string(r.Raw), "hunter22") {
				t.Errorf("the password came back: %s", r.Raw)
			}
		}},
	"GET /service_credentials/{id}": {"credential get answers {service_credential}", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/service_credentials/%d", w.credential), nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			c := specCheck(t, "service_credential", apitest.WantEnvelope(t, r, 200, "service_credential"), specCredentialShape)
			for k, v := range map[string]any{"id": w.credential, "name": "Ookla account", "service": "ookla", "username": "probe", "password_set": true} {
				specWant(t, "service_credential", c, k, v)
			}
		}},
	"PUT /service_credentials/{id}": {"credential update without password keeps the stored one", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			id := w.create(t, "/service_credentials", "service_credential", map[string]any{"name": "Speedtest", "service": "ookla", "password": "keep-me"})
			return fmt.Sprintf("/service_credentials/%d", id), map[string]any{"name": "Speedtest EU", "username": "eu-probe"}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			c := specCheck(t, "service_credential", apitest.WantEnvelope(t, r, 200, "service_credential"), specCredentialShape)
			for k, v := range map[string]any{"name": "Speedtest EU", "service": "ookla", "username": "eu-probe", "password_set": true} {
				specWant(t, "service_credential", c, k, v)
			}
			if pw, _ := specSealed(t, w, apitest.Int(t, c["id"])); pw != "keep-me" {
				t.Errorf("stored password = %q, want keep-me", pw)
			}
		}},
	"DELETE /service_credentials/{id}": {"credential delete answers {} and the credential is gone", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/service_credentials/%d", w.create(t, "/service_credentials", "service_credential",
				map[string]any{"name": "Doomed", "service": "smtp"})), nil
		}, nil},

	"GET /client_admin_api_keys": {"admin key list answers {client_admin_api_keys: [..]} without api_key", 200,
		func(t *testing.T, w *specWorld) (string, any) { return "/client_admin_api_keys", nil },
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			list := apitest.List(t, apitest.WantEnvelope(t, r, 200, "client_admin_api_keys"))
			var own map[string]any
			for i, item := range list {
				k := specCheck(t, fmt.Sprintf("client_admin_api_keys[%d]", i), item, specAdminKeyShape)
				if k["key_preview"] == auth.Preview(w.o.Key) {
					own = k
				}
			}
			if own == nil {
				t.Fatalf("the owner's key (preview %s) is not listed: %s", auth.Preview(w.o.Key), r.Raw)
			}
			specWant(t, "own key", own, "client_admin_user_id", w.o.UserID)
			specRecent(t, "own key last_used_at", own["last_used_at"])
			if strings.Contains(string(r.Raw), w.o.Key) {
				t.Errorf("a key leaked into the list")
			}
		}},
	"POST /client_admin_api_keys": {"admin key create answers 201 with api_key", 201,
		func(t *testing.T, w *specWorld) (string, any) {
			return "/client_admin_api_keys", map[string]any{"name": "ci", "effective_role": "editor",
				"valid_until": specKeyUntil.Format(time.RFC3339)}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			k := specCheck(t, "client_admin_api_key", apitest.WantEnvelope(t, r, 201, "client_admin_api_key"), specAdminKeyCreateShape)
			key := k["api_key"].(string)
			for f, v := range map[string]any{"name": "ci", "effective_role": "editor", "valid_until": specKeyUntil,
				"client_admin_user_id": w.o.UserID, "last_used_at": nil, "key_preview": auth.Preview(key)} {
				specWant(t, "client_admin_api_key", k, f, v)
			}
			if !strings.HasPrefix(key, "client_admin-") {
				t.Errorf("api_key %q lacks the client_admin- prefix", key)
			}
			specRecent(t, "valid_from", k["valid_from"])
			if g := w.e.Admin(t, http.MethodGet, "/isps", key, nil); g.Status != http.StatusOK {
				t.Errorf("the new key cannot read: %d %s", g.Status, g.Raw)
			}
		}},
	"GET /client_admin_api_keys/{id}": {"admin key get answers {client_admin_api_key} without api_key", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			id := w.create(t, "/client_admin_api_keys", "client_admin_api_key", map[string]any{"name": "read-me", "effective_role": "viewer"})
			return fmt.Sprintf("/client_admin_api_keys/%d", id), nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			k := specCheck(t, "client_admin_api_key", apitest.WantEnvelope(t, r, 200, "client_admin_api_key"), specAdminKeyShape)
			specWant(t, "client_admin_api_key", k, "name", "read-me")
			specWant(t, "client_admin_api_key", k, "effective_role", "viewer")
		}},
	"DELETE /client_admin_api_keys/{id}": {"admin key delete answers {} and the key stops working", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			k := apitest.WantEnvelope(t, w.admin(t, http.MethodPost, "/client_admin_api_keys", map[string]any{"name": "doomed"}), 201, "client_admin_api_key").(map[string]any)
			w.passed = k["api_key"].(string)
			return fmt.Sprintf("/client_admin_api_keys/%v", k["id"]), nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			if g := w.e.Admin(t, http.MethodGet, "/isps", w.passed, nil); g.Status != http.StatusUnauthorized {
				t.Errorf("deleted key answers %d, want 401", g.Status)
			}
		}},
	"GET /client_analytics_api_keys": {"analytics key list answers {client_analytics_api_keys: [..]} with api_key", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			k := apitest.WantEnvelope(t, w.admin(t, http.MethodPost, "/client_analytics_api_keys", map[string]any{"name": "probes"}), 201, "client_analytics_api_key").(map[string]any)
			w.passed = k["api_key"].(string)
			return "/client_analytics_api_keys", nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			list := apitest.List(t, apitest.WantEnvelope(t, r, 200, "client_analytics_api_keys"))
			found := false
			for i, item := range list {
				k := specCheck(t, fmt.Sprintf("client_analytics_api_keys[%d]", i), item, specAnalyticsKeyShape)
				found = found || k["api_key"] == w.passed
			}
			if !found {
				t.Errorf("the created key's api_key is not in the list: %s", r.Raw)
			}
		}},
	"POST /client_analytics_api_keys": {"analytics key create answers 201 with api_key", 201,
		func(t *testing.T, w *specWorld) (string, any) {
			return "/client_analytics_api_keys", map[string]any{"name": "lab", "valid_until": specKeyUntil.Format(time.RFC3339)}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			k := specCheck(t, "client_analytics_api_key", apitest.WantEnvelope(t, r, 201, "client_analytics_api_key"), specAnalyticsKeyShape)
			specWant(t, "client_analytics_api_key", k, "name", "lab")
			specWant(t, "client_analytics_api_key", k, "valid_until", specKeyUntil)
			if !strings.HasPrefix(k["api_key"].(string), "client_analytics-") {
				t.Errorf("api_key %v lacks the client_analytics- prefix", k["api_key"])
			}
		}},
	"GET /client_analytics_api_keys/{id}": {"analytics key get answers {client_analytics_api_key} with api_key", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			k := apitest.WantEnvelope(t, w.admin(t, http.MethodPost, "/client_analytics_api_keys", map[string]any{}), 201, "client_analytics_api_key").(map[string]any)
			w.passed = k["api_key"].(string)
			return fmt.Sprintf("/client_analytics_api_keys/%v", k["id"]), nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			k := specCheck(t, "client_analytics_api_key", apitest.WantEnvelope(t, r, 200, "client_analytics_api_key"), specAnalyticsKeyShape)
			specWant(t, "client_analytics_api_key", k, "api_key", w.passed)
			specWant(t, "client_analytics_api_key", k, "name", nil)
			// Without valid_until a key lives for a year.
			if d := time.Until(apitest.Time(t, k["valid_until"])); d < 364*24*time.Hour || d > 366*24*time.Hour {
				t.Errorf("default valid_until %v is not a year from now", k["valid_until"])
			}
		}},
	"DELETE /client_analytics_api_keys/{id}": {"analytics key delete answers {} and the key is gone", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/client_analytics_api_keys/%d", w.create(t, "/client_analytics_api_keys", "client_analytics_api_key", map[string]any{})), nil
		}, nil},
	"GET /export_api_keys": {"export key list answers {export_api_keys: [..]} with key_preview only", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			k := apitest.WantEnvelope(t, w.admin(t, http.MethodPost, "/export_api_keys", map[string]any{"name": "pipeline"}), 201, "export_api_key").(map[string]any)
			w.passed = k["api_key"].(string)
			return "/export_api_keys", nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			list := apitest.List(t, apitest.WantEnvelope(t, r, 200, "export_api_keys"))
			found := false
			for i, item := range list {
				k := specCheck(t, fmt.Sprintf("export_api_keys[%d]", i), item, specExportKeyShape)
				found = found || k["key_preview"] == auth.Preview(w.passed)
			}
			if !found || strings.Contains(string(r.Raw), w.passed) {
				t.Errorf("want the key listed by preview %s and never in full: %s", auth.Preview(w.passed), r.Raw)
			}
		}},
	"POST /export_api_keys": {"export key create answers 201 with api_key instead of key_preview", 201,
		func(t *testing.T, w *specWorld) (string, any) {
			return "/export_api_keys", map[string]any{"name": "warehouse", "valid_until": specKeyUntil.Format(time.RFC3339)}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			k := specCheck(t, "export_api_key", apitest.WantEnvelope(t, r, 201, "export_api_key"), specExportKeyCreateShape)
			specWant(t, "export_api_key", k, "name", "warehouse")
			specWant(t, "export_api_key", k, "valid_until", specKeyUntil)
			key := k["api_key"].(string)
			if !strings.HasPrefix(key, "export-") {
				t.Errorf("api_key %q lacks the export- prefix", key)
			}
			if g := w.e.Admin(t, http.MethodGet, "/isps", key, nil); g.Status != http.StatusForbidden && g.Status != http.StatusUnauthorized {
				t.Errorf("an export key works on the admin API: %d", g.Status)
			}
		}},
	"GET /export_api_keys/{id}": {"export key get answers {export_api_key} with key_preview", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			k := apitest.WantEnvelope(t, w.admin(t, http.MethodPost, "/export_api_keys", map[string]any{"name": "one"}), 201, "export_api_key").(map[string]any)
			w.passed = k["api_key"].(string)
			return fmt.Sprintf("/export_api_keys/%v", k["id"]), nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			k := specCheck(t, "export_api_key", apitest.WantEnvelope(t, r, 200, "export_api_key"), specExportKeyShape)
			specWant(t, "export_api_key", k, "key_preview", auth.Preview(w.passed))
			specWant(t, "export_api_key", k, "name", "one")
		}},
	"DELETE /export_api_keys/{id}": {"export key delete answers {} and the key is gone", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/export_api_keys/%d", w.create(t, "/export_api_keys", "export_api_key", map[string]any{})), nil
		}, nil},

	"GET /client_admin_users": {"user list answers {users: [user]}", 200,
		func(t *testing.T, w *specWorld) (string, any) { return "/client_admin_users", nil },
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			list := apitest.List(t, apitest.WantEnvelope(t, r, 200, "users"))
			for i, item := range list {
				u := specCheck(t, fmt.Sprintf("users[%d]", i), item, specUserShape)
				specCheckSubset(t, fmt.Sprintf("users[%d].notification_config", i), u["notification_config"], specNotificationShape)
			}
			me := specFind(t, list, w.o.UserID)
			specWant(t, "owner user", me, "role", "org_admin")
			specWant(t, "owner user", me, "email", "admin@"+w.o.Slug+".example")
		}},
	"POST /client_admin_users": {"user create answers 201 {user} with the default notification config", 201,
		func(t *testing.T, w *specWorld) (string, any) {
			return "/client_admin_users", map[string]any{"email": "erika@" + w.o.Slug + ".example", "username": "erika",
				"role": "editor", "first_name": "Erika", "last_name": nil}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			u := specCheck(t, "user", apitest.WantEnvelope(t, r, 201, "user"), specUserShape)
			for k, v := range map[string]any{"email": "erika@" + w.o.Slug + ".example", "username": "erika", "role": "editor",
				"first_name": "Erika", "last_name": nil, "dashboard_whats_new_disabled": false, "pending_email": nil,
				"pending_email_state": nil, "ai_usage_accepted": nil} {
				specWant(t, "user", u, k, v)
			}
			nc := specCheckSubset(t, "user.notification_config", u["notification_config"], specNotificationShape)
			specWant(t, "notification_config", nc, "client_offline", true)
			specWant(t, "notification_config", nc, "anomaly_events", false)
		}},
	"GET /client_admin_users/{id}": {"user get answers {user}", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/client_admin_users/%d", w.o.UserID), nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			u := specCheck(t, "user", apitest.WantEnvelope(t, r, 200, "user"), specUserShape)
			specWant(t, "user", u, "id", w.o.UserID)
			specWant(t, "user", u, "role", "org_admin")
			specCheckSubset(t, "user.notification_config", u["notification_config"], specNotificationShape)
		}},
	"PUT /client_admin_users/{id}": {"user update writes the given fields", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			id := w.create(t, "/client_admin_users", "user", map[string]any{"email": "max@" + w.o.Slug + ".example", "username": "max", "role": "viewer"})
			return fmt.Sprintf("/client_admin_users/%d", id), map[string]any{"first_name": "Max", "last_name": "Muster",
				"ai_usage_accepted": true, "ai_custom_prompt": "Be brief", "last_visited_dashboard_version": "2.14.1-beta.3",
				"dashboard_whats_new_disabled": true}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			u := specCheck(t, "user", apitest.WantEnvelope(t, r, 200, "user"), specUserShape)
			for k, v := range map[string]any{"first_name": "Max", "last_name": "Muster", "ai_usage_accepted": true,
				"ai_custom_prompt": "Be brief", "last_visited_dashboard_version": "2.14.1-beta.3",
				"dashboard_whats_new_disabled": true, "username": "max", "role": "viewer"} {
				specWant(t, "user", u, k, v)
			}
		}},

	"GET /clients": {"client list answers {clients: [client]} without configuration", 200,
		func(t *testing.T, w *specWorld) (string, any) { return "/clients", nil },
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			list := apitest.List(t, apitest.WantEnvelope(t, r, 200, "clients"))
			if len(list) != 3 {
				t.Errorf("%d clients listed, want 3 (own two and the shared one)", len(list))
			}
			for i, item := range list {
				specCheckClient(t, fmt.Sprintf("clients[%d]", i), item, specClientShape)
			}
			specWant(t, "probe", specFind(t, list, w.probe.ID), "access_level", "owner")
			specWant(t, "shared", specFind(t, list, w.shared.ID), "access_level", "shared")
		}},
	"GET /clients/check_label_availability": {"label check answers {available, label} without envelope", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return "/clients/check_label_availability?label=" + url.QueryEscape(w.probe.Label), nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			a := specCheck(t, "body", r.JSON, specLabelShape)
			specWant(t, "body", a, "available", false)
			specWant(t, "body", a, "label", w.probe.Label)
		}},
	"GET /clients/{id}": {"client get answers {client} with configuration", 200,
		func(t *testing.T, w *specWorld) (string, any) { return fmt.Sprintf("/clients/%d", w.probe.ID), nil },
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			c := specCheckClient(t, "client", apitest.WantEnvelope(t, r, 200, "client"), specClientGetShape)
			specWant(t, "client", c, "uuid", w.probe.UUID)
			cfg := c["configuration"].(map[string]any)
			specWant(t, "configuration", cfg, "managed", true)
		}},

	"GET /clients/{id}/system_status_records": {"system status records answer {system_status_records: [record]}, newest first", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/clients/%d/system_status_records", w.probe.ID), nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			list := apitest.List(t, apitest.WantEnvelope(t, r, 200, "system_status_records"))
			if len(list) != 1 {
				t.Fatalf("%d records, want the probe's one", len(list))
			}
			rec := specCheck(t, "system_status_records[0]", list[0], specStatusRecordShape)
			specWant(t, "record", rec, "id", w.statusRecord)
			specWant(t, "record", rec, "client_uuid", w.probe.UUID)
			specWant(t, "record", rec, "cpu_average_percent", 83.5)
			for i, f := range apitest.List(t, rec["filesystems"]) {
				specCheck(t, fmt.Sprintf("filesystems[%d]", i), f, specFilesystemShape)
			}
			for i, c := range apitest.List(t, rec["connection_details"]) {
				specKind(t, fmt.Sprintf("connection_details[%d]", i), c, "obj")
			}
		}},
	"GET /fleet_health": {"fleet health answers {client_health_states: [state]}, one per own client", 200,
		func(t *testing.T, w *specWorld) (string, any) { return "/fleet_health", nil },
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			list := apitest.List(t, apitest.WantEnvelope(t, r, 200, "client_health_states"))
			var own int
			if err := w.e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM clients WHERE data_owner_id = $1`,
				w.o.ID).Scan(&own); err != nil {
				t.Fatal(err)
			}
			if len(list) != own {
				t.Fatalf("%d states, want one per own client (%d): %s", len(list), own, r.Raw)
			}
			for i, it := range list {
				s := specCheck(t, fmt.Sprintf("client_health_states[%d]", i), it, specHealthStateShape)
				for j, reason := range apitest.List(t, s["reasons"]) {
					specCheck(t, fmt.Sprintf("reasons[%d]", j), reason, specReasonShape)
				}
				for m, sum := range apitest.Object(t, s["metric_summary"]) {
					specCheck(t, "metric_summary."+m, sum, specMetricSummaryShape)
				}
				for k, v := range apitest.Object(t, s["threshold_snapshot"]) {
					if _, isBool := v.(bool); !isBool {
						specKind(t, "threshold_snapshot."+k, v, "int")
					}
				}
				if apitest.Int(t, s["client_id"]) == w.probe.ID {
					specWant(t, "probe", s, "state", "warning")
					specWant(t, "probe", s, "source_system_status_record_id", w.statusRecord)
				}
			}
		}},
	"GET /fleet_health/thresholds": {"thresholds answer {health_thresholds} per metric", 200,
		func(t *testing.T, w *specWorld) (string, any) { return "/fleet_health/thresholds", nil },
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			th := specCheck(t, "health_thresholds", apitest.WantEnvelope(t, r, 200, "health_thresholds"), specThresholdsShape)
			for _, m := range []string{"cpu", "memory", "filesystem"} {
				l := specCheck(t, m, th[m], specMetricLimitsShape)
				specWant(t, m, l, "warning_percent", 80)
				specWant(t, m, l, "critical_percent", 95)
			}
		}},
	"PUT /fleet_health/thresholds": {"thresholds update answers {health_thresholds} with the new values", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return "/fleet_health/thresholds", map[string]any{"memory": map[string]any{"warning_percent": 60, "critical_percent": 75}}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			th := specCheck(t, "health_thresholds", apitest.WantEnvelope(t, r, 200, "health_thresholds"), specThresholdsShape)
			specWant(t, "memory", specCheck(t, "memory", th["memory"], specMetricLimitsShape), "critical_percent", 75)
			specWant(t, "cpu", specCheck(t, "cpu", th["cpu"], specMetricLimitsShape), "warning_percent", 80)
		}},

	"PUT /clients/{id}": {"client update answers {client} with configuration and the new values", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			c := w.o.NewClient(t, store.NewClient{Label: apitest.Ptr("Spec rename"), ExtraLabel: apitest.Ptr("kept")})
			return fmt.Sprintf("/clients/%d", c.ID), map[string]any{"label": "Spec renamed", "tags": []string{"a", "b"},
				"system_health_notifications_muted": true}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			c := specCheckClient(t, "client", apitest.WantEnvelope(t, r, 200, "client"), specClientGetShape)
			for k, v := range map[string]any{"label": "Spec renamed", "extra_label": "kept", "tags": []string{"a", "b"},
				"system_health_notifications_muted": true, "anomalies_muted": false} {
				specWant(t, "client", c, k, v)
			}
			specRecent(t, "client.updated_at", c["updated_at"])
		}},
	"DELETE /clients/{id}": {"client delete answers {}", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/clients/%d", w.o.NewClient(t, store.NewClient{}).ID), nil
		}, nil},
	"POST /clients/{id}/disable": {"client disable answers {client} with disabled_at and the reason", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/clients/%d/disable", w.o.NewClient(t, store.NewClient{}).ID), map[string]any{"reason": "moved"}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			c := specCheckClient(t, "client", apitest.WantEnvelope(t, r, 200, "client"), specClientGetShape)
			specWant(t, "client", c, "disabled_reason", "moved")
			specRecent(t, "client.disabled_at", c["disabled_at"])
		}},
	"POST /clients/{id}/enable": {"client enable answers {client} without disabled_at and reason", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			c := w.o.NewClient(t, store.NewClient{})
			w.e.SQL(t, `UPDATE clients SET disabled_at = now(), disabled_reason = 'x' WHERE id = $1`, c.ID)
			return fmt.Sprintf("/clients/%d/enable", c.ID), nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			c := specCheckClient(t, "client", apitest.WantEnvelope(t, r, 200, "client"), specClientGetShape)
			specWant(t, "client", c, "disabled_at", nil)
			specWant(t, "client", c, "disabled_reason", nil)
		}},

	"GET /client_groups": {"client group list answers {client_groups: [..]} with members", 200,
		func(t *testing.T, w *specWorld) (string, any) { return "/client_groups", nil },
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			list := apitest.List(t, apitest.WantEnvelope(t, r, 200, "client_groups"))
			for i, item := range list {
				specCheck(t, fmt.Sprintf("client_groups[%d]", i), item, specGroupShape)
			}
			g := specFind(t, list, w.group)
			specWant(t, "group", g, "name", "Berlin")
			m := specCheck(t, "group.clients[0]", specFind(t, apitest.List(t, g["clients"]), w.probe.ID), specGroupClientShape)
			specWant(t, "member", m, "uuid", w.probe.UUID)
		}},
	"POST /client_groups": {"client group create answers 201 {client_group}", 201,
		func(t *testing.T, w *specWorld) (string, any) {
			return "/client_groups", map[string]any{"name": "Spec group", "client_ids": []any{w.bare.UUID}}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			g := specCheck(t, "client_group", apitest.WantEnvelope(t, r, 201, "client_group"), specGroupShape)
			specWant(t, "client_group", g, "name", "Spec group")
			specRecent(t, "client_group.created_at", g["created_at"])
			specFind(t, apitest.List(t, g["clients"]), w.bare.ID)
		}},
	"GET /client_groups/{id}": {"client group get answers {client_group}", 200,
		func(t *testing.T, w *specWorld) (string, any) { return fmt.Sprintf("/client_groups/%d", w.group), nil },
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			g := specCheck(t, "client_group", apitest.WantEnvelope(t, r, 200, "client_group"), specGroupShape)
			specWant(t, "client_group", g, "name", "Berlin")
		}},
	"PUT /client_groups/{id}": {"client group update answers {client_group} with the new name", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/client_groups/%d", w.o.NewGroup(t, "")), map[string]any{"name": "Spec renamed group"}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			g := specCheck(t, "client_group", apitest.WantEnvelope(t, r, 200, "client_group"), specGroupShape)
			specWant(t, "client_group", g, "name", "Spec renamed group")
		}},
	"DELETE /client_groups/{id}": {"client group delete answers {}", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/client_groups/%d", w.o.NewGroup(t, "")), nil
		}, nil},
	"POST /client_groups/{id}/add_clients": {"adding clients answers {client_group} with them", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/client_groups/%d/add_clients", w.o.NewGroup(t, "")), map[string]any{"client_ids": []any{w.bare.ID}}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			g := specCheck(t, "client_group", apitest.WantEnvelope(t, r, 200, "client_group"), specGroupShape)
			specCheck(t, "member", specFind(t, apitest.List(t, g["clients"]), w.bare.ID), specGroupClientShape)
		}},
	"POST /client_groups/{id}/remove_clients": {"removing clients answers {client_group} without them", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/client_groups/%d/remove_clients", w.o.NewGroup(t, "", w.bare.ID)),
				map[string]any{"client_ids": []any{w.bare.UUID}}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			g := specCheck(t, "client_group", apitest.WantEnvelope(t, r, 200, "client_group"), specGroupShape)
			if n := len(apitest.List(t, g["clients"])); n != 0 {
				t.Errorf("%d members left, want 0", n)
			}
		}},

	"POST /isp_contracts": {"contract create answers 201 {isp_contract} with ISP name and client", 201,
		func(t *testing.T, w *specWorld) (string, any) {
			c := w.o.NewClient(t, store.NewClient{Label: apitest.Ptr("Spec contract probe")})
			w.passed = c.UUID
			isp := w.create(t, "/isps", "isp", map[string]any{"name": "Spec ISP", "country": "DE", "type": "fixed"})
			return "/isp_contracts", map[string]any{"client_id": c.ID, "isp_id": isp, "name": "Fiber 500", "upload_speed": 100,
				"download_speed": 500, "monthly_price": 59.5, "currency": "EUR", "assumed_tariff": "home",
				"connection_type": "fiber", "valid_from": w.from.Format(time.RFC3339)}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			c := specCheck(t, "isp_contract", apitest.WantEnvelope(t, r, 201, "isp_contract"), specContractShape)
			for k, v := range map[string]any{"name": "Fiber 500", "upload_speed": 100, "download_speed": 500,
				"monthly_price": 59.5, "currency": "EUR", "assumed_tariff": "home", "connection_type": "fiber",
				"valid_from": w.from, "valid_until": nil, "isp_name": "Spec ISP", "client_uuid": w.passed,
				"client_label": "Spec contract probe"} {
				specWant(t, "isp_contract", c, k, v)
			}
		}},
	"GET /isp_contracts/{id}": {"contract get answers {isp_contract}", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/isp_contracts/%d", w.contract), nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			c := specCheck(t, "isp_contract", apitest.WantEnvelope(t, r, 200, "isp_contract"), specContractShape)
			for k, v := range map[string]any{"isp_id": w.isp, "client_id": w.probe.ID, "isp_name": "Telekom",
				"monthly_price": 49.99, "assumed_tariff": "business", "valid_from": w.from, "client_uuid": w.probe.UUID} {
				specWant(t, "isp_contract", c, k, v)
			}
		}},
	"PUT /isp_contracts/{id}": {"contract update answers {isp_contract} with the new values", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			id := w.o.NewContract(t, store.NewContract{MonthlyPrice: apitest.Ptr(10.0), Currency: apitest.Ptr("EUR")})
			return fmt.Sprintf("/isp_contracts/%d", id), map[string]any{"monthly_price": 12.5, "currency": "chf", "name": "Renamed"}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			c := specCheck(t, "isp_contract", apitest.WantEnvelope(t, r, 200, "isp_contract"), specContractShape)
			for k, v := range map[string]any{"monthly_price": 12.5, "currency": "CHF", "name": "Renamed"} {
				specWant(t, "isp_contract", c, k, v)
			}
		}},
	"DELETE /isp_contracts/{id}": {"contract delete answers {}", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/isp_contracts/%d", w.o.NewContract(t, store.NewContract{})), nil
		}, nil},
	"POST /isp_contracts/{id}/end": {"contract end answers {isp_contract} ended now", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/isp_contracts/%d/end", w.o.NewContract(t, store.NewContract{})), nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			c := specCheck(t, "isp_contract", apitest.WantEnvelope(t, r, 200, "isp_contract"), specContractShape)
			specRecent(t, "isp_contract.valid_until", c["valid_until"])
		}},

	"GET /data_owner/settings": {"settings get answers {settings} with all nine keys", 200,
		func(t *testing.T, w *specWorld) (string, any) { return "/data_owner/settings", nil },
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			s := specCheck(t, "settings", apitest.WantEnvelope(t, r, 200, "settings"), specSettingsShape)
			specWant(t, "settings", s, "offline_threshold_minutes_default", 60)
		}},
	"PUT /data_owner/settings": {"settings update answers {settings} with the new values", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return "/data_owner/settings", map[string]any{"offline_threshold_minutes": 90, "study_failure_detection_enabled": false}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			s := specCheck(t, "settings", apitest.WantEnvelope(t, r, 200, "settings"), specSettingsShape)
			specWant(t, "settings", s, "offline_threshold_minutes", 90)
			specWant(t, "settings", s, "study_failure_detection_enabled", false)
			specWant(t, "settings", s, "client_offline_detection_enabled", true)
		}},
	"GET /ai_assistant/status": {"AI assistant status answers {enabled, data_owner}", 200,
		func(t *testing.T, w *specWorld) (string, any) { return "/ai_assistant/status", nil },
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			s := specCheck(t, "body", r.JSON, specAiStatusShape)
			specWant(t, "body", s, "data_owner", w.o.Slug)
			specWant(t, "body", s, "enabled", true) // the test server's provider is a fake (apitest.FakeAI)
		}},
	"GET /ai_conversations": {"conversation list answers {conversations} without messages", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			w.passed = fmt.Sprint(specAIConversation(t, w))
			return "/ai_conversations", nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			list := apitest.List(t, apitest.WantEnvelope(t, r, 200, "conversations"))
			for i, item := range list {
				specCheck(t, fmt.Sprintf("conversations[%d]", i), item, specAiConversationShape)
			}
			c := specFind(t, list, apitest.Int(t, json.Number(w.passed)))
			specWant(t, "conversation", c, "message_count", 1)
			specWant(t, "conversation", c, "display_title", "How is my fleet?")
		}},
	"POST /ai_conversations": {"conversation create answers 201 {conversation} with messages as sent", 201,
		func(t *testing.T, w *specWorld) (string, any) {
			m := aiUserMessage("Hi")
			m["metadata"] = map[string]any{"kept": true}
			return "/ai_conversations", map[string]any{"title": "Mine", "messages": []any{m}}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			c := specCheck(t, "conversation", apitest.WantEnvelope(t, r, 201, "conversation"), specAiConversationFullShape)
			specWant(t, "conversation", c, "title", "Mine")
			specWant(t, "conversation", c, "display_title", "Mine")
			specWant(t, "conversation", c, "preview", "Hi")
			msg := apitest.Object(t, apitest.List(t, c["messages"])[0])
			if m, _ := msg["metadata"].(map[string]any); m["kept"] != true {
				t.Errorf("message %v lost its extra property", msg)
			}
		}},
	"GET /ai_conversations/{id}": {"conversation get answers {conversation} with messages", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/ai_conversations/%d", specAIConversation(t, w)), nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			c := specCheck(t, "conversation", apitest.WantEnvelope(t, r, 200, "conversation"), specAiConversationFullShape)
			specWant(t, "conversation", c, "message_count", 1)
		}},
	"PATCH /ai_conversations/{id}": {"conversation rename answers {conversation} with the title", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/ai_conversations/%d", specAIConversation(t, w)), map[string]any{"title": "Renamed"}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			c := specCheck(t, "conversation", apitest.WantEnvelope(t, r, 200, "conversation"), specAiConversationFullShape)
			specWant(t, "conversation", c, "title", "Renamed")
			specWant(t, "conversation", c, "display_title", "Renamed")
		}},
	"DELETE /ai_conversations/{id}": {"conversation delete answers {} and the conversation is gone", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			w.passed = fmt.Sprintf("/ai_conversations/%d", specAIConversation(t, w))
			return w.passed, nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			apitest.WantNotFound(t, w.admin(t, http.MethodGet, w.passed, nil), "conversation")
		}},
	"PUT /ai_conversations/{id}/complete": {"completion answers {conversation} with the assistant's message", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/ai_conversations/%d/complete", specAIConversation(t, w)),
				map[string]any{"message": aiUserMessage("And now?")}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			c := specCheck(t, "conversation", apitest.WantEnvelope(t, r, 200, "conversation"), specAiConversationFullShape)
			msgs := apitest.List(t, c["messages"])
			specWant(t, "conversation", c, "message_count", 3)
			specWant(t, "answer", apitest.Object(t, msgs[2]), "role", "assistant")
		}},
	"PATCH /ai_conversations/{id}/generated_title": {"generated title answers {conversation} titled by the model", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return fmt.Sprintf("/ai_conversations/%d/generated_title", specAIConversation(t, w)), nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			c := specCheck(t, "conversation", apitest.WantEnvelope(t, r, 200, "conversation"), specAiConversationFullShape)
			specWant(t, "conversation", c, "display_title", "ok") // the fake model's default answer
		}},
	"POST /ai_assistant/explain_anomaly": {"explain anomaly answers {conversation} with the explanation", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			specAcceptAI(t, w)
			id := apitest.Unique("rule-spec") + "::spike::1740787200"
			w.o.InsertDocuments(t, "anomaly_event", anomEvent(id, w.probe.UUID, "new"))
			return "/ai_assistant/explain_anomaly", map[string]any{"anomaly_id": id}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			c := specCheck(t, "conversation", apitest.WantEnvelope(t, r, 200, "conversation"), specAiConversationFullShape)
			specWant(t, "conversation", c, "message_count", 2)
		}},
	"GET /ai_assistant/usage": {"usage answers {usage} with the AI usage fields", 200,
		func(t *testing.T, w *specWorld) (string, any) { return "/ai_assistant/usage", nil },
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			specCheck(t, "usage", apitest.WantEnvelope(t, r, 200, "usage"), specAiUsageShape)
		}},
	"PUT /ai_assistant/token_limit": {"token limit answers {usage} with the new limit", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return "/ai_assistant/token_limit", map[string]any{"limit": 123456}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			u := specCheck(t, "usage", apitest.WantEnvelope(t, r, 200, "usage"), specAiUsageShape)
			specWant(t, "usage", u, "limit", 123456)
			w.admin(t, http.MethodPut, "/ai_assistant/token_limit", map[string]any{"limit": nil})
		}},
	"GET /license_usage": {"license usage answers the extended report", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			c := w.o.NewClient(t, store.NewClient{})
			w.o.NewMeasurements(t, apitest.MeasurementOpts{ClientUUID: c.UUID, Subject: "youtube"},
				apitest.MeasurementOpts{ClientUUID: c.UUID, Subject: "netflix"})
			return "/license_usage?extended=true", nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			rep := specCheck(t, "report", r.JSON, specLicenseReportShape)
			months := apitest.List(t, rep["monthly_usage"])
			if len(months) != 12 {
				t.Errorf("%d months, want the default 12", len(months))
			}
			for i, m := range months {
				mu := specCheck(t, fmt.Sprintf("monthly_usage[%d]", i), m, specLicenseMonthShape)
				for k, b := range mu["breakdown_by_subject_count"].(map[string]any) {
					specCheck(t, "breakdown_by_subject_count."+k, b, specShape{"clients": "int", "units": "int"})
				}
			}
			last := months[len(months)-1].(map[string]any)
			two, _ := last["breakdown_by_subject_count"].(map[string]any)["2"].(map[string]any)
			if two == nil || apitest.Int(t, two["clients"]) != 1 || apitest.Int(t, two["units"]) != 2 {
				t.Errorf("this month = %v, want one client with 2 subjects", last)
			}
			for i, k := range apitest.List(t, rep["usage_by_registration_key"]) {
				e := specCheck(t, fmt.Sprintf("usage_by_registration_key[%d]", i), k, specLicenseKeyShape)
				for j, m := range apitest.List(t, e["monthly_usage"]) {
					specCheck(t, fmt.Sprintf("usage_by_registration_key[%d].monthly_usage[%d]", i, j), m, specLicenseKeyMonthShape)
				}
			}
		}},
	"GET /license_usage/export": {"license usage export answers CSV", 200,
		func(t *testing.T, w *specWorld) (string, any) { return "/license_usage/export", nil },
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			if !strings.HasPrefix(string(r.Raw), strings.Join(rest.LicenseUsageCSVHeader, ",")+"\n") {
				t.Errorf("CSV does not start with its header: %.200s", r.Raw)
			}
		}},
	"GET /software/downloads": {"software downloads answer provider, customer, components", 200,
		func(t *testing.T, w *specWorld) (string, any) { return "/software/downloads", nil },
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			d := specCheck(t, "downloads", r.JSON, specDownloadsShape)
			specWant(t, "downloads", d, "customer", w.o.Slug)
		}},
}

// specKeyUntil is the valid_until the key tests send.
var specKeyUntil = time.Now().UTC().Truncate(time.Second).AddDate(0, 3, 0)

// specCheckClient checks a client and the documented shape of its nested
// objects.
func specCheckClient(t testing.TB, where string, v any, shape specShape) map[string]any {
	t.Helper()
	c := specCheck(t, where, v, shape)
	for _, k := range []string{"delivered_public_config", "delivered_automator_config"} {
		if c[k] != nil {
			specCheck(t, where+"."+k, c[k], specConfigRefShape)
		}
	}
	if c["registration_key"] != nil {
		specCheck(t, where+".registration_key", c["registration_key"], specClientKeyShape)
	}
	if c["current_isp_contract"] != nil {
		specCheck(t, where+".current_isp_contract", c["current_isp_contract"], specClientContractShape)
	}
	for i, g := range apitest.List(t, c["client_groups"]) {
		specCheck(t, fmt.Sprintf("%s.client_groups[%d]", where, i), g, specClientGroupShape)
	}
	if cfg, ok := c["configuration"]; ok {
		obj, _ := cfg.(map[string]any)
		if _, ok := obj["managed"].(bool); !ok {
			t.Errorf("%s.configuration lacks the boolean managed: %v", where, cfg)
		}
	}
	if al := c["access_level"]; al != "owner" && al != "shared" {
		t.Errorf("%s.access_level = %v, want owner or shared", where, al)
	}
	return c
}

// TestSpecEveryAdminRoute calls every route of rest.AdminRoutes with an
// org_admin key and checks status, envelope, keys, types and values.
func TestSpecEveryAdminRoute(t *testing.T) {
	w := specSeed(t, "spec-routes")
	seen := map[string]bool{}
	for _, rt := range rest.AdminRoutes {
		pattern := rt.Method + " " + rt.Path
		c, ok := specRoutes[pattern]
		if !ok {
			t.Errorf("route %s has no entry in specRoutes", pattern)
			continue
		}
		seen[pattern] = true
		t.Run(c.name, func(t *testing.T) {
			if rt.Status != c.status {
				t.Errorf("%s: route table answers %d, the spec says %d", pattern, rt.Status, c.status)
			}
			path, body := c.call(t, w)
			r := w.admin(t, rt.Method, path, body)
			if r.Status != c.status {
				t.Fatalf("%s %s: status %d, want %d: %s", rt.Method, path, r.Status, c.status, r.Raw)
			}
			if ct := r.Header.Get("Content-Type"); rt.CSV == nil && !strings.HasPrefix(ct, "application/json") {
				t.Errorf("content type %q, want application/json", ct)
			} else if rt.CSV != nil && ct != rest.CSVContentType {
				t.Errorf("content type %q, want %q", ct, rest.CSVContentType)
			}
			if rt.Method == http.MethodDelete && rt.Empty {
				if obj := r.Obj(t); len(obj) != 0 {
					t.Errorf("DELETE answered %s, want {}", r.Raw)
				}
				apitest.WantNotFound(t, w.admin(t, http.MethodGet, path, nil), "GET after delete")
			}
			if c.check != nil {
				c.check(t, w, r)
			}
		})
	}
	for pattern := range specRoutes {
		if !seen[pattern] {
			t.Errorf("specRoutes entry %q names no route of rest.AdminRoutes", pattern)
		}
	}
}

// TestSpecIspListFilters covers the query parameters of GET /isps.
func TestSpecIspListFilters(t *testing.T) {
	e := apitest.Get(t)
	w := &specWorld{e: e, o: e.NewOwner(t, "spec-ispfilter")}
	ids := map[string]int64{}
	for _, isp := range []struct {
		name, country, typ string
		verified           any
	}{
		{"Alpha Net", "DE", "fixed", true},
		{"Beta Mobil", "DE", "mobile", false},
		{"Gamma Sky", "AT", "satellite", nil},
		{"alphabet fiber", "AT", "fixed", nil},
	} {
		ids[isp.name] = w.create(t, "/isps", "isp", map[string]any{"name": isp.name, "country": isp.country, "type": isp.typ})
		w.e.SQL(t, `UPDATE isps SET verified = $2 WHERE id = $1`, ids[isp.name], isp.verified)
	}
	for i := 1; i <= 25; i++ {
		w.create(t, "/isps", "isp", map[string]any{"name": fmt.Sprintf("Capped %02d", i), "country": "FR", "type": "other"})
	}
	all := []string{"Alpha Net", "alphabet fiber", "Beta Mobil"}
	for i := 1; i <= 25; i++ {
		all = append(all, fmt.Sprintf("Capped %02d", i))
	}
	all = append(all, "Gamma Sky")

	cases := []struct {
		name    string
		query   string
		want    []string // names, in the answer's order
		compact bool
		count   int // when want is nil: the number of items
	}{
		{"no filter lists every ISP in the full shape", "", all, false, 0},
		{"country filter keeps that country", "?country=AT", []string{"alphabet fiber", "Gamma Sky"}, false, 0},
		{"country filter takes a lower-case code", "?country=de", []string{"Alpha Net", "Beta Mobil"}, false, 0},
		{"type filter keeps that type", "?type=fixed", []string{"Alpha Net", "alphabet fiber"}, false, 0},
		{"type filter with an unknown value is ignored", "?type=balloon", all, false, 0},
		{"verified=true keeps verified ISPs", "?verified=true", []string{"Alpha Net"}, false, 0},
		{"verified=false keeps ISPs marked unverified", "?verified=false", []string{"Beta Mobil"}, false, 0},
		{"filters combine", "?country=DE&type=mobile", []string{"Beta Mobil"}, false, 0},
		{"name filter returns the compact shape", "?name=Gamma", []string{"Gamma Sky"}, true, 0},
		{"name filter is a case-insensitive substring", "?name=ALPHA", []string{"Alpha Net", "alphabet fiber"}, true, 0},
		{"name filter combines with country", "?name=alpha&country=AT", []string{"alphabet fiber"}, true, 0},
		{"name filter caps the answer at 20", "?name=capped", nil, true, 20},
		{"name filter matching nothing answers an empty list", "?name=zzz", []string{}, true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			list := apitest.List(t, apitest.WantEnvelope(t, w.admin(t, http.MethodGet, "/isps"+c.query, nil), 200, "isps"))
			shape := specIspShape
			if c.compact {
				shape = specIspCompactShape
			}
			names := make([]string, len(list))
			for i, item := range list {
				isp := specCheck(t, fmt.Sprintf("isps[%d]", i), item, shape)
				names[i] = isp["name"].(string)
			}
			if c.want == nil {
				if len(list) != c.count {
					t.Errorf("%d ISPs, want %d", len(list), c.count)
				}
				return
			}
			// The spec sets no order: compare as sets.
			want := slices.Clone(c.want)
			slices.Sort(names)
			slices.Sort(want)
			if !slices.Equal(names, want) {
				t.Errorf("names = %q, want %q", names, want)
			}
		})
	}

	t.Run("compact items carry id, name and country values", func(t *testing.T) {
		list := apitest.List(t, apitest.WantEnvelope(t, w.admin(t, http.MethodGet, "/isps?name=Beta", nil), 200, "isps"))
		if len(list) != 1 {
			t.Fatalf("%d ISPs, want 1", len(list))
		}
		isp := list[0].(map[string]any)
		specWant(t, "isp", isp, "id", ids["Beta Mobil"])
		specWant(t, "isp", isp, "country", "DE")
	})
	t.Run("a verified value that is not a boolean is a 400", func(t *testing.T) {
		r := w.admin(t, http.MethodGet, "/isps?verified=maybe", nil)
		if r.Status != http.StatusBadRequest {
			t.Errorf("status %d, want 400: %s", r.Status, r.Raw)
		}
	})
}

// TestSpecIspMergeInto covers POST /isps/{id}/merge_into.
func TestSpecIspMergeInto(t *testing.T) {
	w := specSeed(t, "spec-merge")
	newIsp := func(t *testing.T, name string, alt, asn []string) int64 {
		if alt == nil {
			alt = []string{}
		}
		if asn == nil {
			asn = []string{}
		}
		id := w.create(t, "/isps", "isp", map[string]any{"name": name, "country": "DE", "type": "fixed"})
		w.e.SQL(t, `UPDATE isps SET alternative_names = $2, as_numbers = $3 WHERE id = $1`, id, alt, asn)
		return id
	}

	t.Run("merge moves contracts, alternative names and AS numbers and answers the target", func(t *testing.T) {
		target := newIsp(t, "Deutsche Telekom", []string{"DTAG"}, []string{"AS3320"})
		// The world's ISP has two contracts and two details.
		r := w.admin(t, http.MethodPost, fmt.Sprintf("/isps/%d/merge_into", w.isp), map[string]any{"target_id": target})
		got := specCheck(t, "isp", apitest.WantEnvelope(t, r, 200, "isp"), specIspShape)
		specWant(t, "isp", got, "id", target)
		specWant(t, "isp", got, "name", "Deutsche Telekom")
		specWant(t, "isp", got, "isp_contracts_count", 2)
		alt := apitest.Strings(t, got["alternative_names"])
		for _, want := range []string{"DTAG", "Telekom"} {
			if !slices.Contains(alt, want) {
				t.Errorf("alternative_names %q lack %q", alt, want)
			}
		}
		specWant(t, "isp", got, "as_numbers", []string{"AS3320"})

		apitest.WantNotFound(t, w.admin(t, http.MethodGet, fmt.Sprintf("/isps/%d", w.isp), nil), "GET after delete")
		full := specCheck(t, "target", apitest.WantEnvelope(t, w.admin(t, http.MethodGet, fmt.Sprintf("/isps/%d", target), nil), 200, "isp"), specIspGetShape)
		specWant(t, "target", full, "isp_details_count", 2)
		contracts := apitest.List(t, full["isp_contracts"])
		for _, id := range []int64{w.contract, w.oldContract} {
			specWant(t, "moved contract", specFind(t, contracts, id), "isp_id", target)
		}
		c := apitest.WantEnvelope(t, w.admin(t, http.MethodGet, fmt.Sprintf("/clients/%d", w.probe.ID), nil), 200, "client").(map[string]any)
		cur := c["current_isp_contract"].(map[string]any)
		specWant(t, "current contract", cur, "isp_id", target)
		specWant(t, "current contract", cur, "isp_name", "Deutsche Telekom")
	})

	t.Run("AS numbers and alternative names of both ISPs are united", func(t *testing.T) {
		src := newIsp(t, "Kabel BW", []string{"KBW"}, []string{"AS29562", "AS3320"})
		target := newIsp(t, "Vodafone", []string{"Vodafone Kabel"}, []string{"AS3209"})
		got := apitest.WantEnvelope(t, w.admin(t, http.MethodPost, fmt.Sprintf("/isps/%d/merge_into", src), map[string]any{"target_id": target}), 200, "isp").(map[string]any)
		as := apitest.Strings(t, got["as_numbers"])
		slices.Sort(as)
		if !slices.Equal(as, []string{"AS29562", "AS3209", "AS3320"}) {
			t.Errorf("as_numbers = %q", as)
		}
		alt := apitest.Strings(t, got["alternative_names"])
		for _, want := range []string{"KBW", "Vodafone Kabel", "Kabel BW"} {
			if !slices.Contains(alt, want) {
				t.Errorf("alternative_names %q lack %q", alt, want)
			}
		}
	})

	cases := []struct {
		name   string
		target func(t *testing.T, src int64) any
		status int
	}{
		{"merging into itself is a 422", func(t *testing.T, src int64) any { return src }, http.StatusUnprocessableEntity},
		{"merging into an unknown ISP is a 404", func(t *testing.T, src int64) any { return int64(1) << 40 }, http.StatusNotFound},
		{"merging into another data owner's ISP is a 404", func(t *testing.T, src int64) any {
			other := apitest.WantEnvelope(t, w.e.Admin(t, http.MethodPost, "/isps", w.partner.Key,
				map[string]any{"name": "Foreign", "country": "DE", "type": "fixed"}), 201, "isp")
			return other.(map[string]any)["id"]
		}, http.StatusNotFound},
		{"a target_id that is not an integer is a 422", func(t *testing.T, src int64) any { return "seven" }, http.StatusUnprocessableEntity},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := newIsp(t, apitest.Unique("Source"), []string{"kept"}, nil)
			r := w.admin(t, http.MethodPost, fmt.Sprintf("/isps/%d/merge_into", src), map[string]any{"target_id": c.target(t, src)})
			if r.Status != c.status {
				t.Fatalf("status %d, want %d: %s", r.Status, c.status, r.Raw)
			}
			if msg, _ := r.Obj(t)["message"].(string); msg == "" {
				t.Errorf("error without a message: %s", r.Raw)
			}
			kept := apitest.WantEnvelope(t, w.admin(t, http.MethodGet, fmt.Sprintf("/isps/%d", src), nil), 200, "isp").(map[string]any)
			specWant(t, "source", kept, "alternative_names", []string{"kept"})
		})
	}
	t.Run("merging an unknown ISP is a 404", func(t *testing.T) {
		target := newIsp(t, apitest.Unique("Target"), nil, nil)
		r := w.admin(t, http.MethodPost, fmt.Sprintf("/isps/%d/merge_into", int64(1)<<40), map[string]any{"target_id": target})
		if r.Status != http.StatusNotFound {
			t.Errorf("status %d, want 404: %s", r.Status, r.Raw)
		}
	})
}

// TestSpecClientFields covers every documented client field, in the list
// and in the single-record answer (by id and by UUID).
func TestSpecClientFields(t *testing.T) {
	w := specSeed(t, "spec-clients")
	list := apitest.List(t, apitest.WantEnvelope(t, w.admin(t, http.MethodGet, "/clients", nil), 200, "clients"))
	type want struct {
		fields    map[string]any
		publicCfg any // id of delivered_public_config, or nil
		automator any // id of delivered_automator_config, or nil
		groups    []string
		contract  any // id of current_isp_contract, or nil
		regKey    any // id of registration_key, or nil
	}
	cases := []struct {
		name   string
		client apitest.Client
		want   want
	}{
		{"owned client shows every field and its assigned config", w.probe, want{
			fields: map[string]any{"uuid": w.probe.UUID, "type": "automator", "access_level": "owner",
				"label": "Probe Berlin 1", "extra_label": "rack 4", "tags": []string{"berlin", "fiber"},
				"disabled_at": w.measured, "disabled_reason": "maintenance", "last_measurement_at": w.measured,
				"last_seen_at": w.seenAt, "last_client_type": "lab", "last_client_version": "4.2.0",
				"config_managed": true, "offline": false, "anomalies_muted": true, "offline_notifications_muted": true,
				"system_health_notifications_muted": false},
			publicCfg: w.assignedPublic, automator: w.defaultAutomator, groups: []string{"Berlin"},
			contract: w.contract, regKey: w.regKeyID}},
		{"client without an assigned config gets the default", w.bare, want{
			fields: map[string]any{"uuid": w.bare.UUID, "type": "lab", "access_level": "owner", "label": nil,
				"extra_label": nil, "tags": nil, "disabled_at": nil, "last_seen_at": nil, "offline": nil,
				"config_managed": true, "anomalies_muted": false},
			publicCfg: w.defaultPublic, automator: w.defaultAutomator, groups: []string{}}},
		{"shared client shows no configuration of its owner", w.shared, want{
			fields: map[string]any{"uuid": w.shared.UUID, "access_level": "shared", "label": "Partner probe",
				"config_managed": nil},
			groups: []string{}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			get := func(path string) map[string]any {
				return specCheckClient(t, "client", apitest.WantEnvelope(t, w.admin(t, http.MethodGet, path, nil), 200, "client"), specClientGetShape)
			}
			for where, obj := range map[string]map[string]any{
				"list item": specCheckClient(t, "list item", specFind(t, list, c.client.ID), specClientShape),
				"by id":     get(fmt.Sprintf("/clients/%d", c.client.ID)),
				"by uuid":   get("/clients/" + c.client.UUID),
			} {
				specWant(t, where, obj, "id", c.client.ID)
				for k, v := range c.want.fields {
					specWant(t, where, obj, k, v)
				}
				specWantRef(t, where+".delivered_public_config", obj["delivered_public_config"], c.want.publicCfg)
				specWantRef(t, where+".delivered_automator_config", obj["delivered_automator_config"], c.want.automator)
				specWantRef(t, where+".current_isp_contract", obj["current_isp_contract"], c.want.contract)
				specWantRef(t, where+".registration_key", obj["registration_key"], c.want.regKey)
				var groups []string
				for _, g := range apitest.List(t, obj["client_groups"]) {
					groups = append(groups, g.(map[string]any)["name"].(string))
				}
				if !slices.Equal(groups, c.want.groups) {
					t.Errorf("%s.client_groups = %q, want %q", where, groups, c.want.groups)
				}
			}
		})
	}

	t.Run("delivered config carries id, name and is_default", func(t *testing.T) {
		c := apitest.WantEnvelope(t, w.admin(t, http.MethodGet, fmt.Sprintf("/clients/%d", w.probe.ID), nil), 200, "client").(map[string]any)
		assigned := c["delivered_public_config"].(map[string]any)
		specWant(t, "assigned", assigned, "name", "Assigned measurements")
		specWant(t, "assigned", assigned, "is_default", false)
		bare := apitest.WantEnvelope(t, w.admin(t, http.MethodGet, fmt.Sprintf("/clients/%d", w.bare.ID), nil), 200, "client").(map[string]any)
		def := bare["delivered_public_config"].(map[string]any)
		specWant(t, "default", def, "name", "Default measurements")
		specWant(t, "default", def, "is_default", true)
		cfg := c["configuration"].(map[string]any)
		specWant(t, "configuration", cfg, "managed", true)
	})
	t.Run("current contract carries isp_name and the contract's values", func(t *testing.T) {
		c := specFind(t, list, w.probe.ID)
		cur := c["current_isp_contract"].(map[string]any)
		for k, v := range map[string]any{"isp_id": w.isp, "isp_name": "Telekom", "client_id": w.probe.ID,
			"upload_speed": 50, "download_speed": 250, "monthly_price": 49.99, "currency": "EUR",
			"assumed_tariff": "business", "connection_type": "fiber", "name": "Business 250",
			"valid_from": w.from, "valid_until": nil} {
			specWant(t, "current_isp_contract", cur, k, v)
		}
	})
	t.Run("registration key inside the client carries its values", func(t *testing.T) {
		k := specFind(t, list, w.probe.ID)["registration_key"].(map[string]any)
		for f, v := range map[string]any{"registration_key": w.regKey, "comment": "rollout", "valid_until": w.regKeyUntil,
			"num_registrations_left": 5, "usage_limit_days": 30} {
			specWant(t, "registration_key", k, f, v)
		}
	})
	t.Run("a client seen longer ago than the threshold is offline", func(t *testing.T) {
		long := time.Now().Add(-3 * time.Hour)
		c := w.o.NewClient(t, store.NewClient{Type: "lab", LastSeenAt: &long})
		got := apitest.WantEnvelope(t, w.admin(t, http.MethodGet, fmt.Sprintf("/clients/%d", c.ID), nil), 200, "client").(map[string]any)
		specWant(t, "client", got, "offline", true)
	})
	t.Run("unknown, malformed and foreign client ids are 404", func(t *testing.T) {
		foreign := w.partner.NewClient(t, store.NewClient{Type: "lab"})
		for _, id := range []string{"999999999", uuid.NewString(), "not-a-client", fmt.Sprint(foreign.ID), foreign.UUID} {
			if r := w.admin(t, http.MethodGet, "/clients/"+id, nil); r.Status != http.StatusNotFound {
				t.Errorf("GET /clients/%s: %d, want 404: %s", id, r.Status, r.Raw)
			}
		}
	})
}

// specWantRef checks that a nested object is null (want nil) or has id want.
func specWantRef(t testing.TB, where string, v any, want any) {
	t.Helper()
	if want == nil {
		if v != nil {
			t.Errorf("%s = %v, want null", where, v)
		}
		return
	}
	obj, ok := v.(map[string]any)
	if !ok {
		t.Errorf("%s = %v, want an object with id %v", where, v, want)
		return
	}
	specWant(t, where, obj, "id", want)
}

// TestSpecClientLabelAvailability covers GET /clients/check_label_availability.
func TestSpecClientLabelAvailability(t *testing.T) {
	w := specSeed(t, "spec-labels")
	// A partner's client with a label the owner has not used.
	w.partner.NewClient(t, store.NewClient{Type: "lab", Label: apitest.Ptr("Partner only")})
	cases := []struct {
		name      string
		label     string
		excludeID string
		available bool
	}{
		{"a taken label is not available", "Probe Berlin 1", "", false},
		{"the check ignores case", "PROBE berlin 1", "", false},
		{"the check ignores surrounding whitespace", "  Probe Berlin 1\t", "", false},
		{"a new label is available", "Probe Berlin 2", "", true},
		{"an empty label counts as available", "", "", true},
		{"a whitespace-only label counts as available", "   ", "", true},
		{"another data owner's label is available", "Partner only", "", true},
		{"exclude_id by integer id leaves that client out", "probe berlin 1", fmt.Sprint(w.probe.ID), true},
		{"exclude_id by UUID leaves that client out", "probe berlin 1", w.probe.UUID, true},
		{"exclude_id by upper-case UUID leaves that client out", "probe berlin 1", strings.ToUpper(w.probe.UUID), true},
		{"exclude_id of another client keeps the label taken", "Probe Berlin 1", fmt.Sprint(w.bare.ID), false},
		{"exclude_id of another client's UUID keeps the label taken", "Probe Berlin 1", w.bare.UUID, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := url.Values{"label": {c.label}}
			if c.excludeID != "" {
				q.Set("exclude_id", c.excludeID)
			}
			r := w.admin(t, http.MethodGet, "/clients/check_label_availability?"+q.Encode(), nil)
			if r.Status != http.StatusOK {
				t.Fatalf("status %d: %s", r.Status, r.Raw)
			}
			a := specCheck(t, "body", r.JSON, specLabelShape)
			specWant(t, "body", a, "available", c.available)
			specWant(t, "body", a, "label", c.label)
		})
	}
	for _, bad := range []string{"probe-one", "12ab", "1.5"} {
		t.Run("exclude_id "+bad+" is a 400", func(t *testing.T) {
			q := url.Values{"label": {"x"}, "exclude_id": {bad}}
			r := w.admin(t, http.MethodGet, "/clients/check_label_availability?"+q.Encode(), nil)
			if r.Status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", r.Status, r.Raw)
			}
			if msg, _ := r.Obj(t)["message"].(string); !strings.Contains(msg, "exclude_id") {
				t.Errorf("message %q does not name exclude_id", msg)
			}
		})
	}
	t.Run("a missing label is a 400", func(t *testing.T) {
		if r := w.admin(t, http.MethodGet, "/clients/check_label_availability", nil); r.Status != http.StatusBadRequest {
			t.Errorf("status %d, want 400: %s", r.Status, r.Raw)
		}
	})
}

// TestSpecUserNotificationConfig covers the defaults and the partial update
// of notification_config.
func TestSpecUserNotificationConfig(t *testing.T) {
	e := apitest.Get(t)
	w := &specWorld{e: e, o: e.NewOwner(t, "spec-users")}
	newUser := func(t *testing.T, extra map[string]any) map[string]any {
		name := apitest.Unique("user")
		body := map[string]any{"email": name + "@example.org", "username": name, "role": "viewer"}
		maps.Copy(body, extra)
		return specCheck(t, "user", apitest.WantEnvelope(t, w.admin(t, http.MethodPost, "/client_admin_users", body), 201, "user"), specUserShape)
	}
	config := func(t *testing.T, u map[string]any) map[string]any {
		return specCheckSubset(t, "notification_config", u["notification_config"], specNotificationShape)
	}

	t.Run("create without notification_config has client_offline on and anomaly_events off", func(t *testing.T) {
		nc := config(t, newUser(t, nil))
		specWant(t, "notification_config", nc, "client_offline", true)
		specWant(t, "notification_config", nc, "anomaly_events", false)
	})
	t.Run("create with notification_config keeps the defaults it does not override", func(t *testing.T) {
		nc := config(t, newUser(t, map[string]any{"notification_config": map[string]any{"anomaly_events": true,
			"anomaly_events_frequency": "digest", "anomaly_events_digest_hours": 24}}))
		for k, v := range map[string]any{"anomaly_events": true, "client_offline": true,
			"anomaly_events_frequency": "digest", "anomaly_events_digest_hours": 24} {
			specWant(t, "notification_config", nc, k, v)
		}
	})
	t.Run("PUT writes only the keys present", func(t *testing.T) {
		u := newUser(t, nil)
		path := fmt.Sprintf("/client_admin_users/%v", u["id"])
		first := apitest.WantEnvelope(t, w.admin(t, http.MethodPut, path, map[string]any{"first_name": "Nina",
			"notification_config": map[string]any{"anomaly_events_frequency": "digest", "anomaly_events_digest_at_time": "07:30",
				"anomaly_events_digest_day_of_week": 1}}), 200, "user").(map[string]any)
		specWant(t, "after first PUT", config(t, first), "anomaly_events_frequency", "digest")
		second := apitest.WantEnvelope(t, w.admin(t, http.MethodPut, path, map[string]any{
			"notification_config": map[string]any{"client_degraded": true}}), 200, "user").(map[string]any)
		nc := config(t, second)
		for k, v := range map[string]any{"client_degraded": true, "anomaly_events_frequency": "digest",
			"anomaly_events_digest_at_time": "07:30", "anomaly_events_digest_day_of_week": 1,
			"client_offline": true, "anomaly_events": false} {
			specWant(t, "after second PUT", nc, k, v)
		}
		specWant(t, "after second PUT", second, "first_name", "Nina")
		stored := apitest.WantEnvelope(t, w.admin(t, http.MethodGet, path, nil), 200, "user").(map[string]any)
		specWant(t, "stored", config(t, stored), "anomaly_events_frequency", "digest")
		specWant(t, "stored", config(t, stored), "client_degraded", true)
	})
	t.Run("PUT with null removes a key", func(t *testing.T) {
		u := newUser(t, map[string]any{"notification_config": map[string]any{"anomaly_events_frequency": "immediate"}})
		path := fmt.Sprintf("/client_admin_users/%v", u["id"])
		got := apitest.WantEnvelope(t, w.admin(t, http.MethodPut, path, map[string]any{
			"notification_config": map[string]any{"anomaly_events_frequency": nil}}), 200, "user").(map[string]any)
		specWant(t, "notification_config", config(t, got), "anomaly_events_frequency", nil)
		specWant(t, "notification_config", config(t, got), "client_offline", true)
	})
	for _, c := range []struct {
		name  string
		cfg   map[string]any
		field string
	}{
		{"digest hours above 168 are refused", map[string]any{"anomaly_events_digest_hours": 169}, "notification_config.anomaly_events_digest_hours"},
		{"day of week 0 is refused", map[string]any{"anomaly_events_digest_day_of_week": 0}, "notification_config.anomaly_events_digest_day_of_week"},
		{"a digest time past 23:59 is refused", map[string]any{"anomaly_events_digest_at_time": "24:00"}, "notification_config.anomaly_events_digest_at_time"},
		{"an unknown frequency is refused", map[string]any{"anomaly_events_frequency": "hourly"}, "notification_config.anomaly_events_frequency"},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := newUser(t, nil)
			r := w.admin(t, http.MethodPut, fmt.Sprintf("/client_admin_users/%v", u["id"]), map[string]any{"notification_config": c.cfg})
			if r.Status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422: %s", r.Status, r.Raw)
			}
			errs, _ := r.Obj(t)["errors"].(map[string]any)
			if _, ok := errs[c.field]; !ok {
				t.Errorf("errors %v do not name %s", errs, c.field)
			}
		})
	}
}

// TestSpecApiKeyKinds covers which of the three key kinds shows its secret
// where: admin keys only in create, analytics keys everywhere, export keys
// only in create (key_preview elsewhere).
func TestSpecApiKeyKinds(t *testing.T) {
	e := apitest.Get(t)
	w := &specWorld{e: e, o: e.NewOwner(t, "spec-keys")}
	cases := []struct {
		name                        string
		path, one, many             string
		createShape, listShape      specShape
		prefix                      string
		secretInList, previewInList bool
	}{
		{"admin key shows api_key only when created", "/client_admin_api_keys", "client_admin_api_key", "client_admin_api_keys",
			specAdminKeyCreateShape, specAdminKeyShape, "client_admin-", false, true},
		{"analytics key shows api_key in list, get and create", "/client_analytics_api_keys", "client_analytics_api_key", "client_analytics_api_keys",
			specAnalyticsKeyShape, specAnalyticsKeyShape, "client_analytics-", true, false},
		{"export key shows api_key only when created and key_preview elsewhere", "/export_api_keys", "export_api_key", "export_api_keys",
			specExportKeyCreateShape, specExportKeyShape, "export-", false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := apitest.Unique("key")
			created := specCheck(t, "created", apitest.WantEnvelope(t, w.admin(t, http.MethodPost, c.path,
				map[string]any{"name": name, "valid_until": specKeyUntil.Format(time.RFC3339)}), 201, c.one), c.createShape)
			secret, _ := created["api_key"].(string)
			if !strings.HasPrefix(secret, c.prefix) {
				t.Errorf("api_key %q lacks prefix %q", secret, c.prefix)
			}
			id := apitest.Int(t, created["id"])
			for where, obj := range map[string]map[string]any{
				"list": specCheck(t, "list item", specFind(t, apitest.List(t, apitest.WantEnvelope(t, w.admin(t, http.MethodGet, c.path, nil), 200, c.many)), id), c.listShape),
				"get":  specCheck(t, "get", apitest.WantEnvelope(t, w.admin(t, http.MethodGet, fmt.Sprintf("%s/%d", c.path, id), nil), 200, c.one), c.listShape),
			} {
				specWant(t, where, obj, "name", name)
				specWant(t, where, obj, "valid_until", specKeyUntil)
				specWant(t, where, obj, "valid_from", apitest.Time(t, created["valid_from"]))
				if c.secretInList {
					specWant(t, where, obj, "api_key", secret)
				} else if _, ok := obj["api_key"]; ok {
					t.Errorf("%s carries api_key", where)
				}
				if c.previewInList {
					specWant(t, where, obj, "key_preview", auth.Preview(secret))
				}
			}
			// Delete, then both reads are 404 and the list lacks it.
			if r := w.admin(t, http.MethodDelete, fmt.Sprintf("%s/%d", c.path, id), nil); r.Status != http.StatusOK || len(r.Obj(t)) != 0 {
				t.Fatalf("delete: %d %s", r.Status, r.Raw)
			}
			apitest.WantNotFound(t, w.admin(t, http.MethodGet, fmt.Sprintf("%s/%d", c.path, id), nil), "GET after delete")
			for _, item := range apitest.List(t, apitest.WantEnvelope(t, w.admin(t, http.MethodGet, c.path, nil), 200, c.many)) {
				if apitest.Int(t, item.(map[string]any)["id"]) == id {
					t.Errorf("deleted key %d still listed", id)
				}
			}
		})
	}
	t.Run("a valid_until in the past is refused", func(t *testing.T) {
		r := w.admin(t, http.MethodPost, "/export_api_keys", map[string]any{"valid_until": "2001-01-01T00:00:00Z"})
		if r.Status != http.StatusUnprocessableEntity {
			t.Errorf("status %d, want 422: %s", r.Status, r.Raw)
		}
	})
	t.Run("an unknown effective_role is refused", func(t *testing.T) {
		r := w.admin(t, http.MethodPost, "/client_admin_api_keys", map[string]any{"effective_role": "superuser"})
		if r.Status != http.StatusUnprocessableEntity {
			t.Errorf("status %d, want 422: %s", r.Status, r.Raw)
		}
	})
}

// TestSpecServiceCredentialPassword covers the write-only password: never
// returned, password_set tells whether one is stored, and a blank or omitted
// password on PUT keeps the stored one.
func TestSpecServiceCredentialPassword(t *testing.T) {
	e := apitest.Get(t)
	w := &specWorld{e: e, o: e.NewOwner(t, "spec-creds")}
	cases := []struct {
		name      string
		create    map[string]any // beyond name and service
		update    map[string]any
		stored    string // "" = no password
		passwdSet bool
	}{
		{"omitted password on PUT keeps the stored one", map[string]any{"password": "pw-first-Q7"}, map[string]any{"username": "u2"}, "pw-first-Q7", true},
		{"blank password on PUT keeps the stored one", map[string]any{"password": "pw-first-Q7"}, map[string]any{"password": ""}, "pw-first-Q7", true},
		{"whitespace password on PUT keeps the stored one", map[string]any{"password": "pw-first-Q7"}, map[string]any{"password": "   "}, "pw-first-Q7", true},
		{"null password on PUT keeps the stored one", map[string]any{"password": "pw-first-Q7"}, map[string]any{"password": nil}, "pw-first-Q7", true},
		{"a new password on PUT replaces the stored one", map[string]any{"password": "pw-first-Q7"}, map[string]any{"password": "pw-second-Z3"}, "pw-second-Z3", true},
		{"a credential created without password has none", nil, map[string]any{"username": "u"}, "", false},
		{"a password set on PUT turns password_set on", nil, map[string]any{"password": "pw-late-K9"}, "pw-late-K9", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := map[string]any{"name": apitest.Unique("cred"), "service": "ookla"}
			maps.Copy(body, c.create)
			r := w.admin(t, http.MethodPost, "/service_credentials", body)
			created := specCheck(t, "created", apitest.WantEnvelope(t, r, 201, "service_credential"), specCredentialShape)
			specWant(t, "created", created, "password_set", c.create["password"] != nil)
			path := fmt.Sprintf("/service_credentials/%v", created["id"])
			u := w.admin(t, http.MethodPut, path, c.update)
			updated := specCheck(t, "updated", apitest.WantEnvelope(t, u, 200, "service_credential"), specCredentialShape)
			specWant(t, "updated", updated, "password_set", c.passwdSet)
			got := specCheck(t, "get", apitest.WantEnvelope(t, w.admin(t, http.MethodGet, path, nil), 200, "service_credential"), specCredentialShape)
			specWant(t, "get", got, "password_set", c.passwdSet)
			pw, set := specSealed(t, w, apitest.Int(t, created["id"]))
			if set != c.passwdSet || pw != c.stored {
				t.Errorf("stored password %q (set %v), want %q (set %v)", pw, set, c.stored, c.passwdSet)
			}
			for _, raw := range [][]byte{r.Raw, u.Raw} {
				if strings.Contains(string(raw), `"password"`) || (c.stored != "" && strings.Contains(string(raw), c.stored)) {
					t.Errorf("an answer carries the password: %s", raw)
				}
			}
		})
	}
	t.Run("username null on PUT clears it", func(t *testing.T) {
		id := w.create(t, "/service_credentials", "service_credential", map[string]any{"name": apitest.Unique("cred"), "service": "smtp", "username": "mailer"})
		got := apitest.WantEnvelope(t, w.admin(t, http.MethodPut, fmt.Sprintf("/service_credentials/%d", id), map[string]any{"username": nil}), 200, "service_credential").(map[string]any)
		specWant(t, "updated", got, "username", nil)
	})
	t.Run("a duplicate name is a 409", func(t *testing.T) {
		name := apitest.Unique("dup")
		w.create(t, "/service_credentials", "service_credential", map[string]any{"name": name, "service": "smtp"})
		r := w.admin(t, http.MethodPost, "/service_credentials", map[string]any{"name": strings.ToUpper(name), "service": "smtp"})
		if r.Status != http.StatusConflict {
			t.Errorf("status %d, want 409: %s", r.Status, r.Raw)
		}
	})
	t.Run("a service that is not a lower-case identifier is a 422", func(t *testing.T) {
		r := w.admin(t, http.MethodPost, "/service_credentials", map[string]any{"name": apitest.Unique("bad"), "service": "Ookla Speed"})
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("status %d, want 422: %s", r.Status, r.Raw)
		}
		if errs, _ := r.Obj(t)["errors"].(map[string]any); errs["service"] == nil {
			t.Errorf("errors do not name service: %s", r.Raw)
		}
	})
}

// TestSpecSettingsRoundTrip covers GET and PUT /data_owner/settings.
func TestSpecSettingsRoundTrip(t *testing.T) {
	e := apitest.Get(t)
	w := &specWorld{e: e, o: e.NewOwner(t, "spec-settings")}
	get := func(t *testing.T) map[string]any {
		return specCheck(t, "settings", apitest.WantEnvelope(t, w.admin(t, http.MethodGet, "/data_owner/settings", nil), 200, "settings"), specSettingsShape)
	}
	t.Run("a new data owner has the defaults", func(t *testing.T) {
		s := get(t)
		for k, v := range map[string]any{"ai_system_prompt": nil, "offline_threshold_minutes": nil,
			"offline_threshold_minutes_default": 60, "retention_days": nil, "retention_days_default": nil,
			"client_offline_detection_enabled":  true,
			"client_degraded_detection_enabled": true, "study_failure_detection_enabled": true,
			"client_offline_detection_enabled_on_server": true, "client_degraded_detection_enabled_on_server": true,
			"study_failure_detection_enabled_on_server": true,
			// the test server has no rate limiter: no bound on new web clients
			"analytics_new_clients": nil, "analytics_new_clients_default": nil, "analytics_new_clients_period": "24h0m0s"} {
			specWant(t, "settings", s, k, v)
		}
	})
	steps := []struct {
		name string
		body map[string]any
		want map[string]any
	}{
		{"PUT writes every writable key", map[string]any{"ai_system_prompt": "Answer in German", "offline_threshold_minutes": 15,
			"client_offline_detection_enabled": false, "client_degraded_detection_enabled": false, "study_failure_detection_enabled": false,
			"analytics_new_clients": 50},
			map[string]any{"ai_system_prompt": "Answer in German", "offline_threshold_minutes": 15, "client_offline_detection_enabled": false,
				"client_degraded_detection_enabled": false, "study_failure_detection_enabled": false, "analytics_new_clients": 50}},
		{"PUT with one key keeps the others", map[string]any{"client_degraded_detection_enabled": true},
			map[string]any{"ai_system_prompt": "Answer in German", "offline_threshold_minutes": 15, "client_offline_detection_enabled": false,
				"client_degraded_detection_enabled": true, "analytics_new_clients": 50}},
		{"PUT with null clears the prompt, the threshold and the bound", map[string]any{"ai_system_prompt": nil, "offline_threshold_minutes": nil,
			"analytics_new_clients": nil},
			map[string]any{"ai_system_prompt": nil, "offline_threshold_minutes": nil, "offline_threshold_minutes_default": 60,
				"client_degraded_detection_enabled": true, "analytics_new_clients": nil}},
		{"PUT sets the retention", map[string]any{"retention_days": 90},
			map[string]any{"retention_days": 90, "retention_days_default": nil, "client_degraded_detection_enabled": true}},
		{"PUT with null retention keeps everything again", map[string]any{"retention_days": nil},
			map[string]any{"retention_days": nil}},
		{"an empty PUT changes nothing", map[string]any{},
			map[string]any{"ai_system_prompt": nil, "client_offline_detection_enabled": false, "client_degraded_detection_enabled": true}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			put := specCheck(t, "settings", apitest.WantEnvelope(t, w.admin(t, http.MethodPut, "/data_owner/settings", s.body), 200, "settings"), specSettingsShape)
			stored := get(t)
			for k, v := range s.want {
				specWant(t, "PUT answer", put, k, v)
				specWant(t, "GET after PUT", stored, k, v)
			}
			specWant(t, "GET after PUT", stored, "client_offline_detection_enabled_on_server", true)
		})
	}
	for _, bad := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"a zero threshold is refused", map[string]any{"offline_threshold_minutes": 0}, "offline_threshold_minutes"},
		{"a zero retention is refused", map[string]any{"retention_days": 0}, "retention_days"},
		{"a negative retention is refused", map[string]any{"retention_days": -5}, "retention_days"},
		{"a retention over 100 years is refused", map[string]any{"retention_days": 40000}, "retention_days"},
		{"a retention that is not a whole number is refused", map[string]any{"retention_days": 1.5}, "retention_days"},
		{"a retention given as text is refused", map[string]any{"retention_days": "30"}, "retention_days"},
		{"a null detection flag is refused", map[string]any{"client_offline_detection_enabled": nil}, "client_offline_detection_enabled"},
		{"the on_server flags are not writable", map[string]any{"client_offline_detection_enabled_on_server": false}, "client_offline_detection_enabled_on_server"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			r := w.admin(t, http.MethodPut, "/data_owner/settings", bad.body)
			if r.Status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422: %s", r.Status, r.Raw)
			}
			if errs, _ := r.Obj(t)["errors"].(map[string]any); errs[bad.field] == nil {
				t.Errorf("errors do not name %s: %s", bad.field, r.Raw)
			}
		})
	}
}
