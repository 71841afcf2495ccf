package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
)

// readAheadClient selects every first-level edge of a client that is read
// ahead (groups, contracts, registration key, delivered configs) and one
// below them.
const readAheadClient = `query One($id: ID!) { client(id: $id) { id uuid label
	clientGroups { id name }
	currentIspContract { id name ispName isp { name } }
	ispContracts { id }
	registrationKey { id registrationKey capability { name } }
	deliveredPublicConfig { id name } deliveredAutomatorConfig { id } } }`

// TestClientLookupReadsItsFirstLevelAhead: client(id:) and
// GET /clients/{id} read the client and its first level (groups, contracts,
// registration key, delivered configs) in one round trip, and answer what
// the level-by-level read (client by uuid) answers; another data owner's
// id answers nothing of it. Not parallel: the statement counter is shared
// by the test binary.
func TestClientLookupReadsItsFirstLevelAhead(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "readahead")
	other := e.NewOwner(t, "readahead-other")
	seedFleet(t, e, o.ID, 3)
	var id int64
	var uuid string
	if err := e.Store.Pool().QueryRow(context.Background(),
		`SELECT id, uuid::text FROM clients WHERE data_owner_id = $1 ORDER BY id LIMIT 1`, o.ID).Scan(&id, &uuid); err != nil {
		t.Fatal(err)
	}
	// Each key once first: its lookup is cached after (store/keycache.go).
	e.GraphQL(t, o.Key, `{ clients { id } }`, nil)
	e.GraphQL(t, other.Key, `{ clients { id } }`, nil)
	trips := func(do func()) int64 {
		before := e.Counter.RoundTrips()
		do()
		return e.Counter.RoundTrips() - before
	}

	firstLevel := `query One($id: ID!) { client(id: $id) { id clientGroups { id } currentIspContract { id }
		registrationKey { id } deliveredPublicConfig { id } } }`
	if n := trips(func() { e.GraphQL(t, o.Key, firstLevel, map[string]any{"id": strconv.FormatInt(id, 10)}) }); n != 1 {
		t.Errorf("client by id with its first level: %d round trips, want 1", n)
	}
	if n := trips(func() { e.GraphQL(t, o.Key, firstLevel, map[string]any{"id": uuid}) }); n != 2 {
		t.Errorf("client by uuid with its first level: %d round trips, want 2 (no read ahead)", n)
	}
	var byID, byUUID *apitest.GraphQLResponse
	// The second level (the contract's ISP, the key's capability: two
	// fields, two types) is one more round trip.
	if n := trips(func() { byID = e.GraphQL(t, o.Key, readAheadClient, map[string]any{"id": strconv.FormatInt(id, 10)}) }); n != 2 {
		t.Errorf("client by id with two levels: %d round trips, want 2", n)
	}
	if n := trips(func() { byUUID = e.GraphQL(t, o.Key, readAheadClient, map[string]any{"id": uuid}) }); n != 3 {
		t.Errorf("client by uuid with two levels: %d round trips, want 3", n)
	}
	if len(byID.Errors) > 0 || len(byUUID.Errors) > 0 {
		t.Fatalf("errors: %s / %s", byID.Raw, byUUID.Raw)
	}
	if !reflect.DeepEqual(byID.Data, byUUID.Data) {
		t.Errorf("read ahead answered\n%s\nthe level-by-level read\n%s", byID.Raw, byUUID.Raw)
	}
	c, _ := byID.Data["client"].(map[string]any)
	if groups, _ := c["clientGroups"].([]any); len(groups) != 2 || c["registrationKey"] == nil || c["currentIspContract"] == nil {
		t.Errorf("client by id misses its first level: %s", byID.Raw)
	}

	var rest *apitest.Response
	if n := trips(func() { rest = e.Admin(t, http.MethodGet, "/clients/"+strconv.FormatInt(id, 10), o.Key, nil) }); n != 1 {
		t.Errorf("GET /clients/{id}: %d round trips, want 1", n)
	}
	var body struct{ Client map[string]any }
	if err := json.Unmarshal(rest.Raw, &body); err != nil || rest.Status != http.StatusOK {
		t.Fatalf("GET /clients/{id}: %d %s", rest.Status, rest.Raw)
	}
	got := body.Client
	if key, _ := got["registration_key"].(map[string]any); key == nil || got["client_groups"] == nil || got["current_isp_contract"] == nil {
		t.Errorf("GET /clients/{id} misses its first level: %s", rest.Raw)
	}

	// Another data owner's id: the reads ahead went, scoped to the caller,
	// and nothing of the client comes back.
	g := e.GraphQL(t, other.Key, readAheadClient, map[string]any{"id": strconv.FormatInt(id, 10)})
	if g.Data["client"] != nil {
		t.Errorf("another data owner's client by id: %s", g.Raw)
	}
	if r := e.Admin(t, http.MethodGet, "/clients/"+strconv.FormatInt(id, 10), other.Key, nil); r.Status != http.StatusNotFound {
		t.Errorf("another data owner's GET /clients/{id}: %d %s, want 404", r.Status, r.Raw)
	}
}

// TestIspLookupReadsItsFirstLevelAhead: the read ahead is any root
// lookup's by id, not the client's alone: isp(id:) reads the ISP and its
// contracts in one round trip, and answers the contracts the list of ISPs
// reads level by level; another data owner's id answers nothing of it.
// Not parallel: the statement counter is shared by the test binary.
func TestIspLookupReadsItsFirstLevelAhead(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "readahead-isp")
	other := e.NewOwner(t, "readahead-isp-other")
	seedFleet(t, e, o.ID, 3)
	var id int64
	if err := e.Store.Pool().QueryRow(context.Background(),
		`SELECT isp_id FROM isp_contracts WHERE data_owner_id = $1 ORDER BY isp_id LIMIT 1`, o.ID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	e.GraphQL(t, o.Key, `{ isps { id } }`, nil) // each key's lookup is cached after its first request
	e.GraphQL(t, other.Key, `{ isps { id } }`, nil)
	const one = `query One($id: Int!) { isp(id: $id) { id name ispContracts { id name client { id } } } }`
	before := e.Counter.RoundTrips()
	g := e.GraphQL(t, o.Key, one, map[string]any{"id": id})
	// One round trip for the ISP and its contracts, one for the contracts' clients.
	if n := e.Counter.RoundTrips() - before; n != 2 {
		t.Errorf("isp by id with two levels: %d round trips, want 2", n)
	}
	if len(g.Errors) > 0 {
		t.Fatalf("errors: %s", g.Raw)
	}
	all := e.GraphQL(t, o.Key, `{ isps { id name ispContracts { id name client { id } } } }`, nil)
	var want any
	for _, i := range all.Data["isps"].([]any) {
		if fmt.Sprint(i.(map[string]any)["id"]) == strconv.FormatInt(id, 10) {
			want = i
		}
	}
	if contracts, _ := g.Data["isp"].(map[string]any)["ispContracts"].([]any); len(contracts) == 0 || !reflect.DeepEqual(g.Data["isp"], want) {
		t.Errorf("isp by id answered\n%s\nthe list of ISPs\n%s", g.Raw, all.Raw)
	}
	if g := e.GraphQL(t, other.Key, one, map[string]any{"id": id}); g.Data["isp"] != nil || len(g.Errors) == 0 {
		t.Errorf("another data owner's isp by id: %s", g.Raw)
	}
}
