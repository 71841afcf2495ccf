package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/fleetgraph/fleetgraph/store"
)

// StatisticsEvery is how often the tables' statistics are checked
// (store.KeepStatistics): a partition filling at the probes' rate from
// empty is analysed within seconds, before its stale statistics choose
// scans where index probes belong.
const StatisticsEvery = 5 * time.Second

// StatisticsArgs is the periodic job that keeps the planner's statistics.
type StatisticsArgs struct{}

// Kind names the job in river_job.
func (StatisticsArgs) Kind() string { return "statistics_keep" }

// StatisticsWorker works StatisticsArgs.
type StatisticsWorker struct {
	river.WorkerDefaults[StatisticsArgs]
	Store *store.Store
	Log   *slog.Logger
}

// Work analyses the tables whose statistics fell behind.
func (w *StatisticsWorker) Work(ctx context.Context, _ *river.Job[StatisticsArgs]) error {
	start := time.Now()
	tables, err := w.Store.KeepStatistics(ctx)
	if len(tables) > 0 {
		w.Log.Info("statistics refreshed", "tables", tables, "took", time.Since(start).Round(time.Millisecond))
	}
	return err
}
