// Package store is fleetgraph's PostgreSQL system of record, reached through
// pgx/v5. Every function takes the data owner and puts it in the WHERE
// clause; driver errors become ErrNotFound and ErrConflict at this boundary.
// Migrations are numbered .sql files embedded in the binary and applied with
// goose.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river"

	"github.com/fleetgraph/fleetgraph/apierr"
)

// Domain errors returned by store functions, of the classes of apierr's
// table (mapErr is the one place driver errors become them).
var (
	ErrNotFound error = apierr.ErrNotFound
	ErrConflict error = apierr.ErrConflict
	// ErrInvalidText: a text value holds a NUL character, which PostgreSQL
	// cannot store or compare.
	ErrInvalidText error = &apierr.Error{Class: apierr.ErrInvalid, Msg: "text must not contain NUL characters"}
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the database handle shared by the whole server.
type Store struct {
	pool *pgxpool.Pool
	opts Options
	// replica, when set, takes the reads of requests marked ReadOnly
	// (replica.go).
	replica *replica
	// keys and probes cache found API keys and probes while the
	// process's listener listens (keycache.go).
	keys   authCache[KeyOwner]
	probes authCache[Probe]
	// jobs queues River jobs in the caller's transaction (jobs.go).
	jobs *river.Client[pgx.Tx]
}

// Options tune Open.
type Options struct {
	// Tracer, when set, observes every statement (tests count them).
	Tracer pgx.QueryTracer
	// MaxConns caps the pool; 0 keeps pgx's default.
	MaxConns int32
	// StatementTimeout is PostgreSQL's statement_timeout on the pool's
	// connections (0: none, the server's own setting): no statement runs
	// longer, even when the cancel request for a request that ended does
	// not get through. Searches set their own, per statement (search/pg);
	// Migrate runs without one.
	StatementTimeout time.Duration
}

// connectTimeout bounds opening one connection when the URL does not say
// (connect_timeout): a frozen server accepts the TCP connection but never
// answers the startup.
const connectTimeout = 10 * time.Second

// cancelGrace is how long a cancelled statement may take to stop on the
// server before its connection is given up.
const cancelGrace = 2 * time.Second

// Open connects to url and checks the connection.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := poolConfig(url, opts)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("ping database: %w", err)
	}
	jobs, err := newJobClient(pool)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return &Store{pool: pool, opts: opts, jobs: jobs}, nil
}

// poolConfig is the configuration of a pool on url under opts.
func poolConfig(url string, opts Options) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if opts.Tracer != nil {
		cfg.ConnConfig.Tracer = opts.Tracer
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	if opts.StatementTimeout > 0 {
		ms := (opts.StatementTimeout + time.Millisecond - 1) / time.Millisecond
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(int64(ms), 10)
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		// What pg_stat_activity shows, and a start step waiting for
		// another process names (startlock.go).
		cfg.ConnConfig.RuntimeParams["application_name"] = "fleetgraph"
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = connectTimeout
	}
	// A request that ends (client gone, deadline) cancels its statement on
	// the server with a cancel request (pgx's default gives up on the
	// socket at once). The connection is then closed when released, not
	// reused: a cancel request reaches the backend at some time after it
	// was sent, and pgx's wait for it (100 ms) was too short on a loaded
	// machine, where a late one cancelled the next request's statement on
	// the same connection (CI, 2026-11-30: "canceling statement due to
	// user request" in a test that cancelled nothing).
	var cancelled sync.Map // *pgconn.PgConn whose statement was cancelled
	cfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &cancelMarker{CancelRequestContextWatcherHandler: &pgconn.CancelRequestContextWatcherHandler{
			Conn: c, DeadlineDelay: cancelGrace}, cancelled: &cancelled}
	}
	cfg.AfterRelease = func(c *pgx.Conn) bool {
		_, was := cancelled.LoadAndDelete(c.PgConn())
		return !was
	}
	cfg.BeforeClose = func(c *pgx.Conn) { cancelled.Delete(c.PgConn()) }
	return cfg, nil
}

// cancelMarker is pgx's cancel request handler that also marks its
// connection as cancelled, for the pool to close it when released.
type cancelMarker struct {
	*pgconn.CancelRequestContextWatcherHandler
	cancelled *sync.Map
}

func (h *cancelMarker) HandleCancel(ctx context.Context) {
	h.cancelled.Store(h.Conn, struct{}{})
	h.CancelRequestContextWatcherHandler.HandleCancel(ctx)
}

// Close releases the pools.
func (s *Store) Close() {
	if s.replica != nil {
		s.replica.pool.Close()
	}
	s.pool.Close()
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

// Pool exposes the pool for packages that own their own SQL (search).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Migrate applies every embedded migration not yet applied, one process at
// a time: while another process migrates the database it waits up to
// StartWait, then answers a *BusyError.
func (s *Store) Migrate(ctx context.Context) error {
	return s.Alone(ctx, StepMigrate, StartWait, func() error { return s.migrate(ctx) })
}

func (s *Store) migrate(ctx context.Context) error {
	// Its own connection, without the pool's statement_timeout: a
	// migration may rewrite a large table.
	cc := s.pool.Config().ConnConfig.Copy()
	cc.RuntimeParams["statement_timeout"] = "0"
	db := stdlib.OpenDB(*cc)
	defer db.Close()
	provider, err := MigrationProvider(db)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if _, err := provider.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// MigrationProvider is goose over db with every migration: the embedded
// .sql files and migration 17, River's schema (jobs.go).
func MigrationProvider(db *sql.DB) (*goose.Provider, error) {
	return goose.NewProvider(goose.DialectPostgres, db, mustSub(migrations, "migrations"),
		goose.WithGoMigrations(riverMigration()))
}

// tx runs fn in a transaction, committing when it returns nil; what
// beginning or committing fails with is mapped too (fn's own errors are
// mapped already, and mapping them again changes nothing).
func (s *Store) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	return mapErr("transaction", pgx.BeginFunc(ctx, s.pool, fn))
}

// ErrConcurrentChange is a write that PostgreSQL refused because a request
// running at the same time changed the same rows first (a deadlock or a
// serialization failure): a 409, which the caller may retry.
var ErrConcurrentChange error = &apierr.Error{Class: apierr.ErrConflict,
	Msg: "Conflicts with a change made at the same time; try again"}

// mapErr turns driver errors into domain errors: every integrity
// constraint violation (SQLSTATE class 23) and every race PostgreSQL
// reports is a 404, 409 or 422 here, never an internal error.
func mapErr(step string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return fmt.Errorf("%s: %w", step, err)
	}
	switch code := pgErr.Code; {
	case code == "23505", code == "23P01": // unique, exclusion
		return fmt.Errorf("%s: %w", step, ErrConflict)
	case code == "23503":
		// Every foreign key cascades on delete, so a violation means a
		// write referred to a row that is gone (deleted by a request that
		// raced this one): the referenced record is not found.
		return fmt.Errorf("%s: %w", step, ErrNotFound)
	case code == "40001", code == "40P01": // serialization failure, deadlock
		return fmt.Errorf("%s: %w", step, ErrConcurrentChange)
	case code == "22021": // character_not_in_repertoire: NUL in text
		return fmt.Errorf("%s: %w", step, ErrInvalidText)
	case code == "23502" && pgErr.ColumnName != "": // not null
		return fmt.Errorf("%s: %w (%w)", step, apierr.FieldErrors{pgErr.ColumnName: {"is required"}}.Err(), err)
	case strings.HasPrefix(code, "23"), strings.HasPrefix(code, "22"):
		// Another constraint (check, not null, restrict) or a value the
		// column cannot hold (too long, out of range): the input's doing,
		// which the resolvers' validation should have caught first. The
		// driver's error stays in the chain: the importer reads it to find
		// the refused document.
		return fmt.Errorf("%s: %w (%w)", step, &apierr.Error{Class: apierr.ErrInvalid,
			Msg: "Validation failed: a value is out of the range the record allows"}, err)
	}
	return fmt.Errorf("%s: %w", step, err)
}

// StatementCounter is a pgx tracer that counts the statements run, alone
// or in batches, and the round trips they took, under contexts marked by
// Counted (the requests a test sends): the work of background jobs (the
// job queue, the mail sender, the event hub) running on the same pool at
// the same time is not counted.
type StatementCounter struct{ n, trips atomic.Int64 }

type countedKey struct{}

// Counted marks ctx: the statements run under it are counted.
func Counted(ctx context.Context) context.Context { return context.WithValue(ctx, countedKey{}, true) }

func counted(ctx context.Context) bool { return ctx.Value(countedKey{}) != nil }

// TraceQueryStart counts one statement alone: one round trip.
func (c *StatementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	if counted(ctx) {
		c.n.Add(1)
		c.trips.Add(1)
	}
	return ctx
}

// TraceQueryEnd does nothing.
func (c *StatementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart counts a batch's round trip and its statements.
func (c *StatementCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	if counted(ctx) {
		c.n.Add(int64(d.Batch.Len()))
		c.trips.Add(1)
	}
	return ctx
}

// TraceBatchQuery does nothing.
func (c *StatementCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

// TraceBatchEnd does nothing.
func (c *StatementCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// Count returns the statements counted so far.
func (c *StatementCounter) Count() int64 { return c.n.Load() }

// RoundTrips returns the round trips counted so far.
func (c *StatementCounter) RoundTrips() int64 { return c.trips.Load() }
