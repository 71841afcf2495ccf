package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/clientapi"
	"github.com/fleetgraph/fleetgraph/store"
)

// TestAnalyzerSurvivesKillAndSharesWork: a probe reports a month of
// measurements a day at a time to a real `fleetgraph serve` process that
// is killed with SIGKILL mid-way; the rest goes alternately to two server
// processes on the same database. The episodes and their events are then
// exactly those of a clean replay by a real `fleetgraph analyze` process:
// nothing lost to the kill, nothing detected twice by the two processes.
func TestAnalyzerSurvivesKillAndSharesWork(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "analyzer-kill")
	capability := o.NewCapability(t, store.CapabilityInput{})
	regKey := o.NewRegistrationKey(t, store.RegistrationKeyInput{CapabilityID: capability.ID})
	probe := o.NewProbe(t, regKey.RegistrationKey)
	dir := t.TempDir()

	docs := apitest.ProbeMonth(probe.UUID, "youtube", 11, true)
	const perReport = 48 // a day of both measurement types
	report := func(addr string, from int) bool {
		batch := make([]any, 0, perReport)
		for _, d := range docs[from:min(from+perReport, len(docs))] {
			batch = append(batch, d)
		}
		body, _ := json.Marshal(batch)
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+clientapi.Base+"/measurements", bytes.NewReader(body))
		req.Header.Set("X-API-KEY", probe.Secret)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}

	p := startServeProcess(t, e, dir)
	killAt := 11 * perReport // before the shift: its detection runs in the later processes
	for from := 0; from < killAt; from += perReport {
		if !report(p.addr, from) {
			t.Fatalf("report from %d refused", from)
		}
	}
	// The kill comes while the next report is in flight; the reports
	// before it may have their analysis queued, running or done.
	inFlight := make(chan bool)
	go func() { inFlight <- report(p.addr, killAt) }()
	time.Sleep(15 * time.Millisecond)
	p.kill()
	<-inFlight // answered or not, it is sent again below (the same documents)

	a, b := startServeProcess(t, e, dir), startServeProcess(t, e, dir)
	for i, from := 0, killAt; from < len(docs); i, from = i+1, from+perReport {
		addr := []string{a.addr, b.addr}[i%2]
		if !report(addr, from) {
			t.Fatalf("report from %d to %s refused", from, addr)
		}
	}
	e.AnalyzerIdle(t, o.ID, 2*time.Minute)
	online := storedEpisodes(t, e, o.ID)
	if len(online) < 4 {
		t.Fatalf("%d episodes after the kill, want at least the shift and the three spikes: %v", len(online), online)
	}
	var created int
	err := e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM events WHERE data_owner_id = $1 AND type = $2`,
		o.ID, store.EventAnomalyCreated).Scan(&created)
	if err != nil || created != len(online) {
		t.Fatalf("%d anomaly_event.created events for %d episodes (%v)", created, len(online), err)
	}

	// A clean replay by a real process makes the same episodes.
	args, _ := json.Marshal([]string{"analyze", "--database-url", e.DatabaseURL, "--data-dir", dir, "--data-owner", o.Slug})
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), asMainEnv+"="+string(args))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fleetgraph analyze: %v\n%s", err, out)
	}
	if replayed := storedEpisodes(t, e, o.ID); !reflect.DeepEqual(replayed, online) {
		t.Errorf("the replay differs from what the killed and shared processes detected:\nreplay %v\nonline %v", replayed, online)
	}
}

// storedEpisodes reads the data owner's detected episodes: id → the
// fields that tell one detection from another.
func storedEpisodes(t *testing.T, e *apitest.Env, ownerID int64) map[string]string {
	t.Helper()
	rows, err := e.Store.Pool().Query(context.Background(), `SELECT doc_id, concat_ws(' ', doc->>'severity', doc->>'status',
		doc->>'last_seen_at', doc->>'value', doc->>'measurement_ids') FROM documents
		WHERE data_owner_id = $1 AND kind = 'anomaly_event' AND doc->>'detected_by' = 'analyzer'`, ownerID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, what string
		if err := rows.Scan(&id, &what); err != nil {
			t.Fatal(err)
		}
		out[id] = what
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
