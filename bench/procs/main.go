// Command procs is the many-processes run of issue 29 (bench/procs.sh
// builds fleetgraph and runs it; not part of CI): -procs fleetgraph serve
// processes on one database under mixed load, the River leader killed
// with SIGKILL mid-run and started again after -restart-after (0: not),
// then the counts of package fleetprocs. It exits 1 when a report
// acknowledged was lost or stored twice, an event was not delivered, a
// job ran twice at once or stalled, or a subscription on a process that
// stayed up missed an event.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/fleetgraph/fleetgraph/bench/fleetprocs"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "procs:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	var cfg fleetprocs.Config
	var bin string
	var procs, port int
	fs := flag.NewFlagSet("procs", flag.ContinueOnError)
	fs.StringVar(&bin, "bin", "", "the fleetgraph binary")
	fs.StringVar(&cfg.DatabaseURL, "database-url", "", "the database the processes share (made afresh by the caller)")
	fs.StringVar(&cfg.Work, "work", "", "work directory (data dir, logs)")
	fs.IntVar(&procs, "procs", 3, "fleetgraph processes")
	fs.IntVar(&port, "port", 19201, "the first process's port on 127.0.0.1; the others follow; the webhook receiver listens on port-1")
	fs.DurationVar(&cfg.Duration, "duration", 3*time.Minute, "how long the load runs")
	fs.Float64Var(&cfg.KillAt, "kill-at", 0.4, "when the River leader is killed, as a fraction of -duration")
	fs.DurationVar(&cfg.RestartAfter, "restart-after", 30*time.Second, "when the killed process is started again (0: never)")
	fs.DurationVar(&cfg.NoticeAfter, "notice-after", 2*time.Second, "how long requests still go to the killed process (a load balancer's health check)")
	fs.IntVar(&cfg.Probes, "probes", 40, "simulated probes reporting at once")
	fs.IntVar(&cfg.Batch, "batch", 20, "measurements per report")
	fs.IntVar(&cfg.Reports, "reports", 10, "reports of a probe before a new one replaces it")
	fs.DurationVar(&cfg.Interval, "interval", 2*time.Second, "each probe checks in and reports once per interval")
	fs.IntVar(&cfg.PoolSize, "pool", 8, "each process's --db-max-conns")
	fs.DurationVar(&cfg.Drain, "drain", 3*time.Minute, "how long to wait after the load for deliveries, jobs and subscriptions to settle")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if bin == "" || cfg.DatabaseURL == "" || cfg.Work == "" {
		return errors.New("-bin, -database-url and -work are required")
	}
	for i := range procs {
		cfg.Addrs = append(cfg.Addrs, fmt.Sprintf("127.0.0.1:%d", port+i))
	}
	cfg.ReceiverAddr = fmt.Sprintf("127.0.0.1:%d", port-1)
	cfg.Command = func(args, env []string) *exec.Cmd {
		c := exec.Command(bin, args...)
		c.Env = append(os.Environ(), env...)
		return c
	}
	cfg.Log = os.Stdout
	res, err := fleetprocs.Run(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Println()
	res.Print(os.Stdout)
	if f := res.Failures(); len(f) > 0 {
		for _, line := range f {
			fmt.Println("FAILED:", line)
		}
		return errors.New("the run lost, duplicated or stalled something (above)")
	}
	fmt.Println("PASSED: every acknowledged report stored once, every event delivered, no job run twice at once or stalled, " +
		"every surviving subscription received every event")
	return nil
}
