package pg

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/search"
)

// rollupFixture is a data owner with 700 generated measurements over ten
// days (2026-11-01 .. 2026-11-10), built so that the rollups meet every case
// they must represent or refuse: keyword arrays, nulls, documents without a
// type, a metric stored as a string on one day, a keyword field holding
// numbers on one day, a field holding objects, dotted keys.
func rollupFixture(t *testing.T) (*Backend, search.Scope) {
	t.Helper()
	owner, slug := testOwner(t, "rollq")
	rng := rand.New(rand.NewPCG(7, 11))
	isps := []string{"Telekom", "Vodafone", "O2", "1&1", "Ümlaut <net>"}
	subjects := []string{"youtube", "netflix", "dns", "icmpping"}
	types := []string{"VideoMeasurement", "VideoMeasurement", "NetworkMeasurement", "NetworkMeasurement"}
	clients := []string{
		"7d1c5a0e-0b6e-4d7e-9a43-5f1c2f0c0001", "7d1c5a0e-0b6e-4d7e-9a43-5f1c2f0c0002",
		"7d1c5a0e-0b6e-4d7e-9a43-5f1c2f0c0003",
	}
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var docs []map[string]any
	for i := range 700 {
		at := start.Add(time.Duration(rng.Int64N(int64(10 * 24 * time.Hour))))
		day := int(at.Sub(start) / (24 * time.Hour))
		s := rng.IntN(len(subjects))
		sv := map[string]any{"rtt_avg": math.Round(rng.Float64()*1000) / 10, "count": rng.IntN(50)}
		if rng.IntN(10) == 0 {
			sv["rtt_avg"] = nil
		}
		if rng.IntN(7) == 0 {
			delete(sv, "rtt_avg")
		}
		if day == 3 && rng.IntN(20) == 0 {
			sv["rtt_avg"] = "12.5" // a string: the SQL reads it as a number
		}
		d := map[string]any{
			"id": fmt.Sprintf("r%04d", i), "created_at": at.Format(time.RFC3339Nano),
			"client_uuid":      clients[rng.IntN(len(clients))],
			"study":            map[string]any{"subject": subjects[s]},
			"network":          map[string]any{"isp": isps[rng.IntN(len(isps))]},
			"statistic_values": sv,
			"tags":             []any{[]string{"a", "b", "c"}[rng.IntN(3)], "a", nil},
			"level":            []string{"low", "high"}[rng.IntN(2)],
			"odd.key":          "dotted",
		}
		if rng.IntN(25) != 0 {
			d["type"] = types[s]
		}
		if day == 5 && rng.IntN(30) == 0 {
			d["level"] = 3 // a number where the others hold keywords
		}
		if rng.IntN(15) == 0 {
			d["network"] = map[string]any{"isp": nil}
		}
		docs = append(docs, d)
	}
	insertDocs(t, owner, search.KindMeasurement, docs...)
	// Another data owner with the same days must not show.
	other, _ := testOwner(t, "rollq_other")
	insertDocs(t, other, search.KindMeasurement, map[string]any{"id": "x", "type": "VideoMeasurement",
		"created_at": "2026-11-02T10:00:00Z", "network": map[string]any{"isp": "Telekom"},
		"statistic_values": map[string]any{"rtt_avg": 1e6}})
	return New(testPool(t)), search.Scope{DataOwnerID: owner, Slug: slug, Kind: search.KindMeasurement}
}

// aggsBoth answers body's aggregations over the documents alone and with
// the rollups, normalized through JSON.
func aggsBoth(t *testing.T, b *Backend, scope search.Scope, query any, aggs map[string]any) (raw, rolled any, rawErr, rolledErr error) {
	t.Helper()
	run := func(rollup bool) (any, error) {
		a := &args{}
		c := &compiler{a: a, now: time.Date(2026, 11, 8, 15, 30, 0, 0, time.UTC)}
		where := scopeWhere(a, scope)
		if query != nil {
			qc, err := c.query(query)
			if err != nil {
				return nil, err
			}
			where += " AND (" + qc + ")"
		}
		var rq *rollupRequest
		if rollup {
			rq = &rollupRequest{query: query, c: c}
		}
		res, err := b.aggregations(withAggScope(context.Background(), scope), b.pool, a, where, aggs, rq)
		if err != nil {
			return nil, err
		}
		return normalize(t, res), nil
	}
	raw, rawErr = run(false)
	rolled, rolledErr = run(true)
	return
}

func normalize(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameJSON compares decoded JSON, numbers to a relative 1e-9 (sums of
// partial sums round differently).
func sameJSON(a, b any, path string) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return fmt.Sprintf("%s: %v vs %v", path, a, b)
		}
		for k := range x {
			if d := sameJSON(x[k], y[k], path+"."+k); d != "" {
				return d
			}
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return fmt.Sprintf("%s: %d vs %d elements", path, len(x), lenOf(b))
		}
		for i := range x {
			if d := sameJSON(x[i], y[i], fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
	case float64:
		y, ok := b.(float64)
		if !ok || math.Abs(x-y) > 1e-9*math.Max(1, math.Abs(x)) {
			return fmt.Sprintf("%s: %v vs %v", path, a, b)
		}
	default:
		if a != b {
			return fmt.Sprintf("%s: %v vs %v", path, a, b)
		}
	}
	return ""
}

func lenOf(v any) int {
	if a, ok := v.([]any); ok {
		return len(a)
	}
	return -1
}

func mustJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return m
}

// rollupAggs are aggregation shapes the rollups answer.
var rollupAggs = []string{
	`{"by_isp":{"terms":{"field":"network.isp.keyword","size":10},"aggs":{"per_day":{"date_histogram":{"field":"created_at","calendar_interval":"day"},"aggs":{"rtt":{"avg":{"field":"statistic_values.rtt_avg"}}}}}}}`,
	`{"per_week":{"date_histogram":{"field":"created_at","calendar_interval":"week","min_doc_count":1},"aggs":{"subj":{"terms":{"field":"study.subject","size":2,"order":{"rtt.max":"desc"}},"aggs":{"rtt":{"stats":{"field":"statistic_values.rtt_avg"}}}}}}}`,
	`{"days":{"date_histogram":{"field":"created_at","fixed_interval":"2d","extended_bounds":{"min":"2026-10-28","max":"2026-11-14"}},"aggs":{"s":{"sum":{"field":"statistic_values.count"}},"lo":{"min":{"field":"statistic_values.rtt_avg"}}}}}`,
	`{"types":{"terms":{"field":"type","order":{"_key":"asc"}}},"clients":{"terms":{"field":"client_uuid","size":2,"order":{"avg_rtt":"asc"}},"aggs":{"avg_rtt":{"avg":{"field":"statistic_values.rtt_avg"}}}},"top_avg":{"avg":{"field":"statistic_values.rtt_avg"}},"top_stats":{"stats":{"field":"statistic_values.count"}}}`,
	`{"tags":{"terms":{"field":"tags","size":5,"min_doc_count":60},"aggs":{"m":{"max":{"field":"statistic_values.count"}}}}}`,
	`{"months":{"date_histogram":{"field":"created_at","calendar_interval":"month","keyed":true},"aggs":{"isp":{"terms":{"field":"network.isp","order":{"_count":"asc"},"size":3}}}}}`,
	`{"level":{"terms":{"field":"level"},"aggs":{"c":{"avg":{"field":"statistic_values.count"}}}}}`,
	`{"none":{"terms":{"field":"no.such.field"},"aggs":{"a":{"avg":{"field":"no.such.metric"}}}}}`,
	`{"dotted":{"terms":{"field":"odd.key"}}}`,
}

// rollupQueries are queries the rollups answer (with date math relative to
// 2026-11-08T15:30Z).
var rollupQueries = []string{
	``,
	`{"match_all":{}}`,
	`{"range":{"created_at":{"gte":"2026-11-02","lt":"2026-11-09"}}}`,
	`{"range":{"created_at":{"gt":"2026-11-02T06:00:00Z","lte":"2026-11-07T12:00:00Z"}}}`,
	`{"range":{"created_at":{"gte":"now-5d/d","lte":"now/d"}}}`,
	`{"bool":{"filter":[{"range":{"created_at":{"gte":"now-6d"}}},{"range":{"created_at":{"lt":"2026-11-09"}}}]}}`,
	`{"range":{"created_at":{"gte":"2026-11-04","lt":"2026-11-04"}}}`,
	// Types the cells are kept by: term and terms on type narrow them.
	`{"term":{"type":"VideoMeasurement"}}`,
	`{"bool":{"filter":[{"term":{"type.keyword":{"value":"NetworkMeasurement"}}},{"range":{"created_at":{"gte":"2026-11-03","lt":"2026-11-08T12:00:00Z"}}}]}}`,
	`{"terms":{"type":["VideoMeasurement","NetworkMeasurement","NoSuchMeasurement"]}}`,
	`{"bool":{"must":[{"terms":{"type":["VideoMeasurement","NetworkMeasurement"]}},{"term":{"type":"NetworkMeasurement"}}]}}`,
	`{"bool":{"filter":[{"term":{"type":"VideoMeasurement"}},{"term":{"type":"NetworkMeasurement"}}]}}`,
}

func TestRollupAggregationsMatchTheDocuments(t *testing.T) {
	b, scope := rollupFixture(t)
	ctx := context.Background()
	check := func(t *testing.T, scope search.Scope) {
		t.Helper()
		for ai, aggs := range rollupAggs {
			for qi, q := range rollupQueries {
				var query any
				if q != "" {
					query = mustJSON(t, q)
				}
				raw, rolled, rawErr, rolledErr := aggsBoth(t, b, scope, query, mustJSON(t, aggs))
				if rawErr != nil || rolledErr != nil {
					t.Fatalf("aggs %d, query %d: errors %v / %v", ai, qi, rawErr, rolledErr)
				}
				if d := sameJSON(raw, rolled, "aggregations"); d != "" {
					t.Errorf("aggs %d, query %d: documents and rollups differ at %s", ai, qi, d)
				}
			}
		}
	}
	t.Run("nothing rolled up", func(t *testing.T) { check(t, scope) })
	if _, err := RefreshRollups(ctx, testPool(t)); err != nil {
		t.Fatal(err)
	}
	t.Run("rolled up", func(t *testing.T) { check(t, scope) })
	t.Run("one type", func(t *testing.T) {
		check(t, search.Scope{DataOwnerID: scope.DataOwnerID, Slug: scope.Slug, Kind: scope.Kind, Types: []string{"NetworkMeasurement"}})
	})
	// New documents make their days dirty: the answers include them at once.
	insertDocs(t, scope.DataOwnerID, search.KindMeasurement,
		map[string]any{"id": "late1", "type": "VideoMeasurement", "created_at": "2026-11-06T10:00:00Z",
			"network": map[string]any{"isp": "Telekom"}, "study": map[string]any{"subject": "youtube"},
			"statistic_values": map[string]any{"rtt_avg": 5000.0, "count": 1}, "level": "low"})
	if _, err := testPool(t).Exec(ctx, `UPDATE documents SET doc = jsonb_set(doc, '{statistic_values,rtt_avg}', '-40')
		WHERE data_owner_id = $1 AND doc_id = 'r0001'`, scope.DataOwnerID); err != nil {
		t.Fatal(err)
	}
	t.Run("written since", func(t *testing.T) { check(t, scope) })
	if _, err := RefreshRollups(ctx, testPool(t)); err != nil {
		t.Fatal(err)
	}
	t.Run("refreshed again", func(t *testing.T) { check(t, scope) })
}

// TestRollupAggregationsReadTheCells proves the cells are read: a tampered
// cell shows in the answer of a clean day, and not once the day is dirty.
func TestRollupAggregationsReadTheCells(t *testing.T) {
	b, scope := rollupFixture(t)
	ctx := context.Background()
	if _, err := RefreshRollups(ctx, testPool(t)); err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"size": 0,
		"query": mustJSON(t, `{"range":{"created_at":{"gte":"2026-11-02","lt":"2026-11-03"}}}`),
		"aggs":  mustJSON(t, `{"isp":{"terms":{"field":"network.isp"},"aggs":{"n":{"sum":{"field":"statistic_values.count"}}}}}`)}
	sumFor := func(isp string) float64 {
		t.Helper()
		resp, err := b.Search(ctx, search.Request{Scope: scope, Body: body})
		if err != nil {
			t.Fatal(err)
		}
		for _, bk := range resp["aggregations"].(map[string]any)["isp"].(map[string]any)["buckets"].([]any) {
			m := bk.(map[string]any)
			if m["key"] == isp {
				return m["n"].(map[string]any)["value"].(float64)
			}
		}
		t.Fatalf("no bucket %s", isp)
		return 0
	}
	before := sumFor("Telekom")
	tag, err := testPool(t).Exec(ctx, `UPDATE rollup_cells SET sum = sum + 1000000 WHERE data_owner_id = $1
		AND day = '2026-11-02' AND kfield = 'network.isp' AND kvalue = 'Telekom' AND mfield = 'statistic_values.count'`, scope.DataOwnerID)
	if err != nil || tag.RowsAffected() == 0 {
		t.Fatalf("tamper: %v, %d rows", err, tag.RowsAffected())
	}
	// One cell per type holding Telekom that day.
	if want := before + 1000000*float64(tag.RowsAffected()); sumFor("Telekom") != want {
		t.Fatalf("clean day: sum %v, want the tampered %v", sumFor("Telekom"), want)
	}
	if _, err := testPool(t).Exec(ctx, `INSERT INTO rollup_dirty (data_owner_id, kind, day) VALUES ($1, 'measurement', '2026-11-02')`,
		scope.DataOwnerID); err != nil {
		t.Fatal(err)
	}
	if got := sumFor("Telekom"); got != before {
		t.Fatalf("dirty day: sum %v, want %v from the documents", got, before)
	}
	if _, err := RefreshRollups(ctx, testPool(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := testPool(t).Exec(ctx, `UPDATE rollup_cells SET sum = sum + 1000000 WHERE data_owner_id = $1
		AND day = '2026-11-02' AND kfield = 'network.isp' AND mfield = 'statistic_values.count'`, scope.DataOwnerID); err != nil {
		t.Fatal(err)
	}
	// More cells than a request may hold: the documents answer.
	defer func(n int) { maxCells = n }(maxCells)
	maxCells = 3
	if got := sumFor("Telekom"); got != before {
		t.Fatalf("over maxCells: sum %v, want %v from the documents", got, before)
	}
	maxCells = 1000
	if got := sumFor("Telekom"); got == before {
		t.Fatalf("under maxCells: sum %v, want the tampered cells", got)
	}
}

// A terms aggregation with no metric under it (counts per value, the most
// common dashboard shape) is answered from the cells too: its days are
// clean although it names no metric field.
func TestRollupPlainTermsReadTheCells(t *testing.T) {
	b, scope := rollupFixture(t)
	ctx := context.Background()
	if _, err := RefreshRollups(ctx, testPool(t)); err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"size": 0,
		"query": mustJSON(t, `{"range":{"created_at":{"gte":"2026-11-02","lt":"2026-11-03"}}}`),
		"aggs":  mustJSON(t, `{"isp":{"terms":{"field":"network.isp"}}}`)}
	countFor := func(isp string) float64 {
		t.Helper()
		resp, err := b.Search(ctx, search.Request{Scope: scope, Body: body})
		if err != nil {
			t.Fatal(err)
		}
		for _, bk := range resp["aggregations"].(map[string]any)["isp"].(map[string]any)["buckets"].([]any) {
			if m := bk.(map[string]any); m["key"] == isp {
				f, _ := strconv.ParseFloat(fmt.Sprint(m["doc_count"]), 64)
				return f
			}
		}
		t.Fatalf("no bucket %s", isp)
		return 0
	}
	before := countFor("Telekom")
	tag, err := testPool(t).Exec(ctx, `UPDATE rollup_cells SET n = n + 1000 WHERE data_owner_id = $1
		AND day = '2026-11-02' AND kfield = 'network.isp' AND kvalue = 'Telekom' AND mfield = ''`, scope.DataOwnerID)
	if err != nil || tag.RowsAffected() == 0 {
		t.Fatalf("tamper: %v, %d rows", err, tag.RowsAffected())
	}
	defer func() { _, _ = RefreshRollups(ctx, testPool(t)) }()
	if got, want := countFor("Telekom"), before+1000*float64(tag.RowsAffected()); got != want {
		t.Fatalf("doc_count %v, want the tampered cells' %v", got, want)
	}
	// A term on type reads the cells of that type only.
	body["query"] = mustJSON(t, `{"bool":{"filter":[{"term":{"type":"VideoMeasurement"}},{"range":{"created_at":{"gte":"2026-11-02","lt":"2026-11-03"}}}]}}`)
	video := countFor("Telekom")
	tag, err = testPool(t).Exec(ctx, `UPDATE rollup_cells SET n = n + 100 WHERE data_owner_id = $1 AND day = '2026-11-02'
		AND type = 'VideoMeasurement' AND kfield = 'network.isp' AND kvalue = 'Telekom' AND mfield = ''`, scope.DataOwnerID)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("tamper the video cell: %v, %d rows", err, tag.RowsAffected())
	}
	if got := countFor("Telekom"); got != video+100 {
		t.Fatalf("term on type: doc_count %v, want the tampered video cell's %v", got, video+100)
	}
	// (Mark the day dirty so that the deferred refresh rebuilds it.)
	if _, err := testPool(t).Exec(ctx, `INSERT INTO rollup_dirty (data_owner_id, kind, day) VALUES ($1, 'measurement', '2026-11-02')`,
		scope.DataOwnerID); err != nil {
		t.Fatal(err)
	}
}

// TestRollupShapesThatReadDocuments: shapes the cells cannot answer give
// the same answer as before (they run over the documents).
func TestRollupShapesThatReadDocuments(t *testing.T) {
	b, scope := rollupFixture(t)
	if _, err := RefreshRollups(context.Background(), testPool(t)); err != nil {
		t.Fatal(err)
	}
	for _, aggs := range []string{
		`{"h":{"date_histogram":{"field":"created_at","calendar_interval":"hour"}}}`,
		`{"h":{"date_histogram":{"field":"created_at","calendar_interval":"day","time_zone":"Europe/Berlin"}}}`,
		`{"t":{"terms":{"field":"network.isp"},"aggs":{"u":{"terms":{"field":"study.subject"}}}}}`,
		`{"t":{"terms":{"field":"network.isp","missing":"none"}}}`,
		`{"c":{"cardinality":{"field":"network.isp"}}}`,
		`{"t":{"terms":{"field":"tags.0"}}}`,
		`{"p":{"percentiles":{"field":"statistic_values.rtt_avg"}}}`,
	} {
		for _, q := range []string{``, `{"term":{"network.isp":"O2"}}`} {
			var query any
			if q != "" {
				query = mustJSON(t, q)
			}
			a := &args{}
			c := &compiler{a: a, now: time.Now()}
			nodes, err := parseAggs(mustJSON(t, aggs), nil, new(int))
			if err != nil {
				t.Fatal(err)
			}
			_, _, fieldsOK := rollupFields(nodes)
			_, _, rangeOK := c.createdAtRange(query)
			if fieldsOK && rangeOK {
				t.Errorf("%s / %s: taken for the rollups", aggs, q)
			}
			raw, rolled, e1, e2 := aggsBoth(t, b, scope, query, mustJSON(t, aggs))
			if e1 != nil || e2 != nil {
				t.Fatalf("%s: %v / %v", aggs, e1, e2)
			}
			if d := sameJSON(raw, rolled, "aggregations"); d != "" {
				t.Errorf("%s: %s", aggs, d)
			}
		}
	}
}

func TestCreatedAtRange(t *testing.T) {
	c := &compiler{a: &args{}, now: time.Date(2026, 11, 8, 15, 30, 0, 0, time.UTC)}
	for _, tc := range []struct {
		q      string
		ok     bool
		lo, hi string // RFC 3339, "" open; "!" marks an exclusive bound
	}{
		{`{}`, true, "", ""},
		{`{"match_all":{}}`, true, "", ""},
		{`{"range":{"created_at":{"gte":"now-7d/d","lt":"now/d"}}}`, true, "2026-11-01T00:00:00Z", "!2026-11-08T00:00:00Z"},
		{`{"range":{"created_at.keyword":{"gt":"2026-11-02","lte":"2026-11-03"}}}`, true, "!2026-11-02T23:59:59.999Z", "2026-11-03T23:59:59.999Z"},
		{`{"bool":{"filter":{"range":{"created_at":{"gte":"2026-11-02"}}},"must":[{"range":{"created_at":{"gte":"2026-11-04","lt":"2026-11-06"}}}]}}`, true, "2026-11-04T00:00:00Z", "!2026-11-06T00:00:00Z"},
		{`{"range":{"created_at":{"gte":1793664000000}}}`, true, "2026-11-03T00:00:00Z", ""},
		{`{"range":{"other":{"gte":"2026-11-02"}}}`, false, "", ""},
		{`{"bool":{"should":[{"range":{"created_at":{"gte":"2026-11-02"}}}]}}`, false, "", ""},
		{`{"bool":{"must_not":[{"match_all":{}}]}}`, false, "", ""},
		{`{"term":{"type":"x"}}`, true, "", ""},
		{`{"bool":{"filter":[{"terms":{"type.keyword":["x","y"]}},{"range":{"created_at":{"gte":"2026-11-02"}}}]}}`, true, "2026-11-02T00:00:00Z", ""},
		{`{"term":{"type":{"value":"x","case_insensitive":true}}}`, false, "", ""},
		{`{"term":{"type":""}}`, false, "", ""},
		{`{"term":{"type":5}}`, false, "", ""},
		{`{"term":{"subject":"x"}}`, false, "", ""},
		{`{"terms":{"type":"x"}}`, false, "", ""},
	} {
		lo, hi, ok := c.createdAtRange(mustJSON(t, tc.q))
		if ok != tc.ok {
			t.Errorf("%s: ok %v", tc.q, ok)
			continue
		}
		show := func(b timeBound) string {
			if !b.set {
				return ""
			}
			s := b.t.UTC().Format("2006-01-02T15:04:05.999Z07:00")
			if !b.incl {
				s = "!" + s
			}
			return s
		}
		if ok && (show(lo) != tc.lo || show(hi) != tc.hi) {
			t.Errorf("%s: [%s, %s], want [%s, %s]", tc.q, show(lo), show(hi), tc.lo, tc.hi)
		}
	}
}

func TestRawRangesAndFullDays(t *testing.T) {
	d := func(s string) time.Time { tt, _ := time.Parse("2006-01-02", s); return tt }
	at := func(s string) time.Time { tt, _ := time.Parse(time.RFC3339, s); return tt }
	lo := timeBound{at("2026-11-02T06:00:00Z"), true, true}
	hi := timeBound{d("2026-11-06"), false, true}
	for _, tc := range []struct {
		day  string
		full bool
	}{{"2026-11-02", false}, {"2026-11-03", true}, {"2026-11-05", true}, {"2026-11-06", false}} {
		if got := fullDay(d(tc.day), lo, hi); got != tc.full {
			t.Errorf("fullDay(%s) = %v", tc.day, got)
		}
	}
	if fullDay(d("2026-11-05"), timeBound{}, timeBound{at("2026-11-05T23:59:59.999999Z"), false, true}) {
		t.Error("a day ending at an exclusive bound's instant is not full")
	}
	show := func(rs []tRange) string {
		var parts []string
		for _, r := range rs {
			f, to := "-", "-"
			if !r.from.IsZero() {
				f = r.from.Format("01-02")
			}
			if !r.to.IsZero() {
				to = r.to.Format("01-02")
			}
			parts = append(parts, f+".."+to)
		}
		return strings.Join(parts, " ")
	}
	clean := []time.Time{d("2026-11-03"), d("2026-11-05")}
	if got := show(rawRanges(clean, lo, hi)); got != "11-02..11-03 11-04..11-05 11-06..11-07" {
		t.Errorf("bounded: %s", got)
	}
	if got := show(rawRanges(clean, timeBound{}, timeBound{})); got != "-..11-03 11-04..11-05 11-06..-" {
		t.Errorf("open: %s", got)
	}
	if got := show(rawRanges(nil, timeBound{}, timeBound{})); got != "-..-" {
		t.Errorf("nothing clean: %s", got)
	}
	if got := show(rawRanges([]time.Time{d("2026-11-02"), d("2026-11-03")}, timeBound{d("2026-11-02"), true, true},
		timeBound{d("2026-11-04"), false, true})); got != "11-04..11-05" {
		t.Errorf("all clean: %s", got)
	}
}
