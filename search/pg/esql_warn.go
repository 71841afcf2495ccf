package pg

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/fleetgraph/fleetgraph/search/esql"
)

// ES|QL warnings: an expression that cannot be evaluated for a row is null
// there, and Elasticsearch adds two Warning headers for it ("Line 1:23:
// evaluation of [a > 1] failed, treating result as null. Only first 20
// failures recorded." and "Line 1:23: <the exception>"). Two causes are
// recorded: a comparison or another single-value function of a multi-value
// ("java.lang.IllegalArgumentException: single-value function encountered
// multi-value") and a long that overflows ("java.lang.ArithmeticException:
// long overflow"). The translator numbers the expressions that can fail
// (sites); fg_sv_warn (migration 00025) records the numbers of those that
// failed in the transaction, read after the query (esqlWarnings).

const (
	esqlWarnMultiValue = "java.lang.IllegalArgumentException: single-value function encountered multi-value"
	esqlWarnOverflow   = "java.lang.ArithmeticException: long overflow"
)

// esqlWarnSite is an expression that can fail, and the exception its
// failure reports.
type esqlWarnSite struct {
	at     esql.Pos
	text   string
	reason string
}

// site is the number of the warning site of the expression being compiled
// for reason; -1 when no expression is (no warning is recorded).
func (tr *esqlTranslator) site(reason string) int {
	if tr.cur == nil {
		return -1
	}
	for i, n := range tr.curSites {
		if n == tr.cur && tr.warnSites[i].reason == reason {
			return i
		}
	}
	start, end := esqlSpan(tr.src, tr.cur)
	tr.curSites = append(tr.curSites, tr.cur)
	tr.warnSites = append(tr.warnSites, esqlWarnSite{at: esqlPosAt(tr.src, start), text: tr.src[start:end], reason: reason})
	return len(tr.warnSites) - 1
}

// sv is the single value of the document value x (SQL): null for a
// multi-value, which records a warning for the expression being compiled.
func (tr *esqlTranslator) sv(x string) string {
	site := tr.site(esqlWarnMultiValue)
	if site < 0 {
		return "fg_sv(" + x + ")"
	}
	return "COALESCE(fg_sv(" + x + "), fg_sv_warn(" + x + ", " + strconv.Itoa(site) + "))"
}

// checkedLongOp is l op r (+ - * /) of longs, null with the "long
// overflow" warning where it overflows. The test is done in bigint (a
// numeric computation costs about four times as much): + and - compare
// with the bounds less the other operand, * goes through numeric only
// where the product's double is near the bounds, / overflows only for
// the least long divided by -1 (and is null for a zero divisor, as
// before).
func (tr *esqlTranslator) checkedLongOp(op, l, r string) string {
	fail := tr.overflowFail()
	return tr.bind(func(v []string) string {
		a, b := v[0], v[1]
		switch op {
		case "+":
			return "CASE WHEN (" + b + " > 0 AND " + a + " > " + esqlLongMax + " - " + b + ") OR (" + b + " < 0 AND " + a +
				" < " + esqlLongMin + " - " + b + ") THEN " + fail + " ELSE " + a + " + " + b + " END"
		case "-":
			return "CASE WHEN (" + b + " < 0 AND " + a + " > " + esqlLongMax + " + " + b + ") OR (" + b + " > 0 AND " + a +
				" < " + esqlLongMin + " + " + b + ") THEN " + fail + " ELSE " + a + " - " + b + " END"
		case "*":
			return "CASE WHEN abs(" + a + "::float8 * " + b + "::float8) < 9.2e18 THEN " + a + " * " + b + " ELSE " +
				tr.longOrWarn("("+a+"::numeric * "+b+"::numeric)") + " END"
		}
		return "CASE WHEN " + b + " = 0 THEN NULL::bigint WHEN " + b + " = -1 AND " + a + " = " + esqlLongMin + " THEN " + fail +
			" ELSE " + a + " / " + b + " END"
	}, l, r)
}

// checkedLongAgg is the long of an aggregate call computed as numeric
// (sum), null with the "long overflow" warning when it does not fit;
// repeated, not bound (PostgreSQL computes identical aggregates of a query
// once).
func (tr *esqlTranslator) checkedLongAgg(agg string) string { return tr.longOrWarn(agg) }

func (tr *esqlTranslator) longOrWarn(v string) string {
	return "CASE WHEN " + v + " < " + esqlLongMin + " OR " + v + " > " + esqlLongMax + " THEN " + tr.overflowFail() +
		" ELSE " + v + "::bigint END"
}

// overflowFail is the SQL of a long that overflowed: null, recording the
// "long overflow" warning of the expression being compiled.
func (tr *esqlTranslator) overflowFail() string {
	site := tr.site(esqlWarnOverflow)
	if site < 0 {
		return "NULL::bigint"
	}
	// fg_sv_warn records its site when handed a multi-value: a constant
	// one records the failure.
	return "(fg_sv_warn('[0, 0]'::jsonb, " + strconv.Itoa(site) + "))::bigint"
}

// enter makes x the expression being compiled (the one warnings name)
// when it is an operation; the returned function restores the previous one.
func (tr *esqlTranslator) enter(x esql.Expr) func() {
	switch x.(type) {
	case *esql.Binary, *esql.Unary, *esql.Call, *esql.In, *esql.Like, *esql.Cast:
	default:
		return func() {}
	}
	prev := tr.cur
	tr.cur = x
	return func() { tr.cur = prev }
}

// esqlWarnings reads which expressions failed (q's transaction)
// and gives Elasticsearch's warnings for them, at most limits.MaxWarnings.
func (tr *esqlTranslator) esqlWarnings(ctx context.Context, q querier) ([]string, error) {
	if len(tr.warnSites) == 0 {
		return nil, nil
	}
	rows, err := q.Query(ctx, "SELECT coalesce(current_setting('fg.esql_mv', true), '')")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var seen string
	for rows.Next() {
		if err := rows.Scan(&seen); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []string
	for _, f := range strings.Split(seen, ",") {
		i, err := strconv.Atoi(f)
		if err != nil || i < 0 || i >= len(tr.warnSites) {
			continue
		}
		s := tr.warnSites[i]
		line := fmt.Sprintf("Line %d:%d: ", s.at.Line, s.at.Col)
		out = append(out, line+"evaluation of ["+s.text+"] failed, treating result as null. Only first 20 failures recorded.",
			line+s.reason)
	}
	return out, nil
}

// esqlSpan is the source text of x in src: from its first token to the end
// of its last one, with the closing parentheses of calls and a cast.
func esqlSpan(src string, x esql.Expr) (int, int) {
	lo, hi := len(src), 0
	var walk func(e esql.Expr)
	walk = func(e esql.Expr) {
		if e == nil {
			return
		}
		if o := e.Position().Offset; o >= 0 && o <= len(src) {
			lo, hi = min(lo, o), max(hi, o)
		}
		switch e := e.(type) {
		case *esql.Binary:
			walk(e.L)
			walk(e.R)
		case *esql.Unary:
			walk(e.X)
		case *esql.Call:
			for _, a := range e.Args {
				walk(a)
			}
		case *esql.In:
			walk(e.X)
			for _, a := range e.List {
				walk(a)
			}
		case *esql.Like:
			walk(e.X)
		case *esql.Cast:
			walk(e.X)
		case *esql.IsNull:
			walk(e.X)
		}
	}
	walk(x)
	if lo > hi {
		return 0, 0
	}
	end := esqlTokenEnd(src, hi)
	// Close what is open (a call's or a list's parentheses), take a cast.
	for {
		depth := esqlDepth(src[lo:end])
		j := end
		for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\n' || src[j] == '\r') {
			j++
		}
		switch {
		case depth > 0 && j < len(src) && src[j] == ')':
			end = j + 1
		case strings.HasPrefix(src[j:], "::"):
			end = esqlTokenEnd(src, j+2)
		default:
			return lo, end
		}
	}
}

// esqlTokenEnd is the end of the token starting at i: a quoted string or
// name, a word, or one character.
func esqlTokenEnd(src string, i int) int {
	if i >= len(src) {
		return len(src)
	}
	switch q := src[i]; q {
	case '"', '`':
		if q == '"' && strings.HasPrefix(src[i:], `"""`) {
			if k := strings.Index(src[i+3:], `"""`); k >= 0 {
				return i + 3 + k + 3
			}
			return len(src)
		}
		for j := i + 1; j < len(src); j++ {
			if src[j] == '\\' && q == '"' {
				j++
			} else if src[j] == q {
				return j + 1
			}
		}
		return len(src)
	}
	j := i
	for j < len(src) && (src[j] == '_' || src[j] == '.' || src[j] == '@' || src[j] == '*' ||
		('0' <= src[j] && src[j] <= '9') || ('a' <= src[j] && src[j] <= 'z') || ('A' <= src[j] && src[j] <= 'Z')) {
		j++
	}
	if j == i {
		return i + 1
	}
	return j
}

// esqlDepth is the count of parentheses s leaves open (outside strings).
func esqlDepth(s string) int {
	d := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"', '`':
			i = esqlTokenEnd(s, i) - 1
		case '(':
			d++
		case ')':
			d--
		}
	}
	return d
}

// esqlPosAt is the line and column (1-based) of offset o in src.
func esqlPosAt(src string, o int) esql.Pos {
	line, col := 1, 1
	for i := 0; i < o; i++ {
		if src[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return esql.Pos{Line: line, Col: col, Offset: o}
}
