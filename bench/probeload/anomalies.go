package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// The analyzer's latency (issue 24): some probes report one anomalous
// measurement (a video that took 10 minutes to start) in their
// -anomaly-report-th report; the time from that report's 2xx to its episode being readable
// (a search over the anomaly events, every 200 ms) and to its webhook
// delivery arriving (a receiver on 127.0.0.1) is measured.

// anomalyRule is the catalogue rule the injected value trips.
const anomalyRule = "video-initial-loading"

// tracker follows the injected anomalies by client.
type tracker struct {
	mu        sync.Mutex
	reported  map[string]time.Time // client → the anomalous report's 2xx
	readable  map[string]time.Duration
	delivered map[string]time.Duration
	// The poll's searches: answered, failed, and the latest failure.
	polled, pollFailed int
	pollErr            error
}

func newTracker() *tracker {
	return &tracker{reported: map[string]time.Time{}, readable: map[string]time.Duration{}, delivered: map[string]time.Duration{}}
}

func (tr *tracker) reportedAt(client string, at time.Time) {
	tr.mu.Lock()
	tr.reported[client] = at
	tr.mu.Unlock()
}

// seen records that client's episode was read (readable) or delivered.
func (tr *tracker) seen(into map[string]time.Duration, client string, now time.Time) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	at, ok := tr.reported[client]
	if _, done := into[client]; ok && !done {
		into[client] = now.Sub(at)
	}
}

// receive starts the webhook receiver and answers its URL.
func (tr *tracker) receive() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Data struct {
				AnomalyEvent struct {
					ClientUUID string `json:"client_uuid"`
					RuleID     string `json:"rule_id"`
				} `json:"anomaly_event"`
			} `json:"data"`
		}
		raw, _ := io.ReadAll(r.Body)
		if json.Unmarshal(raw, &body) == nil && body.Data.AnomalyEvent.RuleID == anomalyRule {
			tr.seen(tr.delivered, body.Data.AnomalyEvent.ClientUUID, time.Now())
		}
	}))
	return "http://" + ln.Addr().String() + "/hook", nil
}

// poll searches the anomaly events every 200 ms until ctx is done.
func (tr *tracker) poll(ctx context.Context, client *http.Client, o options) {
	q := map[string]any{"body": map[string]any{"query": map[string]any{"term": map[string]any{"rule_id": anomalyRule}},
		"size": 10000}, "source_only": true}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
		var hits []struct {
			ClientUUID string `json:"client_uuid"`
		}
		err := send(ctx, client, http.MethodPost, o.url+"/client_admin_api/v1/anomaly_events/search", o.adminKey, q, http.StatusOK, &hits)
		tr.mu.Lock()
		if tr.polled++; err != nil && ctx.Err() == nil {
			tr.pollFailed++
			tr.pollErr = err
		}
		tr.mu.Unlock()
		if err != nil {
			continue
		}
		now := time.Now()
		for _, h := range hits {
			tr.seen(tr.readable, h.ClientUUID, now)
		}
	}
}

// print prints the latencies against the targets, and what became of
// the anomalies the poll did not see: a last search for each tells an
// episode stored late (or unseen) from one never stored.
func (tr *tracker) print(ctx context.Context, client *http.Client, o options) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	fmt.Printf("the poll searched %d times, %d failed", tr.polled, tr.pollFailed)
	if tr.pollErr != nil {
		fmt.Printf(" (the latest: %.200s)", tr.pollErr)
	}
	fmt.Println()
	for c := range tr.reported {
		if _, ok := tr.readable[c]; ok {
			continue
		}
		_, delivered := tr.delivered[c]
		q := map[string]any{"body": map[string]any{"query": map[string]any{"bool": map[string]any{"filter": []any{
			map[string]any{"term": map[string]any{"rule_id": anomalyRule}}, map[string]any{"term": map[string]any{"client_uuid": c}}}}}},
			"size": 10, "source_only": true}
		var hits []struct {
			ID string `json:"id"`
		}
		err := send(ctx, client, http.MethodPost, o.url+"/client_admin_api/v1/anomaly_events/search", o.adminKey, q, http.StatusOK, &hits)
		fmt.Printf("  not seen by the poll: client %s (webhook delivered: %v); searched for at the end: %d episodes %v, error %v\n",
			c, delivered, len(hits), hits, err)
	}
	if len(tr.reported) == 0 {
		fmt.Println("detection latency: no anomaly reported (-anomalies 0, or too short a run)")
		return
	}
	for _, m := range []struct {
		name   string
		got    map[string]time.Duration
		target time.Duration
	}{{"episode readable", tr.readable, 5 * time.Second}, {"webhook delivered", tr.delivered, 10 * time.Second}} {
		var ds []time.Duration
		for _, d := range m.got {
			ds = append(ds, d)
		}
		latencies("  "+m.name, ds)
		if len(ds) == 0 {
			fmt.Printf("detection latency to %s: none of %d anomalies (target p99 < %s: missed)\n", m.name, len(tr.reported), m.target)
			continue
		}
		p99 := percentile(ds, 0.99)
		fmt.Printf("detection latency to %s: p99 %s, %d of %d anomalies seen (target p99 < %s: %s)\n", m.name,
			p99.Round(time.Millisecond), len(ds), len(tr.reported), m.target, verdict(p99 < m.target && len(ds) == len(tr.reported)))
	}
}
