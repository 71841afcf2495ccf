package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/clientapi"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/limits/ratelimit"
	"github.com/fleetgraph/fleetgraph/resolvers"
	"github.com/fleetgraph/fleetgraph/server"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// probeMeasurement is a measurement document of client cu.
func probeMeasurement(id, cu, typ, subject string) map[string]any {
	return map[string]any{"id": id, "type": typ, "client_uuid": cu, "created_at": "2026-11-20T10:00:00Z",
		"study":            map[string]any{"subject": subject, "study_id": subject + "-study"},
		"statistic_values": map[string]any{"rtt_avg": 12.5}}
}

// register posts a registration and returns the answer.
func register(t *testing.T, e *apitest.Env, body any) *apitest.Response {
	t.Helper()
	return e.Probe(t, http.MethodPost, "/register", "", body)
}

func TestClientAPIRegister(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "probe-register")
	key := o.NewRegistrationKey(t, store.RegistrationKeyInput{NumRegistrationsLeft: apitest.Ptr(int64(3)),
		UsageLimitDays: apitest.Ptr(int64(30))})

	t.Run("a registration key makes a client and a secret shown once", func(t *testing.T) {
		r := register(t, e, map[string]any{"registration_key": key.RegistrationKey, "label": "Kitchen probe",
			"tags": []string{"berlin", "fiber"}, "client_type": "automator", "client_version": "3.5.0"})
		body := apitest.Object(t, apitest.WantStatus(t, r, http.StatusCreated))
		secret, _ := body["secret"].(string)
		cu, _ := body["client_uuid"].(string)
		if !strings.HasPrefix(secret, "probe-") || uuid.Validate(cu) != nil {
			t.Fatalf("want a probe- secret and a UUID: %s", r.Raw)
		}
		until := apitest.Time(t, body["report_until"])
		if d := time.Until(until); d < 29*24*time.Hour || d > 31*24*time.Hour {
			t.Errorf("report_until %v is not 30 days ahead", until)
		}
		// Only the digest is stored.
		var digest []byte
		if err := e.Store.Pool().QueryRow(context.Background(),
			`SELECT secret_digest FROM clients WHERE uuid = $1`, cu).Scan(&digest); err != nil {
			t.Fatal(err)
		}
		if want := sha256.Sum256([]byte(secret)); !bytes.Equal(digest, want[:]) {
			t.Errorf("stored digest %x is not the secret's SHA-256", digest)
		}
		// The client is in the admin API, with its label, tags, key and software.
		c := apitest.Object(t, apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, "/clients/"+cu, o.Key, nil), 200, "client"))
		if c["label"] != "Kitchen probe" || fmt.Sprint(c["tags"]) != "[berlin fiber]" ||
			c["last_client_type"] != "automator" || c["last_client_version"] != "3.5.0" {
			t.Errorf("client as registered: %v", c)
		}
		if rk := apitest.Object(t, c["registration_key"]); apitest.Int(t, rk["id"]) != key.ID || apitest.Int(t, rk["num_registrations_left"]) != 2 {
			t.Errorf("registration key of the client: %v (want id %d with 2 left)", rk, key.ID)
		}
		// The secret works, and shows nowhere again.
		r = e.Probe(t, http.MethodGet, "/config", secret, nil)
		apitest.WantStatus(t, r, http.StatusOK)
		if bytes.Contains(r.Raw, []byte(secret)) {
			t.Errorf("check-in shows the secret")
		}
	})

	t.Run("label and tags are optional", func(t *testing.T) {
		r := register(t, e, map[string]any{"registration_key": key.RegistrationKey})
		body := apitest.Object(t, apitest.WantStatus(t, r, http.StatusCreated))
		if body["label"] != nil {
			t.Errorf("label %v, want null", body["label"])
		}
	})

	t.Run("a label another client carries is a 409 and takes no registration", func(t *testing.T) {
		before := regKeyLeft(t, e, key.ID)
		r := register(t, e, map[string]any{"registration_key": key.RegistrationKey, "label": "  KITCHEN probe "})
		apitest.WantMessage(t, r, http.StatusConflict, "label")
		if after := regKeyLeft(t, e, key.ID); after != before {
			t.Errorf("registrations left %d -> %d after a refused registration", before, after)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		future := o.NewRegistrationKey(t, store.RegistrationKeyInput{ValidFrom: apitest.Ptr(time.Now().Add(time.Hour))})
		expired := o.NewRegistrationKey(t, store.RegistrationKeyInput{ValidFrom: apitest.Ptr(time.Now().Add(-2 * time.Hour)),
			ValidUntil: apitest.Ptr(time.Now().Add(-time.Hour))})
		used := o.NewRegistrationKey(t, store.RegistrationKeyInput{NumRegistrationsLeft: apitest.Ptr(int64(0))})
		cases := []struct {
			name    string
			body    any
			status  int
			mention string
		}{
			{"unknown key", map[string]any{"registration_key": "no-such-key"}, 401, "unknown registration key"},
			{"key not yet valid", map[string]any{"registration_key": future.RegistrationKey}, 403, "valid from"},
			{"key expired", map[string]any{"registration_key": expired.RegistrationKey}, 403, "expired"},
			{"no registrations left", map[string]any{"registration_key": used.RegistrationKey}, 403, "no registrations left"},
			{"no key", map[string]any{"label": "x"}, 422, "Validation failed"},
			{"unknown field", map[string]any{"registration_key": key.RegistrationKey, "colour": "red"}, 422, "colour"},
			{"tags not strings", map[string]any{"registration_key": key.RegistrationKey, "tags": []int{1}}, 422, "tags"},
			{"blank label", map[string]any{"registration_key": key.RegistrationKey, "label": " "}, 422, "label"},
			{"not an object", `["x"]`, 400, "JSON object"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				apitest.WantMessage(t, register(t, e, c.body), c.status, c.mention)
			})
		}
		r := e.Probe(t, http.MethodPost, "/register", o.Key, map[string]any{"registration_key": key.RegistrationKey})
		apitest.WantMessage(t, r, http.StatusBadRequest, "registration_key")
		if n := regKeyLeft(t, e, used.ID); n != 0 {
			t.Errorf("a used-up key has %d left", n)
		}
	})

	t.Run("an unlimited key stays unlimited", func(t *testing.T) {
		unlimited := o.NewRegistrationKey(t, store.RegistrationKeyInput{})
		for range 3 {
			apitest.WantStatus(t, register(t, e, map[string]any{"registration_key": unlimited.RegistrationKey}), http.StatusCreated)
		}
		if n := regKeyLeft(t, e, unlimited.ID); n != -1 {
			t.Errorf("unlimited key has %d left after 3 registrations, want -1", n)
		}
	})
}

func regKeyLeft(t *testing.T, e *apitest.Env, id int64) int64 {
	t.Helper()
	var n int64
	if err := e.Store.Pool().QueryRow(context.Background(),
		`SELECT num_registrations_left FROM registration_keys WHERE id = $1`, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestClientAPIRegisterRace(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "probe-race")
	key := o.NewRegistrationKey(t, store.RegistrationKeyInput{NumRegistrationsLeft: apitest.Ptr(int64(10))})
	const n = 50
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = register(t, e, map[string]any{"registration_key": key.RegistrationKey}).Status
		}()
	}
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[http.StatusCreated] != 10 || count[http.StatusForbidden] != 40 {
		t.Errorf("50 concurrent registrations on a key with 10 left: %v, want 10×201 and 40×403", count)
	}
	if left := regKeyLeft(t, e, key.ID); left != 0 {
		t.Errorf("registrations left %d, want 0", left)
	}
	var clients int
	_ = e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM clients WHERE registration_key_id = $1`, key.ID).Scan(&clients)
	if clients != 10 {
		t.Errorf("%d clients registered with the key, want 10", clients)
	}

	// The server's pool lets a few registrations overlap; a store with a
	// connection per registration lets all 50 race for the key at once.
	st, err := store.Open(context.Background(), e.DatabaseURL, store.Options{MaxConns: n})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key = o.NewRegistrationKey(t, store.RegistrationKeyInput{NumRegistrationsLeft: apitest.Ptr(int64(10))})
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = st.RegisterProbe(context.Background(), store.Registration{RegistrationKey: key.RegistrationKey,
				UUID: uuid.NewString(), SecretDigest: auth.Digest(auth.NewKey(auth.KindProbe))})
		}()
	}
	close(start)
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, store.ErrRegistrationsExhausted):
			t.Errorf("registration failed otherwise: %v", err)
		}
	}
	if left := regKeyLeft(t, e, key.ID); ok != 10 || left != 0 {
		t.Errorf("50 registrations on 50 connections: %d registered, %d left; want 10 and 0", ok, left)
	}
}

func TestClientAPICheckIn(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "probe-checkin")
	key := o.NewRegistrationKey(t, store.RegistrationKeyInput{})
	p := o.NewProbe(t, key.RegistrationKey)
	def := o.NewConfig(t, "public", "default web", true)
	sched := o.NewConfig(t, "automator", "nightly", true)

	get := func(t *testing.T, path string, header http.Header) *apitest.Response {
		t.Helper()
		if header == nil {
			header = http.Header{}
		}
		header.Set("X-API-KEY", p.Secret)
		return apitest.Send(t, nil, apitest.Request(t, http.MethodGet, e.URL+clientapi.Base+path, header, nil))
	}

	r := get(t, "/config", http.Header{"X-Client-Type": {"automator"}, "X-Client-Version": {"3.6.1"}})
	body := apitest.Object(t, apitest.WantStatus(t, r, http.StatusOK))
	pc, sc := apitest.Object(t, body["public_config"]), apitest.Object(t, body["schedule_config"])
	if apitest.Int(t, pc["id"]) != def || apitest.Int(t, sc["id"]) != sched || body["client_uuid"] != p.UUID {
		t.Fatalf("delivered configs: %s", r.Raw)
	}
	etag := r.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	c := apitest.Object(t, apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, "/clients/"+p.UUID, o.Key, nil), 200, "client"))
	if c["last_client_type"] != "automator" || c["last_client_version"] != "3.6.1" || c["last_seen_at"] == nil {
		t.Errorf("check-in did not record the client: %v", c)
	}
	seen := apitest.Time(t, c["last_seen_at"])

	t.Run("If-None-Match with the ETag is a 304, and still a check-in", func(t *testing.T) {
		time.Sleep(10 * time.Millisecond)
		r := get(t, "/config?client_version=3.6.2", http.Header{"If-None-Match": {etag}})
		if r.Status != http.StatusNotModified || len(r.Raw) != 0 {
			t.Fatalf("status %d body %q, want 304 without a body", r.Status, r.Raw)
		}
		c := apitest.Object(t, apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, "/clients/"+p.UUID, o.Key, nil), 200, "client"))
		if !apitest.Time(t, c["last_seen_at"]).After(seen) || c["last_client_version"] != "3.6.2" {
			t.Errorf("304 check-in did not record the client: %v", c)
		}
		if r := get(t, "/config", http.Header{"If-None-Match": {`"other", W/` + etag}}); r.Status != http.StatusNotModified {
			t.Errorf("a list naming the weak ETag: %d", r.Status)
		}
		if r := get(t, "/config", http.Header{"If-None-Match": {`"other"`}}); r.Status != http.StatusOK {
			t.Errorf("another ETag: %d", r.Status)
		}
	})

	t.Run("an assigned config changes the answer and its ETag", func(t *testing.T) {
		assigned := o.NewConfig(t, "public", "assigned", false)
		e.SQL(t, `UPDATE clients SET public_config_id = $1 WHERE id = $2`, assigned, p.ID)
		r := get(t, "/config", http.Header{"If-None-Match": {etag}})
		body := apitest.Object(t, apitest.WantStatus(t, r, http.StatusOK))
		if apitest.Int(t, apitest.Object(t, body["public_config"])["id"]) != assigned || r.Header.Get("ETag") == etag {
			t.Errorf("after assigning config %d: ETag %s (was %s): %s", assigned, r.Header.Get("ETag"), etag, r.Raw)
		}
	})

	t.Run("the published version is delivered, with the credential's secret; a draft is not", func(t *testing.T) {
		o.NewCredential(t, apitest.CredentialOpts{Service: "ookla", Username: apitest.Ptr("probe-user"), Password: "s3cret"})
		study := map[string]any{"id": "speed-1", "type": "SPEEDTEST", "subject": "ookla", "params": map[string]any{}}
		published := map[string]any{"version": 1, "studies": []any{study}, "credentials": map[string]any{"ookla": map[string]any{}}}
		draft := map[string]any{"version": 1, "studies": []any{}}
		id := o.NewConfigWith(t, apitest.ConfigOpts{Name: "versioned", Published: published, Draft: draft})
		e.SQL(t, `UPDATE clients SET public_config_id = $1 WHERE id = $2`, id, p.ID)
		r := get(t, "/config", nil)
		pc := apitest.Object(t, apitest.Object(t, apitest.WantStatus(t, r, http.StatusOK))["public_config"])
		data := apitest.Object(t, pc["data"])
		creds := apitest.Object(t, apitest.Object(t, data["credentials"])["ookla"])
		if apitest.Int(t, pc["id"]) != id || apitest.Int(t, pc["revision"]) != 1 || len(apitest.List(t, data["studies"])) != 1 ||
			creds["username"] != "probe-user" || creds["password"] != "s3cret" {
			t.Fatalf("delivered: %s", r.Raw)
		}
		cfg := apitest.Object(t, apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, fmt.Sprintf("/public_configs/%d", id), o.Key, nil), 200, "public_config"))
		if strings.Contains(string(mustJSON(t, cfg)), "s3cret") {
			t.Errorf("the API answer carries the stored secret: %v", cfg)
		}
	})

	t.Run("a client whose configs are not managed gets none", func(t *testing.T) {
		q := o.NewProbe(t, key.RegistrationKey)
		e.SQL(t, `UPDATE clients SET config_managed = false WHERE id = $1`, q.ID)
		body := apitest.Object(t, apitest.WantStatus(t, e.Probe(t, http.MethodGet, "/config", q.Secret, nil), http.StatusOK))
		if body["config_managed"] != false || body["public_config"] != nil || body["schedule_config"] != nil {
			t.Errorf("unmanaged client: %v", body)
		}
	})

	t.Run("bad parameters are 400s", func(t *testing.T) {
		apitest.Want400(t, get(t, "/config?client_type=web", http.Header{"X-Client-Type": {"automator"}}), "client_type")
		apitest.Want400(t, get(t, "/config?colour=red", nil), "colour")
		apitest.Want400(t, get(t, "/config?client_version="+strings.Repeat("9", 101), nil), "client_version")
	})

	t.Run("a disabled probe is refused", func(t *testing.T) {
		q := o.NewProbe(t, key.RegistrationKey)
		e.SQL(t, `UPDATE clients SET disabled_at = now(), disabled_reason = 'stolen' WHERE id = $1`, q.ID)
		apitest.WantMessage(t, e.Probe(t, http.MethodGet, "/config", q.Secret, nil), http.StatusForbidden, "stolen")
	})
}

func TestClientAPIReport(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "probe-report")
	capability := o.NewCapability(t, store.CapabilityInput{
		AllowedMeasurementTypes:      []string{"VideoMeasurement", "WebMeasurement"},
		ForbiddenMeasurementSubjects: []string{"netflix"},
	})
	key := o.NewRegistrationKey(t, store.RegistrationKeyInput{CapabilityID: capability.ID})
	p := o.NewProbe(t, key.RegistrationKey)
	exportKey, _ := o.NewKey(t, apitest.KeyOpts{Kind: auth.KindExport})
	id := func(n string) string { return p.UUID[:8] + "-" + n }

	t.Run("each document is checked: per-item refusals name the rule", func(t *testing.T) {
		docs := []any{
			probeMeasurement(id("ok"), p.UUID, "VideoMeasurement", "youtube"),
			probeMeasurement(id("netflix"), p.UUID, "VideoMeasurement", "netflix"),
			probeMeasurement(id("speed"), p.UUID, "SpeedtestMeasurement", "ookla"),
			probeMeasurement(id("other"), uuid.NewString(), "VideoMeasurement", "youtube"),
			map[string]any{"id": id("bad"), "client_uuid": p.UUID},
		}
		r := e.Probe(t, http.MethodPost, "/measurements", p.Secret, docs)
		body := apitest.Object(t, apitest.WantStatus(t, r, http.StatusMultiStatus))
		if apitest.Int(t, body["accepted"]) != 1 || apitest.Int(t, body["refused"]) != 4 {
			t.Errorf("counts: %s", r.Raw)
		}
		want := map[int64]string{1: "forbidden_measurement_subjects", 2: "allowed_measurement_types", 3: "client_uuid", 4: "document"}
		for _, it := range apitest.List(t, body["errors"]) {
			item := apitest.Object(t, it)
			i := apitest.Int(t, item["index"])
			if item["rule"] != want[i] || apitest.Int(t, item["status"]) != 422 || item["message"] == "" {
				t.Errorf("item %d: %v, want rule %s with a 422", i, item, want[i])
			}
			delete(want, i)
		}
		if len(want) > 0 {
			t.Errorf("no refusal for items %v", want)
		}
		// The accepted one is in the export API and search at once, as sent.
		ids := apitest.IDs(t, e.Do(t, http.MethodGet, server.ExportBase+"/measurements?client_uuid="+p.UUID, exportKey, nil))
		if fmt.Sprint(ids) != "["+id("ok")+"]" {
			t.Errorf("export lists %v, want only %s", ids, id("ok"))
		}
		search := e.Admin(t, http.MethodPost, "/measurements/search", o.Key, map[string]any{
			"body": map[string]any{"query": map[string]any{"term": map[string]any{"client_uuid": p.UUID}}}})
		if hits := apitest.HitIDs(t, search); fmt.Sprint(hits) != "["+id("ok")+"]" {
			t.Errorf("search finds %v", hits)
		}
		stored, err := e.Store.Document(context.Background(), o.ID, vocab.KindMeasurement, id("ok"))
		raw, _ := json.Marshal(docs[0])
		if err != nil {
			t.Fatal(err)
		}
		apitest.SameJSON(t, "stored document", stored.Doc, string(raw))
	})

	t.Run("reporting again is idempotent on the id", func(t *testing.T) {
		docs := []any{probeMeasurement(id("ok"), p.UUID, "VideoMeasurement", "youtube")}
		before, err := e.Store.Document(context.Background(), o.ID, vocab.KindMeasurement, id("ok"))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			body := apitest.Object(t, apitest.WantStatus(t, e.Probe(t, http.MethodPost, "/measurements", p.Secret, docs), 200))
			if apitest.Int(t, body["accepted"]) != 1 {
				t.Errorf("report again: %v", body)
			}
		}
		var n int
		_ = e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM documents WHERE data_owner_id = $1 AND doc_id = $2`,
			o.ID, id("ok")).Scan(&n)
		after, _ := e.Store.Document(context.Background(), o.ID, vocab.KindMeasurement, id("ok"))
		if n != 1 || after.Version != before.Version {
			t.Errorf("%d copies stored, version %d -> %d (an unchanged document keeps its version)", n, before.Version, after.Version)
		}
		// A changed copy replaces it.
		changed := probeMeasurement(id("ok"), p.UUID, "VideoMeasurement", "youtube")
		changed["statistic_values"] = map[string]any{"rtt_avg": 99}
		apitest.WantStatus(t, e.Probe(t, http.MethodPost, "/measurements", p.Secret, []any{changed}), 200)
		if after, _ := e.Store.Document(context.Background(), o.ID, vocab.KindMeasurement, id("ok")); after.Version == before.Version ||
			!bytes.Contains(after.Doc, []byte(`"rtt_avg": 99`)) {
			t.Errorf("changed copy not stored: %s", after.Doc)
		}
	})

	t.Run("concurrent reports are all stored, each answered for its own documents", func(t *testing.T) {
		const probes = 30
		var wg sync.WaitGroup
		for i := range probes {
			q := o.NewProbe(t, key.RegistrationKey)
			wg.Add(1)
			go func() {
				defer wg.Done()
				docs := []any{}
				for j := range 20 {
					docs = append(docs, probeMeasurement(fmt.Sprintf("%s-%d", q.UUID, j), q.UUID, "WebMeasurement", "website"))
				}
				// One refused document at a position of its own per probe.
				docs[i%20] = probeMeasurement(fmt.Sprintf("%s-bad", q.UUID), q.UUID, "GamingMeasurement", "x")
				r := e.Probe(t, http.MethodPost, "/measurements", q.Secret, docs)
				if r.Status != http.StatusMultiStatus {
					t.Errorf("probe %d: %d %s", i, r.Status, r.Raw)
					return
				}
				body := apitest.Object(t, r.JSON)
				errs := apitest.List(t, body["errors"])
				if apitest.Int(t, body["accepted"]) != 19 || len(errs) != 1 || apitest.Int(t, apitest.Object(t, errs[0])["index"]) != int64(i%20) {
					t.Errorf("probe %d: %s", i, r.Raw)
				}
				var n int
				_ = e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM documents WHERE client_uuid = $1`, q.UUID).Scan(&n)
				if n != 19 {
					t.Errorf("probe %d: %d documents stored, want 19", i, n)
				}
			}()
		}
		wg.Wait()
	})

	t.Run("NDJSON of every other kind", func(t *testing.T) {
		kinds := map[string]map[string]any{
			"/client_reports":        {"id": id("cr"), "type": "P1203ClientReport", "measurement_id": id("ok")},
			"/event_bundles":         {"id": id("eb"), "type": "VideoEventBundle", "measurement_id": id("ok")},
			"/network_requests":      {"id": id("nr"), "measurement_id": id("ok"), "url": "https://example.com"},
			"/user_feedbacks":        {"id": id("uf"), "rating": 4},
			"/system_status_records": {"id": id("ss"), "run_id": "r1", "cpu_average_percent": 42.5},
		}
		for path, doc := range kinds {
			doc["client_uuid"], doc["created_at"] = p.UUID, "2026-11-20T10:00:01Z"
			line, _ := json.Marshal(doc)
			nd := "\n" + string(line) + "\r\n\n"
			body := apitest.Object(t, apitest.WantStatus(t, e.Probe(t, http.MethodPost, path, p.Secret, nd), 200))
			if apitest.Int(t, body["accepted"]) != 1 {
				t.Errorf("%s: %v", path, body)
			}
		}
		ids := apitest.IDs(t, e.Do(t, http.MethodGet, server.ExportBase+"/client_reports?client_uuid="+p.UUID, exportKey, nil))
		if fmt.Sprint(ids) != "["+id("cr")+"]" {
			t.Errorf("client reports exported: %v", ids)
		}
		// An NDJSON line that is not JSON is refused by line.
		r := e.Probe(t, http.MethodPost, "/client_reports", p.Secret, "{\"oops\n")
		item := apitest.Object(t, apitest.List(t, apitest.Object(t, apitest.WantStatus(t, r, 422))["errors"])[0])
		if apitest.Int(t, item["line"]) != 1 || item["rule"] != "document" {
			t.Errorf("bad line: %v", item)
		}
	})

	t.Run("gzip bodies are read", func(t *testing.T) {
		raw, _ := json.Marshal([]any{probeMeasurement(id("gz"), p.UUID, "WebMeasurement", "website")})
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(raw)
		_ = zw.Close()
		req := apitest.Request(t, http.MethodPost, e.URL+clientapi.Base+"/measurements",
			http.Header{"X-API-KEY": {p.Secret}, "Content-Encoding": {"gzip"}}, buf.Bytes())
		apitest.WantStatus(t, apitest.Send(t, nil, req), http.StatusOK)
	})

	t.Run("another client's document id is a per-item 409", func(t *testing.T) {
		q := o.NewProbe(t, key.RegistrationKey)
		r := e.Probe(t, http.MethodPost, "/measurements", q.Secret, []any{probeMeasurement(id("ok"), q.UUID, "VideoMeasurement", "youtube")})
		item := apitest.Object(t, apitest.List(t, apitest.Object(t, apitest.WantStatus(t, r, 422))["errors"])[0])
		if apitest.Int(t, item["status"]) != 409 || item["rule"] != "id" {
			t.Errorf("taking another client's id: %v", item)
		}
		stored, _ := e.Store.Document(context.Background(), o.ID, vocab.KindMeasurement, id("ok"))
		if *stored.ClientUUID != p.UUID {
			t.Errorf("the document now belongs to %s", *stored.ClientUUID)
		}
	})

	t.Run("whole-request limits", func(t *testing.T) {
		apitest.Want400(t, e.Probe(t, http.MethodPost, "/measurements", p.Secret, "\n \n"), "no documents")
		apitest.Want400(t, e.Probe(t, http.MethodPost, "/measurements", p.Secret, `[{"id": 1},`), "malformed JSON array")
		many := make([]any, limits.MaxReportDocuments+1)
		for i := range many {
			many[i] = map[string]any{}
		}
		apitest.Want400(t, e.Probe(t, http.MethodPost, "/measurements", p.Secret, many), "at most 1000")
		huge := `[{"id": "x", "pad": "` + strings.Repeat("a", limits.MaxProbeBodyBytes) + `"}]`
		apitest.WantMessage(t, e.Probe(t, http.MethodPost, "/measurements", p.Secret, huge), http.StatusRequestEntityTooLarge, "too large")
	})

	t.Run("a disabled probe, or one past its usage limit, reports nothing", func(t *testing.T) {
		doc := []any{probeMeasurement(uuid.NewString(), "", "VideoMeasurement", "youtube")}
		q := o.NewProbe(t, key.RegistrationKey)
		doc[0].(map[string]any)["client_uuid"] = q.UUID
		e.SQL(t, `UPDATE clients SET disabled_at = now() WHERE id = $1`, q.ID)
		apitest.WantMessage(t, e.Probe(t, http.MethodPost, "/measurements", q.Secret, doc), http.StatusForbidden, "disabled")

		limited := o.NewRegistrationKey(t, store.RegistrationKeyInput{UsageLimitDays: apitest.Ptr(int64(1))})
		l := o.NewProbe(t, limited.RegistrationKey)
		doc[0].(map[string]any)["client_uuid"] = l.UUID
		apitest.WantStatus(t, e.Probe(t, http.MethodPost, "/measurements", l.Secret, doc), http.StatusOK)
		e.SQL(t, `UPDATE clients SET report_until = now() - interval '1 second' WHERE id = $1`, l.ID)
		// Written in another session: the server that cached the probe
		// learns it by notification.
		apitest.Eventually(t, "the usage limit written in another session is not seen", func() bool {
			return e.Probe(t, http.MethodPost, "/measurements", l.Secret, doc).Status == http.StatusForbidden
		})
		apitest.WantMessage(t, e.Probe(t, http.MethodPost, "/measurements", l.Secret, doc), http.StatusForbidden, "usage limit")
		// It may still check in, and learns when its reports ended.
		body := apitest.Object(t, apitest.WantStatus(t, e.Probe(t, http.MethodGet, "/config", l.Secret, nil), http.StatusOK))
		if body["report_until"] == nil {
			t.Errorf("check-in past the usage limit: %v", body)
		}
	})
}

func TestClientAPIKeyKinds(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "probe-kinds")
	p := o.NewProbe(t, o.NewRegistrationKey(t, store.RegistrationKeyInput{}).RegistrationKey)
	exportKey, _ := o.NewKey(t, apitest.KeyOpts{Kind: auth.KindExport})
	analyticsKey, _ := o.NewKey(t, apitest.KeyOpts{Kind: auth.KindClientAnalytics})
	doc := []any{probeMeasurement(uuid.NewString(), p.UUID, "VideoMeasurement", "youtube")}

	t.Run("admin and export keys do not work on the client API", func(t *testing.T) {
		for _, k := range []string{o.Key, exportKey} {
			apitest.WantMessage(t, e.Probe(t, http.MethodGet, "/config", k, nil), http.StatusForbidden, "probe secret")
			apitest.WantMessage(t, e.Probe(t, http.MethodPost, "/measurements", k, doc), http.StatusForbidden, "client_analytics key")
		}
		apitest.WantMessage(t, e.Probe(t, http.MethodGet, "/config", analyticsKey, nil), http.StatusForbidden, "probe secret")
	})

	t.Run("probe secrets work nowhere else", func(t *testing.T) {
		apitest.WantRefused(t, e.Admin(t, http.MethodGet, "/clients", p.Secret, nil), http.StatusForbidden, p.Secret)
		apitest.WantRefused(t, e.Do(t, http.MethodGet, server.ExportBase+"/clients", p.Secret, nil), http.StatusForbidden, p.Secret)
		if g := e.GraphQL(t, p.Secret, `{ clients { id } }`, nil); g.Status != http.StatusForbidden || g.Code() != "FORBIDDEN" {
			t.Errorf("GraphQL with a probe secret: %d %s", g.Status, g.Raw)
		}
	})

	t.Run("unknown paths and methods answer in JSON", func(t *testing.T) {
		apitest.WantNotFound(t, e.Probe(t, http.MethodGet, "/nothing", p.Secret, nil), "unknown client API path")
		apitest.WantError(t, e.Probe(t, http.MethodGet, "/register", "", nil), http.StatusMethodNotAllowed, "GET /register")
	})

	t.Run("missing and unknown secrets are 401s", func(t *testing.T) {
		for _, k := range []string{"", "probe-nope", p.Secret + "x"} {
			apitest.WantRefused(t, e.Probe(t, http.MethodGet, "/config", k, nil), http.StatusUnauthorized, k)
			apitest.WantRefused(t, e.Probe(t, http.MethodPost, "/measurements", k, doc), http.StatusUnauthorized, k)
		}
	})

	t.Run("an analytics key reports for web clients, not for probes", func(t *testing.T) {
		web := uuid.NewString()
		docs := []any{
			probeMeasurement(uuid.NewString(), web, "WebMeasurement", "website"),
			probeMeasurement(uuid.NewString(), p.UUID, "WebMeasurement", "website"),
		}
		r := e.Probe(t, http.MethodPost, "/measurements", analyticsKey, docs)
		body := apitest.Object(t, apitest.WantStatus(t, r, http.StatusMultiStatus))
		item := apitest.Object(t, apitest.List(t, body["errors"])[0])
		if apitest.Int(t, item["index"]) != 1 || item["rule"] != "client_uuid" {
			t.Errorf("analytics key naming a probe: %s", r.Raw)
		}
		c := apitest.Object(t, apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, "/clients/"+web, o.Key, nil), 200, "client"))
		if c["type"] != "web" {
			t.Errorf("web client made as %v", c["type"])
		}
		e.SQL(t, `UPDATE clients SET disabled_at = now() WHERE uuid = $1`, web)
		r = e.Probe(t, http.MethodPost, "/measurements", analyticsKey, docs[:1])
		item = apitest.Object(t, apitest.List(t, apitest.Object(t, apitest.WantStatus(t, r, 422))["errors"])[0])
		if apitest.Int(t, item["status"]) != 403 || item["rule"] != "client_disabled" {
			t.Errorf("disabled web client: %s", r.Raw)
		}
	})
}

// TestAnalyticsKeyNewClientsBounded: the public client analytics key (in
// every browser) naming new client UUIDs creates at most the data owner's
// bound of clients per period (license units; the probe's attack made
// 3,000 with 3 × 1,000 reports): past it the reports are refused with 429
// naming the bound, fast; the data owner gets one
// client_analytics.clients_limited event, the operator a counter; clients
// made before still report; another data owner's bound is its own.
func TestAnalyticsKeyNewClientsBounded(t *testing.T) {
	e := apitest.Get(t)
	const bound = 5
	base := e.StartServerWith(t, func(r *resolvers.Resolver) {
		r.RateLimits = &ratelimit.Limiter{Store: e.Store, WebClients: ratelimit.Rate{Limit: bound, Period: time.Hour}}
	})
	o, other := e.NewOwner(t, "webbound"), e.NewOwner(t, "webbound-other")
	key, _ := o.NewKey(t, apitest.KeyOpts{Kind: auth.KindClientAnalytics})
	otherKey, _ := other.NewKey(t, apitest.KeyOpts{Kind: auth.KindClientAnalytics})
	report := func(t *testing.T, key string, clients []string) *apitest.Response {
		t.Helper()
		docs := make([]any, len(clients))
		for i, c := range clients {
			docs[i] = probeMeasurement(uuid.NewString(), c, "WebMeasurement", "website")
		}
		start := time.Now()
		r := apitest.DoAt(t, base, http.MethodPost, clientapi.Base+"/measurements", key, docs)
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("answered after %s", took)
		}
		return r
	}
	newUUIDs := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = uuid.NewString()
		}
		return out
	}
	webClients := func(ownerID int64) (n int) {
		if err := e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM clients WHERE data_owner_id = $1 AND type = 'web'`,
			ownerID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	refusedBefore := apitest.Scrape(t, base+"/metrics").Value("fleetgraph_analytics_clients_refused_total", nil)

	first := newUUIDs(2 * bound)
	body := apitest.Object(t, apitest.WantStatus(t, report(t, key, first), http.StatusMultiStatus))
	if apitest.Int(t, body["accepted"]) != bound || apitest.Int(t, body["refused"]) != bound {
		t.Errorf("first report: %v, want %d accepted and %d refused", body, bound, bound)
	}
	for _, it := range apitest.List(t, body["errors"]) {
		item := apitest.Object(t, it)
		if apitest.Int(t, item["status"]) != http.StatusTooManyRequests || !strings.Contains(item["message"].(string), "5 new clients per 1h0m0s") {
			t.Errorf("refusal %v, want a 429 naming the bound", item)
		}
	}
	for range 2 { // the rest of the attack: every new client refused
		r := report(t, key, newUUIDs(2*bound))
		apitest.WantStatus(t, r, http.StatusTooManyRequests)
	}
	if n := webClients(o.ID); n != bound {
		t.Errorf("%d web clients made, want the bound %d", n, bound)
	}
	var made []string
	rows, _ := e.Store.Pool().Query(context.Background(), `SELECT uuid::text FROM clients WHERE data_owner_id = $1`, o.ID)
	made, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(made) != bound {
		t.Fatalf("clients %v %v", made, err)
	}
	apitest.WantStatus(t, report(t, key, made), http.StatusOK) // the clients made report on

	evs := eventsOf(t, e, o.ID, 0)
	wantEventTypes(t, evs, store.EventWebClientsLimited)
	if refused := apitest.Scrape(t, base+"/metrics").Value("fleetgraph_analytics_clients_refused_total", nil) - refusedBefore; refused != 5*bound {
		t.Errorf("metric counted %v refused clients, want %d", refused, 5*bound)
	}

	apitest.WantStatus(t, report(t, otherKey, newUUIDs(bound)), http.StatusOK) // another data owner's bound is its own
	if n := webClients(other.ID); n != bound {
		t.Errorf("the other data owner has %d web clients, want %d", n, bound)
	}

	t.Run("a data owner's own bound, in its settings", func(t *testing.T) {
		own := e.NewOwner(t, "webbound-own")
		ownKey, _ := own.NewKey(t, apitest.KeyOpts{Kind: auth.KindClientAnalytics})
		settings := func(r *apitest.Response) map[string]any {
			return apitest.Object(t, apitest.WantEnvelope(t, r, http.StatusOK, "settings"))
		}
		s := settings(apitest.DoAt(t, base, http.MethodGet, server.AdminBase+"/data_owner/settings", own.Key, nil))
		if s["analytics_new_clients"] != nil || apitest.Int(t, s["analytics_new_clients_default"]) != bound ||
			s["analytics_new_clients_period"] != "1h0m0s" {
			t.Errorf("settings %v, want no own bound, the server's %d per 1h0m0s", s, bound)
		}
		s = settings(apitest.DoAt(t, base, http.MethodPut, server.AdminBase+"/data_owner/settings", own.Key,
			map[string]any{"analytics_new_clients": 2}))
		if apitest.Int(t, s["analytics_new_clients"]) != 2 {
			t.Errorf("settings after PUT: %v", s)
		}
		r := report(t, ownKey, newUUIDs(bound))
		body := apitest.Object(t, apitest.WantStatus(t, r, http.StatusMultiStatus))
		if apitest.Int(t, body["accepted"]) != 2 || !strings.Contains(string(r.Raw), "2 new clients per 1h0m0s") {
			t.Errorf("own bound of 2: %s", r.Raw)
		}
		for _, bad := range []any{-1, 1_000_001, "many"} {
			r := apitest.DoAt(t, base, http.MethodPut, server.AdminBase+"/data_owner/settings", own.Key, map[string]any{"analytics_new_clients": bad})
			if r.Status != http.StatusUnprocessableEntity && r.Status != http.StatusBadRequest {
				t.Errorf("analytics_new_clients %v: %d %s", bad, r.Status, r.Raw)
			}
		}
		s = settings(apitest.DoAt(t, base, http.MethodPut, server.AdminBase+"/data_owner/settings", own.Key,
			map[string]any{"analytics_new_clients": nil}))
		if s["analytics_new_clients"] != nil {
			t.Errorf("settings after null: %v", s)
		}
		apitest.WantStatus(t, report(t, ownKey, newUUIDs(bound-2)), http.StatusOK) // the server's bound again: 3 more
	})
}
