package search

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/limits"
)

var testLookups = []string{"analytics-production-acme-lookup-isps", "analytics-production-acme-lookup-clients"}

// acceptedESQL are queries of data owner "acme" that CheckESQL accepts.
var acceptedESQL = []string{
	"FROM analytics-production-acme*", // the spec's own pattern (sent to Elasticsearch as ...-acme-*)
	"FROM analytics-production-acme-measurements",
	"from analytics-production-acme-measurements | limit 10",
	"FROM analytics-production-acme-measurements-*",
	"FROM analytics-production-acme-measurements-videomeasurement",
	"FROM analytics-production-acme-measurements-videomeasurement,analytics-production-acme-client_reports",
	"FROM analytics-production-acme-measurements-*, -analytics-production-acme-measurements-webmeasurement",
	"FROM analytics-production-acme-anomaly_events | WHERE severity == \"critical\" | STATS c = COUNT(*) BY status",
	"FROM analytics-production-acme-system_status_records::data",
	"FROM analytics-production-acme-measurements::failures",
	`FROM "analytics-production-acme-measurements"`,
	`FROM """analytics-production-acme-measurements"""`,
	`FROM "analytics-production-acme-measurements,analytics-production-acme-event_bundles"`,
	"FROM <analytics-production-acme-measurements-{now/d}>",
	"FROM <analytics-production-acme-measurements-{now/d{yyyy.MM.dd}}>",
	"FROM analytics-production-acme-measurements METADATA _index, _id",
	"FROM analytics-production-acme-measurements metadata _index | KEEP _index, id",
	"// leading comment\nFROM analytics-production-acme-measurements",
	"/* block */ FROM /* x */ analytics-production-acme-measurements /* y */ | LIMIT 1",
	"FROM analytics-production-acme-measurements // trailing FROM other",
	"FROM analytics-production-acme-measurements | WHERE type == \"FROM other | LOOKUP JOIN other ON x\"",
	"FROM analytics-production-acme-measurements | WHERE type == \"\"\"a \" | FROM other\"\"\"",
	"FROM analytics-production-acme-measurements | WHERE `from` == 1 | KEEP `a``b`",
	"FROM analytics-production-acme-measurements | EVAL x = \"a\\\"b\" | LIMIT 5",
	"FROM analytics-production-acme-measurements | LOOKUP JOIN analytics-production-acme-lookup-isps ON isp_id",
	"FROM analytics-production-acme-measurements | lookup join \"analytics-production-acme-lookup-isps\" on isp_id | KEEP isp_name",
	"FROM analytics-production-acme-measurements | ENRICH isp_policy ON isp_id WITH name",
	"FROM analytics-production-acme-measurements | FORK (WHERE a > 1 | LIMIT 2) (LOOKUP JOIN analytics-production-acme-lookup-clients ON client_uuid)",
	"FROM analytics-production-acme-measurements | SORT created_at DESC | LIMIT 100",
	"FROM analytics-production-acme-measurements | STATS avg = AVG(statistic_values.x) BY study.subject",
	"FROM analytics-production-acme-measurements | WHERE a / b > 1",
	"FROM analytics-production-acme-measurements | FORK (WHERE a > 1 | LIMIT 2) (SORT b | LIMIT 3) | KEEP a",
	"FROM analytics-production-acme-measurements | EVAL x = (a + b) * 2 | WHERE x IN (1, 2) AND (y > 3)",
	"FROM analytics-production-acme-measurements\n| WHERE created_at > NOW() - 1 day\n| KEEP id",
	"FROM analytics-production-acme-measurements\r\n| LIMIT 1 // windows line ends\r\n| KEEP id",
	"FROM analytics-production-acme*, -analytics-production-acme-measurements-*",
	`FROM "analytics-production-acme*" | WHERE url LIKE "analytics-production-acme*"`,
	"FROM analytics-production-acme*::failures METADATA _index",
	// Anything that continues the prefix with '-' is the data owner's
	// (slugs have no '-'), whether or not such an index exists.
	"FROM analytics-production-acme-*",
	"FROM analytics-production-acme-measure*",
	"FROM analytics-production-acme-measurements*",
	"FROM analytics-production-acme-*-measurements",
	"FROM analytics-production-acme-eu-measurements",
	"FROM <analytics-production-acme-{now/d}>",
	// The lookup index: through LOOKUP JOIN, or excluded from FROM.
	"FROM analytics-production-acme-measurements* | STATS n = COUNT(*) BY client_uuid | LOOKUP JOIN analytics-production-acme-lookup-clients ON client_uuid | KEEP client_label, n",
	"FROM analytics-production-acme-*, -analytics-production-acme-lookup-clients",
}

// refusedESQL are queries CheckESQL refuses, with a part of the message.
var refusedESQL = []struct{ q, msg string }{
	{"", "must begin with FROM"},
	{"// only a comment", "must begin with FROM"},
	{"ROW a = 1", "must begin with FROM"},
	{"SHOW INFO", "must begin with FROM"},
	{"TS analytics-production-acme-measurements", "must begin with FROM"},
	{"EXPLAIN (FROM analytics-production-acme-measurements)", "must begin with FROM"},
	{"SET x = 1; FROM analytics-production-acme-measurements", "must begin with FROM"},
	{"FROM(analytics-production-acme-measurements)", "must begin with FROM"},
	{"FROM", "needs an index"},
	{"FROM | LIMIT 1", "needs an index"},
	{"FROM *", "outside"},
	{"FROM analytics-*", "outside"},
	{"FROM analytics-production-*", "outside"},
	{"FROM analytics-production-acme", "outside"},
	{"FROM analytics-production-acme2-measurements", "outside"},
	{"FROM analytics-production-acme*,analytics-production-bob*", "outside"},
	{"FROM analytics-production-acme-measurements,other", "outside"},
	{"FROM analytics-production-acme-measurements, analytics-production-bob-measurements", "outside"},
	{"FROM analytics-production-acme-measurements,-*", "outside"},
	{"FROM _all", "outside"},
	{"FROM .security", "outside"},
	{"FROM ANALYTICS-PRODUCTION-ACME-MEASUREMENTS", "invalid index name"},
	{"FROM analytics-production-acme-measurements analytics-production-bob-measurements", "malformed FROM"},
	{"FROM analytics-production-acme-measurements /* , */ analytics-production-bob-measurements", "malformed FROM"},
	{"FROM other:analytics-production-acme-measurements", "remote index"},
	{"FROM *:analytics-production-acme-measurements", "remote index"},
	{`FROM "other:analytics-production-acme-measurements"`, "remote index"},
	{"FROM analytics-production-acme-measurements::other", "selector"},
	{"FROM analytics-production-acme-measurements:: data", "malformed index selector"},
	{`FROM "analytics-production-acme-measurements,analytics-production-bob-measurements"`, "outside"},
	{`FROM "analytics-production-acme-measurements\",other"`, "invalid index name"},
	{`FROM "analytics-production-acme-measurements`, "unterminated string"},
	{`FROM """analytics-production-acme-measurements`, "unterminated string"},
	{"FROM `analytics-production-bob-measurements`", "invalid index name"},
	{"FROM `analytics-production-acme-measurements`", "invalid index name"},
	{"FROM analytics-production-acme-measurements\u2010x", "invalid index name"},
	{"FROM analytics\u2011production-acme-measurements", "invalid index name"},
	{"FROM analytics-production-аcme-measurements", "invalid index name"}, // Cyrillic a
	{"FROM <analytics-production-{now/d}>", "outside"},
	{"FROM <analytics-production-acme{now/d}>", "outside"},
	{"FROM <analytics-production-acme-measurements-{now/d}", "date math"},
	{"FROM <analytics-production-acme-measurements-{now/d{yyyy.MM.dd|+12:00}}>", "unknown command"},
	{"FROM (FROM analytics-production-bob-measurements)", "subqueries"},
	{"FROM analytics-production-acme-measurements, (FROM analytics-production-bob-measurements)", "subqueries"},
	{"FROM analytics-production-acme-measurements | WHERE x IN (FROM other)", "subqueries"},
	{"FROM analytics-production-acme-measurements | FROM analytics-production-bob-measurements", "only allowed at the start"},
	{"FROM analytics-production-acme-measurements | ROW x = 1", "not allowed here"},
	{"FROM analytics-production-acme-measurements /* | */ | /* */ from other", "only allowed at the start"},
	{"FROM analytics-production-acme-measurements /* /* */ | FROM other */", "nested comments"},
	{"FROM analytics-production-acme-measurements /* unterminated", "unterminated comment"},
	{"FROM analytics-production-acme-measurements | WHERE a == \"x", "unterminated string"},
	{"FROM analytics-production-acme-measurements | WHERE a == \"x\n| FROM other\"", "unterminated string"},
	{"FROM analytics-production-acme-measurements | KEEP `a", "unterminated quoted identifier"},
	{"FROM analytics-production-acme-measurements | LOOKUP JOIN other ON x", "outside"},
	{"FROM analytics-production-acme-measurements | LOOKUP JOIN analytics-production-bob-lookup-isps ON x", "outside"},
	{"FROM analytics-production-acme-measurements | LOOKUP JOIN analytics-production-acme-measurements ON x", "not a known lookup index"},
	{"FROM analytics-production-acme-measurements | LOOKUP JOIN analytics-production-acme-lookup-* ON x", "one index"},
	{"FROM analytics-production-acme-measurements | LOOKUP JOIN remote:analytics-production-acme-lookup-isps ON x", "remote lookup"},
	{`FROM analytics-production-acme-measurements | LOOKUP JOIN "remote:analytics-production-acme-lookup-isps" ON x`, "remote lookup"},
	{"FROM analytics-production-acme-measurements | LOOKUP JOIN analytics-production-acme-lookup-isps AS i ON x", "must be followed by ON"},
	{"FROM analytics-production-acme-measurements | LOOKUP other ON x", "only LOOKUP JOIN"},
	{"FROM analytics-production-acme-measurements | LEFT JOIN analytics-production-acme-lookup-isps ON x", "only LOOKUP JOIN"},
	{"FROM analytics-production-acme-measurements | FORK (LOOKUP JOIN other ON x) (LIMIT 1)", "outside"},
	{"FROM analytics-production-acme-measurements | FORK (FROM other)", "only allowed at the start"},
	{"FROM analytics-production-acme-measurements | FORK (WHERE a > 1) (GRAPH EXPAND other ON x)", "unknown command"},
	{"FROM analytics-production-acme-measurements | FORK (WHERE a > 1 | LOOKUP JOIN other ON x) (LIMIT 1)", "outside"},
	{"FROM analytics-production-acme-measurements | FORK (WHERE a > 1) (LIMIT 1) | FROM other", "only allowed at the start"},
	{"FROM analytics-production-acme-measurements | FORK (WHERE a > 1) (NOSUCH)", "unknown command"},
	{"FROM analytics-production-acme-measurements | WHERE x IN (TS analytics-production-bob-measurements)", "subqueries"},
	{"FROM analytics-production-acme-measurements | WHERE x IN ( /* c */ promql foo)", "subqueries"},
	{"FROM analytics-production-acme-measurements | WHERE x IN (ROW a = 1)", "subqueries"},
	{"FROM analytics-production-acme-measurements | GRAPH EXPAND other ON x", "unknown command"},
	{"FROM analytics-production-acme-measurements | LOAD_RESULT abc", "unknown command"},
	{"FROM analytics-production-acme-measurements | WHERE (a > 1", "unbalanced"},
	{"FROM analytics-production-acme-measurements | WHERE a > 1)", "unbalanced"},
	{"FROM analytics-production-acme-measurements | NOSUCH x", "unknown command"},
	{"FROM analytics-production-acme-measurements | EVAL\"x\" = 1", "unknown command"},
	{"FROM analytics-production-acme-measurements |", "missing command"},
	{"FROM analytics-production-acme-measurements; FROM other", "malformed FROM"},
	{"FROM analytics-production-acme-measurements;", "invalid index name"},
	{`FROM "<analytics-production-acme-measurements-{now/d{yyyy.MM.dd|+12:00}}>"`, "remote index"},
	{"FROM analytics-production-acme-measurements | LIMIT 1; FROM other", "';'"},
	{"FROM analytics-production-acme-measurements METADATA _index, analytics-production-bob-measurements", "METADATA"},
	{"FROM analytics-production-acme-measurements METADATA _index other", "METADATA"},
	{strings.Repeat(" ", limits.MaxESQLBytes) + "FROM analytics-production-acme-measurements", "longer than"},
	// A line comment ends at '\r' as well as '\n' (Elasticsearch's
	// LINE_COMMENT is '//' ~[\r\n]*): what follows a lone '\r' is read.
	{"FROM analytics-production-acme-measurements // x\r, analytics-production-bob-measurements", "outside"},
	{"FROM analytics-production-acme-measurements // x\r| LOOKUP JOIN analytics-production-bob-lookup-isps ON x", "outside"},
	{"FROM analytics-production-acme-measurements // x\r| FROM analytics-production-bob-measurements", "only allowed at the start"},
	{"// x\rFROM analytics-production-bob-measurements", "outside"},
	{"FROM analytics-production-acme-measurements | WHERE a > 1 // x\r| FORK (LOOKUP JOIN other ON x) (LIMIT 1)", "outside"},
	// Data owners whose slug starts with this one's.
	{"FROM analytics-production-acme_eu-measurements", "outside"},
	{"FROM analytics-production-acmeeu*", "outside"},
	{"FROM analytics-production-acme_*", "outside"},
	{"FROM analytics-production-acme?eu-measurements", "invalid index name"},
	{"FROM analytics-production-acme*-measurements", "outside"},
	{"FROM analytics-production-acme**", "outside"},
	{"FROM <analytics-production-acme_eu-measurements-{now/d}>", "outside"},
	{`FROM "analytics-production-acme*,analytics-production-acmeeu*"`, "outside"},
	{"FROM analytics-production-acme-measurements | LOOKUP JOIN analytics-production-acme_eu-lookup-isps ON x", "outside"},
	// The lookup index is read with LOOKUP JOIN only; other owners' lookup
	// indices are out of reach.
	{"FROM analytics-production-acme-lookup-clients", "is a lookup index"},
	{`FROM "analytics-production-acme-measurements,analytics-production-acme-lookup-clients"`, "is a lookup index"},
	{"FROM analytics-production-acme-lookup-clients::data | KEEP client_label", "is a lookup index"},
	{"FROM analytics-production-acme-lookup-isps", "is a lookup index"},
	{"FROM analytics-production-acme-measurements | LOOKUP JOIN analytics-production-bob-lookup-clients ON client_uuid", "outside"},
	{"FROM analytics-production-acme-measurements | LOOKUP JOIN analytics-production-acmeeu-lookup-clients ON client_uuid", "outside"},
	{"FROM analytics-production-acme-measurements | LOOKUP JOIN analytics-production-acme-lookup-client* ON client_uuid", "one index"},
	{"FROM analytics-production-acme-measurements | LOOKUP JOIN analytics-production-acme-lookup-clients::data ON client_uuid", "lookup index"},
	{"FROM analytics-production-acme-measurements | LOOKUP JOIN cluster:analytics-production-acme-lookup-clients ON client_uuid", "remote lookup"},
	// Model inference.
	{"FROM analytics-production-acme-measurements | COMPLETION c = prompt WITH {\"inference_id\": \"m\"}", "model inference"},
	{"FROM analytics-production-acme-measurements | FORK (RERANK \"q\" ON f WITH {\"inference_id\": \"m\"}) (LIMIT 1)", "model inference"},
}

func TestCheckESQLAccepts(t *testing.T) {
	for _, q := range acceptedESQL {
		if err := CheckESQL(q, "acme", testLookups); err != nil {
			t.Errorf("CheckESQL(%q) = %v, want nil", q, err)
		}
	}
}

func TestCheckESQLRefuses(t *testing.T) {
	for _, c := range refusedESQL {
		err := CheckESQL(c.q, "acme", testLookups)
		if err == nil {
			t.Errorf("CheckESQL(%q) = nil, want an error with %q", c.q, c.msg)
			continue
		}
		var bad *BadRequestError
		if !errors.As(err, &bad) || !errors.Is(err, ErrBadRequest) {
			t.Errorf("CheckESQL(%q) = %T, want *BadRequestError", c.q, err)
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("CheckESQL(%q) = %q, want it to contain %q", c.q, err, c.msg)
		}
	}
}

func TestCheckESQLOtherOwner(t *testing.T) {
	// What acme may read, bob may not, and the other way round.
	if err := CheckESQL("FROM analytics-production-acme-measurements", "bob", nil); err == nil {
		t.Error("bob may read acme's index")
	}
	for _, other := range []string{"acme_eu", "acmeeu", "acm"} {
		if err := CheckESQL("FROM analytics-production-acme-measurements", other, nil); err == nil {
			t.Errorf("%s may read acme's index", other)
		}
		if err := CheckESQL("FROM analytics-production-acme*", other, nil); err == nil {
			t.Errorf("%s may use acme's pattern", other)
		}
	}
	if err := CheckESQL("FROM analytics-production-acme_eu-measurements-*", "acme_eu", nil); err != nil {
		t.Errorf("acme_eu may not read its own indices: %v", err)
	}
	// Slugs follow the data_owners constraint: no '-' (else acme's
	// analytics-production-acme-* would cover acme-eu's indices).
	for _, slug := range []string{"", "-x", "_x", "A", "acme-eu", "acme*", "acme,bob", strings.Repeat("a", 64)} {
		if err := CheckESQL("FROM analytics-production-acme-measurements", slug, nil); err == nil {
			t.Errorf("slug %q accepted", slug)
		}
	}
	// A lookup index must be in scope even when the server lists it.
	err := CheckESQL("FROM analytics-production-acme-measurements | LOOKUP JOIN lookup-isps ON x", "acme", []string{"lookup-isps"})
	if err == nil {
		t.Error("lookup index outside the data owner's prefix accepted")
	}
}

// The lookup contract: one lookup-clients index per data owner, known to
// CheckESQL when the server passes LookupIndices, readable only with LOOKUP
// JOIN, and only the data owner's own.
func TestLookupIndices(t *testing.T) {
	if got := LookupIndices("acme"); !slices.Equal(got, []string{"analytics-production-acme-lookup-clients"}) {
		t.Fatalf("LookupIndices = %v", got)
	}
	if want := []string{"client_uuid", "client_label", "client_extra_label", "client_type", "client_tags", "client_created_at"}; !slices.Equal(LookupClientFields, want) {
		t.Fatalf("LookupClientFields = %v", LookupClientFields)
	}
	join := "FROM analytics-production-acme-measurements | LOOKUP JOIN analytics-production-acme-lookup-clients ON client_uuid"
	if err := CheckESQL(join, "acme", LookupIndices("acme")); err != nil {
		t.Errorf("join on the known lookup index refused: %v", err)
	}
	if err := CheckESQL(join, "acme", nil); err == nil || !strings.Contains(err.Error(), "not a known lookup index") {
		t.Errorf("join without known lookup indices: %v", err)
	}
	// bob knows its own lookup index, not acme's; acme's FROM is refused
	// even when no lookup index is passed in.
	if err := CheckESQL("FROM analytics-production-bob-measurements | LOOKUP JOIN analytics-production-acme-lookup-clients ON client_uuid",
		"bob", LookupIndices("bob")); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("bob joined acme's lookup index: %v", err)
	}
	if err := CheckESQL("FROM analytics-production-acme-lookup-clients", "acme", nil); err == nil || !strings.Contains(err.Error(), "is a lookup index") {
		t.Errorf("FROM the lookup index: %v", err)
	}
	if err := CheckESQL("FROM analytics-production-acme-lookup-clients", "bob", LookupIndices("bob")); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("bob read acme's lookup index: %v", err)
	}
}

func TestESQLIndices(t *testing.T) {
	cases := []struct {
		q    string
		want []string
	}{
		{"FROM a", []string{"a"}},
		{"from a, -b , c::data METADATA _id | LIMIT 1", []string{"a", "-b", "c::data"}},
		{`FROM "a,b", """c""" // x`, []string{"a", "b", "c"}},
		{"FROM <a-{now/d}> | LOOKUP JOIN l ON x", []string{"<a-{now/d}>"}},
	}
	for _, c := range cases {
		got, err := ESQLIndices(c.q)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ESQLIndices(%q) = %q, %v; want %q", c.q, got, err, c.want)
		}
	}
	if _, err := ESQLIndices("ROW a = 1"); err == nil {
		t.Error("ESQLIndices(ROW) succeeded")
	}
}

func TestESQLUsesEnrich(t *testing.T) {
	for q, want := range map[string]bool{
		"FROM analytics-production-acme-measurements | ENRICH p ON x":                    true,
		"FROM analytics-production-acme-measurements | enrich [ccq.mode:any] p":          true,
		"FROM analytics-production-acme-measurements | FORK (ENRICH p ON x) (LIMIT 1)":   true,
		"FROM analytics-production-acme-measurements | WHERE x == \"| ENRICH p\"":        false,
		"FROM analytics-production-acme-measurements // | ENRICH p":                      false,
		"FROM analytics-production-acme-measurements | EVAL enrich = 1 | WHERE enrich>0": false,
	} {
		if got := ESQLUsesEnrich(q); got != want {
			t.Errorf("ESQLUsesEnrich(%q) = %v, want %v", q, got, want)
		}
	}
}

func TestESQLForElasticsearchNarrowsTheSpecPattern(t *testing.T) {
	const L = ", -analytics-production-acme-lookup-clients"
	for in, want := range map[string]string{
		// A pattern that would match the lookup index excludes it (L).
		"FROM analytics-production-acme*, analytics-production-acme-measurements | LIMIT 1": "FROM analytics-production-acme-*, analytics-production-acme-measurements" + L + " | LIMIT 1",
		`FROM "analytics-production-acme*"`:                                                 `FROM "analytics-production-acme-*"` + L,
		`FROM """analytics-production-acme*"""`:                                             `FROM """analytics-production-acme-*"""` + L,
		`FROM "analytics-production-acme-measurements,analytics-production-acme*"`:          `FROM "analytics-production-acme-measurements,analytics-production-acme-*"` + L,
		"FROM analytics-production-acme*::failures, -analytics-production-acme*":            "FROM analytics-production-acme-*::failures, -analytics-production-acme-*",
		// Only FROM changes: strings and comments keep their text.
		`FROM analytics-production-acme* /* analytics-production-acme* */ | WHERE u == "analytics-production-acme*" // analytics-production-acme*`: `FROM analytics-production-acme-*` + L + ` /* analytics-production-acme* */ | WHERE u == "analytics-production-acme*" // analytics-production-acme*`,
		"FROM analytics-production-acme-measurements-*":                                                                       "FROM analytics-production-acme-measurements-*",
		"FROM analytics-production-acme-* METADATA _id | LOOKUP JOIN analytics-production-acme-lookup-clients ON client_uuid": "FROM analytics-production-acme-*" + L + " METADATA _id | LOOKUP JOIN analytics-production-acme-lookup-clients ON client_uuid",
		"FROM analytics-production-acme-*::data":                                                                              "FROM analytics-production-acme-*::data" + L,
		"FROM analytics-production-acme-l*, analytics-production-acme-measurements":                                           "FROM analytics-production-acme-l*, analytics-production-acme-measurements" + L,
		"FROM analytics-production-acme-*, -analytics-production-acme-lookup-clients":                                         "FROM analytics-production-acme-*, -analytics-production-acme-lookup-clients",
		"FROM analytics-production-acme-*-measurements":                                                                       "FROM analytics-production-acme-*-measurements",
		"FROM analytics-production-acme-measurements | LOOKUP JOIN analytics-production-acme-lookup-clients ON client_uuid":   "FROM analytics-production-acme-measurements | LOOKUP JOIN analytics-production-acme-lookup-clients ON client_uuid",
	} {
		if err := CheckESQL(in, "acme", LookupIndices("acme")); err != nil {
			t.Fatalf("CheckESQL(%q): %v", in, err)
		}
		got := ESQLForElasticsearch(in, "acme")
		if got != want {
			t.Errorf("ESQLForElasticsearch(%q) = %q, want %q", in, got, want)
		}
		if err := CheckESQL(got, "acme", LookupIndices("acme")); err != nil {
			t.Errorf("rewritten %q refused: %v", got, err)
		}
	}
}

// What the accepted patterns reach on Elasticsearch (after
// ESQLForElasticsearch): the data owner's indices, never those of a data
// owner whose slug starts with the same letters.
func TestESQLPatternsOnElasticsearchStayWithTheOwner(t *testing.T) {
	for _, q := range acceptedESQL {
		names, err := ESQLIndices(ESQLForElasticsearch(q, "acme"))
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		for _, n := range names {
			if f := foreignMatch(n); f != "" {
				t.Errorf("%q: %s reaches %s", q, n, f)
			}
		}
	}
	// The check itself: acme's own indices match what it accepts.
	for _, n := range []string{"analytics-production-acme-*", "analytics-production-acme-measurements-*"} {
		if !GlobMatch(n, IndexName("acme", KindMeasurement, "VideoMeasurement")) {
			t.Errorf("%s misses acme's index", n)
		}
	}
}
