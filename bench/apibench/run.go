package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"text/tabwriter"
	"time"
)

// checkAll fails unless both sides of every workload answer the same.
func checkAll(ctx context.Context, c *http.Client, ws []workload) error {
	for _, w := range ws {
		a, err := fetch(ctx, c, w.a)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", w.name, w.a.name, err)
		}
		b, err := fetch(ctx, c, w.b)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", w.name, w.b.name, err)
		}
		if err := w.compare(a, b); err != nil {
			return fmt.Errorf("%s: %s and %s answer differently: %w", w.name, w.a.name, w.b.name, err)
		}
		fmt.Fprintf(os.Stderr, "checked %-28s same answer from %s and %s (%d bytes from fleetgraph)\n", w.name, w.a.name, w.b.name, len(a))
	}
	return nil
}

// statements measures fleetgraph's statements per request of each workload.
func statements(ctx context.Context, o options, c *http.Client, ws []workload) (map[string]float64, error) {
	out := map[string]float64{}
	if o.fleetgraphBin == "" {
		return out, nil
	}
	ctr, err := startCounter(ctx, o.fleetgraphBin, o.databaseURL)
	if err != nil {
		return nil, err
	}
	defer ctr.stop()
	for _, w := range ws {
		n, err := ctr.perRequest(c, w.a, o.fleetgraph, 5)
		if err != nil {
			return nil, fmt.Errorf("%s: counting statements: %w", w.name, err)
		}
		out[w.name] = n
	}
	return out, nil
}

// result is one workload's figures.
type result struct {
	w          workload
	a, b       sideStats
	statements float64
	peakRSS    int64 // bytes; 0 when not measured
}

// measure warms both sides up, then runs the rounds A,B,A,B,…
func measure(ctx context.Context, o options, w workload) (result, error) {
	r := result{w: w}
	ca, cb := newClient(o.conns, o.timeout), newClient(o.conns, o.timeout)
	// Warm-up at full load: PostGraphile (V8's JIT) needs some hundred
	// requests of a query before it reaches its speed.
	runRound(ca, w.a, o.conns, o.warmup)
	runRound(cb, w.b, o.conns, o.warmup)
	if w.listRSS && o.fleetgraphPID > 0 {
		if err := resetPeakRSS(o.fleetgraphPID); err != nil {
			return r, fmt.Errorf("reset peak RSS: %w", err)
		}
	}
	for i := range o.rounds {
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		ra, rb := runRound(ca, w.a, o.conns, o.round), runRound(cb, w.b, o.conns, o.round)
		r.a.add(ra)
		r.b.add(rb)
		fmt.Fprintf(os.Stderr, "%-28s round %d: %s %.1f req/s, %s %.1f req/s\n", w.name, i+1,
			w.a.name, ra.throughput(), w.b.name, rb.throughput())
	}
	if w.listRSS && o.fleetgraphPID > 0 {
		n, err := peakRSS(o.fleetgraphPID)
		if err != nil {
			return r, err
		}
		r.peakRSS = n
	}
	return r, nil
}

// rssTarget is the most fleetgraph may hold under the list loads.
const rssTarget = 300 << 20

func report(out io.Writer, o options, rs []result) {
	fmt.Fprintf(out, "\n%d connections per side, %d rounds of %s per side (A,B interleaved), warm-up %s\n\n",
		o.conns, o.rounds, o.round, o.warmup)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "workload\tfleetgraph req/s\tp50\tother\treq/s\tp50\tratio\ttarget\t\tstatements/req\terrors\t")
	for _, r := range rs {
		ratio := 0.0
		if r.b.medianThroughput() > 0 {
			ratio = r.a.medianThroughput() / r.b.medianThroughput()
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%s\t%s\t%.1f\t%s\t%.2f\t≥ %.1f\t%s\t%s\t%d/%d\t\n", r.w.name,
			r.a.medianThroughput(), ms(r.a.p50()), r.w.b.name, r.b.medianThroughput(), ms(r.b.p50()),
			ratio, r.w.target, verdict(ratio >= r.w.target), stmts(r.statements), r.a.errors, r.b.errors)
	}
	_ = tw.Flush()
	for _, r := range rs {
		if r.peakRSS > 0 {
			fmt.Fprintf(out, "fleetgraph peak RSS during %s: %d MB (target ≤ %d MB) %s\n",
				r.w.name, r.peakRSS>>20, rssTarget>>20, verdict(r.peakRSS <= rssTarget))
		}
		for _, e := range []error{r.a.firstErr, r.b.firstErr} {
			if e != nil {
				fmt.Fprintf(out, "%s: first error: %v\n", r.w.name, e)
			}
		}
	}
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func stmts(n float64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", n)
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}
