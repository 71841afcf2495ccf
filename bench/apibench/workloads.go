package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/fleetgraph/fleetgraph/bench/apidata"
)

// side is one server answering a workload: how to build its request.
type side struct {
	name    string
	url     string
	method  string
	body    []byte // JSON for POST
	headers map[string]string
}

func (s side) request() (*http.Request, error) {
	var body io.Reader
	if s.body != nil {
		body = bytes.NewReader(s.body)
	}
	req, err := http.NewRequest(s.method, s.url, body)
	if err != nil {
		return nil, err
	}
	if s.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range s.headers {
		req.Header.Set(k, v)
	}
	return req, nil
}

// workload is one load on fleetgraph (a) compared with the same load on
// each of the peers.
type workload struct {
	name    string
	a       side
	peers   []peer
	listRSS bool // the list load whose peak RSS is held against the target
}

// peer is another server answering a workload: the ratio target fleetgraph's
// throughput must reach against it and how to check both answer alike.
type peer struct {
	side    side
	target  float64
	compare func(a, b []byte) error
}

// PostGraphile's selections of the client data fleetgraph's documents
// (apidata) select.
const (
	postgraphileClient = `fragment C on Client { id uuid type label extraLabel tags createdAt lastSeenAt
  registrationKeyByRegistrationKeyId { id registrationKey numRegistrationsLeft validFrom }
  clientGroupMembersByClientId { nodes { clientGroupByClientGroupId { id name } } }
  ispContractsByClientId(condition: {validUntil: null}) {
    nodes { id name uploadSpeed downloadSpeed monthlyPrice validFrom ispByIspId { name } } } }`

	postgraphileOne = `query One($id: BigInt!) { clientById(id: $id) { ...C } } ` + postgraphileClient
	// Equality on valid_until null picks the current contract: see README.
	postgraphileList = `query List($owner: BigInt!) {
  allClients(condition: {dataOwnerId: $owner}, orderBy: ID_ASC) { nodes { ...C } } } ` + postgraphileClient

	// PostGraphile V5's Amber preset names a table's id column rowId (id is
	// the node id): aliases give its answers V4's shape.
	postgraphile5Client = `fragment C on Client { id: rowId uuid type label extraLabel tags createdAt lastSeenAt
  registrationKeyByRegistrationKeyId { id: rowId registrationKey numRegistrationsLeft validFrom }
  clientGroupMembersByClientId { nodes { clientGroupByClientGroupId { id: rowId name } } }
  ispContractsByClientId(condition: {validUntil: null}) {
    nodes { id: rowId name uploadSpeed downloadSpeed monthlyPrice validFrom ispByIspId { name } } } }`
	postgraphile5One  = `query One($id: BigInt!) { clientById: clientByRowId(rowId: $id) { ...C } } ` + postgraphile5Client
	postgraphile5List = `query List($owner: BigInt!) {
  allClients(condition: {dataOwnerId: $owner}, orderBy: ROW_ID_ASC) { nodes { ...C } } } ` + postgraphile5Client
)

// The targets: fleetgraph's throughput over the peer's.
const (
	targetHandwrittenGraphQL = 0.8
	targetHandwrittenREST    = 1.0
	targetPostGraphile       = 2.0
)

// setup is what the workloads need to know about the servers and data.
type setup struct {
	fleetgraph, postgraphile, postgraphile5 string // base URLs
	handwritten                             string
	owners                                  []owner // the 50, 500 and 2,000 client owners
	clientID                                int64   // a client of the largest owner
}

func gqlBody(query string, vars map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"query": query, "variables": vars}) // plain maps marshal
	return b
}

func workloads(s setup) []workload {
	big := s.owners[len(s.owners)-1]
	id := strconv.FormatInt(s.clientID, 10)
	fg := func(o owner, q string, vars map[string]any) side {
		return side{name: "fleetgraph", url: s.fleetgraph + "/graphql", method: http.MethodPost,
			body: gqlBody(q, vars), headers: map[string]string{"X-API-KEY": o.key}}
	}
	pgl := func(name, base, q string, vars map[string]any) side {
		return side{name: name, url: base + "/graphql", method: http.MethodPost, body: gqlBody(q, vars)}
	}
	gql := func(o owner, q string, vars map[string]any, v5q, v4q string, pvars map[string]any) []peer {
		h := fg(o, q, vars)
		h.name, h.url = "handwritten", s.handwritten+"/graphql"
		return []peer{
			{side: h, target: targetHandwrittenGraphQL, compare: compareBytes},
			{side: pgl("postgraphile5", s.postgraphile5, v5q, pvars), target: targetPostGraphile, compare: compareGraphQL},
			{side: pgl("postgraphile4", s.postgraphile, v4q, pvars), target: targetPostGraphile, compare: compareGraphQL},
		}
	}
	ws := []workload{{name: "graphql client by id", a: fg(big, apidata.OneClient, map[string]any{"id": id}),
		peers: gql(big, apidata.OneClient, map[string]any{"id": id}, postgraphile5One, postgraphileOne, map[string]any{"id": id})}}
	for _, o := range s.owners {
		vars := map[string]any{"owner": strconv.FormatInt(o.id, 10)}
		ws = append(ws, workload{name: fmt.Sprintf("graphql %d clients", o.clients), a: fg(o, apidata.AllClients, nil),
			peers: gql(o, apidata.AllClients, nil, postgraphile5List, postgraphileList, vars), listRSS: o == big})
	}
	rest := func(base, name, path string) side {
		return side{name: name, url: base + "/client_admin_api/v1" + path, method: http.MethodGet,
			headers: map[string]string{"X-API-KEY": big.key}}
	}
	restPeer := func(path string) []peer {
		return []peer{{side: rest(s.handwritten, "handwritten", path), target: targetHandwrittenREST, compare: compareBytes}}
	}
	return append(ws,
		workload{name: "rest GET /clients/{id}", a: rest(s.fleetgraph, "fleetgraph", "/clients/"+id), peers: restPeer("/clients/" + id)},
		workload{name: fmt.Sprintf("rest GET /clients (%d)", big.clients), a: rest(s.fleetgraph, "fleetgraph", "/clients"),
			peers: restPeer("/clients"), listRSS: true})
}
