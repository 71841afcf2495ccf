package pg

import (
	"context"
	"fmt"
	"strings"

	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/store"
)

// The field mapping (store.DetectMappings, table search_field_mappings):
// Elasticsearch's dynamic mapping, detected as documents are stored. A
// request reads the mapping of the indices it searches; a field the indices
// type differently is "" (untyped: read as today, by the value's JSON
// type), except long and float together, which are float (Elasticsearch
// widens numbers across indices). Where the mapping applies:
//
//   - DSL: term, terms and match on a date field compare dates (a partial
//     date matches its whole unit, as Elasticsearch's range of the value
//     rounded down and up does); sort values of a date field are epoch
//     milliseconds and search_after takes them; terms buckets of a date
//     field have epoch-millisecond keys with key_as_string; min and max of a
//     date field have value_as_string; avg, min, max, sum and stats of a
//     text or keyword field are refused, as Elasticsearch does.
//   - ES|QL: a field's values take its type (long arithmetic, boolean MIN
//     and MAX, dates), see esqlTranslator.docField.
type fieldTypes map[string]string

// indexFields is the mapping of one index: a kind and a lower-cased type.
type indexFields struct {
	kind, typ string
	fields    map[string]string
}

// loadMappings reads the data owner's mappings of the kinds.
func loadMappings(ctx context.Context, q querier, ownerID int64, kinds []string) ([]indexFields, error) {
	rows, err := q.Query(ctx, `SELECT kind, type, field, field_type FROM search_field_mappings
		WHERE data_owner_id = $1 AND kind = ANY($2::text[]) ORDER BY kind, type`, ownerID, kinds)
	if err != nil {
		return nil, fmt.Errorf("mapping: %w", err)
	}
	defer rows.Close()
	var out []indexFields
	for rows.Next() {
		var kind, typ, field, ft string
		if err := rows.Scan(&kind, &typ, &field, &ft); err != nil {
			return nil, fmt.Errorf("mapping: %w", err)
		}
		if n := len(out); n == 0 || out[n-1].kind != kind || out[n-1].typ != typ {
			out = append(out, indexFields{kind: kind, typ: typ, fields: map[string]string{}})
		}
		out[len(out)-1].fields[field] = ft
	}
	return out, rows.Err()
}

// mergeMappings is the mapping of the indices keep accepts.
func mergeMappings(ims []indexFields, keep func(kind, typ string) bool) fieldTypes {
	out := fieldTypes{}
	for _, im := range ims {
		if !keep(im.kind, im.typ) {
			continue
		}
		for f, t := range im.fields {
			old, seen := out[f]
			switch {
			case !seen:
				out[f] = t
			case old == t:
			case numericType(old) && numericType(t):
				out[f] = store.FieldFloat
			default:
				out[f] = ""
			}
		}
	}
	return out
}

func numericType(t string) bool { return t == store.FieldLong || t == store.FieldFloat }

// scopeMapping is the mapping of a DSL request's scope.
func scopeMapping(ctx context.Context, q querier, s search.Scope) (fieldTypes, error) {
	ims, err := loadMappings(ctx, q, s.DataOwnerID, []string{string(s.Kind)})
	if err != nil {
		return nil, err
	}
	types := map[string]bool{}
	for _, t := range s.Types {
		types[strings.ToLower(t)] = true
	}
	return mergeMappings(ims, func(_, typ string) bool { return len(types) == 0 || types[typ] }), nil
}

// of is the mapped type of a field as a request names it ("" when
// unmapped or untyped); name.keyword of a text field is its keyword
// sub-field, "keyword".
func (ft fieldTypes) of(field string) string {
	if t, ok := ft[field]; ok {
		return t
	}
	if b, ok := strings.CutSuffix(field, ".keyword"); ok && ft[b] == store.FieldText {
		return "keyword"
	}
	return ""
}
