// Package apitest is the harness of fleetgraph's end-to-end tests: a fresh
// PostgreSQL database per test binary, migrated, behind the real HTTP server
// on a real port. Tests isolate themselves by data owner.
//
// The database server is the one named by FLEETGRAPH_TEST_DATABASE_URL; else
// the local PostgreSQL at 127.0.0.1:5432; else a private PostgreSQL started
// from the machine's binaries under $TMPDIR/fleetgraph-test-pg (left running
// for the next test binaries; it holds only throw-away databases).
package apitest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/model"
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
	adminURL    string
	dropDB      func()
	srv         *httptest.Server
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
	e.srv.Close()
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

func start() (*Env, error) {
	ctx := context.Background()
	counter := &store.StatementCounter{}
	db, st, err := testdb.Create(ctx, "fleetgraph_test", store.Options{Tracer: counter})
	if err != nil {
		return nil, err
	}
	drop := db.Drop
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	sealer, _ := auth.NewSealer(key)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("FLEETGRAPH_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	h, err := newHandler(st, sealer, log, pg.New(st.Pool()))
	if err != nil {
		st.Close()
		drop()
		return nil, err
	}
	srv := httptest.NewServer(h)
	return &Env{URL: srv.URL, DatabaseURL: db.URL, Store: st, Sealer: sealer, Counter: counter, adminURL: srv.URL + server.AdminBase,
		dropDB: drop, srv: srv}, nil
}

// newHandler is the server the tests drive.
func newHandler(st *store.Store, sealer *auth.Sealer, log *slog.Logger, backend search.Backend) (http.Handler, error) {
	return server.New(&resolvers.Resolver{Store: st, Sealer: sealer, Logger: log, Search: backend,
		OfflineDetectionOnServer: true, DegradedDetectionOnServer: true, StudyFailureOnServer: true})
}

// StartServer starts another server over the package's database for tests
// that need to read its log or give it another search backend (nil: the
// embedded one); it stops when t ends. It returns the server's base URL.
func (e *Env) StartServer(t testing.TB, log *slog.Logger, backend search.Backend) string {
	t.Helper()
	if backend == nil {
		backend = pg.New(e.Store.Pool())
	}
	h, err := newHandler(e.Store, e.Sealer, log, backend)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

var ownerSeq atomic.Int64

// Owner is a bootstrapped data owner with an org_admin key.
type Owner struct {
	ID     int64
	Slug   string
	UserID int64
	Key    string // org_admin client_admin key
	env    *Env
}

// NewOwner bootstraps a data owner with a unique slug starting with prefix.
func (e *Env) NewOwner(t testing.TB, prefix string) *Owner {
	t.Helper()
	slug := fmt.Sprintf("%s_%d_%s", strings.ToLower(strings.ReplaceAll(prefix, "-", "_")), ownerSeq.Add(1), randomHex(3))
	key, rec := resolvers.NewKeyRecord(e.Sealer, auth.KindClientAdmin, 0, nil, nil, nil)
	b, err := e.Store.Bootstrap(context.Background(), slug, "admin@"+slug+".example", rec)
	if err != nil {
		t.Fatalf("bootstrap %s: %v", slug, err)
	}
	return &Owner{ID: b.DataOwnerID, Slug: slug, UserID: b.UserID, Key: key, env: e}
}

// KeyOpts shape a key made by Owner.NewKey.
type KeyOpts struct {
	Kind          auth.Kind  // default client_admin
	UserRole      model.Role // role of the key's user (a new user is made); default org_admin
	EffectiveRole *model.Role
	ValidUntil    *time.Time
}

// NewKey makes a user with the given role (unless org_admin: the owner's own
// user) and a key for it, straight through the store.
func (o *Owner) NewKey(t testing.TB, opts KeyOpts) (key string, keyID int64) {
	t.Helper()
	ctx := context.Background()
	if opts.Kind == "" {
		opts.Kind = auth.KindClientAdmin
	}
	userID := o.UserID
	if opts.UserRole != "" && opts.UserRole != model.RoleOrgAdmin {
		name := fmt.Sprintf("%s-%s", opts.UserRole, randomHex(4))
		u, err := o.env.Store.CreateUser(ctx, o.ID, store.NewUser{Email: name + "@" + o.Slug + ".example",
			Username: name, Role: string(opts.UserRole), NotificationConfig: []byte(`{}`)})
		if err != nil {
			t.Fatalf("create %s user: %v", opts.UserRole, err)
		}
		userID = u.ID
	}
	var role *string
	if opts.EffectiveRole != nil {
		r := string(*opts.EffectiveRole)
		role = &r
	}
	key, rec := resolvers.NewKeyRecord(o.env.Sealer, opts.Kind, userID, nil, opts.ValidUntil, role)
	k, err := o.env.Store.CreateAPIKey(ctx, o.ID, rec)
	if err != nil {
		t.Fatalf("create key: %v", err)
	}
	return key, k.ID
}

// Response is a decoded HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Raw    []byte
	JSON   any
}

// Obj returns the body as a JSON object (failing the test otherwise).
func (r *Response) Obj(t testing.TB) map[string]any {
	t.Helper()
	m, ok := r.JSON.(map[string]any)
	if !ok {
		t.Fatalf("body is not a JSON object: %s", r.Raw)
	}
	return m
}

// Do sends a request to path (absolute from the server root) with key in
// X-API-KEY (when not empty). body may be nil, a string (sent raw) or a
// value (sent as JSON).
func (e *Env) Do(t testing.TB, method, path, key string, body any) *Response {
	t.Helper()
	var rdr io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rdr = strings.NewReader(b)
	case []byte:
		rdr = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("marshal body: %v", err)
		}
		rdr = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.URL+path, rdr)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-KEY", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := &Response{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	if len(raw) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&out.JSON); err != nil {
			t.Fatalf("%s %s: invalid JSON body: %v: %s", method, path, err, raw)
		}
	}
	return out
}

// Admin sends a request to the Administration API (path relative to its base).
func (e *Env) Admin(t testing.TB, method, path, key string, body any) *Response {
	t.Helper()
	return e.Do(t, method, server.AdminBase+path, key, body)
}

// GraphQLResponse is a decoded GraphQL answer.
type GraphQLResponse struct {
	Status int
	Data   map[string]any
	Errors []GraphQLError
	Raw    []byte
}

// GraphQLError is one entry of "errors".
type GraphQLError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// Code returns extensions.code of the first error, or "".
func (g *GraphQLResponse) Code() string {
	if len(g.Errors) == 0 {
		return ""
	}
	c, _ := g.Errors[0].Extensions["code"].(string)
	return c
}

// GraphQL posts a query to /graphql with key as a bearer token.
func (e *Env) GraphQL(t testing.TB, key, query string, vars map[string]any) *GraphQLResponse {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, e.URL+"/graphql", bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("graphql: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	out := &GraphQLResponse{Status: resp.StatusCode, Raw: body}
	var env struct {
		Data   map[string]any `json:"data"`
		Errors []GraphQLError `json:"errors"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil {
		t.Fatalf("graphql: invalid JSON: %v: %s", err, body)
	}
	out.Data, out.Errors = env.Data, env.Errors
	return out
}
