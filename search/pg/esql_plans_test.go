package pg

import (
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/search/esql"
)

func TestESQLFastPaths(t *testing.T) {
	f := esqlFixtureSet(t)
	f.expect(t, esqlFastPathCases(f.p))
}

// The shortcuts change no answer: each query over the fixture set (these,
// with their rows in a defined order, and TestESQLFastPaths') answers the
// same with the shortcuts off (the translation before them).
func TestESQLFastPathsMatchPlain(t *testing.T) {
	f := esqlFixtureSet(t)
	queries := []string{
		"FROM $P* | STATS n = COUNT(*) BY type | SORT type",
		"FROM $P-measurements* | STATS n = COUNT(*) BY type | SORT n DESC, type",
		"FROM $P-client_reports*, $P-event_bundles, $P-network_requests, $P-user_feedbacks, $P-anomaly_events METADATA _index | STATS n = COUNT(*) BY _index | SORT _index",
		"FROM $P-measurements*, -$P-measurements-videomeasurement | SORT created_at DESC | LIMIT 4 | KEEP id, type",
		"FROM $P-measurements-*, $P-anomaly_events | SORT created_at | LIMIT 4",
		"FROM $P* | SORT created_at DESC | LIMIT 12",
		"FROM $P* METADATA _id | SORT created_at | LIMIT 3 | LOOKUP JOIN $P-lookup-clients ON client_uuid | KEEP _id, client_label",
		"FROM $P* | LOOKUP JOIN $P-lookup-clients ON client_uuid | STATS n = COUNT(*) BY client_uuid, client_type | SORT client_uuid",
		"FROM $P* | STATS n = COUNT(*), d = COUNT_DISTINCT(type) BY client_uuid | SORT client_uuid",
		"FROM $P* | STATS n = COUNT(*) BY client_uuid | LOOKUP JOIN $P-lookup-clients ON client_uuid | SORT client_uuid",
		"FROM $P* | KEEP client_uuid, type | RENAME client_uuid AS c | STATS n = COUNT(*) BY c, type | STATS m = MAX(n) BY c | WHERE c != \"0b6f3c1e-7d4a-4c2b-9e51-1a2b3c4d5e01\" | SORT c",
		"FROM $P-measurements* | WHERE created_at >= \"2026-11-03\" AND created_at < \"2026-11-05\" | STATS a = AVG(statistic_values.initial_loading_time), n = COUNT(*) BY network.isp | SORT network.isp",
	}
	for _, c := range esqlFastPathCases(f.p) {
		queries = append(queries, c.q)
	}
	b := New(testPool(t))
	for _, q := range queries {
		q = strings.ReplaceAll(q, "$P", f.p)
		fast, err := b.esql(context.Background(), f.owner, f.slug, q, false)
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		plain, err := b.esql(context.Background(), f.owner, f.slug, q, true)
		if err != nil {
			t.Fatalf("%q plain: %v", q, err)
		}
		if g, w := esqlJSON(t, fast), esqlJSON(t, plain); !reflect.DeepEqual(g, w) {
			gj, _ := json.Marshal(g)
			wj, _ := json.Marshal(w)
			t.Errorf("%q\n fast  %s\n plain %s", q, gj, wj)
		}
		if len(fast) == 0 {
			t.Errorf("%q: no rows: the comparison proves nothing", q)
		}
	}
}

// The statements the shortcuts give: SORT created_at ... LIMIT without a
// sort (the index gives the order, also merged over several kinds), whole
// kinds without the index-name expression, client_uuid compared in the
// index. Planned with sorts and sequential scans priced out, so that only a
// statement that cannot use the index sorts or filters.
func TestESQLPlans(t *testing.T) {
	f := esqlFixtureSet(t)
	sortNode := regexp.MustCompile(`(?m)(^|->  )(Incremental )?Sort  \(`)
	for _, c := range []struct {
		name, q string
		fast    func(plan string) bool // true when the plan is the fast one
	}{
		{"one kind, newest first", "FROM $P-measurements* | SORT created_at DESC | LIMIT 5 | KEEP id",
			func(p string) bool {
				// the (data_owner_id, kind, created_at, id) index: of each month's
				// partition since documents are partitioned (migration 00050)
				return !sortNode.MatchString(p) && strings.Contains(p, "data_owner_id_kind_created_at_id_idx")
			}},
		{"every kind, oldest first", "FROM $P* | SORT created_at | LIMIT 5",
			func(p string) bool { return !sortNode.MatchString(p) && strings.Contains(p, "Merge Append") }},
		{"whole kind, no index name", "FROM $P-measurements* | STATS n = COUNT(*) BY type",
			func(p string) bool { return !strings.Contains(p, "lower(") }},
		{"client equality in the index", `FROM $P-measurements* | WHERE client_uuid == "0b6f3c1e-7d4a-4c2b-9e51-1a2b3c4d5e01" | KEEP id`,
			func(p string) bool {
				return regexp.MustCompile(`Index Cond: .*client_uuid = '0b6f3c1e-7d4a-4c2b-9e51-1a2b3c4d5e01'::uuid`).MatchString(p)
			}},
		{"client join on the uuid", "FROM $P-measurements* | LOOKUP JOIN $P-lookup-clients ON client_uuid | KEEP client_label",
			func(p string) bool { return !strings.Contains(p, "uuid)::text") }},
		{"join after STATS on the uuid", "FROM $P-measurements* | STATS n = COUNT(*) BY client_uuid | LOOKUP JOIN $P-lookup-clients ON client_uuid | KEEP client_label, n",
			func(p string) bool { return !strings.Contains(p, "uuid)::text") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, plain := range []bool{false, true} {
				plan := esqlPlan(t, f, c.q, plain)
				if c.fast(plan) == plain {
					t.Errorf("plain %v: the plan is not as expected:\n%s", plain, plan)
				}
			}
		})
	}
}

// esqlPlan is the EXPLAIN of a query's statement, sorts and sequential
// scans disabled.
func esqlPlan(t *testing.T, f esqlFixture, query string, plain bool) string {
	t.Helper()
	q, err := esql.Parse(strings.ReplaceAll(query, "$P", f.p))
	if err != nil {
		t.Fatal(err)
	}
	tr := &esqlTranslator{a: &args{}, ownerID: f.owner, slug: f.slug, limit: -1, plain: plain}
	stmt, err := tr.translate(q)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tx, err := testPool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off"); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.Query(ctx, "EXPLAIN "+stmt, tr.a.vals...)
	if err != nil {
		t.Fatalf("explain %s: %v", stmt, err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		b.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The shortcuts' statements carry nothing from the query either: a
// client_uuid compared as a uuid, merged branches per kind, grouping and
// joining on the uuid.
func TestESQLFastPathsPlaceholdersOnly(t *testing.T) {
	const u = "abcdef01-2345-4789-abcd-ef0123456789"
	for _, query := range []string{
		`FROM analytics-production-zzslug* | WHERE client_uuid == "` + u + `" AND zzf != "zzv" | SORT created_at DESC, zzk | LIMIT 77 | KEEP zz*`,
		`FROM analytics-production-zzslug-measurements* | LOOKUP JOIN analytics-production-zzslug-lookup-clients ON client_uuid ` +
			`| STATS zzn = COUNT(*) BY client_uuid, zzb | WHERE zzn > 95 | LIMIT 77`,
	} {
		q, err := esql.Parse(query)
		if err != nil {
			t.Fatal(err)
		}
		tr := &esqlTranslator{a: &args{}, ownerID: 1, slug: "zzslug", limit: -1}
		stmt, err := tr.translate(q)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.ToLower(stmt), "zz") || strings.Contains(stmt, "77") || strings.Contains(stmt, "95") ||
			strings.Contains(stmt, "abcdef") {
			t.Fatalf("query text reached the SQL: %s", stmt)
		}
		if !strings.Contains(stmt, "fg_client_uuid") {
			t.Fatalf("the statement takes no shortcut: %s", stmt)
		}
	}
}
