package es

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/store/testdb"
)

const videoIndex = "analytics-production-acme-measurements-videomeasurement"

func exec(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

func tombstones(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM document_tombstones`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// indexAll runs the indexer until the cursor has passed version v.
func indexAll(t *testing.T, ix *Indexer, pool *pgxpool.Pool, v int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for cursor(t, pool) < v {
		if _, err := ix.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("cursor %d never reached %d", cursor(t, pool), v)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func lastVersion(t *testing.T, pool *pgxpool.Pool) int64 {
	t.Helper()
	var v int64
	if err := pool.QueryRow(context.Background(), `SELECT last_value FROM documents_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestIndexerDeletesDeletedDocuments(t *testing.T) {
	pool := testPool(t)
	f := apitest.NewFakeES(t, bulkAnswer())
	acme := addOwner(t, pool, "acme")
	addDoc(t, pool, acme, "measurement", "m1", apitest.Ptr("VideoMeasurement"), `{"id":"m1"}`)
	addDoc(t, pool, acme, "anomaly_event", "a1", nil, `{"id":"a1"}`)
	ix := newTestIndexer(t, f, pool, 10)
	indexAll(t, ix, pool, lastVersion(t, pool))

	exec(t, pool, `DELETE FROM documents WHERE doc_id IN ('m1', 'a1')`)
	if n, err := runOnce(t, ix); err != nil || n != 2 {
		t.Fatalf("deletes: %d, %v", n, err)
	}
	reqs := f.Requests()
	wantLines(t, parseBulk(t, reqs[len(reqs)-1]), []bulkLine{
		deletion(videoIndex, "m1"),
		deletion("analytics-production-acme-anomaly_events", "a1"),
	})
	if c, v := cursor(t, pool), lastVersion(t, pool); c < v {
		t.Fatalf("cursor = %d, want >= %d", c, v)
	}
	if n := tombstones(t, pool); n != 0 {
		t.Fatalf("%d tombstones left behind the cursor", n)
	}
}

func TestIndexerMovesDocumentsWhoseTypeChanged(t *testing.T) {
	db, st, err := testdb.Create(context.Background(), "fleetgraph_test_es", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(); db.Drop() })
	pool := st.Pool()
	f := apitest.NewFakeES(t, bulkAnswer())
	acme := addOwner(t, pool, "acme")
	load := func(raw string) {
		t.Helper()
		d, err := store.ParseDocument("measurement", []byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.InsertDocuments(context.Background(), acme, []store.Document{d}); err != nil {
			t.Fatal(err)
		}
	}
	const created = `"client_uuid":"7d444840-9dc0-11d1-b245-5ffdce74fad2","created_at":"2025-01-01T00:00:00Z"`
	load(`{"id":"m1","type":"VideoMeasurement",` + created + `}`)
	ix := newTestIndexer(t, f, pool, 10)
	indexAll(t, ix, pool, lastVersion(t, pool))

	// The import replaces m1 with a WebMeasurement: indexed into the new
	// index, then deleted from the old.
	load(`{"id":"m1","type":"WebMeasurement",` + created + `}`)
	if n, err := runOnce(t, ix); err != nil || n != 2 {
		t.Fatalf("type change: %d, %v", n, err)
	}
	reqs := f.Requests()
	wantLines(t, parseBulk(t, reqs[len(reqs)-1]), []bulkLine{
		{action("analytics-production-acme-measurements-webmeasurement", "m1"), `{"id":"m1","type":"WebMeasurement","client_uuid":"7d444840-9dc0-11d1-b245-5ffdce74fad2","created_at":"2025-01-01T00:00:00Z"}`},
		deletion(videoIndex, "m1"),
	})

	// A change of case only keeps the index: no delete (it would come
	// after the index and remove the document).
	load(`{"id":"m1","type":"webmeasurement",` + created + `}`)
	if n, err := runOnce(t, ix); err != nil || n != 1 {
		t.Fatalf("case change: %d, %v", n, err)
	}
	reqs = f.Requests()
	wantLines(t, parseBulk(t, reqs[len(reqs)-1]), []bulkLine{
		{action("analytics-production-acme-measurements-webmeasurement", "m1"), `{"id":"m1","type":"webmeasurement","client_uuid":"7d444840-9dc0-11d1-b245-5ffdce74fad2","created_at":"2025-01-01T00:00:00Z"}`},
	})
	if n := tombstones(t, pool); n != 0 {
		t.Fatalf("%d tombstones left behind the cursor", n)
	}
}

// Deleting a data owner deletes its documents by cascade: the delete works,
// the documents get no tombstones of their own (the slug is gone by then),
// and the data owner's tombstone drops all of its indices, after what came
// before it and before what comes after, such as a new data owner of the
// same slug.
func TestIndexerDropsIndicesOfDeletedDataOwners(t *testing.T) {
	pool := testPool(t)
	ok := bulkAnswer()
	f := apitest.NewFakeES(t, func(r apitest.ESRequest) (int, string) {
		switch {
		case r.Method == http.MethodGet && r.Path == "/_resolve/index/analytics-production-acme-*":
			return 200, `{"indices":[{"name":"` + videoIndex + `","attributes":["open"]},
				{"name":"analytics-production-acme-anomaly_events","attributes":["closed"]},
				{"name":"analytics-production-acme-whatever","attributes":["open"]},
				{"name":"analytics-production-acme-lookup-clients","attributes":["open"]}],"aliases":[],"data_streams":[]}`
		case r.Method == http.MethodDelete:
			return 200, `{"acknowledged":true}`
		}
		return ok(r)
	})
	acme, beta := addOwner(t, pool, "acme"), addOwner(t, pool, "beta")
	addDoc(t, pool, acme, "measurement", "m1", apitest.Ptr("VideoMeasurement"), `{"id":"m1"}`)
	addDoc(t, pool, acme, "anomaly_event", "a1", nil, `{"id":"a1"}`)
	addDoc(t, pool, beta, "measurement", "b1", nil, `{"id":"b1"}`)
	ix := newTestIndexer(t, f, pool, 10)
	indexAll(t, ix, pool, lastVersion(t, pool))
	before := len(f.Requests())

	exec(t, pool, `DELETE FROM documents WHERE doc_id = 'b1'`)
	exec(t, pool, `DELETE FROM data_owners WHERE id = $1`, acme)
	var owners, docs int
	err := pool.QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE kind IS NULL), count(*) FILTER (WHERE kind IS NOT NULL)
		FROM document_tombstones`).Scan(&owners, &docs)
	if err != nil || owners != 1 || docs != 1 {
		t.Fatalf("tombstones: %d of data owners, %d of documents (%v), want 1 and 1 (b1)", owners, docs, err)
	}
	acme2 := addOwner(t, pool, "acme")
	addDoc(t, pool, acme2, "measurement", "n1", apitest.Ptr("VideoMeasurement"), `{"id":"n1"}`)
	indexAll(t, ix, pool, lastVersion(t, pool))

	reqs := f.Requests()[before:]
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want bulk, resolve, delete, bulk: %+v", len(reqs), reqs)
	}
	wantLines(t, parseBulk(t, reqs[0]), []bulkLine{deletion("analytics-production-beta-measurements", "b1")})
	if r := reqs[1]; r.Method != http.MethodGet || r.Path != "/_resolve/index/analytics-production-acme-*" {
		t.Fatalf("resolve request %s %s", r.Method, r.Path)
	}
	wantQuery(t, reqs[1].Query, map[string]string{"expand_wildcards": "all"})
	if r := reqs[2]; r.Method != http.MethodDelete || r.Path != "/"+videoIndex+",analytics-production-acme-anomaly_events,analytics-production-acme-lookup-clients" {
		t.Fatalf("delete request %s %s", r.Method, r.Path)
	}
	wantQuery(t, reqs[2].Query, map[string]string{"ignore_unavailable": "true"})
	wantLines(t, parseBulk(t, reqs[3]), []bulkLine{{action(videoIndex, "n1"), `{"id":"n1"}`}})
	if n := tombstones(t, pool); n != 0 {
		t.Fatalf("%d tombstones left behind the cursor", n)
	}
}

// A data owner without indices: nothing to delete, the cursor moves on.
func TestIndexerDeletedDataOwnerWithoutIndices(t *testing.T) {
	pool := testPool(t)
	f := apitest.NewFakeES(t, func(r apitest.ESRequest) (int, string) {
		return 200, `{"indices":[],"aliases":[],"data_streams":[]}`
	})
	acme := addOwner(t, pool, "acme")
	exec(t, pool, `DELETE FROM data_owners WHERE id = $1`, acme)
	ix := newTestIndexer(t, f, pool, 10)
	if n, err := runOnce(t, ix); err != nil || n != 1 {
		t.Fatalf("%d, %v", n, err)
	}
	if reqs := f.Requests(); len(reqs) != 1 || reqs[0].Method != http.MethodGet {
		t.Fatalf("requests %+v, want the resolve alone", reqs)
	}
	if c, v := cursor(t, pool), lastVersion(t, pool); c < v {
		t.Fatalf("cursor = %d, want >= %d", c, v)
	}
}

func TestIndexerDeleteItemErrors(t *testing.T) {
	pool := testPool(t)
	f := apitest.NewFakeES(t, bulkAnswer())
	acme := addOwner(t, pool, "acme")
	addDoc(t, pool, acme, "measurement", "m1", apitest.Ptr("VideoMeasurement"), `{"id":"m1"}`)
	addDoc(t, pool, acme, "measurement", "m2", apitest.Ptr("VideoMeasurement"), `{"id":"m2"}`)
	ix := newTestIndexer(t, f, pool, 10)
	indexAll(t, ix, pool, lastVersion(t, pool))
	start := cursor(t, pool)
	exec(t, pool, `DELETE FROM documents`)

	// 404 (not there) is what a delete wants; a 503 fails the batch.
	f.SetAnswer(bulkAnswer(404, 503))
	if n, err := runOnce(t, ix); err == nil || n != 0 {
		t.Fatalf("404 + 503: %d, %v", n, err)
	}
	if c := cursor(t, pool); c != start {
		t.Fatalf("cursor moved to %d after a failed delete", c)
	}
	if n := tombstones(t, pool); n != 2 {
		t.Fatalf("%d tombstones, want 2 kept for the retry", n)
	}
	// A 429 too.
	f.SetAnswer(bulkAnswer(429, 200))
	if n, err := ix.RunOnce(context.Background()); err == nil || n != 0 {
		t.Fatalf("429: %d, %v", n, err)
	}
	f.SetAnswer(bulkAnswer(404, 404))
	if n, err := ix.RunOnce(context.Background()); err != nil || n != 2 {
		t.Fatalf("404 + 404: %d, %v", n, err)
	}
	for _, r := range f.Requests()[len(f.Requests())-3:] {
		wantLines(t, parseBulk(t, r), []bulkLine{deletion(videoIndex, "m1"), deletion(videoIndex, "m2")})
	}
	if c, v := cursor(t, pool), lastVersion(t, pool); c < v {
		t.Fatalf("cursor = %d, want >= %d", c, v)
	}
}

func TestIndexerResumesWithTombstones(t *testing.T) {
	pool := testPool(t)
	f := apitest.NewFakeES(t, bulkAnswer())
	acme := addOwner(t, pool, "acme")
	for i := 1; i <= 3; i++ {
		addDoc(t, pool, acme, "measurement", fmt.Sprintf("m%d", i), apitest.Ptr("VideoMeasurement"), fmt.Sprintf(`{"id":"m%d"}`, i))
	}
	first := newTestIndexer(t, f, pool, 2)
	indexAll(t, first, pool, lastVersion(t, pool))
	exec(t, pool, `DELETE FROM documents WHERE doc_id = 'm1'`)
	addDoc(t, pool, acme, "measurement", "m4", apitest.Ptr("VideoMeasurement"), `{"id":"m4"}`)
	exec(t, pool, `DELETE FROM documents WHERE doc_id = 'm2'`)

	if n, err := runOnce(t, first); err != nil || n != 2 {
		t.Fatalf("first indexer: %d, %v", n, err)
	}
	first.Close() // the server stops
	reqs := f.Requests()
	wantLines(t, parseBulk(t, reqs[len(reqs)-1]), []bulkLine{
		deletion(videoIndex, "m1"),
		{action(videoIndex, "m4"), `{"id":"m4"}`},
	})
	if n := tombstones(t, pool); n != 1 {
		t.Fatalf("%d tombstones, want the one of m2 not yet sent", n)
	}

	second := newTestIndexer(t, f, pool, 2)
	if n, err := runOnce(t, second); err != nil || n != 1 {
		t.Fatalf("second indexer: %d, %v", n, err)
	}
	reqs = f.Requests()
	wantLines(t, parseBulk(t, reqs[len(reqs)-1]), []bulkLine{deletion(videoIndex, "m2")})
	if n := tombstones(t, pool); n != 0 {
		t.Fatalf("%d tombstones left behind the cursor", n)
	}
}

// lockHolder is the backend pid of the session holding the indexer lock (0
// when none does).
func lockHolder(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var pid int
	err := pool.QueryRow(context.Background(), `
		SELECT coalesce(max(pid), 0) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND classid = $1::int::oid AND objid = $2::int::oid AND objsubid = 2`, lockClass, lockID).Scan(&pid)
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// Two servers: only the lock holder indexes; the other takes over when the
// holder's session dies or the holder stops.
func TestIndexerLock(t *testing.T) {
	pool := testPool(t)
	f1, f2 := apitest.NewFakeES(t, bulkAnswer()), apitest.NewFakeES(t, bulkAnswer())
	acme := addOwner(t, pool, "acme")
	addDoc(t, pool, acme, "measurement", "m1", apitest.Ptr("VideoMeasurement"), `{"id":"m1"}`)
	ix1, ix2 := newTestIndexer(t, f1, pool, 10), newTestIndexer(t, f2, pool, 10)
	if n, err := runOnce(t, ix1); err != nil || n != 1 {
		t.Fatalf("first indexer: %d, %v", n, err)
	}
	if n, err := ix2.RunOnce(context.Background()); !errors.Is(err, ErrLockHeld) || n != 0 {
		t.Fatalf("second indexer while the first holds the lock: %d, %v", n, err)
	}

	// The second runs, waiting for the lock; the first keeps indexing.
	ix2.Idle, ix2.LockRetry, ix2.MinBackoff = 5*time.Millisecond, 5*time.Millisecond, 5*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ix2.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	v := addDoc(t, pool, acme, "measurement", "m2", apitest.Ptr("VideoMeasurement"), `{"id":"m2"}`)
	time.Sleep(100 * time.Millisecond)
	indexAll(t, ix1, pool, v)
	if len(f2.Requests()) != 0 {
		t.Fatal("the second indexer sent requests while the first held the lock")
	}
	if got := len(f1.Requests()); got != 2 {
		t.Fatalf("first indexer sent %d requests, want 2", got)
	}

	// The first one's session dies: PostgreSQL releases the lock, the
	// second takes over, the first finds the lock taken.
	holder := lockHolder(t, pool)
	if holder == 0 {
		t.Fatal("no session holds the lock")
	}
	exec(t, pool, `SELECT pg_terminate_backend($1)`, holder)
	v = addDoc(t, pool, acme, "measurement", "m3", apitest.Ptr("VideoMeasurement"), `{"id":"m3"}`)
	waitCursor(t, pool, v)
	wantLines(t, parseBulk(t, f2.Requests()[0]), []bulkLine{{action(videoIndex, "m3"), `{"id":"m3"}`}})
	if h := lockHolder(t, pool); h == 0 || h == holder {
		t.Fatalf("lock holder %d after %d died", h, holder)
	}
	// The first notices on its next query, then waits like the second did.
	if _, err := ix1.RunOnce(context.Background()); err == nil {
		t.Fatal("the first indexer ran on a dead session")
	}
	if n, err := ix1.RunOnce(context.Background()); !errors.Is(err, ErrLockHeld) || n != 0 {
		t.Fatalf("first indexer after losing the lock: %d, %v", n, err)
	}

	// The second stops: the lock is released, the first takes it again.
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run returned %v", err)
	}
	done <- nil // for the deferred wait
	if h := lockHolder(t, pool); h != 0 {
		t.Fatalf("lock still held by %d after Run returned", h)
	}
	sent := len(f2.Requests())
	v = addDoc(t, pool, acme, "measurement", "m4", apitest.Ptr("VideoMeasurement"), `{"id":"m4"}`)
	indexAll(t, ix1, pool, v)
	reqs := f1.Requests()
	wantLines(t, parseBulk(t, reqs[len(reqs)-1]), []bulkLine{{action(videoIndex, "m4"), `{"id":"m4"}`}})
	if len(f2.Requests()) != sent {
		t.Fatal("the stopped indexer sent requests")
	}
}

func waitCursor(t *testing.T, pool *pgxpool.Pool, v int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for cursor(t, pool) < v {
		if time.Now().After(deadline) {
			t.Fatalf("cursor %d never reached %d", cursor(t, pool), v)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
