package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/fleetgraph/fleetgraph/respond"
)

// The OpenAPI 3.1 description of a REST API, made from its route table and
// the stored operations: nothing in it is written per route. A route's
// parameters are its operation's variables (path parameters by the route's
// pattern, the input variable as the JSON body, flat body variables for
// BodyVars routes, the others as query parameters); its answer is the
// operation's selection typed by the schema (aliases are the keys, a
// non-null GraphQL type is a plain JSON type, a nullable one adds null, an
// @omitNull field is optional and never null, a field under @skip/@include
// is optional), shaped as the route answers it (Empty, Unwrap, Paged,
// ScrollNext's NDJSON). Every error answer has the error shape.

// API names one REST API for its description.
type API struct {
	Title       string
	Description string
	Base        string // base path, e.g. /client_admin_api/v1
	Routes      []Route
}

// OpenAPI returns the OpenAPI 3.1 document of api as JSON.
func (a *Adapter) OpenAPI(api API) ([]byte, error) {
	g := &openAPIGen{schema: a.schema, components: map[string]any{}}
	paths := map[string]map[string]any{}
	opIDs := map[string]int{}
	for _, rt := range api.Routes {
		op, ok := a.ops[rt.Operation]
		if !ok {
			return nil, fmt.Errorf("route %s %s: no stored operation %q", rt.Method, rt.Path, rt.Operation)
		}
		item := paths[rt.Path]
		if item == nil {
			item = map[string]any{}
			paths[rt.Path] = item
		}
		id := rt.Operation
		if opIDs[id]++; opIDs[id] > 1 {
			id += strings.ToUpper(rt.Method[:1]) + strings.ToLower(rt.Method[1:])
		}
		desc, err := g.operation(rt, op, id)
		if err != nil {
			return nil, fmt.Errorf("route %s %s: %w", rt.Method, rt.Path, err)
		}
		item[strings.ToLower(rt.Method)] = desc
	}
	g.components["Error"] = respond.ErrorSchema()
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       api.Title,
			"version":     "1",
			"description": api.Description,
			"license":     map[string]any{"name": "Proprietary", "identifier": "LicenseRef-Proprietary"},
		},
		"servers":  []any{map[string]any{"url": api.Base}},
		"security": []any{map[string]any{"ApiKeyAuth": []any{}}},
		"paths":    paths,
		"components": map[string]any{
			"schemas": g.components,
			"securitySchemes": map[string]any{"ApiKeyAuth": map[string]any{
				"type": "apiKey", "in": "header", "name": "X-API-KEY",
				"description": "An API key of the data owner; every answer is scoped to the key's data owner.",
			}},
		},
	}
	return json.MarshalIndent(doc, "", "  ")
}

type openAPIGen struct {
	schema     *ast.Schema
	components map[string]any // input object types and Error, by name
}

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

// pathParams are the parameters a route's path names ({id}).
func pathParams(path string) []string {
	var out []string
	for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
		out = append(out, m[1])
	}
	return out
}

// operation describes one route.
func (g *openAPIGen) operation(rt Route, op *operation, id string) (map[string]any, error) {
	inPath := map[string]bool{}
	for _, name := range pathParams(rt.Path) {
		inPath[name] = true
	}
	derived := map[string]bool{}
	if rt.Derive != nil {
		probe := map[string]any{}
		if rt.Derive(url.Values{}, probe) == nil {
			for k := range probe {
				derived[k] = true
			}
		}
	}
	out := map[string]any{"operationId": id, "summary": summary(rt, op),
		// The stored operation, for a client that runs it on /graphql as a persisted query.
		"x-graphql-operation": map[string]any{"name": op.Name, "sha256Hash": op.Hash}}
	if d := opDescription(op); d != "" {
		out["description"] = d
	}
	var params []any
	bodyProps, bodyRequired := map[string]any{}, []string{}
	for _, def := range op.Variables {
		name := def.Variable
		switch {
		case derived[name]:
		case inPath[name]:
			params = append(params, map[string]any{"name": name, "in": "path", "required": true,
				"schema": map[string]any{"type": "string"}})
			delete(inPath, name)
		case name == "input" && !rt.BodyVars:
			// An absent body is an empty object: required when the type has required fields.
			schema, _ := g.inputSchema(def.Type)
			required := false
			if in := g.schema.Types[def.Type.Name()]; in != nil {
				for _, f := range in.Fields {
					required = required || f.Type.NonNull && f.DefaultValue == nil
				}
			}
			out["requestBody"] = map[string]any{"required": required,
				"content": map[string]any{"application/json": map[string]any{"schema": schema}}}
		case name == otherParamsVar:
			// Other keys are the resolver's to accept or refuse by name.
		case rt.BodyVars && rt.Method != http.MethodGet:
			schema, _ := g.inputSchema(def.Type)
			bodyProps[snake(name)] = schema
			if def.Type.NonNull && def.DefaultValue == nil {
				bodyRequired = append(bodyRequired, snake(name))
			}
		default:
			params = append(params, g.queryParam(def))
		}
	}
	for name := range inPath {
		return nil, fmt.Errorf("path parameter {%s} names no variable of %s", name, op.Name)
	}
	if rt.BodyVars && rt.Method != http.MethodGet {
		sort.Strings(bodyRequired)
		body := map[string]any{"type": "object", "properties": bodyProps, "required": bodyRequired,
			"additionalProperties": hasVariable(op, otherParamsVar)}
		out["requestBody"] = map[string]any{"required": true,
			"content": map[string]any{"application/json": map[string]any{"schema": body}}}
	}
	if params != nil {
		out["parameters"] = params
	}
	ok, err := g.success(rt, op)
	if err != nil {
		return nil, err
	}
	errRef := map[string]any{"$ref": "#/components/schemas/Error"}
	out["responses"] = map[string]any{
		fmt.Sprint(rt.Status): ok,
		"4XX": map[string]any{"description": "The request is refused: 400 malformed, 401 no valid key, 403 role or key kind, 404 unknown, 409 conflict, 413 too large, 422 invalid (with errors per field), 429 rate limited or too many searches at once (Retry-After: seconds until a request would pass).",
			"headers": respond.RateLimitHeaders(true),
			"content": map[string]any{"application/json": map[string]any{"schema": errRef}}},
		"default": map[string]any{"description": "The server failed (5XX: no details).",
			"content": map[string]any{"application/json": map[string]any{"schema": errRef}}},
	}
	return out, nil
}

// summary is the route in words, from the table.
func summary(rt Route, op *operation) string {
	return rt.Method + " " + rt.Path + " (" + op.Name + ")"
}

// opDescription is the description of the operation's root fields.
func opDescription(op *operation) string {
	var parts []string
	for _, sel := range op.Annotated.SelectionSet {
		if f, ok := sel.(*ast.Field); ok && f.Definition != nil && f.Definition.Description != "" {
			parts = append(parts, strings.TrimSpace(f.Definition.Description))
		}
	}
	return strings.Join(parts, "\n\n")
}

// queryParam is a query parameter of a variable.
func (g *openAPIGen) queryParam(def *ast.VariableDefinition) map[string]any {
	p := map[string]any{"name": snake(def.Variable), "in": "query",
		"required": def.Type.NonNull && def.DefaultValue == nil && def.Type.Elem == nil}
	if def.Type.Elem != nil {
		p["schema"] = map[string]any{"type": "array", "items": g.scalarParam(def.Type.Elem.NamedType)}
		p["style"], p["explode"] = "form", true
		p["description"] = "Repeat the parameter, use " + snake(def.Variable) + "[]=, or separate values by commas."
	} else {
		p["schema"] = g.scalarParam(def.Type.NamedType)
	}
	if def.Type.Name() == "JSON" {
		p["description"] = "A JSON value, or a string."
	}
	return p
}

func (g *openAPIGen) scalarParam(name string) map[string]any {
	switch name {
	case "Int":
		return map[string]any{"type": "integer"}
	case "Boolean":
		return map[string]any{"type": "boolean"}
	case "Float":
		return map[string]any{"type": "number"}
	}
	if def := g.schema.Types[name]; def != nil && def.Kind == ast.Enum {
		return enumSchema(def, false)
	}
	return map[string]any{"type": "string"}
}

// success is the answer of a route that succeeds.
func (g *openAPIGen) success(rt Route, op *operation) (map[string]any, error) {
	if rt.CSV != nil {
		return map[string]any{"description": "Success: CSV with a header row (RFC 4180).",
			"headers": map[string]any{"Content-Disposition": map[string]any{"schema": map[string]any{"type": "string"}}},
			"content": map[string]any{"text/csv": map[string]any{"schema": map[string]any{"type": "string"}}}}, nil
	}
	shape := newShape(g.schema)
	root := g.schema.Query
	if op.Annotated.Operation == ast.Mutation {
		root = g.schema.Mutation
	}
	shape.collect(op.Annotated.SelectionSet, root, false)
	var body map[string]any
	headers := respond.RateLimitHeaders(false)
	switch {
	case rt.Empty:
		body = map[string]any{"type": "object", "maxProperties": 0, "description": "An empty object."}
	case rt.Unwrap || rt.Paged || rt.PagedKey != "":
		if len(shape.keys) != 1 {
			return nil, fmt.Errorf("%s: an Unwrap or Paged operation selects one field, not %d", op.Name, len(shape.keys))
		}
		f := shape.fields[shape.keys[0]]
		if rt.Unwrap {
			body = g.fieldSchema(f)
			break
		}
		items := f.sub.fields["items"]
		if items == nil {
			return nil, fmt.Errorf("%s: a Paged operation selects items", op.Name)
		}
		body = g.fieldSchema(items)
		if rt.PagedKey != "" {
			body = map[string]any{"type": "object", "required": []string{rt.PagedKey},
				"properties": map[string]any{rt.PagedKey: body}, "additionalProperties": false}
		}
		for _, h := range []string{"Per-Page", "Total"} {
			headers[h] = map[string]any{"schema": map[string]any{"type": "integer"}}
		}
		headers["Link"] = map[string]any{"schema": map[string]any{"type": "string"},
			"description": "RFC 8288 links to the first, previous, next and last pages (rel first, prev, next, last)."}
	default:
		body = g.objectSchema(shape)
	}
	content := map[string]any{"application/json": map[string]any{"schema": body}}
	if rt.ScrollNext != "" {
		content[NDJSONContentType] = map[string]any{"schema": map[string]any{"type": "array", "items": map[string]any{},
			"description": "With scroll: every hit's _source over all pages, one JSON document a line."}}
	}
	if rt.SSE != "" {
		content[EventStreamContentType] = map[string]any{"schema": map[string]any{"type": "array",
			"items": map[string]any{"type": "object", "required": []string{"type"}, "properties": map[string]any{"type": map[string]any{"type": "string"}}},
			"description": "With Accept: text/event-stream: Server-Sent Events in the AI SDK's UI message stream protocol " +
				"(header " + UIMessageStreamHeader + ": v1), one chunk a `data:` event, ended by `data: [DONE]`."}}
	}
	out := map[string]any{"description": "Success.", "content": content}
	if len(headers) > 0 {
		out["headers"] = headers
	}
	return out, nil
}

// shape is an object answer: its keys in order and what each holds, merged
// over every selection of the key (fragments, aliases, conditions).
type shape struct {
	schema *ast.Schema
	keys   []string
	fields map[string]*fieldShape
}

type fieldShape struct {
	def      *ast.FieldDefinition
	typ      *ast.Type
	required bool // selected unconditionally somewhere
	omitNull bool
	sub      *shape
}

func newShape(schema *ast.Schema) *shape {
	return &shape{schema: schema, fields: map[string]*fieldShape{}}
}

// collect adds a selection set on type on to s; conditional: under a
// @skip/@include, or a type condition other than on.
func (s *shape) collect(set ast.SelectionSet, on *ast.Definition, conditional bool) {
	for _, sel := range set {
		switch x := sel.(type) {
		case *ast.Field:
			key := responseKey(x)
			f := s.fields[key]
			if f == nil {
				f = &fieldShape{def: x.Definition}
				if x.Name == "__typename" {
					f.typ = ast.NonNullNamedType("String", nil)
				} else if x.Definition != nil {
					f.typ = x.Definition.Type
				}
				s.fields[key] = f
				s.keys = append(s.keys, key)
			}
			cond := conditional || conditionalDirectives(x.Directives)
			f.required = f.required || !cond
			f.omitNull = f.omitNull || x.Directives.ForName("omitNull") != nil
			if len(x.SelectionSet) > 0 {
				if f.sub == nil {
					f.sub = newShape(s.schema)
				}
				f.sub.collect(x.SelectionSet, s.schema.Types[x.Definition.Type.Name()], cond)
			}
		case *ast.InlineFragment:
			cond := conditional || conditionalDirectives(x.Directives) ||
				(x.TypeCondition != "" && on != nil && x.TypeCondition != on.Name)
			s.collect(x.SelectionSet, on, cond)
		case *ast.FragmentSpread:
			if x.Definition == nil {
				continue
			}
			cond := conditional || conditionalDirectives(x.Directives) || (on != nil && x.Definition.TypeCondition != on.Name)
			s.collect(x.Definition.SelectionSet, on, cond)
		}
	}
}

func conditionalDirectives(ds ast.DirectiveList) bool {
	return ds.ForName("skip") != nil || ds.ForName("include") != nil
}

// objectSchema is the JSON schema of an object answer: every key it may
// carry, and no other.
func (g *openAPIGen) objectSchema(s *shape) map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, key := range s.keys {
		f := s.fields[key]
		props[key] = g.fieldSchema(f)
		if f.required && !f.omitNull {
			required = append(required, key)
		}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

// fieldSchema is the JSON schema of one answered field.
func (g *openAPIGen) fieldSchema(f *fieldShape) map[string]any {
	out := g.outputType(f.typ, f.sub, f.omitNull)
	if f.def != nil && f.def.Description != "" {
		out["description"] = strings.TrimSpace(f.def.Description)
	}
	if f.omitNull {
		desc, _ := out["description"].(string)
		out["description"] = strings.TrimSpace(desc + " Absent when not set.")
	}
	return out
}

// outputType is the schema of an output type t; nonNull overrides a
// nullable t (an @omitNull field never answers null).
func (g *openAPIGen) outputType(t *ast.Type, sub *shape, nonNull bool) map[string]any {
	nullable := !t.NonNull && !nonNull
	var out map[string]any
	switch {
	case t.Elem != nil:
		out = map[string]any{"type": "array", "items": g.outputType(t.Elem, sub, false)}
	case sub != nil:
		out = g.objectSchema(sub)
	default:
		def := g.schema.Types[t.NamedType]
		if def != nil && def.Kind == ast.Enum {
			return enumSchema(def, nullable)
		}
		out = scalarSchema(t.NamedType)
	}
	return orNull(out, nullable)
}

// scalarSchema is the JSON schema of a scalar; JSON is any value.
func scalarSchema(name string) map[string]any {
	switch name {
	case "Int":
		return map[string]any{"type": "integer"}
	case "Float":
		return map[string]any{"type": "number"}
	case "Boolean":
		return map[string]any{"type": "boolean"}
	case "String", "ID":
		return map[string]any{"type": "string"}
	case "Time":
		return map[string]any{"type": "string", "format": "date-time"}
	}
	return map[string]any{} // JSON: any value
}

// orNull adds null to the types of s when nullable.
func orNull(s map[string]any, nullable bool) map[string]any {
	t, ok := s["type"].(string)
	if !nullable || !ok {
		return s
	}
	s["type"] = []string{t, "null"}
	return s
}

func enumSchema(def *ast.Definition, nullable bool) map[string]any {
	values := make([]any, 0, len(def.EnumValues)+1)
	for _, v := range def.EnumValues {
		values = append(values, v.Name)
	}
	if nullable {
		return map[string]any{"type": []string{"string", "null"}, "enum": append(values, nil)}
	}
	return map[string]any{"type": "string", "enum": values}
}

// inputSchema is the schema of an input type (input objects by reference
// to components.schemas) and whether a value must be given.
func (g *openAPIGen) inputSchema(t *ast.Type) (map[string]any, bool) {
	required := t.NonNull
	if t.Elem != nil {
		items, _ := g.inputSchema(t.Elem)
		return orNull(map[string]any{"type": "array", "items": items}, !t.NonNull), required
	}
	def := g.schema.Types[t.NamedType]
	switch {
	case def != nil && def.Kind == ast.InputObject:
		g.inputObject(def)
		ref := map[string]any{"$ref": "#/components/schemas/" + def.Name}
		if t.NonNull {
			return ref, required
		}
		return map[string]any{"oneOf": []any{ref, map[string]any{"type": "null"}}}, required
	case def != nil && def.Kind == ast.Enum:
		return enumSchema(def, !t.NonNull), required
	}
	return orNull(scalarSchema(t.NamedType), !t.NonNull), required
}

// inputObject adds an input object type to the components (once).
func (g *openAPIGen) inputObject(def *ast.Definition) {
	if _, done := g.components[def.Name]; done {
		return
	}
	obj := map[string]any{"type": "object", "additionalProperties": false}
	g.components[def.Name] = obj // before the fields: input types may refer to themselves
	props := map[string]any{}
	required := []string{}
	for _, f := range def.Fields {
		s, _ := g.inputSchema(f.Type)
		if f.Description != "" {
			s = withDescription(s, strings.TrimSpace(f.Description))
		}
		props[snake(f.Name)] = s
		if f.Type.NonNull && f.DefaultValue == nil {
			required = append(required, snake(f.Name))
		}
	}
	obj["properties"], obj["required"] = props, required
	if def.Description != "" {
		obj["description"] = strings.TrimSpace(def.Description)
	}
}

// withDescription adds a description, beside a $ref too (OpenAPI 3.1
// allows it).
func withDescription(s map[string]any, d string) map[string]any {
	out := make(map[string]any, len(s)+1)
	for k, v := range s {
		out[k] = v
	}
	out["description"] = d
	return out
}
