package apitest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The analyzer's test data (issue 24's "Done when" scenario): a month of a
// probe's hourly measurements, optionally with a 40 % download shift and
// three stalling spikes.

// AnalyzerStart is when ProbeMonth's month starts.
var AnalyzerStart = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)

// The anomalies ProbeMonth injects: download at 60 % from ShiftFrom to
// ShiftUntil, a minute of stalling at each of StallSpikes.
var (
	ShiftFrom, ShiftUntil = AnalyzerStart.Add(12 * 24 * time.Hour), AnalyzerStart.Add(13 * 24 * time.Hour)
	StallSpikes           = []time.Time{AnalyzerStart.Add(5*24*time.Hour + 18*time.Hour + 30*time.Minute),
		AnalyzerStart.Add(15*24*time.Hour + 20*time.Hour + 30*time.Minute), AnalyzerStart.Add(22*24*time.Hour + 19*time.Hour + 30*time.Minute)}
)

// ProbeMonth is 30 days of hourly speedtests (subject ookla: download with
// a daily cycle and 3 % noise) and video measurements (of subject, on the
// half hour: stalling time log-normal around 150 ms) of client, in time
// order; inject adds the shift and the spikes. The same seed makes the
// same documents; ids are "st-<client[:8]>-<hour>" and "vid-...".
func ProbeMonth(client, subject string, seed uint64, inject bool) []map[string]any {
	rnd := rand.New(rand.NewPCG(seed, 7))
	var docs []map[string]any
	for h := 0; h < 30*24; h++ {
		at := AnalyzerStart.Add(time.Duration(h) * time.Hour)
		down := 100 * (1 + 0.1*math.Sin(2*math.Pi*float64(at.Hour())/24)) * (1 + 0.03*rnd.NormFloat64())
		if inject && !at.Before(ShiftFrom) && at.Before(ShiftUntil) {
			down *= 0.6
		}
		docs = append(docs, AnalyzerDoc(fmt.Sprintf("st-%s-%d", client[:8], h), client, "SpeedtestMeasurement", "ookla", at,
			map[string]any{"download": math.Round(down*10) / 10}))
		vat := at.Add(30 * time.Minute)
		stall := math.Round(math.Exp(5 + 0.5*rnd.NormFloat64())) // a heavy right tail
		if inject && slices.Contains(StallSpikes, vat) {
			stall = 60000
		}
		docs = append(docs, AnalyzerDoc(fmt.Sprintf("vid-%s-%d", client[:8], h), client, "VideoMeasurement", subject, vat,
			map[string]any{"total_stalling_time": stall}))
	}
	return docs
}

// AnalyzerDoc is a measurement document with statistic_values values.
func AnalyzerDoc(id, client, typ, subject string, at time.Time, values map[string]any) map[string]any {
	return map[string]any{"id": id, "client_uuid": client, "type": typ, "study": map[string]any{"subject": subject},
		"created_at": at.Format(time.RFC3339), "statistic_values": values}
}

// AnalyzerIdle waits until the data owner's analyzer inbox is empty and no
// analysis job of it is left (failing the test after limit).
func (e *Env) AnalyzerIdle(t testing.TB, ownerID int64, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		var n int
		err := e.Store.Pool().QueryRow(context.Background(), `SELECT (SELECT count(*) FROM analyzer_inbox WHERE data_owner_id = $1)
			+ (SELECT count(*) FROM river_job WHERE kind = 'analyze_client' AND (args->>'data_owner_id')::bigint = $1
				AND state IN ('available', 'running', 'scheduled', 'retryable', 'pending'))`, ownerID).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the analyzer left %d inbox rows and jobs after %s", n, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
