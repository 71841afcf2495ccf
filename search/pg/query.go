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
//     quoted phrases, [a TO b] {a TO b}, field:>n, _exists_, wildcards;
//     on analysed text a wildcard matches a word, case-folded),
//     simple_query_string (query_simple.go). Unknown options of a clause,
//     and options that would change matching without support here
//     (fuzziness, slop), are a 400; so is exists on _source.
//   - The mapping (mapping.go): term, terms and match on a date field are
//     date matches; sort values of a date field are epoch milliseconds.
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
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/search"
)

// compiler turns Query DSL clauses into SQL conditions over alias d. Every
// value from the request travels through a's placeholders; the SQL text is
// made only of fixed fragments in this file and sql.go.
type compiler struct {
	a     *args
	now   time.Time
	depth int // query clauses open (at most search.MaxDSLDepth)
	// patterns prices the text conditions compiled (textPred): the
	// matches PostgreSQL makes on each document (search.MaxQueryPatterns).
	patterns int
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
	c.patterns++
	if col, ok := columnOf(c.a, field, textColumns); ok {
		return "(" + pred(col) + ")"
	}
	field = baseField(field)
	if field == "*" {
		c.patterns += limits.AllFieldsPatterns - 1
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
	if c.depth > limits.MaxDSLDepth {
		return "", search.Badf("query nested deeper than %d clauses", limits.MaxDSLDepth)
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
			if f == "_source" {
				return "", search.Badf("exists on [_source] is not supported: the _source field is not searchable (as on Elasticsearch)")
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
		case "simple_query_string":
			return c.simpleQueryString(body)
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
