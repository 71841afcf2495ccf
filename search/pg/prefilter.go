package pg

import (
	"encoding/json"
	"strings"
)

// Index prefilters.
//
// A term on a JSON field is translated as a test of the field's value, which
// PostgreSQL can only check document by document. For term and terms
// clauses every matching document must satisfy (the query's top level and
// bool must/filter, never under should or must_not), prefilter adds a
// containment test the documents' GIN index answers: the value itself, or
// an array holding it, at the field's path. It only narrows what the exact
// condition then checks, so the answer is the same; statements that count
// or aggregate matches use it, while the first page of hits in index order
// is usually found faster without it.
//
// PostgreSQL cannot estimate how many documents a containment test keeps,
// and plans as if few: for a common value a GIN scan beside a created_at
// range or a column filter is slower than walking that range. So the
// prefilter is left out when the query already restricts created_at or an
// indexed column; it pays off where the alternative is reading all of the
// data owner's documents.

// prefilter returns the containment conditions implied by q ("" when
// none), using c's placeholders.
func (c *compiler) prefilter(q any) string {
	var conds [][]string // containment documents, one list per clause
	indexed := false     // a created_at range or column term the indexes serve
	var walk func(q any)
	walk = func(q any) {
		m, ok := q.(map[string]any)
		if !ok || len(m) != 1 {
			return
		}
		for name, body := range m {
			switch name {
			case "bool":
				b, _ := body.(map[string]any)
				for _, k := range []string{"must", "filter"} {
					for _, sub := range clauseList(b[k]) {
						walk(sub)
					}
				}
			case "constant_score":
				b, _ := body.(map[string]any)
				walk(b["filter"])
			case "range":
				if field, _, err := singleField("range", body); err == nil && baseField(field) == "created_at" {
					indexed = true
				}
			case "ids":
				indexed = true
			case "term", "terms":
				field, val, err := singleField(name, body)
				if err != nil {
					return
				}
				if _, col := columns[baseField(field)]; col {
					indexed = true
				}
				vals, _ := val.([]any)
				if name == "term" {
					v, opts := options(val, "value")
					if truthy(opts["case_insensitive"]) {
						return
					}
					vals = []any{v}
				}
				if len(vals) == 0 || len(vals) > maxTerms {
					return
				}
				if docs := containment(field, vals); docs != nil {
					conds = append(conds, docs)
				}
			}
		}
	}
	walk(q)
	if indexed {
		return ""
	}
	parts := make([]string, len(conds))
	for i, docs := range conds {
		parts[i] = "d.doc @> ANY(" + c.a.add(docs) + "::text[]::jsonb[])"
	}
	return strings.Join(parts, " AND ")
}

// containment is the documents a GIN-indexable test of field holding one of
// vals (as itself or in an array) contains, or nil when the exact condition
// can match documents it would not: columns, array index paths, numbers
// (which also match numeric strings) and anything but strings and booleans.
func containment(field string, vals []any) []string {
	if field == indexField {
		return nil
	}
	field = baseField(field)
	if _, col := columns[field]; col || field == "*" || field == "" {
		return nil
	}
	path := fieldPath(field)
	for _, seg := range path {
		if seg == "" || indexSegment.MatchString(seg) {
			return nil
		}
	}
	var docs []string
	for _, v := range vals {
		switch t := v.(type) {
		case string:
			if _, num := numberOrNumeric(t); num {
				return nil
			}
		case bool:
		default:
			return nil
		}
		for _, leaf := range []any{v, []any{v}} {
			var doc any = leaf
			for i := len(path) - 1; i >= 0; i-- {
				doc = map[string]any{path[i]: doc}
			}
			raw, err := json.Marshal(doc)
			if err != nil {
				return nil
			}
			docs = append(docs, string(raw))
		}
	}
	return docs
}
