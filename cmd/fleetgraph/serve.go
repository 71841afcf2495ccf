package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/fleetgraph/fleetgraph/dashboard"
	"github.com/fleetgraph/fleetgraph/eventhub"
	"github.com/fleetgraph/fleetgraph/graphiql"
	"github.com/fleetgraph/fleetgraph/listener"
	"github.com/fleetgraph/fleetgraph/obs"
	"github.com/fleetgraph/fleetgraph/releases"
	"github.com/fleetgraph/fleetgraph/resolvers"
	"github.com/fleetgraph/fleetgraph/server"
	"github.com/fleetgraph/fleetgraph/store"
)

func serve(ctx context.Context, args []string) error {
	var cfg config
	var demo bool
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg.flags(fs)
	fs.BoolVar(&demo, "demo", false, "also load a demo data owner and print ready API keys (admin and export)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	answerBytes, err := cfg.maxAnswerBytes()
	if err != nil {
		return err
	}
	memLimit, err := cfg.memoryLimit()
	if err != nil {
		return err
	}
	floor, err := cfg.heapFloor(memLimit)
	if err != nil {
		return err
	}
	if memLimit > 0 {
		debug.SetMemoryLimit(memLimit)
	}
	if floor > 0 {
		defer startHeapFloor(floor)()
	}
	log := newLogger()
	retention, err := cfg.retentionDays()
	if err != nil {
		return err
	}
	requestTimeout, err := cfg.requestTimeout()
	if err != nil {
		return err
	}
	if err := cfg.checkReplica(); err != nil {
		return err
	}
	pool, err := cfg.dbMaxConns()
	if err != nil {
		return err
	}
	judges, err := cfg.analyzerWorkers(pool) // before anything starts
	if err != nil {
		return err
	}
	// The address first: a taken one ends the start before anything else
	// runs, and everything started below stops when serve returns early.
	ln, err := listen(cfg.Addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sealer, err := cfg.sealer(log)
	if err != nil {
		return err
	}
	catalogue, err := releases.Load(cfg.Releases)
	if err != nil {
		return err
	}
	if cfg.Releases == "" {
		log.Info("no release catalogue configured (--releases, FLEETGRAPH_RELEASES): GET /software/downloads lists no components")
	}
	mailer, err := cfg.mailer()
	if err != nil {
		return err
	}
	tracing, err := obs.TracingFromEnv(ctx)
	if err != nil {
		return err
	}
	if tracing != nil {
		log.Info("OpenTelemetry tracing on (OTEL_* environment)")
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := tracing.Shutdown(sctx); err != nil {
				log.Warn("OpenTelemetry: sending the last spans failed", "err", err)
			}
		}()
		cfg.tracer = tracing.Pgx()
	}
	st, closeStore, err := cfg.openStore(ctx, log)
	if err != nil {
		return err
	}
	defer closeStore()
	if err := cfg.useReplica(ctx, st, log); err != nil {
		return err
	}
	dbWait, err := cfg.databaseWait(requestTimeout)
	if err != nil {
		return err
	}
	var live *store.Liveness
	if dbWait > 0 {
		live = st.WatchLiveness(ctx, dbWait)
	}
	notices := listener.New(st.Pool().Config().ConnConfig)
	notices.Subscribe(store.AuthChannel, st.AuthCaches())
	limiter, err := cfg.rateLimits(st, log)
	if err != nil {
		return err
	}
	var demoKeys issuedKeys
	if demo {
		if demoKeys, err = seedDemo(ctx, st, sealer, log); err != nil {
			return err
		}
	}

	metrics := obs.NewMetrics()
	backend, waitSearch, err := cfg.searchBackend(ctx, st, log, metrics)
	if err != nil {
		return err
	}
	opts := []server.Option{server.WithMetrics(metrics), server.WithTracing(tracing)}
	if cfg.MetricsAddr != "" {
		opts = append(opts, server.WithoutMetricsRoute())
	}
	ai, err := cfg.aiAssistant()
	if err != nil {
		return err
	}
	stopJobs, err := cfg.startJobs(ctx, st, sealer, mailer, metrics, log, judges)
	if err != nil {
		return err
	}
	defer stopJobs()
	res := resolvers.New(st, sealer, log, backend)
	res.Releases, res.MaxAnswerBytes, res.RequestTimeout, res.AI, res.RateLimits = catalogue, answerBytes, requestTimeout, ai, limiter
	res.Liveness = live
	res.RetentionDaysDefault = retention
	res.Stream = eventhub.Start(ctx, st, notices, log)
	handler, err := server.New(res, opts...)
	if err != nil {
		return err
	}
	notices.Start()
	defer notices.Close()
	stopMetrics, err := serveMetrics(ctx, cfg.MetricsAddr, metrics, log)
	if err != nil {
		return err
	}
	defer stopMetrics()
	stopProfiles, err := serveProfiles(ctx, cfg.PprofAddr, log)
	if err != nil {
		return err
	}
	defer stopProfiles()
	srv := &http.Server{
		Addr:              cfg.Addr,
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	log.Info("fleetgraph listening", "addr", ln.Addr().String())
	missing := graphiql.Missing()
	if len(missing) > 0 {
		log.Warn("GraphiQL assets are missing from this binary: GET /graphql answers 503 until they are built "+
			"(make assets, or bash graphiql/build.sh; needs Node.js) and the binary is rebuilt", "missing", missing)
	}
	printBanner(os.Stdout, ln.Addr(), demoKeys, len(missing) > 0)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	waitSearch() // the indexer and the rollup refresher stop with ctx
	return nil
}

// listen opens the server's address; a taken one is an error that says
// what to do about it.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("address %s is taken: another process listens there (another fleetgraph, such as a make run "+
			"in another terminal?). Stop it, or choose another address with --addr or FLEETGRAPH_ADDR (e.g. --addr 127.0.0.1:8081)", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("listen on %s (--addr, FLEETGRAPH_ADDR): %w", addr, err)
	}
	return ln, nil
}

// serveMetrics serves GET /metrics on a listener of its own when addr is
// an address (not empty, not "off") until stop.
func serveMetrics(ctx context.Context, addr string, m *obs.Metrics, log *slog.Logger) (stop func(), err error) {
	if addr == "" || addr == metricsOff {
		return func() {}, nil
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	return serveOwn(ctx, addr, "--metrics-addr", mux, log.With("path", "/metrics"))
}

// serveProfiles serves Go's runtime profiles (net/http/pprof: CPU, heap,
// allocations, goroutines, mutex and block contention, execution traces)
// under /debug/pprof/ on a listener of its own when addr is not empty,
// until stop. They are never served on --addr.
func serveProfiles(ctx context.Context, addr string, log *slog.Logger) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/", pprof.Index) // the named profiles: heap, allocs, goroutine, …
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	return serveOwn(ctx, addr, "--pprof-addr", mux, log.With("path", "/debug/pprof/"))
}

// serveOwn serves h on a listener of its own at addr (named by the flag
// that set it) until stop. A CPU profile or a trace takes as long as the
// request asks (?seconds=), so the write timeout leaves them some minutes.
func serveOwn(ctx context.Context, addr, flag string, h http.Handler, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s (%s): %w", addr, flag, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 5 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	log.Info("listening", "addr", ln.Addr().String(), "flag", flag)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("listener stopped", "addr", ln.Addr().String(), "flag", flag, "err", err)
		}
	}()
	return func() { _ = srv.Close() }, nil
}

// printBanner tells where the server answers and how to get a key: the
// demo data owner's keys when there are any, else the bootstrap command.
func printBanner(out io.Writer, addr net.Addr, demoKeys issuedKeys, noGraphiQL bool) {
	base := "http://" + displayAddr(addr)
	notBuilt := ""
	if noGraphiQL {
		notBuilt = "  (not built into this binary: run make assets, then rebuild)"
	}
	dashboardNote := "  (sign in with an admin API key)"
	if !dashboard.Built() {
		dashboardNote = "  (not built into this binary: run make assets, then rebuild)"
	}
	fmt.Fprintf(out, "fleetgraph is running.\n  Dashboard:  %s/%s\n  GraphiQL:   %s/graphql%s\n  Admin API:  %s%s\n  Export API: %s%s\n",
		base, dashboardNote, base, notBuilt, base, server.AdminBase, base, server.ExportBase)
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		fmt.Fprintf(out, "It listens on all network interfaces (port %d); --addr 127.0.0.1:%d keeps it to this machine.\n",
			tcp.Port, tcp.Port)
	}
	if demoKeys.Admin != "" {
		fmt.Fprintf(out, "Demo data owner %q is loaded; its org_admin's keys:\n", demoOwner)
		demoKeys.print(out, base)
		return
	}
	fmt.Fprintf(out, "Get API keys (in another terminal):\n  go run ./cmd/fleetgraph bootstrap --data-owner acme --email you@example.com\n"+
		"or start with --demo for a demo data owner and ready keys.\n")
}

func displayAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || tcp.IP.IsUnspecified() {
		if ok {
			return fmt.Sprintf("localhost:%d", tcp.Port)
		}
	}
	return a.String()
}

func migrate(ctx context.Context, args []string) error {
	var cfg config
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	cfg.storeFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	log := newLogger()
	_, closeStore, err := cfg.openStore(ctx, log)
	if err != nil {
		return err
	}
	closeStore()
	log.Info("migrations applied")
	return nil
}
