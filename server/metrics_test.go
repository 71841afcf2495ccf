package server_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/obs"
	"github.com/fleetgraph/fleetgraph/store"
)

// delta is how much a series moved between two scrapes.
func delta(before, after apitest.Metrics, name string, labels map[string]string) float64 {
	return after.Value(name, labels) - before.Value(name, labels)
}

// graphQLAt posts a GraphQL document with an operationName to the server at base.
func graphQLAt(t *testing.T, base, key, query, operationName string) *apitest.Response {
	t.Helper()
	body := map[string]any{"query": query}
	if operationName != "" {
		body["operationName"] = operationName
	}
	h := http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + key}}
	return apitest.Send(t, nil, apitest.Request(t, http.MethodPost, base+"/graphql", h, body))
}

// A scrape of /metrics through the real server counts the requests made
// between two scrapes by method, route pattern (never the raw path), GraphQL
// operation and status, and times them.
func TestMetricsCountRequestsByRoutePatternOperationAndStatus(t *testing.T) {
	e := apitest.Get(t)
	base := e.StartServer(t, slog.New(slog.NewTextHandler(io.Discard, nil)), nil) // a registry of its own
	o := e.NewOwner(t, "metrics")
	c := o.NewClient(t, store.NewClient{})

	before := apitest.Scrape(t, base+"/metrics")
	for range 2 {
		apitest.WantStatus(t, apitest.DoAt(t, base, http.MethodGet, fmt.Sprintf("/client_admin_api/v1/clients/%d", c.ID), o.Key, nil), 200)
	}
	apitest.WantStatus(t, apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/clients/987654321", o.Key, nil), 404)
	apitest.WantStatus(t, apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/clients", "", nil), 401)
	for range 3 {
		apitest.WantStatus(t, graphQLAt(t, base, o.Key, "query MetricsProbe { __typename }", ""), 200)
	}
	apitest.WantStatus(t, graphQLAt(t, base, o.Key, "{ __typename }", ""), 200)
	if r := graphQLAt(t, base, o.Key, "query NeverValid { noSuchField }", "NeverValid"); r.Status == 200 && !strings.Contains(string(r.Raw), "noSuchField") {
		t.Fatalf("an invalid document was answered: %s", r.Raw)
	}
	apitest.WantStatus(t, apitest.DoAt(t, base, http.MethodGet, "/no/such/path/42", "", nil), 404)
	after := apitest.Scrape(t, base+"/metrics")

	const reqs, dur = "fleetgraph_http_requests_total", "fleetgraph_http_request_duration_seconds"
	byID := "/client_admin_api/v1/clients/{id}"
	for _, tc := range []struct {
		labels map[string]string
		want   float64
	}{
		{map[string]string{"method": "GET", "route": byID, "status": "200", "operation": ""}, 2},
		{map[string]string{"method": "GET", "route": byID, "status": "404"}, 1},
		// refused by the API's authentication, before its own router chose a route
		{map[string]string{"method": "GET", "route": "/client_admin_api/v1/*", "status": "401"}, 1},
		{map[string]string{"method": "POST", "route": "/graphql", "operation": "MetricsProbe", "status": "200"}, 3},
		{map[string]string{"method": "POST", "route": "/graphql", "operation": obs.OpAnonymous, "status": "200"}, 1},
		{map[string]string{"method": "POST", "route": "/graphql", "operation": obs.OpUnknown}, 1},
		{map[string]string{"method": "GET", "route": "unmatched", "status": "404"}, 1},
	} {
		if got := delta(before, after, reqs, tc.labels); got != tc.want {
			t.Errorf("%s%v moved by %v, want %v", reqs, tc.labels, got, tc.want)
		}
		if got := delta(before, after, dur, tc.labels); got != tc.want {
			t.Errorf("%s%v counted %v, want %v", dur, tc.labels, got, tc.want)
		}
	}
	for _, route := range after.LabelValues(reqs, "route") {
		if strings.Contains(route, fmt.Sprintf("/clients/%d", c.ID)) || strings.Contains(route, "987654321") || strings.Contains(route, "no/such") {
			t.Errorf("route label %q holds a raw path", route)
		}
	}
	if ops := after.LabelValues(reqs, "operation"); slices.Contains(ops, "NeverValid") {
		t.Errorf("a refused document's operation name became a label: %v", ops)
	}
}

// The pool's statistics are read at scrape time.
func TestMetricsReportThePool(t *testing.T) {
	e := apitest.Get(t)
	base := e.StartServer(t, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	o := e.NewOwner(t, "metricspool")
	before := apitest.Scrape(t, base+"/metrics")
	apitest.WantStatus(t, apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/isps", o.Key, nil), 200)
	after := apitest.Scrape(t, base+"/metrics")
	if got, want := after.Value("fleetgraph_db_pool_max_connections", nil), float64(e.Store.Pool().Config().MaxConns); got != want {
		t.Errorf("max_connections %v, want %v", got, want)
	}
	if d := delta(before, after, "fleetgraph_db_pool_acquires_total", nil); d < 1 {
		t.Errorf("acquires_total moved by %v over a request that read the database", d)
	}
	total, idle, acquired := after.Value("fleetgraph_db_pool_total_connections", nil),
		after.Value("fleetgraph_db_pool_idle_connections", nil), after.Value("fleetgraph_db_pool_acquired_connections", nil)
	if total < 1 || idle+acquired > total {
		t.Errorf("total %v, idle %v, acquired %v", total, idle, acquired)
	}
	for _, name := range []string{"fleetgraph_db_pool_empty_acquires_total", "fleetgraph_db_pool_empty_acquire_wait_seconds_total",
		"fleetgraph_db_pool_acquire_seconds_total", "fleetgraph_db_pool_canceled_acquires_total", "go_goroutines", "process_resident_memory_bytes"} {
		if after[name] == nil {
			t.Errorf("%s is missing", name)
		}
	}
}

// Searches are timed by API, kind and outcome.
func TestMetricsTimeSearches(t *testing.T) {
	e := apitest.Get(t)
	base := e.StartServer(t, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	o := e.NewOwner(t, "metricssearch")
	exportKey, _ := o.NewKey(t, apitest.KeyOpts{Kind: auth.KindExport})
	all := map[string]any{"query": map[string]any{"match_all": map[string]any{}}}

	before := apitest.Scrape(t, base+"/metrics")
	apitest.WantStatus(t, apitest.DoAt(t, base, http.MethodPost, "/client_admin_api/v1/measurements/search", o.Key, map[string]any{"body": all}), 200)
	apitest.WantStatus(t, apitest.DoAt(t, base, http.MethodPost, "/export_api/v1/search", exportKey, map[string]any{"body": all}), 200)
	esql := "FROM analytics-production-" + o.Slug + "-measurements | LIMIT 1"
	apitest.WantStatus(t, apitest.DoAt(t, base, http.MethodGet, "/export_api/v1/esql?query="+url.QueryEscape(esql), exportKey, nil), 200)
	apitest.WantStatus(t, graphQLAt(t, base, o.Key, `query S { anomalyEventSearch(body: {query: {match_all: {}}}) }`, ""), 200)
	after := apitest.Scrape(t, base+"/metrics")

	const name = "fleetgraph_search_duration_seconds"
	for _, l := range []map[string]string{
		{"api": "admin", "kind": "dsl", "index": "measurement", "outcome": "ok"},
		{"api": "export", "kind": "dsl", "index": "measurement", "outcome": "ok"},
		{"api": "export", "kind": "esql", "outcome": "ok"},
		{"api": "graphql", "kind": "dsl", "index": "anomaly_event", "outcome": "ok"},
	} {
		if d := delta(before, after, name, l); d != 1 {
			t.Errorf("%s%v moved by %v, want 1", name, l, d)
		}
	}
}

// FLEETGRAPH_METRICS_ADDR's default serves /metrics on the API's own
// address without a key; the answer names no data owner.
func TestMetricsNeedNoKeyAndNameNoDataOwner(t *testing.T) {
	e := apitest.Get(t)
	base := e.StartServer(t, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	o := e.NewOwner(t, "metricsnames")
	apitest.WantStatus(t, apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/isps", o.Key, nil), 200)
	r := apitest.DoAt(t, base, http.MethodGet, "/metrics", "", nil)
	apitest.WantStatus(t, r, 200)
	if strings.Contains(string(r.Raw), o.Slug) || strings.Contains(string(r.Raw), o.Key) {
		t.Errorf("/metrics names a data owner or a key")
	}
}
