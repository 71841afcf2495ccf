package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/server"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// Red-team cover of the read surface's tenant isolation: data owners whose
// slugs are prefixes of one another (P, P+"acme", P+"acme_eu", P+"acmeeu"),
// each holding the whole testdata/ fixture set under its own client UUIDs
// but with the SAME document ids, so that a request naming an id, an index
// name or a pattern of another data owner must still read its own data only.

// rtOwner is one data owner of the red-team world.
type rtOwner struct {
	id              int64
	slug            string
	key, exportKey  string // org_admin admin key, export key
	clients         []string
	labels          []string // clients[i]'s label
	tag             string   // carried by every client (besides "common")
	scrollID        string   // of an open measurement scroll
	indexPrefix     string   // analytics-production-<slug>
	videoIndex      string
	anomalyIDSample string
}

// Fixture ids (testdata/README.md), the same for every data owner here.
const (
	rtM1      = "6a1f0c00-2026-4b11-8000-000000000001"
	rtAnomaly = "video-stalling::spike::1793687194" // status new, client C3
)

// rtFixtureDocs is 30 measurements + 16 client reports + 12 event bundles +
// 9 network requests + 4 user feedbacks + 5 anomaly events.
const rtFixtureDocs = 76

// rtNewOwner bootstraps a data owner with exactly this slug, its clients
// (labelled, tagged) and the fixture documents, an export key and an open
// scroll.
func rtNewOwner(t *testing.T, e *apitest.Env, slug string) *rtOwner {
	t.Helper()
	owner := e.NewOwnerSlug(t, slug)
	o := &rtOwner{id: owner.ID, slug: slug, key: owner.Key, tag: "tag-" + slug,
		indexPrefix: "analytics-production-" + slug, anomalyIDSample: rtAnomaly}
	o.videoIndex = o.indexPrefix + "-measurements-videomeasurement"
	for i := range apitest.FixtureClients {
		c := owner.NewClient(t, store.NewClient{Label: apitest.Ptr(fmt.Sprintf("lbl-%s-%d", slug, i+1)),
			Tags: []string{"common", o.tag}})
		o.clients, o.labels = append(o.clients, c.UUID), append(o.labels, c.Label)
	}
	e.LoadFixtureSet(t, o.id, o.clients, vocab.KindMeasurement, vocab.KindClientReport, vocab.KindEventBundle,
		vocab.KindNetworkRequest, vocab.KindUserFeedback, vocab.KindAnomalyEvent)
	ek := e.Admin(t, http.MethodPost, "/export_api_keys", o.key, map[string]any{"name": "rt"})
	if ek.Status != http.StatusCreated {
		t.Fatalf("export key: %d %s", ek.Status, ek.Raw)
	}
	o.exportKey = ek.Obj(t)["export_api_key"].(map[string]any)["api_key"].(string)
	g := e.GraphQL(t, o.key, `{ measurementSearch(body: {size: 2, sort: [{created_at: "asc"}]}, scroll: "2m") }`, nil)
	if len(g.Errors) > 0 {
		t.Fatalf("open scroll: %s", g.Raw)
	}
	o.scrollID, _ = g.Data["measurementSearch"].(map[string]any)["_scroll_id"].(string)
	if o.scrollID == "" {
		t.Fatalf("no scroll id: %s", g.Raw)
	}
	return o
}

// rtLeaks lists the marks of victim found in raw: its client UUIDs, its
// labels, its tag and its index names.
func rtLeaks(raw []byte, victim *rtOwner) []string {
	s := strings.ToLower(string(raw))
	var found []string
	for _, m := range append(append([]string{victim.indexPrefix + "-", victim.tag + `"`}, victim.clients...), victim.labels...) {
		if strings.Contains(s, strings.ToLower(m)) {
			found = append(found, m)
		}
	}
	return found
}

// rtResult is one answer: HTTP status, body, and for GraphQL the first
// error's code.
type rtResult struct {
	status int
	raw    []byte
	code   string
	json   any
}

// rtCase is one escape attempt of attacker against victim. want is "200"
// (answered, nothing of victim's in it), "400", "404", or a GraphQL error
// code. count, when not negative, is the number of hits (hits.total.value
// of an envelope, length of an array, or the value count answers).
type rtCase struct {
	name  string
	do    func(t *testing.T, e *apitest.Env, att, vic *rtOwner) rtResult
	want  string
	count func(att, vic *rtOwner) int
}

func rtREST(t *testing.T, e *apitest.Env, method, path, key string, body any) rtResult {
	t.Helper()
	r := e.Do(t, method, path, key, body)
	return rtResult{status: r.Status, raw: r.Raw, json: r.JSON}
}

func rtSearch(path string, body func(att, vic *rtOwner) any) func(*testing.T, *apitest.Env, *rtOwner, *rtOwner) rtResult {
	return func(t *testing.T, e *apitest.Env, att, vic *rtOwner) rtResult {
		return rtREST(t, e, http.MethodPost, server.AdminBase+path, att.key, body(att, vic))
	}
}

func rtMeasurementSearch(body func(att, vic *rtOwner) any) func(*testing.T, *apitest.Env, *rtOwner, *rtOwner) rtResult {
	return rtSearch("/measurements/search", func(att, vic *rtOwner) any { return map[string]any{"body": body(att, vic)} })
}

func rtExport(pathQuery func(att, vic *rtOwner) string) func(*testing.T, *apitest.Env, *rtOwner, *rtOwner) rtResult {
	return func(t *testing.T, e *apitest.Env, att, vic *rtOwner) rtResult {
		return rtREST(t, e, http.MethodGet, server.ExportBase+pathQuery(att, vic), att.exportKey, nil)
	}
}

func rtESQL(query func(att, vic *rtOwner) string) func(*testing.T, *apitest.Env, *rtOwner, *rtOwner) rtResult {
	return rtExport(func(att, vic *rtOwner) string { return "/esql?query=" + url.QueryEscape(query(att, vic)) })
}

func rtGraphQL(query string, vars func(att, vic *rtOwner) map[string]any) func(*testing.T, *apitest.Env, *rtOwner, *rtOwner) rtResult {
	return func(t *testing.T, e *apitest.Env, att, vic *rtOwner) rtResult {
		var v map[string]any
		if vars != nil {
			v = vars(att, vic)
		}
		g := e.GraphQL(t, att.key, query, v)
		return rtResult{status: g.Status, raw: g.Raw, code: g.Code()}
	}
}

func rtCount(n int) func(att, vic *rtOwner) int { return func(*rtOwner, *rtOwner) int { return n } }

// rtHits is the number of hits of an answer (see rtCase.count).
func rtHits(t *testing.T, res rtResult) int {
	t.Helper()
	switch v := res.json.(type) {
	case []any:
		return len(v)
	case map[string]any:
		if aggs, ok := v["aggregations"].(map[string]any); ok {
			if c, ok := aggs["c"].(map[string]any); ok {
				return int(apitest.Int(t, c["value"]))
			}
		}
		if hits, ok := v["hits"].(map[string]any); ok {
			if total, ok := hits["total"].(map[string]any); ok {
				return int(apitest.Int(t, total["value"]))
			}
		}
	}
	t.Fatalf("cannot count the hits of %s", res.raw)
	return 0
}

func rtCases() []rtCase {
	ms, q := rtMeasurementSearch, func(k string, v any) map[string]any { return map[string]any{"query": map[string]any{k: v}} }
	obj := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	vicDocRef := func(vic *rtOwner) map[string]any { return obj("_index", vic.videoIndex, "_id", rtM1) }
	nest := func(n int) any {
		var v any = obj("match_all", obj())
		for i := 0; i < n; i++ {
			v = obj("bool", obj("must", []any{v}))
		}
		return v
	}
	all, none := rtCount(-1), rtCount(0)
	return []rtCase{
		// Query DSL over the measurements (POST /measurements/search).
		{"DSL term _index victim's index", ms(func(a, v *rtOwner) any { return q("term", obj("_index", v.videoIndex)) }), "200", none},
		{"DSL terms _index victim's indices", ms(func(a, v *rtOwner) any {
			return q("terms", obj("_index", []any{v.videoIndex, v.indexPrefix + "-measurements"}))
		}), "200", none},
		{"DSL prefix _index victim's prefix", ms(func(a, v *rtOwner) any { return q("prefix", obj("_index", v.indexPrefix)) }), "200", all},
		{"DSL wildcard _index victim's pattern", ms(func(a, v *rtOwner) any { return q("wildcard", obj("_index", v.indexPrefix+"*")) }), "200", all},
		{"DSL query_string _index:victim", ms(func(a, v *rtOwner) any { return q("query_string", obj("query", "_index:"+v.videoIndex)) }), "200", none},
		{"DSL query_string _index:victim*", ms(func(a, v *rtOwner) any { return q("query_string", obj("query", "_index:"+v.indexPrefix+"*")) }), "200", all},
		{"DSL query_string cluster:victim*", ms(func(a, v *rtOwner) any { return q("query_string", obj("query", v.slug+":"+v.indexPrefix+"*")) }), "200", none},
		{"DSL query_string victim's client", ms(func(a, v *rtOwner) any { return q("query_string", obj("query", `client_uuid:"`+v.clients[0]+`"`)) }), "200", none},
		{"DSL terms victim's clients", ms(func(a, v *rtOwner) any { return q("terms", obj("client_uuid", v.clients)) }), "200", none},
		{"DSL terms lookup", ms(func(a, v *rtOwner) any {
			return q("terms", obj("client_uuid", obj("index", v.videoIndex, "id", rtM1, "path", "client_uuid")))
		}), "400", nil},
		{"DSL terms lookup INDEX", ms(func(a, v *rtOwner) any {
			return q("terms", obj("client_uuid", obj("INDEX", v.videoIndex, "ID", rtM1, "PATH", "client_uuid")))
		}), "400", nil},
		{"DSL more_like_this _index", ms(func(a, v *rtOwner) any {
			return q("more_like_this", obj("fields", []any{"study.subject"}, "like", []any{vicDocRef(v)}))
		}), "400", nil},
		{"DSL pinned _index", ms(func(a, v *rtOwner) any {
			return q("pinned", obj("docs", []any{vicDocRef(v)}, "organic", obj("match_all", obj())))
		}), "400", nil},
		{"DSL percolate", ms(func(a, v *rtOwner) any { return q("percolate", obj("field", "q", "index", v.videoIndex, "id", rtM1)) }), "400", nil},
		{"DSL geo_shape indexed_shape", ms(func(a, v *rtOwner) any {
			return q("geo_shape", obj("loc", obj("indexed_shape", obj("index", v.videoIndex, "id", rtM1, "path", "loc"))))
		}), "400", nil},
		{"DSL script", ms(func(a, v *rtOwner) any { return q("script", obj("script", obj("source", "true"))) }), "400", nil},
		{"DSL stored script", ms(func(a, v *rtOwner) any { return q("script", obj("script", obj("id", "s"))) }), "400", nil},
		{"DSL search template", ms(func(a, v *rtOwner) any { return obj("id", "tmpl", "params", obj("index", v.videoIndex)) }), "400", nil},
		{"DSL runtime_mappings lookup", ms(func(a, v *rtOwner) any {
			return obj("runtime_mappings", obj("x", obj("type", "lookup", "target_index", v.videoIndex,
				"input_field", "client_uuid", "target_field", "client_uuid", "fetch_fields", []any{"id"})))
		}), "400", nil},
		{"DSL top-level index", ms(func(a, v *rtOwner) any { return obj("index", v.indexPrefix+"*") }), "400", nil},
		{"DSL top-level _index", ms(func(a, v *rtOwner) any { return obj("_index", v.indexPrefix+"*") }), "400", nil},
		{"DSL pit", ms(func(a, v *rtOwner) any { return obj("pit", obj("id", v.slug, "keep_alive", "1m")) }), "400", nil},
		{"DSL indices_boost", ms(func(a, v *rtOwner) any { return obj("indices_boost", []any{obj(v.videoIndex, 2)}) }), "400", nil},
		{"DSL body string with \\u005findex", ms(func(a, v *rtOwner) any { return `{"\u005findex":"` + v.indexPrefix + `*"}` }), "400", nil},
		{"DSL body string, duplicate query key", ms(func(a, v *rtOwner) any {
			return `{"query":{"match_all":{}},"query":{"term":{"\u005findex":"` + v.videoIndex + `"}}}`
		}), "200", none},
		{"DSL agg terms _index", ms(func(a, v *rtOwner) any {
			return obj("size", 0, "aggs", obj("i", obj("terms", obj("field", "_index", "size", 100))))
		}), "200", rtCount(30)},
		{"DSL agg cardinality client_uuid", ms(func(a, v *rtOwner) any {
			return obj("size", 0, "aggs", obj("c", obj("cardinality", obj("field", "client_uuid"))))
		}), "200", rtCount(6)},
		{"DSL agg filters _index + top_hits", ms(func(a, v *rtOwner) any {
			return obj("size", 0, "aggs", obj("f", obj("filters", obj("filters", obj(
				"v", obj("term", obj("_index", v.videoIndex)), "p", obj("prefix", obj("_index", v.indexPrefix)))),
				"aggs", obj("t", obj("top_hits", obj("size", 100))))))
		}), "200", rtCount(30)},
		{"DSL sort _index, size 100", ms(func(a, v *rtOwner) any { return obj("size", 100, "sort", []any{obj("_index", "asc")}) }), "200", rtCount(30)},
		{"DSL size over the limit", ms(func(a, v *rtOwner) any { return obj("size", 10001) }), "400", nil},
		{"DSL from + size over the limit", ms(func(a, v *rtOwner) any { return obj("from", 9995, "size", 10) }), "400", nil},
		{"DSL nested 100 deep", ms(func(a, v *rtOwner) any { return obj("query", nest(100)) }), "400", nil},
		{"anomaly search, all", rtSearch("/anomaly_events/search", func(a, v *rtOwner) any {
			return obj("body", obj("size", 100))
		}), "200", rtCount(5)},
		{"anomaly search, _index of victim", rtSearch("/anomaly_events/search", func(a, v *rtOwner) any {
			return obj("body", q("term", obj("_index", v.indexPrefix+"-anomaly_events")))
		}), "200", none},

		// Documents by id: the ids are the same for every data owner.
		{"GET measurement by shared id", func(t *testing.T, e *apitest.Env, a, v *rtOwner) rtResult {
			return rtREST(t, e, http.MethodGet, server.AdminBase+"/measurements/"+rtM1, a.key, nil)
		}, "200", nil},
		{"GET P.1203 report by shared id", func(t *testing.T, e *apitest.Env, a, v *rtOwner) rtResult {
			return rtREST(t, e, http.MethodGet, server.AdminBase+"/measurements/"+rtM1+"/p1203_client_report", a.key, nil)
		}, "200", nil},
		{"GET anomaly by shared id, %3A%3A", func(t *testing.T, e *apitest.Env, a, v *rtOwner) rtResult {
			return rtREST(t, e, http.MethodGet, server.AdminBase+"/anomaly_events/"+strings.ReplaceAll(rtAnomaly, ":", "%3A"), a.key, nil)
		}, "200", nil},
		{"GET victim's client", func(t *testing.T, e *apitest.Env, a, v *rtOwner) rtResult {
			return rtREST(t, e, http.MethodGet, server.AdminBase+"/clients/"+v.clients[0], a.key, nil)
		}, "404", nil},

		// Export listings and search.
		{"export measurements, victim's client_uuid", rtExport(func(a, v *rtOwner) string {
			return "/measurements?client_uuid=" + v.clients[0]
		}), "200", none},
		{"export measurements, victim's client_uuid upper case", rtExport(func(a, v *rtOwner) string {
			return "/measurements?client_uuid=" + strings.ToUpper(v.clients[0])
		}), "200", none},
		{"export measurements, victim's tag", rtExport(func(a, v *rtOwner) string { return "/measurements?tags[]=" + v.tag + "&tags[]=common" }), "200", none},
		{"export measurements, victim's label", rtExport(func(a, v *rtOwner) string { return "/measurements?label=" + v.labels[0] }), "200", none},
		{"export clients, victim's client_uuid", rtExport(func(a, v *rtOwner) string { return "/clients?client_uuid=" + v.clients[0] }), "200", none},
		{"export clients, common tag", rtExport(func(a, v *rtOwner) string { return "/clients?tags=common" }), "200", rtCount(6)},
		{"export client reports, shared measurement_id", rtExport(func(a, v *rtOwner) string {
			return "/client_reports?measurement_id=" + rtM1
		}), "200", rtCount(1)},
		{"export search, q _index:victim", rtExport(func(a, v *rtOwner) string {
			return "/search?body=%7B%7D&q=" + url.QueryEscape("_index:"+v.videoIndex)
		}), "200", none},
		{"export search, index=victim", rtExport(func(a, v *rtOwner) string {
			return "/search?body=%7B%7D&index=" + url.QueryEscape(v.indexPrefix+"*")
		}), "400", nil},

		// ES|QL.
		{"ES|QL FROM own pattern", rtESQL(func(a, v *rtOwner) string { return "FROM " + a.indexPrefix + "* | LIMIT 1000" }), "200", rtCount(rtFixtureDocs)},
		{"ES|QL FROM victim's pattern", rtESQL(func(a, v *rtOwner) string { return "FROM " + v.indexPrefix + "* | LIMIT 1000" }), "400", nil},
		{"ES|QL FROM victim's index", rtESQL(func(a, v *rtOwner) string { return "FROM " + v.videoIndex }), "400", nil},
		{"ES|QL FROM own, victim behind a // comment", rtESQL(func(a, v *rtOwner) string {
			return "FROM " + a.indexPrefix + "* // x\n, " + v.indexPrefix + "* | LIMIT 1000"
		}), "400", nil},
		{"ES|QL FROM own, victim in a /* */ comment", rtESQL(func(a, v *rtOwner) string {
			return "FROM " + a.indexPrefix + "* /* , " + v.indexPrefix + "* */ | LIMIT 1000"
		}), "200", rtCount(rtFixtureDocs)},
		{"ES|QL FROM quoted list", rtESQL(func(a, v *rtOwner) string {
			return `FROM "` + a.indexPrefix + "*," + v.indexPrefix + `*" | LIMIT 1000`
		}), "400", nil},
		{"ES|QL FROM triple-quoted victim", rtESQL(func(a, v *rtOwner) string { return `FROM """` + v.indexPrefix + `*"""` }), "400", nil},
		{"ES|QL FROM backticked victim", rtESQL(func(a, v *rtOwner) string { return "FROM `" + v.indexPrefix + "*`" }), "400", nil},
		{"ES|QL FROM \\r separated victim", rtESQL(func(a, v *rtOwner) string {
			return "FROM " + a.indexPrefix + "*\r, " + v.indexPrefix + "* | LIMIT 1000"
		}), "400", nil},
		{"ES|QL FROM upper-case victim", rtESQL(func(a, v *rtOwner) string { return "FROM " + strings.ToUpper(v.indexPrefix) + "*" }), "400", nil},
		{"ES|QL FROM lookalike hyphen", rtESQL(func(a, v *rtOwner) string {
			return "FROM " + strings.Replace(v.indexPrefix, "-", "\u2010", 1) + "*"
		}), "400", nil},
		{"ES|QL FROM date math victim", rtESQL(func(a, v *rtOwner) string { return "FROM <" + v.indexPrefix + "-measurements-{now/d}>" }), "400", nil},
		{"ES|QL FROM remote cluster", rtESQL(func(a, v *rtOwner) string { return "FROM " + v.slug + ":" + v.indexPrefix + "*" }), "400", nil},
		{"ES|QL FROM ::failures victim", rtESQL(func(a, v *rtOwner) string {
			return "FROM " + a.indexPrefix + "*::data," + v.indexPrefix + "*::failures"
		}), "400", nil},
		{"ES|QL FROM exclusion of victim", rtESQL(func(a, v *rtOwner) string {
			return "FROM " + a.indexPrefix + "*, -" + v.indexPrefix + "* | LIMIT 1000"
		}), "400", nil},
		{"ES|QL LOOKUP JOIN victim's lookup index", rtESQL(func(a, v *rtOwner) string {
			return "FROM " + a.indexPrefix + "* | LOOKUP JOIN " + v.indexPrefix + "-lookup-clients ON client_uuid"
		}), "400", nil},
		{"ES|QL LOOKUP JOIN own lookup index", rtESQL(func(a, v *rtOwner) string {
			return "FROM " + a.indexPrefix + "-measurements | LOOKUP JOIN " + a.indexPrefix +
				"-lookup-clients ON client_uuid | KEEP client_uuid, client_label, client_tags | LIMIT 1000"
		}), "200", rtCount(30)},
		{"ES|QL METADATA _index", rtESQL(func(a, v *rtOwner) string {
			return "FROM " + a.indexPrefix + "* METADATA _index | STATS n = COUNT(*) BY _index | LIMIT 1000"
		}), "200", all},
		{"ES|QL WHERE victim's client", rtESQL(func(a, v *rtOwner) string {
			return "FROM " + a.indexPrefix + `* | WHERE client_uuid == "` + v.clients[0] + `"`
		}), "200", none},

		// GraphQL.
		{"GraphQL measurement by shared id", rtGraphQL(`query($id: ID!) { measurement(id: $id) { document client { uuid label }
			reports { document } p1203ClientReport } }`, func(a, v *rtOwner) map[string]any { return map[string]any{"id": rtM1} }), "200", nil},
		{"GraphQL anomalyEvent by shared id", rtGraphQL(`query($id: ID!) { anomalyEvent(id: $id) { document client { uuid } } }`,
			func(a, v *rtOwner) map[string]any { return map[string]any{"id": rtAnomaly} }), "200", nil},
		{"GraphQL victim's client", rtGraphQL(`query($id: ID!) { client(id: $id) { uuid measurements { edges { node { id } } } } }`,
			func(a, v *rtOwner) map[string]any { return map[string]any{"id": v.clients[0]} }), "NOT_FOUND", nil},
		{"GraphQL clients with their measurements", rtGraphQL(`{ clients { uuid label measurements(first: 100) {
			edges { cursor node { document client { uuid } } } } } }`, nil), "200", nil},
		{"GraphQL aliased searches", rtGraphQL(`query($v: JSON!) { a: measurementSearch(body: {size: 100}) b: anomalyEventSearch(body: {size: 100})
			c: measurementSearch(body: $v) }`, func(a, v *rtOwner) map[string]any {
			return map[string]any{"v": q("terms", obj("_index", []any{v.videoIndex}))}
		}), "200", nil},
		{"GraphQL victim's scroll id", rtGraphQL(`query($s: String!) { measurementSearchScroll(scrollId: $s) }`,
			func(a, v *rtOwner) map[string]any { return map[string]any{"s": v.scrollID} }), "BAD_REQUEST", nil},
	}
}

// TestSearchTenancyEscapes runs every escape attempt of rtCases for each
// data owner against one whose slug extends its own, and the other way.
func TestSearchTenancyEscapes(t *testing.T) {
	e := apitest.Get(t)
	base := "rt" + strings.ReplaceAll(uuid.NewString(), "-", "")[:8]
	p := rtNewOwner(t, e, base)
	a := rtNewOwner(t, e, base+"acme")
	b := rtNewOwner(t, e, base+"acme_eu")
	c := rtNewOwner(t, e, base+"acmeeu")
	pairs := []struct{ att, vic *rtOwner }{{a, b}, {a, c}, {p, a}, {b, a}, {c, a}}
	for _, pr := range pairs {
		for _, tc := range rtCases() {
			t.Run(pr.att.slug[len(base):]+"->"+pr.vic.slug[len(base):]+"/"+tc.name, func(t *testing.T) {
				res := tc.do(t, e, pr.att, pr.vic)
				if res.status >= 500 || bytes.Contains(res.raw, []byte("INTERNAL_SERVER_ERROR")) {
					t.Fatalf("status %d: %s", res.status, res.raw)
				}
				switch tc.want {
				case "200":
					if res.status != http.StatusOK || res.code != "" {
						t.Fatalf("status %d, code %q, want an answer: %s", res.status, res.code, res.raw)
					}
					if leaks := rtLeaks(res.raw, pr.vic); len(leaks) > 0 {
						t.Fatalf("answer holds the victim's %v: %s", leaks, res.raw)
					}
					if tc.count != nil {
						if want := tc.count(pr.att, pr.vic); want >= 0 {
							if got := rtHits(t, res); got != want {
								t.Errorf("%d hits, want %d: %s", got, want, res.raw)
							}
						}
					}
				case "400", "404":
					if fmt.Sprint(res.status) != tc.want {
						t.Fatalf("status %d, want %s: %s", res.status, tc.want, res.raw)
					}
				default:
					if res.code != tc.want {
						t.Fatalf("code %q, want %s: %s", res.code, tc.want, res.raw)
					}
				}
			})
		}
	}

	// Resolving the shared anomaly ids resolves the caller's own episodes
	// only (two of them are new): an uninvolved data owner's stay new.
	fresh := rtNewOwner(t, e, base+"acmefr")
	for _, o := range []*rtOwner{p, a, b, c} {
		r := e.Admin(t, http.MethodPatch, "/anomaly_events/resolve", o.key,
			map[string]any{"anomaly_ids": []string{rtAnomaly, strings.ToUpper(rtAnomaly), "speedtest-download::shift::1793626437"}})
		if r.Status != http.StatusOK {
			t.Fatalf("resolve by %s: %d %s", o.slug, r.Status, r.Raw)
		}
		if got := r.Obj(t); apitest.Int(t, got["updated"]) != 2 || apitest.Int(t, got["requested"]) != 3 {
			t.Errorf("resolve by %s = %v, want updated 2 (its own new episodes), requested 3", o.slug, got)
		}
	}
	for _, id := range []string{rtAnomaly, "speedtest-download::shift::1793626437"} {
		r := e.Admin(t, http.MethodGet, "/anomaly_events/"+id, fresh.key, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", id, r.Status, r.Raw)
		}
		if st := r.Obj(t)["anomaly_event"].(map[string]any)["status"]; st != "new" {
			t.Errorf("%s of an uninvolved data owner is %v after the others resolved theirs", id, st)
		}
	}
}

// TestSearchNULIsABadRequest: a NUL character (U+0000) in a search body,
// as a key or a string value, is a 400 on every search endpoint, not a 500
// (PostgreSQL cannot hold NUL in text; no document holds one).
func TestSearchNULIsABadRequest(t *testing.T) {
	e := apitest.Get(t)
	o := rtNewOwner(t, e, "rtnul"+strings.ReplaceAll(uuid.NewString(), "-", "")[:8])
	bodies := []string{
		`{"query":{"term":{"client_uuid":"a\u0000"}}}`,
		`{"query":{"term":{"_index\u0000":"x"}}}`,
		`{"query":{"ids":{"values":["a\u0000"]}}}`,
		`{"query":{"wildcard":{"study.subject":"a\u0000*"}}}`,
		`{"query":{"exists":{"field":"a\u0000"}}}`,
		`{"sort":[{"x\u0000":"asc"}]}`,
		`{"aggs":{"a":{"terms":{"field":"x\u0000"}}}}`,
	}
	for _, b := range bodies {
		for _, path := range []string{"/measurements/search", "/anomaly_events/search"} {
			r := e.Admin(t, http.MethodPost, path, o.key, `{"body":`+b+`}`)
			if r.Status != http.StatusBadRequest {
				t.Errorf("POST %s %s: %d, want 400: %s", path, b, r.Status, r.Raw)
			} else if msg, _ := r.Obj(t)["message"].(string); !strings.Contains(msg, "NUL") {
				t.Errorf("POST %s %s: message %q does not name the NUL character", path, b, msg)
			}
		}
		r := e.Do(t, http.MethodPost, server.ExportBase+"/search", o.exportKey, `{"body":`+b+`}`)
		if r.Status != http.StatusBadRequest {
			t.Errorf("POST export /search %s: %d, want 400: %s", b, r.Status, r.Raw)
		}
		var body any
		_ = json.Unmarshal([]byte(b), &body)
		g := e.GraphQL(t, o.key, `query($b: JSON!) { measurementSearch(body: $b) }`, map[string]any{"b": body})
		if g.Code() != "BAD_REQUEST" {
			t.Errorf("GraphQL measurementSearch %s: code %q, want BAD_REQUEST: %s", b, g.Code(), g.Raw)
		}
	}
	// The export search's parameters that join the body, and a scroll id
	// (no scroll id the server makes holds a NUL).
	for _, c := range []struct{ query, arg string }{
		{`query($s: String!) { exportSearch(body: {}, q: "x", df: $s) }`, "df"},
		{`query($s: JSON!) { exportSearch(body: {}, sort: $s) }`, "sort"},
		{`query($s: String!) { measurementSearchScroll(scrollId: $s) }`, "scrollId"},
	} {
		g := e.GraphQL(t, o.key, c.query, map[string]any{"s": "a\u0000:asc"})
		if g.Code() != "BAD_REQUEST" {
			t.Errorf("GraphQL %s with a NUL: code %q, want BAD_REQUEST: %s", c.arg, g.Code(), g.Raw)
		}
	}
}
