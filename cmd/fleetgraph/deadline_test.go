package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
)

func TestRequestAndStatementTimeoutConfig(t *testing.T) {
	t.Setenv("FLEETGRAPH_REQUEST_TIMEOUT", "")
	t.Setenv("FLEETGRAPH_STATEMENT_TIMEOUT", "")
	t.Setenv("FLEETGRAPH_SEARCH_TIMEOUT", "")
	c := parseConfig(t)
	if d, err := c.requestTimeout(); err != nil || d != 60*time.Second {
		t.Errorf("default request timeout %s %v, want 1m", d, err)
	}
	if d, err := c.statementTimeout(); err != nil || d != 60*time.Second {
		t.Errorf("default statement timeout %s %v, want 1m", d, err)
	}
	t.Setenv("FLEETGRAPH_REQUEST_TIMEOUT", "45s")
	if d, err := parseConfig(t).requestTimeout(); err != nil || d != 45*time.Second {
		t.Errorf("env 45s: %s %v", d, err)
	}
	if d, err := parseConfig(t, "--request-timeout", "90s").requestTimeout(); err != nil || d != 90*time.Second {
		t.Errorf("flag over env: %s %v", d, err)
	}
	for _, bad := range [][]string{{"--request-timeout", "0s"}, {"--request-timeout", "3m"}, {"--request-timeout", "soon"},
		{"--request-timeout", "20s", "--search-timeout", "30s"}} {
		if _, err := parseConfig(t, bad...).requestTimeout(); err == nil || !strings.Contains(err.Error(), "--request-timeout") {
			t.Errorf("%q: %v, want an error naming --request-timeout", bad, err)
		}
	}
	for _, bad := range []string{"0", "-1s", "121s", "x"} {
		c := parseConfig(t, "--statement-timeout", bad, "--database-url", apitest.Get(t).DatabaseURL)
		if _, err := c.statementTimeout(); err == nil || !strings.Contains(err.Error(), "--statement-timeout") {
			t.Errorf("%q: %v, want an error naming --statement-timeout", bad, err)
		}
		if _, _, err := c.openStore(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil {
			t.Errorf("%q: the store was opened", bad)
		}
	}
}

// TestDatabaseWaitConfig: --database-wait (FLEETGRAPH_DATABASE_WAIT) is 5s
// by default, off turns it off, and it may not be longer than the request
// deadline.
func TestDatabaseWaitConfig(t *testing.T) {
	t.Setenv("FLEETGRAPH_DATABASE_WAIT", "")
	if d, err := parseConfig(t).databaseWait(time.Minute); err != nil || d != 5*time.Second {
		t.Errorf("default: %s %v, want 5s", d, err)
	}
	for raw, want := range map[string]time.Duration{"2s": 2 * time.Second, "off": 0, "OFF": 0, "1m": time.Minute} {
		if d, err := parseConfig(t, "--database-wait", raw).databaseWait(time.Minute); err != nil || d != want {
			t.Errorf("%q: %s %v, want %s", raw, d, err, want)
		}
	}
	for _, bad := range []string{"0s", "-1s", "61s", "soon"} {
		if _, err := parseConfig(t, "--database-wait", bad).databaseWait(time.Minute); err == nil ||
			!strings.Contains(err.Error(), "FLEETGRAPH_DATABASE_WAIT") {
			t.Errorf("%q: %v, want an error naming the setting", bad, err)
		}
	}
}

// serve's pool runs with the configured statement_timeout; migrate's
// (which does not take the flag) with none of ours.
func TestStatementTimeoutSetsThePool(t *testing.T) {
	db := apitest.Get(t).DatabaseURL
	show := func(c *config) string {
		t.Helper()
		st, closeStore, err := c.openStore(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		defer closeStore()
		var v string
		if err := st.Pool().QueryRow(context.Background(), "SHOW statement_timeout").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := show(parseConfig(t, "--statement-timeout", "7s", "--database-url", db, "--data-dir", t.TempDir())); v != "7s" {
		t.Errorf("serve's pool: statement_timeout %s, want 7s", v)
	}
	if v := show(&config{DatabaseURL: db, DataDir: t.TempDir()}); v == "7s" {
		t.Errorf("migrate's pool: statement_timeout %s, want the server's own", v)
	}
}
