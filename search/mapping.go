package search

import (
	"sort"
	"strings"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/store"
)

// Mapping answers GET <index>/_mapping over the data owner's field mappings
// (store.FieldMappings) in Elasticsearch's shape: per index,
// {"mappings": {"properties": ...}}, dotted fields as nested properties,
// text fields with their keyword sub-field (ignore_above 256, as dynamic
// mapping makes it). index is a comma list of names or '*' patterns of the
// data owner ("" or "_all": every index); a bare kind name also names its
// typed indices (as on the Elasticsearch backend). A name without '*' that
// names no index is a 404, a name outside the data owner's indices a 400.
func Mapping(slug, index string, fields []store.FieldMapping) (map[string]any, error) {
	byIndex := map[string][]store.FieldMapping{}
	var names []string
	for _, f := range fields {
		name := IndexName(slug, Kind(f.Kind), f.Type)
		if _, ok := byIndex[name]; !ok {
			names = append(names, name)
		}
		byIndex[name] = append(byIndex[name], f)
	}
	sort.Strings(names)
	var pats []string
	if index != "" && index != "_all" && index != "*" {
		pats = strings.Split(index, ",")
	}
	keep := map[string]bool{}
	for _, n := range names {
		keep[n] = len(pats) == 0
	}
	for _, p := range pats {
		p = strings.TrimSpace(p)
		if !strings.HasPrefix(p, IndexPrefix(slug)) {
			return nil, Badf("index [%s] is outside the data owner's indices (%s-*)", p, IndexPrefix(slug))
		}
		found := false
		for _, n := range names {
			if GlobMatch(p, n) || strings.HasPrefix(n, p+"-") && isKindName(slug, p) {
				keep[n], found = true, true
			}
		}
		if !found && !strings.Contains(p, "*") {
			return nil, apierr.Errorf(apierr.ErrNotFound, "no such index [%s]", p)
		}
	}
	out := map[string]any{}
	for _, n := range names {
		if !keep[n] {
			continue
		}
		props := map[string]any{}
		for _, f := range byIndex[n] {
			addProperty(props, strings.Split(f.Field, "."), f.FieldType)
		}
		out[n] = map[string]any{"mappings": map[string]any{"properties": props}}
	}
	return out, nil
}

// isKindName reports whether name is the bare index name of a kind.
func isKindName(slug, name string) bool {
	for _, k := range Kinds {
		if IndexName(slug, k, "") == name {
			return true
		}
	}
	return false
}

// addProperty puts a field of type t at path into props.
func addProperty(props map[string]any, path []string, t string) {
	if len(path) > 1 {
		obj, _ := props[path[0]].(map[string]any)
		if obj == nil {
			obj = map[string]any{}
			props[path[0]] = obj
		}
		sub, _ := obj["properties"].(map[string]any)
		if sub == nil {
			sub = map[string]any{}
			obj["properties"] = sub
		}
		addProperty(sub, path[1:], t)
		return
	}
	if _, taken := props[path[0]]; taken {
		return // an object of that name holds sub-fields already
	}
	m := map[string]any{"type": t}
	if t == store.FieldText {
		m["fields"] = map[string]any{"keyword": map[string]any{"type": "keyword", "ignore_above": 256}}
	}
	props[path[0]] = m
}
