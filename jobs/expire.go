package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/fleetgraph/fleetgraph/search/pg"
	"github.com/fleetgraph/fleetgraph/store"
)

// ExpireEvery is how often the expiry pass runs (store.Expire; it also
// creates the coming months' partitions).
const ExpireEvery = time.Hour

// ExpireArgs is the periodic job of the expiry pass.
type ExpireArgs struct{}

// Kind names the job in river_job.
func (ExpireArgs) Kind() string { return "documents_expire" }

// ExpireWorker works ExpireArgs.
type ExpireWorker struct {
	river.WorkerDefaults[ExpireArgs]
	Store *store.Store
	// RetentionDays is the operator's default retention (nil: keep).
	RetentionDays *int64
	Log           *slog.Logger
}

// Timeout: a pass takes as long as its batches; a second one started
// meanwhile returns at once (store.Expire's advisory lock).
func (w *ExpireWorker) Timeout(*river.Job[ExpireArgs]) time.Duration { return -1 }

// Work runs one expiry pass.
func (w *ExpireWorker) Work(ctx context.Context, _ *river.Job[ExpireArgs]) error {
	start := time.Now()
	res, err := Expire(ctx, w.Store, w.RetentionDays)
	if err != nil {
		return err
	}
	w.Log.Info("expiry pass", "created", res.Created, "dropped", res.Dropped, "deleted", res.Deleted,
		"took", time.Since(start).Round(time.Millisecond))
	return nil
}

// Expire runs one expiry pass (the job and fleetgraph expire). It brings
// the license pairs and the rollups up to date first: the documents of
// days and months still dirty are kept until they are.
func Expire(ctx context.Context, st *store.Store, days *int64) (store.ExpireResult, error) {
	if _, err := st.RefreshLicensePairs(ctx); err != nil {
		return store.ExpireResult{}, err
	}
	if _, err := pg.RefreshRollups(ctx, st.Pool()); err != nil {
		return store.ExpireResult{}, err
	}
	return st.Expire(ctx, time.Now(), days)
}
