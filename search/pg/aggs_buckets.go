package pg

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/isotime"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/datemath"
	"github.com/fleetgraph/fleetgraph/store"
)

// Bucket aggregations: their statement, zero-count terms, bucket results and
// histogram gaps.

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
	// Order paths the columns above do not hold (percentiles values,
	// filter doc counts and the metrics under a filter: f, f>m, f>s.max),
	// computed only when an order names them.
	extra, err := x.orderColumns(st, n)
	if err != nil {
		return err
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
				if e, ok := extra[o.by]; ok {
					ob = append(ob, e+dir+" NULLS LAST")
					continue
				}
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
	sql += fmt.Sprintf(" LIMIT %d", limits.MaxAggBuckets+1)
	var rows [][]any
	if x.cells != nil {
		rows, err = x.cells.bucketRows(n, c, sel, metrics)
	} else {
		rows, err = x.query(sql, st)
	}
	if err != nil {
		return err
	}
	if len(rows) > limits.MaxAggBuckets {
		return search.Badf("too many buckets in aggregations (more than %d)", limits.MaxAggBuckets)
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

// orderColumns are the SQL expressions of the terms order paths of n that
// name a percentile (p.99, p[99.0]), a filter sub-aggregation's doc count
// (f) or a metric under one (f>m, f>s.max), by path.
func (x *aggExec) orderColumns(st *args, n *aggNode) (map[string]string, error) {
	if n.typ != "terms" {
		return nil, nil
	}
	out := map[string]string{}
	for _, o := range n.orders {
		path := o.by
		if path == "_count" || path == "_key" {
			continue
		}
		head, rest, through := strings.Cut(path, ">")
		sub := findSub(n, head)
		if sub == nil {
			sub = findSub(n, strings.FieldsFunc(head, func(r rune) bool { return r == '.' || r == '[' })[0])
		}
		switch {
		case sub == nil:
		case sub.typ == "percentiles" && !through:
			name, key := splitMetricPath(path)
			if name != sub.name {
				continue
			}
			f, err := strconv.ParseFloat(key, 64)
			if err != nil {
				return nil, n.badf("cannot order by [%s]: not a percentile of [%s]", path, sub.name)
			}
			i := slices.Index(sub.percents, f)
			if i < 0 {
				return nil, n.badf("cannot order by [%s]: [%s] does not compute the %s percentile", path, sub.name, key)
			}
			out[path] = "(" + metricCols(st, sub)[0] + ")[" + strconv.Itoa(i+1) + "]"
		case sub.typ == "filter":
			cond, err := x.cond(st, sub, sub.query)
			if err != nil {
				return nil, err
			}
			if !through {
				out[path] = "count(*) FILTER (WHERE " + cond + ")"
				continue
			}
			name, key := splitMetricPath(rest)
			m := findSub(sub, name)
			if m == nil || !metricTypes[m.typ] || m.typ == "top_hits" || m.typ == "percentiles" {
				return nil, n.badf("cannot order by [%s]: [%s] is not a metric under [%s]", path, name, sub.name)
			}
			only := *m
			only.only = cond
			cols := metricCols(st, &only)
			i := 0
			if m.typ == "stats" {
				i = slices.Index([]string{"count", "min", "max", "avg", "sum"}, key)
			} else if key != "" && key != "value" {
				i = -1
			}
			if i < 0 {
				return nil, n.badf("cannot order by [%s]: unknown metric [%s]", path, key)
			}
			out[path] = cols[i]
		}
	}
	return out, nil
}

// findSub is the sub-aggregation of n named name, nil when none.
func findSub(n *aggNode, name string) *aggNode {
	for _, s := range n.subs {
		if s.name == name {
			return s
		}
	}
	return nil
}

// splitMetricPath splits "m.key" or "m[key]" into m and key ("" for m alone).
func splitMetricPath(p string) (name, key string) {
	if i := strings.IndexByte(p, '['); i > 0 && strings.HasSuffix(p, "]") {
		return p[:i], p[i+1 : len(p)-1]
	}
	if i := strings.IndexByte(p, '.'); i > 0 {
		return p[:i], p[i+1:]
	}
	return p, ""
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
	rows, err := x.query("SELECT DISTINCT t.k::text FROM documents d CROSS JOIN LATERAL "+n.filteredTermValues(st)+
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
			return compareBuckets(n.orders, a.count, b.count, func() int { return cmpKeys(a.key, b.key) }, func(first bool, path string) *float64 {
				r := b
				if first {
					r = a
				}
				if v, ok := value(r, path).(float64); ok {
					return &v
				}
				return nil
			}) < 0
		})
		if len(list) > n.size {
			list = list[:n.size]
		}
		byParent[pp] = list
	}
	return parents, nil
}

// compareBuckets orders two terms buckets as runBucket's ORDER BY does
// (the one comparator of the SQL and the rollup answers): the requested
// orders (a metric's NULL last either way), then count descending, then
// key (keys compares them). value answers a metric of the first bucket or
// of the second (nil for NULL).
func compareBuckets(orders []termsOrder, countA, countB int64, keys func() int, value func(first bool, path string) *float64) int {
	for _, o := range orders {
		var c int
		switch o.by {
		case "_count":
			c = cmp.Compare(countA, countB)
		case "_key":
			c = keys()
		default:
			va, vb := value(true, o.by), value(false, o.by)
			switch {
			case va == nil && vb == nil:
				continue
			case va == nil:
				return 1 // NULLS LAST either way
			case vb == nil:
				return -1
			}
			c = cmp.Compare(*va, *vb)
		}
		if o.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	if c := cmp.Compare(countB, countA); c != 0 {
		return c
	}
	return keys()
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
			if n.ftype == store.FieldDate {
				if ms, err := strconv.ParseInt(r.key, 10, 64); err == nil {
					b["key_as_string"] = n.dateKeyString(ms)
				}
			} else if f, isNum := numberOrNumeric(key); isNum && n.numFmt != nil {
				if _, isBool := key.(bool); !isBool {
					b["key_as_string"] = n.numFmt.format(f)
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
					n.rangeFields(bs[i], i)
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
	t := datemath.Step(time.UnixMilli(int64(k)).In(n.tz.loc), 1, calendarSteps[n.calUnit])
	return float64(t.UnixMilli())
}

// calendarSteps are date_histogram's calendar units as date math's.
var calendarSteps = map[string]string{"minute": "m", "hour": "h", "day": "d", "week": "w", "month": "M", "quarter": "q", "year": "y"}

func decodeKey(raw string) (any, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("aggregations: bucket key %q: %w", raw, err)
	}
	return v, nil
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
			if len(filled)+x.buckets > limits.MaxAggBuckets {
				return search.Badf("too many buckets in aggregations (more than %d)", limits.MaxAggBuckets)
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
			if n.numFmt != nil {
				kstr = n.numFmt.format(key)
				b["key_as_string"] = kstr
			}
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
	loc := n.tz.loc
	if loc == nil { // terms: no time_zone, UTC
		loc = time.UTC
	}
	t := time.UnixMilli(ms).In(loc)
	switch {
	case n.hasFmt && len(n.dfmt.Layouts) > 0:
		return t.Format(n.dfmt.Layouts[0].Layout)
	case n.hasFmt && n.dfmt.Millis:
		return strconv.FormatInt(ms, 10)
	case n.hasFmt && n.dfmt.Seconds:
		return strconv.FormatInt(ms/1000, 10)
	}
	return t.Format(isotime.Millis)
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
