package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/fleetgraph/fleetgraph"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/clientapi"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// demoOwner is the data owner `serve --demo` fills.
const demoOwner = "demo"

// seedDemo bootstraps the demo data owner (with a fresh admin key and export
// key of its org_admin) and, the first time, fills it with a small realistic
// fleet. It returns the keys. One process at a time loads it: another one
// that is loading it into the same database for longer than store.StartWait
// is an error saying so.
func seedDemo(ctx context.Context, st *store.Store, sealer *auth.Sealer, log *slog.Logger) (keys issuedKeys, err error) {
	err = st.Alone(ctx, store.StepDemo, store.StartWait, func() error {
		var b store.Bootstrapped
		keys, b, err = bootstrapKeys(ctx, st, sealer, demoOwner, "demo@fleetgraph.example", "demo")
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		existing, err := st.Isps(ctx, b.DataOwnerID, store.IspFilter{})
		if err != nil {
			return err
		}
		if len(existing) == 0 { // not seeded yet
			log.Info("loading the demo data owner", "data_owner", demoOwner, "database", st.Database())
			if err := fillDemo(ctx, st, sealer, b.DataOwnerID); err != nil {
				return err
			}
		} else {
			log.Info("the demo data owner is loaded already: keeping its data, issuing new keys", "data_owner", demoOwner,
				"database", st.Database())
		}
		return refreshDemoStatus(ctx, st, b.DataOwnerID, time.Now())
	})
	var busy *store.BusyError
	if errors.As(err, &busy) {
		err = fmt.Errorf("%w. Wait until it has finished and start again, or start without --demo", err)
	}
	return keys, err
}

// demoStatusRecords is how many system status records each demo probe has.
const demoStatusRecords = 3

// demoStatus gives demo probe n's cpu, memory and filesystem percent:
// probe-03 is at a warning (memory), probe-07 critical (filesystem, and
// cpu at a warning), probe-12 reports none (unknown), the rest are healthy.
func demoStatus(n int) (cpu, memory, filesystem float64, ok bool) {
	switch n {
	case 3:
		return 35, 86.5, 61, true
	case 7:
		return 91, 48, 97.2, true
	case 12:
		return 0, 0, 0, false
	}
	return float64(8 + 3*n), float64(30 + 2*n), float64(40 + n), true
}

// refreshDemoStatus stores each demo probe's system status records as
// reported in the minutes before now, replacing those of an earlier start
// (same ids), so that fleet health shows its warning and critical probes
// whenever the demo starts, not unknown once the records aged out.
func refreshDemoStatus(ctx context.Context, st *store.Store, owner int64, now time.Time) error {
	uuids, err := demoProbeUUIDs(ctx, st, owner)
	if err != nil {
		return err
	}
	var docs []store.Document
	for n := 1; n <= 12; n++ {
		cpu, memory, fs, ok := demoStatus(n)
		if !ok || uuids[n] == "" {
			continue
		}
		transport := []string{"ethernet", "wifi"}[n%2]
		for k := demoStatusRecords - 1; k >= 0; k-- {
			at := now.Add(-time.Duration(5*k+n) * time.Minute).UTC()
			drift := float64(k) // older records a little lower
			raw := fmt.Sprintf(`{"id": "demo-status-%d-%d", "client_uuid": %q, "created_at": %q, "run_id": "demo-run-%d-%d",
				"study_ids": ["youtube-1080p", "web-top10"], "measurement_ids": [], "platform": "linux-arm64",
				"runtime_scope": "system", "sample_interval_seconds": 10, "started_at": %q, "finished_at": %q,
				"cpu_valid_sample_count": 30, "cpu_average_percent": %.1f, "cpu_max_percent": %.1f, "cpu_final_percent": %.1f,
				"memory_valid_sample_count": 30, "memory_effective_total_bytes": 4294967296,
				"memory_average_percent": %.1f, "memory_max_percent": %.1f, "memory_final_percent": %.1f,
				"filesystems": [{"device": "/dev/mmcblk0p2", "mount": "/", "type": "ext4", "writable": true,
					"valid_sample_count": 30, "total_bytes": 31268536320, "minimum_available_bytes": %d,
					"final_available_bytes": %d, "average_percent": %.1f, "maximum_percent": %.1f, "final_percent": %.1f}],
				"connection_details": [{"id": %d, "type": %q, "client_time": %q, "ip_address": "192.168.1.%d",
					"subnet": "192.168.1.0/24", "ssid": null, "bssid": null, "rssi": null, "signal_strength": null,
					"channel": null, "frequency": null, "link_speed": 1000, "link_speed_rx": null, "link_speed_tx": null}],
				"collection_errors": []}`,
				n, k, uuids[n], at.Format(time.RFC3339), n, k, at.Add(-5*time.Minute).Format(time.RFC3339), at.Format(time.RFC3339),
				cpu-drift, cpu+7-drift, cpu-1-drift, memory-drift, memory+3-drift, memory-drift,
				int64(31268536320*(100-fs-2)/100), int64(31268536320*(100-fs)/100), fs-0.5, fs+0.3, fs,
				100*n+k, transport, at.Format(time.RFC3339), 10+n)
			d, err := store.ParseDocument(vocab.KindSystemStatus, []byte(raw))
			if err != nil {
				return fmt.Errorf("demo: status record of probe %d: %w", n, err)
			}
			docs = append(docs, d)
		}
	}
	if _, err := st.InsertDocuments(ctx, owner, docs); err != nil {
		return fmt.Errorf("demo: load status records: %w", err)
	}
	return nil
}

func fillDemo(ctx context.Context, st *store.Store, sealer *auth.Sealer, owner int64) error {
	s := func(v string) *string { return &v }
	i := func(v int64) *int64 { return &v }
	var isps []int64
	for _, in := range []store.IspInput{
		{Name: s("Deutsche Telekom"), Country: s("DE"), Type: s("fixed")},
		{Name: s("Vodafone"), Country: s("DE"), Type: s("mobile")},
		{Name: s("Starlink"), Country: s("US"), Type: s("satellite")},
		{Name: s("A1 Telekom Austria"), Country: s("AT"), Type: s("fixed")},
	} {
		isp, err := st.CreateIsp(ctx, owner, in)
		if err != nil {
			return err
		}
		isps = append(isps, isp.ID)
	}
	capability, err := st.CreateCapability(ctx, owner, store.CapabilityInput{Name: s("Video and web"),
		AllowedMeasurementTypes: []string{"VideoMeasurement", "WebMeasurement"}, ForbiddenMeasurementSubjects: []string{"netflix"}})
	if err != nil {
		return err
	}
	regKey, err := st.CreateRegistrationKey(ctx, owner, store.RegistrationKeyInput{CapabilityID: capability.ID,
		RegistrationKey: "demo-fleet-2026", Comment: s("field probes"), NumRegistrationsLeft: i(50)})
	if err != nil {
		return err
	}
	cfg, err := demoConfigs(ctx, st, owner)
	if err != nil {
		return err
	}
	uuids, err := registerDemoProbes(ctx, st, sealer, regKey.RegistrationKey)
	if err != nil {
		return err
	}
	var berlin, vienna, all []int64
	for n := 1; n <= 12; n++ {
		c, err := st.ClientByUUID(ctx, owner, uuids[n])
		if err != nil {
			return fmt.Errorf("demo: probe-%02d: %w", n, err)
		}
		id := c.ID
		all = append(all, id)
		from := time.Now().AddDate(0, -n, 0)
		if _, err := st.CreateContract(ctx, owner, store.NewContract{IspID: isps[n%len(isps)], ClientID: id,
			Name: "Home 250", DownloadSpeed: i(250000), UploadSpeed: i(40000), ValidFrom: &from}); err != nil {
			return err
		}
		if n%2 == 0 {
			berlin = append(berlin, id)
		} else {
			vienna = append(vienna, id)
		}
	}
	for name, ids := range map[string][]int64{"Berlin": berlin, "Vienna": vienna} {
		if _, err := st.CreateClientGroup(ctx, owner, name, store.ClientIDs(ids)); err != nil {
			return err
		}
	}
	if err := st.AssignConfig(ctx, owner, store.ConfigPublic, cfg, store.ConfigAssignment{ClientIDs: all}, true); err != nil {
		return fmt.Errorf("demo: assign the config: %w", err)
	}
	_, err = st.CreateServiceCredential(ctx, owner, store.CredentialInput{Name: s("Ookla account"), Service: s("ookla"),
		Username: s("fleet"), SealedPassword: sealer.Seal("demo-password")})
	if err != nil {
		return err
	}
	if err := loadDemoHistory(ctx, st, owner, uuids, time.Now()); err != nil {
		return err
	}
	return loadDemoDocuments(ctx, st, owner, uuids, fleetgraph.Fixtures)
}

// demoProbeVersion is the software the demo probes name at registration
// and check-in.
const demoProbeVersion = "3.6.0"

// registerDemoProbes registers the 12 demo probes through the client API
// (in process, through the same handlers and middleware as a probe's
// requests) with the demo registration key, and checks each in once, so
// that they are probes as a real fleet's are: a registration key, a
// secret (not kept: the demo reports nothing through it), the last check-in
// and the software it named. It answers probe n's UUID at index n.
func registerDemoProbes(ctx context.Context, st *store.Store, sealer *auth.Sealer, regKey string) ([]string, error) {
	api := chi.NewRouter()
	api.Route(clientapi.Base, (&clientapi.API{Store: st, Sealer: sealer, Logger: slog.Default()}).Mount)
	call := func(method, path, secret string, body any, want int) ([]byte, error) {
		var rd io.Reader = http.NoBody
		if body != nil {
			raw, err := json.Marshal(body)
			if err != nil {
				return nil, err
			}
			rd = bytes.NewReader(raw)
		}
		req := httptest.NewRequestWithContext(ctx, method, clientapi.Base+path, rd)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Client-Type", "automator")
		req.Header.Set("X-Client-Version", demoProbeVersion)
		if secret != "" {
			req.Header.Set("X-API-KEY", secret)
		}
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		if rec.Code != want {
			return nil, fmt.Errorf("demo: %s %s answered %d: %s", method, path, rec.Code, rec.Body)
		}
		return rec.Body.Bytes(), nil
	}
	uuids := make([]string, 13)
	for n := 1; n <= 12; n++ {
		raw, err := call(http.MethodPost, "/register", "", map[string]any{"registration_key": regKey,
			"label": fmt.Sprintf("probe-%02d", n), "tags": []string{[]string{"berlin", "vienna"}[n%2], "fiber"},
			"client_type": "automator", "client_version": demoProbeVersion}, http.StatusCreated)
		if err != nil {
			return nil, err
		}
		var reg struct {
			ClientUUID string `json:"client_uuid"`
			Secret     string `json:"secret"`
		}
		if err := json.Unmarshal(raw, &reg); err != nil {
			return nil, fmt.Errorf("demo: registration of probe-%02d: %w", n, err)
		}
		if _, err := call(http.MethodGet, "/config", reg.Secret, nil, http.StatusOK); err != nil {
			return nil, err
		}
		uuids[n] = reg.ClientUUID
	}
	return uuids, nil
}

// demoProbeUUIDs finds the demo probes' UUIDs by their labels (probe n's
// at index n; "" for one that is gone).
func demoProbeUUIDs(ctx context.Context, st *store.Store, owner int64) ([]string, error) {
	clients, err := st.Clients(ctx, owner)
	if err != nil {
		return nil, err
	}
	uuids := make([]string, 13)
	for _, c := range clients {
		var n int
		if c.Label != nil && len(*c.Label) == len("probe-00") {
			if _, err := fmt.Sscanf(*c.Label, "probe-%02d", &n); err == nil && n >= 1 && n <= 12 {
				uuids[n] = c.UUID
			}
		}
	}
	return uuids, nil
}

// fixtureUUID matches the client UUIDs the fixture documents name.
var fixtureUUID = regexp.MustCompile(`"(?:client_uuid|uuid)":"([0-9a-f-]{36})"`)

// loadDemoDocuments loads the fixture set (testdata/<kind>s.ndjson) into
// the demo data owner, its clients renamed to the demo fleet's probes in
// order of appearance, so that the measurements carry the probes' labels,
// tags and groups.
func loadDemoDocuments(ctx context.Context, st *store.Store, owner int64, uuids []string, fixtures fs.FS) error {
	names, err := fs.Glob(fixtures, "testdata/*.ndjson")
	if err != nil {
		return err
	}
	probes := map[string]string{}
	for _, name := range names {
		raw, err := fs.ReadFile(fixtures, name)
		if err != nil {
			return err
		}
		raw = fixtureUUID.ReplaceAllFunc(raw, func(m []byte) []byte {
			u := string(fixtureUUID.FindSubmatch(m)[1])
			if probes[u] == "" {
				probes[u] = uuids[len(probes)%12+1]
			}
			return bytes.Replace(m, []byte(u), []byte(probes[u]), 1)
		})
		kind := strings.TrimSuffix(path.Base(name), "s.ndjson")
		var docs []store.Document
		lines := bufio.NewScanner(bytes.NewReader(raw))
		lines.Buffer(nil, 1<<20)
		for n := 1; lines.Scan(); n++ {
			if len(bytes.TrimSpace(lines.Bytes())) == 0 {
				continue
			}
			d, err := store.ParseDocument(kind, bytes.Clone(lines.Bytes()))
			if err != nil {
				return fmt.Errorf("demo: %s line %d: %w", name, n, err)
			}
			docs = append(docs, d)
		}
		if err := lines.Err(); err != nil {
			return fmt.Errorf("demo: %s: %w", name, err)
		}
		res, err := st.InsertDocuments(ctx, owner, docs)
		if err != nil {
			return fmt.Errorf("demo: load %s: %w", name, err)
		}
		if len(res.Refused) > 0 {
			return fmt.Errorf("demo: %s: %d documents name clients of another data owner", name, len(res.Refused))
		}
	}
	return nil
}
