package pg

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/isotime"
	"github.com/fleetgraph/fleetgraph/search/datemath"
	"github.com/fleetgraph/fleetgraph/search/esql"
)

// ES|QL expressions: types, conversions, operators.

func esqlPGType(t esqlType) string {
	switch t {
	case etJSON:
		return "jsonb"
	case etNum:
		return "double precision"
	case etInt:
		return "bigint"
	case etBool:
		return "boolean"
	case etTime:
		return "timestamptz"
	case etDur:
		return "interval"
	}
	return "text"
}

// conv converts e to type t.
func (tr *esqlTranslator) conv(at esql.Pos, e esqlExpr, t esqlType) (string, error) {
	if e.t == t {
		return e.sql, nil
	}
	if e.t == etNull {
		return "NULL::" + esqlPGType(t), nil
	}
	if e.lit != nil && e.lit.Kind == esql.LitString && t == etTime {
		tm, ok := esqlParseTime(e.lit.Value.(string))
		if !ok {
			return "", esqlBad(at, "cannot convert string [%s] to datetime", e.lit.Value)
		}
		return tr.reuse(e, tm) + "::timestamptz", nil
	}
	x := e.sql
	switch t {
	case etNum:
		switch e.t {
		case etInt:
			return "(" + x + ")::double precision", nil
		case etJSON:
			return "fg_num(" + tr.sv(x) + ")", nil
		case etText:
			return "fg_num(to_jsonb(" + x + "))", nil
		case etBool:
			return "(" + x + ")::int::double precision", nil
		case etTime:
			return "(extract(epoch FROM " + x + ") * 1000)::double precision", nil
		}
	case etInt:
		switch e.t {
		case etNum:
			return esqlInRange(tr, "trunc(("+x+")::numeric)", esqlLongMin, esqlLongMax, "bigint"), nil
		case etJSON:
			// Through a double, in one evaluation (comparisons read every
			// row); a value beyond a long is null, not an error. Arithmetic
			// reads longs exactly (exactLong).
			return esqlClampDouble("trunc(fg_num(" + tr.sv(x) + "))"), nil
		case etText:
			return esqlInRange(tr, "trunc(fg_num(to_jsonb("+x+"))::numeric)", esqlLongMin, esqlLongMax, "bigint"), nil
		case etBool:
			return "(" + x + ")::int::bigint", nil
		case etTime:
			return "(extract(epoch FROM " + x + ") * 1000)::bigint", nil
		}
	case etText:
		switch e.t {
		case etJSON: // a multi-value (array) is no single string: null
			return "(" + tr.sv(x) + " #>> '{}')", nil
		case etNum, etInt, etBool:
			return "(" + x + ")::text", nil
		case etTime:
			return "to_char((" + x + ") AT TIME ZONE 'UTC', " + isotime.MillisSQL + ")", nil
		}
	case etTime:
		switch e.t {
		case etJSON:
			return "fg_time(" + tr.sv(x) + ")", nil
		case etText:
			return "fg_time(to_jsonb(" + x + "))", nil
		case etNum, etInt:
			return "to_timestamp((" + x + ")::double precision / 1000)", nil
		}
	case etBool:
		switch e.t {
		case etJSON:
			return tr.bind(func(v []string) string {
				j := tr.sv(v[0])
				return "CASE jsonb_typeof(" + j + ") WHEN 'boolean' THEN (" + j + ")::boolean WHEN 'string' THEN (CASE lower(" + j +
					" #>> '{}') WHEN 'true' THEN true WHEN 'false' THEN false END) WHEN 'number' THEN fg_num(" + j + ") <> 0 END"
			}, x), nil
		case etText:
			return "(CASE lower(" + x + ") WHEN 'true' THEN true WHEN 'false' THEN false END)", nil
		case etNum, etInt:
			return "((" + x + ") <> 0)", nil
		}
	case etJSON:
		if e.t == etTime {
			s, _ := tr.conv(at, e, etText)
			return "to_jsonb(" + s + ")", nil
		}
		if e.t != etDur {
			return "to_jsonb(" + x + ")", nil
		}
	}
	return "", esqlBad(at, "cannot convert %s to %s", e.t, t)
}

// esqlParseTime reads a date literal.
func esqlParseTime(s string) (time.Time, bool) {
	t, _, err := datemath.Parse(s, time.UTC)
	return t.UTC(), err == nil
}

// unify is the type two operands are compared or combined in.
func esqlUnify(ts ...esqlType) esqlType {
	has := map[esqlType]bool{}
	for _, t := range ts {
		has[t] = true
	}
	switch {
	case has[etTime]:
		return etTime
	case has[etNum]:
		return etNum
	case has[etInt]:
		if has[etJSON] || has[etText] {
			return etNum
		}
		return etInt
	case has[etText]:
		return etText
	case has[etBool]:
		return etBool
	case has[etJSON]:
		return etJSON
	case has[etDur]:
		return etDur
	}
	return etText
}

func (tr *esqlTranslator) convAll(es []esqlExpr, ats []esql.Pos, t esqlType) ([]string, error) {
	out := make([]string, len(es))
	for i, e := range es {
		s, err := tr.conv(ats[i], e, t)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func (tr *esqlTranslator) compile(x esql.Expr, st *esqlStats) (esqlExpr, error) {
	defer tr.enter(x)()
	switch x := x.(type) {
	case *esql.Literal:
		return tr.literalExpr(x, st)
	case *esql.Ident:
		return tr.ident(x, st)
	case *esql.Unary:
		return tr.unary(x, st)
	case *esql.Binary:
		return tr.binary(x, st)
	case *esql.IsNull:
		e, err := tr.compile(x.X, st)
		if err != nil {
			return e, err
		}
		if e.t == etNull {
			return esqlExpr{sql: fmt.Sprint(!x.Not), t: etBool}, nil
		}
		op := " IS NULL)"
		if x.Not {
			op = " IS NOT NULL)"
		}
		return esqlExpr{sql: "(" + e.sql + op, t: etBool}, nil
	case *esql.Like:
		return tr.like(x, st)
	case *esql.In:
		return tr.in(x, st)
	case *esql.Cast:
		e, err := tr.compile(x.X, st)
		if err != nil {
			return e, err
		}
		return tr.convert(x.At, e, esqlCastTypes[x.Type], x.Type == "integer" || x.Type == "int")
	case *esql.Call:
		if _, ok := esql.Aggregates[x.Name]; ok {
			return tr.aggregate(x, st)
		}
		return tr.function(x, st)
	}
	return esqlExpr{}, esqlBad(x.Position(), "unsupported expression")
}

// literalExpr compiles a literal.
func (tr *esqlTranslator) literalExpr(x *esql.Literal, st *esqlStats) (esqlExpr, error) {
	switch x.Kind {
	case esql.LitNull:
		return esqlExpr{sql: "NULL", t: etNull, lit: x}, nil
	case esql.LitBool:
		return tr.literal(x, x.Value, "::boolean", etBool), nil
	case esql.LitInt:
		return tr.literal(x, x.Value, "::bigint", etInt), nil
	case esql.LitFloat:
		return tr.literal(x, x.Value, "::double precision", etNum), nil
	case esql.LitString:
		return tr.literal(x, x.Value, "::text", etText), nil
	case esql.LitDuration:
		return tr.literal(x, fmt.Sprintf("%d %s", x.Value, x.Unit), "::text::interval", etDur), nil
	case esql.LitMulti:
		// A multi-value: a JSON array, its elements typed as its kind.
		raw, err := json.Marshal(x.Value)
		if err != nil {
			return esqlExpr{}, esqlBad(x.Position(), "bad multi-value literal")
		}
		e := tr.literal(x, string(raw), "::text::jsonb", etJSON)
		e.mt = map[string]esqlType{"boolean": etBool, "long": etInt, "double": etNum, "keyword": etText}[x.Unit]
		e.lit = nil
		return e, nil
	}
	return esqlExpr{}, esqlBad(x.Position(), "unsupported expression")
}

// ident compiles a column name (within STATS, one of its BY columns).
func (tr *esqlTranslator) ident(x *esql.Ident, st *esqlStats) (esqlExpr, error) {
	if st != nil {
		for i := len(st.by) - 1; i >= 0; i-- {
			if st.by[i].name == x.Name {
				st.sawBy = true
				return esqlExpr{sql: st.by[i].sql, t: st.by[i].t, uuid: st.by[i].uuid}, nil
			}
		}
		return esqlExpr{}, esqlBad(x.At, "column [%s] must appear in the STATS BY clause or be used in an aggregate function", x.Name)
	}
	return tr.resolve(x.At, x.Name)
}

// unary compiles NOT and unary minus.
func (tr *esqlTranslator) unary(x *esql.Unary, st *esqlStats) (esqlExpr, error) {
	e, err := tr.compile(x.X, st)
	if err != nil {
		return e, err
	}
	if x.Op == "NOT" {
		b, err := tr.conv(x.X.Position(), e, etBool)
		if err != nil {
			return e, err
		}
		return esqlExpr{sql: "(NOT " + b + ")", t: etBool}, nil
	}
	switch e.t {
	case etInt, etDur, etNum:
		return esqlExpr{sql: "(-" + e.sql + ")", t: e.t}, nil
	case etNull:
		return e, nil
	}
	t := etNum
	if e.typ() == etInt {
		t = etInt
	}
	n, err := tr.arithOperand(x.X.Position(), e, t)
	if err != nil {
		return e, err
	}
	if t == etInt { // -(-2^63) overflows
		return esqlExpr{sql: tr.checkedLongOp("-", "0::bigint", n), t: t}, nil
	}
	return esqlExpr{sql: "(-" + n + ")", t: t}, nil
}

// like compiles LIKE and RLIKE.
func (tr *esqlTranslator) like(x *esql.Like, st *esqlStats) (esqlExpr, error) {
	e, err := tr.compile(x.X, st)
	if err != nil {
		return e, err
	}
	s, err := tr.conv(x.X.Position(), e, etText)
	if err != nil {
		return e, err
	}
	pats := x.Patterns
	if len(pats) == 0 {
		pats = []string{x.Pattern}
	}
	for _, p := range pats {
		if esqlMatchesAll(p, x.Regex) {
			// Elasticsearch replaces a pattern (list) that matches every
			// string by IS NOT NULL (its ReplaceRegexMatch rule): NOT LIKE
			// ("*") keeps the rows where the value is null, and a
			// multi-value matches (where-like.csv-spec
			// notLikeListAllWildcard).
			op := " IS NOT NULL)"
			if x.Not {
				op = " IS NULL)"
			}
			if e.t == etNull {
				return esqlExpr{sql: fmt.Sprint(x.Not), t: etBool}, nil
			}
			return esqlExpr{sql: "(" + e.sql + op, t: etBool}, nil
		}
	}
	// A list of patterns matches when any of them does.
	var ors []string
	for _, p := range pats {
		if x.Regex {
			ors = append(ors, s+" ~ "+tr.a.add("^(?:"+p+")$")+"::text")
		} else {
			ors = append(ors, s+" LIKE "+tr.a.add(likePattern(p))+"::text")
		}
	}
	if len(ors) > 1 {
		// s is evaluated once for all patterns.
		sqlText := tr.bind(func(v []string) string {
			out := make([]string, len(ors))
			for i, o := range ors {
				out[i] = strings.Replace(o, s, v[0], 1)
			}
			return "(" + strings.Join(out, " OR ") + ")"
		}, s)
		if x.Not {
			sqlText = "(NOT " + sqlText + ")"
		}
		return esqlExpr{sql: sqlText, t: etBool}, nil
	}
	sqlText := "(" + ors[0] + ")"
	if x.Not {
		sqlText = "(NOT " + sqlText + ")"
	}
	return esqlExpr{sql: sqlText, t: etBool}, nil
}

// esqlMatchesAll reports whether pattern p matches every string: a LIKE
// pattern of * alone, an RLIKE pattern of .* alone (also in a group).
func esqlMatchesAll(p string, regex bool) bool {
	if !regex {
		return p != "" && strings.Trim(p, "*") == ""
	}
	for {
		inner, ok := strings.CutPrefix(p, "(")
		if !ok || !strings.HasSuffix(inner, ")") {
			break
		}
		p = strings.TrimSuffix(inner, ")")
	}
	return p != "" && strings.Trim(strings.ReplaceAll(p, ".*", ""), "") == "" && strings.Count(p, ".*")*2 == len(p)
}

// in compiles IN and NOT IN over the common type of the values.
func (tr *esqlTranslator) in(x *esql.In, st *esqlStats) (esqlExpr, error) {
	all := []esql.Expr{x.X}
	all = append(all, x.List...)
	es := make([]esqlExpr, len(all))
	ats := make([]esql.Pos, len(all))
	ts := make([]esqlType, len(all))
	for i, y := range all {
		e, err := tr.compile(y, st)
		if err != nil {
			return e, err
		}
		es[i], ats[i], ts[i] = e, y.Position(), e.typ()
	}
	t := esqlUnify(ts...)
	ss, err := tr.convAll(es, ats, t)
	if err != nil {
		return esqlExpr{}, err
	}
	if t == etJSON {
		for i := range ss {
			ss[i] = tr.sv(ss[i])
		}
	}
	op := " IN ("
	if x.Not {
		op = " NOT IN ("
	}
	return esqlExpr{sql: "(" + ss[0] + op + strings.Join(ss[1:], ", ") + "))", t: etBool}, nil
}

func (tr *esqlTranslator) binary(x *esql.Binary, st *esqlStats) (esqlExpr, error) {
	l, err := tr.compile(x.L, st)
	if err != nil {
		return l, err
	}
	r, err := tr.compile(x.R, st)
	if err != nil {
		return r, err
	}
	lp, rp := x.L.Position(), x.R.Position()
	switch x.Op {
	case "AND", "OR":
		ls, err := tr.conv(lp, l, etBool)
		if err != nil {
			return l, err
		}
		rs, err := tr.conv(rp, r, etBool)
		if err != nil {
			return r, err
		}
		return esqlExpr{sql: "(" + ls + " " + x.Op + " " + rs + ")", t: etBool}, nil
	case "==", "!=", "<", "<=", ">", ">=":
		t := esqlUnify(l.typ(), r.typ())
		if t == etDur {
			return l, esqlBad(x.At, "cannot compare time spans")
		}
		ls, err := tr.conv(lp, l, t)
		if err != nil {
			return l, err
		}
		rs, err := tr.conv(rp, r, t)
		if err != nil {
			return r, err
		}
		if t == etJSON {
			// A comparison with a multi-value is null (ES|QL).
			ls, rs = tr.sv(ls), tr.sv(rs)
		}
		op := x.Op
		switch op {
		case "==":
			op = "="
		case "!=":
			op = "<>"
		}
		if c, ok := tr.clientUUIDEquality(l, r, op); ok {
			return c, nil
		}
		return esqlExpr{sql: "(" + ls + " " + op + " " + rs + ")", t: etBool}, nil
	}
	// Arithmetic.
	if l.t == etDur || r.t == etDur {
		switch {
		case l.t == etDur && r.t == etDur && (x.Op == "+" || x.Op == "-"):
			return esqlExpr{sql: "(" + l.sql + " " + x.Op + " " + r.sql + ")", t: etDur}, nil
		case r.t == etDur && (x.Op == "+" || x.Op == "-") && l.t != etDur:
			ls, err := tr.conv(lp, l, etTime)
			if err != nil {
				return l, err
			}
			return esqlExpr{sql: "(" + ls + " " + x.Op + " " + r.sql + ")", t: etTime}, nil
		case l.t == etDur && x.Op == "+":
			rs, err := tr.conv(rp, r, etTime)
			if err != nil {
				return r, err
			}
			return esqlExpr{sql: "(" + rs + " + " + l.sql + ")", t: etTime}, nil
		}
		return l, esqlBad(x.At, "operator %s is not defined for %s and %s", x.Op, l.t, r.t)
	}
	if l.t == etTime || r.t == etTime {
		return l, esqlBad(x.At, "operator %s on a datetime needs a time span such as 1 day", x.Op)
	}
	// long op long is a long (a mapped long field too): 75000 / 2 is 37500,
	// 74999 / 2 is 37499, as in ES|QL.
	t := etNum
	if (l.typ() == etInt || l.t == etNull) && (r.typ() == etInt || r.t == etNull) {
		t = etInt
	}
	ls, err := tr.arithOperand(lp, l, t)
	if err != nil {
		return l, err
	}
	rs, err := tr.arithOperand(rp, r, t)
	if err != nil {
		return r, err
	}
	if t == etInt && x.Op != "%" {
		// A result outside a long is null with Elasticsearch's "long
		// overflow" warning, not a failed query.
		return esqlExpr{sql: tr.checkedLongOp(x.Op, ls, rs), t: t}, nil
	}
	switch x.Op {
	case "/":
		return esqlExpr{sql: "(" + ls + " / NULLIF(" + rs + ", 0))", t: t}, nil
	case "%":
		if t == etInt {
			return esqlExpr{sql: "(" + ls + " % NULLIF(" + rs + ", 0))", t: t}, nil
		}
		return esqlExpr{sql: "mod((" + ls + ")::numeric, NULLIF(" + rs + ", 0)::numeric)::double precision", t: t}, nil
	}
	return esqlExpr{sql: "(" + ls + " " + x.Op + " " + rs + ")", t: t}, nil
}

// arithOperand is e as an operand of arithmetic in t: a document value as
// a long exactly (exactLong), where overflow is judged.
func (tr *esqlTranslator) arithOperand(at esql.Pos, e esqlExpr, t esqlType) (string, error) {
	if t == etInt && e.t == etJSON {
		return tr.exactLong(e.sql), nil
	}
	return tr.conv(at, e, t)
}

// exactLong is the document value x as a long, exact beyond 2^53 (a JSON
// number read as numeric where a double would round it); null when it is
// no number or beyond a long.
func (tr *esqlTranslator) exactLong(x string) string {
	return tr.bind(func(v []string) string {
		j := v[0]
		f := "(" + j + " #>> '{}')::float8"
		n := "trunc((" + j + " #>> '{}')::numeric)"
		return "CASE WHEN jsonb_typeof(" + j + ") <> 'number' THEN " + esqlClampDouble("trunc(fg_num("+j+"))") +
			" WHEN abs(" + f + ") < 4.5e15 THEN trunc(" + f + ")::bigint WHEN " + n + " BETWEEN " + esqlLongMin + " AND " +
			esqlLongMax + " THEN " + n + "::bigint END"
	}, tr.sv(x))
}

// esqlClampDouble is the double f as a long, null beyond a long, f
// evaluated once: -2^63 and 2^63 are doubles, and so is the next one
// below -2^63.
func esqlClampDouble(f string) string {
	return "NULLIF(NULLIF(LEAST(GREATEST(" + f + ", -9223372036854777856::float8), 9223372036854775808::float8), " +
		"9223372036854775808::float8), -9223372036854777856::float8)::bigint"
}

// clientUUIDEquality compares the document's client_uuid with a string
// literal as uuids (so that the (data_owner_id, kind, client_uuid, ...)
// index applies) when the literal is a UUID as PostgreSQL writes one (lower
// case, hyphenated): the text of a uuid equals such a string exactly when
// the uuids are equal. Other strings keep the text comparison.
func (tr *esqlTranslator) clientUUIDEquality(l, r esqlExpr, op string) (esqlExpr, bool) {
	if (op != "=" && op != "<>") || tr.plain {
		return esqlExpr{}, false
	}
	if r.uuid != "" {
		l, r = r, l
	}
	if l.uuid == "" || r.lit == nil || r.lit.Kind != esql.LitString {
		return esqlExpr{}, false
	}
	v, ok := r.lit.Value.(string)
	if !ok || !esqlCanonicalUUID(v) {
		return esqlExpr{}, false
	}
	return esqlExpr{sql: "(" + l.uuid + " " + op + " " + tr.reuse(r, v) + "::text::uuid)", t: etBool}, true
}

// esqlCanonicalUUID reports whether s is a UUID in PostgreSQL's output form.
func esqlCanonicalUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}
