package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/fleetgraph/fleetgraph/resolvers"
	"github.com/fleetgraph/fleetgraph/server"
)

func serve(ctx context.Context, args []string) error {
	var cfg config
	var demo bool
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg.flags(fs)
	fs.BoolVar(&demo, "demo", false, "also load a demo data owner and print a ready API key")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	log := newLogger()
	sealer, err := cfg.sealer(log)
	if err != nil {
		return err
	}
	st, closeStore, err := cfg.openStore(ctx, log)
	if err != nil {
		return err
	}
	defer closeStore()
	demoKey := ""
	if demo {
		if demoKey, err = seedDemo(ctx, st, sealer); err != nil {
			return err
		}
	}

	backend, waitSearch, err := cfg.searchBackend(ctx, st, log)
	if err != nil {
		return err
	}
	handler, err := server.New(&resolvers.Resolver{Store: st, Sealer: sealer, Logger: log, Search: backend,
		OfflineDetectionOnServer: true, DegradedDetectionOnServer: true, StudyFailureOnServer: true})
	if err != nil {
		return err
	}
	srv := &http.Server{
		Addr:              cfg.Addr,
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	base := "http://" + displayAddr(ln.Addr())
	log.Info("fleetgraph listening", "addr", ln.Addr().String())
	fmt.Fprintf(os.Stdout, "fleetgraph is running.\n  GraphiQL:   %s/graphql\n  Admin API:  %s%s\n  Export API: %s%s\n",
		base, base, server.AdminBase, base, server.ExportBase)
	if demoKey != "" {
		fmt.Fprintf(os.Stdout, "Demo data owner %q is loaded; its org_admin API key:\n  %s\n", demoOwner, demoKey)
	} else {
		fmt.Fprintf(os.Stdout, "Get an API key (in another terminal):\n  go run ./cmd/fleetgraph bootstrap --data-owner acme --email you@example.com\n"+
			"or start with --demo for a demo data owner and a ready key.\n")
	}

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
