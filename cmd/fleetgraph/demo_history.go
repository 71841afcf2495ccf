package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// demoHistoryDays is how far back the demo probes' speed tests go, one an
// hour, so that the dashboard's charts have a month to show and the
// analyzer enough history to judge by (docs/analyzer.md: spikes once about
// 120 values are known).
const (
	demoHistoryDays = 30
	demoTestsPerDay = 24
)

// loadDemoHistory stores a month of speed tests of each demo probe (probe n
// at index n of uuids) ending at now: download around 230 Mbit/s with a
// daily swing and some noise, probe-01's download down 40 % for a day two
// days ago, and two ping spikes of probe-02 five and three days ago. The
// analyzer finds them as the documents are stored (a shift and two
// spikes, which the dashboard's probe chart shades); nothing else is
// anomalous.
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
		noise := rand.New(rand.NewPCG(uint64(n), 2026))
		for k := 0; k < demoHistoryDays*demoTestsPerDay; k++ {
			at := now.Add(-time.Duration(k) * 24 * time.Hour / demoTestsPerDay)
			hour := float64(at.Hour())
			down := 230 + 15*math.Sin(2*math.Pi*hour/24+float64(n)) - float64(n) + 4*noise.NormFloat64()
			if n == 1 && !at.Before(dipFrom) && at.Before(dipTo) {
				down *= 0.6
			}
			ping := 11 + float64(n%4) + 1.5*noise.Float64()
			if n == 2 && (at.Equal(now.Add(-120*time.Hour)) || at.Equal(now.Add(-72*time.Hour))) {
				ping = 95
			}
			if err := add(vocab.KindMeasurement, map[string]any{"id": fmt.Sprintf("demo-speed-%02d-%03d", n, k),
				"type": "SpeedtestMeasurement", "client_uuid": uuids[n], "created_at": at.Format(time.RFC3339),
				"client_type": "automator", "client_version": demoProbeVersion, "success": true,
				"study": map[string]any{"subject": "ookla", "study_id": "ookla-default", "study_name": "ookla default"},
				"statistic_values": map[string]any{"download": math.Round(down*10) / 10, "upload": 38 + float64((k+n)%5),
					"ping": math.Round(ping*10) / 10}}); err != nil {
				return err
			}
		}
	}
	if _, err := st.InsertDocuments(ctx, owner, docs); err != nil {
		return fmt.Errorf("demo: load the speed test history: %w", err)
	}
	return nil
}
