package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
)

// parseConfig is the configuration args (and the environment) make.
func parseConfig(t *testing.T, args ...string) *config {
	t.Helper()
	c := &config{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	c.flags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDBMaxConnsConfig(t *testing.T) {
	t.Setenv("FLEETGRAPH_DB_MAX_CONNS", "")
	want := int32(max(8, 4*runtime.GOMAXPROCS(0)))
	if n, err := parseConfig(t).dbMaxConns(); err != nil || n != want {
		t.Errorf("unset: %d %v, want %d (4 per CPU, at least 8)", n, err, want)
	}
	t.Setenv("FLEETGRAPH_DB_MAX_CONNS", "12")
	if n, err := parseConfig(t).dbMaxConns(); err != nil || n != 12 {
		t.Errorf("env 12: %d %v", n, err)
	}
	if n, err := parseConfig(t, "--db-max-conns", "3").dbMaxConns(); err != nil || n != 3 {
		t.Errorf("flag over env: %d %v", n, err)
	}
	for _, bad := range []string{"0", "-1", "many", "2.5", "1001"} {
		c := parseConfig(t, "--db-max-conns", bad, "--database-url", apitest.Get(t).DatabaseURL)
		if _, err := c.dbMaxConns(); err == nil || !strings.Contains(err.Error(), "--db-max-conns") {
			t.Errorf("%q: %v, want an error naming --db-max-conns", bad, err)
		}
		if _, _, err := c.openStore(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil {
			t.Errorf("%q: the store was opened", bad)
		}
	}
}

// The pool that serve, migrate and bootstrap open has the configured size.
func TestDBMaxConnsSizesThePool(t *testing.T) {
	c := parseConfig(t, "--db-max-conns", "7", "--database-url", apitest.Get(t).DatabaseURL, "--data-dir", t.TempDir())
	st, closeStore, err := c.openStore(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore()
	if got := st.Pool().Config().MaxConns; got != 7 {
		t.Errorf("pool MaxConns %d, want 7", got)
	}
}
