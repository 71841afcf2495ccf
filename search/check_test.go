package search

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/limits"
)

func mustJSON(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return m
}

var acceptedDSL = []string{
	`{}`,
	`{"query": {"match_all": {}}}`,
	`{"query": {"term": {"client_uuid": "c1"}}, "size": 10, "from": 0, "sort": [{"created_at": "desc"}]}`,
	`{"query": {"bool": {"filter": [{"range": {"created_at": {"gte": "now-1d"}}}, {"terms": {"type": ["VideoMeasurement"]}}]}}}`,
	`{"query": {"terms": {"study.subject.keyword": ["youtube", "netflix"]}}}`,
	`{"aggs": {"by_type": {"terms": {"field": "type.keyword"}, "aggs": {"avg": {"avg": {"field": "statistic_values.x"}}}}}}`,
	`{"aggregations": {"idx": {"terms": {"field": "_index"}}}}`,
	`{"query": {"more_like_this": {"fields": ["title"], "like": ["some text", {"_id": "1"}], "min_term_freq": 1}}}`,
	`{"query": {"match": {"index": {"query": "x"}}}}`,
	`{"query": {"term": {"index": 3}}}`,
	`{"_source": ["id", "type"], "track_total_hits": true, "search_after": [1, "x"], "highlight": {"fields": {"a": {}}}}`,
	`{"knn": {"field": "v", "query_vector": [1, 2], "k": 3, "num_candidates": 10, "filter": {"term": {"a": "b"}}}}`,
	`{"collapse": {"field": "client_uuid"}, "post_filter": {"exists": {"field": "x"}}, "min_score": 0.5}`,
	`{"query": {"geo_shape": {"loc": {"shape": {"type": "point", "coordinates": [1, 2]}}}}}`,
	`{"query": {"has_child": {"type": "c", "query": {"match_all": {}}}}}`,
	`{"rescore": {"window_size": 10, "query": {"rescore_query": {"match": {"a": "b"}}}}}`,
	`{"query": {"query_string": {"query": "_index:x AND a:b"}}}`,
	`{"query": {"match": {"description": "transcript"}}}`,
	// A document field called "index" where field names are keys.
	`{"query": {"term": {"index": "x"}}}`,
	`{"query": {"terms": {"index": ["a", "b"]}}}`,
	`{"query": {"bool": {"filter": [{"prefix": {"INDEX": "a"}}, {"term": {"index": true}}]}}}`,
	`{"sort": [{"index": "asc"}, {"created_at": {"order": "desc"}}]}`,
	`{"aggs": {"a": {"terms": {"field": "x", "order": {"index": "desc"}}, "aggs": {"index": {"max": {"field": "y"}}, "t": {"top_hits": {"sort": [{"index": "desc"}]}}}}}}`,
	// The _index metadata field in term, terms, prefix, wildcard, exists,
	// query_string, aggregations and sort: it only filters or orders the
	// indices the server chose.
	`{"query": {"term": {"_index": "analytics-production-acme-measurements-videomeasurement"}}}`,
	`{"query": {"term": {"_index": {"value": "x", "case_insensitive": true, "boost": 2}}}}`,
	`{"query": {"terms": {"_index": ["analytics-production-acme-measurements-webmeasurement", "b"], "boost": 1}}}`,
	`{"query": {"bool": {"filter": [{"prefix": {"_index": "analytics-production-acme-"}}, {"wildcard": {"_index": {"value": "*video*", "case_insensitive": false}}}]}}}`,
	`{"query": {"wildcard": {"_index": {"wildcard": "*-web*", "rewrite": "constant_score"}}}}`,
	`{"query": {"exists": {"field": "_index"}}}`,
	`{"query": {"query_string": {"query": "_index:analytics-production-acme-measurements-videomeasurement AND _exists_:_index"}}}`,
	`{"aggs": {"per_index": {"terms": {"field": "_index", "size": 10}}}}`,
	`{"sort": [{"_index": "asc"}, {"_index": {"order": "desc", "missing": "_last", "unmapped_type": "keyword"}}, "_index"]}`,
	`{"sort": {"_index": "desc"}}`,
	`{"aggs": {"t": {"terms": {"field": "x"}, "aggs": {"h": {"top_hits": {"sort": [{"_index": "asc"}]}}, "f": {"filter": {"term": {"_index": "x"}}}}}}}`,
	// A document field called "_index" inside an artificial document.
	`{"query": {"more_like_this": {"fields": ["a"], "like": [{"doc": {"term": {"_index": "x"}}}]}}}`,
}

var refusedDSL = []struct{ body, msg string }{
	{`{"query": {"terms": {"user": {"index": "other", "id": "2", "path": "followers"}}}}`, "lookups into other indices"},
	{`{"query": {"bool": {"filter": [{"terms": {"user": {"index": "analytics-production-bob-x", "id": "2", "path": "p"}}}]}}}`, "query.bool.filter[0].terms.user.index"},
	{`{"query": {"more_like_this": {"fields": ["a"], "like": [{"_index": "other", "_id": "1"}]}}}`, "references to other indices"},
	{`{"query": {"more_like_this": {"fields": ["a"], "unlike": [{"_index": "other", "_id": "1"}]}}}`, "references to other indices"},
	{`{"query": {"pinned": {"docs": [{"_index": "other", "_id": "1"}], "organic": {"match_all": {}}}}}`, "references to other indices"},
	{`{"query": {"percolate": {"field": "q", "index": "other", "id": "1"}}}`, "percolate"},
	{`{"query": {"geo_shape": {"loc": {"indexed_shape": {"index": "shapes", "id": "d", "path": "p"}}}}}`, "indexed shapes"},
	{`{"query": {"shape": {"geometry": {"indexed_shape": {"index": "shapes", "id": "d"}}}}}`, "indexed shapes"},
	{`{"pit": {"id": "abc", "keep_alive": "1m"}}`, "point in time"},
	{`{"indices_boost": [{"other": 2}]}`, "indices_boost"},
	{`{"preference": "_local"}`, "preference"},
	{`{"routing": "x"}`, "routing"},
	{`{"index": "other"}`, "the server chooses the indices"},
	{`{"_index": "other"}`, "references to other indices"},
	{`{"id": "my-search-template", "params": {"q": "x"}}`, "search templates"},
	{`{"source": "{\"query\": {{q}}}", "params": {"q": "x"}}`, "search templates"},
	{`{"query": {"script": {"script": {"id": "stored"}}}}`, "scripts are not supported"},
	{`{"query": {"script": {"script": {"source": "doc['a'].value > 1"}}}}`, "scripts are not supported"},
	{`{"query": {"bool": {"filter": {"script": {"script": "1"}}}}}`, "scripts are not supported"},
	{`{"query": {"function_score": {"functions": [{"script_score": {"script": {"id": "s"}}}]}}}`, "scripts are not supported"},
	{`{"query": {"script_score": {"query": {"match_all": {}}, "script": {"source": "1"}}}}`, "scripts are not supported"},
	{`{"sort": {"_script": {"type": "number", "script": {"id": "s"}}}}`, "scripts are not supported"},
	{`{"sort": [{"_script": {"type": "number", "script": "1"}}]}`, "scripts are not supported"},
	{`{"aggs": {"a": {"terms": {"field": "x"}, "aggs": {"b": {"avg": {"script": {"id": "s"}}}}}}}`, "aggs.a.aggs.b.avg.script"},
	{`{"aggs": {"a": {"scripted_metric": {"map_script": "x"}}}}`, "scripts are not supported"},
	{`{"aggs": {"a": {"date_histogram": {"field": "t"}, "aggs": {"s": {"bucket_selector": {"buckets_path": {}, "script": "1"}}}}}}`, "scripts are not supported"},
	{`{"aggs": {"a": {"significant_terms": {"field": "x", "script_heuristic": {}}}}}`, "scripts are not supported"},
	{`{"query": {"terms_set": {"f": {"terms": ["a"], "minimum_should_match_script": {"source": "1"}}}}}`, "scripts are not supported"},
	{`{"runtime_mappings": {"f": {"type": "keyword", "script": "emit('x')"}}}`, "runtime fields"},
	{`{"query": {"match_all": {}}, "runtime_mappings": {"f": {"type": "lookup", "target_index": "other"}}}`, "runtime fields"},
	{`{"script_fields": {"f": {"script": "1"}}}`, "scripts are not supported"},
	{`{"stored_script": {"id": "x"}}`, "stored scripts"},
	{`{"knn": {"field": "v", "k": 1, "num_candidates": 1, "query_vector_builder": {"text_embedding": {"model_id": "m", "model_text": "x"}}}}`, "query_vector_builder"},
	{`{"query": {"wrapper": {"query": "eyJ0ZXJtIjp7fX0="}}}`, "wrapper"},
	{`{"suggest": {"s": {"text": "x", "phrase": {"field": "f", "collate": {"query": {"source": "{}"}}}}}}`, "collate"},
	{`{"query": {"match_all": {}}, "retriever": {"standard": {"query": {"match_all": {}}}}}`, "top-level key"},
	{`{"ext": {}}`, "top-level key"},
	{`{"rescore": {"learning_to_rank": {"model_id": "m"}}}`, "learning_to_rank"},
	{`{"query": {"semantic": {"field": "f", "query": "x", "inference_id": "m"}}}`, "model inference"},
	{`{"query": {"bool": {"must": [{"nested": {"path": "p", "query": {"bool": {"should": [{"terms": {"f": {"index": ["a"], "id": "1"}}}]}}}}]}}}`, "lookups into other indices"},
	// A terms lookup whatever the type of its index value (older
	// Elasticsearch versions read numbers, booleans and null as names).
	{`{"query": {"terms": {"u": {"index": 3, "id": "1", "path": "p"}}}}`, "lookups into other indices"},
	{`{"query": {"terms": {"u": {"index": true, "id": "1", "path": "p"}}}}`, "lookups into other indices"},
	{`{"query": {"terms": {"u": {"index": null, "id": "1", "path": "p"}}}}`, "lookups into other indices"},
	{`{"query": {"terms": {"u": {"index": {}, "id": "1", "path": "p", "routing": "r"}}}}`, "routing"},
	// ... also on a field named like a query or sort, where field names are keys.
	{`{"query": {"terms": {"term": {"index": "other", "id": "1", "path": "p"}}}}`, "query.terms.term.index"},
	{`{"query": {"terms": {"sort": {"index": ["other"], "id": "1", "path": "p"}}}}`, "query.terms.sort.index"},
	{`{"query": {"terms": {"match": {"index": 7, "ID": "1", "path": "p"}}}}`, "lookups into other indices"},
	{`{"query": {"percolate": {"field": "q", "index": 5, "id": "1"}}}`, "percolate"},
	// At any depth: filter aggregations, top_hits, collapse, highlight, rescore, knn, post_filter, suggest.
	{`{"aggs": {"f": {"filter": {"terms": {"u": {"index": "other", "id": "1", "path": "p"}}}}}}`, "aggs.f.filter.terms.u.index"},
	{`{"aggs": {"f": {"filters": {"filters": {"a": {"more_like_this": {"like": [{"_index": "o", "_id": "1"}]}}}}}}}`, "references to other indices"},
	{`{"aggs": {"t": {"terms": {"field": "x"}, "aggs": {"h": {"top_hits": {"script_fields": {"s": {"script": "1"}}}}}}}}`, "scripts are not supported"},
	{`{"collapse": {"field": "c", "inner_hits": [{"name": "a"}, {"name": "b", "script_fields": {"s": {"script": {"id": "x"}}}}]}}`, "collapse.inner_hits[1].script_fields"},
	{`{"highlight": {"fields": {"a": {"highlight_query": {"terms": {"u": {"index": "o", "id": "1", "path": "p"}}}}}}}`, "highlight.fields.a.highlight_query"},
	{`{"rescore": [{"query": {"rescore_query": {"percolate": {"field": "q", "index": "o", "id": "1"}}}}]}`, "percolate"},
	{`{"knn": {"field": "v", "query_vector": [1], "k": 1, "num_candidates": 1, "filter": [{"terms": {"u": {"index": "o", "id": "1", "path": "p"}}}]}}`, "knn.filter[0].terms.u.index"},
	{`{"post_filter": {"geo_shape": {"l": {"indexed_shape": {"id": "1"}}}}}`, "indexed shapes"},
	{`{"suggest": {"s": {"text": "x", "term": {"field": "f"}, "collate": {"query": {"id": "t"}}}}}`, "collate"},
	{`{"query": {"rule": {"ruleset_ids": ["r"], "match_criteria": {"q": "x"}, "organic": {"match_all": {}}}}}`, "query rules"},
	{`{"query": {"function_score": {"query": {"match_all": {}}, "functions": [{"filter": {"terms": {"u": {"index": "o", "id": "1", "path": "p"}}}, "weight": 2}]}}}`, "lookups into other indices"},
	{`{"query": {"dis_max": {"queries": [{"match_all": {}}, [{"terms": {"u": {"index": "o", "id": "1", "path": "p"}}}]]}}}`, "query.dis_max.queries[1][0].terms.u.index"},
	// Escaped key names decode to the forbidden ones.
	{`{"query": {"script": {"script": "1"}}}`, "scripts are not supported"},
	{`{"query": {"terms": {"u": {"index": "o", "id": "1", "path": "p"}}}}`, "lookups into other indices"},
	{`{"query": {"Script": {"script": "1"}}}`, "scripts are not supported"},
	{`{"query": {"TERMS": {"u": {"INDEX": "other", "id": "1", "path": "p"}}}}`, "lookups into other indices"},
	{`{"Pit": {"id": "x"}}`, "point in time"},
	// _index outside the field positions of term, terms, prefix, wildcard and sort.
	{`{"query": {"term": {"_INDEX": "x"}}}`, "references to other indices"},
	{`{"query": {"Term": {"_Index": "x"}}}`, "references to other indices"},
	{`{"query": {"match": {"_index": "x"}}}`, "_index is accepted as the field of"},
	{`{"query": {"range": {"_index": {"gte": "a"}}}}`, "references to other indices"},
	{`{"query": {"span_term": {"_index": "x"}}}`, "references to other indices"},
	{`{"query": {"terms_set": {"_index": {"terms": ["a"], "minimum_should_match": 1}}}}`, "references to other indices"},
	{`{"aggs": {"a": {"terms": {"field": "x", "order": {"_index": "asc"}}}}}`, "aggs.a.terms.order._index"},
	{`{"query": {"terms": {"_index": {"index": "other", "id": "1", "path": "p"}}}}`, "references to other indices"},
	{`{"query": {"terms": {"u": {"_index": "other", "id": "1", "path": "p"}}}}`, "references to other indices"},
	{`{"query": {"terms": {"term": {"_index": "other", "id": "1", "path": "p"}}}}`, "query.terms.term._index"},
	{`{"query": {"terms": {"sort": {"_index": ["other"], "ID": "1"}}}}`, "references to other indices"},
	{`{"query": {"term": {"_index": "x", "_id": "1"}}}`, "references to other indices"},
	{`{"query": {"term": {"_index": {"value": {"index": "o"}}}}}`, "references to other indices"},
	{`{"query": {"term": {"_index": {"value": "x", "index": "o"}}}}`, "references to other indices"},
	{`{"query": {"prefix": {"_index": {"value": "x", "_index": "o"}}}}`, "references to other indices"},
	{`{"query": {"terms": {"_index": [{"index": "o", "id": "1"}]}}}`, "references to other indices"},
	{`{"query": {"terms": {"_index": [["o"]]}}}`, "references to other indices"},
	{`{"sort": [{"_index": {"order": "asc", "nested": {"path": "p"}}}]}`, "references to other indices"},
	{`{"sort": [{"_index": "asc"}], "_index": "other"}`, "references to other indices"},
	{`{"query": {"more_like_this": {"like": [{"_index": "other", "_id": "1"}], "unlike": [{"term": "x"}]}}}`, "query.more_like_this.like[0]._index"},
	{`{"query": {"pinned": {"ids": ["1"], "docs": {"_index": "o", "_id": "1"}, "organic": {"term": {"_index": "x"}}}}}`, "query.pinned.docs._index"},
	// NUL characters (PostgreSQL text holds none): a 400, not a failed statement.
	{`{"query": {"term": {"client_uuid": "a\u0000"}}}`, "the value at query.term.client_uuid contains a NUL character"},
	{`{"query": {"term": {"_index\u0000": "x"}}}`, "contains a NUL character"},
	{`{"aggs": {"a": {"terms": {"field": "f\u0000"}}}}`, "the value at aggs.a.terms.field contains a NUL"},
}

func TestCheckDSLAccepts(t *testing.T) {
	for _, b := range acceptedDSL {
		if err := CheckDSL(mustJSON(t, b)); err != nil {
			t.Errorf("CheckDSL(%s) = %v, want nil", b, err)
		}
	}
	if err := CheckDSL(nil); err != nil {
		t.Errorf("CheckDSL(nil) = %v", err)
	}
}

func TestCheckDSLRefuses(t *testing.T) {
	for _, c := range refusedDSL {
		err := CheckDSL(mustJSON(t, c.body))
		if err == nil {
			t.Errorf("CheckDSL(%s) = nil, want an error with %q", c.body, c.msg)
			continue
		}
		var bad *BadRequestError
		if !errors.As(err, &bad) || !errors.Is(err, ErrBadRequest) {
			t.Errorf("CheckDSL(%s) = %T, want *BadRequestError", c.body, err)
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("CheckDSL(%s) = %q, want it to contain %q", c.body, err, c.msg)
		}
	}
}

func TestCheckDSLLimits(t *testing.T) {
	deep := strings.Repeat(`{"bool": {"must": `, 40) + `{"match_all": {}}` + strings.Repeat(`}}`, 40)
	err := CheckDSL(mustJSON(t, `{"query": `+deep+`}`))
	if err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("deep body: %v", err)
	}
	ok := strings.Repeat(`{"bool": {"must": `, 20) + `{"match_all": {}}` + strings.Repeat(`}}`, 20)
	if err := CheckDSL(mustJSON(t, `{"query": `+ok+`}`)); err != nil {
		t.Errorf("body of depth 41: %v", err)
	}
	big := make([]any, limits.MaxDSLNodes+1)
	for i := range big {
		big[i] = 1.0
	}
	err = CheckDSL(map[string]any{"search_after": big})
	if err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("large body: %v", err)
	}
	// Values built in Go rather than decoded: foreign containers are refused.
	err = CheckDSL(map[string]any{"query": map[string]string{"script": "x"}})
	if err == nil {
		t.Error("map[string]string accepted")
	}
	if err := CheckDSL(map[string]any{"size": 10, "query": map[string]any{"ids": map[string]any{"values": []any{"a"}}}}); err != nil {
		t.Errorf("Go-built body: %v", err)
	}
}

// Duplicate keys: the decoded body keeps one value per key, and that body
// (checked) is what the backends run; the other value is gone.
func TestCheckDSLDuplicateKeys(t *testing.T) {
	b := mustJSON(t, `{"query": {"terms": {"u": {"index": "other", "id": "1", "path": "p"}}}, "query": {"match_all": {}}}`)
	if err := CheckDSL(b); err != nil {
		t.Fatalf("CheckDSL = %v", err)
	}
	out, _ := json.Marshal(b)
	if strings.Contains(string(out), "other") {
		t.Fatalf("the refused value survived decoding: %s", out)
	}
	b = mustJSON(t, `{"query": {"match_all": {}}, "query": {"terms": {"u": {"index": "other", "id": "1", "path": "p"}}}}`)
	if err := CheckDSL(b); err == nil {
		t.Fatal("the last of duplicate keys is what runs, and it was accepted")
	}
}
