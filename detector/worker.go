package detector

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/fleetgraph/fleetgraph/store"
)

// Defaults of Config.
const (
	// DefaultSweepEvery is how often the resolution sweep runs, and how
	// long a swept client's states rest before the next sweep.
	DefaultSweepEvery = time.Minute
	// DefaultWorkers is how many clients are judged at once per process.
	DefaultWorkers = 4
	// batchSize bounds the measurements one transaction judges.
	batchSize = 2000
	// lostAfter: inbox rows older than this without a job get one (the
	// sweep requeues them); heldFor: rows an import held that long were
	// left by an import that died.
	lostAfter = 30 * time.Second
	heldFor   = time.Hour
	// jobSlice: a job that judged batches this long lets River run it
	// again (every batch committed) rather than run into the time limit.
	jobSlice = 5 * time.Second
	// sweepClients bounds the clients one sweep run visits.
	sweepClients = 2000
)

// Config tunes the detector's jobs.
type Config struct {
	Store  *store.Store
	Logger *slog.Logger
	// SweepEvery (0: a minute; negative: no periodic sweep, for tests).
	SweepEvery time.Duration
	// Workers judging clients at once (0: DefaultWorkers).
	Workers int
	// Now is the sweep's clock (nil: time.Now; tests move it).
	Now func() time.Time
}

// Jobs are the detector's River workers and queue, run on the process's
// one River client (package jobs).
type Jobs struct {
	cfg Config
	// judging holds a token per client judged now: Workers at most.
	judging chan struct{}
}

// fetchedAhead is how many jobs per judging worker River holds: the
// queue runs fetchedAhead × Workers jobs at once, of which Workers judge
// and the others wait for their turn (judging), without a connection.
// River fetches jobs for free slots when a job is inserted (a client's
// report whose job already waits inserts none), after a completion, and
// every second; with only Workers slots, the slots freed while a fetch was
// on its way stayed empty until the next completion: 1.5 of 4 workers
// were busy on average while hundreds of jobs waited (docs/benchmarks.md).
// With jobs fetched ahead, a finished step's token goes at once to a job
// already fetched.
const fetchedAhead = 2

// New makes the detector's jobs.
func New(cfg Config) *Jobs {
	if cfg.SweepEvery == 0 {
		cfg.SweepEvery = DefaultSweepEvery
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Jobs{cfg: cfg, judging: make(chan struct{}, cfg.Workers)}
}

// Register adds the workers.
func (j *Jobs) Register(w *river.Workers) error {
	if err := river.AddWorkerSafely(w, &analyzeWorker{j: j}); err != nil {
		return err
	}
	return river.AddWorkerSafely(w, &sweepWorker{j: j})
}

// Queue is the analyzer's queue and how many of its jobs this process
// runs at once (fetchedAhead × Workers; Workers of them judge); the
// sweep is a periodic job of package jobs (SweepArgs).
func (j *Jobs) Queue() (string, int) { return store.AnalyzerQueue, fetchedAhead * j.cfg.Workers }

// analyzeWorker judges one client's inbox, batch by batch; the last
// batch's transaction completes the job.
type analyzeWorker struct {
	river.WorkerDefaults[store.AnalyzeArgs]
	j *Jobs
}

func (w *analyzeWorker) Work(ctx context.Context, job *river.Job[store.AnalyzeArgs]) error {
	a := job.Args
	done := func(tx pgx.Tx) error {
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	}
	select {
	case w.j.judging <- struct{}{}:
		defer func() { <-w.j.judging }()
	case <-ctx.Done():
		return ctx.Err()
	}
	start := time.Now()
	for {
		more, err := w.j.cfg.Store.AnalyzeInbox(ctx, a.DataOwnerID, a.ClientUUID, batchSize, judgeBatch, done)
		if err != nil || !more {
			return err
		}
		if time.Since(start) > jobSlice {
			return river.JobSnooze(0) // again at once, within the job time limit
		}
	}
}

// judgeBatch judges a batch's measurements in time order.
func judgeBatch(b store.AnalyzerBatch) (store.AnalyzerResult, error) {
	j, err := NewJudge(b)
	if err != nil {
		return store.AnalyzerResult{}, err
	}
	for _, d := range b.Measurements {
		j.Observe(d)
	}
	return j.Result()
}

// SweepArgs is the periodic resolution sweep.
type SweepArgs struct{}

// Kind names the job in river_job.
func (SweepArgs) Kind() string { return "analyzer_sweep" }

// InsertOpts puts the sweep on the analyzer's queue.
func (SweepArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: store.AnalyzerQueue} }

type sweepWorker struct {
	river.WorkerDefaults[SweepArgs]
	j *Jobs
}

func (w *sweepWorker) Work(ctx context.Context, _ *river.Job[SweepArgs]) error {
	return w.j.Sweep(ctx)
}

// Sweep runs the resolution sweep once: every client due gets its states
// swept at the current time, and inbox rows whose job was lost are queued
// again.
func (j *Jobs) Sweep(ctx context.Context) error {
	every := max(j.cfg.SweepEvery, 0)
	if n, err := j.cfg.Store.RequeueAnalysis(ctx, lostAfter, heldFor); err != nil {
		return err
	} else if n > 0 {
		j.cfg.Logger.Info("analyzer: queued clients whose analysis was lost", "clients", n)
	}
	due, err := j.cfg.Store.SweepDue(ctx, every, sweepClients)
	if err != nil {
		return err
	}
	now := j.cfg.Now()
	sweep := func(b store.AnalyzerBatch) (store.AnalyzerResult, error) {
		jd, err := NewJudge(b)
		if err != nil {
			return store.AnalyzerResult{}, err
		}
		jd.Sweep(now)
		return jd.Result()
	}
	for _, c := range due {
		if _, err := j.cfg.Store.SweepStates(ctx, c.DataOwnerID, c.ClientUUID, sweep); err != nil {
			return err
		}
	}
	return nil
}
