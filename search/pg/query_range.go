package pg

import (
	"sort"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/dateformat"
	"github.com/fleetgraph/fleetgraph/search/datemath"
)

// Range queries: numbers, dates (date math, formats, time zones) and text.

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
	df, err := dateformat.Parse(format)
	if err != nil {
		return "", err
	}
	epoch := df.Millis || df.Seconds
	loc, err := datemath.TimeZone(scalarText(opts["time_zone"]))
	if err != nil {
		return "", err
	}
	kind := "number"
	for _, b := range bounds {
		if _, ok := numberOrNumeric(b.val); !ok {
			kind = "text"
		}
	}
	if field == "created_at" || (kind == "number" && epoch) || df.Custom() {
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
	// Over a document value every bound applies to the same element: a
	// multi-value matches when one of its values is in the range.
	val := func(x string) string {
		switch kind {
		case "number":
			return "fg_num(" + x + ")"
		case "date":
			return "fg_time(" + x + ")"
		}
		return "(" + x + ` #>> '{}') COLLATE "C"`
	}
	var parts []string
	for _, b := range bounds {
		switch kind {
		case "number":
			f, _ := numberOrNumeric(b.val)
			parts = append(parts, "X "+b.op+" "+c.a.add(f)+"::float8")
		case "date":
			t, err := c.dateBound(field, b, format, loc)
			if err != nil {
				return "", err
			}
			parts = append(parts, "X "+b.op+" "+c.a.add(t)+"::timestamptz")
		default:
			parts = append(parts, "X "+b.op+" "+c.a.add(scalarText(b.val)))
		}
	}
	cond := "(" + strings.Join(parts, " AND ") + ")"
	if field == "created_at" {
		return strings.ReplaceAll(cond, "X ", "d.created_at "), nil
	}
	if col, ok := textColumns[field]; ok && kind == "text" {
		return strings.ReplaceAll(cond, "X ", col+` COLLATE "C" `), nil
	}
	j := jsonExpr(c.a, field)
	return "(CASE WHEN jsonb_typeof(" + j + ") = 'array' THEN EXISTS (SELECT 1 FROM fg_mv(" + j + ") AS mv(v) WHERE " +
		strings.ReplaceAll(cond, "X ", val("mv.v")+" ") + ") ELSE " + strings.ReplaceAll(cond, "X ", val(j)+" ") + " END)", nil
}

// dateBound is the time a bound of a date range compares with: numbers are
// epoch milliseconds (seconds with an epoch_second format), strings dates or
// date math, rounded up for > and <=.
func (c *compiler) dateBound(field string, b qBound, format string, loc *time.Location) (time.Time, error) {
	df, err := dateformat.Parse(format)
	if err != nil {
		return time.Time{}, err
	}
	if s, isStr := b.val.(string); isStr && df.Custom() {
		if t, err := c.dateValueFmt(s, b.op == ">" || b.op == "<=", loc, df); err == nil {
			return t, nil
		}
	}
	if f, ok := numberOrNumeric(b.val); ok && (df.Millis || df.Seconds || field == "created_at") {
		if df.Seconds && !df.Millis {
			f *= 1000
		}
		return c.dateValue(f, false, nil)
	}
	return c.dateValueFmt(b.val, b.op == ">" || b.op == "<=", loc, df)
}

// dateValue evaluates a date or date-math expression (now-7d/d,
// 2026-01-01||+1M); numbers are epoch milliseconds. roundUp moves a rounded
// value to the last millisecond of its unit, as gt and lte do.
func (c *compiler) dateValue(v any, roundUp bool, loc *time.Location) (time.Time, error) {
	return c.dateValueFmt(v, roundUp, loc, dateformat.Format{})
}

// dateValueFmt is dateValue reading absolute dates with the format's
// patterns first.
func (c *compiler) dateValueFmt(v any, roundUp bool, loc *time.Location, f dateformat.Format) (time.Time, error) {
	var t time.Time
	if n, ok := number(v); ok {
		t = time.UnixMilli(int64(n)).UTC()
	} else if s, ok := v.(string); ok {
		var err error
		if t, err = datemath.Eval(s, c.now, roundUp, loc, f); err != nil {
			return t, err
		}
	} else {
		return time.Time{}, search.Badf("date value must be a string")
	}
	if t.Year() < 1 || t.Year() > 9999 {
		return time.Time{}, search.Badf("date %v is out of range", v)
	}
	return t, nil
}
