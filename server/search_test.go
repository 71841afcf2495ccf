package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/model"
)

// srchWorld is a data owner with measurements, client reports and anomaly
// events, and a second data owner with documents of its own.
type srchWorld struct {
	e              *apitest.Env
	o, other       *apitest.Owner
	viewer, editor string // keys of a viewer and an editor of o
	client         string // UUID of o's client
	otherClient    string
	dnsCount       int // NetworkMeasurement documents of o
}

var srchBase = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)

func srchMeasurement(id, client, typ, subject string, minutes int, stats map[string]any) map[string]any {
	return map[string]any{"id": id, "client_uuid": client, "type": typ,
		"created_at": srchBase.Add(time.Duration(minutes) * time.Minute).Format(time.RFC3339),
		"study":      map[string]any{"subject": subject, "study_id": "study-" + subject}, "statistic_values": stats}
}

func srchReport(id, client, typ, measurement string) map[string]any {
	return map[string]any{"id": id, "client_uuid": client, "type": typ, "measurement_id": measurement,
		"created_at": srchBase.Format(time.RFC3339), "score": 4.5}
}

func newSrchWorld(t *testing.T, prefix string) *srchWorld {
	t.Helper()
	e := apitest.Get(t)
	w := &srchWorld{e: e, o: e.NewOwner(t, prefix), other: e.NewOwner(t, prefix+"-other"),
		client: uuid.NewString(), otherClient: uuid.NewString(), dnsCount: 25}
	w.viewer, _ = w.o.NewKey(t, apitest.KeyOpts{UserRole: model.RoleViewer})
	w.editor, _ = w.o.NewKey(t, apitest.KeyOpts{UserRole: model.RoleEditor})
	docs := []map[string]any{
		srchMeasurement("m-video-1", w.client, "VideoMeasurement", "youtube", 1, map[string]any{"bitrate": 3000, "stalls": 0}),
		srchMeasurement("m-web-1", w.client, "WebMeasurement", "website", 2, map[string]any{"ttfb": 120}),
		srchMeasurement("m-video-2", w.client, "VideoMeasurement", "netflix", 3, map[string]any{"bitrate": 5000, "startup_time": 1.5}),
	}
	for i := 0; i < w.dnsCount; i++ {
		docs = append(docs, srchMeasurement(fmt.Sprintf("m-dns-%02d", i), w.client, "NetworkMeasurement", "dns", 10+i,
			map[string]any{"lookup_ms": i}))
	}
	w.o.InsertDocuments(t, "measurement", docs...)
	w.o.InsertDocuments(t, "client_report",
		srchReport("r-p1203", w.client, "P1203ClientReport", "m-video-1"),
		srchReport("r-perf", w.client, "PerformanceClientReport", "m-video-1"),
		srchReport("r-lvp", w.client, "LightweightVideoPlayerPerformanceReport", "m-video-1"),
		srchReport("r-icmp", w.client, "IcmpPingClientReport", "m-video-1"))
	w.other.InsertDocuments(t, "measurement",
		srchMeasurement("m-secret", w.otherClient, "GamingMeasurement", "secret_subject", 1, map[string]any{"secret_metric": 1}))
	w.other.InsertDocuments(t, "client_report", srchReport("r-secret", w.otherClient, "P1203ClientReport", "m-secret"))
	return w
}

// srchPost posts a search and answers the response.
func (w *srchWorld) post(t *testing.T, path, key string, body any) *apitest.Response {
	t.Helper()
	return w.e.Admin(t, http.MethodPost, path, key, body)
}

// srchHitIDs checks the envelope shape and lists the hits' _id values.
func srchHitIDs(t *testing.T, r *apitest.Response) []string {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Raw)
	}
	env := r.Obj(t)
	for _, k := range []string{"took", "timed_out", "_shards", "hits"} {
		if _, ok := env[k]; !ok {
			t.Errorf("envelope lacks %q: %s", k, r.Raw)
		}
	}
	hits, _ := env["hits"].(map[string]any)
	if _, ok := hits["total"]; !ok {
		t.Errorf("hits lacks total: %s", r.Raw)
	}
	list, _ := hits["hits"].([]any)
	ids := []string{}
	for _, h := range list {
		hit := h.(map[string]any)
		for _, k := range []string{"_index", "_id", "_source"} {
			if _, ok := hit[k]; !ok {
				t.Errorf("hit lacks %q: %v", k, hit)
			}
		}
		ids = append(ids, fmt.Sprint(hit["_id"]))
	}
	return ids
}

var srchAll = map[string]any{"query": map[string]any{"match_all": map[string]any{}}, "size": 100}

func TestMeasurementSearchEnvelopeAndScope(t *testing.T) {
	w := newSrchWorld(t, "srch-env")
	r := w.post(t, "/measurements/search", w.o.Key, map[string]any{"body": srchAll})
	ids := srchHitIDs(t, r)
	if len(ids) != 3+w.dnsCount {
		t.Fatalf("got %d hits, want %d: %v", len(ids), 3+w.dnsCount, ids)
	}
	for _, id := range ids {
		if id == "m-secret" || strings.HasPrefix(id, "r-") {
			t.Errorf("hit %q is not one of the owner's measurements", id)
		}
	}
	if _, ok := r.Obj(t)["_scroll_id"]; ok {
		t.Errorf("_scroll_id without scroll: %s", r.Raw)
	}
	if _, ok := r.Obj(t)["aggregations"]; ok {
		t.Errorf("aggregations without aggs: %s", r.Raw)
	}

	t.Run("body as a JSON string", func(t *testing.T) {
		raw, _ := json.Marshal(srchAll)
		got := srchHitIDs(t, w.post(t, "/measurements/search", w.o.Key, map[string]any{"body": string(raw)}))
		if len(got) != len(ids) {
			t.Errorf("string body: %d hits, object body: %d", len(got), len(ids))
		}
	})
	t.Run("viewer can search", func(t *testing.T) {
		srchHitIDs(t, w.post(t, "/measurements/search", w.viewer, map[string]any{"body": srchAll}))
	})
	t.Run("other owner sees only its own", func(t *testing.T) {
		got := srchHitIDs(t, w.post(t, "/measurements/search", w.other.Key, map[string]any{"body": srchAll}))
		if len(got) != 1 || got[0] != "m-secret" {
			t.Errorf("other owner's hits = %v", got)
		}
	})
}

func TestMeasurementSearchOptions(t *testing.T) {
	w := newSrchWorld(t, "srch-opt")
	t.Run("index_scope restricts to one type", func(t *testing.T) {
		r := w.post(t, "/measurements/search", w.o.Key, map[string]any{"body": srchAll, "index_scope": "video"})
		got := srchHitIDs(t, r)
		sort.Strings(got)
		if strings.Join(got, ",") != "m-video-1,m-video-2" {
			t.Errorf("video hits = %v", got)
		}
	})
	t.Run("source_only answers the documents", func(t *testing.T) {
		r := w.post(t, "/measurements/search", w.o.Key, map[string]any{"body": srchAll, "index_scope": "web", "source_only": true})
		list, ok := r.JSON.([]any)
		if r.Status != http.StatusOK || !ok || len(list) != 1 {
			t.Fatalf("source_only: %d %s", r.Status, r.Raw)
		}
		doc := list[0].(map[string]any)
		if doc["id"] != "m-web-1" || doc["type"] != "WebMeasurement" {
			t.Errorf("source document = %v", doc)
		}
	})
	t.Run("size defaults to 10", func(t *testing.T) {
		body := map[string]any{"query": map[string]any{"match_all": map[string]any{}}}
		if got := srchHitIDs(t, w.post(t, "/measurements/search", w.o.Key, map[string]any{"body": body})); len(got) != 10 {
			t.Errorf("default size gave %d hits", len(got))
		}
	})
	t.Run("top-level size and from win over body", func(t *testing.T) {
		body := map[string]any{"query": map[string]any{"match_all": map[string]any{}}, "size": 50,
			"sort": []any{map[string]any{"created_at": "asc"}}}
		got := srchHitIDs(t, w.post(t, "/measurements/search", w.o.Key, map[string]any{"body": body, "size": 2, "from": 1}))
		if strings.Join(got, ",") != "m-web-1,m-video-2" {
			t.Errorf("size 2 from 1 = %v", got)
		}
	})
	t.Run("search_after pages on the sort", func(t *testing.T) {
		body := map[string]any{"query": map[string]any{"match_all": map[string]any{}},
			"sort": []any{map[string]any{"created_at": "asc"}, map[string]any{"_id": "asc"}}}
		r := w.post(t, "/measurements/search", w.o.Key, map[string]any{"body": body, "size": 2})
		first := srchHitIDs(t, r)
		hits := r.Obj(t)["hits"].(map[string]any)["hits"].([]any)
		last := hits[len(hits)-1].(map[string]any)["sort"]
		got := srchHitIDs(t, w.post(t, "/measurements/search", w.o.Key, map[string]any{"body": body, "size": 2, "search_after": last}))
		if strings.Join(first, ",") != "m-video-1,m-web-1" || len(got) != 2 || got[0] != "m-video-2" {
			t.Errorf("pages %v then %v", first, got)
		}
	})
}

func TestMeasurementSearchRejections(t *testing.T) {
	w := newSrchWorld(t, "srch-rej")
	cases := []struct {
		name    string
		body    any
		mention string
	}{
		{"unknown index_scope", map[string]any{"body": srchAll, "index_scope": "radio"}, "index_scope"},
		{"unknown top-level property", map[string]any{"body": srchAll, "index": "analytics-production-x-measurements"}, "index"},
		{"body missing", map[string]any{"size": 1}, "body"},
		{"body not JSON", map[string]any{"body": "{not json"}, "body"},
		{"body a number", map[string]any{"body": 42}, "body"},
		{"size over the maximum", map[string]any{"body": srchAll, "size": 10001}, "size"},
		{"size in body over the maximum", map[string]any{"body": map[string]any{"size": 20000}}, "size"},
		{"size not an integer", map[string]any{"body": srchAll, "size": "ten"}, "size"},
		{"negative from", map[string]any{"body": srchAll, "from": -1}, "from"},
		{"search_after not an array", map[string]any{"body": srchAll, "search_after": "x"}, "search_after"},
		{"scroll over 5m", map[string]any{"body": srchAll, "scroll": "10m"}, "scroll"},
		{"scroll not a time", map[string]any{"body": srchAll, "scroll": "soon"}, "scroll"},
		{"unsupported query clause", map[string]any{"body": map[string]any{"query": map[string]any{"no_such_query": map[string]any{}}}}, "no_such_query"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			apitest.Want400(t, w.post(t, "/measurements/search", w.o.Key, c.body), c.mention)
		})
	}
	t.Run("malformed JSON", func(t *testing.T) {
		apitest.Want400(t, w.post(t, "/measurements/search", w.o.Key, `{"body": `), "JSON")
	})
	t.Run("no key", func(t *testing.T) {
		if r := w.post(t, "/measurements/search", "", map[string]any{"body": srchAll}); r.Status != http.StatusUnauthorized {
			t.Errorf("status %d, want 401", r.Status)
		}
	})
}

func TestMeasurementSearchScrollStreamsNDJSON(t *testing.T) {
	w := newSrchWorld(t, "srch-scroll")
	body := map[string]any{"query": map[string]any{"match_all": map[string]any{}}, "size": 10}
	r := w.post(t, "/measurements/search", w.viewer, map[string]any{"body": body, "scroll": "1m"})
	if r.Status != http.StatusOK {
		t.Fatalf("scroll: %d %s", r.Status, r.Raw)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-ndjson") {
		t.Errorf("content type %q", ct)
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(r.Raw))
	for sc.Scan() {
		var doc map[string]any
		if err := json.Unmarshal(sc.Bytes(), &doc); err != nil {
			t.Fatalf("line %q is not a JSON object: %v", sc.Text(), err)
		}
		id := fmt.Sprint(doc["id"])
		if seen[id] {
			t.Errorf("document %s streamed twice", id)
		}
		seen[id] = true
	}
	if len(seen) != 3+w.dnsCount || seen["m-secret"] {
		t.Errorf("streamed %d documents (want %d, all the owner's): %v", len(seen), 3+w.dnsCount, seen)
	}

	t.Run("index_scope and source_only apply to the stream", func(t *testing.T) {
		r := w.post(t, "/measurements/search", w.o.Key, map[string]any{"body": body, "scroll": "30s",
			"index_scope": "network", "source_only": true})
		if lines := strings.Count(string(r.Raw), "\n"); r.Status != http.StatusOK || lines != w.dnsCount {
			t.Errorf("network scroll: %d, %d lines", r.Status, lines)
		}
	})
	t.Run("graphql scroll hands out a scroll id", func(t *testing.T) {
		g := w.e.GraphQL(t, w.o.Key, `query($b: JSON!) { measurementSearch(body: $b, size: 20, scroll: "1m") }`,
			map[string]any{"b": body})
		env, _ := g.Data["measurementSearch"].(map[string]any)
		id, _ := env["_scroll_id"].(string)
		if len(g.Errors) > 0 || id == "" {
			t.Fatalf("measurementSearch with scroll: %s", g.Raw)
		}
		g = w.e.GraphQL(t, w.o.Key, `query($id: String!) { measurementSearchScroll(scrollId: $id, scroll: "1m", sourceOnly: true) }`,
			map[string]any{"id": id})
		if list, _ := g.Data["measurementSearchScroll"].([]any); len(g.Errors) > 0 || len(list) != 3+w.dnsCount-20 {
			t.Errorf("second page: %s", g.Raw)
		}
		g = w.e.GraphQL(t, w.other.Key, `query($id: String!) { measurementSearchScroll(scrollId: $id) }`, map[string]any{"id": id})
		if g.Code() != "BAD_REQUEST" {
			t.Errorf("another owner continued the scroll: %s", g.Raw)
		}
	})
}

func TestMeasurementDocuments(t *testing.T) {
	w := newSrchWorld(t, "srch-doc")
	r := w.e.Admin(t, http.MethodGet, "/measurements/m-video-1", w.viewer, nil)
	if r.Status != http.StatusOK || r.Obj(t)["id"] != "m-video-1" || r.Obj(t)["type"] != "VideoMeasurement" {
		t.Fatalf("GET measurement: %d %s", r.Status, r.Raw)
	}
	reports := map[string]string{"p1203_client_report": "r-p1203", "network_performance_report": "r-perf",
		"lightweight_video_player_performance_report": "r-lvp"}
	for path, id := range reports {
		t.Run(path, func(t *testing.T) {
			r := w.e.Admin(t, http.MethodGet, "/measurements/m-video-1/"+path, w.o.Key, nil)
			if r.Status != http.StatusOK || r.Obj(t)["id"] != id {
				t.Errorf("%s: %d %s", path, r.Status, r.Raw)
			}
			if r := w.e.Admin(t, http.MethodGet, "/measurements/m-web-1/"+path, w.o.Key, nil); r.Status != http.StatusNotFound {
				t.Errorf("%s of a measurement without one: %d %s", path, r.Status, r.Raw)
			}
		})
	}
	for _, path := range []string{"/measurements/m-secret", "/measurements/m-secret/p1203_client_report", "/measurements/nope"} {
		if r := w.e.Admin(t, http.MethodGet, path, w.o.Key, nil); r.Status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, r.Status)
		}
	}
}

func TestMeasurementGraph(t *testing.T) {
	w := newSrchWorld(t, "srch-graph")
	g := w.e.GraphQL(t, w.viewer, `{ measurement(id: "m-video-1") { id document client { uuid }
		reports { id type } p1203ClientReport networkPerformanceReport lightweightVideoPlayerPerformanceReport } }`, nil)
	m, _ := g.Data["measurement"].(map[string]any)
	if len(g.Errors) > 0 || m == nil {
		t.Fatalf("measurement: %s", g.Raw)
	}
	if m["client"].(map[string]any)["uuid"] != w.client || len(m["reports"].([]any)) != 4 {
		t.Errorf("measurement = %v", m)
	}
	if m["p1203ClientReport"].(map[string]any)["id"] != "r-p1203" || m["lightweightVideoPlayerPerformanceReport"] == nil {
		t.Errorf("reports by type = %v", m)
	}
	if g := w.e.GraphQL(t, w.o.Key, `{ measurement(id: "m-secret") { id } }`, nil); g.Code() != "NOT_FOUND" {
		t.Errorf("other owner's measurement: %s", g.Raw)
	}

	t.Run("client measurements page newest first", func(t *testing.T) {
		const q = `query($id: ID!, $after: String) { client(id: $id) { measurements(first: 2, after: $after,
			filter: {type: "VideoMeasurement"}) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } } } }`
		page := func(after any) (ids []string, next bool, end any) {
			g := w.e.GraphQL(t, w.o.Key, q, map[string]any{"id": w.client, "after": after})
			if len(g.Errors) > 0 {
				t.Fatalf("measurements: %s", g.Raw)
			}
			conn := g.Data["client"].(map[string]any)["measurements"].(map[string]any)
			for _, e := range conn["edges"].([]any) {
				ids = append(ids, e.(map[string]any)["node"].(map[string]any)["id"].(string))
			}
			pi := conn["pageInfo"].(map[string]any)
			return ids, pi["hasNextPage"].(bool), pi["endCursor"]
		}
		ids, next, _ := page(nil)
		if strings.Join(ids, ",") != "m-video-2,m-video-1" || next {
			t.Errorf("first page %v next=%v", ids, next)
		}
		q1 := strings.Replace(q, "first: 2", "first: 1", 1)
		g := w.e.GraphQL(t, w.o.Key, q1, map[string]any{"id": w.client})
		conn := g.Data["client"].(map[string]any)["measurements"].(map[string]any)
		end := conn["pageInfo"].(map[string]any)["endCursor"]
		if !conn["pageInfo"].(map[string]any)["hasNextPage"].(bool) {
			t.Errorf("first: 1 of 2 has no next page: %s", g.Raw)
		}
		if ids, _, _ := page(end); strings.Join(ids, ",") != "m-video-1" {
			t.Errorf("after cursor: %v", ids)
		}
	})
	t.Run("first is capped at 100", func(t *testing.T) {
		g := w.e.GraphQL(t, w.o.Key, `query($id: ID!) { client(id: $id) { measurements(first: 101) { edges { cursor } } } }`,
			map[string]any{"id": w.client})
		if g.Code() != "BAD_USER_INPUT" {
			t.Errorf("first 101: %s", g.Raw)
		}
	})
	t.Run("graphql search and roles", func(t *testing.T) {
		g := w.e.GraphQL(t, w.viewer, `{ measurementSearch(body: "{\"query\":{\"match_all\":{}}}", indexScope: "web", sourceOnly: true) }`, nil)
		if list, _ := g.Data["measurementSearch"].([]any); len(g.Errors) > 0 || len(list) != 1 {
			t.Errorf("measurementSearch: %s", g.Raw)
		}
		g = w.e.GraphQL(t, w.viewer, `{ measurementSearch(body: {}, indexScope: "tv") }`, nil)
		if g.Code() != "BAD_REQUEST" {
			t.Errorf("unknown indexScope: %s", g.Raw)
		}
	})
}

// srchFixture stores a measurement with a report of each kind for owner o
// and answers the measurement's id.
func srchFixture(t *testing.T, e *apitest.Env, o *apitest.Owner) string {
	t.Helper()
	client, id := uuid.NewString(), apitest.Unique("m-fixture")
	o.InsertDocuments(t, "measurement", srchMeasurement(id, client, "VideoMeasurement", "youtube", 1, map[string]any{"bitrate": 1}))
	o.InsertDocuments(t, "client_report", srchReport(id+"-p1203", client, "P1203ClientReport", id),
		srchReport(id+"-perf", client, "PerformanceClientReport", id),
		srchReport(id+"-lvp", client, "LightweightVideoPlayerPerformanceReport", id))
	return id
}

// The measurement routes in the spec walk and the role matrix.
func init() {
	search := func(t *testing.T, w *specWorld) (string, any) {
		srchFixture(t, w.e, w.o)
		return "/measurements/search", map[string]any{"body": srchAll}
	}
	specRoutes["POST /measurements/search"] = specRoute{"measurement search answers the search envelope", 200, search,
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			if ids := srchHitIDs(t, r); len(ids) == 0 {
				t.Errorf("no hits: %s", r.Raw)
			}
		}}
	doc := func(suffix, wantID string) specRoute {
		return specRoute{"measurement document " + suffix, 200,
			func(t *testing.T, w *specWorld) (string, any) {
				w.passed = srchFixture(t, w.e, w.o)
				return "/measurements/" + w.passed + suffix, nil
			},
			func(t *testing.T, w *specWorld, r *apitest.Response) {
				if got := r.Obj(t)["id"]; got != w.passed+wantID {
					t.Errorf("document id %v, want %s", got, w.passed+wantID)
				}
			}}
	}
	specRoutes["GET /measurements/{id}"] = doc("", "")
	specRoutes["GET /measurements/{id}/p1203_client_report"] = doc("/p1203_client_report", "-p1203")
	specRoutes["GET /measurements/{id}/network_performance_report"] = doc("/network_performance_report", "-perf")
	specRoutes["GET /measurements/{id}/lightweight_video_player_performance_report"] = doc("/lightweight_video_player_performance_report", "-lvp")

	viewer := func(action, suffix string) rolesCell {
		return rolesCell{action, model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
			return rolesCall{path: "/measurements/" + srchFixture(t, f.e, f.o) + suffix}
		}}
	}
	rolesMatrix["POST /measurements/search"] = rolesCell{"search measurements", model.RoleViewer,
		func(t *testing.T, f *rolesFixture) rolesCall {
			return rolesCall{path: "/measurements/search", body: map[string]any{"body": srchAll}}
		}}
	rolesMatrix["GET /measurements/{id}"] = viewer("read a measurement", "")
	rolesMatrix["GET /measurements/{id}/p1203_client_report"] = viewer("read a P.1203 report", "/p1203_client_report")
	rolesMatrix["GET /measurements/{id}/network_performance_report"] = viewer("read a network performance report", "/network_performance_report")
	rolesMatrix["GET /measurements/{id}/lightweight_video_player_performance_report"] = viewer("read a video player report",
		"/lightweight_video_player_performance_report")
}

// TestMeasurementSearchPricedBeforeItRuns: the probe's query_string of
// 1,990 OR'ed terms on every field (inside the length limit, 14 s of
// PostgreSQL on 31 documents) is priced before it runs and refused with a
// fast 400 naming the limit, REST and GraphQL; a query at the limit, and
// a few terms as before, still answer their hits.
func TestMeasurementSearchPricedBeforeItRuns(t *testing.T) {
	w := newSrchWorld(t, "srch-price")
	terms := func(n int) string {
		out := make([]string, n)
		for i := range out {
			out[i] = string(rune('a'+i/26%26)) + string(rune('a'+i%26)) // aa ab ... two letters, OR'ed (the default)
		}
		return strings.Join(out, " ")
	}
	qs := func(q string) map[string]any {
		return map[string]any{"body": map[string]any{"query": map[string]any{"query_string": map[string]any{"query": q}}, "size": 100}}
	}
	attack := terms(1990)
	if len(attack) > limits.MaxQueryStringLength {
		t.Fatalf("the attack's %d bytes are over MaxQueryStringLength: it would be refused for its length", len(attack))
	}
	start := time.Now()
	apitest.Want400(t, w.post(t, "/measurements/search", w.o.Key, qs(attack)), "MaxQueryPatterns")
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("refused after %s, want at once", took)
	}
	g, gerr := w.e.GraphQLFail(t, w.o.Key, `query($b: JSON!) { measurementSearch(body: $b) }`,
		map[string]any{"b": qs(attack)["body"]})
	if g.Code() != "BAD_REQUEST" || !strings.Contains(gerr.Message, "MaxQueryPatterns") {
		t.Errorf("GraphQL: %s", g.Raw)
	}

	atLimit := terms(limits.MaxQueryPatterns / limits.AllFieldsPatterns)
	srchHitIDs(t, w.post(t, "/measurements/search", w.o.Key, qs(atLimit)))
	apitest.Want400(t, w.post(t, "/measurements/search", w.o.Key, qs(atLimit+" zz")), "MaxQueryPatterns")
	named := map[string]any{"body": map[string]any{"size": 100, "query": map[string]any{"query_string": map[string]any{
		"query": atLimit + " youtube", "default_field": "study.subject"}}}}
	if ids := srchHitIDs(t, w.post(t, "/measurements/search", w.o.Key, named)); len(ids) != 1 || ids[0] != "m-video-1" {
		t.Errorf("the same terms on one field: %v, want m-video-1", ids)
	}
	if ids := srchHitIDs(t, w.post(t, "/measurements/search", w.o.Key, qs("youtube OR netflix"))); len(ids) != 2 {
		t.Errorf("two terms on every field: %v, want the two video measurements", ids)
	}
}
