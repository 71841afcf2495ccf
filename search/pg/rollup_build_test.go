package pg

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/search"
)

// refresh runs RefreshRollups and fails the test on an error.
func refresh(t *testing.T) int {
	t.Helper()
	n, err := RefreshRollups(context.Background(), testPool(t))
	if err != nil {
		t.Fatalf("RefreshRollups: %v", err)
	}
	return n
}

// rollupCells lists the data owner's cells of a day as
// "type|kfield|kvalue|mfield|n|sum|min|max", sorted.
func rollupCells(t *testing.T, owner int64, day string) []string {
	t.Helper()
	const q = `SELECT type, kfield, kvalue, mfield, n, sum, min, max FROM rollup_cells
		WHERE data_owner_id = $1 AND kind = 'measurement' AND day = $2::date`
	rows, err := testPool(t).Query(context.Background(), q, owner, day)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var typ, kf, kv, mf string
		var n int64
		var sum, lo, hi *float64
		err := r.Scan(&typ, &kf, &kv, &mf, &n, &sum, &lo, &hi)
		f := func(x *float64) string {
			if x == nil {
				return "-"
			}
			return fmt.Sprint(*x)
		}
		return fmt.Sprintf("%s|%s|%s|%s|%d|%s|%s|%s", typ, kf, kv, mf, n, f(sum), f(lo), f(hi)), err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(cells)
	return cells
}

// rollupDays lists the data owner's catalog rows as
// "day|type|docs|kfields excluded|mfields excluded", sorted.
func rollupDays(t *testing.T, owner int64) []string {
	t.Helper()
	const q = `SELECT day::text, type, docs, array_to_string(kfields_excluded, ','), array_to_string(mfields_excluded, ',')
		FROM rollup_days WHERE data_owner_id = $1 AND kind = 'measurement' ORDER BY 1, 2`
	rows, err := testPool(t).Query(context.Background(), q, owner)
	if err != nil {
		t.Fatal(err)
	}
	days, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var day, typ, kx, mx string
		var docs int64
		err := r.Scan(&day, &typ, &docs, &kx, &mx)
		return fmt.Sprintf("%s|%s|%d|%s|%s", day, typ, docs, kx, mx), err
	})
	if err != nil {
		t.Fatal(err)
	}
	return days
}

// dirtyDays lists the days the data owner has dirty marks for, one entry
// per mark.
func dirtyDays(t *testing.T, owner int64) []string {
	t.Helper()
	rows, err := testPool(t).Query(context.Background(),
		`SELECT day::text FROM rollup_dirty WHERE data_owner_id = $1 ORDER BY day, id`, owner)
	if err != nil {
		t.Fatal(err)
	}
	days, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return days
}

func exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := testPool(t).Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// sameList compares lists as sets of lines.
func sameList(t *testing.T, what string, got, want []string) {
	t.Helper()
	got, want = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("%s:\ngot\n  %s\nwant\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

const (
	rollupC1 = "7d1c5a0e-0b6e-4d7e-9a43-5f1c2f0c00a1"
	rollupC2 = "7d1c5a0e-0b6e-4d7e-9a43-5f1c2f0c00a2"
)

func TestRollupCellsFollowTheRules(t *testing.T) {
	owner, _ := testOwner(t, "rollup_cells")
	insertDocs(t, owner, search.KindMeasurement,
		map[string]any{"id": "a1", "type": "T", "client_uuid": rollupC1, "created_at": "2026-03-01T00:00:00Z",
			"isp": "x", "n": 1.5, "tags": []any{"p", "q", "p", nil}, "s": map[string]any{"rtt": 10, "name": "y"},
			"a.b": "dotted keys are skipped", "flag": true, "mixed": "str", "nul": nil, "_id": "skipped"},
		map[string]any{"id": "a2", "type": "T", "client_uuid": rollupC2, "created_at": "2026-03-01T23:59:59.999Z",
			"isp": "x", "n": 2, "tags": []any{}, "s": map[string]any{"rtt": 20, "deep": map[string]any{"v": -3}},
			"mixed": 5, "arr": []any{1, "a"}, "objs": []any{map[string]any{"k": "v"}}},
		// No type, no client.
		map[string]any{"id": "a3", "created_at": "2026-03-01T12:00:00Z", "isp": "z", "n": 7},
		// The days before and after.
		map[string]any{"id": "a4", "type": "T", "created_at": "2026-02-28T23:59:59.999Z", "isp": "x", "n": 100},
		map[string]any{"id": "a5", "type": "T", "created_at": "2026-03-02T00:00:00Z", "isp": "x", "n": 100},
	)
	refresh(t)

	c1 := func(kf, kv string) []string { // the cells of a1 alone
		return []string{"T|" + kf + "|" + kv + "||1|-|-|-", "T|" + kf + "|" + kv + "|n|1|1.5|1.5|1.5",
			"T|" + kf + "|" + kv + "|s.rtt|1|10|10|10"}
	}
	c2 := func(kf, kv string) []string { // the cells of a2 alone
		return []string{"T|" + kf + "|" + kv + "||1|-|-|-", "T|" + kf + "|" + kv + "|n|1|2|2|2",
			"T|" + kf + "|" + kv + "|s.deep.v|1|-3|-3|-3", "T|" + kf + "|" + kv + "|s.rtt|1|20|20|20"}
	}
	both := func(kf, kv string) []string {
		return []string{"T|" + kf + "|" + kv + "||2|-|-|-", "T|" + kf + "|" + kv + "|n|2|3.5|1.5|2",
			"T|" + kf + "|" + kv + "|s.deep.v|1|-3|-3|-3", "T|" + kf + "|" + kv + "|s.rtt|2|30|10|20"}
	}
	want := slices.Concat(
		[]string{"||||1|-|-|-", "|||n|1|7|7|7", "|id|a3||1|-|-|-", "|id|a3|n|1|7|7|7",
			"|isp|z||1|-|-|-", "|isp|z|n|1|7|7|7"},
		both("", ""), c1("client_uuid", rollupC1), c2("client_uuid", rollupC2),
		c1("id", "a1"), c2("id", "a2"), both("isp", "x"), c1("s.name", "y"),
		c1("tags", "p"), c1("tags", "q"), both("type", "T"),
	)
	sameList(t, "cells of 2026-03-01", rollupCells(t, owner, "2026-03-01"), want)

	sameList(t, "days", rollupDays(t, owner), []string{
		"2026-02-28|T|1|n|id,isp",
		"2026-03-01||1|n|id,isp",
		"2026-03-01|T|2|arr,flag,mixed,n,objs,s,s.deep,s.deep.v,s.rtt|flag,id,isp,mixed,s.name",
		"2026-03-02|T|1|n|id,isp",
	})
	sameList(t, "cells of 2026-03-02", rollupCells(t, owner, "2026-03-02"), []string{
		"T||||1|-|-|-", "T|||n|1|100|100|100", "T|id|a5||1|-|-|-", "T|id|a5|n|1|100|100|100",
		"T|isp|x||1|-|-|-", "T|isp|x|n|1|100|100|100", "T|type|T||1|-|-|-", "T|type|T|n|1|100|100|100",
	})
	sameList(t, "dirty marks left", dirtyDays(t, owner), nil)
}

func TestRollupExcludesKeywordsWithTooManyValues(t *testing.T) {
	defer func(n int) { maxKeywordValues = n }(maxKeywordValues)
	maxKeywordValues = 2
	owner, _ := testOwner(t, "rollup_distinct")
	insertDocs(t, owner, search.KindMeasurement,
		map[string]any{"id": "b1", "type": "T", "created_at": "2026-03-05T01:00:00Z", "isp": "x", "tags": []any{"a", "b"}},
		map[string]any{"id": "b2", "type": "T", "created_at": "2026-03-05T02:00:00Z", "isp": "y", "tags": []any{"a", "c"}},
		map[string]any{"id": "b3", "type": "U", "created_at": "2026-03-05T03:00:00Z", "isp": "z", "tags": []any{"d"}},
	)
	refresh(t)
	sameList(t, "days", rollupDays(t, owner), []string{
		"2026-03-05|T|2|tags|id,isp", // three tags in T; two isps and ids are not too many
		"2026-03-05|U|1||id,isp",
	})
	sameList(t, "cells", rollupCells(t, owner, "2026-03-05"), []string{
		"T||||2|-|-|-", "T|id|b1||1|-|-|-", "T|id|b2||1|-|-|-", "T|isp|x||1|-|-|-", "T|isp|y||1|-|-|-", "T|type|T||2|-|-|-",
		"U||||1|-|-|-", "U|id|b3||1|-|-|-", "U|isp|z||1|-|-|-", "U|tags|d||1|-|-|-", "U|type|U||1|-|-|-",
	})
}

func TestRollupDirtyMarks(t *testing.T) {
	owner, _ := testOwner(t, "rollup_dirty")
	insertDocs(t, owner, search.KindMeasurement,
		map[string]any{"id": "c1", "type": "T", "created_at": "2026-03-10T10:00:00Z", "v": 1},
		map[string]any{"id": "c2", "type": "T", "created_at": "2026-03-11T10:00:00Z", "v": 2},
	)
	if got := dirtyDays(t, owner); !slices.Contains(got, "2026-03-10") || !slices.Contains(got, "2026-03-11") {
		t.Fatalf("dirty days after insert: %v", got)
	}
	refresh(t)
	sameList(t, "dirty after refresh", dirtyDays(t, owner), nil)
	sameList(t, "days", rollupDays(t, owner), []string{"2026-03-10|T|1|v|id", "2026-03-11|T|1|v|id"})

	// An update moving a document marks both its days.
	exec(t, `UPDATE documents SET created_at = '2026-03-12T10:00:00Z', doc = doc || '{"v": 5}'
		WHERE data_owner_id = $1 AND doc_id = 'c2'`, owner)
	sameList(t, "dirty after update", dirtyDays(t, owner), []string{"2026-03-11", "2026-03-12"})
	refresh(t)
	sameList(t, "dirty after refresh", dirtyDays(t, owner), nil)
	sameList(t, "days after update", rollupDays(t, owner), []string{"2026-03-10|T|1|v|id", "2026-03-12|T|1|v|id"})
	sameList(t, "cells after update", rollupCells(t, owner, "2026-03-12"), []string{
		"T||||1|-|-|-", "T|||v|1|5|5|5", "T|id|c2||1|-|-|-", "T|id|c2|v|1|5|5|5", "T|type|T||1|-|-|-", "T|type|T|v|1|5|5|5",
	})

	// Deleting all documents of a day removes its rollup.
	exec(t, `DELETE FROM documents WHERE data_owner_id = $1 AND doc_id = 'c1'`, owner)
	sameList(t, "dirty after delete", dirtyDays(t, owner), []string{"2026-03-10"})
	refresh(t)
	sameList(t, "dirty after refresh", dirtyDays(t, owner), nil)
	sameList(t, "days after delete", rollupDays(t, owner), []string{"2026-03-12|T|1|v|id"})
	sameList(t, "cells after delete", rollupCells(t, owner, "2026-03-10"), nil)
}

func TestRollupKeepsWritesDuringARefreshDirty(t *testing.T) {
	owner, _ := testOwner(t, "rollup_race")
	insertDocs(t, owner, search.KindMeasurement,
		map[string]any{"id": "d1", "type": "T", "created_at": "2026-03-20T10:00:00Z", "v": 1})
	day := time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC)
	paused := false
	rollupAfterIDs = func(o int64, kind string, d time.Time) {
		if o != owner || !d.Equal(day) || paused {
			return
		}
		paused = true
		// Another refresher skips the day this one holds.
		if _, err := RefreshRollups(context.Background(), testPool(t)); err != nil {
			t.Errorf("concurrent refresh: %v", err)
		}
		if got := dirtyDays(t, owner); len(got) != 1 {
			t.Errorf("the concurrent refresh cleared the held day: dirty %v", got)
		}
		// A write committed after this refresher's snapshot.
		insertDocs(t, owner, search.KindMeasurement,
			map[string]any{"id": "d2", "type": "T", "created_at": "2026-03-20T11:00:00Z", "v": 2})
	}
	defer func() { rollupAfterIDs = nil }()
	refresh(t)
	if !paused {
		t.Fatal("the hook did not run")
	}
	sameList(t, "dirty after the first refresh", dirtyDays(t, owner), []string{"2026-03-20"})
	sameList(t, "days after the first refresh", rollupDays(t, owner), []string{"2026-03-20|T|1|v|id"})
	refresh(t)
	sameList(t, "dirty after the second refresh", dirtyDays(t, owner), nil)
	sameList(t, "days after the second refresh", rollupDays(t, owner), []string{"2026-03-20|T|2|v|id"})
}

func TestRollupOfADeletedDataOwner(t *testing.T) {
	owner, _ := testOwner(t, "rollup_gone")
	insertDocs(t, owner, search.KindMeasurement,
		map[string]any{"id": "e1", "type": "T", "created_at": "2026-03-25T10:00:00Z", "v": 1})
	refresh(t)
	exec(t, `DELETE FROM data_owners WHERE id = $1`, owner)
	if len(dirtyDays(t, owner)) == 0 {
		t.Fatal("deleting the data owner's documents marked nothing dirty")
	}
	refresh(t)
	sameList(t, "dirty", dirtyDays(t, owner), nil)
	sameList(t, "days", rollupDays(t, owner), nil)
}

func TestRollupExcludesNumbersOutOfRange(t *testing.T) {
	owner, _ := testOwner(t, "rollup_big")
	insertDocs(t, owner, search.KindMeasurement,
		map[string]any{"id": "f1", "created_at": "2026-03-26T10:00:00Z", "big": json.Number("1e400"), "n": json.Number("1e-3")})
	refresh(t)
	sameList(t, "days", rollupDays(t, owner), []string{"2026-03-26||1|big,n|big,id"})
	sameList(t, "cells", rollupCells(t, owner, "2026-03-26"), []string{
		"||||1|-|-|-", "|||n|1|0.001|0.001|0.001", "|id|f1||1|-|-|-", "|id|f1|n|1|0.001|0.001|0.001",
	})
}

// TestRollupExcludesNearlyUniqueKeywords: a keyword with about one value per
// document (an id) gets no cells; a keyword with few values keeps them.
func TestRollupExcludesNearlyUniqueKeywords(t *testing.T) {
	ctx := context.Background()
	owner, _ := testOwner(t, "rollsparse")
	var docs []map[string]any
	for i := range 120 {
		docs = append(docs, map[string]any{"id": fmt.Sprintf("u%03d", i), "type": "WebMeasurement",
			"created_at": "2026-11-03T10:00:00Z", "uid": fmt.Sprintf("uid-%03d", i), "grp": []string{"a", "b"}[i%2]})
	}
	insertDocs(t, owner, search.KindMeasurement, docs...)
	if _, err := RefreshRollups(ctx, testPool(t)); err != nil {
		t.Fatal(err)
	}
	var excluded []string
	if err := testPool(t).QueryRow(ctx, `SELECT kfields_excluded FROM rollup_days WHERE data_owner_id = $1`, owner).
		Scan(&excluded); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(excluded, "uid") || slices.Contains(excluded, "grp") {
		t.Errorf("excluded keywords %v: want uid, not grp", excluded)
	}
	var uidCells, grpCells int
	if err := testPool(t).QueryRow(ctx, `SELECT count(*) FILTER (WHERE kfield = 'uid'), count(*) FILTER (WHERE kfield = 'grp')
		FROM rollup_cells WHERE data_owner_id = $1`, owner).Scan(&uidCells, &grpCells); err != nil {
		t.Fatal(err)
	}
	if uidCells != 0 || grpCells != 2 {
		t.Errorf("cells: uid %d, grp %d; want 0 and 2", uidCells, grpCells)
	}
}

// TestLiveDaysWaitForAQuietRound: the refresher rebuilds a dirty day once a
// round saw no new write to it, or once it has waited LiveDayWait; a day
// written to in every round (today, while the probes report) waits.
func TestLiveDaysWaitForAQuietRound(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	today := rollupDay{ownerID: 1, kind: "measurement", day: t0.Truncate(24 * time.Hour)}
	old := rollupDay{ownerID: 1, kind: "measurement", day: today.day.AddDate(0, 0, -3)}
	l := newLiveDays(time.Minute)
	names := func(ds []dirtyDay) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.String())
		}
		return out
	}
	round := func(at time.Duration, dirty ...dirtyDay) []string { return names(l.due(dirty, t0.Add(at))) }

	// First sight: nothing is rebuilt (a write may follow at once).
	sameList(t, "round 1", round(0, dirtyDay{today, 10}, dirtyDay{old, 3}), nil)
	// The old day got no new write: rebuilt; today got one: it waits.
	sameList(t, "round 2", round(5*time.Second, dirtyDay{today, 20}, dirtyDay{old, 3}), []string{old.String()})
	// Writes go on into today; after a minute it is rebuilt all the same.
	sameList(t, "round 3", round(30*time.Second, dirtyDay{today, 30}), nil)
	sameList(t, "round 4", round(time.Minute, dirtyDay{today, 40}), []string{today.String()})
	// Rebuilt days start afresh; a quiet round rebuilds at once.
	sameList(t, "round 5", round(65*time.Second, dirtyDay{today, 50}), nil)
	sameList(t, "round 6", round(70*time.Second, dirtyDay{today, 50}), []string{today.String()})
	// A day no longer dirty is forgotten.
	sameList(t, "round 7", round(75*time.Second), nil)
	if len(l.seen) != 0 {
		t.Errorf("remembered %v", l.seen)
	}
}
