package server_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/resolvers"
	"github.com/fleetgraph/fleetgraph/search"
	esbackend "github.com/fleetgraph/fleetgraph/search/es"
	"github.com/fleetgraph/fleetgraph/server"
)

// The admin search endpoint runs the same request on Elasticsearch when it
// is configured: the server picks the indices, the body passes through.
func TestMeasurementSearchOnElasticsearch(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "onelastic")
	fake := apitest.NewFakeES(t, func(apitest.ESRequest) (int, string) {
		return 200, `{"took":3,"timed_out":false,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},` +
			`"hits":{"total":{"value":1,"relation":"eq"},"max_score":1.0,"hits":[{"_index":"x","_id":"m1","_score":1.0,` +
			`"_source":{"id":"m1","type":"VideoMeasurement"}}]}}`
	})
	srv := serverOnElasticsearch(t, e, fake)

	body := `{"body":{"query":{"term":{"type":"VideoMeasurement"}}},"index_scope":"video","size":5}`
	r := apitest.DoAt(t, srv.URL, http.MethodPost, server.AdminBase+"/measurements/search", o.Key, body)
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Raw)
	}
	hits, _ := r.Obj(t)["hits"].(map[string]any)
	if list, _ := hits["hits"].([]any); len(list) != 1 {
		t.Errorf("envelope from Elasticsearch not passed on: %s", r.Raw)
	}

	requests := fake.Requests()
	if len(requests) != 1 {
		t.Fatalf("Elasticsearch got %d requests, want 1: %q", len(requests), requests)
	}
	got := requests[0]
	if wantPath := "/analytics-production-" + o.Slug + "-measurements-videomeasurement/_search"; got.Method != http.MethodPost || got.Path != wantPath {
		t.Errorf("request %s %s, want POST %s (the server picks the indices)", got.Method, got.Path, wantPath)
	}
	if !strings.Contains(string(got.Body), `"term":{"type":"VideoMeasurement"}`) || !strings.Contains(string(got.Body), `"size":5`) {
		t.Errorf("request body %q lacks the query or the merged size", got.Body)
	}

	// A body reaching for another index is refused before Elasticsearch sees it.
	bad := `{"body":{"query":{"terms":{"client_uuid":{"index":"analytics-production-other-measurements","id":"1","path":"x"}}}}}`
	r = apitest.DoAt(t, srv.URL, http.MethodPost, server.AdminBase+"/measurements/search", o.Key, bad)
	if n := len(fake.Requests()); r.Status != http.StatusBadRequest || n != 1 {
		t.Errorf("terms lookup: status %d and %d requests to Elasticsearch, want 400 and still 1", r.Status, n)
	}
}

// A scroll through the REST API on Elasticsearch: the first page from the
// server-chosen indices with scroll=<keep-alive>, the next ones from
// /_search/scroll with Elasticsearch's own scroll ids (never seen by the
// client), and the search context cleared after the last page. ES|QL goes
// to /_query narrowed to the data owner; Elasticsearch's errors become a
// 400 naming the cause, or a 500 without details.
func TestScrollAndESQLOnElasticsearch(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "esscroll")
	export, _ := o.NewKey(t, apitest.KeyOpts{Kind: auth.KindExport})
	page := func(id, hits string) string {
		return `{"_scroll_id":"` + id + `","took":1,"timed_out":false,"hits":{"total":{"value":2,"relation":"eq"},"hits":[` + hits + `]}}`
	}
	fake := apitest.NewFakeES(t, func(r apitest.ESRequest) (int, string) {
		switch {
		case r.Method == http.MethodDelete:
			return 200, `{"succeeded":true,"num_freed":1}`
		case r.Path == "/_search/scroll" && strings.Contains(string(r.Body), `"es-1"`):
			return 200, page("es-2", `{"_index":"i","_id":"m2","_source":{"id":"m2"}}`)
		case r.Path == "/_search/scroll":
			return 200, page("es-3", "")
		}
		return 200, page("es-1", `{"_index":"i","_id":"m1","_source":{"id":"m1"}}`)
	})
	srv := serverOnElasticsearch(t, e, fake)
	do := func(method, path, key, body string) (int, http.Header, string) {
		t.Helper()
		var b any
		if body != "" {
			b = body
		}
		r := apitest.DoAt(t, srv.URL, method, path, key, b)
		return r.Status, r.Header, string(r.Raw)
	}

	status, hdr, out := do(http.MethodPost, server.AdminBase+"/measurements/search", o.Key,
		`{"body":{"query":{"match_all":{}}},"size":1,"scroll":"1m"}`)
	if status != http.StatusOK || hdr.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("scroll: %d %s: %s", status, hdr.Get("Content-Type"), out)
	}
	if out != "{\"id\":\"m1\"}\n{\"id\":\"m2\"}\n" {
		t.Fatalf("scroll stream %q", out)
	}
	reqs := fake.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests to Elasticsearch, want 4: %v", len(reqs), reqs)
	}
	first := reqs[0]
	if first.Method != http.MethodPost || first.Path != "/analytics-production-"+o.Slug+"-measurements*/_search" {
		t.Fatalf("first page %s %s", first.Method, first.Path)
	}
	if want := (url.Values{"scroll": {"60000ms"}, "ignore_unavailable": {"true"}, "allow_no_indices": {"true"}}); !reflect.DeepEqual(first.Query, want) {
		t.Fatalf("first page query %v, want %v", first.Query, want)
	}
	apitest.SameJSON(t, "first page body", first.Body, `{"query":{"match_all":{}},"size":1}`)
	for i, id := range []string{"es-1", "es-2"} {
		r := reqs[1+i]
		if r.Method != http.MethodPost || r.Path != "/_search/scroll" || len(r.Query) != 0 {
			t.Fatalf("scroll %d: %s %s?%v", i, r.Method, r.Path, r.Query)
		}
		apitest.SameJSON(t, "scroll body", r.Body, `{"scroll":"1m","scroll_id":"`+id+`"}`)
	}
	if r := reqs[3]; r.Method != http.MethodDelete || r.Path != "/_search/scroll" {
		t.Fatalf("clear: %s %s", r.Method, r.Path)
	}
	apitest.SameJSON(t, "clear body", reqs[3].Body, `{"scroll_id":["es-3"]}`)

	// ES|QL on a data owner without indices yet: Elasticsearch 8 says
	// "Unknown index", the answer is no rows.
	fake.SetAnswer(func(apitest.ESRequest) (int, string) {
		return 400, `{"error":{"root_cause":[{"type":"verification_exception","reason":"Found 1 problem\nline 1:1: Unknown index [analytics-production-` + o.Slug + `-*]"}],"type":"verification_exception","reason":"Found 1 problem\nline 1:1: Unknown index [analytics-production-` + o.Slug + `-*]"},"status":400}`
	})
	q := "FROM analytics-production-" + o.Slug + "* | LIMIT 5"
	status, _, out = do(http.MethodGet, server.ExportBase+"/esql?query="+url.QueryEscape(q), export, "")
	if status != http.StatusOK || strings.TrimSpace(out) != "[]" {
		t.Fatalf("esql without indices: %d %s", status, out)
	}
	reqs = fake.Requests()
	r := reqs[len(reqs)-1]
	if r.Method != http.MethodPost || r.Path != "/_query" || r.Query.Get("format") != "json" {
		t.Fatalf("esql request %s %s?%v", r.Method, r.Path, r.Query)
	}
	// Narrowed to the data owner (by search.ESQLForElasticsearch).
	narrowed := search.ESQLForElasticsearch(q, o.Slug)
	if !strings.HasPrefix(narrowed, "FROM analytics-production-"+o.Slug+"-*") {
		t.Fatalf("narrowed query %q", narrowed)
	}
	body, _ := json.Marshal(map[string]string{"query": narrowed})
	apitest.SameJSON(t, "esql body", r.Body, string(body))

	// ENRICH: refused before Elasticsearch sees it.
	sent := len(fake.Requests())
	status, _, out = do(http.MethodPost, server.ExportBase+"/esql", export,
		`{"query":"FROM analytics-production-`+o.Slug+`* | ENRICH p ON client_uuid"}`)
	if status != http.StatusBadRequest || !strings.Contains(out, "ENRICH is not supported") || len(fake.Requests()) != sent {
		t.Fatalf("enrich: %d %s, %d requests", status, out, len(fake.Requests())-sent)
	}

	// Elasticsearch's 400: our 400 with its reason.
	fake.SetAnswer(func(apitest.ESRequest) (int, string) {
		return 400, `{"error":{"root_cause":[{"type":"parsing_exception","reason":"unknown query [nope]"}],"type":"parsing_exception","reason":"unknown query [nope]"},"status":400}`
	})
	status, _, out = do(http.MethodPost, server.AdminBase+"/measurements/search", o.Key, `{"body":{"query":{"match_all":{}}}}`)
	if status != http.StatusBadRequest || !strings.Contains(out, "parsing_exception: unknown query [nope]") {
		t.Fatalf("es 400: %d %s", status, out)
	}
	// Its failures: a 503 that tells nothing of them (the client library
	// retries a 500 on its own first, and so do we answer after it).
	for _, esStatus := range []int{500, 503, 429} {
		fake.SetAnswer(func(apitest.ESRequest) (int, string) {
			return esStatus, `{"error":{"type":"secret_internal_exception","reason":"node-7 at 10.0.0.7 failed"},"status":500}`
		})
		status, _, out = do(http.MethodPost, server.AdminBase+"/measurements/search", o.Key, `{"body":{"query":{"match_all":{}}}}`)
		if status != http.StatusServiceUnavailable || strings.Contains(out, "node-7") || strings.Contains(out, "secret_internal") ||
			!strings.Contains(out, "try again later") {
			t.Fatalf("es %d: %d %s", esStatus, status, out)
		}
	}
	// Credentials the server was given that Elasticsearch refuses: the
	// server's own fault, a 500 that tells nothing of them.
	fake.SetAnswer(func(apitest.ESRequest) (int, string) {
		return 401, `{"error":{"type":"security_exception","reason":"missing authentication credentials for user secret-user"},"status":401}`
	})
	status, _, out = do(http.MethodPost, server.AdminBase+"/measurements/search", o.Key, `{"body":{"query":{"match_all":{}}}}`)
	if status != http.StatusInternalServerError || strings.Contains(out, "secret-user") {
		t.Fatalf("es 401: %d %s", status, out)
	}
	// GraphQL carries the same classification.
	fake.SetAnswer(func(apitest.ESRequest) (int, string) { return 503, `{"error":"down","status":503}` })
	status, _, out = do(http.MethodPost, "/graphql", o.Key, `{"query":"{ measurementSearch(body: {}) }"}`)
	if status != http.StatusServiceUnavailable || !strings.Contains(out, `"code":"SERVICE_UNAVAILABLE"`) {
		t.Fatalf("graphql es 503: %d %s", status, out)
	}
}

// serverOnElasticsearch is the real server of e's database with the
// Elasticsearch backend, talking to the fake es.
func serverOnElasticsearch(t *testing.T, e *apitest.Env, es *apitest.FakeES) *httptest.Server {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	backend, err := esbackend.New(es.URL, e.Store.Pool(), []byte("test secret for scroll ids"), log)
	if err != nil {
		t.Fatal(err)
	}
	h, err := server.New(&resolvers.Resolver{Store: e.Store, Sealer: e.Sealer, Logger: log, Search: backend, OnPanic: apitest.OnPanic})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
