package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/fleetgraph/fleetgraph/store"
)

// demoHistoryDays is how far back the demo probes' speed tests go, four a
// day, so that the dashboard's charts have a month to show.
const demoHistoryDays = 30

// loadDemoHistory stores a month of speed tests of each demo probe (probe n
// at index n of uuids) ending at now, download around 230 Mbit/s with a
// daily swing, and probe-01's dip to about 80 two days ago with its open
// anomaly episode, which the dashboard's probe chart shades.
func loadDemoHistory(ctx context.Context, st *store.Store, owner int64, uuids []string, now time.Time) error {
	now = now.UTC().Truncate(time.Hour)
	dipFrom, dipTo := now.Add(-60*time.Hour), now.Add(-36*time.Hour)
	var docs []store.Document
	add := func(kind string, doc map[string]any) error {
		raw, err := json.Marshal(doc)
		if err != nil {
			return err
		}
		d, err := store.ParseDocument(kind, raw)
		if err != nil {
			return fmt.Errorf("demo: history %s %v: %w", kind, doc["id"], err)
		}
		docs = append(docs, d)
		return nil
	}
	for n := 1; n < len(uuids); n++ {
		if uuids[n] == "" {
			continue
		}
		for k := 0; k < demoHistoryDays*4; k++ {
			at := now.Add(-time.Duration(k) * 6 * time.Hour)
			down := 230 + 15*math.Sin(float64(k)/4+float64(n)) - float64(n)
			if n == 1 && !at.Before(dipFrom) && at.Before(dipTo) {
				down = 80
			}
			if err := add(store.KindMeasurement, map[string]any{"id": fmt.Sprintf("demo-speed-%02d-%03d", n, k),
				"type": "SpeedtestMeasurement", "client_uuid": uuids[n], "created_at": at.Format(time.RFC3339),
				"client_type": "automator", "client_version": demoProbeVersion, "success": true,
				"study": map[string]any{"subject": "ookla", "study_id": "ookla-default", "study_name": "ookla default"},
				"statistic_values": map[string]any{"download": math.Round(down*10) / 10, "upload": 38 + float64((k+n)%5),
					"latency": 11 + float64((k*n)%7)}}); err != nil {
				return err
			}
		}
	}
	if uuids[1] != "" {
		if err := add(store.KindAnomalyEvent, map[string]any{"id": fmt.Sprintf("speedtest-download::shift::%d", dipFrom.Unix()),
			"rule_id": "speedtest-download", "client_uuid": uuids[1], "measurement_type": "SpeedtestMeasurement", "subject": "ookla",
			"metric": "download", "detection_pass": "shift", "severity": "critical", "status": "new", "value": 80,
			"first_seen_at": dipFrom.Format(time.RFC3339), "last_seen_at": dipTo.Format(time.RFC3339),
			"created_at": dipFrom.Add(5 * time.Minute).Format(time.RFC3339)}); err != nil {
			return err
		}
	}
	if _, err := st.InsertDocuments(ctx, owner, docs); err != nil {
		return fmt.Errorf("demo: load the speed test history: %w", err)
	}
	return nil
}
