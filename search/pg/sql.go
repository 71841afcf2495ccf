// Package pg is the embedded PostgreSQL search backend: it answers the
// supported subset of the Elasticsearch Query DSL (queries, sorting, paging,
// _source filtering, aggregations) and ES|QL over the documents table by
// translating them to SQL. Nothing from a request is ever spliced into SQL
// text: every value, field path included, travels as a placeholder.
package pg

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fleetgraph/fleetgraph/search"
)

// Backend is the PostgreSQL search backend.
type Backend struct {
	pool *pgxpool.Pool
}

// New returns the backend over the store's pool.
func New(pool *pgxpool.Pool) *Backend { return &Backend{pool: pool} }

// args collects the placeholder values of one statement.
type args struct{ vals []any }

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

// textExpr is the field's value as text (the column for mapped fields).
func textExpr(a *args, field string) string {
	if col, ok := columns[strings.TrimSuffix(field, ".keyword")]; ok {
		return col
	}
	return "(d.doc #>> " + a.add(fieldPath(field)) + "::text[])"
}

// numExpr is the field's value as a number, NULL when it is not one.
func numExpr(a *args, field string) string {
	return "fg_num" + jsonExpr(a, field)
}

// timeExpr is the field's value as a timestamp (created_at is the column).
func timeExpr(a *args, field string) string {
	if field == "created_at" {
		return "d.created_at"
	}
	return "fg_time" + jsonExpr(a, field)
}

// scopeWhere restricts to the scope's documents: always the first condition.
func scopeWhere(a *args, s search.Scope) string {
	w := "d.data_owner_id = " + a.add(s.DataOwnerID) + " AND d.kind = " + a.add(string(s.Kind))
	if len(s.Types) > 0 {
		w += " AND d.type = ANY(" + a.add(s.Types) + "::text[])"
	}
	return w
}

// globMatch matches s against pattern, where '*' stands for any run of
// characters (dots included): _source filters, top_hits, KEEP/DROP.
func globMatch(pattern, s string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == s
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for i := 1; i < len(parts)-1; i++ {
		j := strings.Index(s, parts[i])
		if j < 0 {
			return false
		}
		s = s[j+len(parts[i]):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// globMatchAny reports whether s matches one of the patterns.
func globMatchAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if globMatch(p, s) {
			return true
		}
	}
	return false
}
