package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/detector"
	"github.com/fleetgraph/fleetgraph/graphiql"
)

// serve --demo fills the demo data owner with the fixture set, its clients
// renamed to the demo probes, once.
func TestDemoLoadsTheFixtureSet(t *testing.T) {
	e := apitest.Get(t)
	ctx := context.Background()
	keys, err := seedDemo(ctx, e.Store, e.Sealer, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("seed: %v", err)
	}
	key := keys.Admin
	var owner int64
	if err := e.Store.Pool().QueryRow(ctx, `SELECT id FROM data_owners WHERE slug = $1`, demoOwner).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for _, kind := range []string{"measurement", "client_report", "event_bundle", "network_request", "user_feedback", "anomaly_event"} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", kind+"s.ndjson"))
		if err != nil {
			t.Fatal(err)
		}
		want[kind] = len(bytes.Split(bytes.TrimSpace(raw), []byte("\n")))
		switch kind { // and the speed test history (loadDemoHistory): demoTestsPerDay a day per probe
		case "measurement":
			want[kind] += 12 * demoHistoryDays * demoTestsPerDay
		}
		if got := countDocs(t, owner, kind); got != want[kind] {
			t.Errorf("%s: %d documents, want the fixture's and the history's %d", kind, got, want[kind])
		}
	}
	// The fixture's clients became demo probes: no client of the fixture
	// exists, and the measurements name probes with labels.
	var strays int
	if err := e.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM clients WHERE data_owner_id = $1 AND label IS NULL`, owner).Scan(&strays); err != nil {
		t.Fatal(err)
	}
	if strays != 0 {
		t.Errorf("%d clients without a label: fixture clients were created instead of using the probes", strays)
	}
	// The probes registered through the client API with the demo key and
	// checked in once: a secret, the key, the software they named.
	var registered int
	if err := e.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM clients c JOIN registration_keys k ON k.id = c.registration_key_id
		WHERE c.data_owner_id = $1 AND c.label LIKE 'probe-%' AND c.secret_digest IS NOT NULL
		AND k.registration_key = 'demo-fleet-2026' AND c.last_client_version = $2 AND c.last_seen_at IS NOT NULL`,
		owner, demoProbeVersion).Scan(&registered); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := e.Store.Pool().QueryRow(ctx, `SELECT num_registrations_left FROM registration_keys WHERE registration_key = 'demo-fleet-2026'`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if registered != 12 || left != 50-12 {
		t.Errorf("%d probes registered through the client API, %d registrations left on the key; want 12 and 38", registered, left)
	}
	for _, c := range apitest.FixtureClients {
		if r := e.Admin(t, http.MethodGet, "/clients/"+c, key, nil); r.Status != http.StatusNotFound {
			t.Errorf("fixture client %s: GET = %d, want 404", c, r.Status)
		}
	}
	g := e.GraphQL(t, key, `{ clients { label measurements(first: 100) { edges { node { client { label } } } } } }`, nil)
	if len(g.Errors) > 0 {
		t.Fatalf("graphql: %s", g.Raw)
	}
	total := 0
	for _, c := range g.Data["clients"].([]any) {
		c := c.(map[string]any)
		for _, ed := range c["measurements"].(map[string]any)["edges"].([]any) {
			total++
			if l := ed.(map[string]any)["node"].(map[string]any)["client"].(map[string]any)["label"]; l != c["label"] || !strings.HasPrefix(l.(string), "probe-") {
				t.Errorf("measurement of %v names client %v", c["label"], l)
			}
		}
	}
	var reachable int // the first 100 of each probe's
	if err := e.Store.Pool().QueryRow(ctx, `SELECT sum(least(n, 100)) FROM (SELECT count(*) AS n FROM documents
		WHERE data_owner_id = $1 AND kind = 'measurement' GROUP BY client_uuid) c`, owner).Scan(&reachable); err != nil {
		t.Fatal(err)
	}
	if total != reachable {
		t.Errorf("%d measurements through the probes, want %d", total, reachable)
	}

	// The demo's default config has a published version and a newer draft,
	// and the probes get the published one.
	cfgs := e.Admin(t, http.MethodGet, "/public_configs", key, nil).Obj(t)["public_configs"].([]any)
	if len(cfgs) != 1 {
		t.Fatalf("demo public configs: %v", cfgs)
	}
	id := apitest.Int(t, cfgs[0].(map[string]any)["id"])
	cfg := apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, fmt.Sprintf("/public_configs/%d", id), key, nil), 200, "public_config").(map[string]any)
	if apitest.Int(t, cfg["published_revision"]) != 1 || apitest.Int(t, cfg["draft_revision"]) != 2 ||
		apitest.Int(t, cfg["delivered_client_count"]) != 12 || len(cfg["schedule_configs"].([]any)) != 1 {
		t.Errorf("demo config: %v", cfg)
	}
	if w := fmt.Sprint(cfg["warnings"]); strings.Contains(w, "credentials.ookla") {
		t.Errorf("the demo stores the ookla credential its config names: %s", w)
	}

	// Fleet health shows one warning and one critical probe, one without
	// records (unknown), the others healthy.
	wantStates := map[string]string{"probe-03": "warning", "probe-07": "critical", "probe-12": "unknown"}
	demoStates := func() {
		t.Helper()
		r := e.Admin(t, http.MethodGet, "/fleet_health", key, nil)
		states := apitest.List(t, apitest.WantEnvelope(t, r, http.StatusOK, "client_health_states"))
		if len(states) != 12 {
			t.Fatalf("%d health states, want 12: %s", len(states), r.Raw)
		}
		for _, it := range states {
			s := apitest.Object(t, it)
			want := wantStates[s["client_label"].(string)]
			if want == "" {
				want = "healthy"
			}
			if s["state"] != want {
				t.Errorf("%s: state %v, want %s", s["client_label"], s["state"], want)
			}
		}
	}
	demoStates()
	statusDocs := countDocs(t, owner, "system_status")
	if statusDocs != 11*demoStatusRecords {
		t.Errorf("%d system status records, want %d", statusDocs, 11*demoStatusRecords)
	}

	// Seeding again (a restart with --demo) adds nothing; the status records
	// are renewed in place.
	var said bytes.Buffer
	if _, err := seedDemo(ctx, e.Store, e.Sealer, slog.New(slog.NewTextHandler(&said, nil))); err != nil {
		t.Fatalf("second seed: %v", err)
	}
	if !strings.Contains(said.String(), "the demo data owner is loaded already") {
		t.Errorf("a second seed does not say the demo is there already; it logged:\n%s", said.String())
	}
	if got := countDocs(t, owner, "measurement"); got != want["measurement"] {
		t.Errorf("after a second seed: %d measurements, want %d", got, want["measurement"])
	}
	if got := countDocs(t, owner, "system_status"); got != statusDocs {
		t.Errorf("after a second seed: %d system status records, want %d", got, statusDocs)
	}
	demoStates()
}

// The query GraphiQL opens with (graphiql.ExampleQuery, also the README's)
// answers on the demo data: the twelve probes, their latest measurement,
// the fleet's health with probe-07 critical.
func TestTheExampleQueryAnswersOnTheDemo(t *testing.T) {
	e := apitest.Get(t)
	keys, err := seedDemo(context.Background(), e.Store, e.Sealer, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("seed: %v", err)
	}
	hdr := http.Header{"Content-Type": {"application/json"}, "X-API-KEY": {keys.Admin}}
	r := apitest.Send(t, nil, apitest.Request(t, http.MethodPost, e.URL+"/graphql", hdr,
		map[string]any{"query": graphiql.ExampleQuery, "operationName": "Fleet"}))
	var got struct {
		Data struct {
			ClientsConnection struct {
				TotalCount int
				Edges      []struct {
					Node struct {
						Label        string
						Measurements struct {
							Edges []struct{ Node struct{ ID string } }
						}
					}
				}
			}
			FleetHealth []struct{ ClientLabel, State string }
		}
		Errors []any
	}
	if err := json.Unmarshal(r.Raw, &got); err != nil || r.Status != http.StatusOK || len(got.Errors) > 0 {
		t.Fatalf("the example query: %d %v: %s", r.Status, err, r.Raw)
	}
	c := got.Data.ClientsConnection
	measured := 0
	for _, edge := range c.Edges {
		if len(edge.Node.Measurements.Edges) == 1 {
			measured++
		}
	}
	if c.TotalCount != 12 || len(c.Edges) != 12 || measured == 0 {
		t.Errorf("%d clients, %d edges, %d with a latest measurement; want the 12 demo probes, some measured", c.TotalCount, len(c.Edges), measured)
	}
	states := map[string]string{}
	for _, h := range got.Data.FleetHealth {
		states[h.ClientLabel] = h.State
	}
	if states["probe-07"] != "critical" || states["probe-03"] != "warning" {
		t.Errorf("fleet health %v, want probe-07 critical and probe-03 at a warning", states)
	}
}

// The analyzer finds the demo history's anomalies as serve --demo stores
// them, and nothing else: probe-01's download shift and probe-02's two
// ping spikes, each critical, and no detected episode on another probe or
// of another rule or pass (no spike of probe-01's download while it is
// shifted).
func TestDemoAnomaliesAreDetected(t *testing.T) {
	e := apitest.Get(t)
	ctx := context.Background()
	if _, err := seedDemo(ctx, e.Store, e.Sealer, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("seed: %v", err)
	}
	var owner int64
	if err := e.Store.Pool().QueryRow(ctx, `SELECT id FROM data_owners WHERE slug = $1`, demoOwner).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	e.StartWebhooks(t, nil, detector.New(detector.Config{Store: e.Store, SweepEvery: -1}))
	e.AnalyzerIdle(t, owner, 2*time.Minute)
	rows, err := e.Store.Pool().Query(ctx, `SELECT c.label, d.doc->>'rule_id', d.doc->>'detection_pass', d.doc->>'severity', count(*)
		FROM documents d JOIN clients c ON c.data_owner_id = d.data_owner_id AND c.uuid::text = d.doc->>'client_uuid'
		WHERE d.data_owner_id = $1 AND d.kind = 'anomaly_event' AND d.doc->>'detected_by' = 'analyzer'
		GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`, owner)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for rows.Next() {
		var label, rule, pass, severity string
		var n int
		if err := rows.Scan(&label, &rule, &pass, &severity, &n); err != nil {
			t.Fatal(err)
		}
		got[label+" "+rule+" "+pass+" "+severity] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"probe-01 speedtest-download shift critical": 1, "probe-02 speedtest-ping spike critical": 2}
	if !maps.Equal(got, want) {
		t.Errorf("detected %v, want exactly %v", got, want)
	}
}
