package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/search/es"
	"github.com/fleetgraph/fleetgraph/search/pg"
	"github.com/fleetgraph/fleetgraph/server"
	"github.com/fleetgraph/fleetgraph/store"
)

func TestSearchBackendIsPostgreSQLByDefault(t *testing.T) {
	e := apitest.Get(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := e.NewOwner(t, "pgrollups")
	doc, err := store.ParseDocument("measurement", []byte(`{"id": "m-pg-1", "type": "VideoMeasurement",
		"client_uuid": "`+uuid.NewString()+`", "created_at": "2026-11-02T10:00:00Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.InsertDocuments(ctx, o.ID, []store.Document{doc}); err != nil {
		t.Fatal(err)
	}
	cfg := config{DataDir: t.TempDir()}
	b, wait, err := cfg.searchBackend(ctx, e.Store, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); wait() }() // the background work stops with ctx
	if _, ok := b.(*pg.Backend); !ok {
		t.Errorf("backend = %T, want *pg.Backend", b)
	}
}

func TestElasticsearchURLSelectsElasticsearchAndRunsTheIndexer(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "esconfig")
	doc, err := store.ParseDocument("measurement", []byte(`{"id": "m-es-1", "type": "VideoMeasurement",
		"client_uuid": "`+uuid.NewString()+`", "created_at": "2026-11-02T10:00:00Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.InsertDocuments(context.Background(), o.ID, []store.Document{doc}); err != nil {
		t.Fatal(err)
	}
	var bulkLines atomic.Value
	fake := apitest.NewFakeES(t, func(r apitest.ESRequest) (int, string) {
		if r.Path != "/_bulk" {
			return http.StatusNotFound, "404 page not found\n"
		}
		body := string(r.Body)
		if strings.Contains(body, "m-es-1") {
			bulkLines.Store(body)
		}
		n := strings.Count(strings.TrimSpace(body), "\n")/2 + 1
		items := strings.Repeat(`{"index":{"status":201}},`, n)
		return http.StatusOK, `{"errors":false,"items":[` + strings.TrimSuffix(items, ",") + `]}`
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := config{DataDir: t.TempDir(), ElasticURL: fake.URL}
	b, wait, err := cfg.searchBackend(ctx, e.Store, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); wait() }() // the background work stops with ctx
	if _, ok := b.(*es.Backend); !ok {
		t.Fatalf("backend = %T, want *es.Backend", b)
	}
	deadline := time.Now().Add(30 * time.Second)
	for bulkLines.Load() == nil && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	got, _ := bulkLines.Load().(string)
	if want := `"_index":"analytics-production-` + o.Slug + `-measurements-videomeasurement"`; !strings.Contains(got, want) {
		t.Errorf("the indexer did not send the document to its index: want %s in %q", want, got)
	}
}

func TestSearchTimeoutConfig(t *testing.T) {
	parse := func(args ...string) *config { t.Helper(); return parseConfig(t, args...) }
	t.Setenv("FLEETGRAPH_SEARCH_TIMEOUT", "")
	if d, err := (&config{}).searchTimeout(); err != nil || d != 30*time.Second {
		t.Errorf("unset: %s %v, want 30s", d, err)
	}
	if c := parse(); c.SearchTimeout != "30s" {
		t.Errorf("default %q, want 30s", c.SearchTimeout)
	}
	t.Setenv("FLEETGRAPH_SEARCH_TIMEOUT", "45s")
	if d, err := parse().searchTimeout(); err != nil || d != 45*time.Second {
		t.Errorf("env 45s: %s %v", d, err)
	}
	if d, err := parse("--search-timeout", "1m30s").searchTimeout(); err != nil || d != 90*time.Second {
		t.Errorf("flag over env: %s %v", d, err)
	}
	for _, bad := range []string{"30", "soon", "0s", "-5s", "3m"} {
		c := parse("--search-timeout", bad)
		if _, err := c.searchTimeout(); err == nil || !strings.Contains(err.Error(), "--search-timeout") {
			t.Errorf("%q: %v, want an error naming --search-timeout", bad, err)
		}
		if _, _, err := c.searchBackend(context.Background(), apitest.Get(t).Store, slog.New(slog.NewTextHandler(io.Discard, nil)), nil); err == nil {
			t.Errorf("%q: the backend was made", bad)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := parse("--search-timeout", "250ms", "--data-dir", t.TempDir())
	b, wait, err := c.searchBackend(ctx, apitest.Get(t).Store, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); wait() }()
	if pb, ok := b.(*pg.Backend); !ok || pb.Timeout != 250*time.Millisecond {
		t.Errorf("backend %T %+v, want *pg.Backend with Timeout 250ms", b, b)
	}
}

// Through the real server started by serve: a search past its time limit
// answers 503 SERVICE_UNAVAILABLE saying so, on REST and GraphQL.
func TestSearchTimeoutThroughTheServer(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "searchtimeout")
	addr, _ := startServe(t, e.DatabaseURL, "--search-timeout", "1ns")
	post := func(path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-KEY", o.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return resp.StatusCode, out
	}
	const want = "the search exceeded its time limit of 1ns; narrow it"
	status, out := post(server.AdminBase+"/measurements/search", `{"body":{"query":{"match_all":{}}}}`)
	if msg, _ := out["message"].(string); status != http.StatusServiceUnavailable || !strings.HasPrefix(msg, want) {
		t.Errorf("REST: %d %v, want 503 with %q", status, out, want)
	}
	// A bad request is still a 400, checked before anything runs.
	status, out = post(server.AdminBase+"/measurements/search", `{"body":{"query":{"match_all":{}},"timeout":"soon"}}`)
	if status != http.StatusBadRequest {
		t.Errorf("bad timeout: %d %v, want 400", status, out)
	}
	status, out = post("/graphql", `{"query":"{ measurementSearch(body: {}) }"}`)
	errs, _ := out["errors"].([]any)
	if status != http.StatusServiceUnavailable || len(errs) != 1 {
		t.Fatalf("GraphQL: %d %v, want 503", status, out)
	}
	e0 := errs[0].(map[string]any)
	if msg, _ := e0["message"].(string); !strings.HasPrefix(msg, want) || e0["extensions"].(map[string]any)["code"] != "SERVICE_UNAVAILABLE" {
		t.Errorf("GraphQL error %v", e0)
	}
}
