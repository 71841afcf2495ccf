package es

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/store/testdb"
)

// testPool makes a fresh migrated database on the test PostgreSQL and drops
// it after the test.
func testPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	db, st, err := testdb.Create(context.Background(), "fleetgraph_test_es", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		st.Close()
		db.Drop()
	})
	return st.Pool()
}

func addOwner(t *testing.T, pool *pgxpool.Pool, slug string) int64 {
	t.Helper()
	var id int64
	if err := pool.QueryRow(context.Background(), `INSERT INTO data_owners (slug, name) VALUES ($1, $1) RETURNING id`, slug).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// addDoc inserts (or updates) a document and returns its version.
func addDoc(t *testing.T, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, owner int64, kind, docID string, typ *string, doc string) int64 {
	t.Helper()
	var v int64
	err := q.QueryRow(context.Background(), `
		INSERT INTO documents (data_owner_id, kind, doc_id, type, created_at, doc)
		VALUES ($1, $2, $3, $4, coalesce((SELECT created_at FROM documents
			WHERE data_owner_id = $1 AND kind = $2 AND doc_id = $3), now()), $5)
		ON CONFLICT (data_owner_id, kind, doc_id, created_at) DO UPDATE SET doc = EXCLUDED.doc, version = next_document_version()
		RETURNING version`, owner, kind, docID, typ, doc).Scan(&v)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func cursor(t *testing.T, pool *pgxpool.Pool) int64 {
	t.Helper()
	var p int64
	err := pool.QueryRow(context.Background(), `SELECT position FROM worker_cursors WHERE name = 'elasticsearch'`).Scan(&p)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// bulkLine is one action of a bulk request with its source ("" for a
// delete, which has none).
type bulkLine struct{ action, source string }

// bulkOp is the operation of a bulk action line: index or delete.
func bulkOp(t *testing.T, line string) string {
	t.Helper()
	var a map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &a); err != nil || len(a) != 1 {
		t.Fatalf("bulk action %q", line)
	}
	for op := range a {
		return op
	}
	return ""
}

func parseBulk(t *testing.T, r apitest.ESRequest) []bulkLine {
	t.Helper()
	if r.Method != http.MethodPost || r.Path != "/_bulk" || len(r.Query) != 0 {
		t.Fatalf("bulk request %s %s?%v", r.Method, r.Path, r.Query)
	}
	if r.ContentType != "application/x-ndjson" {
		t.Fatalf("bulk content type %q", r.ContentType)
	}
	if !bytes.HasSuffix(r.Body, []byte("\n")) {
		t.Fatal("bulk body does not end with a newline")
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(r.Body))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	var out []bulkLine
	for i := 0; i < len(lines); i++ {
		switch op := bulkOp(t, lines[i]); op {
		case "delete":
			out = append(out, bulkLine{lines[i], ""})
		case "index":
			if i+1 == len(lines) {
				t.Fatalf("index action without source: %q", r.Body)
			}
			out = append(out, bulkLine{lines[i], lines[i+1]})
			i++
		default:
			t.Fatalf("unexpected bulk operation %q", op)
		}
	}
	return out
}

// bulkAnswer answers each action of a bulk request with the given status
// (201 for index, 200 for delete when not given), keyed by its operation.
func bulkAnswer(statuses ...int) func(r apitest.ESRequest) (int, string) {
	return func(r apitest.ESRequest) (int, string) {
		var ops []string
		sc := bufio.NewScanner(bytes.NewReader(r.Body))
		for sc.Scan() {
			var a map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &a) != nil {
				continue
			}
			if _, ok := a["delete"]; ok {
				ops = append(ops, "delete")
			} else if _, ok := a["index"]; ok && len(a) == 1 {
				ops = append(ops, "index")
				sc.Scan() // its source
			}
		}
		items := make([]string, len(ops))
		errs := false
		for i, op := range ops {
			st := 201
			if op == "delete" {
				st = 200
			}
			if i < len(statuses) {
				st = statuses[i]
			}
			switch {
			case op == "delete" && st == 404:
				items[i] = fmt.Sprintf(`{"delete":{"_index":"x","_id":"%d","_version":1,"result":"not_found","status":404}}`, i)
			case st >= 300:
				errs = true
				items[i] = fmt.Sprintf(`{"%s":{"_index":"x","_id":"%d","status":%d,"error":{"type":"mapper_parsing_exception","reason":"failed to parse"}}}`, op, i, st)
			case op == "delete":
				items[i] = fmt.Sprintf(`{"delete":{"_index":"x","_id":"%d","_version":2,"result":"deleted","status":%d}}`, i, st)
			default:
				items[i] = fmt.Sprintf(`{"index":{"_index":"x","_id":"%d","_version":1,"result":"created","status":%d}}`, i, st)
			}
		}
		return 200, fmt.Sprintf(`{"took":1,"errors":%v,"items":[%s]}`, errs, strings.Join(items, ","))
	}
}

func newTestIndexer(t *testing.T, f *apitest.FakeES, pool *pgxpool.Pool, batch int) *Indexer {
	t.Helper()
	b := newBackend(t, f, "secret")
	ix := NewIndexer(b.Client(), pool, nil)
	ix.BatchSize = batch
	ix.Settle = 0
	// The tests of the documents stream count its requests exactly; the
	// lookup indices have tests of their own (lookup_test.go).
	ix.LookupInterval = -1
	t.Cleanup(ix.Close)
	return ix
}

// runOnce calls RunOnce until it does something: transactions of other
// tests on the same PostgreSQL server hold the horizon back for a while.
func runOnce(t *testing.T, ix *Indexer) (int, error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := ix.RunOnce(context.Background())
		if n > 0 || err != nil || time.Now().After(deadline) {
			return n, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func action(index, id string) string {
	return `{"index":{"_id":"` + id + `","_index":"` + index + `"}}`
}

// deletion is a bulk delete of a document (no source line).
func deletion(index, id string) bulkLine {
	return bulkLine{`{"delete":{"_id":"` + id + `","_index":"` + index + `"}}`, ""}
}

// actionVersion splits a bulk action line into the action without its
// version (as action and deletion write it) and the external version it
// carries, failing the test when it carries none.
func actionVersion(t *testing.T, line string) (string, int64) {
	t.Helper()
	var a map[string]map[string]any
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&a); err != nil || len(a) != 1 {
		t.Fatalf("bulk action %q", line)
	}
	for op, meta := range a {
		n, ok := meta["version"].(json.Number)
		v, err := n.Int64()
		if !ok || err != nil || v <= 0 || meta["version_type"] != "external" {
			t.Fatalf("bulk action %s without an external version", line)
		}
		delete(meta, "version")
		delete(meta, "version_type")
		out, _ := json.Marshal(map[string]any{op: meta})
		return string(out), v
	}
	return "", 0
}

func wantLines(t *testing.T, got []bulkLine, want []bulkLine) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("bulk lines = %q, want %q", got, want)
	}
	for i := range got {
		if a, _ := actionVersion(t, got[i].action); a != want[i].action {
			t.Fatalf("action %d = %s, want %s (and an external version)", i, got[i].action, want[i].action)
		}
		if want[i].source == "" {
			if got[i].source != "" {
				t.Fatalf("action %d has source %s", i, got[i].source)
			}
			continue
		}
		apitest.SameJSON(t, "body", []byte(got[i].source), want[i].source)
		if strings.Contains(got[i].source, "\n") {
			t.Fatalf("source %d spans lines", i)
		}
	}
}

func TestIndexerBulkAndCursor(t *testing.T) {
	pool := testPool(t)
	f := apitest.NewFakeES(t, bulkAnswer())
	acme, beta := addOwner(t, pool, "acme"), addOwner(t, pool, "beta_co")
	addDoc(t, pool, acme, "measurement", "m1", apitest.Ptr("VideoMeasurement"), `{"id":"m1","type":"VideoMeasurement","note":"a\nb"}`)
	v2 := addDoc(t, pool, acme, "anomaly_event", "a1", nil, `{"id":"a1","severity":"warning"}`)
	v3 := addDoc(t, pool, beta, "measurement", "m2", apitest.Ptr("SpeedMeasurement"), `{"id":"m2","type":"SpeedMeasurement"}`)
	ix := newTestIndexer(t, f, pool, 2)

	n, err := runOnce(t, ix)
	if err != nil || n != 2 {
		t.Fatalf("first batch: %d, %v", n, err)
	}
	reqs := f.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	wantLines(t, parseBulk(t, reqs[0]), []bulkLine{
		{action("analytics-production-acme-measurements-videomeasurement", "m1"), `{"id":"m1","type":"VideoMeasurement","note":"a\nb"}`},
		{action("analytics-production-acme-anomaly_events", "a1"), `{"id":"a1","severity":"warning"}`},
	})
	if c := cursor(t, pool); c != v2 {
		t.Fatalf("cursor = %d, want %d", c, v2)
	}

	n, err = runOnce(t, ix)
	if err != nil || n != 1 {
		t.Fatalf("second batch: %d, %v", n, err)
	}
	wantLines(t, parseBulk(t, f.Requests()[1]), []bulkLine{
		{action("analytics-production-beta_co-measurements-speedmeasurement", "m2"), `{"id":"m2","type":"SpeedMeasurement"}`},
	})
	if c := cursor(t, pool); c < v3 {
		t.Fatalf("cursor = %d, want >= %d", c, v3)
	}

	for range 3 {
		if n, err := ix.RunOnce(context.Background()); n != 0 || err != nil {
			t.Fatalf("nothing left: %d, %v", n, err)
		}
	}
	if len(f.Requests()) != 2 {
		t.Fatal("a request was sent with nothing to index")
	}

	// An update gives the document a new version: it is sent again.
	addDoc(t, pool, acme, "anomaly_event", "a1", nil, `{"id":"a1","severity":"critical"}`)
	if n, err := runOnce(t, ix); err != nil || n != 1 {
		t.Fatalf("after update: %d, %v", n, err)
	}
	wantLines(t, parseBulk(t, f.Requests()[2]), []bulkLine{
		{action("analytics-production-acme-anomaly_events", "a1"), `{"id":"a1","severity":"critical"}`},
	})
}

func TestIndexerRetriesFailedBatches(t *testing.T) {
	pool := testPool(t)
	f := apitest.NewFakeES(t, func(apitest.ESRequest) (int, string) {
		return 500, `{"error":{"type":"exception","reason":"boom"},"status":500}`
	})
	acme := addOwner(t, pool, "acme")
	addDoc(t, pool, acme, "measurement", "m1", apitest.Ptr("VideoMeasurement"), `{"id":"m1"}`)
	v2 := addDoc(t, pool, acme, "measurement", "m2", apitest.Ptr("VideoMeasurement"), `{"id":"m2"}`)
	ix := newTestIndexer(t, f, pool, 10)

	// A 500 of the whole request: error, cursor unchanged.
	if n, err := runOnce(t, ix); err == nil || n != 0 {
		t.Fatalf("500: %d, %v", n, err)
	}
	if c := cursor(t, pool); c != 0 {
		t.Fatalf("cursor moved to %d after a failed batch", c)
	}
	// One item refused with 503 (retryable): error, cursor unchanged.
	f.SetAnswer(bulkAnswer(201, 503))
	if n, err := ix.RunOnce(context.Background()); err == nil || n != 0 {
		t.Fatalf("item 503: %d, %v", n, err)
	}
	if c := cursor(t, pool); c != 0 {
		t.Fatalf("cursor moved to %d after a failed item", c)
	}
	// Then Elasticsearch takes it: the same batch again, cursor moves.
	f.SetAnswer(bulkAnswer())
	if n, err := ix.RunOnce(context.Background()); err != nil || n != 2 {
		t.Fatalf("retry: %d, %v", n, err)
	}
	reqs := f.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for _, r := range reqs {
		wantLines(t, parseBulk(t, r), []bulkLine{
			{action("analytics-production-acme-measurements-videomeasurement", "m1"), `{"id":"m1"}`},
			{action("analytics-production-acme-measurements-videomeasurement", "m2"), `{"id":"m2"}`},
		})
	}
	if c := cursor(t, pool); c < v2 {
		t.Fatalf("cursor = %d, want >= %d", c, v2)
	}

	// A document refused for good (mapping error) is skipped.
	v3 := addDoc(t, pool, acme, "measurement", "m3", apitest.Ptr("VideoMeasurement"), `{"id":"m3"}`)
	f.SetAnswer(bulkAnswer(400))
	if n, err := runOnce(t, ix); err != nil || n != 1 {
		t.Fatalf("refused document: %d, %v", n, err)
	}
	if c := cursor(t, pool); c < v3 {
		t.Fatalf("cursor = %d, want >= %d", c, v3)
	}
}

func TestIndexerResumesAfterRestart(t *testing.T) {
	pool := testPool(t)
	f := apitest.NewFakeES(t, bulkAnswer())
	acme := addOwner(t, pool, "acme")
	for i := 1; i <= 3; i++ {
		addDoc(t, pool, acme, "client_report", fmt.Sprintf("r%d", i), apitest.Ptr("P1203ClientReport"), fmt.Sprintf(`{"id":"r%d"}`, i))
	}
	first := newTestIndexer(t, f, pool, 2)
	if n, err := runOnce(t, first); err != nil || n != 2 {
		t.Fatalf("first indexer: %d, %v", n, err)
	}
	first.Close()
	// A new indexer (a restarted server) starts at the stored cursor.
	if n, err := runOnce(t, newTestIndexer(t, f, pool, 2)); err != nil || n != 1 {
		t.Fatalf("second indexer: %d, %v", n, err)
	}
	reqs := f.Requests()
	wantLines(t, parseBulk(t, reqs[len(reqs)-1]), []bulkLine{
		{action("analytics-production-acme-client_reports-p1203clientreport", "r3"), `{"id":"r3"}`},
	})
}

// A version taken by a transaction that commits after a higher version is
// visible must not be skipped.
func TestIndexerWaitsForOpenTransactions(t *testing.T) {
	pool := testPool(t)
	f := apitest.NewFakeES(t, bulkAnswer())
	acme := addOwner(t, pool, "acme")
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	late := addDoc(t, tx, acme, "measurement", "late", nil, `{"id":"late"}`)
	early := addDoc(t, pool, acme, "measurement", "early", nil, `{"id":"early"}`)
	if late >= early {
		t.Fatalf("versions %d, %d", late, early)
	}
	ix := newTestIndexer(t, f, pool, 10)
	for range 5 {
		if n, err := ix.RunOnce(ctx); n != 0 || err != nil {
			t.Fatalf("indexed %d (%v) while an older version was uncommitted", n, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := runOnce(t, ix); err != nil || n != 2 {
		t.Fatalf("after commit: %d, %v", n, err)
	}
	wantLines(t, parseBulk(t, f.Requests()[0]), []bulkLine{
		{action("analytics-production-acme-measurements", "late"), `{"id":"late"}`},
		{action("analytics-production-acme-measurements", "early"), `{"id":"early"}`},
	})
}

// The open transaction holding a version may be the newest one, past the
// snapshot's xmax (one past the latest completed transaction): its version
// must not be passed either.
func TestIndexerWaitsForTheNewestOpenTransaction(t *testing.T) {
	pool := testPool(t)
	f := apitest.NewFakeES(t, bulkAnswer())
	acme := addOwner(t, pool, "acme")
	ctx := context.Background()
	ix := newTestIndexer(t, f, pool, 10)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	late := addDoc(t, tx, acme, "measurement", "late", nil, `{"id":"late"}`)
	for range 5 {
		if n, err := ix.RunOnce(ctx); n != 0 || err != nil {
			t.Fatalf("indexed %d (%v) while the version was uncommitted", n, err)
		}
		if c := cursor(t, pool); c >= late {
			t.Fatalf("cursor moved to %d past the uncommitted version %d", c, late)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := runOnce(t, ix); err != nil || n != 1 {
		t.Fatalf("after commit: %d, %v", n, err)
	}
	wantLines(t, parseBulk(t, f.Requests()[0]), []bulkLine{
		{action("analytics-production-acme-measurements", "late"), `{"id":"late"}`},
	})
}

func TestIndexerRun(t *testing.T) {
	pool := testPool(t)
	var fails atomic.Int32
	fails.Store(1)
	f := apitest.NewFakeES(t, nil)
	ok := bulkAnswer()
	f.SetAnswer(func(r apitest.ESRequest) (int, string) {
		if fails.Add(-1) >= 0 {
			return 500, `{"error":"boom"}`
		}
		return ok(r)
	})
	acme := addOwner(t, pool, "acme")
	var last int64
	for i := range 5 {
		last = addDoc(t, pool, acme, "event_bundle", fmt.Sprintf("b%d", i), apitest.Ptr("VideoEventBundle"), `{}`)
	}
	ix := newTestIndexer(t, f, pool, 2)
	ix.Idle, ix.MinBackoff, ix.MaxBackoff = 5*time.Millisecond, 5*time.Millisecond, 20*time.Millisecond
	var rounds []Progress // read after Run returned
	ix.Observe = func(p Progress) { rounds = append(rounds, p) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ix.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for cursor(t, pool) < last {
		if time.Now().After(deadline) {
			t.Fatalf("cursor %d never reached %d", cursor(t, pool), last)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run returned %v", err)
	}
	reqs := f.Requests()
	if len(reqs) != 4 { // the failed batch of 2, then 2 + 2 + 1
		t.Fatalf("%d bulk requests, want 4", len(reqs))
	}
	// Observe saw every round: the failed one, 5 documents sent in all, the
	// cursor at the last document's version, never behind the horizon.
	failed, sent := 0, 0
	for _, p := range rounds {
		if p.Err != nil {
			failed++
		}
		sent += p.Sent
		if !p.LockHeld || p.Cursor > p.Horizon {
			t.Errorf("round %+v", p)
		}
	}
	if failed != 1 || sent != 5 || len(rounds) == 0 || rounds[len(rounds)-1].Cursor != last {
		t.Errorf("observed %d failed rounds, %d sent, rounds %+v; want 1, 5 and the cursor at %d", failed, sent, rounds, last)
	}
	seen := map[string]int{}
	for _, r := range reqs[1:] {
		for _, l := range parseBulk(t, r) {
			var a struct {
				Index struct {
					ID string `json:"_id"`
				} `json:"index"`
			}
			_ = json.Unmarshal([]byte(l.action), &a)
			seen[a.Index.ID]++
		}
	}
	if len(seen) != 5 {
		t.Fatalf("documents sent: %v", seen)
	}
}

// Every action carries its row's version as an external version: a late
// copy of an older version cannot overwrite a newer one in Elasticsearch,
// which answers it 409 (counted as done, as is a resend of a version it
// already has).
func TestIndexerExternalVersions(t *testing.T) {
	pool := testPool(t)
	f := apitest.NewFakeES(t, bulkAnswer())
	acme := addOwner(t, pool, "acme")
	v1 := addDoc(t, pool, acme, "measurement", "m1", apitest.Ptr("VideoMeasurement"), `{"id":"m1"}`)
	v2 := addDoc(t, pool, acme, "anomaly_event", "a1", nil, `{"id":"a1"}`)
	ix := newTestIndexer(t, f, pool, 10)
	indexAll(t, ix, pool, v2)
	exec(t, pool, `DELETE FROM documents WHERE doc_id = 'm1'`)
	v3 := lastVersion(t, pool) // the tombstone's
	v4 := addDoc(t, pool, acme, "anomaly_event", "a1", nil, `{"id":"a1","severity":"critical"}`)
	// Elasticsearch has a1 at a newer version already (409), and the
	// delete is a resend (409 too): both done, the cursor moves.
	f.SetAnswer(bulkAnswer(409, 409))
	indexAll(t, ix, pool, v4)

	reqs := f.Requests()
	var got []int64
	for _, r := range reqs {
		body := parseBulk(t, r)
		for _, l := range body {
			_, v := actionVersion(t, l.action)
			got = append(got, v)
		}
	}
	want := []int64{v1, v2, v3, v4}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("versions sent %v, want %v", got, want)
	}
	wantLines(t, parseBulk(t, reqs[len(reqs)-1]), []bulkLine{
		deletion(videoIndex, "m1"),
		{action("analytics-production-acme-anomaly_events", "a1"), `{"id":"a1","severity":"critical"}`},
	})
}

// Item failures that say nothing about the document (a write block, an
// index Elasticsearch will not create, missing privileges) fail the batch:
// skipping would lose every document of the batch. It is sent again until
// Elasticsearch takes it. Only a 400 (the document itself refused) skips.
func TestIndexerRetriesItemsRefusedForTheCluster(t *testing.T) {
	pool := testPool(t)
	f := apitest.NewFakeES(t, nil)
	acme := addOwner(t, pool, "acme")
	addDoc(t, pool, acme, "measurement", "m1", apitest.Ptr("VideoMeasurement"), `{"id":"m1"}`)
	v2 := addDoc(t, pool, acme, "measurement", "m2", apitest.Ptr("VideoMeasurement"), `{"id":"m2"}`)
	ix := newTestIndexer(t, f, pool, 10)
	item := func(status int, typ, reason string) func(apitest.ESRequest) (int, string) {
		return func(apitest.ESRequest) (int, string) {
			return 200, fmt.Sprintf(`{"took":1,"errors":true,"items":[`+
				`{"index":{"_index":"%s","_id":"m1","_version":1,"result":"created","status":201}},`+
				`{"index":{"_index":"%s","_id":"m2","status":%d,"error":{"type":"%s","reason":"%s"}}}]}`,
				videoIndex, videoIndex, status, typ, reason)
		}
	}
	for _, h := range []func(apitest.ESRequest) (int, string){
		item(403, "cluster_block_exception", "index [x] blocked by: [FORBIDDEN/8/index write (api)];"),
		item(404, "index_not_found_exception", "no such index [x] and [action.auto_create_index] is [false]"),
		item(401, "security_exception", "missing authentication credentials"),
		item(429, "es_rejected_execution_exception", "rejected execution"),
		item(500, "exception", "boom"),
	} {
		f.SetAnswer(h)
		n, err := runOnce(t, ix)
		if err == nil || n != 0 || !strings.Contains(err.Error(), "m2") {
			t.Fatalf("%d, %v: want the batch failed, naming m2", n, err)
		}
		if c := cursor(t, pool); c != 0 {
			t.Fatalf("cursor moved to %d", c)
		}
	}
	f.SetAnswer(bulkAnswer())
	if n, err := ix.RunOnce(context.Background()); err != nil || n != 2 {
		t.Fatalf("block lifted: %d, %v", n, err)
	}
	reqs := f.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d bulk requests, want 6", len(reqs))
	}
	for _, r := range reqs {
		wantLines(t, parseBulk(t, r), []bulkLine{
			{action(videoIndex, "m1"), `{"id":"m1"}`},
			{action(videoIndex, "m2"), `{"id":"m2"}`},
		})
	}
	if c := cursor(t, pool); c < v2 {
		t.Fatalf("cursor = %d, want >= %d", c, v2)
	}
}

// Elasticsearch down (connection refused) or not answering: the batch
// fails within the timeout, the cursor stays, and once Elasticsearch is
// back the same documents go.
func TestIndexerElasticsearchDownThenBack(t *testing.T) {
	pool := testPool(t)
	acme := addOwner(t, pool, "acme")
	v1 := addDoc(t, pool, acme, "measurement", "m1", apitest.Ptr("VideoMeasurement"), `{"id":"m1"}`)

	down := apitest.NewFakeES(t, nil)
	down.Close()
	ix := newTestIndexer(t, down, pool, 10)
	if n, err := runOnce(t, ix); err == nil || n != 0 {
		t.Fatalf("connection refused: %d, %v", n, err)
	}
	ix.Close()

	release := make(chan struct{})
	defer close(release)
	hung := apitest.NewFakeES(t, func(apitest.ESRequest) (int, string) { <-release; return 200, `{}` })
	ix = newTestIndexer(t, hung, pool, 10)
	if ix.Timeout != 2*time.Minute {
		t.Fatalf("default timeout %v", ix.Timeout)
	}
	ix.Timeout = 200 * time.Millisecond
	start := time.Now()
	if n, err := runOnce(t, ix); !errors.Is(err, context.DeadlineExceeded) || n != 0 {
		t.Fatalf("no answer: %d, %v", n, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("a hung bulk request took %v", d)
	}
	if c := cursor(t, pool); c != 0 {
		t.Fatalf("cursor moved to %d", c)
	}
	ix.Close()

	up := apitest.NewFakeES(t, bulkAnswer())
	ix = newTestIndexer(t, up, pool, 10)
	indexAll(t, ix, pool, v1)
	wantLines(t, parseBulk(t, up.Requests()[0]), []bulkLine{{action(videoIndex, "m1"), `{"id":"m1"}`}})
}
