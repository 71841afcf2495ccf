package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// msrQuery reaches measurements, their client reports and their clients
// through client lists that are cousins (one per client group) and through
// the root client list, with page arguments from a variable and literals.
const msrQuery = `query($first: Int!) {
  clientGroups { name clients { uuid
    measurements(first: $first, filter: {type: "VideoMeasurement", since: "2025-01-01T00:00:00+02:00"}) {
      pageInfo { hasNextPage }
      edges { cursor node { id reports { id type } p1203ClientReport client { uuid clientGroups { name } } } } } } }
  clients { uuid measurements(first: 1, filter: {type: "NetworkMeasurement"}) {
    edges { node { id networkPerformanceReport client { uuid } } } } }
}`

// msrVideos is how many video measurements each client has; the query asks
// for one page of two.
const msrVideos, msrPage = 3, 2

// msrSeed makes a data owner with n clients in groups of ldrGroupSize, each
// with msrVideos video measurements carrying a P.1203 report and one network
// measurement carrying a performance report.
func msrSeed(tb testing.TB, e *apitest.Env, prefix string, n int) *apitest.Owner {
	tb.Helper()
	ctx := context.Background()
	o := e.NewOwner(tb, prefix)
	base := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	var docs []store.Document
	add := func(kind string, d map[string]any) {
		raw, _ := json.Marshal(d)
		doc, err := store.ParseDocument(kind, raw)
		if err != nil {
			tb.Fatalf("parse %v: %v", d["id"], err)
		}
		docs = append(docs, doc)
	}
	uuids := make([]string, n)
	for i := range n {
		uuids[i] = uuid.NewString()
		for j := range msrVideos + 1 {
			id, typ, report := fmt.Sprintf("%s-m-%d-%d", prefix, i, j), "VideoMeasurement", "P1203ClientReport"
			if j == msrVideos {
				typ, report = "NetworkMeasurement", "PerformanceClientReport"
			}
			at := base.Add(time.Duration(i*10+j) * time.Minute).Format(time.RFC3339)
			add(vocab.KindMeasurement, map[string]any{"id": id, "client_uuid": uuids[i], "type": typ, "created_at": at,
				"study": map[string]any{"subject": "youtube"}})
			add(vocab.KindClientReport, map[string]any{"id": id + "-r", "client_uuid": uuids[i], "type": report,
				"measurement_id": id, "created_at": at, "score": j})
		}
	}
	if res, err := e.Store.InsertDocuments(ctx, o.ID, docs); err != nil || len(res.Refused) > 0 || res.ClientsCreated != n {
		tb.Fatalf("insert: %v %+v", err, res)
	}
	cs, err := store.All(ctx, e.Store, store.ClientsByUUIDs(o.ID, uuids))
	if err != nil || len(cs) != n {
		tb.Fatalf("clients: %d, %v", len(cs), err)
	}
	for start := 0; start < n; start += ldrGroupSize {
		var ids []int64
		for _, c := range cs[start:min(start+ldrGroupSize, n)] {
			ids = append(ids, c.ID)
		}
		o.NewGroup(tb, fmt.Sprintf("Group %03d", start/ldrGroupSize), ids...)
	}
	return o
}

// msrRun runs msrQuery for o, checks every measurement, report and client
// it answers, and returns the statements it cost.
func msrRun(tb testing.TB, e *apitest.Env, o *apitest.Owner, n int) int64 {
	tb.Helper()
	before := e.Counter.Count()
	g := e.GraphQL(tb, o.Key, msrQuery, map[string]any{"first": msrPage})
	stmts := e.Counter.Count() - before
	if len(g.Errors) > 0 {
		tb.Fatalf("measurements query: %.500s", g.Raw)
	}
	groups, _ := g.Data["clientGroups"].([]any)
	seen := 0
	for _, gr := range groups {
		group := gr.(map[string]any)
		for _, c := range group["clients"].([]any) {
			c := c.(map[string]any)
			seen++
			conn := c["measurements"].(map[string]any)
			edges := conn["edges"].([]any)
			if len(edges) != msrPage || conn["pageInfo"].(map[string]any)["hasNextPage"] != true {
				tb.Fatalf("client %v: %d edges, pageInfo %v; want %d and a next page", c["uuid"], len(edges), conn["pageInfo"], msrPage)
			}
			for _, ed := range edges {
				node := ed.(map[string]any)["node"].(map[string]any)
				reports, _ := node["reports"].([]any)
				p1203, _ := node["p1203ClientReport"].(map[string]any)
				client, _ := node["client"].(map[string]any)
				if len(reports) != 1 || reports[0].(map[string]any)["id"] != fmt.Sprint(node["id"], "-r") ||
					p1203 == nil || p1203["measurement_id"] != node["id"] {
					tb.Fatalf("measurement %v: reports %v, p1203ClientReport %v", node["id"], reports, p1203)
				}
				if client == nil || client["uuid"] != c["uuid"] {
					tb.Fatalf("measurement %v: client %v, want %v", node["id"], client, c["uuid"])
				}
				cg, _ := client["clientGroups"].([]any)
				if len(cg) != 1 || cg[0].(map[string]any)["name"] != group["name"] {
					tb.Fatalf("measurement %v: client groups %v, want %v", node["id"], cg, group["name"])
				}
			}
		}
	}
	clients, _ := g.Data["clients"].([]any)
	if seen != n || len(clients) != n {
		tb.Fatalf("%d clients in groups and %d in the list, want %d", seen, len(clients), n)
	}
	for _, c := range clients {
		c := c.(map[string]any)
		edges := c["measurements"].(map[string]any)["edges"].([]any)
		if len(edges) != 1 {
			tb.Fatalf("client %v: %d network measurements, want 1", c["uuid"], len(edges))
		}
		node := edges[0].(map[string]any)["node"].(map[string]any)
		perf, _ := node["networkPerformanceReport"].(map[string]any)
		client, _ := node["client"].(map[string]any)
		if perf == nil || perf["measurement_id"] != node["id"] || client == nil || client["uuid"] != c["uuid"] {
			tb.Fatalf("network measurement %v: report %v, client %v", node["id"], perf, client)
		}
	}
	return stmts
}

// TestNestedMeasurementsQueryStatementCount: lookahead batches measurement
// pages, client reports and clients across cousin lists, so the query costs
// as many statements for 100 clients in 20 groups as for 5 in one.
func TestNestedMeasurementsQueryStatementCount(t *testing.T) {
	e := apitest.Get(t)
	const small, large, rounds, most = 5, 100, 3, 20
	x := msrSeed(t, e, "msr-x", small)
	y := msrSeed(t, e, "msr-y", large)
	ldrCompareCounts(t, rounds, most, small, large,
		func() int64 { return msrRun(t, e, x, small) }, func() int64 { return msrRun(t, e, y, large) })
}
