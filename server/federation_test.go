package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
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
	w.o.InsertDocuments(t, vocab.KindAnomalyEvent, map[string]any{"id": w.anomaly, "client_uuid": w.client.UUID,
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
	t.Run("one read per entity type, whatever the number of representations", func(t *testing.T) {
		count := func(reps []map[string]any) int64 { // round trips: each read is one, with its plan setting (store/read.go)
			before := e.Counter.RoundTrips()
			g := e.GraphQL(t, a.o.Key, `query($r: [_Any!]!) { _entities(representations: $r) { __typename } }`, map[string]any{"r": reps})
			if len(g.Errors) > 0 {
				t.Fatalf("errors: %s", g.Raw)
			}
			return e.Counter.RoundTrips() - before
		}
		one := count(a.reps())
		var many []map[string]any
		for range 20 {
			many = append(many, a.reps()...)
			many = append(many, b.reps()...)
		}
		t.Logf("%d reads for %d representations of %d types", one, len(a.reps()), 7)
		if n := count(many); n != one || n > int64(len(a.reps())) {
			t.Errorf("%d reads for %d representations, %d for %d; want the same, at most one per key", n, len(many), one, len(a.reps()))
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

// lastLine is the last line a Node check printed: its answer (the Apollo
// libraries may log lines of their own before it).
func lastLine(out []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	return lines[len(lines)-1]
}

// composition is check.mjs compose's answer.
type composition struct {
	OK         bool     `json:"ok"`
	Errors     []string `json:"errors"`
	Supergraph string   `json:"supergraph"`
}

// compose composes fleetgraph's SDL (the server's _service when sdl is
// empty) with the Node check's second subgraph.
func compose(t *testing.T, e *apitest.Env, key, sdl string) composition {
	t.Helper()
	env := []string{"FLEETGRAPH_URL=" + e.URL, "FLEETGRAPH_KEY=" + key}
	if sdl != "" {
		file := filepath.Join(t.TempDir(), "fleetgraph.graphql")
		if err := os.WriteFile(file, []byte(sdl), 0o600); err != nil {
			t.Fatal(err)
		}
		env = append(env, "FLEETGRAPH_SDL_FILE="+file)
	}
	var c composition
	if err := json.Unmarshal(lastLine(apitest.RunNode(t, "federation", 2*time.Minute, env, "check.mjs", "compose")), &c); err != nil {
		t.Fatalf("check.mjs compose: %v", err)
	}
	return c
}

// TestFederationComposition composes fleetgraph's subgraph schema, as its
// server serves it, with a second subgraph that extends Client, with
// Apollo's composition (tools/federation): a schema change that breaks
// composition fails here.
func TestFederationComposition(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "fed-compose")
	c := compose(t, e, o.Key, "")
	if !c.OK {
		t.Fatalf("fleetgraph's schema does not compose:\n%s", strings.Join(c.Errors, "\n"))
	}
	// (extension: true: the keys are declared in schema/federation.graphqls
	// as extensions of the types.)
	for _, s := range []string{`@join__type(graph: FLEETGRAPH, key: "id"`, `@join__type(graph: FLEETGRAPH, key: "uuid"`,
		`@join__type(graph: RACKS, key: "uuid")`, `rack: String @join__field(graph: RACKS)`} {
		if !strings.Contains(c.Supergraph, s) {
			t.Errorf("supergraph lacks %s:\n%s", s, c.Supergraph)
		}
	}

	sdl := e.GraphQLData(t, o.Key, `{ _service { sdl } }`, nil)["_service"].(map[string]any)["sdl"].(string)
	// after: the change is made in the first place after this text (the
	// type's own definition, whatever its descriptions and interfaces).
	breaking := []struct{ name, after, from, to, mention string }{
		{"a key field changes type", "type Client implements Node", "\n  uuid: String!", "\n  uuid: Int!", "uuid"},
		{"the key the other subgraph uses goes", "", `@key(fields: "id") @key(fields: "uuid")`, `@key(fields: "id")`, "uuid"},
	}
	for _, b := range breaking {
		t.Run(b.name+" fails composition", func(t *testing.T) {
			at := strings.Index(sdl, b.after)
			if at < 0 || !strings.Contains(sdl[at:], b.from) {
				t.Fatalf("the SDL no longer holds %q after %q: adjust the test", b.from, b.after)
			}
			c := compose(t, e, o.Key, sdl[:at]+strings.Replace(sdl[at:], b.from, b.to, 1))
			t.Logf("composition errors: %q", c.Errors)
			if c.OK || !strings.Contains(strings.Join(c.Errors, "\n"), b.mention) {
				t.Errorf("composed: %v, errors %q; want a failure naming %s", c.OK, c.Errors, b.mention)
			}
		})
	}
}

// TestFederationGateway runs an Apollo gateway (tools/federation) over the
// running fleetgraph server and a second subgraph that extends Client with
// its rack and references clients by UUID from its own root field: answers
// cross the subgraphs both ways, with the caller's key forwarded to
// fleetgraph, so another data owner's probe stays null.
func TestFederationGateway(t *testing.T) {
	e := apitest.Get(t)
	a, b := newFedWorld(t, e, "fed-gw-a"), newFedWorld(t, e, "fed-gw-b")
	unknown := "00000000-0000-4000-8000-00000000f00d"
	racks := map[string]any{
		"slots": []map[string]string{{"slot": "A1", "uuid": a.client.UUID}, {"slot": "A2", "uuid": b.client.UUID}, {"slot": "A3", "uuid": unknown}},
		"racks": map[string]string{a.client.UUID: "rack-7", a.other.UUID: "rack-9", b.client.UUID: "rack-b"},
	}
	queries := []map[string]string{
		{"key": a.o.Key, "query": `{ clients { id label rack } }`},
		{"key": a.o.Key, "query": `{ rackSlots { slot probe { uuid label clientGroups { name } } } }`},
		{"key": b.o.Key, "query": `{ rackSlots { slot probe { label } } }`},
		{"key": "", "query": `{ clients { id } }`},
	}
	env := []string{"FLEETGRAPH_URL=" + e.URL, "FLEETGRAPH_KEY=" + a.o.Key, "RACKS=" + string(mustJSON(t, racks)), "QUERIES=" + string(mustJSON(t, queries))}
	var out struct {
		Answers []struct {
			Status int `json:"status"`
			Body   struct {
				Data   json.RawMessage  `json:"data"`
				Errors []map[string]any `json:"errors"`
			} `json:"body"`
		} `json:"answers"`
	}
	raw := apitest.RunNode(t, "federation", 2*time.Minute, env, "check.mjs", "gateway")
	if err := json.Unmarshal(lastLine(raw), &out); err != nil || len(out.Answers) != len(queries) {
		t.Fatalf("check.mjs gateway: %v: %s", err, raw)
	}
	for i, want := range []string{
		fmt.Sprintf(`{"clients":[{"id":%d,"label":%q,"rack":"rack-7"},{"id":%d,"label":null,"rack":"rack-9"}]}`, a.client.ID, a.label, a.other.ID),
		fmt.Sprintf(`{"rackSlots":[{"slot":"A1","probe":{"uuid":%q,"label":%q,"clientGroups":[{"name":%q}]}},{"slot":"A2","probe":null},{"slot":"A3","probe":null}]}`,
			a.client.UUID, a.label, a.groupTag),
		fmt.Sprintf(`{"rackSlots":[{"slot":"A1","probe":{"label":null}},{"slot":"A2","probe":{"label":%q}},{"slot":"A3","probe":{"label":null}}]}`, b.label),
	} {
		ans := out.Answers[i]
		if ans.Status != http.StatusOK {
			t.Errorf("query %d: status %d", i, ans.Status)
		}
		apitest.SameJSON(t, queries[i]["query"], ans.Body.Data, want)
	}
	if strings.Contains(string(out.Answers[1].Body.Data), b.label) || strings.Contains(string(out.Answers[2].Body.Data), a.label) {
		t.Errorf("another data owner's probe leaked through the gateway: %s %s", out.Answers[1].Body.Data, out.Answers[2].Body.Data)
	}
	if noKey := out.Answers[3].Body; len(noKey.Errors) == 0 || strings.Contains(string(noKey.Data), `"id"`) {
		t.Errorf("without a key: data %s, errors %v; want an error and no clients", noKey.Data, noKey.Errors)
	}
}

// entitySelection selects every field of the entity type name, as the
// server's schema declares it (introspection): scalars as they are, objects
// by their __typename, arguments left to their defaults (a required
// argument fails the test: give it a value here).
func entitySelection(t *testing.T, e *apitest.Env, key, name string) string {
	t.Helper()
	const q = `query($n: String!) { __type(name: $n) { fields { name
		args { name defaultValue type { kind } }
		type { kind ofType { kind ofType { kind ofType { kind ofType { kind } } } } } } } }`
	var typ struct {
		Type struct {
			Fields []struct {
				Name string
				Args []struct {
					Name         string
					DefaultValue *string
					Type         struct{ Kind string }
				}
				Type fieldType
			}
		} `json:"__type"`
	}
	if err := json.Unmarshal(mustJSON(t, e.GraphQLData(t, key, q, map[string]any{"n": name})), &typ); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range typ.Type.Fields {
		for _, a := range f.Args {
			if a.Type.Kind == "NON_NULL" && a.DefaultValue == nil {
				t.Fatalf("%s.%s has a required argument %s: give it a value in entitySelection", name, f.Name, a.Name)
			}
		}
		b.WriteString(f.Name)
		if k := f.Type.leaf(); k == "OBJECT" || k == "INTERFACE" || k == "UNION" {
			b.WriteString(" { __typename }")
		}
		b.WriteString(" ")
	}
	return b.String()
}

// fieldType is an introspected type reference, wrappers included.
type fieldType struct {
	Kind   string
	OfType *fieldType
}

// leaf is the kind below the NON_NULL and LIST wrappers.
func (f fieldType) leaf() string {
	if f.OfType == nil {
		return f.Kind
	}
	return f.OfType.leaf()
}

// TestFederationEntitiesMixed: every entity type, with every one of its
// fields selected, resolves a batch mixing unknown, own and another data
// owner's representations (the probe's gateway with one stale reference:
// an unknown Client before the caller's, measurements selected, panicked
// in the batch resolver and nulled the caller's client too): the own
// object comes back whole, the others null, without an error.
func TestFederationEntitiesMixed(t *testing.T) {
	e := apitest.Get(t)
	a, b := newFedWorld(t, e, "fed-mix-a"), newFedWorld(t, e, "fed-mix-b")
	unknown := map[string]any{"Client": 1 << 40, "ClientGroup": 1 << 40, "Isp": 1 << 40, "Capability": 1 << 40, "RegistrationKey": 1 << 40,
		"Measurement": "00000000-0000-4000-8000-00000000dead", "AnomalyEvent": "no-such-rule::shift::1"}
	own, foreign := a.reps(), b.reps()
	for i := range own {
		typ := own[i]["__typename"].(string)
		keyName := "id"
		if _, ok := own[i]["uuid"]; ok {
			keyName = "uuid"
		}
		t.Run(typ+" by "+keyName, func(t *testing.T) {
			unknownRep := map[string]any{"__typename": typ, "id": unknown[typ]}
			if keyName == "uuid" {
				unknownRep = map[string]any{"__typename": typ, "uuid": "00000000-0000-4000-8000-00000000beef"}
			}
			reps := []map[string]any{unknownRep, own[i], foreign[i], unknownRep, own[i]}
			q := fmt.Sprintf(`query($r: [_Any!]!) { _entities(representations: $r) { ... on %s { %s } } }`,
				typ, entitySelection(t, e, a.o.Key, typ))
			g := e.GraphQL(t, a.o.Key, q, map[string]any{"r": reps})
			if g.Status != http.StatusOK || len(g.Errors) > 0 {
				t.Fatalf("status %d, errors: %s", g.Status, g.Raw)
			}
			ents, _ := g.Data["_entities"].([]any)
			if len(ents) != len(reps) {
				t.Fatalf("%d entities for %d representations: %s", len(ents), len(reps), g.Raw)
			}
			for j, ent := range ents {
				if mine := j == 1 || j == 4; mine != (ent != nil) {
					t.Errorf("entity %d (%v): %v", j, reps[j], ent)
				}
			}
			if got, ok := ents[1].(map[string]any); ok && keyName == "id" && fmt.Sprint(got["id"]) != fmt.Sprint(own[i]["id"]) {
				t.Errorf("own %s: id %v, want %v", typ, got["id"], own[i]["id"])
			}
		})
	}
}

// TestFederationEntitiesBadRepresentations: a representation that names no
// entity type, none at all, or lacks its type's key is refused as bad input
// naming it and what is wrong, before anything is read (gqlgen's federation
// code answered them as internal errors).
func TestFederationEntitiesBadRepresentations(t *testing.T) {
	e := apitest.Get(t)
	w := newFedWorld(t, e, "fed-bad")
	own := map[string]any{"__typename": "Client", "id": w.client.ID}
	for _, c := range []struct {
		name    string
		rep     map[string]any
		field   string
		mention string
	}{
		{"a type that is not an entity", map[string]any{"__typename": "Query", "id": 1}, "representations[1].__typename", `"Query" is not an entity type`},
		{"an unknown type", map[string]any{"__typename": "Nope", "id": 1}, "representations[1].__typename", `"Nope" is not an entity type`},
		{"no __typename", map[string]any{"id": 1}, "representations[1].__typename", "must be the name of an entity type"},
		{"a __typename that is not a string", map[string]any{"__typename": 7, "id": 1}, "representations[1].__typename", "must be the name"},
		{"no key", map[string]any{"__typename": "Isp", "name": "x"}, "representations[1]", "holds no key of Isp"},
		{"a null key", map[string]any{"__typename": "Client", "id": nil}, "representations[1]", "holds no key of Client: one of id, uuid"},
		{"a key of the wrong type", map[string]any{"__typename": "Isp", "id": "abc"}, "representations[1]", "holds no key of Isp"},
		{"a key of the wrong type, batch of many", map[string]any{"__typename": "RegistrationKey", "id": []int{1}}, "representations[1]", "holds no key of RegistrationKey"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := e.Counter.RoundTrips()
			start := time.Now()
			g, gerr := e.GraphQLFail(t, w.o.Key, `query($r: [_Any!]!) { _entities(representations: $r) { __typename ... on Client { id } } }`,
				map[string]any{"r": []map[string]any{own, c.rep}})
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("answered after %s", took)
			}
			if len(g.Errors) != 1 || gerr.Extensions["code"] != "BAD_USER_INPUT" {
				t.Fatalf("errors %s, want one BAD_USER_INPUT", g.Raw)
			}
			fields, _ := gerr.Extensions["errors"].(map[string]any)
			msgs, _ := fields[c.field].([]any)
			if len(fields) != 1 || len(msgs) != 1 || !strings.Contains(msgs[0].(string), c.mention) {
				t.Errorf("errors %v, want %s: …%s…", gerr.Extensions["errors"], c.field, c.mention)
			}
			if n := e.Counter.RoundTrips() - before; n > 2 { // the key's authentication at most
				t.Errorf("%d statements for a refused batch", n)
			}
		})
	}
}
