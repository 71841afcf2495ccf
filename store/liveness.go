package store

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
)

// Liveness watches whether PostgreSQL answers: it pings it over a
// connection of its own (not the pool's, which requests may all hold)
// every LivenessInterval(bound), and declares it down when neither the
// ping nor a fresh connection answers within bound. Requests end when it
// is declared down (server's deadline middleware), so a frozen database
// (SIGSTOP, a hung host: connections open, nothing answers) is a 503
// within about bound, whatever the request deadline.
type Liveness struct {
	bound time.Duration
	cfg   *pgx.ConnConfig
	conn  *pgx.Conn // the pinging connection (run's goroutine only)

	mu     sync.Mutex
	down   chan struct{} // closed while down; a new open one once it answers again
	isDown bool
}

// LivenessInterval is how often Liveness pings with bound: half of it,
// between 100 ms and 1 s.
func LivenessInterval(bound time.Duration) time.Duration {
	return min(max(bound/2, 100*time.Millisecond), time.Second)
}

// WatchLiveness starts watching until ctx ends.
func (s *Store) WatchLiveness(ctx context.Context, bound time.Duration) *Liveness {
	cfg := s.pool.Config().ConnConfig.Copy()
	cfg.Tracer = nil
	cfg.ConnectTimeout = bound
	// A ping past its time gives up the socket at once (pgx's default),
	// not after a cancel request's grace as the pool's statements do.
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	l := &Liveness{bound: bound, cfg: cfg, down: make(chan struct{})}
	go l.run(ctx)
	return l
}

// Down is closed when PostgreSQL is declared down: frozen, or not
// answering at all (now or later, until it answers again: then Down answers
// another channel).
func (l *Liveness) Down() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.down
}

// Bound is the time PostgreSQL has to answer a ping.
func (l *Liveness) Bound() time.Duration { return l.bound }

func (l *Liveness) run(ctx context.Context) {
	tick := time.NewTicker(LivenessInterval(l.bound))
	defer tick.Stop()
	for {
		l.set(l.ping(ctx))
		select {
		case <-ctx.Done():
			if l.conn != nil {
				closeCtx, cancel := context.WithTimeout(context.Background(), l.bound)
				_ = l.conn.Close(closeCtx)
				cancel()
			}
			return
		case <-tick.C:
		}
	}
}

// ping tells whether PostgreSQL answered within bound: over the open
// connection, else (or when it broke) over a fresh one.
func (l *Liveness) ping(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, l.bound)
	defer cancel()
	for range 2 {
		if l.conn == nil {
			c, err := pgx.ConnectConfig(ctx, l.cfg)
			if err != nil {
				return false
			}
			l.conn = c
		}
		err := l.conn.Ping(ctx)
		if err == nil {
			return true
		}
		_ = l.conn.Close(ctx)
		l.conn = nil
		if ctx.Err() != nil {
			return false
		}
	}
	return false
}

func (l *Liveness) set(answered bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case !answered && !l.isDown:
		close(l.down)
		l.isDown = true
	case answered && l.isDown:
		l.down = make(chan struct{})
		l.isDown = false
	}
}
