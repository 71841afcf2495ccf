package pg

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/search"
)

// simple_query_string with minimum_should_match: it applies to the top
// level's optional clauses (Elasticsearch's SimpleQueryStringBuilder,
// Queries.maybeApplyMinimumShouldMatch; rest-api-spec
// search.aggregation/20_terms.yml "min_doc_count": "sheep cow" with
// minimum_should_match 1 matches the sheep and the cow).
func TestSimpleQueryStringMinimumShouldMatch(t *testing.T) {
	owner, slug := testOwner(t, "sqsmsm")
	storeDocs(t, owner, search.KindAnomalyEvent,
		map[string]any{"id": "1", "created_at": "2026-01-01T00:00:00Z", "str": "sheep"},
		map[string]any{"id": "2", "created_at": "2026-01-01T00:00:00Z", "str": "cow"},
		map[string]any{"id": "3", "created_at": "2026-01-01T00:00:00Z", "str": "pig"},
		map[string]any{"id": "4", "created_at": "2026-01-01T00:00:00Z", "str": "sheep cow"},
	)
	scope := search.Scope{DataOwnerID: owner, Slug: slug, Kind: search.KindAnomalyEvent}
	for _, c := range []struct {
		name, sqs string
		want      []string
	}{
		{"1 of 2", `"query": "sheep cow", "minimum_should_match": 1`, []string{"1", "2", "4"}},
		{"2 of 2", `"query": "sheep cow", "minimum_should_match": 2`, []string{"4"}},
		{"50% of 2 is 1", `"query": "sheep cow", "minimum_should_match": "50%"`, []string{"1", "2", "4"}},
		{"-1 of 3 is 2", `"query": "sheep cow pig", "minimum_should_match": -1`, []string{"4"}},
		{"3 of 2 matches nothing", `"query": "sheep | cow", "minimum_should_match": 3`, nil},
		{"one clause is no boolean query", `"query": "sheep", "minimum_should_match": 2`, []string{"1", "4"}},
		{"AND clauses are required, not optional", `"query": "sheep cow", "default_operator": "and", "minimum_should_match": 1`, []string{"4"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, err := runSearch(t, scope, `{"query": {"simple_query_string": {"fields": ["str"], `+c.sqs+`}}, "sort": ["_id"]}`)
			if err != nil {
				t.Fatal(err)
			}
			if got := idsOf(t, resp); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("ids %v, want %v", got, c.want)
			}
		})
	}
	_, err := runSearch(t, scope, `{"query": {"simple_query_string": {"query": "sheep +cow | pig", "minimum_should_match": 2}}}`)
	if err == nil || !strings.Contains(err.Error(), "minimum_should_match") {
		t.Fatalf("mixed operators: %v, want a 400 naming minimum_should_match", err)
	}
}
