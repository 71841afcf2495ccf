package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
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

// workload is one comparison: fleetgraph (a) against the other server (b),
// with the ratio target a/b must reach and how to check both answer alike.
type workload struct {
	name    string
	a, b    side
	target  float64
	compare func(a, b []byte) error
	listRSS bool // the list load whose peak RSS is held against the target
}

// Fleetgraph's and PostGraphile's selections of the same client data.
const (
	fleetgraphClient = `fragment C on Client { id uuid type label extraLabel tags createdAt lastSeenAt
  registrationKey { id registrationKey numRegistrationsLeft validFrom }
  clientGroups { id name }
  currentIspContract { id name uploadSpeed downloadSpeed monthlyPrice validFrom ispName } }`
	postgraphileClient = `fragment C on Client { id uuid type label extraLabel tags createdAt lastSeenAt
  registrationKeyByRegistrationKeyId { id registrationKey numRegistrationsLeft validFrom }
  clientGroupMembersByClientId { nodes { clientGroupByClientGroupId { id name } } }
  ispContractsByClientId(condition: {validUntil: null}) {
    nodes { id name uploadSpeed downloadSpeed monthlyPrice validFrom ispByIspId { name } } } }`

	fleetgraphOne   = `query One($id: ID!) { client(id: $id) { ...C } } ` + fleetgraphClient
	fleetgraphList  = `query List { clients { ...C } } ` + fleetgraphClient
	postgraphileOne = `query One($id: BigInt!) { clientById(id: $id) { ...C } } ` + postgraphileClient
	// Equality on valid_until null picks the current contract: see README.
	postgraphileList = `query List($owner: BigInt!) {
  allClients(condition: {dataOwnerId: $owner}, orderBy: ID_ASC) { nodes { ...C } } } ` + postgraphileClient
)

// setup is what the workloads need to know about the servers and data.
type setup struct {
	fleetgraph, postgraphile, handwritten string  // base URLs
	owners                                []owner // the 50, 500 and 2,000 client owners
	clientID                              int64   // a client of the largest owner
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
	pgl := func(q string, vars map[string]any) side {
		return side{name: "postgraphile", url: s.postgraphile + "/graphql", method: http.MethodPost, body: gqlBody(q, vars)}
	}
	ws := []workload{{name: "graphql client by id", a: fg(big, fleetgraphOne, map[string]any{"id": id}),
		b: pgl(postgraphileOne, map[string]any{"id": id}), target: 2.0, compare: compareGraphQL}}
	for _, o := range s.owners {
		ws = append(ws, workload{name: fmt.Sprintf("graphql %d clients", o.clients), a: fg(o, fleetgraphList, nil),
			b: pgl(postgraphileList, map[string]any{"owner": strconv.FormatInt(o.id, 10)}), target: 2.0,
			compare: compareGraphQL, listRSS: o == big})
	}
	rest := func(base, name, path string) side {
		return side{name: name, url: base + "/client_admin_api/v1" + path, method: http.MethodGet,
			headers: map[string]string{"X-API-KEY": big.key}}
	}
	return append(ws,
		workload{name: "rest GET /clients/{id}", a: rest(s.fleetgraph, "fleetgraph", "/clients/"+id),
			b: rest(s.handwritten, "handwritten", "/clients/"+id), target: 0.8, compare: compareBytes},
		workload{name: fmt.Sprintf("rest GET /clients (%d)", big.clients), a: rest(s.fleetgraph, "fleetgraph", "/clients"),
			b: rest(s.handwritten, "handwritten", "/clients"), target: 0.8, compare: compareBytes, listRSS: true})
}
