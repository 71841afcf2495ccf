package server_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/engine"
	"github.com/fleetgraph/fleetgraph/resolvers"
	"github.com/fleetgraph/fleetgraph/store"
)

// renderWorld is a data owner whose data exercises what the renderer must
// write exactly as gqlgen does: escapes, nulls, floats, enums, times, shared
// clients, assigned and default configs.
func renderWorld(t *testing.T, e *apitest.Env) (adminKey, exportKey string) {
	o := e.NewOwner(t, "render")
	seedFleet(t, e, o.ID, 30)
	cfg := o.NewConfig(t, "public", "assigned \"config\"", false)
	o.NewConfig(t, "automator", "default schedule", true)
	odd := cfgStudy("quote \" é 😀", "VIDEO", "youtube")
	odd["params"] = map[string]any{"ratio": 0.1, "big": 12345678901234, "html": "<a&b>", "list": []any{nil, true, 1.5e-7}}
	o.NewConfigWith(t, apitest.ConfigOpts{Name: "studies \"<é>\"", Published: cfgDoc(odd), Draft: cfgDoc(odd, cfgStudy("web", "WEB", "website"))})
	label, extra, empty := "quote \" backslash \\ tab \t newline \n ctrl \x01 é 😀 <html>", "tab\tonly\x02", ""
	o.NewClient(t, store.NewClient{ExtraLabel: &empty})
	c := o.NewClient(t, store.NewClient{Label: &label, ExtraLabel: &extra, PublicConfigID: &cfg, LastSeenAt: apitest.Ptr(time.Now().Add(-48 * time.Hour))})
	isp := o.NewISP(t, store.IspInput{Name: apitest.Ptr("Ünïcode \"ISP\""), Country: apitest.Ptr("AT"), Type: apitest.Ptr("mobile")})
	price := 12.5
	o.NewContract(t, store.NewContract{IspID: isp.ID, ClientID: c.ID, Name: "no dates", MonthlyPrice: &price})
	other := e.NewOwner(t, "renderpeer")
	shared := other.NewClient(t, store.NewClient{})
	if err := e.Store.ShareClient(context.Background(), other.ID, shared.ID, o.ID); err != nil {
		t.Fatal(err)
	}
	exportKey, _ = o.NewKey(t, apitest.KeyOpts{Kind: auth.KindExport})
	return o.Key, exportKey
}

// TestRenderMatchesGqlgen: every list and object answer is byte for byte what
// gqlgen's own marshalling gives, through REST and GraphQL, whether the
// renderer writes it or gives it back (a resolver field below).
func TestRenderMatchesGqlgen(t *testing.T) {
	e := apitest.Get(t)
	admin, export := renderWorld(t, e)
	gqlgenOnly := e.StartServerWith(t, func(r *resolvers.Resolver) { r.GqlgenMarshalOnly = true })
	apitest.DoAt(t, gqlgenOnly, http.MethodGet, "/client_admin_api/v1/isps", admin, nil) // keys' last use is touched once
	apitest.DoAt(t, gqlgenOnly, http.MethodGet, "/export_api/v1/clients", export, nil)

	same := func(t *testing.T, rendered bool, do func(base string) *apitest.Response) {
		want := do(gqlgenOnly)
		before := engine.Rendered.Load()
		got := do(e.URL)
		if want.Status != http.StatusOK || !bytes.Equal(want.Raw, got.Raw) {
			t.Errorf("status %d/%d\n  gqlgen: %s\nrendered: %s", want.Status, got.Status, want.Raw, got.Raw)
		}
		if n := engine.Rendered.Load() - before; (n > 0) != rendered {
			t.Errorf("%d lists rendered directly, want rendered = %v", n, rendered)
		}
	}
	for _, path := range []string{"/clients", "/isps", "/capabilities", "/client_admin_users", "/client_admin_api_keys",
		"/service_credentials", "/export_api_keys", "/client_analytics_api_keys", "/anomaly_detection_overrides",
		"/public_configs", "/schedule_configs"} {
		t.Run("admin "+path, func(t *testing.T) {
			spliced := engine.Spliced.Load()
			same(t, true, func(base string) *apitest.Response {
				return apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1"+path, admin, nil)
			})
			if path == "/clients" && engine.Spliced.Load() == spliced { // its answer is the data as it is
				t.Error("the list was copied into the answer's data, not spliced into the answer")
			}
		})
		t.Run("admin "+path+"/{id}", func(t *testing.T) { // each item by its id: one object
			for _, id := range listedIDs(t, apitest.DoAt(t, gqlgenOnly, http.MethodGet, "/client_admin_api/v1"+path, admin, nil)) {
				same(t, true, func(base string) *apitest.Response {
					return apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1"+path+"/"+id, admin, nil)
				})
			}
		})
	}
	t.Run("export /clients", func(t *testing.T) { // a page object
		same(t, true, func(base string) *apitest.Response {
			return apitest.DoAt(t, base, http.MethodGet, "/export_api/v1/clients?per_page=100", export, nil)
		})
	})
	t.Run("graphql client by id", func(t *testing.T) {
		for _, id := range listedIDs(t, apitest.DoAt(t, gqlgenOnly, http.MethodGet, "/client_admin_api/v1/clients", admin, nil)) {
			same(t, true, func(base string) *apitest.Response {
				return apitest.DoAt(t, base, http.MethodPost, "/graphql", admin, map[string]any{
					"query": clientByIDQuery, "variables": map[string]any{"id": id, "withKey": true}})
			})
		}
	})
	for _, q := range renderQueries {
		t.Run("graphql "+q.name, func(t *testing.T) {
			same(t, q.rendered, func(base string) *apitest.Response {
				return apitest.DoAt(t, base, http.MethodPost, "/graphql", admin, map[string]any{
					"query": q.query, "variables": map[string]any{"withKey": true, "skipGroups": false}})
			})
		})
	}
}

// listedIDs are the ids of the items of a REST list answer ({"items": [...]}).
func listedIDs(t *testing.T, list *apitest.Response) []string {
	t.Helper()
	var ids []string
	for _, items := range list.Obj(t) {
		for _, item := range items.([]any) {
			ids = append(ids, fmt.Sprint(item.(map[string]any)["id"]))
		}
	}
	if len(ids) == 0 {
		t.Skipf("nothing listed to read by id: %s", list.Raw)
	}
	return ids
}

// renderClientFields are every field of a client but its resolver fields.
const renderClientFields = `fragment C on Client { id uuid type accessLevel label extraLabel tags createdAt updatedAt disabledAt disabledReason
		lastMeasurementAt lastSeenAt lastClientType lastClientVersion configManaged offline anomaliesMuted
		deliveredPublicConfig { id name isDefault } deliveredAutomatorConfig { id name isDefault }
		configuration { managed publicConfigId automatorConfigId }
		ispContracts { id monthlyPrice currency validFrom validUntil ispName clientUuid clientLabel } }`

// clientByIDQuery is a client by id with every edge below it.
const clientByIDQuery = `query($id: ID!, $withKey: Boolean!) { client(id: $id) { ...C __typename
		k: registrationKey @include(if: $withKey) { ... on RegistrationKey { validUntil clientsCount capability { name } } }
		clientGroups { name clients { uuid } } currentIspContract { ispName isp { name type country } } } }
	` + renderClientFields

// renderQueries reach every edge, through aliases, fragments, inline
// fragments, __typename and @include/@skip; the last one selects a
// resolver field, which the renderer must leave to gqlgen.
var renderQueries = []struct {
	name     string
	query    string
	rendered bool
}{
	{"fleet", fleetQuery, true},
	{"fragments", `query($withKey: Boolean!, $skipGroups: Boolean!) {
		all: clients { ...C __typename k: registrationKey @include(if: $withKey) { ... on RegistrationKey { validUntil clientsCount } } }
		again: clients { id clientGroups @skip(if: $skipGroups) { name clients { uuid offline } } } }
	` + renderClientFields, true},
	{"groups", `{ clientGroups { id name clients { uuid label currentIspContract { ispName isp { name type country alternativeNames } } } } }`, true},
	{"isps", `{ isps { id name type country isVpn verified createdAt ispContractsCount ispDetailsCount
		ispContracts { name client { label registrationKey { capability { name registrationKeysCount } } } } } }`, true},
	{"capabilities", `{ capabilities { id name comment registrationKeysCount
		registrationKeys { registrationKey clientsCount numRegistrationsLeft capability { id allowedMeasurementTypes } } } }`, true},
	{"configs", `{ measurementConfigs(kind: public) { id kind name description isDefault draftRevision publishedRevision
		draftVersion { id revision data dataHash createdAt createdByName published studyCount studies { id position name studyId latestRevision internalId } }
		publishedVersion { data studies { studyType subject } } revisions { revision state publishedAt }
		deliveredClientCount deliveredClients { id uuid label lastSeenAt } clientGroups { name }
		scheduleConfigs { id studyIds } warnings } }`, true},
	{"measurements", `{ clients { id measurements(first: 2) { edges { cursor node { id client { id } } } pageInfo { hasNextPage } } } }`, false},
}

// TestCollectedFieldsKeptAcrossRequests: the engine keeps the fields it
// collected from a selection set for the next requests of its document
// (engine/collect.go). Answers stay gqlgen's, byte for byte, when the
// same fragment's field is merged with different siblings (the merged
// sets start with the same field and are as long), and when @include and
// @skip flip from one request to the next.
func TestCollectedFieldsKeptAcrossRequests(t *testing.T) {
	e := apitest.Get(t)
	admin, _ := renderWorld(t, e)
	gqlgenOnly := e.StartServerWith(t, func(r *resolvers.Resolver) { r.GqlgenMarshalOnly = true })
	apitest.DoAt(t, gqlgenOnly, http.MethodGet, "/client_admin_api/v1/isps", admin, nil) // keys' last use is touched once
	const merged = `{ a: clients { ...R registrationKey { comment } } b: clients { ...R registrationKey { validFrom } } }
		fragment R on Client { id registrationKey { id } }`
	const flipped = `query($k: Boolean!, $s: Boolean!) { clients { id registrationKey @include(if: $k) { id comment }
		clientGroups @skip(if: $s) { name } ...G } }
		fragment G on Client { label currentIspContract @include(if: $k) { ispName } }`
	// Directives only below a set without any (kept): the nested set's
	// plan must not be kept with it.
	const below = `query($k: Boolean!) { clients { id registrationKey { id comment @include(if: $k) } } }`
	type run struct {
		query string
		vars  map[string]any
		want  []string // in the answer
	}
	runs := []run{
		{merged, nil, []string{`"a":[{"id":`, `"registrationKey":{"id":`, `"comment":`, `"validFrom":`}},
		{flipped, map[string]any{"k": true, "s": false}, []string{`"registrationKey":{`, `"clientGroups":[`, `"currentIspContract":`}},
		{flipped, map[string]any{"k": false, "s": true}, []string{`"label":`}},
		{merged, nil, []string{`"comment":`, `"validFrom":`}},
		{flipped, map[string]any{"k": true, "s": false}, []string{`"registrationKey":{`, `"clientGroups":[`}},
		{flipped, map[string]any{"k": false, "s": false}, []string{`"clientGroups":[`}},
		{below, map[string]any{"k": true}, []string{`"comment":`}},
		{below, map[string]any{"k": false}, []string{`"registrationKey":{"id":`}},
		{below, map[string]any{"k": true}, []string{`"comment":`}},
	}
	for i, r := range runs {
		body := map[string]any{"query": r.query, "variables": r.vars}
		want := apitest.DoAt(t, gqlgenOnly, http.MethodPost, "/graphql", admin, body)
		got := apitest.DoAt(t, e.URL, http.MethodPost, "/graphql", admin, body)
		if want.Status != http.StatusOK || !bytes.Equal(want.Raw, got.Raw) {
			t.Fatalf("run %d: status %d/%d\n  gqlgen: %s\nrendered: %s", i, want.Status, got.Status, want.Raw, got.Raw)
		}
		for _, w := range r.want {
			if !bytes.Contains(got.Raw, []byte(w)) {
				t.Errorf("run %d: the answer lacks %s: %s", i, w, got.Raw)
			}
		}
		if r.query != below && r.vars != nil && r.vars["k"] == false && bytes.Contains(got.Raw, []byte(`"registrationKey"`)) {
			t.Errorf("run %d: @include(if: false) kept the key: %s", i, got.Raw)
		}
		if r.query == below && r.vars["k"] == false && bytes.Contains(got.Raw, []byte(`"comment"`)) {
			t.Errorf("run %d: @include(if: false) below a kept set kept the comment: %s", i, got.Raw)
		}
		if r.vars != nil && r.vars["s"] == true && bytes.Contains(got.Raw, []byte(`"clientGroups"`)) {
			t.Errorf("run %d: @skip(if: true) kept the groups: %s", i, got.Raw)
		}
	}
	// The kept sets' plans serve concurrent requests (under -race in CI):
	// a lookup without directives, whose every set is kept.
	body := map[string]any{"query": `query($id: ID!) { client(id: $id) { ...C registrationKey { id comment validFrom }
		clientGroups { name clients { uuid } } currentIspContract { ispName isp { name } } } }` + renderClientFields,
		"variables": map[string]any{}}
	ids := listedIDs(t, apitest.DoAt(t, gqlgenOnly, http.MethodGet, "/client_admin_api/v1/clients", admin, nil))
	body["variables"].(map[string]any)["id"] = ids[len(ids)-1]
	want := apitest.DoAt(t, gqlgenOnly, http.MethodPost, "/graphql", admin, body)
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for i := range 10 {
				got := apitest.DoAt(t, e.URL, http.MethodPost, "/graphql", admin, body)
				if !bytes.Equal(want.Raw, got.Raw) {
					t.Errorf("goroutine %d, request %d:\n  gqlgen: %s\nrendered: %s", g, i, want.Raw, got.Raw)
					return
				}
			}
		})
	}
	wg.Wait()
}
