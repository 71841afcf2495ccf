package pg

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/datemath"
	"github.com/fleetgraph/fleetgraph/store"
)

// Aggregations from rollups.
//
// Over many documents the SQL of aggregations spends its time reading JSON.
// The common dashboard shapes (terms and date_histogram on created_at, at
// most one of each per bucket chain, with avg, sum, min, max and stats
// under them, over all documents or a created_at range) are answered from
// per-day rollups instead (rollup_cells, built by RefreshRollups): the
// whole UTC days inside the range whose rollups are current come from the
// cells, everything else (days cut by the range, days written to since their
// last refresh, days whose values the cells cannot represent) from the
// documents, in one snapshot. The rows fed to the result builders are those
// the SQL statements would return, so the answer is the same either way.

const (
	dayMs = 24 * 60 * 60 * 1000
	// maxRawRanges bounds the created_at ranges read from documents beside
	// the cells; past it the whole request runs over the documents.
	maxRawRanges = 64
)

// maxCells bounds the cells a request holds in memory (terms over a field
// with many values); past it the request runs over the documents, whose
// statements return the top buckets only. A variable for the tests.
var maxCells = 200000

// rollupRequest carries what the rollup path needs besides the
// aggregations: the request's query (for its created_at range) and the
// compiler that translated it (for date math).
type rollupRequest struct {
	query any
	c     *compiler
}

// cellStat is the values of one metric in one cell.
type cellStat struct {
	n             int64
	sum, min, max float64
}

func (s *cellStat) add(o cellStat) {
	if o.n == 0 {
		return
	}
	if s.n == 0 {
		*s = o
		return
	}
	s.n += o.n
	s.sum += o.sum
	s.min = min(s.min, o.min)
	s.max = max(s.max, o.max)
}

// cellKey is a day (days since the epoch) and a keyword value.
type cellKey struct {
	day    int64
	kvalue string
}

type cellAgg struct {
	docs int64
	m    []cellStat // by index in cellSet.mfields
}

// cellSet is the merged cells of a request, per keyword field.
type cellSet struct {
	mfields []string
	midx    map[string]int
	byK     map[string]map[cellKey]*cellAgg
	n       int // cells held
}

// cell is the cell of kfield at k, nil when the set is full (maxCells).
func (cs *cellSet) cell(kfield string, k cellKey) *cellAgg {
	m := cs.byK[kfield]
	if m == nil {
		m = map[cellKey]*cellAgg{}
		cs.byK[kfield] = m
	}
	c := m[k]
	if c == nil {
		if cs.n++; cs.n > maxCells {
			return nil
		}
		c = &cellAgg{m: make([]cellStat, len(cs.mfields))}
		m[k] = c
	}
	return c
}

// rollupFields are the keyword and metric fields the aggregations need, or
// ok false when the rollups cannot answer them.
func rollupFields(nodes []*aggNode) (kfields, mfields []string, ok bool) {
	ks, ms := map[string]bool{}, map[string]bool{}
	var walk func(nodes []*aggNode, terms, hist bool) bool
	walk = func(nodes []*aggNode, terms, hist bool) bool {
		for _, n := range nodes {
			switch n.typ {
			case "avg", "sum", "min", "max", "stats":
				f, ok := rollupMetricField(n)
				if !ok {
					return false
				}
				ms[f] = true
				if !terms {
					ks[""] = true // read from the all-documents cells
				}
			case "terms":
				f, ok := rollupKeywordField(n)
				if !ok || terms || !termsOrderOK(n) {
					return false
				}
				ks[f] = true
				if !walk(n.subs, true, hist) {
					return false
				}
			case "date_histogram":
				if hist || !rollupHistogram(n) {
					return false
				}
				if !terms {
					ks[""] = true
				}
				if !walk(n.subs, terms, true) {
					return false
				}
			default:
				return false
			}
		}
		return true
	}
	if !walk(nodes, false, false) {
		return nil, nil, false
	}
	for k := range ks {
		kfields = append(kfields, k)
	}
	for m := range ms {
		mfields = append(mfields, m)
	}
	slices.Sort(kfields)
	slices.Sort(mfields)
	return kfields, mfields, true
}

var indexSegment = regexp.MustCompile(`^-?[0-9]+$`)

// rollupPath is the rolled-up path of a JSON field: none for paths through
// array indices or with empty segments, which the cells do not represent.
func rollupPath(field string) (string, bool) {
	f := baseField(field)
	for _, seg := range strings.Split(f, ".") {
		if seg == "" || indexSegment.MatchString(seg) {
			return "", false
		}
	}
	return f, true
}

func rollupKeywordField(n *aggNode) (string, bool) {
	if n.hasMissing || n.include != nil || n.exclude != nil {
		return "", false
	}
	f, ok := rollupPath(n.field)
	if !ok || f == "created_at" || f == "_id" || n.field == indexField || n.ftype == store.FieldDate {
		return "", false
	}
	return f, true
}

func rollupMetricField(n *aggNode) (string, bool) {
	if n.hasMissing {
		return "", false
	}
	f, ok := rollupPath(n.field)
	if !ok || n.ftype == store.FieldDate {
		return "", false
	}
	if _, col := columns[f]; col || n.field == indexField {
		return "", false
	}
	return f, true
}

// termsOrderOK reports whether the cells can order n's buckets.
func termsOrderOK(n *aggNode) bool {
	for _, o := range n.orders {
		if o.by == "_count" || o.by == "_key" {
			continue
		}
		if m, _ := orderMetric(n, o.by); m == nil {
			return false
		}
	}
	return true
}

// orderMetric finds the metric sub-aggregation an order path names, with
// the stats value it selects ("" for single-value metrics).
func orderMetric(n *aggNode, path string) (*aggNode, string) {
	for _, s := range n.subs {
		switch s.typ {
		case "avg", "sum", "min", "max":
			if path == s.name || path == s.name+".value" {
				return s, ""
			}
		case "stats":
			for _, f := range []string{"count", "min", "max", "avg", "sum"} {
				if path == s.name+"."+f {
					return s, f
				}
			}
		}
	}
	return nil, ""
}

// rollupHistogram reports whether n's buckets are unions of whole UTC days.
func rollupHistogram(n *aggNode) bool {
	if baseField(n.field) != "created_at" || !n.tz.interval || n.offMs%dayMs != 0 {
		return false
	}
	if _, off := time.Unix(0, 0).In(n.tz.loc).Zone(); off != 0 {
		return false
	}
	switch n.calUnit {
	case "day", "week", "month", "quarter", "year":
		return true
	case "":
		return n.fixedMs%dayMs == 0
	}
	return false
}

// timeBound is one end of a created_at range.
type timeBound struct {
	t    time.Time
	incl bool
	set  bool
}

// createdAtRange is the created_at range a query selects, or ok false when
// the query is anything but match_all, created_at ranges, term and terms on
// type, and bools of them (see rollupQueryOf).
func (c *compiler) createdAtRange(q any) (lo, hi timeBound, ok bool) {
	rq, ok := c.rollupQueryOf(q)
	return rq.lo, rq.hi, ok
}

// rollupQuery is what the rollups can answer of a query: a created_at
// range and, when typed, the only document types it selects (the cells
// are per type).
type rollupQuery struct {
	lo, hi timeBound
	types  []string
	typed  bool
}

// restrict narrows the types to those also in set.
func (rq *rollupQuery) restrict(set []string) {
	if !rq.typed {
		rq.types, rq.typed = slices.Clone(set), true
		return
	}
	rq.types = slices.DeleteFunc(rq.types, func(t string) bool { return !slices.Contains(set, t) })
}

// typeValues reads the values of a term or terms query on the type column
// (type or type.keyword, exact and case-sensitive): ok false for any other
// query, option or value.
func typeValues(clause string, body any) ([]string, bool) {
	field, val, err := singleField(clause, body)
	if err != nil || baseField(field) != "type" {
		return nil, false
	}
	var vals []any
	if clause == "term" {
		v, opts := options(val, "value")
		for k, o := range opts {
			if k != "value" && k != "boost" && k != "_name" && !(k == "case_insensitive" && o == false) {
				return nil, false
			}
		}
		vals = []any{v}
	} else if vals, _ = val.([]any); vals == nil {
		return nil, false
	}
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		s, ok := v.(string)
		if !ok || s == "" {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// rollupQueryOf reads a query made of match_all, created_at ranges, term
// and terms on type, and bools (must, filter) of them; ok false otherwise.
func (c *compiler) rollupQueryOf(q any) (rq rollupQuery, ok bool) {
	lo, hi := &rq.lo, &rq.hi
	var walk func(q any) bool
	tighten := func(b qBound, t time.Time) {
		switch b.op {
		case ">", ">=":
			incl := b.op == ">="
			if !lo.set || t.After(lo.t) || (t.Equal(lo.t) && !incl) {
				*lo = timeBound{t, incl, true}
			}
		default:
			incl := b.op == "<="
			if !hi.set || t.Before(hi.t) || (t.Equal(hi.t) && !incl) {
				*hi = timeBound{t, incl, true}
			}
		}
	}
	walk = func(q any) bool {
		if q == nil {
			return true
		}
		m, ok := q.(map[string]any)
		if !ok || len(m) > 1 {
			return false
		}
		for name, body := range m {
			switch name {
			case "match_all":
				return true
			case "term", "terms":
				types, ok := typeValues(name, body)
				if ok {
					rq.restrict(types)
				}
				return ok
			case "range":
				field, bounds, opts, err := parseRange(body)
				if err != nil || baseField(field) != "created_at" || len(bounds) == 0 {
					return false
				}
				loc, err := datemath.TimeZone(scalarText(opts["time_zone"]))
				if err != nil {
					return false
				}
				for _, b := range bounds {
					t, err := c.dateBound("created_at", b, scalarText(opts["format"]), loc)
					if err != nil {
						return false
					}
					tighten(b, t)
				}
				return true
			case "bool":
				b, ok := body.(map[string]any)
				if !ok {
					return false
				}
				for k, v := range b {
					switch k {
					case "must", "filter":
						for _, sub := range clauseList(v) {
							if !walk(sub) {
								return false
							}
						}
					case "boost", "_name":
					default:
						return false
					}
				}
				return true
			}
		}
		return len(m) == 0
	}
	return rq, walk(q)
}

// fullDay reports whether every instant of the UTC day starting at d lies in
// the range (timestamps have microsecond precision).
func fullDay(d time.Time, lo, hi timeBound) bool {
	end := d.Add(24 * time.Hour)
	if lo.set && (d.Before(lo.t) || (!lo.incl && d.Equal(lo.t))) {
		return false
	}
	last := end.Add(-time.Microsecond)
	if hi.set && (last.After(hi.t) || (!hi.incl && last.Equal(hi.t))) {
		return false
	}
	return true
}

func utcDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// loadCells reads the cells the aggregations need, or nil when they cannot
// be answered from rollups.
func (x *aggExec) loadCells(nodes []*aggNode, rq *rollupRequest) (*cellSet, error) {
	kfields, mfields, ok := rollupFields(nodes)
	if !ok {
		return nil, nil
	}
	qr, ok := rq.c.rollupQueryOf(rq.query)
	if !ok {
		return nil, nil
	}
	lo, hi := qr.lo, qr.hi
	// The cells' types: the scope's (nil: all), narrowed by the query's.
	types := x.scope.Types
	if qr.typed {
		if types == nil {
			types = qr.types
		} else {
			types = slices.DeleteFunc(slices.Clone(types), func(t string) bool { return !slices.Contains(qr.types, t) })
		}
		types = append([]string{}, types...) // typed: never nil (nil is all)
	}
	// Within a request's transaction (repeatable read, one snapshot for
	// every statement), a savepoint, rolled back at the end so that the
	// settings below end with it; else a transaction of its own.
	var tx pgx.Tx
	var err error
	lt, inTx := x.q.(*limitedTx)
	if inTx {
		if err := lt.arm(x.ctx); err != nil {
			return nil, err
		}
		tx, err = lt.tx.Begin(x.ctx)
	} else {
		tx, err = x.b.reads(x.ctx).BeginTx(x.ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	}
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(x.ctx) //nolint:errcheck // read-only
	// Estimates of JSON expressions are far off; compiling for them costs
	// more than these statements take.
	// A generic plan of the documents' statement, made after a few runs,
	// scans far more than the ranges it is given.
	for _, set := range []string{"SET LOCAL jit = off", "SET LOCAL plan_cache_mode = force_custom_plan"} {
		if _, err := tx.Exec(x.ctx, set); err != nil {
			return nil, err
		}
	}
	clean, err := x.cleanDays(tx, kfields, mfields, lo, hi, types)
	if err != nil {
		return nil, err
	}
	gaps := rawRanges(clean, lo, hi)
	if len(gaps) > maxRawRanges {
		return nil, nil
	}
	cs := &cellSet{mfields: mfields, midx: map[string]int{}, byK: map[string]map[cellKey]*cellAgg{}}
	for i, m := range mfields {
		cs.midx[m] = i
	}
	for _, k := range kfields {
		if len(clean) > 0 {
			ok, err := x.rollupCells(tx, cs, k, clean, types)
			if err != nil || !ok {
				return nil, err
			}
		}
		if len(gaps) > 0 {
			ok, err := x.rawCells(tx, cs, k, gaps)
			if err != nil || !ok {
				return nil, err
			}
		}
	}
	if inTx {
		return cs, nil
	}
	return cs, tx.Commit(x.ctx)
}

// cleanDays are the whole days of the range whose rollups are current and
// hold every field needed.
func (x *aggExec) cleanDays(tx pgx.Tx, kfields, mfields []string, lo, hi timeBound, types []string) ([]time.Time, error) {
	// Empty arrays, not NULL: "excluded && NULL" is NULL, and one NULL
	// would make every day unclean (terms with no metric under them).
	kfields, mfields = append([]string{}, kfields...), append([]string{}, mfields...)
	a := &args{}
	owner, kind := a.add(x.scope.DataOwnerID), a.add(string(x.scope.Kind))
	cond := ""
	if lo.set {
		cond += " AND day >= " + a.add(utcDay(lo.t)) + "::date"
	}
	if hi.set {
		cond += " AND day <= " + a.add(utcDay(hi.t)) + "::date"
	}
	typeCond := ""
	if types != nil {
		typeCond = " AND type = ANY(" + a.add(types) + "::text[])"
	}
	sql := "SELECT day FROM rollup_days WHERE data_owner_id = " + owner + " AND kind = " + kind + cond + typeCond +
		" GROUP BY day HAVING NOT bool_or(kfields_excluded && " + a.add(kfields) + "::text[] OR mfields_excluded && " +
		a.add(mfields) + "::text[]) EXCEPT SELECT day FROM rollup_dirty WHERE data_owner_id = " + owner +
		" AND kind = " + kind + cond + " ORDER BY day"
	rows, err := tx.Query(x.ctx, sql, a.vals...)
	if err != nil {
		return nil, aggSQLError(err)
	}
	days, err := pgx.CollectRows(rows, pgx.RowTo[time.Time])
	if err != nil {
		return nil, aggSQLError(err)
	}
	var out []time.Time
	for _, d := range days {
		if d = utcDay(d); fullDay(d, lo, hi) {
			out = append(out, d)
		}
	}
	return out, nil
}

// tRange is a half-open created_at range; zero times are open ends.
type tRange struct{ from, to time.Time }

// rawRanges are the parts of the range outside the clean days (sorted),
// cut to whole days around the range's ends; the query's own condition
// trims them further.
func rawRanges(clean []time.Time, lo, hi timeBound) []tRange {
	var out []tRange
	var cur time.Time // start of the current gap (zero: open)
	if lo.set {
		cur = utcDay(lo.t)
	}
	for _, d := range clean {
		if cur.IsZero() || d.After(cur) {
			out = append(out, tRange{cur, d})
		}
		cur = d.Add(24 * time.Hour)
	}
	var end time.Time
	if hi.set {
		end = utcDay(hi.t).Add(24 * time.Hour)
	}
	if end.IsZero() || end.After(cur) {
		out = append(out, tRange{cur, end})
	}
	return out
}

// rollupCells adds the cells of kfield over the clean days; ok is false
// when there are too many.
func (x *aggExec) rollupCells(tx pgx.Tx, cs *cellSet, kfield string, days []time.Time, types []string) (ok bool, err error) {
	a := &args{}
	sql := "SELECT day, kvalue, mfield, sum(n)::bigint, sum(sum), min(min), max(max) FROM rollup_cells" +
		" WHERE data_owner_id = " + a.add(x.scope.DataOwnerID) + " AND kind = " + a.add(string(x.scope.Kind)) +
		" AND kfield = " + a.add(kfield) + " AND mfield = ANY(" + a.add(append([]string{""}, cs.mfields...)) + "::text[])" +
		" AND day = ANY(" + a.add(days) + "::date[])"
	if types != nil {
		sql += " AND type = ANY(" + a.add(types) + "::text[])"
	}
	sql += " GROUP BY day, kvalue, mfield"
	rows, err := tx.Query(x.ctx, sql, a.vals...)
	if err != nil {
		return false, aggSQLError(err)
	}
	defer rows.Close()
	for rows.Next() {
		var day time.Time
		var kvalue, mfield string
		var n int64
		var sum, mn, mx *float64
		if err := rows.Scan(&day, &kvalue, &mfield, &n, &sum, &mn, &mx); err != nil {
			return false, aggSQLError(err)
		}
		c := cs.cell(kfield, cellKey{day.Unix() / 86400, kvalue})
		if c == nil {
			return false, nil
		}
		if mfield == "" {
			c.docs += n
			continue
		}
		if i, ok := cs.midx[mfield]; ok && n > 0 && sum != nil && mn != nil && mx != nil {
			c.m[i].add(cellStat{n, *sum, *mn, *mx})
		}
	}
	if err := rows.Err(); err != nil {
		return false, aggSQLError(err)
	}
	return true, nil
}

// rawCells adds the cells of kfield computed from the documents in the
// ranges, with the expressions of the SQL aggregations. ok is false when a
// keyword value is not a string (the cells hold strings only).
func (x *aggExec) rawCells(tx pgx.Tx, cs *cellSet, kfield string, ranges []tRange) (bool, error) {
	st := x.stmtArgs()
	var rc []string
	for _, r := range ranges {
		var parts []string
		if !r.from.IsZero() {
			parts = append(parts, "d.created_at >= "+st.add(r.from)+"::timestamptz")
		}
		if !r.to.IsZero() {
			parts = append(parts, "d.created_at < "+st.add(r.to)+"::timestamptz")
		}
		if len(parts) == 0 {
			parts = []string{"TRUE"}
		}
		rc = append(rc, "("+strings.Join(parts, " AND ")+")")
	}
	// The inner query reads each document once into narrow rows (the
	// OFFSET keeps the planner from sorting whole documents to group them).
	inner := []string{"(d.created_at AT TIME ZONE 'UTC')::date AS day", "NULL::jsonb AS k"}
	outer := []string{"day", "''::text", "'string'::text", "count(*)"}
	from := " FROM documents d"
	if kfield != "" {
		from += " CROSS JOIN LATERAL " + termValues(st, kfield) + " g"
		inner[1] = "g.k AS k"
		outer[1], outer[2] = "k #>> '{}'", "jsonb_typeof(k)"
	}
	for i, m := range cs.mfields {
		v := fmt.Sprintf("v%d", i)
		inner = append(inner, numVal(st, &aggNode{field: m})+" AS "+v)
		outer = append(outer, "count("+v+")", "sum("+v+")", "min("+v+")", "max("+v+")")
	}
	sql := "SELECT " + strings.Join(outer, ", ") + " FROM (SELECT " + strings.Join(inner, ", ") + from +
		" WHERE (" + x.where + ") AND (" + strings.Join(rc, " OR ") + ") OFFSET 0) s GROUP BY day, k"
	rows, err := tx.Query(x.ctx, sql, st.vals...)
	if err != nil {
		return false, aggSQLError(err)
	}
	defer rows.Close()
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			return false, aggSQLError(err)
		}
		if t, _ := v[2].(string); t != "string" {
			return false, nil
		}
		day, _ := v[0].(time.Time)
		kvalue, _ := v[1].(string)
		c := cs.cell(kfield, cellKey{utcDay(day).Unix() / 86400, kvalue})
		if c == nil {
			return false, nil
		}
		c.docs += toInt(v[3])
		for i := range cs.mfields {
			n := toInt(v[4+4*i])
			if n == 0 {
				continue
			}
			s, _ := toFloat(v[5+4*i]).(float64)
			mn, _ := toFloat(v[6+4*i]).(float64)
			mx, _ := toFloat(v[7+4*i]).(float64)
			c.m[i].add(cellStat{n, s, mn, mx})
		}
	}
	if err := rows.Err(); err != nil {
		return false, aggSQLError(err)
	}
	return true, nil
}

// ---------------------------------------------------------------------------
// Rows from cells: what the SQL statements of runBucket and runTopMetrics
// would return.

// cellGroup is one group of a bucket level.
type cellGroup struct {
	keys  []string // raw JSON keys from the top
	ktext string   // the keyword of a terms bucket
	docs  int64
	m     []cellStat // by metric sub-aggregation
}

// metricStat is the cell values of metric m.
func (cs *cellSet) metricStat(c *cellAgg, m *aggNode) cellStat {
	f, _ := rollupMetricField(m)
	return c.m[cs.midx[f]]
}

// metricValues are the columns metricCols would select for m.
func metricValues(m *aggNode, s cellStat) []any {
	var avg, mn, mx any
	if s.n > 0 {
		avg, mn, mx = s.sum/float64(s.n), s.min, s.max
	}
	switch m.typ {
	case "avg":
		return []any{avg}
	case "min":
		return []any{mn}
	case "max":
		return []any{mx}
	case "sum":
		return []any{s.sum}
	case "stats":
		return []any{s.n, mn, mx, avg, s.sum}
	}
	return nil
}

// topMetricRow is the row of runTopMetrics' statement.
func (cs *cellSet) topMetricRow(ms []*aggNode) []any {
	stats := make([]cellStat, len(ms))
	for _, c := range cs.byK[""] {
		for i, m := range ms {
			stats[i].add(cs.metricStat(c, m))
		}
	}
	var row []any
	for i, m := range ms {
		row = append(row, metricValues(m, stats[i])...)
	}
	return row
}

// bucketRows are the rows of runBucket's statement for n (whose chain is
// c) under the selected parent buckets sel, with the metrics under n.
func (cs *cellSet) bucketRows(n *aggNode, c []*aggNode, sel []string, metrics []*aggNode) ([][]any, error) {
	kfield := ""
	for _, b := range c {
		if b.typ == "terms" {
			kfield, _ = rollupKeywordField(b)
		}
	}
	L := len(c)
	var selSet map[string]bool
	if L > 1 {
		selSet = make(map[string]bool, len(sel))
		for _, s := range sel {
			selSet[s] = true
		}
	}
	groups := map[string]*cellGroup{}
	var order []*cellGroup
	keyCache := map[cellKey][]string{}
	for ck, cell := range cs.byK[kfield] {
		keys, ok := keyCache[ck]
		if !ok {
			keys = make([]string, L)
			for i, b := range c {
				if b.typ == "terms" {
					kb, _ := json.Marshal(ck.kvalue)
					keys[i] = string(kb)
				} else {
					keys[i] = strconv.FormatInt(b.dateKey(ck.day*dayMs), 10)
				}
			}
			keyCache[ck] = keys
		}
		if L > 1 && !selSet["["+strings.Join(keys[:L-1], ",")+"]"] {
			continue
		}
		gk := strings.Join(keys, "\x00")
		g := groups[gk]
		if g == nil {
			g = &cellGroup{keys: keys, ktext: ck.kvalue, m: make([]cellStat, len(metrics))}
			groups[gk] = g
			order = append(order, g)
		}
		g.docs += cell.docs
		for i, m := range metrics {
			g.m[i].add(cs.metricStat(cell, m))
		}
	}
	row := func(g *cellGroup) []any {
		r := make([]any, 0, L+3+2*len(metrics))
		for _, k := range g.keys {
			r = append(r, k)
		}
		r = append(r, g.docs)
		for i, m := range metrics {
			r = append(r, metricValues(m, g.m[i])...)
		}
		return r
	}
	var rows [][]any
	if n.typ != "terms" {
		for _, g := range order {
			rows = append(rows, row(g))
		}
	} else {
		parts := map[string][]*cellGroup{}
		var pkeys []string
		for _, g := range order {
			if g.docs < n.minDocCount {
				continue
			}
			pk := strings.Join(g.keys[:L-1], "\x00")
			if _, ok := parts[pk]; !ok {
				pkeys = append(pkeys, pk)
			}
			parts[pk] = append(parts[pk], g)
		}
		type numbered struct {
			r  []any
			rn int64
		}
		var all []numbered
		for _, pk := range pkeys {
			gs := parts[pk]
			var total int64
			for _, g := range gs {
				total += g.docs
			}
			slices.SortFunc(gs, func(a, b *cellGroup) int {
				return compareBuckets(n.orders, a.docs, b.docs, func() int { return strings.Compare(a.ktext, b.ktext) },
					func(first bool, path string) *float64 {
						if first {
							return orderValue(n, metrics, a, path)
						}
						return orderValue(n, metrics, b, path)
					})
			})
			for i, g := range gs {
				if i >= n.size {
					break
				}
				all = append(all, numbered{append(row(g), total, int64(i+1)), int64(i + 1)})
			}
		}
		slices.SortStableFunc(all, func(a, b numbered) int { return cmp.Compare(a.rn, b.rn) })
		for _, x := range all {
			rows = append(rows, x.r)
		}
	}
	if len(rows) > limits.MaxAggBuckets {
		return nil, search.Badf("too many buckets in aggregations (more than %d)", limits.MaxAggBuckets)
	}
	return rows, nil
}

// orderValue is the value of the metric an order path names in group g
// (nil for SQL NULL).
func orderValue(n *aggNode, metrics []*aggNode, g *cellGroup, path string) *float64 {
	m, field := orderMetric(n, path)
	for i, mm := range metrics {
		if mm != m {
			continue
		}
		vals := metricValues(m, g.m[i])
		v := vals[0]
		if m.typ == "stats" {
			v = vals[slices.Index([]string{"count", "min", "max", "avg", "sum"}, field)]
		}
		switch t := v.(type) {
		case float64:
			return &t
		case int64:
			f := float64(t)
			return &f
		}
		return nil
	}
	return nil
}
