package server_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

// eventsOf lists the data owner's events after seq.
func eventsOf(t *testing.T, e *apitest.Env, ownerID, after int64) []store.Event {
	t.Helper()
	evs, err := e.Store.EventsAfter(context.Background(), ownerID, after, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func eventTypes(evs []store.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

func wantEventTypes(t *testing.T, evs []store.Event, want ...string) {
	t.Helper()
	got := eventTypes(evs)
	if len(got) != len(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events %v, want %v", got, want)
		}
	}
}

func TestEventsAnomalies(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "ev-anom")
	other := e.NewOwner(t, "ev-anom-other")
	tag := []string{"berlin"}
	c := o.NewClient(t, store.NewClient{Tags: tag})
	id := "rule-1::spike::1740787200"
	doc := anomEvent(id, c.UUID, "new")
	doc["severity"] = "critical"
	o.InsertDocuments(t, "anomaly_event", doc)
	evs := eventsOf(t, e, o.ID, 0)
	wantEventTypes(t, evs, store.EventAnomalyCreated)
	ev := evs[0]
	if ev.Severity == nil || *ev.Severity != "critical" || ev.MeasurementType == nil || *ev.MeasurementType != "VideoMeasurement" ||
		len(ev.ClientTags) != 1 || ev.ClientTags[0] != "berlin" {
		t.Fatalf("filter columns: %+v", ev)
	}
	var data struct {
		AnomalyEvent map[string]any `json:"anomaly_event"`
		Client       map[string]any `json:"client"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil || data.AnomalyEvent["id"] != id || data.Client["uuid"] != c.UUID {
		t.Fatalf("data %s (%v)", ev.Data, err)
	}

	// The same document again tells nothing; resolving tells once.
	o.InsertDocuments(t, "anomaly_event", doc)
	r := e.Admin(t, "PATCH", "/anomaly_events/resolve", o.Key, map[string]any{"anomaly_ids": []string{id}})
	apitest.WantStatus(t, r, 200)
	r = e.Admin(t, "PATCH", "/anomaly_events/resolve", o.Key, map[string]any{"anomaly_ids": []string{id}})
	apitest.WantStatus(t, r, 200)
	wantEventTypes(t, eventsOf(t, e, o.ID, ev.Seq), store.EventAnomalyResolved)

	// An import that moves an event from new to resolved tells it too.
	id2 := "rule-2::shift::1740787300"
	o.InsertDocuments(t, "anomaly_event", anomEvent(id2, c.UUID, "new"))
	o.InsertDocuments(t, "anomaly_event", anomEvent(id2, c.UUID, "resolved"))
	wantEventTypes(t, eventsOf(t, e, o.ID, ev.Seq), store.EventAnomalyResolved, store.EventAnomalyCreated,
		store.EventAnomalyResolved)
	if n := len(eventsOf(t, e, other.ID, 0)); n != 0 {
		t.Fatalf("another data owner has %d events", n)
	}
}

func TestEventsStudyFailures(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "ev-study")
	c := o.NewClient(t, store.NewClient{})
	m := func(id string, success bool) map[string]any {
		return map[string]any{"id": id, "type": "NetworkMeasurement", "client_uuid": c.UUID,
			"created_at": "2026-11-08T13:41:49.629Z", "study": map[string]any{"subject": "icmpping", "study_id": "ping-gateway"},
			"success": success, "error": map[string]any{"code": "TIMEOUT"}}
	}
	o.InsertDocuments(t, "measurement", m(uuid.NewString(), true), m("failed-1", false))
	o.InsertDocuments(t, "measurement", m("failed-1", false)) // stored before: nothing new
	evs := eventsOf(t, e, o.ID, 0)
	wantEventTypes(t, evs, store.EventStudyExecutionFailed)
	if evs[0].MeasurementType == nil || *evs[0].MeasurementType != "NetworkMeasurement" {
		t.Fatalf("measurement type %v", evs[0].MeasurementType)
	}
	// Detection off: no event.
	e.SQL(t, `UPDATE data_owners SET study_failure_detection_enabled = false WHERE id = $1`, o.ID)
	o.InsertDocuments(t, "measurement", m("failed-2", false))
	wantEventTypes(t, eventsOf(t, e, o.ID, 0), store.EventStudyExecutionFailed)
}

func TestEventsClients(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "ev-clients")
	rk := o.NewRegistrationKey(t, store.RegistrationKeyInput{})
	p := o.NewProbe(t, rk.RegistrationKey)
	evs := eventsOf(t, e, o.ID, 0)
	wantEventTypes(t, evs, store.EventClientRegistered)
	if evs[0].ClientID == nil || *evs[0].ClientID != p.ID {
		t.Fatalf("client %v, want %d", evs[0].ClientID, p.ID)
	}
	seq := evs[0].Seq

	// Not seen within the threshold: offline once; the next check-in: online.
	e.SQL(t, `UPDATE clients SET last_seen_at = now() - interval '2 hours' WHERE id = $1`, p.ID)
	if _, err := e.Store.MarkOfflineClients(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.MarkOfflineClients(context.Background()); err != nil {
		t.Fatal(err)
	}
	apitest.WantStatus(t, e.Probe(t, "GET", "/config", p.Secret, nil), 200)
	apitest.WantStatus(t, e.Probe(t, "GET", "/config", p.Secret, nil), 200)
	wantEventTypes(t, eventsOf(t, e, o.ID, seq), store.EventClientOffline, store.EventClientOnline)

	// Disabling tells once.
	for range 2 {
		if _, err := e.Store.DisableClient(context.Background(), o.ID, store.ClientRef{ID: &p.ID}, "stolen"); err != nil {
			t.Fatal(err)
		}
	}
	wantEventTypes(t, eventsOf(t, e, o.ID, seq), store.EventClientOffline, store.EventClientOnline, store.EventClientDisabled)
}

// TestEventsFromProbeReports: a probe's failed measurement reported through
// the client API tells study_execution.failed, with the probe as client.
func TestEventsFromProbeReports(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "ev-probe")
	rk := o.NewRegistrationKey(t, store.RegistrationKeyInput{})
	p := o.NewProbe(t, rk.RegistrationKey)
	failed := probeMeasurement(uuid.NewString(), p.UUID, "VideoMeasurement", "youtube")
	failed["success"] = false
	failed["error"] = map[string]any{"code": "PLAYER_ERROR"}
	ok := probeMeasurement(uuid.NewString(), p.UUID, "VideoMeasurement", "youtube")
	apitest.WantStatus(t, e.Probe(t, "POST", "/measurements", p.Secret, []any{ok, failed}), 200)
	evs := eventsOf(t, e, o.ID, 0)
	wantEventTypes(t, evs, store.EventClientRegistered, store.EventStudyExecutionFailed)
	if evs[1].ClientID == nil || *evs[1].ClientID != p.ID {
		t.Fatalf("client %v, want the probe %d", evs[1].ClientID, p.ID)
	}
}

// TestEventsHealth: a client's health going critical, then warning, then
// healthy tells client_health.critical, .warning and .recovered with the
// metrics over their thresholds; a healthy first evaluation tells nothing.
func TestEventsHealth(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "ev-health")
	c := o.NewClient(t, store.NewClient{})
	at := time.Now().Add(-10 * time.Minute)
	for i, cpu := range []float64{20, 97, 85, 30} {
		o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: c.UUID, CPU: &cpu, CreatedAt: at.Add(time.Duration(i) * time.Minute)})
	}
	evs := eventsOf(t, e, o.ID, 0)
	wantEventTypes(t, evs, store.EventHealthCritical, store.EventHealthWarning, store.EventHealthRecovered)
	if evs[0].Severity == nil || *evs[0].Severity != "critical" || len(evs[0].HealthMetrics) != 1 || evs[0].HealthMetrics[0] != "cpu" {
		t.Fatalf("critical event %+v", evs[0])
	}
	if evs[2].Severity != nil {
		t.Fatalf("recovered event has severity %v", *evs[2].Severity)
	}
}
