package store_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// decodedWhole is ParseDocument as it was before it read only the members
// the columns come from: the whole document decoded (the reference).
func decodedWhole(kind string, raw []byte) (store.Document, error) {
	if !utf8.Valid(raw) {
		return store.Document{}, errors.New("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return store.Document{}, fmt.Errorf("invalid JSON: %w", err)
	}
	if len(bytes.TrimSpace(raw[dec.InputOffset():])) > 0 {
		return store.Document{}, errors.New("invalid JSON: text after the object")
	}
	d, err := store.DocumentFields(kind, doc)
	if err != nil {
		return store.Document{}, err
	}
	d.Doc = raw
	return d, nil
}

func sameParse(t *testing.T, kind string, raw []byte) {
	t.Helper()
	if !json.Valid(raw) || bytes.Contains(raw, []byte(`\u`)) || len(bytes.TrimSpace(raw)) == 0 || bytes.TrimSpace(raw)[0] != '{' {
		return // the other paths are the reference's own code
	}
	got, gotErr := store.ParseDocument(kind, raw)
	want, wantErr := decodedWhole(kind, raw)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("ParseDocument(%s, %s): error %v, want %v", kind, raw, gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseDocument(%s, %s):\n got %+v\nwant %+v", kind, raw, got, want)
	}
}

func TestParseDocumentReadsTheColumnsAsDecoded(t *testing.T) {
	for _, c := range []struct{ kind, raw string }{
		{vocab.KindMeasurement, `{"id": "m1", "client_uuid": "8f7c2a52-1d3e-4b8a-9c1f-2a3b4c5d6e7f", "type": "VideoMeasurement",
			"study": {"subject": "youtube", "x": [1, 2]}, "created_at": "2026-11-29T10:00:00Z", "other": {"deep": true}}`},
		{vocab.KindMeasurement, `{"id": "m1", "id": 42, "client_uuid": "8f7c2a52-1d3e-4b8a-9c1f-2a3b4c5d6e7f", "type": "VideoMeasurement", "created_at": "2026-11-29"}`},
		{vocab.KindMeasurement, `{"id": 12345678901234567890, "client_uuid": "8f7c2a52-1d3e-4b8a-9c1f-2a3b4c5d6e7f", "type": "A", "created_at": "2026-11-29"}`},
		{vocab.KindMeasurement, `{"id": 1.5, "client_uuid": "8f7c2a52-1d3e-4b8a-9c1f-2a3b4c5d6e7f", "type": "A", "created_at": "2026-11-29"}`},
		{vocab.KindMeasurement, `{"id": "m", "client_uuid": null, "type": "A", "created_at": "2026-11-29"}`},
		{vocab.KindMeasurement, `{"id": "m", "client_uuid": "8f7c2a52-1d3e-4b8a-9c1f-2a3b4c5d6e7f", "type": "A b", "created_at": "2026-11-29"}`},
		{vocab.KindMeasurement, `{"id": "m", "client_uuid": "8f7c2a52-1d3e-4b8a-9c1f-2a3b4c5d6e7f", "type": "A", "created_at": 5}`},
		{vocab.KindMeasurement, `{"id": "m", "client_uuid": "8f7c2a52-1d3e-4b8a-9c1f-2a3b4c5d6e7f", "type": "A", "study": "no object", "created_at": "2026-11-29"}`},
		{vocab.KindUserFeedback, `{"id": "f", "client": {"uuid": "8F7C2A52-1D3E-4B8A-9C1F-2A3B4C5D6E7F"}, "created_at": "2026-11-29T10:00:00+02:00"}`},
		{vocab.KindAnomalyEvent, `{"id": "a", "subject": "youtube", "type": "Anomaly", "created_at": "2026-11-29T10:00:00.123Z"}`},
		{vocab.KindClientReport, `{"id": "r", "client_uuid": "8f7c2a52-1d3e-4b8a-9c1f-2a3b4c5d6e7f", "type": "R", "measurement_id": 7, "created_at": "2026-11-29"}`},
		{vocab.KindEventBundle, `{"id": "r", "client_uuid": "8f7c2a52-1d3e-4b8a-9c1f-2a3b4c5d6e7f", "type": "R", "measurement_id": {"no": 1}, "created_at": "2026-11-29"}`},
		{vocab.KindMeasurement, `{"\/id": "escaped slash is another key", "id": "m", "client_uuid": "8f7c2a52-1d3e-4b8a-9c1f-2a3b4c5d6e7f", "type": "A", "created_at": "2026-11-29"}`},
		{vocab.KindMeasurement, `{}`},
	} {
		sameParse(t, c.kind, []byte(c.raw))
	}
}

func FuzzParseDocument(f *testing.F) {
	f.Add(`{"id": "m1", "client_uuid": "8f7c2a52-1d3e-4b8a-9c1f-2a3b4c5d6e7f", "type": "VideoMeasurement", "study": {"subject": "youtube"}, "created_at": "2026-11-29T10:00:00Z"}`, uint8(0))
	f.Add(`{"id": 3, "client": {"uuid": "8f7c2a52-1d3e-4b8a-9c1f-2a3b4c5d6e7f"}, "created_at": "2026-11-29"}`, uint8(3))
	kinds := []string{vocab.KindMeasurement, vocab.KindAnomalyEvent, vocab.KindClientReport, vocab.KindUserFeedback, vocab.KindEventBundle, vocab.KindNetworkRequest}
	f.Fuzz(func(t *testing.T, raw string, k uint8) {
		sameParse(t, kinds[int(k)%len(kinds)], []byte(raw))
	})
}
