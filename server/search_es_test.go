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
	"sync"
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
	fake := &scriptedElasticsearch{answer: func(esRequest) (int, string) {
		return 200, `{"took":3,"timed_out":false,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},` +
			`"hits":{"total":{"value":1,"relation":"eq"},"max_score":1.0,"hits":[{"_index":"x","_id":"m1","_score":1.0,` +
			`"_source":{"id":"m1","type":"VideoMeasurement"}}]}}`
	}}
	srv := serverOnElasticsearch(t, e, fake)

	body := `{"body":{"query":{"term":{"type":"VideoMeasurement"}}},"index_scope":"video","size":5}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL+server.AdminBase+"/measurements/search", strings.NewReader(body))
	req.Header.Set("X-API-KEY", o.Key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, raw)
	}
	var env map[string]any
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatalf("body: %v: %s", err, raw)
	}
	hits, _ := env["hits"].(map[string]any)
	if list, _ := hits["hits"].([]any); len(list) != 1 {
		t.Errorf("envelope from Elasticsearch not passed on: %s", raw)
	}

	requests := fake.seen()
	if len(requests) != 1 {
		t.Fatalf("Elasticsearch got %d requests, want 1: %q", len(requests), requests)
	}
	got := requests[0]
	if wantPath := "/analytics-production-" + o.Slug + "-measurements-videomeasurement/_search"; got.Method != http.MethodPost || got.Path != wantPath {
		t.Errorf("request %s %s, want POST %s (the server picks the indices)", got.Method, got.Path, wantPath)
	}
	if !strings.Contains(got.Body, `"term":{"type":"VideoMeasurement"}`) || !strings.Contains(got.Body, `"size":5`) {
		t.Errorf("request body %q lacks the query or the merged size", got.Body)
	}

	// A body reaching for another index is refused before Elasticsearch sees it.
	bad := `{"body":{"query":{"terms":{"client_uuid":{"index":"analytics-production-other-measurements","id":"1","path":"x"}}}}}`
	req, _ = http.NewRequest(http.MethodPost, srv.URL+server.AdminBase+"/measurements/search", strings.NewReader(bad))
	req.Header.Set("X-API-KEY", o.Key)
	resp2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if n := len(fake.seen()); resp2.StatusCode != http.StatusBadRequest || n != 1 {
		t.Errorf("terms lookup: status %d and %d requests to Elasticsearch, want 400 and still 1", resp2.StatusCode, n)
	}
}

// scriptedElasticsearch records every request (method, path, parsed query,
// body) and answers it through answer.
type scriptedElasticsearch struct {
	mu       sync.Mutex
	requests []esRequest
	answer   func(r esRequest) (int, string)
}

type esRequest struct {
	Method, Path string
	Query        url.Values
	Body         string
}

func (f *scriptedElasticsearch) seen() []esRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]esRequest(nil), f.requests...)
}

func (f *scriptedElasticsearch) setAnswer(a func(r esRequest) (int, string)) {
	f.mu.Lock()
	f.answer = a
	f.mu.Unlock()
}

func (f *scriptedElasticsearch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Elastic-Product", "Elasticsearch")
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/" {
		_, _ = io.WriteString(w, `{"version":{"number":"8.19.0"}}`)
		return
	}
	body, _ := io.ReadAll(r.Body)
	req := esRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Body: string(body)}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	answer := f.answer
	f.mu.Unlock()
	status, out := answer(req)
	w.WriteHeader(status)
	_, _ = io.WriteString(w, out)
}

func sameJSON(t *testing.T, what, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%s: %q is not JSON", what, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s = %s, want %s", what, got, want)
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
	fake := &scriptedElasticsearch{answer: func(r esRequest) (int, string) {
		switch {
		case r.Method == http.MethodDelete:
			return 200, `{"succeeded":true,"num_freed":1}`
		case r.Path == "/_search/scroll" && strings.Contains(r.Body, `"es-1"`):
			return 200, page("es-2", `{"_index":"i","_id":"m2","_source":{"id":"m2"}}`)
		case r.Path == "/_search/scroll":
			return 200, page("es-3", "")
		}
		return 200, page("es-1", `{"_index":"i","_id":"m1","_source":{"id":"m1"}}`)
	}}
	srv := serverOnElasticsearch(t, e, fake)
	do := func(method, path, key, body string) (int, http.Header, string) {
		t.Helper()
		var rdr io.Reader
		if body != "" {
			rdr = strings.NewReader(body)
		}
		req, _ := http.NewRequest(method, srv.URL+path, rdr)
		req.Header.Set("X-API-KEY", key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(raw)
	}

	status, hdr, out := do(http.MethodPost, server.AdminBase+"/measurements/search", o.Key,
		`{"body":{"query":{"match_all":{}}},"size":1,"scroll":"1m"}`)
	if status != http.StatusOK || hdr.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("scroll: %d %s: %s", status, hdr.Get("Content-Type"), out)
	}
	if out != "{\"id\":\"m1\"}\n{\"id\":\"m2\"}\n" {
		t.Fatalf("scroll stream %q", out)
	}
	reqs := fake.seen()
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
	sameJSON(t, "first page body", first.Body, `{"query":{"match_all":{}},"size":1}`)
	for i, id := range []string{"es-1", "es-2"} {
		r := reqs[1+i]
		if r.Method != http.MethodPost || r.Path != "/_search/scroll" || len(r.Query) != 0 {
			t.Fatalf("scroll %d: %s %s?%v", i, r.Method, r.Path, r.Query)
		}
		sameJSON(t, "scroll body", r.Body, `{"scroll":"1m","scroll_id":"`+id+`"}`)
	}
	if r := reqs[3]; r.Method != http.MethodDelete || r.Path != "/_search/scroll" {
		t.Fatalf("clear: %s %s", r.Method, r.Path)
	}
	sameJSON(t, "clear body", reqs[3].Body, `{"scroll_id":["es-3"]}`)

	// ES|QL on a data owner without indices yet: Elasticsearch 8 says
	// "Unknown index", the answer is no rows.
	fake.setAnswer(func(esRequest) (int, string) {
		return 400, `{"error":{"root_cause":[{"type":"verification_exception","reason":"Found 1 problem\nline 1:1: Unknown index [analytics-production-` + o.Slug + `-*]"}],"type":"verification_exception","reason":"Found 1 problem\nline 1:1: Unknown index [analytics-production-` + o.Slug + `-*]"},"status":400}`
	})
	q := "FROM analytics-production-" + o.Slug + "* | LIMIT 5"
	status, _, out = do(http.MethodGet, server.ExportBase+"/esql?query="+url.QueryEscape(q), export, "")
	if status != http.StatusOK || strings.TrimSpace(out) != "[]" {
		t.Fatalf("esql without indices: %d %s", status, out)
	}
	reqs = fake.seen()
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
	sameJSON(t, "esql body", r.Body, string(body))

	// ENRICH: refused before Elasticsearch sees it.
	sent := len(fake.seen())
	status, _, out = do(http.MethodPost, server.ExportBase+"/esql", export,
		`{"query":"FROM analytics-production-`+o.Slug+`* | ENRICH p ON client_uuid"}`)
	if status != http.StatusBadRequest || !strings.Contains(out, "ENRICH is not supported") || len(fake.seen()) != sent {
		t.Fatalf("enrich: %d %s, %d requests", status, out, len(fake.seen())-sent)
	}

	// Elasticsearch's 400: our 400 with its reason.
	fake.setAnswer(func(esRequest) (int, string) {
		return 400, `{"error":{"root_cause":[{"type":"parsing_exception","reason":"unknown query [nope]"}],"type":"parsing_exception","reason":"unknown query [nope]"},"status":400}`
	})
	status, _, out = do(http.MethodPost, server.AdminBase+"/measurements/search", o.Key, `{"body":{"query":{"match_all":{}}}}`)
	if status != http.StatusBadRequest || !strings.Contains(out, "parsing_exception: unknown query [nope]") {
		t.Fatalf("es 400: %d %s", status, out)
	}
	// Its failures: a 503 that tells nothing of them (the client library
	// retries a 500 on its own first, and so do we answer after it).
	for _, esStatus := range []int{500, 503, 429} {
		fake.setAnswer(func(esRequest) (int, string) {
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
	fake.setAnswer(func(esRequest) (int, string) {
		return 401, `{"error":{"type":"security_exception","reason":"missing authentication credentials for user secret-user"},"status":401}`
	})
	status, _, out = do(http.MethodPost, server.AdminBase+"/measurements/search", o.Key, `{"body":{"query":{"match_all":{}}}}`)
	if status != http.StatusInternalServerError || strings.Contains(out, "secret-user") {
		t.Fatalf("es 401: %d %s", status, out)
	}
	// GraphQL carries the same classification.
	fake.setAnswer(func(esRequest) (int, string) { return 503, `{"error":"down","status":503}` })
	status, _, out = do(http.MethodPost, "/graphql", o.Key, `{"query":"{ measurementSearch(body: {}) }"}`)
	if status != http.StatusOK || !strings.Contains(out, `"code":"SERVICE_UNAVAILABLE"`) {
		t.Fatalf("graphql es 503: %d %s", status, out)
	}
}

// serverOnElasticsearch is the real server of e's database with the
// Elasticsearch backend, talking to the fake es.
func serverOnElasticsearch(t *testing.T, e *apitest.Env, es http.Handler) *httptest.Server {
	t.Helper()
	esSrv := httptest.NewServer(es)
	t.Cleanup(esSrv.Close)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	backend, err := esbackend.New(esSrv.URL, e.Store.Pool(), []byte("test secret for scroll ids"), log)
	if err != nil {
		t.Fatal(err)
	}
	h, err := server.New(&resolvers.Resolver{Store: e.Store, Sealer: e.Sealer, Logger: log, Search: backend})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
