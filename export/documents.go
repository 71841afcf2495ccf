package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/rawjson"
	"github.com/fleetgraph/fleetgraph/store"
)

// The documents of the listings as the export spec answers them: one
// function per shape, from a stored document and its indexed columns.

// AsStored answers the document as stored.
func AsStored(d store.ExportDocument) (model.JSON, error) {
	return model.JSON{Value: rawjson.Compact(d.Doc)}, nil
}

// WithClientObject gives a user feedback its client as {"uuid": ...}.
func WithClientObject(d store.ExportDocument) (model.JSON, error) {
	doc, err := decodeObject(d.Doc)
	if err != nil {
		return model.JSON{}, err
	}
	if _, ok := doc["client"].(map[string]any); !ok && d.ClientUUID != nil {
		// Stored with a top-level client_uuid (the import accepts both):
		// answered in the spec's shape, client {uuid}.
		doc["client"] = map[string]any{"uuid": *d.ClientUUID}
		delete(doc, "client_uuid")
	}
	return model.JSON{Value: doc}, nil
}

// networkRequestPruned lists, per JSON path of a network request, the
// fields the export spec omits.
var networkRequestPruned = []struct {
	path   []string
	fields []string
}{
	{[]string{"data"}, []string{"initiator", "redirectHasExtraInfo", "hasUserGesture"}},
	{[]string{"data", "request"}, []string{"mixedContentType", "initialPriority", "referrerPolicy", "isSameSite"}},
	{[]string{"network_response", "data"}, []string{"hasExtraInfo"}},
	{[]string{"network_response", "data", "response"}, []string{"securityState", "securityDetails", "alternateProtocolUsage"}},
}

// PrunedNetworkRequest drops the request and response fields the export
// spec omits. Beside the spec's client_time, client_time_skewed, data and
// network_response, every item carries id, client_uuid and created_at (from
// the indexed columns when the document lacks them, so every item of every
// listing has them) and measurement_id when the request belongs to a
// measurement (absent, not null, otherwise): they say which request, client
// and measurement a line is about.
func PrunedNetworkRequest(d store.ExportDocument) (model.JSON, error) {
	doc, err := decodeObject(d.Doc)
	if err != nil {
		return model.JSON{}, err
	}
	fill := func(key string, v any) {
		if cur, ok := doc[key]; !ok || cur == nil {
			doc[key] = v
		}
	}
	fill("id", d.DocID)
	if d.ClientUUID != nil {
		fill("client_uuid", *d.ClientUUID)
	}
	fill("created_at", d.CreatedAt.UTC().Format(time.RFC3339Nano))
	if d.MeasurementID != nil {
		fill("measurement_id", *d.MeasurementID)
	} else if doc["measurement_id"] == nil {
		delete(doc, "measurement_id")
	}
	for _, p := range networkRequestPruned {
		obj := doc
		for _, key := range p.path {
			obj, _ = obj[key].(map[string]any)
		}
		for _, f := range p.fields {
			delete(obj, f)
		}
	}
	return model.JSON{Value: doc}, nil
}

func decodeObject(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("decode document: %w", err)
	}
	if doc == nil {
		doc = map[string]any{}
	}
	return doc, nil
}
