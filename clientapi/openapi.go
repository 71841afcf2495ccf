package clientapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/respond"
)

// OpenAPI is the OpenAPI 3.1 document of the client API, made from its
// route table (routes): each route's body and answer are described from
// their Go types (a struct is an object of its JSON keys, a key without
// omitempty required; a pointer or a slice may be null; time.Time is a
// date-time; json.RawMessage any value). Every error answer has the
// error shape.
func OpenAPI() ([]byte, error) {
	paths := map[string]map[string]any{}
	for _, rt := range routes() {
		item := paths[rt.path]
		if item == nil {
			item = map[string]any{}
			paths[rt.path] = item
		}
		item[strings.ToLower(rt.method)] = rt.describe()
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":   "fleetgraph Client API",
			"version": "1",
			"description": "The probes' API: register with a registration key, check in and fetch configs, report " +
				"documents. Generated from the route table (clientapi/clientapi.go); see docs/client-api.md.",
			"license": map[string]any{"name": "Proprietary", "identifier": "LicenseRef-Proprietary"},
		},
		"servers":  []any{map[string]any{"url": Base}},
		"security": []any{map[string]any{"ProbeSecret": []any{}}},
		"paths":    paths,
		"components": map[string]any{
			"schemas": map[string]any{"Error": respond.ErrorSchema()},
			"securitySchemes": map[string]any{"ProbeSecret": map[string]any{
				"type": "apiKey", "in": "header", "name": "X-API-KEY",
				"description": "The probe's secret (probe-...) from POST /register; the report routes also take a " +
					"client analytics key (client_analytics-...).",
			}},
		},
	}
	return json.MarshalIndent(doc, "", "  ")
}

// describe is the route's operation.
func (rt route) describe() map[string]any {
	errRef := map[string]any{"$ref": "#/components/schemas/Error"}
	jsonOf := func(schema any) map[string]any {
		return map[string]any{"application/json": map[string]any{"schema": schema}}
	}
	headers := respond.RateLimitHeaders(false)
	if len(rt.kinds) == 0 {
		headers = nil
	}
	ok := map[string]any{"description": "Done.", "content": jsonOf(jsonSchema(reflect.TypeOf(rt.answer)))}
	if headers != nil {
		ok["headers"] = headers
	}
	responses := map[string]any{
		fmt.Sprint(rt.status): ok,
		"4XX": map[string]any{"description": "The request is refused: 400 malformed, 401 no valid secret or key, 403 disabled or past its usage limit, 413 too large, 422 invalid (with errors per field), 429 rate limited (Retry-After: seconds until a request would pass).",
			"content": jsonOf(errRef)},
		"default": map[string]any{"description": "The server failed (5XX: no details).", "content": jsonOf(errRef)},
	}
	id := strings.ToLower(rt.method)
	for _, w := range strings.FieldsFunc(rt.path, func(r rune) bool { return r == '/' || r == '_' }) {
		id += strings.ToUpper(w[:1]) + w[1:]
	}
	out := map[string]any{"operationId": id, "summary": rt.summary, "responses": responses}
	if len(rt.kinds) == 0 {
		out["security"] = []any{}
	}
	switch {
	case rt.report:
		answer := jsonSchema(reflect.TypeOf(rt.answer))
		responses["207"] = map[string]any{"description": "Some documents were accepted, some refused (errors, per document).",
			"headers": headers, "content": jsonOf(answer)}
		responses["422"] = map[string]any{"description": "No document was accepted: the refusals per document, or the error shape.",
			"headers": headers, "content": jsonOf(map[string]any{"oneOf": []any{answer, errRef}})}
		responses["429"] = map[string]any{"description": "Rate limited (the error shape), or no document was accepted because " +
			"each named a client past the client analytics keys' bound on new clients (the refusals per document).",
			"headers": headers, "content": jsonOf(map[string]any{"oneOf": []any{answer, errRef}})}
		doc := map[string]any{"type": "object", "description": "A document of the route's kind (docs/client-api.md)."}
		out["requestBody"] = map[string]any{"required": true, "content": map[string]any{
			"application/json":     map[string]any{"schema": map[string]any{"type": "array", "items": doc, "minItems": 1, "maxItems": limits.MaxReportDocuments}},
			"application/x-ndjson": map[string]any{"schema": map[string]any{"type": "string", "description": "One document per line (NDJSON)."}},
		}}
	case rt.body != nil:
		out["requestBody"] = map[string]any{"required": true, "content": jsonOf(jsonSchema(reflect.TypeOf(rt.body)))}
	}
	if rt.method == http.MethodGet && rt.path == "/config" {
		responses["304"] = map[string]any{"description": "Not modified: If-None-Match names the current ETag."}
		ok["headers"] = mergeHeaders(headers, map[string]any{"ETag": map[string]any{"schema": map[string]any{"type": "string"},
			"description": "The answer's entity tag, for If-None-Match."}})
	}
	return out
}

func mergeHeaders(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

var (
	timeType = reflect.TypeOf(time.Time{})
	rawType  = reflect.TypeOf(json.RawMessage{})
)

// jsonSchema is the JSON schema of what encoding/json writes of a value of
// type t.
func jsonSchema(t reflect.Type) map[string]any {
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case t == rawType:
		return map[string]any{}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(jsonSchema(t.Elem()))
	case reflect.Slice:
		return nullable(map[string]any{"type": "array", "items": jsonSchema(t.Elem())})
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Struct:
		props, required := map[string]any{}, []string{}
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" || name == "" {
				continue
			}
			props[name] = jsonSchema(f.Type)
			if !strings.Contains(opts, "omitempty") {
				required = append(required, name)
			}
		}
		return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
	}
	panic(fmt.Sprintf("clientapi: no JSON schema for %s", t))
}

// nullable adds null to a schema's type (any value stays any).
func nullable(s map[string]any) map[string]any {
	if typ, ok := s["type"].(string); ok {
		s["type"] = []any{typ, "null"}
	}
	return s
}
