package pg

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/esql"
)

const (
	esqlU1 = "11111111-1111-4111-8111-111111111111"
	esqlU2 = "22222222-2222-4222-8222-222222222222"
)

type esqlFixture struct {
	owner int64
	slug  string
	p     string // index prefix of the owner
}

var (
	esqlFixOnce sync.Once
	esqlFix     esqlFixture
)

// esqlFixtures stores, once per test run, the documents every ES|QL test
// reads, plus a second data owner whose documents must never show up.
func esqlFixtures(t *testing.T) esqlFixture {
	t.Helper()
	esqlFixOnce.Do(func() {
		id, slug := testOwner(t, "esql")
		insertDocs(t, id, search.KindMeasurement,
			map[string]any{"id": "m1", "type": "VideoMeasurement", "client_uuid": esqlU1,
				"created_at": "2026-11-01T10:00:00Z", "study": map[string]any{"subject": "youtube"},
				"statistic_values": map[string]any{"bitrate": 1000, "stalls": 0}, "ok": true, "name": "Alpha"},
			map[string]any{"id": "m2", "type": "VideoMeasurement", "client_uuid": esqlU2,
				"created_at": "2026-11-01T10:30:00Z", "study": map[string]any{"subject": "netflix"},
				"statistic_values": map[string]any{"bitrate": 3000, "stalls": 2}, "ok": false, "name": "beta"},
			map[string]any{"id": "m3", "type": "WebMeasurement", "client_uuid": esqlU1,
				"created_at": "2026-11-02T08:00:00Z", "study": map[string]any{"subject": "website"},
				"statistic_values": map[string]any{"load_time": 1.5}, "name": "Gamma ray"},
			map[string]any{"id": "m4", "type": "SpeedtestMeasurement", "client_uuid": esqlU2,
				"created_at": "2026-11-03T00:00:00Z", "study": map[string]any{"subject": "ookla"},
				"statistic_values": map[string]any{"bitrate": 5000, "stalls": nil}, "name": "delta"},
		)
		insertDocs(t, id, search.KindAnomalyEvent, map[string]any{"id": "a1", "client_uuid": esqlU1,
			"created_at": "2026-11-02T00:00:00Z", "severity": "critical", "metric": "bitrate"})
		insertDocs(t, id, search.KindClientReport, map[string]any{"id": "r1", "type": "P1203ClientReport",
			"client_uuid": esqlU1, "created_at": "2026-11-01T11:00:00Z", "measurement_id": "m1", "score": 4.2,
			"details": map[string]any{"codec": "h264"}, "items": []any{map[string]any{"k": 1}}})
		other, _ := testOwner(t, "esqlother")
		insertDocs(t, other, search.KindMeasurement, map[string]any{"id": "mB", "type": "VideoMeasurement",
			"client_uuid": esqlU1, "created_at": "2026-11-01T10:00:00Z", "statistic_values": map[string]any{"bitrate": 99999}})
		esqlFix = esqlFixture{owner: id, slug: slug, p: search.IndexPrefix(slug)}
	})
	if esqlFix.owner == 0 {
		t.Fatal("ES|QL fixtures were not stored")
	}
	return esqlFix
}

func (f esqlFixture) query(t *testing.T, q string) ([]map[string]any, error) {
	t.Helper()
	q = strings.ReplaceAll(q, "$P", f.p)
	return New(testPool(t)).ESQL(context.Background(), f.owner, f.slug, q)
}

// esqlJSON normalises a value through JSON for comparison.
// esqlCase is a query and its expected rows (JSON).
type esqlCase = struct{ name, q, want string }

// expect runs each case as a subtest and compares its rows with want.
func (f esqlFixture) expect(t *testing.T, cases []esqlCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := f.query(t, c.q)
			if err != nil {
				t.Fatalf("query %q: %v", c.q, err)
			}
			if g, w := esqlJSON(t, got), esqlJSON(t, c.want); !reflect.DeepEqual(g, w) {
				gj, _ := json.Marshal(g)
				wj, _ := json.Marshal(w)
				t.Fatalf("query %q\n got  %s\n want %s", c.q, gj, wj)
			}
		})
	}
}

func esqlJSON(t *testing.T, v any) any {
	t.Helper()
	var raw []byte
	if s, ok := v.(string); ok {
		raw = []byte(s)
	} else {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			t.Fatalf("marshal: %v", err)
		}
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("unmarshal %s: %v", raw, err)
	}
	return out
}

func TestESQLQueries(t *testing.T) {
	f := esqlFixtures(t)
	M := "FROM $P-measurements* "
	cases := []esqlCase{
		// FROM: index patterns, types, several patterns, METADATA, data owner scoping.
		{"from all measurements", M + "| SORT created_at | KEEP id, study.subject, created_at",
			`[{"id":"m1","study.subject":"youtube","created_at":"2026-11-01T10:00:00.000Z"},
			  {"id":"m2","study.subject":"netflix","created_at":"2026-11-01T10:30:00.000Z"},
			  {"id":"m3","study.subject":"website","created_at":"2026-11-02T08:00:00.000Z"},
			  {"id":"m4","study.subject":"ookla","created_at":"2026-11-03T00:00:00.000Z"}]`},
		{"from one type", "FROM $P-measurements-videomeasurement | SORT id | KEEP id", `[{"id":"m1"},{"id":"m2"}]`},
		{"from several patterns with metadata", "FROM $P-measurements-webmeasurement, $P-anomaly_events METADATA _id, _index | SORT _id | KEEP _id, _index",
			`[{"_id":"a1","_index":"` + f.p + `-anomaly_events"},{"_id":"m3","_index":"` + f.p + `-measurements-webmeasurement"}]`},
		{"from every kind", "FROM $P* | STATS n = COUNT(*)", `[{"n":6}]`},
		{"from quoted list", `FROM "$P-anomaly_events,$P-client_reports" | SORT id | KEEP id`, `[{"id":"a1"},{"id":"r1"}]`},
		{"from with exclusion", M + ", -$P-measurements-videomeasurement | SORT id | KEEP id", `[{"id":"m3"},{"id":"m4"}]`},
		{"from data selector", "FROM $P-anomaly_events::data | KEEP id", `[{"id":"a1"}]`},
		{"whole documents flattened", "FROM $P-client_reports* METADATA _id",
			`[{"_id":"r1","id":"r1","type":"P1203ClientReport","client_uuid":"` + esqlU1 + `","created_at":"2026-11-01T11:00:00.000Z",
			   "measurement_id":"m1","score":4.2,"details.codec":"h264","items":[{"k":1}]}]`},
		{"rows share columns", M + `| WHERE id IN ("m1", "m3") | KEEP id, statistic_values.* | SORT id`,
			`[{"id":"m1","statistic_values.bitrate":1000,"statistic_values.stalls":0,"statistic_values.load_time":null},
			  {"id":"m3","statistic_values.bitrate":null,"statistic_values.stalls":null,"statistic_values.load_time":1.5}]`},

		// WHERE: comparisons, boolean operators, null tests, LIKE, RLIKE, IN.
		{"where >", M + "| WHERE statistic_values.bitrate > 2000 | SORT id | KEEP id", `[{"id":"m2"},{"id":"m4"}]`},
		{"where >=", M + "| WHERE statistic_values.bitrate >= 3000 | SORT id | KEEP id", `[{"id":"m2"},{"id":"m4"}]`},
		{"where <", M + "| WHERE statistic_values.bitrate < 3000 | KEEP id", `[{"id":"m1"}]`},
		{"where <=", M + "| WHERE statistic_values.bitrate <= 3000 | SORT id | KEEP id", `[{"id":"m1"},{"id":"m2"}]`},
		{"where ==", M + `| WHERE study.subject == "netflix" | KEEP id`, `[{"id":"m2"}]`},
		{"where = on a column", M + `| WHERE type = "WebMeasurement" | KEEP id`, `[{"id":"m3"}]`},
		{"where !=", M + `| WHERE study.subject != "youtube" | SORT id | KEEP id`, `[{"id":"m2"},{"id":"m3"},{"id":"m4"}]`},
		{"where and not", M + "| WHERE statistic_values.bitrate >= 3000 AND NOT ok | KEEP id", `[{"id":"m2"}]`},
		{"where or parentheses", M + `| WHERE (study.subject == "youtube" OR statistic_values.stalls > 1) AND ok IS NOT NULL | SORT id | KEEP id`,
			`[{"id":"m1"},{"id":"m2"}]`},
		{"where boolean field", M + "| WHERE ok | KEEP id", `[{"id":"m1"}]`},
		{"where boolean literal", M + "| WHERE ok == true OR false | KEEP id", `[{"id":"m1"}]`},
		{"is null", M + "| WHERE statistic_values.stalls IS NULL | SORT id | KEEP id", `[{"id":"m3"},{"id":"m4"}]`},
		{"is not null", M + "| WHERE statistic_values.stalls IS NOT NULL | SORT id | KEEP id", `[{"id":"m1"},{"id":"m2"}]`},
		{"like *", M + `| WHERE name LIKE "*a" | SORT id | KEEP id`, `[{"id":"m1"},{"id":"m2"},{"id":"m4"}]`},
		{"like ?", M + `| WHERE name LIKE "?eta" | KEEP id`, `[{"id":"m2"}]`},
		{"like with literal percent", M + `| WHERE name LIKE "%" | KEEP id`, `[]`},
		{"not like", M + `| WHERE name NOT LIKE "*a" | KEEP id`, `[{"id":"m3"}]`},
		{"rlike anchored", M + `| WHERE name RLIKE "[A-Z].*" | SORT id | KEEP id`, `[{"id":"m1"},{"id":"m3"}]`},
		{"rlike triple quoted", M + `| WHERE name RLIKE """b.t."""  | KEEP id`, `[{"id":"m2"}]`},
		{"in strings", M + `| WHERE study.subject IN ("youtube", "ookla") | SORT id | KEEP id`, `[{"id":"m1"},{"id":"m4"}]`},
		{"not in", M + `| WHERE study.subject NOT IN ("youtube", "ookla") | SORT id | KEEP id`, `[{"id":"m2"},{"id":"m3"}]`},
		{"in numbers", M + "| WHERE statistic_values.bitrate IN (1000, 5000.0) | SORT id | KEEP id", `[{"id":"m1"},{"id":"m4"}]`},
		{"client_uuid column", M + `| WHERE client_uuid == "` + esqlU2 + `" | SORT id | KEEP id`, `[{"id":"m2"},{"id":"m4"}]`},

		// Dates, NOW and time spans.
		{"date string comparison", M + `| WHERE created_at >= "2026-11-02" | SORT id | KEEP id`, `[{"id":"m3"},{"id":"m4"}]`},
		{"@timestamp and TO_DATETIME", M + `| WHERE @timestamp < TO_DATETIME("2026-11-01T10:15:00Z") | KEEP id`, `[{"id":"m1"}]`},
		{"date minus span", M + `| WHERE created_at > TO_DATETIME("2026-11-03T00:00:00Z") - 12 hours | KEEP id`, `[{"id":"m4"}]`},
		{"date plus span", M + `| WHERE id == "m1" | EVAL later = created_at + 1 hour, earlier = created_at - 2 days | KEEP later, earlier`,
			`[{"later":"2026-11-01T11:00:00.000Z","earlier":"2026-10-30T10:00:00.000Z"}]`},
		{"now", M + "| WHERE created_at < NOW() AND NOW() - 1 hour < NOW() | STATS n = COUNT(*)", `[{"n":4}]`},

		// EVAL: arithmetic and functions.
		{"eval arithmetic on fields", M + "| EVAL kb = statistic_values.bitrate / 1000, x = (statistic_values.bitrate + 500) * 2 - 1000, m = statistic_values.bitrate % 700 | WHERE kb IS NOT NULL | SORT id | KEEP id, kb, x, m",
			`[{"id":"m1","kb":1,"x":2000,"m":300},{"id":"m2","kb":3,"x":6000,"m":200},{"id":"m4","kb":5,"x":10000,"m":100}]`},
		{"eval integer arithmetic", M + "| LIMIT 1 | EVAL i = 7 / 2, j = 7 % 3, k = -3 + 10 * 2, z = 1 / 0, d = 7.0 / 2 | KEEP i, j, k, z, d",
			`[{"i":3,"j":1,"k":17,"z":null,"d":3.5}]`},
		{"eval chains and shadows", M + `| WHERE id == "m2" | EVAL a = statistic_values.bitrate * 2, a = a + 1, name = TO_UPPER(name) | KEEP a, name`,
			`[{"a":6001,"name":"BETA"}]`},
		{"string functions", M + `| WHERE id == "m1" | EVAL lo = TO_LOWER(name), up = TO_UPPER(name), len = LENGTH(name),
				c = CONCAT(name, "-", study.subject), s = SUBSTRING(name, 2, 3), tail = SUBSTRING(name, -2), tr = TRIM("  x  ")
			| KEEP lo, up, len, c, s, tail, tr`,
			`[{"lo":"alpha","up":"ALPHA","len":5,"c":"Alpha-youtube","s":"lph","tail":"ha","tr":"x"}]`},
		{"numeric functions", M + `| WHERE id == "m1" | EVAL r = ROUND(1.2345, 2), r0 = ROUND(2.5), ri = ROUND(7), a = ABS(-4.5), ai = ABS(-3),
				fl = FLOOR(1.7), ce = CEIL(1.2), rb = ROUND(statistic_values.bitrate / 3, 1)
			| KEEP r, r0, ri, a, ai, fl, ce, rb`,
			`[{"r":1.23,"r0":3,"ri":7,"a":4.5,"ai":3,"fl":1,"ce":2,"rb":333.3}]`},
		{"more string functions", M + `| WHERE id == "m1" | EVAL sw = STARTS_WITH(name, "Al"), sx = STARTS_WITH(name, "al"), ew = ENDS_WITH(name, "pha"),
				l = LEFT(name, 2), r = RIGHT(name, 3), l0 = LEFT(name, -1), big = RIGHT(name, 99), nul = STARTS_WITH(nothing, "a")
			| KEEP sw, sx, ew, l, r, l0, big, nul`,
			`[{"sw":true,"sx":false,"ew":true,"l":"Al","r":"pha","l0":"","big":"Alpha","nul":null}]`},
		{"more numeric functions", M + `| WHERE id == "m1" | EVAL s = SQRT(statistic_values.bitrate * 0.016), neg = SQRT(-4), p = POW(2, 10), pf = POW(-8, 0.5),
				pz = POW(0, -1), lg = LOG10(1000), lz = LOG10(0), g = GREATEST(3, 7.5, statistic_values.bitrate), le = LEAST(3, 1, 2),
				gn = GREATEST(1, nothing), gs = GREATEST("b", "a")
			| KEEP s, neg, p, pf, pz, lg, lz, g, le, gn, gs`,
			`[{"s":4,"neg":null,"p":1024,"pf":null,"pz":null,"lg":3,"lz":null,"g":1000,"le":1,"gn":null,"gs":"b"}]`},
		{"date parts and differences", M + `| WHERE id == "m1" | EVAL y = DATE_EXTRACT("year", created_at), mo = DATE_EXTRACT("MONTH_OF_YEAR", created_at),
				d = DATE_EXTRACT("day_of_month", created_at), h = DATE_EXTRACT("hour_of_day", created_at), dow = DATE_EXTRACT("day_of_week", created_at),
				dd = DATE_DIFF("day", "2026-10-30T10:00:00Z", created_at), hh = DATE_DIFF("hours", created_at, "2026-10-31T12:30:00Z"),
				b = TO_BOOLEAN("TRUE"), b0 = TO_BOOLEAN(0)
			| KEEP y, mo, d, h, dow, dd, hh, b, b0`,
			`[{"y":2026,"mo":11,"d":1,"h":10,"dow":7,"dd":2,"hh":-21,"b":true,"b0":false}]`},
		{"coalesce and case", M + `| EVAL c = COALESCE(statistic_values.stalls, -1), k = CASE(statistic_values.stalls > 0, "stalled", statistic_values.stalls == 0, "smooth", "unknown") | SORT id | KEEP id, c, k`,
			`[{"id":"m1","c":0,"k":"smooth"},{"id":"m2","c":2,"k":"stalled"},{"id":"m3","c":-1,"k":"unknown"},{"id":"m4","c":-1,"k":"unknown"}]`},
		{"case without else", M + `| WHERE id == "m3" | EVAL k = CASE(ok, "yes") | KEEP k`, `[{"k":null}]`},
		// A double converts to an integer rounded half up (Elasticsearch's
		// DataTypeConverter.safeToInt: Math.round): TO_INTEGER(3.9) is 4.
		{"conversions", M + `| WHERE id == "m1" | EVAL s = TO_STRING(statistic_values.bitrate), i = TO_INTEGER("42"), t = TO_INTEGER(3.9),
				d = TO_DOUBLE("2.5"), dt = TO_DATETIME("2026-01-02T03:04:05Z"), ts = TO_STRING(created_at), bad = TO_INTEGER("x"),
				c1 = statistic_values.bitrate::double, c2 = "5"::integer, ms = TO_INTEGER(TO_DATETIME("1970-01-01T00:00:01Z"))
			| KEEP s, i, t, d, dt, ts, bad, c1, c2, ms`,
			`[{"s":"1000","i":42,"t":4,"d":2.5,"dt":"2026-01-02T03:04:05.000Z","ts":"2026-11-01T10:00:00.000Z","bad":null,"c1":1000,"c2":5,"ms":1000}]`},
		{"date_trunc", M + `| WHERE id == "m1" | EVAL d = DATE_TRUNC(1 day, created_at), w = DATE_TRUNC(1 week, created_at), mo = DATE_TRUNC(1 month, created_at),
				q = DATE_TRUNC(1 quarter, created_at), y = DATE_TRUNC(1 year, created_at), h6 = DATE_TRUNC(6 hours, created_at), m2 = DATE_TRUNC(2 months, created_at)
			| KEEP d, w, mo, q, y, h6, m2`,
			`[{"d":"2026-11-01T00:00:00.000Z","w":"2026-10-26T00:00:00.000Z","mo":"2026-11-01T00:00:00.000Z","q":"2026-10-01T00:00:00.000Z",
			   "y":"2026-01-01T00:00:00.000Z","h6":"2026-11-01T06:00:00.000Z","m2":"2026-11-01T00:00:00.000Z"}]`},
		{"bucket", M + `| WHERE id == "m2" | EVAL h = BUCKET(created_at, 1 hour), q = BUCKET(created_at, 15 minutes), n = BUCKET(statistic_values.bitrate, 2000) | KEEP h, q, n`,
			`[{"h":"2026-11-01T10:00:00.000Z","q":"2026-11-01T10:30:00.000Z","n":2000}]`},

		// STATS.
		{"stats all aggregates", M + `| STATS n = COUNT(*), c = COUNT(statistic_values.stalls), d = COUNT_DISTINCT(client_uuid), s = SUM(statistic_values.bitrate),
				a = AVG(statistic_values.bitrate), mn = MIN(statistic_values.bitrate), mx = MAX(statistic_values.bitrate),
				med = MEDIAN(statistic_values.bitrate), p90 = PERCENTILE(statistic_values.bitrate, 90)`,
			`[{"n":4,"c":2,"d":2,"s":9000,"a":3000,"mn":1000,"mx":5000,"med":3000,"p90":4600}]`},
		{"stats by", M + "| STATS n = COUNT(*), avg_rate = AVG(statistic_values.bitrate) BY type | SORT type",
			`[{"n":1,"avg_rate":5000,"type":"SpeedtestMeasurement"},{"n":2,"avg_rate":2000,"type":"VideoMeasurement"},{"n":1,"avg_rate":null,"type":"WebMeasurement"}]`},
		{"stats unnamed", M + "| STATS COUNT(*), MAX(statistic_values.stalls) BY client_uuid | SORT client_uuid",
			`[{"COUNT(*)":2,"MAX(statistic_values.stalls)":0,"client_uuid":"` + esqlU1 + `"},{"COUNT(*)":2,"MAX(statistic_values.stalls)":2,"client_uuid":"` + esqlU2 + `"}]`},
		{"stats by expression", M + "| STATS n = COUNT(*) BY day = DATE_TRUNC(1 day, created_at) | SORT day",
			`[{"n":2,"day":"2026-11-01T00:00:00.000Z"},{"n":1,"day":"2026-11-02T00:00:00.000Z"},{"n":1,"day":"2026-11-03T00:00:00.000Z"}]`},
		{"stats by bucket", M + "| STATS n = COUNT(*) BY b = BUCKET(created_at, 1 day) | SORT b DESC | LIMIT 1",
			`[{"n":1,"b":"2026-11-03T00:00:00.000Z"}]`},
		{"stats dates and strings", M + "| STATS first = MIN(created_at), last = MAX(@timestamp), m = MIN(name), s = MIN(study.subject)",
			`[{"first":"2026-11-01T10:00:00.000Z","last":"2026-11-03T00:00:00.000Z","m":"Alpha","s":"netflix"}]`},
		{"stats expression over aggregates", M + "| STATS x = AVG(statistic_values.bitrate) * 2 + COUNT(*), y = SUM(statistic_values.bitrate * 2)",
			`[{"x":6004,"y":18000}]`},
		{"stats then where and eval", M + "| STATS n = COUNT(*) BY type | WHERE n > 1 | EVAL half = n / 2.0",
			`[{"n":2,"type":"VideoMeasurement","half":1}]`},
		{"stats by only", M + "| STATS BY study.subject | SORT study.subject",
			`[{"study.subject":"netflix"},{"study.subject":"ookla"},{"study.subject":"website"},{"study.subject":"youtube"}]`},
		{"stats of nothing", M + `| WHERE id == "none" | STATS n = COUNT(*), s = SUM(statistic_values.bitrate)`, `[{"n":0,"s":null}]`},
		{"stats by group reference", M + "| STATS n = COUNT(*) + LENGTH(type) BY type | SORT type | KEEP n",
			`[{"n":21},{"n":18},{"n":15}]`},

		// SORT and LIMIT.
		{"sort desc nulls first by default", M + "| SORT statistic_values.bitrate DESC | KEEP id", `[{"id":"m3"},{"id":"m4"},{"id":"m2"},{"id":"m1"}]`},
		{"sort desc nulls last", M + "| SORT statistic_values.bitrate DESC NULLS LAST | KEEP id", `[{"id":"m4"},{"id":"m2"},{"id":"m1"},{"id":"m3"}]`},
		{"sort asc nulls first", M + "| SORT statistic_values.bitrate ASC NULLS FIRST | KEEP id", `[{"id":"m3"},{"id":"m1"},{"id":"m2"},{"id":"m4"}]`},
		{"sort several keys", M + "| SORT client_uuid, created_at DESC | KEEP id", `[{"id":"m3"},{"id":"m1"},{"id":"m4"},{"id":"m2"}]`},
		{"sort expression", M + "| SORT LENGTH(name) DESC, id | KEEP id", `[{"id":"m3"},{"id":"m1"},{"id":"m4"},{"id":"m2"}]`},
		{"sort survives where", M + "| SORT id DESC | WHERE id != \"m4\" | EVAL x = 1 | KEEP id", `[{"id":"m3"},{"id":"m2"},{"id":"m1"}]`},
		{"limit", M + "| SORT id | LIMIT 2 | KEEP id", `[{"id":"m1"},{"id":"m2"}]`},
		{"limit 0", M + "| LIMIT 0", `[]`},
		{"limit then sort", M + "| SORT id | LIMIT 3 | SORT id DESC | KEEP id", `[{"id":"m3"},{"id":"m2"},{"id":"m1"}]`},
		{"limit above max", M + "| LIMIT 20000 | STATS n = COUNT(*)", `[{"n":4}]`},

		// KEEP, DROP, RENAME.
		{"keep wildcard", M + `| WHERE id == "m1" | KEEP statistic_values.*`, `[{"statistic_values.bitrate":1000,"statistic_values.stalls":0}]`},
		{"keep suffix wildcard", M + `| WHERE id == "m1" | KEEP id, *_at`, `[{"id":"m1","created_at":"2026-11-01T10:00:00.000Z"}]`},
		{"keep computed wildcard", M + `| WHERE id == "m1" | EVAL x_1 = 1, x_2 = 2, y = 3 | KEEP x_*`, `[{"x_1":1,"x_2":2}]`},
		{"drop", M + `| WHERE id == "m1" | DROP statistic_values.*, study.subject, ok`,
			`[{"id":"m1","type":"VideoMeasurement","client_uuid":"` + esqlU1 + `","created_at":"2026-11-01T10:00:00.000Z","name":"Alpha"}]`},
		{"drop computed", M + `| WHERE id == "m1" | EVAL a = 1, b = 2 | KEEP a, b, id | DROP b`, `[{"a":1,"id":"m1"}]`},
		{"rename", M + `| WHERE id == "m1" | KEEP id, study.subject | RENAME study.subject AS subject, id AS mid`, `[{"mid":"m1","subject":"youtube"}]`},
		{"rename document field", M + `| WHERE id == "m1" | RENAME name AS title | KEEP title, name*`, `[{"title":"Alpha"}]`},
		{"drop object", M + `| WHERE id == "m1" | DROP statistic_values, study, tags, ok, name, type, client_uuid, created_at`, `[{"id":"m1"}]`},
		{"rename new = old", M + `| WHERE id == "m1" | KEEP id | RENAME mid = id`, `[{"mid":"m1"}]`},
		{"keep then use", M + `| KEEP id, statistic_values.bitrate | WHERE statistic_values.bitrate > 2000 | SORT id | KEEP id`, `[{"id":"m2"},{"id":"m4"}]`},
		// A document field read by KEEP and then dropped leaves nothing behind
		// (it used to leave an untyped parameter: a 500).
		{"keep then drop", M + `| KEEP id, name | DROP name | SORT id | LIMIT 1`, `[{"id":"m1"}]`},
		{"keep then keep fewer", M + `| KEEP id, name, study.subject | KEEP id | WHERE id == "m2"`, `[{"id":"m2"}]`},
		{"keep then rename over", M + `| KEEP id, name | RENAME id AS name | SORT name | LIMIT 1`, `[{"name":"m1"}]`},

		// Syntax details.
		{"comments and keyword case", "from $P-measurements* // all\n| where /* inline */ id == \"m4\"\n| keep id", `[{"id":"m4"}]`},
		{"backquoted names", M + "| WHERE `id` == \"m1\" | EVAL `my col` = `statistic_values`.bitrate | KEEP `my col`", `[{"my col":1000}]`},
		{".keyword suffix", M + `| WHERE study.subject.keyword == "ookla" | KEEP id`, `[{"id":"m4"}]`},
		{"missing field is null", M + `| WHERE id == "m1" | EVAL x = nope.nothing | KEEP x`, `[{"x":null}]`},
	}
	f.expect(t, cases)
}

// Values keep their types: integers int64, other numbers float64, dates
// RFC 3339 strings, objects maps.
func TestESQLValueTypes(t *testing.T) {
	f := esqlFixtures(t)
	got, err := f.query(t, `FROM $P-measurements* | WHERE id == "m1" | EVAL n = 2 * 3, d = statistic_values.bitrate / 4, t = created_at, o = study, b = ok | KEEP n, d, t, o, b`)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("rows: %v", got)
	}
	r := got[0]
	if v, ok := r["n"].(int64); !ok || v != 6 {
		t.Errorf("n = %#v, want int64 6", r["n"])
	}
	if v, ok := r["d"].(float64); !ok || v != 250 {
		t.Errorf("d = %#v, want float64 250", r["d"])
	}
	if v, ok := r["t"].(string); !ok || v != "2026-11-01T10:00:00.000Z" {
		t.Errorf("t = %#v", r["t"])
	}
	if v, ok := r["o"].(map[string]any); !ok || v["subject"] != "youtube" {
		t.Errorf("o = %#v, want a map", r["o"])
	}
	if v, ok := r["b"].(bool); !ok || !v {
		t.Errorf("b = %#v", r["b"])
	}
	stats, err := f.query(t, `FROM $P-measurements* | STATS n = COUNT(*), a = AVG(statistic_values.bitrate)`)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := stats[0]["n"].(int64); !ok {
		t.Errorf("COUNT = %#v, want int64", stats[0]["n"])
	}
	if _, ok := stats[0]["a"].(float64); !ok {
		t.Errorf("AVG = %#v, want float64", stats[0]["a"])
	}
}

func TestESQLDefaultAndMaxLimit(t *testing.T) {
	id, slug := testOwner(t, "esqlmany")
	docs := make([]map[string]any, 1005)
	for i := range docs {
		docs[i] = map[string]any{"id": i, "type": "VideoMeasurement", "created_at": "2026-11-01T10:00:00Z", "n": i}
	}
	insertDocs(t, id, search.KindMeasurement, docs...)
	b := New(testPool(t))
	p := search.IndexPrefix(slug)
	for q, want := range map[string]int{
		"FROM " + p + "-measurements* | KEEP n":                             limits.ESQLRows,
		"FROM " + p + "-measurements* | LIMIT 1003 | KEEP n":                1003,
		"FROM " + p + "-measurements* | LIMIT 10 | LIMIT 20 | KEEP n":       10,
		"FROM " + p + "-measurements* | STATS n = COUNT(*) BY n | LIMIT 99": 99,
	} {
		got, err := b.ESQL(context.Background(), id, slug, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if len(got) != want {
			t.Errorf("%s: %d rows, want %d", q, len(got), want)
		}
	}
}

func TestESQLErrors(t *testing.T) {
	f := esqlFixtures(t)
	M := "FROM $P-measurements* "
	cases := []struct{ name, q, msg string }{
		{"enrich", M + "| ENRICH policy ON x", "ENRICH is not supported"},
		{"dissect", M + `| DISSECT name "%{a}"`, "DISSECT is not supported"},
		{"grok", M + `| GROK name "%{WORD:a}"`, "GROK is not supported"},
		{"mv_expand", M + "| MV_EXPAND tags", "MV_EXPAND is not supported"},
		{"row", "ROW a = 1", "ROW is not supported"},
		{"show", "SHOW INFO", "SHOW is not supported"},
		{"lookup without join", M + "| LOOKUP x ON y", "only LOOKUP JOIN"},
		{"lookup join of another index", M + "| LOOKUP JOIN x ON client_uuid", "LOOKUP JOIN index [x] is not a lookup index"},
		{"lookup join on an expression", M + "| LOOKUP JOIN $P-lookup-clients ON client_uuid == id", "join expression"},
		{"unknown command", M + "| FROBNICATE", "FROBNICATE is not supported"},
		{"unknown function", M + "| EVAL x = FOO(1)", "function FOO is not supported"},
		{"mv function", M + "| EVAL v = MV_MAX(statistic_values.bitrate)", "function MV_MAX is not supported"},
		{"completion", M + `| COMPLETION c = name WITH {"inference_id": "m"}`, "COMPLETION is not supported"},
		{"syntax position", M + "| WHERE (id == ", "line 1:"},
		{"syntax bad token", "FROM $P-measurements* | WHERE id == \"m1\" ) ", "mismatched input ')'"},
		{"unterminated string", M + `| WHERE id == "m1`, "unterminated string"},
		{"unknown column after stats", M + "| STATS n = COUNT(*) | KEEP id", "Unknown column [id]"},
		{"unknown column after keep", M + "| KEEP id | WHERE name == \"x\"", "Unknown column [name]"},
		{"aggregate outside stats", M + "| EVAL x = AVG(statistic_values.bitrate)", "only allowed in STATS"},
		{"no aggregate in stats", M + "| STATS x = statistic_values.bitrate", "must appear in the STATS BY clause"},
		{"constant in stats", M + "| STATS x = 1", "expected an aggregate function"},
		{"bad date", M + `| WHERE created_at > "yesterday"`, "cannot convert string [yesterday] to datetime"},
		{"outside owner", "FROM analytics-production-zz-other-measurements", "outside the data owner's indices"},
		{"unknown index", "FROM $P-nothing", "Unknown index"},
		{"remote index", "FROM cluster:$P-measurements", "not supported"},
		{"from not first", M + "| FROM x", "FROM is only allowed as the first command"},
		{"negative limit", M + "| LIMIT -1", "mismatched input"},
		{"metadata score", M + "METADATA _score", "METADATA _score is not supported"},
		{"bad regex", M + `| WHERE name RLIKE "("`, "ES|QL evaluation failed"},
		{"date arithmetic without span", M + "| EVAL x = created_at + 1", "needs a time span"},
		{"percentile range", M + "| STATS p = PERCENTILE(statistic_values.bitrate, 120)", "between 0 and 100"},
		{"wrong arity", M + "| EVAL x = TO_LOWER(a, b)", "takes 1 argument"},
		{"date_extract part not a literal", M + "| EVAL x = DATE_EXTRACT(name, created_at)", "string literal"},
		{"unknown date_extract part", M + `| EVAL x = DATE_EXTRACT("fortnight", created_at)`, "unsupported DATE_EXTRACT part"},
		{"date_diff by month", M + `| EVAL x = DATE_DIFF("month", created_at, created_at)`, "unsupported DATE_DIFF unit"},
		{"eval span", M + "| EVAL x = 1 day", "time span"},
		{"_id without metadata", M + `| WHERE _id == "m1"`, "METADATA _id"},
		{"query too long", M + "| WHERE " + strings.Repeat("a + ", 10000) + "a > 1", "query too long"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.query(t, c.q)
			if err == nil {
				t.Fatalf("query %q: no error", c.q)
			}
			if !errors.Is(err, search.ErrBadRequest) {
				t.Fatalf("query %q: %v is not a bad request", c.q, err)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("query %q: error %q does not contain %q", c.q, err, c.msg)
			}
		})
	}
}

// Nothing from the query reaches the SQL text: names, literals and patterns
// all travel as placeholders.
func TestESQLPlaceholdersOnly(t *testing.T) {
	q, err := esql.Parse(`FROM analytics-production-zzslug-measurements*, -analytics-production-zzslug-measurements-zztype METADATA _id
		| WHERE zzfield.zzsub == "zzvalue" AND zzname LIKE "zzlike*" AND zzname RLIKE "zzre" AND zzn IN ("zzin")
		| LOOKUP JOIN analytics-production-zzslug-lookup-clients ON client_uuid
		| EVAL zzcol = CONCAT(zzfield, "zzlit"), zzd = DATE_TRUNC(3 hours, zzts), zzm = BUCKET(zzts, 2 months)
		| STATS zzagg = AVG(zznum), zzp = PERCENTILE(zznum, 95) BY zzcol, zzd
		| SORT zzagg DESC | LIMIT 77 | RENAME zzagg AS zzrenamed | KEEP zz*`)
	if err != nil {
		t.Fatal(err)
	}
	tr := &esqlTranslator{a: &args{}, ownerID: 1, slug: "zzslug", limit: -1}
	stmt, err := tr.translate(q)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.ToLower(stmt), "zz") || strings.Contains(stmt, "77") || strings.Contains(stmt, "95") {
		t.Fatalf("query text reached the SQL: %s", stmt)
	}
}

// A long (but accepted) expression either runs or is a 400, never a 500.
func TestESQLLongExpression(t *testing.T) {
	f := esqlFixtures(t)
	got, err := f.query(t, "FROM $P-measurements* | WHERE id == \"m1\" | EVAL x = "+strings.Repeat("statistic_values.bitrate + ", 2000)+"1 | KEEP x")
	if err != nil {
		if !errors.Is(err, search.ErrBadRequest) {
			t.Fatalf("long expression: %v", err)
		}
		return
	}
	if len(got) != 1 || got[0]["x"] != float64(2000*1000+1) {
		t.Fatalf("long expression: %v", got)
	}
}

// FuzzESQLTranslate: translating any parsed query never panics, and any
// refusal is a bad request.
func FuzzESQLTranslate(f *testing.F) {
	for _, s := range []string{
		"FROM analytics-production-acme-measurements* | WHERE a > 1 AND b LIKE \"x*\" | EVAL c = CASE(a > 1, 1, 2) | STATS n = COUNT(*) BY c | SORT n DESC | LIMIT 5",
		"FROM analytics-production-acme-measurements* METADATA _id, _index | KEEP a* | DROP b | RENAME c AS d",
		"FROM analytics-production-acme* | EVAL t = DATE_TRUNC(2 months, @timestamp) + 1 hour, u = x::double | STATS PERCENTILE(u, 50), MIN(t) BY t",
		"FROM analytics-production-acme-anomaly_events | WHERE created_at > \"2026-01-01\" AND x IN (\"a\", 1, null) | SORT x NULLS FIRST",
		"FROM analytics-production-acme-measurements* | EVAL x = SUBSTRING(a, -1, 2), y = ROUND(b, 2), z = BUCKET(c, 10) | KEEP x, y, z",
		"FROM analytics-production-acme-measurements* | STATS a = AVG(x) * 2 + COUNT(*) BY b | EVAL c = a / 0 | WHERE c IS NULL",
		"FROM analytics-production-acme-measurements* | KEEP a, b.c, d | DROP b.c | RENAME a AS d | SORT d",
		"FROM analytics-production-acme-measurements* | LOOKUP JOIN analytics-production-acme-lookup-clients ON client_uuid | STATS n = COUNT(*) BY client_label",
		"FROM analytics-production-acme-measurements* | STATS n = COUNT(*) BY client_uuid | LOOKUP JOIN analytics-production-acme-lookup-clients ON client_uuid | KEEP client_label, n",
		"FROM analytics-production-acme-measurements* | EVAL client_uuid = 1 day | LOOKUP JOIN analytics-production-acme-lookup-clients ON client_uuid",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		q, err := esql.Parse(query)
		if err != nil {
			return
		}
		tr := &esqlTranslator{a: &args{}, ownerID: 1, slug: "acme", limit: -1}
		stmt, err := tr.translate(q)
		if err != nil {
			if !errors.Is(err, search.ErrBadRequest) {
				t.Fatalf("%q: %v is not a bad request", query, err)
			}
			return
		}
		for i := range tr.a.vals {
			if !strings.Contains(stmt, "$"+strconv.Itoa(i+1)+"::") {
				t.Fatalf("%q: placeholder $%d is unused or untyped in %s", query, i+1, stmt)
			}
		}
	})
}

// Every combination of operand types and operators, functions and
// aggregates either runs or is a 400: never a SQL type error (a 500).
func TestESQLTypeCombinations(t *testing.T) {
	f := esqlFixtures(t)
	atoms := []string{"statistic_values.bitrate", "name", "ok", "study", "3", "2.5", `"s"`, `"2026-11-01"`, "true",
		"created_at", "null", "1 day", "LENGTH(name)", "TO_STRING(3)", "NOW()", "client_uuid", "nope"}
	var exprs []string
	for _, l := range atoms {
		for _, op := range []string{"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "AND", "OR"} {
			for _, r := range atoms {
				exprs = append(exprs, l+" "+op+" "+r)
			}
		}
		for _, fn := range []string{"TO_LOWER", "TO_UPPER", "LENGTH", "TRIM", "ROUND", "ABS", "FLOOR", "CEIL", "TO_STRING",
			"TO_INTEGER", "TO_DOUBLE", "TO_DATETIME", "COALESCE", "SQRT", "LOG10", "TO_BOOLEAN", "GREATEST", "LEAST"} {
			exprs = append(exprs, fn+"("+l+")")
		}
		exprs = append(exprs, "-"+l, "NOT "+l, l+" IS NULL", l+` LIKE "a*"`, l+` RLIKE "a.*"`, l+" IN ("+l+", 1, \"x\")",
			"CONCAT("+l+", "+l+")", "SUBSTRING("+l+", 1, 2)", "CASE("+l+", "+l+", 1)", "COALESCE("+l+", 1)",
			"STARTS_WITH("+l+", "+l+")", "LEFT("+l+", "+l+")", "POW("+l+", "+l+")", "GREATEST("+l+", "+l+")",
			`DATE_EXTRACT("year", `+l+")", `DATE_DIFF("day", `+l+", "+l+")",
			"DATE_TRUNC(1 hour, "+l+")", "BUCKET("+l+", 1 month)", "BUCKET("+l+", 10)", "ROUND("+l+", 1)",
			l+"::double", l+"::integer", l+"::keyword", l+"::datetime", l+"::boolean")
	}
	run := func(q string) {
		_, err := f.query(t, q)
		if err != nil && !errors.Is(err, search.ErrBadRequest) {
			t.Errorf("%s: %v", q, err)
		}
	}
	for _, e := range exprs {
		run("FROM $P-measurements* | EVAL x = " + e + " | WHERE x IS NOT NULL OR true | SORT x | KEEP x | LIMIT 2")
	}
	for _, l := range atoms {
		for _, agg := range []string{"COUNT", "COUNT_DISTINCT", "SUM", "AVG", "MIN", "MAX", "MEDIAN", "VALUES"} {
			run("FROM $P-measurements* | STATS x = " + agg + "(" + l + ") BY g = " + l + " | SORT x")
		}
		run("FROM $P-measurements* | STATS x = PERCENTILE(" + l + ", 50)")
		run("FROM $P-measurements* | STATS x = SUM(CASE(" + l + ", 1, 0)), y = MAX(SUBSTRING(TO_STRING(" + l + "), 1, 2)) BY DATE_TRUNC(2 months, " + l + ")")
	}
}

// Nested functions do not repeat their arguments' SQL: the statement grows
// linearly with the nesting.
func TestESQLNestingStaysLinear(t *testing.T) {
	f := esqlFixtures(t)
	for _, tmpl := range []string{"SUBSTRING(X, 1, 3)", "DATE_TRUNC(2 months, X)", "CASE(X, true, false)", "TO_DOUBLE(TO_DOUBLE(X) > 0)"} {
		leaf := map[string]string{"SUBSTRING(X, 1, 3)": "name", "DATE_TRUNC(2 months, X)": "created_at",
			"CASE(X, true, false)": "ok", "TO_DOUBLE(TO_DOUBLE(X) > 0)": "ok"}[tmpl]
		sizes := map[int]int{}
		for _, depth := range []int{5, 10} {
			e := leaf
			for i := 0; i < depth; i++ {
				e = strings.ReplaceAll(tmpl, "X", e)
			}
			q, err := esql.Parse("FROM analytics-production-acme-measurements* | EVAL x = " + e + " | KEEP x")
			if err != nil {
				t.Fatal(err)
			}
			tr := &esqlTranslator{a: &args{}, ownerID: 1, slug: "acme", limit: -1}
			stmt, err := tr.translate(q)
			if err != nil {
				t.Fatalf("%s: %v", e, err)
			}
			sizes[depth] = len(stmt)
			if _, err := f.query(t, "FROM $P-measurements* | EVAL x = "+e+" | KEEP x"); err != nil {
				t.Fatalf("%s: %v", e, err)
			}
		}
		if sizes[10] > 3*sizes[5] {
			t.Errorf("%s: statement grows from %d to %d bytes between depth 5 and 10", tmpl, sizes[5], sizes[10])
		}
	}
}

// LIMIT above the maximum is capped at 10000 (checked on the statement's
// values: no fixture holds that many rows).
func TestESQLLimitCap(t *testing.T) {
	q, err := esql.Parse("FROM analytics-production-acme-measurements* | LIMIT 50000")
	if err != nil {
		t.Fatal(err)
	}
	tr := &esqlTranslator{a: &args{}, ownerID: 1, slug: "acme", limit: -1}
	if _, err := tr.translate(q); err != nil {
		t.Fatal(err)
	}
	last := tr.a.vals[len(tr.a.vals)-1]
	if last != int64(limits.MaxESQLRows) || tr.a.vals[len(tr.a.vals)-2] != int64(limits.MaxESQLRows) {
		t.Fatalf("limits = %v, want %d", tr.a.vals, limits.MaxESQLRows)
	}
}

// esqlFixtureSet loads the testdata/ fixture set (testdata/README.md) into a
// fresh data owner, and one document each into two data owners whose slugs
// extend its slug ("<slug>eu", "<slug>_eu"): the spec's pattern
// analytics-production-<slug>* must not reach them.
func esqlFixtureSet(t *testing.T) esqlFixture {
	t.Helper()
	id, slug := testOwner(t, "esqlset")
	files := map[search.Kind]string{
		search.KindMeasurement: "measurements", search.KindClientReport: "client_reports",
		search.KindEventBundle: "event_bundles", search.KindNetworkRequest: "network_requests",
		search.KindUserFeedback: "user_feedbacks", search.KindAnomalyEvent: "anomaly_events",
	}
	for kind, name := range files {
		raw, err := os.ReadFile("../../testdata/" + name + ".ndjson")
		if err != nil {
			t.Fatal(err)
		}
		var docs []map[string]any
		for line := range strings.SplitSeq(strings.TrimSpace(string(raw)), "\n") {
			var d map[string]any
			if err := json.Unmarshal([]byte(line), &d); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			docs = append(docs, d)
		}
		insertDocs(t, id, kind, docs...)
	}
	for _, other := range []string{slug + "eu", slug + "_eu"} {
		var oid int64
		if err := testPool(t).QueryRow(context.Background(),
			"INSERT INTO data_owners (slug, name) VALUES ($1, $1) RETURNING id", other).Scan(&oid); err != nil {
			t.Fatal(err)
		}
		insertDocs(t, oid, search.KindMeasurement, map[string]any{"id": "foreign-" + other, "type": "VideoMeasurement",
			"created_at": "2026-11-01T06:00:00.000Z", "study": map[string]any{"subject": "youtube"}})
	}
	return esqlFixture{owner: id, slug: slug, p: search.IndexPrefix(slug)}
}

// Every supported command, operator and function over the fixture set, with
// the expected rows worked out by hand from testdata/README.md.
func TestESQLFixtureSet(t *testing.T) {
	f := esqlFixtureSet(t)
	const (
		c1  = "0b6f3c1e-7d4a-4c2b-9e51-1a2b3c4d5e01"
		mid = "6a1f0c00-2026-4b11-8000-0000000000"
	)
	M := "FROM $P-measurements* "
	cases := []esqlCase{
		// FROM: 30 + 16 + 12 + 9 + 4 + 5 documents; the spec's pattern, its
		// narrowed form and a kind list; exclusions; the data owners whose
		// slugs extend this one are out of reach.
		{"spec pattern reads every kind", "FROM $P* | STATS n = COUNT(*)", `[{"n":76}]`},
		{"dash pattern", "FROM $P-* | STATS n = COUNT(*)", `[{"n":76}]`},
		{"no foreign rows", "FROM $P* METADATA _id | WHERE _id LIKE \"foreign*\" | KEEP _id", `[]`},
		{"kinds", "FROM $P-client_reports*, $P-event_bundles, $P-network_requests, $P-user_feedbacks, $P-anomaly_events METADATA _index " +
			"| STATS n = COUNT(*) BY _index | SORT _index",
			`[{"n":5,"_index":"` + f.p + `-anomaly_events"},{"n":2,"_index":"` + f.p + `-client_reports-dnsclientreport"},
			  {"n":2,"_index":"` + f.p + `-client_reports-icmppingclientreport"},{"n":7,"_index":"` + f.p + `-client_reports-p1203clientreport"},
			  {"n":5,"_index":"` + f.p + `-client_reports-performanceclientreport"},{"n":7,"_index":"` + f.p + `-event_bundles-videoeventbundle"},
			  {"n":5,"_index":"` + f.p + `-event_bundles-webeventbundle"},{"n":9,"_index":"` + f.p + `-network_requests"},
			  {"n":1,"_index":"` + f.p + `-user_feedbacks-comment"},{"n":1,"_index":"` + f.p + `-user_feedbacks-issue_report"},
			  {"n":2,"_index":"` + f.p + `-user_feedbacks-rating"}]`},
		{"exclusions", M + ", -$P-measurements-videomeasurement, -$P-measurements-networkmeasurement | STATS n = COUNT(*)", `[{"n":16}]`},

		// STATS ... BY, SORT on several keys.
		{"count by type", M + "| STATS n = COUNT(*) BY type | SORT n DESC, type",
			`[{"n":7,"type":"NetworkMeasurement"},{"n":7,"type":"VideoMeasurement"},{"n":5,"type":"SpeedtestMeasurement"},
			  {"n":5,"type":"WebMeasurement"},{"n":3,"type":"ConferencingMeasurement"},{"n":3,"type":"GamingMeasurement"}]`},
		{"count by subject", "FROM $P-measurements-videomeasurement | STATS n = COUNT(*) BY study.subject | SORT n DESC, study.subject",
			`[{"n":3,"study.subject":"youtube"},{"n":2,"study.subject":"amazon_trailer"},{"n":2,"study.subject":"netflix"}]`},
		{"count by isp", M + "| STATS n = COUNT(*) BY network.isp | SORT network.isp",
			`[{"n":10,"network.isp":"O2"},{"n":10,"network.isp":"Telekom"},{"n":10,"network.isp":"Vodafone"}]`},
		// initial_loading_time of #1..#7: 820 915 1010 1105 1200 820 915.
		{"aggregates", "FROM $P-measurements-videomeasurement | STATS n = COUNT(*), c = COUNT(statistic_values.initial_loading_time), " +
			"d = COUNT_DISTINCT(statistic_values.initial_loading_time), s = SUM(statistic_values.initial_loading_time), " +
			"a = ROUND(AVG(statistic_values.initial_loading_time), 2), mn = MIN(statistic_values.initial_loading_time), " +
			"mx = MAX(statistic_values.initial_loading_time), med = MEDIAN(statistic_values.initial_loading_time), " +
			"p50 = PERCENTILE(statistic_values.initial_loading_time, 50), p0 = PERCENTILE(statistic_values.initial_loading_time, 0)",
			`[{"n":7,"c":7,"d":5,"s":6785,"a":969.29,"mn":820,"mx":1200,"med":915,"p50":915,"p0":820}]`},
		{"count of a field some documents lack", M + "| STATS e = COUNT(error.code), all = COUNT(*)", `[{"e":1,"all":30}]`},
		// audio_jitter 6.5+k of #25 (k 4), #26 (0), #27 (1): 10.5, 6.5, 7.5.
		{"avg by subject", "FROM $P-measurements-conferencingmeasurement | STATS a = AVG(statistic_values.audio_jitter) BY study.subject | SORT study.subject",
			`[{"a":8.5,"study.subject":"googlemeet"},{"a":7.5,"study.subject":"microsoftteams"}]`},
		{"anomalies by severity and status", "FROM $P-anomaly_events | STATS n = COUNT(*) BY severity, status | SORT severity, status",
			`[{"n":1,"severity":"critical","status":"new"},{"n":1,"severity":"critical","status":"resolved"},
			  {"n":2,"severity":"warning","status":"new"},{"n":1,"severity":"warning","status":"resolved"}]`},

		// WHERE: comparison, boolean operators, null tests, IN, LIKE, RLIKE, dates.
		{"boolean field false", M + "| WHERE success == false | KEEP id, error.code", `[{"id":"` + mid + `18","error.code":"TIMEOUT"}]`},
		{"not and or", M + `| WHERE NOT success OR (type == "GamingMeasurement" AND statistic_values.latency > 36) | SORT id | KEEP id`,
			`[{"id":"` + mid + `18"},{"id":"` + mid + `29"},{"id":"` + mid + `30"}]`},
		{"is null", M + "| WHERE error.code IS NULL | STATS n = COUNT(*)", `[{"n":29}]`},
		{"is not null", M + "| WHERE error IS NOT NULL | KEEP id", `[{"id":"` + mid + `18"}]`},
		{"in", M + `| WHERE study.subject IN ("ookla", "nperf", "fastcom") | SORT id | KEEP id`,
			`[{"id":"` + mid + `20"},{"id":"` + mid + `21"},{"id":"` + mid + `22"},{"id":"` + mid + `24"}]`},
		{"not in", M + `| WHERE study.subject NOT IN ("ookla", "nperf", "fastcom") | STATS n = COUNT(*)`, `[{"n":26}]`},
		{"like", M + `| WHERE study.study_id LIKE "yt-*" | STATS n = COUNT(*)`, `[{"n":3}]`},
		{"rlike", M + `| WHERE study.study_id RLIKE "(dns|tr)-.*" | SORT id | KEEP id`,
			`[{"id":"` + mid + `13"},{"id":"` + mid + `14"},{"id":"` + mid + `15"},{"id":"` + mid + `16"}]`},
		{"client and time order", M + `| WHERE client_uuid == "` + c1 + `" | SORT created_at | KEEP id`,
			`[{"id":"` + mid + `01"},{"id":"` + mid + `13"},{"id":"` + mid + `25"},{"id":"` + mid + `07"},{"id":"` + mid + `19"}]`},
		// Day 9: #29 06:04, #9 06:44, #19 06:54; day 10: #20 13:07, #30 13:17, #10 13:57.
		{"date range", M + `| WHERE created_at >= "2026-11-09" AND @timestamp < TO_DATETIME("2026-11-10T13:10:00Z") | SORT created_at | KEEP id`,
			`[{"id":"` + mid + `29"},{"id":"` + mid + `09"},{"id":"` + mid + `19"},{"id":"` + mid + `20"}]`},
		{"now", M + "| WHERE created_at < NOW() AND created_at > NOW() - 3650 days | STATS n = COUNT(*)", `[{"n":30}]`},

		// EVAL: arithmetic and functions. Gaming #28..#30: latency 36 40 44, fps 56 54 52.
		{"arithmetic", "FROM $P-measurements-gamingmeasurement | EVAL a = statistic_values.latency * 2 - 6, b = statistic_values.fps / 4, " +
			"m = statistic_values.latency % 7, i = TO_LONG(statistic_values.fps) / 5 | SORT id | KEEP a, b, m, i",
			`[{"a":66,"b":14,"m":1,"i":11},{"a":74,"b":13.5,"m":5,"i":10},{"a":82,"b":13,"m":2,"i":10}]`},
		{"string functions", M + `| WHERE study.subject == "netflix" | EVAL u = TO_UPPER(study.subject), l = LENGTH(study.study_id), ` +
			`c = CONCAT(study.subject, "/", network.isp), s = SUBSTRING(study.study_id, 1, 4), lo = TO_LOWER(network.isp) | SORT id | KEEP u, l, c, s, lo`,
			`[{"u":"NETFLIX","l":12,"c":"netflix/Telekom","s":"nflx","lo":"telekom"},{"u":"NETFLIX","l":12,"c":"netflix/Vodafone","s":"nflx","lo":"vodafone"}]`},
		// stalling_number of #1..#7: 0 1 2 0 1 0 1.
		{"case", "FROM $P-measurements-videomeasurement | EVAL k = CASE(statistic_values.stalling_number == 0, \"smooth\", " +
			"statistic_values.stalling_number == 1, \"minor\", \"heavy\") | STATS n = COUNT(*) BY k | SORT k",
			`[{"n":1,"k":"heavy"},{"n":3,"k":"minor"},{"n":3,"k":"smooth"}]`},
		{"coalesce", M + `| WHERE type IN ("GamingMeasurement", "SpeedtestMeasurement") | EVAL v = COALESCE(statistic_values.latency, statistic_values.ping, -1) | STATS mn = MIN(v), mx = MAX(v)`,
			// ping 11+1.8k of #20..#24 (k 4 0 1 2 3): 18.2 11 12.8 14.6 16.4; latency 36 40 44.
			`[{"mn":11,"mx":44}]`},
		{"math", "FROM $P-measurements-speedtestmeasurement | WHERE id == \"" + mid + "21\" | EVAL t = ROUND(statistic_values.download + statistic_values.upload, 1), " +
			"f = FLOOR(statistic_values.download), c = CEIL(statistic_values.upload), a = ABS(statistic_values.upload - statistic_values.download), " +
			"r = ROUND(SQRT(statistic_values.ping * 11), 3) | KEEP t, f, c, a, r",
			// #21: k 0: download 94.2, upload 38.1, ping 11.
			`[{"t":132.3,"f":94,"c":39,"a":56.1,"r":11}]`},
		{"conversions", M + `| WHERE id == "` + mid + `28" | EVAL s = TO_STRING(statistic_values.latency), i = TO_INTEGER("42"), d = TO_DOUBLE(statistic_values.fps), ` +
			`dt = TO_DATETIME("2026-11-05T06:12:48.888Z"), b = TO_BOOLEAN(success), c = statistic_values.latency::double, day = DATE_EXTRACT("day_of_month", created_at) ` +
			`| KEEP s, i, d, dt, b, c, day`,
			`[{"s":"36","i":42,"d":56,"dt":"2026-11-05T06:12:48.888Z","b":true,"c":36,"day":8}]`},

		// Dates: 3 measurements a day on days 1..10; weeks start on Monday
		// (2026-11-01 is a Sunday).
		{"date_trunc by day", M + "| STATS n = COUNT(*) BY day = DATE_TRUNC(1 day, created_at) | STATS days = COUNT(*), mn = MIN(n), mx = MAX(n), first = MIN(day)",
			`[{"days":10,"mn":3,"mx":3,"first":"2026-11-01T00:00:00.000Z"}]`},
		{"bucket by week", M + "| STATS n = COUNT(*) BY w = BUCKET(created_at, 1 week) | SORT w",
			`[{"n":3,"w":"2026-10-26T00:00:00.000Z"},{"n":21,"w":"2026-11-02T00:00:00.000Z"},{"n":6,"w":"2026-11-09T00:00:00.000Z"}]`},

		// LIMIT, KEEP, DROP, RENAME.
		{"sort limit", M + "| SORT created_at DESC | LIMIT 2 | KEEP id", `[{"id":"` + mid + `10"},{"id":"` + mid + `30"}]`},
		{"keep rename", M + `| WHERE id == "` + mid + `28" | KEEP study.subject, study.study_id | RENAME study.subject AS subject`,
			`[{"subject":"geforce_now","study.study_id":"gfn-fortnite"}]`},
		// VALUES: distinct values, one alone, several as a (sorted) array.
		{"values", "FROM $P-anomaly_events | STATS s = VALUES(status), c = VALUES(client_uuid), m = VALUES(metric) BY severity | SORT severity",
			`[{"s":["new","resolved"],"c":["1c7a4d2f-8e5b-4d3c-8f62-2b3c4d5e6f02","3e9c6f4b-a07d-4f5e-8b84-4d5e6f7a8b04"],"m":["audio_jitter","download"],"severity":"critical"},
			  {"s":["new","resolved"],"c":["2d8b5e3a-9f6c-4e4d-9a73-3c4d5e6f7a03","3e9c6f4b-a07d-4f5e-8b84-4d5e6f7a8b04","4fad7a5c-b18e-4a6f-9c95-5e6f7a8b9c05"],
			   "m":["packet_loss","page_load_time","total_stalling_time"],"severity":"warning"}]`},
		{"values of one", M + `| WHERE study.subject == "netflix" | STATS t = VALUES(type), n = VALUES(statistic_values.initial_loading_time), none = VALUES(error.code)`,
			// #4, #5: k 3, 4: 1105, 1200.
			`[{"t":"VideoMeasurement","n":[1105,1200],"none":null}]`},
		{"drop", "FROM $P-anomaly_events | WHERE status == \"resolved\" | KEEP id, severity, status | DROP status | SORT id",
			`[{"id":"meet-jitter::shift::1793971505","severity":"critical"},{"id":"web-plt::spike::1794319053","severity":"warning"}]`},
	}
	f.expect(t, cases)
}
