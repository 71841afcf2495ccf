package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/limits"
)

// One WebSocket connection holds at most limits.SubscriptionsPerConnection
// subscriptions: one more is answered with a TOO_MANY_REQUESTS error,
// the others stay open.
func TestSubscriptionLimitPerConnection(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "sub-conn")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.URL, "http")+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	type message struct {
		ID      string         `json:"id,omitempty"`
		Type    string         `json:"type"`
		Payload map[string]any `json:"payload,omitempty"`
	}
	if err := wsjson.Write(ctx, conn, message{Type: "connection_init", Payload: map[string]any{"apiKey": o.Key}}); err != nil {
		t.Fatal(err)
	}
	var ack message
	if err := wsjson.Read(ctx, conn, &ack); err != nil || ack.Type != "connection_ack" {
		t.Fatalf("connection_init answered %+v, %v", ack, err)
	}
	before := e.Stream.Subscribers()
	for i := range limits.SubscriptionsPerConnection + 1 {
		if err := wsjson.Write(ctx, conn, message{ID: fmt.Sprint(i), Type: "subscribe",
			Payload: map[string]any{"query": `subscription { events { id } }`}}); err != nil {
			t.Fatal(err)
		}
	}
	for {
		var m struct {
			ID      string          `json:"id"`
			Type    string          `json:"type"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := wsjson.Read(ctx, conn, &m); err != nil {
			t.Fatalf("no refusal of subscription %d: %v", limits.SubscriptionsPerConnection, err)
		}
		if m.Type == "ping" {
			continue
		}
		// The subscriptions start concurrently, so any one of them is the
		// one over the limit. A resolver's refusal comes as a result with
		// errors (or an error message): either names the code.
		if (m.Type != "error" && m.Type != "next") || !strings.Contains(string(m.Payload), "TOO_MANY_REQUESTS") {
			t.Fatalf("message %s %s %s, want a subscription refused", m.ID, m.Type, m.Payload)
		}
		break
	}
	waitSubscribers(t, e, before, limits.SubscriptionsPerConnection)
	if got := e.Stream.Subscribers() - before; got != limits.SubscriptionsPerConnection {
		t.Errorf("subscriptions open on the connection: %d, want %d", got, limits.SubscriptionsPerConnection)
	}
}
