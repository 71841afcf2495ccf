package search

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/limits"
)

// Bodies and queries over the size limits answer 400 naming the limit,
// fast, before anything is compiled.
func TestOverLimitsIsAFast400(t *testing.T) {
	terms := make([]any, 60000)
	for i := range terms {
		terms[i] = fmt.Sprint(i)
	}
	sort := make([]any, 400)
	for i := range sort {
		sort[i] = map[string]any{fmt.Sprintf("f%d", i): "asc"}
	}
	should := make([]any, 2000)
	for i := range should {
		should[i] = map[string]any{"term": map[string]any{"f": i}}
	}
	aggs := map[string]any{}
	for i := range 150 {
		aggs[fmt.Sprintf("a%d", i)] = map[string]any{"max": map[string]any{"field": "f"}}
	}
	deep := map[string]any{"terms": map[string]any{"field": "f"}}
	for range 10 {
		deep = map[string]any{"terms": map[string]any{"field": "f"}, "aggs": map[string]any{"x": deep}}
	}
	cases := []struct {
		name  string
		body  map[string]any
		limit string
	}{
		{"60,000 terms values", map[string]any{"query": map[string]any{"terms": map[string]any{"f": terms}}}, "MaxDSLTermsValues"},
		{"400 sort keys", map[string]any{"sort": sort}, "MaxDSLSortKeys"},
		{"5,000 nested parentheses in query_string", map[string]any{"query": map[string]any{"query_string": map[string]any{
			"query": strings.Repeat("(", 5000) + "a" + strings.Repeat(")", 5000)}}}, "MaxQueryString"},
		{"2,000 bool clauses", map[string]any{"query": map[string]any{"bool": map[string]any{"should": should}}}, "MaxDSLClauses"},
		{"150 aggregations", map[string]any{"aggs": aggs}, "MaxDSLAggs"},
		{"11 levels of aggregations", map[string]any{"aggs": map[string]any{"top": deep}}, "MaxDSLAggDepth"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			err := CheckDSL(c.body)
			assertLimit(t, err, c.limit, time.Since(start))
		})
	}
	p := IndexPrefix("acme") + "-measurements"
	esqlCases := map[string]string{
		"300 chained EVALs":        "FROM " + p + strings.Repeat(" | EVAL x = x + y", 300),
		"5,000 nested parentheses": "FROM " + p + " | EVAL x = " + strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000),
	}
	for name, q := range esqlCases {
		t.Run("ES|QL "+name, func(t *testing.T) {
			start := time.Now()
			err := CheckESQL(q, "acme", nil)
			assertLimit(t, err, "Max", time.Since(start))
		})
	}
}

func assertLimit(t *testing.T, err error, limit string, took time.Duration) {
	t.Helper()
	var bad *BadRequestError
	if !errors.As(err, &bad) || !strings.Contains(err.Error(), limit) {
		t.Fatalf("want a 400 naming %s, got %v", limit, err)
	}
	if took > 300*time.Millisecond {
		t.Errorf("answered in %s, want well under a second", took)
	}
}

// Bodies just under the limits pass.
func TestUnderLimitsPasses(t *testing.T) {
	terms := make([]any, limits.MaxDSLTermsValues)
	for i := range terms {
		terms[i] = i
	}
	body := map[string]any{
		"query":       map[string]any{"query_string": map[string]any{"query": strings.Repeat("(", limits.MaxQueryStringDepth) + "a" + strings.Repeat(")", limits.MaxQueryStringDepth)}},
		"post_filter": map[string]any{"terms": map[string]any{"f": terms}},
	}
	if err := CheckDSL(body); err != nil {
		t.Fatal(err)
	}
}
