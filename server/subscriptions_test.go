package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

const eventsSubscription = `subscription($types: [String!]) { events(types: $types) { id type timestamp data } }`

// sseEvent is one "next" payload of an SSE subscription (or its errors).
type sseEvent struct {
	Data struct {
		Events struct {
			ID, Type, Timestamp string
			Data                map[string]any
		}
	}
	Errors []apitest.GraphQLError
}

// subscribeSSE subscribes over SSE with key and answers what arrives; the
// stream ends with the test.
func subscribeSSE(t *testing.T, e *apitest.Env, key string, types []string) <-chan sseEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	body, _ := json.Marshal(map[string]any{"query": eventsSubscription, "variables": map[string]any{"types": types}})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.URL+"/graphql", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-API-KEY", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("SSE subscription: status %d, %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	out := make(chan sseEvent, 100)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev sseEvent
			if err := json.Unmarshal([]byte(line), &ev); err == nil {
				out <- ev
			}
		}
	}()
	return out
}

// waitSubscribers waits until the hub holds n more subscriptions than
// before (the subscriptions are registered, so nothing emitted after is
// missed).
func waitSubscribers(t *testing.T, e *apitest.Env, before, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for e.Stream.Subscribers() < before+n {
		if time.Now().After(deadline) {
			t.Fatalf("subscriptions open: %d, want %d", e.Stream.Subscribers(), before+n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func next(t *testing.T, ch <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no event within 30s")
	}
	return sseEvent{}
}

// A viewer's SSE subscription sees its data owner's anomaly events as they
// are imported and resolved, only of the types it asked for; another data
// owner's subscriber sees none of them, only its own.
func TestSubscriptionSSE(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "sub-sse")
	other := e.NewOwner(t, "sub-sse-other")
	viewer, _ := o.NewKey(t, apitest.KeyOpts{UserRole: model.RoleViewer})
	c := o.NewClient(t, store.NewClient{Tags: []string{"lab"}})
	oc := other.NewClient(t, store.NewClient{})

	before := e.Stream.Subscribers()
	mine := subscribeSSE(t, e, viewer, []string{store.EventAnomalyCreated, store.EventAnomalyResolved})
	theirs := subscribeSSE(t, e, other.Key, nil)
	waitSubscribers(t, e, before, 2)

	id := "rule-7::spike::1740787200"
	o.InsertDocuments(t, "anomaly_event", anomEvent(id, c.UUID, "new"))
	apitest.WantStatus(t, e.Admin(t, http.MethodPatch, "/anomaly_events/resolve", o.Key, map[string]any{"anomaly_ids": []string{id}}), http.StatusOK)
	other.InsertDocuments(t, "anomaly_event", anomEvent("rule-8::shift::1740787200", oc.UUID, "new"))

	for _, want := range []string{store.EventAnomalyCreated, store.EventAnomalyResolved} {
		ev := next(t, mine)
		if len(ev.Errors) > 0 || ev.Data.Events.Type != want || ev.Data.Events.ID == "" || ev.Data.Events.Timestamp == "" {
			t.Fatalf("event %+v, want %s", ev, want)
		}
		anomaly, _ := ev.Data.Events.Data["anomaly_event"].(map[string]any)
		if want == store.EventAnomalyCreated && (anomaly == nil || anomaly["id"] != id) {
			t.Fatalf("data of %s: %v", want, ev.Data.Events.Data)
		}
	}
	// The other owner's first event is its own: it was told after ours.
	ev := next(t, theirs)
	anomaly, _ := ev.Data.Events.Data["anomaly_event"].(map[string]any)
	if ev.Data.Events.Type != store.EventAnomalyCreated || anomaly == nil || anomaly["id"] != "rule-8::shift::1740787200" {
		t.Fatalf("another data owner's subscriber got %+v", ev)
	}
}

// Unknown event types and keys without a role are refused; a key holds at
// most limits.SubscriptionsPerKey subscriptions.
func TestSubscriptionRefusals(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "sub-refuse")
	ev := next(t, subscribeSSE(t, e, o.Key, []string{"no.such_type"}))
	if len(ev.Errors) == 0 || !strings.Contains(ev.Errors[0].Message, "no.such_type") {
		t.Fatalf("unknown type: %+v", ev)
	}
	before := e.Stream.Subscribers()
	for range 20 {
		subscribeSSE(t, e, o.Key, nil)
	}
	waitSubscribers(t, e, before, 20)
	ev = next(t, subscribeSSE(t, e, o.Key, nil))
	if len(ev.Errors) == 0 || ev.Errors[0].Extensions["code"] != "TOO_MANY_REQUESTS" {
		t.Fatalf("21st subscription of a key: %+v", ev)
	}
}

// An event committed while the process's listening connection is down
// (its notification lost) still reaches a subscriber: when the listener is
// back, each subscriber gets the events after the last one it had.
func TestSubscriptionCatchesUpAfterListenerLoss(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "sub-resync")
	c := o.NewClient(t, store.NewClient{})
	before := e.Stream.Subscribers()
	events := subscribeSSE(t, e, o.Key, []string{store.EventClientDisabled, store.EventClientOffline})
	waitSubscribers(t, e, before, 1)

	emit(t, e, o.ID, store.NewEvent{Type: store.EventClientOffline, ClientID: &c.ID, Data: map[string]any{"offline_threshold_minutes": 60}})
	if ev := next(t, events); ev.Data.Events.Type != store.EventClientOffline {
		t.Fatalf("first event %+v", ev)
	}
	// One transaction ends the listener's connection and writes an event:
	// its notification goes out when nobody listens (the listener comes
	// back after a second at the earliest).
	ctx := context.Background()
	tx, err := e.Store.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var ended bool
	if err := tx.QueryRow(ctx, `SELECT bool_or(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = 'fleetgraph listener'`).Scan(&ended); err != nil || !ended {
		t.Fatalf("ending the listener: %v, %v", ended, err)
	}
	if err := e.Store.Emit(ctx, tx, o.ID, store.NewEvent{Type: store.EventClientDisabled, ClientID: &c.ID,
		Data: map[string]any{"reason": "while nobody listened"}}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	ev := next(t, events)
	if ev.Data.Events.Type != store.EventClientDisabled || ev.Data.Events.Data["reason"] != "while nobody listened" {
		t.Fatalf("after the listener came back: %+v", ev)
	}
}
