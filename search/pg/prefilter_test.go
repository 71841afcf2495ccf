package pg

import (
	"context"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/search"
)

func TestPrefilterOnlyWhereImplied(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want int // containment tests produced
	}{
		{`{"term":{"network.isp":"Telekom"}}`, 1},
		{`{"term":{"network.isp.keyword":{"value":"Telekom"}}}`, 1},
		{`{"term":{"success":true}}`, 1},
		{`{"terms":{"study.subject":["youtube","netflix"]}}`, 1},
		{`{"bool":{"filter":[{"term":{"a":"x"}},{"bool":{"must":{"term":{"b":"y"}}}}],"should":[{"term":{"c":"z"}}]}}`, 2},
		{`{"bool":{"filter":[{"term":{"a":"x"}}],"should":[{"range":{"created_at":{"gte":"now-1d"}}}]}}`, 1},
		{`{"constant_score":{"filter":{"term":{"a":"x"}}}}`, 1},
		{`{"term":{"statistic_values.count":5}}`, 0},   // also matches "5"
		{`{"term":{"statistic_values.count":"5"}}`, 0}, // also matches 5
		{`{"terms":{"a":["x", 5]}}`, 0},                // one number spoils it
		{`{"term":{"a":{"value":"X","case_insensitive":true}}}`, 0},
		{`{"term":{"tags.0":"a"}}`, 0},                    // array index
		{`{"term":{"type":"VideoMeasurement"}}`, 0},       // a column
		{`{"bool":{"should":[{"term":{"a":"x"}}]}}`, 0},   // not implied
		{`{"bool":{"must_not":[{"term":{"a":"x"}}]}}`, 0}, // not implied
		{`{"match":{"a":"x"}}`, 0},
		// Beside a range or column filter the indexes already serve, a
		// containment test is a gamble on how common the value is.
		{`{"bool":{"filter":[{"term":{"a":"x"}},{"range":{"created_at":{"gte":"now-1d"}}}]}}`, 0},
		{`{"bool":{"filter":[{"term":{"a":"x"}},{"term":{"type":"VideoMeasurement"}}]}}`, 0},
		{`{"bool":{"must":[{"terms":{"a":["x"]}}],"filter":{"ids":{"values":["m1"]}}}}`, 0},
	} {
		c := &compiler{a: &args{}}
		got := c.prefilter(mustJSON(t, tc.q))
		if n := strings.Count(got, "@> ANY"); n != tc.want {
			t.Errorf("%s: %d containment tests (%q), want %d", tc.q, n, got, tc.want)
		}
		if n := strings.Count(got, "$"); n != len(c.a.vals) {
			t.Errorf("%s: %d placeholders for %d values", tc.q, n, len(c.a.vals))
		}
	}
}

// TestPrefilterKeepsEveryMatch: the total (counted with the prefilter) is
// the number of hits (found without it), for values stored as scalars, in
// arrays, in arrays of objects and under dotted keys.
func TestPrefilterKeepsEveryMatch(t *testing.T) {
	owner, slug := testOwner(t, "prefilter")
	insertDocs(t, owner, search.KindMeasurement,
		map[string]any{"id": "p1", "network": map[string]any{"isp": "Telekom"}, "tags": []any{"a", "b"}, "ok": true},
		map[string]any{"id": "p2", "network": map[string]any{"isp": []any{"O2", "Telekom"}}, "tags": "a", "ok": false},
		map[string]any{"id": "p3", "network": []any{map[string]any{"isp": "Telekom"}}, "tags": []any{[]any{"a"}}},
		map[string]any{"id": "p4", "network.isp": "Telekom", "tags": []any{"c"}, "ok": "true"},
		map[string]any{"id": "p5", "network": map[string]any{"isp": map[string]any{"name": "Telekom"}}},
		map[string]any{"id": "p6", "network": map[string]any{"isp": "telekom"}, "tags": nil},
	)
	b := New(testPool(t))
	scope := search.Scope{DataOwnerID: owner, Slug: slug, Kind: search.KindMeasurement}
	for _, q := range []string{
		`{"term":{"network.isp":"Telekom"}}`,
		`{"terms":{"network.isp.keyword":["O2","telekom"]}}`,
		`{"term":{"tags":"a"}}`,
		`{"term":{"ok":true}}`,
		`{"bool":{"filter":[{"term":{"tags":"a"}},{"term":{"network.isp":"Telekom"}}]}}`,
	} {
		for _, body := range []map[string]any{
			{"query": mustJSON(t, q), "size": 100, "track_total_hits": true},
			{"query": mustJSON(t, q), "size": 100, "aggs": mustJSON(t, `{"n":{"value_count":{"field":"_id"}}}`)},
			{"query": mustJSON(t, q), "size": 100, "track_total_hits": false,
				"aggs": mustJSON(t, `{"t":{"terms":{"field":"tags"}}}`)},
		} {
			resp, err := b.Search(context.Background(), search.Request{Scope: scope, Body: body})
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			hits := resp["hits"].(map[string]any)
			n := len(hits["hits"].([]any))
			if n == 0 {
				t.Errorf("%s: no hits", q)
			}
			if tot, ok := hits["total"].(map[string]any); ok && tot["value"] != int64(n) {
				t.Errorf("%s: total %v but %d hits", q, tot["value"], n)
			}
			if aggs, ok := resp["aggregations"].(map[string]any); ok {
				if vc, ok := aggs["n"].(map[string]any); ok && vc["value"] != int64(n) {
					t.Errorf("%s: value_count %v but %d hits", q, vc["value"], n)
				}
			}
		}
	}
}
