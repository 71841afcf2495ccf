package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// wantFieldErrors asserts a 422 whose errors name every field of fields.
func wantFieldErrors(t *testing.T, r *apitest.Response, fields ...string) {
	t.Helper()
	body, _ := apitest.WantStatus(t, r, http.StatusUnprocessableEntity).(map[string]any)
	errs, _ := body["errors"].(map[string]any)
	for _, f := range fields {
		if msgs, _ := errs[f].([]any); len(msgs) == 0 {
			t.Errorf("422 names no error for %q: %s", f, r.Raw)
		}
	}
}

// clientOfBody is the {client} of a REST answer.
func clientOfBody(t *testing.T, r *apitest.Response) map[string]any {
	t.Helper()
	return apitest.Object(t, apitest.WantEnvelope(t, r, http.StatusOK, "client"))
}

// TestClientUpdate: an editor renames, labels, tags and mutes a client over
// REST and GraphQL; the answer is the client as GET shows it.
func TestClientUpdate(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "clientupd")
	editor, _ := o.NewKey(t, apitest.KeyOpts{UserRole: model.RoleEditor})
	c := o.NewClient(t, store.NewClient{Label: apitest.Ptr("Probe Berlin"), Tags: []string{"berlin"}})
	path := fmt.Sprintf("/clients/%d", c.ID)

	t.Run("editor updates labels, tags and muting", func(t *testing.T) {
		r := e.Admin(t, http.MethodPut, path, editor, map[string]any{"label": "  Probe Vienna  ", "extra_label": "rack 7",
			"tags": []string{"vienna", "fiber 1000", "floor:3"}, "anomalies_muted": true, "offline_notifications_muted": true})
		got := clientOfBody(t, r)
		if got["label"] != "Probe Vienna" || got["extra_label"] != "rack 7" || got["anomalies_muted"] != true ||
			got["offline_notifications_muted"] != true || got["system_health_notifications_muted"] != false {
			t.Errorf("updated client = %v", got)
		}
		if tags := apitest.Strings(t, got["tags"]); strings.Join(tags, "|") != "vienna|fiber 1000|floor:3" {
			t.Errorf("tags = %v", tags)
		}
		if _, ok := got["configuration"].(map[string]any); !ok {
			t.Errorf("the answer lacks the single record's configuration: %v", got)
		}
		// GET shows the same record.
		if g := clientOfBody(t, e.Admin(t, http.MethodGet, path, editor, nil)); g["label"] != "Probe Vienna" ||
			g["system_health_notifications_muted"] != false || g["anomalies_muted"] != true {
			t.Errorf("GET after the update = %v", g)
		}
	})

	t.Run("fields left out stay; null and empty clear", func(t *testing.T) {
		got := clientOfBody(t, e.Admin(t, http.MethodPut, path, editor, map[string]any{"system_health_notifications_muted": true,
			"anomalies_muted": false}))
		if got["label"] != "Probe Vienna" || got["extra_label"] != "rack 7" || len(apitest.Strings(t, got["tags"])) != 3 ||
			got["offline_notifications_muted"] != true || got["system_health_notifications_muted"] != true || got["anomalies_muted"] != false {
			t.Errorf("partial update changed more than asked: %v", got)
		}
		got = clientOfBody(t, e.Admin(t, http.MethodPut, path, editor, map[string]any{"extra_label": "", "tags": nil}))
		if got["extra_label"] != nil || got["tags"] != nil || got["label"] != "Probe Vienna" {
			t.Errorf("clearing extra_label and tags: %v", got)
		}
	})

	t.Run("GraphQL by UUID", func(t *testing.T) {
		d := e.GraphQLData(t, editor, `mutation($id: ID!) { clientUpdate(id: $id, input: {label: "Probe Graz", tags: ["graz"]}) {
			id label tags updatedAt } }`, map[string]any{"id": c.UUID})
		u := d["clientUpdate"].(map[string]any)
		if apitest.Int(t, u["id"]) != c.ID || u["label"] != "Probe Graz" {
			t.Errorf("clientUpdate by UUID = %v", u)
		}
	})

	t.Run("invalid input is a 422 naming each field", func(t *testing.T) {
		many := make([]string, 51)
		for i := range many {
			many[i] = fmt.Sprintf("t%d", i)
		}
		wantFieldErrors(t, e.Admin(t, http.MethodPut, path, editor, map[string]any{"label": strings.Repeat("x", 256),
			"extra_label": strings.Repeat("y", 300)}), "label", "extra_label")
		wantFieldErrors(t, e.Admin(t, http.MethodPut, path, editor, map[string]any{"tags": many}), "tags")
		wantFieldErrors(t, e.Admin(t, http.MethodPut, path, editor, map[string]any{
			"tags": []string{"ok", "", "semi;colon", strings.Repeat("z", 65), "ok"}}),
			"tags[1]", "tags[2]", "tags[3]", "tags[4]")
		wantFieldErrors(t, e.Admin(t, http.MethodPut, path, editor, map[string]any{"anomalies_muted": nil}), "anomalies_muted")
		wantFieldErrors(t, e.Admin(t, http.MethodPut, path, editor, map[string]any{"nickname": "x"}), "nickname")
		if g := clientOfBody(t, e.Admin(t, http.MethodGet, path, editor, nil)); g["label"] != "Probe Graz" {
			t.Errorf("a refused update changed the client: %v", g)
		}
	})

	t.Run("unknown ids are 404", func(t *testing.T) {
		apitest.WantNotFound(t, e.Admin(t, http.MethodPut, "/clients/999999999", editor, map[string]any{"label": "x"}), "unknown id")
		apitest.WantNotFound(t, e.Admin(t, http.MethodPut, "/clients/not-a-client", editor, map[string]any{"label": "x"}), "bad id")
		apitest.WantNotFound(t, e.Admin(t, http.MethodPut, "/clients/"+"6f1c1c2e-0000-4000-8000-000000000000", editor,
			map[string]any{"label": "x"}), "unknown UUID")
	})
}

// TestClientLabelUniqueness: a label another client of the data owner
// carries (trimmed, case-insensitive, as check_label_availability says) is
// a 409; another data owner's labels and blank labels do not count.
func TestClientLabelUniqueness(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "labeluniq")
	other := e.NewOwner(t, "labeluniq_other")
	taken := o.NewClient(t, store.NewClient{Label: apitest.Ptr("Probe Linz")})
	c := o.NewClient(t, store.NewClient{Label: apitest.Ptr("Probe Wels")})
	other.NewClient(t, store.NewClient{Label: apitest.Ptr("Probe Steyr")})
	path := fmt.Sprintf("/clients/%d", c.ID)
	available := func(label string) bool {
		r := e.Admin(t, http.MethodGet, "/clients/check_label_availability?exclude_id="+fmt.Sprint(c.ID)+"&label="+url.QueryEscape(label), o.Key, nil)
		return apitest.WantStatus(t, r, http.StatusOK).(map[string]any)["available"] == true
	}

	for _, label := range []string{"Probe Linz", "probe linz", "  PROBE LINZ "} {
		if available(label) {
			t.Errorf("check_label_availability says %q is available", label)
		}
		apitest.WantMessage(t, e.Admin(t, http.MethodPut, path, o.Key, map[string]any{"label": label}), http.StatusConflict, "already taken")
	}
	g := e.GraphQL(t, o.Key, `mutation($id: ID!) { clientUpdate(id: $id, input: {label: "PROBE linz"}) { id } }`,
		map[string]any{"id": fmt.Sprint(c.ID)})
	if g.Code() != "CONFLICT" {
		t.Errorf("GraphQL rename to a taken label: code %q, want CONFLICT: %s", g.Code(), g.Raw)
	}
	for _, label := range []string{"Probe Steyr", "probe wels", "Probe Wels 2"} {
		if !available(label) {
			t.Errorf("check_label_availability says %q is taken", label)
		}
		if got := clientOfBody(t, e.Admin(t, http.MethodPut, path, o.Key, map[string]any{"label": label})); got["label"] != label {
			t.Errorf("rename to %q: %v", label, got)
		}
	}
	// Blank labels never collide: two clients may have none.
	for _, id := range []int64{c.ID, taken.ID} {
		if got := clientOfBody(t, e.Admin(t, http.MethodPut, fmt.Sprintf("/clients/%d", id), o.Key, map[string]any{"label": "   "})); got["label"] != nil {
			t.Errorf("blank label: %v", got)
		}
	}
}

// TestClientLabelRace: many clients renamed to one label at the same time:
// exactly one wins, the others are 409, and one client carries it.
func TestClientLabelRace(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "labelrace")
	const n = 16
	for round := range 3 {
		label := fmt.Sprintf("Contested %d", round)
		ids := make([]int64, n)
		for i := range ids {
			ids[i] = o.NewClient(t, store.NewClient{}).ID
		}
		statuses := make([]int, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, id := range ids {
			wg.Go(func() {
				<-start
				variant := label
				if i%2 == 1 {
					variant = strings.ToUpper(label) // same label, other case
				}
				statuses[i] = e.Admin(t, http.MethodPut, fmt.Sprintf("/clients/%d", id), o.Key, map[string]any{"label": variant}).Status
			})
		}
		close(start)
		wg.Wait()
		won, lost := 0, 0
		for _, s := range statuses {
			switch s {
			case http.StatusOK:
				won++
			case http.StatusConflict:
				lost++
			default:
				t.Errorf("round %d: status %d, want 200 or 409", round, s)
			}
		}
		if won != 1 || lost != n-1 {
			t.Errorf("round %d: %d renames won and %d got 409, want 1 and %d", round, won, lost, n-1)
		}
		var carriers int
		if err := e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM clients
			WHERE data_owner_id = $1 AND lower(label) = lower($2)`, o.ID, label).Scan(&carriers); err != nil {
			t.Fatal(err)
		}
		if carriers != 1 {
			t.Errorf("round %d: %d clients carry %q, want 1", round, carriers, label)
		}
	}
}

// TestClientDisableEnable: disabling keeps the first disabled_at and takes
// the latest reason; enabling clears both.
func TestClientDisableEnable(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "clientdisable")
	c := o.NewClient(t, store.NewClient{})
	base := fmt.Sprintf("/clients/%d", c.ID)

	wantFieldErrors(t, e.Admin(t, http.MethodPost, base+"/disable", o.Key, map[string]any{}), "reason")
	wantFieldErrors(t, e.Admin(t, http.MethodPost, base+"/disable", o.Key, map[string]any{"reason": "  "}), "reason")
	wantFieldErrors(t, e.Admin(t, http.MethodPost, base+"/disable", o.Key, map[string]any{"reason": strings.Repeat("r", 1001)}), "reason")

	long := strings.Repeat("r", 1000)
	got := clientOfBody(t, e.Admin(t, http.MethodPost, base+"/disable", o.Key, map[string]any{"reason": long}))
	if got["disabled_at"] == nil || got["disabled_reason"] != long {
		t.Fatalf("disabled client = %v", got)
	}
	first := apitest.Time(t, got["disabled_at"])
	time.Sleep(10 * time.Millisecond)
	again := clientOfBody(t, e.Admin(t, http.MethodPost, base+"/disable", o.Key, map[string]any{"reason": "stolen, reported to police"}))
	if !apitest.Time(t, again["disabled_at"]).Equal(first) || again["disabled_reason"] != "stolen, reported to police" {
		t.Errorf("disabled again = %v, want disabled_at %s kept and the new reason", again, first)
	}
	if g := clientOfBody(t, e.Admin(t, http.MethodGet, base, o.Key, nil)); g["disabled_reason"] != "stolen, reported to police" {
		t.Errorf("GET after disable = %v", g)
	}

	got = clientOfBody(t, e.Admin(t, http.MethodPost, base+"/enable", o.Key, nil))
	if got["disabled_at"] != nil || got["disabled_reason"] != nil {
		t.Errorf("enabled client = %v", got)
	}
	if got := clientOfBody(t, e.Admin(t, http.MethodPost, base+"/enable", o.Key, nil)); got["disabled_at"] != nil {
		t.Errorf("enabling an enabled client = %v", got)
	}

	d := e.GraphQLData(t, o.Key, `mutation($id: ID!) { clientDisable(id: $id, input: {reason: "lab"}) { disabledAt disabledReason } }`,
		map[string]any{"id": c.UUID})
	if d["clientDisable"].(map[string]any)["disabledReason"] != "lab" {
		t.Errorf("clientDisable by UUID = %v", d)
	}
	apitest.WantNotFound(t, e.Admin(t, http.MethodPost, "/clients/999999999/disable", o.Key, map[string]any{"reason": "x"}), "disable unknown")
	apitest.WantNotFound(t, e.Admin(t, http.MethodPost, "/clients/999999999/enable", o.Key, nil), "enable unknown")
}

// TestClientDelete: unregistering removes the client, its memberships and
// contracts; its measurements stay.
func TestClientDelete(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "clientdelete")
	c := o.NewClient(t, store.NewClient{Label: apitest.Ptr("Going away")})
	keep := o.NewClient(t, store.NewClient{Label: apitest.Ptr("Staying")})
	group := o.NewGroup(t, "", c.ID, keep.ID)
	contract := o.NewContract(t, store.NewContract{ClientID: c.ID})
	measurement := uuid.NewString()
	o.InsertDocuments(t, vocab.KindMeasurement, map[string]any{"id": measurement, "client_uuid": c.UUID,
		"created_at": "2026-11-01T06:00:00Z", "type": "VideoMeasurement", "study": map[string]any{"subject": "youtube"}})

	r := e.Admin(t, http.MethodDelete, fmt.Sprintf("/clients/%d", c.ID), o.Key, nil)
	if apitest.WantStatus(t, r, http.StatusOK); string(r.Raw) != "{}" {
		t.Errorf("DELETE answered %s, want {}", r.Raw)
	}
	apitest.WantNotFound(t, e.Admin(t, http.MethodGet, fmt.Sprintf("/clients/%d", c.ID), o.Key, nil), "deleted client")
	apitest.WantNotFound(t, e.Admin(t, http.MethodDelete, fmt.Sprintf("/clients/%d", c.ID), o.Key, nil), "deleted twice")
	apitest.WantNotFound(t, e.Admin(t, http.MethodGet, fmt.Sprintf("/isp_contracts/%d", contract), o.Key, nil), "its contract")
	g := apitest.Object(t, apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, fmt.Sprintf("/client_groups/%d", group), o.Key, nil),
		http.StatusOK, "client_group"))
	if ids := apitest.Field(t, g["clients"], "id"); len(ids) != 1 || ids[0] != fmt.Sprint(keep.ID) {
		t.Errorf("group members after the delete = %v, want [%d]", ids, keep.ID)
	}
	if r := e.Admin(t, http.MethodGet, "/measurements/"+measurement, o.Key, nil); r.Status != http.StatusOK {
		t.Errorf("the deleted client's measurement: %d %s, want 200", r.Status, r.Raw)
	}
	// Its label is free again.
	if got := clientOfBody(t, e.Admin(t, http.MethodPut, fmt.Sprintf("/clients/%d", keep.ID), o.Key,
		map[string]any{"label": "Going away"})); got["label"] != "Going away" {
		t.Errorf("the deleted client's label is not free: %v", got)
	}
	if d := e.GraphQLData(t, o.Key, `mutation($id: ID!) { clientDelete(id: $id) }`, map[string]any{"id": keep.UUID}); d["clientDelete"] != true {
		t.Errorf("clientDelete by UUID = %v", d)
	}
}

// TestClientGroups: create, list, read, rename, add and remove members,
// delete; names are unique per data owner; members must be the owner's.
func TestClientGroups(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "groups")
	other := e.NewOwner(t, "groups_other")
	c1 := o.NewClient(t, store.NewClient{Label: apitest.Ptr("one")})
	c2 := o.NewClient(t, store.NewClient{Label: apitest.Ptr("two")})
	c3 := o.NewClient(t, store.NewClient{Label: apitest.Ptr("three")})
	foreign := other.NewClient(t, store.NewClient{})
	members := func(t *testing.T, r *apitest.Response, status int) []string {
		t.Helper()
		g := apitest.Object(t, apitest.WantEnvelope(t, r, status, "client_group"))
		return apitest.Field(t, g["clients"], "id")
	}

	created := e.AdminCreate(t, o.Key, "/client_groups", map[string]any{"name": " Rooftops ", "client_ids": []any{c1.ID, c2.UUID}})
	id := apitest.Int(t, created["id"])
	if created["name"] != "Rooftops" || created["created_at"] == nil || len(created["clients"].([]any)) != 2 {
		t.Fatalf("created group = %v", created)
	}
	path := fmt.Sprintf("/client_groups/%d", id)

	t.Run("names are unique, trimmed and case-insensitive", func(t *testing.T) {
		apitest.WantMessage(t, e.Admin(t, http.MethodPost, "/client_groups", o.Key, map[string]any{"name": "ROOFTOPS"}),
			http.StatusConflict, "already exists")
		second := apitest.Int(t, e.AdminCreate(t, o.Key, "/client_groups", map[string]any{"name": "Basements"})["id"])
		apitest.WantMessage(t, e.Admin(t, http.MethodPut, fmt.Sprintf("/client_groups/%d", second), o.Key,
			map[string]any{"name": "rooftops"}), http.StatusConflict, "already exists")
		// Another data owner may use the name.
		e.AdminCreate(t, other.Key, "/client_groups", map[string]any{"name": "Rooftops"})
		wantFieldErrors(t, e.Admin(t, http.MethodPost, "/client_groups", o.Key, map[string]any{"name": " "}), "name")
		wantFieldErrors(t, e.Admin(t, http.MethodPost, "/client_groups", o.Key, map[string]any{}), "name")
	})

	t.Run("a group with another owner's client is not created", func(t *testing.T) {
		apitest.WantMessage(t, e.Admin(t, http.MethodPost, "/client_groups", o.Key, map[string]any{"name": "Mixed",
			"client_ids": []any{c1.ID, foreign.ID}}), http.StatusNotFound, fmt.Sprint(foreign.ID))
		for _, g := range e.Admin(t, http.MethodGet, "/client_groups", o.Key, nil).Obj(t)["client_groups"].([]any) {
			if g.(map[string]any)["name"] == "Mixed" {
				t.Errorf("the refused group exists: %v", g)
			}
		}
	})

	t.Run("list, read and rename", func(t *testing.T) {
		names := apitest.Field(t, apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, "/client_groups", o.Key, nil), http.StatusOK, "client_groups"), "name")
		if strings.Join(names, ",") != "Basements,Rooftops" {
			t.Errorf("groups = %v", names)
		}
		if ids := members(t, e.Admin(t, http.MethodGet, path, o.Key, nil), http.StatusOK); len(ids) != 2 {
			t.Errorf("members = %v", ids)
		}
		g := apitest.Object(t, apitest.WantEnvelope(t, e.Admin(t, http.MethodPut, path, o.Key, map[string]any{"name": "Roofs"}),
			http.StatusOK, "client_group"))
		if g["name"] != "Roofs" || len(g["clients"].([]any)) != 2 {
			t.Errorf("renamed group = %v", g)
		}
	})

	t.Run("add and remove members", func(t *testing.T) {
		ids := members(t, e.Admin(t, http.MethodPost, path+"/add_clients", o.Key, map[string]any{"client_ids": []any{c3.UUID, c1.ID}}), http.StatusOK)
		if strings.Join(ids, ",") != fmt.Sprintf("%d,%d,%d", c1.ID, c2.ID, c3.ID) {
			t.Errorf("after add = %v", ids)
		}
		ids = members(t, e.Admin(t, http.MethodPost, path+"/remove_clients", o.Key, map[string]any{"client_ids": []any{c1.ID, c2.UUID}}), http.StatusOK)
		if strings.Join(ids, ",") != fmt.Sprint(c3.ID) {
			t.Errorf("after remove = %v", ids)
		}
		// Removing a client that is not a member changes nothing.
		if ids = members(t, e.Admin(t, http.MethodPost, path+"/remove_clients", o.Key, map[string]any{"client_ids": []any{c1.ID}}), http.StatusOK); len(ids) != 1 {
			t.Errorf("after removing a non-member = %v", ids)
		}
		// Another owner's client: 404, and nothing changes (all or nothing).
		apitest.WantMessage(t, e.Admin(t, http.MethodPost, path+"/add_clients", o.Key, map[string]any{"client_ids": []any{c1.ID, foreign.UUID}}),
			http.StatusNotFound, foreign.UUID)
		apitest.WantNotFound(t, e.Admin(t, http.MethodPost, path+"/remove_clients", o.Key, map[string]any{"client_ids": []any{foreign.ID}}), "remove foreign")
		apitest.WantNotFound(t, e.Admin(t, http.MethodPost, path+"/add_clients", o.Key, map[string]any{"client_ids": []any{"nonsense"}}), "bad id")
		if ids = members(t, e.Admin(t, http.MethodGet, path, o.Key, nil), http.StatusOK); strings.Join(ids, ",") != fmt.Sprint(c3.ID) {
			t.Errorf("after refused changes = %v", ids)
		}
		wantFieldErrors(t, e.Admin(t, http.MethodPost, path+"/add_clients", o.Key, map[string]any{"client_ids": []any{}}), "client_ids")
		// The client shows its group.
		c := clientOfBody(t, e.Admin(t, http.MethodGet, fmt.Sprintf("/clients/%d", c3.ID), o.Key, nil))
		if names := apitest.Field(t, c["client_groups"], "name"); len(names) != 1 || names[0] != "Roofs" {
			t.Errorf("client_groups of a member = %v", names)
		}
	})

	t.Run("GraphQL", func(t *testing.T) {
		d := e.GraphQLData(t, o.Key, `mutation($c: [ID!]) { clientGroupCreate(input: {name: "Cellars", clientIds: $c}) {
			id name clients { label } } }`, map[string]any{"c": []any{c1.UUID}})
		g := d["clientGroupCreate"].(map[string]any)
		if g["name"] != "Cellars" || len(g["clients"].([]any)) != 1 {
			t.Errorf("clientGroupCreate = %v", g)
		}
		gid := apitest.Int(t, g["id"])
		d = e.GraphQLData(t, o.Key, `mutation($id: Int!, $c: ID!) { clientGroupAddClients(id: $id, input: {clientIds: [$c]}) { clients { label } } }`,
			map[string]any{"id": gid, "c": fmt.Sprint(c2.ID)})
		if labels := apitest.Field(t, d["clientGroupAddClients"].(map[string]any)["clients"], "label"); strings.Join(labels, ",") != "one,two" {
			t.Errorf("clientGroupAddClients = %v", labels)
		}
		d = e.GraphQLData(t, o.Key, `query($id: Int!) { clientGroup(id: $id) { name } }`, map[string]any{"id": gid})
		if d["clientGroup"].(map[string]any)["name"] != "Cellars" {
			t.Errorf("clientGroup = %v", d)
		}
		if d = e.GraphQLData(t, o.Key, `mutation($id: Int!) { clientGroupDelete(id: $id) }`, map[string]any{"id": gid}); d["clientGroupDelete"] != true {
			t.Errorf("clientGroupDelete = %v", d)
		}
	})

	t.Run("delete keeps the clients", func(t *testing.T) {
		r := e.Admin(t, http.MethodDelete, path, o.Key, nil)
		if apitest.WantStatus(t, r, http.StatusOK); string(r.Raw) != "{}" {
			t.Errorf("DELETE answered %s", r.Raw)
		}
		apitest.WantNotFound(t, e.Admin(t, http.MethodGet, path, o.Key, nil), "deleted group")
		apitest.WantNotFound(t, e.Admin(t, http.MethodDelete, path, o.Key, nil), "deleted twice")
		apitest.WantNotFound(t, e.Admin(t, http.MethodPost, path+"/add_clients", o.Key, map[string]any{"client_ids": []any{c1.ID}}), "add to deleted")
		c := clientOfBody(t, e.Admin(t, http.MethodGet, fmt.Sprintf("/clients/%d", c3.ID), o.Key, nil))
		if len(c["client_groups"].([]any)) != 0 {
			t.Errorf("client_groups after the group's delete = %v", c["client_groups"])
		}
	})
}

// TestIspContracts: create, read, update and end a client's contract, with
// validation; the client's current contract follows.
func TestIspContracts(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "contracts")
	other := e.NewOwner(t, "contracts_other")
	c := o.NewClient(t, store.NewClient{Label: apitest.Ptr("Probe Salzburg")})
	isp := o.NewISP(t, store.IspInput{Name: apitest.Ptr("Salzburg AG")})
	isp2 := o.NewISP(t, store.IspInput{Name: apitest.Ptr("Magenta")})
	foreignISP := other.NewISP(t, store.IspInput{})
	foreignClient := other.NewClient(t, store.NewClient{})
	from := time.Now().Add(-30 * 24 * time.Hour).UTC().Truncate(time.Second)
	contract := func(r *apitest.Response, status int) map[string]any {
		t.Helper()
		return apitest.Object(t, apitest.WantEnvelope(t, r, status, "isp_contract"))
	}
	current := func() any {
		return clientOfBody(t, e.Admin(t, http.MethodGet, fmt.Sprintf("/clients/%d", c.ID), o.Key, nil))["current_isp_contract"]
	}

	created := contract(e.Admin(t, http.MethodPost, "/isp_contracts", o.Key, map[string]any{"client_id": c.UUID, "isp_id": isp.ID,
		"name": "Home 250", "download_speed": 250000, "upload_speed": 40000, "monthly_price": 39.9, "currency": "eur",
		"connection_type": "fiber", "valid_from": from.Format(time.RFC3339)}), http.StatusCreated)
	id := apitest.Int(t, created["id"])
	if apitest.Int(t, created["client_id"]) != c.ID || created["isp_name"] != "Salzburg AG" || created["currency"] != "EUR" ||
		created["client_uuid"] != c.UUID || created["client_label"] != "Probe Salzburg" || created["valid_until"] != nil {
		t.Errorf("created contract = %v", created)
	}
	if cur, _ := current().(map[string]any); cur == nil || apitest.Int(t, cur["id"]) != id {
		t.Errorf("current_isp_contract = %v, want %d", cur, id)
	}
	path := fmt.Sprintf("/isp_contracts/%d", id)

	t.Run("invalid input is a 422 naming each field", func(t *testing.T) {
		wantFieldErrors(t, e.Admin(t, http.MethodPost, "/isp_contracts", o.Key, map[string]any{"client_id": c.ID, "isp_id": isp.ID,
			"upload_speed": -1, "download_speed": 3000000000, "monthly_price": 10.123, "currency": "EURO",
			"valid_from": "2026-02-01T00:00:00Z", "valid_until": "2026-01-01T00:00:00Z"}),
			"upload_speed", "download_speed", "monthly_price", "currency", "valid_until")
		wantFieldErrors(t, e.Admin(t, http.MethodPost, "/isp_contracts", o.Key, map[string]any{"client_id": c.ID, "isp_id": isp.ID,
			"monthly_price": -5, "currency": "ZZZ"}), "monthly_price", "currency")
		wantFieldErrors(t, e.Admin(t, http.MethodPost, "/isp_contracts", o.Key, map[string]any{"client_id": c.ID}), "isp_id")
		wantFieldErrors(t, e.Admin(t, http.MethodPut, path, o.Key, map[string]any{"valid_until": from.Add(-time.Hour).Format(time.RFC3339)}), "valid_until")
		wantFieldErrors(t, e.Admin(t, http.MethodPut, path, o.Key, map[string]any{"isp_id": nil}), "isp_id")
	})

	t.Run("another owner's ISP or client is a 404", func(t *testing.T) {
		apitest.WantMessage(t, e.Admin(t, http.MethodPost, "/isp_contracts", o.Key, map[string]any{"client_id": c.ID, "isp_id": foreignISP.ID}),
			http.StatusNotFound, "ISP")
		apitest.WantMessage(t, e.Admin(t, http.MethodPost, "/isp_contracts", o.Key, map[string]any{"client_id": foreignClient.ID, "isp_id": isp.ID}),
			http.StatusNotFound, "client")
		apitest.WantMessage(t, e.Admin(t, http.MethodPut, path, o.Key, map[string]any{"isp_id": foreignISP.ID}), http.StatusNotFound, "ISP")
	})

	t.Run("update", func(t *testing.T) {
		got := contract(e.Admin(t, http.MethodPut, path, o.Key, map[string]any{"isp_id": isp2.ID, "monthly_price": nil,
			"currency": nil, "assumed_tariff": "Fiber XL"}), http.StatusOK)
		if got["isp_name"] != "Magenta" || got["monthly_price"] != nil || got["currency"] != nil || got["assumed_tariff"] != "Fiber XL" ||
			got["name"] != "Home 250" || apitest.Int(t, got["download_speed"]) != 250000 {
			t.Errorf("updated contract = %v", got)
		}
		if g := contract(e.Admin(t, http.MethodGet, path, o.Key, nil), http.StatusOK); g["assumed_tariff"] != "Fiber XL" {
			t.Errorf("GET after update = %v", g)
		}
	})

	t.Run("end", func(t *testing.T) {
		wantFieldErrors(t, e.Admin(t, http.MethodPost, path+"/end", o.Key, map[string]any{"valid_until": from.Add(-time.Hour).Format(time.RFC3339)}), "valid_until")
		got := contract(e.Admin(t, http.MethodPost, path+"/end", o.Key, nil), http.StatusOK)
		until := apitest.Time(t, got["valid_until"])
		if time.Since(until) > time.Minute || until.After(time.Now()) {
			t.Errorf("ended at %s, want about now", until)
		}
		if cur := current(); cur != nil {
			t.Errorf("current_isp_contract after the end = %v, want null", cur)
		}
		wantFieldErrors(t, e.Admin(t, http.MethodPost, path+"/end", o.Key, nil), "valid_until")
		// A contract ending in the future may be ended earlier.
		later := contract(e.Admin(t, http.MethodPost, "/isp_contracts", o.Key, map[string]any{"client_id": c.ID, "isp_id": isp.ID,
			"valid_until": time.Now().Add(48 * time.Hour).Format(time.RFC3339)}), http.StatusCreated)
		end := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		got = contract(e.Admin(t, http.MethodPost, fmt.Sprintf("/isp_contracts/%d/end", apitest.Int(t, later["id"])), o.Key,
			map[string]any{"valid_until": end.Format(time.RFC3339)}), http.StatusOK)
		if !apitest.Time(t, got["valid_until"]).Equal(end) {
			t.Errorf("ended at %v, want %s", got["valid_until"], end)
		}
	})

	t.Run("GraphQL", func(t *testing.T) {
		d := e.GraphQLData(t, o.Key, `mutation($c: ID!, $i: Int!) { ispContractCreate(input: {clientId: $c, ispId: $i, downloadSpeed: 100}) {
			id ispName client { label } } }`, map[string]any{"c": fmt.Sprint(c.ID), "i": isp.ID})
		k := d["ispContractCreate"].(map[string]any)
		if k["ispName"] != "Salzburg AG" || k["client"].(map[string]any)["label"] != "Probe Salzburg" {
			t.Errorf("ispContractCreate = %v", k)
		}
		d = e.GraphQLData(t, o.Key, `mutation($id: Int!) { ispContractEnd(id: $id) { validUntil } }`, map[string]any{"id": k["id"]})
		if d["ispContractEnd"].(map[string]any)["validUntil"] == nil {
			t.Errorf("ispContractEnd = %v", d)
		}
		_, ge := e.GraphQLFail(t, o.Key, `mutation($id: Int!) { ispContractUpdate(id: $id, input: {uploadSpeed: -3}) { id } }`,
			map[string]any{"id": k["id"]})
		if ge.Extensions["code"] != "BAD_USER_INPUT" {
			t.Errorf("negative speed: %v", ge)
		}
		if d = e.GraphQLData(t, o.Key, `mutation($id: Int!) { ispContractDelete(id: $id) }`, map[string]any{"id": k["id"]}); d["ispContractDelete"] != true {
			t.Errorf("ispContractDelete = %v", d)
		}
	})

	t.Run("delete", func(t *testing.T) {
		r := e.Admin(t, http.MethodDelete, path, o.Key, nil)
		if apitest.WantStatus(t, r, http.StatusOK); string(r.Raw) != "{}" {
			t.Errorf("DELETE answered %s", r.Raw)
		}
		apitest.WantNotFound(t, e.Admin(t, http.MethodGet, path, o.Key, nil), "deleted contract")
		apitest.WantNotFound(t, e.Admin(t, http.MethodDelete, path, o.Key, nil), "deleted twice")
		cl := clientOfBody(t, e.Admin(t, http.MethodGet, fmt.Sprintf("/clients/%d", c.ID), o.Key, nil))
		for _, k := range apitest.List(t, mustGraphQLContracts(t, e, o.Key, c.UUID)) {
			if apitest.Int(t, k.(map[string]any)["id"]) == id {
				t.Errorf("the client still lists the deleted contract %d", id)
			}
		}
		if cur, _ := cl["current_isp_contract"].(map[string]any); cur != nil && apitest.Int(t, cur["id"]) == id {
			t.Errorf("the client's current contract is the deleted one: %v", cur)
		}
	})
}

// mustGraphQLContracts lists a client's contracts through GraphQL.
func mustGraphQLContracts(t *testing.T, e *apitest.Env, key, client string) any {
	t.Helper()
	d := e.GraphQLData(t, key, `query($id: ID!) { client(id: $id) { ispContracts { id } } }`, map[string]any{"id": client})
	return d["client"].(map[string]any)["ispContracts"]
}

// TestSharedClientIsReadOnly: a client shared with a data owner can be read
// but not changed by it (403), nor put in its groups or contracts (404).
func TestSharedClientIsReadOnly(t *testing.T) {
	e := apitest.Get(t)
	a := e.NewOwner(t, "shareowner")
	b := e.NewOwner(t, "sharereader")
	c := a.NewClient(t, store.NewClient{Label: apitest.Ptr("Shared probe")})
	if err := e.Store.ShareClient(context.Background(), a.ID, c.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	p := fmt.Sprintf("/clients/%d", c.ID)
	apitest.WantForbidden(t, e.Admin(t, http.MethodPut, p, b.Key, map[string]any{"label": "Mine now"}))
	apitest.WantForbidden(t, e.Admin(t, http.MethodPost, p+"/disable", b.Key, map[string]any{"reason": "x"}))
	apitest.WantForbidden(t, e.Admin(t, http.MethodDelete, "/clients/"+c.UUID, b.Key, nil))
	group := b.NewGroup(t, "")
	apitest.WantNotFound(t, e.Admin(t, http.MethodPost, fmt.Sprintf("/client_groups/%d/add_clients", group), b.Key,
		map[string]any{"client_ids": []any{c.ID}}), "group a shared client")
	apitest.WantNotFound(t, e.Admin(t, http.MethodPost, "/isp_contracts", b.Key,
		map[string]any{"client_id": c.ID, "isp_id": b.NewISP(t, store.IspInput{}).ID}), "contract for a shared client")
	if got := clientOfBody(t, e.Admin(t, http.MethodGet, p, a.Key, nil)); got["label"] != "Shared probe" || got["disabled_at"] != nil {
		t.Errorf("the owner's client changed: %v", got)
	}
}

// TestClientMutationResultsAttached: the objects the client management
// mutations answer carry their nested edges, as a query's would.
func TestClientMutationResultsAttached(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "clientedges")
	capability := o.NewCapability(t, store.CapabilityInput{Name: apitest.Ptr("video only")})
	key := o.NewRegistrationKey(t, store.RegistrationKeyInput{CapabilityID: capability.ID})
	c := o.NewClient(t, store.NewClient{Label: apitest.Ptr("edge probe"), RegistrationKeyID: &key.ID})
	isp := o.NewISP(t, store.IspInput{Name: apitest.Ptr("Edge ISP")})
	o.NewContract(t, store.NewContract{ClientID: c.ID, IspID: isp.ID, ValidFrom: apitest.Ptr(time.Now().Add(-time.Hour))})
	group := o.NewGroup(t, "Edge group", c.ID)

	d := e.GraphQLData(t, o.Key, `mutation($id: ID!) { clientUpdate(id: $id, input: {tags: ["x"]}) {
		clientGroups { name clients { label } } currentIspContract { ispName isp { name ispContractsCount } }
		registrationKey { capability { name registrationKeysCount } } } }`, map[string]any{"id": c.UUID})
	u := d["clientUpdate"].(map[string]any)
	groups := u["clientGroups"].([]any)
	if len(groups) != 1 || groups[0].(map[string]any)["name"] != "Edge group" ||
		apitest.Field(t, groups[0].(map[string]any)["clients"], "label")[0] != "edge probe" {
		t.Errorf("clientUpdate's groups = %v", groups)
	}
	cur := u["currentIspContract"].(map[string]any)
	if cur["ispName"] != "Edge ISP" || apitest.Int(t, cur["isp"].(map[string]any)["ispContractsCount"]) != 1 {
		t.Errorf("clientUpdate's current contract = %v", cur)
	}
	if rk := u["registrationKey"].(map[string]any)["capability"].(map[string]any); rk["name"] != "video only" ||
		apitest.Int(t, rk["registrationKeysCount"]) != 1 {
		t.Errorf("clientUpdate's registration key = %v", rk)
	}

	d = e.GraphQLData(t, o.Key, `mutation($id: Int!, $c: ID!) { clientGroupRemoveClients(id: $id, input: {clientIds: [$c]}) {
		name clients { id } } }`, map[string]any{"id": group, "c": c.UUID})
	if cs := d["clientGroupRemoveClients"].(map[string]any)["clients"].([]any); len(cs) != 0 {
		t.Errorf("clientGroupRemoveClients' clients = %v", cs)
	}

	d = e.GraphQLData(t, o.Key, `mutation($c: ID!, $i: Int!) { ispContractCreate(input: {clientId: $c, ispId: $i}) {
		isp { name ispContractsCount ispContracts { id } } client { label currentIspContract { id } ispContracts { id } } } }`,
		map[string]any{"c": c.UUID, "i": isp.ID})
	k := d["ispContractCreate"].(map[string]any)
	if i := k["isp"].(map[string]any); apitest.Int(t, i["ispContractsCount"]) != 2 || len(i["ispContracts"].([]any)) != 2 {
		t.Errorf("ispContractCreate's ISP = %v", i)
	}
	if cl := k["client"].(map[string]any); cl["label"] != "edge probe" || len(cl["ispContracts"].([]any)) != 2 || cl["currentIspContract"] == nil {
		t.Errorf("ispContractCreate's client = %v", cl)
	}
}
