package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

// fedWorld is one data owner's objects of every entity type.
type fedWorld struct {
	o                                     *apitest.Owner
	client, other                         apitest.Client
	group, isp, capability, regKey        int64
	measurement, anomaly, label, groupTag string
}

func newFedWorld(t *testing.T, e *apitest.Env, prefix string) *fedWorld {
	t.Helper()
	w := &fedWorld{o: e.NewOwner(t, prefix)}
	w.label = apitest.Unique("fed-probe-" + w.o.Slug)
	w.client = w.o.NewClient(t, store.NewClient{Label: &w.label})
	w.other = w.o.NewClient(t, store.NewClient{})
	w.groupTag = apitest.Unique("fed-group")
	w.group = w.o.NewGroup(t, w.groupTag, w.client.ID)
	w.isp = w.o.NewISP(t, store.IspInput{}).ID
	k := w.o.NewRegistrationKey(t, store.RegistrationKeyInput{})
	w.regKey, w.capability = k.ID, k.CapabilityID
	w.measurement = w.o.NewMeasurements(t, apitest.MeasurementOpts{ClientUUID: w.client.UUID})[0]
	w.anomaly = apitest.Unique("fed-rule") + "::shift::1793500000"
	w.o.InsertDocuments(t, store.KindAnomalyEvent, map[string]any{"id": w.anomaly, "client_uuid": w.client.UUID,
		"measurement_type": "VideoMeasurement", "subject": "youtube", "status": "new", "created_at": "2026-11-01T00:00:00Z"})
	return w
}

// reps are representations of every entity of w, one per key.
func (w *fedWorld) reps() []map[string]any {
	return []map[string]any{
		{"__typename": "Client", "id": w.client.ID},
		{"__typename": "Client", "uuid": strings.ToUpper(w.client.UUID)},
		{"__typename": "ClientGroup", "id": w.group},
		{"__typename": "Measurement", "id": w.measurement},
		{"__typename": "AnomalyEvent", "id": w.anomaly},
		{"__typename": "Isp", "id": w.isp},
		{"__typename": "Capability", "id": w.capability},
		{"__typename": "RegistrationKey", "id": w.regKey},
	}
}

const fedEntitiesQuery = `query($r: [_Any!]!) { _entities(representations: $r) {
	__typename
	... on Client { id uuid label clientGroups { name } }
	... on ClientGroup { id name clients { id } }
	... on Measurement { docId: id client { id } }
	... on AnomalyEvent { docId: id client { uuid } }
	... on Isp { id ispContractsCount }
	... on Capability { id registrationKeysCount }
	... on RegistrationKey { id capability { id } }
} }`

// TestFederationEntities: a gateway's representations resolve to the
// caller's objects with the edges below them attached; another data
// owner's keys (and unknown ones) resolve to null without an error.
func TestFederationEntities(t *testing.T) {
	e := apitest.Get(t)
	a, b := newFedWorld(t, e, "fed-a"), newFedWorld(t, e, "fed-b")

	got := e.GraphQLData(t, a.o.Key, fedEntitiesQuery, map[string]any{"r": a.reps()})["_entities"].([]any)
	want := []string{
		fmt.Sprintf(`{"__typename":"Client","id":%d,"uuid":%q,"label":%q,"clientGroups":[{"name":%q}]}`, a.client.ID, a.client.UUID, a.label, a.groupTag),
		fmt.Sprintf(`{"__typename":"Client","id":%d,"uuid":%q,"label":%q,"clientGroups":[{"name":%q}]}`, a.client.ID, a.client.UUID, a.label, a.groupTag),
		fmt.Sprintf(`{"__typename":"ClientGroup","id":%d,"name":%q,"clients":[{"id":%d}]}`, a.group, a.groupTag, a.client.ID),
		fmt.Sprintf(`{"__typename":"Measurement","docId":%q,"client":{"id":%d}}`, a.measurement, a.client.ID),
		fmt.Sprintf(`{"__typename":"AnomalyEvent","docId":%q,"client":{"uuid":%q}}`, a.anomaly, a.client.UUID),
		fmt.Sprintf(`{"__typename":"Isp","id":%d,"ispContractsCount":0}`, a.isp),
		fmt.Sprintf(`{"__typename":"Capability","id":%d,"registrationKeysCount":1}`, a.capability),
		fmt.Sprintf(`{"__typename":"RegistrationKey","id":%d,"capability":{"id":%d}}`, a.regKey, a.capability),
	}
	if len(got) != len(want) {
		t.Fatalf("%d entities, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		apitest.SameJSON(t, fmt.Sprintf("entity %d", i), mustJSON(t, got[i]), want[i])
	}

	t.Run("another data owner's keys resolve to null", func(t *testing.T) {
		g := e.GraphQL(t, a.o.Key, fedEntitiesQuery, map[string]any{"r": b.reps()})
		if len(g.Errors) > 0 {
			t.Fatalf("errors: %s", g.Raw)
		}
		for i, ent := range g.Data["_entities"].([]any) {
			if ent != nil {
				t.Errorf("entity %d of another data owner: %v", i, ent)
			}
		}
	})
	t.Run("own, foreign and unknown keys of both kinds in one batch", func(t *testing.T) {
		reps := []map[string]any{{"__typename": "Client", "uuid": b.client.UUID}, {"__typename": "Client", "id": a.other.ID},
			{"__typename": "Client", "id": 1 << 40}, {"__typename": "Client", "uuid": a.client.UUID}, {"__typename": "Client", "id": b.client.ID}}
		ents := e.GraphQLData(t, a.o.Key, `query($r: [_Any!]!) { _entities(representations: $r) { ... on Client { id } } }`,
			map[string]any{"r": reps})["_entities"].([]any)
		apitest.SameJSON(t, "entities", mustJSON(t, ents), fmt.Sprintf(`[null,{"id":%d},null,{"id":%d},null]`, a.other.ID, a.client.ID))
	})
	t.Run("one statement per entity type, whatever the number of representations", func(t *testing.T) {
		count := func(reps []map[string]any) int64 {
			before := e.Counter.Count()
			g := e.GraphQL(t, a.o.Key, `query($r: [_Any!]!) { _entities(representations: $r) { __typename } }`, map[string]any{"r": reps})
			if len(g.Errors) > 0 {
				t.Fatalf("errors: %s", g.Raw)
			}
			return e.Counter.Count() - before
		}
		one := count(a.reps())
		var many []map[string]any
		for range 20 {
			many = append(many, a.reps()...)
			many = append(many, b.reps()...)
		}
		t.Logf("%d statements for %d representations of %d types", one, len(a.reps()), 7)
		if n := count(many); n != one || n > int64(len(a.reps())) {
			t.Errorf("%d statements for %d representations, %d for %d; want the same, at most one per key", n, len(many), one, len(a.reps()))
		}
	})
	t.Run("the representations count against the complexity limit", func(t *testing.T) {
		var reps []map[string]any
		for range 600 {
			reps = append(reps, map[string]any{"__typename": "Client", "id": a.client.ID})
		}
		_, gerr := e.GraphQLFail(t, a.o.Key, `query($r: [_Any!]!) { _entities(representations: $r) { ... on Client { id uuid } } }`,
			map[string]any{"r": reps})
		if gerr.Extensions["code"] != "COMPLEXITY_LIMIT_EXCEEDED" {
			t.Errorf("600 representations × 2 fields: %v, want the complexity limit", gerr)
		}
	})
}

// TestFederationNeedsAKey: _service and _entities answer authenticated
// callers only.
func TestFederationNeedsAKey(t *testing.T) {
	e := apitest.Get(t)
	w := newFedWorld(t, e, "fed-key")
	for _, q := range []string{`{ _service { sdl } }`, `{ _entities(representations: [{__typename: "Client", id: 1}]) { __typename } }`} {
		g := e.GraphQL(t, "", q, nil)
		if g.Status != http.StatusUnauthorized || g.Data != nil {
			t.Errorf("%s without a key: %d %s", q, g.Status, g.Raw)
		}
	}
	sdl := e.GraphQLData(t, w.o.Key, `{ _service { sdl } }`, nil)["_service"].(map[string]any)["sdl"].(string)
	for _, s := range []string{`@link(url: "https://specs.apollo.dev/federation/v2.7"`, `extend type Client @key(fields: "id") @key(fields: "uuid")`, "type Client {"} {
		if !strings.Contains(sdl, s) {
			t.Errorf("_service.sdl lacks %q", s)
		}
	}
}
