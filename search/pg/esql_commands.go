package pg

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/esql"
)

// ES|QL processing commands (WHERE, EVAL, STATS, SORT, LIMIT, KEEP, DROP,
// RENAME, LOOKUP JOIN), each wrapping the relation built so far.

func (tr *esqlTranslator) where(c *esql.Where) error {
	e, err := tr.compile(c.Cond, nil)
	if err != nil {
		return err
	}
	cond, err := tr.conv(c.Cond.Position(), e, etBool)
	if err != nil {
		return err
	}
	tr.fenceIfHeavy(cond)
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
		size := tr.fenceIfHeavy(sqlText)
		al := tr.alias("c")
		tr.wrap("s.*, "+sqlText+" AS "+al, "")
		tr.recordInlined(al, size)
		tr.setCol(esqlCol{name: f.Name, sql: "s." + al, t: e.t, mt: e.mt})
	}
	return nil
}

func (tr *esqlTranslator) stats(c *esql.Stats) error {
	tr.decideBase(nil)
	st := &esqlStats{}
	inner := []string{"s.*", "true AS fg_row"} // fg_row: see aggregate's COUNT(*)
	var group, lateral []string
	// aliases are the BY columns named by an alias (BY a = x + y): the
	// aggregates may read them (MAX(a)), as the grouping value.
	var aliases []esqlCol
	for i, f := range c.By {
		if slices.ContainsFunc(c.By[i+1:], func(g esql.Field) bool { return g.Name == f.Name }) {
			continue // shadowed by a later BY column of the same name (ES|QL)
		}
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
		tr.fenceIfHeavy(e.sql)
		al := tr.alias("g")
		if e.uuid != "" {
			// client_uuid: grouped as the uuid column (the same groups),
			// converted to text once per group.
			inner = append(inner, e.uuid+" AS "+al)
			group = append(group, "s."+al)
			st.by = append(st.by, esqlCol{name: f.Name, sql: "(s." + al + ")::text", t: e.t, mt: e.mt, uuid: "s." + al})
			continue
		}
		if e.t == etJSON {
			// A document value: a multi-value (array) puts the row in one
			// group per value; a row without one is in the null group.
			lx := tr.alias("x")
			lateral = append(lateral, " LEFT JOIN LATERAL fg_mv("+e.sql+") AS "+lx+"(v) ON true")
			inner = append(inner, lx+".v AS "+al)
		} else {
			inner = append(inner, e.sql+" AS "+al)
		}
		group = append(group, "s."+al)
		col := esqlCol{name: f.Name, sql: "s." + al, t: e.t, mt: e.mt}
		st.by = append(st.by, col)
		if id, ok := f.Expr.(*esql.Ident); !ok || id.Name != f.Name {
			aliases = append(aliases, col)
		}
	}
	outerCols := tr.cols
	tr.cols = append(slices.Clip(tr.cols), aliases...)
	var sel []string
	var cols []esqlCol
	for _, f := range c.Aggs {
		st.sawAgg, st.sawBy, st.where = false, false, ""
		if f.Where != nil {
			w, err := tr.compile(f.Where, nil)
			if err != nil {
				return err
			}
			if st.where, err = tr.conv(f.Where.Position(), w, etBool); err != nil {
				return err
			}
		}
		e, err := tr.compile(f.Expr, st)
		if err != nil {
			return err
		}
		if !st.sawAgg && !st.sawBy {
			// A function of the grouping keys alone is answered
			// (STATS l = LENGTH(g) BY g = ...), a constant is not.
			return esqlBad(f.Expr.Position(), "expected an aggregate function in STATS, found [%s]", f.Name)
		}
		if e.t == etNull {
			e.sql, e.t = "NULL::text", etText
		}
		tr.fenceIfHeavy(e.sql)
		al := tr.alias("c")
		sel = append(sel, e.sql+" AS "+al)
		cols = append(cols, esqlCol{name: f.Name, sql: "s." + al, t: e.t, mt: e.mt})
	}
	tr.cols = outerCols
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
	tr.from = "(SELECT " + strings.Join(inner, ", ") + " FROM " + tr.from + " s" + strings.Join(lateral, "") + ")"
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
	clear(tr.inlined) // a grouped query is never pulled up
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
		tr.fenceIfHeavy(e.sql)
		item := e.sql
		if e.t == etJSON {
			// A multi-value sorts by its least value ascending, its
			// greatest descending, as in ES|QL.
			if o.Desc {
				item = "fg_mv_max(" + item + ")"
			} else {
				item = "fg_mv_min(" + item + ")"
			}
		}
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
	if n > limits.MaxESQLRows {
		n = limits.MaxESQLRows
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
			cols = append(cols, esqlCol{name: p, sql: e.sql, t: e.t, mt: e.mt, uuid: e.uuid})
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
	// Every name is resolved against the columns before the command: DROP
	// a, a drops a once (Elasticsearch answers it).
	before := make([]string, len(tr.cols))
	for i, col := range tr.cols {
		before[i] = col.name
	}
	for _, p := range c.Patterns {
		if tr.doc == nil && !strings.Contains(p, "*") && !slices.Contains(before, p) {
			return esqlBad(c.At, "Unknown column [%s]", p)
		}
		tr.cols = slices.DeleteFunc(tr.cols, func(col esqlCol) bool { return search.GlobMatch(p, col.name) })
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
			tr.setCol(esqlCol{name: p.New, sql: e.sql, t: e.t, mt: e.mt, uuid: e.uuid})
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
