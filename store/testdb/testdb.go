// Package testdb gives tests a fresh, migrated PostgreSQL database: on the
// server named by FLEETGRAPH_TEST_DATABASE_URL, else the local PostgreSQL at
// 127.0.0.1:5432, else a private PostgreSQL started from the machine's
// binaries under $TMPDIR/fleetgraph-test-pg (left running for the next test
// binaries; it only holds throw-away databases; `make test` stops it at the
// end with StopPrivate, through ./store/testdb/stop).
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/store/pglocal"
)

// privateDir is where the tests' private PostgreSQL lives, when they need one.
func privateDir() string { return filepath.Join(os.TempDir(), "fleetgraph-test-pg") }

// StopPrivate stops the tests' private PostgreSQL if one is running.
func StopPrivate(ctx context.Context) error {
	return pglocal.StopPrivate(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)), privateDir())
}

// DB is one test database.
type DB struct {
	URL  string
	name string
	// admin is the URL of the server's maintenance database.
	admin string
}

// Create makes a new database named <prefix>_<random> and migrates it.
func Create(ctx context.Context, prefix string, opts store.Options) (*DB, *store.Store, error) {
	admin := os.Getenv("FLEETGRAPH_TEST_DATABASE_URL")
	if admin == "" {
		var err error
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		admin, _, err = pglocal.Resolve(ctx, quiet, privateDir(), "fleetgraph_test")
		if err != nil {
			return nil, nil, fmt.Errorf("find a PostgreSQL for the tests: %w", err)
		}
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	db := &DB{name: prefix + "_" + hex.EncodeToString(b), admin: admin}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to test PostgreSQL (set FLEETGRAPH_TEST_DATABASE_URL): %w", err)
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{db.name}.Sanitize())
	conn.Close(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("create test database: %w", err)
	}
	u, err := url.Parse(admin)
	if err != nil {
		db.Drop()
		return nil, nil, fmt.Errorf("parse test database url: %w", err)
	}
	u.Path = "/" + db.name
	db.URL = u.String()
	st, err := store.Open(ctx, db.URL, opts)
	if err != nil {
		db.Drop()
		return nil, nil, err
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		db.Drop()
		return nil, nil, err
	}
	return db, st, nil
}

// Drop removes the database (closing its connections).
func (db *DB) Drop() {
	c, err := pgx.Connect(context.Background(), db.admin)
	if err != nil {
		return
	}
	defer c.Close(context.Background())
	_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{db.name}.Sanitize()+" WITH (FORCE)")
}
