package pg

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // time zones of date_histogram on hosts without zoneinfo

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/dateformat"
)

// Limits of aggregations (400 beyond them).
const (
	maxAggBuckets   = 10000 // buckets in one response, all levels together
	maxTermsSize    = 10000
	maxTopHitsSize  = 100 // from + size of one top_hits
	maxTopHitsTotal = 10000
	maxAggNodes     = 200           // aggregations in one request, all levels together
	maxAggDepth     = 20            // levels of sub-aggregations
	maxZeroTerms    = maxAggBuckets // distinct values a terms with min_doc_count 0 may list
)

type aggScopeKey struct{}

// withAggScope attaches the request's scope for aggregations: the scope that
// filter/filters aggregations translate their queries in and that names the
// _index of top_hits hits. Without it they get the zero Scope.
func withAggScope(ctx context.Context, s search.Scope) context.Context {
	return context.WithValue(ctx, aggScopeKey{}, s)
}

// aggregations answers the body's "aggs"/"aggregations" clause over the
// documents matching where (a SQL condition on alias d using a's placeholders).
//
// Every SQL statement starts from a copy of a, so where's placeholders keep
// their numbers and a itself is left as it was; where must use every
// placeholder a holds. One statement runs per bucket aggregation (grouping by
// the keys of all bucket levels above and its own, with the metrics directly
// under it), one per top_hits and one for top-level metrics: the number of
// statements depends on the request, never on the number of buckets.
//
// With rq set, aggregations the rollups can answer are computed from them
// (see rollup_query.go) instead of statements over the documents.
//
// q runs the statements: the request's transaction (a *limitedTx, whose
// snapshot the rollup path shares) or the pool.
func (b *Backend) aggregations(ctx context.Context, q querier, a *args, where string, aggs map[string]any, rq *rollupRequest) (map[string]any, error) {
	count := 0
	nodes, err := parseAggs(aggs, nil, &count)
	if err != nil {
		return nil, err
	}
	scope, _ := ctx.Value(aggScopeKey{}).(search.Scope)
	x := &aggExec{ctx: ctx, b: b, q: q, base: a, where: where, scope: scope}
	if rq != nil {
		if x.cells, err = x.loadCells(nodes, rq); err != nil {
			return nil, err
		}
	}
	resp := map[string]any{}
	objs := map[string]map[string]any{"[]": resp}
	if err := x.populate(resp, nodes); err != nil {
		return nil, err
	}
	if err := x.runLevel(nil, nodes, objs, nil); err != nil {
		return nil, err
	}
	total := 0
	for _, n := range nodes {
		total += countResult(n, resp[n.name])
	}
	if total > maxAggBuckets {
		return nil, search.Badf("too many buckets in aggregations (%d, at most %d)", total, maxAggBuckets)
	}
	return resp, nil
}

// countResult counts the buckets of n's result, those of its
// sub-aggregations included.
func countResult(n *aggNode, r any) int {
	if !bucketTypes[n.typ] {
		return 0
	}
	m, _ := r.(map[string]any)
	var buckets []any
	switch bs := m["buckets"].(type) {
	case []any:
		buckets = bs
	case map[string]any:
		for _, b := range bs {
			buckets = append(buckets, b)
		}
	default:
		if n.typ == "filter" || n.typ == "missing" {
			buckets = []any{m}
		}
	}
	total := 0
	for _, b := range buckets {
		bm, _ := b.(map[string]any)
		total++
		for _, s := range n.subs {
			total += countResult(s, bm[s.name])
		}
	}
	return total
}

// ---------------------------------------------------------------------------
// Parsing

type aggNode struct {
	name   string
	typ    string
	meta   any
	subs   []*aggNode
	parent *aggNode // enclosing aggregation (always a bucket aggregation)

	field       string
	missing     any
	hasMissing  bool
	size        int
	from        int
	minDocCount int64
	zeroTerms   bool // terms with min_doc_count 0: values without documents too
	keyed       bool
	dfmt        dateformat.Format // date_histogram format of key_as_string
	hasFmt      bool
	orders      []termsOrder

	// date_histogram
	calUnit string // date_trunc unit, "" for fixed intervals
	fixedMs int64
	offMs   int64
	tz      aggZone

	// histogram
	interval float64
	offset   float64

	// extended_bounds and hard_bounds of histograms, as bucket keys (epoch
	// ms of date_histogram buckets, bucket index of histogram buckets)
	ext, hard *[2]float64

	ranges  []aggRange
	filters []aggFilter
	other   bool
	otherKy string
	query   map[string]any // filter

	percents []float64
	sort     []hitSort
	source   *srcFilter // nil keeps the whole _source
}

type termsOrder struct {
	by   string // "_count", "_key" or a metric path
	desc bool
}

type aggRange struct {
	from, to float64 // ±Inf when open
	key      string
	keySet   bool
}

type aggFilter struct {
	name string
	q    map[string]any
}

type hitSort struct {
	field string
	desc  bool
}

type aggZone struct {
	loc      *time.Location
	pg       string // zone for PostgreSQL
	interval bool   // pg is an interval ("+01:00"), else a zone name
}

var bucketTypes = map[string]bool{"terms": true, "date_histogram": true, "histogram": true, "range": true,
	"filter": true, "filters": true, "missing": true}

var metricTypes = map[string]bool{"avg": true, "sum": true, "min": true, "max": true, "value_count": true,
	"cardinality": true, "stats": true, "percentiles": true, "top_hits": true}

func parseAggs(m map[string]any, parent *aggNode, count *int) ([]*aggNode, error) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []*aggNode
	for _, name := range names {
		*count++
		if *count > maxAggNodes {
			return nil, search.Badf("too many aggregations (at most %d)", maxAggNodes)
		}
		if name == "" || strings.ContainsAny(name, "[]>") {
			return nil, search.Badf("invalid aggregation name %q", name)
		}
		body, ok := m[name].(map[string]any)
		if !ok {
			return nil, search.Badf("aggregation [%s] must be an object", name)
		}
		n := &aggNode{name: name, parent: parent}
		if depth := len(chain(parent)); depth >= maxAggDepth {
			return nil, search.Badf("aggregation [%s] is nested deeper than %d levels", name, maxAggDepth)
		}
		var subs map[string]any
		for k, v := range body {
			switch k {
			case "aggs", "aggregations":
				if subs != nil {
					return nil, search.Badf("aggregation [%s] has both aggs and aggregations", name)
				}
				sm, ok := v.(map[string]any)
				if !ok {
					return nil, search.Badf("[%s] of aggregation [%s] must be an object", k, name)
				}
				subs = sm
			case "meta":
				n.meta = v
			default:
				if n.typ != "" {
					return nil, search.Badf("aggregation [%s] has more than one type ([%s], [%s])", name, n.typ, k)
				}
				n.typ = k
			}
		}
		if n.typ == "" {
			return nil, search.Badf("aggregation [%s] has no type", name)
		}
		if !bucketTypes[n.typ] && !metricTypes[n.typ] {
			return nil, search.Badf("unsupported aggregation type [%s] (aggregation [%s])", n.typ, name)
		}
		if err := n.compile(body[n.typ]); err != nil {
			return nil, err
		}
		if len(subs) > 0 {
			if !bucketTypes[n.typ] {
				return nil, search.Badf("aggregation [%s] of type [%s] cannot have sub-aggregations", name, n.typ)
			}
			var err error
			if n.subs, err = parseAggs(subs, n, count); err != nil {
				return nil, err
			}
		}
		out = append(out, n)
	}
	return out, nil
}

func (n *aggNode) badf(format string, args ...any) error {
	return search.Badf("aggregation [%s] (%s): %s", n.name, n.typ, fmt.Sprintf(format, args...))
}

// params checks the parameters against the allowed ones.
func (n *aggNode) params(v any, allowed ...string) (map[string]any, error) {
	p, ok := v.(map[string]any)
	if !ok {
		return nil, n.badf("parameters must be an object")
	}
	for k := range p {
		if !slices.Contains(allowed, k) {
			return nil, n.badf("unsupported parameter [%s]", k)
		}
	}
	return p, nil
}

func (n *aggNode) fieldParam(p map[string]any) error {
	f, ok := p["field"].(string)
	if !ok || f == "" {
		if _, has := p["script"]; has {
			return n.badf("scripts are not supported")
		}
		return n.badf("[field] is required")
	}
	n.field = f
	return nil
}

// compile reads the aggregation's parameters, v, through the function of
// its type.
func (n *aggNode) compile(v any) error {
	compile, ok := aggCompilers[n.typ]
	if !ok {
		return search.Badf("unsupported aggregation type [%s]", n.typ)
	}
	return compile(n, v)
}

// aggCompilers read the parameters of each aggregation type.
var aggCompilers = map[string]func(n *aggNode, v any) error{
	"terms":          (*aggNode).compileTerms,
	"date_histogram": (*aggNode).compileDateHistogram,
	"histogram":      (*aggNode).compileHistogram,
	"range":          (*aggNode).compileRange,
	"filter":         (*aggNode).compileFilter,
	"filters":        (*aggNode).compileFilters,
	"missing":        (*aggNode).compileMissing,
	"avg":            (*aggNode).compileNumericMetric,
	"sum":            (*aggNode).compileNumericMetric,
	"min":            (*aggNode).compileNumericMetric,
	"max":            (*aggNode).compileNumericMetric,
	"stats":          (*aggNode).compileNumericMetric,
	"value_count":    (*aggNode).compileValueCount,
	"cardinality":    (*aggNode).compileCardinality,
	"percentiles":    (*aggNode).compilePercentiles,
	"top_hits":       (*aggNode).compileTopHits,
}

// ---------------------------------------------------------------------------
// Execution

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
	if x.buckets > maxAggBuckets {
		return search.Badf("too many buckets in aggregations (more than %d)", maxAggBuckets)
	}
	return x.countAlloc(n)
}

func (x *aggExec) countAlloc(n int) error {
	x.alloc += n
	if x.alloc > 10*maxAggBuckets {
		return search.Badf("too many buckets in aggregations (more than %d)", maxAggBuckets)
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
		r := n.ranges[i]
		b["key"] = r.key
		if !math.IsInf(r.from, 0) {
			b["from"] = r.from
		}
		if !math.IsInf(r.to, 0) {
			b["to"] = r.to
		}
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
		q := termValues(st, n.field)
		if n.hasMissing {
			mv, _ := json.Marshal(n.missing)
			q = "(SELECT t.k FROM " + q + " t UNION ALL SELECT " + st.add(string(mv)) +
				"::text::jsonb AS k WHERE NOT EXISTS (SELECT 1 FROM " + valuesOf(st, n.field) + " e2 WHERE e2 <> 'null'::jsonb))"
		}
		return q, nil
	case "date_histogram":
		ts := timeExpr(st, n.field)
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
		return "(SELECT to_jsonb(floor(extract(epoch from " + keyTs + ") * 1000)::bigint) AS k WHERE " + ts + " IS NOT NULL)", nil
	case "histogram":
		v := numVal(st, n)
		return "(SELECT to_jsonb(floor((" + v + " - " + st.add(n.offset) + "::float8) / " + st.add(n.interval) +
			"::float8)) AS k WHERE " + v + " IS NOT NULL)", nil
	case "range":
		v := numVal(st, n)
		from := make([]float64, len(n.ranges))
		to := make([]float64, len(n.ranges))
		for i, r := range n.ranges {
			from[i], to[i] = r.from, r.to
		}
		return "(SELECT to_jsonb(r.i - 1) AS k FROM unnest(" + st.add(from) + "::float8[], " + st.add(to) +
			"::float8[]) WITH ORDINALITY AS r(f, t, i) WHERE " + v + " >= r.f AND " + v + " < r.t)", nil
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
	switch n.typ {
	case "avg", "min", "max":
		return []string{n.typ + "(" + numVal(st, n) + ")"}
	case "sum":
		return []string{"coalesce(sum(" + numVal(st, n) + "), 0)::float8"}
	case "stats":
		v := numVal(st, n)
		return []string{"count(" + v + ")", "min(" + v + ")", "max(" + v + ")", "avg(" + v + ")", "coalesce(sum(" + v + "), 0)::float8"}
	case "value_count":
		j := presentJSON(st, n.field)
		return []string{"coalesce(sum(CASE WHEN jsonb_typeof(" + j + ") = 'array' THEN jsonb_array_length(" + j +
			") WHEN " + j + " IS NOT NULL THEN 1 ELSE 0 END), 0)::bigint"}
	case "cardinality":
		return []string{"count(DISTINCT " + presentJSON(st, n.field) + ")"}
	case "percentiles":
		fr := make([]float64, len(n.percents))
		for i, p := range n.percents {
			fr[i] = p / 100
		}
		return []string{"percentile_cont(" + st.add(fr) + "::float8[]) WITHIN GROUP (ORDER BY " + numVal(st, n) + ")"}
	}
	return nil
}

// metricResult builds the result of a metric aggregation from its columns.
func metricResult(n *aggNode, v []any) map[string]any {
	switch n.typ {
	case "avg", "min", "max", "sum":
		r := map[string]any{"value": toFloat(v[0])}
		if (n.typ == "min" || n.typ == "max") && n.field == "created_at" && v[0] != nil {
			r["value_as_string"] = time.UnixMilli(int64(toFloat(v[0]).(float64))).UTC().Format(esTimeLayout)
		}
		return withMeta(n, r)
	case "value_count", "cardinality":
		return withMeta(n, map[string]any{"value": toInt(v[0])})
	case "stats":
		return withMeta(n, map[string]any{"count": toInt(v[0]), "min": toFloat(v[1]), "max": toFloat(v[2]),
			"avg": toFloat(v[3]), "sum": toFloat(v[4])})
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

// bucketRow is one group of a bucket statement.
type bucketRow struct {
	key     string // raw JSON of the bucket's own key
	count   int64
	metrics []any
	total   int64 // terms: documents of all the parent's groups
}

// runBucket computes bucket aggregation n under each selected parent bucket
// with one statement, then what is under it.
func (x *aggExec) runBucket(n *aggNode, objs map[string]map[string]any, sel []string) error {
	c := chain(n)
	L := len(c)
	st := x.stmtArgs()
	from, err := x.from(st, c, sel, L-1)
	if err != nil {
		return err
	}
	var metrics []*aggNode
	var mcols []string
	mindex := map[string]int{} // order path → metric column (mcols)
	mempty := map[string]any{} // order path → value without documents
	for _, s := range n.subs {
		if s.typ != "top_hits" && metricTypes[s.typ] {
			cols := metricCols(st, s)
			base := len(mcols)
			switch s.typ {
			case "stats":
				for i, f := range []string{"count", "min", "max", "avg", "sum"} {
					mindex[s.name+"."+f] = base + i
				}
				mempty[s.name+".count"], mempty[s.name+".sum"] = 0.0, 0.0
			case "percentiles":
			default:
				mindex[s.name], mindex[s.name+".value"] = base, base
				switch s.typ {
				case "sum", "value_count", "cardinality":
					mempty[s.name], mempty[s.name+".value"] = 0.0, 0.0
				}
			}
			metrics = append(metrics, s)
			mcols = append(mcols, cols...)
		}
	}
	sel1 := make([]string, 0, L+3+len(mcols))
	sel1 = append(sel1, keyCols(L, "::text"), "count(*)")
	sel1 = append(sel1, mcols...)
	group := " GROUP BY " + keyCols(L, "")
	var sql string
	if n.typ == "terms" {
		var ob []string
		for _, o := range n.orders {
			dir := " ASC"
			if o.desc {
				dir = " DESC"
			}
			k := fmt.Sprintf("g%d.k", L)
			switch o.by {
			case "_count":
				ob = append(ob, "count(*)"+dir)
			case "_key":
				ob = append(ob, "jsonb_typeof("+k+")"+dir, keyNum(k)+dir, "("+k+" #>> '{}') COLLATE \"C\""+dir)
			default:
				i, ok := mindex[o.by]
				if !ok {
					return n.badf("cannot order by [%s]: not a single-value metric sub-aggregation", o.by)
				}
				ob = append(ob, mcols[i]+dir+" NULLS LAST")
			}
		}
		k := fmt.Sprintf("g%d.k", L)
		ob = append(ob, "count(*) DESC", "jsonb_typeof("+k+")", keyNum(k), "("+k+" #>> '{}') COLLATE \"C\"")
		part := ""
		if L > 1 {
			part = "PARTITION BY " + keyCols(L-1, "") + " "
		}
		sel1 = append(sel1, "sum(count(*)) OVER ("+part+")::bigint", "row_number() OVER ("+part+"ORDER BY "+strings.Join(ob, ", ")+")")
		sql = "SELECT * FROM (SELECT " + strings.Join(sel1, ", ") + from + group +
			" HAVING count(*) >= " + st.add(n.minDocCount) + "::bigint) x WHERE x.row_number <= " + st.add(int64(n.size)) +
			"::bigint ORDER BY x.row_number"
	} else {
		sql = "SELECT " + strings.Join(sel1, ", ") + from + group
	}
	sql += fmt.Sprintf(" LIMIT %d", maxAggBuckets+1)
	var rows [][]any
	if x.cells != nil {
		rows, err = x.cells.bucketRows(n, c, sel, metrics)
	} else {
		rows, err = x.query(sql, st)
	}
	if err != nil {
		return err
	}
	if len(rows) > maxAggBuckets {
		return search.Badf("too many buckets in aggregations (more than %d)", maxAggBuckets)
	}
	// Group the rows by parent path, in the order they came.
	byParent := map[string][]bucketRow{}
	var parents []string
	for _, r := range rows {
		keys := make([]string, L)
		for i := range keys {
			keys[i], _ = r[i].(string)
		}
		pp := "[" + strings.Join(keys[:L-1], ",") + "]"
		br := bucketRow{key: keys[L-1], count: toInt(r[L]), metrics: r[L+1 : L+1+len(mcols)]}
		if n.typ == "terms" {
			br.total = toInt(r[L+1+len(mcols)])
		}
		if _, ok := byParent[pp]; !ok {
			parents = append(parents, pp)
		}
		byParent[pp] = append(byParent[pp], br)
	}
	if n.zeroTerms {
		if parents, err = x.fillZeroTerms(n, byParent, parents, sel, L, mindex, mempty); err != nil {
			return err
		}
	}
	childObjs := map[string]map[string]any{}
	var childSel []string
	for _, pp := range parents {
		parentObj, ok := objs[pp]
		if !ok {
			continue
		}
		res, err := x.bucketResult(n, pp, byParent[pp], metrics, childObjs, &childSel)
		if err != nil {
			return err
		}
		parentObj[n.name] = res
	}
	return x.runLevel(n, n.subs, childObjs, childSel)
}

// fillZeroTerms adds to the terms buckets under each parent (min_doc_count
// 0) the values of the field in the whole scope that have no matching
// document, ordered as the statement orders buckets, and cuts each list to
// the size again. Documents of other owners or kinds never lend values.
func (x *aggExec) fillZeroTerms(n *aggNode, byParent map[string][]bucketRow, parents, sel []string, L int,
	mindex map[string]int, mempty map[string]any) ([]string, error) {
	st := &args{}
	where := scopeWhere(st, x.scope)
	if x.scope.DataOwnerID == 0 {
		where = "FALSE"
	}
	rows, err := x.query("SELECT DISTINCT t.k::text FROM documents d CROSS JOIN LATERAL "+termValues(st, n.field)+
		" t WHERE "+where+fmt.Sprintf(" LIMIT %d", maxZeroTerms+1), st)
	if err != nil {
		return nil, err
	}
	if len(rows) > maxZeroTerms {
		return nil, n.badf("min_doc_count 0 over more than %d distinct values", maxZeroTerms)
	}
	if L == 1 {
		sel = []string{"[]"}
	}
	for _, pp := range sel {
		if _, ok := byParent[pp]; !ok {
			parents = append(parents, pp)
		}
		have := map[string]bool{}
		var total int64
		for _, r := range byParent[pp] {
			have[r.key] = true
			total = max(total, r.total)
		}
		list := byParent[pp]
		for _, r := range rows {
			k, _ := r[0].(string)
			if !have[k] {
				list = append(list, bucketRow{key: k, total: total})
			}
		}
		value := func(r bucketRow, path string) any {
			if r.metrics == nil {
				return mempty[path]
			}
			return toFloat(r.metrics[mindex[path]])
		}
		sort.SliceStable(list, func(i, j int) bool {
			a, b := list[i], list[j]
			for _, o := range n.orders {
				var c int
				switch o.by {
				case "_count":
					c = cmp.Compare(a.count, b.count)
				case "_key":
					c = cmpKeys(a.key, b.key)
				default:
					va, vb := value(a, o.by), value(b, o.by)
					switch {
					case va == nil && vb == nil:
					case va == nil:
						return false // NULLS LAST either way
					case vb == nil:
						return true
					default:
						c = cmp.Compare(va.(float64), vb.(float64))
					}
				}
				if o.desc {
					c = -c
				}
				if c != 0 {
					return c < 0
				}
			}
			if c := cmp.Compare(b.count, a.count); c != 0 {
				return c < 0
			}
			return cmpKeys(a.key, b.key) < 0
		})
		if len(list) > n.size {
			list = list[:n.size]
		}
		byParent[pp] = list
	}
	return parents, nil
}

// cmpKeys orders raw JSON keys as the statements do: by JSON type name
// (boolean, number, string), numbers by value, strings bytewise.
func cmpKeys(a, b string) int {
	typ := func(k string) string {
		switch {
		case k == "true" || k == "false":
			return "boolean"
		case strings.HasPrefix(k, `"`):
			return "string"
		}
		return "number"
	}
	ta, tb := typ(a), typ(b)
	if ta != tb {
		return strings.Compare(ta, tb)
	}
	if ta == "number" {
		fa, _ := strconv.ParseFloat(a, 64)
		fb, _ := strconv.ParseFloat(b, 64)
		if c := cmp.Compare(fa, fb); c != 0 {
			return c
		}
	}
	var sa, sb string
	if json.Unmarshal([]byte(a), &sa) != nil {
		sa = a
	}
	if json.Unmarshal([]byte(b), &sb) != nil {
		sb = b
	}
	return strings.Compare(sa, sb)
}

// keyNum orders numeric keys by value (strings sort as text, like keyword
// terms).
func keyNum(k string) string {
	return "(CASE WHEN jsonb_typeof(" + k + ") = 'number' THEN (" + k + " #>> '{}')::float8 END)"
}

func childPath(parent, key string) string {
	if parent == "[]" {
		return "[" + key + "]"
	}
	return parent[:len(parent)-1] + "," + key + "]"
}

// newBucket makes a bucket object with doc_count and its metric results.
func (x *aggExec) newBucket(n *aggNode, br bucketRow, metrics []*aggNode) (map[string]any, error) {
	if err := x.countBuckets(1); err != nil {
		return nil, err
	}
	b := map[string]any{"doc_count": br.count}
	if err := x.populate(b, n.subs); err != nil {
		return nil, err
	}
	if br.metrics == nil {
		return b, nil // a bucket without documents: the empty results stay
	}
	i := 0
	for _, m := range metrics {
		k := len(metricCols(&args{}, m))
		b[m.name] = metricResult(m, br.metrics[i:i+k])
		i += k
	}
	return b, nil
}

const esTimeLayout = "2006-01-02T15:04:05.000Z07:00"

// bucketResult builds n's result under one parent bucket from its groups,
// registering the buckets holding documents for the level below.
func (x *aggExec) bucketResult(n *aggNode, pp string, rows []bucketRow, metrics []*aggNode,
	childObjs map[string]map[string]any, childSel *[]string) (map[string]any, error) {
	register := func(key string, b map[string]any) {
		cp := childPath(pp, key)
		childObjs[cp] = b
		*childSel = append(*childSel, cp)
	}
	switch n.typ {
	case "terms":
		var buckets []any
		var shown int64
		var total int64
		for _, r := range rows {
			b, err := x.newBucket(n, r, metrics)
			if err != nil {
				return nil, err
			}
			key, err := decodeKey(r.key)
			if err != nil {
				return nil, err
			}
			switch k := key.(type) {
			case bool:
				b["key"], b["key_as_string"] = 0, "false"
				if k {
					b["key"] = 1
					b["key_as_string"] = "true"
				}
			default:
				b["key"] = key
			}
			if n.field == "created_at" {
				if ms, err := strconv.ParseInt(r.key, 10, 64); err == nil {
					b["key_as_string"] = time.UnixMilli(ms).UTC().Format(esTimeLayout)
				}
			}
			buckets = append(buckets, b)
			shown += r.count
			total = r.total
			register(r.key, b)
		}
		if buckets == nil {
			buckets = []any{}
		}
		return withMeta(n, map[string]any{"doc_count_error_upper_bound": 0,
			"sum_other_doc_count": total - shown, "buckets": buckets}), nil
	case "date_histogram", "histogram":
		return x.histResult(n, rows, metrics, register)
	case "range", "filters":
		got := map[int]*bucketRow{}
		for i := range rows {
			idx, err := strconv.Atoi(rows[i].key)
			if err != nil {
				return nil, fmt.Errorf("aggregations: bucket key %q: %w", rows[i].key, err)
			}
			got[idx] = &rows[i]
		}
		bs := make([]map[string]any, n.fixedBuckets())
		for i := range bs {
			var err error
			if r, ok := got[i]; ok {
				bs[i], err = x.newBucket(n, *r, metrics)
				if err == nil && n.typ == "range" {
					rg := n.ranges[i]
					bs[i]["key"] = rg.key
					if !math.IsInf(rg.from, 0) {
						bs[i]["from"] = rg.from
					}
					if !math.IsInf(rg.to, 0) {
						bs[i]["to"] = rg.to
					}
				}
				register(r.key, bs[i])
			} else {
				bs[i], err = x.fixedBucket(n, i)
			}
			if err != nil {
				return nil, err
			}
		}
		return x.fixedResult(n, bs), nil
	case "filter", "missing":
		if len(rows) == 0 {
			return x.emptyResult(n)
		}
		b, err := x.newBucket(n, rows[0], metrics)
		if err != nil {
			return nil, err
		}
		register(rows[0].key, b)
		return withMeta(n, b), nil
	}
	return nil, search.Badf("unsupported aggregation type [%s]", n.typ)
}

// nextKey is the key of the bucket after the one with key k (epoch ms for
// date_histogram, bucket index for histogram).
func (n *aggNode) nextKey(k float64) float64 {
	if n.typ == "histogram" {
		return k + 1
	}
	if n.calUnit == "" {
		return k + float64(n.fixedMs)
	}
	t := time.UnixMilli(int64(k)).In(n.tz.loc)
	switch n.calUnit {
	case "minute":
		t = t.Add(time.Minute)
	case "hour":
		t = t.Add(time.Hour)
	case "day":
		t = t.AddDate(0, 0, 1)
	case "week":
		t = t.AddDate(0, 0, 7)
	case "month":
		t = t.AddDate(0, 1, 0)
	case "quarter":
		t = t.AddDate(0, 3, 0)
	case "year":
		t = t.AddDate(1, 0, 0)
	}
	return float64(t.UnixMilli())
}

func decodeKey(raw string) (any, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("aggregations: bucket key %q: %w", raw, err)
	}
	return v, nil
}

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
	keys := "'[]'::text"
	if L > 0 {
		keys = "jsonb_build_array(" + keyCols(L, "") + ")::text"
	}
	sql := "SELECT * FROM (SELECT " + keys + " AS p, count(*) OVER (" + part + ") AS total, row_number() OVER (" + part +
		"ORDER BY " + strings.Join(order, ", ") + ") AS rn, " + strings.Join(cols, ", ") + from +
		") x WHERE x.rn > " + st.add(int64(n.from)) + "::bigint AND x.rn <= " + st.add(int64(n.from+n.size)) +
		"::bigint OR (x.rn = 1 AND " + st.add(n.size == 0) + "::bool) ORDER BY x.p, x.rn" +
		fmt.Sprintf(" LIMIT %d", maxTopHitsTotal+1)
	rows, err := x.query(sql, st)
	if err != nil {
		return err
	}
	if len(rows) > maxTopHitsTotal {
		return search.Badf("top_hits [%s] would return more than %d documents", n.name, maxTopHitsTotal)
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
		var src map[string]any
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&src); err != nil {
			return fmt.Errorf("aggregations: document %s: %w", id, err)
		}
		// Like the search hits: every document scores 1 unless sorted by a field.
		hit := map[string]any{"_id": id, "_score": score}
		if x.scope.Slug != "" {
			hit["_index"] = search.IndexName(x.scope.Slug, x.scope.Kind, typ)
		}
		if n.source == nil || !n.source.none {
			hit["_source"] = n.source.apply(src)
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

// canonicalPath rewrites a path PostgreSQL printed as a jsonb array ("[1, 2]")
// in the form paths are built with ("[1,2]"): keys are jsonb texts joined by
// commas.
func canonicalPath(p string) string {
	if p == "[]" {
		return p
	}
	var elems []json.RawMessage
	if err := json.Unmarshal([]byte(p), &elems); err != nil {
		return p
	}
	parts := make([]string, len(elems))
	for i, e := range elems {
		parts[i] = string(e)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// histResult builds a histogram's buckets under one parent bucket: the
// groups in key order, with the empty buckets between them (and out to the
// extended bounds) when min_doc_count is 0.
func (x *aggExec) histResult(n *aggNode, rows []bucketRow, metrics []*aggNode, register func(string, map[string]any)) (map[string]any, error) {
	type kb struct {
		k   float64 // epoch ms or bucket index
		raw string
		row *bucketRow
	}
	var ks []kb
	for i := range rows {
		f, err := strconv.ParseFloat(rows[i].key, 64)
		if err != nil {
			return nil, fmt.Errorf("aggregations: bucket key %q: %w", rows[i].key, err)
		}
		if n.hard != nil && (f < n.hard[0] || f > n.hard[1]) {
			continue
		}
		ks = append(ks, kb{k: f, raw: rows[i].key, row: &rows[i]})
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].k < ks[j].k })
	if n.minDocCount == 0 {
		lo, hi := math.Inf(1), math.Inf(-1)
		if len(ks) > 0 {
			lo, hi = ks[0].k, ks[len(ks)-1].k
		}
		if n.ext != nil {
			lo, hi = math.Min(lo, n.ext[0]), math.Max(hi, n.ext[1])
			if n.hard != nil {
				lo, hi = math.Max(lo, n.hard[0]), math.Min(hi, n.hard[1])
			}
		}
		var filled []kb
		tooMany := func() error {
			if len(filled)+x.buckets > maxAggBuckets {
				return search.Badf("too many buckets in aggregations (more than %d)", maxAggBuckets)
			}
			return nil
		}
		cur := lo
		for _, e := range ks {
			for cur < e.k {
				filled = append(filled, kb{k: cur})
				if err := tooMany(); err != nil {
					return nil, err
				}
				next := n.nextKey(cur)
				if next <= cur {
					break
				}
				cur = next
			}
			filled = append(filled, e)
			cur = n.nextKey(e.k)
		}
		for ; cur <= hi && !math.IsInf(cur, 0); cur = n.nextKey(cur) {
			filled = append(filled, kb{k: cur})
			if err := tooMany(); err != nil {
				return nil, err
			}
			if n.nextKey(cur) <= cur {
				break
			}
		}
		ks = filled
	}
	var arr []any
	keyed := map[string]any{}
	for _, e := range ks {
		br := bucketRow{}
		if e.row != nil {
			br = *e.row
		}
		if br.count < n.minDocCount {
			continue
		}
		b, err := x.newBucket(n, br, metrics)
		if err != nil {
			return nil, err
		}
		var kstr string
		if n.typ == "date_histogram" {
			ms := int64(e.k)
			b["key"] = ms
			kstr = n.dateKeyString(ms)
			b["key_as_string"] = kstr
		} else {
			key := e.k*n.interval + n.offset
			b["key"] = key
			kstr = javaDouble(key)
		}
		if e.row != nil && e.row.count > 0 {
			register(e.raw, b)
		}
		arr = append(arr, b)
		keyed[kstr] = b
	}
	if n.keyed {
		return withMeta(n, map[string]any{"buckets": keyed}), nil
	}
	if arr == nil {
		arr = []any{}
	}
	return withMeta(n, map[string]any{"buckets": arr}), nil
}

// dateKeyString is a date_histogram bucket's key_as_string: the first of
// its format's patterns (epoch formats as numbers), else ISO 8601 with
// milliseconds, in the time zone.
func (n *aggNode) dateKeyString(ms int64) string {
	t := time.UnixMilli(ms).In(n.tz.loc)
	switch {
	case n.hasFmt && len(n.dfmt.Layouts) > 0:
		return t.Format(n.dfmt.Layouts[0].Layout)
	case n.hasFmt && n.dfmt.Millis:
		return strconv.FormatInt(ms, 10)
	case n.hasFmt && n.dfmt.Seconds:
		return strconv.FormatInt(ms/1000, 10)
	}
	return t.Format(esTimeLayout)
}

// dateKey is the key of the date_histogram bucket holding epoch ms, as the
// SQL computes it: truncation of the local wall-clock time, shifted by the
// offset.
func (n *aggNode) dateKey(ms int64) int64 {
	t := time.UnixMilli(ms).In(n.tz.loc)
	wall := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
	off := time.Duration(n.offMs) * time.Millisecond
	var b time.Time
	if n.calUnit == "" {
		lms := wall.UnixMilli()
		k := int64(math.Floor(float64(lms-n.offMs)/float64(n.fixedMs)))*n.fixedMs + n.offMs
		b = time.UnixMilli(k).UTC()
	} else {
		w := wall.Add(-off)
		y, mo, d := w.Date()
		switch n.calUnit {
		case "minute":
			w = w.Truncate(time.Minute)
		case "hour":
			w = w.Truncate(time.Hour)
		case "day":
			w = time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
		case "week":
			w = time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
			w = w.AddDate(0, 0, -((int(w.Weekday()) + 6) % 7))
		case "month":
			w = time.Date(y, mo, 1, 0, 0, 0, 0, time.UTC)
		case "quarter":
			w = time.Date(y, ((mo-1)/3)*3+1, 1, 0, 0, 0, 0, time.UTC)
		case "year":
			w = time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		b = w.Add(off)
	}
	return time.Date(b.Year(), b.Month(), b.Day(), b.Hour(), b.Minute(), b.Second(), b.Nanosecond(), n.tz.loc).UnixMilli()
}
