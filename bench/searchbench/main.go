// Command searchbench times the embedded PostgreSQL search backend on a
// loaded data owner (see bench/run.sh): a filtered, sorted, paged search and
// a terms + date_histogram + avg aggregation over 30 days. It prints p50,
// p95 and max per workload.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/pg"
	"github.com/fleetgraph/fleetgraph/store"
)

func main() {
	url := flag.String("database-url", "postgres://postgres@127.0.0.1:5432/fleetgraph_bench?sslmode=disable", "database holding the loaded data owner")
	slug := flag.String("data-owner", "bench", "data owner slug")
	runs := flag.Int("runs", 30, "timed runs per workload (after 3 warm-up runs)")
	flag.Parse()
	if err := run(context.Background(), *url, *slug, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "searchbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url, slug string, runs int) error {
	st, err := store.Open(ctx, url, store.Options{})
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
	for _, w := range timed {
		var times []time.Duration
		for i := 0; i < runs+3; i++ {
			start := time.Now()
			what, err := w.run()
			if err != nil {
				return fmt.Errorf("%s: %w", w.name, err)
			}
			if i == 0 {
				fmt.Printf("  %s: %s\n", w.name, what)
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

// timedWorkload is one workload: run answers a line describing its result.
type timedWorkload struct {
	name string
	run  func() (string, error)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
