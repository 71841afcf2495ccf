package pg

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/search"
)

// Time limits.
//
// Every search, scroll page and ES|QL query runs its statements in one
// transaction under a time limit: Backend.Timeout (limits.SearchTimeout when
// zero), or the body's "timeout" when that is shorter. Before each
// statement the transaction's statement_timeout is set to the time left, so
// PostgreSQL itself stops a statement at the limit (and frees the core and
// the connection cleanly); a context deadline shortly after the limit
// covers the rest (waiting for a connection, reading rows). A request that
// reaches its limit answers a *search.UnavailableError (503) saying so; a
// request the caller cancels is not reported as one.

// limitGrace is how long after the limit the context ends.
const limitGrace = 250 * time.Millisecond

// errTimeLimit is what limitedTx returns once the limit has passed.
var errTimeLimit = errors.New("time limit reached")

// limit is the time limit of one request whose body asked for bodyTimeout
// (0: nothing asked).
func (b *Backend) limit(bodyTimeout time.Duration) time.Duration {
	d := b.Timeout
	if d <= 0 {
		d = limits.SearchTimeout
	}
	if bodyTimeout > 0 && bodyTimeout < d {
		d = bodyTimeout
	}
	return d
}

// limitedTx is a transaction whose queries run with statement_timeout set
// to the time left before deadline.
type limitedTx struct {
	tx       pgx.Tx
	start    time.Time
	limit    time.Duration
	deadline time.Time // start + limit
}

// shorten lowers the limit to d when d is shorter (a scroll's body asks
// for less than the server's limit) and returns ctx bounded accordingly.
func (l *limitedTx) shorten(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 || d >= l.limit {
		return ctx, func() {}
	}
	l.limit, l.deadline = d, l.start.Add(d)
	return context.WithDeadline(ctx, l.deadline.Add(limitGrace))
}

// arm sets statement_timeout to the time left (whole milliseconds, rounded
// up); errTimeLimit when none is.
func (l *limitedTx) arm(ctx context.Context) error {
	left := time.Until(l.deadline)
	if left <= 0 {
		return errTimeLimit
	}
	ms := (left + time.Millisecond - 1) / time.Millisecond
	_, err := l.tx.Exec(ctx, "SELECT set_config('statement_timeout', $1, true)", strconv.FormatInt(int64(ms), 10))
	return err
}

func (l *limitedTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := l.arm(ctx); err != nil {
		return nil, err
	}
	return l.tx.Query(ctx, sql, args...)
}

// limited runs fn in a transaction (opts) on pool under the time limit d:
// the statements fn runs through q are bounded by it, and so is ctx. what
// names the request in the error ("search", "ES|QL query").
func (b *Backend) limited(ctx context.Context, pool *pgxpool.Pool, d time.Duration, opts pgx.TxOptions, what string,
	fn func(ctx context.Context, q *limitedTx) error) error {
	start := time.Now()
	l := &limitedTx{start: start, limit: d, deadline: start.Add(d)}
	lctx, cancel := context.WithDeadline(ctx, l.deadline.Add(limitGrace))
	defer cancel()
	err := pgx.BeginTxFunc(lctx, pool, opts, func(tx pgx.Tx) error {
		l.tx = tx
		if err := l.arm(lctx); err != nil {
			return err
		}
		// Estimates of JSON expressions are far off, so statements over
		// many documents pass the JIT thresholds; compiling took 2.1 s of
		// the 2.1 s of an ES|QL day's AVG BY over 33,000 documents
		// (docs/benchmarks.md, "10x the data").
		if _, err := tx.Exec(lctx, "SELECT set_config('jit', 'off', true)"); err != nil {
			return err
		}
		return fn(lctx, l)
	})
	if err == nil || ctx.Err() != nil {
		// Done, or given up by the caller: not the limit's doing.
		return err
	}
	var bad *search.BadRequestError
	if errors.As(err, &bad) {
		return err
	}
	if errors.Is(err, errTimeLimit) || lctx.Err() != nil || time.Now().After(l.deadline) || isStatementTimeout(err) {
		return &search.UnavailableError{
			Msg: fmt.Sprintf("the %s exceeded its time limit of %s; narrow it (a shorter time range, a more selective query, "+
				"fewer or smaller aggregations) and try again", what, l.limit),
			Err: err,
		}
	}
	return err
}

// isStatementTimeout reports whether err is PostgreSQL's statement_timeout
// cancelling a statement.
func isStatementTimeout(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "57014" && pe.Message == "canceling statement due to statement timeout"
}

// bodyTimeout reads the body's "timeout" (an Elasticsearch time value such
// as 10s or 500ms); 0 when absent or -1 (no limit of its own).
func bodyTimeout(v any) (time.Duration, error) {
	if v == nil {
		return 0, nil
	}
	s, ok := v.(string)
	if !ok {
		return 0, search.Badf("timeout must be a time value with a unit, such as \"10s\" or \"500ms\"")
	}
	if s == "-1" {
		return 0, nil
	}
	n, unit, ok := search.ParseTimeValue(s)
	if !ok {
		return 0, search.Badf("invalid timeout %q: a time value with a unit, such as \"10s\" or \"500ms\"", s)
	}
	if n == 0 {
		return 0, search.Badf("timeout must be positive")
	}
	if n > int64(24*time.Hour/unit) {
		return 24 * time.Hour, nil // longer than any limit: the server's applies
	}
	return time.Duration(n) * unit, nil
}
