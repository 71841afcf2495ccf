package pg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fleetgraph/fleetgraph/search"
)

// aggFixture is a data owner with hand-built measurements over 2026-11-01 ..
// 2026-11-05 (UTC; Europe/Berlin is UTC+1 then), and a second data owner
// whose documents must never show up.
//
//	id  type     subject         created_at (UTC)    Berlin         bitrate  resolution  tags
//	m1  Video    youtube         11-01 10:00         11-01 11:00    1000     1080        a,b
//	m2  Video    youtube         11-01 22:30         11-01 23:30    2000     720         a
//	m3  Video    netflix         11-01 23:30         11-02 00:30    3000     1080
//	m4  Video    youtube         11-02 12:00         11-02 13:00    4000     1080
//	m8  Web      website         11-02 05:00         11-02 06:00    -        -
//	m5  Video    netflix         11-04 08:00         11-04 09:00    8000     2160
//	m6  Video    amazon_trailer  11-04 09:00         11-04 10:00    -        -
//	m7  Video    youtube         11-04 23:15         11-05 00:15    6000     720
type aggFixture struct {
	b     *Backend
	owner int64
	slug  string
	other int64
}

func newAggFixture(t *testing.T) *aggFixture {
	t.Helper()
	owner, slug := testOwner(t, "aggs")
	other, _ := testOwner(t, "aggs-other")
	video := func(id, subject, at string, bitrate, res any, extra map[string]any) map[string]any {
		sv := map[string]any{}
		if bitrate != nil {
			sv["bitrate"] = bitrate
		}
		if res != nil {
			sv["resolution"] = res
		}
		d := map[string]any{"id": id, "type": "VideoMeasurement", "created_at": at,
			"client_uuid":      "7d1c5a0e-0b6e-4d7e-9a43-5f1c2f0c0001",
			"study":            map[string]any{"subject": subject, "study_id": "s-" + subject},
			"statistic_values": sv}
		for k, v := range extra {
			d[k] = v
		}
		return d
	}
	insertDocs(t, owner, search.KindMeasurement,
		video("m1", "youtube", "2026-11-01T10:00:00Z", 1000, 1080, map[string]any{"tags": []any{"a", "b"}}),
		video("m2", "youtube", "2026-11-01T22:30:00Z", 2000, 720, map[string]any{"tags": []any{"a"}}),
		video("m3", "netflix", "2026-11-01T23:30:00Z", 3000, 1080, nil),
		video("m4", "youtube", "2026-11-02T12:00:00Z", 4000, 1080, nil),
		map[string]any{"id": "m8", "type": "WebMeasurement", "created_at": "2026-11-02T05:00:00Z",
			"study": map[string]any{"subject": "website"}, "statistic_values": map[string]any{"load_time": 1.5}},
		video("m5", "netflix", "2026-11-04T08:00:00Z", 8000, 2160, nil),
		video("m6", "amazon_trailer", "2026-11-04T09:00:00Z", nil, nil, nil),
		video("m7", "youtube", "2026-11-04T23:15:00Z", 6000, 720, nil),
	)
	// The other data owner: same shapes, values that would show.
	insertDocs(t, other, search.KindMeasurement,
		video("m1", "youtube", "2026-11-01T10:00:00Z", 1e6, 4320, map[string]any{"tags": []any{"zzz"}}),
		video("x2", "other_subject", "2026-11-03T10:00:00Z", 2e6, 4320, nil),
		video("x3", "netflix", "2026-10-01T10:00:00Z", 3e6, 4320, nil),
	)
	// A document of another kind of the same owner.
	insertDocs(t, owner, search.KindClientReport,
		map[string]any{"id": "r1", "type": "P1203ClientReport", "created_at": "2026-11-03T10:00:00Z",
			"study": map[string]any{"subject": "youtube"}, "statistic_values": map[string]any{"bitrate": 9e6}})
	return &aggFixture{b: New(testPool(t)), owner: owner, slug: slug, other: other}
}

func (f *aggFixture) scope(types ...string) search.Scope {
	return search.Scope{DataOwnerID: f.owner, Slug: f.slug, Kind: search.KindMeasurement, Types: types}
}

// run answers the aggregations (JSON) over the scope, the result normalized
// through JSON.
func (f *aggFixture) run(t *testing.T, b *Backend, scope search.Scope, aggsJSON string) (any, error) {
	t.Helper()
	var aggs map[string]any
	if err := json.Unmarshal([]byte(aggsJSON), &aggs); err != nil {
		t.Fatalf("bad test aggs %s: %v", aggsJSON, err)
	}
	a := &args{}
	where := scopeWhere(a, scope)
	before := len(a.vals)
	res, err := b.aggregations(withAggScope(context.Background(), scope), b.pool, a, where, aggs, nil)
	if len(a.vals) != before {
		t.Errorf("aggregations changed the caller's args: %d → %d values", before, len(a.vals))
	}
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatalf("marshal result: %v", err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out, nil
}

func (f *aggFixture) must(t *testing.T, aggsJSON string) any {
	t.Helper()
	got, err := f.run(t, f.b, f.scope(), aggsJSON)
	if err != nil {
		t.Fatalf("aggregations %s: %v", aggsJSON, err)
	}
	return got
}

// expect compares got with the expected JSON, numbers within 1e-9.
func expect(t *testing.T, got any, wantJSON string) {
	t.Helper()
	var want any
	if err := json.Unmarshal([]byte(wantJSON), &want); err != nil {
		t.Fatalf("bad expected JSON: %v\n%s", err, wantJSON)
	}
	if path, ok := jsonNear(got, want, "$"); !ok {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Fatalf("mismatch at %s\ngot:  %s\nwant: %s", path, g, w)
	}
}

func jsonNear(got, want any, path string) (string, bool) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			keys := func(m map[string]any) []string {
				var ks []string
				for k := range m {
					ks = append(ks, k)
				}
				sort.Strings(ks)
				return ks
			}
			return fmt.Sprintf("%s (keys %v, want %v)", path, keys(g), keys(w)), false
		}
		for k, wv := range w {
			if p, ok := jsonNear(g[k], wv, path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s (length %d, want %d)", path, len(g), len(w)), false
		}
		for i := range w {
			if p, ok := jsonNear(g[i], w[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	case float64:
		g, ok := got.(float64)
		if !ok || math.Abs(g-w) > 1e-9*math.Max(1, math.Abs(w)) {
			return fmt.Sprintf("%s (%v, want %v)", path, got, w), false
		}
		return "", true
	default:
		if got != want {
			return fmt.Sprintf("%s (%v, want %v)", path, got, want), false
		}
		return "", true
	}
}

func TestAggsMetrics(t *testing.T) {
	f := newAggFixture(t)
	got := f.must(t, `{
		"avg_b": {"avg": {"field": "statistic_values.bitrate"}},
		"sum_b": {"sum": {"field": "statistic_values.bitrate"}},
		"min_b": {"min": {"field": "statistic_values.bitrate"}},
		"max_b": {"max": {"field": "statistic_values.bitrate"}},
		"n_b": {"value_count": {"field": "statistic_values.bitrate"}},
		"subjects": {"cardinality": {"field": "study.subject"}},
		"st": {"stats": {"field": "statistic_values.bitrate"}},
		"avg_missing": {"avg": {"field": "statistic_values.bitrate", "missing": 0}},
		"none": {"avg": {"field": "statistic_values.nothing"}},
		"first": {"min": {"field": "created_at"}},
		"pct": {"percentiles": {"field": "statistic_values.bitrate"}},
		"pct2": {"percentiles": {"field": "statistic_values.bitrate", "percents": [50, 99.9], "keyed": false}},
		"m": {"max": {"field": "statistic_values.load_time"}, "meta": {"x": 1}}
	}`)
	// bitrates: 1000 2000 3000 4000 6000 8000 (sum 24000); m6 and m8 have none.
	// percentile_cont: position p*(n-1) interpolated in the sorted values.
	expect(t, got, `{
		"avg_b": {"value": 4000},
		"sum_b": {"value": 24000},
		"min_b": {"value": 1000},
		"max_b": {"value": 8000},
		"n_b": {"value": 6},
		"subjects": {"value": 4},
		"st": {"count": 6, "min": 1000, "max": 8000, "avg": 4000, "sum": 24000},
		"avg_missing": {"value": 3000},
		"none": {"value": null},
		"first": {"value": 1793527200000, "value_as_string": "2026-11-01T10:00:00.000Z"},
		"pct": {"values": {"1.0": 1050, "5.0": 1250, "25.0": 2250, "50.0": 3500, "75.0": 5500, "95.0": 7500, "99.0": 7900}},
		"pct2": {"values": [{"key": 50, "value": 3500}, {"key": 99.9, "value": 7990}]},
		"m": {"value": 1.5, "meta": {"x": 1}}
	}`)
}

func TestAggsTerms(t *testing.T) {
	f := newAggFixture(t)
	got := f.must(t, `{
		"subjects": {"terms": {"field": "study.subject"}},
		"top2": {"terms": {"field": "study.subject.keyword", "size": 2}},
		"by_key": {"terms": {"field": "study.subject", "order": {"_key": "desc"}, "min_doc_count": 2}},
		"res": {"terms": {"field": "statistic_values.resolution", "order": {"_key": "asc"}}},
		"res_missing": {"terms": {"field": "statistic_values.resolution", "missing": "none"}},
		"tags": {"terms": {"field": "tags"}},
		"types": {"terms": {"field": "type"}}
	}`)
	expect(t, got, `{
		"subjects": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [
			{"key": "youtube", "doc_count": 4}, {"key": "netflix", "doc_count": 2},
			{"key": "amazon_trailer", "doc_count": 1}, {"key": "website", "doc_count": 1}]},
		"top2": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 2, "buckets": [
			{"key": "youtube", "doc_count": 4}, {"key": "netflix", "doc_count": 2}]},
		"by_key": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [
			{"key": "youtube", "doc_count": 4}, {"key": "netflix", "doc_count": 2}]},
		"res": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [
			{"key": 720, "doc_count": 2}, {"key": 1080, "doc_count": 3}, {"key": 2160, "doc_count": 1}]},
		"res_missing": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [
			{"key": 1080, "doc_count": 3}, {"key": 720, "doc_count": 2}, {"key": "none", "doc_count": 2},
			{"key": 2160, "doc_count": 1}]},
		"tags": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [
			{"key": "a", "doc_count": 2}, {"key": "b", "doc_count": 1}]},
		"types": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [
			{"key": "VideoMeasurement", "doc_count": 7}, {"key": "WebMeasurement", "doc_count": 1}]}
	}`)

	// Ordered by a metric sub-aggregation; buckets without a value last.
	got = f.must(t, `{"s": {"terms": {"field": "study.subject", "order": {"avg_b": "desc"}},
		"aggs": {"avg_b": {"avg": {"field": "statistic_values.bitrate"}}}}}`)
	expect(t, got, `{"s": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [
		{"key": "netflix", "doc_count": 2, "avg_b": {"value": 5500}},
		{"key": "youtube", "doc_count": 4, "avg_b": {"value": 3250}},
		{"key": "amazon_trailer", "doc_count": 1, "avg_b": {"value": null}},
		{"key": "website", "doc_count": 1, "avg_b": {"value": null}}]}}`)

	// Scope types narrow what is counted.
	got, err := f.run(t, f.b, f.scope("WebMeasurement"), `{"s": {"terms": {"field": "study.subject"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, got, `{"s": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [
		{"key": "website", "doc_count": 1}]}}`)
}

func TestAggsDateHistogram(t *testing.T) {
	f := newAggFixture(t)
	// UTC days: 11-01 m1 m2 m3, 11-02 m4 m8, 11-03 none, 11-04 m5 m6 m7.
	got := f.must(t, `{"d": {"date_histogram": {"field": "created_at", "calendar_interval": "day"}}}`)
	expect(t, got, `{"d": {"buckets": [
		{"key": 1793491200000, "key_as_string": "2026-11-01T00:00:00.000Z", "doc_count": 3},
		{"key": 1793577600000, "key_as_string": "2026-11-02T00:00:00.000Z", "doc_count": 2},
		{"key": 1793664000000, "key_as_string": "2026-11-03T00:00:00.000Z", "doc_count": 0},
		{"key": 1793750400000, "key_as_string": "2026-11-04T00:00:00.000Z", "doc_count": 3}]}}`)

	// Berlin days (UTC+1): 11-01 m1 m2, 11-02 m3 m4 m8, 11-03 none, 11-04 m5 m6, 11-05 m7;
	// a Berlin midnight is 23:00 UTC the day before.
	berlin := `{"buckets": [
		{"key": 1793487600000, "key_as_string": "2026-11-01T00:00:00.000+01:00", "doc_count": 2},
		{"key": 1793574000000, "key_as_string": "2026-11-02T00:00:00.000+01:00", "doc_count": 3},
		{"key": 1793660400000, "key_as_string": "2026-11-03T00:00:00.000+01:00", "doc_count": 0},
		{"key": 1793746800000, "key_as_string": "2026-11-04T00:00:00.000+01:00", "doc_count": 2},
		{"key": 1793833200000, "key_as_string": "2026-11-05T00:00:00.000+01:00", "doc_count": 1}]}`
	got = f.must(t, `{"d": {"date_histogram": {"field": "created_at", "calendar_interval": "1d", "time_zone": "Europe/Berlin"}}}`)
	expect(t, got, `{"d": `+berlin+`}`)
	// A format writes key_as_string (and the keys of keyed buckets).
	got = f.must(t, `{"d": {"date_histogram": {"field": "created_at", "calendar_interval": "1d", "time_zone": "Europe/Berlin", "format": "yyyy-MM-dd"}}}`)
	expect(t, got, `{"d": `+strings.ReplaceAll(berlin, "T00:00:00.000+01:00", "")+`}`)
	got = f.must(t, `{"d": {"date_histogram": {"field": "created_at", "calendar_interval": "1d", "format": "dd.MM.yyyy HH:mm", "keyed": true, "min_doc_count": 1}},
		"e": {"date_histogram": {"field": "created_at", "calendar_interval": "1d", "format": "epoch_millis", "min_doc_count": 1}}}`)
	expect(t, got, `{"d": {"buckets": {
		"01.11.2026 00:00": {"key": 1793491200000, "key_as_string": "01.11.2026 00:00", "doc_count": 3},
		"02.11.2026 00:00": {"key": 1793577600000, "key_as_string": "02.11.2026 00:00", "doc_count": 2},
		"04.11.2026 00:00": {"key": 1793750400000, "key_as_string": "04.11.2026 00:00", "doc_count": 3}}},
		"e": {"buckets": [
		{"key": 1793491200000, "key_as_string": "1793491200000", "doc_count": 3},
		{"key": 1793577600000, "key_as_string": "1793577600000", "doc_count": 2},
		{"key": 1793750400000, "key_as_string": "1793750400000", "doc_count": 3}]}}`)
	got = f.must(t, `{"d": {"date_histogram": {"field": "created_at", "calendar_interval": "day", "time_zone": "+01:00"}}}`)
	expect(t, got, `{"d": `+strings.ReplaceAll(berlin, "+01:00", "+01:00")+`}`)

	// min_doc_count 1 drops the empty day.
	got = f.must(t, `{"d": {"date_histogram": {"field": "created_at", "calendar_interval": "day", "time_zone": "Europe/Berlin", "min_doc_count": 1}}}`)
	if n := len(got.(map[string]any)["d"].(map[string]any)["buckets"].([]any)); n != 4 {
		t.Errorf("min_doc_count 1: %d buckets, want 4", n)
	}

	// Weeks start on Monday: 2026-11-01 is a Sunday (week of 10-26), the
	// rest fall in the week of 11-02. Months and years: one bucket.
	got = f.must(t, `{
		"w": {"date_histogram": {"field": "created_at", "calendar_interval": "week"}},
		"mo": {"date_histogram": {"field": "created_at", "calendar_interval": "month", "time_zone": "Europe/Berlin"}},
		"q": {"date_histogram": {"field": "created_at", "calendar_interval": "1q"}},
		"y": {"date_histogram": {"field": "created_at", "calendar_interval": "year"}}
	}`)
	expect(t, got, `{
		"w": {"buckets": [
			{"key": 1792972800000, "key_as_string": "2026-10-26T00:00:00.000Z", "doc_count": 3},
			{"key": 1793577600000, "key_as_string": "2026-11-02T00:00:00.000Z", "doc_count": 5}]},
		"mo": {"buckets": [{"key": 1793487600000, "key_as_string": "2026-11-01T00:00:00.000+01:00", "doc_count": 8}]},
		"q": {"buckets": [{"key": 1790812800000, "key_as_string": "2026-10-01T00:00:00.000Z", "doc_count": 8}]},
		"y": {"buckets": [{"key": 1767225600000, "key_as_string": "2026-01-01T00:00:00.000Z", "doc_count": 8}]}
	}`)

	// Fixed 12h buckets at local midnight/noon (+01:00): 11-01 00 m1, 11-01 12 m2,
	// 11-02 00 m3 m8, 11-02 12 m4, 11-03 00/12 none, 11-04 00 m5 m6, 11-04 12 none, 11-05 00 m7.
	got = f.must(t, `{"d": {"date_histogram": {"field": "created_at", "fixed_interval": "12h", "time_zone": "+01:00"}}}`)
	var counts []int
	var keys []string
	for _, b := range got.(map[string]any)["d"].(map[string]any)["buckets"].([]any) {
		bm := b.(map[string]any)
		counts = append(counts, int(bm["doc_count"].(float64)))
		keys = append(keys, bm["key_as_string"].(string))
	}
	if fmt.Sprint(counts) != "[1 1 2 1 0 0 2 0 1]" || keys[0] != "2026-11-01T00:00:00.000+01:00" || keys[8] != "2026-11-05T00:00:00.000+01:00" {
		t.Errorf("fixed 12h: counts %v keys %v", counts, keys)
	}

	// Extended bounds widen the filled range (also with no documents at
	// all); hard bounds cut it.
	dayCounts := func(got any, name string) (counts []int, first string) {
		for _, b := range got.(map[string]any)[name].(map[string]any)["buckets"].([]any) {
			bm := b.(map[string]any)
			counts = append(counts, int(bm["doc_count"].(float64)))
			if first == "" {
				first = bm["key_as_string"].(string)
			}
		}
		return counts, first
	}
	ext := `{"d": {"date_histogram": {"field": "created_at", "calendar_interval": "day",
			"extended_bounds": {"min": "2026-10-30", "max": 1793836800000}}},
		"b": {"date_histogram": {"field": "created_at", "calendar_interval": "day", "time_zone": "Europe/Berlin",
			"extended_bounds": {"min": "2026-10-31", "max": "2026-11-02T12:00:00+01:00"}}},
		"h": {"date_histogram": {"field": "created_at", "calendar_interval": "day",
			"extended_bounds": {"min": "2026-10-30", "max": "2026-11-06"}, "hard_bounds": {"min": "2026-11-02", "max": "2026-11-03"}}}}`
	got = f.must(t, ext)
	if c, first := dayCounts(got, "d"); fmt.Sprint(c) != "[0 0 3 2 0 3 0]" || first != "2026-10-30T00:00:00.000Z" {
		t.Errorf("extended_bounds: %v from %s", c, first)
	}
	if c, first := dayCounts(got, "b"); fmt.Sprint(c) != "[0 2 3 0 2 1]" || first != "2026-10-31T00:00:00.000+01:00" {
		t.Errorf("extended_bounds in Berlin: %v from %s", c, first)
	}
	if c, first := dayCounts(got, "h"); fmt.Sprint(c) != "[2 0]" || first != "2026-11-02T00:00:00.000Z" {
		t.Errorf("hard_bounds: %v from %s", c, first)
	}
	got, err := f.run(t, f.b, f.scope("GamingMeasurement"), ext)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := dayCounts(got, "d"); fmt.Sprint(c) != "[0 0 0 0 0 0 0]" {
		t.Errorf("extended_bounds without documents: %v", c)
	}

	// An offset, keyed buckets.
	got = f.must(t, `{"d": {"date_histogram": {"field": "created_at", "calendar_interval": "day", "offset": "+10h", "keyed": true, "min_doc_count": 1}}}`)
	// Days starting 10:00 UTC: [11-01 10:00) m1 m2 m3 m8; [11-02 10:00) m4;
	// [11-03 10:00) m5 m6; [11-04 10:00) m7.
	expect(t, got, `{"d": {"buckets": {
		"2026-11-01T10:00:00.000Z": {"key": 1793527200000, "key_as_string": "2026-11-01T10:00:00.000Z", "doc_count": 4},
		"2026-11-02T10:00:00.000Z": {"key": 1793613600000, "key_as_string": "2026-11-02T10:00:00.000Z", "doc_count": 1},
		"2026-11-03T10:00:00.000Z": {"key": 1793700000000, "key_as_string": "2026-11-03T10:00:00.000Z", "doc_count": 2},
		"2026-11-04T10:00:00.000Z": {"key": 1793786400000, "key_as_string": "2026-11-04T10:00:00.000Z", "doc_count": 1}}}}`)
}

func TestAggsHistogramAndRange(t *testing.T) {
	f := newAggFixture(t)
	got := f.must(t, `{
		"h": {"histogram": {"field": "statistic_values.bitrate", "interval": 1000}},
		"h1": {"histogram": {"field": "statistic_values.bitrate", "interval": 1000, "min_doc_count": 1}},
		"ho": {"histogram": {"field": "statistic_values.bitrate", "interval": 2000, "offset": 500}},
		"r": {"range": {"field": "statistic_values.bitrate", "ranges": [{"from": 5000}, {"to": 2000}, {"from": 2000, "to": 5000, "key": "mid"}, {"from": 100000}]}},
		"rk": {"range": {"field": "statistic_values.bitrate", "keyed": true, "ranges": [{"from": 1500.5, "to": 2500}]}},
		"hx": {"histogram": {"field": "statistic_values.bitrate", "interval": 1000, "extended_bounds": {"min": 0, "max": 9500}}},
		"hh": {"histogram": {"field": "statistic_values.bitrate", "interval": 1000, "hard_bounds": {"min": 2000, "max": 6000}}}
	}`)
	expect(t, got, `{
		"h": {"buckets": [{"key": 1000, "doc_count": 1}, {"key": 2000, "doc_count": 1}, {"key": 3000, "doc_count": 1},
			{"key": 4000, "doc_count": 1}, {"key": 5000, "doc_count": 0}, {"key": 6000, "doc_count": 1},
			{"key": 7000, "doc_count": 0}, {"key": 8000, "doc_count": 1}]},
		"h1": {"buckets": [{"key": 1000, "doc_count": 1}, {"key": 2000, "doc_count": 1}, {"key": 3000, "doc_count": 1},
			{"key": 4000, "doc_count": 1}, {"key": 6000, "doc_count": 1}, {"key": 8000, "doc_count": 1}]},
		"ho": {"buckets": [{"key": 500, "doc_count": 2}, {"key": 2500, "doc_count": 2}, {"key": 4500, "doc_count": 1},
			{"key": 6500, "doc_count": 1}]},
		"r": {"buckets": [
			{"key": "*-2000.0", "to": 2000, "doc_count": 1},
			{"key": "mid", "from": 2000, "to": 5000, "doc_count": 3},
			{"key": "5000.0-*", "from": 5000, "doc_count": 2},
			{"key": "100000.0-*", "from": 100000, "doc_count": 0}]},
		"rk": {"buckets": {"1500.5-2500.0": {"from": 1500.5, "to": 2500, "doc_count": 1}}},
		"hx": {"buckets": [{"key": 0, "doc_count": 0}, {"key": 1000, "doc_count": 1}, {"key": 2000, "doc_count": 1},
			{"key": 3000, "doc_count": 1}, {"key": 4000, "doc_count": 1}, {"key": 5000, "doc_count": 0},
			{"key": 6000, "doc_count": 1}, {"key": 7000, "doc_count": 0}, {"key": 8000, "doc_count": 1},
			{"key": 9000, "doc_count": 0}]},
		"hh": {"buckets": [{"key": 2000, "doc_count": 1}, {"key": 3000, "doc_count": 1}, {"key": 4000, "doc_count": 1},
			{"key": 5000, "doc_count": 0}, {"key": 6000, "doc_count": 1}]}
	}`)
}

func TestAggsFilters(t *testing.T) {
	f := newAggFixture(t)
	got := f.must(t, `{
		"video": {"filter": {"term": {"type": "VideoMeasurement"}},
			"aggs": {"avg_b": {"avg": {"field": "statistic_values.bitrate"}}}},
		"named": {"filters": {"other_bucket_key": "rest", "filters": {
			"yt": {"term": {"study.subject": "youtube"}},
			"nf": {"term": {"study.subject": "netflix"}}}},
			"aggs": {"max_b": {"max": {"field": "statistic_values.bitrate"}}}},
		"anon": {"filters": {"filters": [{"term": {"study.subject": "netflix"}}, {"term": {"study.subject": "nothing"}}]}},
		"no_b": {"missing": {"field": "statistic_values.bitrate"}}
	}`)
	expect(t, got, `{
		"video": {"doc_count": 7, "avg_b": {"value": 4000}},
		"named": {"buckets": {
			"nf": {"doc_count": 2, "max_b": {"value": 8000}},
			"yt": {"doc_count": 4, "max_b": {"value": 6000}},
			"rest": {"doc_count": 2, "max_b": {"value": null}}}},
		"anon": {"buckets": [{"doc_count": 2}, {"doc_count": 0}]},
		"no_b": {"doc_count": 2}
	}`)
}

func TestAggsNestedAndTopHits(t *testing.T) {
	f := newAggFixture(t)
	got := f.must(t, `{"s": {"terms": {"field": "study.subject"}, "aggs": {
		"days": {"date_histogram": {"field": "created_at", "calendar_interval": "day", "time_zone": "Europe/Berlin"},
			"aggs": {"avg_b": {"avg": {"field": "statistic_values.bitrate"}}}},
		"best": {"top_hits": {"size": 1, "sort": [{"statistic_values.bitrate": {"order": "desc"}}],
			"_source": {"includes": ["study.subject", "statistic_values.bitrate"]}}}}}}`)
	day := func(d int) int64 { return 1793487600000 + int64(d-1)*86400000 }
	bucket := func(d, n int, avg string) string {
		return fmt.Sprintf(`{"key": %d, "key_as_string": "2026-11-%02dT00:00:00.000+01:00", "doc_count": %d, "avg_b": {"value": %s}}`, day(d), d, n, avg)
	}
	hit := func(id, subject string, bitrate string) string {
		src := fmt.Sprintf(`{"study": {"subject": %q}}`, subject)
		if bitrate != "null" {
			src = fmt.Sprintf(`{"study": {"subject": %q}, "statistic_values": {"bitrate": %s}}`, subject, bitrate)
		}
		return fmt.Sprintf(`{"_index": %q, "_id": %q, "_score": null, "_source": %s, "sort": [%s]}`,
			search.IndexName(f.slug, search.KindMeasurement, map[bool]string{true: "WebMeasurement", false: "VideoMeasurement"}[id == "m8"]),
			id, src, bitrate)
	}
	top := func(total int, h string) string {
		return fmt.Sprintf(`{"hits": {"total": {"value": %d, "relation": "eq"}, "max_score": null, "hits": [%s]}}`, total, h)
	}
	want := `{"s": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [
		{"key": "youtube", "doc_count": 4, "days": {"buckets": [` +
		bucket(1, 2, "1500") + "," + bucket(2, 1, "4000") + "," + bucket(3, 0, "null") + "," + bucket(4, 0, "null") + "," + bucket(5, 1, "6000") +
		`]}, "best": ` + top(4, hit("m7", "youtube", "6000")) + `},
		{"key": "netflix", "doc_count": 2, "days": {"buckets": [` +
		bucket(2, 1, "3000") + "," + bucket(3, 0, "null") + "," + bucket(4, 1, "8000") +
		`]}, "best": ` + top(2, hit("m5", "netflix", "8000")) + `},
		{"key": "amazon_trailer", "doc_count": 1, "days": {"buckets": [` + bucket(4, 1, "null") +
		`]}, "best": ` + top(1, hit("m6", "amazon_trailer", "null")) + `},
		{"key": "website", "doc_count": 1, "days": {"buckets": [` + bucket(2, 1, "null") +
		`]}, "best": ` + top(1, hit("m8", "website", "null")) + `}]}}`
	expect(t, got, want)

	// Three bucket levels: range → terms → histogram, with a metric at each.
	got = f.must(t, `{"r": {"range": {"field": "statistic_values.bitrate", "ranges": [{"to": 3500}, {"from": 3500}]},
		"aggs": {"s": {"terms": {"field": "study.subject"}, "aggs": {
			"h": {"histogram": {"field": "statistic_values.resolution", "interval": 1000, "min_doc_count": 1},
				"aggs": {"n": {"value_count": {"field": "statistic_values.bitrate"}}}}}}}}}`)
	expect(t, got, `{"r": {"buckets": [
		{"key": "*-3500.0", "to": 3500, "doc_count": 3, "s": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [
			{"key": "youtube", "doc_count": 2, "h": {"buckets": [{"key": 0, "doc_count": 1, "n": {"value": 1}}, {"key": 1000, "doc_count": 1, "n": {"value": 1}}]}},
			{"key": "netflix", "doc_count": 1, "h": {"buckets": [{"key": 1000, "doc_count": 1, "n": {"value": 1}}]}}]}},
		{"key": "3500.0-*", "from": 3500, "doc_count": 3, "s": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [
			{"key": "youtube", "doc_count": 2, "h": {"buckets": [{"key": 0, "doc_count": 1, "n": {"value": 1}}, {"key": 1000, "doc_count": 1, "n": {"value": 1}}]}},
			{"key": "netflix", "doc_count": 1, "h": {"buckets": [{"key": 2000, "doc_count": 1, "n": {"value": 1}}]}}]}}]}}`)

	// Top-level top_hits: newest first, no _source, from.
	got = f.must(t, `{"t": {"top_hits": {"size": 2, "from": 1, "sort": [{"created_at": "desc"}], "_source": false}}}`)
	th := got.(map[string]any)["t"].(map[string]any)["hits"].(map[string]any)
	hits := th["hits"].([]any)
	if th["total"].(map[string]any)["value"].(float64) != 8 || len(hits) != 2 ||
		hits[0].(map[string]any)["_id"] != "m6" || hits[1].(map[string]any)["_id"] != "m5" ||
		hits[0].(map[string]any)["_source"] != nil || th["max_score"] != nil {
		t.Errorf("top-level top_hits: %v", th)
	}
	// Unsorted: insertion order, every hit scores 1 like the search hits.
	got = f.must(t, `{"t": {"top_hits": {"size": 1, "_source": ["id"]}}}`)
	expect(t, got, `{"t": {"hits": {"total": {"value": 8, "relation": "eq"}, "max_score": 1, "hits": [
		{"_index": "`+search.IndexName(f.slug, search.KindMeasurement, "VideoMeasurement")+`", "_id": "m1", "_score": 1, "_source": {"id": "m1"}}]}}}`)
}

// countTracer counts the statements run on its pool.
type countTracer struct{ n atomic.Int64 }

func (c *countTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *countTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func TestAggsStatementCount(t *testing.T) {
	f := newAggFixture(t)
	cfg := testPool(t).Config()
	tr := &countTracer{}
	cfg.ConnConfig.Tracer = tr
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	b := New(pool)
	// Many subjects for one owner: the bucket count grows, the statements do not.
	many, _ := testOwner(t, "aggs-many")
	var docs []map[string]any
	for i := range 60 {
		docs = append(docs, map[string]any{"id": fmt.Sprint("d", i), "type": "VideoMeasurement",
			"created_at":       fmt.Sprintf("2026-11-%02dT10:00:00Z", 1+i%20),
			"study":            map[string]any{"subject": fmt.Sprint("s", i%30)},
			"statistic_values": map[string]any{"bitrate": i * 100}})
	}
	insertDocs(t, many, search.KindMeasurement, docs...)
	req := `{"s": {"terms": {"field": "study.subject", "size": 100}, "aggs": {
		"d": {"date_histogram": {"field": "created_at", "calendar_interval": "day"}, "aggs": {
			"avg": {"avg": {"field": "statistic_values.bitrate"}},
			"p": {"percentiles": {"field": "statistic_values.bitrate"}}}},
		"top": {"top_hits": {"size": 1}}}},
		"total": {"sum": {"field": "statistic_values.bitrate"}}}`
	for _, sc := range []search.Scope{f.scope(), {DataOwnerID: many, Kind: search.KindMeasurement}} {
		tr.n.Store(0)
		if _, err := f.run(t, b, sc, req); err != nil {
			t.Fatal(err)
		}
		// terms, date_histogram (with its metrics), top_hits, top-level sum.
		if n := tr.n.Load(); n != 4 {
			t.Errorf("owner %d: %d statements, want 4", sc.DataOwnerID, n)
		}
	}
}

func TestAggsIsolation(t *testing.T) {
	f := newAggFixture(t)
	got := f.must(t, `{"s": {"terms": {"field": "study.subject", "size": 100}},
		"max": {"max": {"field": "statistic_values.bitrate"}},
		"tags": {"terms": {"field": "tags"}},
		"t": {"top_hits": {"size": 100}}}`)
	raw, _ := json.Marshal(got)
	for _, bad := range []string{"other_subject", "zzz", "1e+06", "1000000", "9e+06", "4320", "r1"} {
		if strings.Contains(string(raw), bad) {
			t.Errorf("another owner's or kind's document shows (%s): %s", bad, raw)
		}
	}
	if n := len(got.(map[string]any)["t"].(map[string]any)["hits"].(map[string]any)["hits"].([]any)); n != 8 {
		t.Errorf("top_hits: %d hits, want 8", n)
	}
	// The other owner sees only its own documents.
	other, err := f.run(t, f.b, search.Scope{DataOwnerID: f.other, Kind: search.KindMeasurement}, `{"s": {"terms": {"field": "study.subject"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, other, `{"s": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [
		{"key": "netflix", "doc_count": 1}, {"key": "other_subject", "doc_count": 1}, {"key": "youtube", "doc_count": 1}]}}`)
}

func TestAggsBadRequests(t *testing.T) {
	f := newAggFixture(t)
	for name, req := range map[string]string{
		"unknown type":         `{"g": {"geohash_grid": {"field": "location"}}}`,
		"two types":            `{"g": {"avg": {"field": "a"}, "sum": {"field": "a"}}}`,
		"no type":              `{"g": {"aggs": {}}}`,
		"not an object":        `{"g": 1}`,
		"terms size":           `{"g": {"terms": {"field": "a", "size": 65537}}}`,
		"terms size 0":         `{"g": {"terms": {"field": "a", "size": 0}}}`,
		"terms no field":       `{"g": {"terms": {"size": 3}}}`,
		"terms script":         `{"g": {"terms": {"script": "doc['a']"}}}`,
		"terms bad param":      `{"g": {"terms": {"field": "a", "include": 7}}}`,
		"order unknown":        `{"g": {"terms": {"field": "a", "order": {"nope": "desc"}}}}`,
		"order direction":      `{"g": {"terms": {"field": "a", "order": {"_count": "up"}}}}`,
		"interval bad":         `{"g": {"date_histogram": {"field": "created_at", "calendar_interval": "3x"}}}`,
		"interval none":        `{"g": {"date_histogram": {"field": "created_at"}}}`,
		"calendar 2d":          `{"g": {"date_histogram": {"field": "created_at", "calendar_interval": "2d"}}}`,
		"fixed month":          `{"g": {"date_histogram": {"field": "created_at", "fixed_interval": "1M"}}}`,
		"time zone":            `{"g": {"date_histogram": {"field": "created_at", "calendar_interval": "day", "time_zone": "Mars/Olympus"}}}`,
		"extended bounds":      `{"g": {"date_histogram": {"field": "created_at", "calendar_interval": "day", "extended_bounds": {"min": 0}}}}`,
		"bounds bad date math": `{"g": {"date_histogram": {"field": "created_at", "calendar_interval": "day", "extended_bounds": {"min": "now-1x", "max": "now"}}}}`,
		"date format":          `{"g": {"date_histogram": {"field": "created_at", "calendar_interval": "day", "format": "yyyy-QQ"}}}`,
		"date format type":     `{"g": {"date_histogram": {"field": "created_at", "calendar_interval": "day", "format": 1}}}`,
		"too deep":             `{"a1": {"filter": {"match_all": {}}, "aggs": {"a2": {"filter": {"match_all": {}}, "aggs": {"a3": {"filter": {"match_all": {}}, "aggs": {"a4": {"filter": {"match_all": {}}, "aggs": {"a5": {"filter": {"match_all": {}}, "aggs": {"a6": {"filter": {"match_all": {}}, "aggs": {"a7": {"filter": {"match_all": {}}, "aggs": {"a8": {"filter": {"match_all": {}}, "aggs": {"a9": {"filter": {"match_all": {}}, "aggs": {"a10": {"filter": {"match_all": {}}, "aggs": {"a11": {"filter": {"match_all": {}}, "aggs": {"a12": {"filter": {"match_all": {}}, "aggs": {"a13": {"filter": {"match_all": {}}, "aggs": {"a14": {"filter": {"match_all": {}}, "aggs": {"a15": {"filter": {"match_all": {}}, "aggs": {"a16": {"filter": {"match_all": {}}, "aggs": {"a17": {"filter": {"match_all": {}}, "aggs": {"a18": {"filter": {"match_all": {}}, "aggs": {"a19": {"filter": {"match_all": {}}, "aggs": {"a20": {"filter": {"match_all": {}}, "aggs": {"a21": {"avg": {"field": "x"}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}`,
		"bounds reversed":      `{"g": {"histogram": {"field": "a", "interval": 1, "hard_bounds": {"min": 5, "max": 1}}}}`,
		"histogram interval":   `{"g": {"histogram": {"field": "statistic_values.bitrate", "interval": 0}}}`,
		"range no ranges":      `{"g": {"range": {"field": "statistic_values.bitrate", "ranges": []}}}`,
		"range bad from":       `{"g": {"range": {"field": "statistic_values.bitrate", "ranges": [{"from": "x"}]}}}`,
		"metric with subs":     `{"g": {"avg": {"field": "a"}, "aggs": {"h": {"max": {"field": "a"}}}}}`,
		"percent 101":          `{"g": {"percentiles": {"field": "a", "percents": [50, 101]}}}`,
		"top_hits size":        `{"g": {"top_hits": {"size": 101}}}`,
		"top_hits sort":        `{"g": {"top_hits": {"sort": [{"a": {"mode": "avg"}}]}}}`,
		"nested unknown":       `{"g": {"terms": {"field": "a"}, "aggs": {"x": {"significant_terms": {"field": "b"}}}}}`,
		"too many fill":        `{"g": {"histogram": {"field": "statistic_values.bitrate", "interval": 0.1}}}`,
		"too many date fill":   `{"g": {"date_histogram": {"field": "created_at", "fixed_interval": "1s"}}}`,
		"too many nested":      `{"g": {"terms": {"field": "study.subject"}, "aggs": {"h": {"histogram": {"field": "statistic_values.bitrate", "interval": 0.1}}}}}`,
		"bad name":             `{"a>b": {"avg": {"field": "a"}}}`,
		"filters empty":        `{"g": {"filters": {"filters": {}}}}`,
		"min_doc_count":        `{"g": {"histogram": {"field": "a", "interval": 1, "min_doc_count": -1}}}`,
		"aggs and aggregation": `{"g": {"terms": {"field": "a"}, "aggs": {}, "aggregations": {}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := f.run(t, f.b, f.scope(), req)
			if !errors.Is(err, search.ErrBadRequest) {
				t.Fatalf("%s: got %v, want a 400", req, err)
			}
		})
	}

}

func TestAggsDocumentDates(t *testing.T) {
	owner, _ := testOwner(t, "aggs-anomalies")
	insertDocs(t, owner, search.KindAnomalyEvent,
		map[string]any{"id": "a1", "created_at": "2026-11-05T00:00:00Z", "severity": "warning", "first_seen_at": "2026-11-01T10:00:00+01:00"},
		map[string]any{"id": "a2", "created_at": "2026-11-05T00:00:00Z", "severity": "critical", "first_seen_at": "2026-11-03T01:00:00Z"},
		map[string]any{"id": "a3", "created_at": "2026-11-05T00:00:00Z", "severity": "warning", "first_seen_at": 1793491200000},
		map[string]any{"id": "a4", "created_at": "2026-11-05T00:00:00Z", "severity": "warning"})
	f := &aggFixture{b: New(testPool(t)), owner: owner}
	got, err := f.run(t, f.b, search.Scope{DataOwnerID: owner, Kind: search.KindAnomalyEvent}, `{
		"d": {"date_histogram": {"field": "first_seen_at", "calendar_interval": "day"},
			"aggs": {"sev": {"terms": {"field": "severity"}}}},
		"last": {"max": {"field": "first_seen_at"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	// first_seen_at: a1 11-01 09:00Z, a3 11-01 00:00Z (epoch ms), a2 11-03 01:00Z; a4 none.
	sev := func(buckets string) string {
		return `{"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [` + buckets + `]}`
	}
	expect(t, got, `{
		"d": {"buckets": [
			{"key": 1793491200000, "key_as_string": "2026-11-01T00:00:00.000Z", "doc_count": 2, "sev": `+sev(`{"key": "warning", "doc_count": 2}`)+`},
			{"key": 1793577600000, "key_as_string": "2026-11-02T00:00:00.000Z", "doc_count": 0, "sev": `+sev(``)+`},
			{"key": 1793664000000, "key_as_string": "2026-11-03T00:00:00.000Z", "doc_count": 1, "sev": `+sev(`{"key": "critical", "doc_count": 1}`)+`}]},
		"last": {"value": 1793667600000}}`)
}

func TestAggsDateHistogramDST(t *testing.T) {
	// Summer time ends in Berlin on 2026-10-25 (03:00 CEST → 02:00 CET): that
	// day has 25 hours, and the empty bucket filled in for it must line up.
	owner, _ := testOwner(t, "aggs-dst")
	insertDocs(t, owner, search.KindMeasurement,
		map[string]any{"id": "d1", "type": "VideoMeasurement", "created_at": "2026-10-24T12:00:00Z"},
		map[string]any{"id": "d2", "type": "VideoMeasurement", "created_at": "2026-10-26T12:00:00Z"},
		map[string]any{"id": "d3", "type": "VideoMeasurement", "created_at": "2026-10-25T23:30:00Z"})
	f := &aggFixture{b: New(testPool(t)), owner: owner}
	got, err := f.run(t, f.b, search.Scope{DataOwnerID: owner, Kind: search.KindMeasurement},
		`{"d": {"date_histogram": {"field": "created_at", "calendar_interval": "day", "time_zone": "Europe/Berlin"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, got, `{"d": {"buckets": [
		{"key": 1792792800000, "key_as_string": "2026-10-24T00:00:00.000+02:00", "doc_count": 1},
		{"key": 1792879200000, "key_as_string": "2026-10-25T00:00:00.000+02:00", "doc_count": 0},
		{"key": 1792969200000, "key_as_string": "2026-10-26T00:00:00.000+01:00", "doc_count": 2}]}}`)
}

func TestAggsBucketLimit(t *testing.T) {
	f := newAggFixture(t)
	req := func(nRanges int) string {
		var rs []string
		for i := range nRanges {
			rs = append(rs, fmt.Sprintf(`{"from": %d, "to": %d}`, i*10, i*10+10))
		}
		return `{"s": {"terms": {"field": "study.subject"}, "aggs": {"r": {"range": {"field": "statistic_values.bitrate", "ranges": [` +
			strings.Join(rs, ",") + `]}}}}}`
	}
	// 4 subjects × 2000 ranges + 4 = 8004 buckets: allowed.
	got, err := f.run(t, f.b, f.scope(), req(2000))
	if err != nil {
		t.Fatalf("8004 buckets: %v", err)
	}
	yt := got.(map[string]any)["s"].(map[string]any)["buckets"].([]any)[0].(map[string]any)
	rb := yt["r"].(map[string]any)["buckets"].([]any)
	if len(rb) != 2000 || rb[100].(map[string]any)["doc_count"].(float64) != 1 || rb[101].(map[string]any)["doc_count"].(float64) != 0 {
		t.Errorf("youtube ranges: %d buckets, [100] %v", len(rb), rb[100])
	}
	// 4 × 16400 + 4 > 65536, Elasticsearch's search.max_buckets.
	if _, err := f.run(t, f.b, f.scope(), req(16400)); !errors.Is(err, search.ErrBadRequest) || !strings.Contains(err.Error(), "too many buckets") {
		t.Fatalf("65604 buckets: %v, want a 400: too many buckets", err)
	}
}

func TestJavaDouble(t *testing.T) {
	for f, want := range map[float64]string{0: "0.0", 10: "10.0", 1.5: "1.5", 99.9: "99.9", -20: "-20.0",
		1e7: "1.0E7", 12345678: "1.2345678E7", 0.0001: "1.0E-4", 0.5: "0.5"} {
		if got := javaDouble(f); got != want {
			t.Errorf("javaDouble(%v) = %q, want %q", f, got, want)
		}
	}
}

// top_hits takes from in every bucket, and version and
// seq_no_primary_term as the search hits do (Elasticsearch's top_hits
// reference: "from", "version", "seq_no_primary_term" are options of the
// hits; rest-api-spec search.aggregation/200_top_hits_metric.yml "top_hits
// aggregation with sequence numbers": _seq_no >= 0, _primary_term >= 1).
func TestAggsTopHitsFromVersion(t *testing.T) {
	f := newAggFixture(t)
	got := f.must(t, `{"s": {"terms": {"field": "study.subject", "size": 1}, "aggs": {
		"next": {"top_hits": {"size": 2, "from": 1, "sort": [{"statistic_values.bitrate": {"order": "desc"}}], "_source": false,
			"version": true, "seq_no_primary_term": true}}}}}`)
	b := got.(map[string]any)["s"].(map[string]any)["buckets"].([]any)[0].(map[string]any)
	th := b["next"].(map[string]any)["hits"].(map[string]any)
	hits := th["hits"].([]any)
	// youtube's bitrates by id: m7 6000, then the next two after from 1.
	if b["key"] != "youtube" || th["total"].(map[string]any)["value"].(float64) != 4 || len(hits) != 2 {
		t.Fatalf("top_hits with from: %v", th)
	}
	for _, h := range hits {
		hit := h.(map[string]any)
		if hit["_id"] == "m7" {
			t.Errorf("from 1 answered the first hit: %v", hits)
		}
		if v, ok := hit["_version"].(float64); !ok || v < 1 || hit["_seq_no"] != hit["_version"] || hit["_primary_term"] != float64(1) {
			t.Errorf("hit %v: want _version, _seq_no and _primary_term 1", hit)
		}
	}
	if _, err := f.run(t, New(testPool(t)), f.scope(), `{"t": {"top_hits": {"version": "yes"}}}`); err == nil ||
		!strings.Contains(err.Error(), "version") {
		t.Fatalf("version \"yes\": %v, want a 400 naming version", err)
	}
}
