package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/bench/apidata"
)

// BenchmarkAPI runs bench/api.sh's workloads on fleetgraph alone, one
// request at a time over the real HTTP server and PostgreSQL, on the same
// data set (apidata.Seed) with the same documents: the four GraphQL
// documents (one client by id; all clients of owners of 50, 500 and 2,000)
// and the two REST routes. Besides time per request it reports allocations
// per request (of the whole test process: server and the client reading the
// answer), statements, round trips and CPU per request, so that a
// regression shows in review:
//
//	go test ./server -run '^$' -bench BenchmarkAPI -benchmem
func BenchmarkAPI(b *testing.B) {
	e := apitest.Get(b)
	owners := map[int]*apitest.Owner{}
	conn, err := e.Store.Pool().Acquire(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{50, 500, 2000} {
		o := e.NewOwner(b, fmt.Sprintf("api%d", n))
		if err := apidata.Seed(context.Background(), conn.Conn(), o.Slug, n); err != nil {
			b.Fatal(err)
		}
		owners[n] = o
	}
	conn.Release()
	analyze(b, e)
	big := owners[2000]
	id := firstClientID(b, e, big.Key)
	graphql := func(o *apitest.Owner, doc string, vars map[string]any) func(c *http.Client) (int, error) {
		body, err := json.Marshal(map[string]any{"query": doc, "variables": vars})
		if err != nil {
			b.Fatal(err)
		}
		return func(c *http.Client) (int, error) {
			req, _ := http.NewRequest(http.MethodPost, e.URL+"/graphql", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-API-KEY", o.Key)
			return drain(c.Do(req))
		}
	}
	rest := func(path string) func(c *http.Client) (int, error) {
		return func(c *http.Client) (int, error) {
			req, _ := http.NewRequest(http.MethodGet, e.URL+"/client_admin_api/v1"+path, nil)
			req.Header.Set("X-API-KEY", big.Key)
			return drain(c.Do(req))
		}
	}
	workloads := []struct {
		name string
		do   func(c *http.Client) (int, error)
	}{
		{"graphql-client-by-id", graphql(big, apidata.OneClient, map[string]any{"id": fmt.Sprint(id)})},
		{"graphql-clients-50", graphql(owners[50], apidata.AllClients, nil)},
		{"graphql-clients-500", graphql(owners[500], apidata.AllClients, nil)},
		{"graphql-clients-2000", graphql(big, apidata.AllClients, nil)},
		{"rest-client-by-id", rest(fmt.Sprintf("/clients/%d", id))},
		{"rest-clients-2000", rest("/clients")},
	}
	for _, w := range workloads {
		b.Run(w.name, func(b *testing.B) {
			c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
			if status, err := w.do(c); err != nil || status != http.StatusOK {
				b.Fatalf("status %d: %v", status, err)
			}
			b.ReportAllocs()
			defer reportStatements(b, e)()
			for b.Loop() {
				if status, err := w.do(c); err != nil || status != http.StatusOK {
					b.Fatalf("status %d: %v", status, err)
				}
			}
		})
	}
}
