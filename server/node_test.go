package server_test

import (
	"encoding/base64"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// nodeQuery reads a node of every type by its global id.
const nodeQuery = `query($id: ID!) { node(id: $id) { __typename nodeId
	... on Client { id label clientGroups { name } }
	... on ClientGroup { id name clients { label } }
	... on Isp { id name }
	... on Capability { id name registrationKeysCount }
	... on RegistrationKey { id registrationKey capability { name } }
	... on User { id email }
	... on Webhook { id name headers }
	... on Measurement { docId: id client { label } }
	... on AnomalyEvent { docId: id client { label } } } }`

// TestNodeLookup: every type's nodeId reads the object back through node
// (with the edges below it attached); another data owner's id is null like
// an unknown one; an id that is not a global id is BAD_USER_INPUT. A
// webhook reads as the webhook query shows it (headers masked), to a viewer
// too: viewers read webhooks.
func TestNodeLookup(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "node")
	other := e.NewOwner(t, "node-other")
	c := o.NewClient(t, store.NewClient{Label: apitest.Ptr("probe-a")})
	o.NewGroup(t, "north", c.ID)
	o.NewISP(t, store.IspInput{Name: apitest.Ptr("Telco")})
	capability := o.NewCapability(t, store.CapabilityInput{Name: apitest.Ptr("probes")})
	o.NewRegistrationKey(t, store.RegistrationKeyInput{CapabilityID: capability.ID})
	newWebhook(t, e, o, map[string]any{"headers": map[string]any{"X-Token": "s3cret"}})
	lists := e.GraphQLData(t, o.Key, `{ clients { nodeId } clientGroups { nodeId } isps { nodeId }
		capabilities { nodeId registrationKeys { nodeId } } users { nodeId } webhooks { nodeId } }`, nil)
	lists["registrationKeys"] = lists["capabilities"].([]any)[0].(map[string]any)["registrationKeys"]
	measurement := o.NewMeasurements(t, apitest.MeasurementOpts{ClientUUID: c.UUID})[0]
	anomaly := "rule-1::spike::1700000000" // a real anomaly id has colons
	o.InsertDocuments(t, "anomaly_event", anomEvent(anomaly, c.UUID, "new"))
	docs := e.GraphQLData(t, o.Key, `query($m: ID!, $a: ID!) { measurement(id: $m) { nodeId } anomalyEvent(id: $a) { nodeId } }`,
		map[string]any{"m": measurement, "a": anomaly})
	lists["measurements"], lists["anomalyEvents"] = []any{docs["measurement"]}, []any{docs["anomalyEvent"]}
	want := map[string]string{"clients": "Client", "clientGroups": "ClientGroup", "isps": "Isp",
		"capabilities": "Capability", "registrationKeys": "RegistrationKey", "users": "User",
		"webhooks": "Webhook", "measurements": "Measurement", "anomalyEvents": "AnomalyEvent"}
	var ids []any
	for field, typ := range want {
		items := lists[field].([]any)
		if len(items) != 1 {
			t.Fatalf("%s: %v, want one", field, items)
		}
		id := items[0].(map[string]any)["nodeId"]
		ids = append(ids, id)
		n := e.GraphQLData(t, o.Key, nodeQuery, map[string]any{"id": id})["node"].(map[string]any)
		if n["__typename"] != typ || n["nodeId"] != id {
			t.Fatalf("node(%v) = %v, want the %s", id, n, typ)
		}
		if got := e.GraphQLData(t, other.Key, nodeQuery, map[string]any{"id": id})["node"]; got != nil {
			t.Fatalf("another data owner reads %s %v: %v, want null", typ, id, got)
		}
	}
	t.Run("edges below a node are attached", func(t *testing.T) {
		for field, want := range map[string]string{"clients": "clientGroups:[map[name:north]]",
			"clientGroups": "clients:[map[label:probe-a]]", "capabilities": "registrationKeysCount:1",
			"measurements": "client:map[label:probe-a]", "anomalyEvents": "client:map[label:probe-a]"} {
			id := lists[field].([]any)[0].(map[string]any)["nodeId"]
			n := e.GraphQLData(t, o.Key, nodeQuery, map[string]any{"id": id})["node"]
			if !strings.Contains(fmt.Sprint(n), want) {
				t.Fatalf("%s node: %v, want %s in it", field, n, want)
			}
		}
	})
	t.Run("a webhook reads as the webhook query shows it, to a viewer too", func(t *testing.T) {
		const fields = `nodeId id name description url payloadFormat eventTypes enabled active headers secretHint
			formatOptions { mentionUsers mentionGroups mentionChannel }
			filters { clientTags measurementTypes minSeverity healthMetrics }
			consecutiveFailures lastError createdById createdAt updatedAt secret`
		id := lists["webhooks"].([]any)[0].(map[string]any)["nodeId"]
		viewer, _ := o.NewKey(t, apitest.KeyOpts{UserRole: model.RoleViewer})
		for role, key := range map[string]string{"org_admin": o.Key, "viewer": viewer} {
			hooks := e.GraphQLData(t, key, `{ webhooks { `+fields+` } }`, nil)["webhooks"].([]any)
			want := hooks[0].(map[string]any)
			if fmt.Sprint(want["headers"]) != "map[X-Token:********]" || want["nodeId"] != id {
				t.Fatalf("%s: webhooks query: %v", role, want)
			}
			byID := e.GraphQLData(t, key, `query($id: Int!) { webhook(id: $id) { `+fields+` } }`, map[string]any{"id": want["id"]})
			node := e.GraphQLData(t, key, `query($id: ID!) { node(id: $id) { ... on Webhook { `+fields+` } } }`,
				map[string]any{"id": id})
			nodes := e.GraphQLData(t, key, `query($ids: [ID!]!) { nodes(ids: $ids) { ... on Webhook { `+fields+` } } }`,
				map[string]any{"ids": []any{id}})
			for name, got := range map[string]any{"webhook": byID["webhook"], "node": node["node"], "nodes": nodes["nodes"].([]any)[0]} {
				if !reflect.DeepEqual(got, any(want)) {
					t.Errorf("%s: %s = %v\nwant %v", role, name, got, want)
				}
			}
		}
	})
	t.Run("nodes answers in order, null where none", func(t *testing.T) {
		unknown := base64.RawURLEncoding.EncodeToString([]byte("Client:999999999"))
		asked := append([]any{unknown}, ids...)
		asked = append(asked, ids[0])
		data := e.GraphQLData(t, o.Key, `query($ids: [ID!]!) { nodes(ids: $ids) { nodeId ... on Client { clientGroups { name } } } }`,
			map[string]any{"ids": asked})
		got := data["nodes"].([]any)
		if len(got) != len(asked) || got[0] != nil {
			t.Fatalf("nodes: %v", got)
		}
		for i, id := range asked[1:] {
			if got[i+1].(map[string]any)["nodeId"] != id {
				t.Fatalf("nodes[%d] = %v, want %v", i+1, got[i+1], id)
			}
		}
		foreign := e.GraphQLData(t, other.Key, `query($ids: [ID!]!) { nodes(ids: $ids) { nodeId } }`, map[string]any{"ids": ids})
		for _, n := range foreign["nodes"].([]any) {
			if n != nil {
				t.Fatalf("another data owner's nodes: %v", foreign)
			}
		}
	})
	for _, tc := range []struct{ name, id string }{
		{"not base64", "Client:1"},
		{"unknown type", base64.RawURLEncoding.EncodeToString([]byte("Planet:1"))},
		{"no number", base64.RawURLEncoding.EncodeToString([]byte("Client:x"))},
		{"zero", base64.RawURLEncoding.EncodeToString([]byte("Client:0"))},
		{"no key", base64.RawURLEncoding.EncodeToString([]byte("Measurement:"))},
		{"document id too long", base64.RawURLEncoding.EncodeToString([]byte("Measurement:" + strings.Repeat("m", 513)))},
		{"empty", ""},
	} {
		t.Run("bad id: "+tc.name, func(t *testing.T) {
			g, ge := e.GraphQLFail(t, o.Key, nodeQuery, map[string]any{"id": tc.id})
			if g.Code() != "BAD_USER_INPUT" || !strings.Contains(fmt.Sprint(ge.Extensions["errors"]), "id") {
				t.Fatalf("%s", g.Raw)
			}
		})
	}
	t.Run("at most 100 ids", func(t *testing.T) {
		many := make([]any, 101)
		for i := range many {
			many[i] = ids[0]
		}
		g := e.GraphQL(t, o.Key, `query($ids: [ID!]!) { nodes(ids: $ids) { nodeId } }`, map[string]any{"ids": many})
		if g.Code() != "BAD_USER_INPUT" {
			t.Fatalf("101 ids: %s", g.Raw)
		}
	})
	t.Run("nodes costs one statement per type, in one round trip", func(t *testing.T) {
		e.GraphQLData(t, o.Key, `{ viewer { role } }`, nil) // the key is read before
		before, trips := e.Counter.Count(), e.Counter.RoundTrips()
		e.GraphQLData(t, o.Key, `query($ids: [ID!]!) { nodes(ids: $ids) { nodeId } }`, map[string]any{"ids": append(ids, ids...)})
		// + 1: the round trip's plan setting (store.genericPlans).
		if n, rt := e.Counter.Count()-before, e.Counter.RoundTrips()-trips; n != int64(len(ids))+1 || rt != 1 {
			t.Fatalf("%d statements in %d round trips for %d ids of %d types", n, rt, 2*len(ids), len(ids))
		}
	})
}
