package export

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/search"
)

// Search parameters of the export API's /search besides body: the Lucene
// query string and its options, and the search parameters merged into the
// body. Parameters that choose indices are refused: the server alone picks
// the data owner's measurement indices.
var (
	queryStringParams = map[string]string{"q": "query", "df": "default_field", "default_operator": "default_operator",
		"analyzer": "analyzer", "lenient": "lenient", "analyze_wildcard": "analyze_wildcard"}
	indexParams = map[string]bool{"index": true, "indices": true, "allow_no_indices": true, "expand_wildcards": true,
		"ignore_unavailable": true, "ignore_throttled": true, "routing": true, "preference": true, "ccs_minimize_roundtrips": true}
	// Parameters that Elasticsearch also takes in the body: merged into it
	// (winning over the body's own), where the backend answers them or
	// refuses them by name as it does in a body.
	bodyBoolParams = map[string]bool{"version": true, "seq_no_primary_term": true, "track_scores": true, "explain": true}
	bodyListParams = map[string]bool{"stored_fields": true, "docvalue_fields": true, "stats": true}
	// Execution hints and output options that change no result: checked,
	// then without effect here (human and error_trace, like pretty, only
	// change how Elasticsearch prints).
	hintBoolParams = map[string]bool{"request_cache": true, "allow_partial_search_results": true,
		"human": true, "error_trace": true, "pretty": true}
	hintIntParams = map[string]bool{"batched_reduce_size": true, "max_concurrent_shard_requests": true,
		"pre_filter_shard_size": true}
)

// SearchArgs are the parsed arguments of the export API's /search.
type SearchArgs struct {
	search.Args
	// TotalAsInt: rest_total_hits_as_int, hits.total as a number.
	TotalAsInt bool
}

// ParseSearch reads the export API's search request object: body
// (object or JSON string) next to search parameters, which arrive as JSON
// values (POST) or strings (GET query parameters).
func ParseSearch(v any) (SearchArgs, error) {
	var a SearchArgs
	obj, ok := v.(map[string]any)
	if !ok {
		return a, apierr.BadRequestf("the search request must be a JSON object")
	}
	body, qs, top := any(nil), map[string]any{}, map[string]any{}
	for key, val := range obj {
		var err error
		switch {
		case key == "body":
			body = val
		case queryStringParams[key] != "":
			qs[queryStringParams[key]], err = queryStringValue(key, val)
		case key == "size" || key == "from":
			var n int64
			if n, err = intParam(key, val); key == "size" {
				a.Size = &n
			} else {
				a.From = &n
			}
		case key == "scroll":
			s, isString := val.(string)
			if !isString {
				return a, apierr.BadRequestf("scroll must be a time such as 1m")
			}
			a.Scroll = &s
		case key == "source_only" || key == "sourceOnly":
			var b bool
			b, err = boolParam(key, val)
			a.SourceOnly = &b
		case key == "search_after":
			var sa any
			sa, err = jsonParam(key, val)
			a.SearchAfter = &model.JSON{Value: sa}
		case key == "sort":
			top["sort"], err = sortParam(val)
		case key == "_source":
			top["_source"], err = sourceParam(val)
		case key == "_source_includes" || key == "_source_excludes":
			top[key], err = listParam(key, val)
		case key == "track_total_hits":
			top[key], err = trackTotalHits(val)
		case bodyBoolParams[key]:
			top[key], err = boolParam(key, val)
		case key == "stored_fields" && val == "_none_":
			top[key] = val // no stored fields and no _source
		case bodyListParams[key]:
			top[key], err = listParam(key, val)
		case key == "timeout":
			s, isString := val.(string)
			if !isString || strings.TrimSpace(s) == "" {
				return a, apierr.BadRequestf("timeout must be a time such as 30s")
			}
			top[key] = s
		case key == "terminate_after":
			var n int64
			if n, err = intParam(key, val); err == nil && n < 0 {
				err = apierr.BadRequestf("terminate_after must not be negative")
			}
			top[key] = n
		case hintBoolParams[key]:
			if val != "" { // ?pretty: a flag without a value
				_, err = boolParam(key, val)
			}
		case hintIntParams[key]:
			var n int64
			if n, err = intParam(key, val); err == nil && n < 1 {
				err = apierr.BadRequestf("%s must be 1 or more", key)
			}
		case key == "search_type":
			if val != "query_then_fetch" && val != "dfs_query_then_fetch" {
				err = apierr.BadRequestf("search_type must be query_then_fetch or dfs_query_then_fetch")
			}
		case key == "rest_total_hits_as_int":
			var b bool
			b, err = boolParam(key, val)
			a.TotalAsInt = b
		case key == "typed_keys" || key == "filter_path":
			return a, apierr.BadRequestf("%s is not supported", key)
		case indexParams[key]:
			return a, apierr.BadRequestf("%s is not accepted: the server chooses the index (the data owner's measurements)", key)
		default:
			return a, apierr.BadRequestf("unsupported search parameter %s", key)
		}
		if err != nil {
			return a, err
		}
	}
	if body == nil {
		return a, apierr.BadRequestf("body is required (a Query DSL object or a string holding one)")
	}
	b, err := search.ParseBody(body)
	if err != nil {
		return a, err
	}
	if err := mergeParams(b, qs, top); err != nil {
		return a, err
	}
	if a.TotalAsInt {
		if err := totalAsIntTracking(b); err != nil {
			return a, err
		}
	}
	// The merged body (q included) must pass the scope check of the search
	// package before anything runs.
	if err := search.CheckDSL(b); err != nil {
		return a, search.AsBadRequest(err)
	}
	a.Body = model.JSON{Value: b}
	return a, nil
}

// TotalAsNumber turns hits.total {value, relation} of a search envelope
// into its value, as Elasticsearch's rest_total_hits_as_int does.
func TotalAsNumber(out model.JSON) model.JSON {
	env, ok := out.Value.(map[string]any)
	if !ok {
		return out
	}
	hits, ok := env["hits"].(map[string]any)
	if !ok {
		return out
	}
	switch total, ok := hits["total"].(map[string]any); {
	case ok:
		hits["total"] = total["value"]
	case hits["total"] == nil:
		hits["total"] = -1 // track_total_hits false, as Elasticsearch answers it
	}
	return out
}

// totalAsIntTracking applies rest_total_hits_as_int to the body's
// track_total_hits as Elasticsearch does: exact when absent; true and
// false are kept (false answers hits.total -1); a count to track up to is
// refused, since the total as a number must be exact.
func totalAsIntTracking(body map[string]any) error {
	switch v := body["track_total_hits"].(type) {
	case nil:
		body["track_total_hits"] = true
	case bool:
	default:
		if fmt.Sprint(v) == strconv.Itoa(math.MaxInt32) {
			return nil // Elasticsearch's "accurate"
		}
		return apierr.BadRequestf("[rest_total_hits_as_int] cannot be used if the tracking of total hits is not accurate, got %v", v)
	}
	return nil
}

// mergeParams puts the top-level parameters into the body (they win
// over the body's own keys, as in Elasticsearch) and ANDs the query string
// with the body's query.
func mergeParams(body, qs, top map[string]any) error {
	inc, hasInc := top["_source_includes"]
	exc, hasExc := top["_source_excludes"]
	delete(top, "_source_includes")
	delete(top, "_source_excludes")
	if hasInc || hasExc {
		src := map[string]any{}
		if hasInc {
			src["includes"] = inc
		}
		if hasExc {
			src["excludes"] = exc
		}
		top["_source"] = src
	}
	for k, v := range top {
		body[k] = v
	}
	if len(qs) == 0 {
		return nil
	}
	if _, ok := qs["query"]; !ok {
		return apierr.BadRequestf("df, default_operator, analyzer, lenient and analyze_wildcard need q")
	}
	clause := map[string]any{"query_string": qs}
	if q, ok := body["query"]; ok && q != nil {
		body["query"] = map[string]any{"bool": map[string]any{"must": []any{q, clause}}}
	} else {
		body["query"] = clause
	}
	return nil
}

func queryStringValue(key string, v any) (any, error) {
	switch key {
	case "lenient", "analyze_wildcard":
		return boolParam(key, v)
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	return nil, apierr.BadRequestf("%s must be a string", key)
}

func intParam(key string, v any) (int64, error) {
	if s, ok := v.(string); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return 0, apierr.BadRequestf("%s must be an integer", key)
		}
		return n, nil
	}
	n, ok, err := search.IntKey(map[string]any{key: v}, key)
	if err == nil && !ok {
		err = apierr.BadRequestf("%s must be an integer", key)
	}
	return n, err
}

func boolParam(key string, v any) (bool, error) {
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		if p, err := strconv.ParseBool(b); err == nil {
			return p, nil
		}
	}
	return false, apierr.BadRequestf("%s must be true or false", key)
}

// jsonParam reads a JSON value given as such or as a JSON string (GET).
func jsonParam(key string, v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		return v, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil || dec.More() {
		return nil, apierr.BadRequestf("%s must be JSON", key)
	}
	return out, nil
}

// sortParam reads sort: a DSL sort value, or the URL form
// "field:asc,other:desc,third".
func sortParam(v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		return v, nil
	}
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "[") || strings.HasPrefix(t, "{") {
		return jsonParam("sort", t)
	}
	var out []any
	for _, part := range strings.Split(s, ",") {
		field, order, hasOrder := strings.Cut(strings.TrimSpace(part), ":")
		switch {
		case field == "":
			return nil, apierr.BadRequestf("sort must be field[:asc|desc],...")
		case !hasOrder:
			out = append(out, field)
		case order == "asc" || order == "desc":
			out = append(out, map[string]any{field: order})
		default:
			return nil, apierr.BadRequestf("sort order of %s must be asc or desc", field)
		}
	}
	return out, nil
}

// sourceParam reads _source: a DSL value, true/false or "a,b".
func sourceParam(v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		return v, nil
	}
	if b, err := strconv.ParseBool(s); err == nil {
		return b, nil
	}
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "[") || strings.HasPrefix(t, "{") {
		return jsonParam("_source", t)
	}
	return listParam("_source", s)
}

func listParam(key string, v any) (any, error) {
	switch x := v.(type) {
	case string:
		var out []any
		for _, f := range strings.Split(x, ",") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
		return out, nil
	case []any:
		return x, nil
	}
	return nil, apierr.BadRequestf("%s must be a list of fields", key)
}

func trackTotalHits(v any) (any, error) {
	if s, ok := v.(string); ok {
		if b, err := strconv.ParseBool(s); err == nil {
			return b, nil
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
		return nil, apierr.BadRequestf("track_total_hits must be true, false or a number")
	}
	return v, nil
}

// SearchParams collects exportSearch's arguments under their REST
// names for ParseSearch: Text, Bool, Int, JSON and List put a given
// argument under its name; nil leaves it out.
type SearchParams map[string]any

func (s SearchParams) Text(key string, v *string) {
	if v != nil {
		s[key] = *v
	}
}

func (s SearchParams) Bool(key string, v *bool) {
	if v != nil {
		s[key] = *v
	}
}

func (s SearchParams) Int(key string, v *int64) {
	if v != nil {
		s[key] = *v
	}
}

func (s SearchParams) JSON(key string, v *model.JSON) {
	if v != nil && v.Value != nil {
		s[key] = v.Value
	}
}

func (s SearchParams) List(key string, v []string) {
	if v != nil {
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = e
		}
		s[key] = l
	}
}

// Merge adds the other parameters (an object); one given twice is refused.
func (s SearchParams) Merge(other *model.JSON) error {
	if other == nil || other.Value == nil {
		return nil
	}
	m, ok := other.Value.(map[string]any)
	if !ok {
		return apierr.BadRequestf("otherParams must be an object")
	}
	for k, v := range m {
		if _, dup := s[k]; dup {
			return apierr.BadRequestf("%s is given twice", k)
		}
		s[k] = v
	}
	return nil
}
