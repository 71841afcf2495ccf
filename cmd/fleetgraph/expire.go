package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/fleetgraph/fleetgraph/search/pg"
	"github.com/fleetgraph/fleetgraph/store"
)

// expireEvery is how often serve runs an expiry pass (store.Expire): it
// also creates the coming months' partitions, store.PartitionsAhead ahead.
// (Written as a plain loop; it moves to the River periodic jobs with the
// other periodic tasks.)
const expireEvery = time.Hour

// retentionFlag registers the operator's default retention.
func (c *config) retentionFlag(fs *flag.FlagSet) {
	fs.StringVar(&c.RetentionDays, "retention-days", envOr("FLEETGRAPH_RETENTION_DAYS", ""),
		fmt.Sprintf("days measurement-data documents are kept for data owners that set no retention_days (env FLEETGRAPH_RETENTION_DAYS), 1 to %d; empty keeps everything", store.MaxRetentionDays))
}

// retentionDays reads RetentionDays: nil keeps everything.
func (c *config) retentionDays() (*int64, error) {
	if c.RetentionDays == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(c.RetentionDays, 10, 64)
	if err != nil || n < 1 || n > store.MaxRetentionDays {
		return nil, fmt.Errorf("--retention-days (FLEETGRAPH_RETENTION_DAYS) must be a whole number of days from 1 to %d, got %q",
			store.MaxRetentionDays, c.RetentionDays)
	}
	return &n, nil
}

// expire runs one expiry pass and exits (fleetgraph expire).
func expire(ctx context.Context, args []string, out io.Writer) error {
	var cfg config
	fs := flag.NewFlagSet("expire", flag.ContinueOnError)
	cfg.storeFlags(fs)
	cfg.retentionFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	days, err := cfg.retentionDays()
	if err != nil {
		return err
	}
	log := newLogger()
	st, closeStore, err := cfg.openStore(ctx, log)
	if err != nil {
		return err
	}
	defer closeStore()
	res, err := expirePass(ctx, st, days)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "partitions created: %d %v\npartitions dropped: %d %v\ndocuments deleted: %d\n",
		len(res.Created), res.Created, len(res.Dropped), res.Dropped, res.Deleted)
	return err
}

// expirePass brings the license pairs and the rollups up to date first:
// the documents of days and months still dirty are kept until they are.
func expirePass(ctx context.Context, st *store.Store, days *int64) (store.ExpireResult, error) {
	if _, err := st.RefreshLicensePairs(ctx); err != nil {
		return store.ExpireResult{}, err
	}
	if _, err := pg.RefreshRollups(ctx, st.Pool()); err != nil {
		return store.ExpireResult{}, err
	}
	return st.Expire(ctx, time.Now(), days)
}

// runExpiry runs an expiry pass now and every expireEvery until ctx ends;
// wait returns once it has stopped.
func runExpiry(ctx context.Context, st *store.Store, days *int64, log *slog.Logger) (wait func()) {
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(expireEvery)
		defer t.Stop()
		for {
			start := time.Now()
			res, err := expirePass(ctx, st, days)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				log.Error("expiry pass failed", "err", err, "deleted", res.Deleted, "dropped", res.Dropped)
			} else {
				log.Info("expiry pass", "created", res.Created, "dropped", res.Dropped, "deleted", res.Deleted,
					"took", time.Since(start).Round(time.Millisecond))
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	return wg.Wait
}
