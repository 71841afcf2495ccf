// Command handwritten is the API bench's reference point, the limit, for
// fleetgraph's REST and GraphQL APIs: a minimal chi + pgx/v5 server answering
// GET /client_admin_api/v1/clients and GET /client_admin_api/v1/clients/{id},
// and POST /graphql for the bench's four GraphQL documents, with the same
// bytes fleetgraph answers (bench/apibench checks that before it times
// anything). Each request is one statement that checks the key and reads
// the clients with what the answer shows (a second one only when it finds
// no client, to tell a bad key from none).
//
//	handwritten -addr 127.0.0.1:18082 -database-url postgres://…
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "handwritten:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("handwritten", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:18082", "listen address")
	dbURL := fs.String("database-url", os.Getenv("DATABASE_URL"), "PostgreSQL URL (env DATABASE_URL)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, *dbURL)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer pool.Close()

	api := &api{db: pool}
	r := chi.NewRouter()
	r.Route("/client_admin_api/v1", func(r chi.Router) {
		r.Get("/clients", api.listClients)
		r.Get("/clients/{id}", api.getClient)
	})
	r.Post("/graphql", api.graphql)
	srv := &http.Server{Addr: *addr, Handler: r, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	slog.Info("listening", "addr", *addr)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
