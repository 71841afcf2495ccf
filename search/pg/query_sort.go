package pg

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/search"
)

// Sorting of hits: sort keys, search_after conditions.

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
	// kind: score, doc, time, date, column, json
	kind string
	desc bool // (date) descending
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
		var field, order, missing, mode string
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
						case "mode":
							mode = strings.ToLower(scalarText(x))
						case "unmapped_type", "format", "numeric_type":
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
		key, err := c.sortKey(field, order, missing, mode)
		if err != nil {
			return nil, err
		}
		keys = append(keys, key)
	}
	return keys, nil
}

func (c *compiler) sortKey(field, order, missing, mode string) (sortKey, error) {
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
	// A multi-valued field sorts by one value of each document: its least
	// ascending, its greatest descending (mode min, max, avg or sum
	// chooses), as Elasticsearch does.
	if mode == "" {
		mode = "min"
		if desc {
			mode = "max"
		}
	}
	var mv func(j string) string
	switch mode {
	case "min":
		mv = func(j string) string { return "fg_mv_min(" + j + ")" }
	case "max":
		mv = func(j string) string { return "fg_mv_max(" + j + ")" }
	case "avg", "sum":
		mv = func(j string) string {
			return "(SELECT to_jsonb(" + mode + "(fg_num(e))) FROM fg_mv(" + j + ") e)"
		}
	default:
		return sortKey{}, search.Badf("unsupported sort mode %q (min, max, avg or sum)", mode)
	}
	if c.a.isDate(field) {
		// A date of the mapping: ordered as dates, reported and continued
		// (search_after) in epoch milliseconds; a document without one
		// reports Long.MAX_VALUE ascending, Long.MIN_VALUE descending, as
		// Elasticsearch does.
		t := "fg_time(" + mv(jsonExpr(c.a, f)) + ")"
		return sortKey{field: f, kind: "date", sel: t, desc: desc, subs: []subKey{
			{"(CASE WHEN " + t + " IS NULL THEN 1 ELSE 0 END)", missingFirst, "int"},
			{"COALESCE(" + t + ", " + c.a.add(time.Time{}) + "::timestamptz)", desc, "timestamptz"},
		}}, nil
	}
	v := mv(jsonExpr(c.a, f))
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
	case "date":
		if f, ok := numberOrNumeric(v); v == nil || ok && (f >= math.MaxInt64 || f <= math.MinInt64) {
			return []any{1, time.Time{}}, nil
		}
		var c compiler
		c.now = time.Now()
		t, err := c.dateValue(v, false, nil)
		if err != nil {
			return nil, search.Badf("search_after value for %q must be a date or epoch milliseconds", k.field)
		}
		return []any{0, msTime{t}}, nil
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
