package server_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/resolvers"
	"github.com/fleetgraph/fleetgraph/search/es"
	"github.com/fleetgraph/fleetgraph/server"
)

// fakeElasticsearch records the searches it receives and answers each with
// a fixed envelope.
type fakeElasticsearch struct {
	mu       sync.Mutex
	requests []string // "METHOD path?query body"
}

func (f *fakeElasticsearch) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...)
}

func (f *fakeElasticsearch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Elastic-Product", "Elasticsearch")
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/" {
		_, _ = io.WriteString(w, `{"version":{"number":"8.19.0"}}`)
		return
	}
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests = append(f.requests, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery+" "+string(body))
	f.mu.Unlock()
	_, _ = io.WriteString(w, `{"took":3,"timed_out":false,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},`+
		`"hits":{"total":{"value":1,"relation":"eq"},"max_score":1.0,"hits":[{"_index":"x","_id":"m1","_score":1.0,`+
		`"_source":{"id":"m1","type":"VideoMeasurement"}}]}}`)
}

// The admin search endpoint runs the same request on Elasticsearch when it
// is configured: the server picks the indices, the body passes through.
func TestMeasurementSearchOnElasticsearch(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "onelastic")
	fake := &fakeElasticsearch{}
	esSrv := httptest.NewServer(fake)
	defer esSrv.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	backend, err := es.New(esSrv.URL, e.Store.Pool(), []byte("test secret for scroll ids"), log)
	if err != nil {
		t.Fatal(err)
	}
	h, err := server.New(&resolvers.Resolver{Store: e.Store, Sealer: e.Sealer, Logger: log, Search: backend})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

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
	wantPath := "POST /analytics-production-" + o.Slug + "-measurements-videomeasurement/_search?"
	if !strings.HasPrefix(got, wantPath) {
		t.Errorf("request %q, want it to start with %q (the server picks the indices)", got, wantPath)
	}
	if !strings.Contains(got, `"term":{"type":"VideoMeasurement"}`) || !strings.Contains(got, `"size":5`) {
		t.Errorf("request body %q lacks the query or the merged size", got)
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
