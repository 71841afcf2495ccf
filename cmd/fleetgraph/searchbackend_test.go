package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/search/es"
	"github.com/fleetgraph/fleetgraph/search/pg"
	"github.com/fleetgraph/fleetgraph/store"
)

func TestSearchBackendIsPostgreSQLByDefault(t *testing.T) {
	e := apitest.Get(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := e.NewOwner(t, "pgrollups")
	doc, err := store.ParseDocument("measurement", []byte(`{"id": "m-pg-1", "type": "VideoMeasurement",
		"client_uuid": "7d1c1c8e-4f7e-4d43-9d0a-3c5f0f5d7a12", "created_at": "2026-11-02T10:00:00Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.InsertDocuments(ctx, o.ID, []store.Document{doc}); err != nil {
		t.Fatal(err)
	}
	cfg := config{DataDir: t.TempDir()}
	b, err := cfg.searchBackend(ctx, e.Store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.(*pg.Backend); !ok {
		t.Errorf("backend = %T, want *pg.Backend", b)
	}

	// Its rollups are refreshed in the background.
	waitRolledUp(t, e, o.ID)
}

// waitRolledUp waits for the background refresher to roll up the one day
// of the data owner's documents.
func waitRolledUp(t *testing.T, e *apitest.Env, ownerID int64) {
	t.Helper()
	for deadline := time.Now().Add(3 * rollupEvery); ; time.Sleep(100 * time.Millisecond) {
		var days int
		err := e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM rollup_days WHERE data_owner_id = $1`,
			ownerID).Scan(&days)
		if err != nil {
			t.Fatal(err)
		}
		if days == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the document's day was not rolled up within %s", 3*rollupEvery)
		}
	}
}

func TestElasticsearchURLSelectsElasticsearchAndRunsTheIndexer(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "esconfig")
	doc, err := store.ParseDocument("measurement", []byte(`{"id": "m-es-1", "type": "VideoMeasurement",
		"client_uuid": "7d1c1c8e-4f7e-4d43-9d0a-3c5f0f5d7a11", "created_at": "2026-11-02T10:00:00Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.InsertDocuments(context.Background(), o.ID, []store.Document{doc}); err != nil {
		t.Fatal(err)
	}
	var bulkLines atomic.Value
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/":
			_, _ = io.WriteString(w, `{"version":{"number":"8.19.0"}}`)
		case r.URL.Path == "/_bulk":
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), "m-es-1") {
				bulkLines.Store(string(body))
			}
			n := strings.Count(strings.TrimSpace(string(body)), "\n")/2 + 1
			items := strings.Repeat(`{"index":{"status":201}},`, n)
			_, _ = io.WriteString(w, `{"errors":false,"items":[`+strings.TrimSuffix(items, ",")+`]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer fake.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := config{DataDir: t.TempDir(), ElasticURL: fake.URL}
	b, err := cfg.searchBackend(ctx, e.Store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
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
	// The rollups stay current too, for a restart without Elasticsearch.
	waitRolledUp(t, e, o.ID)
}
