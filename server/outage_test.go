package server_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/server"
	"github.com/fleetgraph/fleetgraph/store"
)

// outageCall is one request of each interface, answered as it answers a
// database outage: its HTTP status and, for GraphQL, extensions.code.
type outageCall struct {
	name string
	do   func(t *testing.T) (status int, header http.Header, code string, body []byte)
}

// outageCalls are the admin REST, export REST and GraphQL requests of
// TestDatabaseOutage, each with a key that authenticated before (kept in
// the key cache, so the failure surfaces in the resolver's statement) and
// with a key never used (looked up in the database by the auth middleware).
func outageCalls(e *apitest.Env, adminKey, exportKey, freshAdminKey, freshExportKey string) []outageCall {
	rest := func(path, key string) func(t *testing.T) (int, http.Header, string, []byte) {
		return func(t *testing.T) (int, http.Header, string, []byte) {
			r := e.Do(t, http.MethodGet, path, key, nil)
			return r.Status, r.Header, "", r.Raw
		}
	}
	gql := func(key string) func(t *testing.T) (int, http.Header, string, []byte) {
		return func(t *testing.T) (int, http.Header, string, []byte) {
			g := e.GraphQL(t, key, `{ isps { id name } }`, nil)
			return g.Status, g.Header, g.Code(), g.Raw
		}
	}
	return []outageCall{
		{"admin REST, cached key", rest(server.AdminBase+"/isps", adminKey)},
		{"export REST, cached key", rest(server.ExportBase+"/clients", exportKey)},
		{"GraphQL, cached key", gql(adminKey)},
		{"admin REST, key looked up", rest(server.AdminBase+"/isps", freshAdminKey)},
		{"export REST, key looked up", rest(server.ExportBase+"/clients", freshExportKey)},
		{"GraphQL, key looked up", gql(freshAdminKey)},
	}
}

// unavailable runs each call at once (parallel subtests) and checks that
// it answers 503 with Retry-After (SERVICE_UNAVAILABLE for GraphQL) within
// bound.
func unavailable(t *testing.T, calls []outageCall, bound time.Duration) {
	t.Helper()
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			status, header, code, body := c.do(t)
			took := time.Since(start)
			t.Logf("%d after %s", status, took.Round(time.Millisecond))
			if status != http.StatusServiceUnavailable {
				t.Errorf("status %d %s, want 503", status, body)
			}
			if ra, err := strconv.Atoi(header.Get("Retry-After")); err != nil || ra <= 0 {
				t.Errorf("Retry-After %q, want a number of seconds", header.Get("Retry-After"))
			}
			if code != "" && code != "SERVICE_UNAVAILABLE" {
				t.Errorf("extensions.code %s, want SERVICE_UNAVAILABLE: %s", code, body)
			}
			if took > bound {
				t.Errorf("answered after %s, want within %s", took, bound)
			}
		})
	}
}

// TestDatabaseOutage runs the real server on a private PostgreSQL and
// kills it, then freezes it (SIGSTOP of the postmaster and its backends):
// every interface answers 503 with Retry-After within the request's
// deadline plus pgx's cancel grace, never 500 and never later; after a
// restart, or SIGCONT, requests succeed again.
func TestDatabaseOutage(t *testing.T) {
	const requestTimeout = 2 * time.Second
	// The bound: the deadline, pgx's 2 s wait for its cancel request
	// before it gives up the connection, and slack for a loaded machine.
	const bound = requestTimeout + 2*time.Second + 2*time.Second
	e, pg := apitest.NewPrivateEnv(t, apitest.PrivateOpts{RequestTimeout: requestTimeout, StatementTimeout: time.Second})
	o := e.NewOwner(t, "outage")
	o.NewISP(t, store.IspInput{Name: apitest.Ptr("Outage ISP")})
	exportKey, _ := o.NewKey(t, apitest.KeyOpts{Kind: auth.KindExport})

	var st string
	if err := e.Store.Pool().QueryRow(context.Background(), "SHOW statement_timeout").Scan(&st); err != nil || st != "1s" {
		t.Fatalf("statement_timeout of the server's pool: %q, %v; want 1s", st, err)
	}

	healthy := func(t *testing.T, calls []outageCall, within time.Duration) {
		t.Helper()
		for _, c := range calls {
			start := time.Now()
			for {
				status, _, _, body := c.do(t)
				if status == http.StatusOK {
					break
				}
				if time.Since(start) > within {
					t.Fatalf("%s: still %d %s %s after recovery began", c.name, status, body, time.Since(start))
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
	// Fresh keys for each phase: a key authenticates once, then it is cached.
	fresh := func() (string, string) {
		a, _ := o.NewKey(t, apitest.KeyOpts{})
		x, _ := o.NewKey(t, apitest.KeyOpts{Kind: auth.KindExport})
		return a, x
	}
	warm := outageCalls(e, o.Key, exportKey, o.Key, exportKey)[:3]
	healthy(t, warm, 0)

	t.Run("killed", func(t *testing.T) {
		freshAdmin, freshExport := fresh()
		pg.Kill(t)
		unavailable(t, outageCalls(e, o.Key, exportKey, freshAdmin, freshExport), bound)
	})
	start := time.Now()
	pg.Start(t)
	healthy(t, warm, 15*time.Second)
	t.Logf("recovered %s after the restart began", time.Since(start))

	t.Run("frozen", func(t *testing.T) {
		freshAdmin, freshExport := fresh()
		pg.Freeze(t)
		unavailable(t, outageCalls(e, o.Key, exportKey, freshAdmin, freshExport), bound)
	})
	start = time.Now()
	pg.Thaw(t)
	healthy(t, warm, 15*time.Second)
	t.Logf("recovered %s after SIGCONT", time.Since(start))
}

// TestFrozenDatabaseWithinDatabaseWait: with the request deadline at its
// default of a minute, a frozen PostgreSQL (SIGSTOP) answers every
// interface's request (GraphQL's viewer too) with 503 and Retry-After
// within the database wait (the liveness ping's bound, 2 s here) plus the
// ping interval and pgx's cancel grace, not after the deadline (the probe
// waited 44.5 s); /readyz says so too; after SIGCONT requests succeed.
func TestFrozenDatabaseWithinDatabaseWait(t *testing.T) {
	const wait = 2 * time.Second
	// The wait, the ping interval, pgx's 2 s cancel grace, and slack for a
	// loaded machine: far below the minute of the request deadline.
	const bound = wait + time.Second + 2*time.Second + 5*time.Second
	e, pg := apitest.NewPrivateEnv(t, apitest.PrivateOpts{DatabaseWait: wait})
	o := e.NewOwner(t, "frozen")
	o.NewISP(t, store.IspInput{Name: apitest.Ptr("Frozen ISP")})
	exportKey, _ := o.NewKey(t, apitest.KeyOpts{Kind: auth.KindExport})
	freshAdmin, _ := o.NewKey(t, apitest.KeyOpts{})
	freshExport, _ := o.NewKey(t, apitest.KeyOpts{Kind: auth.KindExport})
	// viewer with a key never used: its lookup is the statement that waits
	// (with a cached key viewer reads nothing, and answers).
	viewerKey, _ := o.NewKey(t, apitest.KeyOpts{})
	viewer := outageCall{"GraphQL viewer", func(t *testing.T) (int, http.Header, string, []byte) {
		g := e.GraphQL(t, viewerKey, `{ viewer { dataOwner role } }`, nil)
		return g.Status, g.Header, g.Code(), g.Raw
	}}
	readyz := outageCall{"readyz", func(t *testing.T) (int, http.Header, string, []byte) {
		r := apitest.Send(t, nil, apitest.Request(t, http.MethodGet, e.URL+"/readyz", nil, nil))
		r.Header.Set("Retry-After", "1") // /readyz says no Retry-After; its status is the point
		return r.Status, r.Header, "", r.Raw
	}}
	warm := append(outageCalls(e, o.Key, exportKey, o.Key, exportKey)[:3], readyz)
	for _, c := range warm {
		if status, _, _, body := c.do(t); status != http.StatusOK {
			t.Fatalf("%s before the freeze: %d %s", c.name, status, body)
		}
	}

	t.Run("frozen", func(t *testing.T) {
		pg.Freeze(t)
		unavailable(t, append(outageCalls(e, o.Key, exportKey, freshAdmin, freshExport), viewer, readyz), bound)
	})
	pg.Thaw(t)
	recovered := func(after string) {
		t.Helper()
		start := time.Now()
		for _, c := range append(warm, viewer) {
			for {
				status, _, _, body := c.do(t)
				if status == http.StatusOK {
					break
				}
				if time.Since(start) > 15*time.Second {
					t.Fatalf("%s: still %d %s %s after %s", c.name, status, body, time.Since(start), after)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		t.Logf("recovered %s after %s", time.Since(start), after)
	}
	recovered("SIGCONT")

	// Killed, the database is declared down too (its pings fail at once),
	// and answers again once it is restarted.
	t.Run("killed", func(t *testing.T) {
		freshAdmin, _ := o.NewKey(t, apitest.KeyOpts{})
		freshExport, _ := o.NewKey(t, apitest.KeyOpts{Kind: auth.KindExport})
		pg.Kill(t)
		unavailable(t, outageCalls(e, o.Key, exportKey, freshAdmin, freshExport), bound)
	})
	pg.Start(t)
	recovered("the restart")
}
