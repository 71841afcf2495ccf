package pg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/datemath"
	"github.com/fleetgraph/fleetgraph/search/esql"
)

// ES|QL over the documents table.
//
// Supported (anything else is a 400 naming it, e.g. "ENRICH is not
// supported", "function MV_MAX is not supported"; syntax errors carry
// "line L:C"):
//
//   - FROM patterns (comma list, '*' wildcards, "quoted, lists", -exclusions,
//     ::data) [METADATA _id, _index]. A document matches a pattern when its
//     index name, search.IndexName(slug, kind, type), does; a bare kind name
//     (analytics-production-acme-measurements) also reads all its types, as
//     an alias would. data_owner_id is always a condition.
//   - WHERE, EVAL, STATS ... BY, SORT (ASC/DESC, NULLS FIRST/LAST), LIMIT
//     (default 1000, capped at 10000), KEEP / DROP (wildcards), RENAME
//     (a AS b, b = a).
//   - LOOKUP JOIN <slug's lookup-clients index> ON client_uuid, before or
//     after STATS (wherever client_uuid is a column): a LEFT JOIN to the
//     data owner's own clients adding search.LookupClientFields (see
//     lookupJoin). Another index or join field is a 400. The lookup index
//     is not a FROM target: FROM patterns read documents only.
//   - Operators = == != < <= > >= AND OR NOT, IS [NOT] NULL, [NOT] LIKE
//     (* ?), [NOT] RLIKE (whole-string match), [NOT] IN, + - * / %, x::type;
//     literals: strings (also """raw"""), numbers, true/false/null, time spans
//     (7 days, 1 hour, ...); strings compared with dates are read as dates.
//   - Functions TO_LOWER TO_UPPER LENGTH CONCAT SUBSTRING TRIM LEFT RIGHT
//     STARTS_WITH ENDS_WITH ROUND ABS FLOOR CEIL SQRT POW LOG10 GREATEST
//     LEAST COALESCE CASE DATE_TRUNC BUCKET DATE_EXTRACT DATE_DIFF
//     TO_STRING TO_INTEGER TO_LONG TO_DOUBLE TO_DATETIME TO_BOOLEAN NOW
//     (out-of-domain math such as SQRT(-1) is null, as in Elasticsearch);
//     aggregates COUNT(*) COUNT
//     COUNT_DISTINCT (exact) SUM AVG MIN MAX MEDIAN PERCENTILE VALUES (distinct
//     values, sorted; one value alone, several as an array), also inside
//     expressions (AVG(x) * 2).
//
// Field names are dotted paths into the document; created_at and @timestamp
// read the created_at column, client_uuid and type their columns. Document
// values are typed where they are used (a number compared with a number, a
// date with a date, ...). Rows without KEEP carry the document's fields
// flattened to dotted names (arrays stay arrays); every row of a result has
// the same keys, null where a row lacks the value. Dates are RFC 3339 UTC
// strings with milliseconds, computed integers int64, other computed numbers float64; document values keep
// their numbers as stored (json.Number: 12345678901234567 is not rounded).
//
// The parsed pipeline becomes ONE SQL statement: a base subquery over the
// data owner's documents of the FROM indices, wrapped by one subquery per
// command that needs one (WHERE, EVAL, STATS, LIMIT). Every subquery is
// aliased s and carries all columns of the one below (s.*), so a compiled
// expression stays valid further up. The document itself travels as fg_doc
// until STATS; KEEP, DROP and RENAME only change which names are visible
// (a compile-time view), and output column names are applied in Go. Values
// from the query (literals, field paths, patterns) are placeholders.
//
// So that the documents' indexes apply: a FROM pattern that takes every
// index of a kind (its bare name, a prefix of it and '*') is the condition
// kind = <kind> alone, not a match on the index-name expression; several
// kinds whose first rows by created_at are wanted (SORT created_at ...
// LIMIT) are read one ordered branch per kind, merged; SORT on created_at
// (never null) sets no null placement, so that it is the index's order;
// the document's client_uuid is grouped by, joined on and compared with a
// UUID literal as the uuid column (esqlTranslator.plain turns all of this
// off; tests compare both answers).

const (
	esqlDefaultLimit = 1000
	esqlMaxLimit     = 10000
)

// esqlType is the SQL type of a compiled expression.
type esqlType int

const (
	etNull esqlType = iota
	etJSON          // a document value: jsonb, typed at its use
	etNum           // double precision
	etInt           // bigint
	etText
	etBool
	etTime // timestamptz
	etDur  // interval (time spans; never a column)
)

func (t esqlType) String() string {
	return [...]string{"null", "json", "double", "long", "keyword", "boolean", "datetime", "time_duration"}[t]
}

// esqlExpr is compiled SQL with its type; lit holds the Go value of a
// literal (for conversions done in Go, such as a date string).
type esqlExpr struct {
	sql  string
	t    esqlType
	lit  *esql.Literal
	arg  int    // the placeholder number of a literal's value
	uuid string // the same value as a uuid column, when it is one (client_uuid)
}

// reuse gives a literal's placeholder a new value (converted in Go), so that
// no placeholder goes unused; it returns "$n".
func (tr *esqlTranslator) reuse(e esqlExpr, v any) string {
	tr.a.vals[e.arg-1] = v
	return fmt.Sprintf("$%d", e.arg)
}

// literal makes a placeholder for a literal's value.
func (tr *esqlTranslator) literal(x *esql.Literal, v any, cast string, t esqlType) esqlExpr {
	ph := tr.a.add(v)
	return esqlExpr{sql: ph + cast, t: t, lit: x, arg: len(tr.a.vals)}
}

// esqlCol is a visible named column.
type esqlCol struct {
	name string
	sql  string
	t    esqlType
	uuid string // as esqlExpr.uuid
}

// esqlView says which document fields are visible: all of them minus the
// hidden names, filtered by the KEEP / DROP steps in order.
type esqlView struct {
	hidden map[string]bool
	steps  []esqlStep
}

type esqlStep struct {
	keep bool
	pats []string
}

func (v *esqlView) visible(name string) bool {
	if v.hidden[name] {
		return false
	}
	for _, st := range v.steps {
		m := globMatchAny(st.pats, name)
		if !st.keep && !m {
			// DROP of an object drops the fields under it.
			for _, p := range st.pats {
				if !strings.Contains(p, "*") && strings.HasPrefix(name, p+".") {
					m = true
				}
			}
		}
		if m != st.keep {
			return false
		}
	}
	return true
}

type esqlTranslator struct {
	a       *args
	ownerID int64
	slug    string
	from    string // SQL of the current relation (aliased s by the caller)
	cols    []esqlCol
	doc     *esqlView // nil once document fields are gone (STATS, KEEP)
	order   []string
	limit   int64 // last LIMIT since the last STATS, -1 when none
	seq     int
	base    esqlBase
	// plain turns off the shortcuts that only make the statement faster
	// (the kind alone for whole kinds, ordered branches, uuid comparisons
	// of client_uuid): tests compare both translations' answers.
	plain bool
}

// esqlBaseMarker stands for the base relation in tr.from until translate
// knows its shape (esqlBase.sql).
const esqlBaseMarker = "\x00base\x00"

// esqlBase is the base relation: the data owner's documents of the FROM
// kinds (sel ends with "d.kind = "; kinds is the placeholder of their
// array, n their number).
type esqlBase struct {
	sel     string
	kinds   string
	n       int
	decided bool   // order is final
	order   string // "ASC" or "DESC": the first LIMIT's rows are the first by created_at
	plain   bool   // kind = ANY(...) always (esqlTranslator.plain)
}

// decide fixes the base's shape at the first command that reads its rows
// in an order (LIMIT, the final statement) or all of them (STATS).
func (tr *esqlTranslator) decideBase(order []string) {
	if tr.base.decided {
		return
	}
	tr.base.decided = true
	if len(order) > 0 && !tr.plain {
		switch order[0] {
		case "s.fg_created DESC":
			tr.base.order = "DESC"
		case "s.fg_created ASC":
			tr.base.order = "ASC"
		}
	}
}

// sql is the base relation. One kind is a scan with kind as an equality,
// so that the (data_owner_id, kind, ...) indexes apply with their order.
// Several kinds are kind = ANY(...), or, when the first rows by created_at
// are wanted, one branch per kind ordered by created_at, merged (each
// branch walks the (data_owner_id, kind, created_at DESC, id DESC) index).
func (b esqlBase) sql() string {
	if b.n == 1 && !b.plain {
		return b.sel + "(" + b.kinds + "::text[])[1]"
	}
	if b.order == "" {
		return b.sel + "ANY(" + b.kinds + "::text[])"
	}
	branches := make([]string, b.n)
	for i := range branches {
		branches[i] = "(" + b.sel + "(" + b.kinds + "::text[])[" + strconv.Itoa(i+1) + "] ORDER BY d.created_at " + b.order + ")"
	}
	return strings.Join(branches, " UNION ALL ")
}

// esqlStats is the context of a STATS aggregate expression outside of an
// aggregate call: only BY columns may be referenced there.
type esqlStats struct {
	by     []esqlCol
	sawAgg bool
}

// ESQL runs a piped query (already scope-checked by search.CheckESQL) over
// the data owner's documents and returns one object per row.
func (b *Backend) ESQL(ctx context.Context, dataOwnerID int64, slug, query string) ([]map[string]any, error) {
	return b.esql(ctx, dataOwnerID, slug, query, false)
}

// esql is ESQL, with the shortcuts off when plain (esqlTranslator.plain).
func (b *Backend) esql(ctx context.Context, dataOwnerID int64, slug, query string, plain bool) ([]map[string]any, error) {
	q, err := esql.Parse(query)
	if err != nil {
		return nil, search.Badf("%s", err.Error())
	}
	tr := &esqlTranslator{a: &args{}, ownerID: dataOwnerID, slug: slug, limit: -1, plain: plain}
	stmt, err := tr.translate(q)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	err = b.limited(ctx, b.limit(0), searchTx, "ES|QL query", func(ctx context.Context, q *limitedTx) error {
		var err error
		out, err = tr.run(ctx, q, stmt)
		return err
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []map[string]any{}
	}
	return out, nil
}

// run runs the translated statement and builds the rows.
func (tr *esqlTranslator) run(ctx context.Context, q querier, stmt string) ([]map[string]any, error) {
	rows, err := q.Query(ctx, stmt, tr.a.vals...)
	if err != nil {
		return nil, esqlSQLError(err)
	}
	defer rows.Close()
	var out []map[string]any
	keys := map[string]bool{}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, esqlSQLError(err)
		}
		row := map[string]any{}
		if tr.doc != nil {
			docVal, created := esqlDocValue(vals[len(tr.cols)]), vals[len(tr.cols)+1]
			if m, ok := docVal.(map[string]any); ok {
				esqlFlatten("", m, func(k string, v any) {
					if tr.doc.visible(k) {
						row[k] = v
					}
				})
			}
			if tm, ok := created.(time.Time); ok && tr.doc.visible("created_at") {
				row["created_at"] = esqlTimeString(tm)
			}
		}
		for i, c := range tr.cols {
			if c.t == etJSON {
				row[c.name] = esqlDocValue(vals[i])
				continue
			}
			row[c.name] = esqlValue(vals[i])
		}
		for k := range row {
			keys[k] = true
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, esqlSQLError(err)
	}
	// Every row carries every column, as ES|QL's columnar result does.
	for _, row := range out {
		for k := range keys {
			if _, ok := row[k]; !ok {
				row[k] = nil
			}
		}
	}
	return out, nil
}

func esqlSQLError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "22"): // data exception: bad regex, overflow, ...
			return search.Badf("ES|QL evaluation failed: %s", pe.Message)
		case strings.HasPrefix(pe.Code, "54"): // program limit exceeded
			return search.Badf("ES|QL query is too complex: %s", pe.Message)
		}
	}
	return fmt.Errorf("esql: %w", err)
}

func esqlTimeString(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// esqlDocValue decodes a document value read as text, its numbers as
// json.Number: exactly as stored (12345678901234567 stays that, where a
// float64 would round it), and any number JSON can hold.
func esqlDocValue(v any) any {
	s, ok := v.(string)
	if !ok {
		return nil // SQL NULL
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil // not reached: PostgreSQL wrote the text of a jsonb
	}
	return out
}

func esqlValue(v any) any {
	switch x := v.(type) {
	case time.Time:
		return esqlTimeString(x)
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	case float32:
		return float64(x)
	}
	return v
}

// esqlFlatten calls f for every leaf of m under its dotted name; arrays and
// scalars are leaves, empty objects are skipped.
func esqlFlatten(prefix string, m map[string]any, f func(string, any)) {
	for k, v := range m {
		name := k
		if prefix != "" {
			name = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok {
			esqlFlatten(name, sub, f)
			continue
		}
		f(name, v)
	}
}

// bind evaluates the expressions vals once and hands body their names, so
// that SQL needing a value several times does not repeat its text (which
// would grow exponentially with nesting).
func (tr *esqlTranslator) bind(body func(v []string) string, vals ...string) string {
	z := tr.alias("z")
	names := make([]string, len(vals))
	sel := make([]string, len(vals))
	for i, v := range vals {
		names[i] = fmt.Sprintf("%s.v%d", z, i)
		sel[i] = fmt.Sprintf("%s AS v%d", v, i)
	}
	return "(SELECT " + body(names) + " FROM (SELECT " + strings.Join(sel, ", ") + ") " + z + ")"
}

func (tr *esqlTranslator) alias(prefix string) string {
	tr.seq++
	return fmt.Sprintf("%s%d", prefix, tr.seq)
}

func esqlBad(at esql.Pos, format string, args ...any) error {
	return search.Badf("%s: %s", at, fmt.Sprintf(format, args...))
}

func (tr *esqlTranslator) translate(q *esql.Query) (string, error) {
	if err := tr.fromClause(q.From); err != nil {
		return "", err
	}
	for _, c := range q.Commands {
		var err error
		switch c := c.(type) {
		case *esql.Where:
			err = tr.where(c)
		case *esql.Eval:
			err = tr.eval(c)
		case *esql.Stats:
			err = tr.stats(c)
		case *esql.Sort:
			err = tr.sort(c)
		case *esql.Limit:
			err = tr.limitCmd(c)
		case *esql.Keep:
			err = tr.keep(c)
		case *esql.Drop:
			err = tr.drop(c)
		case *esql.Rename:
			err = tr.rename(c)
		case *esql.LookupJoin:
			err = tr.lookupJoin(c)
		default:
			err = esqlBad(c.Position(), "unsupported command")
		}
		if err != nil {
			return "", err
		}
	}
	sel := make([]string, 0, len(tr.cols)+2)
	for i, c := range tr.cols {
		if c.t == etDur {
			return "", search.Badf("column [%s] is a time span, which cannot be returned", c.name)
		}
		if c.t == etJSON { // read as text: numbers stay as stored (esqlDocValue)
			sel = append(sel, fmt.Sprintf("(%s)::text AS o%d", c.sql, i+1))
			continue
		}
		sel = append(sel, fmt.Sprintf("%s AS o%d", c.sql, i+1))
	}
	if tr.doc != nil {
		sel = append(sel, "s.fg_doc::text", "s.fg_created")
	}
	if len(sel) == 0 {
		sel = append(sel, "NULL")
	}
	limit := tr.limit
	if limit < 0 {
		limit = esqlDefaultLimit
	}
	tr.decideBase(tr.order)
	stmt := "SELECT " + strings.Join(sel, ", ") + " FROM " + strings.Replace(tr.from, esqlBaseMarker, tr.base.sql(), 1) + " s"
	order := ""
	if len(tr.order) > 0 {
		order = " ORDER BY " + strings.Join(tr.order, ", ")
	}
	stmt += tr.useEveryPlaceholder(stmt+order) + order
	stmt += " LIMIT " + tr.a.add(limit) + "::bigint"
	return stmt, nil
}

// useEveryPlaceholder returns a WHERE clause (always true) naming, as typed
// NULLs, the placeholders that stmt no longer uses: a column read by KEEP
// and then dropped (DROP, RENAME over it, KEEP without it) leaves its
// placeholder behind, and PostgreSQL refuses a statement with a parameter
// it cannot type. "" when every placeholder is used.
func (tr *esqlTranslator) useEveryPlaceholder(stmt string) string {
	used := make([]bool, len(tr.a.vals)+1)
	for i := 0; i < len(stmt); i++ {
		if stmt[i] != '$' {
			continue
		}
		j := i + 1
		for j < len(stmt) && stmt[j] >= '0' && stmt[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(stmt[i+1 : j]); err == nil && n < len(used) {
			used[n] = true
		}
		i = j - 1
	}
	var conds []string
	for n := 1; n < len(used); n++ {
		if !used[n] {
			tr.a.vals[n-1] = nil
			conds = append(conds, fmt.Sprintf("$%d::text IS NULL", n))
		}
	}
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// fromClause maps the index patterns onto (kind, type) filters of the data
// owner: a document matches a pattern when its index name, computed from its
// kind and type as search.IndexName does, matches it.
func (tr *esqlTranslator) fromClause(f *esql.From) error {
	prefix := search.IndexPrefix(tr.slug)
	kinds := make([]string, len(search.Kinds))
	names := make([]string, len(search.Kinds))
	for i, k := range search.Kinds {
		kinds[i] = string(k)
		names[i] = search.IndexName(tr.slug, k, "")
	}
	// Per kind: whole when an include pattern matches every index name of
	// the kind (its bare name, which reads all its types like an alias, or
	// a prefix of it followed by '*' only), so that the kind alone is the
	// condition (an index column); partial when a pattern may match some
	// of its names, which then need the index-name expression.
	whole := map[string]bool{}
	candidates := map[string]bool{}
	var include, exclude []string
	for _, ip := range f.Indices {
		pat := ip.Pattern
		if p, ok := strings.CutSuffix(pat, "::data"); ok {
			pat = p
		}
		if strings.ContainsAny(pat, ":<>{}") {
			return esqlBad(ip.At, "index expression [%s] is not supported", ip.Pattern)
		}
		if !strings.HasPrefix(pat, prefix) {
			return esqlBad(ip.At, "index [%s] is outside the data owner's indices", ip.Pattern)
		}
		if !ip.Exclude && slices.Contains(search.LookupIndices(tr.slug), pat) {
			return esqlBad(ip.At, "index [%s] is a lookup index: it is read with LOOKUP JOIN %s ON client_uuid, not FROM", ip.Pattern, pat)
		}
		like := esqlLikeFromGlob(pat)
		lit, wildTail := pat, false
		if i := strings.IndexByte(pat, '*'); i >= 0 {
			lit, wildTail = pat[:i], strings.Trim(pat[i:], "*") == ""
		}
		if ip.Exclude {
			exclude = append(exclude, like)
			continue
		}
		found := false
		for i, name := range names {
			if strings.HasPrefix(name, lit) || strings.HasPrefix(lit, name+"-") || lit == name {
				candidates[kinds[i]] = true
				found = true
				if pat == name || (wildTail && strings.HasPrefix(name, lit)) {
					whole[kinds[i]] = true
				}
			}
		}
		if !found {
			return esqlBad(ip.At, "Unknown index [%s]", ip.Pattern)
		}
		include = append(include, like)
		for _, name := range names {
			if pat == name { // a bare kind name reads all its types, like an alias
				include = append(include, like+"-%")
			}
		}
	}
	if len(include) == 0 {
		return esqlBad(f.At, "FROM names no index to read")
	}
	var ks, wholeKs []string
	for _, k := range kinds {
		if candidates[k] {
			ks = append(ks, k)
			if whole[k] {
				wholeKs = append(wholeKs, k)
			}
		}
	}
	a := tr.a
	indexExpr := "((" + a.add(names) + "::text[])[array_position(" + a.add(kinds) +
		"::text[], d.kind)] || COALESCE('-' || lower(d.type), ''))"
	tr.base = esqlBase{
		sel: "SELECT d.doc AS fg_doc, d.created_at AS fg_created, d.doc_id AS fg_id, d.kind AS fg_kind, " +
			"d.type AS fg_type, d.client_uuid::text AS fg_client, d.client_uuid AS fg_client_uuid, " + indexExpr + " AS fg_index" +
			" FROM documents d WHERE d.data_owner_id = " + a.add(tr.ownerID) + "::bigint AND d.kind = ",
		kinds: a.add(ks),
		n:     len(ks),
		plain: tr.plain,
	}
	base := esqlBaseMarker
	var conds []string
	if len(wholeKs) < len(ks) || tr.plain {
		var incl []string
		if len(wholeKs) > 0 && !tr.plain {
			incl = append(incl, "s.fg_kind = ANY("+a.add(wholeKs)+"::text[])")
		}
		for _, l := range include {
			incl = append(incl, "s.fg_index LIKE "+a.add(l)+"::text")
		}
		conds = append(conds, "("+strings.Join(incl, " OR ")+")")
	}
	for _, l := range exclude {
		conds = append(conds, "s.fg_index NOT LIKE "+a.add(l)+"::text")
	}
	tr.from = "(" + base + ")"
	if len(conds) > 0 {
		tr.from = "(SELECT * FROM (" + base + ") s WHERE " + strings.Join(conds, " AND ") + ")"
	}
	tr.doc = &esqlView{hidden: map[string]bool{}}
	for _, m := range f.Metadata {
		switch m {
		case "_id":
			tr.setCol(esqlCol{name: "_id", sql: "s.fg_id", t: etText})
		case "_index":
			tr.setCol(esqlCol{name: "_index", sql: "s.fg_index", t: etText})
		default:
			return esqlBad(f.At, "METADATA %s is not supported", m)
		}
	}
	return nil
}

// esqlLikeFromGlob turns an index pattern into a LIKE pattern.
func esqlLikeFromGlob(p string) string {
	var b strings.Builder
	for _, r := range p {
		switch r {
		case '\\', '%', '_':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '*':
			b.WriteByte('%')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// setCol makes c visible, replacing a column of the same name and hiding a
// document field of that name.
func (tr *esqlTranslator) setCol(c esqlCol) {
	tr.removeCol(c.name)
	tr.cols = append(tr.cols, c)
	if tr.doc != nil {
		tr.doc.hidden[c.name] = true
	}
}

func (tr *esqlTranslator) removeCol(name string) {
	out := tr.cols[:0]
	for _, c := range tr.cols {
		if c.name != name {
			out = append(out, c)
		}
	}
	tr.cols = out
}

func (tr *esqlTranslator) findCol(name string) (esqlCol, bool) {
	for i := len(tr.cols) - 1; i >= 0; i-- {
		if tr.cols[i].name == name {
			return tr.cols[i], true
		}
	}
	return esqlCol{}, false
}

// docField is the expression of a document field (a mapped column or a
// path into the document).
func (tr *esqlTranslator) docField(name string) esqlExpr {
	switch name {
	case "created_at", "@timestamp":
		return esqlExpr{sql: "s.fg_created", t: etTime}
	case "client_uuid", "client_uuid.keyword":
		e := esqlExpr{sql: "s.fg_client", t: etText}
		if !tr.plain {
			e.uuid = "s.fg_client_uuid"
		}
		return e
	case "type", "type.keyword":
		return esqlExpr{sql: "s.fg_type", t: etText}
	}
	path := strings.Split(strings.TrimSuffix(name, ".keyword"), ".")
	return esqlExpr{sql: "NULLIF(s.fg_doc #> " + tr.a.add(path) + "::text[], 'null'::jsonb)", t: etJSON}
}

func (tr *esqlTranslator) resolve(at esql.Pos, name string) (esqlExpr, error) {
	if c, ok := tr.findCol(name); ok {
		return esqlExpr{sql: c.sql, t: c.t, uuid: c.uuid}, nil
	}
	if name == "_id" || name == "_index" {
		return esqlExpr{}, esqlBad(at, "Unknown column [%s]: name it in FROM ... METADATA %s", name, name)
	}
	if tr.doc != nil && tr.doc.visible(name) {
		return tr.docField(name), nil
	}
	return esqlExpr{}, esqlBad(at, "Unknown column [%s]", name)
}

// wrap makes sel (a select list over s) the current relation.
func (tr *esqlTranslator) wrap(sel, tail string) {
	tr.from = "(SELECT " + sel + " FROM " + tr.from + " s" + tail + ")"
}

func (tr *esqlTranslator) where(c *esql.Where) error {
	e, err := tr.compile(c.Cond, nil)
	if err != nil {
		return err
	}
	cond, err := tr.conv(c.Cond.Position(), e, etBool)
	if err != nil {
		return err
	}
	tr.wrap("*", " WHERE "+cond)
	return nil
}

func (tr *esqlTranslator) eval(c *esql.Eval) error {
	for _, f := range c.Fields {
		e, err := tr.compile(f.Expr, nil)
		if err != nil {
			return err
		}
		if e.t == etDur {
			return esqlBad(f.Expr.Position(), "EVAL of a time span [%s] is not supported", f.Name)
		}
		sqlText := e.sql
		if e.t == etNull {
			sqlText = "NULL::text"
		}
		al := tr.alias("c")
		tr.wrap("s.*, "+sqlText+" AS "+al, "")
		tr.setCol(esqlCol{name: f.Name, sql: "s." + al, t: e.t})
	}
	return nil
}

func (tr *esqlTranslator) stats(c *esql.Stats) error {
	tr.decideBase(nil)
	st := &esqlStats{}
	inner := []string{"s.*"}
	var group []string
	for _, f := range c.By {
		e, err := tr.compile(f.Expr, nil)
		if err != nil {
			return err
		}
		if e.t == etDur {
			return esqlBad(f.Expr.Position(), "grouping by a time span is not supported")
		}
		if e.t == etNull {
			e.sql, e.t = "NULL::text", etText
		}
		al := tr.alias("g")
		if e.uuid != "" {
			// client_uuid: grouped as the uuid column (the same groups),
			// converted to text once per group.
			inner = append(inner, e.uuid+" AS "+al)
			group = append(group, "s."+al)
			st.by = append(st.by, esqlCol{name: f.Name, sql: "(s." + al + ")::text", t: e.t, uuid: "s." + al})
			continue
		}
		inner = append(inner, e.sql+" AS "+al)
		group = append(group, "s."+al)
		st.by = append(st.by, esqlCol{name: f.Name, sql: "s." + al, t: e.t})
	}
	var sel []string
	var cols []esqlCol
	for _, f := range c.Aggs {
		st.sawAgg = false
		e, err := tr.compile(f.Expr, st)
		if err != nil {
			return err
		}
		if !st.sawAgg {
			return esqlBad(f.Expr.Position(), "expected an aggregate function in STATS, found [%s]", f.Name)
		}
		if e.t == etNull {
			e.sql, e.t = "NULL::text", etText
		}
		al := tr.alias("c")
		sel = append(sel, e.sql+" AS "+al)
		cols = append(cols, esqlCol{name: f.Name, sql: "s." + al, t: e.t})
	}
	for _, b := range st.by {
		al := tr.alias("c")
		sel = append(sel, b.sql+" AS "+al)
		col := esqlCol{name: b.name, sql: "s." + al, t: b.t}
		if b.uuid != "" { // kept beside the text, for joins and comparisons
			col.uuid = tr.alias("u")
			sel = append(sel, b.uuid+" AS "+col.uuid)
			col.uuid = "s." + col.uuid
		}
		cols = append(cols, col)
	}
	tr.from = "(SELECT " + strings.Join(inner, ", ") + " FROM " + tr.from + " s)"
	tail := ""
	if len(group) > 0 {
		tail = " GROUP BY " + strings.Join(group, ", ")
	}
	tr.wrap(strings.Join(sel, ", "), tail)
	tr.cols = nil
	for _, c := range cols {
		tr.removeCol(c.name)
		tr.cols = append(tr.cols, c)
	}
	tr.doc = nil
	tr.order = nil
	tr.limit = -1
	return nil
}

func (tr *esqlTranslator) sort(c *esql.Sort) error {
	var order []string
	for _, o := range c.Orders {
		e, err := tr.compile(o.Expr, nil)
		if err != nil {
			return err
		}
		if e.t == etNull || e.lit != nil {
			continue // constant: no effect on the order
		}
		item := e.sql
		if o.Desc {
			item += " DESC"
		} else {
			item += " ASC"
		}
		if e.sql == "s.fg_created" && !tr.plain {
			// created_at is never null: no placement, so that the order
			// is the (data_owner_id, kind, created_at DESC, ...) index's
			// either way.
		} else if o.NullsFirst {
			item += " NULLS FIRST"
		} else {
			item += " NULLS LAST"
		}
		order = append(order, item)
	}
	tr.order = order
	return nil
}

func (tr *esqlTranslator) limitCmd(c *esql.Limit) error {
	n := c.N
	if n < 0 {
		return esqlBad(c.At, "LIMIT must not be negative")
	}
	if n > esqlMaxLimit {
		n = esqlMaxLimit
	}
	tr.decideBase(tr.order)
	tail := ""
	if len(tr.order) > 0 {
		tail = " ORDER BY " + strings.Join(tr.order, ", ")
	}
	tr.wrap("*", tail+" LIMIT "+tr.a.add(n)+"::bigint")
	if tr.limit < 0 || n < tr.limit {
		tr.limit = n
	}
	return nil
}

func (tr *esqlTranslator) keep(c *esql.Keep) error {
	var cols []esqlCol
	added := map[string]bool{}
	var wild []string
	for _, p := range c.Patterns {
		matched := false
		for _, col := range tr.cols {
			if search.GlobMatch(p, col.name) {
				matched = true
				if !added[col.name] {
					added[col.name] = true
					cols = append(cols, col)
				}
			}
		}
		if strings.Contains(p, "*") {
			wild = append(wild, p)
			continue
		}
		if matched {
			continue
		}
		if tr.doc == nil || !tr.doc.visible(p) {
			return esqlBad(c.At, "Unknown column [%s]", p)
		}
		if !added[p] {
			added[p] = true
			e := tr.docField(p)
			cols = append(cols, esqlCol{name: p, sql: e.sql, t: e.t, uuid: e.uuid})
		}
	}
	tr.cols = cols
	if tr.doc != nil {
		if len(wild) == 0 {
			tr.doc = nil
		} else {
			for name := range added {
				tr.doc.hidden[name] = true
			}
			tr.doc.steps = append(tr.doc.steps, esqlStep{keep: true, pats: wild})
		}
	}
	return nil
}

func (tr *esqlTranslator) drop(c *esql.Drop) error {
	for _, p := range c.Patterns {
		matched := false
		out := tr.cols[:0]
		for _, col := range tr.cols {
			if search.GlobMatch(p, col.name) {
				matched = true
				continue
			}
			out = append(out, col)
		}
		tr.cols = out
		if !matched && tr.doc == nil && !strings.Contains(p, "*") {
			return esqlBad(c.At, "Unknown column [%s]", p)
		}
	}
	if tr.doc != nil {
		tr.doc.steps = append(tr.doc.steps, esqlStep{keep: false, pats: c.Patterns})
	}
	return nil
}

func (tr *esqlTranslator) rename(c *esql.Rename) error {
	for _, p := range c.Pairs {
		if col, ok := tr.findCol(p.Old); ok {
			tr.removeCol(p.Old)
			col.name = p.New
			tr.setCol(col)
			continue
		}
		if tr.doc != nil && tr.doc.visible(p.Old) {
			e := tr.docField(p.Old)
			tr.doc.hidden[p.Old] = true
			tr.setCol(esqlCol{name: p.New, sql: e.sql, t: e.t, uuid: e.uuid})
			continue
		}
		return esqlBad(c.At, "Unknown column [%s]", p.Old)
	}
	return nil
}

// lookupJoin answers LOOKUP JOIN on the data owner's lookup-clients index
// (search.LookupIndices) from the clients table: a LEFT JOIN to the
// clients the data owner owns (data_owner_id; shared clients are not
// lookup documents) on client_uuid, adding the fields
// search.LookupClientFields as columns. As in Elasticsearch, a row without
// a matching client gets nulls, the added fields replace columns (and
// document fields) of the same name, and the join key stays. client_uuid
// is unique across clients, so a row matches at most one client.
// client_tags reads as Elasticsearch reads a keyword array from the lookup
// index: its distinct values sorted, one value alone, several as an array,
// null when none.
func (tr *esqlTranslator) lookupJoin(c *esql.LookupJoin) error {
	known := search.LookupIndices(tr.slug)
	if !slices.Contains(known, c.Index) {
		return esqlBad(c.IndexAt, "LOOKUP JOIN index [%s] is not a lookup index of the data owner (known: %s)",
			c.Index, strings.Join(known, ", "))
	}
	key := search.LookupClientFields[0]
	for _, f := range c.On {
		if f != key {
			return esqlBad(c.At, "LOOKUP JOIN on [%s] is not supported: %s joins on %s only", f, c.Index, key)
		}
	}
	if len(c.On) != 1 {
		return esqlBad(c.At, "LOOKUP JOIN %s joins on one field, %s", c.Index, key)
	}
	k, err := tr.resolve(c.At, key)
	if err != nil {
		return err
	}
	if k.t == etDur {
		return esqlBad(c.At, "LOOKUP JOIN key [%s] is a time span", key)
	}
	keySQL, err := tr.conv(c.At, k, etText)
	if err != nil {
		return err
	}
	lk := tr.alias("lk")
	fields := map[string]esqlCol{
		"client_label":       {sql: lk + ".label", t: etText},
		"client_extra_label": {sql: lk + ".extra_label", t: etText},
		"client_type":        {sql: lk + ".type", t: etText},
		"client_tags": {sql: "(SELECT CASE count(*) WHEN 0 THEN NULL WHEN 1 THEN to_jsonb(min(t.v)) " +
			"ELSE to_jsonb(array_agg(t.v ORDER BY t.v)) END FROM (SELECT DISTINCT v FROM unnest(" + lk + ".tags) v " +
			"WHERE v IS NOT NULL) t)", t: etJSON},
		"client_created_at": {sql: "date_trunc('milliseconds', " + lk + ".created_at)", t: etTime},
	}
	sel := []string{"s.*"}
	var cols []esqlCol
	for _, name := range search.LookupClientFields[1:] {
		f, ok := fields[name]
		if !ok {
			return fmt.Errorf("esql: lookup field %s has no column", name)
		}
		al := tr.alias("c")
		sel = append(sel, f.sql+" AS "+al)
		cols = append(cols, esqlCol{name: name, sql: "s." + al, t: f.t})
	}
	on := lk + ".uuid::text = " + keySQL
	if k.uuid != "" { // client_uuid as the uuid column: uuid to uuid (the clients' uuid index)
		on = lk + ".uuid = " + k.uuid
	}
	tr.from = "(SELECT " + strings.Join(sel, ", ") + " FROM " + tr.from + " s LEFT JOIN clients " + lk +
		" ON " + lk + ".data_owner_id = " + tr.a.add(tr.ownerID) + "::bigint AND " + on + ")"
	for _, col := range cols {
		tr.setCol(col)
	}
	return nil
}

// ---- expressions ----

func esqlPGType(t esqlType) string {
	switch t {
	case etJSON:
		return "jsonb"
	case etNum:
		return "double precision"
	case etInt:
		return "bigint"
	case etBool:
		return "boolean"
	case etTime:
		return "timestamptz"
	case etDur:
		return "interval"
	}
	return "text"
}

const esqlTimeFormat = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`

// conv converts e to type t.
func (tr *esqlTranslator) conv(at esql.Pos, e esqlExpr, t esqlType) (string, error) {
	if e.t == t {
		return e.sql, nil
	}
	if e.t == etNull {
		return "NULL::" + esqlPGType(t), nil
	}
	if e.lit != nil && e.lit.Kind == esql.LitString && t == etTime {
		tm, ok := esqlParseTime(e.lit.Value.(string))
		if !ok {
			return "", esqlBad(at, "cannot convert string [%s] to datetime", e.lit.Value)
		}
		return tr.reuse(e, tm) + "::timestamptz", nil
	}
	x := e.sql
	switch t {
	case etNum:
		switch e.t {
		case etInt:
			return "(" + x + ")::double precision", nil
		case etJSON:
			return "fg_num(" + x + ")", nil
		case etText:
			return "fg_num(to_jsonb(" + x + "))", nil
		case etBool:
			return "(" + x + ")::int::double precision", nil
		case etTime:
			return "(extract(epoch FROM " + x + ") * 1000)::double precision", nil
		}
	case etInt:
		switch e.t {
		case etNum:
			return "trunc(" + x + ")::bigint", nil
		case etJSON:
			return "trunc(fg_num(" + x + "))::bigint", nil
		case etText:
			return "trunc(fg_num(to_jsonb(" + x + ")))::bigint", nil
		case etBool:
			return "(" + x + ")::int::bigint", nil
		case etTime:
			return "(extract(epoch FROM " + x + ") * 1000)::bigint", nil
		}
	case etText:
		switch e.t {
		case etJSON:
			return "(" + x + " #>> '{}')", nil
		case etNum, etInt, etBool:
			return "(" + x + ")::text", nil
		case etTime:
			return "to_char((" + x + ") AT TIME ZONE 'UTC', " + esqlTimeFormat + ")", nil
		}
	case etTime:
		switch e.t {
		case etJSON:
			return "fg_time(" + x + ")", nil
		case etText:
			return "fg_time(to_jsonb(" + x + "))", nil
		case etNum, etInt:
			return "to_timestamp((" + x + ")::double precision / 1000)", nil
		}
	case etBool:
		switch e.t {
		case etJSON:
			return tr.bind(func(v []string) string {
				j := v[0]
				return "CASE jsonb_typeof(" + j + ") WHEN 'boolean' THEN (" + j + ")::boolean WHEN 'string' THEN (CASE lower(" + j +
					" #>> '{}') WHEN 'true' THEN true WHEN 'false' THEN false END) WHEN 'number' THEN fg_num(" + j + ") <> 0 END"
			}, x), nil
		case etText:
			return "(CASE lower(" + x + ") WHEN 'true' THEN true WHEN 'false' THEN false END)", nil
		case etNum, etInt:
			return "((" + x + ") <> 0)", nil
		}
	case etJSON:
		if e.t == etTime {
			s, _ := tr.conv(at, e, etText)
			return "to_jsonb(" + s + ")", nil
		}
		if e.t != etDur {
			return "to_jsonb(" + x + ")", nil
		}
	}
	return "", esqlBad(at, "cannot convert %s to %s", e.t, t)
}

// esqlParseTime reads a date literal.
func esqlParseTime(s string) (time.Time, bool) {
	t, _, err := datemath.Parse(s, time.UTC)
	return t.UTC(), err == nil
}

// unify is the type two operands are compared or combined in.
func esqlUnify(ts ...esqlType) esqlType {
	has := map[esqlType]bool{}
	for _, t := range ts {
		has[t] = true
	}
	switch {
	case has[etTime]:
		return etTime
	case has[etNum]:
		return etNum
	case has[etInt]:
		if has[etJSON] || has[etText] {
			return etNum
		}
		return etInt
	case has[etText]:
		return etText
	case has[etBool]:
		return etBool
	case has[etJSON]:
		return etJSON
	case has[etDur]:
		return etDur
	}
	return etText
}

func (tr *esqlTranslator) convAll(es []esqlExpr, ats []esql.Pos, t esqlType) ([]string, error) {
	out := make([]string, len(es))
	for i, e := range es {
		s, err := tr.conv(ats[i], e, t)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func (tr *esqlTranslator) compile(x esql.Expr, st *esqlStats) (esqlExpr, error) {
	a := tr.a
	switch x := x.(type) {
	case *esql.Literal:
		switch x.Kind {
		case esql.LitNull:
			return esqlExpr{sql: "NULL", t: etNull, lit: x}, nil
		case esql.LitBool:
			return tr.literal(x, x.Value, "::boolean", etBool), nil
		case esql.LitInt:
			return tr.literal(x, x.Value, "::bigint", etInt), nil
		case esql.LitFloat:
			return tr.literal(x, x.Value, "::double precision", etNum), nil
		case esql.LitString:
			return tr.literal(x, x.Value, "::text", etText), nil
		case esql.LitDuration:
			return tr.literal(x, fmt.Sprintf("%d %s", x.Value, x.Unit), "::text::interval", etDur), nil
		}
	case *esql.Ident:
		if st != nil {
			for i := len(st.by) - 1; i >= 0; i-- {
				if st.by[i].name == x.Name {
					return esqlExpr{sql: st.by[i].sql, t: st.by[i].t, uuid: st.by[i].uuid}, nil
				}
			}
			return esqlExpr{}, esqlBad(x.At, "column [%s] must appear in the STATS BY clause or be used in an aggregate function", x.Name)
		}
		return tr.resolve(x.At, x.Name)
	case *esql.Unary:
		e, err := tr.compile(x.X, st)
		if err != nil {
			return e, err
		}
		if x.Op == "NOT" {
			b, err := tr.conv(x.X.Position(), e, etBool)
			if err != nil {
				return e, err
			}
			return esqlExpr{sql: "(NOT " + b + ")", t: etBool}, nil
		}
		switch e.t {
		case etInt, etDur, etNum:
			return esqlExpr{sql: "(-" + e.sql + ")", t: e.t}, nil
		case etNull:
			return e, nil
		}
		n, err := tr.conv(x.X.Position(), e, etNum)
		if err != nil {
			return e, err
		}
		return esqlExpr{sql: "(-" + n + ")", t: etNum}, nil
	case *esql.Binary:
		return tr.binary(x, st)
	case *esql.IsNull:
		e, err := tr.compile(x.X, st)
		if err != nil {
			return e, err
		}
		if e.t == etNull {
			return esqlExpr{sql: fmt.Sprint(!x.Not), t: etBool}, nil
		}
		op := " IS NULL)"
		if x.Not {
			op = " IS NOT NULL)"
		}
		return esqlExpr{sql: "(" + e.sql + op, t: etBool}, nil
	case *esql.Like:
		e, err := tr.compile(x.X, st)
		if err != nil {
			return e, err
		}
		s, err := tr.conv(x.X.Position(), e, etText)
		if err != nil {
			return e, err
		}
		var sqlText string
		if x.Regex {
			sqlText = "(" + s + " ~ " + a.add("^(?:"+x.Pattern+")$") + "::text)"
		} else {
			sqlText = "(" + s + " LIKE " + a.add(likePattern(x.Pattern)) + "::text)"
		}
		if x.Not {
			sqlText = "(NOT " + sqlText + ")"
		}
		return esqlExpr{sql: sqlText, t: etBool}, nil
	case *esql.In:
		all := []esql.Expr{x.X}
		all = append(all, x.List...)
		es := make([]esqlExpr, len(all))
		ats := make([]esql.Pos, len(all))
		ts := make([]esqlType, len(all))
		for i, y := range all {
			e, err := tr.compile(y, st)
			if err != nil {
				return e, err
			}
			es[i], ats[i], ts[i] = e, y.Position(), e.t
		}
		t := esqlUnify(ts...)
		ss, err := tr.convAll(es, ats, t)
		if err != nil {
			return esqlExpr{}, err
		}
		op := " IN ("
		if x.Not {
			op = " NOT IN ("
		}
		return esqlExpr{sql: "(" + ss[0] + op + strings.Join(ss[1:], ", ") + "))", t: etBool}, nil
	case *esql.Cast:
		e, err := tr.compile(x.X, st)
		if err != nil {
			return e, err
		}
		var t esqlType
		switch x.Type {
		case "integer", "int", "long":
			t = etInt
		case "double":
			t = etNum
		case "keyword", "text", "string":
			t = etText
		case "datetime", "date":
			t = etTime
		case "boolean", "bool":
			t = etBool
		}
		s, err := tr.conv(x.At, e, t)
		return esqlExpr{sql: s, t: t}, err
	case *esql.Call:
		if _, ok := esql.Aggregates[x.Name]; ok {
			return tr.aggregate(x, st)
		}
		return tr.function(x, st)
	}
	return esqlExpr{}, esqlBad(x.Position(), "unsupported expression")
}

func (tr *esqlTranslator) binary(x *esql.Binary, st *esqlStats) (esqlExpr, error) {
	l, err := tr.compile(x.L, st)
	if err != nil {
		return l, err
	}
	r, err := tr.compile(x.R, st)
	if err != nil {
		return r, err
	}
	lp, rp := x.L.Position(), x.R.Position()
	switch x.Op {
	case "AND", "OR":
		ls, err := tr.conv(lp, l, etBool)
		if err != nil {
			return l, err
		}
		rs, err := tr.conv(rp, r, etBool)
		if err != nil {
			return r, err
		}
		return esqlExpr{sql: "(" + ls + " " + x.Op + " " + rs + ")", t: etBool}, nil
	case "==", "!=", "<", "<=", ">", ">=":
		t := esqlUnify(l.t, r.t)
		if t == etDur {
			return l, esqlBad(x.At, "cannot compare time spans")
		}
		ls, err := tr.conv(lp, l, t)
		if err != nil {
			return l, err
		}
		rs, err := tr.conv(rp, r, t)
		if err != nil {
			return r, err
		}
		op := x.Op
		switch op {
		case "==":
			op = "="
		case "!=":
			op = "<>"
		}
		if c, ok := tr.clientUUIDEquality(l, r, op); ok {
			return c, nil
		}
		return esqlExpr{sql: "(" + ls + " " + op + " " + rs + ")", t: etBool}, nil
	}
	// Arithmetic.
	if l.t == etDur || r.t == etDur {
		switch {
		case l.t == etDur && r.t == etDur && (x.Op == "+" || x.Op == "-"):
			return esqlExpr{sql: "(" + l.sql + " " + x.Op + " " + r.sql + ")", t: etDur}, nil
		case r.t == etDur && (x.Op == "+" || x.Op == "-") && l.t != etDur:
			ls, err := tr.conv(lp, l, etTime)
			if err != nil {
				return l, err
			}
			return esqlExpr{sql: "(" + ls + " " + x.Op + " " + r.sql + ")", t: etTime}, nil
		case l.t == etDur && x.Op == "+":
			rs, err := tr.conv(rp, r, etTime)
			if err != nil {
				return r, err
			}
			return esqlExpr{sql: "(" + rs + " + " + l.sql + ")", t: etTime}, nil
		}
		return l, esqlBad(x.At, "operator %s is not defined for %s and %s", x.Op, l.t, r.t)
	}
	if l.t == etTime || r.t == etTime {
		return l, esqlBad(x.At, "operator %s on a datetime needs a time span such as 1 day", x.Op)
	}
	t := etNum
	if (l.t == etInt || l.t == etNull) && (r.t == etInt || r.t == etNull) {
		t = etInt
	}
	ls, err := tr.conv(lp, l, t)
	if err != nil {
		return l, err
	}
	rs, err := tr.conv(rp, r, t)
	if err != nil {
		return r, err
	}
	switch x.Op {
	case "/":
		return esqlExpr{sql: "(" + ls + " / NULLIF(" + rs + ", 0))", t: t}, nil
	case "%":
		if t == etInt {
			return esqlExpr{sql: "(" + ls + " % NULLIF(" + rs + ", 0))", t: t}, nil
		}
		return esqlExpr{sql: "mod((" + ls + ")::numeric, NULLIF(" + rs + ", 0)::numeric)::double precision", t: t}, nil
	}
	return esqlExpr{sql: "(" + ls + " " + x.Op + " " + rs + ")", t: t}, nil
}

// clientUUIDEquality compares the document's client_uuid with a string
// literal as uuids (so that the (data_owner_id, kind, client_uuid, ...)
// index applies) when the literal is a UUID as PostgreSQL writes one (lower
// case, hyphenated): the text of a uuid equals such a string exactly when
// the uuids are equal. Other strings keep the text comparison.
func (tr *esqlTranslator) clientUUIDEquality(l, r esqlExpr, op string) (esqlExpr, bool) {
	if (op != "=" && op != "<>") || tr.plain {
		return esqlExpr{}, false
	}
	if r.uuid != "" {
		l, r = r, l
	}
	if l.uuid == "" || r.lit == nil || r.lit.Kind != esql.LitString {
		return esqlExpr{}, false
	}
	v, ok := r.lit.Value.(string)
	if !ok || !esqlCanonicalUUID(v) {
		return esqlExpr{}, false
	}
	return esqlExpr{sql: "(" + l.uuid + " " + op + " " + tr.reuse(r, v) + "::text::uuid)", t: etBool}, true
}

// esqlCanonicalUUID reports whether s is a UUID in PostgreSQL's output form.
func esqlCanonicalUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

func (tr *esqlTranslator) args(x *esql.Call, st *esqlStats) ([]esqlExpr, error) {
	out := make([]esqlExpr, len(x.Args))
	for i, y := range x.Args {
		e, err := tr.compile(y, st)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

func (tr *esqlTranslator) function(x *esql.Call, st *esqlStats) (esqlExpr, error) {
	if x.Name == "DATE_EXTRACT" || x.Name == "DATE_DIFF" {
		return tr.dateFunction(x, st)
	}
	es, err := tr.args(x, st)
	if err != nil {
		return esqlExpr{}, err
	}
	pos := func(i int) esql.Pos { return x.Args[i].Position() }
	arg := func(i int, t esqlType) (string, error) { return tr.conv(pos(i), es[i], t) }
	// bound converts the arguments to ts and binds each once for body.
	bound := func(out esqlType, body func(v []string) string, ts ...esqlType) (esqlExpr, error) {
		vals := make([]string, len(ts))
		for i, t := range ts {
			if vals[i], err = arg(i, t); err != nil {
				return esqlExpr{}, err
			}
		}
		return esqlExpr{sql: tr.bind(body, vals...), t: out}, nil
	}
	// unified converts every argument to their common type.
	unified := func() (esqlType, []string, error) {
		ts := make([]esqlType, len(es))
		ats := make([]esql.Pos, len(es))
		for i, e := range es {
			ts[i], ats[i] = e.t, pos(i)
		}
		t := esqlUnify(ts...)
		ss, err := tr.convAll(es, ats, t)
		return t, ss, err
	}
	one := func(t esqlType, tmpl string, out esqlType) (esqlExpr, error) {
		s, err := arg(0, t)
		if err != nil {
			return esqlExpr{}, err
		}
		return esqlExpr{sql: strings.ReplaceAll(tmpl, "X", s), t: out}, nil
	}
	switch x.Name {
	case "NOW":
		return esqlExpr{sql: "now()", t: etTime}, nil
	case "TO_LOWER":
		return one(etText, "lower(X)", etText)
	case "TO_UPPER":
		return one(etText, "upper(X)", etText)
	case "LENGTH":
		return one(etText, "char_length(X)::bigint", etInt)
	case "TRIM":
		return one(etText, "btrim(X)", etText)
	case "TO_STRING":
		return one(etText, "X", etText)
	case "TO_INTEGER", "TO_LONG":
		return one(etInt, "X", etInt)
	case "TO_DOUBLE":
		return one(etNum, "X", etNum)
	case "TO_DATETIME":
		return one(etTime, "X", etTime)
	case "CONCAT":
		parts := make([]string, len(es))
		for i := range es {
			if parts[i], err = arg(i, etText); err != nil {
				return esqlExpr{}, err
			}
		}
		return esqlExpr{sql: "(" + strings.Join(parts, " || ") + ")", t: etText}, nil
	case "SUBSTRING":
		s, err := arg(0, etText)
		if err != nil {
			return esqlExpr{}, err
		}
		start, err := arg(1, etInt)
		if err != nil {
			return esqlExpr{}, err
		}
		vals := []string{s, start}
		if len(es) == 3 {
			n, err := arg(2, etInt)
			if err != nil {
				return esqlExpr{}, err
			}
			vals = append(vals, n)
		}
		return esqlExpr{sql: tr.bind(func(v []string) string {
			eff := "(CASE WHEN " + v[1] + " < 0 THEN GREATEST(char_length(" + v[0] + ") + " + v[1] + " + 1, 1) WHEN " +
				v[1] + " = 0 THEN 1 ELSE " + v[1] + " END)::int"
			if len(v) == 3 {
				return "substr(" + v[0] + ", " + eff + ", GREATEST(" + v[2] + ", 0)::int)"
			}
			return "substr(" + v[0] + ", " + eff + ")"
		}, vals...), t: etText}, nil
	case "ROUND":
		if es[0].t == etInt && len(es) == 1 {
			return es[0], nil
		}
		n, err := arg(0, etNum)
		if err != nil {
			return esqlExpr{}, err
		}
		d := "0"
		if len(es) == 2 {
			if d, err = arg(1, etInt); err != nil {
				return esqlExpr{}, err
			}
		}
		if es[0].t == etInt {
			return esqlExpr{sql: "round((" + n + ")::numeric, (" + d + ")::int)::bigint", t: etInt}, nil
		}
		return esqlExpr{sql: "round((" + n + ")::numeric, (" + d + ")::int)::double precision", t: etNum}, nil
	case "ABS", "FLOOR", "CEIL":
		fn := strings.ToLower(x.Name)
		if es[0].t == etInt {
			return esqlExpr{sql: fn + "(" + es[0].sql + ")", t: etInt}, nil
		}
		return one(etNum, fn+"(X)", etNum)
	case "COALESCE":
		t, ss, err := unified()
		if err != nil {
			return esqlExpr{}, err
		}
		return esqlExpr{sql: "COALESCE(" + strings.Join(ss, ", ") + ")", t: t}, nil
	case "CASE":
		var vals []esqlExpr
		var vpos []esql.Pos
		var conds []string
		for i := 0; i+1 < len(es); i += 2 {
			c, err := arg(i, etBool)
			if err != nil {
				return esqlExpr{}, err
			}
			conds = append(conds, c)
			vals = append(vals, es[i+1])
			vpos = append(vpos, pos(i+1))
		}
		hasElse := len(es)%2 == 1
		if hasElse {
			vals = append(vals, es[len(es)-1])
			vpos = append(vpos, pos(len(es)-1))
		}
		ts := make([]esqlType, len(vals))
		for i, v := range vals {
			ts[i] = v.t
		}
		t := esqlUnify(ts...)
		ss, err := tr.convAll(vals, vpos, t)
		if err != nil {
			return esqlExpr{}, err
		}
		var b strings.Builder
		b.WriteString("(CASE")
		for i, c := range conds {
			b.WriteString(" WHEN " + c + " THEN " + ss[i])
		}
		if hasElse {
			b.WriteString(" ELSE " + ss[len(ss)-1])
		}
		b.WriteString(" END)")
		return esqlExpr{sql: b.String(), t: t}, nil
	case "STARTS_WITH", "ENDS_WITH":
		fn := map[string]string{"STARTS_WITH": "left", "ENDS_WITH": "right"}[x.Name]
		return bound(etBool, func(v []string) string {
			return fn + "(" + v[0] + ", char_length(" + v[1] + ")) = " + v[1]
		}, etText, etText)
	case "LEFT", "RIGHT":
		fn := strings.ToLower(x.Name)
		return bound(etText, func(v []string) string {
			return fn + "(" + v[0] + ", LEAST(GREATEST(" + v[1] + ", 0), 2147483647)::int)"
		}, etText, etInt)
	case "SQRT":
		return bound(etNum, func(v []string) string { return "CASE WHEN " + v[0] + " >= 0 THEN sqrt(" + v[0] + ") END" }, etNum)
	case "LOG10":
		return bound(etNum, func(v []string) string { return "CASE WHEN " + v[0] + " > 0 THEN log(" + v[0] + ") END" }, etNum)
	case "POW":
		// Undefined results (a negative base to a fractional power, 0 to a
		// negative one) are null; overflow is a 400 like other overflows.
		return bound(etNum, func(v []string) string {
			return "(CASE WHEN (" + v[0] + " < 0 AND " + v[1] + " <> floor(" + v[1] + ")) OR (" + v[0] + " = 0 AND " +
				v[1] + " < 0) THEN NULL ELSE power(" + v[0] + ", " + v[1] + ") END)"
		}, etNum, etNum)
	case "GREATEST", "LEAST":
		t, ss, err := unified()
		if err != nil {
			return esqlExpr{}, err
		}
		// Elasticsearch answers null when an argument is null.
		nulls := make([]string, len(ss))
		for i, v := range ss {
			nulls[i] = v + " IS NULL"
		}
		return esqlExpr{sql: "(CASE WHEN " + strings.Join(nulls, " OR ") + " THEN NULL ELSE " + x.Name + "(" +
			strings.Join(ss, ", ") + ") END)", t: t}, nil
	case "TO_BOOLEAN":
		return one(etBool, "X", etBool)
	case "DATE_TRUNC":
		return tr.timeBucket(x, es[1], pos(1), es[0], pos(0))
	case "BUCKET":
		if es[1].t != etDur {
			// Numeric buckets: floor(x / span) * span.
			if es[0].t == etTime {
				return esqlExpr{}, esqlBad(pos(1), "BUCKET of a datetime needs a time span such as 1 hour")
			}
			n, err := arg(0, etNum)
			if err != nil {
				return esqlExpr{}, err
			}
			span, err := arg(1, etNum)
			if err != nil {
				return esqlExpr{}, err
			}
			return esqlExpr{sql: "(floor(" + n + " / NULLIF(" + span + ", 0)) * " + span + ")", t: etNum}, nil
		}
		return tr.timeBucket(x, es[0], pos(0), es[1], pos(1))
	}
	return esqlExpr{}, search.Badf("function %s is not supported", x.Name)
}

// fixed time span lengths; months, quarters and years are calendar units.
var esqlFixedUnits = map[string]time.Duration{
	"millisecond": time.Millisecond, "second": time.Second, "minute": time.Minute,
	"hour": time.Hour, "day": 24 * time.Hour, "week": 7 * 24 * time.Hour,
}

// timeBucket rounds date down to a multiple of span (a time span literal):
// calendar units through month arithmetic in UTC, one week to the Monday,
// other fixed spans to multiples since the epoch.
func (tr *esqlTranslator) timeBucket(x *esql.Call, date esqlExpr, datePos esql.Pos, span esqlExpr, spanPos esql.Pos) (esqlExpr, error) {
	if span.lit == nil || span.lit.Kind != esql.LitDuration {
		return esqlExpr{}, esqlBad(spanPos, "%s needs a time span literal such as 1 hour", x.Name)
	}
	n := span.lit.Value.(int64)
	if n <= 0 {
		return esqlExpr{}, esqlBad(spanPos, "%s needs a positive time span", x.Name)
	}
	d, err := tr.conv(datePos, date, etTime)
	if err != nil {
		return esqlExpr{}, err
	}
	unit := span.lit.Unit
	if fixed, ok := esqlFixedUnits[unit]; ok {
		if n > math.MaxInt64/int64(fixed) {
			return esqlExpr{}, esqlBad(spanPos, "time span too large")
		}
		total := fixed * time.Duration(n)
		iv := tr.reuse(span, fmt.Sprintf("%d milliseconds", total.Milliseconds())) + "::text::interval"
		origin := "TIMESTAMPTZ '1970-01-01 00:00:00+00'"
		if unit == "week" {
			origin = "TIMESTAMPTZ '1970-01-05 00:00:00+00'" // weeks start on Monday
		}
		return esqlExpr{sql: "date_bin(" + iv + ", " + d + ", " + origin + ")", t: etTime}, nil
	}
	months := n
	switch unit {
	case "quarter":
		months *= 3
	case "year":
		months *= 12
	}
	if months > 1<<20 {
		return esqlExpr{}, esqlBad(spanPos, "time span too large")
	}
	m := tr.reuse(span, months) + "::bigint"
	sqlText := tr.bind(func(v []string) string {
		idx := "((extract(year FROM " + v[0] + ")::bigint - 1970) * 12 + extract(month FROM " + v[0] + ")::bigint - 1)"
		return "(TIMESTAMP '1970-01-01 00:00:00' + make_interval(months => (floor(" + idx + "::numeric / " + m + ") * " + m + ")::int)) AT TIME ZONE 'UTC'"
	}, "(("+d+") AT TIME ZONE 'UTC')")
	return esqlExpr{sql: sqlText, t: etTime}, nil
}

func (tr *esqlTranslator) aggregate(x *esql.Call, st *esqlStats) (esqlExpr, error) {
	if st == nil {
		return esqlExpr{}, esqlBad(x.At, "aggregate function %s is only allowed in STATS", x.Name)
	}
	st.sawAgg = true
	if x.Star {
		return esqlExpr{sql: "count(*)", t: etInt}, nil
	}
	nargs := len(x.Args)
	if x.Name == "COUNT_DISTINCT" {
		nargs = 1 // the precision threshold does not apply: counts are exact
	}
	es := make([]esqlExpr, nargs)
	for i, y := range x.Args[:nargs] {
		e, err := tr.compile(y, nil) // row context: no nested aggregates
		if err != nil {
			return esqlExpr{}, err
		}
		es[i] = e
	}
	p0 := x.Args[0].Position()
	e := es[0]
	if e.t == etDur {
		return esqlExpr{}, esqlBad(p0, "%s of a time span is not supported", x.Name)
	}
	num := func() (string, error) { return tr.conv(p0, e, etNum) }
	switch x.Name {
	case "COUNT":
		return esqlExpr{sql: "count(" + e.sql + ")", t: etInt}, nil
	case "COUNT_DISTINCT":
		return esqlExpr{sql: "count(DISTINCT " + e.sql + ")", t: etInt}, nil
	case "SUM":
		if e.t == etInt {
			return esqlExpr{sql: "sum(" + e.sql + ")::bigint", t: etInt}, nil
		}
		n, err := num()
		if err != nil {
			return esqlExpr{}, err
		}
		return esqlExpr{sql: "sum(" + n + ")", t: etNum}, nil
	case "AVG":
		n, err := num()
		if err != nil {
			return esqlExpr{}, err
		}
		return esqlExpr{sql: "avg(" + n + ")::double precision", t: etNum}, nil
	case "MEDIAN":
		n, err := num()
		if err != nil {
			return esqlExpr{}, err
		}
		return esqlExpr{sql: "percentile_cont(0.5) WITHIN GROUP (ORDER BY " + n + ")", t: etNum}, nil
	case "PERCENTILE":
		lit, ok := x.Args[1].(*esql.Literal)
		var p float64
		switch {
		case ok && lit.Kind == esql.LitInt:
			p = float64(lit.Value.(int64))
		case ok && lit.Kind == esql.LitFloat:
			p = lit.Value.(float64)
		default:
			return esqlExpr{}, esqlBad(x.Args[1].Position(), "PERCENTILE needs a constant percentile")
		}
		if p < 0 || p > 100 || math.IsNaN(p) {
			return esqlExpr{}, esqlBad(x.Args[1].Position(), "PERCENTILE must be between 0 and 100")
		}
		n, err := num()
		if err != nil {
			return esqlExpr{}, err
		}
		return esqlExpr{sql: "percentile_cont(" + tr.reuse(es[1], p/100) + "::double precision) WITHIN GROUP (ORDER BY " + n + ")", t: etNum}, nil
	case "VALUES":
		// The distinct non-null values: one value alone, several as an
		// array (in JSON order; Elasticsearch does not promise one).
		j, err := tr.conv(p0, e, etJSON)
		if err != nil {
			return esqlExpr{}, err
		}
		agg := "array_agg(DISTINCT " + j + " ORDER BY " + j + ") FILTER (WHERE " + j + " IS NOT NULL)"
		return esqlExpr{sql: tr.bind(func(v []string) string {
			return "CASE WHEN cardinality(" + v[0] + ") = 1 THEN " + v[0] + "[1] ELSE to_jsonb(" + v[0] + ") END"
		}, agg), t: etJSON}, nil
	case "MIN", "MAX":
		fn := strings.ToLower(x.Name)
		switch e.t {
		case etBool:
			if fn == "min" {
				return esqlExpr{sql: "bool_and(" + e.sql + ")", t: etBool}, nil
			}
			return esqlExpr{sql: "bool_or(" + e.sql + ")", t: etBool}, nil
		case etJSON:
			// A document value: numbers first, then dates, then strings.
			sqlText := "COALESCE(to_jsonb(" + fn + "(fg_num(" + e.sql + "))), to_jsonb(to_char(" + fn + "(fg_time(" + e.sql +
				")) AT TIME ZONE 'UTC', " + esqlTimeFormat + ")), to_jsonb(" + fn + "(" + e.sql + " #>> '{}')))"
			return esqlExpr{sql: sqlText, t: etJSON}, nil
		case etNull:
			return esqlExpr{sql: "NULL::text", t: etText}, nil
		}
		return esqlExpr{sql: fn + "(" + e.sql + ")", t: e.t}, nil
	}
	return esqlExpr{}, search.Badf("function %s is not supported", x.Name)
}

// esqlStringLit is the value of a string literal argument.
func esqlStringLit(e esql.Expr) (string, bool) {
	l, ok := e.(*esql.Literal)
	if !ok || l.Kind != esql.LitString {
		return "", false
	}
	s, ok := l.Value.(string)
	return s, ok
}

// dateExtractParts are the parts DATE_EXTRACT reads (Java ChronoField
// names, as Elasticsearch takes them), in UTC.
var dateExtractParts = map[string]string{
	"YEAR":             "extract(year from (X) AT TIME ZONE 'UTC')::bigint",
	"MONTH_OF_YEAR":    "extract(month from (X) AT TIME ZONE 'UTC')::bigint",
	"DAY_OF_MONTH":     "extract(day from (X) AT TIME ZONE 'UTC')::bigint",
	"DAY_OF_WEEK":      "extract(isodow from (X) AT TIME ZONE 'UTC')::bigint",
	"DAY_OF_YEAR":      "extract(doy from (X) AT TIME ZONE 'UTC')::bigint",
	"HOUR_OF_DAY":      "extract(hour from (X) AT TIME ZONE 'UTC')::bigint",
	"MINUTE_OF_HOUR":   "extract(minute from (X) AT TIME ZONE 'UTC')::bigint",
	"SECOND_OF_MINUTE": "floor(extract(second from (X) AT TIME ZONE 'UTC'))::bigint",
	"MINUTE_OF_DAY":    "(extract(hour from (X) AT TIME ZONE 'UTC') * 60 + extract(minute from (X) AT TIME ZONE 'UTC'))::bigint",
	"EPOCH_DAY":        "floor(extract(epoch from (X)) / 86400)::bigint",
}

// dateDiffUnits are DATE_DIFF's fixed-length units in milliseconds.
var dateDiffUnits = map[string]int64{
	"millisecond": 1, "milliseconds": 1, "ms": 1,
	"second": 1000, "seconds": 1000, "ss": 1000, "s": 1000,
	"minute": 60000, "minutes": 60000, "mi": 60000, "n": 60000,
	"hour": 3600000, "hours": 3600000, "hh": 3600000,
	"day": 86400000, "days": 86400000, "dd": 86400000, "d": 86400000,
	"week": 604800000, "weeks": 604800000, "wk": 604800000, "ww": 604800000,
}

// dateFunction translates DATE_EXTRACT and DATE_DIFF, whose first argument
// names a part or unit (a string literal, read here, not a value).
func (tr *esqlTranslator) dateFunction(x *esql.Call, st *esqlStats) (esqlExpr, error) {
	name, ok := esqlStringLit(x.Args[0])
	if !ok {
		return esqlExpr{}, esqlBad(x.Args[0].Position(), "%s needs the %s as a string literal", x.Name,
			map[string]string{"DATE_EXTRACT": "part", "DATE_DIFF": "unit"}[x.Name])
	}
	dates := make([]string, len(x.Args)-1)
	for i, a := range x.Args[1:] {
		e, err := tr.compile(a, st)
		if err != nil {
			return esqlExpr{}, err
		}
		if dates[i], err = tr.conv(a.Position(), e, etTime); err != nil {
			return esqlExpr{}, err
		}
	}
	if x.Name == "DATE_EXTRACT" {
		tmpl, ok := dateExtractParts[strings.ToUpper(name)]
		if !ok {
			return esqlExpr{}, esqlBad(x.Args[0].Position(), "unsupported DATE_EXTRACT part %q", name)
		}
		return esqlExpr{sql: strings.ReplaceAll(tmpl, "X", dates[0]), t: etInt}, nil
	}
	ms, ok := dateDiffUnits[strings.ToLower(name)]
	if !ok {
		return esqlExpr{}, esqlBad(x.Args[0].Position(), "unsupported DATE_DIFF unit %q", name)
	}
	return esqlExpr{sql: "trunc(extract(epoch from (" + dates[1] + ") - (" + dates[0] + ")) * 1000 / " +
		strconv.FormatInt(ms, 10) + ")::bigint", t: etInt}, nil
}
