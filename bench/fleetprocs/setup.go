package fleetprocs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/fleetgraph/fleetgraph/store"
)

func openLog(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
}

// setUp migrates, makes the data owner and its keys, starts the receiver
// and the processes, makes the registration key and the webhook, opens a
// subscription on every process and waits until each has an event.
func (r *run) setUp(ctx context.Context) error {
	r.start = time.Now()
	if _, err := r.fleetgraph(ctx, "migrate"); err != nil {
		return err
	}
	slug := fmt.Sprintf("procs%d", time.Now().UnixNano()%1_000_000_000)
	out, err := r.fleetgraph(ctx, "bootstrap", "--data-owner", slug, "--email", "ops@"+slug+".example", "--json")
	if err != nil {
		return err
	}
	var keys struct {
		API    string `json:"api_key"`
		Export string `json:"export_api_key"`
	}
	if err := json.Unmarshal(out, &keys); err != nil || keys.API == "" || keys.Export == "" {
		return fmt.Errorf("bootstrap printed no keys: %s", out)
	}
	r.admin, r.export = keys.API, keys.Export
	if err := r.db.QueryRow(ctx, `SELECT id FROM data_owners WHERE slug = $1`, slug).Scan(&r.owner); err != nil {
		return fmt.Errorf("the data owner: %w", err)
	}
	if r.rec, err = newReceiver(r.cfg.ReceiverAddr); err != nil {
		return err
	}
	for i, addr := range r.cfg.Addrs {
		r.procs = append(r.procs, &process{n: i + 1, addr: addr})
	}
	started := make([]error, len(r.procs))
	var wg sync.WaitGroup
	for i, p := range r.procs {
		wg.Go(func() { started[i] = r.startProcess(ctx, p) })
	}
	wg.Wait()
	if err := errors.Join(started...); err != nil {
		return err
	}
	for _, p := range r.procs {
		r.logf("process %d up on %s (pid %d)", p.n, p.addr, p.pid())
	}
	base := "http://" + r.procs[0].addr
	var capability struct {
		Capability struct {
			ID int64 `json:"id"`
		} `json:"capability"`
	}
	if err := r.send(ctx, http.MethodPost, base+"/client_admin_api/v1/capabilities", r.admin, map[string]any{
		"name": "procs", "allowed_measurement_types": []string{"VideoMeasurement", "WebMeasurement"}}, http.StatusCreated, &capability); err != nil {
		return fmt.Errorf("capability: %w", err)
	}
	var key struct {
		Data struct {
			Create struct {
				RegistrationKey string `json:"registrationKey"`
			} `json:"registrationKeyCreate"`
		} `json:"data"`
	}
	q := `mutation($in: RegistrationKeyCreateInput!) { registrationKeyCreate(input: $in) { registrationKey } }`
	if err := r.send(ctx, http.MethodPost, base+"/graphql", r.admin, map[string]any{"query": q, "variables": map[string]any{
		"in": map[string]any{"capabilityId": capability.Capability.ID, "numRegistrationsLeft": 1_000_000}}}, http.StatusOK, &key); err != nil {
		return fmt.Errorf("registration key: %w", err)
	}
	if r.regKey = key.Data.Create.RegistrationKey; r.regKey == "" {
		return errors.New("registrationKeyCreate answered no key")
	}
	var hook map[string]any
	if err := r.send(ctx, http.MethodPost, base+"/client_admin_api/v1/webhooks", r.admin, map[string]any{
		"name": "procs", "url": r.rec.url, "event_types": store.EventTypes}, http.StatusCreated, &hook); err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	r.subs = &subscriptions{}
	for _, p := range r.procs {
		if err := r.subs.open(ctx, p, r.admin); err != nil {
			return err
		}
	}
	// A first event through process 1: once every subscription has it,
	// each is surely listening, and every event from it on is owed to all.
	if _, _, err := r.register(ctx, r.procs[0]); err != nil {
		return fmt.Errorf("first registration: %w", err)
	}
	for deadline := time.Now().Add(30 * time.Second); !r.subs.allHaveOne(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			return errors.New("a subscription had no event 30 s after the first registration")
		}
	}
	if err := r.settleSubscriptions(ctx); err != nil {
		return err
	}
	r.logf("%d processes up, a subscription on each, the webhook receiver on %s", len(r.procs), r.rec.url)
	return nil
}

// send sends body as JSON (or as it is, for []byte) with key and decodes
// the answer into out unless its status is not want.
func (r *run) send(ctx context.Context, method, url, key string, body any, want int, out any) error {
	status, got, err := r.do(ctx, method, url, key, body)
	if err != nil {
		return err
	}
	if status != want {
		return fmt.Errorf("status %d: %.300s", status, got)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(got, out)
}

// do sends one request: status 0 and an error when no answer came.
func (r *run) do(ctx context.Context, method, url, key string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		raw, ok := body.([]byte)
		if !ok {
			var err error
			if raw, err = json.Marshal(body); err != nil {
				return 0, nil, err
			}
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-KEY", key)
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, got, nil
}

// settleSubscriptions gives the subscriptions that have their first event
// the events they are owed: those above the data owner's last event now.
func (r *run) settleSubscriptions(ctx context.Context) error {
	var seq int64
	if err := r.db.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM events WHERE data_owner_id = $1`, r.owner).Scan(&seq); err != nil {
		return fmt.Errorf("last event: %w", err)
	}
	r.subs.settle(seq)
	return nil
}
