package pg

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/search"
)

// LOOKUP JOIN on the data owner's lookup-clients index, over the fixture set
// (testdata/README.md: 6 clients, 5 measurements each, every measurement
// with client_type "automator"). The data owner owns C1..C4:
//
//	C1 "Berlin lab" / "rack 1", automator, tags lab, berlin, created 2026-10-15T08:30:00.123456Z
//	C2 "Berlin office", app, tags berlin (labels are unique per data owner)
//	C3 "Munich", automator, tags lab, lab
//	C4 no label, automator, tags {} (none)
//
// C5 belongs to another data owner (label "Foreign") and is shared with
// this one: not a lookup document. C6 has no clients row at all (documents
// reference clients by UUID without a foreign key). Both join to nulls.
func TestESQLLookupJoin(t *testing.T) {
	f := esqlFixtureSet(t)
	const (
		c1, c2, c3 = "0b6f3c1e-7d4a-4c2b-9e51-1a2b3c4d5e01", "1c7a4d2f-8e5b-4d3c-8f62-2b3c4d5e6f02", "2d8b5e3a-9f6c-4e4d-9a73-3c4d5e6f7a03"
		c4, c5, c6 = "3e9c6f4b-a07d-4f5e-8b84-4d5e6f7a8b04", "4fad7a5c-b18e-4a6f-9c95-5e6f7a8b9c05", "5abe8b6d-c29f-4b7a-8da6-6f7a8b9cad06"
		mid        = "6a1f0c00-2026-4b11-8000-0000000000"
	)
	other, otherSlug := testOwner(t, "esqllookupother")
	ctx := context.Background()
	pool := testPool(t)
	// clients.uuid is unique in the database: take the UUIDs over (a rerun
	// with -count creates a new data owner).
	client := func(owner int64, uuid string, label, extra *string, typ string, tags []string, created string) int64 {
		t.Helper()
		var id int64
		err := pool.QueryRow(ctx, `INSERT INTO clients (data_owner_id, uuid, label, extra_label, type, tags, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7::timestamptz)
			ON CONFLICT (uuid) DO UPDATE SET data_owner_id = EXCLUDED.data_owner_id, label = EXCLUDED.label,
				extra_label = EXCLUDED.extra_label, type = EXCLUDED.type, tags = EXCLUDED.tags, created_at = EXCLUDED.created_at
			RETURNING id`, owner, uuid, label, extra, typ, tags, created).Scan(&id)
		if err != nil {
			t.Fatalf("client %s: %v", uuid, err)
		}
		return id
	}
	str := func(s string) *string { return &s }
	client(f.owner, c1, str("Berlin lab"), str("rack 1"), "automator", []string{"lab", "berlin"}, "2026-10-15T08:30:00.123456Z")
	client(f.owner, c2, str("Berlin office"), nil, "app", []string{"berlin"}, "2026-10-20T00:00:00Z")
	client(f.owner, c3, str("Munich"), nil, "automator", []string{"lab", "lab"}, "2026-09-01T12:00:00Z")
	client(f.owner, c4, nil, nil, "automator", []string{}, "2026-10-01T00:00:00Z")
	shared := client(other, c5, str("Foreign"), str("secret"), "automator", []string{"foreign"}, "2026-10-01T00:00:00Z")
	if _, err := pool.Exec(ctx, "INSERT INTO client_shares (client_id, data_owner_id) VALUES ($1, $2)", shared, f.owner); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "DELETE FROM clients WHERE uuid = $1", c6); err != nil {
		t.Fatal(err)
	}
	L := "| LOOKUP JOIN $P-lookup-clients ON client_uuid "
	M := "FROM $P-measurements* "
	f.expect(t, []esqlCase{
		// Join, then aggregate by a lookup field: C1, C2, C3 (5 each), and
		// null for C4 (no label), C5 (shared) and C6 (no client) (15).
		{"join then stats by label", M + L + "| STATS n = COUNT(*) BY client_label | SORT client_label",
			`[{"n":5,"client_label":"Berlin lab"},{"n":5,"client_label":"Berlin office"},{"n":5,"client_label":"Munich"},{"n":15,"client_label":null}]`},
		// Aggregate by client, then join: the typical use.
		{"stats by client then join", M + "| STATS n = COUNT(*) BY client_uuid " + L +
			"| KEEP client_uuid, client_label, client_extra_label, client_type, client_tags, n | SORT client_uuid",
			`[{"client_uuid":"` + c1 + `","client_label":"Berlin lab","client_extra_label":"rack 1","client_type":"automator","client_tags":["berlin","lab"],"n":5},
			  {"client_uuid":"` + c2 + `","client_label":"Berlin office","client_extra_label":null,"client_type":"app","client_tags":"berlin","n":5},
			  {"client_uuid":"` + c3 + `","client_label":"Munich","client_extra_label":null,"client_type":"automator","client_tags":"lab","n":5},
			  {"client_uuid":"` + c4 + `","client_label":null,"client_extra_label":null,"client_type":"automator","client_tags":null,"n":5},
			  {"client_uuid":"` + c5 + `","client_label":null,"client_extra_label":null,"client_type":null,"client_tags":null,"n":5},
			  {"client_uuid":"` + c6 + `","client_label":null,"client_extra_label":null,"client_type":null,"client_tags":null,"n":5}]`},
		{"the spec's example, aggregated again", M + "| STATS n = COUNT(*) BY client_uuid " + L +
			"| KEEP client_label, n | STATS clients = COUNT(*), total = SUM(n) BY client_label | SORT client_label",
			`[{"clients":1,"total":5,"client_label":"Berlin lab"},{"clients":1,"total":5,"client_label":"Berlin office"},{"clients":1,"total":5,"client_label":"Munich"},{"clients":3,"total":15,"client_label":null}]`},
		// Every lookup field of one row; the date has milliseconds.
		{"all fields of one row", M + `| WHERE id == "` + mid + `01" ` + L +
			"| KEEP id, client_uuid, client_label, client_extra_label, client_type, client_tags, client_created_at",
			`[{"id":"` + mid + `01","client_uuid":"` + c1 + `","client_label":"Berlin lab","client_extra_label":"rack 1",
			   "client_type":"automator","client_tags":["berlin","lab"],"client_created_at":"2026-10-15T08:30:00.123Z"}]`},
		// Lookup fields replace the document's client_type ("automator" on
		// all 30): C2's are "app", C5's and C6's null.
		{"lookup fields override", M + L + "| STATS n = COUNT(*) BY client_type | SORT client_type",
			`[{"n":5,"client_type":"app"},{"n":15,"client_type":"automator"},{"n":10,"client_type":null}]`},
		{"whole rows carry the lookup fields", "FROM $P-measurements-gamingmeasurement " + L +
			"| SORT id | KEEP id, client_* | DROP client_version",
			// #28 C4, #29 C5, #30 C6.
			`[{"id":"` + mid + `28","client_uuid":"` + c4 + `","client_label":null,"client_extra_label":null,"client_type":"automator","client_tags":null,"client_created_at":"2026-10-01T00:00:00.000Z"},
			  {"id":"` + mid + `29","client_uuid":"` + c5 + `","client_label":null,"client_extra_label":null,"client_type":null,"client_tags":null,"client_created_at":null},
			  {"id":"` + mid + `30","client_uuid":"` + c6 + `","client_label":null,"client_extra_label":null,"client_type":null,"client_tags":null,"client_created_at":null}]`},
		// Typed lookup fields: LIKE on a label, dates compared as dates
		// (C1 2026-10-15, C2 2026-10-20, C3 2026-09-01).
		{"filter on lookup fields", M + L + `| WHERE client_label LIKE "Berlin*" AND client_created_at >= "2026-10-16" | STATS n = COUNT(*), c = VALUES(client_uuid)`,
			`[{"n":5,"c":"` + c2 + `"}]`},
		{"date functions on lookup dates", M + L + `| WHERE client_created_at IS NOT NULL | STATS n = COUNT(*) BY m = DATE_TRUNC(1 month, client_created_at) | SORT m`,
			`[{"n":5,"m":"2026-09-01T00:00:00.000Z"},{"n":15,"m":"2026-10-01T00:00:00.000Z"}]`},
		// The order of a SORT before the join and a LIMIT survive it: day 1
		// starts with #1 (C1) at 06:00 and #11 (C5) at 06:10.
		{"sort and limit before the join", M + "| SORT created_at | LIMIT 2 " + L + "| KEEP id, client_label",
			`[{"id":"` + mid + `01","client_label":"Berlin lab"},{"id":"` + mid + `11","client_label":null}]`},
		// A client_uuid computed by EVAL joins like the document's.
		{"computed key", `FROM $P-anomaly_events | EVAL client_uuid = "` + c3 + `" | LIMIT 1 ` + L + "| KEEP client_label", `[{"client_label":"Munich"}]`},
		// Joining twice changes nothing.
		{"twice", M + L + L + "| STATS n = COUNT(*) BY client_label | SORT client_label",
			`[{"n":5,"client_label":"Berlin lab"},{"n":5,"client_label":"Berlin office"},{"n":5,"client_label":"Munich"},{"n":15,"client_label":null}]`},
		{"rename after the join", M + "| STATS n = COUNT(*) BY client_uuid " + L + `| WHERE client_uuid == "` + c3 + `" | RENAME client_label AS site | KEEP site, n`,
			`[{"site":"Munich","n":5}]`},
	})
	// The shared client's owner data never shows.
	got, err := f.query(t, M+L)
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := json.Marshal(got); len(got) != 30 || strings.Contains(string(raw), "Foreign") || strings.Contains(string(raw), "secret") {
		t.Fatalf("%d rows: %s", len(got), raw)
	}

	for _, c := range []struct{ name, q, msg string }{
		{"another owner's lookup index", M + "| LOOKUP JOIN " + search.IndexPrefix(otherSlug) + "-lookup-clients ON client_uuid", "is not a lookup index of the data owner"},
		{"another lookup index", M + "| LOOKUP JOIN $P-lookup-isps ON client_uuid", "LOOKUP JOIN index [" + f.p + "-lookup-isps] is not a lookup index"},
		{"join on another field", M + "| LOOKUP JOIN $P-lookup-clients ON client_label", "LOOKUP JOIN on [client_label] is not supported"},
		{"join on two fields", M + "| LOOKUP JOIN $P-lookup-clients ON client_uuid, type", "LOOKUP JOIN on [type] is not supported"},
		{"join key gone after STATS", M + "| STATS n = COUNT(*) BY type " + L, "Unknown column [client_uuid]"},
		{"join key dropped", M + "| DROP client_uuid " + L, "Unknown column [client_uuid]"},
		{"FROM the lookup index", "FROM $P-lookup-clients", "is a lookup index"},
		{"FROM the lookup index in a list", "FROM $P-anomaly_events, $P-lookup-clients", "is a lookup index"},
	} {
		t.Run("refused: "+c.name, func(t *testing.T) {
			_, err := f.query(t, c.q)
			if !errors.Is(err, search.ErrBadRequest) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("query %q: err = %v, want a 400 with %q", c.q, err, c.msg)
			}
		})
	}
	// Wildcard FROM patterns read documents only, never lookup documents.
	f.expect(t, []esqlCase{{"wildcards read no lookup documents", "FROM $P-* | STATS n = COUNT(*)", `[{"n":76}]`}})
}

// The translation's shortcuts over the fixture set (testdata/README.md):
// whole kinds read by kind alone, SORT created_at ... LIMIT walking the
// created_at index (one branch per kind, merged, when FROM names several
// kinds), client_uuid grouped, joined and compared as a uuid.
//
// Newest documents of all kinds (created_at): user feedback 7003 (about
// #10, 14:02:35.333 on day 10), anomaly web-plt::spike::1794319053 (C4,
// 14:02:33), eb-0010 (#10 + 80 s), cr-0010 (#10 + 75 s), the three network
// requests of #10 nr-0009, nr-0008, nr-0007, then #10 itself. Oldest: #1
// (day 1 06:00), cr-0001 (+75 s), eb-0001 (+80 s), #11 (06:10:50.370),
// cr-0011. Documents per client_uuid over every kind: C1 5+3+2 = 10,
// C2 5+3+2+3+1 = 14, C3 5+2+2+3+1 = 13, C4 5+2+2+3+2 = 14, C5 5+3+2+1 = 11,
// C6 5+3+2 = 10; the 4 user feedbacks carry no client_uuid column.
var esqlFastPathCases = func(p string) []esqlCase {
	const (
		c1, c4 = "0b6f3c1e-7d4a-4c2b-9e51-1a2b3c4d5e01", "3e9c6f4b-a07d-4f5e-8b84-4d5e6f7a8b04"
		mid    = "6a1f0c00-2026-4b11-8000-0000000000"
	)
	M := "FROM $P-measurements* "
	return []esqlCase{
		{"every kind, newest first", "FROM $P* | SORT created_at DESC | LIMIT 7 | KEEP id",
			`[{"id":7003},{"id":"web-plt::spike::1794319053"},{"id":"eb-0010"},{"id":"cr-0010"},{"id":"nr-0009"},{"id":"nr-0008"},{"id":"nr-0007"}]`},
		{"every kind, oldest first", "FROM $P-* | SORT @timestamp | LIMIT 5 | KEEP id",
			`[{"id":"` + mid + `01"},{"id":"cr-0001"},{"id":"eb-0001"},{"id":"` + mid + `11"},{"id":"cr-0011"}]`},
		{"nulls last on created_at changes nothing", "FROM $P* | SORT created_at DESC NULLS LAST | LIMIT 2 | KEEP id",
			`[{"id":7003},{"id":"web-plt::spike::1794319053"}]`},
		{"nulls first ascending changes nothing", "FROM $P* | SORT created_at ASC NULLS FIRST | LIMIT 1 | KEEP id", `[{"id":"` + mid + `01"}]`},
		{"a second key", M + "| SORT created_at DESC, id | LIMIT 2 | KEEP id", `[{"id":"` + mid + `10"},{"id":"` + mid + `30"}]`},
		// Client reports with a type (all 16) and web event bundles: eb-0010,
		// cr-0010, then #9's eb-0009 (06:45:36.296) before cr-0009.
		{"typed patterns and an exclusion, newest first", "FROM $P-client_reports-*, $P-event_bundles, -$P-event_bundles-videoeventbundle " +
			"| SORT created_at DESC | LIMIT 3 | KEEP id", `[{"id":"eb-0010"},{"id":"cr-0010"},{"id":"eb-0009"}]`},
		{"a filter between SORT and LIMIT", `FROM $P* | SORT created_at DESC | WHERE client_uuid == "` + c4 + `" | LIMIT 3 | KEEP id`,
			`[{"id":"web-plt::spike::1794319053"},{"id":"eb-0010"},{"id":"cr-0010"}]`},
		// The three oldest measurements (#1, #11, #21 on day 1), newest first.
		{"a LIMIT before another SORT", M + "| SORT created_at | LIMIT 3 | SORT created_at DESC | KEEP id",
			`[{"id":"` + mid + `21"},{"id":"` + mid + `11"},{"id":"` + mid + `01"}]`},
		{"an unordered LIMIT then a SORT", M + "| LIMIT 30 | SORT created_at DESC | LIMIT 1 | KEEP id", `[{"id":"` + mid + `10"}]`},
		{"whole kind by _index", "FROM $P-measurements METADATA _index | STATS n = COUNT(*) BY _index | SORT n DESC, _index | LIMIT 1",
			`[{"n":7,"_index":"` + p + `-measurements-networkmeasurement"}]`},
		{"count by client, every kind", "FROM $P* | STATS n = COUNT(*) BY client_uuid | SORT client_uuid",
			`[{"n":10,"client_uuid":"` + c1 + `"},{"n":14,"client_uuid":"1c7a4d2f-8e5b-4d3c-8f62-2b3c4d5e6f02"},
			  {"n":13,"client_uuid":"2d8b5e3a-9f6c-4e4d-9a73-3c4d5e6f7a03"},{"n":14,"client_uuid":"` + c4 + `"},
			  {"n":11,"client_uuid":"4fad7a5c-b18e-4a6f-9c95-5e6f7a8b9c05"},{"n":10,"client_uuid":"5abe8b6d-c29f-4b7a-8da6-6f7a8b9cad06"},
			  {"n":4,"client_uuid":null}]`},
		// Gaming #28..#30: C4, C5, C6.
		{"count by client and type", M + `| WHERE type == "GamingMeasurement" | STATS n = COUNT(*) BY type, c = client_uuid | SORT c | KEEP c, n`,
			`[{"c":"` + c4 + `","n":1},{"c":"4fad7a5c-b18e-4a6f-9c95-5e6f7a8b9c05","n":1},{"c":"5abe8b6d-c29f-4b7a-8da6-6f7a8b9cad06","n":1}]`},
		{"the BY column in an aggregate expression", M + "| STATS x = COUNT(*) + LENGTH(client_uuid) BY client_uuid | STATS mn = MIN(x), mx = MAX(x), n = COUNT(*)",
			`[{"mn":41,"mx":41,"n":6}]`},
		{"count distinct and values of clients", M + `| WHERE type == "GamingMeasurement" | STATS d = COUNT_DISTINCT(client_uuid), v = VALUES(client_uuid)`,
			`[{"d":3,"v":["` + c4 + `","4fad7a5c-b18e-4a6f-9c95-5e6f7a8b9c05","5abe8b6d-c29f-4b7a-8da6-6f7a8b9cad06"]}]`},
		{"client equality", M + `| WHERE client_uuid == "` + c1 + `" | STATS n = COUNT(*)`, `[{"n":5}]`},
		{"client equality, literal first", M + `| WHERE "` + c1 + `" == client_uuid.keyword | STATS n = COUNT(*)`, `[{"n":5}]`},
		{"client inequality", M + `| WHERE client_uuid != "` + c1 + `" | STATS n = COUNT(*)`, `[{"n":25}]`},
		// Compared as strings, as Elasticsearch compares keywords: an upper
		// case UUID names no document.
		{"upper case uuid", M + `| WHERE client_uuid == "` + strings.ToUpper(c1) + `" | STATS n = COUNT(*)`, `[{"n":0}]`},
		{"upper case uuid, unequal", M + `| WHERE client_uuid != "` + strings.ToUpper(c1) + `" | STATS n = COUNT(*)`, `[{"n":30}]`},
		{"not a uuid", M + `| WHERE client_uuid == "nope" | STATS n = COUNT(*)`, `[{"n":0}]`},
		// null != x is null: documents without client_uuid never match.
		{"no client_uuid is not unequal", `FROM $P-user_feedbacks | WHERE client_uuid != "` + c1 + `" | STATS n = COUNT(*)`, `[{"n":0}]`},
		{"counted by client, then compared", `FROM $P* | STATS n = COUNT(*) BY client_uuid | WHERE client_uuid == "` + c4 + `" OR "` + c1 + `" == client_uuid | SORT n`,
			`[{"n":10,"client_uuid":"` + c1 + `"},{"n":14,"client_uuid":"` + c4 + `"}]`},
		{"renamed, grouped twice", M + "| RENAME client_uuid AS c | STATS n = COUNT(*) BY c | STATS k = COUNT(*) BY n", `[{"k":6,"n":5}]`},
		{"client ordering", M + `| WHERE client_uuid == "` + c4 + `" | SORT created_at DESC | LIMIT 2 | KEEP id`,
			`[{"id":"` + mid + `10"},{"id":"` + mid + `28"}]`},
	}
}
