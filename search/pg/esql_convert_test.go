package pg

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/search"
)

// convertedDocs: n a long (the largest one first), d a date, f a float,
// s and words text, b a boolean, ls a multi-valued long.
func convertedDocs(t *testing.T) esqlFixture {
	owner, slug := testOwner(t, "esqlconv")
	storeDocs(t, owner, search.KindAnomalyEvent,
		map[string]any{"id": "c1", "created_at": "2026-01-01T00:00:00Z", "n": int64(9223372036854775807),
			"d": "2016-05-03T00:00:00Z", "f": 2.5, "neg": -2.5, "s": "TRuE", "b": true,
			"ls": []any{5013792, 2147483647, 501379200000}, "words": []any{"true", "TRuE", "false", "", "yes", "1"}},
		map[string]any{"id": "c2", "created_at": "2026-01-02T00:00:00Z", "n": 1, "d": "1986-06-26", "f": 3.9,
			"neg": -3.9, "s": "no", "b": false, "ls": 7, "words": "x"},
	)
	return esqlFixture{owner: owner, slug: slug, p: search.IndexName(slug, search.KindAnomalyEvent, "")}
}

// Every conversion function and cast of docs/search.md, from every source
// type, as Elasticsearch's function reference (type conversion functions)
// and its csv-spec tests (ints.csv-spec, floats.csv-spec, boolean.csv-spec,
// date.csv-spec) state them.
func TestESQLConversions(t *testing.T) {
	f := convertedDocs(t)
	one := `FROM $P | WHERE id == "c1" | `
	f.expect(t, []esqlCase{
		// TO_LONG / TO_INTEGER: "If the input parameter is of a date type,
		// its value will be interpreted as milliseconds since the Unix
		// epoch" (convertDatetimeToLong: 1986-06-26 is 520128000000);
		// "Boolean true will be converted to long 1, false to 0".
		{"a date to a number is epoch millis", `FROM $P | EVAL l = TO_LONG(d), i = TO_INTEGER(d), x = d::long, db = TO_DOUBLE(d) | SORT id | KEEP l, i, x, db`,
			`[{"l": 1462233600000, "i": null, "x": 1462233600000, "db": 1462233600000},
			  {"l": 520128000000, "i": null, "x": 520128000000, "db": 520128000000}]`},
		{"a boolean to a number", `FROM $P | EVAL l = TO_LONG(b), i = b::integer, db = TO_DOUBLE(b) | SORT id | KEEP l, i, db`,
			`[{"l": 1, "i": 1, "db": 1}, {"l": 0, "i": 0, "db": 0}]`},
		// DataTypeConverter.safeToInt / safeDoubleToLong: Math.round, half up.
		{"a double to an integer rounds half up", `FROM $P | EVAL i = TO_INTEGER(f), l = TO_LONG(neg), c = f::long, lit = TO_INTEGER(123.4) | SORT id | KEEP i, l, c, lit`,
			`[{"i": 3, "l": -2, "c": 3, "lit": 123}, {"i": 4, "l": -4, "c": 4, "lit": 123}]`},
		// convertDoubleToLong: to_long(1e19) is null.
		{"a double outside a long is null", `FROM $P | WHERE id == "c1" | EVAL o = TO_LONG(1e19), oi = TO_INTEGER(1e19) | KEEP o, oi`,
			`[{"o": null, "oi": null}]`},
		// to_long-str: "2147483648.2" is 2147483648, "foo" null;
		// convertStringToInt: "2147483647.2" is 2147483647, "2147483648" null.
		{"a string to a number", one + `EVAL a = TO_LONG("2147483648"), b = TO_LONG("2147483648.2"), c = TO_LONG("foo"),
				d = TO_INTEGER("2147483647.2"), e = TO_INTEGER("2147483648"), g = "2.5"::double, h = TO_DOUBLE("foo") | KEEP a, b, c, d, e, g, h`,
			`[{"a": 2147483648, "b": 2147483648, "c": null, "d": 2147483647, "e": null, "g": 2.5, "h": null}]`},
		// convertLongToInt (to_int-long): [5013792, 2147483647, 501379200000]
		// is [5013792, 2147483647]: element by element, the failed one left out.
		{"a multi-value converts element by element", one + `EVAL i = TO_INTEGER(ls), l = TO_LONG(ls), s = TO_STRING(ls) | KEEP i, l, s`,
			`[{"i": [5013792, 2147483647], "l": [5013792, 2147483647, 501379200000], "s": ["5013792", "2147483647", "501379200000"]}]`},
		// A long converts exactly (no double in between).
		{"the largest long stays exact", one + `EVAL l = TO_LONG(n), s = TO_STRING(n), i = TO_INTEGER(n) | KEEP l, s, i`,
			`[{"l": 9223372036854775807, "s": "9223372036854775807", "i": null}]`},
		// TO_BOOLEAN: "A string value of true will be case-insensitive
		// converted to the Boolean true. For anything else, including the
		// empty string, the function will return false. The numerical value
		// of 0 will be converted to false, anything else will be converted
		// to true." (["true", "TRuE", "false", "", "yes", "1"] is [true,
		// true, false, false, false, false]).
		{"to boolean", `FROM $P | EVAL w = TO_BOOLEAN(words), s = TO_BOOLEAN(s), n = TO_BOOLEAN(n), z = TO_BOOLEAN(0.0), c = s::boolean | SORT id | KEEP w, s, n, z, c`,
			`[{"w": [true, true, false, false, false, false], "s": true, "n": true, "z": false, "c": true},
			  {"w": false, "s": false, "n": true, "z": false, "c": false}]`},
		{"to boolean of a literal", one + `EVAL a = TO_BOOLEAN("yes"), b = TO_BOOLEAN("TRUE"), c = "1"::boolean, d = TO_BOOLEAN(5) | KEEP a, b, c, d`,
			`[{"a": false, "b": true, "c": false, "d": true}]`},
		// TO_DATETIME: a number is epoch milliseconds (convertDatetimeToInt:
		// 520128 is 1970-01-01T00:08:40.128Z); a string an ISO 8601 date.
		{"to datetime", one + `EVAL a = TO_DATETIME(520128000000), b = TO_DATETIME(520128), c = TO_DATETIME("2016-05-03"), e = TO_DATETIME("nope"),
				g = 520128000000::datetime, h = TO_DATETIME(d) | KEEP a, b, c, e, g, h`,
			`[{"a": "1986-06-26T00:00:00.000Z", "b": "1970-01-01T00:08:40.128Z", "c": "2016-05-03T00:00:00.000Z", "e": null,
			   "g": "1986-06-26T00:00:00.000Z", "h": "2016-05-03T00:00:00.000Z"}]`},
		// TO_STRING: a double as Java's String.valueOf (Elasticsearch's
		// EsqlDataTypeConverter.numericBooleanToString), a date in
		// strict_date_optional_time with milliseconds.
		{"to string", `FROM $P | EVAL f = TO_STRING(f), d = TO_STRING(d), b = TO_STRING(b), k = n::keyword | SORT id | KEEP f, d, b, k`,
			`[{"f": "2.5", "d": "2016-05-03T00:00:00.000Z", "b": "true", "k": "9223372036854775807"},
			  {"f": "3.9", "d": "1986-06-26T00:00:00.000Z", "b": "false", "k": "1"}]`},
		{"a double's string as Java writes it", one + `EVAL a = TO_STRING(1.0), b = TO_STRING(1e10), c = TO_STRING(0.0001), d = TO_STRING(-1234567.5),
				e = TO_STRING(12345678.9), g = TO_STRING(0.001), h = TO_STRING(1.5e300), i = TO_STRING(TO_DOUBLE(3)) | KEEP a, b, c, d, e, g, h, i`,
			`[{"a": "1.0", "b": "1.0E10", "c": "1.0E-4", "d": "-1234567.5", "e": "1.23456789E7", "g": "0.001", "h": "1.5E300", "i": "3.0"}]`},
	})
	for _, c := range []struct{ name, q string }{
		{"a boolean to a datetime", `FROM $P | EVAL x = TO_DATETIME(b)`},
		{"a date to a boolean", `FROM $P | EVAL x = TO_BOOLEAN(d)`},
		{"a boolean literal to a datetime", `FROM $P | EVAL x = true::datetime`},
	} {
		t.Run("refused: "+c.name, func(t *testing.T) {
			if _, err := f.query(t, c.q); err == nil || !strings.Contains(err.Error(), "cannot convert") {
				t.Fatalf("%v, want a 400: cannot convert", err)
			}
		})
	}
}

// A long that overflows is null with Elasticsearch's warning, the rest of
// the answer intact (Elasticsearch: Math.addExact / multiplyExact, "Line
// x:y: evaluation of [...] failed, treating result as null. Only first 20
// failures recorded." and "Line x:y: java.lang.ArithmeticException: long
// overflow"; math.csv-spec addLongOverflow, mulLongOverflow,
// stats.csv-spec sumOfLongOverflow shape).
func TestESQLLongOverflow(t *testing.T) {
	f := convertedDocs(t)
	run := func(t *testing.T, q string) ([]map[string]any, []string) {
		t.Helper()
		full := strings.ReplaceAll(q, "$P", f.p)
		ctx, w := search.WithWarnings(context.Background())
		rows, err := New(testPool(t)).ESQL(ctx, f.owner, f.slug, full)
		if err != nil {
			t.Fatalf("query %q: %v", full, err)
		}
		return rows, w.Messages()
	}
	warned := func(t *testing.T, q, expr string, warns []string) {
		t.Helper()
		full := strings.ReplaceAll(q, "$P", f.p)
		col := strings.Index(full, expr) + 1
		want := []string{
			fmt.Sprintf("Line 1:%d: evaluation of [%s] failed, treating result as null. Only first 20 failures recorded.", col, expr),
			fmt.Sprintf("Line 1:%d: java.lang.ArithmeticException: long overflow", col),
		}
		if !reflect.DeepEqual(warns, want) {
			t.Fatalf("warnings\n%q\nwant\n%q", warns, want)
		}
	}
	t.Run("addition", func(t *testing.T) {
		q := `FROM $P | EVAL x = n + 1, y = n - 1 | SORT id | KEEP id, x, y`
		rows, warns := run(t, q)
		if got, want := esqlJSON(t, rows), esqlJSON(t, `[{"id": "c1", "x": null, "y": 9223372036854775806}, {"id": "c2", "x": 2, "y": 0}]`); !reflect.DeepEqual(got, want) {
			t.Fatalf("rows %v, want %v", got, want)
		}
		warned(t, q, "n + 1", warns)
	})
	t.Run("multiplication", func(t *testing.T) {
		q := `FROM $P | WHERE id == "c2" | EVAL x = TO_LONG(ls) * 3000000000000000000 | KEEP x`
		rows, warns := run(t, q)
		if len(rows) != 1 || rows[0]["x"] != nil {
			t.Fatalf("rows %v, want x null", rows)
		}
		warned(t, q, "TO_LONG(ls) * 3000000000000000000", warns)
	})
	t.Run("at the bounds", func(t *testing.T) {
		// Exact where the result fits, null where it does not: -n - 1 is
		// the least long, one less overflows, and so does it divided by -1.
		q := `FROM $P | WHERE id == "c1" | EVAL a = -n - 1, b = -n - 2, c = (-n - 1) / -1, d = n * 1, e = 3037000499 * 3037000499,
			f = -4611686018427387904 * 2, g = -4611686018427387904 * -2, h = (-n - 1) / 2, i = n / 0 | KEEP a, b, c, d, e, f, g, h, i`
		rows, warns := run(t, q)
		want := `[{"a": -9223372036854775808, "b": null, "c": null, "d": 9223372036854775807, "e": 9223372030926249001,
			"f": -9223372036854775808, "g": null, "h": -4611686018427387904, "i": null}]`
		if got := esqlJSON(t, rows); !reflect.DeepEqual(got, esqlJSON(t, want)) {
			t.Fatalf("rows %v, want %s", got, want)
		}
		// exactly (the JSON comparison above reads numbers as doubles)
		if r := rows[0]; r["a"] != int64(math.MinInt64) || r["d"] != int64(math.MaxInt64) || r["e"] != int64(9223372030926249001) {
			t.Fatalf("a %v, d %v, e %v: want the exact longs", r["a"], r["d"], r["e"])
		}
		if len(warns) != 6 { // b, c and g: two headers each
			t.Fatalf("warnings %q, want those of b, c and g", warns)
		}
	})
	t.Run("SUM", func(t *testing.T) {
		q := `FROM $P | STATS s = SUM(n), c = COUNT(*), m = MIN(n)`
		rows, warns := run(t, q)
		if got, want := esqlJSON(t, rows), esqlJSON(t, `[{"s": null, "c": 2, "m": 1}]`); !reflect.DeepEqual(got, want) {
			t.Fatalf("rows %v, want %v", got, want)
		}
		warned(t, q, "SUM(n)", warns)
	})
	t.Run("SUM per group", func(t *testing.T) {
		q := `FROM $P | STATS s = SUM(n) BY b | SORT b`
		rows, warns := run(t, q)
		if got, want := esqlJSON(t, rows), esqlJSON(t, `[{"s": 1, "b": false}, {"s": 9223372036854775807, "b": true}]`); !reflect.DeepEqual(got, want) {
			t.Fatalf("rows %v, want %v", got, want)
		}
		if len(warns) != 0 {
			t.Fatalf("warnings %q, want none", warns)
		}
	})
}

// Negated patterns under three-valued logic: a value that is null makes
// LIKE null and NOT LIKE null (the row is not kept), except that
// Elasticsearch replaces a pattern that matches every string by IS NOT
// NULL, so that NOT LIKE ("*") keeps exactly the rows whose value is null
// (where-like.csv-spec notLikeListAllWildcard, likeListAllWildcard).
func TestESQLNegatedPatterns(t *testing.T) {
	owner, slug := testOwner(t, "esqlnotlike")
	storeDocs(t, owner, search.KindAnomalyEvent,
		map[string]any{"id": "p1", "created_at": "2026-01-01T00:00:00Z", "name": "alpha"},
		map[string]any{"id": "p2", "created_at": "2026-01-01T00:00:00Z", "name": nil},
		map[string]any{"id": "p3", "created_at": "2026-01-01T00:00:00Z"},
		map[string]any{"id": "p4", "created_at": "2026-01-01T00:00:00Z", "name": []any{"beta", "gamma"}},
	)
	f := esqlFixture{owner: owner, slug: slug, p: search.IndexName(slug, search.KindAnomalyEvent, "")}
	ids := func(ids ...string) string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = `{"id": "` + id + `"}`
		}
		return "[" + strings.Join(out, ", ") + "]"
	}
	q := func(where string) string { return `FROM $P | WHERE ` + where + ` | SORT id | KEEP id` }
	f.expect(t, []esqlCase{
		{"NOT LIKE of *: the null rows", q(`name NOT LIKE ("*")`), ids("p2", "p3")},
		{"NOT LIKE of a list with *: the null rows", q(`name NOT LIKE ("x*", "*")`), ids("p2", "p3")},
		{"NOT RLIKE of .*: the null rows", q(`name NOT RLIKE (".*", "b.*")`), ids("p2", "p3")},
		{"NOT of LIKE *: the null rows", q(`NOT name LIKE "*"`), ids("p2", "p3")},
		{"LIKE *: every value, a multi-value too", q(`name LIKE "*"`), ids("p1", "p4")},
		{"NOT LIKE of other patterns: null is not kept", q(`name NOT LIKE ("x*", "b*")`), ids("p1")},
		{"NOT IN with a null value: null, not kept", q(`name NOT IN ("x", null)`), "[]"},
		{"NOT IN: null is not kept", q(`name NOT IN ("x")`), ids("p1")},
		{"IS NULL", q(`name IS NULL`), ids("p2", "p3")},
	})
}

// Overflow over aggregates in STATS: null with the warning too.
func TestESQLLongOverflowInStats(t *testing.T) {
	f := convertedDocs(t)
	full := strings.ReplaceAll(`FROM $P | STATS x = MAX(n) + COUNT(*), c = COUNT(*) + 1`, "$P", f.p)
	ctx, w := search.WithWarnings(context.Background())
	rows, err := New(testPool(t)).ESQL(ctx, f.owner, f.slug, full)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := esqlJSON(t, rows), esqlJSON(t, `[{"x": null, "c": 3}]`); !reflect.DeepEqual(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	col := strings.Index(full, "MAX(n) + COUNT(*)") + 1
	if warns := w.Messages(); len(warns) != 2 || warns[1] != fmt.Sprintf("Line 1:%d: java.lang.ArithmeticException: long overflow", col) {
		t.Fatalf("warnings %q", warns)
	}
}
