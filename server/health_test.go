package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// healthStates reads GET /fleet_health as client id -> state object.
func healthStates(t *testing.T, e *apitest.Env, key string) map[int64]map[string]any {
	t.Helper()
	list := apitest.List(t, apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, "/fleet_health", key, nil), http.StatusOK, "client_health_states"))
	out := map[int64]map[string]any{}
	for _, it := range list {
		s := apitest.Object(t, it)
		out[apitest.Int(t, s["client_id"])] = s
	}
	return out
}

func num(t *testing.T, v any) float64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v is not a number", v)
	}
	f, _ := n.Float64()
	return f
}

// TestSystemStatusRecordsListing: every field of the spec's record, newest
// first, paged with page/per_page and the Per-Page, Total, Link headers.
func TestSystemStatusRecordsListing(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "status")
	c := o.NewClient(t, store.NewClient{})
	now := time.Now().UTC().Truncate(time.Second)
	full := map[string]any{
		"run_id": "run-42", "study_ids": []string{"yt-1", "web-2"}, "measurement_ids": []int64{7, 8},
		"started_at": now.Add(-5 * time.Minute).Format(time.RFC3339), "finished_at": now.Format(time.RFC3339),
		"platform": "linux-arm64", "runtime_scope": "system", "sample_interval_seconds": 5,
		"connection_detail_trace_id": 99, "cpu_valid_sample_count": 60, "cpu_max_percent": 91.5, "cpu_final_percent": 20,
		"memory_valid_sample_count": 60, "memory_effective_total_bytes": 4294967296, "memory_max_percent": 70.25,
		"memory_final_percent": 61, "collection_errors": []string{"thermal sensor unreadable"},
		"connection_details": []map[string]any{{"id": 3, "type": "wifi", "client_time": now.Format(time.RFC3339),
			"ssid": "lab", "rssi": -61, "signal_strength": 78, "vendor_extra": "kept"}},
		"filesystems": []map[string]any{{"device": "/dev/mmcblk0p2", "mount": "/", "type": "ext4", "writable": true,
			"valid_sample_count": 60, "total_bytes": 31000000000, "minimum_available_bytes": 9000000000,
			"final_available_bytes": 9100000000, "average_percent": 70.5, "maximum_percent": 71, "final_percent": 70.6}},
	}
	oldest := o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: c.UUID, CreatedAt: now.Add(-3 * time.Minute), CPU: apitest.Ptr(10.0)})
	middle := o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: c.UUID, CreatedAt: now.Add(-2 * time.Minute), CPU: apitest.Ptr(12.5),
		Memory: apitest.Ptr(55.0), Extra: full})
	newest := o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: c.UUID, CreatedAt: now.Add(-1 * time.Minute)})
	other := o.NewClient(t, store.NewClient{})
	o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: other.UUID})

	path := fmt.Sprintf("/clients/%d/system_status_records", c.ID)
	r := e.Admin(t, http.MethodGet, path, o.Key, nil)
	list := apitest.List(t, apitest.WantEnvelope(t, r, http.StatusOK, "system_status_records"))
	var ids []int64
	for _, it := range list {
		ids = append(ids, apitest.Int(t, apitest.Object(t, it)["id"]))
	}
	if !reflect.DeepEqual(ids, []int64{newest, middle, oldest}) {
		t.Fatalf("records %v, want newest first %v", ids, []int64{newest, middle, oldest})
	}
	if r.Header.Get("Total") != "3" || r.Header.Get("Per-Page") != "25" {
		t.Errorf("Total %q Per-Page %q, want 3 and 25", r.Header.Get("Total"), r.Header.Get("Per-Page"))
	}

	rec := apitest.Object(t, list[1])
	apitest.SameJSON(t, "record", mustJSON(t, rec), fmt.Sprintf(`{
		"id": %d, "client_uuid": %q, "run_id": "run-42", "study_ids": ["yt-1", "web-2"], "measurement_ids": [7, 8],
		"started_at": %q, "finished_at": %q, "platform": "linux-arm64", "runtime_scope": "system",
		"sample_interval_seconds": 5, "connection_detail_trace_id": 99,
		"cpu_valid_sample_count": 60, "cpu_average_percent": 12.5, "cpu_max_percent": 91.5, "cpu_final_percent": 20,
		"memory_valid_sample_count": 60, "memory_effective_total_bytes": 4294967296, "memory_average_percent": 55,
		"memory_max_percent": 70.25, "memory_final_percent": 61,
		"filesystems": [{"writable": true, "valid_sample_count": 60, "device": "/dev/mmcblk0p2", "mount": "/", "type": "ext4",
			"total_bytes": 31000000000, "minimum_available_bytes": 9000000000, "final_available_bytes": 9100000000,
			"average_percent": 70.5, "maximum_percent": 71, "final_percent": 70.6}],
		"connection_details": [{"id": 3, "type": "wifi", "client_time": %q, "ssid": "lab", "rssi": -61,
			"signal_strength": 78, "vendor_extra": "kept"}],
		"collection_errors": ["thermal sensor unreadable"], "created_at": %q}`,
		middle, c.UUID, now.Add(-5*time.Minute).Format(time.RFC3339), now.Format(time.RFC3339), now.Format(time.RFC3339),
		now.Add(-2*time.Minute).Format(time.RFC3339)))
	// A record that carries only the required fields answers them, the
	// optional ones null.
	bare := apitest.Object(t, list[0])
	for _, k := range []string{"run_id", "study_ids", "measurement_ids", "filesystems", "connection_details", "collection_errors", "created_at"} {
		if bare[k] == nil {
			t.Errorf("required %s is null: %v", k, bare)
		}
	}
	if bare["cpu_average_percent"] != nil || bare["started_at"] != nil {
		t.Errorf("absent optional fields should be null: %v", bare)
	}

	t.Run("paging", func(t *testing.T) {
		r := e.Admin(t, http.MethodGet, path+"?per_page=2&page=2", o.Key, nil)
		list := apitest.List(t, apitest.WantEnvelope(t, r, http.StatusOK, "system_status_records"))
		if len(list) != 1 || apitest.Int(t, apitest.Object(t, list[0])["id"]) != oldest {
			t.Errorf("page 2 of 2 a page: %s", r.Raw)
		}
		if r.Header.Get("Total") != "3" || !strings.Contains(r.Header.Get("Link"), `rel="prev"`) {
			t.Errorf("headers %v", r.Header)
		}
		r = e.Admin(t, http.MethodGet, path+"?page=9", o.Key, nil)
		if l := apitest.List(t, apitest.WantEnvelope(t, r, http.StatusOK, "system_status_records")); len(l) != 0 || r.Header.Get("Total") != "3" {
			t.Errorf("past the end: %s Total %q", r.Raw, r.Header.Get("Total"))
		}
		for _, q := range []string{"per_page=0", "per_page=101", "page=0", "page=-1", "page=x", "per_page=2&per_page=3", "limit=5", "id=9"} {
			apitest.WantError(t, e.Admin(t, http.MethodGet, path+"?"+q, o.Key, nil), http.StatusBadRequest, q)
		}
	})

	t.Run("by UUID, unknown client", func(t *testing.T) {
		r := e.Admin(t, http.MethodGet, "/clients/"+c.UUID+"/system_status_records", o.Key, nil)
		if l := apitest.List(t, apitest.WantEnvelope(t, r, http.StatusOK, "system_status_records")); len(l) != 3 {
			t.Errorf("by UUID: %s", r.Raw)
		}
		apitest.WantNotFound(t, e.Admin(t, http.MethodGet, "/clients/999999999/system_status_records", o.Key, nil), "unknown client")
		apitest.WantNotFound(t, e.Admin(t, http.MethodGet, "/clients/nope/system_status_records", o.Key, nil), "not an id")
	})

	t.Run("GraphQL", func(t *testing.T) {
		d := e.GraphQLData(t, o.Key, `query($id: ID!) {
			systemStatusRecords(clientId: $id, perPage: 1) { total page perPage items { id runId cpuAveragePercent } }
			client(id: $id) { latestSystemStatusRecord { id } }
			clients { id latestSystemStatusRecord { id } } }`, map[string]any{"id": fmt.Sprint(c.ID)})
		apitest.SameJSON(t, "page", mustJSON(t, d["systemStatusRecords"]),
			fmt.Sprintf(`{"total": 3, "page": 1, "perPage": 1, "items": [{"id": %d, "runId": %q, "cpuAveragePercent": null}]}`,
				newest, apitest.Object(t, list[0])["run_id"]))
		if got := apitest.Int(t, apitest.Object(t, apitest.Object(t, d["client"])["latestSystemStatusRecord"])["id"]); got != newest {
			t.Errorf("latestSystemStatusRecord %d, want %d", got, newest)
		}
		for _, it := range apitest.List(t, d["clients"]) {
			cl := apitest.Object(t, it)
			if apitest.Int(t, cl["id"]) == other.ID && cl["latestSystemStatusRecord"] == nil {
				t.Errorf("the other client's latest record is missing: %v", cl)
			}
		}
	})
}

// TestSystemStatusRecordTypesChecked: a record whose fields have the wrong
// types is refused when stored, naming the field.
func TestSystemStatusRecordTypesChecked(t *testing.T) {
	for field, bad := range map[string]any{
		"cpu_average_percent": "high", "measurement_ids": []any{"m1"}, "study_ids": "yt", "filesystems": []any{1},
		"started_at": "yesterday", "memory_valid_sample_count": 1.5, "connection_details": map[string]any{},
	} {
		raw, _ := json.Marshal(map[string]any{"id": "s", "client_uuid": "0b7c4a52-5d2b-4f55-9a49-6d7f0f6c1a11",
			"created_at": "2026-11-24T10:00:00Z", field: bad})
		_, err := store.ParseDocument(vocab.KindSystemStatus, raw)
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s = %v: error %v, want one naming the field", field, bad, err)
		}
	}
}

// TestFleetHealth: the state of each client from its latest record within
// the offline threshold against the default thresholds.
func TestFleetHealth(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "health")
	label := apitest.Unique("healthy-probe")
	healthy := o.NewClient(t, store.NewClient{Label: &label})
	warning := o.NewClient(t, store.NewClient{})
	critical := o.NewClient(t, store.NewClient{})
	stale := o.NewClient(t, store.NewClient{})
	silent := o.NewClient(t, store.NewClient{})
	empty := o.NewClient(t, store.NewClient{})

	o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: healthy.UUID, CreatedAt: time.Now().Add(-2 * time.Hour), CPU: apitest.Ptr(99.0)})
	hRec := o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: healthy.UUID, CPU: apitest.Ptr(10.0), Memory: apitest.Ptr(20.0),
		Filesystem: apitest.Ptr(30.0), Transport: "wifi"})
	wRec := o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: warning.UUID, CPU: apitest.Ptr(12.0), Memory: apitest.Ptr(80.0)})
	cRec := o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: critical.UUID, CPU: apitest.Ptr(85.5), Memory: apitest.Ptr(10.0),
		Filesystem: apitest.Ptr(97.0)})
	o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: stale.UUID, CreatedAt: time.Now().Add(-61 * time.Minute), CPU: apitest.Ptr(99.0)})
	o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: empty.UUID}) // no metric at all

	states := healthStates(t, e, o.Key)
	if len(states) != 6 {
		t.Fatalf("%d states, want one per client (6): %v", len(states), states)
	}
	h := states[healthy.ID]
	apitest.SameJSON(t, "healthy client", mustJSON(t, withoutKey(h, "evaluated_at")), fmt.Sprintf(`{
		"client_id": %d, "client_uuid": %q, "client_label": %q, "state": "healthy", "reasons": [],
		"metric_summary": {"cpu": {"percent": 10, "warning_percent": 80, "critical_percent": 95},
			"memory": {"percent": 20, "warning_percent": 80, "critical_percent": 95},
			"filesystem": {"percent": 30, "warning_percent": 80, "critical_percent": 95}},
		"threshold_snapshot": {"cpu_warning_percent": 80, "cpu_critical_percent": 95, "memory_warning_percent": 80,
			"memory_critical_percent": 95, "filesystem_warning_percent": 80, "filesystem_critical_percent": 95,
			"offline_threshold_minutes": 60, "client_degraded_detection_enabled": true},
		"thresholds_outdated": false, "source_system_status_record_id": %d, "network_transport": "wifi"}`,
		healthy.ID, healthy.UUID, label, hRec))
	if at := apitest.Time(t, h["evaluated_at"]); time.Since(at) > time.Minute {
		t.Errorf("evaluated_at %v", at)
	}
	w := states[warning.ID]
	apitest.SameJSON(t, "warning reasons", mustJSON(t, w["reasons"]), `[{"metric": "memory", "percent": 80, "severity": "warning"}]`)
	if w["state"] != "warning" || apitest.Int(t, w["source_system_status_record_id"]) != wRec {
		t.Errorf("warning client: %v", w)
	}
	c := states[critical.ID]
	apitest.SameJSON(t, "critical reasons", mustJSON(t, c["reasons"]),
		`[{"metric": "cpu", "percent": 85.5, "severity": "warning"}, {"metric": "filesystem", "percent": 97, "severity": "critical"}]`)
	if c["state"] != "critical" || apitest.Int(t, c["source_system_status_record_id"]) != cRec {
		t.Errorf("critical client: %v", c)
	}
	for name, id := range map[string]int64{"record older than the offline threshold": stale.ID, "no record": silent.ID,
		"record without metrics": empty.ID} {
		s := states[id]
		if s["state"] != "unknown" || len(apitest.List(t, s["reasons"])) != 0 {
			t.Errorf("%s: %v, want unknown without reasons", name, s)
		}
		if id != empty.ID && (s["source_system_status_record_id"] != nil || apitest.Object(t, apitest.Object(t, s["metric_summary"])["cpu"])["percent"] != nil) {
			t.Errorf("%s: %v, want no source record and no percent", name, s)
		}
	}

	// Reading again changes nothing: the stored evaluations stand.
	again := healthStates(t, e, o.Key)
	if !reflect.DeepEqual(again, states) {
		t.Errorf("a second read differs:\n%v\n%v", again, states)
	}
	changes, err := e.Store.HealthChanges(context.Background(), o.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Evaluated as each record arrived: the healthy client's old record
	// (unknown, outside the threshold) came before its new one.
	if len(changes) != 7 || changes[0].ClientID != healthy.ID || changes[0].ToState != "unknown" ||
		changes[1].ClientID != healthy.ID || changes[1].ToState != "healthy" {
		t.Errorf("%d state changes recorded, want 7 (unknown then healthy for the first client): %+v", len(changes), changes)
	}
	last := map[int64]string{}
	for _, ch := range changes {
		last[ch.ClientID] = ch.ToState
	}
	for id, s := range states {
		if last[id] != s["state"] {
			t.Errorf("client %d: last recorded change to %q, state %v", id, last[id], s["state"])
		}
	}

	t.Run("GraphQL", func(t *testing.T) {
		d := e.GraphQLData(t, o.Key, `{ fleetHealth { clientId state reasons { metric severity }
			metricSummary { filesystem { percent } } thresholdSnapshot { cpuWarningPercent } thresholdsOutdated } }`, nil)
		for _, it := range apitest.List(t, d["fleetHealth"]) {
			s := apitest.Object(t, it)
			if apitest.Int(t, s["clientId"]) == critical.ID {
				apitest.SameJSON(t, "critical in GraphQL", mustJSON(t, s), fmt.Sprintf(`{"clientId": %d, "state": "critical",
					"reasons": [{"metric": "cpu", "severity": "warning"}, {"metric": "filesystem", "severity": "critical"}],
					"metricSummary": {"filesystem": {"percent": 97}}, "thresholdSnapshot": {"cpuWarningPercent": 80},
					"thresholdsOutdated": false}`, critical.ID))
				return
			}
		}
		t.Errorf("critical client missing: %v", d)
	})
}

// TestFleetHealthThresholdChanges: a change of thresholds marks the stored
// evaluations outdated; the client's next record is evaluated with the new
// thresholds, and the change of state is recorded once.
func TestFleetHealthThresholdChanges(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "outdated")
	c := o.NewClient(t, store.NewClient{})
	o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: c.UUID, CPU: apitest.Ptr(60.0)})
	if s := healthStates(t, e, o.Key)[c.ID]; s["state"] != "healthy" || s["thresholds_outdated"] != false {
		t.Fatalf("before: %v", s)
	}
	r := e.Admin(t, http.MethodPut, "/fleet_health/thresholds", o.Key, map[string]any{"cpu": map[string]any{"warning_percent": 50}})
	apitest.SameJSON(t, "thresholds", r.Raw, `{"health_thresholds": {
		"cpu": {"warning_percent": 50, "critical_percent": 95},
		"memory": {"warning_percent": 80, "critical_percent": 95},
		"filesystem": {"warning_percent": 80, "critical_percent": 95}}}`)

	s := healthStates(t, e, o.Key)[c.ID]
	if s["state"] != "healthy" || s["thresholds_outdated"] != true ||
		apitest.Int(t, apitest.Object(t, s["threshold_snapshot"])["cpu_warning_percent"]) != 80 {
		t.Errorf("after the change, before a new record: %v, want the old healthy evaluation, outdated", s)
	}
	rec := o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: c.UUID, CPU: apitest.Ptr(61.0)})
	s = healthStates(t, e, o.Key)[c.ID]
	if s["state"] != "warning" || s["thresholds_outdated"] != false || apitest.Int(t, s["source_system_status_record_id"]) != rec ||
		num(t, apitest.Object(t, apitest.Object(t, s["metric_summary"])["cpu"])["warning_percent"]) != 50 {
		t.Errorf("after a new record: %v, want warning against the new thresholds", s)
	}
	changes, err := e.Store.HealthChanges(context.Background(), o.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var moves []string
	for _, ch := range changes {
		from := "none"
		if ch.FromState != nil {
			from = *ch.FromState
		}
		moves = append(moves, from+">"+ch.ToState)
	}
	if !reflect.DeepEqual(moves, []string{"none>healthy", "healthy>warning"}) {
		t.Errorf("recorded changes %v", moves)
	}

	t.Run("a record that ages out makes the client unknown", func(t *testing.T) {
		e.SQL(t, `UPDATE documents SET created_at = now() - interval '30 minutes' WHERE data_owner_id = $1`, o.ID)
		apitest.WantStatus(t, e.Admin(t, http.MethodPut, "/data_owner/settings", o.Key, map[string]any{"offline_threshold_minutes": 20}), http.StatusOK)
		s := healthStates(t, e, o.Key)[c.ID]
		if s["state"] != "unknown" || s["source_system_status_record_id"] != nil ||
			apitest.Int(t, apitest.Object(t, s["threshold_snapshot"])["offline_threshold_minutes"]) != 20 {
			t.Errorf("aged out: %v", s)
		}
		changes, _ := e.Store.HealthChanges(context.Background(), o.ID, 0)
		if last := changes[len(changes)-1]; last.ToState != "unknown" || *last.FromState != "warning" {
			t.Errorf("last change %+v, want warning > unknown", last)
		}
	})
}

// TestFleetHealthThresholdValidation: values 0 to 100, warning below
// critical (with the kept values), nothing else; 422 names the field.
func TestFleetHealthThresholdValidation(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "thresholds")
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"warning above the kept critical", map[string]any{"cpu": map[string]any{"warning_percent": 96}}, "cpu.warning_percent"},
		{"warning equal to critical", map[string]any{"memory": map[string]any{"warning_percent": 90, "critical_percent": 90}}, "memory.warning_percent"},
		{"critical below the kept warning", map[string]any{"filesystem": map[string]any{"critical_percent": 70}}, "filesystem.critical_percent"},
		{"above 100", map[string]any{"cpu": map[string]any{"critical_percent": 101}}, "cpu.critical_percent"},
		{"negative", map[string]any{"cpu": map[string]any{"warning_percent": -1}}, "cpu.warning_percent"},
		{"null value", map[string]any{"cpu": map[string]any{"warning_percent": nil}}, "cpu.warning_percent"},
		{"null metric", map[string]any{"memory": nil}, "memory"},
		{"not a number", map[string]any{"cpu": map[string]any{"warning_percent": "high"}}, "cpu.warning_percent"},
		{"fraction", map[string]any{"cpu": map[string]any{"warning_percent": 70.5}}, "cpu.warning_percent"},
		{"unknown metric", map[string]any{"disk": map[string]any{"warning_percent": 70}}, "disk"},
	}
	for _, c := range cases {
		r := e.Admin(t, http.MethodPut, "/fleet_health/thresholds", o.Key, c.body)
		if r.Status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s, want 422", c.name, r.Status, r.Raw)
			continue
		}
		if errs, _ := r.Obj(t)["errors"].(map[string]any); errs[c.field] == nil {
			t.Errorf("%s: errors %s, want one on %s", c.name, r.Raw, c.field)
		}
	}
	// Nothing was written by the refused requests.
	apitest.SameJSON(t, "unchanged", e.Admin(t, http.MethodGet, "/fleet_health/thresholds", o.Key, nil).Raw, `{"health_thresholds": {
		"cpu": {"warning_percent": 80, "critical_percent": 95}, "memory": {"warning_percent": 80, "critical_percent": 95},
		"filesystem": {"warning_percent": 80, "critical_percent": 95}}}`)
	// Both limits may move together past the old ones; 0 and 100 are allowed.
	r := e.Admin(t, http.MethodPut, "/fleet_health/thresholds", o.Key, map[string]any{
		"cpu": map[string]any{"warning_percent": 0, "critical_percent": 100}, "memory": map[string]any{"warning_percent": 96, "critical_percent": 99}})
	apitest.SameJSON(t, "updated", r.Raw, `{"health_thresholds": {
		"cpu": {"warning_percent": 0, "critical_percent": 100}, "memory": {"warning_percent": 96, "critical_percent": 99},
		"filesystem": {"warning_percent": 80, "critical_percent": 95}}}`)

	g, ge := e.GraphQLFail(t, o.Key, `mutation { healthThresholdsUpdate(input: {filesystem: {warningPercent: 95}}) { filesystem { warningPercent } } }`, nil)
	if errs, _ := ge.Extensions["errors"].(map[string]any); g.Code() != "BAD_USER_INPUT" || errs["filesystem.warningPercent"] == nil {
		t.Errorf("GraphQL warning at critical: %s, want BAD_USER_INPUT on filesystem.warningPercent", g.Raw)
	}
	d := e.GraphQLData(t, o.Key, `mutation { healthThresholdsUpdate(input: {filesystem: {warningPercent: 85}}) { filesystem { warningPercent criticalPercent } } }`, nil)
	apitest.SameJSON(t, "GraphQL update", mustJSON(t, d), `{"healthThresholdsUpdate": {"filesystem": {"warningPercent": 85, "criticalPercent": 95}}}`)
}

// TestDetectionSettings: client_degraded_detection_enabled off leaves every
// state unknown and unevaluated (nothing recorded); client_offline_detection_enabled
// off answers offline null; the offline threshold moves offline.
func TestDetectionSettings(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "detection")
	seen := time.Now().Add(-90 * time.Minute)
	c := o.NewClient(t, store.NewClient{LastSeenAt: &seen})
	fresh := time.Now()
	f := o.NewClient(t, store.NewClient{LastSeenAt: &fresh})
	never := o.NewClient(t, store.NewClient{})
	o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: f.UUID, CPU: apitest.Ptr(99.0)})

	offline := func() map[int64]any {
		t.Helper()
		out := map[int64]any{}
		for _, it := range apitest.List(t, apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, "/clients", o.Key, nil), http.StatusOK, "clients")) {
			cl := apitest.Object(t, it)
			out[apitest.Int(t, cl["id"])] = cl["offline"]
		}
		return out
	}
	settings := func(body map[string]any) {
		t.Helper()
		apitest.WantStatus(t, e.Admin(t, http.MethodPut, "/data_owner/settings", o.Key, body), http.StatusOK)
	}
	if got, want := offline(), map[int64]any{c.ID: true, f.ID: false, never.ID: nil}; !reflect.DeepEqual(got, want) {
		t.Errorf("default threshold: offline %v, want %v", got, want)
	}
	settings(map[string]any{"offline_threshold_minutes": 120})
	if got, want := offline(), map[int64]any{c.ID: false, f.ID: false, never.ID: nil}; !reflect.DeepEqual(got, want) {
		t.Errorf("120 minutes: offline %v, want %v", got, want)
	}
	settings(map[string]any{"offline_threshold_minutes": nil, "client_offline_detection_enabled": false})
	if got, want := offline(), map[int64]any{c.ID: nil, f.ID: nil, never.ID: nil}; !reflect.DeepEqual(got, want) {
		t.Errorf("offline detection off: offline %v, want all null", got)
	}
	g := e.GraphQLData(t, o.Key, fmt.Sprintf(`{ client(id: "%d") { offline } }`, c.ID), nil)
	if apitest.Object(t, g["client"])["offline"] != nil {
		t.Errorf("GraphQL offline with detection off: %v", g)
	}
	settings(map[string]any{"client_offline_detection_enabled": true})
	if got := offline()[c.ID]; got != true {
		t.Errorf("detection on again: offline %v", got)
	}

	if s := healthStates(t, e, o.Key)[f.ID]; s["state"] != "critical" {
		t.Fatalf("with detection on: %v", s)
	}
	before, _ := e.Store.HealthChanges(context.Background(), o.ID, 0)
	settings(map[string]any{"client_degraded_detection_enabled": false})
	o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: f.UUID, CPU: apitest.Ptr(5.0)})
	s := healthStates(t, e, o.Key)[f.ID]
	if s["state"] != "unknown" || s["evaluated_at"] != nil || len(apitest.List(t, s["reasons"])) != 0 ||
		apitest.Object(t, s["threshold_snapshot"])["client_degraded_detection_enabled"] != false ||
		num(t, apitest.Object(t, apitest.Object(t, s["metric_summary"])["cpu"])["percent"]) != 5 {
		t.Errorf("degraded detection off: %v, want unknown, not evaluated, the record's values shown", s)
	}
	after, _ := e.Store.HealthChanges(context.Background(), o.ID, 0)
	if len(after) != len(before) {
		t.Errorf("changes recorded while detection was off: %+v", after[len(before):])
	}
	settings(map[string]any{"client_degraded_detection_enabled": true})
	if s := healthStates(t, e, o.Key)[f.ID]; s["state"] != "healthy" || s["evaluated_at"] == nil {
		t.Errorf("detection on again: %v, want the newest record evaluated", s)
	}
}

func withoutKey(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFleetHealthConcurrentReads: a record stored by another path (not
// evaluated on arrival) is evaluated by the first of many concurrent reads;
// its change of state is recorded once.
func TestFleetHealthConcurrentReads(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "concurrent")
	c := o.NewClient(t, store.NewClient{})
	o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: c.UUID, CPU: apitest.Ptr(10.0)})
	if s := healthStates(t, e, o.Key)[c.ID]; s["state"] != "healthy" {
		t.Fatalf("before: %v", s)
	}
	before, _ := e.Store.HealthChanges(context.Background(), o.ID, 0)
	e.SQL(t, `INSERT INTO documents (data_owner_id, kind, doc_id, client_uuid, created_at, doc)
		VALUES ($1, 'system_status', 'raw-1', $2::uuid, now(), jsonb_build_object('id', 'raw-1', 'client_uuid', $2::text,
			'created_at', now(), 'memory_average_percent', 97))`, o.ID, c.UUID)

	const readers = 8
	answers := make(chan *apitest.Response, readers)
	for range readers {
		go func() { answers <- e.Admin(t, http.MethodGet, "/fleet_health", o.Key, nil) }()
	}
	for range readers {
		r := <-answers
		list := apitest.List(t, apitest.WantEnvelope(t, r, http.StatusOK, "client_health_states"))
		if len(list) != 1 || apitest.Object(t, list[0])["state"] != "critical" {
			t.Errorf("a concurrent read answered %s, want the client critical", r.Raw)
		}
	}
	after, _ := e.Store.HealthChanges(context.Background(), o.ID, 0)
	if n := len(after) - len(before); n != 1 || after[len(after)-1].ToState != "critical" {
		t.Errorf("%d changes recorded by the concurrent reads, want one to critical: %+v", n, after[len(before):])
	}
}

// TestFleetHealthRecordReplaced: a record stored again under its id with
// other values (the probe resent it) is evaluated again.
func TestFleetHealthRecordReplaced(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "replaced")
	c := o.NewClient(t, store.NewClient{})
	doc := func(cpu float64) map[string]any {
		return map[string]any{"id": "resent-1", "client_uuid": c.UUID, "created_at": time.Now().UTC().Format(time.RFC3339),
			"cpu_average_percent": cpu}
	}
	o.InsertDocuments(t, vocab.KindSystemStatus, doc(20))
	first := healthStates(t, e, o.Key)[c.ID]
	o.InsertDocuments(t, vocab.KindSystemStatus, doc(96))
	second := healthStates(t, e, o.Key)[c.ID]
	if first["state"] != "healthy" || second["state"] != "critical" ||
		first["source_system_status_record_id"].(json.Number) != second["source_system_status_record_id"].(json.Number) {
		t.Errorf("before %v\nafter %v\nwant healthy, then critical from the same record", first, second)
	}
}
