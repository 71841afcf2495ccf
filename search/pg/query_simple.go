package pg

import (
	"strings"
	"unicode"

	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/search"
)

// simple_query_string: Elasticsearch's simple query syntax over fields
// (default every field, "*"). Words match as match does; "quoted phrases"
// as match_phrase; word* is a word prefix (case-folded, on analysed text);
// + is AND, | is OR, a leading - negates, ( ) group; whitespace is
// default_operator (OR unless "and"). Operators apply left to right, as in
// Lucene's SimpleQueryParser, and the syntax never fails: a stray operator
// is ignored. minimum_should_match applies to the top level's optional
// clauses. Fuzziness (word~2) and phrase slop ("a b"~2) are refused, as
// are flags other than ALL and options this backend would ignore.
func (c *compiler) simpleQueryString(body any) (string, error) {
	b, ok := body.(map[string]any)
	if !ok {
		return "", search.Badf("simple_query_string must be an object")
	}
	q, ok := b["query"].(string)
	if !ok {
		return "", search.Badf("simple_query_string needs a query string")
	}
	fields, and := []string{"*"}, false
	var msm any
	for k, v := range b {
		switch k {
		case "query":
		case "fields":
			var err error
			if fields, err = queryFields(v); err != nil {
				return "", err
			}
		case "default_operator":
			switch strings.ToLower(scalarText(v)) {
			case "and":
				and = true
			case "or":
			default:
				return "", search.Badf("simple_query_string default_operator must be AND or OR")
			}
		case "flags":
			if f := strings.ToUpper(scalarText(v)); f != "ALL" {
				return "", search.Badf("simple_query_string flags other than ALL are not supported")
			}
		case "minimum_should_match":
			msm = v
		case "analyze_wildcard", "lenient", "boost", "_name", "auto_generate_synonyms_phrase_query", "analyzer":
		default:
			return "", search.Badf("unsupported simple_query_string option %q", k)
		}
	}
	p := &sqsParser{src: []rune(q), c: c, fields: fields, and: and}
	cond, err := p.parse(0)
	if err != nil {
		return "", err
	}
	if msm != nil {
		if cond, err = p.minimumShouldMatch(cond, msm); err != nil {
			return "", err
		}
	}
	if cond == "" {
		return "FALSE", nil // no terms: no match, as on Elasticsearch
	}
	return cond, nil
}

type sqsParser struct {
	src    []rune
	i      int
	c      *compiler
	fields []string
	and    bool
	// top and topOps are the clauses of the top level and the operators
	// joining them (AND or OR), for minimum_should_match.
	top    []string
	topOps []string
}

// minimumShouldMatch applies minimum_should_match as Elasticsearch does
// (Queries.maybeApplyMinimumShouldMatch on the parsed query): to the
// optional clauses of the top level. Clauses joined by OR (whitespace
// with the default operator OR, or |) are optional: at least the resolved
// count of them must match. Clauses joined by AND are required and one
// clause is no boolean query: minimum_should_match does not apply. A top
// level mixing both is a 400.
func (p *sqsParser) minimumShouldMatch(cond string, msm any) (string, error) {
	ors := 0
	for _, op := range p.topOps {
		if op == "OR" {
			ors++
		}
	}
	if ors == 0 {
		if _, err := minimumShouldMatch(msm, 0); err != nil {
			return "", err
		}
		return cond, nil
	}
	if ors != len(p.topOps) {
		return "", search.Badf("simple_query_string minimum_should_match over a query mixing AND and OR is not supported")
	}
	n, err := minimumShouldMatch(msm, len(p.top))
	if err != nil {
		return "", err
	}
	switch {
	case n <= 1:
		return cond, nil
	case n > len(p.top):
		return "(" + cond + " AND FALSE)", nil // its placeholders stay used
	}
	parts := make([]string, len(p.top))
	for i, c := range p.top {
		parts[i] = "COALESCE(" + c + ", false)::int"
	}
	return "((" + strings.Join(parts, " + ") + ") >= " + p.c.a.add(n) + ")", nil
}

// parse reads clauses up to the end or a closing parenthesis (depth > 0),
// combining them left to right; "" when there was no clause.
func (p *sqsParser) parse(depth int) (string, error) {
	if depth > limits.MaxQueryStringDepth {
		return "", search.Badf("simple_query_string parentheses nested more than %d deep", limits.MaxQueryStringDepth)
	}
	acc := ""
	op := "" // the operator before the next clause: AND, OR, or "" (whitespace)
	for {
		p.skipSpace()
		if p.i >= len(p.src) {
			return acc, nil
		}
		r := p.src[p.i]
		switch {
		case r == ')':
			p.i++
			if depth > 0 {
				return acc, nil
			}
			continue // stray: ignored
		case r == '|':
			p.i++
			op = "OR"
			continue
		case r == '+':
			p.i++
			op = "AND"
			continue
		}
		neg := false
		for p.i < len(p.src) && p.src[p.i] == '-' {
			neg = !neg
			p.i++
		}
		p.skipSpace()
		if p.i >= len(p.src) {
			return acc, nil
		}
		var clause string
		var err error
		switch p.src[p.i] {
		case '(':
			p.i++
			clause, err = p.parse(depth + 1)
		case '"':
			clause, err = p.phrase()
		default:
			clause, err = p.word()
		}
		if err != nil {
			return "", err
		}
		if clause == "" {
			continue
		}
		if neg {
			clause = "(NOT " + clause + ")"
		}
		if depth == 0 {
			if len(p.top) > 0 {
				p.topOps = append(p.topOps, map[bool]string{true: "AND", false: "OR"}[op == "AND" || (op == "" && p.and)])
			}
			p.top = append(p.top, clause)
		}
		switch {
		case acc == "":
			acc = clause
		case op == "AND" || (op == "" && p.and):
			acc = "(" + acc + " AND " + clause + ")"
		default:
			acc = "(" + acc + " OR " + clause + ")"
		}
		op = ""
	}
}

func (p *sqsParser) skipSpace() {
	for p.i < len(p.src) && unicode.IsSpace(p.src[p.i]) {
		p.i++
	}
}

// phrase reads "..." (a backslash escapes) and matches it as a phrase.
func (p *sqsParser) phrase() (string, error) {
	p.i++ // "
	var b strings.Builder
	for p.i < len(p.src) && p.src[p.i] != '"' {
		if p.src[p.i] == '\\' && p.i+1 < len(p.src) {
			p.i++
		}
		b.WriteRune(p.src[p.i])
		p.i++
	}
	p.i++ // closing " (or the end)
	if p.i < len(p.src) && p.src[p.i] == '~' {
		return "", search.Badf("simple_query_string phrase slop (\"...\"~N) is not supported")
	}
	return p.anyField(func(f string) (string, error) {
		return p.c.matchCond(f, b.String(), matchOpts{phrase: true})
	})
}

// word reads a word up to whitespace or an operator (a backslash escapes).
func (p *sqsParser) word() (string, error) {
	var b strings.Builder
	for p.i < len(p.src) {
		r := p.src[p.i]
		if unicode.IsSpace(r) || strings.ContainsRune(`|+()"`, r) {
			break
		}
		if r == '~' {
			return "", search.Badf("simple_query_string fuzzy terms (word~N) are not supported")
		}
		if r == '\\' && p.i+1 < len(p.src) {
			p.i++
			r = p.src[p.i]
		}
		b.WriteRune(r)
		p.i++
	}
	w := b.String()
	if w == "" {
		return "", nil
	}
	if prefix, ok := strings.CutSuffix(w, "*"); ok && prefix != "" && !strings.Contains(prefix, "*") {
		return p.anyField(func(f string) (string, error) {
			if f != "*" && !p.c.analysed(f) {
				return p.c.wildcardCond(f, prefix+"*", false), nil
			}
			pat := p.c.a.add(`(^|[^[:alnum:]_])` + wordPattern(strings.ToLower(prefix)) + `[[:alnum:]_]*`)
			return p.c.textPred(f, func(x string) string { return x + " ~* " + pat }), nil
		})
	}
	return p.anyField(func(f string) (string, error) { return p.c.matchCond(f, w, matchOpts{and: true}) })
}

// anyField is the condition on any of the fields.
func (p *sqsParser) anyField(cond func(field string) (string, error)) (string, error) {
	var ors []string
	for _, f := range p.fields {
		c, err := cond(f)
		if err != nil {
			return "", err
		}
		ors = append(ors, c)
	}
	if len(ors) == 1 {
		return ors[0], nil
	}
	return "(" + strings.Join(ors, " OR ") + ")", nil
}
