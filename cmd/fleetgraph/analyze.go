package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/fleetgraph/fleetgraph/detector"
	"github.com/fleetgraph/fleetgraph/store"
)

// analyzeUsage is the usage text of "fleetgraph analyze".
const analyzeUsage = `Usage: fleetgraph analyze --data-owner NAME [--since TIME] [--rule ID]

Replays anomaly detection over the data owner's stored measurements, client
by client in time order, from fresh detector states (docs/analyzer.md). It
is deterministic and idempotent: the same data, rules and overrides give the
same episodes, ids included; episodes it makes again replace the stored
ones, detected episodes it does not make again (first seen since --since,
of --rule) are deleted. Events (webhooks, e-mail, subscriptions) tell only
what changed. A running server may keep serving meanwhile.

Flags:
`

// analyze is "fleetgraph analyze".
func analyze(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg config
	var owner, since, rule string
	fs := flag.NewFlagSet("analyze", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, analyzeUsage)
		fs.PrintDefaults()
	}
	cfg.storeFlags(fs)
	fs.StringVar(&owner, "data-owner", "", "short name (slug) of the data owner")
	fs.StringVar(&since, "since", "", "only measurements created at or after this ISO 8601 time (default: all)")
	fs.StringVar(&rule, "rule", "", "only this rule id (default: every enabled rule)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var opt detector.AnalyzeOptions
	switch {
	case owner == "":
		return errors.New("--data-owner is required")
	case since != "":
		t, err := store.ParseTime(since)
		if err != nil {
			return fmt.Errorf("--since: %w", err)
		}
		opt.Since = t
	}
	st, closeStore, err := cfg.openStore(ctx, newLogger())
	if err != nil {
		return err
	}
	defer closeStore()
	o, err := st.DataOwnerBySlug(ctx, owner)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("data owner %q not found", owner)
	}
	if err != nil {
		return err
	}
	if rule != "" {
		r, err := st.AnomalyRule(ctx, o.ID, rule)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("--rule: the data owner has no rule %q (GET /anomaly_rules lists them)", rule)
		}
		if err != nil {
			return err
		}
		if !r.Enabled {
			return fmt.Errorf("--rule: rule %q is disabled", rule)
		}
		opt.RuleID = rule
	}
	start := time.Now()
	sum, err := detector.Analyze(ctx, st, o.ID, opt)
	elapsed := time.Since(start)
	fmt.Fprintf(stdout, "analyzed %d measurements of %d clients of %s in %s (%.0f measurements/s)\n", sum.Measurements,
		sum.Clients, owner, elapsed.Round(time.Millisecond), float64(sum.Measurements)/max(elapsed.Seconds(), 1e-9))
	return err
}
