package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/fleetgraph/fleetgraph/detector"
	"github.com/fleetgraph/fleetgraph/notify"
	"github.com/fleetgraph/fleetgraph/search/pg"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/webhooks"
)

// The background work of fleetgraph serve, declared here and nowhere else:
// add a kind of job to Workers and, when it is periodic, to periodic.

// periodic is every periodic job of the process and how often it runs.
var periodic = []Periodic{
	{Every: webhooks.DefaultOfflineSweep, Args: webhooks.OfflineArgs{}},
	{Every: notify.RoundEvery, Args: notify.RoundArgs{}},
	{Every: LicenseEvery, Args: LicenseArgs{}},
	{Every: pg.RollupEvery, Args: pg.RollupArgs{}},
	{Every: ExpireEvery, Args: ExpireArgs{}},
	{Every: StatisticsEvery, Args: StatisticsArgs{}},
	{Every: detector.DefaultSweepEvery, Args: detector.SweepArgs{}},
}

// PeriodicKinds are the River kinds of the periodic jobs (river_job.kind),
// for what reads their runs back (bench/fleetprocs).
func PeriodicKinds() []string {
	kinds := make([]string, len(periodic))
	for i, p := range periodic {
		kinds[i] = p.Args.Kind()
	}
	return kinds
}

// Process is what the process's jobs need.
type Process struct {
	Store *store.Store
	Log   *slog.Logger
	// Webhooks delivers the webhooks' events.
	Webhooks *webhooks.Engine
	// Mailer sends the outbox; nil: the mail waits in the outbox (the
	// e-mail queue is not worked).
	Mailer *notify.Mailer
	// Analyzer judges the stored measurements (nil: the detector's
	// defaults).
	Analyzer *detector.Jobs
	// RescueAfter: Config.RescueAfter (0: the delivery job's timeout
	// plus 30 s).
	RescueAfter time.Duration
	// ObserveRollups, if not nil, is told each rollup refresh's days,
	// time and error (the server's metrics).
	ObserveRollups func(days int, took time.Duration, err error)
	// RetentionDays is the operator's default retention of documents
	// (nil keeps them; ExpireWorker).
	RetentionDays *int64
}

// Queue sizes of the process.
const (
	webhookWorkers = 10
	mailWorkers    = 2
	// periodicWorkers run the periodic jobs (river.QueueDefault).
	periodicWorkers = 2
)

// Workers registers the worker of every kind of job of p.
func Workers(p Process) (*river.Workers, error) {
	w := river.NewWorkers()
	if err := p.Webhooks.Register(w); err != nil {
		return nil, err
	}
	river.AddWorker(w, &notify.RoundWorker{Notifier: &notify.Notifier{Store: p.Store, Log: p.Log}})
	river.AddWorker(w, &LicenseWorker{Store: p.Store, Log: p.Log})
	river.AddWorker(w, &ExpireWorker{Store: p.Store, RetentionDays: p.RetentionDays, Log: p.Log})
	river.AddWorker(w, &StatisticsWorker{Store: p.Store, Log: p.Log})
	if err := p.analyzer().Register(w); err != nil {
		return nil, err
	}
	river.AddWorker(w, &pg.RollupWorker{Pool: p.Store.Pool(), Log: p.Log, Observe: p.ObserveRollups})
	if p.Mailer != nil {
		river.AddWorker(w, &notify.MailWorker{Store: p.Store, Mailer: p.Mailer, Log: p.Log})
	}
	return w, nil
}

// analyzer is p.Analyzer, or the detector with its defaults.
func (p Process) analyzer() *detector.Jobs {
	if p.Analyzer != nil {
		return p.Analyzer
	}
	return detector.New(detector.Config{Store: p.Store, Logger: p.Log})
}

// StartProcess works every job of the process until Stop (or ctx ends).
func StartProcess(ctx context.Context, p Process) (*Runner, error) {
	w, err := Workers(p)
	if err != nil {
		return nil, err
	}
	// Webhook deliveries run on river.QueueDefault with the periodic jobs
	// (the queue they were queued on before the mail had its own).
	queues := map[string]int{river.QueueDefault: webhookWorkers + periodicWorkers}
	if p.Mailer != nil {
		queues[store.QueueEmail] = mailWorkers
	}
	q, n := p.analyzer().Queue()
	queues[q] = n
	rescue, jobTimeout := p.RescueAfter, p.Webhooks.JobTimeout()
	switch {
	case rescue == 0:
		rescue = jobTimeout + 30*time.Second
	case rescue <= jobTimeout: // River wants it above the job timeout
		rescue = jobTimeout + time.Second
	}
	return Start(ctx, Config{Store: p.Store, Log: p.Log, Workers: w, Queues: queues, Periodic: periodic,
		JobTimeout: jobTimeout, RescueAfter: rescue})
}
