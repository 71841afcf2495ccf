// Command searchbench times the embedded PostgreSQL search backend on a
// loaded data owner (see bench/run.sh): a filtered, sorted, paged search,
// a terms + date_histogram + avg aggregation over 30 days, the export
// listing, the license usage report and the common ES|QL shapes, after the
// bytes the documents and their indexes take. It prints p50, p95 and max per
// workload. -only picks workloads by a regular expression on their names;
// -explain prints EXPLAIN ANALYZE of each ES|QL workload's statement.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/pg"
	"github.com/fleetgraph/fleetgraph/store"
)

func main() {
	url := flag.String("database-url", "postgres://postgres@127.0.0.1:5432/fleetgraph_bench?sslmode=disable", "database holding the loaded data owner")
	slug := flag.String("data-owner", "bench", "data owner slug")
	runs := flag.Int("runs", 30, "timed runs per workload (after 3 warm-up runs)")
	only := flag.String("only", "", "run only the workloads whose names match this regular expression")
	explain := flag.Bool("explain", false, "print EXPLAIN (ANALYZE, BUFFERS) of each ES|QL workload's SQL")
	flag.Parse()
	filter, err := regexp.Compile(*only)
	if err != nil {
		fmt.Fprintln(os.Stderr, "searchbench: -only:", err)
		os.Exit(2)
	}
	if err := run(context.Background(), *url, *slug, *runs, filter, *explain); err != nil {
		fmt.Fprintln(os.Stderr, "searchbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url, slug string, runs int, only *regexp.Regexp, explain bool) error {
	rec := &esqlRecorder{}
	st, err := store.Open(ctx, url, store.Options{Tracer: rec})
	if err != nil {
		return err
	}
	defer st.Close()
	owner, err := st.DataOwnerBySlug(ctx, slug)
	if err != nil {
		return fmt.Errorf("data owner %q: %w", slug, err)
	}
	var n int64
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM documents WHERE data_owner_id = $1 AND kind = 'measurement'`,
		owner.ID).Scan(&n); err != nil {
		return err
	}
	fmt.Printf("data owner %s: %d measurement documents\n", slug, n)
	// Aggregations read the per-day rollups of days not written to since
	// their last refresh (import refreshes; so does the server, every few
	// seconds). Bring them up to date first.
	refreshStart := time.Now()
	days, err := pg.RefreshRollups(ctx, st.Pool())
	if err != nil {
		return fmt.Errorf("refresh rollups: %w", err)
	}
	fmt.Printf("rolled up %d days in %.1f s\n", days, time.Since(refreshStart).Seconds())
	backend := pg.New(st.Pool())
	scope := search.Scope{DataOwnerID: owner.ID, Slug: slug, Kind: search.KindMeasurement}
	workloads := []struct {
		name string
		body map[string]any
	}{
		{"filtered, sorted, paged search", map[string]any{
			"query": map[string]any{"bool": map[string]any{"filter": []any{
				map[string]any{"term": map[string]any{"type": "VideoMeasurement"}},
				map[string]any{"term": map[string]any{"study.subject.keyword": "youtube"}},
				map[string]any{"range": map[string]any{"created_at": map[string]any{"gte": "2026-11-10", "lt": "2026-11-20"}}},
			}}},
			"sort": []any{map[string]any{"created_at": "desc"}},
			"size": 20, "from": 40,
		}},
		{"terms + date_histogram + avg, 30 days", map[string]any{
			"size":  0,
			"query": map[string]any{"range": map[string]any{"created_at": map[string]any{"gte": "2026-11-01", "lt": "2026-12-01"}}},
			"aggs": map[string]any{"by_isp": map[string]any{
				"terms": map[string]any{"field": "network.isp.keyword", "size": 10},
				"aggs": map[string]any{"per_day": map[string]any{
					"date_histogram": map[string]any{"field": "created_at", "calendar_interval": "day"},
					"aggs":           map[string]any{"rtt": map[string]any{"avg": map[string]any{"field": "statistic_values.rtt_avg"}}},
				}},
			}},
		}},
	}
	// The same aggregation over a range that cuts two days: those two are
	// read from the documents, the others from the rollups.
	cut := map[string]any{}
	for k, v := range workloads[1].body {
		cut[k] = v
	}
	cut["query"] = map[string]any{"range": map[string]any{"created_at": map[string]any{
		"gte": "2026-11-03T12:00:00Z", "lt": "2026-11-27T12:00:00Z"}}}
	workloads = append(workloads, struct {
		name string
		body map[string]any
	}{"same, range cutting 2 days", cut})
	// A term on a JSON field with no other restriction: counting its
	// matches takes the GIN index.
	workloads = append(workloads, struct {
		name string
		body map[string]any
	}{"term on a JSON field (2%), counted", map[string]any{
		"query":            map[string]any{"term": map[string]any{"study.study_id": "gfn-fortnite"}},
		"track_total_hits": true, "size": 20,
		"sort": []any{map[string]any{"created_at": "desc"}},
	}})
	// Counts per value, the most common dashboard shape: terms with no
	// metric under it, over the month and over one type's 10 days.
	workloads = append(workloads, struct {
		name string
		body map[string]any
	}{"terms (ISP) counts, 30 days", map[string]any{
		"size":  0,
		"query": map[string]any{"range": map[string]any{"created_at": map[string]any{"gte": "2026-11-01", "lt": "2026-12-01"}}},
		"aggs":  map[string]any{"by_isp": map[string]any{"terms": map[string]any{"field": "network.isp.keyword"}}},
	}}, struct {
		name string
		body map[string]any
	}{"terms (ISP) counts, one type, 10 days", map[string]any{
		"size": 0,
		"query": map[string]any{"bool": map[string]any{"filter": []any{
			map[string]any{"term": map[string]any{"type": "VideoMeasurement"}},
			map[string]any{"range": map[string]any{"created_at": map[string]any{"gte": "2026-11-10", "lt": "2026-11-20"}}},
		}}},
		"aggs": map[string]any{"by_isp": map[string]any{"terms": map[string]any{"field": "network.isp.keyword"}}},
	}})
	var explained []string
	timed := make([]timedWorkload, 0, len(workloads)+2)
	for _, w := range workloads {
		timed = append(timed, timedWorkload{w.name, func() (string, error) {
			resp, err := backend.Search(ctx, search.Request{Scope: scope, Body: w.body})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("total hits %v", resp["hits"].(map[string]any)["total"]), nil
		}})
	}
	// The export listing a data pipeline pages through, at its first page
	// and deep into the set (offset 899,000).
	for _, page := range []int64{1, 900} {
		timed = append(timed, timedWorkload{fmt.Sprintf("export listing, 1000 a page, page %d", page), func() (string, error) {
			docs, total, err := st.ExportDocuments(ctx, owner.ID, "measurement", store.ExportFilter{Limit: 1000, Offset: (page - 1) * 1000})
			return fmt.Sprintf("%d documents of %d", len(docs), total), err
		}})
	}
	// The license usage report of the loaded month, whole (from the per-client
	// counts) and cut by its range (from the documents).
	for _, r := range []struct {
		name     string
		from, to time.Time
	}{
		{"license report, the whole month", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		{"license report, 10 days (from documents)", time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)},
	} {
		timed = append(timed, timedWorkload{r.name, func() (string, error) {
			cells, _, err := st.LicenseUsage(ctx, owner.ID, store.LicenseMonths(r.from, r.to), nil)
			var clients int64
			for _, c := range cells {
				clients += c.Clients
			}
			return fmt.Sprintf("%d cells, %d clients", len(cells), clients), err
		}})
	}
	// ES|QL: the common shapes over every measurement (M), and over every
	// kind with the spec's pattern.
	const M = "FROM analytics-production-%[1]s-measurements* "
	var client string
	if err := st.Pool().QueryRow(ctx, `SELECT uuid::text FROM clients WHERE data_owner_id = $1 ORDER BY uuid LIMIT 1`, owner.ID).Scan(&client); err != nil {
		return err
	}
	for _, w := range []struct{ name, query string }{
		{"ES|QL STATS COUNT(*) BY type", M + "| STATS n = COUNT(*) BY type"},
		{"ES|QL SORT created_at DESC, LIMIT 5, KEEP", M + "| SORT created_at DESC | LIMIT 5 | KEEP id, type"},
		{"ES|QL same, every kind (pattern <slug>*)", "FROM analytics-production-%[1]s* | SORT created_at DESC | LIMIT 5 | KEEP id, type"},
		{"ES|QL SORT created_at DESC, LIMIT 20, rows", M + "| SORT created_at DESC | LIMIT 20"},
		{"ES|QL WHERE 1 day, AVG BY network.isp", M + `| WHERE created_at >= "2026-11-10" AND created_at < "2026-11-11" | STATS a = AVG(statistic_values.rtt_avg) BY network.isp`},
		{"ES|QL WHERE type, 1 day, SORT, LIMIT 20", M + `| WHERE type == "VideoMeasurement" AND created_at >= "2026-11-10" AND created_at < "2026-11-11" | SORT created_at DESC | LIMIT 20 | KEEP id, client_uuid, study.subject`},
		{"ES|QL WHERE client_uuid, SORT, LIMIT 20", M + `| WHERE client_uuid == "%[2]s" | SORT created_at DESC | LIMIT 20 | KEEP id, type`},
		{"ES|QL STATS BY client_uuid, LOOKUP JOIN", M + "| STATS n = COUNT(*) BY client_uuid | LOOKUP JOIN analytics-production-%[1]s-lookup-clients ON client_uuid | SORT n DESC | LIMIT 3"},
	} {
		query := fmt.Sprintf(w.query, slug, client)
		timed = append(timed, timedWorkload{w.name, func() (string, error) {
			rows, err := backend.ESQL(ctx, owner.ID, slug, query)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%d rows, first %v", len(rows), rows[0]), nil
		}})
		if explain {
			explained = append(explained, w.name)
		}
	}
	if err := printStorage(ctx, st.Pool(), n); err != nil {
		return err
	}
	for _, w := range timed {
		if !only.MatchString(w.name) {
			continue
		}
		var times []time.Duration
		for i := 0; i < runs+3; i++ {
			start := time.Now()
			what, err := w.run()
			if err != nil {
				return fmt.Errorf("%s: %w", w.name, err)
			}
			if i == 0 {
				fmt.Printf("  %s: %s\n", w.name, what)
				if slices.Contains(explained, w.name) {
					if err := rec.explain(ctx, st.Pool()); err != nil {
						return fmt.Errorf("%s: explain: %w", w.name, err)
					}
				}
			}
			if i >= 3 {
				times = append(times, time.Since(start))
			}
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		fmt.Printf("%-40s p50 %7.1f ms   p95 %7.1f ms   max %7.1f ms   (%d runs)\n", w.name,
			ms(times[len(times)/2]), ms(times[len(times)*95/100]), ms(times[len(times)-1]), len(times))
	}
	return nil
}

// printStorage prints the bytes the documents take (every partition: heap
// with TOAST, then each index), in all and per document, and the rollups'.
func printStorage(ctx context.Context, pool interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, docs int64) error {
	rows, _ := pool.Query(ctx, `
		SELECT 'documents, table (heap + TOAST)', sum(pg_table_size(i.inhrelid))::bigint
		FROM pg_inherits i WHERE i.inhparent = 'documents'::regclass
		UNION ALL
		SELECT * FROM (SELECT 'index ' || c.relname, sum(pg_relation_size(part.inhrelid))::bigint
			FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
			JOIN pg_inherits part ON part.inhparent = x.indexrelid
			WHERE x.indrelid = 'documents'::regclass
			GROUP BY c.relname ORDER BY 2 DESC) idx
		UNION ALL
		SELECT 'rollup_cells with indexes', pg_total_relation_size('rollup_cells')`)
	var total int64
	var lines []string
	err := func() error {
		defer rows.Close()
		for rows.Next() {
			var what string
			var size int64
			if err := rows.Scan(&what, &size); err != nil {
				return err
			}
			if !strings.HasPrefix(what, "rollup") {
				total += size
			}
			lines = append(lines, fmt.Sprintf("  %-45s %9.1f MB  %7.1f bytes/document", what, float64(size)/1e6, float64(size)/float64(max(docs, 1))))
		}
		return rows.Err()
	}()
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	fmt.Printf("storage of %d documents: %.1f MB, %.0f bytes/document\n", docs, float64(total)/1e6, float64(total)/float64(max(docs, 1)))
	for _, l := range lines {
		fmt.Println(l)
	}
	return nil
}

// timedWorkload is one workload: run answers a line describing its result.
type timedWorkload struct {
	name string
	run  func() (string, error)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// esqlRecorder keeps the last ES|QL statement (the one reading documents
// through the translator's base subquery) and its arguments.
type esqlRecorder struct {
	mu   sync.Mutex
	sql  string
	args []any
}

func (r *esqlRecorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "FROM documents d ") {
		r.mu.Lock()
		r.sql, r.args = d.SQL, d.Args
		r.mu.Unlock()
	}
	return ctx
}

func (r *esqlRecorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// explain prints the recorded statement and its plan.
func (r *esqlRecorder) explain(ctx context.Context, pool interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}) error {
	r.mu.Lock()
	sql, args := r.sql, r.args
	r.mu.Unlock()
	fmt.Printf("    SQL: %s\n    args: %v\n", sql, args)
	rows, err := pool.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+sql, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return err
		}
		fmt.Println("    " + line)
	}
	return rows.Err()
}
