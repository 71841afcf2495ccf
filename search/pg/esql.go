package pg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fleetgraph/fleetgraph/isotime"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/limits/budget"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/esql"
	"github.com/fleetgraph/fleetgraph/store"
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
//     (* ?), [NOT] RLIKE (whole-string match), each with one pattern or a
//     list ("a*", "b*"), [NOT] IN, + - * / %, x::type; literals: strings
//     (also """raw"""), numbers, true/false/null, time spans (7 days, 1
//     hour, ...), multi-values [1, 2, 3]; strings compared with dates are
//     read as dates.
//   - Field values take their type from the mapping (mapping.go): long /
//     long is a long (truncated), MIN/MAX of a boolean is a boolean. An
//     array is a multi-value: COUNT counts values, SUM/AVG/MIN/MAX/VALUES
//     read every element, STATS BY one puts the row in a group per value,
//     a conversion of one converts each element (esql_convert.go), and comparisons and other
//     single-value functions of one are null (without Elasticsearch's
//     Warning header). STATS aggregates may read a BY alias, take WHERE
//     conditions (STATS c = COUNT(*) WHERE x > 1), and a later BY of the
//     same name shadows an earlier one; COUNT() is COUNT(*).
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
	// mt is the mapped type of a document value (t etJSON): its values are
	// read as that type where a type is chosen (arithmetic, comparisons,
	// MIN/MAX); etNull when the field is not typed (mapping.go).
	mt esqlType
}

// typ is the type e takes where a type is chosen: its mapped type for a
// typed document value.
func (e esqlExpr) typ() esqlType {
	if e.t == etJSON && e.mt != etNull {
		return e.mt
	}
	return e.t
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
	mt   esqlType // as esqlExpr.mt
	uuid string   // as esqlExpr.uuid
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
	// inlined is the estimated inlined size of the EVAL columns above the
	// last fence, by alias (esql_inline.go).
	inlined map[string]int
	// mappings are the data owner's index mappings (mapping.go), types the
	// merged mapping of the FROM indices (nil: nothing is typed).
	mappings []indexFields
	types    fieldTypes
	// plain turns off the shortcuts that only make the statement faster
	// (the kind alone for whole kinds, ordered branches, uuid comparisons
	// of client_uuid): tests compare both translations' answers.
	plain bool
	// src is the query's text; cur the operation being compiled, the one a
	// warning names; warnSites the operations that read single values
	// (esql_warn.go), curSites their nodes.
	src       string
	cur       esql.Expr
	warnSites []esqlWarnSite
	curSites  []esql.Expr
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
	sawBy  bool // a BY column was read outside an aggregate
	// where is the condition of the aggregate being compiled (STATS
	// ... WHERE), "" when none: its aggregate calls read only the rows
	// meeting it.
	where string
}

// ESQL runs a piped query (already scope-checked by search.CheckESQL) over
// the data owner's documents and returns one object per row.
func (b *Backend) ESQL(ctx context.Context, dataOwnerID int64, slug, query string) ([]map[string]any, error) {
	return b.esql(ctx, dataOwnerID, slug, query, false)
}

// PrecheckESQL parses the query: what the parser refuses (syntax, what
// the embedded backend does not support, the size limits of search/esql)
// is refused before the query waits for a place.
func (b *Backend) PrecheckESQL(query string) error {
	_, err := parseESQL(query)
	return err
}

// parseESQL is esql.Parse with its refusal as a 400.
func parseESQL(query string) (*esql.Query, error) {
	q, err := esql.Parse(query)
	if err != nil {
		return nil, search.Badf("%s", err.Error())
	}
	return q, nil
}

// esql is ESQL, with the shortcuts off when plain (esqlTranslator.plain).
func (b *Backend) esql(ctx context.Context, dataOwnerID int64, slug, query string, plain bool) ([]map[string]any, error) {
	q, err := parseESQL(query)
	if err != nil {
		return nil, err
	}
	kinds := make([]string, len(search.Kinds))
	for i, k := range search.Kinds {
		kinds[i] = string(k)
	}
	ims, err := loadMappings(ctx, b.reads(ctx), dataOwnerID, kinds)
	if err != nil {
		return nil, err
	}
	tr := &esqlTranslator{a: &args{}, ownerID: dataOwnerID, slug: slug, limit: -1, plain: plain, mappings: ims, src: query}
	stmt, err := tr.translate(q)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	err = b.limited(ctx, b.reads(ctx), b.limit(0), searchTx, "ES|QL query", func(ctx context.Context, q *limitedTx) error {
		var err error
		if out, err = tr.run(ctx, q, stmt); err != nil {
			return err
		}
		warns, err := tr.esqlWarnings(ctx, q)
		search.AddWarnings(ctx, warns...)
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
		if err := budget.Spend(ctx, rowBytes(vals)); err != nil {
			return nil, err
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
				row["created_at"] = isotime.FormatMillis(tm)
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
		return isotime.FormatMillis(x)
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
	tr.fenceIfHeavy(strings.Join(sel, ", "))
	limit := tr.limit
	if limit < 0 {
		limit = limits.ESQLRows
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
	var incGlobs, excGlobs []string
	for _, ip := range f.Indices {
		pat := ip.Pattern
		if p, ok := strings.CutSuffix(pat, "::data"); ok {
			pat = p
		}
		if ip.Exclude {
			excGlobs = append(excGlobs, pat)
		} else {
			incGlobs = append(incGlobs, pat, pat+"-*")
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
	tr.types = mergeMappings(tr.mappings, func(kind, typ string) bool {
		bare := search.IndexName(tr.slug, search.Kind(kind), "")
		name := search.IndexName(tr.slug, search.Kind(kind), typ)
		in := false
		for i, g := range incGlobs {
			// a bare kind name (i even, its "-*" after it) reads its types
			if search.GlobMatch(g, name) && (i%2 == 0 || incGlobs[i-1] == bare) {
				in = true
			}
		}
		return in && !globMatchAny(excGlobs, name)
	})
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

// esqlMapped is the ES|QL type of a mapped field type.
var esqlMapped = map[string]esqlType{store.FieldLong: etInt, store.FieldFloat: etNum, store.FieldBoolean: etBool,
	store.FieldDate: etTime, store.FieldText: etText, "keyword": etText}

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
	return esqlExpr{sql: "NULLIF(s.fg_doc #> " + tr.a.add(path) + "::text[], 'null'::jsonb)", t: etJSON,
		mt: esqlMapped[tr.types.of(name)]}
}

func (tr *esqlTranslator) resolve(at esql.Pos, name string) (esqlExpr, error) {
	if c, ok := tr.findCol(name); ok {
		return esqlExpr{sql: c.sql, t: c.t, mt: c.mt, uuid: c.uuid}, nil
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
