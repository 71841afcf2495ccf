package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/server"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/store/pglocal"
)

// replicaRig is a private PostgreSQL primary, its streaming standby
// (pg_basebackup -R) and `fleetgraph serve` in a process of its own reading
// from the standby (FLEETGRAPH_READ_MAX_LAG 1s).
type replicaRig struct {
	primary       *store.Store
	standby       *pgxpool.Pool
	stopStandby   func(context.Context) error
	base, logFile string
}

// TestReadReplica: searches and export listings read from a real streaming
// standby; a data owner's write is visible to its next read while the
// standby has not replayed it; a standby paused beyond the lag bound and a
// stopped standby are bypassed (log line, metric), and reads still answer.
func TestReadReplica(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	primaryURL, stopPrimary, err := pglocal.StartPrivate(ctx, quiet, filepath.Join(dir, "primary"), "replica")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopPrimary(context.Background()) })
	dataDir := filepath.Join(dir, "data")
	keyA := bootstrapOwner(t, primaryURL, dataDir, "replica_a")
	keyB := bootstrapOwner(t, primaryURL, dataDir, "replica_b")

	standbyURL, stopStandby, err := pglocal.StartStandby(ctx, quiet, filepath.Join(dir, "standby"), primaryURL, "replica")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopStandby(context.Background()) })
	rig := &replicaRig{stopStandby: stopStandby}
	if rig.primary, err = store.Open(ctx, primaryURL, store.Options{MaxConns: 2}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rig.primary.Close)
	if rig.standby, err = pgxpool.New(ctx, standbyURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rig.standby.Close)
	rig.insertMeasurement(t, "replica_a", "m-a-1")
	rig.insertMeasurement(t, "replica_b", "m-b-1")
	rig.waitOnStandby(t, "m-b-1", 1)
	rig.startServe(t, primaryURL, standbyURL, dataDir)
	rig.waitLog(t, "read replica in use")

	// A search and an export listing read from the standby: its backends
	// last ran the search's and the listing's statements.
	before, scans := rig.metric(t, "fleetgraph_db_replica_reads_total"), rig.standbyScans(t)
	if n := rig.searchTotal(t, keyA); n != 1 {
		t.Fatalf("search of data owner A: %d hits, want 1", n)
	}
	if after := rig.metric(t, "fleetgraph_db_replica_reads_total"); after <= before {
		t.Errorf("fleetgraph_db_replica_reads_total %v after the search, was %v", after, before)
	}
	for deadline := time.Now().Add(15 * time.Second); rig.standbyScans(t) == scans; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the search scanned no documents on the standby")
		}
	}
	// B's write: B's reads go to the primary until the standby has
	// replayed it (its next check, within 200 ms), then to the standby.
	exportB := rig.createExportKey(t, keyB)
	for deadline := time.Now().Add(5 * time.Second); ; {
		before := rig.metric(t, "fleetgraph_db_replica_reads_total")
		r := apitest.DoAt(t, rig.base, http.MethodGet, server.ExportBase+"/measurements", exportB, nil)
		if r.Status != http.StatusOK || !bytes.Contains(r.Raw, []byte("m-b-1")) {
			t.Fatalf("export listing: %d %s", r.Status, r.Raw)
		}
		if rig.metric(t, "fleetgraph_db_replica_reads_total") > before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the export listing never read from the standby")
		}
		time.Sleep(50 * time.Millisecond)
	}
	rig.wantStandbyRan(t, "WITH page AS")
	rig.wantScroll(t, exportB, "m-b-1")

	// Read-your-writes: with replay paused, the ISP A creates is not on the
	// standby, yet A's next read finds it (on the primary).
	rig.standbySQL(t, "SELECT pg_wal_replay_pause()")
	ownWrites := rig.metric(t, `fleetgraph_db_replica_bypassed_total{reason="own_write"}`)
	r := apitest.DoAt(t, rig.base, http.MethodPost, server.AdminBase+"/isps", keyA,
		map[string]any{"name": "Replica ISP", "country": "DE", "type": "fixed"})
	if r.Status != http.StatusCreated {
		t.Fatalf("create ISP: %d %s", r.Status, r.Raw)
	}
	id := apitest.ID(t, r.Obj(t)["isp"])
	r = apitest.DoAt(t, rig.base, http.MethodGet, server.AdminBase+"/isps/"+strconv.FormatInt(id, 10), keyA, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("A reads its new ISP: %d %s", r.Status, r.Raw)
	}
	if n := rig.metric(t, `fleetgraph_db_replica_bypassed_total{reason="own_write"}`); n <= ownWrites {
		t.Errorf("own_write bypasses %v, was %v: the read was not sent to the primary for A's write", n, ownWrites)
	}
	var onStandby int
	if err := rig.standby.QueryRow(ctx, `SELECT count(*) FROM isps WHERE id = $1`, id).Scan(&onStandby); err != nil || onStandby != 0 {
		t.Fatalf("the paused standby has the new ISP (%d, %v): the test proves nothing", onStandby, err)
	}

	// Replay still paused: beyond the 1s bound the standby is bypassed; B's
	// search answers from the primary, with the measurement the standby
	// lacks.
	rig.insertMeasurement(t, "replica_b", "m-b-2")
	rig.waitLog(t, "read replica lags beyond its bound")
	lagged := rig.metric(t, `fleetgraph_db_replica_bypassed_total{reason="lag"}`)
	if n := rig.searchTotal(t, keyB); n != 2 {
		t.Errorf("search of B while the standby lags: %d hits, want 2 (the primary's)", n)
	}
	if n := rig.metric(t, `fleetgraph_db_replica_bypassed_total{reason="lag"}`); n <= lagged {
		t.Errorf("lag bypasses %v, was %v", n, lagged)
	}

	// Replay resumed: the standby is in use again.
	rig.standbySQL(t, "SELECT pg_wal_replay_resume()")
	rig.waitMetric(t, "fleetgraph_db_replica_in_use", 1)
	before = rig.metric(t, "fleetgraph_db_replica_reads_total")
	if n := rig.searchTotal(t, keyB); n != 2 {
		t.Errorf("search of B after replay resumed: %d hits, want 2", n)
	}
	if after := rig.metric(t, "fleetgraph_db_replica_reads_total"); after <= before {
		t.Errorf("fleetgraph_db_replica_reads_total %v after replay resumed, was %v", after, before)
	}

	// Standby stopped: bypassed, and every read still answers.
	rig.standby.Close()
	if err := rig.stopStandby(ctx); err != nil {
		t.Fatal(err)
	}
	rig.waitLog(t, "read replica is down")
	down := rig.metric(t, `fleetgraph_db_replica_bypassed_total{reason="down"}`)
	if n := rig.searchTotal(t, keyA); n != 1 {
		t.Errorf("search of A with the standby down: %d hits, want 1", n)
	}
	r = apitest.DoAt(t, rig.base, http.MethodGet, server.ExportBase+"/measurements", exportB, nil)
	if r.Status != http.StatusOK || !bytes.Contains(r.Raw, []byte("m-b-2")) {
		t.Errorf("export listing with the standby down: %d %s", r.Status, r.Raw)
	}
	rig.wantScroll(t, exportB, "m-b-2")
	if n := rig.metric(t, `fleetgraph_db_replica_bypassed_total{reason="down"}`); n <= down {
		t.Errorf("down bypasses %v, was %v", n, down)
	}
}

// TestReadReplicaSettingsAreChecked: a bad lag bound or a URL of another
// database stops serve before it starts, with a message naming the setting.
func TestReadReplicaSettingsAreChecked(t *testing.T) {
	for _, bad := range []string{"0", "-1s", "50ms", "2h", "soon", "5"} {
		c := parseConfig(t, "--read-max-lag", bad)
		if err := c.checkReplica(); err == nil || !strings.Contains(err.Error(), "FLEETGRAPH_READ_MAX_LAG") {
			t.Errorf("--read-max-lag %q: %v, want an error naming FLEETGRAPH_READ_MAX_LAG", bad, err)
		}
	}
	t.Setenv("FLEETGRAPH_READ_MAX_LAG", "")
	if d, err := parseConfig(t).readMaxLag(); err != nil || d != defaultReadMaxLag {
		t.Errorf("unset: %s %v, want %s", d, err, defaultReadMaxLag)
	}
	t.Setenv("FLEETGRAPH_READ_MAX_LAG", "250ms")
	if d, err := parseConfig(t).readMaxLag(); err != nil || d != 250*time.Millisecond {
		t.Errorf("env 250ms: %s %v", d, err)
	}
	c := parseConfig(t, "--read-database-url", "mysql://u:secret@db/x")
	err := c.checkReplica()
	if err == nil || !strings.Contains(err.Error(), "FLEETGRAPH_READ_DATABASE_URL") || strings.Contains(err.Error(), "secret") {
		t.Errorf("mysql URL: %v, want an error naming FLEETGRAPH_READ_DATABASE_URL without the password", err)
	}
	err = serve(context.Background(), []string{"--addr", freeAddr(t), "--data-dir", t.TempDir(), "--read-max-lag", "0s"})
	if err == nil || !strings.Contains(err.Error(), "--read-max-lag") {
		t.Errorf("serve --read-max-lag 0s: %v, want it refused", err)
	}
}

// bootstrapOwner makes a data owner on the database at url and answers its
// org_admin key.
func bootstrapOwner(t *testing.T, url, dataDir, slug string) string {
	t.Helper()
	var out bytes.Buffer
	if err := bootstrap(context.Background(), []string{"--database-url", url, "--data-dir", dataDir,
		"--data-owner", slug, "--email", "admin@" + slug + ".example", "--json"}, &out); err != nil {
		t.Fatalf("bootstrap %s: %v", slug, err)
	}
	var got struct {
		Key string `json:"api_key"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Key == "" {
		t.Fatalf("bootstrap %s: %v %s", slug, err, out.String())
	}
	return got.Key
}

// insertMeasurement stores a measurement of the data owner slug on the
// primary.
func (rig *replicaRig) insertMeasurement(t *testing.T, slug, id string) {
	t.Helper()
	ctx := context.Background()
	owner, err := rig.primary.DataOwnerBySlug(ctx, slug)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{"id": id, "type": "VideoMeasurement", "client_uuid": uuid.NewString(),
		"created_at": time.Now().UTC().Format(time.RFC3339Nano)})
	doc, err := store.ParseDocument("measurement", raw)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := rig.primary.InsertDocuments(ctx, owner.ID, []store.Document{doc}); err != nil || len(res.Refused) > 0 {
		t.Fatalf("insert %s: %v %+v", id, err, res)
	}
}

// waitOnStandby waits until the standby holds n documents with doc_id id.
func (rig *replicaRig) waitOnStandby(t *testing.T, id string, n int) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var got int
		err := rig.standby.QueryRow(context.Background(), `SELECT count(*) FROM documents WHERE doc_id = $1`, id).Scan(&got)
		if err == nil && got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby never replayed %s: %d, %v", id, got, err)
		}
	}
}

func (rig *replicaRig) standbySQL(t *testing.T, q string) {
	t.Helper()
	if _, err := rig.standby.Exec(context.Background(), q); err != nil {
		t.Fatalf("standby: %s: %v", q, err)
	}
}

// standbyScans counts the scans of the documents' tables the standby has
// made (its own statistics: the primary's are not replicated).
func (rig *replicaRig) standbyScans(t *testing.T) int64 {
	t.Helper()
	var n int64
	if err := rig.standby.QueryRow(context.Background(), `SELECT coalesce(sum(seq_scan + coalesce(idx_scan, 0)), 0)::bigint
		FROM pg_stat_user_tables WHERE relname LIKE 'documents%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// wantStandbyRan asserts that one of serve's connections to the standby
// last ran a statement containing text.
func (rig *replicaRig) wantStandbyRan(t *testing.T, text string) {
	t.Helper()
	var n int
	err := rig.standby.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
		WHERE application_name = 'fleetgraph' AND pid <> pg_backend_pid() AND strpos(query, $1) > 0`, text).Scan(&n)
	if err != nil || n == 0 {
		rows, _ := rig.standby.Query(context.Background(), `SELECT application_name, state, left(query, 200) FROM pg_stat_activity
			WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'`)
		seen, _ := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
			var app, state, q string
			err := r.Scan(&app, &state, &q)
			return app + " " + state + ": " + q, err
		})
		t.Errorf("no connection of the server to the standby ran %q (%d, %v); they ran:\n%s", text, n, err, strings.Join(seen, "\n"))
	}
}

// startServe runs serve in a process of its own on the primary, reading
// from the standby, its log in rig.logFile.
func (rig *replicaRig) startServe(t *testing.T, primaryURL, standbyURL, dataDir string) {
	t.Helper()
	p := startServeOn(t, primaryURL, dataDir, "FLEETGRAPH_READ_DATABASE_URL="+standbyURL, "FLEETGRAPH_READ_MAX_LAG=1s")
	rig.base, rig.logFile = "http://"+p.addr, p.log
}

// waitLog waits up to 10 s for a line of serve's log holding msg.
func (rig *replicaRig) waitLog(t *testing.T, msg string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(rig.logFile)
		if bytes.Contains(b, []byte(msg)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve never logged %q; it logged:\n%s", msg, b)
		}
	}
}

// metric is the value of the sample name (with its labels) on /metrics.
func (rig *replicaRig) metric(t *testing.T, name string) float64 {
	t.Helper()
	resp, err := http.Get(rig.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return f
		}
	}
	t.Fatalf("no %s on /metrics", name)
	return 0
}

// waitMetric waits up to 10 s for name to be want.
func (rig *replicaRig) waitMetric(t *testing.T, name string, want float64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got := rig.metric(t, name)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s stayed %v, want %v", name, got, want)
		}
	}
}

// searchTotal is the hit count of a search of every measurement with key.
func (rig *replicaRig) searchTotal(t *testing.T, key string) int {
	t.Helper()
	g := apitest.GraphQLAt(t, rig.base, key, `query($b: JSON!) { measurementSearch(body: $b) }`,
		map[string]any{"b": map[string]any{"query": map[string]any{"match_all": map[string]any{}}}})
	if g.Status != http.StatusOK || len(g.Errors) > 0 {
		t.Fatalf("search: %d %s", g.Status, g.Raw)
	}
	res, _ := g.Data["measurementSearch"].(map[string]any)
	hits, _ := res["hits"].(map[string]any)
	total, _ := hits["total"].(map[string]any)
	n, err := strconv.Atoi(fmt.Sprint(total["value"]))
	if err != nil {
		t.Fatalf("search answered no hit count: %s", g.Raw)
	}
	return n
}

// wantScroll reads a scroll of the export key's measurements, one hit a
// page (its pages after the first continue it: MeasurementSearchScroll),
// and wants the document id among them.
func (rig *replicaRig) wantScroll(t *testing.T, exportKey, id string) {
	t.Helper()
	r := apitest.DoAt(t, rig.base, http.MethodPost, server.ExportBase+"/search", exportKey,
		map[string]any{"body": map[string]any{"query": map[string]any{"match_all": map[string]any{}}}, "scroll": "1m", "size": 1})
	if r.Status != http.StatusOK || !bytes.Contains(r.Raw, []byte(id)) {
		t.Errorf("scroll: %d %s, want %s", r.Status, r.Raw, id)
	}
}

// createExportKey makes an export key with the admin key.
func (rig *replicaRig) createExportKey(t *testing.T, adminKey string) string {
	t.Helper()
	r := apitest.DoAt(t, rig.base, http.MethodPost, server.AdminBase+"/export_api_keys", adminKey, map[string]any{})
	if r.Status != http.StatusCreated {
		t.Fatalf("create export key: %d %s", r.Status, r.Raw)
	}
	rec, _ := r.Obj(t)["export_api_key"].(map[string]any)
	key, _ := rec["api_key"].(string)
	if key == "" {
		t.Fatalf("no api_key: %s", r.Raw)
	}
	return key
}
