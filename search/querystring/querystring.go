// Package querystring parses the query of a query_string query (Lucene's
// classic syntax: field:value, AND/OR/NOT, && || ! + -, groups, quoted
// phrases, [a TO b] {a TO b}, field:>n, _exists_, wildcards) and builds
// its SQL condition: the caller's Conditions make each field's condition
// (with placeholders), the parser combines them with AND, OR and NOT as
// Lucene decides which clauses are required, optional or prohibited.
// Syntax errors are a 400 (search.ErrBadRequest).
package querystring

import (
	"strings"
	"unicode"

	"github.com/fleetgraph/fleetgraph/search"
)

// Conditions make the SQL condition of one value on one field.
type Conditions interface {
	// CheckField refuses a field name no query may name.
	CheckField(field string) error
	// Exists: the field has a value (field:*, _exists_:field).
	Exists(field string) string
	// Phrase: the words of text appear in order (a quoted value).
	Phrase(field, text string) (string, error)
	// Words: every word of text appears (a bare value).
	Words(field, text string) (string, error)
	// Range: the field compares with every bound ([a TO b], >n).
	Range(field string, bounds []Bound) (string, error)
	// Wildcard: the field matches pattern (* and ?, backslash escapes),
	// case-insensitively.
	Wildcard(field, pattern string) string
}

// Bound is one bound of a range: Op is >, >=, < or <=.
type Bound struct{ Op, Value string }

// Translate is the SQL condition of query over the default fields ("*"
// for all); and is default_operator AND.
func Translate(query string, fields []string, and bool, conds Conditions) (string, error) {
	toks, err := lex(query)
	if err != nil {
		return "", err
	}
	p := &parser{conds: conds, toks: toks, and: and, fields: fields}
	s, err := p.parseQuery(p.fields)
	if err != nil {
		return "", err
	}
	if p.pos < len(p.toks) {
		return "", search.Badf("query_string: unexpected ')'")
	}
	return s, nil
}

// token is one lexical token of a query string.
type token struct {
	kind string // term, phrase, range, (, ), :, op (AND OR NOT), mod (+ - !)
	text string
	// wild: the term holds unescaped * or ?; raw keeps its escapes.
	wild bool
	raw  string
	// range
	lo, hi         string
	loIncl, hiIncl bool
}

// lex splits a query string into tokens.
func lex(s string) ([]token, error) {
	var toks []token
	rs := []rune(s)
	special := func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(`()":[]{}^~`, r)
	}
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			i++
		case r == '(' || r == ')' || r == ':':
			toks = append(toks, token{kind: string(r)})
			i++
		case r == '^' || r == '~':
			// Boosts and fuzziness/slop are accepted and ignored.
			i++
			for i < len(rs) && (unicode.IsDigit(rs[i]) || rs[i] == '.') {
				i++
			}
		case r == '"':
			var b strings.Builder
			i++
			for ; i < len(rs) && rs[i] != '"'; i++ {
				if rs[i] == '\\' && i+1 < len(rs) {
					i++
				}
				b.WriteRune(rs[i])
			}
			if i >= len(rs) {
				return nil, search.Badf("query_string: unterminated quote")
			}
			i++
			toks = append(toks, token{kind: "phrase", text: b.String()})
		case r == '[' || r == '{':
			j := i + 1
			for ; j < len(rs) && rs[j] != ']' && rs[j] != '}'; j++ {
			}
			if j >= len(rs) {
				return nil, search.Badf("query_string: unterminated range")
			}
			inner := strings.Fields(string(rs[i+1 : j]))
			if len(inner) != 3 || inner[1] != "TO" {
				return nil, search.Badf("query_string: range must look like [a TO b]")
			}
			toks = append(toks, token{kind: "range", lo: strings.Trim(inner[0], `"`), hi: strings.Trim(inner[2], `"`),
				loIncl: r == '[', hiIncl: rs[j] == ']'})
			i = j + 1
		case (r == '&' || r == '|') && i+1 < len(rs) && rs[i+1] == r:
			op := "AND"
			if r == '|' {
				op = "OR"
			}
			toks = append(toks, token{kind: "op", text: op})
			i += 2
		case (r == '+' || r == '-' || r == '!') && (i == 0 || unicode.IsSpace(rs[i-1]) || rs[i-1] == '('):
			if r == '!' {
				toks = append(toks, token{kind: "op", text: "NOT"})
			} else {
				toks = append(toks, token{kind: "mod", text: string(r)})
			}
			i++
		default:
			var text, raw strings.Builder
			wild := false
			for ; i < len(rs) && !special(rs[i]); i++ {
				if rs[i] == '\\' && i+1 < len(rs) {
					raw.WriteRune(rs[i])
					i++
					raw.WriteRune(rs[i])
					text.WriteRune(rs[i])
					continue
				}
				if rs[i] == '*' || rs[i] == '?' {
					wild = true
				}
				raw.WriteRune(rs[i])
				text.WriteRune(rs[i])
			}
			t := text.String()
			if !wild && (t == "AND" || t == "OR" || t == "NOT") {
				toks = append(toks, token{kind: "op", text: t})
			} else {
				toks = append(toks, token{kind: "term", text: t, raw: raw.String(), wild: wild})
			}
		}
	}
	return toks, nil
}

// parser builds SQL straight from the tokens, Lucene classic style:
// AND/OR/NOT/+/- decide which clauses are required, optional or prohibited.
type parser struct {
	conds  Conditions
	toks   []token
	pos    int
	and    bool     // default_operator AND
	fields []string // default fields
}

func (p *parser) peek() *token {
	if p.pos < len(p.toks) {
		return &p.toks[p.pos]
	}
	return nil
}

const (
	occShould = iota
	occMust
	occMustNot
)

type clause struct {
	occ  int
	cond string
}

// parseQuery reads clauses until ")" or the end.
func (p *parser) parseQuery(fields []string) (string, error) {
	var clauses []clause
	for {
		t := p.peek()
		if t == nil || t.kind == ")" {
			break
		}
		conj := ""
		if t.kind == "op" && (t.text == "AND" || t.text == "OR") {
			conj = t.text
			p.pos++
		}
		mod := ""
		if t := p.peek(); t != nil && (t.kind == "mod" || (t.kind == "op" && t.text == "NOT")) {
			mod = t.text
			p.pos++
		}
		if t := p.peek(); t == nil || t.kind == ")" {
			if conj == "" && mod == "" {
				break
			}
			return "", search.Badf("query_string: operator without an operand")
		}
		cond, err := p.parseClause(fields)
		if err != nil {
			return "", err
		}
		if len(clauses) > 0 && conj == "AND" && clauses[len(clauses)-1].occ != occMustNot {
			clauses[len(clauses)-1].occ = occMust
		}
		if len(clauses) > 0 && p.and && conj == "OR" && clauses[len(clauses)-1].occ != occMustNot {
			clauses[len(clauses)-1].occ = occShould
		}
		prohibited := mod == "-" || mod == "NOT"
		var required bool
		if !p.and {
			required = mod == "+" || (conj == "AND" && !prohibited)
		} else {
			required = !prohibited && conj != "OR"
		}
		occ := occShould
		switch {
		case prohibited:
			occ = occMustNot
		case required:
			occ = occMust
		}
		clauses = append(clauses, clause{occ, cond})
	}
	if len(clauses) == 0 {
		return "TRUE", nil
	}
	var must, should, not []string
	for _, cl := range clauses {
		c := "(" + cl.cond + ")"
		switch cl.occ {
		case occMust:
			must = append(must, c)
		case occShould:
			should = append(should, c)
		default:
			not = append(not, "NOT COALESCE("+c+", false)")
		}
	}
	conds := append(must, not...)
	if len(must) == 0 && len(should) > 0 {
		conds = append(conds, "("+strings.Join(should, " OR ")+")")
	} else if len(should) > 0 {
		// Optional beside required clauses (they would only score), yet
		// their placeholders must appear in the statement.
		conds = append(conds, "("+strings.Join(should, " OR ")+" OR TRUE)")
	}
	if len(conds) == 0 {
		return "TRUE", nil
	}
	return "(" + strings.Join(conds, " AND ") + ")", nil
}

func (p *parser) parseClause(fields []string) (string, error) {
	t := p.peek()
	if t.kind == "term" && p.pos+1 < len(p.toks) && p.toks[p.pos+1].kind == ":" {
		field := t.text
		p.pos += 2
		if p.peek() == nil {
			return "", search.Badf("query_string: field %q without a value", field)
		}
		if field == "_exists_" {
			v := p.peek()
			if v.kind != "term" {
				return "", search.Badf("query_string: _exists_ needs a field name")
			}
			p.pos++
			if err := p.conds.CheckField(v.text); err != nil {
				return "", err
			}
			return p.conds.Exists(v.text), nil
		}
		if err := p.conds.CheckField(field); err != nil {
			return "", err
		}
		return p.parseValue([]string{field})
	}
	return p.parseValue(fields)
}

// parseValue reads one value (term, phrase, range or group) for fields.
func (p *parser) parseValue(fields []string) (string, error) {
	t := p.peek()
	p.pos++
	switch t.kind {
	case "(":
		s, err := p.parseQuery(fields)
		if err != nil {
			return "", err
		}
		if n := p.peek(); n == nil || n.kind != ")" {
			return "", search.Badf("query_string: missing )")
		}
		p.pos++
		return s, nil
	case "phrase":
		return p.each(fields, func(f string) (string, error) { return p.conds.Phrase(f, t.text) })
	case "range":
		var bounds []Bound
		if t.lo != "*" {
			op := ">"
			if t.loIncl {
				op = ">="
			}
			bounds = append(bounds, Bound{op, t.lo})
		}
		if t.hi != "*" {
			op := "<"
			if t.hiIncl {
				op = "<="
			}
			bounds = append(bounds, Bound{op, t.hi})
		}
		return p.each(fields, func(f string) (string, error) { return p.conds.Range(f, bounds) })
	case "term":
		text := t.text
		for _, op := range []string{">=", "<=", ">", "<"} {
			if v, ok := strings.CutPrefix(text, op); ok && v != "" {
				return p.each(fields, func(f string) (string, error) {
					return p.conds.Range(f, []Bound{{op, v}})
				})
			}
		}
		if text == "*" {
			return p.each(fields, func(f string) (string, error) { return p.conds.Exists(f), nil })
		}
		if t.wild {
			return p.each(fields, func(f string) (string, error) { return p.conds.Wildcard(f, t.raw), nil })
		}
		return p.each(fields, func(f string) (string, error) { return p.conds.Words(f, text) })
	case ":":
		return "", search.Badf("query_string: unexpected ':'")
	case ")":
		return "", search.Badf("query_string: unexpected ')'")
	}
	return "", search.Badf("query_string: unexpected %s", t.text)
}

// each ORs cond over the fields.
func (p *parser) each(fields []string, cond func(string) (string, error)) (string, error) {
	parts := make([]string, 0, len(fields))
	for _, f := range fields {
		s, err := cond(f)
		if err != nil {
			return "", err
		}
		parts = append(parts, s)
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return "(" + strings.Join(parts, " OR ") + ")", nil
}
