package search

import (
	"maps"
	"slices"
	"strings"

	"github.com/fleetgraph/fleetgraph/limits"
)

// The size limits of a Query DSL body (package limits: MaxDSLClauses,
// MaxDSLSortKeys, MaxDSLTermsValues, MaxQueryStringLength,
// MaxQueryStringDepth, MaxDSLAggs, MaxDSLAggDepth, MaxQueryPatterns) are
// checked here by CheckDSL before anything is compiled; ES|QL's are checked
// by search/esql. A body over a limit is a 400 naming the limit and its
// value.

// QueryPatternsBad is the 400 of a query priced over MaxQueryPatterns.
func QueryPatternsBad(n int) error {
	return Badf("search body: the query makes %d text matches on each document, more than %d (limit MaxQueryPatterns = %d; "+
		"a condition on one field counts 1, one on every field (\"*\", query_string's default) %d): name the fields "+
		"(fields, default_field) or ask for fewer terms", n, limits.MaxQueryPatterns, limits.MaxQueryPatterns, limits.AllFieldsPatterns)
}

// dslQueryContexts are keys whose object value (or the objects of its
// array value) is a query clause.
var dslQueryContexts = map[string]bool{
	"query": true, "post_filter": true, "filter": true, "must": true, "should": true, "must_not": true,
	"positive": true, "negative": true, "queries": true,
}

func limitBad(what string, limit int, name string) error {
	return Badf("search body: more than %d %s (limit %s = %d)", limit, what, name, limit)
}

// checkSizes applies the limits to the key k of an object found under
// parent, whose value is v (called by dslChecker.walk for every key).
func (c *dslChecker) checkSizes(parent, k string, v any) error {
	if dslQueryContexts[parent] {
		if c.clauses++; c.clauses > limits.MaxDSLClauses {
			return limitBad("query clauses", limits.MaxDSLClauses, "MaxDSLClauses")
		}
	}
	list, _ := v.([]any)
	switch {
	case k == "sort" && len(list) > limits.MaxDSLSortKeys:
		return limitBad("sort keys", limits.MaxDSLSortKeys, "MaxDSLSortKeys")
	case (parent == "terms" || (parent == "ids" && k == "values")) && len(list) > limits.MaxDSLTermsValues:
		return limitBad("values in one terms query", limits.MaxDSLTermsValues, "MaxDSLTermsValues")
	case (parent == "query_string" || parent == "simple_query_string") && k == "query":
		if s, ok := v.(string); ok {
			return checkQueryString(s)
		}
	}
	return nil
}

// checkQueryString bounds the text and the parenthesis nesting of a
// query_string query (quoted phrases and escaped characters do not nest).
func checkQueryString(s string) error {
	if len(s) > limits.MaxQueryStringLength {
		return Badf("search body: query_string longer than %d bytes (limit MaxQueryStringLength = %d)",
			limits.MaxQueryStringLength, limits.MaxQueryStringLength)
	}
	depth, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '(':
			if depth++; depth > limits.MaxQueryStringDepth {
				return Badf("search body: query_string parentheses nested more than %d deep (limit MaxQueryStringDepth = %d)",
					limits.MaxQueryStringDepth, limits.MaxQueryStringDepth)
			}
		case c == ')':
			depth--
		}
	}
	return nil
}

// checkAggs bounds the number and nesting of the aggregations of body.
func checkAggs(body map[string]any) error {
	n := 0
	var walk func(v any, depth int) error
	walk = func(v any, depth int) error {
		aggs, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		for _, name := range slices.Sorted(maps.Keys(aggs)) {
			if n++; n > limits.MaxDSLAggs {
				return limitBad("aggregations", limits.MaxDSLAggs, "MaxDSLAggs")
			}
			if depth > limits.MaxDSLAggDepth {
				return limitBad("levels of nested aggregations", limits.MaxDSLAggDepth, "MaxDSLAggDepth")
			}
			def, _ := aggs[name].(map[string]any)
			for k, sub := range def {
				if lk := strings.ToLower(k); lk == "aggs" || lk == "aggregations" {
					if err := walk(sub, depth+1); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	for k, v := range body {
		if lk := strings.ToLower(k); lk == "aggs" || lk == "aggregations" {
			if err := walk(v, 1); err != nil {
				return err
			}
		}
	}
	return nil
}
