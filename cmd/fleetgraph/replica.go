package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/store"
)

// Bounds of --read-max-lag: the replica's monitor looks every fifth of it
// (100 ms to 1 s), so a shorter bound could not be told apart.
const (
	defaultReadMaxLag = 5 * time.Second
	minReadMaxLag     = 100 * time.Millisecond
	maxReadMaxLag     = time.Hour
)

// replicaFlags registers the read replica's settings (serve only).
func (c *config) replicaFlags(fs *flag.FlagSet) {
	fs.Var(secretEnv(&c.ReadDatabaseURL, "FLEETGRAPH_READ_DATABASE_URL"), "read-database-url",
		"PostgreSQL `URL` of a streaming replica of --database-url (env FLEETGRAPH_READ_DATABASE_URL): searches, ES|QL, export listings "+
			"and scrolls, license usage, health reads and every GraphQL query read from it while it is up and within --read-max-lag; empty: none")
	fs.StringVar(&c.ReadMaxLag, "read-max-lag", envOr("FLEETGRAPH_READ_MAX_LAG", defaultReadMaxLag.String()),
		fmt.Sprintf("how far the read replica may lag behind the primary before reads go to the primary, a Go duration from %s to %s (env FLEETGRAPH_READ_MAX_LAG)",
			minReadMaxLag, maxReadMaxLag))
}

// readMaxLag is the configured --read-max-lag.
func (c *config) readMaxLag() (time.Duration, error) {
	raw := strings.TrimSpace(c.ReadMaxLag)
	if raw == "" {
		return defaultReadMaxLag, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil || d < minReadMaxLag || d > maxReadMaxLag {
		return 0, fmt.Errorf("--read-max-lag (FLEETGRAPH_READ_MAX_LAG) %q must be a Go duration from %s to %s, such as 5s or 1m",
			c.ReadMaxLag, minReadMaxLag, maxReadMaxLag)
	}
	return d, nil
}

// checkReplica validates the read replica's settings before anything starts.
func (c *config) checkReplica() error {
	if err := checkPostgresURL(c.ReadDatabaseURL, "--read-database-url (FLEETGRAPH_READ_DATABASE_URL)"); err != nil {
		return err
	}
	_, err := c.readMaxLag()
	return err
}

// useReplica sends st's read-only reads to the configured replica, if any,
// until ctx ends.
func (c *config) useReplica(ctx context.Context, st *store.Store, log *slog.Logger) error {
	if strings.TrimSpace(c.ReadDatabaseURL) == "" {
		return nil
	}
	maxLag, err := c.readMaxLag()
	if err != nil {
		return err
	}
	if err := st.UseReplica(ctx, c.ReadDatabaseURL, maxLag, log); err != nil {
		return fmt.Errorf("--read-database-url (FLEETGRAPH_READ_DATABASE_URL): %w", err)
	}
	log.Info("read replica configured", "max_lag", maxLag.String())
	return nil
}
