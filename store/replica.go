package store

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Read replica (docs/operating.md "Read replicas"): with UseReplica, the
// reads of a request marked ReadOnly go to a streaming standby through
// ReadPool, the one place that picks the pool. Everything else (writes,
// reads in a write's transaction, unmarked requests, background work)
// stays on the primary. A standby that is down, not a standby, or lags
// more than its bound is bypassed, and so is it for the data owner whose
// last write it has not replayed yet (read-your-writes).

// Reasons a read marked ReadOnly went to the primary (the metric's label).
const (
	BypassDown       = "down"        // the standby does not answer
	BypassNotStandby = "not_standby" // the server is not in recovery
	BypassLag        = "lag"         // it lags more than its bound
	BypassOwnWrite   = "own_write"   // it has not replayed the data owner's last write
)

// ReplicaStats are the replica's counters since UseReplica.
type ReplicaStats struct {
	// Reads went to the replica; Bypassed went to the primary, by reason.
	Reads    int64
	Bypassed map[string]int64
	// InUse: the last check found it usable; Lag is the replay lag it
	// found (the age of the oldest primary WAL position not replayed).
	InUse bool
	Lag   time.Duration
}

// replica is the standby's pool and what its monitor last found.
type replica struct {
	pool *pgxpool.Pool
	// connCfg and conn are the monitor's connection (only the monitor
	// uses conn; nil until connected).
	connCfg *pgx.ConnConfig
	conn    *pgx.Conn
	maxLag  time.Duration
	log     *slog.Logger

	mu       sync.Mutex
	bypass   string // "" when in use, else a Bypass* reason
	replayed int64  // the standby's pg_last_wal_replay_lsn, as a byte position
	lag      time.Duration
	// pending are the primary's WAL positions the monitor sampled that the
	// standby had not replayed yet, oldest first: the oldest one's age is
	// the lag (an idle primary's standby is caught up, not lagging).
	pending []walSample
	// written is each data owner's primary WAL position after its last
	// write, until the standby has replayed past it.
	written  map[int64]int64
	reads    int64
	bypassed map[string]int64
}

type walSample struct {
	lsn int64
	at  time.Time
}

// maxPendingSamples bounds the samples kept while the standby falls
// behind: past it the oldest stays (the lag keeps growing), newer ones are
// not kept.
const maxPendingSamples = 1000

// UseReplica sends the reads of requests marked ReadOnly to the standby at
// url while it answers, is in recovery and lags at most maxLag; its pool
// has the primary's settings. A monitor checks it every maxLag/5 (100 ms
// to 1 s) until ctx ends, and log says when it is bypassed and when it is
// in use again. A standby down at the start is not an error: it is
// bypassed until it answers.
func (s *Store) UseReplica(ctx context.Context, url string, maxLag time.Duration, log *slog.Logger) error {
	cfg, err := poolConfig(url, s.opts)
	if err != nil {
		return fmt.Errorf("read replica: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("read replica: %w", err)
	}
	// The monitor's own connection: a pool busy with long searches does
	// not make the standby look down. A check past its time gives up the
	// socket at once.
	cc := cfg.ConnConfig.Copy()
	cc.Tracer = nil
	cc.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	r := &replica{pool: pool, connCfg: cc, maxLag: maxLag, log: log, bypass: BypassDown,
		written: map[int64]int64{}, bypassed: map[string]int64{}}
	s.replica = r
	r.check(ctx, s)
	go r.watch(ctx, s)
	return nil
}

// ReplicaStats answers the replica's counters; ok is false without one.
func (s *Store) ReplicaStats() (st ReplicaStats, ok bool) {
	r := s.replica
	if r == nil {
		return st, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st = ReplicaStats{Reads: r.reads, Bypassed: make(map[string]int64, len(r.bypassed)), InUse: r.bypass == "", Lag: r.lag}
	for k, v := range r.bypassed {
		st.Bypassed[k] = v
	}
	return st, true
}

type readOnlyKey struct{}

// ReadOnly marks ctx: the request only reads, for data owner ownerID, and
// its reads through ReadPool may go to the replica.
func ReadOnly(ctx context.Context, ownerID int64) context.Context {
	return context.WithValue(ctx, readOnlyKey{}, ownerID)
}

// ReadPool is the pool a read under ctx runs on: the replica when ctx is
// marked ReadOnly and the replica is usable for its data owner, else the
// primary.
func (s *Store) ReadPool(ctx context.Context) *pgxpool.Pool {
	owner, marked := ctx.Value(readOnlyKey{}).(int64)
	if s.replica == nil || !marked {
		return s.pool
	}
	if s.replica.usable(owner) {
		return s.replica.pool
	}
	return s.pool
}

// Wrote records that data owner ownerID has just written: its reads go to
// the primary until the replica has replayed the primary's present WAL
// position (nothing without a replica).
func (s *Store) Wrote(ctx context.Context, ownerID int64) {
	r := s.replica
	if r == nil {
		return
	}
	lsn, err := primaryLSN(context.WithoutCancel(ctx), s)
	if err != nil {
		r.log.Warn("read replica: the primary's WAL position after a write is unknown; the data owner's next reads may miss it",
			"data_owner_id", ownerID, "err", err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if lsn > r.written[ownerID] {
		r.written[ownerID] = lsn
	}
}

// usable reports whether a read of ownerID may go to the replica, and
// counts where it went.
func (r *replica) usable(ownerID int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	why := r.bypass
	// A lagging standby that has not replayed the data owner's write is
	// bypassed for that write first (it would be even within the bound).
	if w, ok := r.written[ownerID]; (why == "" || why == BypassLag) && ok && w > r.replayed {
		why = BypassOwnWrite
	}
	if why != "" {
		r.bypassed[why]++
		return false
	}
	r.reads++
	return true
}

// checkEvery is how often the monitor looks at the replica.
func (r *replica) checkEvery() time.Duration {
	return min(max(r.maxLag/5, 100*time.Millisecond), time.Second)
}

func (r *replica) watch(ctx context.Context, s *Store) {
	defer r.pool.Close()
	defer func() {
		if r.conn != nil {
			r.closeConn()
		}
	}()
	t := time.NewTicker(r.checkEvery())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.check(ctx, s)
		}
	}
}

// check samples the primary's WAL position, then the standby's replay
// position, and decides whether the standby is in use.
func (r *replica) check(ctx context.Context, s *Store) {
	cctx, cancel := context.WithTimeout(ctx, max(r.checkEvery(), time.Second))
	defer cancel()
	now := time.Now()
	primary, perr := primaryLSN(cctx, s)
	standby, replayed, err := r.standbyState(cctx)
	if ctx.Err() != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if perr == nil && (len(r.pending) == 0 || primary > r.pending[len(r.pending)-1].lsn) && len(r.pending) < maxPendingSamples {
		r.pending = append(r.pending, walSample{lsn: primary, at: now})
	}
	why := ""
	switch {
	case err != nil:
		why = BypassDown
	case !standby:
		why = BypassNotStandby
	default:
		r.replayed = max(r.replayed, replayed)
		for len(r.pending) > 0 && r.pending[0].lsn <= r.replayed {
			r.pending = r.pending[1:]
		}
		r.lag = 0
		if len(r.pending) > 0 {
			r.lag = now.Sub(r.pending[0].at)
		}
		if r.lag > r.maxLag {
			why = BypassLag
		}
		for owner, lsn := range r.written {
			if lsn <= r.replayed {
				delete(r.written, owner)
			}
		}
	}
	if why == r.bypass {
		return
	}
	switch why {
	case "":
		r.log.Info("read replica in use: searches, exports and other reads go to it", "lag", r.lag.Round(time.Millisecond).String())
	case BypassDown:
		r.log.Warn("read replica is down; reads go to the primary until it answers", "err", err)
	case BypassNotStandby:
		r.log.Warn("read replica is not a standby (pg_is_in_recovery() is false); reads go to the primary")
	case BypassLag:
		r.log.Warn("read replica lags beyond its bound; reads go to the primary until it catches up",
			"lag", r.lag.Round(time.Millisecond).String(), "max_lag", r.maxLag.String())
	}
	r.bypass = why
}

// standbyState asks the standby, over the monitor's connection (made
// again after a failure), whether it is in recovery and what it replayed.
func (r *replica) standbyState(ctx context.Context) (standby bool, replayed int64, err error) {
	if r.conn == nil {
		if r.conn, err = pgx.ConnectConfig(ctx, r.connCfg); err != nil {
			return false, 0, err
		}
	}
	err = r.conn.QueryRow(ctx, `SELECT pg_is_in_recovery(),
		coalesce((pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint, 0)`).Scan(&standby, &replayed)
	if err != nil {
		r.closeConn()
	}
	return standby, replayed, err
}

// closeConn closes the monitor's connection, waiting 1 s at most.
func (r *replica) closeConn() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = r.conn.Close(ctx)
	r.conn = nil
}

// primaryLSN is the primary's present WAL position, as a byte position.
func primaryLSN(ctx context.Context, s *Store) (int64, error) {
	var lsn int64
	err := s.pool.QueryRow(ctx, `SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint`).Scan(&lsn)
	return lsn, err
}
