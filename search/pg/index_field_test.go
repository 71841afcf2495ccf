package pg

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/search"
)

// The virtual field _index: the concrete index name of each document,
// analytics-production-<slug>-measurements-<lower-cased type> on the fixture
// set (testdata/README.md: Video #1–#7, Web #8–#12, Network #13–#19,
// Speedtest #20–#24, Conferencing #25–#27, Gaming #28–#30).

func (f *fixtureSet) index(typ string) string {
	return "analytics-production-" + f.slug + "-measurements-" + typ
}

func TestIndexFieldQueries(t *testing.T) {
	f := getFixtureSet(t)
	q := func(s string) string { return `{"size":100,"query":` + s + `}` }
	video, web, gaming := f.index("videomeasurement"), f.index("webmeasurement"), f.index("gamingmeasurement")
	otherVideo := "analytics-production-" + f.other.Slug + "-measurements-videomeasurement"
	cases := []idCase{
		{"term", q(`{"term":{"_index":"` + video + `"}}`), nums(1, 7)},
		{"term long form", q(`{"term":{"_index":{"value":"` + web + `","boost":2}}}`), nums(8, 12)},
		{"term case_insensitive", q(`{"term":{"_index":{"value":"` + strings.ToUpper(gaming) + `","case_insensitive":true}}}`), nums(28, 30)},
		{"term is case-sensitive", q(`{"term":{"_index":"` + strings.ToUpper(gaming) + `"}}`), nil},
		{"term is exact", q(`{"term":{"_index":"` + strings.TrimSuffix(video, "measurement") + `"}}`), nil},
		{"term on the type name", q(`{"term":{"_index":"VideoMeasurement"}}`), nil},
		{"term on the pattern", q(`{"term":{"_index":"analytics-production-` + f.slug + `-measurements*"}}`), nil},
		{"terms", q(`{"terms":{"_index":["` + web + `","` + gaming + `","nope"]}}`), append(nums(8, 12), 28, 29, 30)},
		{"terms empty", q(`{"terms":{"_index":[]}}`), nil},
		{"prefix all", q(`{"prefix":{"_index":"analytics-production-` + f.slug + `-measurements-"}}`), nums(1, 30)},
		{"prefix type", q(`{"prefix":{"_index":"analytics-production-` + f.slug + `-measurements-s"}}`), nums(20, 24)},
		{"prefix case_insensitive", q(`{"prefix":{"_index":{"value":"ANALYTICS-PRODUCTION-` + strings.ToUpper(f.slug) + `-MEASUREMENTS-C","case_insensitive":true}}}`), nums(25, 27)},
		{"wildcard", q(`{"wildcard":{"_index":"*-network*"}}`), nums(13, 19)},
		{"wildcard ?", q(`{"wildcard":{"_index":{"value":"*conferencing?easurement"}}}`), nums(25, 27)},
		{"wildcard case_insensitive", q(`{"wildcard":{"_index":{"value":"*GAMING*","case_insensitive":true}}}`), nums(28, 30)},
		{"wildcard all", q(`{"wildcard":{"_index":"analytics-production-*"}}`), nums(1, 30)},
		{"exists", q(`{"exists":{"field":"_index"}}`), nums(1, 30)},
		{"bool must_not", q(`{"bool":{"must_not":{"term":{"_index":"` + video + `"}}}}`), nums(8, 30)},
		{"bool filter with a field", q(`{"bool":{"filter":[{"term":{"_index":"` + video + `"}},{"term":{"network.isp":"O2"}}]}}`), []int{3, 6}},
		{"qs field:value", q(`{"query_string":{"query":"_index:` + video + `"}}`), nums(1, 7)},
		{"qs phrase", q(`{"query_string":{"query":"_index:\"` + web + `\""}}`), nums(8, 12)},
		// A keyword field: the words of the name do not match on their own.
		{"qs part of the name", q(`{"query_string":{"query":"_index:videomeasurement"}}`), nil},
		{"qs wildcard", q(`{"query_string":{"query":"_index:*speedtest*"}}`), nums(20, 24)},
		{"qs AND", q(`{"query_string":{"query":"_index:` + video + ` AND study.subject:netflix"}}`), []int{4, 5}},
		{"qs NOT", q(`{"query_string":{"query":"NOT _index:` + video + `"}}`), nums(8, 30)},
		{"qs _exists_", q(`{"query_string":{"query":"_exists_:_index"}}`), nums(1, 30)},
		// Another data owner's index names match nothing, whatever the clause.
		{"term other owner", q(`{"term":{"_index":"` + otherVideo + `"}}`), nil},
		{"terms other owner", q(`{"terms":{"_index":["` + otherVideo + `","` + gaming + `"]}}`), nums(28, 30)},
		{"prefix other owner", q(`{"prefix":{"_index":"analytics-production-` + f.other.Slug + `"}}`), nil},
		{"wildcard other owner", q(`{"wildcard":{"_index":"*` + f.other.Slug + `*"}}`), nil},
		{"qs other owner", q(`{"query_string":{"query":"_index:` + otherVideo + `"}}`), nil},
		{"term another kind", q(`{"term":{"_index":"analytics-production-` + f.slug + `-anomaly_events"}}`), nil},
		// _index.keyword is no sub-field of _index: the document field
		// "_index" (none), as on Elasticsearch.
		{"_index.keyword", q(`{"term":{"_index.keyword":"` + video + `"}}`), nil},
	}
	f.expectIDs(t, cases)

	// The other data owner sees its own index names, never these.
	resp, err := f.search(t, f.other, q(`{"term":{"_index":"`+video+`"}}`))
	if err != nil || len(idsOf(t, resp)) != 0 {
		t.Errorf("the other owner's term on this owner's index: %v %v", idsOf(t, resp), err)
	}
	resp, err = f.search(t, f.other, q(`{"wildcard":{"_index":"analytics-production-*-videomeasurement"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := idsOf(t, resp); len(got) != 7 {
		t.Errorf("the other owner's video measurements: %v", got)
	}
	for _, h := range hitsOf(t, resp) {
		if h["_index"] != otherVideo {
			t.Errorf("the other owner's hit _index %v", h["_index"])
		}
	}

	// Anomaly events have no type: their index is the kind's.
	resp, err = f.search(t, f.anom, `{"query":{"term":{"_index":"analytics-production-`+f.slug+`-anomaly_events"}}}`)
	if err != nil || len(idsOf(t, resp)) != 5 {
		t.Errorf("anomaly events by _index: %v %v", idsOf(t, resp), err)
	}
	resp, err = f.search(t, f.anom, `{"query":{"prefix":{"_index":"analytics-production-`+f.slug+`-anomaly_events-"}}}`)
	if err != nil || len(idsOf(t, resp)) != 0 {
		t.Errorf("anomaly events by a typed prefix: %v %v", idsOf(t, resp), err)
	}

	// A range on _index is refused (as on Elasticsearch), not run.
	for _, b := range []string{
		q(`{"query_string":{"query":"_index:[a TO z]"}}`),
		q(`{"query_string":{"query":"_index:>a"}}`),
		q(`{"range":{"_index":{"gte":"a"}}}`),
	} {
		if _, err := f.search(t, f.scope, b); err == nil || !strings.Contains(err.Error(), "range queries on _index") {
			t.Errorf("%s: %v", b, err)
		}
	}
}

func TestIndexFieldSort(t *testing.T) {
	f := getFixtureSet(t)
	ms := func(s string) int64 {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UnixMilli()
	}
	// _index asc: Conferencing (#25 11-05, #26 11-06, #27 11-07), then Gaming (#28 11-08).
	resp := f.must(t, `{"size":4,"sort":[{"_index":"asc"},{"created_at":"asc"}]}`)
	if got := idsOf(t, resp); !slices.Equal(got, []string{mid(25), mid(26), mid(27), mid(28)}) {
		t.Errorf("_index asc %v", got)
	}
	hs := hitsOf(t, resp)
	if want := []any{f.index("conferencingmeasurement"), ms("2026-11-05T06:12:48.888Z")}; !reflect.DeepEqual(hs[0]["sort"], want) {
		t.Errorf("sort values %v, want %v", hs[0]["sort"], want)
	}
	if hs[3]["_index"] != f.index("gamingmeasurement") || hs[3]["sort"].([]any)[0] != hs[3]["_index"] {
		t.Errorf("hit %v", hs[3])
	}
	// search_after the last conferencing measurement: the Gaming ones.
	after, _ := json.Marshal([]any{f.index("conferencingmeasurement"), ms("2026-11-07T06:38:22.962Z")})
	resp = f.must(t, `{"size":3,"sort":[{"_index":"asc"},{"created_at":"asc"}],"search_after":`+string(after)+`}`)
	if got := idsOf(t, resp); !slices.Equal(got, []string{mid(28), mid(29), mid(30)}) {
		t.Errorf("search_after %v", got)
	}
	// _index desc: Web, newest first (#10 11-10, #9 11-09, #8 11-08).
	for _, b := range []string{
		`{"size":3,"sort":[{"_index":"desc"},{"created_at":"desc"}]}`,
		`{"size":3,"sort":[{"_index":{"order":"desc"}},{"created_at":"desc"}]}`,
		`{"size":3,"sort":"_index:desc,created_at:desc"}`,
	} {
		if got := idsOf(t, f.must(t, b)); !slices.Equal(got, []string{mid(10), mid(9), mid(8)}) {
			t.Errorf("%s: %v", b, got)
		}
	}

	// A scroll sorted by _index then _id walks every type in turn.
	ctx := context.Background()
	first, err := f.b.Search(ctx, search.Request{Scope: f.scope, Scroll: "1m",
		Body: body(t, `{"size":7,"sort":[{"_index":"asc"},{"_id":"asc"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	got := idsOf(t, first)
	id, _ := first["_scroll_id"].(string)
	for range 10 {
		page, err := f.b.ScrollNext(ctx, f.scope.DataOwnerID, id, "")
		if err != nil {
			t.Fatal(err)
		}
		ids := idsOf(t, page)
		if len(ids) == 0 {
			break
		}
		got = append(got, ids...)
	}
	var want []string
	for _, r := range [][2]int{{25, 27}, {28, 30}, {13, 19}, {20, 24}, {1, 7}, {8, 12}} {
		for n := r[0]; n <= r[1]; n++ {
			want = append(want, mid(n))
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("scroll by _index\ngot  %v\nwant %v", got, want)
	}
}

func TestIndexFieldAggregations(t *testing.T) {
	f := getFixtureSet(t)
	ix := f.index
	// Per index: Network 7, Video 7, Speedtest 5, Web 5, Conferencing 3,
	// Gaming 3 (ties by key).
	expect(t, f.aggs(t, "", `{
		"i": {"terms": {"field": "_index"}},
		"asc": {"terms": {"field": "_index", "order": {"_key": "asc"}, "size": 2}},
		"n": {"cardinality": {"field": "_index"}},
		"vc": {"value_count": {"field": "_index"}},
		"none": {"missing": {"field": "_index"}},
		"web": {"filter": {"term": {"_index": "`+ix("webmeasurement")+`"}}},
		"last": {"top_hits": {"size": 1, "_source": false, "sort": [{"_index": "desc"}, {"created_at": "desc"}]}}}`), `{
		"i": `+terms(`{"key": "`+ix("networkmeasurement")+`", "doc_count": 7}, {"key": "`+ix("videomeasurement")+`", "doc_count": 7},
			{"key": "`+ix("speedtestmeasurement")+`", "doc_count": 5}, {"key": "`+ix("webmeasurement")+`", "doc_count": 5},
			{"key": "`+ix("conferencingmeasurement")+`", "doc_count": 3}, {"key": "`+ix("gamingmeasurement")+`", "doc_count": 3}`, 0)+`,
		"asc": `+terms(`{"key": "`+ix("conferencingmeasurement")+`", "doc_count": 3}, {"key": "`+ix("gamingmeasurement")+`", "doc_count": 3}`, 24)+`,
		"n": {"value": 6}, "vc": {"value": 30}, "none": {"doc_count": 0},
		"web": {"doc_count": 5},
		"last": {"hits": {"total": {"value": 30, "relation": "eq"}, "max_score": null, "hits": [
			{"_index": "`+ix("webmeasurement")+`", "_id": "`+mid(10)+`", "_score": null, "sort": ["`+ix("webmeasurement")+`", 1794319053333]}]}}}`)

	// Under a query and nested: Telekom (n mod 3 = 1) per index, then per subject.
	expect(t, f.aggs(t, `{"term":{"network.isp":"Telekom"}}`, `{
		"i": {"terms": {"field": "_index", "size": 3}, "aggs": {"s": {"terms": {"field": "study.subject", "size": 1}}}}}`), `{
		"i": `+terms(`{"key": "`+ix("networkmeasurement")+`", "doc_count": 3, "s": `+terms(`{"key": "dns", "doc_count": 1}`, 2)+`},
			{"key": "`+ix("videomeasurement")+`", "doc_count": 3, "s": `+terms(`{"key": "amazon_trailer", "doc_count": 1}`, 2)+`},
			{"key": "`+ix("conferencingmeasurement")+`", "doc_count": 1, "s": `+terms(`{"key": "googlemeet", "doc_count": 1}`, 0)+`}`, 3)+`}`)

	// min_doc_count 0: the scope's other indices follow with 0, by key.
	expect(t, f.aggs(t, `{"term":{"_index":"`+ix("videomeasurement")+`"}}`, `{"i": {"terms": {"field": "_index", "min_doc_count": 0}}}`), `{
		"i": `+terms(`{"key": "`+ix("videomeasurement")+`", "doc_count": 7},
			{"key": "`+ix("conferencingmeasurement")+`", "doc_count": 0}, {"key": "`+ix("gamingmeasurement")+`", "doc_count": 0},
			{"key": "`+ix("networkmeasurement")+`", "doc_count": 0}, {"key": "`+ix("speedtestmeasurement")+`", "doc_count": 0},
			{"key": "`+ix("webmeasurement")+`", "doc_count": 0}`, 0)+`}`)

	// By _index under a type and over a type-restricted scope.
	resp, err := f.search(t, search.Scope{DataOwnerID: f.scope.DataOwnerID, Slug: f.slug, Kind: search.KindMeasurement,
		Types: []string{"GamingMeasurement", "VideoMeasurement"}}, `{"size":0,"aggs":{"i":{"terms":{"field":"_index"}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, plainJSON(t, resp["aggregations"]), `{"i": `+terms(`{"key": "`+ix("videomeasurement")+`", "doc_count": 7}, {"key": "`+ix("gamingmeasurement")+`", "doc_count": 3}`, 0)+`}`)

	// Anomaly events: one index.
	resp, err = f.search(t, f.anom, `{"size":0,"aggs":{"i":{"terms":{"field":"_index"}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, plainJSON(t, resp["aggregations"]), `{"i": `+terms(`{"key": "analytics-production-`+f.slug+`-anomaly_events", "doc_count": 5}`, 0)+`}`)

	// The other data owner's buckets name its own indices only.
	resp, err = f.search(t, f.other, `{"size":0,"aggs":{"i":{"terms":{"field":"_index","size":100}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range resp["aggregations"].(map[string]any)["i"].(map[string]any)["buckets"].([]any) {
		if k := b.(map[string]any)["key"].(string); !strings.HasPrefix(k, "analytics-production-"+f.other.Slug+"-measurements-") {
			t.Errorf("other owner's bucket %s", k)
		}
	}
}

// plainJSON is v as JSON decoding gives it (float64 numbers).
func plainJSON(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
