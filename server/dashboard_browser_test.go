package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/dashboard"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// chromiumPath finds Debian's chromium, failing the test without it.
func chromiumPath(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("this test needs Chromium (apt-get install chromium; .ci/run installs it)")
	return ""
}

// TestDashboardInABrowser opens the dashboard at / in a real Chromium
// (tools/browser/dashboard.js) on demo-like data and walks each view's main
// flow (issue 25 item 5): the fleet listed and searched, keyboard
// navigation, an anomaly resolved, a feedback given, an episode arriving
// live, the lost connection shown and resumed, a probe's chart with its
// episodes, a config published, a webhook delivery redelivered, the other
// views loading; a viewer key sees every view without an edit button; axe-core
// finds no serious or critical violation; nothing is fetched off the origin
// and the CSP refuses nothing. DASHBOARD_SCREENSHOTS=dir saves screenshots
// of the main views there (docs/img for docs/dashboard.md).
func TestDashboardInABrowser(t *testing.T) {
	if !dashboard.Built() {
		t.Fatal("the dashboard is not built into this test binary: run bash dashboard/build.sh")
	}
	browser := chromiumPath(t)
	e := apitest.Get(t)
	e.StartWebhooks(t, fastSchedule)
	o := e.NewOwner(t, "dashboard-browser")
	viewer := model.RoleViewer
	viewerKey, _ := o.NewKey(t, apitest.KeyOpts{EffectiveRole: &viewer})
	rc := apitest.NewReceiver(t)
	f := seedDashboard(t, o, 60, 30, 4, rc, e)
	live := fmt.Sprintf("ping-loss::spike::%d", time.Now().Unix())

	// The live episode: added once the page has resolved OPEN_ANOMALY,
	// so that it arrives while the anomalies view is open.
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(300 * time.Millisecond):
			}
			var status string
			if err := e.Store.Pool().QueryRow(context.Background(), `SELECT doc->>'status' FROM documents WHERE data_owner_id = $1 AND kind = 'anomaly_event' AND doc_id = $2`,
				o.ID, f.OpenAnomaly).Scan(&status); err == nil && status == "resolved" {
				raw, _ := json.Marshal(map[string]any{"id": live, "client_uuid": f.Probes[1].UUID,
					"measurement_type": "NetworkMeasurement", "subject": "icmpping", "metric": "packet_loss", "detection_pass": "spike",
					"severity": "critical", "status": "new", "first_seen_at": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339),
					"last_seen_at": time.Now().UTC().Format(time.RFC3339), "created_at": time.Now().UTC().Format(time.RFC3339)})
				doc, err := store.ParseDocument("anomaly_event", raw)
				if err == nil {
					_, err = e.Store.InsertDocuments(context.Background(), o.ID, []store.Document{doc})
				}
				if err != nil {
					t.Errorf("add the live episode: %v", err)
				}
				return
			}
		}
	}()

	shots := os.Getenv("DASHBOARD_SCREENSHOTS")
	if shots != "" {
		abs, err := filepath.Abs(filepath.Join("..", shots))
		if err != nil {
			t.Fatal(err)
		}
		shots = abs
	}
	out := apitest.RunNode(t, "browser", 4*time.Minute, []string{"FLEETGRAPH_URL=" + e.URL, "ADMIN_KEY=" + o.Key,
		"VIEWER_KEY=" + viewerKey, "CHROMIUM=" + browser, "PROBE_ID=" + f.Probes[0].UUID,
		"OPEN_ANOMALY=" + f.OpenAnomaly, "OTHER_OPEN=" + f.OtherOpen, "LIVE_ANOMALY=" + live, "SCREENSHOTS=" + shots}, "dashboard.js")

	var seen map[string]json.RawMessage
	if err := json.Unmarshal(out, &seen); err != nil {
		t.Fatalf("the browser script printed %q: %v", out, err)
	}
	step := func(name string, v any) {
		t.Helper()
		var failed struct{ Error string }
		_ = json.Unmarshal(seen[name], &failed)
		if failed.Error != "" {
			t.Errorf("%s: %s", name, failed.Error)
			return
		}
		if err := json.Unmarshal(seen[name], v); err != nil {
			t.Errorf("%s: %s: %v", name, seen[name], err)
		}
	}
	contains := func(what, got string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q does not say %q", what, got, w)
			}
		}
	}

	var fleet struct {
		Rows                         int
		First, Total, Searched, Role string
	}
	step("fleet", &fleet)
	if fleet.Rows != 50 || fleet.Total != "60 probes" || fleet.Role != "org_admin" {
		t.Errorf("fleet: %d rows (want a page of 50), total %q, role %q", fleet.Rows, fleet.Total, fleet.Role)
	}
	contains("fleet's first row", fleet.First, "probe-0001", "online", "Deutsche Telekom", "Vienna", "1") // 1 open anomaly
	contains("fleet searched for probe-0003", fleet.Searched, "probe-0003")

	var keyboard struct {
		Visited       []string
		Hash, Focused string
	}
	step("keyboard", &keyboard)
	if len(keyboard.Visited) == 0 || keyboard.Visited[0] != "Skip to content" || keyboard.Hash != "#/anomalies" || keyboard.Focused != "main" {
		t.Errorf("keyboard: tabbed through %q, then Enter went to %q, focus on %q (want the skip link first, then #/anomalies, focus on main)",
			keyboard.Visited, keyboard.Hash, keyboard.Focused)
	}

	var note struct{ Note string }
	step("resolve", &note)
	contains("resolve", note.Note, "Resolved download")
	var status string
	if err := e.Store.Pool().QueryRow(context.Background(), `SELECT doc->>'status' FROM documents WHERE data_owner_id = $1 AND kind = 'anomaly_event' AND doc_id = $2`,
		o.ID, f.OpenAnomaly).Scan(&status); err != nil || status != "resolved" {
		t.Errorf("the resolved episode is %q in the store (%v)", status, err)
	}
	var feedback struct {
		Note      string
		Overrides []string
	}
	step("feedback", &feedback)
	contains("feedback", feedback.Note, "Feedback noted")
	if len(feedback.Overrides) != 1 || !strings.Contains(feedback.Overrides[0], "total_stalling_time") {
		t.Errorf("overrides after the feedback: %q", feedback.Overrides)
	}

	var liveSeen struct {
		Feed, Link string
		Row        bool
	}
	step("live", &liveSeen)
	contains("live feed", liveSeen.Feed, "anomaly_event.created", "anomaly_event.resolved", "packet_loss")
	if !liveSeen.Row || liveSeen.Link != "Live" {
		t.Errorf("live: the new episode's row shown %v, link %q", liveSeen.Row, liveSeen.Link)
	}
	var lost struct{ Lost, Resumed string }
	step("lost", &lost)
	contains("connection lost", lost.Lost, "lost")
	if lost.Resumed != "Live" {
		t.Errorf("after the network is back the link says %q", lost.Resumed)
	}

	var probe struct {
		Title, Summary string
		Charts         int
		Episodes       []string
	}
	step("probe", &probe)
	contains("probe", probe.Title, "probe-0001")
	contains("probe chart", probe.Summary, "intervals with measurements", "2 anomaly episodes of SpeedtestMeasurement shaded")
	if probe.Charts != 2 || len(probe.Episodes) != 2 {
		t.Errorf("probe: %d charts (want metric and system status), episodes %q", probe.Charts, probe.Episodes)
	}

	step("publish", &note)
	contains("publish", note.Note, "Published Field probes revision 2")
	step("redeliver", &note)
	contains("redeliver", note.Note, "Redelivered webhook.test")
	rc.WaitFor(t, 2, 30*time.Second) // the test and its redelivery

	var views map[string]struct{ H1, Error string }
	step("views", &views)
	for v, want := range map[string]string{"users": "Users and API keys", "settings": "Settings", "license": "License usage", "ai": "AI usage"} {
		if views[v].H1 != want || views[v].Error != "" {
			t.Errorf("view %s: heading %q, error %q", v, views[v].H1, views[v].Error)
		}
	}

	var vw struct {
		Role                                          string
		AnomalyButtons, ConfigButtons, WebhookButtons []string
	}
	step("viewer", &vw)
	if vw.Role != "viewer" {
		t.Errorf("viewer key shows role %q", vw.Role)
	}
	for _, b := range append(append(vw.AnomalyButtons, vw.ConfigButtons...), vw.WebhookButtons...) {
		for _, edit := range []string{"Resolve", "👍", "👎", "Publish", "Edit draft", "Discard", "Unassign", "Redeliver", "Send test", "Enable", "Remove"} {
			if strings.Contains(b, edit) {
				t.Errorf("the viewer sees the edit button %q", b)
			}
		}
	}

	var axe struct {
		Scanned    []string
		Violations []struct {
			View, ID, Impact, Help string
			Nodes                  []string
		}
	}
	step("axe", &axe)
	if len(axe.Scanned) != 9 {
		t.Errorf("axe scanned %q", axe.Scanned)
	}
	for _, v := range axe.Violations {
		if v.Impact == "serious" || v.Impact == "critical" {
			t.Errorf("axe, %s: %s (%s) %s at %v", v.View, v.ID, v.Impact, v.Help, v.Nodes)
		} else {
			t.Logf("axe, %s: %s (%s) %s", v.View, v.ID, v.Impact, v.Help)
		}
	}

	var page struct {
		ConsoleErrors, Offsite, Failed []string
	}
	_ = json.Unmarshal(out, &page)
	if len(page.Offsite) > 0 {
		t.Errorf("the dashboard fetched from outside the server: %v", page.Offsite)
	}
	for _, m := range page.ConsoleErrors {
		if strings.Contains(m, "Content Security Policy") {
			t.Errorf("the CSP refused: %s", m)
		}
	}
	t.Logf("console errors: %q; failed responses: %q", page.ConsoleErrors, page.Failed)
}
