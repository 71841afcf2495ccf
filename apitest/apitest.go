// Package apitest is fleetgraph's one test-support package. It holds:
//
//   - the end-to-end harness (this file): a fresh PostgreSQL database per
//     test binary, migrated, behind the real HTTP server on a real port;
//     tests isolate themselves by data owner;
//   - request helpers: Env.Do, Env.Admin, Env.Probe, Env.GraphQL, Send, DecodeJSON
//     (request.go); a request whose answer names a panic the server
//     recovered from fails its test, and panics no request claimed fail
//     the test binary (panics.go);
//   - want-status helpers that return the decoded body: WantStatus,
//     WantEnvelope, WantMessage, WantRefused (want.go), and readers of
//     decoded JSON values: Int, Strings, List, Time (json.go);
//   - test factories with defaults and optional overrides, in the style of
//     river's testfactory: Env.NewOwner, Owner.NewKey, NewUser, NewClient,
//     NewISP, NewCapability, NewRegistrationKey, NewCredential, NewConfig,
//     NewProbe
//     (factory.go);
//   - the loader of the testdata/ fixture set with fresh client UUIDs
//     (fixtures.go);
//   - a fake Elasticsearch with scripted answers that records every request
//     (fakees.go);
//   - Scrape, a /metrics answer parsed from the Prometheus exposition format,
//     and readers of its series (metrics.go).
//
// The database server is the one named by FLEETGRAPH_TEST_DATABASE_URL; else
// the local PostgreSQL at 127.0.0.1:5432; else a private PostgreSQL started
// from the machine's binaries under $TMPDIR/fleetgraph-test-pg (left running
// for the next test binaries; it holds only throw-away databases).
package apitest

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/eventhub"
	"github.com/fleetgraph/fleetgraph/limits/ratelimit"
	"github.com/fleetgraph/fleetgraph/listener"
	"github.com/fleetgraph/fleetgraph/resolvers"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/pg"
	"github.com/fleetgraph/fleetgraph/server"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/store/testdb"
)

// Env is a running server over its own database.
type Env struct {
	URL         string // base URL of the server
	DatabaseURL string // the test database
	Store       *store.Store
	Sealer      *auth.Sealer
	Counter     *store.StatementCounter
	// Stream is the servers' event hub (one per process, as in serve).
	Stream *eventhub.Hub
	// AI is the fake model provider (OpenAI-compatible) of the package's
	// server: it answers "ok" unless a test scripts it. Tests that check
	// requests exactly start a server of their own (StartServerWith).
	AI       *FakeAI
	notices  *listener.Listener
	adminURL string
	dropDB   func()
	srv      *httptest.Server
	// The outbox sender and its mailbox, started by Mailbox.
	mailOnce sync.Once
	mailbox  *Mailbox
	mailErr  error
	stopMail func()
}

var env *Env

// Main runs the tests of a package against one fresh database and server.
func Main(m *testing.M) {
	e, err := start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "apitest:", err)
		os.Exit(1)
	}
	env = e
	code := m.Run()
	if p := panics.unclaimed(); p != "" {
		fmt.Fprintf(os.Stderr, "apitest: the server recovered from panics (a test's request caused them):\n%s", p)
		code = 1
	}
	if e.stopMail != nil {
		e.stopMail()
	}
	e.srv.Close()
	e.AI.srv.Close()
	e.notices.Close()
	e.Store.Close()
	e.dropDB()
	os.Exit(code)
}

// Get returns the package's environment (Main must have run).
func Get(t testing.TB) *Env {
	t.Helper()
	if env == nil {
		t.Fatal("apitest.Main was not called from TestMain")
	}
	return env
}

// testPoolSize is the test server's pool, about fleetgraph serve's on a
// machine of a few cores.
const testPoolSize = 16

func start() (*Env, error) {
	ctx := context.Background()
	counter := &store.StatementCounter{}
	db, st, err := testdb.Create(ctx, "fleetgraph_test", store.Options{Tracer: counter, MaxConns: testPoolSize})
	if err != nil {
		return nil, err
	}
	notices := Listen(st) // as fleetgraph serve does
	drop := db.Drop
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	sealer, _ := auth.NewSealer(key)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("FLEETGRAPH_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	hub := eventhub.Start(context.Background(), st, notices, log) // lives as long as the test binary
	notices.Start()
	fake := startFakeAI("openai")
	h, err := newHandler(st, sealer, log, pg.New(st.Pool()), func(r *resolvers.Resolver) {
		r.Stream, r.AI = hub, FakeAssistant(fake)
	})
	if err != nil {
		notices.Close()
		st.Close()
		drop()
		return nil, err
	}
	srv := httptest.NewServer(h)
	return &Env{notices: notices, Stream: hub, URL: srv.URL, DatabaseURL: db.URL, Store: st, Sealer: sealer, Counter: counter, adminURL: srv.URL + server.AdminBase,
		AI: fake, dropDB: drop, srv: srv}, nil
}

// TestRate is the rate limit of the test servers' keys, data owners and
// probes: the production middleware runs, and no test meets it. (The
// answer bytes are not limited: their charge is a statement of the
// request, which the tests that count statements would count.)
var TestRate = ratelimit.Rate{Limit: 1_000_000, Period: time.Minute}

// newHandler is the server the tests drive (as fleetgraph serve builds it,
// with the rate limiter at TestRate); change, if not nil, adjusts its
// resolver first.
func newHandler(st *store.Store, sealer *auth.Sealer, log *slog.Logger, backend search.Backend,
	change ...func(*resolvers.Resolver)) (http.Handler, error) {
	res := resolvers.New(st, sealer, log, backend)
	res.RateLimits = &ratelimit.Limiter{Store: st, Logger: log, Key: TestRate, DataOwner: TestRate, Probe: TestRate}
	res.OnPanic = OnPanic
	for _, c := range change {
		c(res)
	}
	h, err := server.New(res)
	if err != nil {
		return nil, err
	}
	// The statements of the requests are counted (Env.Counter), not those
	// of the jobs running beside them.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(store.Counted(r.Context())))
	}), nil
}

// StartServerWith starts another server over the package's database whose
// resolver change adjusts (e.g. a switch to compare two ways of answering);
// it stops when t ends. It returns the server's base URL.
func (e *Env) StartServerWith(t testing.TB, change func(*resolvers.Resolver)) string {
	t.Helper()
	h, err := newHandler(e.Store, e.Sealer, slog.New(slog.NewTextHandler(io.Discard, nil)), pg.New(e.Store.Pool()), e.useStream, change)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// StartServerOwnStore starts another server over the package's database
// as another process would run it: with a store of its own (own pool, own
// key and probe caches, own listening connection), so that it learns of
// the first server's changes only through the database's notifications.
// It stops when t ends. It returns the server's base URL and the counter
// of its requests' statements.
func (e *Env) StartServerOwnStore(t testing.TB) (string, *store.StatementCounter) {
	t.Helper()
	counter := &store.StatementCounter{}
	st, err := store.Open(context.Background(), e.DatabaseURL, store.Options{Tracer: counter, MaxConns: 4})
	if err != nil {
		t.Fatalf("open another store: %v", err)
	}
	t.Cleanup(st.Close)
	notices := Listen(st)
	notices.Start()
	t.Cleanup(notices.Close)
	h, err := newHandler(st, e.Sealer, slog.New(slog.NewTextHandler(io.Discard, nil)), pg.New(st.Pool()), e.useStream)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL, counter
}

// StartServer starts another server over the package's database for tests
// that need to read its log or give it another search backend (nil: the
// embedded one); it stops when t ends. It returns the server's base URL.
func (e *Env) StartServer(t testing.TB, log *slog.Logger, backend search.Backend) string {
	t.Helper()
	if backend == nil {
		backend = pg.New(e.Store.Pool())
	}
	h, err := newHandler(e.Store, e.Sealer, log, backend, e.useStream)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// Listen answers the listening connection of st's process with the caches
// of keys and probes subscribed (as in fleetgraph serve); subscribe the
// rest, then Start it.
func Listen(st *store.Store) *listener.Listener {
	l := listener.New(st.Pool().Config().ConnConfig)
	l.Subscribe(store.AuthChannel, st.AuthCaches())
	return l
}

// useStream gives another server over the package's database its hub.
func (e *Env) useStream(r *resolvers.Resolver) { r.Stream = e.Stream }
