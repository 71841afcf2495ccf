package esql

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetgraph/fleetgraph/limits"
)

// unsupportedCommands are ES|QL commands outside the subset: they are
// reported as "<NAME> is not supported".
var unsupportedCommands = map[string]bool{
	"ENRICH": true, "DISSECT": true, "GROK": true, "MV_EXPAND": true, "ROW": true, "SHOW": true,
	"INLINESTATS": true, "INLINE": true, "CHANGE_POINT": true, "COMPLETION": true,
	"FORK": true, "RERANK": true, "SAMPLE": true, "FUSE": true, "TS": true, "METRICS": true,
	"EXPLAIN": true, "SET": true, "JOIN": true, "LEFT": true, "RIGHT": true, "FULL": true,
	"INSIST": true, "RRF": true, "URI_PARTS": true, "REGISTERED_DOMAIN": true, "MMR": true,
}

// Functions lists the scalar functions of the subset (upper case) with their
// minimum and maximum argument counts (-1: no maximum).
var Functions = map[string][2]int{
	"TO_LOWER": {1, 1}, "TO_UPPER": {1, 1}, "LENGTH": {1, 1}, "CONCAT": {2, -1},
	"SUBSTRING": {2, 3}, "TRIM": {1, 1}, "ROUND": {1, 2}, "ABS": {1, 1}, "FLOOR": {1, 1},
	"CEIL": {1, 1}, "COALESCE": {1, -1}, "CASE": {2, -1}, "DATE_TRUNC": {2, 2}, "BUCKET": {2, 2},
	"TO_STRING": {1, 1}, "TO_INTEGER": {1, 1}, "TO_LONG": {1, 1}, "TO_DOUBLE": {1, 1},
	"TO_DATETIME": {1, 1}, "NOW": {0, 0}, "STARTS_WITH": {2, 2}, "ENDS_WITH": {2, 2}, "LEFT": {2, 2},
	"RIGHT": {2, 2}, "SQRT": {1, 1}, "POW": {2, 2}, "LOG10": {1, 1}, "GREATEST": {1, -1}, "LEAST": {1, -1},
	"DATE_EXTRACT": {2, 2}, "DATE_DIFF": {3, 3}, "TO_BOOLEAN": {1, 1},
}

// Aggregates lists the aggregate functions of the subset.
var Aggregates = map[string][2]int{
	"COUNT": {1, 1}, "COUNT_DISTINCT": {1, 2}, "SUM": {1, 1}, "AVG": {1, 1}, "MIN": {1, 1},
	"MAX": {1, 1}, "MEDIAN": {1, 1}, "PERCENTILE": {2, 2}, "VALUES": {1, 1},
}

// castTypes are the accepted x::type names.
var castTypes = map[string]bool{
	"integer": true, "int": true, "long": true, "double": true, "keyword": true, "text": true,
	"string": true, "datetime": true, "date": true, "boolean": true, "bool": true,
}

// durationUnits maps time unit qualifiers to canonical units.
var durationUnits = map[string]string{
	"millisecond": "millisecond", "milliseconds": "millisecond", "ms": "millisecond",
	"second": "second", "seconds": "second", "sec": "second", "s": "second",
	"minute": "minute", "minutes": "minute", "min": "minute",
	"hour": "hour", "hours": "hour", "h": "hour",
	"day": "day", "days": "day", "d": "day",
	"week": "week", "weeks": "week", "w": "week",
	"month": "month", "months": "month", "mo": "month",
	"quarter": "quarter", "quarters": "quarter", "q": "quarter",
	"year": "year", "years": "year", "yr": "year", "y": "year",
}

type parser struct {
	src   string
	toks  []token
	i     int
	depth int
	lines []int // offsets at which lines start
}

// Parse reads a query of the supported subset.
func Parse(src string) (*Query, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	if len(toks) > limits.MaxESQLTokens {
		return nil, errAt(src, toks[limits.MaxESQLTokens].start, fmt.Sprintf("query too long: more than %d tokens", limits.MaxESQLTokens))
	}
	p := &parser{src: src, toks: toks}
	q, perr := p.query()
	if perr == nil {
		perr = checkLimits(q)
	}
	if perr != nil {
		return nil, perr
	}
	return q, nil
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

// pos is t's position, found among the line starts (computed once, so
// that positions cost no more than a lookup in long queries).
func (p *parser) pos(t token) Pos {
	if p.lines == nil {
		p.lines = []int{0}
		for i := 0; i < len(p.src); i++ {
			if p.src[i] == '\n' {
				p.lines = append(p.lines, i+1)
			}
		}
	}
	off := min(t.start, len(p.src))
	line, _ := slices.BinarySearch(p.lines, off+1)
	return Pos{Line: line, Col: off - p.lines[line-1] + 1, Offset: off}
}

func (p *parser) errf(t token, format string, args ...any) *Error {
	return &Error{Pos: p.pos(t), Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) unsupported(t token, format string, args ...any) *Error {
	return &Error{Pos: p.pos(t), Msg: fmt.Sprintf(format, args...), Unsupported: true}
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "<EOF>"
	case tString:
		return strconv.Quote(t.text)
	case tQuotedIdent:
		return "`" + t.text + "`"
	}
	return "'" + t.text + "'"
}

func (p *parser) unexpected(t token, expecting string) *Error {
	return p.errf(t, "mismatched input %s expecting %s", describe(t), expecting)
}

// isKw reports whether t is the (case-insensitive) keyword kw.
func isKw(t token, kw string) bool { return t.kind == tIdent && strings.EqualFold(t.text, kw) }

func isSym(t token, s string) bool { return t.kind == tSym && t.text == s }

func (p *parser) acceptKw(kw string) bool {
	if isKw(p.peek(), kw) {
		p.next()
		return true
	}
	return false
}

func (p *parser) acceptSym(s string) bool {
	if isSym(p.peek(), s) {
		p.next()
		return true
	}
	return false
}

func (p *parser) expectSym(s string) *Error {
	if !p.acceptSym(s) {
		return p.unexpected(p.peek(), "'"+s+"'")
	}
	return nil
}

func (p *parser) query() (*Query, *Error) {
	t := p.peek()
	if t.kind == tEOF {
		return nil, p.errf(t, "empty query, expecting FROM")
	}
	if !isKw(t, "FROM") {
		if t.kind == tIdent && unsupportedCommands[strings.ToUpper(t.text)] {
			return nil, p.unsupported(t, "%s is not supported", strings.ToUpper(t.text))
		}
		return nil, p.unexpected(t, "FROM")
	}
	from, err := p.from()
	if err != nil {
		return nil, err
	}
	q := &Query{From: from}
	for {
		t := p.peek()
		if t.kind == tEOF {
			return q, nil
		}
		if !isSym(t, "|") {
			return nil, p.unexpected(t, "'|' or <EOF>")
		}
		p.next()
		cmd, err := p.command()
		if err != nil {
			return nil, err
		}
		q.Commands = append(q.Commands, cmd)
	}
}

func (p *parser) command() (Command, *Error) {
	t := p.next()
	if t.kind != tIdent {
		return nil, p.unexpected(t, "a processing command")
	}
	at := p.pos(t)
	name := strings.ToUpper(t.text)
	switch name {
	case "WHERE":
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		return &Where{At: at, Cond: e}, nil
	case "EVAL":
		fields, err := p.fields(false)
		if err != nil {
			return nil, err
		}
		return &Eval{At: at, Fields: fields}, nil
	case "STATS":
		s := &Stats{At: at}
		if !isKw(p.peek(), "BY") {
			aggs, err := p.fieldsWhere(true, true)
			if err != nil {
				return nil, err
			}
			s.Aggs = aggs
		}
		if p.acceptKw("BY") {
			by, err := p.fields(true)
			if err != nil {
				return nil, err
			}
			s.By = by
		}
		return s, nil
	case "SORT":
		return p.sort(at)
	case "LIMIT":
		t := p.next()
		if t.kind != tInt {
			return nil, p.unexpected(t, "an integer")
		}
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return nil, p.errf(t, "invalid LIMIT %s", t.text)
		}
		return &Limit{At: at, N: n}, nil
	case "KEEP", "DROP":
		var pats []string
		for {
			pat, err := p.columnPattern(true)
			if err != nil {
				return nil, err
			}
			pats = append(pats, pat)
			if !p.acceptSym(",") {
				break
			}
		}
		if name == "KEEP" {
			return &Keep{At: at, Patterns: pats}, nil
		}
		return &Drop{At: at, Patterns: pats}, nil
	case "RENAME":
		return p.rename(at)
	case "LOOKUP":
		return p.lookupJoin(t)
	case "FROM":
		return nil, p.errf(t, "FROM is only allowed as the first command")
	}
	if unsupportedCommands[name] {
		return nil, p.unsupported(t, "%s is not supported", name)
	}
	return nil, p.unsupported(t, "%s is not supported (unknown command)", name)
}

// sort reads SORT's orders: expr [ASC|DESC] [NULLS FIRST|LAST], ...
func (p *parser) sort(at Pos) (Command, *Error) {
	s := &Sort{At: at}
	for {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		o := Order{Expr: e}
		if p.acceptKw("DESC") {
			o.Desc = true
		} else {
			p.acceptKw("ASC")
		}
		o.NullsFirst = o.Desc
		if p.acceptKw("NULLS") {
			switch {
			case p.acceptKw("FIRST"):
				o.NullsFirst = true
			case p.acceptKw("LAST"):
				o.NullsFirst = false
			default:
				return nil, p.unexpected(p.peek(), "FIRST or LAST")
			}
		}
		s.Orders = append(s.Orders, o)
		if !p.acceptSym(",") {
			return s, nil
		}
	}
}

// rename reads RENAME's pairs: old AS new, or new = old.
func (p *parser) rename(at Pos) (Command, *Error) {
	r := &Rename{At: at}
	for {
		old, err := p.columnPattern(false)
		if err != nil {
			return nil, err
		}
		var nw string
		if p.acceptKw("AS") {
			if nw, err = p.columnPattern(false); err != nil {
				return nil, err
			}
		} else if p.acceptSym("=") { // RENAME new = old
			nw = old
			if old, err = p.columnPattern(false); err != nil {
				return nil, err
			}
		} else {
			return nil, p.unexpected(p.peek(), "AS")
		}
		r.Pairs = append(r.Pairs, RenamePair{Old: old, New: nw})
		if !p.acceptSym(",") {
			return r, nil
		}
	}
}

// from reads FROM index[, ...] [METADATA field[, ...]].
func (p *parser) from() (*From, *Error) {
	t := p.next()
	f := &From{At: p.pos(t)}
	for {
		t := p.peek()
		if t.kind == tString {
			p.next()
			for _, part := range strings.Split(t.text, ",") {
				part = strings.TrimSpace(part)
				ip := IndexPattern{Pattern: part, At: p.pos(t)}
				if strings.HasPrefix(part, "-") {
					ip.Exclude, ip.Pattern = true, part[1:]
				}
				if ip.Pattern == "" {
					return nil, p.errf(t, "empty index name")
				}
				f.Indices = append(f.Indices, ip)
			}
		} else {
			text, at, err := p.unquotedIndex()
			if err != nil {
				return nil, err
			}
			ip := IndexPattern{Pattern: text, At: at}
			if strings.HasPrefix(text, "-") {
				ip.Exclude, ip.Pattern = true, text[1:]
			}
			f.Indices = append(f.Indices, ip)
		}
		if !p.acceptSym(",") {
			break
		}
	}
	if p.acceptKw("METADATA") {
		for {
			t := p.next()
			if t.kind != tIdent {
				return nil, p.unexpected(t, "a metadata field")
			}
			f.Metadata = append(f.Metadata, t.text)
			if !p.acceptSym(",") {
				break
			}
		}
	}
	return f, nil
}

// unquotedIndex reads an unquoted index pattern: adjacent tokens glued by
// their text, up to white space, ',' or '|'.
func (p *parser) unquotedIndex() (string, Pos, *Error) {
	start := p.i
	for {
		c := p.peek()
		if c.kind == tEOF || isSym(c, ",") || isSym(c, "|") || (p.i > start && c.start != p.toks[p.i-1].end) {
			break
		}
		if c.kind == tString || c.kind == tQuotedIdent {
			return "", Pos{}, p.unexpected(c, "an index pattern")
		}
		p.next()
	}
	if p.i == start {
		return "", Pos{}, p.unexpected(p.peek(), "an index pattern")
	}
	return p.src[p.toks[start].start:p.toks[p.i-1].end], p.pos(p.toks[start]), nil
}

// lookupJoin reads JOIN index ON field[, field...] after LOOKUP (kw).
// Join conditions written as expressions (ON a == b) are outside the subset.
func (p *parser) lookupJoin(kw token) (Command, *Error) {
	if !p.acceptKw("JOIN") {
		return nil, p.unsupported(kw, "LOOKUP is not supported (only LOOKUP JOIN)")
	}
	lj := &LookupJoin{At: p.pos(kw)}
	if t := p.peek(); t.kind == tString {
		p.next()
		lj.Index, lj.IndexAt = t.text, p.pos(t)
	} else {
		text, at, err := p.unquotedIndex()
		if err != nil {
			return nil, err
		}
		lj.Index, lj.IndexAt = text, at
	}
	if strings.TrimSpace(lj.Index) == "" {
		return nil, p.errf(kw, "LOOKUP JOIN needs an index name")
	}
	if !p.acceptKw("ON") {
		return nil, p.unexpected(p.peek(), "ON")
	}
	for {
		name, err := p.columnPattern(false)
		if err != nil {
			return nil, err
		}
		lj.On = append(lj.On, name)
		if t := p.peek(); t.kind == tSym && (comparisonOps[t.text] != "" || t.text == "=~") {
			return nil, p.unsupported(t, "LOOKUP JOIN with a join expression (ON %s %s ...) is not supported; name the join field", name, t.text)
		}
		if !p.acceptSym(",") {
			return lj, nil
		}
	}
}

// columnPattern reads a column name, possibly dotted and (when wild) with
// '*' wildcards, as adjacent tokens.
func (p *parser) columnPattern(wild bool) (string, *Error) {
	t := p.peek()
	if t.kind == tQuotedIdent {
		p.next()
		return t.text, nil
	}
	var b strings.Builder
	start := p.i
	for {
		c := p.peek()
		if p.i > start && c.start != p.toks[p.i-1].end {
			break
		}
		ok := c.kind == tIdent || c.kind == tInt || isSym(c, ".") || (wild && isSym(c, "*"))
		if c.kind == tQuotedIdent && p.i > start {
			ok = true
		}
		if !ok || (p.i == start && c.kind == tInt) {
			break
		}
		p.next()
		b.WriteString(c.text)
	}
	if p.i == start {
		return "", p.unexpected(p.peek(), "a column name")
	}
	name := b.String()
	if strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") || strings.Contains(name, "..") {
		return "", p.errf(p.toks[start], "invalid column name %q", name)
	}
	return name, nil
}

// fields reads "[name =] expr, ..."; aggs allows aggregate calls (checked by
// the translator, which knows where they may appear).
func (p *parser) fields(aggs bool) ([]Field, *Error) { return p.fieldsWhere(aggs, false) }

// fieldsWhere is fields, each optionally followed by WHERE and a condition
// when where is set (the aggregates of STATS).
func (p *parser) fieldsWhere(aggs, where bool) ([]Field, *Error) {
	var out []Field
	for {
		var f Field
		// name = expr: a column name followed by a single '='.
		save := p.i
		if t := p.peek(); t.kind == tIdent || t.kind == tQuotedIdent {
			name, err := p.columnPattern(false)
			if err == nil && isSym(p.peek(), "=") {
				p.next()
				f.Name = name
			} else {
				p.i = save
			}
		}
		startTok := p.peek()
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		f.Expr = e
		if f.Name == "" {
			f.Name = strings.TrimSpace(p.src[startTok.start:p.toks[p.i-1].end])
		}
		if where && p.acceptKw("WHERE") {
			if f.Where, err = p.expr(); err != nil {
				return nil, err
			}
		}
		out = append(out, f)
		if !p.acceptSym(",") {
			return out, nil
		}
	}
}

func (p *parser) expr() (Expr, *Error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > limits.MaxESQLNesting {
		return nil, p.errf(p.peek(), "expression nested too deeply")
	}
	return p.or()
}

func (p *parser) or() (Expr, *Error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for isKw(p.peek(), "OR") {
		t := p.next()
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = &Binary{At: p.pos(t), Op: "OR", L: l, R: r}
	}
	return l, nil
}

func (p *parser) and() (Expr, *Error) {
	l, err := p.not()
	if err != nil {
		return nil, err
	}
	for isKw(p.peek(), "AND") {
		t := p.next()
		r, err := p.not()
		if err != nil {
			return nil, err
		}
		l = &Binary{At: p.pos(t), Op: "AND", L: l, R: r}
	}
	return l, nil
}

func (p *parser) not() (Expr, *Error) {
	if isKw(p.peek(), "NOT") {
		t := p.next()
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > limits.MaxESQLNesting {
			return nil, p.errf(t, "expression nested too deeply")
		}
		x, err := p.not()
		if err != nil {
			return nil, err
		}
		return &Unary{At: p.pos(t), Op: "NOT", X: x}, nil
	}
	return p.predicate()
}

func (p *parser) predicate() (Expr, *Error) {
	x, err := p.comparison()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	at := p.pos(t)
	switch {
	case isKw(t, "IS"):
		p.next()
		not := p.acceptKw("NOT")
		if !p.acceptKw("NULL") {
			return nil, p.unexpected(p.peek(), "NULL")
		}
		return &IsNull{At: at, X: x, Not: not}, nil
	case isKw(t, "NOT") || isKw(t, "LIKE") || isKw(t, "RLIKE") || isKw(t, "IN"):
		not := p.acceptKw("NOT")
		op := p.next()
		switch {
		case isKw(op, "LIKE"), isKw(op, "RLIKE"):
			// One pattern, or a list of them: x LIKE ("a*", "b*").
			list := p.acceptSym("(")
			var pats []string
			for {
				pt := p.next()
				if pt.kind != tString {
					return nil, p.unexpected(pt, "a string pattern")
				}
				pats = append(pats, pt.text)
				if !list || !p.acceptSym(",") {
					break
				}
			}
			if list {
				if err := p.expectSym(")"); err != nil {
					return nil, err
				}
			}
			return &Like{At: at, X: x, Pattern: pats[0], Patterns: pats, Regex: isKw(op, "RLIKE"), Not: not}, nil
		case isKw(op, "IN"):
			if err := p.expectSym("("); err != nil {
				return nil, err
			}
			in := &In{At: at, X: x, Not: not}
			for {
				e, err := p.expr()
				if err != nil {
					return nil, err
				}
				in.List = append(in.List, e)
				if !p.acceptSym(",") {
					break
				}
			}
			if err := p.expectSym(")"); err != nil {
				return nil, err
			}
			return in, nil
		}
		return nil, p.unexpected(op, "LIKE, RLIKE or IN")
	}
	return x, nil
}

var comparisonOps = map[string]string{"==": "==", "=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}

func (p *parser) comparison() (Expr, *Error) {
	l, err := p.additive()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	if t.kind == tSym {
		if t.text == "=~" {
			return nil, p.unsupported(t, "=~ is not supported")
		}
		if op, ok := comparisonOps[t.text]; ok {
			p.next()
			r, err := p.additive()
			if err != nil {
				return nil, err
			}
			return &Binary{At: p.pos(t), Op: op, L: l, R: r}, nil
		}
	}
	return l, nil
}

func (p *parser) additive() (Expr, *Error) {
	l, err := p.multiplicative()
	if err != nil {
		return nil, err
	}
	for isSym(p.peek(), "+") || isSym(p.peek(), "-") {
		t := p.next()
		r, err := p.multiplicative()
		if err != nil {
			return nil, err
		}
		l = &Binary{At: p.pos(t), Op: t.text, L: l, R: r}
	}
	return l, nil
}

func (p *parser) multiplicative() (Expr, *Error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for isSym(p.peek(), "*") || isSym(p.peek(), "/") || isSym(p.peek(), "%") {
		t := p.next()
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		l = &Binary{At: p.pos(t), Op: t.text, L: l, R: r}
	}
	return l, nil
}

func (p *parser) unary() (Expr, *Error) {
	if isSym(p.peek(), "-") || isSym(p.peek(), "+") {
		t := p.next()
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > limits.MaxESQLNesting {
			return nil, p.errf(t, "expression nested too deeply")
		}
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		if t.text == "+" {
			return x, nil
		}
		if lit, ok := x.(*Literal); ok {
			switch v := lit.Value.(type) {
			case int64:
				lit.Value = -v
				return lit, nil
			case float64:
				lit.Value = -v
				return lit, nil
			}
		}
		return &Unary{At: p.pos(t), Op: "-", X: x}, nil
	}
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	for isSym(p.peek(), "::") {
		t := p.next()
		ty := p.next()
		if ty.kind != tIdent || !castTypes[strings.ToLower(ty.text)] {
			return nil, p.unsupported(ty, "cast to %s is not supported", ty.text)
		}
		x = &Cast{At: p.pos(t), X: x, Type: strings.ToLower(ty.text)}
	}
	return x, nil
}

func (p *parser) primary() (Expr, *Error) {
	t := p.next()
	at := p.pos(t)
	switch t.kind {
	case tInt, tFloat:
		var lit *Literal
		if t.kind == tInt {
			n, err := strconv.ParseInt(t.text, 10, 64)
			if err != nil {
				f, ferr := strconv.ParseFloat(t.text, 64)
				if ferr != nil {
					return nil, p.errf(t, "invalid number %s", t.text)
				}
				lit = &Literal{At: at, Kind: LitFloat, Value: f}
			} else {
				lit = &Literal{At: at, Kind: LitInt, Value: n}
			}
		} else {
			f, err := strconv.ParseFloat(t.text, 64)
			if err != nil {
				return nil, p.errf(t, "invalid number %s", t.text)
			}
			lit = &Literal{At: at, Kind: LitFloat, Value: f}
		}
		// A time span: integer followed by a unit qualifier.
		if u := p.peek(); u.kind == tIdent {
			if unit, ok := durationUnits[strings.ToLower(u.text)]; ok {
				p.next()
				n, isInt := lit.Value.(int64)
				if !isInt {
					return nil, p.errf(u, "time span needs an integer count, got %s", t.text)
				}
				return &Literal{At: at, Kind: LitDuration, Value: n, Unit: unit}, nil
			}
		}
		return lit, nil
	case tString:
		return &Literal{At: at, Kind: LitString, Value: t.text}, nil
	case tQuotedIdent:
		return p.identRest(t, t.text)
	case tSym:
		if t.text == "(" {
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			if err := p.expectSym(")"); err != nil {
				return nil, err
			}
			return e, nil
		}
		if t.text == "?" {
			return nil, p.unsupported(t, "query parameters (?) are not supported")
		}
		if t.text == "[" {
			return p.multiValue(t)
		}
	case tIdent:
		switch strings.ToUpper(t.text) {
		case "NULL":
			return &Literal{At: at, Kind: LitNull}, nil
		case "TRUE":
			return &Literal{At: at, Kind: LitBool, Value: true}, nil
		case "FALSE":
			return &Literal{At: at, Kind: LitBool, Value: false}, nil
		}
		if isSym(p.peek(), "(") {
			return p.call(t)
		}
		return p.identRest(t, t.text)
	}
	return nil, p.unexpected(t, "an expression")
}

// multiValue reads a multi-value literal after its "[": constants of one
// kind (numbers may mix integers and decimals, which are then decimals),
// comma-separated.
func (p *parser) multiValue(open token) (Expr, *Error) {
	lit := &Literal{At: p.pos(open), Kind: LitMulti}
	var vals []any
	kind := LitNull
	for {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		l, ok := e.(*Literal)
		if neg, isNeg := e.(*Unary); isNeg && neg.Op == "-" {
			if x, isLit := neg.X.(*Literal); isLit && (x.Kind == LitInt || x.Kind == LitFloat) {
				l, ok = &Literal{At: x.At, Kind: x.Kind, Value: negate(x.Value)}, true
			}
		}
		if !ok || l.Kind == LitNull || l.Kind == LitDuration || l.Kind == LitMulti {
			return nil, p.errf(open, "a multi-value literal holds constants (numbers, strings or booleans)")
		}
		switch {
		case kind == LitNull:
			kind = l.Kind
		case kind == l.Kind:
		case (kind == LitInt || kind == LitFloat) && (l.Kind == LitInt || l.Kind == LitFloat):
			kind = LitFloat
		default:
			return nil, p.errf(open, "a multi-value literal holds values of one type")
		}
		vals = append(vals, l.Value)
		if !p.acceptSym(",") {
			break
		}
	}
	if err := p.expectSym("]"); err != nil {
		return nil, err
	}
	if kind == LitFloat {
		for i, v := range vals {
			if n, ok := v.(int64); ok {
				vals[i] = float64(n)
			}
		}
	}
	lit.Value, lit.Unit = vals, litKindNames[kind]
	return lit, nil
}

// litKindNames name the element kind of a multi-value literal (its Unit).
var litKindNames = map[LitKind]string{LitBool: "boolean", LitInt: "long", LitFloat: "double", LitString: "keyword"}

func negate(v any) any {
	switch n := v.(type) {
	case int64:
		return -n
	case float64:
		return -n
	}
	return v
}

// identRest reads the ".part" continuations of a dotted column name.
func (p *parser) identRest(first token, name string) (Expr, *Error) {
	for isSym(p.peek(), ".") {
		p.next()
		t := p.next()
		switch t.kind {
		case tIdent, tQuotedIdent, tInt:
			name += "." + t.text
		default:
			return nil, p.unexpected(t, "a field name")
		}
	}
	return &Ident{At: p.pos(first), Name: name}, nil
}

func (p *parser) call(nameTok token) (Expr, *Error) {
	name := strings.ToUpper(nameTok.text)
	_, isFn := Functions[name]
	_, isAgg := Aggregates[name]
	if !isFn && !isAgg {
		return nil, p.unsupported(nameTok, "function %s is not supported", name)
	}
	p.next() // (
	c := &Call{At: p.pos(nameTok), Name: name}
	if name == "COUNT" && isSym(p.peek(), "*") {
		p.next()
		c.Star = true
	} else if name == "COUNT" && isSym(p.peek(), ")") {
		c.Star = true // COUNT() counts rows, as COUNT(*)
	} else if !isSym(p.peek(), ")") {
		for {
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			c.Args = append(c.Args, e)
			if !p.acceptSym(",") {
				break
			}
		}
	}
	if err := p.expectSym(")"); err != nil {
		return nil, err
	}
	arity := Functions[name]
	if isAgg {
		arity = Aggregates[name]
	}
	n := len(c.Args)
	if c.Star {
		n = 1
	}
	if n < arity[0] || (arity[1] >= 0 && n > arity[1]) {
		return nil, p.errf(nameTok, "function %s takes %s, got %d", name, arityText(arity), n)
	}
	return c, nil
}

func arityText(a [2]int) string {
	switch {
	case a[0] == a[1]:
		return fmt.Sprintf("%d argument(s)", a[0])
	case a[1] < 0:
		return fmt.Sprintf("at least %d arguments", a[0])
	}
	return fmt.Sprintf("%d to %d arguments", a[0], a[1])
}
