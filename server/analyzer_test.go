package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/detector"
	"github.com/fleetgraph/fleetgraph/importer"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// The analyzer's "Done when" scenario (issue 24), end to end: a month of
// two probes' measurements imported (lines shuffled), one probe with a
// 40 % download shift and three stalling spikes.

// episodes reads the data owner's anomaly events through the search API.
func episodes(t *testing.T, e *apitest.Env, key string) map[string]map[string]any {
	t.Helper()
	r := e.Admin(t, http.MethodPost, "/anomaly_events/search", key, map[string]any{
		"body": map[string]any{"query": map[string]any{"match_all": map[string]any{}}, "size": 1000}, "source_only": true})
	out := map[string]map[string]any{}
	for _, d := range apitest.List(t, apitest.WantStatus(t, r, 200)) {
		doc := apitest.Object(t, d)
		out[doc["id"].(string)] = doc
	}
	return out
}

func episodeIDs(m map[string]map[string]any) []string {
	out := make([]string, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func TestAnalyzerDoneWhen(t *testing.T) {
	e := apitest.Get(t)
	det := detector.New(detector.Config{Store: e.Store, SweepEvery: -1})
	e.StartWebhooks(t, fastSchedule, det)
	o := e.NewOwner(t, "analyzer-done")
	viewer, _ := o.NewKey(t, apitest.KeyOpts{UserRole: model.RoleViewer})
	capability := o.NewCapability(t, store.CapabilityInput{})
	regKey := o.NewRegistrationKey(t, store.RegistrationKeyInput{CapabilityID: capability.ID})
	a, b := o.NewProbe(t, regKey.RegistrationKey), o.NewProbe(t, regKey.RegistrationKey)

	all, speed := apitest.NewReceiver(t), apitest.NewReceiver(t)
	types := []string{store.EventAnomalyCreated, store.EventAnomalyResolved}
	newWebhook(t, e, o, map[string]any{"url": all.URL, "event_types": types})
	newWebhook(t, e, o, map[string]any{"url": speed.URL, "event_types": types,
		"filters": map[string]any{"measurement_types": []string{"SpeedtestMeasurement"}}})
	before := e.Stream.Subscribers()
	sub := subscribeSSE(t, e, viewer, types)
	waitSubscribers(t, e, before, 1)

	// The import: both probes' month, lines shuffled.
	docs := append(apitest.ProbeMonth(a.UUID, "youtube", 1, true), apitest.ProbeMonth(b.UUID, "netflix", 2, false)...)
	rand.New(rand.NewPCG(3, 3)).Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
	var file bytes.Buffer
	for _, d := range docs {
		line, _ := json.Marshal(d)
		file.Write(append(line, '\n'))
	}
	sum, err := importer.Run(context.Background(), e.Store, &file, importer.Options{OwnerID: o.ID, Kind: vocab.KindMeasurement, Batch: 200})
	if err != nil || sum.Inserted != len(docs) {
		t.Fatalf("import: %+v %v", sum, err)
	}
	e.AnalyzerIdle(t, o.ID, time.Minute)

	got := episodes(t, e, viewer)
	var shifts, spikes []map[string]any
	for _, ep := range got {
		if ep["client_uuid"] != a.UUID {
			t.Errorf("an episode of the untouched probe: %v", ep)
			continue
		}
		switch {
		case ep["rule_id"] == "speedtest-download" && ep["detection_pass"] == "shift":
			shifts = append(shifts, ep)
		case ep["rule_id"] == "video-stalling" && ep["detection_pass"] == "spike":
			spikes = append(spikes, ep)
		default:
			t.Errorf("an episode nothing injected: %v", ep)
		}
	}
	if len(shifts) != 1 || len(spikes) != 3 || len(got) != 4 {
		t.Fatalf("episodes %v, want exactly one download shift and three stalling spikes", episodeIDs(got))
	}
	sh := shifts[0]
	if first := apitest.Time(t, sh["first_seen_at"]); first.Before(apitest.ShiftFrom) || first.After(apitest.ShiftFrom.Add(6*time.Hour)) ||
		sh["severity"] != "critical" || sh["status"] != "resolved" || sh["metric"] != "download" || sh["subject"] != "ookla" ||
		sh["measurement_type"] != "SpeedtestMeasurement" || sh["baseline"] == nil || sh["band_low"] == nil || sh["band_high"] == nil {
		t.Errorf("shift episode %v", sh)
	}
	if resolved := apitest.Time(t, sh["resolved_at"]); resolved.Before(apitest.ShiftUntil) || resolved.After(apitest.ShiftUntil.Add(12*time.Hour)) {
		t.Errorf("the shift resolved at %v; the data recovered at %v", resolved, apitest.ShiftUntil)
	}
	sort.Slice(spikes, func(i, j int) bool { return spikes[i]["first_seen_at"].(string) < spikes[j]["first_seen_at"].(string) })
	for i, sp := range spikes {
		want := fmt.Sprintf("video-stalling::spike::%d", apitest.StallSpikes[i].Unix())
		if sp["id"] != want || sp["severity"] != "critical" || sp["status"] != "resolved" || fmt.Sprint(sp["value"]) != "60000" ||
			fmt.Sprint(sp["measurement_ids"]) != fmt.Sprintf("[vid-%s-%d]", a.UUID[:8], int(apitest.StallSpikes[i].Sub(apitest.AnalyzerStart)/time.Hour)) {
			t.Errorf("spike %d: %v, want id %s, critical, resolved, value 60000", i, sp, want)
		}
	}

	// Webhooks and the subscription: created and resolved of each.
	n, speedtests := len(got), 2*(len(got)-len(spikes))
	all.WaitFor(t, 2*n, 30*time.Second)
	speed.WaitFor(t, speedtests, 30*time.Second)
	told := map[string]int{}
	for range 2 * n {
		ev := next(t, sub)
		told[ev.Data.Events.Type]++
	}
	if told[store.EventAnomalyCreated] != n || told[store.EventAnomalyResolved] != n {
		t.Errorf("subscription events %v, want %d of each", told, n)
	}
	time.Sleep(200 * time.Millisecond)
	if got := len(speed.Got()); got != speedtests {
		t.Errorf("the webhook filtered to speedtests got %d deliveries, want %d (the download episodes')", got, speedtests)
	}

	// fleetgraph analyze reproduces the same episodes, ids included.
	if _, err := detector.Analyze(context.Background(), e.Store, o.ID, detector.AnalyzeOptions{}); err != nil {
		t.Fatal(err)
	}
	again := episodes(t, e, viewer)
	if !slices.Equal(episodeIDs(again), episodeIDs(got)) {
		t.Errorf("analyze made %v, the import %v", episodeIDs(again), episodeIDs(got))
	}
	for id, ep := range again {
		if ep["severity"] != got[id]["severity"] || ep["status"] != got[id]["status"] {
			t.Errorf("analyze changed %s: %v, was %v", id, ep, got[id])
		}
	}
	time.Sleep(200 * time.Millisecond)
	if more := len(all.Got()) - 2*n; more != 0 {
		t.Errorf("analyze told %d webhook deliveries more; nothing changed", more)
	}

	// An off override silences the next spike of its scope, reported
	// through the client API; the other probe (another subject) is not
	// silenced.
	apitest.WantStatus(t, e.Admin(t, http.MethodPost, "/anomaly_detection_overrides", o.Key, map[string]any{
		"scope": map[string]any{"subject": "youtube", "measurement_type": "VideoMeasurement", "metric": "total_stalling_time",
			"detection_pass": "spike"}, "level": "off"}), http.StatusCreated)
	late := apitest.AnalyzerStart.Add(30*24*time.Hour + time.Hour)
	apitest.WantStatus(t, e.Probe(t, http.MethodPost, "/measurements", a.Secret, []any{apitest.AnalyzerDoc("late-a", a.UUID,
		"VideoMeasurement", "youtube", late, map[string]any{"total_stalling_time": 60000})}), http.StatusOK)
	apitest.WantStatus(t, e.Probe(t, http.MethodPost, "/measurements", b.Secret, []any{apitest.AnalyzerDoc("late-b", b.UUID,
		"VideoMeasurement", "netflix", late, map[string]any{"total_stalling_time": 60000})}), http.StatusOK)
	e.AnalyzerIdle(t, o.ID, time.Minute)
	after := episodes(t, e, viewer)
	newID := fmt.Sprintf("video-stalling::spike::%d", late.Unix())
	if len(after) != len(got)+1 || after[newID] == nil || after[newID]["client_uuid"] != b.UUID {
		t.Errorf("after the off override: %v, want one new spike of probe B (%s)", episodeIDs(after), newID)
	}

	// A detected episode resolved by hand stays resolved while the
	// analyzer extends it.
	r := apitest.Object(t, apitest.WantStatus(t, e.Admin(t, http.MethodPatch, "/anomaly_events/resolve", o.Key,
		map[string]any{"anomaly_ids": []string{newID}}), http.StatusOK))
	if apitest.Int(t, r["updated"]) != 1 {
		t.Fatalf("resolve answered %v", r)
	}
	apitest.WantStatus(t, e.Probe(t, http.MethodPost, "/measurements", b.Secret, []any{apitest.AnalyzerDoc("later-b", b.UUID,
		"VideoMeasurement", "netflix", late.Add(time.Hour), map[string]any{"total_stalling_time": 60000})}), http.StatusOK)
	e.AnalyzerIdle(t, o.ID, time.Minute)
	if final := episodes(t, e, viewer); len(final) != len(after) || final[newID]["status"] != "resolved" {
		t.Errorf("after resolving %s by hand and another spike: %v (status %v)", newID, episodeIDs(final), final[newID]["status"])
	}
}
