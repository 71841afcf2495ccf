package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

// checkAll fails unless fleetgraph and every peer answer each workload alike.
func checkAll(ctx context.Context, c *http.Client, ws []workload) error {
	for _, w := range ws {
		a, err := fetch(ctx, c, w.a)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", w.name, w.a.name, err)
		}
		for _, p := range w.peers {
			b, err := fetch(ctx, c, p.side)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", w.name, p.side.name, err)
			}
			if err := p.compare(a, b); err != nil {
				return fmt.Errorf("%s: %s and %s answer differently: %w", w.name, w.a.name, p.side.name, err)
			}
			fmt.Fprintf(os.Stderr, "checked %-28s same answer from %s and %s (%d bytes from fleetgraph)\n", w.name, w.a.name, p.side.name, len(a))
		}
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
	w workload
	// a[i] are fleetgraph's rounds run just before peer i's (peers[i]):
	// each ratio divides rounds next to each other in time.
	a, peers []sideStats

	statements float64
	peakRSS    int64 // bytes; 0 when not measured
}

// measure warms every side up, then runs the rounds fleetgraph, peer 1,
// fleetgraph, peer 2, …
func measure(ctx context.Context, o options, w workload) (result, error) {
	r := result{w: w, a: make([]sideStats, len(w.peers)), peers: make([]sideStats, len(w.peers))}
	ca := newClient(o.conns, o.timeout)
	cs := make([]*http.Client, len(w.peers))
	// Warm-up at full load: PostGraphile (V8's JIT) needs some hundred
	// requests of a query before it reaches its speed.
	runRound(ca, w.a, o.conns, o.warmup)
	for i, p := range w.peers {
		cs[i] = newClient(o.conns, o.timeout)
		runRound(cs[i], p.side, o.conns, o.warmup)
	}
	if w.listRSS && o.fleetgraphPID > 0 {
		if err := resetPeakRSS(o.fleetgraphPID); err != nil {
			return r, fmt.Errorf("reset peak RSS: %w", err)
		}
	}
	for i := range o.rounds {
		for j, p := range w.peers {
			if ctx.Err() != nil {
				return r, ctx.Err()
			}
			ra, rb := runRound(ca, w.a, o.conns, o.round), runRound(cs[j], p.side, o.conns, o.round)
			r.a[j].add(ra)
			r.peers[j].add(rb)
			fmt.Fprintf(os.Stderr, "%-28s round %d: %s %.1f req/s, %s %.1f req/s\n", w.name, i+1,
				w.a.name, ra.throughput(), p.side.name, rb.throughput())
		}
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
	fmt.Fprintf(out, "\n%d connections per side, %d rounds of %s per side and peer (fleetgraph's round just before each peer's; "+
		"its figures in a row are those rounds), warm-up %s; load average %s at the start, %s at the end\n\n",
		o.conns, o.rounds, o.round, o.warmup, o.loadAtStart, loadAverage())
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "workload\tfleetgraph req/s\tp50\tpeer\treq/s\tp50\tratio\ttarget\t\tstatements/req\terrors\t")
	for _, r := range rs {
		for i, p := range r.w.peers {
			a, b := &r.a[i], &r.peers[i]
			ratio := 0.0
			if b.medianThroughput() > 0 {
				ratio = a.medianThroughput() / b.medianThroughput()
			}
			fmt.Fprintf(tw, "%s\t%.1f\t%s\t%s\t%.1f\t%s\t%.2f\t≥ %.1f\t%s\t%s\t%d/%d\t\n", r.w.name,
				a.medianThroughput(), ms(a.p50()), p.side.name, b.medianThroughput(), ms(b.p50()),
				ratio, p.target, verdict(ratio >= p.target), stmts(r.statements), a.errors, b.errors)
		}
	}
	_ = tw.Flush()
	for _, r := range rs {
		if r.peakRSS > 0 {
			fmt.Fprintf(out, "fleetgraph peak RSS during %s: %d MB (target ≤ %d MB) %s\n",
				r.w.name, r.peakRSS>>20, rssTarget>>20, verdict(r.peakRSS <= rssTarget))
		}
		for i, p := range r.w.peers {
			if e := r.a[i].firstErr; e != nil {
				fmt.Fprintf(out, "%s: fleetgraph (next to %s): first error: %v\n", r.w.name, p.side.name, e)
			}
			if e := r.peers[i].firstErr; e != nil {
				fmt.Fprintf(out, "%s: %s: first error: %v\n", r.w.name, p.side.name, e)
			}
		}
	}
}

// loadAverage is the machine's 1, 5 and 15 minute load averages.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
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
