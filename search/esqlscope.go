package search

import (
	"slices"
	"strings"

	"github.com/fleetgraph/fleetgraph/limits"
)

// ES|QL scope check.
//
// CheckESQL reads a piped query with a small lexer that follows the
// Elasticsearch ES|QL lexer where it matters for scoping (comments, strings,
// quoted identifiers, the FROM / LOOKUP JOIN source syntax) and refuses
// whatever it cannot read unambiguously. The rules:
//
//   - The query must begin (after whitespace and comments) with FROM; every
//     other source command (ROW, SHOW, TS, METRICS, EXPLAIN, SET, ...) and a
//     FROM anywhere else (after a pipe, in a subquery "(FROM ...)") is refused.
//   - Every index expression of FROM (unquoted, "quoted", """triple-quoted""",
//     a quoted list "a,b", an exclusion -name, a date math name
//     <name-{now/d}>, with a ::data or ::failures selector) must lie inside
//     the data owner's indices (see inESQLScope). Remote indices
//     (cluster:index), other selectors, backslashes, non-ASCII and every
//     character outside [a-z0-9._*-] (plus the date math syntax) are refused.
//   - LOOKUP JOIN must name, without wildcard or cluster, one of the known
//     lookup indices the server passes in (LookupIndices), which must itself
//     start with analytics-production-<slug>-. Other joins (LEFT/RIGHT/FULL
//     JOIN) and LOOKUP without JOIN are refused.
//   - A lookup index is read with LOOKUP JOIN only: FROM naming one (of
//     LookupIndices(slug) or those passed in) is refused, and on
//     Elasticsearch ESQLForElasticsearch excludes it from the FROM patterns
//     that would match it, as the embedded backend's patterns never do.
//   - ENRICH passes the check (the caller answers 400 "ENRICH is not
//     supported"; see ESQLUsesEnrich). COMPLETION and RERANK (model
//     inference) are refused.
//   - Processing commands must be known ES|QL commands; unknown words at a
//     command position, unterminated strings or comments, nested block
//     comments, unbalanced parentheses and ';' are refused, so that no
//     reading of the query other than this one can see a different FROM.
//
// Scope of an index expression: the spec describes the data owner's pattern
// as analytics-production-<data_owner>*. Read literally as a glob that
// admits the indices of every data owner whose slug merely starts with the
// same letters (acme and acmeeu, acme2, acme_eu). The check therefore
// accepts exactly two forms:
//   - the spec's pattern itself, analytics-production-<slug>*, which the
//     backends narrow to this data owner: the embedded backend reads only the
//     data owner's rows, and on Elasticsearch ESQLForElasticsearch sends it as
//     analytics-production-<slug>-* (slugs have no '-', so no other data
//     owner's index starts with that);
//   - a name that continues analytics-production-<slug> with '-' and at
//     least one more character: analytics-production-acme-*,
//     ...-measurements, ...-measurements-*, ...-measurements-videomeasurement.
//     Slugs have no '-' (migration 00003), so only this data owner's index
//     names begin with analytics-production-<slug>-.
// Everything else is refused: analytics-production-acme (no index has that
// name), analytics-production-acme_eu-..., analytics-production-acme?...,
// analytics-production-acme*-measurements, analytics-production-*,
// analytics-*, *, ... For a date math name the text before the first '{' is
// checked as if it ended in '*' (so <analytics-production-acme{now/d}> is
// refused, <analytics-production-acme-measurements-{now/d}> accepted).

// esqlQuery is what the check learned from a query.
type esqlQuery struct {
	from    []string // FROM index expressions, unquoted, one per comma-separated part
	fromAt  []int    // offset in the query text of each from part's name
	fromEnd int      // offset just after the last index expression of FROM
	lookups []string // LOOKUP JOIN targets
	enrich  bool
}

// CheckESQL verifies that query reads only the data owner's indices (slug)
// and, through LOOKUP JOIN, only the given lookup indices. The error is a
// *BadRequestError naming what is refused.
func CheckESQL(query, slug string, lookupIndices []string) error {
	if !validSlug(slug) {
		return Badf("ES|QL: no data owner index scope")
	}
	q, err := parseESQL(query)
	if err != nil {
		return err
	}
	lookups := append(LookupIndices(slug), lookupIndices...)
	for _, expr := range q.from {
		if err := checkFromIndex(slug, expr); err != nil {
			return err
		}
		if name, _, _ := strings.Cut(expr, "::"); slices.Contains(lookups, name) {
			return Badf("ES|QL: index %q is a lookup index: it is read with LOOKUP JOIN %s ON client_uuid, not FROM", expr, name)
		}
	}
	for _, l := range q.lookups {
		if err := checkLookupIndex(slug, l, lookupIndices); err != nil {
			return err
		}
	}
	return nil
}

// ESQLIndices returns the index expressions the query's FROM names, unquoted
// and split at commas, as written (exclusions keep their '-', selectors their
// "::data"). It checks syntax only; use CheckESQL for the scope.
func ESQLIndices(query string) ([]string, error) {
	q, err := parseESQL(query)
	if err != nil {
		return nil, err
	}
	return q.from, nil
}

// ESQLUsesEnrich reports whether the query has an ENRICH command (false when
// the query does not parse).
func ESQLUsesEnrich(query string) bool {
	q, err := parseESQL(query)
	return err == nil && q.enrich
}

// validSlug mirrors the data_owners.slug constraint ^[a-z0-9][a-z0-9_]{0,62}$
// (migration 00003): no '-', so that analytics-production-<slug>- is a
// prefix of this data owner's index names only.
func validSlug(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '_' && i > 0:
		default:
			return false
		}
	}
	return true
}

// inESQLScope is the scope rule (see the package comment above).
func inESQLScope(slug, name string) bool {
	if name == IndexPrefix(slug)+"*" {
		// The spec's own pattern. On Elasticsearch it is sent as
		// <prefix>-* (see ESQLForElasticsearch); slugs have no "-", so that
		// reaches this data owner's indices only.
		return true
	}
	rest, ok := strings.CutPrefix(name, IndexPrefix(slug)+"-")
	return ok && rest != ""
}

func isNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '*'
}

func validNameChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isNameChar(s[i]) {
			return false
		}
	}
	return s != ""
}

// checkFromIndex checks one FROM index expression.
func checkFromIndex(slug, expr string) error {
	name := strings.TrimPrefix(expr, "-") // an exclusion must be in scope too
	if i := strings.Index(name, "::"); i >= 0 {
		sel := name[i+2:]
		if sel != "data" && sel != "failures" {
			return Badf("ES|QL: index selector %q of %q is not supported", "::"+sel, expr)
		}
		name = name[:i]
	}
	if strings.Contains(name, ":") {
		return Badf("ES|QL: remote index %q is not allowed (cross-cluster queries are not supported)", expr)
	}
	effective := name
	if strings.HasPrefix(name, "<") {
		var ok bool
		if effective, ok = dateMathStatic(name); !ok {
			return Badf("ES|QL: malformed date math index name %q", expr)
		}
		if effective == IndexPrefix(slug)+"*" {
			// Date math right after the slug would name no index of ours.
			return Badf("ES|QL: index %q is outside the data owner's indices (%s-...)", expr, IndexPrefix(slug))
		}
	}
	if !validNameChars(effective) {
		return Badf("ES|QL: invalid index name %q", expr)
	}
	if !inESQLScope(slug, effective) {
		return Badf("ES|QL: index %q is outside the data owner's indices (%s-...)", expr, IndexPrefix(slug))
	}
	return nil
}

// dateMathStatic reads <static{math}static...> and returns the name the
// check applies the scope to: the static text before the first '{' plus '*'
// (or the whole name when it has no '{').
func dateMathStatic(name string) (string, bool) {
	if len(name) < 3 || name[len(name)-1] != '>' {
		return "", false
	}
	inner := name[1 : len(name)-1]
	first := strings.IndexByte(inner, '{')
	if first < 0 {
		return inner, !strings.ContainsAny(inner, "<>}")
	}
	depth := 0
	for i := first; i < len(inner); i++ {
		c := inner[i]
		switch {
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth < 0 {
				return "", false
			}
		case depth > 0 && (c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' ||
			strings.IndexByte("./+-_", c) >= 0):
		case depth == 0 && isNameChar(c):
		default:
			return "", false
		}
	}
	if depth != 0 {
		return "", false
	}
	return inner[:first] + "*", true
}

// checkLookupIndex checks a LOOKUP JOIN target.
func checkLookupIndex(slug, name string, known []string) error {
	if strings.Contains(name, ":") {
		return Badf("ES|QL: remote lookup index %q is not allowed (cross-cluster queries are not supported)", name)
	}
	if strings.ContainsAny(name, "*,") {
		return Badf("ES|QL: LOOKUP JOIN index %q must name one index", name)
	}
	if !validNameChars(name) || !strings.HasPrefix(name, IndexPrefix(slug)+"-") {
		return Badf("ES|QL: LOOKUP JOIN index %q is outside the data owner's indices", name)
	}
	for _, k := range known {
		if k == name {
			return nil
		}
	}
	return Badf("ES|QL: LOOKUP JOIN index %q is not a known lookup index", name)
}

// Commands that may follow a pipe. Source commands and unknown words are
// refused; ENRICH and LOOKUP are handled apart.
var esqlProcessing = map[string]bool{
	"change_point": true, "dissect": true, "drop": true, "eval": true,
	"fork": true, "fuse": true, "grok": true, "inline": true, "inlinestats": true, "keep": true,
	"limit": true, "mv_expand": true, "rename": true, "sample": true, "sort": true,
	"stats": true, "where": true,
}

// esqlInference are commands that run a model through an inference endpoint
// (cluster-wide stored configuration, like the Query DSL's inference_id and
// query_vector_builder, which CheckDSL refuses as well).
var esqlInference = map[string]bool{"completion": true, "rerank": true}

// esqlSubquery are the words that, after '(', would start a subquery (or a
// command that reads indices of its own); refused even where they might be
// a field name.
var esqlSubquery = map[string]bool{
	"from": true, "row": true, "show": true, "ts": true, "promql": true, "metrics": true,
	"explain": true, "fromm": true, "graph": true, "load_result": true, "set": true,
}

var esqlSource = map[string]bool{
	"from": true, "row": true, "show": true, "ts": true, "metrics": true, "explain": true,
	"set": true, "meta": true, "info": true,
}

// esqlLexer walks the query text.
type esqlLexer struct {
	s     string
	pos   int
	depth int   // parentheses open
	forks []int // depth of each FORK whose branches are being read
}

func (l *esqlLexer) eof() bool { return l.pos >= len(l.s) }

func (l *esqlLexer) peek() byte {
	if l.pos < len(l.s) {
		return l.s[l.pos]
	}
	return 0
}

func (l *esqlLexer) at(prefix string) bool { return strings.HasPrefix(l.s[l.pos:], prefix) }

// skipHidden skips whitespace and comments, as the ES|QL lexer's hidden
// channel does. Nested block comments are refused: readers disagree on them.
func (l *esqlLexer) skipHidden() error {
	for l.pos < len(l.s) {
		switch c := l.s[l.pos]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			l.pos++
		case l.at("//"):
			// LINE_COMMENT: '//' ~[\r\n]* — a lone '\r' ends it too.
			end := strings.IndexAny(l.s[l.pos:], "\r\n")
			if end < 0 {
				l.pos = len(l.s)
			} else {
				l.pos += end
			}
		case l.at("/*"):
			body := l.s[l.pos+2:]
			end := strings.Index(body, "*/")
			if end < 0 {
				return Badf("ES|QL: unterminated comment")
			}
			if strings.Contains(body[:end], "/*") {
				return Badf("ES|QL: nested comments are not supported")
			}
			l.pos += 2 + end + 2
		default:
			return nil
		}
	}
	return nil
}

// commandWord reads a command name the way the ES|QL lexer does in its
// default mode: a run of characters up to whitespace, '[', ']' or '/'.
func (l *esqlLexer) commandWord() string {
	start := l.pos
	for l.pos < len(l.s) && strings.IndexByte(" \t\r\n[]/", l.s[l.pos]) < 0 {
		l.pos++
	}
	return l.s[start:l.pos]
}

// sourceToken reads an index name in FROM or LOOKUP JOIN: a quoted string
// (unquoted; quoted reports true) or an unquoted source (a run of anything
// but : " = | , [ ] whitespace and a '/' starting a comment).
func (l *esqlLexer) sourceToken() (tok string, quoted bool, err error) {
	if l.peek() == '"' {
		s, err := l.str()
		return s, true, err
	}
	start := l.pos
	for l.pos < len(l.s) {
		c := l.s[l.pos]
		if strings.IndexByte(":\"=|,[] \t\r\n", c) >= 0 {
			break
		}
		if c == '/' && (l.pos+1 >= len(l.s) || l.s[l.pos+1] == '*' || l.s[l.pos+1] == '/') {
			break
		}
		l.pos++
	}
	return l.s[start:l.pos], false, nil
}

// str reads a "string" or """string""" at pos and returns its raw content.
func (l *esqlLexer) str() (string, error) {
	if l.at(`"""`) {
		body := l.s[l.pos+3:]
		end := strings.Index(body, `"""`)
		if end < 0 {
			return "", Badf("ES|QL: unterminated string")
		}
		n := end + 3
		for k := 0; k < 2 && n < len(body) && body[n] == '"'; k++ {
			n++
		}
		l.pos += 3 + n
		return body[:n-3], nil
	}
	start := l.pos + 1
	for i := start; i < len(l.s); i++ {
		switch l.s[i] {
		case '\\':
			if i+1 >= len(l.s) || l.s[i+1] == '\n' || l.s[i+1] == '\r' {
				return "", Badf("ES|QL: unterminated string")
			}
			i++
		case '\n', '\r':
			return "", Badf("ES|QL: unterminated string")
		case '"':
			l.pos = i + 1
			return l.s[start:i], nil
		}
	}
	return "", Badf("ES|QL: unterminated string")
}

// quotedIdent skips a backtick-quoted identifier (a doubled backtick
// stands for one).
func (l *esqlLexer) quotedIdent() error {
	for i := l.pos + 1; i < len(l.s); i++ {
		if l.s[i] == '`' {
			if i+1 < len(l.s) && l.s[i+1] == '`' {
				i++
				continue
			}
			l.pos = i + 1
			return nil
		}
	}
	return Badf("ES|QL: unterminated quoted identifier")
}

func isWordChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// word reads an identifier-like run at pos.
func (l *esqlLexer) word() string {
	start := l.pos
	for l.pos < len(l.s) && isWordChar(l.s[l.pos]) {
		l.pos++
	}
	return l.s[start:l.pos]
}

// peekWord returns the identifier-like word after hidden text, without
// moving.
func (l *esqlLexer) peekWord() string {
	save := l.pos
	defer func() { l.pos = save }()
	if l.skipHidden() != nil {
		return ""
	}
	return l.word()
}

func parseESQL(query string) (*esqlQuery, error) {
	if len(query) > limits.MaxESQLBytes {
		return nil, Badf("ES|QL: query longer than %d bytes", limits.MaxESQLBytes)
	}
	q := &esqlQuery{}
	l := &esqlLexer{s: query}
	if err := l.skipHidden(); err != nil {
		return nil, err
	}
	if !strings.EqualFold(l.commandWord(), "from") {
		return nil, Badf("ES|QL: query must begin with FROM")
	}
	if err := l.fromList(q); err != nil {
		return nil, err
	}
	for commands := 1; !l.eof(); commands++ {
		if commands > limits.MaxCommands {
			return nil, Badf("ES|QL: query too large: more than %d processing commands (limit MaxCommands = %d)",
				limits.MaxCommands, limits.MaxCommands)
		}
		l.pos++ // the pipe; now at a command position
		// A pipe outside the branches of a FORK ends it.
		for len(l.forks) > 0 && l.forks[len(l.forks)-1] >= l.depth {
			l.forks = l.forks[:len(l.forks)-1]
		}
		if err := l.skipHidden(); err != nil {
			return nil, err
		}
		if err := l.command(q, l.commandWord()); err != nil {
			return nil, err
		}
		// The rest of the command, up to the next pipe.
		if err := l.expression(q); err != nil {
			return nil, err
		}
	}
	if l.depth != 0 {
		return nil, Badf("ES|QL: unbalanced parentheses")
	}
	return q, nil
}

// command handles the command word w just read at a command position.
func (l *esqlLexer) command(q *esqlQuery, w string) error {
	lw := strings.ToLower(w)
	switch {
	case lw == "":
		return Badf("ES|QL: missing command after '|'")
	case lw == "from":
		return Badf("ES|QL: FROM is only allowed at the start of the query")
	case esqlSource[lw]:
		return Badf("ES|QL: source command %s is not allowed here; the query must begin with FROM", strings.ToUpper(w))
	case lw == "lookup":
		return l.lookupJoin(q, true)
	case lw == "enrich":
		q.enrich = true
		return l.enrichPolicy()
	case lw == "join" || lw == "left" || lw == "right" || lw == "full" || lw == "inner" || lw == "cross":
		return Badf("ES|QL: only LOOKUP JOIN is supported")
	case lw == "fork":
		l.forks = append(l.forks, l.depth)
		return nil
	case esqlInference[lw]:
		return Badf("ES|QL: %s (model inference) is not supported", strings.ToUpper(w))
	case esqlProcessing[lw]:
		return nil
	}
	return Badf("ES|QL: unknown command %q", w)
}

// fromList reads the index expressions and METADATA of FROM, up to the
// first pipe or the end.
func (l *esqlLexer) fromList(q *esqlQuery) error {
	for {
		if err := l.skipHidden(); err != nil {
			return err
		}
		if l.peek() == '(' {
			return Badf("ES|QL: subqueries are not supported")
		}
		start := l.pos
		tok, quoted, err := l.sourceToken()
		if err != nil {
			return err
		}
		if tok == "" && !quoted {
			return Badf("ES|QL: FROM needs an index name at offset %d", start)
		}
		if !quoted && strings.HasPrefix(tok, "(") {
			return Badf("ES|QL: subqueries are not supported")
		}
		if !quoted {
			// A selector (name::data) or a remote prefix (cluster:name)
			// comes as separate tokens.
			if l.at("::") {
				l.pos += 2
				sel, q2, err := l.sourceToken()
				if err != nil {
					return err
				}
				if q2 || sel == "" {
					return Badf("ES|QL: malformed index selector after %q", tok)
				}
				tok += "::" + sel
			}
			if l.peek() == ':' {
				return Badf("ES|QL: remote index %q is not allowed (cross-cluster queries are not supported)", tok+":...")
			}
			q.from = append(q.from, tok)
			q.fromAt = append(q.fromAt, start)
			q.fromEnd = l.pos
		} else {
			q.fromEnd = l.pos
			at := start + 1
			if l.s[start:l.pos] != `"`+tok+`"` {
				at = start + 3 // """triple-quoted"""
			}
			for part := range strings.SplitSeq(tok, ",") {
				q.from = append(q.from, part)
				q.fromAt = append(q.fromAt, at)
				at += len(part) + 1
			}
		}
		if err := l.skipHidden(); err != nil {
			return err
		}
		switch c := l.peek(); {
		case c == ',':
			l.pos++
			continue
		case c == '|' || l.eof():
			return nil
		default:
			// Only METADATA may follow without a comma.
			save := l.pos
			w, quoted, _ := l.sourceToken()
			if !quoted && strings.EqualFold(w, "metadata") {
				return l.metadata()
			}
			l.pos = save
			return Badf("ES|QL: malformed FROM near offset %d (index names are separated by commas)", save)
		}
	}
}

// metadata reads the field list after METADATA.
func (l *esqlLexer) metadata() error {
	for {
		if err := l.skipHidden(); err != nil {
			return err
		}
		f, quoted, err := l.sourceToken()
		if err != nil {
			return err
		}
		if quoted || len(f) < 2 || f[0] != '_' || !validNameChars(f) {
			return Badf("ES|QL: invalid METADATA field %q", f)
		}
		if err := l.skipHidden(); err != nil {
			return err
		}
		switch {
		case l.peek() == ',':
			l.pos++
		case l.peek() == '|' || l.eof():
			return nil
		default:
			return Badf("ES|QL: malformed METADATA near offset %d", l.pos)
		}
	}
}

// lookupJoin reads JOIN <index> ON after LOOKUP. When strict is false (a
// "lookup" word met inside an expression), a LOOKUP not followed by JOIN is
// left alone.
func (l *esqlLexer) lookupJoin(q *esqlQuery, strict bool) error {
	save := l.pos
	if err := l.skipHidden(); err != nil {
		return err
	}
	j, quoted, err := l.sourceToken()
	if err != nil {
		return err
	}
	if quoted || !strings.EqualFold(j, "join") {
		if !strict {
			l.pos = save
			return nil
		}
		return Badf("ES|QL: only LOOKUP JOIN is supported")
	}
	if err := l.skipHidden(); err != nil {
		return err
	}
	if l.peek() == '(' {
		return Badf("ES|QL: subqueries are not supported")
	}
	target, _, err := l.sourceToken()
	if err != nil {
		return err
	}
	if l.peek() == ':' {
		return Badf("ES|QL: remote lookup index %q is not allowed (cross-cluster queries are not supported)", target+":...")
	}
	if target == "" {
		return Badf("ES|QL: LOOKUP JOIN needs an index name")
	}
	q.lookups = append(q.lookups, target)
	if err := l.skipHidden(); err != nil {
		return err
	}
	on, quoted, err := l.sourceToken()
	if err != nil {
		return err
	}
	if quoted || !strings.EqualFold(on, "on") {
		return Badf("ES|QL: LOOKUP JOIN %s must be followed by ON", target)
	}
	return nil
}

// enrichPolicy skips the policy name of ENRICH (and its [setting]), read as
// the ES|QL lexer does in its ENRICH mode.
func (l *esqlLexer) enrichPolicy() error {
	if err := l.skipHidden(); err != nil {
		return err
	}
	if l.peek() == '[' {
		end := strings.IndexByte(l.s[l.pos:], ']')
		if end < 0 {
			return Badf("ES|QL: unterminated ENRICH setting")
		}
		l.pos += end + 1
		if err := l.skipHidden(); err != nil {
			return err
		}
	}
	// ENRICH_POLICY_NAME: (body+ ':')? body+, body excluding \ / ? " < > | space , # tab CR LF :
	body := func() {
		for l.pos < len(l.s) && strings.IndexByte("\\/?\"<>| ,#\t\r\n:", l.s[l.pos]) < 0 {
			l.pos++
		}
	}
	body()
	if l.peek() == ':' {
		l.pos++
		body()
	}
	return nil
}

// expression skips the rest of a command up to the next pipe (or the end),
// following strings, quoted identifiers, comments and parentheses. The
// first word of a FORK branch is a command (checked as after a pipe); a
// source command after any other '(' is a subquery (refused); LOOKUP JOIN
// anywhere is checked like the command.
func (l *esqlLexer) expression(q *esqlQuery) error {
	for {
		if err := l.skipHidden(); err != nil {
			return err
		}
		if l.eof() {
			return nil
		}
		switch c := l.peek(); {
		case c == '|':
			return nil
		case c == '"':
			if _, err := l.str(); err != nil {
				return err
			}
		case c == '`':
			if err := l.quotedIdent(); err != nil {
				return err
			}
		case c == ';':
			return Badf("ES|QL: ';' is not supported")
		case c == '(':
			l.pos++
			if n := len(l.forks); n > 0 && l.forks[n-1] == l.depth {
				// A FORK branch: it begins with a command.
				l.depth++
				if err := l.skipHidden(); err != nil {
					return err
				}
				if err := l.command(q, l.commandWord()); err != nil {
					return err
				}
				continue
			}
			l.depth++
			if l.depth > limits.MaxExprDepth {
				return Badf("ES|QL: query too large: parentheses nested more than %d deep (limit MaxExprDepth = %d)",
					limits.MaxExprDepth, limits.MaxExprDepth)
			}
			if w := strings.ToLower(l.peekWord()); esqlSubquery[w] {
				return Badf("ES|QL: subqueries are not supported")
			}
		case c == ')':
			l.pos++
			l.depth--
			if l.depth < 0 {
				return Badf("ES|QL: unbalanced parentheses")
			}
		case isWordChar(c):
			w := l.word()
			switch strings.ToLower(w) {
			case "lookup":
				if err := l.lookupJoin(q, false); err != nil {
					return err
				}
			case "join":
				return Badf("ES|QL: only LOOKUP JOIN is supported")
			}
		default:
			l.pos++
		}
	}
}

// ESQLForElasticsearch rewrites the spec's index pattern
// analytics-production-<slug>* in FROM into analytics-production-<slug>-*,
// which on Elasticsearch cannot reach the indices of a data owner whose slug
// merely starts with this one (slugs contain no "-"). When a FROM pattern
// (not an exclusion, without a ::failures selector) would match one of the
// data owner's lookup indices (LookupIndices), an exclusion of that index is
// appended to the FROM list ("FROM analytics-production-acme-*,
// -analytics-production-acme-lookup-clients"): lookup documents are read
// with LOOKUP JOIN only, as on the embedded backend. Only FROM index
// expressions change; the same text in a string, a comment or elsewhere is
// left alone. query must have passed CheckESQL for slug.
func ESQLForElasticsearch(query, slug string) string {
	q, err := parseESQL(query)
	if err != nil {
		return query
	}
	pattern := IndexPrefix(slug) + "*"
	out := query
	var exclude []string
	for _, lookup := range LookupIndices(slug) {
		excluded, matched := false, false
		for _, expr := range q.from {
			rest, isExcl := strings.CutPrefix(expr, "-")
			name, sel, _ := strings.Cut(rest, "::")
			switch {
			case isExcl && name == lookup:
				excluded = true
			case !isExcl && (sel == "" || sel == "data") && GlobMatch(name, lookup):
				matched = true
			}
		}
		if matched && !excluded {
			exclude = append(exclude, ", -"+lookup)
		}
	}
	if len(exclude) > 0 {
		out = out[:q.fromEnd] + strings.Join(exclude, "") + out[q.fromEnd:]
	}
	// Right to left, so that earlier offsets stay valid.
	for i := len(q.from) - 1; i >= 0; i-- {
		name, at := q.from[i], q.fromAt[i]
		if rest, ok := strings.CutPrefix(name, "-"); ok {
			name, at = rest, at+1
		}
		name, _, _ = strings.Cut(name, "::")
		if name == pattern && strings.HasPrefix(out[at:], pattern) {
			out = out[:at] + IndexPrefix(slug) + "-*" + out[at+len(pattern):]
		}
	}
	return out
}

// GlobMatch reports whether name matches pattern, where '*' stands for any
// run of characters (dots included): index patterns, _source filters,
// top_hits, KEEP/DROP.
func GlobMatch(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(name, p)
		if i < 0 {
			return false
		}
		name = name[i+len(p):]
	}
	return strings.HasSuffix(name, parts[len(parts)-1])
}
