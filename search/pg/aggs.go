package pg

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	_ "time/tzdata" // time zones of date_histogram on hosts without zoneinfo

	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/dateformat"
	"github.com/fleetgraph/fleetgraph/store"
)

// Limits of aggregations (400 beyond them; the buckets and top_hits bounds
// are limits.MaxAggBuckets, MaxTopHitsSize and MaxTopHitsDocuments). A
// terms size may ask for as many buckets as a response may hold
// (Elasticsearch checks the buckets made, not the size). maxAggNodes and
// maxAggDepth back up search.CheckDSL's stricter limits.MaxDSLAggs and
// MaxDSLAggDepth for a body that did not pass it.
const (
	maxTermsSize = limits.MaxAggBuckets
	maxAggNodes  = 200                  // aggregations in one request, all levels together
	maxAggDepth  = 20                   // levels of sub-aggregations
	maxZeroTerms = limits.MaxAggBuckets // distinct values a terms with min_doc_count 0 may list
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
	if err := typeAggs(nodes, a.types); err != nil {
		return nil, err
	}
	scope, _ := ctx.Value(aggScopeKey{}).(search.Scope)
	x := &aggExec{ctx: ctx, b: b, q: q, base: a, where: where, scope: scope}
	if err := x.partitionTerms(nodes); err != nil {
		return nil, err
	}
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
	if total > limits.MaxAggBuckets {
		return nil, search.Badf("too many buckets in aggregations (%d, at most %d)", total, limits.MaxAggBuckets)
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
	ftype       string // the field's type in the mapping (mapping.go), "" untyped
	missing     any
	hasMissing  bool
	size        int
	from        int
	minDocCount int64
	zeroTerms   bool // terms with min_doc_count 0: values without documents too
	keyed       bool
	dfmt        dateformat.Format // date_histogram format of key_as_string
	numFmt      *decimalFormat    // histogram and numeric metric format (key_as_string, value_as_string)
	termsFmt    string            // terms format, read by typeAggs: a date format of a date field, else a decimal one
	include     *termsFilter      // terms include (nil: every value)
	// only, when set, is a SQL condition the metric reads its documents
	// under (a terms order path through a filter: "f>m").
	only    string
	exclude *termsFilter // terms exclude (nil: none)
	hasFmt  bool
	orders  []termsOrder

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

	percents  []float64
	sort      []hitSort
	source    *srcFilter // nil keeps the whole _source
	valueType string     // terms value_type ("date" reads an unmapped field's missing as a date)
	// top_hits version and seq_no_primary_term: the hits carry _version,
	// _seq_no and _primary_term as the search hits do (backend.go hit).
	version, seqNo bool
}

// termsFilter is a terms include or exclude: a regular expression the
// whole value must match, or exact values.
type termsFilter struct {
	regex  string
	values []string
	// partition of num_partitions (num > 0): the values whose hash falls
	// in it, resolved to values before the statements run (partitionTerms).
	partition, numPartitions int
}

type termsOrder struct {
	by   string // "_count", "_key" or a metric path
	desc bool
}

type aggRange struct {
	from, to float64 // ±Inf when open
	key      string
	keySet   bool
	// fromDate, toDate are bounds given as dates or date math (a date
	// field's range), read when the field's type is known (typeAggs).
	fromDate, toDate string
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

// typeAggs gives the nodes their fields' mapped types, refusing what
// Elasticsearch refuses: numeric metrics of a text or keyword field.
func typeAggs(nodes []*aggNode, types fieldTypes) error {
	for _, n := range nodes {
		if n.field != "" {
			n.ftype = types.of(n.field)
			if baseField(n.field) == "created_at" {
				n.ftype = store.FieldDate
			}
		}
		if n.valueType == "date" && n.ftype == "" {
			n.ftype = store.FieldDate // an unmapped field read as dates (its missing)
		}
		if n.termsFmt != "" {
			var err error
			if n.ftype == store.FieldDate {
				if n.dfmt, err = dateformat.Parse(n.termsFmt); err != nil {
					return n.badf("%v", err)
				}
				n.hasFmt = true
			} else if err := n.numFormatParam(map[string]any{"format": n.termsFmt}); err != nil {
				return err
			}
		}
		if n.typ == "range" {
			if err := n.finishRanges(); err != nil {
				return err
			}
		}
		if n.typ == "terms" && n.ftype == store.FieldDate {
			if err := n.dateTermsParams(); err != nil {
				return err
			}
		}
		switch n.typ {
		case "avg", "min", "max", "sum", "stats", "percentiles":
			switch n.ftype {
			case store.FieldText:
				return search.Badf("Text fields are not optimised for operations that require per-document field data like "+
					"aggregations and sorting, so these operations are disabled by default. Please use a keyword field instead. "+
					"Alternatively, set fielddata=true on [%s] in order to load field data by uninverting the inverted index.", n.field)
			case "keyword":
				return search.Badf("Field [%s] of type [keyword] is not supported for aggregation [%s]", n.field, n.typ)
			}
		}
		if err := typeAggs(n.subs, types); err != nil {
			return err
		}
	}
	return nil
}
