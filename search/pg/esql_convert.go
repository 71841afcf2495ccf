package pg

import (
	"strings"

	"github.com/fleetgraph/fleetgraph/isotime"
	"github.com/fleetgraph/fleetgraph/search/esql"
)

// ES|QL's explicit conversions: the functions TO_LONG, TO_INTEGER,
// TO_DOUBLE, TO_DATETIME, TO_BOOLEAN, TO_STRING and the casts x::type,
// by the rules of Elasticsearch's function reference (type conversion
// functions):
//
//   - to long / integer: a date is its epoch milliseconds, true 1 and false
//     0, a double is rounded half up (Java's Math.round: 2.5 is 3, -2.5 is
//     -2), a string is read as a number ("2147483648.2" is 2147483648);
//     what does not fit (an integer outside 32 bits, a long outside 64) or
//     reads as no number is null.
//   - to double: a date is its epoch milliseconds, true 1.0 and false 0.0.
//   - to datetime: a number is epoch milliseconds (a double rounded); a
//     string is read as an ISO 8601 date; a boolean is refused.
//   - to boolean: the string "true" in any case is true, every other string
//     (also "", "yes", "1") false; the number 0 is false, others true; a
//     date is refused.
//   - to string: a date as 2023-01-02T03:04:05.000Z, a double as Java's
//     Double.toString (1.0, 1.5, 1.0E10, 1.0E-4), a boolean true / false.
//
// A document value converts by its mapped type (a date field's string is
// a date: TO_LONG of it is epoch milliseconds) and a multi-value element by
// element, dropping the elements that do not convert (TO_INTEGER of [1,
// 2147483648] is 1). Elasticsearch adds a warning for each value that does
// not convert; the embedded backend answers the null without it.

// esqlConversion is the conversion function name's translation.
func esqlConversion(name string) func(c *esqlCall) (esqlExpr, error) {
	conv := esqlConversions[name]
	return func(c *esqlCall) (esqlExpr, error) { return c.tr.convert(c.pos(0), c.es[0], conv.t, conv.int32) }
}

// esqlCastTypes are the types of x::type.
var esqlCastTypes = map[string]esqlType{
	"integer": etInt, "int": etInt, "long": etInt, "double": etNum,
	"keyword": etText, "text": etText, "string": etText,
	"datetime": etTime, "date": etTime, "boolean": etBool, "bool": etBool,
}

// esqlConversions are the conversion functions: their type, and whether
// it is a 32-bit integer.
var esqlConversions = map[string]struct {
	t     esqlType
	int32 bool
}{
	"TO_LONG": {etInt, false}, "TO_INTEGER": {etInt, true}, "TO_DOUBLE": {etNum, false},
	"TO_DATETIME": {etTime, false}, "TO_BOOLEAN": {etBool, false}, "TO_STRING": {etText, false},
}

// Bounds of the conversions: a long, a 32-bit integer, and the epoch
// milliseconds PostgreSQL's timestamptz holds (4713 BC to 294276 AD).
const (
	esqlLongMin, esqlLongMax     = "-9223372036854775808", "9223372036854775807"
	esqlIntMin, esqlIntMax       = "-2147483648", "2147483647"
	esqlMillisMin, esqlMillisMax = "-210866803200000", "9224318015999999"
)

// esqlNumberText is a string Java's number parsing reads.
const esqlNumberText = `'^\s*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\s*$'`

// convert is the explicit conversion of e to t (int32: a 32-bit integer).
func (tr *esqlTranslator) convert(at esql.Pos, e esqlExpr, t esqlType, int32 bool) (esqlExpr, error) {
	if e.t == etNull {
		return esqlExpr{sql: "NULL::" + esqlPGType(t), t: t}, nil
	}
	if e.t == etJSON {
		return tr.convertDoc(at, e, t, int32)
	}
	if e.lit != nil && e.lit.Kind == esql.LitString && t == etTime {
		return esqlExpr{sql: "fg_time(to_jsonb(" + e.sql + "))", t: t}, nil
	}
	s, err := tr.convertScalar(at, e.t, e.sql, t, int32)
	return esqlExpr{sql: s, t: t}, err
}

// convertScalar converts x, SQL of type from, to t.
func (tr *esqlTranslator) convertScalar(at esql.Pos, from esqlType, x string, t esqlType, int32 bool) (string, error) {
	if from == t && !(t == etInt && int32) {
		return x, nil
	}
	switch t {
	case etInt:
		lo, hi := esqlLongMin, esqlLongMax
		if int32 {
			lo, hi = esqlIntMin, esqlIntMax
		}
		var num string
		switch from {
		case etInt:
			num = "(" + x + ")::numeric"
		case etNum:
			num = "floor((" + x + ")::numeric + 0.5)"
		case etText:
			num = tr.bind(func(v []string) string {
				return "CASE WHEN " + v[0] + " ~ " + esqlNumberText + " THEN floor((" + v[0] + ")::numeric + 0.5) END"
			}, x)
		case etBool:
			return "(" + x + ")::int::bigint", nil
		case etTime:
			num = "floor(extract(epoch FROM " + x + ") * 1000)"
		default:
			return "", esqlBad(at, "cannot convert %s to %s", from, t)
		}
		return esqlInRange(tr, num, lo, hi, "bigint"), nil
	case etNum:
		switch from {
		case etInt:
			return "(" + x + ")::double precision", nil
		case etText:
			return tr.bind(func(v []string) string {
				return "CASE WHEN " + v[0] + " ~ " + esqlNumberText + " THEN (" + v[0] + ")::double precision END"
			}, x), nil
		case etBool:
			return "(" + x + ")::int::double precision", nil
		case etTime:
			return "floor(extract(epoch FROM " + x + ") * 1000)::double precision", nil
		}
	case etTime:
		switch from {
		case etInt, etNum:
			ms := "floor((" + x + ")::numeric + 0.5)"
			return tr.bind(func(v []string) string {
				return "CASE WHEN " + v[0] + " BETWEEN " + esqlMillisMin + " AND " + esqlMillisMax +
					" THEN TIMESTAMPTZ 'epoch' + " + v[0] + "::bigint * INTERVAL '1 millisecond' END"
			}, ms), nil
		case etText:
			return "fg_time(to_jsonb(" + x + "))", nil
		}
	case etBool:
		switch from {
		case etText:
			return "(lower(" + x + ") = 'true')", nil
		case etInt, etNum:
			return "((" + x + ") <> 0)", nil
		}
	case etText:
		switch from {
		case etInt, etBool:
			return "(" + x + ")::text", nil
		case etNum:
			return tr.javaDoubleSQL(x), nil
		case etTime:
			return "to_char((" + x + ") AT TIME ZONE 'UTC', " + isotime.MillisSQL + ")", nil
		}
	}
	return "", esqlBad(at, "cannot convert %s to %s", from, t)
}

// esqlInRange is num (SQL of a numeric) as typ when it is within lo..hi,
// else null.
func esqlInRange(tr *esqlTranslator, num, lo, hi, typ string) string {
	return tr.bind(func(v []string) string {
		return "CASE WHEN " + v[0] + " BETWEEN " + lo + " AND " + hi + " THEN " + v[0] + "::" + typ + " END"
	}, num)
}

// convertDoc converts a document value, element by element: the result is
// a document value of type t (a multi-value when several elements
// convert, one value when one does, null when none).
func (tr *esqlTranslator) convertDoc(at esql.Pos, e esqlExpr, t esqlType, int32 bool) (esqlExpr, error) {
	if e.mt == etTime && t == etBool || e.mt == etBool && t == etTime {
		return esqlExpr{}, esqlBad(at, "cannot convert %s to %s", e.mt, t)
	}
	elem, err := tr.convertElement("mv.v", e.mt, t, int32)
	if err != nil {
		return esqlExpr{}, err
	}
	out := "to_jsonb(" + elem + ")"
	if t == etTime {
		out = "to_jsonb(to_char((" + elem + ") AT TIME ZONE 'UTC', " + isotime.MillisSQL + "))"
	}
	scalar, err := tr.convertElement("fg_elem_value", e.mt, t, int32)
	if err != nil {
		return esqlExpr{}, err
	}
	return esqlExpr{sql: tr.bind(func(v []string) string {
		// A single value converts in place; only an array is walked.
		one := strings.ReplaceAll(out, elem, strings.ReplaceAll(scalar, "fg_elem_value", v[0]))
		return "CASE WHEN jsonb_typeof(" + v[0] + ") = 'array' THEN (SELECT CASE count(*) WHEN 0 THEN NULL WHEN 1 THEN " +
			"(array_agg(c.j))[1] ELSE jsonb_agg(c.j) END FROM (SELECT " + out + " AS j FROM fg_mv(" + v[0] + ") AS mv(v)) c " +
			"WHERE c.j IS NOT NULL) ELSE " + one + " END"
	}, e.sql), t: etJSON, mt: t}, nil
}

// convertElement converts j, SQL of one JSON value of a field of mapped
// type mt (etNull: untyped), to t: by its mapped type, else by its JSON
// type. Numbers convert exactly to a long (no double in between), and
// write as stored, or as a double when the field is one.
func (tr *esqlTranslator) convertElement(j string, mt, t esqlType, int32 bool) (string, error) {
	str := "(" + j + " #>> '{}')"
	branch := func(from esqlType, x string) string {
		s, err := tr.convertScalar(esql.Pos{}, from, x, t, int32)
		if err != nil {
			return "NULL" // a boolean element as a date: not converted
		}
		return s
	}
	if mt == etTime {
		return branch(etTime, "fg_time("+j+")"), nil
	}
	number := branch(etNum, str+"::double precision")
	switch {
	case t == etInt:
		number = esqlInRangeNum(str, int32)
	case t == etText && mt != etNum:
		number = str
	}
	return "CASE jsonb_typeof(" + j + ") WHEN 'number' THEN " + number + " WHEN 'string' THEN " + branch(etText, str) +
		" WHEN 'boolean' THEN " + branch(etBool, "("+j+")::boolean") + " END", nil
}

// esqlInRangeNum is the JSON number text s rounded half up to a long (a
// 32-bit integer when int32), null when it does not fit.
func esqlInRangeNum(s string, int32 bool) string {
	lo, hi := esqlLongMin, esqlLongMax
	if int32 {
		lo, hi = esqlIntMin, esqlIntMax
	}
	n := "floor(" + s + "::numeric + 0.5)"
	return "CASE WHEN " + n + " BETWEEN " + lo + " AND " + hi + " THEN " + n + "::bigint END"
}

// javaDoubleSQL is javaDouble (aggs_compile.go) in SQL: the text of the
// double x as Java's Double.toString writes it, what Elasticsearch's
// TO_STRING answers: at least one digit after the point, scientific
// notation (1.0E10, 1.5E-5) below 10^-3 and from 10^7. PostgreSQL's
// shortest text gives the digits.
func (tr *esqlTranslator) javaDoubleSQL(x string) string {
	return tr.bind(func(v []string) string {
		d, a := v[0], "abs("+v[0]+")::text"
		sign := "CASE WHEN " + d + " < 0 OR " + d + "::text = '-0' THEN '-' ELSE '' END"
		// digits and exponent of a plain text a (no 'e'): its first
		// significant digit leads.
		sci := func(mant, exp string) string {
			return tr.bind(func(w []string) string {
				return "left(" + w[0] + ", 1) || '.' || COALESCE(NULLIF(substr(" + w[0] + ", 2), ''), '0') || 'E' || " + exp
			}, mant)
		}
		big := sci("rtrim(replace("+a+", '.', ''), '0')", "(length(split_part("+a+", '.', 1)) - 1)::text")
		small := sci("rtrim(ltrim(split_part("+a+", '.', 2), '0'), '0')",
			"(-(length(split_part("+a+", '.', 2)) - length(ltrim(split_part("+a+", '.', 2), '0')) + 1))::text")
		return "CASE WHEN " + d + " = 'NaN'::float8 THEN 'NaN' WHEN " + d + " IN ('Infinity'::float8, '-Infinity'::float8) THEN " + d + "::text " +
			"WHEN " + a + " LIKE '%e%' THEN " + sign + " || (CASE WHEN split_part(" + a + ", 'e', 1) LIKE '%.%' THEN split_part(" + a +
			", 'e', 1) ELSE split_part(" + a + ", 'e', 1) || '.0' END) || 'E' || (split_part(" + a + ", 'e', 2)::int)::text " +
			"WHEN abs(" + d + ") >= 1e7 THEN " + sign + " || " + big + " " +
			"WHEN abs(" + d + ") < 1e-3 AND " + d + " <> 0 THEN " + sign + " || " + small + " " +
			"ELSE " + sign + " || " + a + " || (CASE WHEN " + a + " LIKE '%.%' THEN '' ELSE '.0' END) END"
	}, x)
}
