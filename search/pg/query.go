package pg

// The Query DSL subset of the PostgreSQL backend (anything else is a 400
// naming the clause or option):
//
//   - queries: match_all, match_none, bool (must, filter, should, must_not,
//     minimum_should_match as count, percentage, negative or conditional
//     spec, computed as Elasticsearch does), constant_score, dis_max, term,
//     terms (list form), match (operator, minimum_should_match,
//     zero_terms_query), match_phrase, match_phrase_prefix, multi_match
//     (best_fields, most_fields, cross_fields, phrase, phrase_prefix), range
//     (numbers, dates with date math, time_zone and format: named formats
//     and Java patterns, text), exists, prefix, wildcard, ids, query_string
//     (Lucene classic syntax: field:value, AND/OR/NOT, && || ! + -, groups,
//     quoted phrases, [a TO b] {a TO b}, field:>n, _exists_, wildcards).
//     Unknown options of a clause, and options that would change matching
//     without support here (fuzziness, slop), are a 400.
//   - Text matching is analyzer-free: a match token must appear as a whole
//     word of the field's text, case-insensitively; a phrase's tokens must
//     appear in order, separated only by non-word characters. term is exact
//     (case-sensitive unless case_insensitive). Arrays match when any
//     element does.
//   - _index (sql.go indexField) is the document's concrete index name,
//     as its hit shows it: term, terms, prefix, wildcard, exists,
//     query_string and match (whole, like a keyword), sort keys and
//     aggregations read it; a range on it is a 400.
//   - Sorting: field keys (numbers before text, missing _last/_first),
//     created_at (milliseconds), _score (constant 1.0), _doc; the row id
//     breaks ties. Hits sorted by fields only have no score (null), as on
//     Elasticsearch, unless track_scores.

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/fleetgraph/fleetgraph/search"
)

// compiler turns Query DSL clauses into SQL conditions over alias d. Every
// value from the request travels through a's placeholders; the SQL text is
// made only of fixed fragments in this file and sql.go.
type compiler struct {
	a     *args
	now   time.Time
	depth int // query clauses open (at most search.MaxDSLDepth)
}

// textColumns are the columns read for text predicates on mapped fields
// (created_at is matched as text from the document).
var textColumns = map[string]string{
	"_id":         "d.doc_id",
	"type":        "d.type",
	"client_uuid": "d.client_uuid::text",
}

// allFields is the default field of query_string ("*"): every scalar leaf.
const allLeaves = `jsonb_path_query(d.doc, 'strict $.** ? (@.type() != "object" && @.type() != "array")')`

func baseField(field string) string { return strings.TrimSuffix(field, ".keyword") }

// checkField refuses field names the translator cannot address.
func checkField(field string) error {
	if field == "" {
		return search.Badf("empty field name")
	}
	if strings.ContainsAny(field, "*?") && field != "*" {
		return search.Badf("field name patterns are not supported: %q", field)
	}
	return nil
}

// textPred applies pred (a SQL condition built around the text expression
// given to it) to the field's text value, or to any element of an array.
func (c *compiler) textPred(field string, pred func(v string) string) string {
	if col, ok := columnOf(c.a, field, textColumns); ok {
		return "(" + pred(col) + ")"
	}
	field = baseField(field)
	if field == "*" {
		return "EXISTS (SELECT 1 FROM " + allLeaves + " AS e(j) WHERE " + pred("(e.j #>> '{}')") + ")"
	}
	j := jsonExpr(c.a, field)
	// Scalars directly (cheap); arrays element by element.
	return "(CASE WHEN jsonb_typeof(" + j + ") = 'array' THEN EXISTS (SELECT 1 FROM jsonb_array_elements_text(" + j +
		") AS e(v) WHERE " + pred("e.v") + ") ELSE " + pred("("+j+" #>> '{}')") + " END)"
}

// query translates one query clause.
func (c *compiler) query(q any) (string, error) {
	m, ok := q.(map[string]any)
	if !ok {
		return "", search.Badf("query must be an object")
	}
	if len(m) == 0 {
		return "TRUE", nil
	}
	if len(m) != 1 {
		return "", search.Badf("query clause must have exactly one key, got %d", len(m))
	}
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > search.MaxDSLDepth {
		return "", search.Badf("query nested deeper than %d clauses", search.MaxDSLDepth)
	}
	for name, body := range m {
		switch name {
		case "match_all", "match_none":
			b, ok := body.(map[string]any)
			if !ok {
				return "", search.Badf("%s must be an object", name)
			}
			if err := checkKeys(name, b, "boost", "_name"); err != nil {
				return "", err
			}
			if name == "match_none" {
				return "FALSE", nil
			}
			return "TRUE", nil
		case "bool":
			return c.boolQuery(body)
		case "constant_score":
			b, ok := body.(map[string]any)
			if !ok || b["filter"] == nil {
				return "", search.Badf("constant_score needs a filter")
			}
			if err := checkKeys(name, b, "filter", "boost", "_name"); err != nil {
				return "", err
			}
			return c.query(b["filter"])
		case "dis_max":
			b, _ := body.(map[string]any)
			qs, ok := b["queries"].([]any)
			if !ok {
				return "", search.Badf("dis_max needs queries")
			}
			if err := checkKeys(name, b, "queries", "tie_breaker", "boost", "_name"); err != nil {
				return "", err
			}
			return c.combine(qs, " OR ", "FALSE")
		case "term":
			return c.termQuery(body)
		case "terms":
			return c.termsQuery(body)
		case "match", "match_phrase", "match_phrase_prefix":
			return c.matchQuery(name, body)
		case "multi_match":
			return c.multiMatch(body)
		case "range":
			return c.rangeQuery(body)
		case "exists":
			b, _ := body.(map[string]any)
			f, ok := b["field"].(string)
			if !ok {
				return "", search.Badf("exists needs a field")
			}
			if err := checkKeys(name, b, "field", "boost", "_name"); err != nil {
				return "", err
			}
			if err := checkField(f); err != nil {
				return "", err
			}
			return c.exists(f), nil
		case "prefix":
			return c.prefixQuery(body)
		case "wildcard":
			return c.wildcardQuery(body)
		case "ids":
			b, _ := body.(map[string]any)
			vals, ok := b["values"].([]any)
			if !ok {
				return "", search.Badf("ids needs values")
			}
			if err := checkKeys(name, b, "values", "boost", "_name"); err != nil {
				return "", err
			}
			if len(vals) > maxTerms {
				return "", search.Badf("ids has more than %d values", maxTerms)
			}
			ids := make([]string, 0, len(vals))
			for _, v := range vals {
				switch v.(type) {
				case string, float64, json.Number, int, int64:
				default:
					return "", search.Badf("ids values must be strings")
				}
				ids = append(ids, scalarText(v))
			}
			return "d.doc_id = ANY(" + c.a.add(ids) + "::text[])", nil
		case "query_string":
			return c.queryString(body)
		default:
			return "", search.Badf("unsupported query clause %q", name)
		}
	}
	panic("unreachable")
}

// checkKeys refuses the keys of a clause's object outside allowed.
func checkKeys(clause string, m map[string]any, allowed ...string) error {
	for k := range m {
		if !slices.Contains(allowed, k) {
			return search.Badf("unsupported %s option %q", clause, k)
		}
	}
	return nil
}

// combine joins the translations of qs with op (empty → empty).
func (c *compiler) combine(qs []any, op, empty string) (string, error) {
	if len(qs) == 0 {
		return empty, nil
	}
	parts := make([]string, 0, len(qs))
	for _, q := range qs {
		s, err := c.query(q)
		if err != nil {
			return "", err
		}
		parts = append(parts, "("+s+")")
	}
	return "(" + strings.Join(parts, op) + ")", nil
}

// clauseList reads a bool occurrence: one clause or a list.
func clauseList(v any) []any {
	switch t := v.(type) {
	case nil:
		return nil
	case []any:
		return t
	default:
		return []any{t}
	}
}

func (c *compiler) boolQuery(body any) (string, error) {
	b, ok := body.(map[string]any)
	if !ok {
		return "", search.Badf("bool must be an object")
	}
	var conds []string
	var must, should []any
	for k, v := range b {
		switch k {
		case "must", "filter":
			must = append(must, clauseList(v)...)
		case "should":
			should = clauseList(v)
		case "must_not":
			s, err := c.combine(clauseList(v), " OR ", "")
			if err != nil {
				return "", err
			}
			if s != "" {
				conds = append(conds, "NOT COALESCE("+s+", false)")
			}
		case "minimum_should_match", "boost", "_name", "adjust_pure_negative":
		default:
			return "", search.Badf("unsupported bool option %q", k)
		}
	}
	if s, err := c.combine(must, " AND ", ""); err != nil {
		return "", err
	} else if s != "" {
		conds = append(conds, s)
	}
	if len(should) > 0 {
		min := 0
		if len(must) == 0 {
			min = 1
		}
		if msm, ok := b["minimum_should_match"]; ok {
			n, err := minimumShouldMatch(msm, len(should))
			if err != nil {
				return "", err
			}
			min = n
			// Without must or filter clauses at least one should clause
			// matches, whatever minimum_should_match says (Lucene's pure
			// disjunction).
			if len(must) == 0 && min < 1 {
				min = 1
			}
		}
		if min > len(should) {
			return "FALSE", nil
		}
		if min > 0 {
			parts := make([]string, 0, len(should))
			for _, q := range should {
				s, err := c.query(q)
				if err != nil {
					return "", err
				}
				parts = append(parts, "("+s+")")
			}
			if min == 1 {
				conds = append(conds, "("+strings.Join(parts, " OR ")+")")
			} else {
				for i := range parts {
					parts[i] = "COALESCE(" + parts[i] + ", false)::int"
				}
				conds = append(conds, "("+strings.Join(parts, " + ")+") >= "+c.a.add(min))
			}
		} else {
			// Still validate the clauses (placeholders of a throwaway args).
			v := &compiler{a: &args{index: c.a.index}, now: c.now}
			if _, err := v.combine(should, " OR ", ""); err != nil {
				return "", err
			}
		}
	}
	if len(conds) == 0 {
		return "TRUE", nil
	}
	return "(" + strings.Join(conds, " AND ") + ")", nil
}

// minimumShouldMatch resolves minimum_should_match against n optional
// clauses the way Elasticsearch does (Queries.calculateMinShouldMatch): an
// integer, a percentage (rounded toward zero), negative values counting the
// clauses that may be missing, and conditional specs ("2<-25% 9<-3").
func minimumShouldMatch(v any, n int) (int, error) {
	switch v.(type) {
	case string, float64, json.Number, int, int64:
	default:
		return 0, search.Badf("minimum_should_match must be an integer or a percentage")
	}
	spec := strings.TrimSpace(scalarText(v))
	r, ok := msmSpec(spec, n, 0)
	if !ok {
		return 0, search.Badf("unsupported minimum_should_match %q", spec)
	}
	return r, nil
}

var msmLess = regexp.MustCompile(`\s*<\s*`)

func msmSpec(spec string, n, depth int) (int, bool) {
	if strings.Contains(spec, "<") {
		if depth > 0 {
			return 0, false
		}
		spec = msmLess.ReplaceAllString(spec, "<")
		result := n
		for _, part := range strings.Fields(spec) {
			upper, sub, ok := strings.Cut(part, "<")
			ub, err := strconv.Atoi(upper)
			if !ok || err != nil {
				return 0, false
			}
			if n <= ub {
				return result, true
			}
			if result, ok = msmSpec(sub, n, depth+1); !ok {
				return 0, false
			}
		}
		return result, true
	}
	pct := strings.HasSuffix(spec, "%")
	x, err := strconv.Atoi(strings.TrimSuffix(spec, "%"))
	if err != nil {
		return 0, false
	}
	var r int
	if pct {
		calc := float64(n) * float64(x) / 100
		if calc < 0 {
			r = n + int(calc) // int() truncates toward zero, like Java's cast
		} else {
			r = int(calc)
		}
	} else if x < 0 {
		r = n + x
	} else {
		r = x
	}
	return max(r, 0), true
}

// singleField reads the {field: value-or-options} shape of leaf queries.
func singleField(clause string, body any) (string, any, error) {
	m, ok := body.(map[string]any)
	if !ok {
		return "", nil, search.Badf("%s must be an object", clause)
	}
	var field string
	var val any
	n := 0
	for k, v := range m {
		if k == "boost" || k == "_name" {
			continue
		}
		field, val = k, v
		n++
	}
	if n != 1 {
		return "", nil, search.Badf("%s must name exactly one field", clause)
	}
	if err := checkField(field); err != nil {
		return "", nil, err
	}
	return field, val, nil
}

// options splits the long form {value: ..., opts} from the short form.
func options(val any, key string) (any, map[string]any) {
	if m, ok := val.(map[string]any); ok {
		return m[key], m
	}
	return val, nil
}

// boolOption reads an optional boolean option ("true"/"false" too).
func boolOption(clause string, opts map[string]any, k string) (bool, error) {
	switch v := opts[k].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	case string:
		if v == "true" || v == "false" {
			return v == "true", nil
		}
	}
	return false, search.Badf("%s: %s must be a boolean", clause, k)
}

// isScalarValue reports whether v is a string, number or boolean.
func isScalarValue(v any) bool {
	switch v.(type) {
	case nil, map[string]any, []any:
		return false
	}
	return true
}

func truthy(v any) bool {
	b, _ := v.(bool)
	if s, ok := v.(string); ok {
		return s == "true"
	}
	return b
}

// number reads a JSON number (float64, json.Number or Go integer).
func number(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, true
	case json.Number:
		f, err := t.Float64()
		return f, err == nil
	case int:
		return float64(t), true
	case int64:
		return float64(t), true
	case int32:
		return float64(t), true
	case float32:
		return float64(t), true
	}
	return 0, false
}

var numericText = regexp.MustCompile(`^\s*-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?\s*$`)

// numberOrNumeric is v as a number when it is one or a numeric string.
func numberOrNumeric(v any) (float64, bool) {
	if f, ok := number(v); ok {
		return f, true
	}
	if s, ok := v.(string); ok && numericText.MatchString(s) {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		return f, err == nil
	}
	return 0, false
}

// scalarText is a scalar's text as a document field would hold it.
func scalarText(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case json.Number:
		return t.String()
	case bool:
		return strconv.FormatBool(t)
	default:
		return fmt.Sprint(t)
	}
}

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
	if baseField(field) == "created_at" {
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

// likePattern turns a wildcard pattern (* and ?, backslash escapes) into a
// LIKE pattern with LIKE's own metacharacters escaped.
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

// qBound is one side of a range.
type qBound struct {
	op  string // >, >=, <, <=
	val any
}

func (c *compiler) rangeQuery(body any) (string, error) {
	field, bounds, opts, err := parseRange(body)
	if err != nil {
		return "", err
	}
	return c.rangeCond(field, bounds, opts)
}

// parseRange reads a range query: its field, its bounds (ordered by
// operator) and its options.
func parseRange(body any) (string, []qBound, map[string]any, error) {
	field, val, err := singleField("range", body)
	if err != nil {
		return "", nil, nil, err
	}
	opts, ok := val.(map[string]any)
	if !ok {
		return "", nil, nil, search.Badf("range of %q must be an object", field)
	}
	var bounds []qBound
	for k, v := range opts {
		switch k {
		case "gt":
			bounds = append(bounds, qBound{">", v})
		case "gte":
			bounds = append(bounds, qBound{">=", v})
		case "from":
			if v != nil {
				op := ">="
				if b, ok := opts["include_lower"].(bool); ok && !b {
					op = ">"
				}
				bounds = append(bounds, qBound{op, v})
			}
		case "lt":
			bounds = append(bounds, qBound{"<", v})
		case "lte":
			bounds = append(bounds, qBound{"<=", v})
		case "to":
			if v != nil {
				op := "<="
				if b, ok := opts["include_upper"].(bool); ok && !b {
					op = "<"
				}
				bounds = append(bounds, qBound{op, v})
			}
		case "format", "time_zone", "boost", "relation", "include_lower", "include_upper", "_name":
		default:
			return "", nil, nil, search.Badf("unsupported range option %q", k)
		}
	}
	for _, b := range bounds {
		switch b.val.(type) {
		case map[string]any, []any, nil, bool:
			return "", nil, nil, search.Badf("range bounds of %q must be numbers, dates or strings", field)
		}
	}
	sort.Slice(bounds, func(i, j int) bool { return bounds[i].op < bounds[j].op })
	return field, bounds, opts, nil
}

// rangeCond compares the field as a date (created_at, date strings), a
// number (numeric bounds) or text.
func (c *compiler) rangeCond(field string, bounds []qBound, opts map[string]any) (string, error) {
	if field == indexField {
		if len(bounds) == 0 {
			return c.exists(field), nil
		}
		return "", search.Badf("range queries on %s are not supported", indexField)
	}
	field = baseField(field)
	if len(bounds) == 0 {
		return c.exists(field), nil
	}
	if field == "*" {
		return "", search.Badf("range over all fields is not supported")
	}
	format := scalarText(opts["format"])
	df, err := parseDateFormat(format)
	if err != nil {
		return "", err
	}
	epoch := df.millis || df.seconds
	loc, err := timeZone(scalarText(opts["time_zone"]))
	if err != nil {
		return "", err
	}
	kind := "number"
	for _, b := range bounds {
		if _, ok := numberOrNumeric(b.val); !ok {
			kind = "text"
		}
	}
	if field == "created_at" || (kind == "number" && epoch) || df.custom() {
		kind = "date"
	}
	if kind == "text" {
		kind = "date"
		for _, b := range bounds {
			if _, err := c.dateValue(b.val, false, loc); err != nil {
				kind = "text"
			}
		}
	}
	var parts []string
	for _, b := range bounds {
		switch kind {
		case "number":
			f, _ := numberOrNumeric(b.val)
			parts = append(parts, numExpr(c.a, field)+" "+b.op+" "+c.a.add(f)+"::float8")
		case "date":
			t, err := c.dateBound(field, b, format, loc)
			if err != nil {
				return "", err
			}
			parts = append(parts, timeExpr(c.a, field)+" "+b.op+" "+c.a.add(t)+"::timestamptz")
		default:
			if col, ok := textColumns[field]; ok {
				parts = append(parts, col+` COLLATE "C" `+b.op+" "+c.a.add(scalarText(b.val)))
			} else {
				parts = append(parts, "("+jsonExpr(c.a, field)+` #>> '{}') COLLATE "C" `+b.op+" "+c.a.add(scalarText(b.val)))
			}
		}
	}
	return "(" + strings.Join(parts, " AND ") + ")", nil
}

// dateBound is the time a bound of a date range compares with: numbers are
// epoch milliseconds (seconds with an epoch_second format), strings dates or
// date math, rounded up for > and <=.
func (c *compiler) dateBound(field string, b qBound, format string, loc *time.Location) (time.Time, error) {
	df, err := parseDateFormat(format)
	if err != nil {
		return time.Time{}, err
	}
	if s, isStr := b.val.(string); isStr && df.custom() {
		if t, err := c.dateValueFmt(s, b.op == ">" || b.op == "<=", loc, df); err == nil {
			return t, nil
		}
	}
	if f, ok := numberOrNumeric(b.val); ok && (df.millis || df.seconds || field == "created_at") {
		if df.seconds && !df.millis {
			f *= 1000
		}
		return c.dateValue(f, false, nil)
	}
	return c.dateValueFmt(b.val, b.op == ">" || b.op == "<=", loc, df)
}

func timeZone(tz string) (*time.Location, error) {
	if tz == "" || tz == "Z" || strings.EqualFold(tz, "UTC") {
		return time.UTC, nil
	}
	if len(tz) == 6 && (tz[0] == '+' || tz[0] == '-') && tz[3] == ':' {
		h, err1 := strconv.Atoi(tz[1:3])
		m, err2 := strconv.Atoi(tz[4:])
		if err1 == nil && err2 == nil {
			off := h*3600 + m*60
			if tz[0] == '-' {
				off = -off
			}
			return time.FixedZone(tz, off), nil
		}
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, search.Badf("unknown time_zone %q", tz)
	}
	return loc, nil
}

var dateLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02T15",
	"2006-01-02",
	"2006-01",
	"2006",
}

// parseDate reads an absolute date; dateOnly reports a value without a
// time of day (rounded up to the end of its day by gt and lte).
func parseDate(s string, loc *time.Location) (t time.Time, precision string, err error) {
	if loc == nil {
		loc = time.UTC
	}
	for _, l := range dateLayouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			switch l {
			case "2006-01-02":
				return t, "d", nil
			case "2006-01":
				return t, "M", nil
			case "2006":
				return t, "y", nil
			}
			return t, "", nil
		}
	}
	return time.Time{}, "", search.Badf("cannot parse date %q", s)
}

var mathOp = regexp.MustCompile(`^([+-])(\d+)([yMwdhHms])|^/([yMwdhHms])`)

// dateValue evaluates a date or date-math expression (now-7d/d,
// 2026-01-01||+1M). roundUp moves a rounded value to the last millisecond
// of its unit, as gt and lte do.
func (c *compiler) dateValue(v any, roundUp bool, loc *time.Location) (time.Time, error) {
	return c.dateValueFmt(v, roundUp, loc, dateFormat{})
}

// dateValueFmt is dateValue reading absolute dates with the format's
// patterns first.
func (c *compiler) dateValueFmt(v any, roundUp bool, loc *time.Location, f dateFormat) (time.Time, error) {
	t, err := c.dateMath(v, roundUp, loc, f)
	if err == nil && (t.Year() < 1 || t.Year() > 9999) {
		return time.Time{}, search.Badf("date %v is out of range", v)
	}
	return t, err
}

func (c *compiler) dateMath(v any, roundUp bool, loc *time.Location, f dateFormat) (time.Time, error) {
	if loc == nil {
		loc = time.UTC
	}
	if f, ok := number(v); ok {
		return time.UnixMilli(int64(f)).UTC(), nil
	}
	s, ok := v.(string)
	if !ok {
		return time.Time{}, search.Badf("date value must be a string")
	}
	s = strings.TrimSpace(s)
	var t time.Time
	var rest string
	switch {
	case strings.HasPrefix(s, "now"):
		t, rest = c.now.In(loc), s[3:]
	default:
		anchor := s
		if i := strings.Index(s, "||"); i >= 0 {
			anchor, rest = s[:i], s[i+2:]
		}
		if numericText.MatchString(anchor) && len(anchor) > 4 {
			f, _ := strconv.ParseFloat(anchor, 64)
			t = time.UnixMilli(int64(f)).In(loc)
			break
		}
		var prec string
		var err error
		var ok bool
		if t, prec, ok = f.parse(anchor, loc); !ok {
			if t, prec, err = parseDate(anchor, loc); err != nil {
				return time.Time{}, err
			}
		}
		if rest == "" && prec != "" && roundUp {
			return endOf(t, prec), nil
		}
	}
	for rest != "" {
		m := mathOp.FindStringSubmatch(rest)
		if m == nil {
			return time.Time{}, search.Badf("cannot parse date math %q", s)
		}
		rest = rest[len(m[0]):]
		if m[4] != "" {
			t = startOf(t, m[4])
			if roundUp {
				t = endOf(t, m[4])
			}
			continue
		}
		n, err := strconv.Atoi(m[2])
		if err != nil || n > 1e6 {
			return time.Time{}, search.Badf("date math %q is out of range", s)
		}
		if m[1] == "-" {
			n = -n
		}
		switch m[3] {
		case "y":
			t = t.AddDate(n, 0, 0)
		case "M":
			t = t.AddDate(0, n, 0)
		case "w":
			t = t.AddDate(0, 0, 7*n)
		case "d":
			t = t.AddDate(0, 0, n)
		case "h", "H":
			t = t.Add(time.Duration(n) * time.Hour)
		case "m":
			t = t.Add(time.Duration(n) * time.Minute)
		case "s":
			t = t.Add(time.Duration(n) * time.Second)
		}
	}
	return t, nil
}

func startOf(t time.Time, unit string) time.Time {
	y, mo, d := t.Date()
	loc := t.Location()
	switch unit {
	case "y":
		return time.Date(y, 1, 1, 0, 0, 0, 0, loc)
	case "M":
		return time.Date(y, mo, 1, 0, 0, 0, 0, loc)
	case "w":
		wd := (int(t.Weekday()) + 6) % 7 // Monday first
		return time.Date(y, mo, d-wd, 0, 0, 0, 0, loc)
	case "d":
		return time.Date(y, mo, d, 0, 0, 0, 0, loc)
	case "h", "H":
		return time.Date(y, mo, d, t.Hour(), 0, 0, 0, loc)
	case "m":
		return time.Date(y, mo, d, t.Hour(), t.Minute(), 0, 0, loc)
	case "s":
		return time.Date(y, mo, d, t.Hour(), t.Minute(), t.Second(), 0, loc)
	}
	return t
}

// endOf is the last millisecond of the unit starting at t.
func endOf(t time.Time, unit string) time.Time {
	var next time.Time
	switch unit {
	case "y":
		next = t.AddDate(1, 0, 0)
	case "M":
		next = t.AddDate(0, 1, 0)
	case "w":
		next = t.AddDate(0, 0, 7)
	case "d":
		next = t.AddDate(0, 0, 1)
	case "h", "H":
		next = t.Add(time.Hour)
	case "m":
		next = t.Add(time.Minute)
	case "s":
		next = t.Add(time.Second)
	default:
		return t
	}
	return next.Add(-time.Millisecond)
}

// ---- sorting ----

// subKey is one ORDER BY expression with a typed comparison value.
type subKey struct {
	expr string
	desc bool
	typ  string // int, float8, text, timestamptz, bigint
}

// sortKey is one key of the request's sort.
type sortKey struct {
	field string // "_score", "_doc" or a field
	subs  []subKey
	// sel is the expression whose value is reported in the hit's sort array.
	sel string
	// kind: score, doc, time, column, json
	kind string
}

// parseSort reads the sort clause (string, object or list of either).
func (c *compiler) parseSort(v any) ([]sortKey, error) {
	var items []any
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		for _, s := range strings.Split(t, ",") {
			items = append(items, strings.TrimSpace(s))
		}
	case []any:
		items = t
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			items = append(items, map[string]any{k: t[k]})
		}
	default:
		return nil, search.Badf("sort must be a string, object or list")
	}
	var keys []sortKey
	for _, it := range items {
		var field, order, missing string
		switch t := it.(type) {
		case string:
			field = t
			if f, o, ok := strings.Cut(t, ":"); ok {
				field, order = f, o
			}
		case map[string]any:
			if len(t) != 1 {
				return nil, search.Badf("each sort object must name one field")
			}
			for k, o := range t {
				field = k
				switch ov := o.(type) {
				case string:
					order = ov
				case map[string]any:
					for ok2, x := range ov {
						switch ok2 {
						case "order":
							order = scalarText(x)
						case "missing":
							missing = scalarText(x)
						case "unmapped_type", "format", "numeric_type", "mode":
						default:
							return nil, search.Badf("unsupported sort option %q", ok2)
						}
					}
				default:
					return nil, search.Badf("bad sort order for %q", k)
				}
			}
		default:
			return nil, search.Badf("bad sort entry")
		}
		key, err := c.sortKey(field, order, missing)
		if err != nil {
			return nil, err
		}
		keys = append(keys, key)
	}
	return keys, nil
}

func (c *compiler) sortKey(field, order, missing string) (sortKey, error) {
	if field == "" {
		return sortKey{}, search.Badf("empty sort field")
	}
	if err := checkField(field); err != nil || field == "*" {
		return sortKey{}, search.Badf("bad sort field %q", field)
	}
	desc := false
	switch strings.ToLower(order) {
	case "", "asc":
		desc = field == "_score"
	case "desc":
		desc = true
	default:
		return sortKey{}, search.Badf("bad sort order %q", order)
	}
	missingFirst := false
	switch missing {
	case "", "_last":
	case "_first":
		missingFirst = true
	default:
		return sortKey{}, search.Badf("unsupported sort missing value %q (only _first and _last)", missing)
	}
	f := baseField(field)
	switch {
	case f == "_score":
		return sortKey{field: "_score", kind: "score"}, nil
	case f == "_doc":
		return sortKey{field: "_doc", kind: "doc", sel: "d.id", subs: []subKey{{"d.id", desc, "bigint"}}}, nil
	case f == "created_at":
		// Raw column order (the indexes serve it); sort values and
		// search_after work in milliseconds (see msTime).
		return sortKey{field: f, kind: "time", sel: "d.created_at", subs: []subKey{{"d.created_at", desc, "timestamptz"}}}, nil
	}
	if col, ok := columnOf(c.a, field, textColumns); ok {
		return sortKey{field: f, kind: "column", sel: col, subs: []subKey{
			{"(CASE WHEN " + col + " IS NULL THEN 1 ELSE 0 END)", missingFirst, "int"},
			{"COALESCE(" + col + `, '') COLLATE "C"`, desc, "text"},
		}}, nil
	}
	v := jsonExpr(c.a, f)
	present := "(" + v + " IS NOT NULL AND " + v + " <> 'null'::jsonb)"
	return sortKey{field: f, kind: "json", sel: v, subs: []subKey{
		{"(CASE WHEN " + present + " THEN 0 ELSE 1 END)", missingFirst, "int"},
		{"(CASE WHEN fg_num(" + v + ") IS NULL THEN 1 ELSE 0 END)", false, "int"},
		{"COALESCE(fg_num(" + v + "), 0)", desc, "float8"},
		{"(CASE WHEN fg_num(" + v + ") IS NULL THEN COALESCE(" + v + ` #>> '{}', '') ELSE '' END) COLLATE "C"`, desc, "text"},
	}}, nil
}

// afterValues converts the user's search_after value of a key into the
// values of its sub-keys.
func (k sortKey) afterValues(v any) ([]any, error) {
	switch k.kind {
	case "score":
		return nil, nil
	case "doc":
		f, ok := numberOrNumeric(v)
		if !ok {
			return nil, search.Badf("search_after value for _doc must be a number")
		}
		return []any{int64(f)}, nil
	case "time":
		var c compiler
		c.now = time.Now()
		t, err := c.dateValue(v, false, nil)
		if err != nil {
			return nil, search.Badf("search_after value for %q must be a date or epoch milliseconds", k.field)
		}
		return []any{msTime{t}}, nil
	case "column":
		if v == nil {
			return []any{1, ""}, nil
		}
		return []any{0, scalarText(v)}, nil
	}
	if v == nil {
		return []any{1, 1, 0.0, ""}, nil
	}
	if f, ok := numberOrNumeric(v); ok {
		if _, isBool := v.(bool); !isBool {
			return []any{0, 0, f, ""}, nil
		}
	}
	var text string
	switch t := v.(type) {
	case string:
		text = t
	case bool:
		text = strconv.FormatBool(t)
	default:
		return nil, search.Badf("search_after values must be scalars")
	}
	return []any{0, 1, 0.0, text}, nil
}

// msTime is a search_after time given in milliseconds: it stands for the
// whole millisecond, whatever finer digits the stored values have.
type msTime struct{ t time.Time }

// afterCond is the keyset condition "row comes after vals" over subs.
func (c *compiler) afterCond(subs []subKey, vals []any) string {
	var ors []string
	for i := range subs {
		var ands []string
		for j := 0; j < i; j++ {
			if m, ok := vals[j].(msTime); ok {
				ands = append(ands, "("+subs[j].expr+" >= "+c.a.add(m.t)+"::timestamptz AND "+
					subs[j].expr+" < "+c.a.add(m.t.Add(time.Millisecond))+"::timestamptz)")
				continue
			}
			ands = append(ands, subs[j].expr+" = "+c.typed(subs[j], vals[j]))
		}
		if m, ok := vals[i].(msTime); ok {
			if subs[i].desc {
				ands = append(ands, subs[i].expr+" < "+c.a.add(m.t)+"::timestamptz")
			} else {
				ands = append(ands, subs[i].expr+" >= "+c.a.add(m.t.Add(time.Millisecond))+"::timestamptz")
			}
		} else {
			op := " > "
			if subs[i].desc {
				op = " < "
			}
			ands = append(ands, subs[i].expr+op+c.typed(subs[i], vals[i]))
		}
		ors = append(ors, "("+strings.Join(ands, " AND ")+")")
	}
	if len(ors) == 0 {
		return "TRUE"
	}
	return "(" + strings.Join(ors, " OR ") + ")"
}

// typed is a placeholder for v cast to the sub-key's type.
func (c *compiler) typed(s subKey, v any) string {
	switch s.typ {
	case "text":
		return c.a.add(scalarText(v)) + ` COLLATE "C"`
	case "int":
		f, _ := number(v)
		return c.a.add(int32(f)) + "::int"
	case "bigint":
		f, _ := number(v)
		if i, ok := v.(int64); ok {
			return c.a.add(i) + "::bigint"
		}
		return c.a.add(int64(f)) + "::bigint"
	case "float8":
		f, _ := number(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = 0
		}
		return c.a.add(f) + "::float8"
	case "timestamptz":
		switch t := v.(type) {
		case time.Time:
			return c.a.add(t) + "::timestamptz"
		case string:
			tt, err := time.Parse(time.RFC3339Nano, t)
			if err == nil {
				return c.a.add(tt) + "::timestamptz"
			}
		}
		return c.a.add(time.Time{}) + "::timestamptz"
	}
	return c.a.add(v)
}

// ---- _source filtering ----

// srcFilter is the _source clause: nil keeps everything.
type srcFilter struct {
	none               bool
	includes, excludes []string
}

func stringList(v any) ([]string, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []string{t}, nil
	case []any:
		out := make([]string, 0, len(t))
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				return nil, search.Badf("_source patterns must be strings")
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, search.Badf("_source patterns must be a string or a list")
}

func parseSource(v any) (*srcFilter, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case bool:
		if t {
			return nil, nil
		}
		return &srcFilter{none: true}, nil
	case string, []any:
		inc, err := stringList(t)
		return &srcFilter{includes: inc}, err
	case map[string]any:
		f := &srcFilter{}
		var err error
		for k, x := range t {
			switch k {
			case "includes", "include":
				if f.includes, err = stringList(x); err != nil {
					return nil, err
				}
			case "excludes", "exclude":
				if f.excludes, err = stringList(x); err != nil {
					return nil, err
				}
			default:
				return nil, search.Badf("unsupported _source option %q", k)
			}
		}
		return f, nil
	}
	return nil, search.Badf("bad _source")
}

// apply filters one source document.
func (f *srcFilter) apply(doc map[string]any) map[string]any {
	if f == nil {
		return doc
	}
	if f.none {
		return nil
	}
	return f.filter(doc, "", len(f.includes) == 0)
}

func (f *srcFilter) filter(obj map[string]any, prefix string, included bool) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		p := prefix + k
		if globMatchAny(f.excludes, p) {
			continue
		}
		inc := included || globMatchAny(f.includes, p)
		switch t := v.(type) {
		case map[string]any:
			sub := f.filter(t, p+".", inc)
			if len(sub) > 0 || (inc && len(t) == 0) {
				out[k] = sub
			}
		case []any:
			if inc {
				out[k] = f.filterList(t, p+".", true)
			} else if l := f.filterList(t, p+".", false); len(l) > 0 {
				out[k] = l
			}
		default:
			if inc {
				out[k] = v
			}
		}
	}
	return out
}

func (f *srcFilter) filterList(l []any, prefix string, included bool) []any {
	out := make([]any, 0, len(l))
	for _, v := range l {
		if m, ok := v.(map[string]any); ok {
			if sub := f.filter(m, prefix, included); len(sub) > 0 || included {
				out = append(out, sub)
			}
		} else if included {
			out = append(out, v)
		}
	}
	return out
}

// ---- query_string ----

// qsToken is one lexical token of a query string.
type qsToken struct {
	kind string // term, phrase, range, (, ), :, op (AND OR NOT), mod (+ - !)
	text string
	// wild: the term holds unescaped * or ?; raw keeps its escapes.
	wild bool
	raw  string
	// range
	lo, hi         string
	loIncl, hiIncl bool
}

func qsLex(s string) ([]qsToken, error) {
	var toks []qsToken
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
			toks = append(toks, qsToken{kind: string(r)})
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
			toks = append(toks, qsToken{kind: "phrase", text: b.String()})
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
			toks = append(toks, qsToken{kind: "range", lo: strings.Trim(inner[0], `"`), hi: strings.Trim(inner[2], `"`),
				loIncl: r == '[', hiIncl: rs[j] == ']'})
			i = j + 1
		case (r == '&' || r == '|') && i+1 < len(rs) && rs[i+1] == r:
			op := "AND"
			if r == '|' {
				op = "OR"
			}
			toks = append(toks, qsToken{kind: "op", text: op})
			i += 2
		case (r == '+' || r == '-' || r == '!') && (i == 0 || unicode.IsSpace(rs[i-1]) || rs[i-1] == '('):
			if r == '!' {
				toks = append(toks, qsToken{kind: "op", text: "NOT"})
			} else {
				toks = append(toks, qsToken{kind: "mod", text: string(r)})
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
				toks = append(toks, qsToken{kind: "op", text: t})
			} else {
				toks = append(toks, qsToken{kind: "term", text: t, raw: raw.String(), wild: wild})
			}
		}
	}
	return toks, nil
}

// qsParser builds SQL straight from the tokens, Lucene classic style:
// AND/OR/NOT/+/- decide which clauses are required, optional or prohibited.
type qsParser struct {
	c      *compiler
	toks   []qsToken
	pos    int
	and    bool     // default_operator AND
	fields []string // default fields
}

func (p *qsParser) peek() *qsToken {
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

type qsClause struct {
	occ  int
	cond string
}

// parseQuery reads clauses until ")" or the end.
func (p *qsParser) parseQuery(fields []string) (string, error) {
	var clauses []qsClause
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
		clauses = append(clauses, qsClause{occ, cond})
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

func (p *qsParser) parseClause(fields []string) (string, error) {
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
			if err := checkField(v.text); err != nil {
				return "", err
			}
			return p.c.exists(v.text), nil
		}
		if err := checkField(field); err != nil {
			return "", err
		}
		return p.parseValue([]string{field})
	}
	return p.parseValue(fields)
}

// parseValue reads one value (term, phrase, range or group) for fields.
func (p *qsParser) parseValue(fields []string) (string, error) {
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
		return p.each(fields, func(f string) (string, error) { return p.c.matchCond(f, t.text, matchOpts{phrase: true}) })
	case "range":
		var bounds []qBound
		if t.lo != "*" {
			op := ">"
			if t.loIncl {
				op = ">="
			}
			bounds = append(bounds, qBound{op, t.lo})
		}
		if t.hi != "*" {
			op := "<"
			if t.hiIncl {
				op = "<="
			}
			bounds = append(bounds, qBound{op, t.hi})
		}
		return p.each(fields, func(f string) (string, error) { return p.c.rangeCond(f, bounds, nil) })
	case "term":
		text := t.text
		for _, op := range []string{">=", "<=", ">", "<"} {
			if v, ok := strings.CutPrefix(text, op); ok && v != "" {
				return p.each(fields, func(f string) (string, error) {
					return p.c.rangeCond(f, []qBound{{op, v}}, nil)
				})
			}
		}
		if text == "*" {
			return p.each(fields, func(f string) (string, error) { return p.c.exists(f), nil })
		}
		if t.wild {
			return p.each(fields, func(f string) (string, error) { return p.c.wildcardCond(f, t.raw, true), nil })
		}
		return p.each(fields, func(f string) (string, error) { return p.c.matchCond(f, text, matchOpts{and: true}) })
	case ":":
		return "", search.Badf("query_string: unexpected ':'")
	case ")":
		return "", search.Badf("query_string: unexpected ')'")
	}
	return "", search.Badf("query_string: unexpected %s", t.text)
}

// each ORs cond over the fields.
func (p *qsParser) each(fields []string, cond func(string) (string, error)) (string, error) {
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

func (c *compiler) queryString(body any) (string, error) {
	b, ok := body.(map[string]any)
	if !ok {
		return "", search.Badf("query_string must be an object")
	}
	q, ok := b["query"].(string)
	if !ok {
		return "", search.Badf("query_string needs a query string")
	}
	p := &qsParser{c: c, fields: []string{"*"}}
	for k, v := range b {
		switch k {
		case "query":
		case "default_field":
			f := scalarText(v)
			if err := checkField(f); err != nil {
				return "", err
			}
			p.fields = []string{f}
		case "fields":
			fs, err := stringList(v)
			if err != nil {
				return "", err
			}
			p.fields = nil
			for _, f := range fs {
				f = stripBoost(f)
				if err := checkField(f); err != nil {
					return "", err
				}
				p.fields = append(p.fields, f)
			}
			if len(p.fields) == 0 {
				p.fields = []string{"*"}
			}
		case "default_operator":
			p.and = strings.EqualFold(scalarText(v), "and")
		case "analyze_wildcard", "lenient", "boost", "allow_leading_wildcard", "time_zone", "_name",
			"auto_generate_synonyms_phrase_query", "escape", "type", "tie_breaker", "analyzer", "quote_analyzer",
			"phrase_slop", "fuzziness", "fuzzy_max_expansions", "fuzzy_prefix_length", "fuzzy_transpositions",
			"rewrite", "max_determinized_states", "quote_field_suffix", "enable_position_increments":
		default:
			return "", search.Badf("unsupported query_string option %q", k)
		}
	}
	toks, err := qsLex(q)
	if err != nil {
		return "", err
	}
	p.toks = toks
	s, err := p.parseQuery(p.fields)
	if err != nil {
		return "", err
	}
	if p.pos < len(p.toks) {
		return "", search.Badf("query_string: unexpected ')'")
	}
	return s, nil
}

func init() {
	// Filter aggregations translate their queries the same way.
	translateQuery = func(a *args, _ search.Scope, q map[string]any) (string, error) {
		c := &compiler{a: a, now: time.Now()}
		cond, err := c.query(q)
		if err != nil {
			return "", err
		}
		// Never NULL, whatever context the aggregation puts it in.
		return "COALESCE((" + cond + "), false)", nil
	}
}

// dateFormat is a range's or date_histogram's format: "||"-separated
// Elasticsearch named formats and Java date patterns.
type dateFormat struct {
	layouts []dateLayout // the patterns, as Go layouts
	millis  bool         // epoch_millis
	seconds bool         // epoch_second
}

// dateLayout is a Go layout and the precision of its dates ("" for a time
// of day, else the date-math unit: d, M or y).
type dateLayout struct{ layout, prec string }

// custom reports whether the format has patterns of its own (not only the
// ISO 8601 formats every date is read with).
func (f dateFormat) custom() bool { return len(f.layouts) > 0 }

// Named formats: "" reads ISO 8601 like the default.
var namedFormats = map[string]string{
	"strict_date_optional_time": "", "date_optional_time": "", "strict_date_optional_time_nanos": "",
	"date_time": "", "strict_date_time": "", "date_time_no_millis": "", "strict_date_time_no_millis": "",
	"iso8601": "",
	"date":    "2006-01-02", "strict_date": "2006-01-02", "year_month_day": "2006-01-02", "strict_year_month_day": "2006-01-02",
	"basic_date": "20060102", "year_month": "2006-01", "strict_year_month": "2006-01", "year": "2006", "strict_year": "2006",
	"date_hour_minute_second": "2006-01-02T15:04:05", "strict_date_hour_minute_second": "2006-01-02T15:04:05",
	"date_hour_minute_second_millis": "2006-01-02T15:04:05.000", "strict_date_hour_minute_second_millis": "2006-01-02T15:04:05.000",
	"date_hour_minute": "2006-01-02T15:04", "strict_date_hour_minute": "2006-01-02T15:04",
	"date_hour": "2006-01-02T15", "strict_date_hour": "2006-01-02T15",
	"basic_date_time": "20060102T150405.000Z0700", "basic_date_time_no_millis": "20060102T150405Z0700",
}

// parseDateFormat reads a format; unknown names and pattern letters are a 400.
func parseDateFormat(format string) (dateFormat, error) {
	var f dateFormat
	if strings.TrimSpace(format) == "" {
		return f, nil
	}
	for _, part := range strings.Split(format, "||") {
		part = strings.TrimSpace(part)
		switch part {
		case "epoch_millis":
			f.millis = true
			continue
		case "epoch_second":
			f.seconds = true
			continue
		}
		if l, ok := namedFormats[part]; ok {
			if l != "" {
				f.layouts = append(f.layouts, dateLayout{l, layoutPrecision(l)})
			}
			continue
		}
		l, err := javaLayout(part)
		if err != nil {
			return f, err
		}
		f.layouts = append(f.layouts, dateLayout{l, layoutPrecision(l)})
	}
	return f, nil
}

// javaLayout turns a Java DateTimeFormatter pattern into a Go layout.
func javaLayout(p string) (string, error) {
	var b strings.Builder
	rs := []rune(p)
	for i := 0; i < len(rs); {
		r := rs[i]
		if r == '\'' {
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j >= len(rs) {
				return "", search.Badf("unsupported date format %q (unterminated quote)", p)
			}
			lit := string(rs[i+1 : j])
			if strings.ContainsAny(lit, "0123456789") && lit != "" {
				return "", search.Badf("unsupported date format %q (digits in a literal)", p)
			}
			b.WriteString(lit)
			i = j + 1
			continue
		}
		if !unicode.IsLetter(r) {
			if unicode.IsDigit(r) {
				return "", search.Badf("unsupported date format %q", p)
			}
			b.WriteRune(r)
			i++
			continue
		}
		j := i
		for j < len(rs) && rs[j] == r {
			j++
		}
		n := j - i
		var out string
		switch {
		case (r == 'y' || r == 'u') && n == 2:
			out = "06"
		case r == 'y' || r == 'u':
			out = "2006"
		case r == 'M' && n == 1:
			out = "1"
		case r == 'M' && n == 2:
			out = "01"
		case r == 'M' && n == 3:
			out = "Jan"
		case r == 'M':
			out = "January"
		case r == 'd' && n == 1:
			out = "2"
		case r == 'd' && n == 2:
			out = "02"
		case r == 'H' && n == 2:
			out = "15"
		case r == 'h' && n == 1:
			out = "3"
		case r == 'h' && n == 2:
			out = "03"
		case r == 'm' && n == 1:
			out = "4"
		case r == 'm' && n == 2:
			out = "04"
		case r == 's' && n == 1:
			out = "5"
		case r == 's' && n == 2:
			out = "05"
		case r == 'S' && n <= 9:
			out = strings.Repeat("0", n)
			if !strings.HasSuffix(b.String(), ".") && !strings.HasSuffix(b.String(), ",") {
				return "", search.Badf("unsupported date format %q (fractions must follow '.')", p)
			}
		case r == 'a' && n == 1:
			out = "PM"
		case r == 'E' && n <= 3:
			out = "Mon"
		case r == 'E':
			out = "Monday"
		case (r == 'X' || r == 'x') && n == 1:
			out = "Z07"
		case (r == 'X' || r == 'x') && n == 2:
			out = "Z0700"
		case r == 'X' || r == 'Z' && n == 5:
			out = "Z07:00"
		case r == 'x':
			out = "-07:00"
		case r == 'Z':
			out = "-0700"
		default:
			return "", search.Badf("unsupported date format %q (pattern letter %q)", p, string(rs[i:j]))
		}
		b.WriteString(out)
		i = j
	}
	return b.String(), nil
}

// layoutPrecision is the unit a date of layout l is precise to: "" when
// it has a time of day, else d, M or y.
func layoutPrecision(l string) string {
	switch {
	case strings.Contains(l, "15") || strings.Contains(l, "03") || strings.Contains(l, "3:") || strings.Contains(l, "04"):
		return ""
	case strings.Contains(strings.ReplaceAll(l, "2006", ""), "2"):
		return "d"
	case strings.Contains(strings.ReplaceAll(l, "2006", ""), "1") || strings.Contains(l, "Jan"):
		return "M"
	}
	return "y"
}

// parse reads an absolute date with the format's layouts.
func (f dateFormat) parse(s string, loc *time.Location) (time.Time, string, bool) {
	for _, l := range f.layouts {
		if t, err := time.ParseInLocation(l.layout, s, loc); err == nil {
			return t, l.prec, true
		}
	}
	return time.Time{}, "", false
}
