package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/server"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// tenantWorld is what one data owner made of every kind of resource.
type tenantWorld struct {
	o      *apitest.Owner
	marker string // in every name and label this owner chose

	isp, contract, capability, regKey, client, group int64
	user, adminKey, analyticsKey, exportKey          int64
	credential, config, statusRecord, schedule       int64
	clientUUID, clientLabel, regKeyText, analytics   string
	userEmail                                        string
}

// newTenantWorld makes one of everything for a fresh data owner.
func newTenantWorld(t *testing.T, e *apitest.Env, prefix string) *tenantWorld {
	t.Helper()
	o := e.NewOwner(t, prefix)
	w := &tenantWorld{o: o, marker: "mark-" + o.Slug}
	name := func(what string) string { return w.marker + "-" + what }

	// ISP with a contract to one of the owner's clients.
	w.isp = apitest.Int(t, e.AdminCreate(t, o.Key, "/isps", map[string]any{"name": name("isp"), "country": "NL", "type": "fixed"})["id"])

	// Capability with a registration key.
	w.capability = apitest.Int(t, e.AdminCreate(t, o.Key, "/capabilities", map[string]any{"name": name("capability"),
		"comment": name("comment"), "allowed_measurement_subjects": []string{"youtube"}})["id"])
	w.regKeyText = name("regkey")
	g := e.GraphQL(t, o.Key, `mutation($c: Int!, $k: String!) { registrationKeyCreate(input: {capabilityId: $c, registrationKey: $k, comment: "mine"}) { id } }`,
		map[string]any{"c": w.capability, "k": w.regKeyText})
	if len(g.Errors) > 0 {
		t.Fatalf("registrationKeyCreate: %s", g.Raw)
	}
	w.regKey = apitest.Int(t, g.Data["registrationKeyCreate"].(map[string]any)["id"])

	// Client (registered with the key, on a config) in a group.
	w.config = o.NewConfig(t, "public", name("config"), true)
	c := o.NewClient(t, store.NewClient{Label: apitest.Ptr(name("probe")), Tags: []string{name("tag")},
		RegistrationKeyID: &w.regKey, PublicConfigID: &w.config})
	w.client, w.clientUUID, w.clientLabel = c.ID, c.UUID, c.Label
	w.group = o.NewGroup(t, name("group"), w.client)
	w.schedule = o.NewConfigWith(t, apitest.ConfigOpts{Kind: store.ConfigAutomator, Name: name("schedule"),
		Draft: apitest.EmptyConfigDocument(store.ConfigAutomator)})
	o.NewMeasurements(t, apitest.MeasurementOpts{ClientUUID: w.clientUUID, Subject: name("subject")}) // license usage
	w.contract = o.NewContract(t, store.NewContract{IspID: w.isp, ClientID: w.client, Name: name("contract"),
		MonthlyPrice: apitest.Ptr(39.9), Currency: apitest.Ptr("EUR"), ValidFrom: apitest.Ptr(time.Now().Add(-24 * time.Hour))})

	// User, keys of all three kinds, a service credential.
	w.userEmail = name("user") + "@example.org"
	w.user = apitest.Int(t, e.AdminCreate(t, o.Key, "/client_admin_users", map[string]any{"email": w.userEmail,
		"username": name("user"), "role": "editor", "first_name": name("first")})["id"])
	w.adminKey = apitest.Int(t, e.AdminCreate(t, o.Key, "/client_admin_api_keys", map[string]any{"name": name("adminkey"),
		"effective_role": "viewer"})["id"])
	an := e.AdminCreate(t, o.Key, "/client_analytics_api_keys", map[string]any{"name": name("analyticskey")})
	w.analyticsKey, w.analytics = apitest.Int(t, an["id"]), an["api_key"].(string)
	w.exportKey = apitest.Int(t, e.AdminCreate(t, o.Key, "/export_api_keys", map[string]any{"name": name("exportkey")})["id"])
	w.credential = apitest.Int(t, e.AdminCreate(t, o.Key, "/service_credentials", map[string]any{"name": name("credential"),
		"service": "ookla", "username": name("login"), "password": "pw"})["id"])

	// A system status record of the client (evaluated into its health) and
	// thresholds changed from the defaults.
	w.statusRecord = o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: w.clientUUID, CPU: apitest.Ptr(88.0),
		Extra: map[string]any{"platform": name("platform")}})
	if r := e.Admin(t, http.MethodPut, "/fleet_health/thresholds", o.Key, map[string]any{"cpu": map[string]any{"warning_percent": 85}}); r.Status != http.StatusOK {
		t.Fatalf("update thresholds: %d %s", r.Status, r.Raw)
	}

	// Settings changed from the defaults.
	r := e.Admin(t, http.MethodPut, "/data_owner/settings", o.Key, map[string]any{"ai_system_prompt": name("prompt"),
		"offline_threshold_minutes": 17, "client_offline_detection_enabled": false})
	if r.Status != http.StatusOK {
		t.Fatalf("update settings: %d %s", r.Status, r.Raw)
	}
	return w
}

// tenantIDs lists the ids of the items of the list under field.
func tenantIDs(t *testing.T, r *apitest.Response, field string) []int64 {
	t.Helper()
	items, ok := r.Obj(t)[field].([]any)
	if !ok {
		t.Fatalf("no list %q in %s", field, r.Raw)
	}
	ids := make([]int64, 0, len(items))
	for _, it := range items {
		ids = append(ids, apitest.Int(t, it.(map[string]any)["id"]))
	}
	return ids
}

// tenantSnapshot reads everything w's owner can see of its own records,
// leaving out last_used_at (it moves when a key is used).
func tenantSnapshot(t *testing.T, e *apitest.Env, w *tenantWorld) map[string]any {
	t.Helper()
	paths := []string{
		"/isps", fmt.Sprintf("/isps/%d", w.isp),
		"/capabilities", fmt.Sprintf("/capabilities/%d", w.capability),
		"/service_credentials", fmt.Sprintf("/service_credentials/%d", w.credential),
		"/client_admin_api_keys", fmt.Sprintf("/client_admin_api_keys/%d", w.adminKey),
		"/client_analytics_api_keys", fmt.Sprintf("/client_analytics_api_keys/%d", w.analyticsKey),
		"/export_api_keys", fmt.Sprintf("/export_api_keys/%d", w.exportKey),
		"/client_admin_users", fmt.Sprintf("/client_admin_users/%d", w.user),
		"/clients", fmt.Sprintf("/clients/%d", w.client),
		"/client_groups", fmt.Sprintf("/client_groups/%d", w.group), fmt.Sprintf("/isp_contracts/%d", w.contract),
		"/data_owner/settings",
		fmt.Sprintf("/clients/%d/system_status_records", w.client), "/fleet_health", "/fleet_health/thresholds",
		"/public_configs", fmt.Sprintf("/public_configs/%d", w.config),
		"/schedule_configs", fmt.Sprintf("/schedule_configs/%d", w.schedule),
	}
	snap := map[string]any{}
	for _, p := range paths {
		r := e.Admin(t, http.MethodGet, p, w.o.Key, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("owner reads %s: %d %s", p, r.Status, r.Raw)
		}
		snap[p] = tenantScrub(r.JSON)
	}
	g := e.GraphQL(t, w.o.Key, `query($k: Int!) { registrationKey(id: $k) { id registrationKey comment capabilityId }
		clientGroups { id name clients { id uuid } } }`, map[string]any{"k": w.regKey})
	if len(g.Errors) > 0 {
		t.Fatalf("owner reads registration key and groups: %s", g.Raw)
	}
	snap["graphql"] = tenantScrub(g.Data)
	return snap
}

func tenantScrub(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			if k == "last_used_at" || k == "lastUsedAt" {
				continue
			}
			out[k] = tenantScrub(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = tenantScrub(val)
		}
		return out
	}
	return v
}

// withoutSent drops from an answer the id B sent itself: a "client <uuid>
// not found" names what B asked for, which tells B nothing of A.
func withoutSent(raw []byte, sent string) []byte {
	return bytes.ReplaceAll(raw, []byte(sent), nil)
}

// TestCrossTenantIsolation: data owner B, with an org_admin key, tries every
// resource of data owner A by id and through lists, and sees nothing of it.
func TestCrossTenantIsolation(t *testing.T) {
	e := apitest.Get(t)
	a := newTenantWorld(t, e, "tenant-a")
	b := newTenantWorld(t, e, "tenant-b")
	bKey := b.o.Key

	// The fixture is meaningful: A sees its contract, key and group.
	if r := e.Admin(t, http.MethodGet, fmt.Sprintf("/isps/%d", a.isp), a.o.Key, nil); r.Status != http.StatusOK ||
		len(r.Obj(t)["isp"].(map[string]any)["isp_contracts"].([]any)) != 1 {
		t.Fatalf("A's ISP should carry one contract: %s", r.Raw)
	}
	before := tenantSnapshot(t, e, a)

	// Every raw answer B gets must be free of A's names, labels and secrets.
	leaks := []string{a.marker, a.clientUUID, a.regKeyText, a.analytics, a.userEmail}
	checkNoLeak := func(t *testing.T, what string, raw []byte) {
		t.Helper()
		for _, s := range leaks {
			if strings.Contains(string(raw), s) {
				t.Errorf("%s shows A's %q: %s", what, s, raw)
			}
		}
	}

	t.Run("lists of B omit A's records", func(t *testing.T) {
		lists := []struct {
			path, field string
			aID         int64
		}{
			{"/isps", "isps", a.isp},
			{"/isps?country=NL", "isps", a.isp},
			{"/isps?name=" + url.QueryEscape(a.marker), "isps", a.isp},
			{"/capabilities", "capabilities", a.capability},
			{"/service_credentials", "service_credentials", a.credential},
			{"/client_admin_api_keys", "client_admin_api_keys", a.adminKey},
			{"/client_analytics_api_keys", "client_analytics_api_keys", a.analyticsKey},
			{"/export_api_keys", "export_api_keys", a.exportKey},
			{"/client_admin_users", "users", a.user},
			{"/clients", "clients", a.client},
			{"/client_groups", "client_groups", a.group},
		}
		for _, l := range lists {
			r := e.Admin(t, http.MethodGet, l.path, bKey, nil)
			if r.Status != http.StatusOK {
				t.Errorf("B lists %s: %d %s", l.path, r.Status, r.Raw)
				continue
			}
			for _, id := range tenantIDs(t, r, l.field) {
				if id == l.aID {
					t.Errorf("B's %s lists A's record %d", l.path, id)
				}
			}
			checkNoLeak(t, "B's "+l.path, r.Raw)
		}
		// B's users are B's alone: A's org_admin is not among them.
		r := e.Admin(t, http.MethodGet, "/client_admin_users", bKey, nil)
		for _, id := range tenantIDs(t, r, "users") {
			if id == a.o.UserID {
				t.Errorf("B's users list A's org_admin %d", id)
			}
		}
		// B's own records are there, so the lists were not just empty.
		if ids := tenantIDs(t, e.Admin(t, http.MethodGet, "/isps", bKey, nil), "isps"); len(ids) != 1 || ids[0] != b.isp {
			t.Errorf("B's ISPs = %v, want [%d]", ids, b.isp)
		}
	})

	t.Run("B reads, updates and deletes A's records by id: 404", func(t *testing.T) {
		gets := []string{
			fmt.Sprintf("/isps/%d", a.isp),
			fmt.Sprintf("/capabilities/%d", a.capability),
			fmt.Sprintf("/service_credentials/%d", a.credential),
			fmt.Sprintf("/client_admin_api_keys/%d", a.adminKey),
			fmt.Sprintf("/client_analytics_api_keys/%d", a.analyticsKey),
			fmt.Sprintf("/export_api_keys/%d", a.exportKey),
			fmt.Sprintf("/client_admin_users/%d", a.user),
			fmt.Sprintf("/client_admin_users/%d", a.o.UserID),
			fmt.Sprintf("/clients/%d", a.client),
			"/clients/" + a.clientUUID,
			fmt.Sprintf("/clients/%d/system_status_records", a.client),
			"/clients/" + a.clientUUID + "/system_status_records",
			fmt.Sprintf("/client_groups/%d", a.group),
			fmt.Sprintf("/isp_contracts/%d", a.contract),
		}
		for _, p := range gets {
			r := e.Admin(t, http.MethodGet, p, bKey, nil)
			apitest.WantNotFound(t, r, "GET "+p)
			checkNoLeak(t, "GET "+p, r.Raw)
		}
		puts := []struct {
			path string
			body map[string]any
		}{
			{fmt.Sprintf("/isps/%d", a.isp), map[string]any{"name": "taken over", "country": "FR"}},
			{fmt.Sprintf("/capabilities/%d", a.capability), map[string]any{"name": "taken over", "comment": "x"}},
			{fmt.Sprintf("/service_credentials/%d", a.credential), map[string]any{"username": "eve", "password": "pw2"}},
			{fmt.Sprintf("/client_admin_users/%d", a.user), map[string]any{"first_name": "Eve"}},
			{fmt.Sprintf("/client_admin_users/%d", a.o.UserID), map[string]any{"first_name": "Eve"}},
			{fmt.Sprintf("/clients/%d", a.client), map[string]any{"label": "taken over", "anomalies_muted": true}},
			{"/clients/" + a.clientUUID, map[string]any{"tags": []string{"eve"}}},
			{fmt.Sprintf("/client_groups/%d", a.group), map[string]any{"name": "taken over"}},
			{fmt.Sprintf("/isp_contracts/%d", a.contract), map[string]any{"name": "taken over", "isp_id": b.isp}},
		}
		for _, p := range puts {
			r := e.Admin(t, http.MethodPut, p.path, bKey, p.body)
			apitest.WantNotFound(t, r, "PUT "+p.path)
			checkNoLeak(t, "PUT "+p.path, withoutSent(r.Raw, a.clientUUID))
		}
		deletes := []string{
			fmt.Sprintf("/isps/%d", a.isp),
			fmt.Sprintf("/capabilities/%d", a.capability),
			fmt.Sprintf("/service_credentials/%d", a.credential),
			fmt.Sprintf("/client_admin_api_keys/%d", a.adminKey),
			fmt.Sprintf("/client_analytics_api_keys/%d", a.analyticsKey),
			fmt.Sprintf("/export_api_keys/%d", a.exportKey),
			fmt.Sprintf("/clients/%d", a.client),
			"/clients/" + a.clientUUID,
			fmt.Sprintf("/client_groups/%d", a.group),
			fmt.Sprintf("/isp_contracts/%d", a.contract),
		}
		for _, p := range deletes {
			apitest.WantNotFound(t, e.Admin(t, http.MethodDelete, p, bKey, nil), "DELETE "+p)
		}
	})

	t.Run("B's client management on A's records: 404", func(t *testing.T) {
		posts := []struct {
			what, path string
			body       map[string]any
		}{
			{"disable A's client", fmt.Sprintf("/clients/%d/disable", a.client), map[string]any{"reason": "eve"}},
			{"enable A's client", "/clients/" + a.clientUUID + "/enable", nil},
			{"add B's client to A's group", fmt.Sprintf("/client_groups/%d/add_clients", a.group), map[string]any{"client_ids": []any{b.client}}},
			{"remove A's client from A's group", fmt.Sprintf("/client_groups/%d/remove_clients", a.group), map[string]any{"client_ids": []any{a.client}}},
			{"add A's client to B's group", fmt.Sprintf("/client_groups/%d/add_clients", b.group), map[string]any{"client_ids": []any{a.clientUUID}}},
			{"group A's client", "/client_groups", map[string]any{"name": b.marker + "-stolen", "client_ids": []any{a.client}}},
			{"contract for A's client", "/isp_contracts", map[string]any{"client_id": a.client, "isp_id": b.isp}},
			{"contract with A's ISP", "/isp_contracts", map[string]any{"client_id": b.client, "isp_id": a.isp}},
			{"end A's contract", fmt.Sprintf("/isp_contracts/%d/end", a.contract), map[string]any{}},
		}
		for _, p := range posts {
			r := e.Admin(t, http.MethodPost, p.path, bKey, p.body)
			apitest.WantNotFound(t, r, p.what)
			checkNoLeak(t, p.what, withoutSent(r.Raw, a.clientUUID))
		}
		// B's own client may carry A's label: uniqueness is per data owner.
		r := e.Admin(t, http.MethodPut, fmt.Sprintf("/clients/%d", b.client), bKey, map[string]any{"label": a.clientLabel})
		if r.Status != http.StatusOK {
			t.Errorf("B takes A's label for its own client: %d %s", r.Status, r.Raw)
		}
		r = e.Admin(t, http.MethodPut, fmt.Sprintf("/clients/%d", b.client), bKey, map[string]any{"label": b.marker + "-probe"})
		if r.Status != http.StatusOK {
			t.Errorf("B restores its label: %d %s", r.Status, r.Raw)
		}
	})

	t.Run("B merges across tenants: 404 both ways", func(t *testing.T) {
		apitest.WantNotFound(t, e.Admin(t, http.MethodPost, fmt.Sprintf("/isps/%d/merge_into", b.isp), bKey,
			map[string]any{"target_id": a.isp}), "merge B's ISP into A's")
		apitest.WantNotFound(t, e.Admin(t, http.MethodPost, fmt.Sprintf("/isps/%d/merge_into", a.isp), bKey,
			map[string]any{"target_id": b.isp}), "merge A's ISP into B's")
		r := e.Admin(t, http.MethodGet, fmt.Sprintf("/isps/%d", b.isp), bKey, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("B's ISP is gone after the refused merges: %d %s", r.Status, r.Raw)
		}
		isp := r.Obj(t)["isp"].(map[string]any)
		if n := len(isp["isp_contracts"].([]any)); n != 1 {
			t.Errorf("B's ISP has %d contracts after the refused merges, want 1", n)
		}
		if names := isp["alternative_names"].([]any); len(names) != 0 {
			t.Errorf("B's ISP gained alternative names %v", names)
		}
	})

	t.Run("B's GraphQL by A's ids: NOT_FOUND", func(t *testing.T) {
		queries := []struct {
			field, query string
			vars         map[string]any
		}{
			{"isp", `query($id: Int!) { isp(id: $id) { id name } }`, map[string]any{"id": a.isp}},
			{"capability", `query($id: Int!) { capability(id: $id) { id name } }`, map[string]any{"id": a.capability}},
			{"registrationKey", `query($id: Int!) { registrationKey(id: $id) { id registrationKey } }`, map[string]any{"id": a.regKey}},
			{"client", `query($id: ID!) { client(id: $id) { id label } }`, map[string]any{"id": fmt.Sprint(a.client)}},
			{"client", `query($id: ID!) { client(id: $id) { id label } }`, map[string]any{"id": a.clientUUID}},
			{"systemStatusRecords", `query($id: ID!) { systemStatusRecords(clientId: $id) { total items { id } } }`,
				map[string]any{"id": fmt.Sprint(a.client)}},
			{"systemStatusRecords", `query($id: ID!) { systemStatusRecords(clientId: $id) { total items { id } } }`,
				map[string]any{"id": a.clientUUID}},
			{"user", `query($id: Int!) { user(id: $id) { id email } }`, map[string]any{"id": a.user}},
			{"serviceCredential", `query($id: Int!) { serviceCredential(id: $id) { id name } }`, map[string]any{"id": a.credential}},
			{"clientAdminApiKey", `query($id: Int!) { clientAdminApiKey(id: $id) { id name } }`, map[string]any{"id": a.adminKey}},
			{"clientAnalyticsApiKey", `query($id: Int!) { clientAnalyticsApiKey(id: $id) { id apiKey } }`, map[string]any{"id": a.analyticsKey}},
			{"exportApiKey", `query($id: Int!) { exportApiKey(id: $id) { id name } }`, map[string]any{"id": a.exportKey}},
			{"ispUpdate", `mutation($id: Int!) { ispUpdate(id: $id, input: {name: "x"}) { id } }`, map[string]any{"id": a.isp}},
			{"ispDelete", `mutation($id: Int!) { ispDelete(id: $id) }`, map[string]any{"id": a.isp}},
			{"ispMergeInto", `mutation($id: Int!, $t: Int!) { ispMergeInto(id: $id, input: {targetId: $t}) { id } }`,
				map[string]any{"id": b.isp, "t": a.isp}},
			{"capabilityDelete", `mutation($id: Int!) { capabilityDelete(id: $id) }`, map[string]any{"id": a.capability}},
			{"registrationKeyCreate", `mutation($c: Int!) { registrationKeyCreate(input: {capabilityId: $c}) { id } }`,
				map[string]any{"c": a.capability}},
			{"registrationKeyUpdate", `mutation($id: Int!) { registrationKeyUpdate(id: $id, input: {comment: "x"}) { id } }`,
				map[string]any{"id": a.regKey}},
			{"registrationKeyDelete", `mutation($id: Int!) { registrationKeyDelete(id: $id) }`, map[string]any{"id": a.regKey}},
			{"userUpdate", `mutation($id: Int!) { userUpdate(id: $id, input: {firstName: "Eve"}) { id } }`, map[string]any{"id": a.user}},
			{"serviceCredentialUpdate", `mutation($id: Int!) { serviceCredentialUpdate(id: $id, input: {name: "x"}) { id } }`,
				map[string]any{"id": a.credential}},
			{"serviceCredentialDelete", `mutation($id: Int!) { serviceCredentialDelete(id: $id) }`, map[string]any{"id": a.credential}},
			{"clientAdminApiKeyDelete", `mutation($id: Int!) { clientAdminApiKeyDelete(id: $id) }`, map[string]any{"id": a.adminKey}},
			{"clientAnalyticsApiKeyDelete", `mutation($id: Int!) { clientAnalyticsApiKeyDelete(id: $id) }`, map[string]any{"id": a.analyticsKey}},
			{"exportApiKeyDelete", `mutation($id: Int!) { exportApiKeyDelete(id: $id) }`, map[string]any{"id": a.exportKey}},
			{"clientUpdate", `mutation($id: ID!) { clientUpdate(id: $id, input: {label: "x"}) { id } }`, map[string]any{"id": a.clientUUID}},
			{"clientDisable", `mutation($id: ID!) { clientDisable(id: $id, input: {reason: "x"}) { id } }`, map[string]any{"id": fmt.Sprint(a.client)}},
			{"clientEnable", `mutation($id: ID!) { clientEnable(id: $id) { id } }`, map[string]any{"id": fmt.Sprint(a.client)}},
			{"clientDelete", `mutation($id: ID!) { clientDelete(id: $id) }`, map[string]any{"id": a.clientUUID}},
			{"clientGroup", `query($id: Int!) { clientGroup(id: $id) { id name } }`, map[string]any{"id": a.group}},
			{"clientGroupUpdate", `mutation($id: Int!) { clientGroupUpdate(id: $id, input: {name: "x"}) { id } }`, map[string]any{"id": a.group}},
			{"clientGroupDelete", `mutation($id: Int!) { clientGroupDelete(id: $id) }`, map[string]any{"id": a.group}},
			{"clientGroupAddClients", `mutation($id: Int!, $c: ID!) { clientGroupAddClients(id: $id, input: {clientIds: [$c]}) { id } }`,
				map[string]any{"id": b.group, "c": a.clientUUID}},
			{"clientGroupRemoveClients", `mutation($id: Int!, $c: ID!) { clientGroupRemoveClients(id: $id, input: {clientIds: [$c]}) { id } }`,
				map[string]any{"id": a.group, "c": fmt.Sprint(a.client)}},
			{"clientGroupCreate", `mutation($c: ID!) { clientGroupCreate(input: {name: "stolen", clientIds: [$c]}) { id } }`,
				map[string]any{"c": a.clientUUID}},
			{"ispContract", `query($id: Int!) { ispContract(id: $id) { id name } }`, map[string]any{"id": a.contract}},
			{"ispContractCreate", `mutation($c: ID!, $i: Int!) { ispContractCreate(input: {clientId: $c, ispId: $i}) { id } }`,
				map[string]any{"c": a.clientUUID, "i": b.isp}},
			{"ispContractCreate", `mutation($c: ID!, $i: Int!) { ispContractCreate(input: {clientId: $c, ispId: $i}) { id } }`,
				map[string]any{"c": b.clientUUID, "i": a.isp}},
			{"ispContractUpdate", `mutation($id: Int!) { ispContractUpdate(id: $id, input: {name: "x"}) { id } }`, map[string]any{"id": a.contract}},
			{"ispContractEnd", `mutation($id: Int!) { ispContractEnd(id: $id) { id } }`, map[string]any{"id": a.contract}},
			{"ispContractDelete", `mutation($id: Int!) { ispContractDelete(id: $id) }`, map[string]any{"id": a.contract}},
		}
		for _, q := range queries {
			g := e.GraphQL(t, bKey, q.query, q.vars)
			if g.Code() != "NOT_FOUND" {
				t.Errorf("%s %v: extensions.code = %q, want NOT_FOUND: %s", q.field, q.vars, g.Code(), g.Raw)
			}
			if g.Data != nil && g.Data[q.field] != nil {
				t.Errorf("%s %v answered data: %s", q.field, q.vars, g.Raw)
			}
			checkNoLeak(t, q.field, withoutSent(g.Raw, a.clientUUID))
		}
	})

	t.Run("B's nested GraphQL fields never show A's records", func(t *testing.T) {
		g := e.GraphQL(t, bKey, `{
			clients { id uuid label accessLevel registrationKey { id registrationKey } clientGroups { id name }
				currentIspContract { id ispId ispName } ispContracts { id ispId clientLabel }
				deliveredPublicConfig { id name } latestSystemStatusRecord { id clientUuid platform } }
			fleetHealth { clientId clientUuid clientLabel state sourceSystemStatusRecordId }
			healthThresholds { cpu { warningPercent } }
			clientGroups { id name clients { id uuid label } }
			isps { id name ispContractsCount ispContracts { id clientId clientUuid clientLabel client { id uuid } } }
			capabilities { id name registrationKeysCount registrationKeys { id registrationKey clientsCount capability { id } } }
			users { id email }
			serviceCredentials { id name username }
			clientAdminApiKeys { id name clientAdminUserId }
			clientAnalyticsApiKeys { id apiKey }
			exportApiKeys { id name }
			dataOwnerSettings { aiSystemPrompt offlineThresholdMinutes clientOfflineDetectionEnabled }
			viewer { dataOwner }
		}`, nil)
		if len(g.Errors) > 0 {
			t.Fatalf("B's nested query: %s", g.Raw)
		}
		checkNoLeak(t, "B's nested query", g.Raw)
		if !strings.Contains(string(g.Raw), b.marker) {
			t.Errorf("B's nested query does not show B's own records: %s", g.Raw)
		}
		var data struct {
			Clients []struct {
				ID           int64
				ClientGroups []struct{ ID int64 }
			}
			Isps []struct {
				ID           int64
				IspContracts []struct{ ID, ClientID int64 }
			}
		}
		raw, _ := json.Marshal(g.Data)
		if err := json.Unmarshal(raw, &data); err != nil {
			t.Fatalf("decode: %v", err)
		}
		for _, c := range data.Clients {
			if c.ID == a.client {
				t.Errorf("B's clients include A's client %d", c.ID)
			}
			for _, gr := range c.ClientGroups {
				if gr.ID == a.group {
					t.Errorf("B's client %d is in A's group", c.ID)
				}
			}
		}
		for _, i := range data.Isps {
			for _, c := range i.IspContracts {
				if c.ID == a.contract || c.ClientID == a.client {
					t.Errorf("B's ISP %d shows A's contract %+v", i.ID, c)
				}
			}
		}
	})

	t.Run("B's label check ignores A's clients", func(t *testing.T) {
		for _, p := range []string{
			"/clients/check_label_availability?label=" + url.QueryEscape(a.clientLabel),
			"/clients/check_label_availability?label=" + url.QueryEscape(strings.ToUpper(a.clientLabel)),
			fmt.Sprintf("/clients/check_label_availability?label=%s&exclude_id=%d", url.QueryEscape(a.clientLabel), a.client),
			"/clients/check_label_availability?label=" + url.QueryEscape(a.clientLabel) + "&exclude_id=" + a.clientUUID,
		} {
			r := e.Admin(t, http.MethodGet, p, bKey, nil)
			if r.Status != http.StatusOK || r.Obj(t)["available"] != true {
				t.Errorf("B %s: %d %s, want available", p, r.Status, r.Raw)
			}
		}
		// In A the label is taken, so the check above is about tenancy.
		r := e.Admin(t, http.MethodGet, "/clients/check_label_availability?label="+url.QueryEscape(a.clientLabel), a.o.Key, nil)
		if r.Status != http.StatusOK || r.Obj(t)["available"] != false {
			t.Errorf("A's own label: %d %s, want taken", r.Status, r.Raw)
		}
	})

	t.Run("B's settings are B's", func(t *testing.T) {
		r := e.Admin(t, http.MethodPut, "/data_owner/settings", bKey, map[string]any{"ai_system_prompt": b.marker + "-changed",
			"offline_threshold_minutes": 99, "study_failure_detection_enabled": false})
		if r.Status != http.StatusOK {
			t.Fatalf("B updates settings: %d %s", r.Status, r.Raw)
		}
		checkNoLeak(t, "B's settings", r.Raw)
		s := r.Obj(t)["settings"].(map[string]any)
		if s["ai_system_prompt"] != b.marker+"-changed" || s["client_offline_detection_enabled"] != false {
			t.Errorf("B's settings = %v", s)
		}
		st := e.Admin(t, http.MethodGet, "/ai_assistant/status", bKey, nil)
		if st.Status != http.StatusOK || st.Obj(t)["data_owner"] != b.o.Slug {
			t.Errorf("B's assistant status: %d %s, want data_owner %s", st.Status, st.Raw, b.o.Slug)
		}
	})

	t.Run("B's fleet health and thresholds are B's", func(t *testing.T) {
		r := e.Admin(t, http.MethodGet, "/fleet_health", bKey, nil)
		states := apitest.List(t, apitest.WantEnvelope(t, r, http.StatusOK, "client_health_states"))
		if len(states) != 1 || apitest.Int(t, apitest.Object(t, states[0])["client_id"]) != b.client ||
			apitest.Int(t, apitest.Object(t, states[0])["source_system_status_record_id"]) != b.statusRecord {
			t.Errorf("B's fleet health: %s, want B's one client with B's record", r.Raw)
		}
		checkNoLeak(t, "B's fleet health", r.Raw)
		r = e.Admin(t, http.MethodPut, "/fleet_health/thresholds", bKey, map[string]any{"cpu": map[string]any{"warning_percent": 10}})
		if r.Status != http.StatusOK {
			t.Fatalf("B updates thresholds: %d %s", r.Status, r.Raw)
		}
		g := e.GraphQLData(t, bKey, `mutation { healthThresholdsUpdate(input: {memory: {warningPercent: 11}}) { memory { warningPercent } } }`, nil)
		checkNoLeak(t, "B's thresholds", mustJSON(t, g))
	})

	t.Run("B's configs never reach A's", func(t *testing.T) {
		for _, l := range []struct {
			path, field string
			aID         int64
		}{{"/public_configs", "public_configs", a.config}, {"/schedule_configs", "schedule_configs", a.schedule}} {
			r := e.Admin(t, http.MethodGet, l.path, bKey, nil)
			for _, id := range tenantIDs(t, r, l.field) {
				if id == l.aID {
					t.Errorf("B's %s lists A's config %d", l.path, id)
				}
			}
			checkNoLeak(t, "B's "+l.path, r.Raw)
		}
		for base, id := range map[string]int64{"/public_configs": a.config, "/schedule_configs": a.schedule} {
			p := fmt.Sprintf("%s/%d", base, id)
			calls := []struct {
				method, path string
				body         any
			}{
				{http.MethodGet, p, nil},
				{http.MethodPut, p, map[string]any{"name": "taken over"}},
				{http.MethodPost, p + "/publish", nil},
				{http.MethodDelete, p + "/draft", nil},
				{http.MethodPut, p + "/default", nil},
				{http.MethodDelete, p + "/default", nil},
				{http.MethodPost, p + "/assign", map[string]any{"client_ids": []int64{b.client}}},
				{http.MethodPost, p + "/unassign", map[string]any{"client_ids": []int64{a.client}}},
				{http.MethodPost, base + "/import", map[string]any{"config_id": id, "data": map[string]any{"version": 1,
					"studies": []any{}, "studySchedules": []any{}}}},
				{http.MethodDelete, p, nil},
			}
			for _, c := range calls {
				r := e.Admin(t, c.method, c.path, bKey, c.body)
				if c.method == http.MethodPost && strings.HasSuffix(c.path, "/import") && r.Status == http.StatusUnprocessableEntity {
					t.Errorf("%s %s: 422, the document should pass: %s", c.method, c.path, r.Raw)
					continue
				}
				apitest.WantNotFound(t, r, c.method+" "+c.path)
				checkNoLeak(t, c.method+" "+c.path, r.Raw)
			}
		}
		// B's own config cannot be assigned to A's client or group.
		for _, body := range []map[string]any{{"client_ids": []int64{a.client}}, {"client_group_ids": []int64{a.group}}} {
			r := e.Admin(t, http.MethodPost, fmt.Sprintf("/public_configs/%d/assign", b.config), bKey, body)
			apitest.WantNotFound(t, r, fmt.Sprintf("assign B's config to %v", body))
		}
		g := e.GraphQL(t, bKey, `query($id: Int!) { measurementConfig(kind: public, id: $id) { id name } }`, map[string]any{"id": a.config})
		if g.Code() != "NOT_FOUND" {
			t.Errorf("B reads A's config through GraphQL: %s", g.Raw)
		}
		g = e.GraphQL(t, bKey, `{ measurementConfigs(kind: public) { id name deliveredClients { id uuid label }
			clientGroups { id name } scheduleConfigs { id name } draftVersion { studies { studyId } } warnings } }`, nil)
		if len(g.Errors) > 0 {
			t.Fatalf("B's configs: %s", g.Raw)
		}
		checkNoLeak(t, "B's nested configs", g.Raw)
	})

	t.Run("B's license usage and downloads show nothing of A's", func(t *testing.T) {
		// A's report counts its client under its key, so B's being empty is about tenancy.
		r := e.Admin(t, http.MethodGet, fmt.Sprintf("/license_usage?extended=true&registration_key_id=%d", a.regKey), a.o.Key, nil)
		if r.Status != http.StatusOK || apitest.Int(t, r.Obj(t)["total_units"]) != 1 {
			t.Fatalf("A's own license usage: %d %s, want 1 unit", r.Status, r.Raw)
		}
		for _, p := range []string{"/license_usage?extended=true", "/license_usage", "/license_usage/export", "/software/downloads"} {
			r := e.Admin(t, http.MethodGet, p, bKey, nil)
			if r.Status != http.StatusOK {
				t.Errorf("B GET %s: %d %s", p, r.Status, r.Raw)
			}
			checkNoLeak(t, "B's "+p, r.Raw)
		}
		r = e.Admin(t, http.MethodGet, "/license_usage?extended=true", bKey, nil)
		rep := r.Obj(t)
		if keys := apitest.List(t, rep["usage_by_registration_key"]); apitest.Int(t, rep["total_units"]) != 1 || len(keys) != 1 ||
			apitest.Int(t, keys[0].(map[string]any)["registration_key_id"]) != b.regKey {
			t.Errorf("B's license usage should count B's one client under B's key: %s", r.Raw)
		}
		for _, p := range []string{
			fmt.Sprintf("/license_usage?extended=true&registration_key_id=%d", a.regKey),
			fmt.Sprintf("/license_usage/export?registration_key_id=%d", a.regKey),
		} {
			r := e.Admin(t, http.MethodGet, p, bKey, nil)
			apitest.WantNotFound(t, r, "GET "+p)
			checkNoLeak(t, "GET "+p, r.Raw)
		}
		g := e.GraphQL(t, bKey, `query($k: Int) { licenseUsage(registrationKeyId: $k) { totalUnits } }`, map[string]any{"k": a.regKey})
		if g.Code() != "NOT_FOUND" {
			t.Errorf("B's licenseUsage with A's key: code %q, want NOT_FOUND: %s", g.Code(), g.Raw)
		}
		if d := e.Admin(t, http.MethodGet, "/software/downloads", bKey, nil); d.Obj(t)["customer"] != b.o.Slug {
			t.Errorf("B's downloads customer = %v, want %s", d.Obj(t)["customer"], b.o.Slug)
		}
	})

	t.Run("A's records are unchanged after B's attempts", func(t *testing.T) {
		after := tenantSnapshot(t, e, a)
		for k, v := range before {
			if !reflect.DeepEqual(v, after[k]) {
				bv, _ := json.Marshal(v)
				av, _ := json.Marshal(after[k])
				t.Errorf("A's %s changed:\nbefore %s\nafter  %s", k, bv, av)
			}
		}
		// A's own keys still work.
		if r := e.Admin(t, http.MethodGet, "/isps", a.o.Key, nil); r.Status != http.StatusOK {
			t.Errorf("A's key: %d %s", r.Status, r.Raw)
		}
	})
}

// TestSharedClientShowsOnlyTheClient: a client A shares with B appears in
// B's list as "shared", without A's configuration, registration key, groups
// or contract.
func TestSharedClientShowsOnlyTheClient(t *testing.T) {
	e := apitest.Get(t)
	ctx := context.Background()
	a := newTenantWorld(t, e, "sharer")
	b := newTenantWorld(t, e, "sharee")
	if err := e.Store.ShareClient(ctx, a.o.ID, a.client, b.o.ID); err != nil {
		t.Fatalf("share: %v", err)
	}
	find := func(t *testing.T, key string) map[string]any {
		t.Helper()
		r := e.Admin(t, http.MethodGet, "/clients", key, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("list clients: %d %s", r.Status, r.Raw)
		}
		for _, it := range r.Obj(t)["clients"].([]any) {
			c := it.(map[string]any)
			if c["uuid"] == a.clientUUID {
				return c
			}
		}
		t.Fatalf("shared client %s not in the list: %s", a.clientUUID, r.Raw)
		return nil
	}

	// A, the owner, sees everything of it.
	own := find(t, a.o.Key)
	if own["access_level"] != "owner" || own["config_managed"] != true || own["delivered_public_config"] == nil ||
		own["registration_key"] == nil || len(own["client_groups"].([]any)) != 1 || own["current_isp_contract"] == nil {
		t.Fatalf("A's view of its client lacks the fixture: %v", own)
	}

	shared := find(t, b.o.Key)
	checkShared := func(t *testing.T, c map[string]any) {
		t.Helper()
		if c["access_level"] != "shared" {
			t.Errorf("access_level = %v, want shared", c["access_level"])
		}
		if apitest.Int(t, c["id"]) != a.client || c["label"] != a.clientLabel {
			t.Errorf("shared client id/label = %v/%v, want %d/%s", c["id"], c["label"], a.client, a.clientLabel)
		}
		for _, f := range []string{"config_managed", "delivered_public_config", "delivered_automator_config",
			"registration_key", "current_isp_contract"} {
			v, ok := c[f]
			if !ok {
				t.Errorf("%s missing from the shared client", f)
			} else if v != nil {
				t.Errorf("%s = %v, want null for a shared client", f, v)
			}
		}
		groups, ok := c["client_groups"].([]any)
		if !ok {
			t.Errorf("client_groups = %v, want an array", c["client_groups"])
		}
		for _, g := range groups {
			if apitest.Int(t, g.(map[string]any)["id"]) == a.group {
				t.Errorf("shared client shows A's group: %v", g)
			}
		}
		raw, _ := json.Marshal(c)
		for _, s := range []string{a.regKeyText, a.marker + "-group", a.marker + "-config", a.marker + "-contract"} {
			if strings.Contains(string(raw), s) {
				t.Errorf("shared client shows A's %q: %s", s, raw)
			}
		}
	}
	checkShared(t, shared)

	// The single record says the same, and hides A's configuration ids.
	r := e.Admin(t, http.MethodGet, fmt.Sprintf("/clients/%d", a.client), b.o.Key, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("B reads the shared client: %d %s", r.Status, r.Raw)
	}
	one := r.Obj(t)["client"].(map[string]any)
	checkShared(t, one)
	if cfg, _ := one["configuration"].(map[string]any); cfg == nil || cfg["public_config_id"] != nil || cfg["automator_config_id"] != nil {
		t.Errorf("shared client's configuration = %v, want no config ids", one["configuration"])
	}

	// A's system status records and health stay A's: B's listing of the
	// shared client holds B's records of it (none), and B's fleet health
	// covers B's own clients.
	sr := e.Admin(t, http.MethodGet, fmt.Sprintf("/clients/%d/system_status_records", a.client), b.o.Key, nil)
	if l := apitest.List(t, apitest.WantEnvelope(t, sr, http.StatusOK, "system_status_records")); len(l) != 0 {
		t.Errorf("B reads A's records of the shared client: %s", sr.Raw)
	}
	for _, it := range apitest.List(t, apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, "/fleet_health", b.o.Key, nil), http.StatusOK, "client_health_states")) {
		if apitest.Int(t, apitest.Object(t, it)["client_id"]) == a.client {
			t.Errorf("B's fleet health includes A's shared client: %v", it)
		}
	}

	// B's label check ignores the shared client: it is not one of B's.
	lr := e.Admin(t, http.MethodGet, "/clients/check_label_availability?label="+url.QueryEscape(a.clientLabel), b.o.Key, nil)
	if lr.Status != http.StatusOK || lr.Obj(t)["available"] != true {
		t.Errorf("B's label check for the shared client's label: %d %s, want available", lr.Status, lr.Raw)
	}

	// Through GraphQL the nested fields agree.
	g := e.GraphQL(t, b.o.Key, `query($id: ID!) { client(id: $id) { accessLevel configManaged registrationKey { id }
		clientGroups { id } currentIspContract { id } ispContracts { id } deliveredPublicConfig { id } } }`,
		map[string]any{"id": a.clientUUID})
	if len(g.Errors) > 0 {
		t.Fatalf("graphql shared client: %s", g.Raw)
	}
	c := g.Data["client"].(map[string]any)
	if c["accessLevel"] != "shared" || c["configManaged"] != nil || c["registrationKey"] != nil ||
		len(c["clientGroups"].([]any)) != 0 || c["currentIspContract"] != nil || len(c["ispContracts"].([]any)) != 0 ||
		c["deliveredPublicConfig"] != nil {
		t.Errorf("graphql shared client = %v", c)
	}

	// B cannot reach A's records through the shared client's ids either.
	apitest.WantNotFound(t, e.Admin(t, http.MethodGet, fmt.Sprintf("/isps/%d", a.isp), b.o.Key, nil), "A's ISP via the share")
}

// TestCrossTenantClientAPI: what a probe or an analytics key of one data
// owner sends through the client API never reaches another data owner.
func TestCrossTenantClientAPI(t *testing.T) {
	e := apitest.Get(t)
	a, b := e.NewOwner(t, "probe-tenant-a"), e.NewOwner(t, "probe-tenant-b")
	aKey := a.NewRegistrationKey(t, store.RegistrationKeyInput{})
	aProbe := a.NewProbe(t, aKey.RegistrationKey)
	bProbe := b.NewProbe(t, b.NewRegistrationKey(t, store.RegistrationKeyInput{}).RegistrationKey)
	bAnalytics, _ := b.NewKey(t, apitest.KeyOpts{Kind: auth.KindClientAnalytics})
	bExport, _ := b.NewKey(t, apitest.KeyOpts{Kind: auth.KindExport})
	aDefault := a.NewConfig(t, "public", "a default", true)
	b.NewConfig(t, "public", "b default", true)

	t.Run("a registration key makes clients of its own data owner", func(t *testing.T) {
		r := register(t, e, map[string]any{"registration_key": aKey.RegistrationKey})
		cu, _ := apitest.Object(t, apitest.WantStatus(t, r, http.StatusCreated))["client_uuid"].(string)
		apitest.WantStatus(t, e.Admin(t, http.MethodGet, "/clients/"+cu, a.Key, nil), http.StatusOK)
		apitest.WantNotFound(t, e.Admin(t, http.MethodGet, "/clients/"+cu, b.Key, nil), "A's probe read by B")
	})

	t.Run("a probe gets its own data owner's configs", func(t *testing.T) {
		r := e.Probe(t, http.MethodGet, "/config", aProbe.Secret, nil)
		pc := apitest.Object(t, apitest.Object(t, apitest.WantStatus(t, r, http.StatusOK))["public_config"])
		if apitest.Int(t, pc["id"]) != aDefault {
			t.Errorf("A's probe got config %v, want A's default %d", pc["id"], aDefault)
		}
	})

	t.Run("nobody reports for another data owner's client", func(t *testing.T) {
		// B's probe naming A's probe, B's analytics key naming A's probe.
		for _, key := range []string{bProbe.Secret, bAnalytics} {
			doc := []any{probeMeasurement(uuid.NewString(), aProbe.UUID, "VideoMeasurement", "youtube")}
			r := e.Probe(t, http.MethodPost, "/measurements", key, doc)
			item := apitest.Object(t, apitest.List(t, apitest.Object(t, apitest.WantStatus(t, r, 422))["errors"])[0])
			if item["rule"] != "client_uuid" {
				t.Errorf("B reporting for A's client: %s", r.Raw)
			}
		}
		var n int
		_ = e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM documents WHERE client_uuid = $1`, aProbe.UUID).Scan(&n)
		if n != 0 {
			t.Errorf("%d documents stored for A's probe", n)
		}
	})

	t.Run("document ids are the data owner's own", func(t *testing.T) {
		id := uuid.NewString()
		apitest.WantStatus(t, e.Probe(t, http.MethodPost, "/measurements", aProbe.Secret,
			[]any{probeMeasurement(id, aProbe.UUID, "VideoMeasurement", "youtube")}), http.StatusOK)
		// B's probe may use the same id: it is another data owner's document.
		r := e.Probe(t, http.MethodPost, "/measurements", bProbe.Secret, []any{probeMeasurement(id, bProbe.UUID, "WebMeasurement", "website")})
		if body := apitest.Object(t, apitest.WantStatus(t, r, http.StatusOK)); apitest.Int(t, body["accepted"]) != 1 {
			t.Errorf("B's document with A's id: %s", r.Raw)
		}
		stored, err := e.Store.Document(context.Background(), a.ID, vocab.KindMeasurement, id)
		if err != nil || *stored.ClientUUID != aProbe.UUID || *stored.Type != "VideoMeasurement" {
			t.Errorf("A's document after B's report: %+v %v", stored, err)
		}
		raw := e.Do(t, http.MethodGet, server.ExportBase+"/measurements", bExport, nil).Raw
		if bytes.Contains(raw, []byte(aProbe.UUID)) {
			t.Errorf("B's export shows A's probe: %s", raw)
		}
	})
}
