package pg

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fleetgraph/fleetgraph/search"
)

// wantTimeLimit asserts err is the time limit's 503 naming limit.
func wantTimeLimit(t *testing.T, err error, what, limit string) {
	t.Helper()
	var ue *search.UnavailableError
	if !errors.Is(err, search.ErrUnavailable) || !errors.As(err, &ue) {
		t.Fatalf("err = %T %v, want a *search.UnavailableError", err, err)
	}
	if want := "the " + what + " exceeded its time limit of " + limit + "; narrow it"; !strings.HasPrefix(ue.Msg, want) {
		t.Errorf("message %q, want it to begin with %q", ue.Msg, want)
	}
	if errors.Is(err, search.ErrBadRequest) {
		t.Errorf("a time limit is not a bad request: %v", err)
	}
}

// A limit of 1 ns has passed before the first statement: every request
// fails the same way, whatever it asks.
func TestTimeLimitOfOneNanosecond(t *testing.T) {
	f := getFixtureSet(t)
	ctx := context.Background()
	b := New(testPool(t))
	b.Timeout = time.Nanosecond
	_, err := b.Search(ctx, search.Request{Scope: f.scope, Body: body(t, `{"query":{"match_all":{}}}`)})
	wantTimeLimit(t, err, "search", "1ns")
	_, err = b.Search(ctx, search.Request{Scope: f.scope, Body: body(t, `{"size":0,"aggs":{"t":{"terms":{"field":"type"}}}}`)})
	wantTimeLimit(t, err, "search", "1ns")
	// A body asking for longer does not lift the server's limit.
	_, err = b.Search(ctx, search.Request{Scope: f.scope, Body: body(t, `{"timeout":"10m"}`)})
	wantTimeLimit(t, err, "search", "1ns")
	_, err = b.ESQL(ctx, f.scope.DataOwnerID, f.slug, "FROM analytics-production-"+f.slug+"-measurements* | LIMIT 1")
	wantTimeLimit(t, err, "ES|QL query", "1ns")

	// A scroll opened under the default limit cannot go on under 1 ns.
	open, err := f.b.Search(ctx, search.Request{Scope: f.scope, Scroll: "1m", Body: body(t, `{"size":2,"sort":["_id"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	id := open["_scroll_id"].(string)
	_, err = b.ScrollNext(ctx, f.scope.DataOwnerID, id, "")
	wantTimeLimit(t, err, "search", "1ns")
	// ... and the scroll is still where it was.
	page, err := f.b.ScrollNext(ctx, f.scope.DataOwnerID, id, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := idsOf(t, page); len(got) != 2 || got[0] != mid(3) || got[1] != mid(4) {
		t.Errorf("scroll page after the refused one %v", got)
	}
}

// The body's timeout: a shorter one applies, a longer one is capped,
// malformed ones are 400s.
func TestBodyTimeout(t *testing.T) {
	f := getFixtureSet(t)
	ctx := context.Background()
	for _, b := range []string{`{"timeout":"5s"}`, `{"timeout":"1m","size":1}`, `{"timeout":"-1"}`, `{"timeout":"2d"}`, `{"timeout":"999999999999d"}`} {
		if _, err := f.search(t, f.scope, b); err != nil {
			t.Errorf("%s: %v", b, err)
		}
	}
	_, err := f.search(t, f.scope, `{"timeout":"1nanos","query":{"match_all":{}}}`)
	wantTimeLimit(t, err, "search", "1ns")
	_, err = f.search(t, f.scope, `{"timeout":"1micros"}`)
	wantTimeLimit(t, err, "search", "1µs")
	for _, b := range []string{`{"timeout":5}`, `{"timeout":"5"}`, `{"timeout":"5 seconds"}`, `{"timeout":"0s"}`, `{"timeout":"1.5s"}`, `{"timeout":["1s"]}`} {
		_, err := f.search(t, f.scope, b)
		if !errors.Is(err, search.ErrBadRequest) || !strings.Contains(err.Error(), "timeout") {
			t.Errorf("%s: %v, want a 400 naming timeout", b, err)
		}
	}

	// A scroll keeps its body's timeout for every page: a page under a
	// body asking for 1 ns fails.
	open, err := f.b.Search(ctx, search.Request{Scope: f.scope, Scroll: "1m", Body: body(t, `{"size":2,"sort":["_id"],"timeout":"30s"}`)})
	if err != nil {
		t.Fatal(err)
	}
	id := open["_scroll_id"].(string)
	if _, err := f.b.ScrollNext(ctx, f.scope.DataOwnerID, id, ""); err != nil {
		t.Fatalf("scroll page under its body's 30s: %v", err)
	}
	if _, err := testPool(t).Exec(ctx, `UPDATE search_scrolls SET state = jsonb_set(state, '{body,timeout}', '"1nanos"') WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	_, err = f.b.ScrollNext(ctx, f.scope.DataOwnerID, id, "")
	wantTimeLimit(t, err, "search", "1ns")
}

// PostgreSQL itself stops a statement at the limit (statement_timeout),
// before the context's grace ends: the server's work ends with the limit.
func TestTimeLimitStopsTheStatement(t *testing.T) {
	b := New(testPool(t))
	start := time.Now()
	err := b.limited(context.Background(), b.pool, 100*time.Millisecond, searchTx, "search", func(ctx context.Context, q *limitedTx) error {
		rows, err := q.Query(ctx, "SELECT pg_sleep(10)")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
		}
		return rows.Err()
	})
	wantTimeLimit(t, err, "search", "100ms")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" {
		t.Errorf("cause %v, want PostgreSQL's statement timeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %s", d)
	}
	// Later statements of the pool run without the limit.
	var n int
	if err := testPool(t).QueryRow(context.Background(), "SELECT 1 FROM pg_sleep(0.2)").Scan(&n); err != nil {
		t.Errorf("after a time limit: %v", err)
	}
}

// A request's statements run without JIT compiling, which the far-off
// estimates of JSON expressions set off: its transaction turns jit off
// before its first statement over the documents, and the pool's other
// statements keep the server's setting.
func TestRequestsRunWithoutJIT(t *testing.T) {
	f := getFixtureSet(t)
	ctx := context.Background()
	var server string
	if err := testPool(t).QueryRow(ctx, "SELECT current_setting('jit')").Scan(&server); err != nil {
		t.Fatal(err)
	}
	cfg := testPool(t).Config()
	log := &statementLog{}
	cfg.ConnConfig.Tracer = log
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	b := New(pool)
	for _, r := range []struct {
		name string
		run  func() error
	}{
		{"search", func() error {
			_, err := b.Search(ctx, search.Request{Scope: f.scope, Body: body(t, `{"query":{"match_all":{}}}`)})
			return err
		}},
		{"ES|QL", func() error {
			_, err := b.ESQL(ctx, f.scope.DataOwnerID, f.slug, "FROM analytics-production-"+f.slug+"-measurements* | STATS n = COUNT(*) BY type")
			return err
		}},
	} {
		log.reset()
		if err := r.run(); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		jit, docs := -1, -1
		for i, sql := range log.all() {
			if jit < 0 && strings.Contains(sql, "set_config('jit', 'off', true)") {
				jit = i
			}
			if docs < 0 && strings.Contains(sql, "FROM documents d") {
				docs = i
			}
		}
		if docs < 0 || jit < 0 || jit > docs {
			t.Errorf("%s: jit turned off at statement %d, documents read at %d: %q", r.name, jit, docs, log.all())
		}
		var after string
		if err := pool.QueryRow(ctx, "SELECT current_setting('jit')").Scan(&after); err != nil || after != server {
			t.Errorf("%s: jit = %q after the request (%v), want the server's %q", r.name, after, err, server)
		}
	}
}

// statementLog records the SQL of every statement its connections run.
type statementLog struct {
	mu   sync.Mutex
	sqls []string
}

func (l *statementLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.mu.Lock()
	l.sqls = append(l.sqls, d.SQL)
	l.mu.Unlock()
	return ctx
}

func (l *statementLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (l *statementLog) reset() {
	l.mu.Lock()
	l.sqls = nil
	l.mu.Unlock()
}

func (l *statementLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.sqls...)
}

var (
	heavyOnce  sync.Once
	heavyScope search.Scope
)

// heavySet is a data owner with 6,000 generated measurements: enough that
// a leading-wildcard query_string over every field, counted and aggregated,
// takes far longer than a few milliseconds.
func heavySet(t *testing.T) search.Scope {
	t.Helper()
	heavyOnce.Do(func() {
		id, slug := testOwner(t, "heavy")
		_, err := testPool(t).Exec(context.Background(), `INSERT INTO documents (data_owner_id, kind, doc_id, type, created_at, doc)
			SELECT $1, 'measurement', 'h' || i, 'VideoMeasurement', '2026-11-01'::timestamptz + i * interval '1 minute',
				jsonb_build_object('id', 'h' || i, 'type', 'VideoMeasurement',
					'study', jsonb_build_object('subject', 'subject' || (i % 50), 'study_id', md5(i::text)),
					'statistic_values', jsonb_build_object('x', i, 'y', i % 7, 'z', md5((i + 1)::text)),
					'network', jsonb_build_object('isp', 'isp' || (i % 9)), 'note', md5((i + 2)::text) || ' ' || md5((i + 3)::text))
			FROM generate_series(1, 6000) i`, id)
		if err != nil {
			t.Fatalf("generate documents: %v", err)
		}
		heavyScope = search.Scope{DataOwnerID: id, Slug: slug, Kind: search.KindMeasurement}
	})
	if heavyScope.DataOwnerID == 0 {
		t.Fatal("heavy set not loaded")
	}
	return heavyScope
}

const heavyBody = `{"query":{"query_string":{"query":"*a*b*c*"}},"track_total_hits":true,
	"aggs":{"s":{"terms":{"field":"study.subject","size":50},"aggs":{"i":{"terms":{"field":"network.isp"},
		"aggs":{"a":{"avg":{"field":"statistic_values.y"}}}}}}}}`

// A heavy search over generated documents reaches a 20 ms limit and stops
// there (PostgreSQL ends the statement); the same search under a limit it
// fits in succeeds.
func TestTimeLimitOfAHeavySearch(t *testing.T) {
	scope := heavySet(t)
	ctx := context.Background()
	b := New(testPool(t))
	b.Timeout = 20 * time.Millisecond
	start := time.Now()
	_, err := b.Search(ctx, search.Request{Scope: scope, Body: body(t, heavyBody)})
	took := time.Since(start)
	wantTimeLimit(t, err, "search", "20ms")
	if took > 2*time.Second {
		t.Errorf("the search ran %s past its limit of 20ms", took)
	}
	// The body's shorter timeout under the server's default.
	_, err = New(testPool(t)).Search(ctx, search.Request{Scope: scope, Body: body(t, strings.Replace(heavyBody, `{"query"`, `{"timeout":"15ms","query"`, 1))})
	wantTimeLimit(t, err, "search", "15ms")

	b.Timeout = time.Minute
	start = time.Now()
	resp, err := b.Search(ctx, search.Request{Scope: scope, Body: body(t, heavyBody)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the heavy search without a tight limit: %s", time.Since(start))
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Errorf("the heavy search took only %s: the test proves nothing", d)
	}
	if n := resp["hits"].(map[string]any)["total"].(map[string]any)["value"].(int64); n == 0 {
		t.Error("the heavy search matched nothing")
	}
}

// A search the caller cancels ends with the caller's error, not as a
// search that reached its time limit.
func TestCancelledSearchIsNotATimeLimit(t *testing.T) {
	scope := heavySet(t)
	b := New(testPool(t))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(15*time.Millisecond, cancel)
	_, err := b.Search(ctx, search.Request{Scope: scope, Body: body(t, heavyBody)})
	if err == nil {
		t.Fatal("a cancelled search succeeded")
	}
	if errors.Is(err, search.ErrUnavailable) || strings.Contains(err.Error(), "time limit") {
		t.Errorf("a cancelled search reported as %v", err)
	}
	// Cancelled before it starts.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	_, err = b.ESQL(ctx, scope.DataOwnerID, scope.Slug, "FROM analytics-production-"+scope.Slug+"-measurements* | LIMIT 1")
	if err == nil || errors.Is(err, search.ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Errorf("ES|QL with a cancelled context: %v", err)
	}
}
