package search

import (
	"maps"
	"slices"
	"strings"
)

// Size limits of a Query DSL body, checked by CheckDSL before anything is
// compiled (ES|QL's are in search/esql: MaxCommands, MaxEvalColumns,
// MaxExprDepth, MaxExprNodes, MaxQueryNodes). The embedded backend turns
// each clause, sort key, aggregation and query_string group into SQL that
// PostgreSQL must plan, and its planner cannot be interrupted while it
// does, so what reaches it is bounded here; a body over a limit is a 400
// naming the limit and its value. Nesting is bounded by MaxDSLDepth.
const (
	// MaxDSLClauses bounds the query clauses of a body (every clause of
	// query, post_filter, bool, filter aggregations, ...; Elasticsearch's
	// indices.query.bool.max_clause_count is of the same order).
	MaxDSLClauses = 1024
	// MaxDSLSortKeys bounds the keys of one sort.
	MaxDSLSortKeys = 64
	// MaxDSLTermsValues bounds the values of one terms or ids query.
	MaxDSLTermsValues = 10000
	// MaxQueryStringLength bounds the text of one query_string query, in
	// bytes; MaxQueryStringDepth its nesting of parentheses.
	MaxQueryStringLength = 10000
	MaxQueryStringDepth  = 32
	// MaxDSLAggs bounds the aggregations of a body at all levels;
	// MaxDSLAggDepth their nesting (a top-level aggregation is level 1).
	MaxDSLAggs     = 100
	MaxDSLAggDepth = 8
	// MaxQueryPatterns bounds what the query of a search compiles to on
	// the embedded backend, priced before it runs: the text conditions
	// (match, match_phrase, prefix, wildcard, regexp, query_string and
	// simple_query_string terms) each PostgreSQL evaluates on every
	// document in scope, one per field named, AllFieldsPatterns for one on
	// every field ("*", query_string's default: each of a document's
	// leaves is matched). Within it, a search costs PostgreSQL about a
	// second per 100 documents at most; the probe's 1,990 OR'ed terms on
	// every field (127,360) held a connection 14 s on 31 documents.
	MaxQueryPatterns = 4096
	// AllFieldsPatterns is the price of one text condition on every field.
	AllFieldsPatterns = 64
)

// QueryPatternsBad is the 400 of a query priced over MaxQueryPatterns.
func QueryPatternsBad(n int) error {
	return Badf("search body: the query makes %d text matches on each document, more than %d (limit MaxQueryPatterns = %d; "+
		"a condition on one field counts 1, one on every field (\"*\", query_string's default) %d): name the fields "+
		"(fields, default_field) or ask for fewer terms", n, MaxQueryPatterns, MaxQueryPatterns, AllFieldsPatterns)
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
		if c.clauses++; c.clauses > MaxDSLClauses {
			return limitBad("query clauses", MaxDSLClauses, "MaxDSLClauses")
		}
	}
	list, _ := v.([]any)
	switch {
	case k == "sort" && len(list) > MaxDSLSortKeys:
		return limitBad("sort keys", MaxDSLSortKeys, "MaxDSLSortKeys")
	case (parent == "terms" || (parent == "ids" && k == "values")) && len(list) > MaxDSLTermsValues:
		return limitBad("values in one terms query", MaxDSLTermsValues, "MaxDSLTermsValues")
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
	if len(s) > MaxQueryStringLength {
		return Badf("search body: query_string longer than %d bytes (limit MaxQueryStringLength = %d)",
			MaxQueryStringLength, MaxQueryStringLength)
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
			if depth++; depth > MaxQueryStringDepth {
				return Badf("search body: query_string parentheses nested more than %d deep (limit MaxQueryStringDepth = %d)",
					MaxQueryStringDepth, MaxQueryStringDepth)
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
			if n++; n > MaxDSLAggs {
				return limitBad("aggregations", MaxDSLAggs, "MaxDSLAggs")
			}
			if depth > MaxDSLAggDepth {
				return limitBad("levels of nested aggregations", MaxDSLAggDepth, "MaxDSLAggDepth")
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
