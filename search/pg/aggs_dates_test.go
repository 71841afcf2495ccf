package pg

import (
	"encoding/json"
	"testing"

	"github.com/fleetgraph/fleetgraph/search"
)

// datedDocs: when is a date field, multi-valued in the first document.
func datedDocs(t *testing.T) search.Scope {
	owner, slug := testOwner(t, "aggdates")
	storeDocs(t, owner, search.KindAnomalyEvent,
		map[string]any{"id": "d1", "created_at": "2026-01-01T00:00:00Z", "when": []any{"2021-05-01", "2021-04-01", "2021-04-22"}},
		map[string]any{"id": "d2", "created_at": "2026-01-01T00:00:00Z", "when": "2021-04-10"},
		map[string]any{"id": "d3", "created_at": "2026-01-01T00:00:00Z", "other": 1},
	)
	return search.Scope{DataOwnerID: owner, Slug: slug, Kind: search.KindAnomalyEvent}
}

// aggsOf runs a search of aggregations and gives them as JSON.
func aggsOf(t *testing.T, scope search.Scope, body string) string {
	t.Helper()
	resp, err := runSearch(t, scope, body)
	if err != nil {
		t.Fatalf("search %s: %v", body, err)
	}
	out, _ := json.Marshal(resp["aggregations"])
	return string(out)
}

// A multi-valued date counts the document once in the bucket of each of
// its values (rest-api-spec search.aggregation/361_date_histogram_multivalue.yml:
// ["2021-05-01", "2021-04-01", "2021-04-22"] by calendar month is two
// buckets).
func TestDateHistogramMultiValued(t *testing.T) {
	scope := datedDocs(t)
	got := aggsOf(t, scope, `{"size": 0, "query": {"term": {"id": "d1"}},
		"aggs": {"h": {"date_histogram": {"field": "when", "calendar_interval": "1M"}}}}`)
	expect(t, jsonAny(t, got), `{"h": {"buckets": [
		{"key_as_string": "2021-04-01T00:00:00.000Z", "key": 1617235200000, "doc_count": 1},
		{"key_as_string": "2021-05-01T00:00:00.000Z", "key": 1619827200000, "doc_count": 1}]}}`)
	got = aggsOf(t, scope, `{"size": 0, "aggs": {"h": {"date_histogram": {"field": "when", "calendar_interval": "1M"}}}}`)
	expect(t, jsonAny(t, got), `{"h": {"buckets": [
		{"key_as_string": "2021-04-01T00:00:00.000Z", "key": 1617235200000, "doc_count": 2},
		{"key_as_string": "2021-05-01T00:00:00.000Z", "key": 1619827200000, "doc_count": 1}]}}`)
}

func jsonAny(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}
