package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/clientapi"
	"github.com/fleetgraph/fleetgraph/rest"
	"github.com/fleetgraph/fleetgraph/server"
	"github.com/fleetgraph/fleetgraph/store"
)

// The OpenAPI documents are served without a key, are valid OpenAPI 3.1,
// and describe every route of the tables.
func TestOpenAPIServed(t *testing.T) {
	e := apitest.Get(t)
	for base, routes := range map[string][]rest.Route{server.AdminBase: rest.AdminRoutes, server.ExportBase: rest.ExportRoutes} {
		t.Run(base, func(t *testing.T) {
			doc := servedDocument(t, e, base)
			if doc.OpenAPI != "3.1.0" || len(doc.Servers) != 1 || doc.Servers[0].URL != base {
				t.Fatalf("openapi %q, servers %v", doc.OpenAPI, doc.Servers)
			}
			if s := doc.Components.SecuritySchemes["ApiKeyAuth"]; s == nil || s.Value.In != "header" || s.Value.Name != "X-API-KEY" {
				t.Fatalf("security scheme: %+v", s)
			}
			for _, rt := range routes {
				item := doc.Paths.Find(rt.Path)
				if item == nil || item.GetOperation(rt.Method) == nil {
					t.Errorf("%s %s is not described", rt.Method, rt.Path)
					continue
				}
				if item.GetOperation(rt.Method).Responses.Status(rt.Status) == nil {
					t.Errorf("%s %s: status %d is not described", rt.Method, rt.Path, rt.Status)
				}
			}
			if n := doc.Paths.Len(); n != len(uniquePaths(routes)) {
				t.Errorf("%d paths described, the table has %d", n, len(uniquePaths(routes)))
			}
		})
	}
}

// servedDocument is the valid OpenAPI document served, without a key, at
// base.
func servedDocument(t *testing.T, e *apitest.Env, base string) *openapi3.T {
	t.Helper()
	r := e.Do(t, http.MethodGet, base+server.OpenAPIPath, "", nil)
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("status %d, Content-Type %q: %.300s", r.Status, r.Header.Get("Content-Type"), r.Raw)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(r.Raw)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("invalid OpenAPI document: %v", err)
	}
	return doc
}

func uniquePaths(routes []rest.Route) []string {
	var out []string
	for _, rt := range routes {
		if !slices.Contains(out, rt.Path) {
			out = append(out, rt.Path)
		}
	}
	return out
}

// The document follows the specs' nullability, and the check that every
// test's REST answers go through fails on a null where the spec has none,
// on an unknown key and on a missing required key.
func TestOpenAPIContract(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "openapi")
	c := o.NewClient(t, store.NewClient{Label: apitest.Ptr("probe")})
	o.NewContract(t, store.NewContract{ClientID: c.ID})
	req := apitest.Request(t, http.MethodGet, e.URL+server.AdminBase+fmt.Sprintf("/clients/%d", c.ID),
		http.Header{"X-API-KEY": {o.Key}}, nil)
	good := apitest.Send(t, nil, req)
	if good.Status != http.StatusOK {
		t.Fatalf("status %d: %s", good.Status, good.Raw)
	}
	if err := apitest.ContractError(req, good); err != nil {
		t.Fatalf("a real answer fails: %v", err)
	}
	change := func(f func(client map[string]any)) *apitest.Response {
		var body map[string]map[string]any
		if err := json.Unmarshal(good.Raw, &body); err != nil {
			t.Fatal(err)
		}
		f(body["client"])
		raw, _ := json.Marshal(body)
		return &apitest.Response{Status: good.Status, Header: good.Header, Raw: raw}
	}
	for name, f := range map[string]func(map[string]any){
		"uuid null":                            func(c map[string]any) { c["uuid"] = nil },
		"an unknown key":                       func(c map[string]any) { c["surprise"] = 1 },
		"created_at missing":                   func(c map[string]any) { delete(c, "created_at") },
		"created_at not a date-time":           func(c map[string]any) { c["created_at"] = "yesterday" },
		"current_isp_contract.valid_from null": func(c map[string]any) { c["current_isp_contract"].(map[string]any)["valid_from"] = nil },
		"access_level outside its enum":        func(c map[string]any) { c["access_level"] = "borrowed" },
	} {
		t.Run("caught: "+name, func(t *testing.T) {
			if err := apitest.ContractError(req, change(f)); err == nil {
				t.Fatal("the changed answer passes")
			}
		})
	}
	t.Run("an error answer has the error shape", func(t *testing.T) {
		bad := &apitest.Response{Status: 404, Header: http.Header{"Content-Type": {"application/json"}}, Raw: []byte(`{"msg":"x"}`)}
		if apitest.ContractError(req, bad) == nil {
			t.Fatal("an error without message passes")
		}
	})
}

// Absent is not null: the keys the specs mark optional are left out when
// unset, and values they type as plain values are never null.
func TestSpecAbsentNotNull(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "absent")
	ctx := context.Background()

	t.Run("notification_config answers only the keys that are set", func(t *testing.T) {
		name := apitest.Unique("user")
		r := e.Admin(t, http.MethodPost, "/client_admin_users", o.Key, map[string]any{"email": name + "@example.org",
			"username": name, "role": "viewer", "notification_config": map[string]any{"anomaly_events_frequency": "digest"}})
		nc := apitest.Object(t, apitest.Object(t, apitest.WantEnvelope(t, r, 201, "user"))["notification_config"])
		if got := sortedKeys(nc); strings.Join(got, ",") != "anomaly_events,anomaly_events_frequency,client_offline" {
			t.Fatalf("notification_config keys %v: %v", got, nc)
		}
	})
	t.Run("a bootstrapped user gets the defaults of POST /client_admin_users", func(t *testing.T) {
		key, rec := auth.NewKeyRecord(e.Sealer, auth.KindClientAdmin, 0, nil, nil, nil)
		slug := strings.ReplaceAll(apitest.Unique("boot"), "-", "_")
		b, err := e.Store.Bootstrap(ctx, slug, "root@"+slug+".example", rec)
		if err != nil {
			t.Fatalf("bootstrap: %v", err)
		}
		r := e.Admin(t, http.MethodGet, fmt.Sprintf("/client_admin_users/%d", b.UserID), key, nil)
		nc := apitest.Object(t, apitest.Object(t, apitest.WantEnvelope(t, r, 200, "user"))["notification_config"])
		var want map[string]any
		_ = json.Unmarshal([]byte(store.DefaultNotificationConfig), &want)
		if fmt.Sprint(nc) != fmt.Sprint(want) {
			t.Fatalf("notification_config %v, want %v", nc, want)
		}
	})
	t.Run("a webhook without min_severity answers no such key (create, get, list, update)", func(t *testing.T) {
		// The spec types filters.min_severity as warning or critical: unset is absent, never null.
		severity := func(t *testing.T, where string, h any) (any, bool) {
			t.Helper()
			v, ok := apitest.Object(t, apitest.Object(t, h)["filters"])["min_severity"]
			if ok && v == nil {
				t.Fatalf("%s: filters.min_severity is null, want it absent", where)
			}
			return v, ok
		}
		r := e.Admin(t, http.MethodPost, "/webhooks", o.Key, map[string]any{"name": "Ops", "url": "https://hooks.example.com/a",
			"event_types": []string{store.EventClientOffline}, "filters": map[string]any{"client_tags": []string{"x"}}})
		h := apitest.WantEnvelope(t, r, 201, "webhook")
		id := apitest.Int(t, apitest.Object(t, h)["id"])
		if v, ok := severity(t, "create", h); ok {
			t.Fatalf("create: min_severity %v, want absent", v)
		}
		path := fmt.Sprintf("/webhooks/%d", id)
		if v, ok := severity(t, "get", apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, path, o.Key, nil), 200, "webhook")); ok {
			t.Fatalf("get: min_severity %v, want absent", v)
		}
		for _, item := range apitest.List(t, apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, "/webhooks", o.Key, nil), 200, "webhooks")) {
			if v, ok := severity(t, "list", item); ok && apitest.Int(t, apitest.Object(t, item)["id"]) == id {
				t.Fatalf("list: min_severity %v, want absent", v)
			}
		}
		set := e.Admin(t, http.MethodPut, path, o.Key, map[string]any{"filters": map[string]any{"min_severity": "critical"}})
		if v, _ := severity(t, "update", apitest.WantEnvelope(t, set, 200, "webhook")); v != "critical" {
			t.Fatalf("update to critical: min_severity %v", v)
		}
		unset := e.Admin(t, http.MethodPut, path, o.Key, map[string]any{"filters": map[string]any{"min_severity": nil}})
		if v, ok := severity(t, "update", apitest.WantEnvelope(t, unset, 200, "webhook")); ok {
			t.Fatalf("update to null: min_severity %v, want absent", v)
		}
	})
	t.Run("a registration key without an end has no valid_until in GET /capabilities/{id}", func(t *testing.T) {
		capability := o.NewCapability(t, store.CapabilityInput{})
		until := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
		open := o.NewRegistrationKey(t, store.RegistrationKeyInput{CapabilityID: capability.ID})
		ending := o.NewRegistrationKey(t, store.RegistrationKeyInput{CapabilityID: capability.ID, ValidUntil: &until})
		r := e.Admin(t, http.MethodGet, fmt.Sprintf("/capabilities/%d", capability.ID), o.Key, nil)
		keys := apitest.List(t, apitest.Object(t, apitest.WantEnvelope(t, r, 200, "capability"))["registration_keys"])
		byID := map[int64]map[string]any{}
		for _, k := range keys {
			byID[apitest.ID(t, k)] = apitest.Object(t, k)
		}
		if v, ok := byID[open.ID]["valid_until"]; ok {
			t.Fatalf("unlimited key: valid_until %v, want absent", v)
		}
		if got := apitest.Time(t, byID[ending.ID]["valid_until"]); !got.Equal(until) {
			t.Fatalf("valid_until %v, want %v", got, until)
		}
	})
	t.Run("a contract stored without a start has valid_from", func(t *testing.T) {
		c := o.NewClient(t, store.NewClient{})
		before := time.Now().Add(-time.Second)
		o.NewContract(t, store.NewContract{ClientID: c.ID})
		r := e.Admin(t, http.MethodGet, fmt.Sprintf("/clients/%d", c.ID), o.Key, nil)
		contract := apitest.Object(t, apitest.Object(t, apitest.WantEnvelope(t, r, 200, "client"))["current_isp_contract"])
		if from := apitest.Time(t, contract["valid_from"]); from.Before(before) {
			t.Fatalf("valid_from %v, want about now", from)
		}
	})
	t.Run("network requests carry id, client_uuid, created_at, and measurement_id only when they have one", func(t *testing.T) {
		exportKey, _ := o.NewKey(t, apitest.KeyOpts{Kind: auth.KindExport})
		client := uuid.NewString()
		o.NewClient(t, store.NewClient{UUID: client})
		o.InsertDocuments(t, "network_request",
			map[string]any{"id": "nr-alone", "client_uuid": client, "created_at": "2026-01-02T03:04:05Z", "data": map[string]any{}},
			map[string]any{"id": "nr-of-m", "client_uuid": client, "created_at": "2026-01-02T03:04:06Z", "measurement_id": "m-1",
				"data": map[string]any{}})
		r := e.Do(t, http.MethodGet, server.ExportBase+"/network_requests?client_uuid="+client, exportKey, nil)
		items := apitest.List(t, apitest.WantStatus(t, r, 200))
		if len(items) != 2 {
			t.Fatalf("%d items: %s", len(items), r.Raw)
		}
		for _, it := range items {
			m := apitest.Object(t, it)
			for _, k := range []string{"id", "client_uuid", "created_at"} {
				if s, _ := m[k].(string); s == "" {
					t.Errorf("%v: %s = %v", m["id"], k, m[k])
				}
			}
			_, has := m["measurement_id"]
			if want := m["id"] == "nr-of-m"; has != want {
				t.Errorf("%v: measurement_id present %v, want %v", m["id"], has, want)
			}
		}
	})
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// The generated shapes: required keys, conditional and @omitNull fields,
// paging headers, flat search bodies and their NDJSON answer.
func TestOpenAPIShapes(t *testing.T) {
	docs, err := server.OpenAPIDocuments()
	if err != nil {
		t.Fatal(err)
	}
	read := func(base string) map[string]any {
		var d map[string]any
		if err := json.Unmarshal(docs[base], &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	at := func(v any, path ...string) any {
		for _, p := range path {
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("no %s in %v", p, path)
			}
			v = m[p]
		}
		return v
	}
	admin, export := read(server.AdminBase), read(server.ExportBase)
	body := func(doc map[string]any, path, method, status string) any {
		return at(doc, "paths", path, method, "responses", status, "content", "application/json", "schema")
	}
	for _, tc := range []struct {
		name string
		got  any
		want string
	}{
		{"GET /isps: the compact keys required, the rest under @skip optional",
			at(body(admin, "/isps", "get", "200"), "properties", "isps", "items", "required"), `["id","name","country"]`},
		{"notification_config: no key required", at(body(admin, "/client_admin_users/{id}", "get", "200"),
			"properties", "user", "properties", "notification_config", "required"), `[]`},
		{"notification_config: an @omitNull key is never null", at(body(admin, "/client_admin_users/{id}", "get", "200"),
			"properties", "user", "properties", "notification_config", "properties", "client_offline", "type"), `"boolean"`},
		{"a nullable field adds null", at(body(admin, "/clients/{id}", "get", "200"),
			"properties", "client", "properties", "label", "type"), `["string","null"]`},
		{"webhook filters: min_severity is never null (absent when unset)", at(body(admin, "/webhooks/{id}", "get", "200"),
			"properties", "webhook", "properties", "filters", "properties", "min_severity", "type"), `"string"`},
		{"webhook filters: min_severity is not required", at(body(admin, "/webhooks/{id}", "get", "200"),
			"properties", "webhook", "properties", "filters", "required"), `["client_tags","measurement_types","health_metrics"]`},
		{"DELETE answers an empty object", at(body(admin, "/isps/{id}", "delete", "200"), "maxProperties"), `0`},
		{"export clients: the spec's required fields", at(body(export, "/clients", "get", "200"), "items", "required"),
			`["uuid","type","created_at","updated_at"]`},
		{"export listings: paging headers", at(export, "paths", "/clients", "get", "responses", "200", "headers", "Total", "schema", "type"), `"integer"`},
		{"search body: body required", at(admin, "paths", "/measurements/search", "post", "requestBody", "content",
			"application/json", "schema", "required"), `["body"]`},
		{"scroll answers NDJSON", at(admin, "paths", "/measurements/search", "post", "responses", "200", "content",
			"application/x-ndjson", "schema", "type"), `"array"`},
		{"GET and POST /search have their own ids", at(export, "paths", "/search", "post", "operationId"), `"ExportSearchPost"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := json.Marshal(tc.got)
			if string(got) != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// The client API's document is served like the REST APIs', describes
// every route of its table, and the check every test's client API answers
// go through catches an answer that strays from it.
func TestClientAPIOpenAPI(t *testing.T) {
	e := apitest.Get(t)
	doc := servedDocument(t, e, clientapi.Base)
	want := []string{"/client_reports", "/config", "/event_bundles", "/measurements", "/network_requests", "/register",
		"/system_status_records", "/user_feedbacks"}
	var got []string
	for path := range doc.Paths.Map() {
		got = append(got, path)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) || doc.Servers[0].URL != clientapi.Base {
		t.Fatalf("paths %v on %s, want %v on %s", got, doc.Servers[0].URL, want, clientapi.Base)
	}

	o := e.NewOwner(t, "openapi-probe")
	key := o.NewRegistrationKey(t, store.RegistrationKeyInput{})
	req := apitest.Request(t, http.MethodPost, e.URL+clientapi.Base+"/register", http.Header{"Content-Type": {"application/json"}},
		map[string]any{"registration_key": key.RegistrationKey, "label": "contract probe"})
	good := apitest.Send(t, nil, req)
	if good.Status != http.StatusCreated {
		t.Fatalf("register: status %d: %s", good.Status, good.Raw)
	}
	if err := apitest.ContractError(req, good); err != nil {
		t.Fatalf("a real answer fails: %v", err)
	}
	for name, f := range map[string]func(map[string]any){
		"secret missing":             func(b map[string]any) { delete(b, "secret") },
		"an unknown key":             func(b map[string]any) { b["surprise"] = 1 },
		"created_at not a date-time": func(b map[string]any) { b["created_at"] = "yesterday" },
		"client_uuid null":           func(b map[string]any) { b["client_uuid"] = nil },
	} {
		t.Run("caught: "+name, func(t *testing.T) {
			var body map[string]any
			if err := json.Unmarshal(good.Raw, &body); err != nil {
				t.Fatal(err)
			}
			f(body)
			raw, _ := json.Marshal(body)
			if apitest.ContractError(req, &apitest.Response{Status: good.Status, Header: good.Header, Raw: raw}) == nil {
				t.Fatal("the changed answer passes")
			}
		})
	}
}
