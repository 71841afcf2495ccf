package server_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/clientapi"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/rest"
	"github.com/fleetgraph/fleetgraph/store"
)

// rolesFixture is one data owner with a key per role and the long-lived
// records the read-only cells of the matrix look at.
type rolesFixture struct {
	e    *apitest.Env
	o    *apitest.Owner
	keys map[model.Role]string

	isp, capability, credential, user, client, config int64
	adminKey, analyticsKey, exportKey                 int64
	clientUUID                                        string
	// role is the role of the key the matrix is about to call with (for
	// records that belong to the key's user: AI conversations).
	role model.Role
}

var rolesOrder = []model.Role{model.RoleViewer, model.RoleEditor, model.RoleAdmin, model.RoleOrgAdmin}

func newRolesFixture(t *testing.T, prefix string) *rolesFixture {
	t.Helper()
	e := apitest.Get(t)
	o := e.NewOwner(t, prefix)
	f := &rolesFixture{e: e, o: o, keys: map[model.Role]string{model.RoleOrgAdmin: o.Key}}
	for _, r := range []model.Role{model.RoleViewer, model.RoleEditor, model.RoleAdmin} {
		f.keys[r], _ = o.NewKey(t, apitest.KeyOpts{UserRole: r})
	}
	f.isp = f.o.NewISP(t, store.IspInput{}).ID
	f.capability = f.o.NewCapability(t, store.CapabilityInput{}).ID
	f.credential = f.o.NewCredential(t, rolesCredential).ID
	f.user = f.o.NewUser(t, store.NewUser{}).ID
	c := f.o.NewClient(t, store.NewClient{Label: apitest.Ptr(apitest.Unique("probe"))})
	f.client, f.clientUUID = c.ID, c.UUID
	e.SQL(t, `UPDATE users SET ai_usage_accepted = true WHERE data_owner_id = $1`, o.ID)
	o.InsertDocuments(t, "anomaly_event", anomEvent(rolesAnomaly, f.clientUUID, "new"))
	f.config = f.o.NewConfigWith(t, apitest.ConfigOpts{Draft: apitest.EmptyConfigDocument(store.ConfigPublic)})
	f.adminKey = f.newKey(t, auth.KindClientAdmin)
	f.analyticsKey = f.newKey(t, auth.KindClientAnalytics)
	f.exportKey = f.newKey(t, auth.KindExport)
	return f
}

// rolesAnomaly is the anomaly event of the roles fixture.
const rolesAnomaly = "rule-roles::spike::1740787200"

// conversation makes an AI conversation of the user of the key of f.role
// (with one user message) and answers its path.
func (f *rolesFixture) conversation(t *testing.T) string {
	t.Helper()
	c := f.e.AdminCreate(t, f.keys[f.role], "/ai_conversations", map[string]any{"message": aiUserMessage("Hello")})
	return fmt.Sprintf("/ai_conversations/%d", apitest.Int(t, c["id"]))
}

// rolesCredential is a service credential with a login and a password.
var rolesCredential = apitest.CredentialOpts{Username: apitest.Ptr("probe"), Password: "s3cret"}

// newKey makes a key of kind whose acting role is viewer, so that an admin
// may delete it as well as an org_admin.
func (f *rolesFixture) newKey(t *testing.T, kind auth.Kind) int64 {
	t.Helper()
	_, id := f.o.NewKey(t, apitest.KeyOpts{Kind: kind, EffectiveRole: apitest.Ptr(model.RoleViewer)})
	return id
}

// rolesCall is one request of a matrix cell. intact, when set, is a path
// that must still answer 200 (read with the org_admin key) after the call
// was refused: a refused mutation leaves its target alone.
type rolesCall struct {
	path   string
	body   any
	intact string
}

// rolesCell is the expectation of one route: the least role that may call
// it, and how to build a call against fresh fixtures.
type rolesCell struct {
	action string
	min    model.Role
	call   func(t *testing.T, f *rolesFixture) rolesCall
}

// rolesMatrix holds one cell per route of rest.AdminRoutes, keyed "METHOD path".
var rolesMatrix = map[string]rolesCell{
	"GET /isps": {"list ISPs", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/isps"}
	}},
	"POST /isps": {"create ISP", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/isps", body: map[string]any{"name": apitest.Unique("new-isp"), "country": "AT", "type": "mobile"}}
	}},
	"GET /isps/{id}": {"read an ISP", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: fmt.Sprintf("/isps/%d", f.isp)}
	}},
	"PUT /isps/{id}": {"update an ISP", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		p := fmt.Sprintf("/isps/%d", f.o.NewISP(t, store.IspInput{}).ID)
		return rolesCall{path: p, body: map[string]any{"name": apitest.Unique("renamed-isp")}, intact: p}
	}},
	"DELETE /isps/{id}": {"delete an ISP", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		p := fmt.Sprintf("/isps/%d", f.o.NewISP(t, store.IspInput{}).ID)
		return rolesCall{path: p, intact: p}
	}},
	"POST /isps/{id}/merge_into": {"merge ISPs", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		src, dst := f.o.NewISP(t, store.IspInput{}).ID, f.o.NewISP(t, store.IspInput{}).ID
		return rolesCall{path: fmt.Sprintf("/isps/%d/merge_into", src), body: map[string]any{"target_id": dst},
			intact: fmt.Sprintf("/isps/%d", src)}
	}},

	"GET /capabilities": {"list capabilities", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/capabilities"}
	}},
	"POST /capabilities": {"create capability", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/capabilities", body: map[string]any{"name": apitest.Unique("new-capability"),
			"allowed_measurement_types": []string{"VideoMeasurement"}}}
	}},
	"GET /capabilities/{id}": {"read a capability", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: fmt.Sprintf("/capabilities/%d", f.capability)}
	}},
	"PUT /capabilities/{id}": {"update a capability", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		p := fmt.Sprintf("/capabilities/%d", f.o.NewCapability(t, store.CapabilityInput{}).ID)
		return rolesCall{path: p, body: map[string]any{"comment": "changed"}, intact: p}
	}},
	"DELETE /capabilities/{id}": {"delete a capability", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		p := fmt.Sprintf("/capabilities/%d", f.o.NewCapability(t, store.CapabilityInput{}).ID)
		return rolesCall{path: p, intact: p}
	}},

	"GET /service_credentials": {"list service credentials", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/service_credentials"}
	}},
	"POST /service_credentials": {"create service credential", model.RoleAdmin, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/service_credentials", body: map[string]any{"name": apitest.Unique("new-credential"),
			"service": "netflix", "username": "u", "password": "p"}}
	}},
	"GET /service_credentials/{id}": {"read a service credential", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: fmt.Sprintf("/service_credentials/%d", f.credential)}
	}},
	"PUT /service_credentials/{id}": {"update a service credential", model.RoleAdmin, func(t *testing.T, f *rolesFixture) rolesCall {
		p := fmt.Sprintf("/service_credentials/%d", f.o.NewCredential(t, rolesCredential).ID)
		return rolesCall{path: p, body: map[string]any{"username": "other", "password": "n3w"}, intact: p}
	}},
	"DELETE /service_credentials/{id}": {"delete a service credential", model.RoleAdmin, func(t *testing.T, f *rolesFixture) rolesCall {
		p := fmt.Sprintf("/service_credentials/%d", f.o.NewCredential(t, rolesCredential).ID)
		return rolesCall{path: p, intact: p}
	}},

	"GET /client_admin_api_keys": {"list admin API keys", model.RoleAdmin, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/client_admin_api_keys"}
	}},
	"POST /client_admin_api_keys": {"create admin API key", model.RoleAdmin, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/client_admin_api_keys", body: map[string]any{"name": apitest.Unique("key"), "effective_role": "viewer"}}
	}},
	"GET /client_admin_api_keys/{id}": {"read an admin API key", model.RoleAdmin, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: fmt.Sprintf("/client_admin_api_keys/%d", f.adminKey)}
	}},
	"DELETE /client_admin_api_keys/{id}": {"delete an admin API key", model.RoleAdmin, func(t *testing.T, f *rolesFixture) rolesCall {
		p := fmt.Sprintf("/client_admin_api_keys/%d", f.newKey(t, auth.KindClientAdmin))
		return rolesCall{path: p, intact: p}
	}},
	"GET /client_analytics_api_keys": {"list analytics API keys", model.RoleAdmin, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/client_analytics_api_keys"}
	}},
	"POST /client_analytics_api_keys": {"create analytics API key", model.RoleAdmin, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/client_analytics_api_keys", body: map[string]any{"name": apitest.Unique("analytics")}}
	}},
	"GET /client_analytics_api_keys/{id}": {"read an analytics API key", model.RoleAdmin, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: fmt.Sprintf("/client_analytics_api_keys/%d", f.analyticsKey)}
	}},
	"DELETE /client_analytics_api_keys/{id}": {"delete an analytics API key", model.RoleAdmin, func(t *testing.T, f *rolesFixture) rolesCall {
		p := fmt.Sprintf("/client_analytics_api_keys/%d", f.newKey(t, auth.KindClientAnalytics))
		return rolesCall{path: p, intact: p}
	}},
	"GET /export_api_keys": {"list export API keys", model.RoleAdmin, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/export_api_keys"}
	}},
	"POST /export_api_keys": {"create export API key", model.RoleAdmin, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/export_api_keys", body: map[string]any{"name": apitest.Unique("export")}}
	}},
	"GET /export_api_keys/{id}": {"read an export API key", model.RoleAdmin, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: fmt.Sprintf("/export_api_keys/%d", f.exportKey)}
	}},
	"DELETE /export_api_keys/{id}": {"delete an export API key", model.RoleAdmin, func(t *testing.T, f *rolesFixture) rolesCall {
		p := fmt.Sprintf("/export_api_keys/%d", f.newKey(t, auth.KindExport))
		return rolesCall{path: p, intact: p}
	}},

	"GET /client_admin_users": {"list users", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/client_admin_users"}
	}},
	"POST /client_admin_users": {"create a viewer user", model.RoleAdmin, func(t *testing.T, f *rolesFixture) rolesCall {
		name := apitest.Unique("invitee")
		return rolesCall{path: "/client_admin_users", body: map[string]any{"email": name + "@example.org",
			"username": name, "role": "viewer"}}
	}},
	"GET /client_admin_users/{id}": {"read a user", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: fmt.Sprintf("/client_admin_users/%d", f.user)}
	}},
	"PUT /client_admin_users/{id}": {"update another user", model.RoleAdmin, func(t *testing.T, f *rolesFixture) rolesCall {
		p := fmt.Sprintf("/client_admin_users/%d", f.o.NewUser(t, store.NewUser{}).ID)
		return rolesCall{path: p, body: map[string]any{"first_name": "Changed"}, intact: p}
	}},

	"GET /clients": {"list clients", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/clients"}
	}},
	"GET /clients/check_label_availability": {"check label availability", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/clients/check_label_availability?label=" + apitest.Unique("free")}
	}},
	"GET /clients/{id}": {"read a client", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: fmt.Sprintf("/clients/%d", f.client)}
	}},

	"GET /clients/{id}/system_status_records": {"read a client's system status records", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: fmt.Sprintf("/clients/%d/system_status_records", f.client)}
	}},
	"GET /fleet_health": {"read fleet health", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/fleet_health"}
	}},
	"GET /fleet_health/thresholds": {"read health thresholds", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/fleet_health/thresholds"}
	}},
	"PUT /fleet_health/thresholds": {"update health thresholds", model.RoleAdmin, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/fleet_health/thresholds", body: map[string]any{"cpu": map[string]any{"warning_percent": 70}}}
	}},
	"PUT /clients/{id}": {"update a client", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		p := fmt.Sprintf("/clients/%d", f.o.NewClient(t, store.NewClient{}).ID)
		return rolesCall{path: p, body: map[string]any{"label": apitest.Unique("renamed"), "tags": []string{"x"},
			"anomalies_muted": true}, intact: p}
	}},
	"DELETE /clients/{id}": {"delete a client", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		p := fmt.Sprintf("/clients/%d", f.o.NewClient(t, store.NewClient{}).ID)
		return rolesCall{path: p, intact: p}
	}},
	"POST /clients/{id}/disable": {"disable a client", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: fmt.Sprintf("/clients/%d/disable", f.o.NewClient(t, store.NewClient{}).ID),
			body: map[string]any{"reason": "retired"}}
	}},
	"POST /clients/{id}/enable": {"enable a client", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: fmt.Sprintf("/clients/%d/enable", f.client)}
	}},

	"GET /client_groups": {"list client groups", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/client_groups"}
	}},
	"POST /client_groups": {"create a client group", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/client_groups", body: map[string]any{"name": apitest.Unique("group"), "client_ids": []int64{f.client}}}
	}},
	"GET /client_groups/{id}": {"read a client group", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: fmt.Sprintf("/client_groups/%d", f.o.NewGroup(t, "", f.client))}
	}},
	"PUT /client_groups/{id}": {"rename a client group", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		p := fmt.Sprintf("/client_groups/%d", f.o.NewGroup(t, ""))
		return rolesCall{path: p, body: map[string]any{"name": apitest.Unique("renamed-group")}, intact: p}
	}},
	"DELETE /client_groups/{id}": {"delete a client group", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		p := fmt.Sprintf("/client_groups/%d", f.o.NewGroup(t, ""))
		return rolesCall{path: p, intact: p}
	}},
	"POST /client_groups/{id}/add_clients": {"add clients to a group", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: fmt.Sprintf("/client_groups/%d/add_clients", f.o.NewGroup(t, "")),
			body: map[string]any{"client_ids": []int64{f.client}}}
	}},
	"POST /client_groups/{id}/remove_clients": {"remove clients from a group", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: fmt.Sprintf("/client_groups/%d/remove_clients", f.o.NewGroup(t, "", f.client)),
			body: map[string]any{"client_ids": []int64{f.client}}}
	}},

	"POST /isp_contracts": {"create an ISP contract", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/isp_contracts", body: map[string]any{"client_id": f.client, "isp_id": f.isp, "download_speed": 100}}
	}},
	"GET /isp_contracts/{id}": {"read an ISP contract", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: fmt.Sprintf("/isp_contracts/%d", f.o.NewContract(t, store.NewContract{ClientID: f.client}))}
	}},
	"PUT /isp_contracts/{id}": {"update an ISP contract", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		p := fmt.Sprintf("/isp_contracts/%d", f.o.NewContract(t, store.NewContract{ClientID: f.client}))
		return rolesCall{path: p, body: map[string]any{"monthly_price": 20, "currency": "EUR"}, intact: p}
	}},
	"DELETE /isp_contracts/{id}": {"delete an ISP contract", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		p := fmt.Sprintf("/isp_contracts/%d", f.o.NewContract(t, store.NewContract{ClientID: f.client}))
		return rolesCall{path: p, intact: p}
	}},
	"POST /isp_contracts/{id}/end": {"end an ISP contract", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: fmt.Sprintf("/isp_contracts/%d/end", f.o.NewContract(t, store.NewContract{ClientID: f.client}))}
	}},

	"GET /data_owner/settings": {"read settings", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/data_owner/settings"}
	}},
	"PUT /data_owner/settings": {"update settings", model.RoleAdmin, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/data_owner/settings", body: map[string]any{"offline_threshold_minutes": 90}}
	}},
	"GET /ai_assistant/status": {"read AI assistant status", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/ai_assistant/status"}
	}},
	"POST /ai_assistant/explain_anomaly": {"have an anomaly explained", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/ai_assistant/explain_anomaly", body: map[string]any{"anomaly_id": rolesAnomaly}}
	}},
	"GET /ai_assistant/usage": {"read AI usage", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/ai_assistant/usage"}
	}},
	"PUT /ai_assistant/token_limit": {"set the AI token limit", model.RoleOrgAdmin, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/ai_assistant/token_limit", body: map[string]any{"limit": nil}, intact: "/ai_assistant/usage"}
	}},
	"GET /ai_conversations": {"list own AI conversations", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/ai_conversations"}
	}},
	"POST /ai_conversations": {"start an AI conversation", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/ai_conversations", body: map[string]any{"title": "matrix"}}
	}},
	"GET /ai_conversations/{id}": {"read own AI conversation", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: f.conversation(t)}
	}},
	"PATCH /ai_conversations/{id}": {"rename own AI conversation", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: f.conversation(t), body: map[string]any{"title": "renamed"}}
	}},
	"DELETE /ai_conversations/{id}": {"delete own AI conversation", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: f.conversation(t)}
	}},
	"PUT /ai_conversations/{id}/complete": {"complete own AI conversation", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: f.conversation(t) + "/complete", body: map[string]any{"message": aiUserMessage("How is the fleet?")}}
	}},
	"PATCH /ai_conversations/{id}/generated_title": {"title own AI conversation", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: f.conversation(t) + "/generated_title"}
	}},
	"GET /license_usage": {"read license usage", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/license_usage?extended=true"}
	}},
	"GET /license_usage/export": {"export license usage", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/license_usage/export"}
	}},
	"GET /software/downloads": {"read software downloads", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/software/downloads"}
	}},
}

func init() {
	for base, kind := range map[string]string{"/public_configs": store.ConfigPublic, "/schedule_configs": store.ConfigAutomator} {
		for pattern, cell := range configRoleCells(base, kind) {
			rolesMatrix[pattern] = cell
		}
	}
}

// configRoleCells are the matrix cells of the config routes under base
// (/public_configs, /schedule_configs): viewers read, editors manage.
func configRoleCells(base, kind string) map[string]rolesCell {
	doc := func() map[string]any { return apitest.EmptyConfigDocument(kind) }
	fresh := func(t *testing.T, f *rolesFixture, draft bool) string {
		opts := apitest.ConfigOpts{Kind: kind}
		if draft {
			opts.Draft = doc()
		}
		return fmt.Sprintf("%s/%d", base, f.o.NewConfigWith(t, opts))
	}
	editorCall := func(action, tail string, draft bool, body func(f *rolesFixture) any) rolesCell {
		return rolesCell{action, model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
			p := fresh(t, f, draft)
			var b any
			if body != nil {
				b = body(f)
			}
			return rolesCall{path: p + tail, body: b, intact: p}
		}}
	}
	assignment := func(f *rolesFixture) any { return map[string]any{"client_ids": []int64{f.client}} }
	return map[string]rolesCell{
		"GET " + base: {"list " + kind + " configs", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
			return rolesCall{path: base}
		}},
		"POST " + base: {"create a " + kind + " config", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
			return rolesCall{path: base, body: map[string]any{"name": apitest.Unique("cfg"), "data": doc()}}
		}},
		"POST " + base + "/import": {"import a " + kind + " config", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
			return rolesCall{path: base + "/import", body: map[string]any{"name": apitest.Unique("cfg"), "data": doc()}}
		}},
		"GET " + base + "/{id}": {"read a " + kind + " config", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
			return rolesCall{path: fresh(t, f, false)}
		}},
		"PUT " + base + "/{id}":            editorCall("save a "+kind+" config's draft", "", false, func(*rolesFixture) any { return map[string]any{"data": doc()} }),
		"DELETE " + base + "/{id}":         editorCall("delete a "+kind+" config", "", false, nil),
		"POST " + base + "/{id}/publish":   editorCall("publish a "+kind+" config", "/publish", true, nil),
		"DELETE " + base + "/{id}/draft":   editorCall("discard a "+kind+" config's draft", "/draft", true, nil),
		"PUT " + base + "/{id}/default":    editorCall("make a "+kind+" config the default", "/default", false, nil),
		"DELETE " + base + "/{id}/default": editorCall("unmake a "+kind+" default", "/default", false, nil),
		"POST " + base + "/{id}/assign":    editorCall("assign a "+kind+" config", "/assign", false, assignment),
		"POST " + base + "/{id}/unassign":  editorCall("unassign a "+kind+" config", "/unassign", false, assignment),
	}
}

// TestRoleMatrix calls every route of the administration API with a key of
// each role. A route without a matrix entry fails the test.
func TestRoleMatrix(t *testing.T) {
	f := newRolesFixture(t, "roles")
	seen := map[string]bool{}
	cells := 0
	for _, rt := range rest.AdminRoutes {
		pattern := rt.Method + " " + rt.Path
		cell, ok := rolesMatrix[pattern]
		if !ok {
			t.Errorf("route %s has no entry in rolesMatrix: say which role may call it", pattern)
			continue
		}
		if seen[pattern] {
			t.Errorf("route %s is listed twice in rest.AdminRoutes", pattern)
			continue
		}
		seen[pattern] = true
		for _, role := range rolesOrder {
			allowed := role.AtLeast(cell.min)
			verb := "cannot"
			if allowed {
				verb = "can"
			}
			cells++
			t.Run(fmt.Sprintf("%s %s %s", role, verb, cell.action), func(t *testing.T) {
				f.role = role
				c := cell.call(t, f)
				r := f.e.Admin(t, rt.Method, c.path, f.keys[role], c.body)
				if !allowed {
					apitest.WantForbidden(t, r)
					if c.intact != "" {
						if g := f.e.Admin(t, http.MethodGet, c.intact, f.o.Key, nil); g.Status != http.StatusOK {
							t.Errorf("after the refused call GET %s answers %d, want 200: %s", c.intact, g.Status, g.Raw)
						}
					}
					return
				}
				if r.Status != rt.Status {
					t.Errorf("%s %s as %s: status %d, want %d: %s", rt.Method, c.path, role, r.Status, rt.Status, r.Raw)
					return
				}
				if rt.CSV != nil {
					if ct := r.Header.Get("Content-Type"); ct != rest.CSVContentType {
						t.Errorf("%s %s as %s: Content-Type %q, want %q", rt.Method, c.path, role, ct, rest.CSVContentType)
					}
					return
				}
				if _, ok := r.JSON.(map[string]any); !ok {
					t.Errorf("%s %s as %s: body is not a JSON object: %s", rt.Method, c.path, role, r.Raw)
				}
			})
		}
	}
	for pattern := range rolesMatrix {
		if !seen[pattern] {
			t.Errorf("rolesMatrix entry %q names no route of rest.AdminRoutes", pattern)
		}
	}
	if want := len(rest.AdminRoutes) * len(rolesOrder); cells != want {
		t.Errorf("ran %d matrix cells, want %d", cells, want)
	}
}

// TestRolesCapKeysAndGrants covers the role arithmetic of keys: a key acts
// with its creator's role capped by effective_role, and nobody grants a role
// above their own.
func TestRolesCapKeysAndGrants(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "rolecap")
	viewer, editor, admin, orgAdmin := model.RoleViewer, model.RoleEditor, model.RoleAdmin, model.RoleOrgAdmin
	adminKey, _ := o.NewKey(t, apitest.KeyOpts{UserRole: admin})
	isp := map[string]any{"name": "Capped", "country": "DE", "type": "fixed"}
	newUser := func(role model.Role) map[string]any {
		name := apitest.Unique("grant")
		return map[string]any{"email": name + "@example.org", "username": name, "role": string(role)}
	}

	t.Run("viewer-effective key of an org_admin cannot create ISP", func(t *testing.T) {
		// Made through the API by the org_admin ...
		r := e.Admin(t, http.MethodPost, "/client_admin_api_keys", o.Key, map[string]any{"effective_role": "viewer"})
		if r.Status != http.StatusCreated {
			t.Fatalf("create viewer key: %d %s", r.Status, r.Raw)
		}
		k := r.Obj(t)["client_admin_api_key"].(map[string]any)
		if k["effective_role"] != "viewer" {
			t.Errorf("effective_role = %v, want viewer", k["effective_role"])
		}
		apiKey, _ := k["api_key"].(string)
		apitest.WantForbidden(t, e.Admin(t, http.MethodPost, "/isps", apiKey, isp))
		if g := e.Admin(t, http.MethodGet, "/isps", apiKey, nil); g.Status != http.StatusOK {
			t.Errorf("the viewer key cannot read: %d %s", g.Status, g.Raw)
		}
		// ... and straight through the store.
		stored, _ := o.NewKey(t, apitest.KeyOpts{EffectiveRole: &viewer})
		apitest.WantForbidden(t, e.Admin(t, http.MethodPost, "/isps", stored, isp))
	})

	t.Run("admin cannot create org_admin user", func(t *testing.T) {
		apitest.WantForbidden(t, e.Admin(t, http.MethodPost, "/client_admin_users", adminKey, newUser(orgAdmin)))
	})

	t.Run("admin can create admin user", func(t *testing.T) {
		r := e.Admin(t, http.MethodPost, "/client_admin_users", adminKey, newUser(admin))
		if r.Status != http.StatusCreated {
			t.Fatalf("status %d, want 201: %s", r.Status, r.Raw)
		}
		if got := r.Obj(t)["user"].(map[string]any)["role"]; got != "admin" {
			t.Errorf("role = %v, want admin", got)
		}
	})

	t.Run("admin cannot create org_admin-effective key", func(t *testing.T) {
		apitest.WantForbidden(t, e.Admin(t, http.MethodPost, "/client_admin_api_keys", adminKey,
			map[string]any{"effective_role": "org_admin"}))
	})

	t.Run("admin can create admin-effective key", func(t *testing.T) {
		r := e.Admin(t, http.MethodPost, "/client_admin_api_keys", adminKey, map[string]any{"effective_role": "admin"})
		if r.Status != http.StatusCreated {
			t.Fatalf("status %d, want 201: %s", r.Status, r.Raw)
		}
		if got := r.Obj(t)["client_admin_api_key"].(map[string]any)["effective_role"]; got != "admin" {
			t.Errorf("effective_role = %v, want admin", got)
		}
	})

	t.Run("key an admin makes without effective_role acts as admin", func(t *testing.T) {
		r := e.Admin(t, http.MethodPost, "/client_admin_api_keys", adminKey, map[string]any{"name": "plain"})
		if r.Status != http.StatusCreated {
			t.Fatalf("status %d, want 201: %s", r.Status, r.Raw)
		}
		k := r.Obj(t)["client_admin_api_key"].(map[string]any)["api_key"].(string)
		apitest.WantForbidden(t, e.Admin(t, http.MethodPost, "/client_admin_users", k, newUser(orgAdmin)))
		if r := e.Admin(t, http.MethodPost, "/client_admin_users", k, newUser(admin)); r.Status != http.StatusCreated {
			t.Errorf("the new key cannot create an admin user: %d %s", r.Status, r.Raw)
		}
	})

	t.Run("key made without effective_role under an admin-capped key stays capped", func(t *testing.T) {
		capped, _ := o.NewKey(t, apitest.KeyOpts{EffectiveRole: &admin}) // the org_admin's user, capped
		r := e.Admin(t, http.MethodPost, "/client_admin_api_keys", capped, map[string]any{"name": "child"})
		if r.Status != http.StatusCreated {
			t.Fatalf("status %d, want 201: %s", r.Status, r.Raw)
		}
		child := r.Obj(t)["client_admin_api_key"].(map[string]any)["api_key"].(string)
		apitest.WantForbidden(t, e.Admin(t, http.MethodPost, "/client_admin_users", child, newUser(orgAdmin)))
		apitest.WantForbidden(t, e.Admin(t, http.MethodPost, "/client_admin_api_keys", child,
			map[string]any{"effective_role": "org_admin"}))
	})

	t.Run("editor-effective key of an admin cannot create users", func(t *testing.T) {
		key, _ := o.NewKey(t, apitest.KeyOpts{UserRole: admin, EffectiveRole: &editor})
		apitest.WantForbidden(t, e.Admin(t, http.MethodPost, "/client_admin_users", key, newUser(viewer)))
		apitest.WantForbidden(t, e.Admin(t, http.MethodPost, "/client_admin_api_keys", key, map[string]any{}))
		if r := e.Admin(t, http.MethodPost, "/isps", key, isp); r.Status != http.StatusCreated {
			t.Errorf("the editor key cannot create an ISP: %d %s", r.Status, r.Raw)
		}
	})

	t.Run("admin-effective key of an org_admin cannot create org_admin user", func(t *testing.T) {
		key, _ := o.NewKey(t, apitest.KeyOpts{EffectiveRole: &admin})
		apitest.WantForbidden(t, e.Admin(t, http.MethodPost, "/client_admin_users", key, newUser(orgAdmin)))
		if r := e.Admin(t, http.MethodPost, "/client_admin_users", key, newUser(admin)); r.Status != http.StatusCreated {
			t.Errorf("admin-effective key cannot create an admin user: %d %s", r.Status, r.Raw)
		}
	})

	t.Run("org_admin can create org_admin user and key", func(t *testing.T) {
		if r := e.Admin(t, http.MethodPost, "/client_admin_users", o.Key, newUser(orgAdmin)); r.Status != http.StatusCreated {
			t.Errorf("create org_admin user: %d %s", r.Status, r.Raw)
		}
		r := e.Admin(t, http.MethodPost, "/client_admin_api_keys", o.Key, map[string]any{"effective_role": "org_admin"})
		if r.Status != http.StatusCreated {
			t.Errorf("create org_admin key: %d %s", r.Status, r.Raw)
		}
	})

	t.Run("admin cannot delete an org_admin key", func(t *testing.T) {
		_, id := o.NewKey(t, apitest.KeyOpts{}) // the org_admin's, no cap
		p := fmt.Sprintf("/client_admin_api_keys/%d", id)
		apitest.WantForbidden(t, e.Admin(t, http.MethodDelete, p, adminKey, nil))
		if r := e.Admin(t, http.MethodGet, p, o.Key, nil); r.Status != http.StatusOK {
			t.Errorf("the key is gone after a refused delete: %d %s", r.Status, r.Raw)
		}
		if r := e.Admin(t, http.MethodDelete, p, o.Key, nil); r.Status != http.StatusOK {
			t.Errorf("org_admin delete: %d %s", r.Status, r.Raw)
		}
	})

	t.Run("viewer can update own profile but not another user", func(t *testing.T) {
		key, _ := o.NewKey(t, apitest.KeyOpts{UserRole: viewer})
		g := e.GraphQL(t, key, `{ viewer { userId role } }`, nil)
		if len(g.Errors) > 0 {
			t.Fatalf("viewer: %s", g.Raw)
		}
		me := apitest.Int(t, g.Data["viewer"].(map[string]any)["userId"])
		r := e.Admin(t, http.MethodPut, fmt.Sprintf("/client_admin_users/%d", me), key,
			map[string]any{"first_name": "Vera", "notification_config": map[string]any{"anomaly_events": true}})
		if r.Status != http.StatusOK {
			t.Fatalf("own profile: %d %s", r.Status, r.Raw)
		}
		u := r.Obj(t)["user"].(map[string]any)
		if u["first_name"] != "Vera" || u["role"] != "viewer" {
			t.Errorf("own profile after update = %v", u)
		}
		apitest.WantForbidden(t, e.Admin(t, http.MethodPut, fmt.Sprintf("/client_admin_users/%d", o.UserID), key,
			map[string]any{"first_name": "Mallory"}))
	})
}

// TestRolesThroughGraphQL spot-checks the same role checks on /graphql:
// a refused operation carries extensions.code FORBIDDEN and no data.
func TestRolesThroughGraphQL(t *testing.T) {
	f := newRolesFixture(t, "rolesgql")
	cases := []struct {
		name    string
		role    model.Role
		field   string
		query   string
		vars    map[string]any
		allowed bool
	}{
		{"viewer cannot create ISP", model.RoleViewer, "ispCreate",
			`mutation { ispCreate(input: {name: "G", country: "DE", type: fixed}) { id } }`, nil, false},
		{"editor can create ISP", model.RoleEditor, "ispCreate",
			`mutation { ispCreate(input: {name: "G", country: "DE", type: fixed}) { id } }`, nil, true},
		{"viewer cannot delete ISP", model.RoleViewer, "ispDelete",
			`mutation($id: Int!) { ispDelete(id: $id) }`, map[string]any{"id": f.isp}, false},
		{"viewer cannot create capability", model.RoleViewer, "capabilityCreate",
			`mutation { capabilityCreate(input: {name: "G"}) { id } }`, nil, false},
		{"viewer cannot create registration key", model.RoleViewer, "registrationKeyCreate",
			`mutation($c: Int!) { registrationKeyCreate(input: {capabilityId: $c}) { id } }`, map[string]any{"c": f.capability}, false},
		{"editor can create registration key", model.RoleEditor, "registrationKeyCreate",
			`mutation($c: Int!) { registrationKeyCreate(input: {capabilityId: $c}) { id } }`, map[string]any{"c": f.capability}, true},
		{"editor cannot create service credential", model.RoleEditor, "serviceCredentialCreate",
			`mutation { serviceCredentialCreate(input: {name: "G", service: "smtp"}) { id } }`, nil, false},
		{"editor cannot update settings", model.RoleEditor, "dataOwnerSettingsUpdate",
			`mutation { dataOwnerSettingsUpdate(input: {offlineThresholdMinutes: 5}) { offlineThresholdMinutes } }`, nil, false},
		{"editor cannot create user", model.RoleEditor, "userCreate",
			`mutation { userCreate(input: {email: "g@example.org", username: "g", role: viewer}) { id } }`, nil, false},
		{"editor cannot create admin API key", model.RoleEditor, "clientAdminApiKeyCreate",
			`mutation { clientAdminApiKeyCreate(input: {}) { id } }`, nil, false},
		{"editor cannot create export API key", model.RoleEditor, "exportApiKeyCreate",
			`mutation { exportApiKeyCreate(input: {}) { id } }`, nil, false},
		{"viewer cannot list admin API keys", model.RoleViewer, "clientAdminApiKeys",
			`{ clientAdminApiKeys { id } }`, nil, false},
		{"editor cannot page admin API keys", model.RoleEditor, "clientAdminApiKeysConnection",
			`{ clientAdminApiKeysConnection { totalCount } }`, nil, false},
		{"editor cannot page analytics API keys", model.RoleEditor, "clientAnalyticsApiKeysConnection",
			`{ clientAnalyticsApiKeysConnection { totalCount } }`, nil, false},
		{"editor cannot page export API keys", model.RoleEditor, "exportApiKeysConnection",
			`{ exportApiKeysConnection { totalCount } }`, nil, false},
		{"admin can page admin API keys", model.RoleAdmin, "clientAdminApiKeysConnection",
			`{ clientAdminApiKeysConnection { totalCount } }`, nil, true},
		{"viewer can page webhooks", model.RoleViewer, "webhooksConnection", `{ webhooksConnection { totalCount } }`, nil, true},
		{"admin cannot create org_admin user", model.RoleAdmin, "userCreate",
			`mutation { userCreate(input: {email: "boss@example.org", username: "boss", role: org_admin}) { id } }`, nil, false},
		{"admin cannot create org_admin-effective key", model.RoleAdmin, "clientAdminApiKeyCreate",
			`mutation { clientAdminApiKeyCreate(input: {effectiveRole: org_admin}) { id } }`, nil, false},
		{"admin can create admin user", model.RoleAdmin, "userCreate",
			`mutation { userCreate(input: {email: "second@example.org", username: "second", role: admin}) { id role } }`, nil, true},
		{"editor cannot change health thresholds", model.RoleEditor, "healthThresholdsUpdate",
			`mutation { healthThresholdsUpdate(input: {cpu: {warningPercent: 70}}) { cpu { warningPercent } } }`, nil, false},
		{"admin can change health thresholds", model.RoleAdmin, "healthThresholdsUpdate",
			`mutation { healthThresholdsUpdate(input: {cpu: {warningPercent: 70}}) { cpu { warningPercent } } }`, nil, true},
		{"viewer can read fleet health", model.RoleViewer, "fleetHealth", `{ fleetHealth { clientId state } }`, nil, true},
		{"viewer can read system status records", model.RoleViewer, "systemStatusRecords",
			`query($id: ID!) { systemStatusRecords(clientId: $id) { total } }`, map[string]any{"id": fmt.Sprint(f.client)}, true},
		{"viewer can read service credentials", model.RoleViewer, "serviceCredentials",
			`{ serviceCredentials { id name } }`, nil, true},
		{"viewer can read configs", model.RoleViewer, "measurementConfigs",
			`{ measurementConfigs(kind: public) { id name } }`, nil, true},
		{"viewer can page configs", model.RoleViewer, "measurementConfigsConnection",
			`{ measurementConfigsConnection(kind: public) { totalCount edges { node { id name } } } }`, nil, true},
		{"viewer cannot create config", model.RoleViewer, "measurementConfigCreate",
			`mutation { measurementConfigCreate(kind: public, input: {name: "G"}) { id } }`, nil, false},
		{"viewer cannot publish config", model.RoleViewer, "measurementConfigPublish",
			`mutation($id: Int!) { measurementConfigPublish(kind: public, id: $id) { id } }`, map[string]any{"id": f.config}, false},
		{"viewer cannot assign config", model.RoleViewer, "measurementConfigAssign",
			`mutation($id: Int!, $c: Int!) { measurementConfigAssign(kind: public, id: $id, input: {clientIds: [$c]}) { id } }`,
			map[string]any{"id": f.config, "c": f.client}, false},
		{"editor can assign config", model.RoleEditor, "measurementConfigAssign",
			`mutation($id: Int!, $c: Int!) { measurementConfigAssign(kind: public, id: $id, input: {clientIds: [$c]}) { id } }`,
			map[string]any{"id": f.config, "c": f.client}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := f.e.GraphQL(t, f.keys[c.role], c.query, c.vars)
			if c.allowed {
				if len(g.Errors) > 0 || g.Data[c.field] == nil {
					t.Errorf("want success, got %s", g.Raw)
				}
				return
			}
			if g.Code() != "FORBIDDEN" {
				t.Errorf("extensions.code = %q, want FORBIDDEN: %s", g.Code(), g.Raw)
				return
			}
			if g.Errors[0].Message == "" {
				t.Errorf("FORBIDDEN error without a message: %s", g.Raw)
			}
			if g.Data != nil && g.Data[c.field] != nil {
				t.Errorf("refused %s still answered data: %s", c.field, g.Raw)
			}
		})
	}
	// The refused ispDelete left the ISP alone.
	if r := f.e.Admin(t, http.MethodGet, fmt.Sprintf("/isps/%d", f.isp), f.o.Key, nil); r.Status != http.StatusOK {
		t.Errorf("ISP gone after refused GraphQL delete: %d %s", r.Status, r.Raw)
	}
}

// clientAPIKinds is the role matrix of the client API (/client_api/v1),
// whose callers are told apart by the kind of their key, not by a role:
// one cell per route of clientapi.API.Mount, keyed "METHOD path", with the
// kinds it admits (none: register takes a registration key in its body)
// and a body for the call.
var clientAPIKinds = map[string]struct {
	kinds []auth.Kind
	body  func(probeUUID string) any
}{
	"POST /register": {nil, nil},
	"GET /config":    {[]auth.Kind{auth.KindProbe}, nil},
	"POST /measurements": {[]auth.Kind{auth.KindProbe, auth.KindClientAnalytics}, func(cu string) any {
		return []any{probeMeasurement(uuid.NewString(), cu, "VideoMeasurement", "youtube")}
	}},
	"POST /client_reports": {[]auth.Kind{auth.KindProbe, auth.KindClientAnalytics}, func(cu string) any {
		return []any{map[string]any{"id": uuid.NewString(), "type": "P1203ClientReport", "client_uuid": cu, "created_at": "2026-11-20T10:00:00Z"}}
	}},
	"POST /event_bundles": {[]auth.Kind{auth.KindProbe, auth.KindClientAnalytics}, func(cu string) any {
		return []any{map[string]any{"id": uuid.NewString(), "type": "VideoEventBundle", "client_uuid": cu, "created_at": "2026-11-20T10:00:00Z"}}
	}},
	"POST /network_requests": {[]auth.Kind{auth.KindProbe, auth.KindClientAnalytics}, func(cu string) any {
		return []any{map[string]any{"id": uuid.NewString(), "client_uuid": cu, "created_at": "2026-11-20T10:00:00Z"}}
	}},
	"POST /user_feedbacks": {[]auth.Kind{auth.KindProbe, auth.KindClientAnalytics}, func(cu string) any {
		return []any{map[string]any{"id": uuid.NewString(), "client_uuid": cu, "created_at": "2026-11-20T10:00:00Z"}}
	}},
	"POST /system_status_records": {[]auth.Kind{auth.KindProbe, auth.KindClientAnalytics}, func(cu string) any {
		return []any{map[string]any{"id": uuid.NewString(), "client_uuid": cu, "created_at": "2026-11-20T10:00:00Z"}}
	}},
}

// TestClientAPIKeyKindMatrix calls every route of the client API with a
// key of every kind: the kinds a route admits get through (the answer is
// neither 401 nor 403), every other kind is a 403 naming what it takes.
// Analytics keys report for a web client, probes for themselves.
func TestClientAPIKeyKindMatrix(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "probe-matrix")
	p := o.NewProbe(t, o.NewRegistrationKey(t, store.RegistrationKeyInput{}).RegistrationKey)
	keys := map[auth.Kind]string{auth.KindClientAdmin: o.Key, auth.KindProbe: p.Secret}
	keys[auth.KindExport], _ = o.NewKey(t, apitest.KeyOpts{Kind: auth.KindExport})
	keys[auth.KindClientAnalytics], _ = o.NewKey(t, apitest.KeyOpts{Kind: auth.KindClientAnalytics})

	r := chi.NewRouter()
	(&clientapi.API{}).Mount(r)
	routes := 0
	_ = chi.Walk(r, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		routes++
		pattern := method + " " + route
		cell, ok := clientAPIKinds[pattern]
		if !ok {
			t.Errorf("%s has no entry in clientAPIKinds", pattern)
			return nil
		}
		if cell.kinds == nil {
			return nil
		}
		t.Run(pattern, func(t *testing.T) {
			for kind, key := range keys {
				cu := p.UUID
				if kind != auth.KindProbe {
					cu = uuid.NewString() // a web client
				}
				var body any
				if cell.body != nil {
					body = cell.body(cu)
				}
				got := e.Probe(t, method, route, key, body)
				if slices.Contains(cell.kinds, kind) {
					if got.Status != http.StatusOK {
						t.Errorf("%s key: %d %s, want 200", kind, got.Status, got.Raw)
					}
					continue
				}
				apitest.WantRefused(t, got, http.StatusForbidden, key)
			}
		})
		return nil
	})
	if routes != len(clientAPIKinds) {
		t.Errorf("%d client API routes, %d entries in clientAPIKinds", routes, len(clientAPIKinds))
	}
}
