package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// GET /export_api/v1/<index>/_mapping answers the field mapping detected as
// documents were stored, in Elasticsearch's GET _mapping shape.
func TestExportMapping(t *testing.T) {
	w := newExportWorld(t, "expmap")
	other := newExportWorld(t, "expmapx")
	w.o.InsertDocuments(t, "anomaly_event", map[string]any{"id": "a1", "created_at": "2026-01-01T00:00:00Z",
		"score": 3, "ratio": 0.5, "resolved": false, "detail": map[string]any{"metric": "bitrate"}})
	other.o.InsertDocuments(t, "anomaly_event", map[string]any{"id": "x1", "created_at": "2026-01-01T00:00:00Z", "secret": 1})
	idx := "analytics-production-" + w.o.Slug + "-anomaly_events"
	kw := map[string]any{"keyword": map[string]any{"type": "keyword", "ignore_above": 256}}
	want := map[string]any{idx: map[string]any{"mappings": map[string]any{"properties": map[string]any{
		"id":         map[string]any{"type": "text", "fields": kw},
		"created_at": map[string]any{"type": "date"},
		"score":      map[string]any{"type": "long"},
		"ratio":      map[string]any{"type": "float"},
		"resolved":   map[string]any{"type": "boolean"},
		"detail":     map[string]any{"properties": map[string]any{"metric": map[string]any{"type": "text", "fields": kw}}},
	}}}}
	for _, path := range []string{"/" + idx + "/_mapping", "/analytics-production-" + w.o.Slug + "-anomaly*/_mapping"} {
		r := w.get(t, path, "")
		if r.Status != http.StatusOK {
			t.Fatalf("GET %s: status %d: %s", path, r.Status, r.Raw)
		}
		if got, exp := jsonText(t, r.JSON), jsonText(t, want); got != exp {
			t.Fatalf("GET %s: %s", path, r.Raw)
		}
	}
	r := w.get(t, "/_mapping", "")
	if m, ok := r.JSON.(map[string]any); r.Status != http.StatusOK || !ok || m[idx] == nil {
		t.Fatalf("GET /_mapping: status %d: %s", r.Status, r.Raw)
	}
	if r := w.get(t, "/analytics-production-"+other.o.Slug+"-anomaly_events/_mapping", ""); r.Status != http.StatusBadRequest {
		t.Fatalf("another data owner's index: status %d, want 400: %s", r.Status, r.Raw)
	}
	if r := w.get(t, "/"+idx+"-nothere/_mapping", ""); r.Status != http.StatusNotFound {
		t.Fatalf("an unknown index: status %d, want 404: %s", r.Status, r.Raw)
	}
}

// jsonText is v as JSON (object keys sorted), for comparing decoded answers.
func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
