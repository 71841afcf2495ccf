package export

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestParseSearchRefusals(t *testing.T) {
	body := map[string]any{"query": map[string]any{"match_all": map[string]any{}}}
	for _, c := range []struct {
		name string
		req  map[string]any
		want string
	}{
		{"no body", map[string]any{"size": "10"}, "body is required (a Query DSL object or a string holding one)"},
		{"body not JSON", map[string]any{"body": "{"}, "body is not valid JSON: unexpected EOF"},
		{"size not a number", map[string]any{"body": body, "size": "ten"}, "size must be an integer"},
		{"size a fraction", map[string]any{"body": body, "size": 1.5}, "size must be an integer"},
		{"from not a number", map[string]any{"body": body, "from": "1e"}, "from must be an integer"},
		{"terminate_after negative", map[string]any{"body": body, "terminate_after": "-1"}, "terminate_after must not be negative"},
		{"a hint below 1", map[string]any{"body": body, "batched_reduce_size": "0"}, "batched_reduce_size must be 1 or more"},
		{"scroll not a time", map[string]any{"body": body, "scroll": 5}, "scroll must be a time such as 1m"},
		{"timeout blank", map[string]any{"body": body, "timeout": " "}, "timeout must be a time such as 30s"},
		{"lenient not a boolean", map[string]any{"body": body, "q": "x", "lenient": "maybe"}, "lenient must be true or false"},
		{"sort order unknown", map[string]any{"body": body, "sort": "created_at:up"}, "sort order of created_at must be asc or desc"},
		{"search_after not JSON", map[string]any{"body": body, "search_after": "[1,"}, "search_after must be JSON"},
		{"track_total_hits a word", map[string]any{"body": body, "track_total_hits": "all"}, "track_total_hits must be true, false or a number"},
		{"search_type unknown", map[string]any{"body": body, "search_type": "scan"}, "search_type must be query_then_fetch or dfs_query_then_fetch"},
		{"df without q", map[string]any{"body": body, "df": "label"}, "df, default_operator, analyzer, lenient and analyze_wildcard need q"},
		{"an index parameter", map[string]any{"body": body, "index": "other"}, "index is not accepted: the server chooses the index (the data owner's measurements)"},
		{"filter_path", map[string]any{"body": body, "filter_path": "hits"}, "filter_path is not supported"},
		{"an unknown parameter", map[string]any{"body": body, "colour": "red"}, "unsupported search parameter colour"},
		{"a count to track with rest_total_hits_as_int", map[string]any{"body": body, "track_total_hits": "100", "rest_total_hits_as_int": "true"},
			"[rest_total_hits_as_int] cannot be used if the tracking of total hits is not accurate, got 100"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseSearch(c.req)
			wantBadRequest(t, err, c.want)
		})
	}
	t.Run("not an object", func(t *testing.T) {
		_, err := ParseSearch([]any{})
		wantBadRequest(t, err, "the search request must be a JSON object")
	})
}

func TestParseSearchMergesParameters(t *testing.T) {
	a, err := ParseSearch(map[string]any{"body": `{"query": {"term": {"type": "WebMeasurement"}}, "size": 1}`,
		"q": "label:probe-01", "df": "label", "size": "5", "sort": "created_at:desc,id", "_source_includes": "id,type",
		"rest_total_hits_as_int": "true", "pretty": ""})
	if err != nil {
		t.Fatal(err)
	}
	if a.Size == nil || *a.Size != 5 || !a.TotalAsInt {
		t.Fatalf("args = %+v", a)
	}
	var want map[string]any
	if err := json.Unmarshal([]byte(`{
		"query": {"bool": {"must": [{"term": {"type": "WebMeasurement"}}, {"query_string": {"query": "label:probe-01", "default_field": "label"}}]}},
		"size": 1, "sort": [{"created_at": "desc"}, "id"], "_source": {"includes": ["id", "type"]}, "track_total_hits": true}`), &want); err != nil {
		t.Fatal(err)
	}
	if got := roundTrip(t, a.Body.Value); !reflect.DeepEqual(got, want) {
		t.Fatalf("body = %v\nwant   %v", got, want)
	}
}

// roundTrip is v as encoding/json decodes it, to compare JSON values.
func roundTrip(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
