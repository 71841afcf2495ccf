package pg

import (
	"strings"

	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/querystring"
	"github.com/fleetgraph/fleetgraph/store"
)

// query_string: its options, and the per-field conditions the
// querystring parser combines.

// queryString reads a query_string query's options and translates its query.
func (c *compiler) queryString(body any) (string, error) {
	b, ok := body.(map[string]any)
	if !ok {
		return "", search.Badf("query_string must be an object")
	}
	q, ok := b["query"].(string)
	if !ok {
		return "", search.Badf("query_string needs a query string")
	}
	fields, and := []string{"*"}, false
	for k, v := range b {
		switch k {
		case "query":
		case "default_field":
			f := scalarText(v)
			if err := checkField(f); err != nil {
				return "", err
			}
			fields = []string{f}
		case "fields":
			var err error
			if fields, err = queryFields(v); err != nil {
				return "", err
			}
		case "default_operator":
			and = strings.EqualFold(scalarText(v), "and")
		case "analyze_wildcard", "lenient", "boost", "allow_leading_wildcard", "time_zone", "_name",
			"auto_generate_synonyms_phrase_query", "escape", "type", "tie_breaker", "analyzer", "quote_analyzer",
			"phrase_slop", "fuzziness", "fuzzy_max_expansions", "fuzzy_prefix_length", "fuzzy_transpositions",
			"rewrite", "max_determinized_states", "quote_field_suffix", "enable_position_increments":
		default:
			return "", search.Badf("unsupported query_string option %q", k)
		}
	}
	return querystring.Translate(q, fields, and, qsConditions{c})
}

// queryFields reads the fields option of query_string and
// simple_query_string: field names, boosts (^n) dropped; none is every
// field ("*").
func queryFields(v any) ([]string, error) {
	fs, err := stringList(v)
	if err != nil {
		return nil, err
	}
	var fields []string
	for _, f := range fs {
		f = stripBoost(f)
		if err := checkField(f); err != nil {
			return nil, err
		}
		fields = append(fields, f)
	}
	if len(fields) == 0 {
		fields = []string{"*"}
	}
	return fields, nil
}

// qsConditions make query_string's per-field conditions with the compiler.
type qsConditions struct{ c *compiler }

func (q qsConditions) CheckField(field string) error { return checkField(field) }
func (q qsConditions) Exists(field string) string    { return q.c.exists(field) }
func (q qsConditions) Phrase(field, text string) (string, error) {
	return q.c.matchCond(field, text, matchOpts{phrase: true})
}
func (q qsConditions) Words(field, text string) (string, error) {
	return q.c.matchCond(field, text, matchOpts{and: true})
}
func (q qsConditions) Wildcard(field, pattern string) string {
	if q.c.analysed(field) {
		// Analysed text: the pattern, normalised to lower case as
		// Elasticsearch does, matches a word (field:BA* matches "foo bar").
		p := q.c.a.add(`(^|[^[:alnum:]_])` + wordPattern(strings.ToLower(pattern)) + `($|[^[:alnum:]_])`)
		return q.c.textPred(field, func(x string) string { return x + " ~* " + p })
	}
	return q.c.wildcardCond(field, pattern, true)
}

// analysed reports whether field is text Elasticsearch analyses into words:
// not a .keyword sub-field, a column or _index, and text in the mapping (or
// unmapped).
func (c *compiler) analysed(field string) bool {
	if strings.HasSuffix(field, ".keyword") || field == indexField || isColumn(field, textColumns) || baseField(field) == "created_at" {
		return false
	}
	t := c.a.types.of(field)
	return t == "" || t == store.FieldText
}

// wordPattern is a wildcard pattern (* and ?) as a regular expression over
// one word.
func wordPattern(p string) string {
	var b strings.Builder
	for _, r := range p {
		switch {
		case r == '*':
			b.WriteString(`[[:alnum:]_]*`)
		case r == '?':
			b.WriteString(`[[:alnum:]_]`)
		case strings.ContainsRune(`\.+()[]{}|^$-`, r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
func (q qsConditions) Range(field string, bounds []querystring.Bound) (string, error) {
	bs := make([]qBound, len(bounds))
	for i, b := range bounds {
		bs[i] = qBound{b.Op, b.Value}
	}
	return q.c.rangeCond(field, bs, nil)
}
