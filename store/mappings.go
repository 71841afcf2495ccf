package store

import (
	"cmp"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/rawjson"
)

// Field types of the search mapping (search_field_mappings.field_type), as
// Elasticsearch's dynamic mapping names them. A text field also has the
// exact-match sub-field <name>.keyword.
const (
	FieldLong    = "long"
	FieldFloat   = "float"
	FieldBoolean = "boolean"
	FieldDate    = "date"
	FieldText    = "text"
)

// FieldMapping is the type of one field of one index: the data owner's
// documents of a kind and (lower-cased) type, "" for documents without one.
type FieldMapping struct {
	Kind      string `db:"kind"`
	Type      string `db:"type"`
	Field     string `db:"field"`
	FieldType string `db:"field_type"`
}

// dateLike is what Elasticsearch's default dynamic_date_formats
// (strict_date_optional_time) read as a date that fg_time also reads: a
// date, optionally a time and a zone. It is fg_time's pattern.
var dateLike = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}(:?\d{2})?)?$`)

// ValueFieldType is the type Elasticsearch's dynamic mapping gives a field
// whose first value is v (decoded with UseNumber): a JSON integer long,
// another number float, true/false boolean, a date-looking string date,
// another string text; "" for null, objects and arrays (which are walked).
func ValueFieldType(v any) string {
	switch x := v.(type) {
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			return FieldFloat
		}
		return FieldLong
	case bool:
		return FieldBoolean
	case string:
		if dateLike.MatchString(x) {
			return FieldDate
		}
		return FieldText
	}
	return ""
}

// DetectMappings types the fields of docs in order as Elasticsearch's
// dynamic mapping does: the first value of a field in an index decides its
// type (an array's elements are values of its field, objects are walked
// to dotted names). skip holds indices into docs not to read. The
// documents are read as written (rawjson.Leaves), not decoded: decoding
// each into maps was a fifth of the probes' ingest's Go CPU.
func DetectMappings(docs []Document, skip []int) []FieldMapping {
	skipped := map[int]bool{}
	for _, i := range skip {
		skipped[i] = true
	}
	type key struct{ kind, typ, field string }
	seen := map[key]bool{}
	var out []FieldMapping
	for i, d := range docs {
		if skipped[i] {
			continue
		}
		typ := ""
		if d.Type != nil {
			typ = strings.ToLower(*d.Type)
		}
		start := len(out)
		ok := rawjson.Leaves(d.Doc, func(path string, lit []byte) bool {
			k := key{d.Kind, typ, path}
			if seen[k] {
				return true
			}
			if ft := ValueFieldType(decodeNumbers(lit)); ft != "" && path != "" {
				seen[k] = true
				out = append(out, FieldMapping{Kind: d.Kind, Type: typ, Field: path, FieldType: ft})
			}
			return true
		})
		if !ok { // not a JSON object: it types nothing
			for _, m := range out[start:] {
				delete(seen, key{m.Kind, m.Type, m.Field})
			}
			out = out[:start]
		}
	}
	return out
}

// saveMappings adds the fields not mapped yet; a mapped field keeps its type.
func saveMappings(ctx context.Context, tx pgx.Tx, ownerID int64, ms []FieldMapping) error {
	if len(ms) == 0 {
		return nil
	}
	// In one order everywhere: two imports typing the same new fields at
	// once then wait for each other instead of deadlocking.
	ms = slices.Clone(ms)
	slices.SortFunc(ms, func(a, b FieldMapping) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Type, b.Type), cmp.Compare(a.Field, b.Field))
	})
	kinds, types, fields, fts := make([]string, len(ms)), make([]string, len(ms)), make([]string, len(ms)), make([]string, len(ms))
	for i, m := range ms {
		kinds[i], types[i], fields[i], fts[i] = m.Kind, m.Type, m.Field, m.FieldType
	}
	_, err := tx.Exec(ctx, `INSERT INTO search_field_mappings (data_owner_id, kind, type, field, field_type)
		SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[])
		ON CONFLICT (data_owner_id, kind, type, field) DO NOTHING`, ownerID, kinds, types, fields, fts)
	return mapErr("save mappings", err)
}

// FieldMappings lists the data owner's mapped fields of a kind (every kind
// when kind is ""), by kind, type and field.
func (s *Store) FieldMappings(ctx context.Context, ownerID int64, kind string) ([]FieldMapping, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT kind, type, field, field_type FROM search_field_mappings
		WHERE data_owner_id = $1 AND ($2 = '' OR kind = $2) ORDER BY kind, type, field`, ownerID, kind)
	ms, err := pgx.CollectRows(rows, pgx.RowToStructByName[FieldMapping])
	return ms, mapErr("field mappings", err)
}
