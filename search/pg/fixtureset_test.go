package pg

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/search"
)

// The testdata/ fixture set (testdata/README.md) loaded into one data owner:
// every expectation below is computed by hand from the README's tables.
// Measurement #n: client C((n-1) mod 6 + 1), day 2026-11-((n-1) mod 10 + 1),
// odd n at 06:xx UTC and even n at 13:xx UTC (the table's times), network.isp
// Telekom / Vodafone / O2 for n mod 3 = 1 / 2 / 0; Speedtest download
// 94.2 − 7.5k with k = (n-1) mod 5: #20 64.2, #21 94.2, #22 86.7, #23 79.2,
// #24 71.7.

type fixtureSet struct {
	b     *Backend
	scope search.Scope // measurements
	anom  search.Scope // anomaly events
	slug  string
	other search.Scope // another data owner's measurements (the same documents)
}

var (
	fsOnce sync.Once
	fsFix  *fixtureSet
)

func loadNDJSON(t *testing.T, name string) []map[string]any {
	t.Helper()
	f, err := os.Open("../../testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var docs []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var d map[string]any
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		docs = append(docs, d)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return docs
}

func getFixtureSet(t *testing.T) *fixtureSet {
	t.Helper()
	fsOnce.Do(func() {
		id, slug := testOwner(t, "fixset")
		ms := loadNDJSON(t, "measurements.ndjson")
		if len(ms) != 30 {
			t.Fatalf("measurements.ndjson: %d documents, want 30", len(ms))
		}
		insertDocs(t, id, search.KindMeasurement, ms...)
		insertDocs(t, id, search.KindAnomalyEvent, loadNDJSON(t, "anomaly_events.ndjson")...)
		// Another data owner holding the same documents: never seen.
		other, otherSlug := testOwner(t, "fixset_other")
		insertDocs(t, other, search.KindMeasurement, ms...)
		fsFix = &fixtureSet{
			b:     New(testPool(t)),
			scope: search.Scope{DataOwnerID: id, Slug: slug, Kind: search.KindMeasurement},
			anom:  search.Scope{DataOwnerID: id, Slug: slug, Kind: search.KindAnomalyEvent},
			slug:  slug,
			other: search.Scope{DataOwnerID: other, Slug: otherSlug, Kind: search.KindMeasurement},
		}
	})
	if fsFix == nil {
		t.Fatal("fixture set not loaded")
	}
	return fsFix
}

// mid is the id of measurement #n.
func mid(n int) string { return fmt.Sprintf("6a1f0c00-2026-4b11-8000-0000000000%02d", n) }

func mids(ns ...int) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = mid(n)
	}
	slices.Sort(out)
	return out
}

func nums(from, to int) []int {
	var out []int
	for n := from; n <= to; n++ {
		out = append(out, n)
	}
	return out
}

func (f *fixtureSet) search(t *testing.T, scope search.Scope, b string) (search.Response, error) {
	t.Helper()
	return f.b.Search(context.Background(), search.Request{Scope: scope, Body: body(t, b)})
}

func (f *fixtureSet) must(t *testing.T, b string) search.Response {
	t.Helper()
	resp, err := f.search(t, f.scope, b)
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return resp
}

// idCase is a search body and the fixture measurements (#n) it finds.
type idCase struct {
	name string
	body string
	want []int
}

// expectIDs runs each case as a subtest: its hits are exactly the wanted
// measurements, and its total counts them exactly.
func (f *fixtureSet) expectIDs(t *testing.T, cases []idCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := f.must(t, tc.body)
			got := idsOf(t, resp)
			slices.Sort(got)
			if want := mids(tc.want...); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Errorf("got %v\nwant %v", got, want)
			}
			total := resp["hits"].(map[string]any)["total"]
			if want := map[string]any{"value": int64(len(tc.want)), "relation": "eq"}; !reflect.DeepEqual(total, want) {
				t.Errorf("total %v, want %v", total, want)
			}
		})
	}
}

// TestFixtureSetQueries runs every supported query clause over the 30
// measurements; ids are compared as sets, totals exactly.
func TestFixtureSetQueries(t *testing.T) {
	f := getFixtureSet(t)
	q := func(s string) string { return `{"size":100,"query":` + s + `}` }
	cases := []idCase{
		{"match_all", q(`{"match_all":{}}`), nums(1, 30)},
		{"match", q(`{"match":{"study.subject":"youtube"}}`), []int{1, 2, 3}},
		// study_id tokens: yt-1080p-default → yt 1080p default.
		{"match or", q(`{"match":{"study.study_id":"default nperf"}}`), []int{1, 2, 3, 4, 5, 24}},
		{"match operator and", q(`{"match":{"study.study_id":{"query":"nflx default","operator":"and"}}}`), []int{4, 5}},
		{"match operator and missing token", q(`{"match":{"study.study_id":{"query":"nflx trailer","operator":"AND"}}}`), nil},
		{"match msm 2 of 3", q(`{"match":{"study.study_id":{"query":"yt default trailer","minimum_should_match":2}}}`), []int{1, 2, 3}},
		{"match msm 100%", q(`{"match":{"study.study_id":{"query":"yt default trailer","minimum_should_match":"100%"}}}`), nil},
		{"match msm -1", q(`{"match":{"study.study_id":{"query":"yt default trailer","minimum_should_match":"-1"}}}`), []int{1, 2, 3}},
		{"match zero terms none", q(`{"match":{"study.subject":"--"}}`), nil},
		{"match zero terms all", q(`{"match":{"study.subject":{"query":"--","zero_terms_query":"all"}}}`), nums(1, 30)},
		{"match number", q(`{"match":{"statistic_values.download":86.7}}`), []int{22}},
		{"match_phrase", q(`{"match_phrase":{"study.study_id":"1080p default"}}`), []int{1, 2, 3}},
		{"match_phrase order", q(`{"match_phrase":{"study.study_id":"default 1080p"}}`), nil},
		{"match_phrase whole words", q(`{"match_phrase":{"study.study_id":"top1"}}`), nil},
		{"match_phrase_prefix", q(`{"match_phrase_prefix":{"study.study_id":"web top1"}}`), []int{8, 9, 10}},
		{"multi_match", q(`{"multi_match":{"query":"netflix Vodafone","fields":["study.subject","network.isp"]}}`),
			[]int{2, 4, 5, 8, 11, 14, 17, 20, 23, 26, 29}},
		{"multi_match and per field", q(`{"multi_match":{"query":"netflix Vodafone","operator":"and","fields":["study.subject","network.isp"]}}`), nil},
		{"multi_match cross_fields and", q(`{"multi_match":{"query":"netflix Vodafone","type":"cross_fields","operator":"and","fields":["study.subject","network.isp"]}}`), []int{5}},
		{"multi_match phrase", q(`{"multi_match":{"query":"ookla nearest","type":"phrase","fields":["study.study_id","study.subject"]}}`), []int{21, 22}},
		{"term column", q(`{"term":{"type":"GamingMeasurement"}}`), []int{28, 29, 30}},
		{"term keyword", q(`{"term":{"study.subject.keyword":"geforce_now"}}`), []int{28, 29}},
		{"term long form", q(`{"term":{"network.isp":{"value":"O2","boost":2}}}`), []int{3, 6, 9, 12, 15, 18, 21, 24, 27, 30}},
		{"term bool", q(`{"term":{"success":false}}`), []int{18}},
		{"term nested object", q(`{"term":{"error.code":"TIMEOUT"}}`), []int{18}},
		{"term client_uuid", q(`{"term":{"client_uuid":"5abe8b6d-c29f-4b7a-8da6-6f7a8b9cad06"}}`), []int{6, 12, 18, 24, 30}},
		{"terms", q(`{"terms":{"study.subject":["dns","ookla","fastcom","nope"]}}`), []int{13, 14, 20, 21, 22}},
		{"terms keyword", q(`{"terms":{"study.subject.keyword":["xbox_cloud","nperf"]}}`), []int{24, 30}},
		{"range gte", q(`{"range":{"statistic_values.download":{"gte":80}}}`), []int{21, 22}},
		{"range gt lt", q(`{"range":{"statistic_values.download":{"gt":71.7,"lt":94.2}}}`), []int{22, 23}},
		{"range lte", q(`{"range":{"statistic_values.download":{"lte":71.7}}}`), []int{20, 24}},
		{"range dates", q(`{"range":{"created_at":{"gte":"2026-11-03","lt":"2026-11-04"}}}`), []int{3, 13, 23}},
		{"range date lte rounds up", q(`{"range":{"created_at":{"gte":"2026-11-02","lte":"2026-11-02"}}}`), []int{2, 12, 22}},
		{"range date gt rounds up", q(`{"range":{"created_at":{"gt":"2026-11-09"}}}`), []int{10, 20, 30}},
		{"range anchor math", q(`{"range":{"created_at":{"gte":"2026-11-03||+1d","lt":"2026-11-03||+2d"}}}`), []int{4, 14, 24}},
		{"range anchor rounding", q(`{"range":{"created_at":{"gt":"2026-11-03T10:00:00Z||/d","lte":"2026-11-04||/d"}}}`), []int{4, 14, 24}},
		{"range time_zone", q(`{"range":{"created_at":{"gte":"2026-11-03T08:30:00","lt":"2026-11-03T09:00:00","time_zone":"+02:00"}}}`), []int{13, 23}},
		{"range format pattern", q(`{"range":{"created_at":{"gte":"03/11/2026","lte":"03/11/2026","format":"dd/MM/yyyy"}}}`), []int{3, 13, 23}},
		{"range format epoch_millis", q(`{"range":{"created_at":{"gte":1793664000000,"lt":1793750400000,"format":"epoch_millis"}}}`), []int{3, 13, 23}},
		{"range format epoch_second", q(`{"range":{"created_at":{"gte":"1793664000","lt":"1793750400","format":"epoch_second"}}}`), []int{3, 13, 23}},
		{"range date and time", q(`{"range":{"created_at":{"gte":"2026-11-10T13:10:00Z"}}}`), []int{10, 30}},
		{"exists", q(`{"exists":{"field":"error"}}`), []int{18}},
		{"exists leaf", q(`{"exists":{"field":"statistic_values.page_load_time"}}`), []int{8, 9, 10}},
		{"prefix", q(`{"prefix":{"study.subject":"goo"}}`), []int{25, 26}},
		{"prefix keyword", q(`{"prefix":{"study.study_id.keyword":{"value":"ookla"}}}`), []int{21, 22}},
		{"wildcard", q(`{"wildcard":{"study.subject":"*_*"}}`), []int{6, 7, 28, 29, 30}},
		{"wildcard long form", q(`{"wildcard":{"study.subject":{"value":"*PING","case_insensitive":true}}}`), []int{17, 18}},
		{"ids", q(`{"ids":{"values":["` + mid(5) + `","` + mid(17) + `","nope"]}}`), []int{5, 17}},
		{"bool", q(`{"bool":{"must":{"term":{"type":"NetworkMeasurement"}},"filter":[{"term":{"network.isp":"Telekom"}}],
			"must_not":[{"term":{"study.subject":"tlsmeter"}}]}}`), []int{13, 16}},
		{"bool should only", q(`{"bool":{"should":[{"term":{"study.subject":"dns"}},{"term":{"study.subject":"nperf"}}]}}`), []int{13, 14, 24}},
		{"bool should optional beside filter", q(`{"bool":{"filter":{"term":{"type":"SpeedtestMeasurement"}},"should":{"term":{"study.subject":"dns"}}}}`), nums(20, 24)},
		{"bool should msm 0 still one", q(`{"bool":{"should":[{"term":{"study.subject":"dns"}},{"term":{"study.subject":"nperf"}}],"minimum_should_match":0}}`), []int{13, 14, 24}},
		{"bool should with must_not", q(`{"bool":{"should":{"term":{"study.subject":"dns"}},"must_not":{"term":{"network.isp":"Telekom"}}}}`), []int{14}},
		{"bool msm 2", q(`{"bool":{"should":[{"term":{"type":"VideoMeasurement"}},{"term":{"network.isp":"Telekom"}},{"term":{"study.subject":"netflix"}}],"minimum_should_match":2}}`), []int{1, 4, 5, 7}},
		{"bool msm 67%", q(`{"bool":{"should":[{"term":{"type":"VideoMeasurement"}},{"term":{"network.isp":"Telekom"}},{"term":{"study.subject":"netflix"}}],"minimum_should_match":"67%"}}`), []int{1, 4, 5, 7}},
		{"bool msm -34%", q(`{"bool":{"should":[{"term":{"type":"VideoMeasurement"}},{"term":{"network.isp":"Telekom"}},{"term":{"study.subject":"netflix"}}],"minimum_should_match":"-34%"}}`), []int{1, 4, 5, 7}},
		// -25% of 3 optional clauses: 0.75 rounds down to 0 that may be missing.
		{"bool msm -25%", q(`{"bool":{"should":[{"term":{"type":"VideoMeasurement"}},{"term":{"network.isp":"Telekom"}},{"term":{"study.subject":"netflix"}}],"minimum_should_match":"-25%"}}`), []int{4}},
		{"bool msm conditional", q(`{"bool":{"should":[{"term":{"type":"VideoMeasurement"}},{"term":{"network.isp":"Telekom"}},{"term":{"study.subject":"netflix"}}],"minimum_should_match":"2<-1"}}`), []int{1, 4, 5, 7}},
		{"bool msm conditional below bound", q(`{"bool":{"should":[{"term":{"type":"VideoMeasurement"}},{"term":{"network.isp":"Telekom"}},{"term":{"study.subject":"netflix"}}],"minimum_should_match":"3<1"}}`), []int{4}},
		{"bool msm above count", q(`{"bool":{"should":[{"term":{"type":"VideoMeasurement"}}],"minimum_should_match":2}}`), nil},
		{"qs field:value", q(`{"query_string":{"query":"study.subject:youtube"}}`), []int{1, 2, 3}},
		{"qs AND", q(`{"query_string":{"query":"type:WebMeasurement AND network.isp:O2"}}`), []int{9, 12}},
		{"qs OR", q(`{"query_string":{"query":"study.subject:dns OR study.subject:nperf"}}`), []int{13, 14, 24}},
		{"qs AND then OR", q(`{"query_string":{"query":"type:GamingMeasurement AND network.isp:O2 OR study.subject:dns"}}`), []int{30}},
		{"qs NOT", q(`{"query_string":{"query":"type:GamingMeasurement AND NOT study.subject:xbox_cloud"}}`), []int{28, 29}},
		{"qs phrase", q(`{"query_string":{"query":"study.study_id:\"1080p default\""}}`), []int{1, 2, 3}},
		{"qs inclusive range", q(`{"query_string":{"query":"statistic_values.download:[79.2 TO 86.7]"}}`), []int{22, 23}},
		{"qs exclusive range", q(`{"query_string":{"query":"statistic_values.download:{79.2 TO 86.7}"}}`), nil},
		{"qs comparison", q(`{"query_string":{"query":"statistic_values.download:>=86.7"}}`), []int{21, 22}},
		{"qs date range", q(`{"query_string":{"query":"created_at:[2026-11-10 TO 2026-11-10]"}}`), []int{10, 20, 30}},
		{"qs default_field", q(`{"query_string":{"query":"netflix OR dns","default_field":"study.subject"}}`), []int{4, 5, 13, 14}},
		{"qs wildcard", q(`{"query_string":{"query":"study.subject:geforce*"}}`), []int{28, 29}},
		{"qs keyword", q(`{"query_string":{"query":"study.subject.keyword:xbox_cloud"}}`), []int{30}},
		{"qs all fields", q(`{"query_string":{"query":"TIMEOUT"}}`), []int{18}},
	}
	f.expectIDs(t, cases)
}

// #10 was measured at 2026-11-10T13:57:33.333Z.
const ms10 = int64(1794319053333)

func TestFixtureSetSortPagingSource(t *testing.T) {
	f := getFixtureSet(t)
	ordered := []struct {
		name string
		body string
		want []int
	}{
		// Day 10: #10 13:57:33, #30 13:17:13, #20 13:07:23.
		{"created_at desc", `{"size":3,"sort":[{"created_at":"desc"}]}`, []int{10, 30, 20}},
		{"string form", `{"size":3,"sort":"created_at:desc"}`, []int{10, 30, 20}},
		{"several keys", `{"size":4,"sort":[{"type":"asc"},{"created_at":{"order":"asc"}}]}`, []int{25, 26, 27, 28}},
		// Downloads: #21 94.2, #22 86.7, #23 79.2, #24 71.7, #20 64.2; the
		// rest have none and come last (then in row order).
		{"number desc missing last", `{"size":6,"sort":[{"statistic_values.download":"desc"}]}`, []int{21, 22, 23, 24, 20, 1}},
		{"number asc missing first", `{"size":2,"sort":[{"statistic_values.download":{"order":"asc","missing":"_first"}},{"_id":"desc"}]}`, []int{30, 29}},
		{"_id", `{"size":2,"sort":["_id"]}`, []int{1, 2}},
		{"_id desc", `{"size":2,"sort":[{"_id":"desc"}]}`, []int{30, 29}},
		{"_doc", `{"size":3,"sort":["_doc"]}`, []int{1, 2, 3}},
		{"_score then created_at", `{"size":2,"sort":["_score",{"created_at":"asc"}]}`, []int{1, 11}},
		{"from", `{"from":3,"size":2,"sort":[{"created_at":"asc"}]}`, []int{2, 12}},
	}
	for _, tc := range ordered {
		t.Run(tc.name, func(t *testing.T) {
			got := idsOf(t, f.must(t, tc.body))
			var want []string
			for _, n := range tc.want {
				want = append(want, mid(n))
			}
			if !slices.Equal(got, want) {
				t.Errorf("got %v\nwant %v", got, want)
			}
		})
	}

	// Sort values, and scores: none when sorted by a field (as on
	// Elasticsearch), 1.0 with _score or track_scores.
	resp := f.must(t, `{"size":1,"sort":[{"created_at":"desc"}]}`)
	h := hitsOf(t, resp)[0]
	if !reflect.DeepEqual(h["sort"], []any{ms10}) || h["_score"] != nil || resp["hits"].(map[string]any)["max_score"] != nil {
		t.Errorf("sorted hit %v, max_score %v", h, resp["hits"].(map[string]any)["max_score"])
	}
	resp = f.must(t, `{"size":1,"sort":[{"created_at":"desc"}],"track_scores":true}`)
	if h := hitsOf(t, resp)[0]; h["_score"] != 1.0 || resp["hits"].(map[string]any)["max_score"] != 1.0 {
		t.Errorf("track_scores: %v", h)
	}
	resp = f.must(t, `{"size":1,"sort":[{"statistic_values.download":"desc"}]}`)
	if h := hitsOf(t, resp)[0]; !reflect.DeepEqual(h["sort"], []any{json.Number("94.2")}) {
		t.Errorf("numeric sort value %#v", h["sort"])
	}

	// search_after: created_at asc pages of 2: #1 (11-01 06:00), #11
	// (06:10), then #21 (06:20), #2 (11-02 13:13).
	resp = f.must(t, `{"size":2,"sort":[{"created_at":"asc"}]}`)
	after, _ := json.Marshal(hitsOf(t, resp)[1]["sort"])
	resp = f.must(t, `{"size":2,"sort":[{"created_at":"asc"}],"search_after":`+string(after)+`}`)
	if got := idsOf(t, resp); !slices.Equal(got, []string{mid(21), mid(2)}) {
		t.Errorf("search_after page %v", got)
	}
	resp = f.must(t, `{"size":3,"sort":[{"statistic_values.download":"desc"},{"_id":"asc"}],"search_after":[86.7,"`+mid(22)+`"]}`)
	if got := idsOf(t, resp); !slices.Equal(got, []string{mid(23), mid(24), mid(20)}) {
		t.Errorf("search_after on a number %v", got)
	}

	// _source forms.
	src := func(b string) any {
		t.Helper()
		return hitsOf(t, f.must(t, `{"query":{"ids":{"values":["`+mid(1)+`"]}},`+b+`}`))[0]["_source"]
	}
	if got := src(`"_source":{"includes":["study.subject","network.*"],"excludes":["network.connection_type"]}`); !reflect.DeepEqual(got,
		map[string]any{"study": map[string]any{"subject": "youtube"}, "network": map[string]any{"isp": "Telekom"}}) {
		t.Errorf("_source includes/excludes: %v", got)
	}
	if got := src(`"_source":"type"`); !reflect.DeepEqual(got, map[string]any{"type": "VideoMeasurement"}) {
		t.Errorf("_source string: %v", got)
	}
	if got := src(`"_source":["id","success"]`); !reflect.DeepEqual(got, map[string]any{"id": mid(1), "success": true}) {
		t.Errorf("_source list: %v", got)
	}
	if h := hitsOf(t, f.must(t, `{"size":1,"_source":false}`))[0]; h["_source"] != nil {
		t.Errorf("_source false: %v", h)
	} else if _, ok := h["_source"]; ok {
		t.Errorf("_source false still has the key: %v", h)
	}

	// track_total_hits.
	for b, want := range map[string]any{
		`{"size":0}`:                          map[string]any{"value": int64(30), "relation": "eq"},
		`{"size":0,"track_total_hits":true}`:  map[string]any{"value": int64(30), "relation": "eq"},
		`{"size":0,"track_total_hits":10}`:    map[string]any{"value": int64(10), "relation": "gte"},
		`{"size":0,"track_total_hits":30}`:    map[string]any{"value": int64(30), "relation": "eq"},
		`{"size":0,"track_total_hits":false}`: nil,
	} {
		total, ok := f.must(t, b)["hits"].(map[string]any)["total"]
		if want == nil && ok || want != nil && !reflect.DeepEqual(total, want) {
			t.Errorf("%s: total %v, want %v", b, total, want)
		}
	}
}

func TestFixtureSetEnvelope(t *testing.T) {
	f := getFixtureSet(t)
	resp := f.must(t, `{"size":30,"query":{"term":{"client_uuid":"0b6f3c1e-7d4a-4c2b-9e51-1a2b3c4d5e01"}},"aggs":{"n":{"value_count":{"field":"id"}}}}`)
	keys := func(m map[string]any) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	if got := keys(resp); !slices.Equal(got, []string{"_shards", "aggregations", "hits", "timed_out", "took"}) {
		t.Errorf("envelope keys %v", got)
	}
	if !reflect.DeepEqual(resp["_shards"], map[string]any{"total": 1, "successful": 1, "skipped": 0, "failed": 0}) || resp["timed_out"] != false {
		t.Errorf("envelope %v", resp)
	}
	if _, ok := resp["took"].(int64); !ok {
		t.Errorf("took %T", resp["took"])
	}
	hits := resp["hits"].(map[string]any)
	if got := keys(hits); !slices.Equal(got, []string{"hits", "max_score", "total"}) || hits["max_score"] != 1.0 {
		t.Errorf("hits %v", hits)
	}
	// C1: #1 #7 (Video), #13 #19 (Network), #25 (Conferencing).
	wantIndex := map[string]string{
		mid(1): "videomeasurement", mid(7): "videomeasurement", mid(13): "networkmeasurement",
		mid(19): "networkmeasurement", mid(25): "conferencingmeasurement",
	}
	hs := hitsOf(t, resp)
	if len(hs) != 5 {
		t.Fatalf("%d hits, want 5", len(hs))
	}
	for _, h := range hs {
		id := h["_id"].(string)
		if got := keys(h); !slices.Equal(got, []string{"_id", "_index", "_score", "_source"}) {
			t.Errorf("hit keys %v", got)
		}
		if want := "analytics-production-" + f.slug + "-measurements-" + wantIndex[id]; h["_index"] != want {
			t.Errorf("%s: _index %v, want %s", id, h["_index"], want)
		}
		if h["_score"] != 1.0 || h["_source"].(map[string]any)["id"] != id {
			t.Errorf("hit %v", h)
		}
	}
	if !reflect.DeepEqual(resp["aggregations"], map[string]any{"n": map[string]any{"value": int64(5)}}) {
		t.Errorf("aggregations %v", resp["aggregations"])
	}
	// Anomaly events: index without a type; 2 of 5 resolved.
	resp, err := f.search(t, f.anom, `{"query":{"term":{"status":"resolved"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	got := idsOf(t, resp)
	slices.Sort(got)
	if !slices.Equal(got, []string{"meet-jitter::shift::1793971505", "web-plt::spike::1794319053"}) {
		t.Errorf("resolved anomaly events %v", got)
	}
	for _, h := range hitsOf(t, resp) {
		if h["_index"] != "analytics-production-"+f.slug+"-anomaly_events" {
			t.Errorf("anomaly _index %v", h["_index"])
		}
	}
}

func (f *fixtureSet) aggs(t *testing.T, query, aggs string) any {
	t.Helper()
	b := `{"size":0,"aggs":` + aggs + `}`
	if query != "" {
		b = `{"size":0,"query":` + query + `,"aggs":` + aggs + `}`
	}
	resp := f.must(t, b)
	raw, _ := json.Marshal(resp["aggregations"])
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func terms(buckets string, other int) string {
	return fmt.Sprintf(`{"doc_count_error_upper_bound": 0, "sum_other_doc_count": %d, "buckets": [%s]}`, other, buckets)
}

func TestFixtureSetAggregations(t *testing.T) {
	f := getFixtureSet(t)
	speedtest := `{"term":{"type":"SpeedtestMeasurement"}}`

	// terms: per type 7 7 5 5 3 3, ties by key; size; order; missing.
	expect(t, f.aggs(t, "", `{
		"types": {"terms": {"field": "type"}},
		"top2": {"terms": {"field": "type.keyword", "size": 2}},
		"isp": {"terms": {"field": "network.isp", "order": {"_key": "desc"}}},
		"err": {"terms": {"field": "error.code", "missing": "none"}},
		"c2": {"terms": {"field": "study.subject", "min_doc_count": 2, "order": [{"_count": "asc"}, {"_key": "asc"}], "size": 3}}}`), `{
		"types": `+terms(`{"key": "NetworkMeasurement", "doc_count": 7}, {"key": "VideoMeasurement", "doc_count": 7},
			{"key": "SpeedtestMeasurement", "doc_count": 5}, {"key": "WebMeasurement", "doc_count": 5},
			{"key": "ConferencingMeasurement", "doc_count": 3}, {"key": "GamingMeasurement", "doc_count": 3}`, 0)+`,
		"top2": `+terms(`{"key": "NetworkMeasurement", "doc_count": 7}, {"key": "VideoMeasurement", "doc_count": 7}`, 16)+`,
		"isp": `+terms(`{"key": "Vodafone", "doc_count": 10}, {"key": "Telekom", "doc_count": 10}, {"key": "O2", "doc_count": 10}`, 0)+`,
		"err": `+terms(`{"key": "none", "doc_count": 29}, {"key": "TIMEOUT", "doc_count": 1}`, 0)+`,
		"c2": `+terms(`{"key": "amazon_trailer", "doc_count": 2}, {"key": "dns", "doc_count": 2}, {"key": "geforce_now", "doc_count": 2}`, 18)+`}`)
	// c2: subjects with 2 documents: amazon_trailer dns geforce_now googlemeet
	// icmpping lighthouse netflix ookla traceroute, then website and youtube with 3 (24 documents); 3 shown.

	// min_doc_count 0: the other 15 subjects of the data owner follow with
	// 0, by key.
	expect(t, f.aggs(t, `{"term":{"type":"GamingMeasurement"}}`, `{
		"s": {"terms": {"field": "study.subject", "min_doc_count": 0, "size": 5}},
		"asc": {"terms": {"field": "study.subject", "min_doc_count": 0, "size": 3, "order": {"_count": "asc"}}}}`), `{
		"s": `+terms(`{"key": "geforce_now", "doc_count": 2}, {"key": "xbox_cloud", "doc_count": 1},
			{"key": "amazon_trailer", "doc_count": 0}, {"key": "breitbandmessung", "doc_count": 0}, {"key": "dns", "doc_count": 0}`, 0)+`,
		"asc": `+terms(`{"key": "amazon_trailer", "doc_count": 0}, {"key": "breitbandmessung", "doc_count": 0}, {"key": "dns", "doc_count": 0}`, 3)+`}`)

	// date_histogram: 3 documents a day; in -08:00 the odd measurements
	// (06:xx UTC) fall on the day before: Oct 31 3, Nov 2/4/6/8 6, Nov 10 3.
	day := int64(86400000)
	nov1 := int64(1793491200000)
	var daily, local []string
	for i := int64(0); i < 10; i++ {
		daily = append(daily, fmt.Sprintf(`{"key": %d, "key_as_string": "2026-11-%02dT00:00:00.000Z", "doc_count": 3}`, nov1+i*day, i+1))
	}
	for i, c := range []int{3, 0, 6, 0, 6, 0, 6, 0, 6, 0, 3} {
		d := fmt.Sprintf("2026-11-%02d", i)
		if i == 0 {
			d = "2026-10-31"
		}
		local = append(local, fmt.Sprintf(`{"key": %d, "key_as_string": %q, "doc_count": %d}`, nov1+int64(i-1)*day+8*3600000, d, c))
	}
	var twelve []string
	for i := 0; i < 20; i++ {
		// Odd days: 3 in the 00:00 bucket; even days: 3 in the 12:00 one.
		c := 0
		if (i/2)%2 == i%2 {
			c = 3
		}
		twelve = append(twelve, fmt.Sprint(c))
	}
	got := f.aggs(t, "", `{
		"d": {"date_histogram": {"field": "created_at", "calendar_interval": "day"}},
		"pst": {"date_histogram": {"field": "created_at", "calendar_interval": "1d", "time_zone": "-08:00", "format": "yyyy-MM-dd"}},
		"ext": {"date_histogram": {"field": "created_at", "calendar_interval": "day", "extended_bounds": {"min": "2026-11-01||-2d", "max": "2026-11-10||+1d"}}},
		"h12": {"date_histogram": {"field": "created_at", "fixed_interval": "12h"}},
		"mo": {"date_histogram": {"field": "created_at", "calendar_interval": "month", "min_doc_count": 1}}}`)
	expect(t, got.(map[string]any)["d"], `{"buckets": [`+strings.Join(daily, ",")+`]}`)
	expect(t, got.(map[string]any)["pst"], `{"buckets": [`+strings.Join(local, ",")+`]}`)
	expect(t, got.(map[string]any)["mo"], `{"buckets": [{"key": 1793491200000, "key_as_string": "2026-11-01T00:00:00.000Z", "doc_count": 30}]}`)
	var extCounts, h12Counts []string
	for _, b := range got.(map[string]any)["ext"].(map[string]any)["buckets"].([]any) {
		extCounts = append(extCounts, fmt.Sprint(b.(map[string]any)["doc_count"]))
	}
	for _, b := range got.(map[string]any)["h12"].(map[string]any)["buckets"].([]any) {
		h12Counts = append(h12Counts, fmt.Sprint(b.(map[string]any)["doc_count"]))
	}
	if strings.Join(extCounts, " ") != "0 0 3 3 3 3 3 3 3 3 3 3 0" {
		t.Errorf("extended_bounds with date math: %v", extCounts)
	}
	if strings.Join(h12Counts, " ") != strings.Join(twelve, " ") {
		t.Errorf("fixed 12h: %v, want %v", h12Counts, twelve)
	}

	// Numeric buckets and metrics over the 5 downloads (sum 396, mean 79.2).
	expect(t, f.aggs(t, speedtest, `{
		"h": {"histogram": {"field": "statistic_values.download", "interval": 10}},
		"r": {"range": {"field": "statistic_values.download", "ranges": [{"to": 75}, {"from": 75, "to": 90}, {"from": 90}]}},
		"avg": {"avg": {"field": "statistic_values.download"}},
		"sum": {"sum": {"field": "statistic_values.download"}},
		"min": {"min": {"field": "statistic_values.download"}},
		"max": {"max": {"field": "statistic_values.download"}},
		"n": {"value_count": {"field": "statistic_values.download"}},
		"st": {"stats": {"field": "statistic_values.download"}},
		"p": {"percentiles": {"field": "statistic_values.download", "percents": [25, 50, 75]}},
		"subjects": {"cardinality": {"field": "study.subject"}}}`), `{
		"h": {"buckets": [{"key": 60, "doc_count": 1}, {"key": 70, "doc_count": 2}, {"key": 80, "doc_count": 1}, {"key": 90, "doc_count": 1}]},
		"r": {"buckets": [{"key": "*-75.0", "to": 75, "doc_count": 2}, {"key": "75.0-90.0", "from": 75, "to": 90, "doc_count": 2},
			{"key": "90.0-*", "from": 90, "doc_count": 1}]},
		"avg": {"value": 79.2}, "sum": {"value": 396}, "min": {"value": 64.2}, "max": {"value": 94.2}, "n": {"value": 5},
		"st": {"count": 5, "min": 64.2, "max": 94.2, "avg": 79.2, "sum": 396},
		"p": {"values": {"25.0": 71.7, "50.0": 79.2, "75.0": 86.7}},
		"subjects": {"value": 4}}`)

	// filter, filters (named with other bucket, anonymous), cardinality.
	expect(t, f.aggs(t, "", `{
		"speed": {"filter": `+speedtest+`, "aggs": {"avg": {"avg": {"field": "statistic_values.download"}}}},
		"isp": {"filters": {"filters": {"telekom": {"term": {"network.isp": "Telekom"}}, "o2": {"match": {"network.isp": "o2"}}}, "other_bucket_key": "rest"}},
		"anon": {"filters": {"filters": [{"term": {"study.subject": "youtube"}}, {"term": {"type": "GamingMeasurement"}}]}},
		"subjects": {"cardinality": {"field": "study.subject"}},
		"clients": {"cardinality": {"field": "client_uuid"}}}`), `{
		"speed": {"doc_count": 5, "avg": {"value": 79.2}},
		"isp": {"buckets": {"o2": {"doc_count": 10}, "telekom": {"doc_count": 10}, "rest": {"doc_count": 10}}},
		"anon": {"buckets": [{"doc_count": 3}, {"doc_count": 3}]},
		"subjects": {"value": 17}, "clients": {"value": 6}}`)

	// Nested three levels deep with a metric and top_hits at the bottom:
	// Speedtest by isp (O2 #21 #24, Vodafone #20 #23, Telekom #22), then by
	// subject.
	leaf := func(subject string, v float64, n int) string {
		hit := fmt.Sprintf(`{"_index": "analytics-production-%s-measurements-speedtestmeasurement", "_id": %q, "_score": null, "_source": {"id": %q}, "sort": [%v]}`,
			f.slug, mid(n), mid(n), v)
		return fmt.Sprintf(`{"key": %q, "doc_count": 1, "avg": {"value": %v}, "top": {"hits": {"total": {"value": 1, "relation": "eq"}, "max_score": null, "hits": [%s]}}}`,
			subject, v, hit)
	}
	expect(t, f.aggs(t, "", `{"t": {"terms": {"field": "type"}, "aggs": {"isp": {"terms": {"field": "network.isp"}, "aggs": {
		"s": {"terms": {"field": "study.subject"}, "aggs": {"avg": {"avg": {"field": "statistic_values.download"}},
			"top": {"top_hits": {"size": 1, "_source": ["id"], "sort": [{"statistic_values.download": "desc"}]}}}}}}}}}`).(map[string]any)["t"].(map[string]any)["buckets"].([]any)[2],
		`{"key": "SpeedtestMeasurement", "doc_count": 5, "isp": `+terms(
			`{"key": "O2", "doc_count": 2, "s": `+terms(leaf("nperf", 71.7, 24)+","+leaf("ookla", 94.2, 21), 0)+`},
			{"key": "Vodafone", "doc_count": 2, "s": `+terms(leaf("breitbandmessung", 79.2, 23)+","+leaf("fastcom", 64.2, 20), 0)+`},
			{"key": "Telekom", "doc_count": 1, "s": `+terms(leaf("ookla", 86.7, 22), 0)+`}`, 0)+`}`)

	// top_hits under terms: the newest of each type (Gaming #30, Conferencing #27).
	got = f.aggs(t, `{"terms":{"type":["GamingMeasurement","ConferencingMeasurement"]}}`,
		`{"t": {"terms": {"field": "type", "order": {"_key": "asc"}}, "aggs": {"last": {"top_hits": {"size": 1, "_source": false, "sort": [{"created_at": "desc"}]}}}}}`)
	var newest []string
	for _, b := range got.(map[string]any)["t"].(map[string]any)["buckets"].([]any) {
		h := b.(map[string]any)["last"].(map[string]any)["hits"].(map[string]any)["hits"].([]any)[0].(map[string]any)
		newest = append(newest, h["_id"].(string))
	}
	if !slices.Equal(newest, []string{mid(27), mid(30)}) {
		t.Errorf("top_hits newest per type %v", newest)
	}
}

// TestMalformedRequests: every malformed or unsupported input is a 400
// naming what is wrong, never a 500, a panic or a silent drop.
func TestMalformedRequests(t *testing.T) {
	f := getFixtureSet(t)
	deep := `{"match_all":{}}`
	for range limits.MaxDSLDepth + 1 {
		deep = `{"bool":{"must":` + deep + `}}`
	}
	many := make([]string, maxTerms+1)
	for i := range many {
		many[i] = fmt.Sprintf(`"v%d"`, i)
	}
	manyRanges := make([]string, limits.MaxAggBuckets+1)
	for i := range manyRanges {
		manyRanges[i] = fmt.Sprintf(`{"from":%d}`, i)
	}
	cases := []struct{ name, body, msg string }{
		{"unknown top-level", `{"foo":1}`, `"foo"`},
		{"unknown clause", `{"query":{"fuzzy":{"a":"b"}}}`, `"fuzzy"`},
		{"two clauses", `{"query":{"term":{"a":1},"match":{"b":2}}}`, "exactly one key"},
		{"clause not an object", `{"query":{"bool":{"must":"x"}}}`, "object"},
		{"match_all option", `{"query":{"match_all":{"foo":1}}}`, `unsupported match_all option "foo"`},
		{"term option", `{"query":{"term":{"type":{"value":"x","foo":1}}}}`, `unsupported term option "foo"`},
		{"term list value", `{"query":{"term":{"type":["a"]}}}`, "must be a string"},
		{"term case_insensitive type", `{"query":{"term":{"type":{"value":"x","case_insensitive":"yes"}}}}`, "case_insensitive must be a boolean"},
		{"terms object value", `{"query":{"terms":{"type":[{"a":1}]}}}`, "must be strings"},
		{"terms too many on a column", `{"query":{"terms":{"type":[` + strings.Join(many, ",") + `]}}}`, "more than 65536"},
		{"terms too many", `{"query":{"terms":{"study.subject":[` + strings.Join(many, ",") + `]}}}`, "more than 65536"},
		{"match no field", `{"query":{"match":{}}}`, "exactly one field"},
		{"match no query", `{"query":{"match":{"study.subject":{"operator":"and"}}}}`, "needs a query"},
		{"match null", `{"query":{"match":{"study.subject":null}}}`, "needs a query"},
		{"match option", `{"query":{"match":{"study.subject":{"query":"x","foo":1}}}}`, `unsupported match option "foo"`},
		{"match operator", `{"query":{"match":{"study.subject":{"query":"x","operator":"xor"}}}}`, "operator"},
		{"match fuzziness", `{"query":{"match":{"study.subject":{"query":"x","fuzziness":"AUTO"}}}}`, "fuzziness"},
		{"match msm", `{"query":{"match":{"study.subject":{"query":"x","minimum_should_match":"lots"}}}}`, "minimum_should_match"},
		{"match_phrase slop", `{"query":{"match_phrase":{"study.subject":{"query":"x y","slop":2}}}}`, "slop"},
		{"match_phrase operator", `{"query":{"match_phrase":{"study.subject":{"query":"x","operator":"and"}}}}`, `"operator"`},
		{"multi_match no query", `{"query":{"multi_match":{"fields":["a"]}}}`, "needs a query"},
		{"multi_match type", `{"query":{"multi_match":{"query":"x","type":"bool_prefix"}}}`, "bool_prefix"},
		{"multi_match option", `{"query":{"multi_match":{"query":"x","foo":1}}}`, `"foo"`},
		{"multi_match field pattern", `{"query":{"multi_match":{"query":"x","fields":["study.*"]}}}`, "pattern"},
		{"prefix option", `{"query":{"prefix":{"study.subject":{"value":"x","foo":1}}}}`, `unsupported prefix option "foo"`},
		{"prefix no value", `{"query":{"prefix":{"study.subject":{"case_insensitive":true}}}}`, "needs a string value"},
		{"wildcard object value", `{"query":{"wildcard":{"study.subject":{"value":{"a":1}}}}}`, "needs a string value"},
		{"exists option", `{"query":{"exists":{"field":"a","foo":1}}}`, `unsupported exists option "foo"`},
		{"exists no field", `{"query":{"exists":{}}}`, "needs a field"},
		{"ids option", `{"query":{"ids":{"values":["a"],"type":"_doc"}}}`, `unsupported ids option "type"`},
		{"ids object value", `{"query":{"ids":{"values":[{"a":1}]}}}`, "ids values"},
		{"bool option", `{"query":{"bool":{"must":[],"foo":[]}}}`, `unsupported bool option "foo"`},
		{"bool msm", `{"query":{"bool":{"should":[{"match_all":{}}],"minimum_should_match":"x"}}}`, "minimum_should_match"},
		{"bool msm type", `{"query":{"bool":{"should":[{"match_all":{}}],"minimum_should_match":[1]}}}`, "minimum_should_match"},
		{"constant_score option", `{"query":{"constant_score":{"filter":{"match_all":{}},"foo":1}}}`, `"foo"`},
		{"dis_max option", `{"query":{"dis_max":{"queries":[],"foo":1}}}`, `"foo"`},
		{"range option", `{"query":{"range":{"created_at":{"gte":"2026-11-01","foo":1}}}}`, `"foo"`},
		{"range format", `{"query":{"range":{"created_at":{"gte":"2026","format":"yyyy-QQ"}}}}`, "date format"},
		{"range bad date", `{"query":{"range":{"created_at":{"gte":"03/11/2026","format":"yyyy-MM-dd"}}}}`, "date"},
		{"range date math", `{"query":{"range":{"created_at":{"gte":"now-1x"}}}}`, "date math"},
		{"range huge date math", `{"query":{"range":{"created_at":{"gte":"now-99999999999999999999d"}}}}`, "date math"},
		{"range time_zone", `{"query":{"range":{"created_at":{"gte":"2026-11-01","time_zone":"Mars/Base"}}}}`, "time_zone"},
		{"range object bound", `{"query":{"range":{"a":{"gte":{"x":1}}}}}`, "range bounds"},
		{"query_string option", `{"query":{"query_string":{"query":"a","foo":1}}}`, `"foo"`},
		{"query_string range", `{"query":{"query_string":{"query":"a:[1 TO"}}}`, "unterminated range"},
		{"query_string paren", `{"query":{"query_string":{"query":"(a"}}}`, "missing )"},
		{"query_string no query", `{"query":{"query_string":{"default_field":"a"}}}`, "needs a query"},
		{"too deep", `{"query":` + deep + `}`, "nested deeper"},
		{"size huge", `{"size":1000000000}`, "size"},
		{"size text", `{"size":"x"}`, "size"},
		{"size fraction", `{"size":1.5}`, "size"},
		{"from negative", `{"from":-1}`, "from"},
		{"from + size", `{"from":9000,"size":2000}`, "from + size"},
		{"sort option", `{"sort":[{"created_at":{"order":"asc","foo":1}}]}`, `"foo"`},
		{"sort missing value", `{"sort":[{"created_at":{"missing":"5"}}]}`, "missing"},
		{"sort order", `{"sort":[{"created_at":"up"}]}`, "sort order"},
		{"sort type", `{"sort":5}`, "sort"},
		{"search_after type", `{"sort":["created_at"],"search_after":"x"}`, "search_after"},
		{"search_after length", `{"sort":["created_at"],"search_after":[1,2]}`, "search_after"},
		{"search_after bad date", `{"sort":["created_at"],"search_after":["yesterday"]}`, "search_after"},
		{"track_total_hits", `{"track_total_hits":-1}`, "track_total_hits"},
		{"track_scores", `{"track_scores":"yes"}`, "track_scores"},
		{"_source pattern type", `{"_source":{"includes":[1]}}`, "_source"},
		{"_source option", `{"_source":{"fields":["a"]}}`, "_source"},
		{"aggs type", `{"aggs":[]}`, "aggs"},
		{"agg unknown", `{"aggs":{"a":{"geohash_grid":{"field":"x"}}}}`, "geohash_grid"},
		{"agg option", `{"aggs":{"a":{"avg":{"field":"x","foo":1}}}}`, "[foo]"},
		{"agg terms size", `{"aggs":{"a":{"terms":{"field":"x","size":100000}}}}`, "[size]"},
		{"agg min_doc_count", `{"aggs":{"a":{"terms":{"field":"x","min_doc_count":"x"}}}}`, "min_doc_count"},
		{"agg percents", `{"aggs":{"a":{"percentiles":{"field":"x","percents":"50"}}}}`, "percents"},
		{"agg top_hits size", `{"aggs":{"a":{"top_hits":{"size":1000}}}}`, "[size]"},
		{"agg date format", `{"aggs":{"a":{"date_histogram":{"field":"created_at","calendar_interval":"day","format":"QQQ"}}}}`, "date format"},
		{"agg fill explosion", `{"aggs":{"a":{"date_histogram":{"field":"created_at","fixed_interval":"1s"}}}}`, "too many buckets"},
		{"agg histogram explosion", `{"aggs":{"a":{"histogram":{"field":"statistic_values.download","interval":0.000001}}}}`, "too many buckets"},
		{"agg ranges explosion", `{"aggs":{"a":{"range":{"field":"statistic_values.download","ranges":[` + strings.Join(manyRanges, ",") + `]}}}}`, "too many buckets"},
		{"agg filter query", `{"aggs":{"a":{"filter":{"term":{"a":{"value":"x","foo":1}}}}}}`, `"foo"`},
		{"agg order path", `{"aggs":{"a":{"terms":{"field":"type","order":{"nope":"asc"}}}}}`, "cannot order by"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("panic: %v", r)
				}
			}()
			_, err := f.search(t, f.scope, tc.body)
			var bad *search.BadRequestError
			if !errors.As(err, &bad) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("got %v, want a 400 mentioning %q", err, tc.msg)
			}
		})
	}
}

// sqlRecorder keeps the text of every statement run on its pool.
type sqlRecorder struct {
	mu  sync.Mutex
	sql []string
}

func (r *sqlRecorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	r.sql = append(r.sql, d.SQL)
	r.mu.Unlock()
	return ctx
}
func (r *sqlRecorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestNothingFromTheRequestInSQL: field names, values, patterns, sort keys,
// aggregation parameters and query strings all travel as placeholders; the
// marker never appears in a statement's text.
func TestNothingFromTheRequestInSQL(t *testing.T) {
	f := getFixtureSet(t)
	cfg := testPool(t).Config()
	rec := &sqlRecorder{}
	cfg.ConnConfig.Tracer = rec
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	b := New(pool)
	const m = "zq9mark"
	bodies := []string{
		`{"query":{"term":{"a.zq9mark":"zq9mark"}}}`,
		`{"query":{"term":{"zq9mark":{"value":"zq9mark","case_insensitive":true}}}}`,
		`{"query":{"terms":{"zq9mark":["zq9mark",7]}}}`,
		`{"query":{"match":{"zq9mark":{"query":"zq9mark other","minimum_should_match":2}}}}`,
		`{"query":{"match_phrase":{"zq9mark":"zq9mark x"}}}`,
		`{"query":{"match_phrase_prefix":{"zq9mark":"zq9mark x"}}}`,
		`{"query":{"multi_match":{"query":"zq9mark y","type":"cross_fields","operator":"and","fields":["zq9mark","b.zq9mark^2"]}}}`,
		`{"query":{"range":{"zq9mark":{"gte":"zq9mark"}}}}`,
		`{"query":{"range":{"zq9mark":{"gte":1,"lt":"2"}}}}`,
		`{"query":{"range":{"zq9mark":{"gte":"2026-11-01||+1d","format":"yyyy-MM-dd||epoch_millis"}}}}`,
		`{"query":{"exists":{"field":"zq9mark"}}}`,
		`{"query":{"prefix":{"zq9mark":"zq9mark"}}}`,
		`{"query":{"wildcard":{"zq9mark":{"value":"zq9*mark?","case_insensitive":true}}}}`,
		`{"query":{"ids":{"values":["zq9mark"]}}}`,
		`{"query":{"bool":{"should":[{"term":{"zq9mark":1}},{"term":{"zq9mark":2}},{"term":{"zq9mark":3}}],"minimum_should_match":2}}}`,
		`{"query":{"query_string":{"query":"zq9mark:zq9mark AND zq9mark:\"zq9mark x\" OR zq9mark:[1 TO 2] OR zq9mark:>=3 OR _exists_:zq9mark OR zq9mark:zq9*","default_field":"zq9mark"}}}`,
		`{"query":{"query_string":{"query":"zq9mark"}}}`,
		`{"sort":[{"zq9mark":{"order":"desc","missing":"_first"}},{"study.zq9mark.keyword":"asc"}],"search_after":["zq9mark","zq9mark"]}`,
		`{"_source":{"includes":["zq9mark"],"excludes":["zq9mark.*"]}}`,
		`{"size":0,"aggs":{"zq9mark":{"terms":{"field":"zq9mark","missing":"zq9mark","min_doc_count":0,"order":{"zq9mark":"desc"}},"aggs":{
			"zq9mark":{"avg":{"field":"zq9mark","missing":1}},
			"h":{"histogram":{"field":"zq9mark","interval":1}},
			"d":{"date_histogram":{"field":"zq9mark","calendar_interval":"day","time_zone":"Europe/Berlin","format":"yyyy-MM-dd"}},
			"r":{"range":{"field":"zq9mark","ranges":[{"to":1,"key":"zq9mark"}]}},
			"f":{"filters":{"filters":{"zq9mark":{"match":{"zq9mark":"zq9mark"}}}}},
			"s":{"stats":{"field":"zq9mark"}}, "c":{"cardinality":{"field":"zq9mark"}}, "v":{"value_count":{"field":"zq9mark"}},
			"p":{"percentiles":{"field":"zq9mark"}},
			"t":{"top_hits":{"sort":[{"zq9mark":"asc"}],"_source":["zq9mark"]}}}}}}`,
		// The virtual field _index: values, patterns and the scope's index
		// name (which holds the slug) are placeholders too.
		`{"query":{"bool":{"should":[{"term":{"_index":"zq9mark"}},{"term":{"_index":{"value":"zq9mark","case_insensitive":true}}},
			{"terms":{"_index":["zq9mark"]}},{"prefix":{"_index":"zq9mark"}},{"wildcard":{"_index":"zq9*mark?"}},{"exists":{"field":"_index"}},
			{"query_string":{"query":"_index:zq9mark OR _index:\"zq9mark\" OR _index:zq9* OR _exists_:_index"}}]}},
			"sort":[{"_index":"desc"}],"search_after":["zq9mark"],
			"aggs":{"zq9mark":{"terms":{"field":"_index","missing":"zq9mark"},"aggs":{"t":{"top_hits":{"sort":[{"_index":"asc"}]}},
				"f":{"filter":{"term":{"_index":"zq9mark"}}}}},"c":{"cardinality":{"field":"_index"}}}}`,
	}
	for _, bd := range bodies {
		rec.mu.Lock()
		rec.sql = nil
		rec.mu.Unlock()
		if _, err := b.Search(context.Background(), search.Request{Scope: f.scope, Body: body(t, bd)}); err != nil {
			t.Errorf("%s: %v", bd, err)
			continue
		}
		rec.mu.Lock()
		if len(rec.sql) == 0 {
			t.Errorf("%s: no statement recorded", bd)
		}
		for _, s := range rec.sql {
			if strings.Contains(s, m) {
				t.Errorf("%s: request text in SQL: %s", bd, s)
			}
			if strings.Contains(s, f.slug) {
				t.Errorf("%s: the slug in SQL: %s", bd, s)
			}
		}
		rec.mu.Unlock()
	}
}
