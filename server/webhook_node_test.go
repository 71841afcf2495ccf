package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/server"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
	"github.com/fleetgraph/fleetgraph/webhooks"
)

// TestWebhookSignaturesNode: a receiver written with the Standard Webhooks
// reference library (npm standardwebhooks 1.1.1, tools/webhooks) gets the
// deliveries of an import, a resolution, a registration and a test-send,
// and verifies every signature (and refuses a tampered body).
func TestWebhookSignaturesNode(t *testing.T) {
	e := apitest.Get(t)
	e.StartWebhooks(t, fastSchedule)
	o := e.NewOwner(t, "wh-node")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	w := newWebhook(t, e, o, map[string]any{"url": fmt.Sprintf("http://127.0.0.1:%d/fleet", port),
		"event_types": []string{store.EventAnomalyCreated, store.EventAnomalyResolved, store.EventClientRegistered}})
	rk := o.NewRegistrationKey(t, store.RegistrationKeyInput{})
	c := o.NewClient(t, store.NewClient{})

	errc := make(chan error, 1)
	go func() { errc <- makeEvents(e, o, apitest.Int(t, w["id"]), port, rk.RegistrationKey, c.UUID) }()
	out := apitest.RunNode(t, "webhooks", 2*time.Minute, []string{fmt.Sprintf("PORT=%d", port), "EXPECT=4",
		"SECRET=" + w["secret"].(string)}, "receive.mjs")
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	var res struct {
		Verified int      `json:"verified"`
		Types    []string `json:"types"`
		IDs      []string `json:"ids"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("node printed %s: %v", out, err)
	}
	slices.Sort(res.Types)
	want := []string{store.EventAnomalyCreated, store.EventAnomalyResolved, store.EventClientRegistered, webhooks.EventTest}
	if res.Verified != 4 || !slices.Equal(res.Types, want) {
		t.Fatalf("verified %d deliveries of %v, want 4 of %v", res.Verified, res.Types, want)
	}
}

// makeEvents waits for the receiver on port, then makes four deliveries of
// the webhook: an imported anomaly event, its resolution, a probe's
// registration and a test-send.
func makeEvents(e *apitest.Env, o *apitest.Owner, webhookID int64, port int, regKey, clientUUID string) error {
	ctx := context.Background()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			conn.Close()
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the node receiver did not listen: %w", err)
		}
	}
	id := "node-rule::spike::1740787200"
	raw, _ := json.Marshal(anomEvent(id, clientUUID, "new"))
	doc, err := store.ParseDocument(vocab.KindAnomalyEvent, raw)
	if err != nil {
		return err
	}
	if _, err := e.Store.InsertDocuments(ctx, o.ID, []store.Document{doc}); err != nil {
		return err
	}
	if _, err := e.Store.ResolveAnomalyEvents(ctx, o.ID, []string{id}); err != nil {
		return err
	}
	if _, err := e.Store.RegisterProbe(ctx, store.Registration{RegistrationKey: regKey, UUID: uuid.NewString(),
		SecretDigest: auth.Digest(auth.NewKey(auth.KindProbe))}); err != nil {
		return err
	}
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s%s/webhooks/%d/test", e.URL, server.AdminBase, webhookID), strings.NewReader(""))
	req.Header.Set("X-API-KEY", o.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("test-send: %d", resp.StatusCode)
	}
	return nil
}
