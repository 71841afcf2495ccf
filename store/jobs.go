package store

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// Jobs: the durable queue behind webhook deliveries is River
// (riverqueue/river on pgx/v5): its jobs are rows in this database, written
// in the transaction that makes them due, so a delivery survives any crash.
// River's schema is migration 17, applied by goose through river's own
// migrator; the workers run in package webhooks.

// riverSchemaVersion is the River schema version migration 17 applies (the
// newest of river v0.51.1). A River upgrade that brings a new schema
// version gets a new numbered migration that migrates to it.
const riverSchemaVersion = 8

// riverMigration is migration 17: River's tables (river_job, river_leader,
// river_queue, ...) up to riverSchemaVersion. River's own migrator applies
// each of its versions in a transaction of its own (one of them adds an
// enum value that the next statement uses, which one transaction cannot
// do) and records them in river_migration, so a migration interrupted
// half-way resumes where it stopped.
func riverMigration() *goose.Migration {
	migrate := func(direction rivermigrate.Direction, target int) func(context.Context, *sql.DB) error {
		return func(ctx context.Context, db *sql.DB) error {
			m, err := rivermigrate.New(riverdatabasesql.New(db), &rivermigrate.Config{
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				return fmt.Errorf("river migrator: %w", err)
			}
			_, err = m.Migrate(ctx, direction, &rivermigrate.MigrateOpts{TargetVersion: target})
			return err
		}
	}
	return goose.NewGoMigration(17,
		&goose.GoFunc{RunDB: migrate(rivermigrate.DirectionUp, riverSchemaVersion)},
		&goose.GoFunc{RunDB: migrate(rivermigrate.DirectionDown, -1)})
}

// DeliverArgs is the River job of one attempt of a webhook delivery:
// attempt Attempt (from 1) of delivery DeliveryID. A job whose attempt is
// not the delivery's next one (the delivery moved on, was cancelled or
// redelivered) does nothing.
type DeliverArgs struct {
	DeliveryID  int64 `json:"delivery_id"`
	DataOwnerID int64 `json:"data_owner_id"`
	Attempt     int   `json:"attempt"`
}

// Kind names the job in river_job.
func (DeliverArgs) Kind() string { return "webhook_delivery" }

// deliverJobMaxAttempts is how often River runs one attempt's job when the
// job itself fails (the database is gone, the process died while it ran):
// the delivery's own attempts are counted on the delivery, not here.
const deliverJobMaxAttempts = 25

// newJobClient makes the insert-only River client every Store has: any
// process that writes events (the server, `fleetgraph import`) queues
// their deliveries in the same transaction.
func newJobClient(pool *pgxpool.Pool) (*river.Client[pgx.Tx], error) {
	c, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, fmt.Errorf("job queue client: %w", err)
	}
	return c, nil
}

// queueDeliveries queues the next attempt of each delivery in tx, due at
// (zero: now).
func (s *Store) queueDeliveries(ctx context.Context, tx pgx.Tx, ownerID int64, ids []int64, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, len(ids))
	for i, id := range ids {
		params[i] = river.InsertManyParams{Args: DeliverArgs{DeliveryID: id, DataOwnerID: ownerID, Attempt: 1},
			InsertOpts: &river.InsertOpts{MaxAttempts: deliverJobMaxAttempts, ScheduledAt: at}}
	}
	if _, err := s.jobs.InsertManyTx(ctx, tx, params); err != nil {
		return fmt.Errorf("queue deliveries: %w", err)
	}
	return nil
}
