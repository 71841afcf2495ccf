package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/detector"
	"github.com/fleetgraph/fleetgraph/jobs"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/notify"
	"github.com/fleetgraph/fleetgraph/obs"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/webhooks"
)

// webhookConfig holds the settings of the webhook delivery engine.
type webhookConfig struct {
	// AllowCIDRs names private ranges webhooks may be delivered to,
	// comma-separated (webhooks.ParseCIDRs).
	AllowCIDRs string
	// Timeout of one attempt and RescueAfter (how long a delivery job may
	// run before another process takes it over), Go durations.
	Timeout, RescueAfter string
}

// webhookFlags registers the webhook engine's flags (serve only).
func (c *config) webhookFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Webhooks.AllowCIDRs, "webhook-allow-cidrs", envOr("FLEETGRAPH_WEBHOOK_ALLOW_CIDRS", ""),
		"comma-separated CIDR ranges of non-public addresses webhooks may be delivered to, such as 10.1.0.0/16 "+
			"(env FLEETGRAPH_WEBHOOK_ALLOW_CIDRS); empty: loopback, private, link-local and metadata addresses are refused")
	fs.StringVar(&c.Webhooks.Timeout, "webhook-timeout", envOr("FLEETGRAPH_WEBHOOK_TIMEOUT", limits.WebhookTimeout.String()),
		"time limit of one webhook delivery attempt, a Go duration of at most 2m (env FLEETGRAPH_WEBHOOK_TIMEOUT)")
	fs.StringVar(&c.Webhooks.RescueAfter, "webhook-rescue-after", envOr("FLEETGRAPH_WEBHOOK_RESCUE_AFTER", ""),
		"how long a delivery attempt may stay running before it is tried again (its process died), a Go duration "+
			"(env FLEETGRAPH_WEBHOOK_RESCUE_AFTER); empty: the attempt time limit plus 35s")
	fs.StringVar(&c.AnalyzerWorkers, "analyzer-workers", envOr("FLEETGRAPH_ANALYZER_WORKERS", ""),
		fmt.Sprintf("clients the anomaly analyzer judges at once in this process, each on a database connection, at most half "+
			"of --db-max-conns (env FLEETGRAPH_ANALYZER_WORKERS); empty: %d, or half the pool when that is smaller", detector.DefaultWorkers))
}

// startJobs starts the process's background work (package jobs): the
// webhook deliveries, the e-mail (through mailer, when there is one), the
// analyzer (judging judges clients at once, analyzerWorkers) and every
// periodic job (m records the rollup refreshes); stop waits for the
// running jobs (at most 10 s).
func (c *config) startJobs(ctx context.Context, st *store.Store, sealer *auth.Sealer, mailer *notify.Mailer,
	m *obs.Metrics, log *slog.Logger, judges int) (stop func(), err error) {
	allow, err := webhooks.ParseCIDRs(c.Webhooks.AllowCIDRs)
	if err != nil {
		return nil, err
	}
	timeout, err := duration(c.Webhooks.Timeout, limits.WebhookTimeout, limits.MaxRequestTimeout, "--webhook-timeout (FLEETGRAPH_WEBHOOK_TIMEOUT)")
	if err != nil {
		return nil, err
	}
	rescue, err := duration(c.Webhooks.RescueAfter, 0, 24*time.Hour, "--webhook-rescue-after (FLEETGRAPH_WEBHOOK_RESCUE_AFTER)")
	if err != nil {
		return nil, err
	}
	retention, err := c.retentionDays()
	if err != nil {
		return nil, err
	}
	if mailer == nil {
		log.Info("no SMTP server configured (--smtp-host, FLEETGRAPH_SMTP_HOST): e-mail stays queued in the outbox")
	} else {
		log.Info("e-mail goes out through SMTP", "server", mailer.Addr())
	}
	r, err := jobs.StartProcess(ctx, jobs.Process{Store: st, Log: log, Mailer: mailer, RescueAfter: rescue, ObserveRollups: m.RollupRound,
		RetentionDays: retention, Analyzer: detector.New(detector.Config{Store: st, Logger: log, Workers: judges}),
		Webhooks: webhooks.New(webhooks.Config{Store: st, Sealer: sealer, Logger: log, AllowCIDRs: allow, Timeout: timeout})})
	if err != nil {
		return nil, err
	}
	if len(allow) > 0 {
		log.Info("webhooks may be delivered to these non-public ranges", "ranges", c.Webhooks.AllowCIDRs)
	}
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.Stop(sctx); err != nil {
			log.Warn("stopping the background jobs", "err", err)
		}
	}, nil
}
