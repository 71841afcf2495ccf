// Package fleetprocs runs several fleetgraph serve processes on one
// database under mixed load and kills one of them with SIGKILL mid-run
// (issue 29, "many processes"); bench/procs.sh runs it through
// bench/procs, and cmd/fleetgraph's TestManyProcessesSurviveKill runs a
// shorter one. The load: simulated probes registering and reporting
// measurements (client API), an admin (REST: clients listed and disabled,
// ISPs made and deleted), an exporter (export REST: listings and
// searches), a GraphQL subscription over WebSocket on every process and a
// webhook endpoint in this process subscribed to every event type. The
// process killed is the River leader of the moment, so that the periodic
// jobs must move to another process.
//
// Afterwards it reads back from the database and its own records: every
// report answered 2xx is stored exactly once; every event has reached the
// webhook receiver at least once; no two runs of a periodic job (nor two
// analyses of one client) overlapped in time, and every periodic job ran
// again after the leader died; the analyzer's inbox drained; every
// subscription on a process that stayed up received every event written
// after it started, through whichever process.
package fleetprocs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Config is one run.
type Config struct {
	// DatabaseURL is the (migrated or empty) database the processes share.
	DatabaseURL string
	// Work holds the data dir and each process's log.
	Work string
	// Command makes the command of `fleetgraph args...` with env added
	// to this process's environment.
	Command func(args, env []string) *exec.Cmd
	// Addrs are the processes' listen addresses, one per process.
	Addrs []string
	// ReceiverAddr is where the webhook receiver listens (127.0.0.1:0: any
	// port).
	ReceiverAddr string
	// Duration of the load; the River leader is killed at KillAt of it.
	Duration time.Duration
	KillAt   float64
	// RestartAfter: the killed process is started again this long after
	// the kill (0: it stays dead).
	RestartAfter time.Duration
	// NoticeAfter is how long the load still sends requests to the killed
	// process (a load balancer's health check interval): they fail and
	// are retried on another process.
	NoticeAfter time.Duration
	// Probes report at once, Batch measurements each per report, every
	// Interval; a probe that has reported Reports times is replaced by a
	// new one (a registration, so an event, through some process).
	Probes, Batch, Reports int
	Interval               time.Duration
	// PoolSize is each process's --db-max-conns.
	PoolSize int
	// Drain bounds the wait after the load for deliveries, the analyzer,
	// the periodic jobs and the subscriptions to catch up.
	Drain time.Duration
	// Env is more of the processes' environment (settings).
	Env []string
	// Log gets the run's progress lines.
	Log io.Writer
}

// process is one fleetgraph serve.
type process struct {
	n    int // 1-based, as printed
	addr string
	mu   sync.Mutex
	cmd  *exec.Cmd
	pids []int // every process id it had (a restart adds one)
	up   atomic.Bool
}

func (p *process) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pids[len(p.pids)-1]
}

// run is the state of one run.
type run struct {
	cfg   Config
	start time.Time
	db    *pgxpool.Pool
	http  *http.Client
	procs []*process
	env   []string

	owner         int64
	admin, export string
	regKey        string

	rr   atomic.Uint64 // round robin over the processes that are up
	rec  *receiver
	subs *subscriptions
	res  *Result
	mu   sync.Mutex // res's maps the load writes

	killed    *process
	killedAt  time.Time
	leaders   []leaderTerm
	stopWatch context.CancelFunc
	watchDone chan struct{}
}

// Run runs cfg and answers what it counted (Result.Failures lists what
// went wrong); an error is a run that could not be made.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if len(cfg.Addrs) < 2 || cfg.Command == nil || cfg.DatabaseURL == "" || cfg.Work == "" {
		return nil, errors.New("fleetprocs: DatabaseURL, Work, Command and two or more Addrs are required")
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	dbCfg, err := pgxpool.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	dbCfg.MaxConns = 2
	dbCfg.ConnConfig.RuntimeParams["application_name"] = "fleetprocs"
	db, err := pgxpool.NewWithConfig(ctx, dbCfg)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r := &run{cfg: cfg, db: db, res: newResult(len(cfg.Addrs)),
		http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	r.env = []string{"DATABASE_URL=" + cfg.DatabaseURL, "FLEETGRAPH_DATA_DIR=" + filepath.Join(cfg.Work, "data"),
		// A fixed secret every process shares; never a production secret.
		"FLEETGRAPH_SECRET_KEY=0000000000000000000000000000000000000000000000000000000000000000",
		"FLEETGRAPH_DB_MAX_CONNS=" + fmt.Sprint(max(cfg.PoolSize, 1)),
		"FLEETGRAPH_WEBHOOK_ALLOW_CIDRS=127.0.0.1/32",
		// The rate limits stay on but refuse nothing of this load.
		"FLEETGRAPH_RATE_LIMIT_KEY=1000000/1s", "FLEETGRAPH_RATE_LIMIT_DATA_OWNER=1000000/1s", "FLEETGRAPH_RATE_LIMIT_PROBE=1000000/1s"}
	r.env = append(r.env, cfg.Env...)
	defer r.stopAll()
	if err := r.setUp(ctx); err != nil {
		return nil, err
	}
	if err := r.load(ctx); err != nil {
		return nil, err
	}
	r.drain(ctx)
	if err := r.collect(ctx); err != nil {
		return nil, err
	}
	return r.res, nil
}

func (r *run) logf(format string, args ...any) {
	fmt.Fprintf(r.cfg.Log, "%6.1fs  %s\n", time.Since(r.start).Seconds(), fmt.Sprintf(format, args...))
}

// fleetgraph runs a fleetgraph command to its end and answers its output.
func (r *run) fleetgraph(ctx context.Context, args ...string) ([]byte, error) {
	c := r.cfg.Command(args, r.env)
	out, err := c.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			stderr = ee.Stderr
		}
		return nil, fmt.Errorf("fleetgraph %s: %w: %s", args[0], err, stderr)
	}
	return out, ctx.Err()
}

// startProcess starts p (again) and waits for its /readyz.
func (r *run) startProcess(ctx context.Context, p *process) error {
	log, err := openLog(filepath.Join(r.cfg.Work, fmt.Sprintf("serve-%d.log", p.n)))
	if err != nil {
		return err
	}
	c := r.cfg.Command([]string{"serve", "--addr", p.addr}, r.env)
	c.Stdout, c.Stderr = log, log
	if err := c.Start(); err != nil {
		log.Close()
		return err
	}
	go func() { _ = c.Wait(); log.Close() }()
	p.mu.Lock()
	p.cmd = c
	p.pids = append(p.pids, c.Process.Pid)
	p.mu.Unlock()
	for deadline := time.Now().Add(60 * time.Second); ; {
		resp, err := r.http.Get("http://" + p.addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				p.up.Store(true)
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("process %d on %s not ready (log in %s)", p.n, p.addr, r.cfg.Work)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill sends p SIGKILL: no shutdown, no cleanup.
func (p *process) kill() {
	p.signalKill()
	p.up.Store(false)
}

func (p *process) signalKill() {
	p.mu.Lock()
	c := p.cmd
	p.mu.Unlock()
	if c != nil && c.Process != nil {
		_ = c.Process.Signal(syscall.SIGKILL)
	}
}

// stopAll ends every process (SIGTERM, then SIGKILL).
func (r *run) stopAll() {
	for _, p := range r.procs {
		p.mu.Lock()
		c := p.cmd
		p.mu.Unlock()
		if c != nil && c.Process != nil {
			_ = c.Process.Signal(syscall.SIGTERM)
		}
	}
	time.Sleep(time.Second)
	for _, p := range r.procs {
		p.kill()
	}
	if r.subs != nil {
		r.subs.closeAll()
	}
	if r.rec != nil {
		r.rec.close()
	}
}

// next is a process that is up, round robin: what a load balancer whose
// health check saw the kill at once would pick.
func (r *run) next() *process {
	for range 2 * len(r.procs) {
		p := r.procs[r.rr.Add(1)%uint64(len(r.procs))]
		if p.up.Load() {
			return p
		}
	}
	return r.procs[0]
}

// freeListener listens on addr (127.0.0.1:0 for any port).
func freeListener(addr string) (net.Listener, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	return net.Listen("tcp", addr)
}
