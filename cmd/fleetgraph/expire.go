package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/fleetgraph/fleetgraph/jobs"
	"github.com/fleetgraph/fleetgraph/store"
)

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
	res, err := jobs.Expire(ctx, st, days)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "partitions created: %d %v\npartitions dropped: %d %v\ndocuments deleted: %d\n",
		len(res.Created), res.Created, len(res.Dropped), res.Dropped, res.Deleted)
	return err
}
