package pg

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/isotime"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/esql"
)

// ES|QL functions: scalar functions, date functions, BUCKET and the
// aggregate functions of STATS.

func (tr *esqlTranslator) args(x *esql.Call, st *esqlStats) ([]esqlExpr, error) {
	out := make([]esqlExpr, len(x.Args))
	for i, y := range x.Args {
		e, err := tr.compile(y, st)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// function translates a scalar function call through esqlFunctions.
func (tr *esqlTranslator) function(x *esql.Call, st *esqlStats) (esqlExpr, error) {
	if x.Name == "DATE_EXTRACT" || x.Name == "DATE_DIFF" {
		return tr.dateFunction(x, st)
	}
	es, err := tr.args(x, st)
	if err != nil {
		return esqlExpr{}, err
	}
	f, ok := esqlFunctions[x.Name]
	if !ok {
		return esqlExpr{}, search.Badf("function %s is not supported", x.Name)
	}
	return f(&esqlCall{tr: tr, x: x, es: es})
}

// esqlCall is a scalar function call with its compiled arguments.
type esqlCall struct {
	tr *esqlTranslator
	x  *esql.Call
	es []esqlExpr
}

func (c *esqlCall) pos(i int) esql.Pos { return c.x.Args[i].Position() }

// arg is argument i converted to t.
func (c *esqlCall) arg(i int, t esqlType) (string, error) { return c.tr.conv(c.pos(i), c.es[i], t) }

// bound converts the arguments to ts and binds each once for body.
func (c *esqlCall) bound(out esqlType, body func(v []string) string, ts ...esqlType) (esqlExpr, error) {
	vals := make([]string, len(ts))
	for i, t := range ts {
		var err error
		if vals[i], err = c.arg(i, t); err != nil {
			return esqlExpr{}, err
		}
	}
	return esqlExpr{sql: c.tr.bind(body, vals...), t: out}, nil
}

// unified converts every argument to their common type.
func (c *esqlCall) unified() (esqlType, []string, error) {
	ts := make([]esqlType, len(c.es))
	ats := make([]esql.Pos, len(c.es))
	for i, e := range c.es {
		ts[i], ats[i] = e.t, c.pos(i)
	}
	t := esqlUnify(ts...)
	ss, err := c.tr.convAll(c.es, ats, t)
	return t, ss, err
}

// one is tmpl with X replaced by the first argument converted to t.
func (c *esqlCall) one(t esqlType, tmpl string, out esqlType) (esqlExpr, error) {
	s, err := c.arg(0, t)
	if err != nil {
		return esqlExpr{}, err
	}
	return esqlExpr{sql: strings.ReplaceAll(tmpl, "X", s), t: out}, nil
}

// esqlOne is a function of one argument: tmpl with X replaced by it.
func esqlOne(t esqlType, tmpl string, out esqlType) func(c *esqlCall) (esqlExpr, error) {
	return func(c *esqlCall) (esqlExpr, error) { return c.one(t, tmpl, out) }
}

// esqlFunctions translate each scalar function (DATE_EXTRACT and DATE_DIFF
// aside: they read their unit argument before the others are compiled).
var esqlFunctions = map[string]func(c *esqlCall) (esqlExpr, error){
	"NOW": func(c *esqlCall) (esqlExpr, error) {
		return esqlExpr{sql: "now()", t: etTime}, nil
	},
	"TO_LOWER":    esqlOne(etText, "lower(X)", etText),
	"TO_UPPER":    esqlOne(etText, "upper(X)", etText),
	"LENGTH":      esqlOne(etText, "char_length(X)::bigint", etInt),
	"TRIM":        esqlOne(etText, "btrim(X)", etText),
	"TO_STRING":   esqlConversion("TO_STRING"),
	"TO_INTEGER":  esqlConversion("TO_INTEGER"),
	"TO_LONG":     esqlConversion("TO_LONG"),
	"TO_DOUBLE":   esqlConversion("TO_DOUBLE"),
	"TO_DATETIME": esqlConversion("TO_DATETIME"),
	"CONCAT":      esqlConcat,
	"SUBSTRING":   esqlSubstring,
	"ROUND":       esqlRound,
	"ABS": func(c *esqlCall) (esqlExpr, error) {
		fn := strings.ToLower(c.x.Name)
		if c.es[0].t == etInt {
			return esqlExpr{sql: fn + "(" + c.es[0].sql + ")", t: etInt}, nil
		}
		return c.one(etNum, fn+"(X)", etNum)
	},
	"FLOOR": func(c *esqlCall) (esqlExpr, error) {
		fn := strings.ToLower(c.x.Name)
		if c.es[0].t == etInt {
			return esqlExpr{sql: fn + "(" + c.es[0].sql + ")", t: etInt}, nil
		}
		return c.one(etNum, fn+"(X)", etNum)
	},
	"CEIL": func(c *esqlCall) (esqlExpr, error) {
		fn := strings.ToLower(c.x.Name)
		if c.es[0].t == etInt {
			return esqlExpr{sql: fn + "(" + c.es[0].sql + ")", t: etInt}, nil
		}
		return c.one(etNum, fn+"(X)", etNum)
	},
	"COALESCE": func(c *esqlCall) (esqlExpr, error) {
		t, ss, err := c.unified()
		if err != nil {
			return esqlExpr{}, err
		}
		return esqlExpr{sql: "COALESCE(" + strings.Join(ss, ", ") + ")", t: t}, nil
	},
	"CASE": esqlCaseWhen,
	"STARTS_WITH": func(c *esqlCall) (esqlExpr, error) {
		fn := map[string]string{"STARTS_WITH": "left", "ENDS_WITH": "right"}[c.x.Name]
		return c.bound(etBool, func(v []string) string {
			return fn + "(" + v[0] + ", char_length(" + v[1] + ")) = " + v[1]
		}, etText, etText)
	},
	"ENDS_WITH": func(c *esqlCall) (esqlExpr, error) {
		fn := map[string]string{"STARTS_WITH": "left", "ENDS_WITH": "right"}[c.x.Name]
		return c.bound(etBool, func(v []string) string {
			return fn + "(" + v[0] + ", char_length(" + v[1] + ")) = " + v[1]
		}, etText, etText)
	},
	"LEFT": func(c *esqlCall) (esqlExpr, error) {
		fn := strings.ToLower(c.x.Name)
		return c.bound(etText, func(v []string) string {
			return fn + "(" + v[0] + ", LEAST(GREATEST(" + v[1] + ", 0), 2147483647)::int)"
		}, etText, etInt)
	},
	"RIGHT": func(c *esqlCall) (esqlExpr, error) {
		fn := strings.ToLower(c.x.Name)
		return c.bound(etText, func(v []string) string {
			return fn + "(" + v[0] + ", LEAST(GREATEST(" + v[1] + ", 0), 2147483647)::int)"
		}, etText, etInt)
	},
	"SQRT": func(c *esqlCall) (esqlExpr, error) {
		return c.bound(etNum, func(v []string) string { return "CASE WHEN " + v[0] + " >= 0 THEN sqrt(" + v[0] + ") END" }, etNum)
	},
	"LOG10": func(c *esqlCall) (esqlExpr, error) {
		return c.bound(etNum, func(v []string) string { return "CASE WHEN " + v[0] + " > 0 THEN log(" + v[0] + ") END" }, etNum)
	},
	"POW": func(c *esqlCall) (esqlExpr, error) {
		// Undefined results (a negative base to a fractional power, 0 to a
		// negative one) are null; overflow is a 400 like other overflows.
		return c.bound(etNum, func(v []string) string {
			return "(CASE WHEN (" + v[0] + " < 0 AND " + v[1] + " <> floor(" + v[1] + ")) OR (" + v[0] + " = 0 AND " +
				v[1] + " < 0) THEN NULL ELSE power(" + v[0] + ", " + v[1] + ") END)"
		}, etNum, etNum)
	},
	"GREATEST":   esqlGreatestLeast,
	"LEAST":      esqlGreatestLeast,
	"TO_BOOLEAN": esqlConversion("TO_BOOLEAN"),
	"DATE_TRUNC": func(c *esqlCall) (esqlExpr, error) {
		return c.tr.timeBucket(c.x, c.es[1], c.pos(1), c.es[0], c.pos(0))
	},
	"BUCKET": esqlBucket,
}

// esqlConcat translates CONCAT.
func esqlConcat(c *esqlCall) (esqlExpr, error) {
	parts := make([]string, len(c.es))
	for i := range c.es {
		var err error
		if parts[i], err = c.arg(i, etText); err != nil {
			return esqlExpr{}, err
		}
	}
	return esqlExpr{sql: "(" + strings.Join(parts, " || ") + ")", t: etText}, nil
}

// esqlSubstring translates SUBSTRING.
func esqlSubstring(c *esqlCall) (esqlExpr, error) {
	s, err := c.arg(0, etText)
	if err != nil {
		return esqlExpr{}, err
	}
	start, err := c.arg(1, etInt)
	if err != nil {
		return esqlExpr{}, err
	}
	vals := []string{s, start}
	if len(c.es) == 3 {
		n, err := c.arg(2, etInt)
		if err != nil {
			return esqlExpr{}, err
		}
		vals = append(vals, n)
	}
	return esqlExpr{sql: c.tr.bind(func(v []string) string {
		eff := "(CASE WHEN " + v[1] + " < 0 THEN GREATEST(char_length(" + v[0] + ") + " + v[1] + " + 1, 1) WHEN " +
			v[1] + " = 0 THEN 1 ELSE " + v[1] + " END)::int"
		if len(v) == 3 {
			return "substr(" + v[0] + ", " + eff + ", GREATEST(" + v[2] + ", 0)::int)"
		}
		return "substr(" + v[0] + ", " + eff + ")"
	}, vals...), t: etText}, nil
}

// esqlRound translates ROUND.
func esqlRound(c *esqlCall) (esqlExpr, error) {
	if c.es[0].t == etInt && len(c.es) == 1 {
		return c.es[0], nil
	}
	n, err := c.arg(0, etNum)
	if err != nil {
		return esqlExpr{}, err
	}
	d := "0"
	if len(c.es) == 2 {
		if d, err = c.arg(1, etInt); err != nil {
			return esqlExpr{}, err
		}
	}
	if c.es[0].t == etInt {
		return esqlExpr{sql: "round((" + n + ")::numeric, (" + d + ")::int)::bigint", t: etInt}, nil
	}
	return esqlExpr{sql: "round((" + n + ")::numeric, (" + d + ")::int)::double precision", t: etNum}, nil
}

// esqlCaseWhen translates CASE.
func esqlCaseWhen(c *esqlCall) (esqlExpr, error) {
	var vals []esqlExpr
	var vpos []esql.Pos
	var conds []string
	for i := 0; i+1 < len(c.es); i += 2 {
		cond, err := c.arg(i, etBool)
		if err != nil {
			return esqlExpr{}, err
		}
		conds = append(conds, cond)
		vals = append(vals, c.es[i+1])
		vpos = append(vpos, c.pos(i+1))
	}
	hasElse := len(c.es)%2 == 1
	if hasElse {
		vals = append(vals, c.es[len(c.es)-1])
		vpos = append(vpos, c.pos(len(c.es)-1))
	}
	ts := make([]esqlType, len(vals))
	for i, v := range vals {
		ts[i] = v.t
	}
	t := esqlUnify(ts...)
	ss, err := c.tr.convAll(vals, vpos, t)
	if err != nil {
		return esqlExpr{}, err
	}
	var b strings.Builder
	b.WriteString("(CASE")
	for i, cond := range conds {
		b.WriteString(" WHEN " + cond + " THEN " + ss[i])
	}
	if hasElse {
		b.WriteString(" ELSE " + ss[len(ss)-1])
	}
	b.WriteString(" END)")
	return esqlExpr{sql: b.String(), t: t}, nil
}

// esqlGreatestLeast translates GREATEST, LEAST.
func esqlGreatestLeast(c *esqlCall) (esqlExpr, error) {
	t, ss, err := c.unified()
	if err != nil {
		return esqlExpr{}, err
	}
	// Elasticsearch answers null when an argument is null.
	nulls := make([]string, len(ss))
	for i, v := range ss {
		nulls[i] = v + " IS NULL"
	}
	return esqlExpr{sql: "(CASE WHEN " + strings.Join(nulls, " OR ") + " THEN NULL ELSE " + c.x.Name + "(" +
		strings.Join(ss, ", ") + ") END)", t: t}, nil
}

// esqlBucket translates BUCKET.
func esqlBucket(c *esqlCall) (esqlExpr, error) {
	if c.es[1].t != etDur {
		// Numeric buckets: floor(x / span) * span.
		if c.es[0].t == etTime {
			return esqlExpr{}, esqlBad(c.pos(1), "BUCKET of a datetime needs a time span such as 1 hour")
		}
		n, err := c.arg(0, etNum)
		if err != nil {
			return esqlExpr{}, err
		}
		span, err := c.arg(1, etNum)
		if err != nil {
			return esqlExpr{}, err
		}
		return esqlExpr{sql: "(floor(" + n + " / NULLIF(" + span + ", 0)) * " + span + ")", t: etNum}, nil
	}
	return c.tr.timeBucket(c.x, c.es[0], c.pos(0), c.es[1], c.pos(1))
}

// fixed time span lengths; months, quarters and years are calendar units.
var esqlFixedUnits = map[string]time.Duration{
	"millisecond": time.Millisecond, "second": time.Second, "minute": time.Minute,
	"hour": time.Hour, "day": 24 * time.Hour, "week": 7 * 24 * time.Hour,
}

// timeBucket rounds date down to a multiple of span (a time span literal):
// calendar units through month arithmetic in UTC, one week to the Monday,
// other fixed spans to multiples since the epoch.
func (tr *esqlTranslator) timeBucket(x *esql.Call, date esqlExpr, datePos esql.Pos, span esqlExpr, spanPos esql.Pos) (esqlExpr, error) {
	if span.lit == nil || span.lit.Kind != esql.LitDuration {
		return esqlExpr{}, esqlBad(spanPos, "%s needs a time span literal such as 1 hour", x.Name)
	}
	n := span.lit.Value.(int64)
	if n <= 0 {
		return esqlExpr{}, esqlBad(spanPos, "%s needs a positive time span", x.Name)
	}
	d, err := tr.conv(datePos, date, etTime)
	if err != nil {
		return esqlExpr{}, err
	}
	unit := span.lit.Unit
	if fixed, ok := esqlFixedUnits[unit]; ok {
		if n > math.MaxInt64/int64(fixed) {
			return esqlExpr{}, esqlBad(spanPos, "time span too large")
		}
		total := fixed * time.Duration(n)
		iv := tr.reuse(span, fmt.Sprintf("%d milliseconds", total.Milliseconds())) + "::text::interval"
		origin := "TIMESTAMPTZ '1970-01-01 00:00:00+00'"
		if unit == "week" {
			origin = "TIMESTAMPTZ '1970-01-05 00:00:00+00'" // weeks start on Monday
		}
		return esqlExpr{sql: "date_bin(" + iv + ", " + d + ", " + origin + ")", t: etTime}, nil
	}
	months := n
	switch unit {
	case "quarter":
		months *= 3
	case "year":
		months *= 12
	}
	if months > 1<<20 {
		return esqlExpr{}, esqlBad(spanPos, "time span too large")
	}
	m := tr.reuse(span, months) + "::bigint"
	sqlText := tr.bind(func(v []string) string {
		idx := "((extract(year FROM " + v[0] + ")::bigint - 1970) * 12 + extract(month FROM " + v[0] + ")::bigint - 1)"
		return "(TIMESTAMP '1970-01-01 00:00:00' + make_interval(months => (floor(" + idx + "::numeric / " + m + ") * " + m + ")::int)) AT TIME ZONE 'UTC'"
	}, "(("+d+") AT TIME ZONE 'UTC')")
	return esqlExpr{sql: sqlText, t: etTime}, nil
}

func (tr *esqlTranslator) aggregate(x *esql.Call, st *esqlStats) (esqlExpr, error) {
	if st == nil {
		return esqlExpr{}, esqlBad(x.At, "aggregate function %s is only allowed in STATS", x.Name)
	}
	st.sawAgg = true
	if x.Star {
		// s.fg_row (always true) rather than *: an aggregate reading a
		// column belongs to the STATS query even where an expression over
		// it is bound in a subquery (bind), as COUNT(*) would not.
		if st.where != "" {
			return esqlExpr{sql: "count(CASE WHEN " + st.where + " THEN s.fg_row END)", t: etInt}, nil
		}
		return esqlExpr{sql: "count(s.fg_row)", t: etInt}, nil
	}
	nargs := len(x.Args)
	if x.Name == "COUNT_DISTINCT" {
		nargs = 1 // the precision threshold does not apply: counts are exact
	}
	es := make([]esqlExpr, nargs)
	for i, y := range x.Args[:nargs] {
		e, err := tr.compile(y, nil) // row context: no nested aggregates
		if err != nil {
			return esqlExpr{}, err
		}
		if st.where != "" && i == 0 && e.t != etNull {
			// STATS ... WHERE: the other rows give null, which aggregates skip.
			e = esqlExpr{sql: "(CASE WHEN " + st.where + " THEN " + e.sql + " END)", t: e.t, mt: e.mt}
		}
		if i == 0 && e.t != etNull && !strings.Contains(e.sql, "s.") {
			// A constant (SUM(1)) reads s.fg_row, as COUNT(*) does.
			e = esqlExpr{sql: "(CASE WHEN s.fg_row THEN " + e.sql + " END)", t: e.t, mt: e.mt}
		}
		es[i] = e
	}
	p0 := x.Args[0].Position()
	e := es[0]
	if e.t == etDur {
		return esqlExpr{}, esqlBad(p0, "%s of a time span is not supported", x.Name)
	}
	num := func() (string, error) { return tr.conv(p0, e, etNum) }
	if e.t == etJSON {
		if r, ok, err := tr.mvAggregate(x.Name, p0, e); ok || err != nil {
			return r, err
		}
	}
	switch x.Name {
	case "COUNT":
		return esqlExpr{sql: "count(" + e.sql + ")", t: etInt}, nil
	case "COUNT_DISTINCT":
		return esqlExpr{sql: "count(DISTINCT " + e.sql + ")", t: etInt}, nil
	case "SUM":
		if e.t == etInt {
			return esqlExpr{sql: tr.checkedLongAgg("sum(" + e.sql + ")"), t: etInt}, nil
		}
		n, err := num()
		if err != nil {
			return esqlExpr{}, err
		}
		return esqlExpr{sql: "sum(" + n + ")", t: etNum}, nil
	case "AVG":
		n, err := num()
		if err != nil {
			return esqlExpr{}, err
		}
		return esqlExpr{sql: "avg(" + n + ")::double precision", t: etNum}, nil
	case "MEDIAN":
		if e.t == etJSON {
			return tr.mvPercentile(p0, e, "0.5")
		}
		n, err := num()
		if err != nil {
			return esqlExpr{}, err
		}
		return esqlExpr{sql: "percentile_cont(0.5) WITHIN GROUP (ORDER BY " + n + ")", t: etNum}, nil
	case "PERCENTILE":
		lit, ok := x.Args[1].(*esql.Literal)
		var p float64
		switch {
		case ok && lit.Kind == esql.LitInt:
			p = float64(lit.Value.(int64))
		case ok && lit.Kind == esql.LitFloat:
			p = lit.Value.(float64)
		default:
			return esqlExpr{}, esqlBad(x.Args[1].Position(), "PERCENTILE needs a constant percentile")
		}
		if p < 0 || p > 100 || math.IsNaN(p) {
			return esqlExpr{}, esqlBad(x.Args[1].Position(), "PERCENTILE must be between 0 and 100")
		}
		if e.t == etJSON {
			return tr.mvPercentile(p0, e, tr.reuse(es[1], p/100)+"::double precision")
		}
		n, err := num()
		if err != nil {
			return esqlExpr{}, err
		}
		return esqlExpr{sql: "percentile_cont(" + tr.reuse(es[1], p/100) + "::double precision) WITHIN GROUP (ORDER BY " + n + ")", t: etNum}, nil
	case "VALUES":
		// The distinct non-null values: one value alone, several as an
		// array (in JSON order; Elasticsearch does not promise one).
		j, err := tr.conv(p0, e, etJSON)
		if err != nil {
			return esqlExpr{}, err
		}
		if e.t == etJSON {
			// Document values: a multi-value gives each of its values.
			agg := "array_agg(DISTINCT " + j + ") FILTER (WHERE " + j + " IS NOT NULL)"
			return esqlExpr{sql: tr.bind(func(v []string) string {
				return "(SELECT CASE WHEN count(*) = 1 THEN (array_agg(x.e))[1] ELSE jsonb_agg(x.e ORDER BY x.e) END " +
					"FROM (SELECT DISTINCT e FROM unnest(" + v[0] + ") AS a(j), fg_mv(a.j) AS e) x)"
			}, agg), t: etJSON, mt: e.mt}, nil
		}
		agg := "array_agg(DISTINCT " + j + " ORDER BY " + j + ") FILTER (WHERE " + j + " IS NOT NULL)"
		return esqlExpr{sql: tr.bind(func(v []string) string {
			return "CASE WHEN cardinality(" + v[0] + ") = 1 THEN " + v[0] + "[1] ELSE to_jsonb(" + v[0] + ") END"
		}, agg), t: etJSON}, nil
	case "MIN", "MAX":
		fn := strings.ToLower(x.Name)
		switch e.t {
		case etBool:
			if fn == "min" {
				return esqlExpr{sql: "bool_and(" + e.sql + ")", t: etBool}, nil
			}
			return esqlExpr{sql: "bool_or(" + e.sql + ")", t: etBool}, nil
		case etNull:
			return esqlExpr{sql: "NULL::text", t: etText}, nil
		}
		return esqlExpr{sql: fn + "(" + e.sql + ")", t: e.t}, nil
	}
	return esqlExpr{}, search.Badf("function %s is not supported", x.Name)
}

// esqlStringLit is the value of a string literal argument.
func esqlStringLit(e esql.Expr) (string, bool) {
	l, ok := e.(*esql.Literal)
	if !ok || l.Kind != esql.LitString {
		return "", false
	}
	s, ok := l.Value.(string)
	return s, ok
}

// dateExtractParts are the parts DATE_EXTRACT reads (Java ChronoField
// names, as Elasticsearch takes them), in UTC.
var dateExtractParts = map[string]string{
	"YEAR":             "extract(year from (X) AT TIME ZONE 'UTC')::bigint",
	"MONTH_OF_YEAR":    "extract(month from (X) AT TIME ZONE 'UTC')::bigint",
	"DAY_OF_MONTH":     "extract(day from (X) AT TIME ZONE 'UTC')::bigint",
	"DAY_OF_WEEK":      "extract(isodow from (X) AT TIME ZONE 'UTC')::bigint",
	"DAY_OF_YEAR":      "extract(doy from (X) AT TIME ZONE 'UTC')::bigint",
	"HOUR_OF_DAY":      "extract(hour from (X) AT TIME ZONE 'UTC')::bigint",
	"MINUTE_OF_HOUR":   "extract(minute from (X) AT TIME ZONE 'UTC')::bigint",
	"SECOND_OF_MINUTE": "floor(extract(second from (X) AT TIME ZONE 'UTC'))::bigint",
	"MINUTE_OF_DAY":    "(extract(hour from (X) AT TIME ZONE 'UTC') * 60 + extract(minute from (X) AT TIME ZONE 'UTC'))::bigint",
	"EPOCH_DAY":        "floor(extract(epoch from (X)) / 86400)::bigint",
}

// dateDiffUnits are DATE_DIFF's fixed-length units in milliseconds.
var dateDiffUnits = map[string]int64{
	"millisecond": 1, "milliseconds": 1, "ms": 1,
	"second": 1000, "seconds": 1000, "ss": 1000, "s": 1000,
	"minute": 60000, "minutes": 60000, "mi": 60000, "n": 60000,
	"hour": 3600000, "hours": 3600000, "hh": 3600000,
	"day": 86400000, "days": 86400000, "dd": 86400000, "d": 86400000,
	"week": 604800000, "weeks": 604800000, "wk": 604800000, "ww": 604800000,
}

// dateFunction translates DATE_EXTRACT and DATE_DIFF, whose first argument
// names a part or unit (a string literal, read here, not a value).
func (tr *esqlTranslator) dateFunction(x *esql.Call, st *esqlStats) (esqlExpr, error) {
	name, ok := esqlStringLit(x.Args[0])
	if !ok {
		return esqlExpr{}, esqlBad(x.Args[0].Position(), "%s needs the %s as a string literal", x.Name,
			map[string]string{"DATE_EXTRACT": "part", "DATE_DIFF": "unit"}[x.Name])
	}
	dates := make([]string, len(x.Args)-1)
	for i, a := range x.Args[1:] {
		e, err := tr.compile(a, st)
		if err != nil {
			return esqlExpr{}, err
		}
		if dates[i], err = tr.conv(a.Position(), e, etTime); err != nil {
			return esqlExpr{}, err
		}
	}
	if x.Name == "DATE_EXTRACT" {
		tmpl, ok := dateExtractParts[strings.ToUpper(name)]
		if !ok {
			return esqlExpr{}, esqlBad(x.Args[0].Position(), "unsupported DATE_EXTRACT part %q", name)
		}
		return esqlExpr{sql: strings.ReplaceAll(tmpl, "X", dates[0]), t: etInt}, nil
	}
	ms, ok := dateDiffUnits[strings.ToLower(name)]
	if !ok {
		return esqlExpr{}, esqlBad(x.Args[0].Position(), "unsupported DATE_DIFF unit %q", name)
	}
	return esqlExpr{sql: "trunc(extract(epoch from (" + dates[1] + ") - (" + dates[0] + ")) * 1000 / " +
		strconv.FormatInt(ms, 10) + ")::bigint", t: etInt}, nil
}

// mvAggregate is an aggregate over a document value (e, etJSON) whose
// arrays are several values (Elasticsearch's multi-valued fields): COUNT
// counts the values, COUNT_DISTINCT the distinct element values, SUM, AVG,
// MIN and MAX take every element (MIN and MAX
// in the field's mapped type; untyped, numbers before dates before
// strings, as for single values). ok is false for the other aggregates,
// which read single values.
func (tr *esqlTranslator) mvAggregate(name string, at esql.Pos, e esqlExpr) (esqlExpr, bool, error) {
	// each is a per-row subquery over the row's values (column mv.v).
	each := func(inner string) string { return "(SELECT " + inner + " FROM fg_mv(" + e.sql + ") AS mv(v))" }
	elem := esqlExpr{sql: "mv.v", t: etJSON, mt: e.mt}
	switch name {
	case "COUNT":
		return esqlExpr{sql: "coalesce(sum(" + each("count(*)") + "), 0)::bigint", t: etInt}, true, nil
	case "SUM", "AVG":
		t := etNum
		if name == "SUM" && e.typ() == etInt {
			t = etInt
		}
		v, err := tr.arithOperand(at, elem, t) // SUM judges overflow: longs exactly
		if err != nil {
			return esqlExpr{}, true, err
		}
		if name == "AVG" {
			return esqlExpr{sql: "(sum(" + each("sum("+v+")") + ") / NULLIF(sum(" + each("count("+v+")") + "), 0))::double precision",
				t: etNum}, true, nil
		}
		if t == etInt {
			return esqlExpr{sql: tr.checkedLongAgg("sum(" + each("sum("+v+")") + ")"), t: etInt}, true, nil
		}
		return esqlExpr{sql: "sum(" + each("sum("+v+")") + ")", t: etNum}, true, nil
	case "COUNT_DISTINCT":
		// Distinct element values.
		return esqlExpr{sql: tr.bind(func(v []string) string {
			return "(SELECT count(DISTINCT mv.v) FROM unnest(" + v[0] + ") AS a(j), fg_mv(a.j) AS mv(v))"
		}, "array_agg("+e.sql+")"), t: etInt}, true, nil
	case "MIN", "MAX":
		fn := strings.ToLower(name)
		if e.mt != etNull {
			v, err := tr.arithOperand(at, elem, e.mt) // a long exactly
			if err != nil {
				return esqlExpr{}, true, err
			}
			if e.mt == etBool {
				fn = map[string]string{"min": "bool_and", "max": "bool_or"}[fn]
			}
			return esqlExpr{sql: fn + "(" + each(fn+"("+v+")") + ")", t: e.mt}, true, nil
		}
		sqlText := "COALESCE(to_jsonb(" + fn + "(" + each(fn+"(fg_num(mv.v))") + ")), to_jsonb(to_char(" + fn + "(" +
			each(fn+"(fg_time(mv.v))") + ") AT TIME ZONE 'UTC', " + isotime.MillisSQL + ")), to_jsonb(" + fn + "(" +
			each(fn+"(mv.v #>> '{}')") + ")))"
		return esqlExpr{sql: sqlText, t: etJSON}, true, nil
	}
	return esqlExpr{}, false, nil
}

// mvPercentile is MEDIAN or PERCENTILE (frac, SQL of a fraction) of a
// document value: every element of a multi-value counts, as on
// Elasticsearch.
func (tr *esqlTranslator) mvPercentile(at esql.Pos, e esqlExpr, frac string) (esqlExpr, error) {
	n, err := tr.conv(at, esqlExpr{sql: "mv.v", t: etJSON, mt: e.mt}, etNum)
	if err != nil {
		return esqlExpr{}, err
	}
	return esqlExpr{sql: tr.bind(func(v []string) string {
		return "(SELECT percentile_cont(" + frac + ") WITHIN GROUP (ORDER BY " + n + ") FROM unnest(" + v[0] + ") AS a(j), fg_mv(a.j) AS mv(v))"
	}, "array_agg("+e.sql+")"), t: etNum}, nil
}
