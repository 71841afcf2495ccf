package pg

// Parameters of each aggregation type, read into its aggNode: one compile
// function per type (aggCompilers) and the parameter readers they share.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/dateformat"
	"github.com/fleetgraph/fleetgraph/search/datemath"
	"github.com/fleetgraph/fleetgraph/store"
)

// compileTerms reads a terms aggregation: size, order, min_doc_count, missing.
func (n *aggNode) compileTerms(v any) error {
	p, err := n.params(v, "field", "size", "order", "min_doc_count", "missing", "shard_size",
		"show_term_doc_count_error", "execution_hint", "collect_mode", "value_type", "format", "shard_min_doc_count",
		"include", "exclude")
	if err != nil {
		return err
	}
	if err := n.fieldParam(p); err != nil {
		return err
	}
	n.size = 10
	if s, ok := p["size"]; ok {
		if n.size, err = intParam(s); err != nil || n.size < 1 || n.size > maxTermsSize {
			return n.badf("[size] must be between 1 and %d", maxTermsSize)
		}
	}
	n.minDocCount = 1
	if err := n.minDocCountParam(p); err != nil {
		return err
	}
	if n.minDocCount < 1 {
		// The values of the scope without matching documents are
		// filled in after the statement (fillZeroTerms).
		n.minDocCount, n.zeroTerms = 1, true
	}
	if m, ok := p["missing"]; ok {
		switch m.(type) {
		case string, float64, json.Number, bool, int, int64:
			n.missing, n.hasMissing = m, true
		default:
			return n.badf("[missing] must be a string, number or boolean")
		}
	}
	if n.include, err = n.termsFilterParam(p, "include"); err != nil {
		return err
	}
	if n.exclude, err = n.termsFilterParam(p, "exclude"); err != nil {
		return err
	}
	if f, ok := p["format"]; ok {
		if n.termsFmt, _ = f.(string); n.termsFmt == "" {
			return n.badf("[format] must be a non-empty string")
		}
	}
	if vt, ok := p["value_type"]; ok {
		if n.valueType, _ = vt.(string); n.valueType == "" {
			return n.badf("[value_type] must be a string")
		}
	}
	return n.orderParam(p["order"])
}

// dateTermsParams reads the include, exclude and missing of terms of a
// date field as Elasticsearch does: dates in the aggregation's format (or
// the field's, strict_date_optional_time||epoch_millis), compared and
// keyed as epoch milliseconds. A regular expression is refused, as
// Elasticsearch refuses it on a field that is not a string.
func (n *aggNode) dateTermsParams() error {
	for key, f := range map[string]*termsFilter{"include": n.include, "exclude": n.exclude} {
		if f == nil || f.numPartitions > 0 {
			continue // a partition: resolved to epoch milliseconds (partitionTerms)
		}
		if f.values == nil {
			return n.badf("Aggregation [%s] cannot support regular expression style include/exclude settings as they can only "+
				"be applied to string fields. Use an array of values for include/exclude clauses", n.name)
		}
		for i, v := range f.values {
			ms, err := n.dateMillis(v)
			if err != nil {
				return n.badf("[%s] %v", key, err)
			}
			f.values[i] = strconv.FormatInt(ms, 10)
		}
	}
	if n.hasMissing {
		ms, err := n.dateMillis(scalarText(n.missing))
		if err != nil {
			return n.badf("[missing] %v", err)
		}
		n.missing = ms
	}
	return nil
}

// dateMillis reads a date of a date field's terms: epoch milliseconds, or
// a date in the aggregation's format, else ISO 8601.
func (n *aggNode) dateMillis(s string) (int64, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ms, nil
	}
	if n.hasFmt && n.dfmt.Custom() {
		if t, _, ok := n.dfmt.Read(s, time.UTC); ok {
			return t.UnixMilli(), nil
		}
		return 0, fmt.Errorf("failed to parse date field [%s] with format [%s]", s, n.termsFmt)
	}
	t, _, err := datemath.Parse(s, time.UTC)
	if err != nil {
		return 0, fmt.Errorf("failed to parse date field [%s] with format [strict_date_optional_time||epoch_millis]", s)
	}
	return t.UnixMilli(), nil
}

// compileDateHistogram reads a date_histogram: interval, time_zone, format, offset, bounds.
func (n *aggNode) compileDateHistogram(v any) error {
	p, err := n.params(v, "field", "calendar_interval", "fixed_interval", "interval", "time_zone",
		"min_doc_count", "offset", "format", "keyed", "extended_bounds", "hard_bounds")
	if err != nil {
		return err
	}
	if err := n.fieldParam(p); err != nil {
		return err
	}
	if err := n.intervalParam(p); err != nil {
		return err
	}
	if n.tz, err = parseZone(p["time_zone"]); err != nil {
		return n.badf("%v", err)
	}
	if f, ok := p["format"]; ok {
		s, ok := f.(string)
		if !ok {
			return n.badf("[format] must be a string")
		}
		if n.dfmt, err = dateformat.Parse(s); err != nil {
			return n.badf("%v", err)
		}
		n.hasFmt = true
	}
	if o, ok := p["offset"]; ok {
		s, _ := o.(string)
		ms, ok := parseDurationMs(strings.TrimPrefix(s, "+"), true)
		if !ok {
			return n.badf("invalid [offset] %v", o)
		}
		n.offMs = ms
	}
	if err := n.minDocCountParam(p); err != nil {
		return err
	}
	if err := n.boundsParams(p); err != nil {
		return err
	}
	return n.keyedParam(p)
}

// compileHistogram reads a histogram: interval, offset, missing, bounds.
func (n *aggNode) compileHistogram(v any) error {
	p, err := n.params(v, "field", "interval", "offset", "min_doc_count", "keyed", "missing", "format",
		"extended_bounds", "hard_bounds")
	if err != nil {
		return err
	}
	if err := n.fieldParam(p); err != nil {
		return err
	}
	if n.interval, err = floatParam(p["interval"]); err != nil || !(n.interval > 0) || math.IsInf(n.interval, 0) {
		return n.badf("[interval] must be a positive number")
	}
	if o, ok := p["offset"]; ok {
		if n.offset, err = floatParam(o); err != nil {
			return n.badf("[offset] must be a number")
		}
	}
	if m, ok := p["missing"]; ok {
		f, err := floatParam(m)
		if err != nil {
			return n.badf("[missing] must be a number")
		}
		n.missing, n.hasMissing = f, true
	}
	if err := n.minDocCountParam(p); err != nil {
		return err
	}
	if err := n.boundsParams(p); err != nil {
		return err
	}
	if err := n.numFormatParam(p); err != nil {
		return err
	}
	return n.keyedParam(p)
}

// termsFilterParam reads a terms include or exclude: a regular expression
// (matching whole values) or an array of exact values. Partitions
// ({"partition": ..., "num_partitions": ...}) are refused.
func (n *aggNode) termsFilterParam(p map[string]any, key string) (*termsFilter, error) {
	switch v := p[key].(type) {
	case nil:
		return nil, nil
	case string:
		return &termsFilter{regex: v}, nil
	case []any:
		f := &termsFilter{values: []string{}}
		for _, e := range v {
			switch e.(type) {
			case string, float64, json.Number, bool, int, int64:
				f.values = append(f.values, scalarText(e))
			default:
				return nil, n.badf("[%s] values must be strings, numbers or booleans", key)
			}
		}
		return f, nil
	case map[string]any:
		if key != "include" {
			return nil, n.badf("[%s] must be a regular expression or an array of values", key)
		}
		f := &termsFilter{}
		for k, x := range v {
			i, err := intParam(x)
			switch {
			case k != "partition" && k != "num_partitions":
				return nil, n.badf("[include] takes partition and num_partitions, not [%s]", k)
			case err != nil || i < 0:
				return nil, n.badf("[include] [%s] must be a non-negative integer", k)
			case k == "partition":
				f.partition = i
			default:
				f.numPartitions = i
			}
		}
		if f.numPartitions < 1 || f.partition >= f.numPartitions {
			return nil, n.badf("[include] needs num_partitions above 0 and partition below it")
		}
		return f, nil
	}
	return nil, n.badf("[%s] must be a regular expression or an array of values", key)
}

// numFormatParam reads the format of a numeric aggregation: a Java
// DecimalFormat pattern (decimalformat.go).
func (n *aggNode) numFormatParam(p map[string]any) error {
	f, ok := p["format"]
	if !ok {
		return nil
	}
	s, isStr := f.(string)
	if !isStr {
		return n.badf("[format] must be a string")
	}
	var err error
	if n.numFmt, err = parseDecimalFormat(s); err != nil {
		return n.badf("[format] %s", strings.TrimPrefix(err.Error(), "400 "))
	}
	return nil
}

// noFormat refuses a format where this backend would not apply it.
func (n *aggNode) noFormat(p map[string]any) error {
	if _, ok := p["format"]; ok {
		return n.badf("[format] is not supported on this aggregation")
	}
	return nil
}

// compileRange reads a range aggregation: its ranges (ordered by from, then
// to, by finishRanges once the field's type is known) and missing.
func (n *aggNode) compileRange(v any) error {
	p, err := n.params(v, "field", "ranges", "keyed", "format", "missing")
	if err != nil {
		return err
	}
	if err := n.noFormat(p); err != nil {
		return err
	}
	if err := n.fieldParam(p); err != nil {
		return err
	}
	if m, ok := p["missing"]; ok {
		switch m.(type) {
		case string, float64, json.Number, int, int64:
			n.missing, n.hasMissing = m, true
		default:
			return n.badf("[missing] must be a number or a date")
		}
	}
	rs, ok := p["ranges"].([]any)
	if !ok || len(rs) == 0 {
		return n.badf("[ranges] must be a non-empty array")
	}
	for _, r := range rs {
		rm, ok := r.(map[string]any)
		if !ok {
			return n.badf("each range must be an object")
		}
		ar := aggRange{from: math.Inf(-1), to: math.Inf(1)}
		for k, val := range rm {
			switch k {
			case "from", "to":
				if val == nil {
					continue
				}
				f, err := floatParam(val)
				if s, isStr := val.(string); err != nil && isStr {
					// a date or date math: a date field's bound (finishRanges)
					if k == "from" {
						ar.fromDate = s
					} else {
						ar.toDate = s
					}
					continue
				}
				if err != nil {
					return n.badf("range [%s] must be a number", k)
				}
				if k == "from" {
					ar.from = f
				} else {
					ar.to = f
				}
			case "key":
				s, ok := val.(string)
				if !ok {
					return n.badf("range [key] must be a string")
				}
				ar.key, ar.keySet = s, true
			default:
				return n.badf("unsupported range parameter [%s]", k)
			}
		}
		n.ranges = append(n.ranges, ar)
	}
	return n.keyedParam(p)
}

// finishRanges reads the date bounds and missing of a range aggregation of
// a date field as Elasticsearch does (dates or date math, compared as
// epoch milliseconds, keys written as dates), refuses them on other fields,
// names the ranges and orders them by from, then to.
func (n *aggNode) finishRanges() error {
	date := n.ftype == store.FieldDate
	read := func(what, s string, roundUp bool) (float64, error) {
		if !date {
			return 0, n.badf("range [%s] must be a number", what)
		}
		t, err := datemath.Eval(s, time.Now(), roundUp, time.UTC, dateformat.Format{})
		if err != nil {
			return 0, n.badf("range [%s] %v", what, err)
		}
		return float64(t.UnixMilli()), nil
	}
	for i := range n.ranges {
		ar := &n.ranges[i]
		var err error
		if ar.fromDate != "" {
			if ar.from, err = read("from", ar.fromDate, false); err != nil {
				return err
			}
		}
		if ar.toDate != "" {
			if ar.to, err = read("to", ar.toDate, false); err != nil {
				return err
			}
		}
		if !ar.keySet {
			ar.key = n.rangeBound(ar.from) + "-" + n.rangeBound(ar.to)
		}
	}
	if s, ok := n.missing.(string); ok && n.hasMissing {
		f, err := floatParam(s)
		if err != nil {
			if f, err = read("missing", s, false); err != nil {
				return err
			}
		}
		n.missing = f
	} else if n.hasMissing {
		f, err := floatParam(n.missing)
		if err != nil {
			return n.badf("[missing] must be a number or a date")
		}
		n.missing = f
	}
	// Elasticsearch answers ranges ordered by from, then to.
	sort.SliceStable(n.ranges, func(i, j int) bool {
		if n.ranges[i].from != n.ranges[j].from {
			return n.ranges[i].from < n.ranges[j].from
		}
		return n.ranges[i].to < n.ranges[j].to
	})
	return nil
}

// rangeFields sets the key, from and to of range bucket i on b (of a date
// field, also from_as_string and to_as_string).
func (n *aggNode) rangeFields(b map[string]any, i int) {
	r := n.ranges[i]
	b["key"] = r.key
	if !math.IsInf(r.from, 0) {
		b["from"] = r.from
		if n.ftype == store.FieldDate {
			b["from_as_string"] = n.dateKeyString(int64(r.from))
		}
	}
	if !math.IsInf(r.to, 0) {
		b["to"] = r.to
		if n.ftype == store.FieldDate {
			b["to_as_string"] = n.dateKeyString(int64(r.to))
		}
	}
}

// compileFilter reads a filter aggregation: its query.
func (n *aggNode) compileFilter(v any) error {
	q, ok := v.(map[string]any)
	if !ok {
		return n.badf("the filter must be a query object")
	}
	n.query = q
	return nil
}

// compileFilters reads a filters aggregation: named or anonymous queries and the other bucket.
func (n *aggNode) compileFilters(v any) error {
	p, err := n.params(v, "filters", "other_bucket", "other_bucket_key", "keyed")
	if err != nil {
		return err
	}
	switch fs := p["filters"].(type) {
	case map[string]any:
		n.keyed = true
		for name, q := range fs {
			qm, ok := q.(map[string]any)
			if !ok {
				return n.badf("filter [%s] must be a query object", name)
			}
			n.filters = append(n.filters, aggFilter{name: name, q: qm})
		}
		sort.Slice(n.filters, func(i, j int) bool { return n.filters[i].name < n.filters[j].name })
	case []any:
		for _, q := range fs {
			qm, ok := q.(map[string]any)
			if !ok {
				return n.badf("each filter must be a query object")
			}
			n.filters = append(n.filters, aggFilter{q: qm})
		}
	default:
		return n.badf("[filters] must be an object or an array")
	}
	if len(n.filters) == 0 {
		return n.badf("[filters] is empty")
	}
	if ob, ok := p["other_bucket"]; ok {
		if n.other, ok = ob.(bool); !ok {
			return n.badf("[other_bucket] must be a boolean")
		}
	}
	n.otherKy = "_other_"
	if k, ok := p["other_bucket_key"]; ok {
		s, ok := k.(string)
		if !ok || s == "" {
			return n.badf("[other_bucket_key] must be a string")
		}
		n.otherKy, n.other = s, true
	}
	if k, ok := p["keyed"]; ok {
		b, ok := k.(bool)
		if !ok {
			return n.badf("[keyed] must be a boolean")
		}
		if b && !n.keyed {
			return n.badf("[keyed] needs named filters")
		}
		n.keyed = b
	}
	return nil
}

// compileMissing reads a missing aggregation.
func (n *aggNode) compileMissing(v any) error {
	p, err := n.params(v, "field")
	if err != nil {
		return err
	}
	return n.fieldParam(p)
}

// compileNumericMetric reads avg, sum, min, max and stats: a field and a numeric missing.
func (n *aggNode) compileNumericMetric(v any) error {
	p, err := n.params(v, "field", "missing", "format")
	if err != nil {
		return err
	}
	if err := n.fieldParam(p); err != nil {
		return err
	}
	if err := n.numFormatParam(p); err != nil {
		return err
	}
	return n.numMissing(p)
}

// compileValueCount reads a value_count.
func (n *aggNode) compileValueCount(v any) error {
	p, err := n.params(v, "field", "missing")
	if err != nil {
		return err
	}
	if err := n.anyMissing(p); err != nil {
		return err
	}
	return n.fieldParam(p)
}

// anyMissing reads the missing value of value_count and cardinality: any
// scalar, standing for the value of documents without one.
func (n *aggNode) anyMissing(p map[string]any) error {
	m, ok := p["missing"]
	if !ok {
		return nil
	}
	switch m.(type) {
	case string, float64, json.Number, bool, int, int64:
		n.missing, n.hasMissing = m, true
		return nil
	}
	return n.badf("[missing] must be a string, number or boolean")
}

// compileCardinality reads a cardinality.
func (n *aggNode) compileCardinality(v any) error {
	p, err := n.params(v, "field", "precision_threshold", "missing")
	if err != nil {
		return err
	}
	if err := n.anyMissing(p); err != nil {
		return err
	}
	if t, ok := p["precision_threshold"]; ok {
		// Counts are exact; the threshold must still be valid, as on
		// Elasticsearch.
		f, err := floatParam(t)
		if err != nil || f < 0 {
			return n.badf("[precision_threshold] must be greater than or equal to 0. Found [%v]", t)
		}
	}
	return n.fieldParam(p)
}

// compilePercentiles reads percentiles: the percents (1, 5, 25, 50, 75, 95 and 99 by default).
func (n *aggNode) compilePercentiles(v any) error {
	p, err := n.params(v, "field", "percents", "keyed", "missing", "tdigest", "format")
	if err != nil {
		return err
	}
	if err := n.fieldParam(p); err != nil {
		return err
	}
	n.percents = []float64{1, 5, 25, 50, 75, 95, 99}
	if ps, ok := p["percents"]; ok {
		arr, ok := ps.([]any)
		if !ok || len(arr) == 0 {
			return n.badf("[percents] must be a non-empty array")
		}
		n.percents = nil
		for _, x := range arr {
			f, err := floatParam(x)
			if err != nil || f < 0 || f > 100 {
				return n.badf("each percent must be a number between 0 and 100")
			}
			n.percents = append(n.percents, f)
		}
	}
	if td, ok := p["tdigest"]; ok {
		m, isObj := td.(map[string]any)
		if !isObj {
			return n.badf("[tdigest] must be an object")
		}
		for k, v := range m {
			switch k {
			case "compression":
				// Values are exact (see metricCols); the compression must
				// still be valid, as on Elasticsearch.
				if f, err := floatParam(v); err != nil || f < 0 {
					return n.badf("[compression] must be greater than or equal to 0. Found [%v]", v)
				}
			case "execution_hint":
				if v != "default" && v != "high_accuracy" {
					return n.badf("[execution_hint] must be default or high_accuracy")
				}
			default:
				return n.badf("unsupported [tdigest] parameter [%s]", k)
			}
		}
	}
	if err := n.noFormat(p); err != nil {
		return err
	}
	n.keyed = true
	if err := n.keyedParam(p); err != nil {
		return err
	}
	return n.numMissing(p)
}

// compileTopHits reads top_hits: size, from, sort, _source, version and
// seq_no_primary_term.
func (n *aggNode) compileTopHits(v any) error {
	p, err := n.params(v, "size", "from", "sort", "_source", "version", "seq_no_primary_term")
	if err != nil {
		return err
	}
	n.size = 3
	if s, ok := p["size"]; ok {
		if n.size, err = intParam(s); err != nil || n.size < 0 {
			return n.badf("[size] must be a non-negative integer")
		}
	}
	if s, ok := p["from"]; ok {
		if n.from, err = intParam(s); err != nil || n.from < 0 {
			return n.badf("[from] must be a non-negative integer")
		}
	}
	if n.from+n.size > limits.MaxTopHitsSize {
		return n.badf("[from] + [size] must be at most %d", limits.MaxTopHitsSize)
	}
	if n.sort, err = parseHitSort(p["sort"]); err != nil {
		return n.badf("%v", err)
	}
	if s, ok := p["_source"]; ok {
		if n.source, err = parseSource(s); err != nil {
			return n.badf("%v", err)
		}
	}
	for key, to := range map[string]*bool{"version": &n.version, "seq_no_primary_term": &n.seqNo} {
		if b, ok := p[key]; ok {
			if *to, ok = b.(bool); !ok {
				return n.badf("[%s] must be a boolean", key)
			}
		}
	}
	return nil
}

func (n *aggNode) minDocCountParam(p map[string]any) error {
	if v, ok := p["min_doc_count"]; ok {
		i, err := intParam(v)
		if err != nil || i < 0 {
			return n.badf("[min_doc_count] must be a non-negative integer")
		}
		n.minDocCount = int64(i)
	}
	return nil
}

func (n *aggNode) keyedParam(p map[string]any) error {
	if v, ok := p["keyed"]; ok {
		b, ok := v.(bool)
		if !ok {
			return n.badf("[keyed] must be a boolean")
		}
		n.keyed = b
	}
	return nil
}

func (n *aggNode) numMissing(p map[string]any) error {
	if m, ok := p["missing"]; ok {
		f, err := floatParam(m)
		if err != nil {
			return n.badf("[missing] must be a number")
		}
		n.missing, n.hasMissing = f, true
	}
	return nil
}

func (n *aggNode) orderParam(v any) error {
	if v == nil {
		n.orders = []termsOrder{{by: "_count", desc: true}}
		return nil
	}
	var items []map[string]any
	switch o := v.(type) {
	case map[string]any:
		items = append(items, o)
	case []any:
		for _, e := range o {
			m, ok := e.(map[string]any)
			if !ok {
				return n.badf("[order] entries must be objects")
			}
			items = append(items, m)
		}
	default:
		return n.badf("[order] must be an object or an array")
	}
	for _, m := range items {
		if len(m) != 1 {
			return n.badf("each [order] entry must name one key")
		}
		for k, d := range m {
			ds, _ := d.(string)
			ds = strings.ToLower(ds)
			if ds != "asc" && ds != "desc" {
				return n.badf("[order] direction must be asc or desc")
			}
			if k == "_term" {
				k = "_key"
			}
			n.orders = append(n.orders, termsOrder{by: k, desc: ds == "desc"})
		}
	}
	return nil
}

var calendarUnits = map[string]string{
	"minute": "minute", "1m": "minute", "hour": "hour", "1h": "hour", "day": "day", "1d": "day",
	"week": "week", "1w": "week", "month": "month", "1M": "month", "quarter": "quarter", "1q": "quarter",
	"year": "year", "1y": "year",
}

func (n *aggNode) intervalParam(p map[string]any) error {
	set := 0
	for _, k := range []string{"calendar_interval", "fixed_interval", "interval"} {
		v, ok := p[k]
		if !ok {
			continue
		}
		set++
		s, _ := v.(string)
		unit, cal := calendarUnits[s]
		switch {
		case k != "fixed_interval" && cal:
			n.calUnit = unit
		case k != "calendar_interval":
			ms, ok := parseDurationMs(s, false)
			if !ok || ms <= 0 {
				return n.badf("invalid [%s] %v", k, v)
			}
			n.fixedMs = ms
		default:
			return n.badf("invalid [calendar_interval] %v", v)
		}
	}
	if set != 1 {
		return n.badf("exactly one of [calendar_interval], [fixed_interval] is required")
	}
	return nil
}

// parseDurationMs reads a histogram's interval or offset (an
// Elasticsearch time value of whole milliseconds or longer, signed when
// signed) in milliseconds.
func parseDurationMs(s string, signed bool) (int64, bool) {
	neg := false
	if signed {
		s, neg = strings.CutPrefix(s, "-")
	}
	n, unit, ok := search.ParseTimeValue(s)
	if !ok || unit < time.Millisecond || n > math.MaxInt64/int64(unit/time.Millisecond) {
		return 0, false
	}
	ms := n * int64(unit/time.Millisecond)
	if neg {
		ms = -ms
	}
	return ms, true
}

var offsetRe = regexp.MustCompile(`^([+-])(\d{2}):?(\d{2})?$`)

func parseZone(v any) (aggZone, error) {
	if v == nil {
		return aggZone{loc: time.UTC, pg: "+00:00", interval: true}, nil
	}
	s, ok := v.(string)
	if !ok || s == "" {
		return aggZone{}, errors.New("[time_zone] must be a string")
	}
	if s == "Z" || s == "UTC" || s == "utc" {
		return aggZone{loc: time.UTC, pg: "+00:00", interval: true}, nil
	}
	if m := offsetRe.FindStringSubmatch(s); m != nil {
		h, _ := strconv.Atoi(m[2])
		mi, _ := strconv.Atoi(m[3])
		if h > 18 || mi > 59 {
			return aggZone{}, fmt.Errorf("invalid [time_zone] %q", s)
		}
		secs := h*3600 + mi*60
		if m[1] == "-" {
			secs = -secs
		}
		pg := fmt.Sprintf("%s%02d:%02d", m[1], h, mi)
		return aggZone{loc: time.FixedZone(pg, secs), pg: pg, interval: true}, nil
	}
	loc, err := time.LoadLocation(s)
	if err != nil || strings.EqualFold(s, "local") {
		return aggZone{}, fmt.Errorf("unknown [time_zone] %q", s)
	}
	return aggZone{loc: loc, pg: s}, nil
}

func parseHitSort(v any) ([]hitSort, error) {
	if v == nil {
		return nil, nil
	}
	var items []any
	if arr, ok := v.([]any); ok {
		items = arr
	} else {
		items = []any{v}
	}
	var out []hitSort
	for _, it := range items {
		switch s := it.(type) {
		case string:
			if s == "_score" {
				continue
			}
			out = append(out, hitSort{field: s})
		case map[string]any:
			for f, o := range s {
				dir := ""
				switch ov := o.(type) {
				case string:
					dir = ov
				case map[string]any:
					for k, x := range ov {
						switch k {
						case "order":
							dir, _ = x.(string)
						case "unmapped_type", "missing", "format":
						default:
							return nil, fmt.Errorf("unsupported sort option [%s]", k)
						}
					}
				default:
					return nil, errors.New("invalid [sort]")
				}
				dir = strings.ToLower(dir)
				if dir != "" && dir != "asc" && dir != "desc" {
					return nil, fmt.Errorf("invalid sort order %q", dir)
				}
				if f == "_score" {
					continue
				}
				out = append(out, hitSort{field: f, desc: dir == "desc"})
			}
		default:
			return nil, errors.New("invalid [sort]")
		}
	}
	return out, nil
}

func intParam(v any) (int, error) {
	f, err := floatParam(v)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1e9 {
		return 0, errors.New("not an integer")
	}
	return int(f), nil
}

func floatParam(v any) (float64, error) {
	switch t := v.(type) {
	case float64:
		return t, nil
	case int:
		return float64(t), nil
	case int64:
		return float64(t), nil
	case json.Number:
		return t.Float64()
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		if err != nil || math.IsNaN(f) {
			return 0, errors.New("not a number")
		}
		return f, nil
	}
	return 0, errors.New("not a number")
}

// javaDouble formats like Java's Double.toString, which Elasticsearch uses
// for range keys and percentile keys ("10.0", "99.9", "1.0E7").
func javaDouble(f float64) string {
	if f == 0 {
		return "0.0"
	}
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, 64)
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// rangeBound is a bound in a range's key: * when open, a date of a date
// field, else the number as Java writes it.
func (n *aggNode) rangeBound(f float64) string {
	switch {
	case math.IsInf(f, 0):
		return "*"
	case n.ftype == store.FieldDate:
		return n.dateKeyString(int64(f))
	}
	return javaDouble(f)
}

// boundsParams reads extended_bounds and hard_bounds ({"min", "max"}) as
// bucket keys.
func (n *aggNode) boundsParams(p map[string]any) error {
	for _, name := range []string{"extended_bounds", "hard_bounds"} {
		v, ok := p[name]
		if !ok {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return n.badf("[%s] must be an object", name)
		}
		b := [2]float64{math.Inf(-1), math.Inf(1)}
		for k, bv := range m {
			i := map[string]int{"min": 0, "max": 1}[k]
			if k != "min" && k != "max" {
				return n.badf("unsupported [%s] option [%s]", name, k)
			}
			if bv == nil {
				continue
			}
			var key float64
			if n.typ == "date_histogram" {
				ms, err := dateBound(bv, n.tz.loc)
				if err != nil {
					// Date math (now-7d/d, 2026-11-01||+1M), as on Elasticsearch.
					c := &compiler{a: &args{}, now: time.Now()}
					t, merr := c.dateValueFmt(bv, false, n.tz.loc, n.dfmt)
					if merr != nil {
						return n.badf("[%s.%s]: %v", name, k, err)
					}
					ms = t.UnixMilli()
				}
				key = float64(n.dateKey(ms))
			} else {
				f, err := floatParam(bv)
				if err != nil {
					return n.badf("[%s.%s] must be a number", name, k)
				}
				key = math.Floor((f - n.offset) / n.interval)
			}
			b[i] = key
		}
		if name == "extended_bounds" {
			if math.IsInf(b[0], 0) || math.IsInf(b[1], 0) {
				return n.badf("[extended_bounds] needs min and max")
			}
			n.ext = &b
		} else {
			n.hard = &b
		}
		if b[0] > b[1] {
			return n.badf("[%s.min] is after [%s.max]", name, name)
		}
	}
	return nil
}

// dateBound reads a date bound: epoch milliseconds (number or digits) or an
// ISO 8601 date (in loc when it names no offset).
func dateBound(v any, loc *time.Location) (int64, error) {
	switch t := v.(type) {
	case float64, json.Number, int, int64:
		f, _ := floatParam(t)
		return int64(f), nil
	case string:
		if ms, err := strconv.ParseInt(t, 10, 64); err == nil {
			return ms, nil
		}
		if tm, _, err := datemath.Parse(t, loc); err == nil {
			return tm.UnixMilli(), nil
		}
		return 0, fmt.Errorf("cannot read date %q (epoch milliseconds or ISO 8601; date math is not supported)", t)
	}
	return 0, errors.New("must be a date")
}
