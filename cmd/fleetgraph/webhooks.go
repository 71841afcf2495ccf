package main

import (
	"context"
	"flag"
	"github.com/fleetgraph/fleetgraph/detector"
	"log/slog"
	"time"

	"github.com/fleetgraph/fleetgraph/auth"
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
	fs.StringVar(&c.Webhooks.Timeout, "webhook-timeout", envOr("FLEETGRAPH_WEBHOOK_TIMEOUT", webhooks.DefaultTimeout.String()),
		"time limit of one webhook delivery attempt, a Go duration of at most 2m (env FLEETGRAPH_WEBHOOK_TIMEOUT)")
	fs.StringVar(&c.Webhooks.RescueAfter, "webhook-rescue-after", envOr("FLEETGRAPH_WEBHOOK_RESCUE_AFTER", ""),
		"how long a delivery attempt may stay running before it is tried again (its process died), a Go duration "+
			"(env FLEETGRAPH_WEBHOOK_RESCUE_AFTER); empty: the attempt time limit plus 35s")
}

// startWebhooks starts the delivery engine, which runs the analyzer's jobs
// too (package detector); stop waits for the running attempts (at most 10 s).
func (c *config) startWebhooks(ctx context.Context, st *store.Store, sealer *auth.Sealer, log *slog.Logger) (stop func(), err error) {
	allow, err := webhooks.ParseCIDRs(c.Webhooks.AllowCIDRs)
	if err != nil {
		return nil, err
	}
	timeout, err := duration(c.Webhooks.Timeout, webhooks.DefaultTimeout, maxRequestTimeout, "--webhook-timeout (FLEETGRAPH_WEBHOOK_TIMEOUT)")
	if err != nil {
		return nil, err
	}
	rescue, err := duration(c.Webhooks.RescueAfter, 0, 24*time.Hour, "--webhook-rescue-after (FLEETGRAPH_WEBHOOK_RESCUE_AFTER)")
	if err != nil {
		return nil, err
	}
	e, err := webhooks.New(webhooks.Config{Store: st, Sealer: sealer, Logger: log, AllowCIDRs: allow,
		Timeout: timeout, RescueAfter: rescue, Jobs: []webhooks.Jobs{detector.New(detector.Config{Store: st, Logger: log})}})
	if err != nil {
		return nil, err
	}
	if err := e.Start(ctx); err != nil {
		return nil, err
	}
	if len(allow) > 0 {
		log.Info("webhooks may be delivered to these non-public ranges", "ranges", c.Webhooks.AllowCIDRs)
	}
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.Stop(sctx); err != nil {
			log.Warn("stopping the webhook engine", "err", err)
		}
	}, nil
}
