// Package jobs runs the process's background work on River: one client
// per process works every kind of job and inserts the periodic ones. What
// runs is declared in one place, process.go: Workers (every kind of job
// and the queue it runs on) and periodic (every periodic job, how often).
//
// A job is a row of the database, inserted in the transaction that owes
// it (a webhook delivery, an e-mail: package store), so none is lost on a
// crash or kill -9; River retries a failed job with its backoff, and
// rescues the job of a process that died after RescueAfter. Periodic jobs
// are inserted by the elected leader among the processes over one
// database (River's leadership, the river_leader row), once at start and
// then every period, unless the last run still waits or runs.
package jobs

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/fleetgraph/fleetgraph/store"
)

// Periodic is a job River inserts every Every. A run that fails is not
// retried: the next period's run does its work (periodicOpts).
type Periodic struct {
	Every time.Duration
	Args  river.JobArgs
}

// periodicOpts: a periodic job is tried once, and a period's run is not
// inserted while the last one waits or runs (it took longer than its
// period, or its process died and River has not rescued it yet): no
// periodic job runs twice at once, on one process or several.
var periodicOpts = &river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByState: []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateScheduled}}}

// fetchCooldown is the least time between two fetches of jobs of a queue.
// River takes at most one job per free worker at a fetch, so a queue's
// jobs start at most workers / fetchCooldown a second, however short they
// are: with River's default of 100 ms, the analyzer's 4 workers started 45
// jobs a second although each ran 18 ms, and with 1,000 probes reporting
// (a job per client) a measurement waited about 24 s for its judging at
// any rate from 2,000 to 16,000 documents/s (bench/probes.sh). A fetch is
// one statement; a queue that is idle is not fetched more often for this
// (fetches follow inserts' notifications and River's 1 s poll).
const fetchCooldown = 10 * time.Millisecond

// Config is what one Runner works.
type Config struct {
	Store *store.Store
	Log   *slog.Logger
	// Workers works every kind of job of Queues.
	Workers *river.Workers
	// Queues: how many jobs of each queue run at once; a queue not named
	// is not worked by this process.
	Queues map[string]int
	// Periodic jobs this process inserts while it leads.
	Periodic []Periodic
	// JobTimeout bounds a job whose worker sets no Timeout of its own.
	JobTimeout time.Duration
	// RescueAfter is how long a job may run before River hands it to
	// another worker (its process died): above JobTimeout and every
	// worker's Timeout.
	RescueAfter time.Duration
}

// Runner is a running River client.
type Runner struct{ client *river.Client[pgx.Tx] }

// Start works cfg's jobs until Stop (or ctx ends). When it works
// store.QueueEmail, it first queues the mail that waits without a job.
func Start(ctx context.Context, cfg Config) (*Runner, error) {
	queues := map[string]river.QueueConfig{}
	for q, n := range cfg.Queues {
		queues[q] = river.QueueConfig{MaxWorkers: n}
	}
	periodic := make([]*river.PeriodicJob, len(cfg.Periodic))
	for i, p := range cfg.Periodic {
		args := p.Args
		periodic[i] = river.NewPeriodicJob(river.PeriodicInterval(p.Every),
			func() (river.JobArgs, *river.InsertOpts) { return args, periodicOpts },
			&river.PeriodicJobOpts{RunOnStart: true})
	}
	c, err := river.NewClient(riverpgxv5.New(cfg.Store.Pool()), &river.Config{
		ID:                   ClientID(time.Now()),
		Queues:               queues,
		FetchCooldown:        fetchCooldown,
		Workers:              cfg.Workers,
		JobTimeout:           cfg.JobTimeout,
		RescueStuckJobsAfter: cfg.RescueAfter,
		Logger:               slog.New(warnings{cfg.Log.Handler()}),
		PeriodicJobs:         periodic,
	})
	if err != nil {
		return nil, fmt.Errorf("job queue: %w", err)
	}
	if _, ok := cfg.Queues[store.QueueEmail]; ok {
		n, err := cfg.Store.QueueWaitingMail(ctx)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			cfg.Log.Info("queued waiting e-mail", "count", n)
		}
	}
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("job queue: %w", err)
	}
	return &Runner{client: c}, nil
}

// ClientID names the process's River client as River's default does (host
// and start time) with the process id between them: river_leader.leader_id
// and river_job.attempted_by then tell which process of a host leads and
// which ran a job (docs/operating.md "Scaling out").
func ClientID(started time.Time) string {
	host, _ := os.Hostname()
	host = strings.ReplaceAll(cmp.Or(host, "unknown_host"), ".", "_")
	return fmt.Sprintf("%.60s_pid%d_%s", host, os.Getpid(), strings.Replace(started.UTC().Format("2006_01_02T15_04_05.000000"), ".", "_", 1))
}

// PIDOf is the process id a ClientID names (0 when it names none).
func PIDOf(clientID string) int {
	m := pidInID.FindStringSubmatch(clientID)
	if m == nil {
		return 0
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

var pidInID = regexp.MustCompile(`_pid(\d+)_\d{4}_`)

// Stop waits for the running jobs to end (ctx bounds the wait).
func (r *Runner) Stop(ctx context.Context) error { return r.client.Stop(ctx) }

// warnings passes on River's warnings and errors only (its info lines
// report job counts every few seconds).
type warnings struct{ slog.Handler }

func (w warnings) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}
