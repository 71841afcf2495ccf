package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/server"
	"github.com/fleetgraph/fleetgraph/store"
)

// serveProcess is `fleetgraph serve` in a process of its own (this test
// binary run as main), its output in the file log.
type serveProcess struct {
	cmd  *exec.Cmd
	addr string
	log  string
}

func startServeProcess(t *testing.T, e *apitest.Env, dir string) *serveProcess {
	t.Helper()
	return startServeOn(t, e.DatabaseURL, dir, "FLEETGRAPH_WEBHOOK_ALLOW_CIDRS=127.0.0.1/32",
		"FLEETGRAPH_WEBHOOK_TIMEOUT=3s", "FLEETGRAPH_WEBHOOK_RESCUE_AFTER=9s")
}

// startServeOn starts serve on the database at dbURL with data dir dir and
// the environment's variables plus env; it returns once the server answers.
func startServeOn(t *testing.T, dbURL, dir string, env ...string) *serveProcess {
	t.Helper()
	addr := freeAddr(t)
	args, _ := json.Marshal([]string{"serve", "--database-url", dbURL, "--addr", addr, "--data-dir", dir})
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), asMainEnv+"="+string(args)), env...)
	log, err := os.Create(filepath.Join(dir, fmt.Sprintf("serve-%d.log", time.Now().UnixNano())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProcess{cmd: cmd, addr: addr, log: log.Name()}
	t.Cleanup(p.kill)
	for i := 0; ; i++ {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			return p
		}
		if i == 600 {
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("the server process never answered: %v; it logged:\n%s", err, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill sends SIGKILL: no shutdown, no cleanup.
func (p *serveProcess) kill() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
}

// TestWebhookDeliveriesSurviveKill: deliveries pending and in flight when
// the server process is killed with SIGKILL are all delivered after it is
// started again (at least once: the ones in flight are tried again).
func TestWebhookDeliveriesSurviveKill(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "wh-kill")
	dir := t.TempDir() // the data dir (and the generated secret key) the two runs share

	// The receiver holds every request until the process is killed, then
	// answers 200.
	var mu sync.Mutex
	held, ok := map[string]bool{}, map[string]bool{}
	killed := make(chan struct{})
	rc := apitest.NewReceiver(t)
	rc.Answer = func(_ int, w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("webhook-id")
		select {
		case <-killed:
			mu.Lock()
			ok[id] = true
			mu.Unlock()
		default:
			mu.Lock()
			held[id] = true
			mu.Unlock()
			select {
			case <-killed:
			case <-r.Context().Done():
			}
			w.WriteHeader(http.StatusServiceUnavailable) // never read: the sender is dead
		}
	}

	p := startServeProcess(t, e, dir)
	r := apitest.DoAt(t, "http://"+p.addr, "POST", server.AdminBase+"/webhooks", o.Key, map[string]any{
		"name": "kill", "url": rc.URL, "event_types": []string{store.EventAnomalyCreated}})
	apitest.WantStatus(t, r, http.StatusCreated)
	c := o.NewClient(t, store.NewClient{})
	const n = 25 // more than the engine's 10 workers: some are in flight, the others pending
	for i := range n {
		o.InsertDocuments(t, "anomaly_event", map[string]any{"id": fmt.Sprintf("kill-%d::spike::1740787200", i),
			"client_uuid": c.UUID, "measurement_type": "VideoMeasurement", "severity": "warning", "status": "new",
			"created_at": "2026-11-24T10:00:00Z"})
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		inFlight := len(held)
		mu.Unlock()
		if inFlight >= 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d deliveries in flight", inFlight)
		}
	}
	p.kill()
	close(killed)
	pending := countDeliveries(t, e, o.ID, "pending")
	if pending < n-10 {
		t.Fatalf("%d deliveries pending after the kill, want at least %d", pending, n-10)
	}

	startServeProcess(t, e, dir)
	for deadline := time.Now().Add(3 * time.Minute); countDeliveries(t, e, o.ID, "succeeded") < n; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries succeeded after the restart", countDeliveries(t, e, o.ID, "succeeded"), n)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ok) != n {
		t.Fatalf("the receiver accepted %d distinct deliveries, want %d", len(ok), n)
	}
}

// countDeliveries counts the data owner's deliveries with status.
func countDeliveries(t *testing.T, e *apitest.Env, ownerID int64, status string) int {
	t.Helper()
	var n int
	err := e.Store.Pool().QueryRow(t.Context(), `SELECT count(*) FROM webhook_deliveries WHERE data_owner_id = $1 AND status = $2`,
		ownerID, status).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
