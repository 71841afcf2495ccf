package pg

import (
	"fmt"
	"strings"

	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/search"
)

// top_hits aggregations: one statement per top_hits for all its buckets.

// topHitsResult is the result object of a top_hits aggregation.
func topHitsResult(total int64, maxScore any, hits []any) map[string]any {
	return map[string]any{"hits": map[string]any{
		"total":     map[string]any{"value": total, "relation": "eq"},
		"max_score": maxScore,
		"hits":      hits,
	}}
}

// sortExpr is the expression a top_hits sort orders by, and whether its
// value reads back as JSON.
func sortExpr(st *args, field string) (string, bool) {
	switch col, ok := columnOf(st, field, columns); {
	case ok && col == "d.created_at":
		return "floor(extract(epoch from d.created_at) * 1000)::bigint", false
	case ok:
		return col, false
	}
	return jsonExpr(st, field), true
}

// runTopHits fetches the top documents of every selected parent bucket in
// one statement.
func (x *aggExec) runTopHits(n *aggNode, objs map[string]map[string]any, sel []string) error {
	c := chain(n.parent)
	L := len(c)
	st := x.stmtArgs()
	from, err := x.from(st, c, sel, L)
	if err != nil {
		return err
	}
	part := ""
	if L > 0 {
		part = "PARTITION BY " + keyCols(L, "") + " "
	}
	var order []string
	cols := []string{"d.doc_id", "d.type", "d.doc::text"}
	isJSON := make([]bool, len(n.sort))
	for i, s := range n.sort {
		e, j := sortExpr(st, s.field)
		isJSON[i] = j
		dir := " ASC NULLS LAST"
		if s.desc {
			dir = " DESC NULLS LAST"
		}
		order = append(order, e+dir)
		if j {
			e += "::text"
		}
		cols = append(cols, e)
	}
	order = append(order, "d.id")
	cols = append(cols, "d.version")
	version := len(cols) + 2 // its index in a row (after p, total, rn)
	keys := "'[]'::text"
	if L > 0 {
		keys = "jsonb_build_array(" + keyCols(L, "") + ")::text"
	}
	sql := "SELECT * FROM (SELECT " + keys + " AS p, count(*) OVER (" + part + ") AS total, row_number() OVER (" + part +
		"ORDER BY " + strings.Join(order, ", ") + ") AS rn, " + strings.Join(cols, ", ") + from +
		") x WHERE x.rn > " + st.add(int64(n.from)) + "::bigint AND x.rn <= " + st.add(int64(n.from+n.size)) +
		"::bigint OR (x.rn = 1 AND " + st.add(n.size == 0) + "::bool) ORDER BY x.p, x.rn" +
		fmt.Sprintf(" LIMIT %d", limits.MaxTopHitsDocuments+1)
	rows, err := x.query(sql, st)
	if err != nil {
		return err
	}
	if len(rows) > limits.MaxTopHitsDocuments {
		return search.Badf("top_hits [%s] would return more than %d documents", n.name, limits.MaxTopHitsDocuments)
	}
	hits := map[string][]any{}
	totals := map[string]int64{}
	var score any = 1.0
	if len(n.sort) > 0 {
		score = nil
	}
	for _, r := range rows {
		p, _ := r[0].(string)
		pp := canonicalPath(p)
		totals[pp] = toInt(r[1])
		rn := toInt(r[2])
		if rn <= int64(n.from) || rn > int64(n.from+n.size) {
			continue // the row only carrying the total of size 0
		}
		id, _ := r[3].(string)
		typ, _ := r[4].(string)
		raw, _ := r[5].(string)
		// Like the search hits: every document scores 1 unless sorted by a field.
		hit := map[string]any{"_id": id, "_score": score}
		if x.scope.Slug != "" {
			hit["_index"] = search.IndexName(x.scope.Slug, x.scope.Kind, typ)
		}
		if n.source == nil || !n.source.none {
			src, err := n.source.source(raw)
			if err != nil {
				return fmt.Errorf("aggregations: document %s: %w", id, err)
			}
			hit["_source"] = src
		}
		if len(n.sort) > 0 {
			sv := make([]any, len(n.sort))
			for i := range n.sort {
				v := r[6+i]
				if s, ok := v.(string); ok && isJSON[i] {
					v, _ = decodeKey(s)
				}
				sv[i] = v
			}
			hit["sort"] = sv
		}
		if n.version {
			hit["_version"] = r[version]
		}
		if n.seqNo {
			hit["_seq_no"], hit["_primary_term"] = r[version], 1
		}
		hits[pp] = append(hits[pp], hit)
	}
	for pp, total := range totals {
		obj, ok := objs[pp]
		if !ok {
			continue
		}
		h := hits[pp]
		if h == nil {
			h = []any{}
		}
		var maxScore any
		if len(h) > 0 {
			maxScore = score
		}
		obj[n.name] = withMeta(n, topHitsResult(total, maxScore, h))
	}
	return nil
}
