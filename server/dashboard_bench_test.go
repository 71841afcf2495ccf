package server_test

import (
	"cmp"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/dashboard"
)

// BenchmarkDashboardInABrowser times the dashboard in Chromium
// (tools/browser/dashboard-bench.js) on 1,000 probes with a month of speed
// tests each (seedDashboard: 4 a day, 120,000 measurements): the fleet
// view's first render, cold and with the app cached, and a probe's chart,
// alone and three side by side. Issue 25's target: under 1 s each. It
// reports the median and the worst of ROUNDS rounds (bench/dashboard.sh).
func BenchmarkDashboardInABrowser(b *testing.B) {
	if !dashboard.Built() {
		b.Fatal("the dashboard is not built into this test binary: run bash dashboard/build.sh")
	}
	browser := chromiumPath(b)
	e := apitest.Get(b)
	o := e.NewOwner(b, "dashboard-bench")
	t0 := time.Now()
	f := seedDashboard(b, o, 1000, 30, 4, nil, nil)
	for _, t := range []string{"clients", "documents", "client_group_members", "isp_contracts"} {
		if _, err := e.Store.Pool().Exec(context.Background(), `VACUUM ANALYZE `+t); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("seeded 1000 probes, %d measurements each, in %s", f.MeasurementsPerProbe, time.Since(t0).Round(time.Second))
	ids := f.Probes[0].UUID + "," + f.Probes[1].UUID + "," + f.Probes[2].UUID
	for b.Loop() {
		out := apitest.RunNode(b, "browser", 10*time.Minute, []string{"FLEETGRAPH_URL=" + e.URL, "ADMIN_KEY=" + o.Key,
			"CHROMIUM=" + browser, "PROBE_IDS=" + ids, "ROUNDS=" + cmp.Or(os.Getenv("ROUNDS"), "5")}, "dashboard-bench.js")
		var got struct {
			FleetCold, FleetWarm, Chart, Chart3 []float64
			Rows                                int
			Total, Summary                      string
			Requests                            map[string][]int
		}
		if err := json.Unmarshal(out, &got); err != nil {
			b.Fatalf("the browser script printed %q: %v", out, err)
		}
		if got.Rows != 50 || got.Total != "1000 probes" || !strings.Contains(got.Summary, "intervals with measurements") {
			b.Fatalf("the fleet showed %d rows of %q; the chart %q", got.Rows, got.Total, got.Summary)
		}
		b.Logf("chart: %s; the last round's GraphQL requests (ms): %v", got.Summary, got.Requests)
		for _, m := range []struct {
			name string
			ms   []float64
		}{{"fleet-cold", got.FleetCold}, {"fleet-warm", got.FleetWarm}, {"chart", got.Chart}, {"chart-3-probes", got.Chart3}} {
			s := slices.Clone(m.ms)
			slices.Sort(s)
			b.ReportMetric(s[len(s)/2], m.name+"-p50-ms")
			b.ReportMetric(s[len(s)-1], m.name+"-max-ms")
			b.Logf("%-15s ms per round %v", m.name, roundAll(m.ms))
		}
	}
}

func roundAll(ms []float64) []int {
	out := make([]int, len(ms))
	for i, v := range ms {
		out[i] = int(v + 0.5)
	}
	return out
}
