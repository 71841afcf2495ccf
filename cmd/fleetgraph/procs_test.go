package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/bench/fleetprocs"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/store/testdb"
)

// TestManyProcessesSurviveKill: three real `fleetgraph serve` processes on
// a database of their own under mixed load (probes reporting, an admin, an
// exporter, a subscription on each, a webhook), the River leader killed
// with SIGKILL after 6 s and not started again (bench/procs.sh is the
// longer run, with a restart). Every report answered 2xx is stored once,
// every event reaches the webhook, no periodic job (nor one client's
// analysis) runs twice at once, each periodic job runs again under the
// next leader, the analyzer's inbox drains, and the subscriptions on the
// two other processes receive every event, those written through the
// killed one and each other included.
func TestManyProcessesSurviveKill(t *testing.T) {
	db, st, err := testdb.Create(t.Context(), "procs", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	t.Cleanup(db.Drop)
	var log bytes.Buffer
	cfg := fleetprocs.Config{DatabaseURL: db.URL, Work: t.TempDir(), Addrs: []string{freeAddr(t), freeAddr(t), freeAddr(t)},
		Duration: 20 * time.Second, KillAt: 0.3, NoticeAfter: time.Second,
		// Short attempts, so that the killed process's jobs are rescued
		// within the test (the rescuer looks every 30 s).
		Env:    []string{"FLEETGRAPH_WEBHOOK_TIMEOUT=3s", "FLEETGRAPH_WEBHOOK_RESCUE_AFTER=9s"},
		Probes: 10, Batch: 10, Reports: 4, Interval: time.Second, PoolSize: 6, Drain: 90 * time.Second, Log: &log,
		Command: func(args, env []string) *exec.Cmd {
			raw, _ := json.Marshal(args)
			c := exec.Command(os.Args[0])
			c.Env = append(append(os.Environ(), env...), asMainEnv+"="+string(raw))
			return c
		}}
	res, err := fleetprocs.Run(t.Context(), cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.Bytes())
	}
	var out strings.Builder
	res.Print(&out)
	if f := res.Failures(); len(f) > 0 {
		t.Fatalf("%s\n%s\n%s", strings.Join(f, "\n"), log.Bytes(), out.String())
	}
	if res.Reports.Acked == 0 || res.Delivered == 0 {
		t.Fatalf("nothing acknowledged or delivered:\n%s", out.String())
	}
	t.Logf("\n%s%s", log.Bytes(), out.String())
}
