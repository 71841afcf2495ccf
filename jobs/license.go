package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/fleetgraph/fleetgraph/store"
)

// LicenseEvery is how often the license pairs are refreshed
// (store/license.go): reports read what is not merged yet from the log and
// dirty months from the documents, so this only decides how much they read.
const LicenseEvery = 10 * time.Second

// LicenseArgs is the periodic job that refreshes the license pairs.
type LicenseArgs struct{}

// Kind names the job in river_job.
func (LicenseArgs) Kind() string { return "license_pairs_refresh" }

// LicenseWorker works LicenseArgs.
type LicenseWorker struct {
	river.WorkerDefaults[LicenseArgs]
	Store *store.Store
	Log   *slog.Logger
}

// Work refreshes the license pairs once.
func (w *LicenseWorker) Work(ctx context.Context, _ *river.Job[LicenseArgs]) error {
	start := time.Now()
	months, err := w.Store.RefreshLicensePairs(ctx)
	if err != nil {
		return err
	}
	if months > 0 {
		w.Log.Debug("license pairs refreshed", "months", months, "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}
