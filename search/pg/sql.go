// Package pg is the embedded PostgreSQL search backend: it answers the
// supported subset of the Elasticsearch Query DSL (queries, sorting, paging,
// _source filtering, aggregations) and ES|QL over the documents table by
// translating them to SQL. Nothing from a request is ever spliced into SQL
// text: every value, field path included, travels as a placeholder.
package pg

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/store"
)

// Backend is the PostgreSQL search backend.
type Backend struct {
	pool *pgxpool.Pool
	// Reads, when set, picks the pool a search, scroll page or ES|QL query
	// reads from (store.Store.ReadPool: a read replica); the pool above
	// keeps the scrolls' rows.
	Reads func(context.Context) *pgxpool.Pool
	// Timeout is the time limit of each search, scroll page and ES|QL query
	// (timeout.go); 0 is limits.SearchTimeout. A body's shorter "timeout" applies
	// instead; a longer one does not.
	Timeout time.Duration
}

// New returns the backend over the store's pool, with limits.SearchTimeout.
func New(pool *pgxpool.Pool) *Backend { return &Backend{pool: pool, Timeout: limits.SearchTimeout} }

// reads is the pool the reads of a request under ctx go to.
func (b *Backend) reads(ctx context.Context) *pgxpool.Pool {
	if b.Reads == nil {
		return b.pool
	}
	return b.Reads(ctx)
}

// args collects the placeholder values of one statement.
type args struct {
	vals []any
	// index is the scope's index name without the type
	// (search.IndexName(slug, kind, "")), which the virtual field _index
	// extends; scopeWhere sets it and copies of args keep it.
	index string
	// types is the mapping of the request's indices (mapping.go); copies
	// of args keep it. nil: no field is typed.
	types fieldTypes
}

// clone is a copy of a with the same placeholders (for another statement
// that starts from the same condition).
func (a *args) clone() *args {
	return &args{vals: append([]any(nil), a.vals...), index: a.index, types: a.types}
}

// add appends v and returns its placeholder ($n).
func (a *args) add(v any) string {
	a.vals = append(a.vals, v)
	return fmt.Sprintf("$%d", len(a.vals))
}

// Columns of documents that stand for document fields; everything else is
// read from the JSON document.
var columns = map[string]string{
	"created_at":  "d.created_at",
	"_id":         "d.doc_id",
	"client_uuid": "d.client_uuid::text",
	"type":        "d.type",
}

// indexField is the virtual field _index (exactly so named, without
// ".keyword"): the concrete index name of the document, the one its hit's
// _index shows (search.IndexName(slug, kind, type)). On Elasticsearch it is a
// metadata field that term, terms, prefix, wildcard, exists, query_string,
// terms aggregations and sort can use; it only ever filters or groups the
// scope's own documents.
const indexField = "_index"

// indexExpr is the SQL text of _index for the row d: the scope's index name
// (a placeholder) and, for typed documents, "-" and the lower-cased type.
// Types are ASCII (store.validType); lower under the "C" collation changes
// exactly A-Z, as strings.ToLower does on them.
func indexExpr(a *args) string {
	return "(" + a.add(a.index) + `::text || COALESCE('-' || NULLIF(lower(d.type COLLATE "C"), ''), ''))`
}

// columnOf is the SQL expression of a field read from a column of m (or of
// the virtual _index), given the field as the request names it.
func columnOf(a *args, field string, m map[string]string) (string, bool) {
	if field == indexField {
		return indexExpr(a), true
	}
	col, ok := m[strings.TrimSuffix(field, ".keyword")]
	return col, ok
}

// isColumn reports whether columnOf(_, field, m) finds a column, without
// adding a placeholder.
func isColumn(field string, m map[string]string) bool {
	if field == indexField {
		return true
	}
	_, ok := m[strings.TrimSuffix(field, ".keyword")]
	return ok
}

// fieldPath splits a DSL field name into its JSON path; ".keyword" (the
// exact-match sub-field of text fields) reads the same value.
func fieldPath(field string) []string {
	field = strings.TrimSuffix(field, ".keyword")
	return strings.Split(field, ".")
}

// jsonExpr is the field's JSON value (jsonb, NULL when absent).
func jsonExpr(a *args, field string) string {
	return "(d.doc #> " + a.add(fieldPath(field)) + "::text[])"
}

// isDate reports whether field is a date: created_at, or a field the
// mapping types date.
func (a *args) isDate(field string) bool {
	return baseField(field) == "created_at" || a.types.of(field) == store.FieldDate
}

// scopeWhere restricts to the scope's documents: always the first condition.
func scopeWhere(a *args, s search.Scope) string {
	a.index = search.IndexName(s.Slug, s.Kind, "")
	w := "d.data_owner_id = " + a.add(s.DataOwnerID) + " AND d.kind = " + a.add(string(s.Kind))
	if len(s.Types) > 0 {
		w += " AND d.type = ANY(" + a.add(s.Types) + "::text[])"
	}
	return w
}

// globMatchAny reports whether s matches one of the patterns.
func globMatchAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if search.GlobMatch(p, s) {
			return true
		}
	}
	return false
}
