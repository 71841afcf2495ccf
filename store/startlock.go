package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// startLockClass is the first key of the session advisory locks of the
// steps two processes starting on one database must not run at once; the
// second key names the step (StepMigrate, StepDemo).
const startLockClass = 0x53747274 // "Strt"

// StartStep is a step of starting a process that holds a lock while it
// runs.
type StartStep int

// The start steps.
const (
	StepMigrate StartStep = 1 // applying migrations
	StepDemo    StartStep = 2 // loading the demo data owner (serve --demo)
)

func (s StartStep) String() string {
	if s == StepDemo {
		return "loading the demo data owner into"
	}
	return "applying migrations to"
}

// StartWait is how long a start step waits for another process that holds
// its lock before it gives up with ErrBusy: a person starting a second
// server is told within seconds instead of waiting silently.
const StartWait = 10 * time.Second

// ErrBusy is a start step another process is running on the same database
// (BusyError says which process).
var ErrBusy = errors.New("another process is running this step on the database")

// BusyError is ErrBusy with the process that holds the step's lock, as
// PostgreSQL knows it.
type BusyError struct {
	Step     StartStep
	Database string        // Store.Database
	Waited   time.Duration // how long this process waited
	Holder   string        // e.g. "PostgreSQL backend pid 4242 (fleetgraph, from 127.0.0.1, connected since 01:02:03 UTC)"
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("another process has been %s database %s for more than %s: %s", e.Step, e.Database, e.Waited, e.Holder)
}

func (e *BusyError) Unwrap() error { return ErrBusy }

// Database names the database the store is connected to as a person would
// look for it, `"fleetgraph" on 127.0.0.1:5432`: its name, host and port
// (the socket directory of a unix socket), never the user or the password.
func (s *Store) Database() string {
	c := s.pool.Config().ConnConfig
	where := net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port)))
	if strings.HasPrefix(c.Host, "/") {
		where = fmt.Sprintf("the unix socket in %s (port %d)", c.Host, c.Port)
	}
	return fmt.Sprintf("%q on %s", c.Database, where)
}

// Alone runs fn while this process holds step's session advisory lock,
// taken on a connection of its own. When another session holds it, the
// lock is tried again every 200 ms for up to wait; then the answer is a
// *BusyError naming the holder.
func (s *Store) Alone(ctx context.Context, step StartStep, wait time.Duration, fn func() error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("start lock: %w", err)
	}
	defer conn.Release()
	deadline := time.Now().Add(wait)
	for {
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1::int, $2::int)`, startLockClass, int(step)).Scan(&ok); err != nil {
			return fmt.Errorf("start lock: %w", err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			return &BusyError{Step: step, Database: s.Database(), Waited: wait, Holder: lockHolder(ctx, conn.Conn(), step)}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	defer func() {
		// A connection the unlock fails on is closed, which releases the lock.
		if _, err := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1::int, $2::int)`, startLockClass, int(step)); err != nil {
			_ = conn.Conn().Close(context.Background())
		}
	}()
	return fn()
}

// lockHolder describes the session holding step's lock, as far as
// pg_stat_activity shows it to this user.
func lockHolder(ctx context.Context, conn *pgx.Conn, step StartStep) string {
	const q = `SELECT a.pid, coalesce(a.application_name, ''), coalesce(host(a.client_addr), 'a local socket'),
		coalesce(to_char(a.backend_start AT TIME ZONE 'UTC', 'HH24:MI:SS'), '?')
		FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND l.classid = $1::int::oid AND l.objid = $2::int::oid AND l.objsubid = 2
		LIMIT 1`
	var pid int
	var app, from, since string
	if err := conn.QueryRow(ctx, q, startLockClass, int(step)).Scan(&pid, &app, &from, &since); err != nil {
		return "a process PostgreSQL does not name to this user"
	}
	if app == "" {
		app = "no application name"
	}
	return fmt.Sprintf("PostgreSQL backend pid %d (%s, from %s, connected since %s UTC)", pid, app, from, since)
}
