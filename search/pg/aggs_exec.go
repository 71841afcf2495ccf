package pg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fleetgraph/fleetgraph/isotime"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/limits/budget"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/store"
)

// Execution of parsed aggregations: one statement per bucket level, the
// lateral joins producing bucket keys, metric columns and results.

type aggExec struct {
	ctx   context.Context
	b     *Backend
	q     querier
	base  *args
	where string
	scope search.Scope
	// cells, when set, answers every statement (rollup_query.go).
	cells *cellSet
	// buckets counts the buckets made from groups and filled in, alloc
	// every bucket object made, placeholders replaced later included (a
	// guard on memory; the response's buckets are counted at the end).
	buckets, alloc int
}

// stmtArgs starts a statement's placeholders: a copy of the request's.
func (x *aggExec) stmtArgs() *args {
	return x.base.clone()
}

func (x *aggExec) countBuckets(n int) error {
	x.buckets += n
	if x.buckets > limits.MaxAggBuckets {
		return search.Badf("too many buckets in aggregations (more than %d)", limits.MaxAggBuckets)
	}
	return x.countAlloc(n)
}

func (x *aggExec) countAlloc(n int) error {
	x.alloc += n
	if x.alloc > 10*limits.MaxAggBuckets {
		return search.Badf("too many buckets in aggregations (more than %d)", limits.MaxAggBuckets)
	}
	return nil
}

// populate puts the empty result of every aggregation into obj; computed
// results replace them.
func (x *aggExec) populate(obj map[string]any, nodes []*aggNode) error {
	for _, n := range nodes {
		r, err := x.emptyResult(n)
		if err != nil {
			return err
		}
		obj[n.name] = r
	}
	return nil
}

func withMeta(n *aggNode, r map[string]any) map[string]any {
	if n.meta != nil {
		r["meta"] = n.meta
	}
	return r
}

// emptyResult is the result of n over no documents.
func (x *aggExec) emptyResult(n *aggNode) (map[string]any, error) {
	switch n.typ {
	case "terms":
		return withMeta(n, map[string]any{"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": []any{}}), nil
	case "date_histogram", "histogram":
		if n.ext != nil && n.minDocCount == 0 {
			return x.histResult(n, nil, nil, func(string, map[string]any) {})
		}
		if n.keyed {
			return withMeta(n, map[string]any{"buckets": map[string]any{}}), nil
		}
		return withMeta(n, map[string]any{"buckets": []any{}}), nil
	case "filter", "missing":
		b := map[string]any{"doc_count": int64(0)}
		return withMeta(n, b), x.populate(b, n.subs)
	case "range", "filters":
		bs := make([]map[string]any, n.fixedBuckets())
		for i := range bs {
			b, err := x.fixedBucket(n, i)
			if err != nil {
				return nil, err
			}
			bs[i] = b
		}
		return withMeta(n, x.fixedResult(n, bs)), nil
	case "avg", "min", "max":
		return withMeta(n, map[string]any{"value": nil}), nil
	case "sum":
		return withMeta(n, map[string]any{"value": 0.0}), nil
	case "value_count", "cardinality":
		return withMeta(n, map[string]any{"value": int64(0)}), nil
	case "stats":
		return withMeta(n, map[string]any{"count": int64(0), "min": nil, "max": nil, "avg": nil, "sum": 0.0}), nil
	case "percentiles":
		return withMeta(n, map[string]any{"values": percentileValues(n, nil)}), nil
	case "top_hits":
		return withMeta(n, topHitsResult(0, nil, []any{})), nil
	}
	return nil, search.Badf("unsupported aggregation type [%s]", n.typ)
}

// fixedBuckets is the number of buckets of range and filters aggregations.
func (n *aggNode) fixedBuckets() int {
	if n.typ == "range" {
		return len(n.ranges)
	}
	if n.other {
		return len(n.filters) + 1
	}
	return len(n.filters)
}

// fixedBucket is bucket i of a range or filters aggregation, empty.
func (x *aggExec) fixedBucket(n *aggNode, i int) (map[string]any, error) {
	if err := x.countAlloc(1); err != nil {
		return nil, err
	}
	b := map[string]any{"doc_count": int64(0)}
	if n.typ == "range" {
		n.rangeFields(b, i)
	}
	return b, x.populate(b, n.subs)
}

func (x *aggExec) fixedResult(n *aggNode, bs []map[string]any) map[string]any {
	if n.keyed {
		m := map[string]any{}
		for i, b := range bs {
			k := n.fixedKey(i)
			if n.typ == "range" {
				delete(b, "key")
			}
			m[k] = b
		}
		return withMeta(n, map[string]any{"buckets": m})
	}
	arr := make([]any, len(bs))
	for i, b := range bs {
		arr[i] = b
	}
	return withMeta(n, map[string]any{"buckets": arr})
}

func (n *aggNode) fixedKey(i int) string {
	if n.typ == "range" {
		return n.ranges[i].key
	}
	if i == len(n.filters) {
		return n.otherKy
	}
	return n.filters[i].name
}

// chain is the bucket aggregations from the top down to n (inclusive).
func chain(n *aggNode) []*aggNode {
	var c []*aggNode
	for ; n != nil; n = n.parent {
		c = append(c, n)
	}
	slices.Reverse(c)
	return c
}

// runLevel computes the aggregations nodes directly under parent (nil: the
// top level). objs maps the path of each parent bucket holding documents
// (JSON array of its keys from the top) to its object; sel lists those
// paths (nil at the top level).
func (x *aggExec) runLevel(parent *aggNode, nodes []*aggNode, objs map[string]map[string]any, sel []string) error {
	if parent != nil && len(sel) == 0 {
		return nil
	}
	var metrics []*aggNode
	for _, n := range nodes {
		if n.typ != "top_hits" && metricTypes[n.typ] {
			metrics = append(metrics, n)
		}
	}
	if parent == nil && len(metrics) > 0 {
		if err := x.runTopMetrics(metrics, objs["[]"]); err != nil {
			return err
		}
	}
	for _, n := range nodes {
		var err error
		switch {
		case n.typ == "top_hits":
			err = x.runTopHits(n, objs, sel)
		case bucketTypes[n.typ]:
			err = x.runBucket(n, objs, sel)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (x *aggExec) query(sql string, st *args) ([][]any, error) {
	rows, err := x.q.Query(x.ctx, sql, st.vals...)
	if err != nil {
		return nil, aggSQLError(err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			return nil, aggSQLError(err)
		}
		if err := budget.Spend(x.ctx, rowBytes(v)); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, aggSQLError(err)
	}
	return out, nil
}

// aggSQLError makes the errors a request can cause 400s.
func aggSQLError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "22023", "22008", "22003", "22P02", "22012":
			// invalid parameter value (time zone), datetime/numeric overflow,
			// invalid text representation, division by zero
			return search.Badf("aggregation cannot be computed: %s", pe.Message)
		}
	}
	return fmt.Errorf("aggregations: %w", err)
}

// from is the FROM ... WHERE of a statement over the bucket levels of c,
// restricted to the selected buckets of its first len(c)-own levels.
func (x *aggExec) from(st *args, c []*aggNode, sel []string, selLevels int) (string, error) {
	var sb strings.Builder
	sb.WriteString(" FROM documents d")
	for i, n := range c {
		j, err := x.join(st, n)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&sb, " CROSS JOIN LATERAL %s g%d", j, i+1)
	}
	sb.WriteString(" WHERE (" + x.where + ")")
	if selLevels > 0 {
		sb.WriteString(" AND jsonb_build_array(" + keyCols(selLevels, "") + ") IN (SELECT unnest(" + st.add(sel) + "::text[]::jsonb[]))")
	}
	return sb.String(), nil
}

// keyCols lists g1.k, ..., gN.k (each followed by suffix).
func keyCols(n int, suffix string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("g%d.k%s", i+1, suffix)
	}
	return strings.Join(parts, ", ")
}

// valuesOf is the field's JSON value expanded to its elements (one row per
// distinct non-null element; a scalar is its own element), as lateral
// subquery text producing column e.
func valuesOf(st *args, field string) string {
	j := valueJSON(st, field)
	return "jsonb_array_elements(CASE WHEN jsonb_typeof(" + j + ") = 'array' THEN " + j +
		" ELSE jsonb_build_array(" + j + ") END)"
}

// valueJSON is the field's value as jsonb (dates of created_at as epoch
// milliseconds).
func valueJSON(st *args, field string) string {
	if col, ok := columnOf(st, field, columns); ok {
		if col == "d.created_at" {
			return "to_jsonb(floor(extract(epoch from d.created_at) * 1000)::bigint)"
		}
		return "to_jsonb(" + col + ")"
	}
	return jsonExpr(st, field)
}

// termValues is a lateral subquery producing column k: the field's
// distinct non-null values, the elements of an array. Scalars skip the
// element expansion, which costs more than reading them.
func termValues(st *args, field string) string {
	if baseField(field) != "created_at" && st.isDate(field) {
		// A date of the mapping: keyed by epoch milliseconds.
		return "(SELECT to_jsonb(floor(extract(epoch from fg_time(t.k)) * 1000)::bigint) AS k FROM " +
			plainTermValues(st, field) + " t WHERE fg_time(t.k) IS NOT NULL)"
	}
	return plainTermValues(st, field)
}

// filteredTermValues is termValues of a terms aggregation, kept to the
// values its include and not its exclude take (compared as text: a
// regular expression matches the whole value, as on Elasticsearch).
func (n *aggNode) filteredTermValues(st *args) string {
	q := termValues(st, n.field)
	var conds []string
	for _, f := range []*termsFilter{n.include, n.exclude} {
		if f == nil {
			conds = append(conds, "")
			continue
		}
		var c string
		if f.values != nil {
			c = "(t.k #>> '{}') = ANY(" + st.add(f.values) + "::text[])"
		} else {
			c = "(t.k #>> '{}') ~ " + st.add("^(?:"+f.regex+")$") + "::text"
		}
		conds = append(conds, c)
	}
	var where []string
	if conds[0] != "" {
		where = append(where, conds[0])
	}
	if conds[1] != "" {
		where = append(where, "NOT "+conds[1])
	}
	if len(where) == 0 {
		return q
	}
	return "(SELECT t.k FROM " + q + " t WHERE " + strings.Join(where, " AND ") + ")"
}

// plainTermValues is termValues of the JSON values as they are.
func plainTermValues(st *args, field string) string {
	j := valueJSON(st, field)
	isArray := "jsonb_typeof(" + j + ") = 'array'"
	return "(SELECT " + j + " AS k WHERE jsonb_typeof(" + j + ") NOT IN ('array', 'null') UNION ALL " +
		"SELECT DISTINCT e FROM jsonb_array_elements(CASE WHEN " + isArray + " THEN " + j + " END) e WHERE " +
		isArray + " AND e <> 'null'::jsonb)"
}

// numVal is the field's value as a double (dates as epoch milliseconds),
// NULL when it has none; missing replaces absent values.
func numVal(st *args, n *aggNode) string {
	var v string
	col, isCol := columnOf(st, n.field, columns)
	switch {
	case isCol && col == "d.created_at":
		v = "(extract(epoch from d.created_at) * 1000)::float8"
	case isCol:
		v = "fg_num(to_jsonb(" + col + "))"
	default:
		j := jsonExpr(st, n.field)
		v = "coalesce(fg_num" + j + ", (extract(epoch from fg_time" + j + ") * 1000)::float8)"
	}
	if n.hasMissing {
		v = "coalesce(" + v + ", " + st.add(n.missing) + "::float8)"
	}
	if n.only != "" {
		v = "(CASE WHEN " + n.only + " THEN " + v + " END)"
	}
	return v
}

// presentJSON is the field's JSON value for counting (NULL when absent).
func presentJSON(st *args, field string) string {
	if col, ok := columnOf(st, field, columns); ok {
		return "to_jsonb(" + col + ")"
	}
	return "nullif(" + jsonExpr(st, field) + ", 'null'::jsonb)"
}

func (x *aggExec) cond(st *args, n *aggNode, q map[string]any) (string, error) {
	c, err := (&compiler{a: st, now: time.Now()}).query(q)
	if err != nil {
		return "", err
	}
	// Never NULL, whatever context the aggregation puts it in.
	return "coalesce((" + c + "), false)", nil
}

// join is the lateral subquery producing the bucket key k (jsonb) of n for
// each document, one row per bucket the document falls in.
func (x *aggExec) join(st *args, n *aggNode) (string, error) {
	switch n.typ {
	case "terms":
		q := n.filteredTermValues(st)
		if n.hasMissing {
			mv, _ := json.Marshal(n.missing)
			q = "(SELECT t.k FROM " + q + " t UNION ALL SELECT " + st.add(string(mv)) +
				"::text::jsonb AS k WHERE NOT EXISTS (SELECT 1 FROM " + valuesOf(st, n.field) + " e2 WHERE e2 <> 'null'::jsonb))"
		}
		return q, nil
	case "date_histogram":
		// A multi-valued date puts the document in the bucket of each of
		// its values, once per bucket (Elasticsearch: rest-api-spec
		// search.aggregation/361_date_histogram_multivalue.yml).
		ts, from := "d.created_at", ""
		if n.field != "created_at" {
			ts, from = "fg_time(mv.v)", " FROM fg_mv("+jsonExpr(st, n.field)+") AS mv(v)"
		}
		cast := "::text"
		if n.tz.interval {
			cast = "::interval"
		}
		z := st.add(n.tz.pg) + cast
		local := "(" + ts + " AT TIME ZONE " + z + ")"
		var keyTs string
		if n.calUnit != "" {
			off := ""
			if n.offMs != 0 {
				off = st.add(n.offMs) + "::bigint * interval '1 millisecond'"
				local = "(" + local + " - " + off + ")"
			}
			b := "date_trunc(" + st.add(n.calUnit) + "::text, " + local + ")"
			if off != "" {
				b = "(" + b + " + " + off + ")"
			}
			keyTs = "(" + b + " AT TIME ZONE " + z + ")"
		} else {
			off := st.add(n.offMs) + "::bigint"
			iv := st.add(n.fixedMs) + "::bigint"
			lms := "floor(extract(epoch from " + local + ") * 1000)::bigint"
			b := "(floor((" + lms + " - " + off + ")::float8 / " + iv + ")::bigint * " + iv + " + " + off + ")"
			keyTs = "(('epoch'::timestamp + " + b + "::float8 * interval '1 millisecond') AT TIME ZONE " + z + ")"
		}
		return "(SELECT DISTINCT to_jsonb(floor(extract(epoch from " + keyTs + ") * 1000)::bigint) AS k" + from + " WHERE " + ts + " IS NOT NULL)", nil
	case "histogram":
		v := numVal(st, n)
		return "(SELECT to_jsonb(floor((" + v + " - " + st.add(n.offset) + "::float8) / " + st.add(n.interval) +
			"::float8)) AS k WHERE " + v + " IS NOT NULL)", nil
	case "range":
		from := make([]float64, len(n.ranges))
		to := make([]float64, len(n.ranges))
		for i, r := range n.ranges {
			from[i], to[i] = r.from, r.to
		}
		ranges := "unnest(" + st.add(from) + "::float8[], " + st.add(to) + "::float8[]) WITH ORDINALITY AS r(f, t, i)"
		if isColumn(n.field, columns) {
			v := numVal(st, n)
			return "(SELECT to_jsonb(r.i - 1) AS k FROM " + ranges + " WHERE " + v + " >= r.f AND " + v + " < r.t)", nil
		}
		// A document value: each value of a multi-value puts the document
		// in its range (once per range); missing stands for no value.
		j := jsonExpr(st, n.field)
		vals := "SELECT coalesce(fg_num(mv.v), (extract(epoch from fg_time(mv.v)) * 1000)::float8) AS x FROM fg_mv(" + j + ") AS mv(v)"
		if n.hasMissing {
			vals += " UNION ALL SELECT " + st.add(n.missing) + "::float8 WHERE NOT EXISTS (SELECT 1 FROM fg_mv(" + j + "))"
		}
		return "(SELECT DISTINCT to_jsonb(r.i - 1) AS k FROM " + ranges + ", (" + vals + ") AS e WHERE e.x >= r.f AND e.x < r.t)", nil
	case "filter":
		c, err := x.cond(st, n, n.query)
		if err != nil {
			return "", err
		}
		return "(SELECT to_jsonb(0) AS k WHERE " + c + ")", nil
	case "filters":
		var vals, conds []string
		for i, f := range n.filters {
			c, err := x.cond(st, n, f.q)
			if err != nil {
				return "", err
			}
			conds = append(conds, c)
			vals = append(vals, fmt.Sprintf("(%d, %s)", i, c))
		}
		if n.other {
			vals = append(vals, fmt.Sprintf("(%d, NOT (%s))", len(n.filters), strings.Join(conds, " OR ")))
		}
		return "(SELECT to_jsonb(v.i) AS k FROM (VALUES " + strings.Join(vals, ", ") + ") AS v(i, m) WHERE v.m)", nil
	case "missing":
		return "(SELECT to_jsonb(0) AS k WHERE " + presentJSON(st, n.field) + " IS NULL)", nil
	}
	return "", search.Badf("unsupported aggregation type [%s]", n.typ)
}

// metricCols are the aggregate expressions of a metric aggregation.
func metricCols(st *args, n *aggNode) []string {
	if mv := mvMetricCols(st, n); mv != nil {
		return mv
	}
	switch n.typ {
	case "avg", "min", "max":
		return []string{n.typ + "(" + numVal(st, n) + ")"}
	case "sum":
		return []string{"coalesce(sum(" + numVal(st, n) + "), 0)::float8"}
	case "stats":
		v := numVal(st, n)
		return []string{"count(" + v + ")", "min(" + v + ")", "max(" + v + ")", "avg(" + v + ")", "coalesce(sum(" + v + "), 0)::float8"}
	case "value_count":
		// With missing, a document without a value counts its one missing value.
		j := presentJSON(st, n.field)
		none := "0"
		if n.hasMissing {
			none = "1"
		}
		if n.only != "" {
			return []string{"coalesce(sum(CASE WHEN NOT (" + n.only + ") THEN 0 WHEN jsonb_typeof(" + j + ") = 'array' THEN jsonb_array_length(" + j +
				") WHEN " + j + " IS NOT NULL THEN 1 ELSE " + none + " END), 0)::bigint"}
		}
		return []string{"coalesce(sum(CASE WHEN jsonb_typeof(" + j + ") = 'array' THEN jsonb_array_length(" + j +
			") WHEN " + j + " IS NOT NULL THEN 1 ELSE " + none + " END), 0)::bigint"}
	case "cardinality":
		// Distinct element values: an array is several values.
		j := presentJSON(st, n.field)
		if n.hasMissing {
			// The missing value is one more distinct value (unless present).
			mv, _ := json.Marshal(n.missing)
			j = "coalesce(" + j + ", " + st.add(string(mv)) + "::text::jsonb)"
		}
		if n.only != "" {
			j = "(CASE WHEN " + n.only + " THEN " + j + " END)"
		}
		return []string{overElements(j, "count(DISTINCT mv.v)")}
	case "percentiles":
		fr := make([]float64, len(n.percents))
		for i, p := range n.percents {
			fr[i] = p / 100
		}
		if !isColumn(n.field, columns) {
			// Every element of a multi-valued field.
			order := "coalesce(fg_num(mv.v), (extract(epoch from fg_time(mv.v)) * 1000)::float8)"
			j := jsonExpr(st, n.field)
			if n.hasMissing {
				j = "coalesce(nullif(" + j + ", 'null'::jsonb), to_jsonb(" + st.add(n.missing) + "::float8))"
			}
			if n.only != "" {
				j = "(CASE WHEN " + n.only + " THEN " + j + " END)"
			}
			return []string{overElements(j, "percentile_cont("+st.add(fr)+"::float8[]) WITHIN GROUP (ORDER BY "+order+")")}
		}
		return []string{"percentile_cont(" + st.add(fr) + "::float8[]) WITHIN GROUP (ORDER BY " + numVal(st, n) + ")"}
	}
	return nil
}

// overElements is the aggregate agg over the elements (column mv.v) of
// the values of the per-document JSON expression j in the group: j's
// values are gathered by the group's query, agg reads their elements (a
// scalar is one element, an array each of its non-null elements).
func overElements(j, agg string) string {
	return "(SELECT " + agg + " FROM unnest(array_agg(" + j + ")) AS mvj(j), fg_mv(mvj.j) AS mv(v))"
}

// mvMetricCols are metricCols of a document field whose arrays are
// several values, as on Elasticsearch: avg, min, max, sum and stats take
// every element (nil for columns, fields with missing and other types).
func mvMetricCols(st *args, n *aggNode) []string {
	switch n.typ {
	case "avg", "min", "max", "sum", "stats":
	default:
		return nil
	}
	if n.hasMissing || isColumn(n.field, columns) {
		return nil
	}
	j := jsonExpr(st, n.field)
	if n.only != "" {
		j = "(CASE WHEN " + n.only + " THEN " + j + " END)"
	}
	v := "coalesce(fg_num(mv.v), (extract(epoch from fg_time(mv.v)) * 1000)::float8)"
	each := func(agg string) string { return "(SELECT " + agg + "(" + v + ") FROM fg_mv(" + j + ") AS mv(v))" }
	sum := "sum(" + each("sum") + ")"
	count := "sum(" + each("count") + ")"
	avg := "(" + sum + " / NULLIF(" + count + ", 0))::float8"
	switch n.typ {
	case "avg":
		return []string{avg}
	case "min", "max":
		return []string{n.typ + "(" + each(n.typ) + ")"}
	case "sum":
		return []string{"coalesce(" + sum + ", 0)::float8"}
	}
	return []string{"coalesce(" + count + ", 0)::bigint", "min(" + each("min") + ")", "max(" + each("max") + ")", avg,
		"coalesce(" + sum + ", 0)::float8"}
}

// metricResult builds the result of a metric aggregation from its columns.
func metricResult(n *aggNode, v []any) map[string]any {
	switch n.typ {
	case "avg", "min", "max", "sum":
		r := map[string]any{"value": toFloat(v[0])}
		if (n.typ == "min" || n.typ == "max") && n.ftype == store.FieldDate && v[0] != nil {
			r["value_as_string"] = isotime.FormatMillis(time.UnixMilli(int64(toFloat(v[0]).(float64))))
		} else if f, ok := r["value"].(float64); ok && n.numFmt != nil {
			r["value_as_string"] = n.numFmt.format(f)
		}
		return withMeta(n, r)
	case "value_count", "cardinality":
		return withMeta(n, map[string]any{"value": toInt(v[0])})
	case "stats":
		r := map[string]any{"count": toInt(v[0]), "min": toFloat(v[1]), "max": toFloat(v[2]),
			"avg": toFloat(v[3]), "sum": toFloat(v[4])}
		if n.numFmt != nil {
			for _, k := range []string{"min", "max", "avg", "sum"} {
				if f, ok := r[k].(float64); ok {
					r[k+"_as_string"] = n.numFmt.format(f)
				}
			}
		}
		return withMeta(n, r)
	case "percentiles":
		var vals []any
		switch t := v[0].(type) {
		case []any:
			vals = t
		case []float64:
			for _, f := range t {
				vals = append(vals, f)
			}
		}
		return withMeta(n, map[string]any{"values": percentileValues(n, vals)})
	}
	return nil
}

func percentileValues(n *aggNode, vals []any) any {
	if n.keyed {
		m := map[string]any{}
		for i, p := range n.percents {
			var v any
			if i < len(vals) {
				v = toFloat(vals[i])
			}
			m[javaDouble(p)] = v
		}
		return m
	}
	arr := []any{}
	for i, p := range n.percents {
		var v any
		if i < len(vals) {
			v = toFloat(vals[i])
		}
		arr = append(arr, map[string]any{"key": p, "value": v})
	}
	return arr
}

func toFloat(v any) any {
	switch t := v.(type) {
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil
		}
		return t
	case float32:
		return float64(t)
	case int64:
		return float64(t)
	case int32:
		return float64(t)
	}
	return nil
}

func toInt(v any) int64 {
	switch t := v.(type) {
	case int64:
		return t
	case int32:
		return int64(t)
	case float64:
		return int64(t)
	}
	return 0
}

// runTopMetrics computes the top-level metrics in one statement.
func (x *aggExec) runTopMetrics(ms []*aggNode, obj map[string]any) error {
	st := x.stmtArgs()
	var cols []string
	for _, m := range ms {
		cols = append(cols, metricCols(st, m)...)
	}
	var rows [][]any
	var err error
	if x.cells != nil {
		rows = [][]any{x.cells.topMetricRow(ms)}
	} else if rows, err = x.query("SELECT "+strings.Join(cols, ", ")+" FROM documents d WHERE ("+x.where+")", st); err != nil {
		return err
	}
	if len(rows) != 1 {
		return errors.New("aggregations: top-level metrics returned no row")
	}
	i := 0
	for _, m := range ms {
		k := len(metricCols(&args{}, m))
		obj[m.name] = metricResult(m, rows[0][i:i+k])
		i += k
	}
	return nil
}
