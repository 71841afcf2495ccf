package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/assistant"
	"github.com/fleetgraph/fleetgraph/limits"
)

// The assistant's tools. Each runs a stored REST operation (rest/ops/)
// with the caller's key, role and data owner, so it reads exactly what the
// caller could read through the API; none writes. Their inputs are the
// operations' parameters, checked by the operations.

var (
	querySchema = map[string]any{"type": "object",
		"description": "Elasticsearch Query DSL request body, e.g. {\"query\": {\"bool\": {\"filter\": [{\"term\": {\"client_uuid\": \"...\"}}, " +
			"{\"range\": {\"created_at\": {\"gte\": \"2026-01-01T00:00:00Z\"}}}]}}, \"sort\": [{\"created_at\": \"desc\"}]}"}
	sizeSchema = map[string]any{"type": "integer", "minimum": 1, "maximum": limits.MaxAIToolHits,
		"description": "how many documents to return (default 10)"}
)

// aiTools are the tools offered to the model.
func (r *Service) aiTools() []assistant.Tool {
	return []assistant.Tool{
		{ToolSpec: assistant.ToolSpec{Name: "search_measurements",
			Description: "Search the organisation's measurements (documents with id, type, study.subject, client_uuid, created_at, statistic_values).",
			Schema: map[string]any{"type": "object", "properties": map[string]any{
				"body": querySchema,
				"index_scope": map[string]any{"type": "string", "enum": []string{"web", "video", "network", "speedtest", "conferencing", "gaming"},
					"description": "limit the search to one kind of measurement"},
				"size": sizeSchema,
			}, "required": []string{"body"}}},
			Run: r.searchTool("MeasurementSearch", true)},
		{ToolSpec: assistant.ToolSpec{Name: "search_anomaly_events",
			Description: "Search the organisation's anomaly events (id, client_uuid, measurement_type, subject, metric, detection_pass, severity, status, first_seen_at, last_seen_at).",
			Schema: map[string]any{"type": "object", "properties": map[string]any{"body": querySchema, "size": sizeSchema},
				"required": []string{"body"}}},
			Run: r.searchTool("AnomalyEventSearch", false)},
		{ToolSpec: assistant.ToolSpec{Name: "get_client",
			Description: "Get one measurement client by its id or UUID.",
			Schema: map[string]any{"type": "object", "properties": map[string]any{
				"id": map[string]any{"type": "string", "description": "the client's id or UUID"}}, "required": []string{"id"}}},
			Run: r.opTool("ClientGet", func(in map[string]any) map[string]any { return map[string]any{"id": in["id"]} })},
		{ToolSpec: assistant.ToolSpec{Name: "fleet_health",
			Description: "The health state (cpu, memory, filesystem) of every client of the fleet.",
			Schema:      map[string]any{"type": "object", "properties": map[string]any{}}},
			Run: r.opTool("FleetHealth", func(map[string]any) map[string]any { return map[string]any{} })},
		{ToolSpec: assistant.ToolSpec{Name: "license_usage",
			Description: "License units and unique clients per month.",
			Schema: map[string]any{"type": "object", "properties": map[string]any{
				"start_time": map[string]any{"type": "string", "description": "ISO 8601; from this time on"},
				"end_time":   map[string]any{"type": "string", "description": "ISO 8601; up to this time"}}}},
			Run: r.opTool("LicenseUsage", func(in map[string]any) map[string]any {
				return map[string]any{"startTime": in["start_time"], "endTime": in["end_time"], "extended": true}
			})},
	}
}

func toolInput(raw json.RawMessage) map[string]any {
	in := map[string]any{}
	dec := json.NewDecoder(bytesReader(raw))
	dec.UseNumber()
	_ = dec.Decode(&in)
	return in
}

// opTool runs operation op with the variables vars makes of the input.
func (r *Service) opTool(op string, vars func(map[string]any) map[string]any) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		v := vars(toolInput(raw))
		for k, x := range v {
			if x == nil {
				delete(v, k)
			}
		}
		return r.runOp(ctx, op, v)
	}
}

// searchTool runs a search operation answering the documents only, at
// most limits.MaxAIToolHits of them.
func (r *Service) searchTool(op string, scoped bool) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		in := toolInput(raw)
		body, ok := in["body"].(map[string]any)
		if !ok {
			return nil, apierr.BadRequestf("body must be a Query DSL object")
		}
		size := int64(10)
		if n, ok := in["size"].(json.Number); ok {
			if s, err := n.Int64(); err == nil && s > 0 {
				size = min(s, limits.MaxAIToolHits)
			}
		}
		vars := map[string]any{"body": body, "size": size, "sourceOnly": true}
		if s, ok := in["index_scope"].(string); ok && scoped && s != "" {
			vars["indexScope"] = s
		}
		return r.runOp(ctx, op, vars)
	}
}

func (r *Service) runOp(ctx context.Context, op string, vars map[string]any) (any, error) {
	if r.Operations == nil {
		return nil, apierr.Errorf(apierr.ErrUnavailable, "the assistant's tools are not available")
	}
	raw, err := r.Operations.RunOperation(ctx, op, vars)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(raw), nil
}

// anomalyContext gathers what explains an anomaly: the event, its client,
// the metric's values of the client's measurements before, during and
// after it, and similar anomalies of the fleet. Another data owner's
// anomaly is a 404 (the event's operation says so).
func (r *Service) anomalyContext(ctx context.Context, anomalyID string) (map[string]any, map[string]any, error) {
	raw, err := r.Operations.RunOperation(ctx, "AnomalyEventGet", map[string]any{"anomalyId": anomalyID})
	if err != nil {
		return nil, nil, err
	}
	var ev map[string]any
	_ = json.Unmarshal(raw, &ev)
	if inner, ok := ev["anomaly_event"].(map[string]any); ok {
		ev = inner
	}
	str := func(k string) string { s, _ := ev[k].(string); return s }
	out := map[string]any{"anomaly_event": ev}
	sources := map[string]any{"anomaly_id": anomalyID}
	if uuid := str("client_uuid"); uuid != "" {
		sources["client_uuid"] = uuid
		if c, err := r.runOp(ctx, "ClientGet", map[string]any{"id": uuid}); err == nil {
			out["client"] = c
		}
	}
	first, _ := time.Parse(time.RFC3339, str("first_seen_at"))
	last, _ := time.Parse(time.RFC3339, str("last_seen_at"))
	if !first.IsZero() && str("client_uuid") != "" {
		if last.Before(first) {
			last = first
		}
		from, to := first.Add(-6*time.Hour), last.Add(6*time.Hour)
		filter := []any{map[string]any{"term": map[string]any{"client_uuid": str("client_uuid")}},
			map[string]any{"range": map[string]any{"created_at": map[string]any{"gte": from.Format(time.RFC3339), "lte": to.Format(time.RFC3339)}}}}
		if t := str("measurement_type"); t != "" {
			filter = append(filter, map[string]any{"term": map[string]any{"type": t}})
		}
		body := map[string]any{"query": map[string]any{"bool": map[string]any{"filter": filter}},
			"sort": []any{map[string]any{"created_at": "asc"}}}
		if raw, err := r.Operations.RunOperation(ctx, "MeasurementSearch", map[string]any{"body": body, "size": 50, "sourceOnly": true}); err == nil {
			vals, ids := metricValues(raw, str("metric"), first, last)
			out["measurements"] = vals
			sources["measurement_ids"] = ids
		} else {
			out["measurements_error"] = err.Error()
		}
	}
	if m, t := str("metric"), str("measurement_type"); m != "" {
		filter := []any{map[string]any{"term": map[string]any{"metric": m}}}
		if t != "" {
			filter = append(filter, map[string]any{"term": map[string]any{"measurement_type": t}})
		}
		body := map[string]any{"query": map[string]any{"bool": map[string]any{"filter": filter}},
			"sort": []any{map[string]any{"first_seen_at": "desc"}}}
		if raw, err := r.Operations.RunOperation(ctx, "AnomalyEventSearch", map[string]any{"body": body, "size": 11, "sourceOnly": true}); err == nil {
			var docs []map[string]any
			_ = json.Unmarshal(raw, &docs)
			var similar []map[string]any
			var ids []any
			for _, d := range docs {
				if d["id"] != anomalyID && len(similar) < 10 {
					similar = append(similar, d)
					ids = append(ids, d["id"])
				}
			}
			out["similar_anomalies"] = similar
			sources["similar_anomaly_ids"] = ids
		}
	}
	return out, sources, nil
}

// metricValues reduces measurements to the metric's value and when each
// was taken relative to the anomaly (before, during, after).
func metricValues(raw json.RawMessage, metric string, first, last time.Time) ([]map[string]any, []any) {
	var docs []map[string]any
	_ = json.Unmarshal(raw, &docs)
	out := make([]map[string]any, 0, len(docs))
	ids := make([]any, 0, len(docs))
	for _, d := range docs {
		at, _ := d["created_at"].(string)
		t, _ := time.Parse(time.RFC3339, at)
		phase := "during"
		switch {
		case t.Before(first):
			phase = "before"
		case t.After(last):
			phase = "after"
		}
		v := map[string]any{"id": d["id"], "created_at": at, "phase": phase}
		if sv, ok := d["statistic_values"].(map[string]any); ok {
			v["value"] = sv[metric]
		}
		if st, ok := d["study"].(map[string]any); ok {
			v["subject"] = st["subject"]
		}
		out = append(out, v)
		ids = append(ids, d["id"])
	}
	return out, ids
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
