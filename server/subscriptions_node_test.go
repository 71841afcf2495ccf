package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// The graphql-ws client (npm graphql-ws 6.4.2 over ws 8.23.0, pinned in
// tools/graphql-ws) subscribes over WebSocket with the key in its
// connection_init payload and receives its data owner's events as they
// happen; another data owner's subscriber receives only its own; a bad key
// is refused.
func TestSubscriptionGraphQLWS(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "sub-ws")
	other := e.NewOwner(t, "sub-ws-other")
	viewer, _ := o.NewKey(t, apitest.KeyOpts{UserRole: model.RoleViewer})
	c := o.NewClient(t, store.NewClient{})
	oc := other.NewClient(t, store.NewClient{})
	id, otherID := "rule-5::spike::1740787200", "rule-6::shift::1740787200"

	before := e.Stream.Subscribers()
	triggered := make(chan struct{})
	go func() {
		defer close(triggered)
		deadline := time.Now().Add(60 * time.Second)
		for e.Stream.Subscribers() < before+2 {
			if time.Now().After(deadline) {
				return // the Node side times out and reports
			}
			time.Sleep(20 * time.Millisecond)
		}
		o.InsertDocuments(t, "anomaly_event", anomEvent(id, c.UUID, "new"))
		e.Admin(t, http.MethodPatch, "/anomaly_events/resolve", o.Key, map[string]any{"anomaly_ids": []string{id}})
		other.InsertDocuments(t, "anomaly_event", anomEvent(otherID, oc.UUID, "new"))
	}()
	ws := "ws" + strings.TrimPrefix(e.URL, "http") + "/graphql"
	out := apitest.RunNode(t, "graphql-ws", 90*time.Second, []string{"FLEETGRAPH_WS_URL=" + ws,
		"KEY_A=" + viewer, "KEY_B=" + other.Key, "WANT_A=2", "WANT_B=1"}, "subscribe.mjs")
	<-triggered

	type event struct {
		ID, Type, Timestamp string
		Data                struct {
			AnomalyEvent struct{ ID string } `json:"anomaly_event"`
		}
	}
	var got struct {
		Refused string
		A, B    []event
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node output %s: %v", out, err)
	}
	t.Logf("a bad key: %s", got.Refused)
	if !strings.HasPrefix(got.Refused, "4403") {
		t.Errorf("a bad key: %q, want closed with 4403 (Forbidden)", got.Refused)
	}
	if len(got.A) != 2 || got.A[0].Type != store.EventAnomalyCreated || got.A[0].Data.AnomalyEvent.ID != id ||
		got.A[1].Type != store.EventAnomalyResolved || got.A[0].ID == "" || got.A[0].Timestamp == "" {
		t.Errorf("the data owner's subscriber got %+v", got.A)
	}
	// B's first event is its own, told after A's two: it saw none of A's.
	if len(got.B) != 1 || got.B[0].Type != store.EventAnomalyCreated || got.B[0].Data.AnomalyEvent.ID != otherID {
		t.Errorf("another data owner's subscriber got %+v", got.B)
	}
}
