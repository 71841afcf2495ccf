package server_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/limits"
)

// The request and response rules of POST /measurements/search (spec
// "Measurements and anomaly events (search)") beyond search_test.go: every
// index_scope, the equivalence of top-level and body paging keys, the
// envelope's parts, bad types of every field, and the 404 of a missing
// report. Expectations come from newSrchWorld: m-video-1 (minute 1),
// m-web-1 (2), m-video-2 (3), m-dns-00 … m-dns-24 (10 … 34).

// srchSorted is the search body sorting by created_at, then _id.
func srchSorted(extra map[string]any) map[string]any {
	body := map[string]any{"query": map[string]any{"match_all": map[string]any{}},
		"sort": []any{map[string]any{"created_at": "asc"}, map[string]any{"_id": "asc"}}}
	for k, v := range extra {
		body[k] = v
	}
	return body
}

// srchSortOf is the sort array of the hit with _id id.
func srchSortOf(t *testing.T, r *apitest.Response, id string) any {
	t.Helper()
	for _, h := range r.Obj(t)["hits"].(map[string]any)["hits"].([]any) {
		if hit := h.(map[string]any); hit["_id"] == id {
			if hit["sort"] == nil {
				t.Fatalf("hit %s has no sort: %s", id, r.Raw)
			}
			return hit["sort"]
		}
	}
	t.Fatalf("no hit %s: %s", id, r.Raw)
	return nil
}

func TestMeasurementSearchIndexScopeEveryType(t *testing.T) {
	w := newSrchWorld(t, "srch-scope")
	w.o.InsertDocuments(t, "measurement",
		srchMeasurement("m-speed-1", w.client, "SpeedtestMeasurement", "ookla", 40, map[string]any{"download": 100}),
		srchMeasurement("m-conf-1", w.client, "ConferencingMeasurement", "googlemeet", 41, map[string]any{"jitter": 3}),
		srchMeasurement("m-game-1", w.client, "GamingMeasurement", "fortnite", 42, map[string]any{"ping": 20}))
	dns := make([]string, w.dnsCount)
	for i := range dns {
		dns[i] = fmt.Sprintf("m-dns-%02d", i)
	}
	want := map[string]string{
		"web":          "m-web-1",
		"video":        "m-video-1,m-video-2",
		"network":      strings.Join(dns, ","),
		"speedtest":    "m-speed-1",
		"conferencing": "m-conf-1",
		"gaming":       "m-game-1", // not the other owner's m-secret (GamingMeasurement too)
	}
	for scope, ids := range want {
		t.Run(scope, func(t *testing.T) {
			got := srchHitIDs(t, w.post(t, "/measurements/search", w.viewer, map[string]any{"body": srchAll, "index_scope": scope}))
			sort.Strings(got)
			if strings.Join(got, ",") != ids {
				t.Errorf("index_scope %s: hits %v, want %s", scope, got, ids)
			}
		})
	}
	for _, bad := range []string{"Video", "measurements", "", "web,video", "*"} {
		t.Run("unknown "+bad, func(t *testing.T) {
			apitest.Want400(t, w.post(t, "/measurements/search", w.o.Key, map[string]any{"body": srchAll, "index_scope": bad}), "index_scope")
		})
	}
}

func TestMeasurementSearchTopLevelPagingEqualsBody(t *testing.T) {
	w := newSrchWorld(t, "srch-page")
	search := func(req map[string]any) []string {
		t.Helper()
		return srchHitIDs(t, w.post(t, "/measurements/search", w.o.Key, req))
	}
	first := w.post(t, "/measurements/search", w.o.Key, map[string]any{"body": srchSorted(nil), "size": 3})
	if got := srchHitIDs(t, first); strings.Join(got, ",") != "m-video-1,m-web-1,m-video-2" {
		t.Fatalf("first page %v", got)
	}
	afterVideo1, afterWeb1 := srchSortOf(t, first, "m-video-1"), srchSortOf(t, first, "m-web-1")

	cases := []struct {
		name string
		req  map[string]any
		want string
	}{
		{"size and from in body", map[string]any{"body": srchSorted(map[string]any{"size": 2, "from": 1})}, "m-web-1,m-video-2"},
		{"size and from top-level", map[string]any{"body": srchSorted(nil), "size": 2, "from": 1}, "m-web-1,m-video-2"},
		{"top-level size wins", map[string]any{"body": srchSorted(map[string]any{"size": 7}), "size": 1}, "m-video-1"},
		{"top-level from wins", map[string]any{"body": srchSorted(map[string]any{"size": 1, "from": 5}), "from": 2}, "m-video-2"},
		{"search_after in body", map[string]any{"body": srchSorted(map[string]any{"size": 2, "search_after": afterWeb1})}, "m-video-2,m-dns-00"},
		{"search_after top-level", map[string]any{"body": srchSorted(map[string]any{"size": 2}), "search_after": afterWeb1}, "m-video-2,m-dns-00"},
		{"top-level search_after wins", map[string]any{"body": srchSorted(map[string]any{"size": 2, "search_after": afterVideo1}),
			"search_after": afterWeb1}, "m-video-2,m-dns-00"},
		{"null top-level keys leave the body's", map[string]any{"body": srchSorted(map[string]any{"size": 1, "from": 1}),
			"size": nil, "from": nil, "search_after": nil}, "m-web-1"},
		{"size 0 answers no hits", map[string]any{"body": srchSorted(nil), "size": 0}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := search(c.req); strings.Join(got, ",") != c.want {
				t.Errorf("hits %v, want %s", got, c.want)
			}
		})
	}
	t.Run("integral numbers written as 1e1 or 2.0", func(t *testing.T) {
		r := w.post(t, "/measurements/search", w.o.Key, `{"body": {"query": {"match_all": {}}, "size": 1e1}}`)
		if got := srchHitIDs(t, r); len(got) != 10 {
			t.Errorf("size 1e1: %d hits", len(got))
		}
		r = w.post(t, "/measurements/search", w.o.Key, `{"body": {"query": {"match_all": {}}, "size": 2.0, "from": 1.0}}`)
		if got := srchHitIDs(t, r); len(got) != 2 {
			t.Errorf("size 2.0: %d hits", len(got))
		}
	})
}

func TestMeasurementSearchEnvelopeParts(t *testing.T) {
	w := newSrchWorld(t, "srch-parts")
	body := map[string]any{"query": map[string]any{"match_all": map[string]any{}}, "size": 1,
		"sort": []any{map[string]any{"created_at": "desc"}},
		"aggs": map[string]any{"types": map[string]any{"terms": map[string]any{"field": "type"}}}}
	r := w.post(t, "/measurements/search", w.viewer, map[string]any{"body": body})
	if ids := srchHitIDs(t, r); strings.Join(ids, ",") != "m-dns-24" {
		t.Fatalf("newest hit %v, want m-dns-24", ids)
	}
	env := r.Obj(t)
	if _, ok := env["took"].(interface{ Int64() (int64, error) }); !ok {
		t.Errorf("took %v is not a number", env["took"])
	}
	if env["timed_out"] != false {
		t.Errorf("timed_out = %v", env["timed_out"])
	}
	shards, _ := env["_shards"].(map[string]any)
	for _, k := range []string{"total", "successful", "failed"} {
		if _, ok := shards[k]; !ok {
			t.Errorf("_shards lacks %s: %v", k, env["_shards"])
		}
	}
	hits := env["hits"].(map[string]any)
	if _, ok := hits["max_score"]; !ok {
		t.Errorf("hits lacks max_score: %s", r.Raw)
	}
	if total, _ := hits["total"].(map[string]any); fmt.Sprint(total["value"]) != "28" || total["relation"] != "eq" {
		t.Errorf("hits.total = %v, want 28 eq", hits["total"])
	}
	hit := hits["hits"].([]any)[0].(map[string]any)
	if s, _ := hit["sort"].([]any); len(s) != 1 {
		t.Errorf("hit sort = %v, want one value", hit["sort"])
	}
	if src, _ := hit["_source"].(map[string]any); src["id"] != "m-dns-24" || src["type"] != "NetworkMeasurement" {
		t.Errorf("_source = %v", hit["_source"])
	}
	if idx, _ := hit["_index"].(string); !strings.HasPrefix(idx, "analytics-production-"+w.o.Slug+"-") {
		t.Errorf("_index %q is not the owner's", idx)
	}
	aggs, _ := env["aggregations"].(map[string]any)
	buckets := map[string]string{}
	for _, b := range aggs["types"].(map[string]any)["buckets"].([]any) {
		bk := b.(map[string]any)
		buckets[fmt.Sprint(bk["key"])] = fmt.Sprint(bk["doc_count"])
	}
	if fmt.Sprint(buckets) != "map[NetworkMeasurement:25 VideoMeasurement:2 WebMeasurement:1]" {
		t.Errorf("type buckets %v", buckets)
	}
	if _, ok := env["_scroll_id"]; ok {
		t.Errorf("_scroll_id without scroll")
	}

	t.Run("anomaly event search has the same envelope", func(t *testing.T) {
		r := w.post(t, "/anomaly_events/search", w.viewer, map[string]any{"body": srchAll})
		srchHitIDs(t, r)
		if _, ok := r.Obj(t)["aggregations"]; ok {
			t.Errorf("aggregations without aggs: %s", r.Raw)
		}
	})
}

func TestMeasurementSearchBadFieldTypes(t *testing.T) {
	w := newSrchWorld(t, "srch-types")
	cases := []struct {
		name    string
		body    any
		mention string
	}{
		{"no request body", "", "body"},
		{"request body an array", `[{"body": {}}]`, "object"},
		{"body null", map[string]any{"body": nil}, "body"},
		{"body a JSON string holding an array", map[string]any{"body": `[1, 2]`}, "body"},
		{"body a JSON string holding a string", map[string]any{"body": `"match_all"`}, "body"},
		{"body a JSON string holding two objects", map[string]any{"body": `{} {}`}, "body"},
		{"body an array", map[string]any{"body": []any{srchAll}}, "body"},
		{"body true", map[string]any{"body": true}, "body"},
		{"size a float", map[string]any{"body": srchAll, "size": 1.5}, "size"},
		{"size negative", map[string]any{"body": srchAll, "size": -1}, "size"},
		{"size in body not a number", map[string]any{"body": map[string]any{"size": "five"}}, "size"}, // "5" is 5, as on Elasticsearch (compat_test.go)
		{"size in body a float", map[string]any{"body": map[string]any{"size": 2.5}}, "size"},
		{"from a string not a number", map[string]any{"body": srchAll, "from": "one"}, "from"},
		{"from in body negative", map[string]any{"body": map[string]any{"from": -3}}, "from"},
		{"from + size over 10000", map[string]any{"body": srchAll, "size": 5000, "from": 5001}, "10000"},
		{"search_after an object", map[string]any{"body": srchAll, "search_after": map[string]any{"a": 1}}, "search_after"},
		{"search_after in body a number", map[string]any{"body": map[string]any{"search_after": 5}}, "search_after"},
		{"source_only a string", map[string]any{"body": srchAll, "source_only": "yes"}, "source_only"},
		{"index_scope a number", map[string]any{"body": srchAll, "index_scope": 1}, "index_scope"},
		{"scroll a number", map[string]any{"body": srchAll, "scroll": 60}, "scroll"},
		{"scroll 0s", map[string]any{"body": srchAll, "scroll": "0s"}, "scroll"},
		{"scroll with size 0", map[string]any{"body": srchAll, "size": 0, "scroll": "1m"}, "size"},
		{"scroll with from", map[string]any{"body": srchAll, "from": 5, "scroll": "1m"}, "from"},
		{"scroll with search_after", map[string]any{"body": srchSorted(nil), "search_after": []any{1}, "scroll": "1m"}, "search_after"},
		{"two unknown properties", map[string]any{"body": srchAll, "query": map[string]any{}, "sort": []any{}}, "not a known field"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			apitest.Want400(t, w.post(t, "/measurements/search", w.o.Key, c.body), c.mention)
		})
	}
	anomaly := []struct {
		name    string
		body    any
		mention string
	}{
		{"anomaly search: body missing", map[string]any{"size": 1}, "body"},
		{"anomaly search: unknown property", map[string]any{"body": srchAll, "indices": "x"}, "indices"},
		{"anomaly search: body a string holding an array", map[string]any{"body": `[]`}, "body"},
		{"anomaly search: size over the maximum", map[string]any{"body": map[string]any{"size": 10001}}, "size"},
	}
	for _, c := range anomaly {
		t.Run(c.name, func(t *testing.T) {
			apitest.Want400(t, w.post(t, "/anomaly_events/search", w.o.Key, c.body), c.mention)
		})
	}
}

func TestMeasurementReportMissing(t *testing.T) {
	w := newSrchWorld(t, "srch-norep")
	reports := map[string]string{"p1203_client_report": "P1203ClientReport", "network_performance_report": "PerformanceClientReport",
		"lightweight_video_player_performance_report": "LightweightVideoPlayerPerformanceReport"}
	for path, typ := range reports {
		t.Run(path, func(t *testing.T) {
			// m-web-1 exists but has no client report at all; m-video-1's
			// IcmpPingClientReport is none of the three.
			r := w.e.Admin(t, http.MethodGet, "/measurements/m-web-1/"+path, w.viewer, nil)
			msg, _ := r.Obj(t)["message"].(string)
			if r.Status != http.StatusNotFound || msg != "Measurement m-web-1 has no "+typ {
				t.Errorf("missing report: %d %s", r.Status, r.Raw)
			}
			// An unknown measurement and another owner's say only "Not found".
			for _, id := range []string{"nope", "m-secret"} {
				r := w.e.Admin(t, http.MethodGet, "/measurements/"+id+"/"+path, w.o.Key, nil)
				if msg, _ := r.Obj(t)["message"].(string); r.Status != http.StatusNotFound || msg != "Not found" {
					t.Errorf("%s: %d %s", id, r.Status, r.Raw)
				}
			}
		})
	}
	g := w.e.GraphQL(t, w.o.Key, `{ measurementDocument(id: "m-web-1", report: P1203ClientReport) }`, nil)
	if g.Code() != "NOT_FOUND" || g.Errors[0].Message != "Measurement m-web-1 has no P1203ClientReport" {
		t.Errorf("graphql missing report: %s", g.Raw)
	}
	g = w.e.GraphQL(t, w.o.Key, `{ measurement(id: "m-web-1") { p1203ClientReport reports { id } } }`, nil)
	if m, _ := g.Data["measurement"].(map[string]any); len(g.Errors) > 0 || m["p1203ClientReport"] != nil || len(m["reports"].([]any)) != 0 {
		t.Errorf("graphql measurement without reports: %s", g.Raw)
	}
}

func TestSearchGraphQLRules(t *testing.T) {
	w := newAnomWorld(t, "srch-gql")
	refused := map[string]string{
		"scroll with sourceOnly loses the scroll id": `{ measurementSearch(body: {}, scroll: "1m", sourceOnly: true) }`,
		"export scroll with sourceOnly":              `{ exportSearch(body: {}, scroll: "1m", sourceOnly: true) }`,
		"body a string holding an array":             `{ measurementSearch(body: "[1]") }`,
		"unknown indexScope":                         `{ measurementSearch(body: {}, indexScope: "radio") }`,
		"size over the maximum":                      `{ anomalyEventSearch(body: {size: 10001}) }`,
		"from + size over the maximum":               `{ anomalyEventSearch(body: {}, size: 10000, from: 1) }`,
		"unsupported clause":                         `{ anomalyEventSearch(body: {query: {no_such_query: {}}}) }`,
	}
	for name, q := range refused {
		t.Run(name, func(t *testing.T) {
			if g := w.e.GraphQL(t, w.viewer, q, nil); g.Code() != "BAD_REQUEST" {
				t.Errorf("%s", g.Raw)
			}
		})
	}
	g := w.e.GraphQL(t, w.viewer, `{ a: measurementSearch(body: {size: 5}, size: 2, indexScope: "network", sourceOnly: true)
		b: anomalyEventSearch(body: "{\"query\": {\"term\": {\"status\": \"new\"}}}", sourceOnly: true) }`, nil)
	a, _ := g.Data["a"].([]any)
	b, _ := g.Data["b"].([]any)
	if len(g.Errors) > 0 || len(a) != 2 || len(b) != 2 {
		t.Errorf("graphql searches: %s", g.Raw)
	}
	g = w.e.GraphQL(t, w.editor, `mutation($ids: [String!]!) { anomalyEventsResolve(anomalyIds: $ids) { updated requested } }`,
		map[string]any{"ids": []string{w.newA, w.newA, w.foreign}})
	if len(g.Errors) > 0 || fmt.Sprint(g.Data["anomalyEventsResolve"]) != "map[requested:2 updated:1]" {
		t.Errorf("graphql resolve with a repeat: %s", g.Raw)
	}
}

// A data owner at its limit of open scrolls gets 429 on both APIs and in
// GraphQL; once a scroll is read to its end (as the NDJSON stream does),
// its place is free again.
func TestSearchScrollLimit(t *testing.T) {
	w := newSrchWorld(t, "srch-scrollcap")
	ctx := context.Background()
	if _, err := w.e.Store.Pool().Exec(ctx, `INSERT INTO search_scrolls (id, data_owner_id, state, expires_at)
		SELECT 'capfill-' || $1::bigint || '-' || g, $1, '{}', now() + interval '5 minutes' FROM generate_series(1, $2) g`,
		w.o.ID, limits.MaxOpenScrolls); err != nil {
		t.Fatal(err)
	}
	r := w.e.Admin(t, http.MethodPost, "/measurements/search", w.viewer, map[string]any{"body": map[string]any{"size": 5}, "scroll": "1m"})
	if r.Status != http.StatusTooManyRequests || !strings.Contains(string(r.Raw), "500 open scrolls") {
		t.Fatalf("admin scroll at the limit: %d %s", r.Status, r.Raw)
	}
	g := w.e.GraphQL(t, w.viewer, `{ measurementSearch(body: {size: 5}, scroll: "1m") }`, nil)
	if g.Code() != "TOO_MANY_REQUESTS" {
		t.Fatalf("graphql scroll at the limit: %s", g.Raw)
	}
	if r := w.e.Admin(t, http.MethodPost, "/measurements/search", w.viewer, map[string]any{"body": map[string]any{"size": 5}}); r.Status != http.StatusOK {
		t.Fatalf("a search without scroll: %d %s", r.Status, r.Raw)
	}
	// The other data owner is not held back, and its stream clears its scroll.
	otherViewer := w.other.Key
	for i := 0; i < 3; i++ {
		r := w.e.Admin(t, http.MethodPost, "/measurements/search", otherViewer, map[string]any{"body": map[string]any{"size": 1}, "scroll": "1m"})
		if r.Status != http.StatusOK || strings.Count(string(r.Raw), "\n") != 1 {
			t.Fatalf("other owner's stream: %d %q", r.Status, r.Raw)
		}
	}
	var left int
	if err := w.e.Store.Pool().QueryRow(ctx, "SELECT count(*) FROM search_scrolls WHERE data_owner_id = $1", w.other.ID).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Fatalf("%d scrolls left open after streams read to their end", left)
	}
}

// Each search field counts limits.SearchComplexity against the operation's
// complexity limit, so one operation runs at most 10 searches, aliases
// included.
func TestSearchFieldsComplexity(t *testing.T) {
	w := newSrchWorld(t, "srch-cplx")
	ops := func(n int, field string) string {
		var b strings.Builder
		b.WriteString("{")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, " s%d: %s", i, field)
		}
		return b.String() + " }"
	}
	for _, field := range []string{`measurementSearch(body: {size: 1})`, `anomalyEventSearch(body: {size: 1})`,
		`exportSearch(body: {size: 1})`, `exportEsql(query: "FROM analytics-production-` + w.o.Slug + `* | LIMIT 1")`} {
		if g := w.e.GraphQL(t, w.viewer, ops(limits.Complexity/limits.SearchComplexity, field), nil); len(g.Errors) > 0 {
			t.Errorf("%d × %s: %s", limits.Complexity/limits.SearchComplexity, field, g.Raw)
		}
		g := w.e.GraphQL(t, w.viewer, ops(limits.Complexity/limits.SearchComplexity+1, field), nil)
		if g.Code() != "COMPLEXITY_LIMIT_EXCEEDED" || g.Data != nil {
			t.Errorf("%d × %s: %s", limits.Complexity/limits.SearchComplexity+1, field, g.Raw)
		}
	}
}
