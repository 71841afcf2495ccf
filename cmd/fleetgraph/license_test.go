package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

// TestServeRefusesAnInvalidReleaseCatalogue: a catalogue that does not
// check out stops serve before it listens, naming the file and the mistake.
func TestServeRefusesAnInvalidReleaseCatalogue(t *testing.T) {
	e := apitest.Get(t)
	path := filepath.Join(t.TempDir(), "releases.json")
	if err := os.WriteFile(path, []byte(`{"provider": "P", "components": [{"id": "agent", "label": "x"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--database-url", e.DatabaseURL, "--addr", freeAddr(t), "--data-dir", t.TempDir(), "--releases", path}
	err := serve(context.Background(), args)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `id "agent" must be one of`) {
		t.Errorf("serve = %v, want an error naming %s and the bad component id", err, path)
	}
	t.Setenv("FLEETGRAPH_RELEASES", filepath.Join(t.TempDir(), "missing.json"))
	err = serve(context.Background(), args[:len(args)-2])
	if err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("serve with FLEETGRAPH_RELEASES naming a missing file = %v, want an error naming it", err)
	}
}

// TestServeRefreshesLicensePairs: the background refresher merges the pairs
// new measurements logged.
func TestServeRefreshesLicensePairs(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "licenserefresh")
	c := o.NewClient(t, store.NewClient{})
	o.NewMeasurements(t, apitest.MeasurementOpts{ClientUUID: c.UUID, Subject: "youtube"})
	ctx, cancel := context.WithCancel(context.Background())
	wait := runLicensePairs(ctx, e.Store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer func() { cancel(); wait() }()
	for deadline := time.Now().Add(3 * licenseEvery); ; time.Sleep(50 * time.Millisecond) {
		var pairs int
		err := e.Store.Pool().QueryRow(context.Background(),
			`SELECT count(*) FROM license_pairs WHERE data_owner_id = $1 AND client_uuid = $2 AND subject = 'youtube'`, o.ID, c.UUID).Scan(&pairs)
		if err != nil {
			t.Fatal(err)
		}
		if pairs == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the measurement's pair was not merged within %s", 3*licenseEvery)
		}
	}
}
