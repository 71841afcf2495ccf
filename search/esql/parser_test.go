package esql

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func strconvItoa(n int64) string    { return strconv.FormatInt(n, 10) }
func strconvFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// show renders an expression compactly for structural comparisons.
func show(e Expr) string {
	switch e := e.(type) {
	case *Literal:
		switch e.Kind {
		case LitNull:
			return "null"
		case LitString:
			return `"` + e.Value.(string) + `"`
		case LitDuration:
			return "span(" + itoa(e.Value.(int64)) + " " + e.Unit + ")"
		}
		return strings.TrimSpace(strings.ReplaceAll(sprint(e.Value), "\n", ""))
	case *Ident:
		return e.Name
	case *Call:
		if e.Star {
			return e.Name + "(*)"
		}
		var args []string
		for _, a := range e.Args {
			args = append(args, show(a))
		}
		return e.Name + "(" + strings.Join(args, ", ") + ")"
	case *Binary:
		return "(" + show(e.L) + " " + e.Op + " " + show(e.R) + ")"
	case *Unary:
		return "(" + e.Op + " " + show(e.X) + ")"
	case *IsNull:
		if e.Not {
			return "(" + show(e.X) + " IS NOT NULL)"
		}
		return "(" + show(e.X) + " IS NULL)"
	case *Like:
		op := "LIKE"
		if e.Regex {
			op = "RLIKE"
		}
		if e.Not {
			op = "NOT " + op
		}
		return "(" + show(e.X) + " " + op + " " + `"` + e.Pattern + `")`
	case *In:
		var l []string
		for _, a := range e.List {
			l = append(l, show(a))
		}
		op := "IN"
		if e.Not {
			op = "NOT IN"
		}
		return "(" + show(e.X) + " " + op + " [" + strings.Join(l, ", ") + "])"
	case *Cast:
		return "(" + show(e.X) + "::" + e.Type + ")"
	}
	return "?"
}

func itoa(n int64) string { return sprint(n) }

func sprint(v any) string {
	switch v := v.(type) {
	case int64:
		return strconvItoa(v)
	case float64:
		return strconvFloat(v)
	case bool:
		if v {
			return "true"
		}
		return "false"
	}
	return "?"
}

func mustParse(t *testing.T, q string) *Query {
	t.Helper()
	got, err := Parse(q)
	if err != nil {
		t.Fatalf("Parse(%q): %v", q, err)
	}
	return got
}

func TestParseFrom(t *testing.T) {
	q := mustParse(t, `FROM analytics-production-acme-measurements*, -analytics-production-acme-measurements-web*,
		"analytics-production-acme-anomaly_events, analytics-production-acme-client_reports" METADATA _id, _index`)
	want := []IndexPattern{
		{Pattern: "analytics-production-acme-measurements*"},
		{Pattern: "analytics-production-acme-measurements-web*", Exclude: true},
		{Pattern: "analytics-production-acme-anomaly_events"},
		{Pattern: "analytics-production-acme-client_reports"},
	}
	if len(q.From.Indices) != len(want) {
		t.Fatalf("indices: %+v", q.From.Indices)
	}
	for i, w := range want {
		g := q.From.Indices[i]
		if g.Pattern != w.Pattern || g.Exclude != w.Exclude {
			t.Errorf("index %d = %+v, want %+v", i, g, w)
		}
	}
	if !reflect.DeepEqual(q.From.Metadata, []string{"_id", "_index"}) {
		t.Errorf("metadata = %v", q.From.Metadata)
	}
	if len(q.Commands) != 0 {
		t.Errorf("commands = %v", q.Commands)
	}
	q = mustParse(t, "from logs-2024.01.01, logs::data")
	if q.From.Indices[0].Pattern != "logs-2024.01.01" || q.From.Indices[1].Pattern != "logs::data" {
		t.Errorf("indices = %+v", q.From.Indices)
	}
}

func TestParseExpressions(t *testing.T) {
	cases := map[string]string{
		`a == 1 OR b != 2 AND NOT c`:  `((a == 1) OR ((b != 2) AND (NOT c)))`,
		`a = "x"`:                     `(a == "x")`,
		`a + b * c - d / e % f`:       `((a + (b * c)) - ((d / e) % f))`,
		`(a + b) * -c`:                `((a + b) * (- c))`,
		`-1.5 < x`:                    `(-1.5 < x)`,
		`x IS NULL AND y IS NOT NULL`: `((x IS NULL) AND (y IS NOT NULL))`,
		`name LIKE "a*" OR name NOT RLIKE """b\d"""`:  `((name LIKE "a*") OR (name NOT RLIKE "b\d"))`,
		`s IN ("a", "b") AND n NOT IN (1, 2.5, null)`: `((s IN ["a", "b"]) AND (n NOT IN [1, 2.5, null]))`,
		`@timestamp > NOW() - 7 days`:                 `(@timestamp > (NOW() - span(7 day)))`,
		`created_at + 1 hour >= "2024-01-01"`:         `((created_at + span(1 hour)) >= "2024-01-01")`,
		`statistic_values.bitrate::double > 1e3`:      `((statistic_values.bitrate::double) > 1000)`,
		"`weird name`.x == true":                      `(weird name.x == true)`,
		`CASE(a > 1, "big", "small")`:                 `CASE((a > 1), "big", "small")`,
		`date_trunc(1 month, created_at)`:             `DATE_TRUNC(span(1 month), created_at)`,
		`concat(a, "\"q\"\n")`:                        "CONCAT(a, \"\"q\"\n\")",
		`x >= 1 and y <= 2 or false`:                  `(((x >= 1) AND (y <= 2)) OR false)`,
	}
	for in, want := range cases {
		q := mustParse(t, "FROM i | WHERE "+in)
		w, ok := q.Commands[0].(*Where)
		if !ok {
			t.Fatalf("%s: command %T", in, q.Commands[0])
		}
		if got := show(w.Cond); got != want {
			t.Errorf("%s\n got  %s\n want %s", in, got, want)
		}
	}
}

func TestParseCommands(t *testing.T) {
	q := mustParse(t, `FROM i // a comment
		| WHERE a > 1 /* block
		comment */ | EVAL x = a * 2, LENGTH(name)
		| STATS n = COUNT(*), AVG(x), p = PERCENTILE(x, 95) BY day = BUCKET(created_at, 1 day), type
		| SORT n DESC, day ASC NULLS FIRST, type NULLS LAST
		| LIMIT 10
		| KEEP n, day*, statistic_values.*
		| DROP x
		| RENAME n AS count, total = day`)
	if len(q.Commands) != 8 {
		t.Fatalf("commands: %d", len(q.Commands))
	}
	ev := q.Commands[1].(*Eval)
	if ev.Fields[0].Name != "x" || show(ev.Fields[0].Expr) != "(a * 2)" || ev.Fields[1].Name != "LENGTH(name)" {
		t.Errorf("eval = %+v", ev.Fields)
	}
	st := q.Commands[2].(*Stats)
	var names []string
	for _, f := range append(append([]Field{}, st.Aggs...), st.By...) {
		names = append(names, f.Name+"="+show(f.Expr))
	}
	wantNames := []string{"n=COUNT(*)", "AVG(x)=AVG(x)", "p=PERCENTILE(x, 95)", "day=BUCKET(created_at, span(1 day))", "type=type"}
	if !reflect.DeepEqual(names, wantNames) {
		t.Errorf("stats = %v", names)
	}
	so := q.Commands[3].(*Sort)
	if len(so.Orders) != 3 || !so.Orders[0].Desc || !so.Orders[0].NullsFirst || so.Orders[1].Desc || !so.Orders[1].NullsFirst ||
		so.Orders[2].NullsFirst {
		t.Errorf("sort = %+v", so.Orders)
	}
	if l := q.Commands[4].(*Limit); l.N != 10 {
		t.Errorf("limit = %d", l.N)
	}
	if k := q.Commands[5].(*Keep); !reflect.DeepEqual(k.Patterns, []string{"n", "day*", "statistic_values.*"}) {
		t.Errorf("keep = %v", k.Patterns)
	}
	if d := q.Commands[6].(*Drop); !reflect.DeepEqual(d.Patterns, []string{"x"}) {
		t.Errorf("drop = %v", d.Patterns)
	}
	if r := q.Commands[7].(*Rename); !reflect.DeepEqual(r.Pairs, []RenamePair{{"n", "count"}, {"day", "total"}}) {
		t.Errorf("rename = %v", r.Pairs)
	}
	// STATS with BY only; keywords in any case.
	q = mustParse(t, "from i | stats by a, b | sort a desc nulls last")
	st = q.Commands[0].(*Stats)
	if len(st.Aggs) != 0 || len(st.By) != 2 {
		t.Errorf("stats = %+v", st)
	}
	if o := q.Commands[1].(*Sort).Orders[0]; !o.Desc || o.NullsFirst {
		t.Errorf("sort = %+v", o)
	}
}

func TestParseLookupJoin(t *testing.T) {
	for q, want := range map[string]LookupJoin{
		"FROM i | LOOKUP JOIN analytics-production-acme-lookup-clients ON client_uuid":  {Index: "analytics-production-acme-lookup-clients", On: []string{"client_uuid"}},
		`FROM i | lookup join "analytics-production-a_1-lookup-clients" on client_uuid`: {Index: "analytics-production-a_1-lookup-clients", On: []string{"client_uuid"}},
		"FROM i | LOOKUP JOIN l ON a, b.c":                                              {Index: "l", On: []string{"a", "b.c"}},
		"FROM i | LOOKUP JOIN l ON `x y`":                                               {Index: "l", On: []string{"x y"}},
	} {
		parsed := mustParse(t, q)
		lj, ok := parsed.Commands[0].(*LookupJoin)
		if !ok {
			t.Fatalf("%q: %T", q, parsed.Commands[0])
		}
		if lj.Index != want.Index || !reflect.DeepEqual(lj.On, want.On) || lj.At.Col != 10 || lj.IndexAt.Col != 22 {
			t.Errorf("%q: %+v, want %+v", q, lj, want)
		}
	}
	// Further commands follow it.
	q := mustParse(t, "FROM i | STATS n = COUNT(*) BY client_uuid | LOOKUP JOIN l ON client_uuid | KEEP client_label, n")
	if len(q.Commands) != 3 {
		t.Fatalf("commands: %d", len(q.Commands))
	}
	if _, ok := q.Commands[2].(*Keep); !ok {
		t.Errorf("last command %T", q.Commands[2])
	}
}

func TestParseDurations(t *testing.T) {
	for in, want := range map[string]string{
		"1 millisecond": "span(1 millisecond)", "5 ms": "span(5 millisecond)", "2 seconds": "span(2 second)",
		"10 minutes": "span(10 minute)", "1 h": "span(1 hour)", "3 days": "span(3 day)", "1 week": "span(1 week)",
		"2 months": "span(2 month)", "1 quarter": "span(1 quarter)", "1 year": "span(1 year)", "4 yr": "span(4 year)",
	} {
		q := mustParse(t, "FROM i | EVAL x = "+in)
		if got := show(q.Commands[0].(*Eval).Fields[0].Expr); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		q, msg      string
		line, col   int
		unsupported bool
	}{
		{"", "empty query", 1, 1, false},
		{"WHERE a > 1", "mismatched input 'WHERE' expecting FROM", 1, 1, false},
		{"FROM i | WHERE a >", "mismatched input <EOF> expecting an expression", 1, 19, false},
		{"FROM i\n| WHERE (a > 1", "mismatched input <EOF> expecting ')'", 2, 15, false},
		{"FROM i | EVAL x = 1 +* 2", "mismatched input '*' expecting an expression", 1, 22, false},
		{"FROM i | SORT a NULLS MIDDLE", "expecting FIRST or LAST", 1, 23, false},
		{"FROM i | LIMIT x", "expecting an integer", 1, 16, false},
		{`FROM i | WHERE a == "x`, "unterminated string", 1, 21, false},
		{"FROM i | WHERE a /* x", "unterminated comment", 1, 18, false},
		{"FROM i | WHERE a # 1", "token recognition error at: '#'", 1, 18, false},
		{"FROM i | WHERE a LIKE b", "expecting a string pattern", 1, 23, false},
		{"FROM i | FROM j", "FROM is only allowed as the first command", 1, 10, false},
		{"FROM i | STATS", "expecting an expression", 1, 15, false},
		{"FROM i | RENAME a b", "expecting AS", 1, 19, false},
		{"FROM i | EVAL x = LENGTH()", "takes 1 argument", 1, 19, false},
		{"FROM i | EVAL x = 1.5 days", "integer count", 1, 23, false},
		{"FROM i | ENRICH p", "ENRICH is not supported", 1, 10, true},
		{"FROM i | DISSECT a \"%{b}\"", "DISSECT is not supported", 1, 10, true},
		{"FROM i | GROK a \"x\"", "GROK is not supported", 1, 10, true},
		{"FROM i | MV_EXPAND a", "MV_EXPAND is not supported", 1, 10, true},
		{"ROW a = 1", "ROW is not supported", 1, 1, true},
		{"SHOW INFO", "SHOW is not supported", 1, 1, true},
		{"FROM i | WHATEVER", "WHATEVER is not supported", 1, 10, true},
		{"FROM i | EVAL x = MV_MAX(a)", "function MV_MAX is not supported", 1, 19, true},
		{"FROM i | WHERE a =~ \"x\"", "=~ is not supported", 1, 18, true},
		{"FROM i | EVAL x = a::ip", "cast to ip is not supported", 1, 22, true},
		{"FROM i | WHERE a == ?", "parameters", 1, 21, true},
		{"FROM i | LOOKUP l ON a", "only LOOKUP JOIN", 1, 10, true},
		{"FROM i | LOOKUP JOIN l", "mismatched input <EOF> expecting ON", 1, 23, false},
		{"FROM i | LOOKUP JOIN ON a", "mismatched input 'a' expecting ON", 1, 25, false},
		{"FROM i | LOOKUP JOIN l ON", "expecting a column name", 1, 26, false},
		{"FROM i | LOOKUP JOIN l ON a == b", "join expression", 1, 29, true},
		{"FROM i | LOOKUP JOIN l ON a AS b", "expecting '|' or <EOF>", 1, 29, false},
		{"FROM i | LEFT JOIN l ON a", "LEFT is not supported", 1, 10, true},
	}
	for _, c := range cases {
		_, err := Parse(c.q)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: error %v is not an *Error", c.q, err)
			continue
		}
		if !strings.Contains(e.Msg, c.msg) || e.Pos.Line != c.line || e.Pos.Col != c.col || e.Unsupported != c.unsupported {
			t.Errorf("%q: got %q at %d:%d (unsupported %v), want %q at %d:%d (unsupported %v)",
				c.q, e.Msg, e.Pos.Line, e.Pos.Col, e.Unsupported, c.msg, c.line, c.col, c.unsupported)
		}
		if !c.unsupported && !strings.HasPrefix(err.Error(), "line ") {
			t.Errorf("%q: syntax error %q does not start with its position", c.q, err)
		}
	}
}

func TestParseDepthLimit(t *testing.T) {
	q := "FROM i | WHERE " + strings.Repeat("(", 500) + "a" + strings.Repeat(")", 500)
	if _, err := Parse(q); err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Fatalf("err = %v", err)
	}
	q = "FROM i | WHERE " + strings.Repeat("NOT ", 500) + "a"
	if _, err := Parse(q); err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Fatalf("err = %v", err)
	}
}

// FuzzParse: the parser never panics and every error is an *Error.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"FROM i | WHERE a > 1 AND b LIKE \"x*\" | EVAL c = CASE(a > 1, 1, 2) | STATS n = COUNT(*) BY c | SORT n DESC NULLS LAST | LIMIT 5",
		"FROM i METADATA _id | KEEP a* | DROP b | RENAME c AS d",
		"FROM \"a,b\", -c | WHERE x IN (1, 2) AND y IS NOT NULL OR NOT z RLIKE \"\"\"r\"\"\"",
		"FROM i | EVAL t = DATE_TRUNC(1 day, @timestamp) + 1 hour, u = x::double",
		"FROM i | WHERE `q`.r == -1.5e3 /* c */ // d",
		"", "FROM", "FROM i |", "FROM i | WHERE ((", "ROW", "\"", "`", "FROM i | EVAL x = 1 days",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		_, err := Parse(q)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not an *Error", err, err)
			}
		}
	})
}

// A line comment ends at '\r' as well as '\n', as in Elasticsearch's lexer:
// what follows a lone carriage return is read.
func TestParseLineCommentEndsAtCR(t *testing.T) {
	q := mustParse(t, "FROM a // c\r, b // d\r| LIMIT 3")
	if len(q.From.Indices) != 2 || q.From.Indices[1].Pattern != "b" {
		t.Fatalf("indices = %+v", q.From.Indices)
	}
	if len(q.Commands) != 1 || q.Commands[0].(*Limit).N != 3 {
		t.Fatalf("commands = %+v", q.Commands)
	}
}
