package pg

import (
	"encoding/json"
	"strings"
	"unicode"

	"github.com/fleetgraph/fleetgraph/search"
)

// Term-level and full-text clauses: term, terms, match, match_phrase,
// multi_match, exists, prefix and wildcard.

// termCond is exact equality of the field with one value.
func (c *compiler) termCond(field string, v any, caseInsensitive bool) (string, error) {
	name := field
	field = baseField(field)
	switch v.(type) {
	case map[string]any, []any, nil:
		return "", search.Badf("term value of %q must be a string, number or boolean", field)
	}
	if field == "created_at" {
		if t, err := c.dateValue(v, false, nil); err == nil {
			return "d.created_at = " + c.a.add(t), nil
		}
		return "FALSE", nil
	}
	if c.a.isDate(name) {
		return c.dateTerm(field, v)
	}
	if col, ok := columnOf(c.a, name, textColumns); ok {
		if caseInsensitive {
			return "lower(" + col + ") = lower(" + c.a.add(scalarText(v)) + ")", nil
		}
		return col + " = " + c.a.add(scalarText(v)), nil
	}
	if s, ok := v.(string); ok && caseInsensitive {
		return c.textPred(field, func(x string) string { return "lower(" + x + ") = lower(" + c.a.add(s) + ")" }), nil
	}
	j := jsonExpr(c.a, field)
	raw, err := json.Marshal(v)
	if err != nil {
		return "", search.Badf("bad term value")
	}
	cond := "COALESCE(" + j + " @> " + c.a.add(string(raw)) + "::jsonb, false)"
	if f, ok := numberOrNumeric(v); ok {
		if _, isBool := v.(bool); !isBool {
			cond = "(" + cond + " OR COALESCE(fg_num(" + j + ") = " + c.a.add(f) + "::float8, false))"
		}
	}
	return cond, nil
}

func (c *compiler) termQuery(body any) (string, error) {
	field, val, err := singleField("term", body)
	if err != nil {
		return "", err
	}
	v, opts := options(val, "value")
	if err := checkKeys("term", opts, "value", "case_insensitive", "boost", "_name"); err != nil {
		return "", err
	}
	ci, err := boolOption("term", opts, "case_insensitive")
	if err != nil {
		return "", err
	}
	return c.termCond(field, v, ci)
}

func (c *compiler) termsQuery(body any) (string, error) {
	field, val, err := singleField("terms", body)
	if err != nil {
		return "", err
	}
	vals, ok := val.([]any)
	if !ok {
		return "", search.Badf("terms of %q must be a list (terms lookup is not supported)", field)
	}
	if len(vals) == 0 {
		return "FALSE", nil
	}
	if len(vals) > maxTerms {
		return "", search.Badf("terms of %q has more than %d values", field, maxTerms)
	}
	for _, v := range vals {
		switch v.(type) {
		case map[string]any, []any, nil:
			return "", search.Badf("terms values of %q must be strings, numbers or booleans", field)
		}
	}
	if col, ok := columnOf(c.a, field, textColumns); ok {
		ss := make([]string, len(vals))
		for i, v := range vals {
			ss[i] = scalarText(v)
		}
		return col + " = ANY(" + c.a.add(ss) + "::text[])", nil
	}
	if c.a.isDate(field) { // created_at and date fields of the mapping: date matches
		parts := make([]string, 0, len(vals))
		for _, v := range vals {
			s, err := c.termCond(field, v, false)
			if err != nil {
				return "", err
			}
			parts = append(parts, s)
		}
		return "(" + strings.Join(parts, " OR ") + ")", nil
	}
	// One containment test against all values, plus numeric equality for
	// numbers stored as strings (and numeric strings asked for numbers).
	raws := make([]string, 0, len(vals))
	var nums []float64
	for _, v := range vals {
		switch v.(type) {
		case map[string]any, []any, nil:
			return "", search.Badf("terms values of %q must be strings, numbers or booleans", field)
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return "", search.Badf("bad terms value")
		}
		raws = append(raws, string(raw))
		if _, isBool := v.(bool); !isBool {
			if f, ok := numberOrNumeric(v); ok {
				nums = append(nums, f)
			}
		}
	}
	j := jsonExpr(c.a, field)
	cond := "COALESCE(" + j + " @> ANY(" + c.a.add(raws) + "::text[]::jsonb[]), false)"
	if len(nums) > 0 {
		cond = "(" + cond + " OR COALESCE(fg_num(" + j + ") = ANY(" + c.a.add(nums) + "::float8[]), false))"
	}
	return cond, nil
}

// maxTerms caps the values of one terms query (Elasticsearch's default
// index.max_terms_count).
const maxTerms = 65536

// tokens splits text the way a standard analyzer roughly does: runs of
// letters, digits and underscores, lower-cased.
func tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_')
	})
}

// matchOpts are the options of one full-text match.
type matchOpts struct {
	and     bool // operator and: every token
	msm     any  // minimum_should_match of the tokens (nil: one)
	phrase  bool // the tokens in order, next to each other
	prefix  bool // match_phrase_prefix: the last token is a word prefix
	zeroAll bool // zero_terms_query all: no tokens match everything
}

// matchCond is a full-text match of v on field: the tokens of v appear as
// whole words of the field's text, case-insensitively: all of them (and),
// at least minimum_should_match, or at least one; a phrase: all of them in
// order, separated only by non-word characters.
func (c *compiler) matchCond(field string, v any, o matchOpts) (string, error) {
	switch v.(type) {
	case map[string]any, []any:
		return "", search.Badf("match value of %q must be a scalar", field)
	case nil:
		return "", search.Badf("match on %q needs a query", field)
	case bool:
		if field == "*" {
			return c.textPred(field, func(x string) string { return x + " = " + c.a.add(scalarText(v)) }), nil
		}
		return c.termCond(field, v, false)
	}
	if _, ok := number(v); ok && field != "*" {
		return c.termCond(field, v, false)
	}
	if field != "*" && c.a.isDate(field) {
		// A date field: the value is one date, as on Elasticsearch.
		return c.termCond(field, v, false)
	}
	if field == indexField {
		// A keyword field: matched whole, as on Elasticsearch.
		return c.termCond(field, v, false)
	}
	toks := tokens(scalarText(v))
	if len(toks) == 0 {
		if o.zeroAll {
			return "TRUE", nil
		}
		return "FALSE", nil
	}
	if o.phrase {
		var re strings.Builder
		re.WriteString(`\m`)
		for i, t := range toks {
			if i > 0 {
				re.WriteString(`[^[:alnum:]_]+`)
			}
			re.WriteString(t)
		}
		if !o.prefix {
			re.WriteString(`\M`)
		}
		sub := c.a.add(toks[0])
		p := c.a.add(re.String())
		return c.textPred(field, func(x string) string {
			return "(strpos(lower(" + x + "), " + sub + ") > 0 AND " + x + " ~* " + p + ")"
		}), nil
	}
	min, err := o.required(len(toks))
	if err != nil {
		return "", err
	}
	parts := make([]string, 0, len(toks))
	for _, t := range toks {
		// The substring test is cheap and rules out most rows before the
		// word-boundary regular expression runs.
		sub := c.a.add(t)
		p := c.a.add(`\m` + t + `\M`)
		parts = append(parts, c.textPred(field, func(x string) string {
			return "(strpos(lower(" + x + "), " + sub + ") > 0 AND " + x + " ~* " + p + ")"
		}))
	}
	cond := c.atLeast(parts, min)
	if f, ok := numberOrNumeric(v); ok && field != "*" && baseField(field) != "created_at" {
		if !isColumn(field, textColumns) {
			cond = "(" + cond + " OR COALESCE(fg_num(" + jsonExpr(c.a, field) + ") = " + c.a.add(f) + "::float8, false))"
		}
	}
	return cond, nil
}

// required is how many of n tokens must match.
func (o matchOpts) required(n int) (int, error) {
	if o.and {
		return n, nil
	}
	if o.msm == nil {
		return 1, nil
	}
	m, err := minimumShouldMatch(o.msm, n)
	if err != nil {
		return 0, err
	}
	return max(m, 1), nil // the tokens are should clauses of a bool without must
}

// atLeast is the condition "at least min of the conditions hold".
func (c *compiler) atLeast(parts []string, min int) string {
	switch {
	case min > len(parts):
		return "FALSE"
	case min <= 1:
		return "(" + strings.Join(parts, " OR ") + ")"
	case min == len(parts):
		return "(" + strings.Join(parts, " AND ") + ")"
	}
	ints := make([]string, len(parts))
	for i, p := range parts {
		ints[i] = "COALESCE(" + p + ", false)::int"
	}
	return "((" + strings.Join(ints, " + ") + ") >= " + c.a.add(min) + ")"
}

// isZero reports whether an option value is 0 (fuzziness, slop).
func isZero(v any) bool {
	f, ok := numberOrNumeric(v)
	return ok && f == 0
}

// matchOption reads one option of match, match_phrase, match_phrase_prefix
// or multi_match into o; unknown or unsupported ones are a 400.
func matchOption(clause, k string, x any, o *matchOpts) error {
	phrase := clause == "match_phrase" || clause == "match_phrase_prefix"
	switch k {
	case "boost", "_name", "analyzer", "lenient", "auto_generate_synonyms_phrase_query":
	case "zero_terms_query":
		switch strings.ToLower(scalarText(x)) {
		case "none":
			o.zeroAll = false
		case "all":
			o.zeroAll = true
		default:
			return search.Badf("%s: zero_terms_query must be none or all", clause)
		}
	case "operator":
		if phrase {
			return search.Badf("unsupported %s option %q", clause, k)
		}
		switch strings.ToLower(scalarText(x)) {
		case "and":
			o.and = true
		case "or":
			o.and = false
		default:
			return search.Badf("%s: operator must be and or or", clause)
		}
	case "minimum_should_match":
		if phrase {
			return search.Badf("unsupported %s option %q", clause, k)
		}
		if _, err := minimumShouldMatch(x, 1); err != nil {
			return err
		}
		o.msm = x
	case "fuzziness":
		if phrase {
			return search.Badf("unsupported %s option %q", clause, k)
		}
		if !isZero(x) {
			return search.Badf("%s: fuzziness is not supported (only 0)", clause)
		}
	case "prefix_length", "fuzzy_transpositions", "fuzzy_rewrite":
		if phrase {
			return search.Badf("unsupported %s option %q", clause, k)
		}
	case "max_expansions":
		if clause == "match_phrase" {
			return search.Badf("unsupported %s option %q", clause, k)
		}
	case "slop":
		if clause == "match" {
			return search.Badf("unsupported %s option %q", clause, k)
		}
		if !isZero(x) {
			return search.Badf("%s: slop is not supported (only 0)", clause)
		}
	default:
		return search.Badf("unsupported %s option %q", clause, k)
	}
	return nil
}

func (c *compiler) matchQuery(clause string, body any) (string, error) {
	field, val, err := singleField(clause, body)
	if err != nil {
		return "", err
	}
	v, opts := options(val, "query")
	o := matchOpts{phrase: clause != "match", prefix: clause == "match_phrase_prefix"}
	for k, x := range opts {
		switch {
		case k == "query":
		case k == "type" && clause == "match":
			// The pre-6.0 form {"match": {"f": {"query": ..., "type": "phrase"}}}.
			switch scalarText(x) {
			case "phrase":
				o.phrase = true
			case "phrase_prefix":
				o.phrase, o.prefix = true, true
			case "boolean":
			default:
				return "", search.Badf("unsupported match type %q", scalarText(x))
			}
		default:
			if err := matchOption(clause, k, x, &o); err != nil {
				return "", err
			}
		}
	}
	if v == nil {
		return "", search.Badf("%s on %q needs a query", clause, field)
	}
	return c.matchCond(field, v, o)
}

func (c *compiler) multiMatch(body any) (string, error) {
	b, ok := body.(map[string]any)
	if !ok {
		return "", search.Badf("multi_match must be an object")
	}
	q := b["query"]
	if q == nil {
		return "", search.Badf("multi_match needs a query")
	}
	var fields []string
	switch f := b["fields"].(type) {
	case nil:
		fields = []string{"*"}
	case string:
		fields = []string{f}
	case []any:
		for _, x := range f {
			s, ok := x.(string)
			if !ok {
				return "", search.Badf("multi_match fields must be strings")
			}
			fields = append(fields, s)
		}
	default:
		return "", search.Badf("multi_match fields must be a list")
	}
	if len(fields) == 0 {
		fields = []string{"*"}
	}
	for i, f := range fields {
		fields[i] = stripBoost(f)
		if err := checkField(fields[i]); err != nil {
			return "", err
		}
	}
	typ := scalarText(b["type"])
	clause := "match"
	var o matchOpts
	switch typ {
	case "", "best_fields", "most_fields", "cross_fields":
	case "phrase":
		clause, o.phrase = "match_phrase", true
	case "phrase_prefix":
		clause, o.phrase, o.prefix = "match_phrase_prefix", true, true
	default:
		return "", search.Badf("unsupported multi_match type %q", typ)
	}
	for k, x := range b {
		switch k {
		case "query", "fields", "type", "tie_breaker":
		default:
			if err := matchOption(clause, k, x, &o); err != nil {
				return "", search.Badf("multi_match: %v", err)
			}
		}
	}
	if typ == "cross_fields" {
		// Every token is looked for in all the fields together.
		toks := tokens(scalarText(q))
		if _, isNum := number(q); isNum || len(toks) == 0 {
			typ = "best_fields"
		} else {
			min, err := o.required(len(toks))
			if err != nil {
				return "", err
			}
			parts := make([]string, 0, len(toks))
			for _, t := range toks {
				per := make([]string, 0, len(fields))
				for _, f := range fields {
					s, err := c.matchCond(f, t, matchOpts{})
					if err != nil {
						return "", err
					}
					per = append(per, s)
				}
				parts = append(parts, "("+strings.Join(per, " OR ")+")")
			}
			return c.atLeast(parts, min), nil
		}
	}
	parts := make([]string, 0, len(fields))
	for _, f := range fields {
		s, err := c.matchCond(f, q, o)
		if err != nil {
			return "", err
		}
		parts = append(parts, s)
	}
	return "(" + strings.Join(parts, " OR ") + ")", nil
}

func stripBoost(f string) string {
	if i := strings.LastIndexByte(f, '^'); i > 0 {
		return f[:i]
	}
	return f
}

// exists: the field has a value that is not null nor an empty list.
func (c *compiler) exists(field string) string {
	if field == indexField {
		return "TRUE"
	}
	field = baseField(field)
	if field == "*" {
		return "TRUE"
	}
	if field == "created_at" || field == "_id" {
		return "TRUE"
	}
	if col, ok := textColumns[field]; ok {
		return "(" + col + " IS NOT NULL)"
	}
	j := jsonExpr(c.a, field)
	return "COALESCE(" + j + " NOT IN ('null'::jsonb, '[]'::jsonb), false)"
}

func (c *compiler) prefixQuery(body any) (string, error) {
	field, val, err := singleField("prefix", body)
	if err != nil {
		return "", err
	}
	v, opts := options(val, "value")
	if err := checkKeys("prefix", opts, "value", "case_insensitive", "rewrite", "boost", "_name"); err != nil {
		return "", err
	}
	ci, err := boolOption("prefix", opts, "case_insensitive")
	if err != nil {
		return "", err
	}
	if !isScalarValue(v) {
		return "", search.Badf("prefix on %q needs a string value", field)
	}
	p := c.a.add(scalarText(v))
	if ci {
		return c.textPred(field, func(x string) string { return "starts_with(lower(" + x + "), lower(" + p + "))" }), nil
	}
	return c.textPred(field, func(x string) string { return "starts_with(" + x + ", " + p + ")" }), nil
}

// likePattern turns a wildcard pattern (* and ?, backslash escapes: the
// wildcard query's and ES|QL LIKE's) into a LIKE pattern with LIKE's own
// metacharacters escaped.
func likePattern(w string) string {
	var b strings.Builder
	esc := false
	for _, r := range w {
		switch {
		case esc:
			if r == '%' || r == '_' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
			esc = false
		case r == '\\':
			esc = true
		case r == '*':
			b.WriteByte('%')
		case r == '?':
			b.WriteByte('_')
		case r == '%' || r == '_':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	if esc {
		b.WriteString(`\\`)
	}
	return b.String()
}

func (c *compiler) wildcardCond(field, pattern string, ci bool) string {
	p := c.a.add(likePattern(pattern))
	op := " LIKE "
	if ci {
		op = " ILIKE "
	}
	return c.textPred(field, func(x string) string { return x + op + p })
}

func (c *compiler) wildcardQuery(body any) (string, error) {
	field, val, err := singleField("wildcard", body)
	if err != nil {
		return "", err
	}
	v, opts := options(val, "value")
	if v == nil && opts != nil {
		v = opts["wildcard"]
	}
	if err := checkKeys("wildcard", opts, "value", "wildcard", "case_insensitive", "rewrite", "boost", "_name"); err != nil {
		return "", err
	}
	ci, err := boolOption("wildcard", opts, "case_insensitive")
	if err != nil {
		return "", err
	}
	if !isScalarValue(v) {
		return "", search.Badf("wildcard on %q needs a string value", field)
	}
	return c.wildcardCond(field, scalarText(v), ci), nil
}

// dateTerm is a term on a date field of the mapping: as Elasticsearch's
// date term query, the range from the value rounded down to the value
// rounded up, so that 2016-05-03 is that whole day and epoch milliseconds
// one millisecond. Any element of an array may match.
func (c *compiler) dateTerm(field string, v any) (string, error) {
	lo, err := c.dateValue(v, false, nil)
	if err != nil {
		return "", search.Badf("failed to parse date field [%v] with format [strict_date_optional_time||epoch_millis]", v)
	}
	hi, err := c.dateValue(v, true, nil)
	if err != nil {
		return "", search.Badf("failed to parse date field [%v] with format [strict_date_optional_time||epoch_millis]", v)
	}
	j := jsonExpr(c.a, field)
	l, h := c.a.add(lo)+"::timestamptz", c.a.add(hi)+"::timestamptz"
	return "(COALESCE(fg_time(" + j + ") BETWEEN " + l + " AND " + h + ", false) OR (jsonb_typeof(" + j +
		") = 'array' AND EXISTS (SELECT 1 FROM jsonb_array_elements(" + j + ") e WHERE fg_time(e) BETWEEN " + l + " AND " + h + ")))", nil
}
