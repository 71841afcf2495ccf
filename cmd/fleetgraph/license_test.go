package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
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

// TestDemoHasAMonthOfLicenseUsage: the demo fleet's measurements (November
// 2026) make a month of license usage under its registration key.
func TestDemoHasAMonthOfLicenseUsage(t *testing.T) {
	e := apitest.Get(t)
	ctx := context.Background()
	keys, err := seedDemo(ctx, e.Store, e.Sealer, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("seed: %v", err)
	}
	// Distinct subjects per probe, counted apart from the report's SQL.
	var want int64
	err = e.Store.Pool().QueryRow(ctx, `SELECT coalesce(sum(k), 0) FROM (
		SELECT greatest(count(DISTINCT d.subject), 1) AS k FROM documents d JOIN data_owners o ON o.id = d.data_owner_id
		WHERE o.slug = $1 AND d.kind = 'measurement' AND d.created_at >= '2026-11-01' AND d.created_at < '2026-12-01'
		GROUP BY d.client_uuid) per_client`, demoOwner).Scan(&want)
	if err != nil {
		t.Fatal(err)
	}
	r := e.Admin(t, http.MethodGet, "/license_usage?extended=true&start_time=2026-11-01&end_time=2026-11-30", keys.Admin, nil)
	apitest.WantStatus(t, r, http.StatusOK)
	rep := r.Obj(t)
	if got := apitest.Int(t, rep["total_units"]); got != want || want < 12 {
		t.Errorf("total_units = %d, want %d (at least one per probe)", got, want)
	}
	byKey := apitest.List(t, rep["usage_by_registration_key"])
	if len(byKey) != 1 || byKey[0].(map[string]any)["registration_key"] != "demo-fleet-2026" {
		t.Errorf("usage_by_registration_key = %v, want the demo fleet's key alone", byKey)
	}
}
