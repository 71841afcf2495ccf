package pg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/store"
)

// storeDocs stores docs through store.InsertDocuments (the path of imports
// and client API reports), which types their fields in the mapping.
func storeDocs(t *testing.T, ownerID int64, kind search.Kind, docs ...map[string]any) {
	t.Helper()
	var rows []store.Document
	for _, d := range docs {
		raw, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := store.ParseDocument(string(kind), raw)
		if err != nil {
			t.Fatalf("document %s: %v", raw, err)
		}
		rows = append(rows, doc)
	}
	if res, err := testStore.InsertDocuments(context.Background(), ownerID, rows); err != nil || len(res.Refused) > 0 {
		t.Fatalf("insert: %v %+v", err, res)
	}
}

func TestDetectMappings(t *testing.T) {
	docs := []store.Document{
		{Kind: "measurement", Type: ptr("VideoMeasurement"), Doc: []byte(`{"n": 1, "f": 1.5, "e": 1e3, "b": true,
			"d": "2016-05-03", "dt": "2016-05-03T10:00:00.123Z", "s": "2016", "x": null, "arr": [], "o": {"k": "v"},
			"l": [null, 3, "a"], "objs": [{"a": 1}, {"a": "z", "c": false}],
			"dup": 1, "dup": "the last of a repeated key counts", "esc\u0061ped": "2016-05-03", "q": "\u0032016-05-03"}`)},
		// A document that is not an object types nothing.
		{Kind: "measurement", Type: ptr("VideoMeasurement"), Doc: []byte(`{"broken": 1, "x": `)},
		// Later documents never change a type (Elasticsearch's first type wins).
		{Kind: "measurement", Type: ptr("VideoMeasurement"), Doc: []byte(`{"n": "text", "x": 2.5}`)},
		{Kind: "measurement", Type: ptr("WebMeasurement"), Doc: []byte(`{"n": "other index"}`)},
		{Kind: "measurement", Type: ptr("VideoMeasurement"), Doc: []byte(`{"skipped": 1}`)},
	}
	got := map[string]string{}
	for _, m := range store.DetectMappings(docs, []int{4}) {
		got[m.Type+":"+m.Field] = m.FieldType
	}
	want := map[string]string{
		"videomeasurement:n": "long", "videomeasurement:f": "float", "videomeasurement:e": "float",
		"videomeasurement:b": "boolean", "videomeasurement:d": "date", "videomeasurement:dt": "date",
		"videomeasurement:s": "text", "videomeasurement:o.k": "text", "videomeasurement:l": "long",
		"videomeasurement:objs.a": "long", "videomeasurement:objs.c": "boolean", "videomeasurement:x": "float",
		"webmeasurement:n": "text", "videomeasurement:dup": "text", "videomeasurement:escaped": "date",
		"videomeasurement:q": "date",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("mappings\n got  %v\n want %v", got, want)
	}
}

func ptr(s string) *string { return &s }

// The mapping is kept in PostgreSQL across imports: the first type stays.
func TestMappingFirstTypeWins(t *testing.T) {
	owner, slug := testOwner(t, "mapfirst")
	storeDocs(t, owner, search.KindAnomalyEvent, map[string]any{"id": "a", "created_at": "2026-01-01T00:00:00Z", "v": 1})
	storeDocs(t, owner, search.KindAnomalyEvent, map[string]any{"id": "b", "created_at": "2026-01-02T00:00:00Z", "v": "x", "w": 2.5})
	ms, err := testStore.FieldMappings(context.Background(), owner, "")
	if err != nil {
		t.Fatal(err)
	}
	m, err := search.Mapping(slug, "", ms)
	if err != nil {
		t.Fatal(err)
	}
	idx := search.IndexName(slug, search.KindAnomalyEvent, "")
	want := map[string]any{idx: map[string]any{"mappings": map[string]any{"properties": map[string]any{
		"id":         map[string]any{"type": "text", "fields": map[string]any{"keyword": map[string]any{"type": "keyword", "ignore_above": 256}}},
		"created_at": map[string]any{"type": "date"},
		"v":          map[string]any{"type": "long"},
		"w":          map[string]any{"type": "float"},
	}}}}
	if !reflect.DeepEqual(m, want) {
		g, _ := json.Marshal(m)
		w, _ := json.Marshal(want)
		t.Fatalf("mapping\n got  %s\n want %s", g, w)
	}
	if _, err := search.Mapping(slug, idx+"-nothere", ms); err == nil {
		t.Fatal("an unknown concrete index must be a 404")
	}
	if _, err := search.Mapping(slug, "analytics-production-other-*", ms); !errors.Is(err, search.ErrBadRequest) {
		t.Fatalf("another data owner's pattern: %v, want a 400", err)
	}
}

// Numbers typed long in one index and float in another are float together;
// other conflicts leave the field untyped.
func TestMappingAcrossIndices(t *testing.T) {
	ims := []indexFields{
		{kind: "measurement", typ: "a", fields: map[string]string{"x": "long", "y": "long", "z": "date"}},
		{kind: "measurement", typ: "b", fields: map[string]string{"x": "float", "y": "text", "z": "date"}},
	}
	got := mergeMappings(ims, func(string, string) bool { return true })
	want := fieldTypes{"x": "float", "y": "", "z": "date"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("merged %v, want %v", got, want)
	}
	if got := mergeMappings(ims, func(_, typ string) bool { return typ == "a" }); got["y"] != "long" {
		t.Fatalf("one index: y is %q, want long", got["y"])
	}
}

func mappedMeasurements(t *testing.T) (search.Scope, int64, string) {
	owner, slug := testOwner(t, "mapdsl")
	client := uuid.NewString() // a client of this data owner only
	m := func(id, start, name string) map[string]any {
		return map[string]any{"id": id, "type": "VideoMeasurement", "client_uuid": client,
			"created_at": "2026-01-01T00:00:00Z", "start_date": start, "name": name}
	}
	storeDocs(t, owner, search.KindMeasurement,
		m("m1", "2016-05-03", "alpha"), m("m2", "2016-05-04", "beta"), m("m3", "2017-05-03", "gamma"),
		m("m4", "2016-05-03T12:00:00Z", "delta"), m("m5", "2003-05-16", "eps"))
	return search.Scope{DataOwnerID: owner, Slug: slug, Kind: search.KindMeasurement}, owner, slug
}

// Date fields of the mapping in the DSL, with Elasticsearch's answers.
func TestMappedDatesDSL(t *testing.T) {
	scope, _, _ := mappedMeasurements(t)
	// terms on a date: keys are epoch milliseconds with key_as_string
	// (2016-05-03 is 1462233600000).
	resp, err := runSearch(t, scope, `{"size": 0, "aggs": {"d": {"terms": {"field": "start_date", "order": {"_key": "asc"}}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	buckets := resp["aggregations"].(map[string]any)["d"].(map[string]any)["buckets"].([]any)
	first := buckets[1].(map[string]any)
	if k := first["key"]; esqlJSON(t, k) != esqlJSON(t, 1462233600000) || first["key_as_string"] != "2016-05-03T00:00:00.000Z" {
		t.Fatalf("terms bucket %v, want key 1462233600000, key_as_string 2016-05-03T00:00:00.000Z", first)
	}
	// match on a date is a date match: the day 2016-05-03 (a partial date
	// is its whole unit, as Elasticsearch's date term query), not the tokens
	// 2016, 05 and 03.
	resp, err = runSearch(t, scope, `{"query": {"match": {"start_date": "2016-05-03"}}, "sort": ["_id"]}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := idsOf(t, resp); !reflect.DeepEqual(got, []string{"m1", "m4"}) {
		t.Fatalf("match on a date: %v, want [m1 m4]", got)
	}
	resp, err = runSearch(t, scope, `{"query": {"term": {"start_date": "2016-05-03T12:00:00Z"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := idsOf(t, resp); !reflect.DeepEqual(got, []string{"m4"}) {
		t.Fatalf("term on a date time: %v, want [m4]", got)
	}
	resp, err = runSearch(t, scope, `{"query": {"terms": {"start_date": ["2017-05-03", 1053043200000]}}, "sort": ["_id"]}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := idsOf(t, resp); !reflect.DeepEqual(got, []string{"m3", "m5"}) {
		t.Fatalf("terms on a date (a date and epoch millis of 2003-05-16): %v, want [m3 m5]", got)
	}
	if _, err := runSearch(t, scope, `{"query": {"match": {"start_date": "not a date"}}}`); !errors.Is(err, search.ErrBadRequest) {
		t.Fatalf("match of a non-date on a date field: %v, want a 400", err)
	}
	// Sort values are epoch milliseconds, and search_after takes them back
	// (what Elasticsearch clients send): the pages do not repeat.
	resp, err = runSearch(t, scope, `{"size": 2, "sort": [{"start_date": "asc"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	hits := hitsOf(t, resp)
	if got := esqlJSON(t, hits[1]["sort"]); !reflect.DeepEqual(got, esqlJSON(t, []any{1462233600000})) {
		t.Fatalf("sort values %v, want [1462233600000]", got)
	}
	if got := idsOf(t, resp); !reflect.DeepEqual(got, []string{"m5", "m1"}) {
		t.Fatalf("first page %v, want [m5 m1]", got)
	}
	resp, err = runSearch(t, scope, `{"size": 2, "sort": [{"start_date": "asc"}], "search_after": [1462233600000]}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := idsOf(t, resp); !reflect.DeepEqual(got, []string{"m4", "m2"}) {
		t.Fatalf("page after 1462233600000: %v, want [m4 m2]", got)
	}
	// Numeric metrics of text and keyword fields are refused, as
	// Elasticsearch does (it answers 400, never a null).
	for _, f := range []string{"name", "name.keyword"} {
		_, err := runSearch(t, scope, `{"size": 0, "aggs": {"a": {"avg": {"field": "`+f+`"}}}}`)
		if !errors.Is(err, search.ErrBadRequest) || !strings.Contains(err.Error(), f) {
			t.Fatalf("avg of %s: %v, want a 400 naming it", f, err)
		}
	}
	// min of a date has value_as_string.
	resp, err = runSearch(t, scope, `{"size": 0, "aggs": {"a": {"min": {"field": "start_date"}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp["aggregations"].(map[string]any)["a"].(map[string]any); got["value_as_string"] != "2003-05-16T00:00:00.000Z" {
		t.Fatalf("min of a date: %v", got)
	}
}

// Employees, after Elasticsearch's ES|QL test data set (employees.csv):
// integers are long, salary_change a multi-valued float, still_hired a
// boolean, job_positions multi-valued text.
func mappedEmployees(t *testing.T) esqlFixture {
	owner, slug := testOwner(t, "mapesql")
	e := func(no, salary int, hired bool, change any, jobs any, langs, secs int) map[string]any {
		return map[string]any{"id": no, "created_at": "2026-01-01T00:00:00Z", "emp_no": no, "salary": salary,
			"still_hired": hired, "salary_change": change, "job_positions": jobs, "languages": langs, "avg_worked_seconds": secs}
	}
	storeDocs(t, owner, search.KindAnomalyEvent,
		e(10001, 74999, true, []any{1.19, -2.5}, []any{"Accountant", "Senior Python Developer"}, 2, 268728049),
		e(10002, 56371, true, []any{-7.23, 11.17}, "Senior Team Lead", 5, 328922887),
		e(10003, 61805, false, 14.68, []any{"Accountant"}, 4, 200296405),
		e(10004, 36174, true, []any{3.65, -0.35, 1.13, 13.48}, []any{"Tech Lead", "Accountant"}, 5, 311267831),
	)
	return esqlFixture{owner: owner, slug: slug, p: search.IndexName(slug, search.KindAnomalyEvent, "")}
}

func TestMappedESQL(t *testing.T) {
	f := mappedEmployees(t)
	f.expect(t, []esqlCase{
		// "Division of two integer types will yield an integer result,
		// rounding towards 0" (ES|QL operators).
		{"long division", `FROM $P | WHERE emp_no == 10001 | EVAL h = salary / 2, m = -salary / 2 | KEEP h, m`,
			`[{"h": 37499, "m": -37499}]`},
		{"long division groups", `FROM $P | EVAL b = avg_worked_seconds / 100000000 * 100000000 | STATS c = COUNT(*) BY b | SORT b`,
			`[{"c": 2, "b": 200000000}, {"c": 2, "b": 300000000}]`},
		{"min and max of a boolean are booleans", `FROM $P | STATS mn = MIN(still_hired), mx = MAX(still_hired)`,
			`[{"mn": false, "mx": true}]`},
		{"sum of longs is a long", `FROM $P | STATS s = SUM(languages)`, `[{"s": 16}]`},
	})
}

// Multi-valued fields in ES|QL: an array is several values of its field
// (ES|QL multivalue semantics; stats.csv-spec count_mv, countMultiValue).
func TestESQLMultiValues(t *testing.T) {
	f := mappedEmployees(t)
	f.expect(t, []esqlCase{
		{"max and min over every element", `FROM $P | STATS mx = MAX(salary_change), mn = MIN(salary_change)`,
			`[{"mx": 14.68, "mn": -7.23}]`},
		{"count counts values", `FROM $P | STATS cs = COUNT(salary_change), cj = COUNT(job_positions), c = COUNT(*)`,
			`[{"cs": 9, "cj": 6, "c": 4}]`},
		{"sum and avg over every element", `FROM $P | STATS s = SUM(salary_change), a = AVG(salary_change) | EVAL s = ROUND(s, 2), a = ROUND(a, 4)`,
			`[{"s": 35.22, "a": 3.9133}]`},
		// Every element is a value of MEDIAN, PERCENTILE and COUNT_DISTINCT
		// (stats_percentile.csv-spec medianOfSalaryChange style: the nine
		// values sorted are -7.23 -2.5 -0.35 1.13 1.19 3.65 11.17 13.48 14.68).
		{"median and percentile over every element",
			`FROM $P | STATS m = MEDIAN(salary_change), p25 = PERCENTILE(salary_change, 25), p75 = PERCENTILE(salary_change, 75)`,
			`[{"m": 1.19, "p25": -0.35, "p75": 11.17}]`},
		{"median per group over every element", `FROM $P | STATS m = ROUND(MEDIAN(salary_change), 4) BY languages | SORT languages`,
			`[{"m": -0.655, "languages": 2}, {"m": 14.68, "languages": 4}, {"m": 2.39, "languages": 5}]`},
		{"count_distinct counts element values", `FROM $P | STATS cs = COUNT_DISTINCT(salary_change), cj = COUNT_DISTINCT(job_positions)`,
			`[{"cs": 9, "cj": 4}]`},
		{"count_distinct of a group", `FROM $P | WHERE emp_no != 10002 | STATS cj = COUNT_DISTINCT(job_positions), c = COUNT(*)`,
			`[{"cj": 3, "c": 3}]`},
		{"max of multi-valued text", `FROM $P | STATS m = MAX(job_positions)`, `[{"m": "Tech Lead"}]`},
		{"values of a multi-value are its values", `FROM $P | WHERE emp_no <= 10002 | STATS v = VALUES(job_positions)`,
			`[{"v": ["Accountant", "Senior Python Developer", "Senior Team Lead"]}]`},
		{"values of one value", `FROM $P | WHERE emp_no == 10003 | STATS v = VALUES(job_positions)`, `[{"v": "Accountant"}]`},
		{"one group per value", `FROM $P | STATS c = COUNT(*) BY job_positions | SORT job_positions`,
			`[{"c": 3, "job_positions": "Accountant"}, {"c": 1, "job_positions": "Senior Python Developer"},
			  {"c": 1, "job_positions": "Senior Team Lead"}, {"c": 1, "job_positions": "Tech Lead"}]`},
		{"aggregates read the whole multi-value in each group",
			`FROM $P | WHERE emp_no == 10004 | STATS c = COUNT(job_positions) BY job_positions | SORT job_positions`,
			`[{"c": 2, "job_positions": "Accountant"}, {"c": 2, "job_positions": "Tech Lead"}]`},
		{"to_string of a multi-value is a multi-value", `FROM $P | WHERE emp_no == 10001 | EVAL s = TO_STRING(salary_change) | KEEP s`,
			`[{"s": ["1.19", "-2.5"]}]`},
		// "a single-value function encountered multi-value": null, so the
		// row is not kept; a one-element array is a single value.
		{"comparisons with a multi-value are null", `FROM $P | WHERE salary_change > 10 | KEEP emp_no`, `[{"emp_no": 10003}]`},
		{"a one-element array is one value", `FROM $P | WHERE job_positions == "Accountant" | KEEP emp_no`, `[{"emp_no": 10003}]`},
	})
}

// ES|QL grouping (stats.csv-spec nestedAggsOverGroupingExpressionWithAliasMultipleAggs,
// nestedAggsOverGroupingTwiceWithAlias, byTwoCalculatedSecondShadowingAndReferencingFirst).
func TestESQLGroupingAliases(t *testing.T) {
	f := mappedEmployees(t)
	f.expect(t, []esqlCase{
		{"aggregating the grouping alias", `FROM $P | STATS e = MAX(a), f = MIN(a), g = COUNT(a) + 1 BY a = languages + emp_no | SORT a`,
			`[{"e": 10003, "f": 10003, "g": 2, "a": 10003}, {"e": 10007, "f": 10007, "g": 3, "a": 10007},
			  {"e": 10009, "f": 10009, "g": 2, "a": 10009}]`},
		{"a second grouping of the same name shadows the first", `FROM $P | STATS c = COUNT(*) BY x = emp_no, x = languages | SORT x`,
			`[{"c": 1, "x": 2}, {"c": 1, "x": 4}, {"c": 2, "x": 5}]`},
		{"the shadowing grouping reads the input, not the first grouping",
			`FROM $P | EVAL l = languages | STATS m = MAX(salary) BY l = l + 1, l = l + 1 | SORT l`,
			`[{"m": 74999, "l": 3}, {"m": 61805, "l": 5}, {"m": 56371, "l": 6}]`},
		{"an aggregate of the grouping's name is shadowed by it", `FROM $P | STATS languages = MAX(salary) BY languages | SORT languages`,
			`[{"languages": 2}, {"languages": 4}, {"languages": 5}]`},
	})
}

// Multi-valued fields in DSL metric aggregations: every element counts, as
// on Elasticsearch.
func TestDSLMultiValueMetrics(t *testing.T) {
	f := mappedEmployees(t)
	scope := search.Scope{DataOwnerID: f.owner, Slug: f.slug, Kind: search.KindAnomalyEvent}
	resp, err := runSearch(t, scope, `{"size": 0, "aggs": {"mx": {"max": {"field": "salary_change"}}, "mn": {"min": {"field": "salary_change"}},
		"c": {"value_count": {"field": "salary_change"}}, "s": {"stats": {"field": "salary_change"}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	aggs := resp["aggregations"].(map[string]any)
	if mx, mn := aggs["mx"].(map[string]any)["value"], aggs["mn"].(map[string]any)["value"]; mx != 14.68 || mn != -7.23 {
		t.Fatalf("max %v min %v, want 14.68 and -7.23", mx, mn)
	}
	st := aggs["s"].(map[string]any)
	if esqlJSON(t, st["count"]) != esqlJSON(t, 9) || esqlJSON(t, aggs["c"].(map[string]any)["value"]) != esqlJSON(t, 9) {
		t.Fatalf("stats %v, value_count %v: want count 9", st, aggs["c"])
	}
	if s := st["sum"].(float64); s < 35.2199 || s > 35.2201 {
		t.Fatalf("stats sum %v, want 35.22", s)
	}
	// percentiles and cardinality read every element too: the nine values
	// sorted are -7.23 -2.5 -0.35 1.13 1.19 3.65 11.17 13.48 14.68, the
	// job positions Accountant (three times), Senior Python Developer,
	// Senior Team Lead and Tech Lead.
	resp, err = runSearch(t, scope, `{"size": 0, "aggs": {"p": {"percentiles": {"field": "salary_change", "percents": [25, 50, 75]}},
		"cs": {"cardinality": {"field": "salary_change"}}, "cj": {"cardinality": {"field": "job_positions.keyword"}},
		"by": {"terms": {"field": "languages"}, "aggs": {"m": {"percentiles": {"field": "salary_change", "percents": [50]}},
			"c": {"cardinality": {"field": "job_positions.keyword"}}}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	aggs = resp["aggregations"].(map[string]any)
	if got, want := esqlJSON(t, aggs["p"].(map[string]any)["values"]), esqlJSON(t, map[string]any{"25.0": -0.35, "50.0": 1.19, "75.0": 11.17}); !reflect.DeepEqual(got, want) {
		t.Fatalf("percentiles %v, want %v", got, want)
	}
	if got := esqlJSON(t, []any{aggs["cs"].(map[string]any)["value"], aggs["cj"].(map[string]any)["value"]}); !reflect.DeepEqual(got, esqlJSON(t, []any{9, 4})) {
		t.Fatalf("cardinality of salary_change, job_positions: %v, want [9, 4]", got)
	}
	var per []any
	for _, b := range aggs["by"].(map[string]any)["buckets"].([]any) {
		b := b.(map[string]any)
		per = append(per, esqlJSON(t, []any{b["key"], b["m"].(map[string]any)["values"], b["c"].(map[string]any)["value"]}))
	}
	lo, hi := 1.13, 3.65 // the middle two of languages 5, interpolated in doubles as Elasticsearch does
	want := []any{esqlJSON(t, []any{5, map[string]any{"50.0": lo + (hi-lo)*0.5}, 3}), esqlJSON(t, []any{2, map[string]any{"50.0": -0.655}, 2}),
		esqlJSON(t, []any{4, map[string]any{"50.0": 14.68}, 1})}
	if !reflect.DeepEqual(per, want) {
		t.Fatalf("per languages: %v, want %v", per, want)
	}
}

// Options the backend used to accept and ignore: implemented or refused
// with a 400, never ignored.
func TestOptionsImplementedOrRefused(t *testing.T) {
	scope, _, _ := mappedMeasurements(t)
	owner, slug := testOwner(t, "mapopts")
	storeDocs(t, owner, search.KindAnomalyEvent,
		map[string]any{"id": "a", "created_at": "2026-01-01T00:00:00Z", "v": 1, "msg": "foo bar"},
		map[string]any{"id": "b", "created_at": "2026-01-01T00:00:00Z", "v": 1234.5, "msg": "Bazaar"},
		map[string]any{"id": "c", "created_at": "2026-01-01T00:00:00Z", "v": 2, "msg": "qux"})
	anomalies := search.Scope{DataOwnerID: owner, Slug: slug, Kind: search.KindAnomalyEvent}
	aggs := func(t *testing.T, s search.Scope, q string) map[string]any {
		t.Helper()
		resp, err := runSearch(t, s, `{"size": 0, "aggs": `+q+`}`)
		if err != nil {
			t.Fatal(err)
		}
		return resp["aggregations"].(map[string]any)
	}
	// histogram.format is a Java DecimalFormat pattern for key_as_string.
	h := aggs(t, anomalies, `{"h": {"histogram": {"field": "v", "interval": 1000, "format": "#,##0.00"}}}`)
	b := h["h"].(map[string]any)["buckets"].([]any)
	if b[0].(map[string]any)["key_as_string"] != "0.00" || b[1].(map[string]any)["key_as_string"] != "1,000.00" {
		t.Fatalf("histogram with format: %v", b)
	}
	m := aggs(t, anomalies, `{"s": {"sum": {"field": "v", "format": "0.0"}}}`)
	if got := m["s"].(map[string]any)["value_as_string"]; got != "1237.5" {
		t.Fatalf("sum value_as_string %v, want 1237.5", got)
	}
	for _, c := range []struct{ name, body, mention string }{
		{"a format that is no decimal pattern", `{"aggs": {"h": {"histogram": {"field": "v", "interval": 1, "format": "0.0%"}}}}`, "format"},
		{"negative precision_threshold", `{"aggs": {"c": {"cardinality": {"field": "v", "precision_threshold": -1}}}}`, "precision_threshold"},
		{"negative compression", `{"aggs": {"p": {"percentiles": {"field": "v", "tdigest": {"compression": -5}}}}}`, "compression"},
		{"format on range", `{"aggs": {"r": {"range": {"field": "v", "ranges": [{"to": 2}], "format": "0.0"}}}}`, "format"},
		{"exists on _source", `{"query": {"exists": {"field": "_source"}}}`, "_source"},
		{"avg of a keyword", `{"aggs": {"a": {"avg": {"field": "msg.keyword"}}}}`, "msg.keyword"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := runSearch(t, anomalies, c.body)
			if !errors.Is(err, search.ErrBadRequest) || !strings.Contains(err.Error(), c.mention) {
				t.Fatalf("%v, want a 400 naming %s", err, c.mention)
			}
		})
	}
	// query_string wildcards on analysed text match words, case-folded as
	// Elasticsearch normalises them: msg:BA* matches "foo bar" and "Bazaar".
	resp, err := runSearch(t, anomalies, `{"query": {"query_string": {"query": "msg:BA*"}}, "sort": ["_id"]}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := idsOf(t, resp); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("msg:BA* matched %v, want [a b]", got)
	}
	// terms of a date with a date format.
	d := aggs(t, scope, `{"d": {"terms": {"field": "start_date", "format": "yyyy-MM-dd", "order": {"_key": "asc"}}}}`)
	if got := d["d"].(map[string]any)["buckets"].([]any)[0].(map[string]any)["key_as_string"]; got != "2003-05-16" {
		t.Fatalf("terms key_as_string with a date format: %v", got)
	}
}

// Percentiles: Elasticsearch 8.9 and later (the versions this project
// targets, 8.18+) compute them with a hybrid t-digest that keeps every
// sample up to 20 × compression (2,000 by default) and answers exactly by
// linear interpolation between the sorted samples (libs/tdigest
// SortingDigest, Dist.quantile: index q·(n−1)); so on {1, 51, 101, 151}
// p25 is 38.5, p75 113.5 and p1 2.5. (Before 8.9 the t-digest answered 26,
// 126 and 1.) Above 2,000 values Elasticsearch approximates, the embedded
// backend stays exact.
func TestPercentilesAsElasticsearch(t *testing.T) {
	owner, slug := testOwner(t, "pct")
	for i, v := range []int{1, 51, 101, 151} {
		storeDocs(t, owner, search.KindAnomalyEvent, map[string]any{"id": i, "created_at": "2026-01-01T00:00:00Z", "v": v})
	}
	scope := search.Scope{DataOwnerID: owner, Slug: slug, Kind: search.KindAnomalyEvent}
	resp, err := runSearch(t, scope, `{"size": 0, "aggs": {"p": {"percentiles": {"field": "v", "percents": [1, 25, 50, 75]}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	got := resp["aggregations"].(map[string]any)["p"].(map[string]any)["values"]
	want := map[string]any{"1.0": 2.5, "25.0": 38.5, "50.0": 76.0, "75.0": 113.5}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("percentiles %v, want %v", got, want)
	}
	f := esqlFixture{owner: owner, slug: slug, p: search.IndexName(slug, search.KindAnomalyEvent, "")}
	f.expect(t, []esqlCase{{"ES|QL PERCENTILE", `FROM $P | STATS p25 = PERCENTILE(v, 25), p75 = PERCENTILE(v, 75), m = MEDIAN(v)`,
		`[{"p25": 38.5, "p75": 113.5, "m": 76.0}]`}})
}

// ES|QL forms that used to be a 400, with Elasticsearch's answers
// (stats.csv-spec countAllOnly, count_where_many, countOfConst, sumOfConst,
// minOfConst, avgOfConst; LIKE and RLIKE with a list match any pattern).
func TestESQLMoreForms(t *testing.T) {
	f := mappedEmployees(t)
	f.expect(t, []esqlCase{
		{"COUNT() counts rows", `FROM $P | STATS c = COUNT(), s = COUNT(*)`, `[{"c": 4, "s": 4}]`},
		{"STATS ... WHERE", `FROM $P | STATS hi = COUNT(*) WHERE salary >= 60000, lo = COUNT(*) WHERE salary < 60000, m = MAX(salary) WHERE still_hired == false`,
			`[{"hi": 2, "lo": 2, "m": 61805}]`},
		{"STATS ... WHERE keeps groups without rows", `FROM $P | STATS c = COUNT(*) WHERE salary > 70000 BY languages | SORT languages`,
			`[{"c": 1, "languages": 2}, {"c": 0, "languages": 4}, {"c": 0, "languages": 5}]`},
		{"LIKE with a list of patterns", `FROM $P | WHERE TO_STRING(emp_no) LIKE ("*01", "*03") | KEEP emp_no | SORT emp_no`,
			`[{"emp_no": 10001}, {"emp_no": 10003}]`},
		{"RLIKE with a list of patterns", `FROM $P | WHERE TO_STRING(salary) RLIKE ("7.*", "3.*") | KEEP emp_no | SORT emp_no`,
			`[{"emp_no": 10001}, {"emp_no": 10004}]`},
		{"NOT LIKE with a list", `FROM $P | WHERE TO_STRING(emp_no) NOT LIKE ("*01", "*03") | KEEP emp_no | SORT emp_no`,
			`[{"emp_no": 10002}, {"emp_no": 10004}]`},
		{"multi-value literals", `FROM $P | STATS c = COUNT([-1, 0, 3]), s = SUM([-1, 0, 3]), mn = MIN([-1, 0, 3]), a = AVG([-1, 0, 3]) * 3`,
			`[{"c": 12, "s": 8, "mn": -1, "a": 2.0}]`},
		{"a multi-value literal is a multi-value", `FROM $P | WHERE emp_no == 10001 | EVAL x = ["a", "b"], y = [1.5, 2] | KEEP x, y`,
			`[{"x": ["a", "b"], "y": [1.5, 2.0]}]`},
	})
	for _, q := range []string{`FROM $P | EVAL x = [1, "a"]`, `FROM $P | EVAL x = [salary]`} {
		if _, err := f.query(t, q); !errors.Is(err, search.ErrBadRequest) {
			t.Errorf("%s: %v, want a 400", q, err)
		}
	}
}

// DSL forms that used to be a 400: terms include/exclude, missing on
// value_count and cardinality, simple_query_string, terms ordered by a
// sub-aggregation path.
func TestDSLMoreForms(t *testing.T) {
	f := mappedEmployees(t)
	scope := search.Scope{DataOwnerID: f.owner, Slug: f.slug, Kind: search.KindAnomalyEvent}
	keys := func(t *testing.T, aggs string) []string {
		t.Helper()
		resp, err := runSearch(t, scope, `{"size": 0, "aggs": {"t": `+aggs+`}}`)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, b := range resp["aggregations"].(map[string]any)["t"].(map[string]any)["buckets"].([]any) {
			bm := b.(map[string]any)
			out = append(out, fmt.Sprintf("%v:%v", bm["key"], bm["doc_count"]))
		}
		return out
	}
	for _, c := range []struct {
		name, aggs string
		want       []string
	}{
		{"include values", `{"terms": {"field": "languages", "include": [2, 5]}}`, []string{"5:2", "2:1"}},
		{"exclude a regular expression", `{"terms": {"field": "languages", "exclude": "4"}}`, []string{"5:2", "2:1"}},
		{"include a regular expression of a multi-value", `{"terms": {"field": "job_positions.keyword", "include": "Acc.*|Tech.*"}}`,
			[]string{"Accountant:3", "Tech Lead:1"}},
		{"include and exclude", `{"terms": {"field": "job_positions.keyword", "include": "Senior.*", "exclude": ["Senior Team Lead"]}}`,
			[]string{"Senior Python Developer:1"}},
		// Elasticsearch's order paths: through a filter (its doc count, or
		// a metric under it) and to a percentile; a missing value sorts last.
		{"order by a metric under a filter", `{"terms": {"field": "languages", "order": {"hired>max_sal": "desc"}},
			"aggs": {"hired": {"filter": {"term": {"still_hired": true}}, "aggs": {"max_sal": {"max": {"field": "salary"}}}}}}`,
			[]string{"2:1", "5:2", "4:1"}},
		{"order by a filter's doc count", `{"terms": {"field": "languages", "order": {"hired": "asc"}},
			"aggs": {"hired": {"filter": {"term": {"still_hired": true}}}}}`, []string{"4:1", "2:1", "5:2"}},
		{"order by a percentile", `{"terms": {"field": "languages", "order": {"p.50": "asc"}},
			"aggs": {"p": {"percentiles": {"field": "salary", "percents": [50]}}}}`, []string{"5:2", "4:1", "2:1"}},
		{"order by a percentile in brackets", `{"terms": {"field": "languages", "order": {"p[50.0]": "desc"}},
			"aggs": {"p": {"percentiles": {"field": "salary", "percents": [50]}}}}`, []string{"2:1", "4:1", "5:2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := keys(t, c.aggs); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("buckets %v, want %v", got, c.want)
			}
		})
	}
	// Partitions are answered (TestTermsPartitions); one outside
	// num_partitions is a 400, as on Elasticsearch.
	if _, err := runSearch(t, scope, `{"aggs": {"t": {"terms": {"field": "languages", "include": {"partition": 2, "num_partitions": 2}}}}}`); !errors.Is(err, search.ErrBadRequest) {
		t.Fatalf("include partition 2 of 2: %v, want a 400", err)
	}
	resp, err := runSearch(t, scope, `{"size": 0, "aggs": {"vc": {"value_count": {"field": "nope", "missing": 0}},
		"cl": {"cardinality": {"field": "languages"}}, "cm": {"cardinality": {"field": "nope", "missing": "x"}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	aggs := resp["aggregations"].(map[string]any)
	if got := fmt.Sprint(aggs["vc"].(map[string]any)["value"], aggs["cl"].(map[string]any)["value"], aggs["cm"].(map[string]any)["value"]); got != "4 3 1" {
		t.Fatalf("value_count with missing, cardinality, cardinality with missing: %s, want 4 3 1", got)
	}
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"phrase or prefix", `{"query": "\"Senior Python\" | Tech*", "fields": ["job_positions"]}`, []string{"10001", "10004"}},
		{"or with a negation (Elasticsearch's default_operator or)", `{"query": "Accountant -Tech", "fields": ["job_positions"]}`,
			[]string{"10001", "10002", "10003", "10004"}},
		{"and with a negation", `{"query": "Accountant -Tech", "fields": ["job_positions"], "default_operator": "and"}`,
			[]string{"10001", "10003"}},
		{"groups", `{"query": "senior + (python | team)"}`, []string{"10001", "10002"}},
	} {
		t.Run("simple_query_string "+c.name, func(t *testing.T) {
			resp, err := runSearch(t, scope, `{"query": {"simple_query_string": `+c.body+`}, "sort": ["emp_no"]}`)
			if err != nil {
				t.Fatal(err)
			}
			if got := idsOf(t, resp); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("ids %v, want %v", got, c.want)
			}
		})
	}
	for _, body := range []string{`{"query": "fo~2"}`, `{"query": "\"a b\"~2"}`, `{"query": "a", "flags": "PHRASE"}`, `{"query": "a", "quote_field_suffix": ".x"}`} {
		if _, err := runSearch(t, scope, `{"query": {"simple_query_string": `+body+`}}`); !errors.Is(err, search.ErrBadRequest) {
			t.Errorf("simple_query_string %s: %v, want a 400", body, err)
		}
	}
}

// Sorting by a multi-valued field: by its least value ascending, its
// greatest descending (Elasticsearch's default sort mode; ES|QL SORT does
// the same), or the mode asked for.
func TestSortMultiValues(t *testing.T) {
	f := mappedEmployees(t)
	scope := search.Scope{DataOwnerID: f.owner, Slug: f.slug, Kind: search.KindAnomalyEvent}
	for _, c := range []struct {
		sort string
		want []string
	}{
		{`[{"salary_change": "asc"}]`, []string{"10002", "10001", "10004", "10003"}},
		{`[{"salary_change": "desc"}]`, []string{"10003", "10004", "10002", "10001"}},
		{`[{"salary_change": {"order": "asc", "mode": "avg"}}]`, []string{"10001", "10002", "10004", "10003"}},
		{`[{"salary_change": {"order": "asc", "mode": "max"}}]`, []string{"10001", "10002", "10004", "10003"}},
	} {
		resp, err := runSearch(t, scope, `{"sort": `+c.sort+`}`)
		if err != nil {
			t.Fatal(err)
		}
		if got := idsOf(t, resp); !reflect.DeepEqual(got, c.want) {
			t.Errorf("sort %s: %v, want %v", c.sort, got, c.want)
		}
	}
	resp, err := runSearch(t, scope, `{"sort": [{"salary_change": "asc"}], "size": 1}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := esqlJSON(t, hitsOf(t, resp)[0]["sort"]); !reflect.DeepEqual(got, esqlJSON(t, []any{-7.23})) {
		t.Errorf("sort value %v, want [-7.23]", got)
	}
	if _, err := runSearch(t, scope, `{"sort": [{"salary_change": {"mode": "median"}}]}`); !errors.Is(err, search.ErrBadRequest) {
		t.Errorf("sort mode median: %v, want a 400", err)
	}
	f.expect(t, []esqlCase{
		{"SORT a multi-value ascending", `FROM $P | SORT job_positions, emp_no | KEEP emp_no`,
			`[{"emp_no": 10001}, {"emp_no": 10003}, {"emp_no": 10004}, {"emp_no": 10002}]`},
		{"SORT a multi-value descending", `FROM $P | SORT job_positions DESC | KEEP emp_no`,
			`[{"emp_no": 10004}, {"emp_no": 10002}, {"emp_no": 10001}, {"emp_no": 10003}]`},
	})
}

// A comparison of a multi-value is null, and Elasticsearch adds two
// warnings per expression (Warning headers, esql-multivalued-fields: "Line
// 1:N: evaluation of [...] failed, treating result as null. Only first 20
// failures recorded." and "Line 1:N: java.lang.IllegalArgumentException:
// single-value function encountered multi-value"), N the column where the
// expression starts.
func TestESQLMultiValueWarnings(t *testing.T) {
	f := mappedEmployees(t)
	run := func(q string) ([]map[string]any, []string) {
		t.Helper()
		q = strings.ReplaceAll(q, "$P", f.p)
		ctx, w := search.WithWarnings(context.Background())
		rows, err := New(testPool(t)).ESQL(ctx, f.owner, f.slug, q)
		if err != nil {
			t.Fatalf("query %q: %v", q, err)
		}
		return rows, w.Messages()
	}
	q := `FROM $P | WHERE salary_change > 10 OR job_positions == "Tech Lead" | KEEP emp_no`
	rows, warns := run(q)
	if len(rows) != 1 || esqlJSON(t, rows[0]["emp_no"]) != esqlJSON(t, 10003) {
		t.Fatalf("rows %v, want emp_no 10003 alone", rows)
	}
	full := strings.ReplaceAll(q, "$P", f.p)
	c1 := strings.Index(full, "salary_change") + 1
	c2 := strings.Index(full, "job_positions") + 1
	want := []string{
		fmt.Sprintf("Line 1:%d: evaluation of [salary_change > 10] failed, treating result as null. Only first 20 failures recorded.", c1),
		fmt.Sprintf("Line 1:%d: java.lang.IllegalArgumentException: single-value function encountered multi-value", c1),
		fmt.Sprintf(`Line 1:%d: evaluation of [job_positions == "Tech Lead"] failed, treating result as null. Only first 20 failures recorded.`, c2),
		fmt.Sprintf("Line 1:%d: java.lang.IllegalArgumentException: single-value function encountered multi-value", c2),
	}
	if !reflect.DeepEqual(warns, want) {
		t.Fatalf("warnings\n%q\nwant\n%q", warns, want)
	}
	// A function of a multi-value, and none where no multi-value is met.
	q = `FROM $P | EVAL r = ROUND(salary_change) | WHERE emp_no == 10004 | KEEP r`
	if _, warns = run(q); len(warns) != 2 || !strings.Contains(warns[0], "evaluation of [ROUND(salary_change)] failed") {
		t.Fatalf("ROUND of a multi-value: warnings %q", warns)
	}
	if _, warns = run(`FROM $P | WHERE salary > 60000 AND languages == 2 | KEEP emp_no`); len(warns) != 0 {
		t.Fatalf("single values: warnings %q, want none", warns)
	}
	if got := search.WarningHeader(`a "b" \ é`); got != `299 Elasticsearch-`+search.ESVersion+`-unknown "a \"b\" \\ %C3%A9"` {
		t.Fatalf("header %s", got)
	}
}
