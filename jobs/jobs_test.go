package jobs_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/jobs"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/webhooks"
)

func TestMain(m *testing.M) { apitest.Main(m) }

// TestProcessRunsPeriodicJobs: the process's jobs, as fleetgraph serve
// starts them, run every periodic job at start: the license refresher
// merges the pairs new measurements logged, the rollup refresher rolls up
// their day (the rollups stay current with Elasticsearch too, for a
// restart without it).
func TestProcessRunsPeriodicJobs(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "licenserefresh")
	c := o.NewClient(t, store.NewClient{})
	o.NewMeasurements(t, apitest.MeasurementOpts{ClientUUID: c.UUID, Subject: "youtube"})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	r, err := jobs.StartProcess(context.Background(), jobs.Process{Store: e.Store, Log: log,
		Webhooks: webhooks.New(webhooks.Config{Store: e.Store, Sealer: e.Sealer, Logger: log})})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Stop(context.Background()) }()
	ctx := context.Background()
	for deadline := time.Now().Add(3 * jobs.LicenseEvery); ; time.Sleep(50 * time.Millisecond) {
		var pairs, days, kinds int
		err := e.Store.Pool().QueryRow(ctx, `SELECT
			(SELECT count(*) FROM license_pairs WHERE data_owner_id = $1 AND client_uuid = $2 AND subject = 'youtube'),
			(SELECT count(*) FROM rollup_days WHERE data_owner_id = $1),
			(SELECT count(DISTINCT kind) FROM river_job WHERE state = 'completed'
				AND kind IN ('license_pairs_refresh', 'notification_round', 'client_offline_sweep', 'rollup_refresh'))`,
			o.ID, c.UUID).Scan(&pairs, &days, &kinds)
		if err != nil {
			t.Fatal(err)
		}
		if pairs == 1 && days >= 1 && kinds == 4 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("within %s: the measurement's pairs merged %d (want 1), days rolled up %d (want 1 or more), "+
				"periodic kinds completed %d (want 4)", 3*jobs.LicenseEvery, pairs, days, kinds)
		}
	}
}
