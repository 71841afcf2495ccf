package pg

import (
	"encoding/json"
	"fmt"
	"strings"
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

// terms of a date field: include and exclude are dates in the field's
// format, the missing bucket's key is epoch milliseconds with
// key_as_string, also of an unmapped field read as dates with value_type
// date (rest-api-spec search.aggregation/20_terms.yml "Date test",
// "Unmapped dates").
func TestTermsOfDates(t *testing.T) {
	scope := datedDocs(t)
	cases := []struct{ name, aggs, want string }{
		{"include dates", `{"t": {"terms": {"field": "when", "include": ["2021-04-10", "2021-05-01"], "order": {"_key": "asc"}}}}`,
			`{"t": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [
				{"key": 1618012800000, "key_as_string": "2021-04-10T00:00:00.000Z", "doc_count": 1},
				{"key": 1619827200000, "key_as_string": "2021-05-01T00:00:00.000Z", "doc_count": 1}]}}`},
		{"exclude dates", `{"t": {"terms": {"field": "when", "exclude": ["2021-04-01", "2021-04-22", "2021-05-01"]}}}`,
			`{"t": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [
				{"key": 1618012800000, "key_as_string": "2021-04-10T00:00:00.000Z", "doc_count": 1}]}}`},
		{"include epoch millis", `{"t": {"terms": {"field": "when", "include": [1618012800000]}}}`,
			`{"t": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [
				{"key": 1618012800000, "key_as_string": "2021-04-10T00:00:00.000Z", "doc_count": 1}]}}`},
		{"missing of a date field", `{"t": {"terms": {"field": "when", "missing": "2016-05-11", "include": ["2016-05-11"]}}}`,
			`{"t": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [
				{"key": 1462924800000, "key_as_string": "2016-05-11T00:00:00.000Z", "doc_count": 1}]}}`},
		{"unmapped with value_type date", `{"t": {"terms": {"field": "unmapped_date", "value_type": "date", "missing": "2016-05-11"}}}`,
			`{"t": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [
				{"key": 1462924800000, "key_as_string": "2016-05-11T00:00:00.000Z", "doc_count": 3}]}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expect(t, jsonAny(t, aggsOf(t, scope, `{"size": 0, "aggs": `+c.aggs+`}`)), c.want)
		})
	}
	for _, c := range []struct{ name, aggs, mention string }{
		{"a regular expression on a date field", `{"t": {"terms": {"field": "when", "include": "2021.*"}}}`, "regular expression"},
		{"a value that is no date", `{"t": {"terms": {"field": "when", "include": ["soon"]}}}`, "failed to parse date field [soon]"},
	} {
		t.Run("refused: "+c.name, func(t *testing.T) {
			if _, err := runSearch(t, scope, `{"size": 0, "aggs": `+c.aggs+`}`); err == nil || !strings.Contains(err.Error(), c.mention) {
				t.Fatalf("%v, want a 400 naming %s", err, c.mention)
			}
		})
	}
}

// terms include partitions, with Elasticsearch's hashes: rest-api-spec
// search.aggregation/20_terms.yml "Partitioned string test" ("abc" is in
// partition 1 of 2, "bcd" in 0) and "Partitioned integer test" (1234 in
// 1, 5678 in 0).
func TestTermsPartitions(t *testing.T) {
	owner, slug := testOwner(t, "aggparts")
	storeDocs(t, owner, search.KindAnomalyEvent,
		map[string]any{"id": "1", "created_at": "2026-01-01T00:00:00Z", "str": "abc", "integer": 1234},
		map[string]any{"id": "2", "created_at": "2026-01-01T00:00:00Z", "str": "abc", "integer": 5678},
		map[string]any{"id": "3", "created_at": "2026-01-01T00:00:00Z", "str": "bcd", "integer": 1234},
	)
	scope := search.Scope{DataOwnerID: owner, Slug: slug, Kind: search.KindAnomalyEvent}
	terms := func(field string, partition int) string {
		return aggsOf(t, scope, fmt.Sprintf(`{"size": 0, "aggs": {"t": {"terms": {"field": %q, "include": {"partition": %d, "num_partitions": 2}}}}}`,
			field, partition))
	}
	for _, c := range []struct {
		field     string
		partition int
		want      string
	}{
		{"str.keyword", 0, `[{"key": "bcd", "doc_count": 1}]`},
		{"str.keyword", 1, `[{"key": "abc", "doc_count": 2}]`},
		{"integer", 0, `[{"key": 5678, "doc_count": 1}]`},
		{"integer", 1, `[{"key": 1234, "doc_count": 2}]`},
	} {
		got := jsonAny(t, terms(c.field, c.partition)).(map[string]any)["t"].(map[string]any)["buckets"]
		expect(t, got, c.want)
	}
	// histogram format with literal text (Java DecimalFormat: "#,##0 'ms'").
	h := jsonAny(t, aggsOf(t, scope, `{"size": 0, "aggs": {"h": {"histogram": {"field": "integer", "interval": 1000, "format": "#,##0 'ms'", "min_doc_count": 1}}}}`))
	expect(t, h, `{"h": {"buckets": [{"key": 1000, "key_as_string": "1,000 ms", "doc_count": 2}, {"key": 5000, "key_as_string": "5,000 ms", "doc_count": 1}]}}`)
	if _, err := runSearch(t, scope, `{"aggs": {"t": {"terms": {"field": "str.keyword", "include": {"partition": 2, "num_partitions": 2}}}}}`); err == nil ||
		!strings.Contains(err.Error(), "num_partitions") {
		t.Fatalf("partition 2 of 2: %v, want a 400", err)
	}
}

// A terms size above 10,000 is taken, up to Elasticsearch's
// search.max_buckets (65,536): the limit is the buckets made.
func TestTermsSizeUpToMaxBuckets(t *testing.T) {
	scope := datedDocs(t)
	got := aggsOf(t, scope, `{"size": 0, "aggs": {"t": {"terms": {"field": "id.keyword", "size": 20000}}}}`)
	if n := len(jsonAny(t, got).(map[string]any)["t"].(map[string]any)["buckets"].([]any)); n != 3 {
		t.Fatalf("%d buckets, want 3: %s", n, got)
	}
}

// range on a date field: bounds as dates or date math, keys and
// from_as_string / to_as_string as dates, missing as a date; every value
// of a multi-value counts (Elasticsearch's range aggregation reference:
// "missing", the field's format for keys and *_as_string). The range query
// matches a multi-valued date when one of its values is in the range.
func TestRangeOfDates(t *testing.T) {
	scope := datedDocs(t)
	got := aggsOf(t, scope, `{"size": 0, "aggs": {"r": {"range": {"field": "when",
		"ranges": [{"to": "2021-04-15"}, {"from": "2021-04-15||/M", "to": "2021-04-20"}, {"from": "2021-04-20"}]}}}}`)
	expect(t, jsonAny(t, got), `{"r": {"buckets": [
		{"key": "*-2021-04-15T00:00:00.000Z", "to": 1618444800000, "to_as_string": "2021-04-15T00:00:00.000Z", "doc_count": 2},
		{"key": "2021-04-01T00:00:00.000Z-2021-04-20T00:00:00.000Z", "from": 1617235200000, "from_as_string": "2021-04-01T00:00:00.000Z",
		 "to": 1618876800000, "to_as_string": "2021-04-20T00:00:00.000Z", "doc_count": 2},
		{"key": "2021-04-20T00:00:00.000Z-*", "from": 1618876800000, "from_as_string": "2021-04-20T00:00:00.000Z", "doc_count": 1}]}}`)
	// d3 has no date: missing puts it in the first range.
	got = aggsOf(t, scope, `{"size": 0, "aggs": {"r": {"range": {"field": "when", "missing": "2020-01-01", "ranges": [{"to": "2021-01-01"}]}}}}`)
	expect(t, jsonAny(t, got), `{"r": {"buckets": [
		{"key": "*-2021-01-01T00:00:00.000Z", "to": 1609459200000, "to_as_string": "2021-01-01T00:00:00.000Z", "doc_count": 1}]}}`)
	// missing of a number field.
	got = aggsOf(t, scope, `{"size": 0, "aggs": {"r": {"range": {"field": "other", "missing": 5, "ranges": [{"to": 3}, {"from": 3}]}}}}`)
	expect(t, jsonAny(t, got), `{"r": {"buckets": [{"key": "*-3.0", "to": 3, "doc_count": 1}, {"key": "3.0-*", "from": 3, "doc_count": 2}]}}`)
	if _, err := runSearch(t, scope, `{"aggs": {"r": {"range": {"field": "other", "ranges": [{"to": "2021-01-01"}]}}}}`); err == nil ||
		!strings.Contains(err.Error(), "must be a number") {
		t.Fatalf("a date bound on a number field: %v, want a 400", err)
	}
	resp, err := runSearch(t, scope, `{"query": {"range": {"when": {"gte": "2021-04-01||+5d", "lt": "now"}}}, "sort": ["_id"]}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := idsOf(t, resp); strings.Join(got, ",") != "d1,d2" {
		t.Fatalf("range query over a multi-valued date: %v, want d1, d2", got)
	}
}
