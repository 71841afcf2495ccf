package rest

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/fleetgraph/fleetgraph/store"
)

// inputMapper turns a decoded REST JSON body into the value of a GraphQL
// input variable by walking the input type in the schema. Only declared
// fields are mapped (REST snake_case keys onto camelCase fields); unknown
// fields and wrong JSON types become field errors keyed by the REST path.
// JSON scalars pass through untouched.
type inputMapper struct {
	schema *ast.Schema
	errs   map[string][]string
}

func (m *inputMapper) fail(path, msg string) {
	if m.errs == nil {
		m.errs = map[string][]string{}
	}
	m.errs[path] = append(m.errs[path], msg)
}

func (m *inputMapper) value(t *ast.Type, v any, path string) any {
	if v == nil {
		if t.NonNull {
			m.fail(path, "can't be null")
		}
		return nil
	}
	if t.Elem != nil {
		list, ok := v.([]any)
		if !ok {
			m.fail(path, "must be an array")
			return nil
		}
		out := make([]any, len(list))
		for i, item := range list {
			out[i] = m.value(t.Elem, item, fmt.Sprintf("%s[%d]", path, i))
		}
		return out
	}
	def := m.schema.Types[t.NamedType]
	switch def.Kind {
	case ast.InputObject:
		return m.object(def, v, path)
	case ast.Enum:
		s, ok := v.(string)
		if !ok || def.EnumValues.ForName(s) == nil {
			names := make([]string, len(def.EnumValues))
			for i, ev := range def.EnumValues {
				names[i] = ev.Name
			}
			m.fail(path, "must be one of "+strings.Join(names, ", "))
			return nil
		}
		return s
	default:
		return m.scalar(def.Name, v, path)
	}
}

func (m *inputMapper) object(def *ast.Definition, v any, path string) map[string]any {
	obj, ok := v.(map[string]any)
	if !ok {
		m.fail(pathOr(path, "body"), "must be a JSON object")
		return nil
	}
	out := make(map[string]any, len(obj))
	for key, val := range obj {
		f := fieldForKey(def, key)
		if f == nil {
			m.fail(join(path, key), "is not a known field")
			continue
		}
		out[f.Name] = m.value(f.Type, val, join(path, key))
	}
	for _, f := range def.Fields {
		if _, given := out[f.Name]; !given && f.Type.NonNull && f.DefaultValue == nil {
			m.fail(join(path, snake(f.Name)), "is required")
		}
	}
	return out
}

func (m *inputMapper) scalar(name string, v any, path string) any {
	switch name {
	case "Int":
		n, ok := v.(json.Number)
		if _, err := n.Int64(); !ok || err != nil {
			m.fail(path, "must be an integer")
			return nil
		}
		return n
	case "Float":
		n, ok := v.(json.Number)
		if _, err := n.Float64(); !ok || err != nil {
			m.fail(path, "must be a number")
			return nil
		}
		return n
	case "String", "ID":
		if s, ok := v.(string); ok {
			if strings.ContainsRune(s, 0) {
				m.fail(path, "must not contain NUL characters")
				return nil
			}
			return s
		}
		if n, ok := v.(json.Number); ok && name == "ID" {
			return n.String()
		}
		m.fail(path, "must be a string")
		return nil
	case "Boolean":
		if b, ok := v.(bool); ok {
			return b
		}
		m.fail(path, "must be true or false")
		return nil
	case "Time":
		s, ok := v.(string)
		t, err := store.ParseTime(s) // the ISO 8601 forms stored documents take
		if !ok || err != nil {
			m.fail(path, "must be an ISO 8601 date-time")
			return nil
		}
		return t.Format(time.RFC3339Nano)
	default: // JSON and other free-form scalars pass through
		return v
	}
}

func fieldForKey(def *ast.Definition, key string) *ast.FieldDefinition {
	for _, f := range def.Fields {
		if snake(f.Name) == key {
			return f
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func pathOr(path, alt string) string {
	if path == "" {
		return alt
	}
	return path
}

// snake turns a GraphQL camelCase name into the REST snake_case one.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r + ('a' - 'A'))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// snakePath converts each segment of a dotted camelCase path, up to a
// "data" segment: what follows names keys inside a free-form JSON document
// (a config's data), which keep the document's own spelling.
func snakePath(p string) string {
	parts := strings.Split(p, ".")
	for i, s := range parts {
		parts[i] = snake(s)
		if s == "data" {
			break
		}
	}
	return strings.Join(parts, ".")
}
