package search

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetgraph/fleetgraph/limits"
)

// Query DSL check.
//
// CheckDSL walks the whole search body (query, aggregations at any depth,
// sort, highlight, rescore, suggest, knn, collapse, ...) before anything
// runs and refuses every construct that could read another index or run
// code, naming the construct and where it is. The server alone chooses the
// indices (Scope.Indices); the body must not be able to widen them.
//
// Refused at the top level: every key outside dslTopLevel. That includes pit
// (a point in time names its own indices), indices_boost, index/_index,
// preference and routing (URL parameters, never body keys; refused rather
// than ignored so nothing shard- or index-directed is forwarded),
// runtime_mappings and script_fields (scripts; lookup runtime fields read
// other indices), search templates (id, source, params), retriever, rank,
// ext and any key this check does not know.
//
// Refused at any depth (keys compared case-insensitively):
//   - every key in dslForbidden: scripts of all forms (script, _script,
//     scripted_metric, bucket_script, bucket_selector, script_score,
//     *_script, stored_script, script_heuristic), document references into
//     other indices (_index as in more_like_this like/unlike items or pinned
//     docs, indexed_shape of geo_shape/shape, percolate, target_index of
//     lookup runtime fields; for _index see the exception below), wrapper (a base64 query hides its content),
//     search templates and suggest collate (template, collate), pit,
//     indices_boost, preference, routing, runtime_mappings, model
//     inference (query_vector_builder of knn, model_id, inference_id,
//     learning_to_rank);
//   - query rules (ruleset_ids, ruleset_id: stored rules that pin documents
//     of any index);
//   - an "index" key whose value is not an object (a terms lookup
//     {"terms": {"f": {"index": ..., "id": ..., "path": ...}}}, a percolate
//     or shape document reference; older Elasticsearch versions read a
//     number, a boolean or null there as an index name too). The one
//     exception is a document field called "index" where field names are
//     keys: directly under a field-level query or sort (dslFieldContexts,
//     e.g. {"term": {"index": "x"}}, "sort": [{"index": "asc"}]) in an
//     object without "id", "path", "routing" or "type" (the keys of a
//     document reference). The object form ({"match": {"index": {"query":
//     "x"}}}) is accepted anywhere.
//
// The _index metadata field. A key "_index" is accepted in one place only:
// as the field of a term, terms (list form), prefix or wildcard query or of
// a sort key (dslIndexFieldContexts; e.g. {"term": {"_index": "x"}},
// "sort": [{"_index": "asc"}]), spelled exactly "_index", with a value that
// is a scalar, a list of scalars or an object of scalars under the options
// of those clauses (dslIndexFieldOptions), and without "id", "_id", "path",
// "routing", "type", "index", "doc", "docs", "like" or "unlike" beside it
// (the shape of a document reference). There it only filters or orders
// the documents of the indices the server chose. As a value (exists,
// query_string, the field of an aggregation) _index is not a key and needs
// no exception. Every other "_index" key (a like/unlike or pinned document,
// a lookup, the top level, "_INDEX", a match or range on _index) is refused
// as before.
//
// Inline scripts are refused as well ("scripts are not supported"), not only
// stored ones. Bodies nested deeper than MaxDSLDepth or larger than
// MaxDSLNodes values are refused, as are keys and strings holding a NUL
// character (U+0000): no document or field name holds one (PostgreSQL text
// cannot), so the answer is the same 400 on both backends. The size limits
// of limits.go (clauses, sort keys, terms values, query_string,
// aggregations) apply as well; every limit is declared in package limits.

// dslTopLevel lists the top-level keys a search body may carry.
var dslTopLevel = map[string]bool{
	"query": true, "aggs": true, "aggregations": true, "size": true, "from": true, "sort": true,
	"_source": true, "fields": true, "docvalue_fields": true, "stored_fields": true,
	"track_total_hits": true, "track_scores": true, "search_after": true, "post_filter": true,
	"highlight": true, "collapse": true, "min_score": true, "timeout": true, "terminate_after": true,
	"version": true, "seq_no_primary_term": true, "explain": true, "profile": true, "rescore": true,
	"suggest": true, "slice": true, "stats": true, "knn": true,
}

// dslForbidden maps keys refused at any depth to the reason given.
var dslForbidden = map[string]string{
	"script":                      "scripts are not supported",
	"_script":                     "scripts are not supported",
	"scripts":                     "scripts are not supported",
	"stored_script":               "stored scripts are not supported",
	"scripted_metric":             "scripts are not supported",
	"bucket_script":               "scripts are not supported",
	"bucket_selector":             "scripts are not supported",
	"script_score":                "scripts are not supported",
	"script_fields":               "scripts are not supported",
	"script_heuristic":            "scripts are not supported",
	"init_script":                 "scripts are not supported",
	"map_script":                  "scripts are not supported",
	"combine_script":              "scripts are not supported",
	"reduce_script":               "scripts are not supported",
	"minimum_should_match_script": "scripts are not supported",
	"runtime_mappings":            "runtime fields are not supported",
	"target_index":                "lookups into other indices are not supported",
	"_index":                      "references to other indices are not supported",
	"indexed_shape":               "indexed shapes (documents of other indices) are not supported",
	"percolate":                   "percolate is not supported",
	"wrapper":                     "wrapper queries are not supported",
	"template":                    "search templates are not supported",
	"collate":                     "suggest collate (a template query) is not supported",
	"pit":                         "point in time is not supported; the server chooses the indices",
	"indices_boost":               "indices_boost is not supported; the server chooses the indices",
	"preference":                  "preference is not supported",
	"routing":                     "routing is not supported",
	"_routing":                    "routing is not supported",
	"query_vector_builder":        "query_vector_builder (model inference) is not supported",
	"model_id":                    "model inference is not supported",
	"inference_id":                "model inference is not supported",
	"learning_to_rank":            "learning_to_rank (model inference) is not supported",
	"ruleset_ids":                 "query rules (stored rulesets) are not supported",
	"ruleset_id":                  "query rules (stored rulesets) are not supported",
}

// dslFieldContexts are keys whose object value has field names as keys: an
// "index" key there names a document field, not an index.
var dslFieldContexts = map[string]bool{
	"term": true, "terms": true, "match": true, "match_phrase": true, "match_phrase_prefix": true,
	"match_bool_prefix": true, "prefix": true, "wildcard": true, "regexp": true, "fuzzy": true,
	"span_term": true, "sort": true, "order": true,
}

// dslIndexFieldContexts are the keys under which "_index" may name the
// _index metadata field (see CheckDSL).
var dslIndexFieldContexts = map[string]bool{"term": true, "terms": true, "prefix": true, "wildcard": true, "sort": true}

// dslIndexFieldOptions are the keys the object value of such an _index field
// may have (options of term, prefix, wildcard and sort keys).
var dslIndexFieldOptions = map[string]bool{
	"value": true, "wildcard": true, "case_insensitive": true, "rewrite": true, "boost": true, "_name": true,
	"order": true, "missing": true, "unmapped_type": true, "mode": true, "format": true, "numeric_type": true,
}

// dslIndexFieldRefKeys are keys that, beside "_index" (and dslRefKeys), make
// an object a document reference rather than a field query or sort key.
var dslIndexFieldRefKeys = []string{"index", "_id", "doc", "docs", "like", "unlike"}

// dslRefKeys are the keys that, beside "index", make an object a reference
// to a document of some index (terms lookup, percolate, indexed shape).
var dslRefKeys = []string{"id", "path", "routing", "type"}

// CheckDSL verifies a search body; the error is a *BadRequestError.
func CheckDSL(body map[string]any) error {
	if body == nil {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(body)) {
		lk := strings.ToLower(k)
		if dslTopLevel[lk] {
			continue
		}
		if why, ok := dslForbidden[lk]; ok {
			return Badf("search body: %q is not allowed: %s", k, why)
		}
		switch lk {
		case "id", "source", "params":
			return Badf("search body: %q is not allowed: search templates are not supported", k)
		case "index", "indices":
			return Badf("search body: %q is not allowed: the server chooses the indices", k)
		}
		return Badf("search body: top-level key %q is not supported", k)
	}
	if err := checkAggs(body); err != nil {
		return err
	}
	c := dslChecker{}
	return c.walk(body, "", "", 0)
}

// dslChecker counts, while it walks a body, its values and query clauses.
type dslChecker struct{ nodes, clauses int }

// walk checks v, found under key parent ("" at the top; array elements keep
// their array's key).
func (c *dslChecker) walk(v any, path, parent string, depth int) error {
	c.nodes++
	if c.nodes > limits.MaxDSLNodes {
		return Badf("search body: more than %d values", limits.MaxDSLNodes)
	}
	if depth > limits.MaxDSLDepth {
		return Badf("search body: nested deeper than %d at %s", limits.MaxDSLDepth, pathOrRoot(path))
	}
	switch t := v.(type) {
	case string:
		if strings.IndexByte(t, 0) >= 0 {
			return Badf("search body: the value at %s contains a NUL character (\\u0000), which no document holds", pathOrRoot(path))
		}
		return nil
	case nil, bool, float64, float32, int, int64, int32, uint, uint64, uint32, json.Number:
		return nil
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			child := t[k]
			p := joinPath(path, k)
			if strings.IndexByte(k, 0) >= 0 {
				return Badf("search body: the key %q at %s contains a NUL character (\\u0000), which no field name holds", k, pathOrRoot(path))
			}
			lk := strings.ToLower(k)
			if why, ok := dslForbidden[lk]; ok && !isIndexField(t, k, child, parent) {
				if lk == "_index" {
					why += " (_index is accepted as the field of a term, terms, prefix, wildcard or exists query, " +
						"a query_string, an aggregation or a sort)"
				}
				return Badf("search body: %q at %s is not allowed: %s", k, p, why)
			}
			if lk == "index" && isIndexRef(t, child, parent) {
				return Badf("search body: %q at %s is not allowed: lookups into other indices (terms lookup, document references) are not supported", k, p)
			}
			if err := c.checkSizes(parent, lk, child); err != nil {
				return err
			}
			if err := c.walk(child, p, lk, depth+1); err != nil {
				return err
			}
		}
		return nil
	case []any:
		for i, child := range t {
			if err := c.walk(child, path+"["+strconv.Itoa(i)+"]", parent, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	// Values built in Go rather than decoded from JSON.
	switch reflect.ValueOf(v).Kind() {
	case reflect.Map, reflect.Slice, reflect.Array, reflect.Struct, reflect.Pointer, reflect.Interface,
		reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return Badf("search body: unsupported value at %s", pathOrRoot(path))
	}
	return nil
}

// isIndexField reports whether the key k of obj (found under key parent),
// whose value is v, is the _index metadata field of a term, terms, prefix,
// wildcard query or a sort key (see CheckDSL).
func isIndexField(obj map[string]any, k string, v any, parent string) bool {
	if k != "_index" || !dslIndexFieldContexts[parent] {
		return false
	}
	for k2 := range obj {
		if l := strings.ToLower(k2); slices.Contains(dslIndexFieldRefKeys, l) || slices.Contains(dslRefKeys, l) {
			return false
		}
	}
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			if !isScalar(e) {
				return false
			}
		}
		return true
	case map[string]any:
		for ok, ov := range t {
			if !dslIndexFieldOptions[ok] || !isScalar(ov) {
				return false
			}
		}
		return true
	}
	return isScalar(v)
}

// isScalar reports whether v is a JSON string, number, boolean or null.
func isScalar(v any) bool {
	switch v.(type) {
	case nil, string, bool, float64, json.Number:
		return true
	}
	return false
}

// isIndexRef reports whether the "index" key of obj (found under key
// parent), whose value is v, may name an index.
func isIndexRef(obj map[string]any, v any, parent string) bool {
	if _, ok := v.(map[string]any); ok {
		return false
	}
	if !dslFieldContexts[parent] {
		return true
	}
	for k := range obj {
		if slices.Contains(dslRefKeys, strings.ToLower(k)) {
			return true
		}
	}
	return false
}

func joinPath(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func pathOrRoot(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}
