package server_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
)

// connBenchQuery is a dashboard page of the fleet: 50 clients of a filter
// with their groups, registration key and current contract.
const connBenchQuery = `query($filter: ClientFilter, $after: String, $orderBy: ClientOrder) {
	clientsConnection(first: 50, after: $after, filter: $filter, orderBy: $orderBy) {
		%s pageInfo { hasNextPage endCursor }
		edges { cursor node { id uuid label tags lastSeenAt offline
			clientGroups { id name }
			registrationKey { id registrationKey capability { id name } }
			currentIspContract { id name downloadSpeed validFrom ispName } } } } }`

// BenchmarkClientsConnection100k pages through 100,000 clients (seedFleet:
// tags bench and site0..site6, each client in two of ten groups, all seen
// now) with filters, and reports the p50 and p95 of a page of 50 and the
// statements per page. Every page is a real HTTP GraphQL request.
func BenchmarkClientsConnection100k(b *testing.B) {
	e := apitest.Get(b)
	o := e.NewOwner(b, "connbench")
	const n = 100_000
	seedFleet(b, e, o.ID, n)
	for _, t := range []string{"clients", "client_group_members", "client_groups"} {
		if _, err := e.Store.Pool().Exec(context.Background(), `VACUUM ANALYZE `+t); err != nil {
			b.Fatal(err)
		}
	}
	var group int64
	if err := e.Store.Pool().QueryRow(context.Background(), `SELECT id FROM client_groups WHERE data_owner_id = $1 ORDER BY id LIMIT 1`,
		o.ID).Scan(&group); err != nil {
		b.Fatal(err)
	}
	// Beside the pages, what the machine's load makes of the least a
	// request costs (the caller's viewer: the key, no table), and the same
	// page of a data owner with only 50 clients.
	small := e.NewOwner(b, "connbench-small")
	seedFleet(b, e, small.ID, 50)
	for _, base := range []struct{ name, key, query string }{
		{"baseline: viewer", o.Key, `{ viewer { role } }`},
		{"baseline: page of 50 of 50 clients", small.Key, connBenchQueryWith(false)},
	} {
		b.Run(base.name, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if g := e.GraphQL(b, base.key, base.query, nil); len(g.Errors) > 0 {
					b.Fatalf("%.500s", g.Raw)
				}
				took = append(took, time.Since(t0))
			}
			reportLatencies(b, took)
		})
	}
	for _, bc := range []struct {
		name    string
		total   bool
		filter  map[string]any
		orderBy map[string]any
		deep    bool // start from a cursor half way through
	}{
		{name: "tag+online/first", filter: map[string]any{"tags": []string{"site3"}, "offline": false, "disabled": false}},
		{name: "tag+online/deep", filter: map[string]any{"tags": []string{"site3"}, "offline": false, "disabled": false}, deep: true},
		{name: "tag+online/totalCount", total: true, filter: map[string]any{"tags": []string{"site3"}, "offline": false, "disabled": false}},
		{name: "group+type/totalCount", total: true, filter: map[string]any{"groupId": group, "type": "probe"}},
		{name: "search/totalCount", total: true, filter: map[string]any{"search": "client 4242"}},
		{name: "search-uuid-part/totalCount", total: true, filter: map[string]any{"search": "4a7"}},
		{name: "label-order+tags/deep", filter: map[string]any{"tags": []string{"bench", "site1"}},
			orderBy: map[string]any{"field": "label", "direction": "desc"}, deep: true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			q := connBenchQueryWith(bc.total)
			vars := map[string]any{"filter": bc.filter, "orderBy": bc.orderBy}
			if bc.deep {
				vars["after"] = connCursorAt(b, e, o.Key, q, vars, 20)
			}
			var took []time.Duration
			start := e.Counter.Count()
			for b.Loop() {
				t0 := time.Now()
				g := e.GraphQL(b, o.Key, q, vars)
				took = append(took, time.Since(t0))
				if len(g.Errors) > 0 {
					b.Fatalf("page: %.500s", g.Raw)
				}
				if edges := g.Data["clientsConnection"].(map[string]any)["edges"].([]any); len(edges) == 0 {
					b.Fatalf("empty page: %.300s", g.Raw)
				}
			}
			b.ReportMetric(float64(e.Counter.Count()-start)/float64(b.N), "stmts/op")
			reportLatencies(b, took)
		})
	}
}

// reportLatencies reports the p50 and p95 of took.
func reportLatencies(b *testing.B, took []time.Duration) {
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "p95-ms")
}

func connBenchQueryWith(total bool) string {
	field := ""
	if total {
		field = "totalCount"
	}
	return fmt.Sprintf(connBenchQuery, field)
}

// connCursorAt pages forward pages times and answers the cursor there.
func connCursorAt(b *testing.B, e *apitest.Env, key, q string, vars map[string]any, pages int) any {
	b.Helper()
	v := map[string]any{"filter": vars["filter"], "orderBy": vars["orderBy"]}
	for range pages {
		g := e.GraphQL(b, key, q, v)
		if len(g.Errors) > 0 {
			b.Fatalf("paging: %.500s", g.Raw)
		}
		v["after"] = g.Data["clientsConnection"].(map[string]any)["pageInfo"].(map[string]any)["endCursor"]
	}
	return v["after"]
}
