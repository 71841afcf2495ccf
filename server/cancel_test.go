package server_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/pg"
	"github.com/fleetgraph/fleetgraph/server"
)

// slowSearch is the embedded search backend made slow: every search first
// runs a statement that sleeps for a minute, on the request's context and
// tagged so that pg_stat_activity shows whether it still runs.
type slowSearch struct {
	search.Backend
	pool *pgxpool.Pool
	tag  string
}

func (s slowSearch) Search(ctx context.Context, req search.Request) (search.Response, error) {
	if _, err := s.pool.Exec(ctx, "SELECT pg_sleep(60) /* "+s.tag+" */"); err != nil {
		return nil, fmt.Errorf("slow search: %w", err)
	}
	return s.Backend.Search(ctx, req)
}

// logBuffer collects a server's log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Split(strings.TrimSpace(b.buf.String()), "\n")
}

// matching counts the lines that contain every part.
func matching(lines []string, parts ...string) int {
	n := 0
next:
	for _, l := range lines {
		for _, p := range parts {
			if !strings.Contains(l, p) {
				continue next
			}
		}
		n++
	}
	return n
}

func TestCancelledRequestStopsItsStatementsAndLogsOnce(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "cancel")
	// The sleeps hold connections of their own pool, not the shared one.
	pool, err := pgxpool.New(context.Background(), e.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	gql, _ := json.Marshal(map[string]any{"query": `query($b: JSON!) {
		a: measurementSearch(body: $b) b: measurementSearch(body: $b) c: measurementSearch(body: $b) }`,
		"variables": map[string]any{"b": map[string]any{}}})
	rst, _ := json.Marshal(map[string]any{"body": map[string]any{}})
	for _, c := range []struct {
		name, path string
		body       []byte
		statements int
	}{
		{"graphql request with three slow fields", "/graphql", gql, 3},
		{"REST request", server.AdminBase + "/measurements/search", rst, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			logs := &logBuffer{}
			tag := "cancel_test_" + randomTag()
			url := e.StartServer(t, slog.New(slog.NewTextHandler(logs, nil)), slowSearch{pg.New(e.Store.Pool()), pool, tag})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+c.path, bytes.NewReader(c.body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-API-KEY", o.Key)
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					resp.Body.Close()
				}
				done <- err
			}()

			waitFor(t, 10*time.Second, fmt.Sprintf("%d sleeping statements", c.statements), func() bool {
				return sleeping(t, e, tag) == c.statements
			})
			cancel()
			cancelled := time.Now()
			if err := <-done; err == nil {
				t.Fatal("the request was answered although it sleeps for a minute")
			}
			waitFor(t, 2*time.Second, "the statements to stop", func() bool { return sleeping(t, e, tag) == 0 })
			t.Logf("statements stopped %s after the client cancelled", time.Since(cancelled).Round(time.Millisecond))

			waitFor(t, 5*time.Second, "the request's log line", func() bool {
				return matching(logs.lines(), "path="+c.path) > 0
			})
			lines := logs.lines()
			if n := matching(lines, `msg="request cancelled"`, "path="+c.path, "cause=\"context canceled\""); n != 1 {
				t.Errorf("%d cancellation lines, want 1:\n%s", n, strings.Join(lines, "\n"))
			}
			if n := matching(lines, "level=ERROR") + matching(lines, `msg="search backend unavailable"`); n != 0 {
				t.Errorf("%d ERROR or unavailable lines, want none:\n%s", n, strings.Join(lines, "\n"))
			}
		})
	}
}

// sleeping counts the statements tagged tag that PostgreSQL still runs.
func sleeping(t *testing.T, e *apitest.Env, tag string) int {
	t.Helper()
	var n int
	err := e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
		WHERE state = 'active' AND pid <> pg_backend_pid() AND position($1 in query) > 0`, tag).Scan(&n)
	if err != nil {
		t.Fatalf("read pg_stat_activity: %v", err)
	}
	return n
}

// waitFor polls cond until it holds, failing the test after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(limit); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no %s within %s", what, limit)
		}
	}
}

func randomTag() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
