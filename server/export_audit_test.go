package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/rest"
	"github.com/fleetgraph/fleetgraph/server"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// TestExportKeyKinds: every export route answers only export keys.
func TestExportKeyKinds(t *testing.T) {
	w := newExportWorld(t, "expk")
	analytics, _ := w.o.NewKey(t, apitest.KeyOpts{Kind: auth.KindClientAnalytics})
	for _, rt := range rest.ExportRoutes {
		var body any
		if rt.Method == http.MethodPost {
			body = map[string]any{}
		}
		p := server.ExportBase + rt.Path
		for _, c := range []struct {
			name, key string
			status    int
		}{
			{"no key", "", http.StatusUnauthorized},
			{"unknown key", "export-" + strings.Repeat("0", 40), http.StatusUnauthorized},
			{"admin key", w.o.Key, http.StatusForbidden},
			{"analytics key", analytics, http.StatusForbidden},
		} {
			t.Run(rt.Method+" "+rt.Path+": "+c.name, func(t *testing.T) {
				r := w.e.Do(t, rt.Method, p, c.key, body)
				if r.Status != c.status {
					t.Fatalf("status %d, want %d: %s", r.Status, c.status, r.Raw)
				}
				if msg, _ := r.Obj(t)["message"].(string); msg == "" {
					t.Fatalf("no message: %s", r.Raw)
				}
			})
		}
	}
}

// TestExportListingQueryRules: unknown parameters, repeated single values,
// blank values, time formats and ranges, combined filters.
func TestExportListingQueryRules(t *testing.T) {
	w := newExportWorld(t, "expq2")
	all := []string{"m5", "m4", "m3", "m2", "m1"}
	runExportCases(t, w, []exportCase{
		// Nothing is silently ignored: a parameter a listing does not take is a 400 naming it.
		{name: "unknown parameter", path: "/measurements", query: "foo=1", bad: "unknown query parameter foo"},
		{name: "misspelt parameter", path: "/measurements", query: "per-page=2", bad: "per-page"},
		{name: "misspelt time parameter", path: "/measurements", query: "start=2024-05-02", bad: "start"},
		{name: "the message lists the accepted parameters", path: "/measurements", query: "foo=1", bad: "start_time, end_time"},
		{name: "type on network requests", path: "/network_requests", query: "type=Document", bad: "type"},
		{name: "type on clients", path: "/clients", query: "type=automator", bad: "type"},
		{name: "subject on user feedbacks", path: "/user_feedbacks", query: "subject=youtube", bad: "subject"},
		{name: "study_id on client reports", path: "/client_reports", query: "study_id[]=s-dns", bad: "study_id"},
		{name: "subject on event bundles", path: "/event_bundles", query: "type=VideoEventBundle&subject=youtube", bad: "subject"},
		// One value per single-valued parameter.
		{name: "type twice", path: "/measurements", query: "type=VideoMeasurement&type=WebMeasurement", bad: "type is given more than once"},
		{name: "label in list syntax", path: "/measurements", query: "label[]=alpha", bad: "label takes one value"},
		{name: "page twice", path: "/measurements", query: "page=1&page=2", bad: "page"},
		{name: "start_time twice", path: "/measurements", query: "start_time=2024-05-01&start_time=2024-05-02", bad: "start_time"},
		// Blank values filter nothing.
		{name: "blank values are not given", path: "/measurements",
			query: "start_time=&end_time=&measurement_id=&client_uuid=&tags=&tags[]=&label=&type=&subject=&study_id=&page=&per_page=", want: all},
		{name: "a blank value beside a given one", path: "/measurements", query: "type=&type=SpeedtestMeasurement", want: []string{"m4"}},
		{name: "blank type of event bundles is still missing", path: "/event_bundles", query: "type=", bad: "type is required"},
		// Times.
		{name: "start_time after end_time", path: "/measurements", query: "start_time=2024-05-03&end_time=2024-05-02", bad: "start_time must not be after end_time"},
		{name: "start_time equal to end_time", path: "/measurements", query: "start_time=2024-05-01T02:00:00Z&end_time=2024-05-01T02:00:00Z", want: []string{"m2"}},
		{name: "end_time date only is midnight UTC", path: "/measurements", query: "end_time=2024-05-02", want: []string{"m3", "m2", "m1"}},
		{name: "ISO 8601 basic date", path: "/measurements", query: "start_time=20240502", want: []string{"m5", "m4"}},
		{name: "ISO 8601 basic date and time", path: "/measurements", query: "end_time=20240501T020000Z", want: []string{"m2", "m1"}},
		{name: "ISO 8601 basic with an offset", path: "/measurements", query: "end_time=" + url.QueryEscape("20240501T040000+0200"), want: []string{"m2", "m1"}},
		{name: "lower-case t and z", path: "/measurements", query: "end_time=2024-05-01t02:00:00z", want: []string{"m2", "m1"}},
		{name: "fractions and an offset", path: "/measurements", query: "end_time=" + url.QueryEscape("2024-05-01T03:59:59.999999+02:00"), want: []string{"m1"}},
		{name: "hour-only offset", path: "/measurements", query: "end_time=" + url.QueryEscape("2024-05-01T04:00:00+02"), want: []string{"m2", "m1"}},
		{name: "RFC 1123", path: "/measurements", query: "start_time=" + url.QueryEscape("Thu, 02 May 2024 00:00:00 GMT"), want: []string{"m5", "m4"}},
		{name: "not a date at all", path: "/measurements", query: "end_time=2024-05-01T25:00:00Z", bad: "end_time must be an ISO 8601 time"},
		{name: "a word", path: "/client_reports", query: "start_time=now", bad: "start_time"},
		{name: "bad time on clients", path: "/clients", query: "end_time=soon", bad: "end_time"},
		// Combined filters all apply.
		{name: "label and tags together", path: "/measurements", query: "label=alpha&tags=t1", want: []string{"m4", "m1"}},
		{name: "label that the tags exclude", path: "/measurements", query: "label=beta&tags=t2", want: []string{}},
		{name: "tags in both syntaxes at once", path: "/measurements", query: "tags[]=t1&tags=t2", want: []string{"m4", "m1"}},
		{name: "tags with blank entries", path: "/measurements", query: "tags=t2,,%20", want: []string{"m4", "m1"}},
		{name: "client_uuid keeps the label filter", path: "/measurements", query: "client_uuid=" + w.a + "&label=beta", want: []string{}},
		{name: "type, subject and time together", path: "/measurements", query: "type=SpeedtestMeasurement&subject=ookla&start_time=2024-05-02", want: []string{"m4"}},
		// measurement_id overrides the other parameters, invalid ones included.
		{name: "measurement_id overrides an invalid type", path: "/event_bundles", query: "measurement_id=m1&type=Bogus", want: []string{"e1"}},
		{name: "measurement_id overrides a bad time", path: "/measurements", query: "measurement_id=m2&start_time=garbage", want: []string{"m2"}},
		{name: "measurement_id overrides label on network requests", path: "/network_requests", query: "measurement_id=m1&label=beta", want: []string{"n2"}},
		{name: "measurement_id overrides tags on client reports", path: "/client_reports", query: "measurement_id=m1&tags=nobody", want: []string{"r1"}},
		{name: "measurement_id does not override paging", path: "/measurements", query: "measurement_id=m2&per_page=0", bad: "per_page"},
		{name: "measurement_id given twice", path: "/measurements", query: "measurement_id=m1&measurement_id=m2", bad: "measurement_id"},
	})
	t.Run("GET /esql refuses unknown parameters", func(t *testing.T) {
		q := url.QueryEscape("FROM analytics-production-" + w.o.Slug + "-measurements | KEEP id")
		apitest.Want400(t, w.get(t, "/esql", "query="+q+"&format=csv"), "format")
		apitest.Want400(t, w.get(t, "/esql", "query="), "query")
		apitest.Want400(t, w.get(t, "/esql", "query="+q+"&query="+q), "query")
	})
}

// TestExportUserFeedbackShape: a feedback stored with a top-level
// client_uuid is answered in the spec's shape, client {uuid}.
func TestExportUserFeedbackShape(t *testing.T) {
	w := newExportWorld(t, "expf")
	r := w.get(t, "/user_feedbacks", "type=comment")
	if got := apitest.IDs(t, r); !reflect.DeepEqual(got, []string{"2"}) {
		t.Fatalf("ids %v", got)
	}
	fb := r.JSON.([]any)[0].(map[string]any)
	if c, _ := fb["client"].(map[string]any); c == nil || c["uuid"] != w.b || len(c) != 1 {
		t.Fatalf("client = %v, want {uuid: %s}", fb["client"], w.b)
	}
	if _, ok := fb["client_uuid"]; ok {
		t.Fatalf("client_uuid beside client: %s", r.Raw)
	}
}

// TestExportSearchParameters: the search-engine parameters /search takes
// beside body, in the query string (GET, POST) and in the POST object.
func TestExportSearchParameters(t *testing.T) {
	w := newExportWorld(t, "expsp")
	body := url.QueryEscape(exportJSON(map[string]any{"sort": []any{map[string]any{"created_at": "desc"}}}))
	hitsTotal := func(t *testing.T, r *apitest.Response) any {
		t.Helper()
		if r.Status != http.StatusOK {
			t.Fatalf("status %d: %s", r.Status, r.Raw)
		}
		return r.Obj(t)["hits"].(map[string]any)["total"]
	}
	t.Run("rest_total_hits_as_int (GET)", func(t *testing.T) {
		if got := hitsTotal(t, w.get(t, "/search", "body="+body+"&rest_total_hits_as_int=true")); fmt.Sprint(got) != "5" {
			t.Fatalf("hits.total = %v, want 5", got)
		}
	})
	t.Run("rest_total_hits_as_int (POST)", func(t *testing.T) {
		r := w.post(t, "/search", map[string]any{"body": map[string]any{"query": map[string]any{"term": map[string]any{"type.keyword": "WebMeasurement"}}},
			"rest_total_hits_as_int": true})
		if got := hitsTotal(t, r); fmt.Sprint(got) != "1" {
			t.Fatalf("hits.total = %v, want 1", got)
		}
	})
	// Elasticsearch's RestSearchAction: rest_total_hits_as_int needs an
	// exact total (a count to track up to is a 400); without tracking the
	// total is -1.
	t.Run("rest_total_hits_as_int with track_total_hits false is -1", func(t *testing.T) {
		if got := hitsTotal(t, w.get(t, "/search", "body="+body+"&rest_total_hits_as_int=true&track_total_hits=false")); fmt.Sprint(got) != "-1" {
			t.Fatalf("hits.total = %v, want -1", got)
		}
	})
	t.Run("rest_total_hits_as_int with track_total_hits 100 is refused", func(t *testing.T) {
		apitest.Want400(t, w.get(t, "/search", "body="+body+"&rest_total_hits_as_int=true&track_total_hits=100"), "rest_total_hits_as_int")
		r := w.post(t, "/search", map[string]any{"body": map[string]any{"track_total_hits": 100}, "rest_total_hits_as_int": true})
		apitest.Want400(t, r, "rest_total_hits_as_int")
	})
	t.Run("without it hits.total is an object", func(t *testing.T) {
		got, _ := hitsTotal(t, w.get(t, "/search", "body="+body)).(map[string]any)
		if fmt.Sprint(got["value"]) != "5" || got["relation"] != "eq" {
			t.Fatalf("hits.total = %v", got)
		}
	})
	t.Run("execution hints are accepted", func(t *testing.T) {
		r := w.get(t, "/search", "body="+body+"&request_cache=false&search_type=query_then_fetch&batched_reduce_size=512&human=true&error_trace=false&pretty&timeout=5s")
		if ids, _ := exportHits(t, r); !reflect.DeepEqual(ids, []string{"m5", "m4", "m3", "m2", "m1"}) {
			t.Fatalf("ids %v", ids)
		}
		r = w.post(t, "/search", map[string]any{"body": map[string]any{}, "allow_partial_search_results": true,
			"max_concurrent_shard_requests": 3, "timeout": "1m", "size": 1})
		if ids, _ := exportHits(t, r); len(ids) != 1 {
			t.Fatalf("ids %v", ids)
		}
	})
	t.Run("version as a parameter adds _version to the hits", func(t *testing.T) {
		r := w.get(t, "/search", "body="+body+"&version=true&size=1")
		exportHits(t, r)
		hit := r.Obj(t)["hits"].(map[string]any)["hits"].([]any)[0].(map[string]any)
		if _, ok := hit["_version"]; !ok {
			t.Fatalf("no _version: %s", r.Raw)
		}
	})
	t.Run("stored_fields=_none_ drops _source", func(t *testing.T) {
		r := w.get(t, "/search", "body="+body+"&stored_fields=_none_&size=1")
		if r.Status != http.StatusOK {
			t.Fatalf("status %d: %s", r.Status, r.Raw)
		}
		hit := r.Obj(t)["hits"].(map[string]any)["hits"].([]any)[0].(map[string]any)
		if _, ok := hit["_source"]; ok {
			t.Fatalf("_source with stored_fields=_none_: %s", r.Raw)
		}
	})
	t.Run("POST with q in the URL", func(t *testing.T) {
		r := w.e.Do(t, http.MethodPost, server.ExportBase+"/search?q="+url.QueryEscape("study.subject:dns"), w.key,
			map[string]any{"body": map[string]any{}})
		if ids, _ := exportHits(t, r); !reflect.DeepEqual(ids, []string{"m3"}) {
			t.Fatalf("ids %v: %s", ids, r.Raw)
		}
	})
	for _, c := range []struct {
		name    string
		r       func(t *testing.T) *apitest.Response
		mention string
	}{
		{"search_type unknown", func(t *testing.T) *apitest.Response { return w.get(t, "/search", "body=%7B%7D&search_type=scan") }, "search_type"},
		{"request_cache not a boolean", func(t *testing.T) *apitest.Response { return w.get(t, "/search", "body=%7B%7D&request_cache=maybe") }, "request_cache"},
		{"batched_reduce_size zero", func(t *testing.T) *apitest.Response { return w.get(t, "/search", "body=%7B%7D&batched_reduce_size=0") }, "batched_reduce_size"},
		{"timeout empty", func(t *testing.T) *apitest.Response {
			return w.post(t, "/search", map[string]any{"body": map[string]any{}, "timeout": 5})
		}, "timeout"},
		{"filter_path", func(t *testing.T) *apitest.Response { return w.get(t, "/search", "body=%7B%7D&filter_path=hits.hits") }, "filter_path is not supported"},
		{"typed_keys", func(t *testing.T) *apitest.Response { return w.get(t, "/search", "body=%7B%7D&typed_keys=true") }, "typed_keys is not supported"},
		{"unknown key in the POST object", func(t *testing.T) *apitest.Response {
			return w.post(t, "/search", map[string]any{"body": map[string]any{}, "foo": 1})
		}, "unsupported search parameter foo"},
		{"index in the POST object", func(t *testing.T) *apitest.Response {
			return w.post(t, "/search", map[string]any{"body": map[string]any{}, "index": "*"})
		}, "the server chooses the index"},
		{"the same parameter in the URL and the POST object", func(t *testing.T) *apitest.Response {
			return w.e.Do(t, http.MethodPost, server.ExportBase+"/search?request_cache=true", w.key,
				map[string]any{"body": map[string]any{}, "request_cache": false})
		}, "request_cache"},
		{"a declared parameter given twice", func(t *testing.T) *apitest.Response {
			return w.get(t, "/search", "body=%7B%7D&q=a&q=b")
		}, "q is given more than once"},
		{"another parameter given twice", func(t *testing.T) *apitest.Response {
			return w.get(t, "/search", "body=%7B%7D&timeout=1s&timeout=2s")
		}, "timeout is given more than once"},
		{"explain, which the embedded backend does not support", func(t *testing.T) *apitest.Response {
			return w.get(t, "/search", "body=%7B%7D&explain=true")
		}, "explain"},
	} {
		t.Run("refused: "+c.name, func(t *testing.T) { apitest.Want400(t, c.r(t), c.mention) })
	}
}

// exportFixtures loads the testdata/ fixture set into the world's data
// owner, with fresh client UUIDs for C1..C6 that sort in that order; it
// answers them by client name.
func exportFixtures(t *testing.T, w *exportWorld) map[string]string {
	t.Helper()
	clients := w.e.LoadFixtures(t, w.o.ID, vocab.KindMeasurement, vocab.KindClientReport, vocab.KindEventBundle,
		vocab.KindNetworkRequest, vocab.KindUserFeedback)
	ctx := context.Background()
	for _, c := range []struct {
		name, label string
		tags        []string
	}{{"C1", "probe-1", []string{"berlin", "fiber"}}, {"C2", "probe-2", []string{"berlin"}}, {"C3", "probe-3", nil}} {
		if _, err := w.e.Store.Pool().Exec(ctx, `UPDATE clients SET label = $2, tags = $3 WHERE uuid = $1`,
			clients[c.name], c.label, c.tags); err != nil {
			t.Fatal(err)
		}
	}
	return clients
}

// TestExportFixtureSet runs the listings over the testdata/ fixture set
// (realistic documents of every kind, imported as `fleetgraph import`
// does); expectations come from testdata/README.md's tables.
func TestExportFixtureSet(t *testing.T) {
	w := newExportWorld(t, "expfx")
	c := exportFixtures(t, w)
	// newExportWorld's own documents: 5 measurements m1..m5 in May 2024,
	// which the November 2026 windows below exclude.
	nov := "start_time=2026-11-01"
	runExportCases(t, w, []exportCase{
		{name: "GamingMeasurement", path: "/measurements", query: "type=GamingMeasurement", want: apitest.FixtureMeasurements(30, 29, 28)},
		{name: "subjects youtube and netflix", path: "/measurements", query: "subject[]=youtube&subject[]=netflix&" + nov, want: apitest.FixtureMeasurements(5, 4, 3, 2, 1)},
		{name: "study ids", path: "/measurements", query: "study_id=nflx-default,amzn-trailer", want: apitest.FixtureMeasurements(7, 6, 5, 4)},
		{name: "client C1", path: "/measurements", query: "client_uuid=" + c["C1"], want: apitest.FixtureMeasurements(19, 7, 25, 13, 1)},
		{name: "day 3 until 10:00, space-separated", path: "/measurements", query: "start_time=2026-11-03&end_time=" + url.QueryEscape("2026-11-03 10:00:00"), want: apitest.FixtureMeasurements(23, 13, 3)},
		{name: "day 3 until 06:40 with an offset", path: "/measurements", query: "start_time=2026-11-03&end_time=" + url.QueryEscape("2026-11-03T07:40:00+01:00"), want: apitest.FixtureMeasurements(13, 3)},
		{name: "tags berlin and fiber: C1", path: "/measurements", query: "tags=berlin,fiber", want: apitest.FixtureMeasurements(19, 7, 25, 13, 1)},
		{name: "tag berlin: C1 and C2", path: "/measurements", query: "tags[]=berlin", want: apitest.FixtureMeasurements(20, 19, 8, 7, 26, 25, 14, 13, 2, 1)},
		{name: "label probe-3: C3", path: "/measurements", query: "label=probe-3", want: apitest.FixtureMeasurements(9, 27, 15, 3, 21)},
		{name: "video measurements of C1", path: "/measurements", query: "type=VideoMeasurement&client_uuid=" + c["C1"], want: apitest.FixtureMeasurements(7, 1)},
		{name: "measurement #18", path: "/measurements", query: "measurement_id=" + apitest.FixtureMeasurements(18)[0], want: apitest.FixtureMeasurements(18)},

		{name: "DNS client reports", path: "/client_reports", query: "type=DnsClientReport", want: []string{"cr-0014", "cr-0013"}},
		{name: "client report of #17", path: "/client_reports", query: "measurement_id=" + apitest.FixtureMeasurements(17)[0], want: []string{"cr-0015"}},
		{name: "client reports of C5 in November", path: "/client_reports", query: nov + "&client_uuid=" + c["C5"], want: []string{"cr-0015", "cr-0005", "cr-0011"}},

		{name: "web event bundles", path: "/event_bundles", query: "type=WebEventBundle&" + nov, want: []string{"eb-0010", "eb-0009", "eb-0008", "eb-0012", "eb-0011"}},
		{name: "event bundle of #3", path: "/event_bundles", query: "measurement_id=" + apitest.FixtureMeasurements(3)[0], want: []string{"eb-0003"}},
		{name: "video event bundles of C2", path: "/event_bundles", query: "type=VideoEventBundle&client_uuid=" + c["C2"], want: []string{"eb-0002"}},

		{name: "network requests of #9", path: "/network_requests", query: "measurement_id=" + apitest.FixtureMeasurements(9)[0], want: []string{"nr-0006", "nr-0005", "nr-0004"}},
		{name: "network requests of C2 (tag berlin)", path: "/network_requests", query: "tags=berlin&" + nov, want: []string{"nr-0003", "nr-0002", "nr-0001"}},

		{name: "ratings", path: "/user_feedbacks", query: "type=rating&" + nov, want: []string{"7002", "7001"}},
		{name: "feedback of C4", path: "/user_feedbacks", query: "client_uuid=" + c["C4"], want: []string{"7003"}},
		{name: "feedback of clients tagged fiber", path: "/user_feedbacks", query: "tags=fiber", want: []string{"7004"}},
		{name: "feedback in a window", path: "/user_feedbacks", query: "start_time=2026-11-05&end_time=2026-11-05T23:59:59Z", want: []string{"7002", "7004"}},
	})

	t.Run("paging over the 30 November measurements", func(t *testing.T) {
		r := w.get(t, "/measurements", nov+"&per_page=7&page=5")
		if got := apitest.IDs(t, r); !reflect.DeepEqual(got, apitest.FixtureMeasurements(11, 1)) {
			t.Fatalf("ids %v, want %v", got, apitest.FixtureMeasurements(11, 1))
		}
		if r.Header.Get("Total") != "30" || r.Header.Get("Per-Page") != "7" {
			t.Fatalf("Total %q Per-Page %q", r.Header.Get("Total"), r.Header.Get("Per-Page"))
		}
		links := r.Header.Get("Link")
		for _, want := range []string{`page=1&per_page=7&start_time=2026-11-01>; rel="first"`, `page=4&per_page=7&start_time=2026-11-01>; rel="prev"`,
			`page=5&per_page=7&start_time=2026-11-01>; rel="last"`} {
			if !strings.Contains(links, want) {
				t.Errorf("Link %q lacks %q", links, want)
			}
		}
		if strings.Contains(links, `rel="next"`) {
			t.Errorf("Link of the last page has next: %s", links)
		}
	})

	t.Run("user feedbacks have the spec's fields", func(t *testing.T) {
		r := w.get(t, "/user_feedbacks", nov)
		if got := apitest.IDs(t, r); !reflect.DeepEqual(got, []string{"7003", "7002", "7004", "7001"}) {
			t.Fatalf("ids %v", got)
		}
		want := []string{"client", "client_time", "client_time_skewed", "created_at", "data", "data_type", "id", "type", "updated_at"}
		byID := map[string]string{"7001": c["C3"], "7002": c["C5"], "7003": c["C4"], "7004": c["C1"]}
		for _, item := range r.JSON.([]any) {
			fb := item.(map[string]any)
			var keys []string
			for k := range fb {
				keys = append(keys, k)
			}
			if got := exportSorted(keys); !reflect.DeepEqual(got, want) {
				t.Fatalf("fields %v, want %v", got, want)
			}
			if _, isNumber := fb["id"].(json.Number); !isNumber {
				t.Errorf("id %v is not a number", fb["id"])
			}
			if fb["client"].(map[string]any)["uuid"] != byID[fmt.Sprint(fb["id"])] || fb["data_type"] != "object" {
				t.Errorf("feedback %v: %v", fb["id"], fb)
			}
		}
	})

	t.Run("network requests keep the spec's fields", func(t *testing.T) {
		r := w.get(t, "/network_requests", "measurement_id="+apitest.FixtureMeasurements(8)[0])
		apitest.IDs(t, r)
		nr := r.JSON.([]any)[2].(map[string]any) // nr-0001
		keys := func(v any) []string {
			var out []string
			for k := range v.(map[string]any) {
				out = append(out, k)
			}
			return exportSorted(out)
		}
		data := nr["data"].(map[string]any)
		resp := nr["network_response"].(map[string]any)
		for _, c := range []struct {
			what string
			got  []string
			want []string
		}{
			{"data", keys(data), []string{"documentURL", "frameId", "loaderId", "request", "requestId", "timestamp", "type", "wallTime"}},
			{"data.request", keys(data["request"]), []string{"headers", "method", "url"}},
			{"network_response", keys(resp), []string{"client_time", "client_time_skewed", "data"}},
			{"network_response.data", keys(resp["data"]), []string{"frameId", "loaderId", "requestId", "response", "timestamp", "type"}},
		} {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Errorf("%s fields %v, want %v", c.what, c.got, c.want)
			}
		}
		if nr["id"] != "nr-0001" || nr["client_time"] != "2026-11-08T13:31:59.459Z" || nr["client_time_skewed"] != "2026-11-08T13:31:59.424Z" {
			t.Errorf("nr-0001: %v", nr)
		}
		if status := resp["data"].(map[string]any)["response"].(map[string]any)["status"]; fmt.Sprint(status) != "200" {
			t.Errorf("response.status = %v", status)
		}
	})

	t.Run("clients: the fixture's six beside the world's three", func(t *testing.T) {
		r := w.get(t, "/clients", "tags=berlin")
		if r.Status != http.StatusOK || r.Header.Get("Total") != "2" {
			t.Fatalf("status %d Total %q: %s", r.Status, r.Header.Get("Total"), r.Raw)
		}
		list := r.JSON.([]any)
		if len(list) != 2 || list[0].(map[string]any)["uuid"] != c["C2"] || list[1].(map[string]any)["uuid"] != c["C1"] {
			t.Fatalf("clients %s, want C2 then C1", r.Raw)
		}
		c1 := list[1].(map[string]any)
		if c1["label"] != "probe-1" || !reflect.DeepEqual(c1["tags"], []any{"berlin", "fiber"}) || c1["type"] != "automator" ||
			c1["registration_key"] != nil || c1["disabled_at"] != nil {
			t.Fatalf("C1: %v", c1)
		}
		if r := w.get(t, "/clients", ""); r.Header.Get("Total") != "9" {
			t.Fatalf("Total %q, want 9 (3 + 6)", r.Header.Get("Total"))
		}
	})
}
