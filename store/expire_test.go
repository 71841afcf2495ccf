package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/pg"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/store/testdb"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// ownDB is a fresh migrated database of the test's own: an expiry pass
// acts on every data owner of its database.
func ownDB(t *testing.T, prefix string) (*store.Store, *pgxpool.Pool) {
	t.Helper()
	db, st, err := testdb.Create(context.Background(), prefix, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(); db.Drop() })
	return st, st.Pool()
}

func newOwnerIn(t *testing.T, pool *pgxpool.Pool, slug string, retention *int) int64 {
	t.Helper()
	var id int64
	err := pool.QueryRow(context.Background(), `INSERT INTO data_owners (slug, name, retention_days) VALUES ($1, $1, $2) RETURNING id`,
		slug, retention).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func countDocs(t *testing.T, pool *pgxpool.Pool, where string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM documents WHERE `+where, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func partitions(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'documents'::regclass ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestExpiry(t *testing.T) {
	ctx := context.Background()
	st, pool := ownDB(t, "fleetgraph_expire")
	thirty := 30
	keeper := newOwnerIn(t, pool, "keeper", nil)
	expiring := newOwnerIn(t, pool, "expiring", &thirty)
	now := time.Now().UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	cutoff := day.AddDate(0, 0, -30)
	old := time.Date(2019, 3, 10, 12, 0, 0, 0, time.UTC) // a month only the expiring owner has
	at := map[string]time.Time{
		"young-now": now, "young-edge": cutoff, "young-29d": day.AddDate(0, 0, -29),
		"old-edge": cutoff.Add(-time.Second), "old-45d": day.AddDate(0, 0, -45), "old-400d": day.AddDate(0, 0, -400),
		"old-2019a": old, "old-2019b": old.Add(24 * time.Hour), "future": now.AddDate(5, 0, 0),
	}
	client := uuid.NewString() // the expiring owner's
	for _, owner := range []int64{keeper, expiring} {
		c := client
		if owner == keeper {
			c = uuid.NewString()
		}
		var docs []store.Document
		for id, ts := range at {
			if owner == keeper && strings.HasPrefix(id, "old-2019") {
				continue // 2019 is the expiring owner's alone
			}
			docs = append(docs, mustParse(t, vocab.KindMeasurement, measurementJSON(id, c, ts.Format(time.RFC3339Nano), "")))
		}
		if res, err := st.InsertDocuments(ctx, owner, docs); err != nil || res.Inserted != len(docs) {
			t.Fatalf("insert: %+v, %v", res, err)
		}
	}
	// 12,000 more expired documents: several batches.
	_, err := pool.Exec(ctx, `INSERT INTO documents (data_owner_id, kind, doc_id, client_uuid, created_at, doc)
		SELECT $1, 'measurement', 'bulk-' || i, $2, $3::timestamptz - make_interval(mins => i), '{}' FROM generate_series(1, 12000) i`,
		expiring, client, day.AddDate(0, 0, -60))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("documents far in the past or future are stored, in the default partition", func(t *testing.T) {
		n := countDocs(t, pool, `tableoid = 'documents_default'::regclass AND doc_id IN ('future', 'old-2019a')`)
		if n != 3 {
			t.Errorf("%d of the 2019 and future documents in documents_default, want 3", n)
		}
	})
	t.Run("a partition created later takes its month's rows from the default partition", func(t *testing.T) {
		if _, err := pool.Exec(ctx, `SELECT fg_documents_partition($1)`, old); err != nil {
			t.Fatal(err)
		}
		if n := countDocs(t, pool, `tableoid = 'documents_p201903'::regclass`); n != 2 {
			t.Errorf("documents_p201903 holds %d documents, want 2", n)
		}
		if n := countDocs(t, pool, `doc_id LIKE 'old-2019%'`); n != 2 {
			t.Errorf("%d 2019 documents in documents, want 2", n)
		}
	})

	// The report of a whole expired month, refreshed before the pass.
	month := time.Date(at["old-45d"].Year(), at["old-45d"].Month(), 1, 0, 0, 0, 0, time.UTC)
	months := store.LicenseMonths(month, month.AddDate(0, 1, 0))
	if _, err := st.RefreshLicensePairs(ctx); err != nil {
		t.Fatal(err)
	}
	before, _, err := st.LicenseUsage(ctx, expiring, months, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) == 0 || before[0].Clients == 0 {
		t.Fatalf("license report before expiry counts nothing: %+v", before)
	}

	t.Run("dirty rollup days keep their documents until refreshed", func(t *testing.T) {
		res, err := st.Expire(ctx, now, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Deleted != 0 || len(res.Dropped) != 0 {
			t.Errorf("expired %+v while the rollups were dirty", res)
		}
	})
	if _, err := pg.RefreshRollups(ctx, pool); err != nil {
		t.Fatal(err)
	}
	var rollupBefore int64
	if err := pool.QueryRow(ctx, `SELECT coalesce(sum(docs), 0) FROM rollup_days WHERE data_owner_id = $1`, expiring).Scan(&rollupBefore); err != nil {
		t.Fatal(err)
	}
	var version int64
	if err := pool.QueryRow(ctx, `SELECT last_value FROM documents_version`).Scan(&version); err != nil {
		t.Fatal(err)
	}

	res, err := st.Expire(ctx, now, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("everything older than the limit goes, nothing younger", func(t *testing.T) {
		for id := range at {
			want := 1
			if strings.HasPrefix(id, "old-") {
				want = 0
			}
			if n := countDocs(t, pool, `data_owner_id = $1 AND doc_id = $2`, expiring, id); n != want {
				t.Errorf("%s (%s): %d stored, want %d", id, at[id].Format(time.RFC3339), n, want)
			}
		}
		if n := countDocs(t, pool, `data_owner_id = $1 AND doc_id LIKE 'bulk-%'`, expiring); n != 0 {
			t.Errorf("%d bulk documents left", n)
		}
		if res.Deleted != 12000+3 {
			t.Errorf("deleted %d, want %d", res.Deleted, 12000+3)
		}
	})
	t.Run("a data owner without retention keeps everything", func(t *testing.T) {
		if n := countDocs(t, pool, `data_owner_id = $1`, keeper); n != len(at)-2 {
			t.Errorf("keeper has %d documents, want %d", n, len(at)-2)
		}
	})
	t.Run("a month all of whose documents expired is dropped whole", func(t *testing.T) {
		if !slices.Equal(res.Dropped, []string{"documents_p201903"}) || slices.Contains(partitions(t, pool), "documents_p201903") {
			t.Errorf("dropped %v; partitions %v", res.Dropped, partitions(t, pool))
		}
	})
	t.Run("the coming months have their partitions", func(t *testing.T) {
		parts := partitions(t, pool)
		for i := 0; i <= store.PartitionsAhead; i++ {
			m := time.Date(now.Year(), now.Month()+time.Month(i), 1, 0, 0, 0, 0, time.UTC)
			if name := "documents_p" + m.Format("200601"); !slices.Contains(parts, name) {
				t.Errorf("no partition %s: %v", name, parts)
			}
		}
	})
	t.Run("the Elasticsearch indexer gets a tombstone for every expired document", func(t *testing.T) {
		var n int
		err := pool.QueryRow(ctx, `SELECT count(DISTINCT doc_id) FROM document_tombstones
			WHERE data_owner_id = $1 AND version > $2 AND kind = 'measurement'`, expiring, version).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n != 12000+5 {
			t.Errorf("%d tombstones, want %d (deleted and dropped)", n, 12000+5)
		}
	})
	t.Run("the license report of an expired month is unchanged", func(t *testing.T) {
		if _, err := st.RefreshLicensePairs(ctx); err != nil {
			t.Fatal(err)
		}
		after, _, err := st.LicenseUsage(ctx, expiring, months, nil)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("license report after expiry %+v, before %+v", after, before)
		}
	})
	t.Run("the rollups of expired days are unchanged", func(t *testing.T) {
		if _, err := pg.RefreshRollups(ctx, pool); err != nil {
			t.Fatal(err)
		}
		var after int64
		if err := pool.QueryRow(ctx, `SELECT coalesce(sum(docs), 0) FROM rollup_days WHERE data_owner_id = $1`, expiring).Scan(&after); err != nil {
			t.Fatal(err)
		}
		if after != rollupBefore {
			t.Errorf("rollup documents %d after expiry, %d before", after, rollupBefore)
		}
	})
	t.Run("a second pass finds nothing", func(t *testing.T) {
		again, err := st.Expire(ctx, now, nil)
		if err != nil || again.Deleted != 0 || len(again.Dropped) != 0 || len(again.Created) != 0 {
			t.Errorf("second pass %+v, %v", again, err)
		}
	})
	t.Run("the operator's default applies to data owners without retention_days", func(t *testing.T) {
		days := int64(1000)
		res, err := st.Expire(ctx, now, &days)
		if err != nil {
			t.Fatal(err)
		}
		if res.Deleted != 0 || countDocs(t, pool, `data_owner_id = $1`, keeper) != len(at)-2 {
			t.Errorf("1000 days: deleted %d", res.Deleted)
		}
		days = 100
		if res, err = st.Expire(ctx, now, &days); err != nil {
			t.Fatal(err)
		}
		if n := countDocs(t, pool, `data_owner_id = $1 AND doc_id LIKE 'old-%'`, keeper); n != 2 {
			t.Errorf("100 days: keeper has %d old documents left, want 2 (old-edge, old-45d)", n)
		}
	})
}

// TestChangedCreatedAtMovesTheDocument: a document sent again with a
// created_at of another month replaces the stored one (one row).
func TestChangedCreatedAtMovesTheDocument(t *testing.T) {
	ctx := context.Background()
	st, pool := ownDB(t, "fleetgraph_move")
	owner := newOwnerIn(t, pool, "mover", nil)
	client := uuid.NewString()
	for i, ts := range []string{"2026-01-05T00:00:00Z", "2026-03-05T00:00:00Z", "2019-01-01T00:00:00Z"} {
		res, err := st.InsertDocuments(ctx, owner, []store.Document{mustParse(t, vocab.KindMeasurement, measurementJSON("m", client, ts, ""))})
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && (res.Updated != 1 || res.Inserted != 0) {
			t.Errorf("%s: %+v, want one update", ts, res)
		}
		if n := countDocs(t, pool, `data_owner_id = $1 AND doc_id = 'm'`, owner); n != 1 {
			t.Fatalf("%s: %d rows of m", ts, n)
		}
	}
	other := uuid.NewString()
	res, err := st.InsertDocumentsWith(ctx, owner, []store.Document{mustParse(t, vocab.KindMeasurement,
		measurementJSON("m", other, "2026-02-01T00:00:00Z", ""))}, store.InsertOptions{KeepOthers: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Taken, []int{0}) || countDocs(t, pool, `data_owner_id = $1 AND doc_id = 'm'`, owner) != 1 {
		t.Errorf("another client's m at another month: %+v", res)
	}
	// A batch that moves one document (its own client's, KeepOthers) and
	// stores a new one: the upsert stops, the move runs, the upsert runs
	// again; each counted and queued for the analyzer once.
	var inbox0 int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM analyzer_inbox WHERE data_owner_id = $1`, owner).Scan(&inbox0); err != nil {
		t.Fatal(err)
	}
	res, err = st.InsertDocumentsWith(ctx, owner, []store.Document{
		mustParse(t, vocab.KindMeasurement, measurementJSON("m", client, "2026-04-01T00:00:00Z", "")),
		mustParse(t, vocab.KindMeasurement, measurementJSON("n", client, "2026-04-01T00:00:00Z", "")),
	}, store.InsertOptions{KeepOthers: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Inserted != 1 || res.Updated != 1 || len(res.Taken) != 0 || len(res.Refused) != 0 || res.Unchanged != 0 {
		t.Errorf("m moved and n new: %+v, want one inserted and one updated", res)
	}
	var at time.Time
	if err := pool.QueryRow(ctx, `SELECT created_at FROM documents WHERE data_owner_id = $1 AND doc_id = 'm'`, owner).Scan(&at); err != nil {
		t.Fatal(err)
	}
	if !at.Equal(time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("m is stored at %s, want 2026-04-01", at)
	}
	var inbox int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM analyzer_inbox WHERE data_owner_id = $1`, owner).Scan(&inbox); err != nil {
		t.Fatal(err)
	}
	if inbox-inbox0 != 2 {
		t.Errorf("%d inbox rows more, want 2 (m and n, once each)", inbox-inbox0)
	}
}

// TestMigrationPartitionsPopulatedDocuments runs migration 00050 over a
// populated documents table: every document stays, searches answer the
// same, and a time range reads only its months' partitions.
func TestMigrationPartitionsPopulatedDocuments(t *testing.T) {
	ctx := context.Background()
	st, pool := ownDB(t, "fleetgraph_partition_migration")
	sqlDB := stdlib.OpenDBFromPool(pool)
	defer sqlDB.Close()
	p, err := store.MigrationProvider(sqlDB)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 49); err != nil {
		t.Fatalf("down to 49: %v", err)
	}
	var owner int64
	if err := pool.QueryRow(ctx, `INSERT INTO data_owners (slug, name) VALUES ('migrated', 'migrated') RETURNING id`).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	// 5,000 measurements over 15 months from 2025-09, one in 2001.
	_, err = pool.Exec(ctx, `INSERT INTO documents (data_owner_id, kind, doc_id, client_uuid, type, subject, created_at, doc)
		SELECT $1, 'measurement', 'm' || i, $2, 'VideoMeasurement', 'youtube', ts,
			jsonb_build_object('id', 'm' || i, 'created_at', ts, 'type', 'VideoMeasurement',
				'statistic_values', jsonb_build_object('initial_loading_time', i % 1000))
		FROM generate_series(1, 5000) i, LATERAL (SELECT timestamptz '2025-09-01' + make_interval(hours => i * 2) AS ts) t`,
		owner, uuid.NewString())
	if err != nil {
		t.Fatal(err)
	}
	_, err = pool.Exec(ctx, `INSERT INTO documents (data_owner_id, kind, doc_id, created_at, doc)
		VALUES ($1, 'measurement', 'ancient', '2001-01-01', '{"id":"ancient"}')`, owner)
	if err != nil {
		t.Fatal(err)
	}
	checksum := func() string {
		var s string
		err := pool.QueryRow(ctx, `SELECT count(*) || ':' || md5(string_agg(concat_ws('|', id, data_owner_id, kind, doc_id, client_uuid,
			type, subject, measurement_id, created_at, doc, version), ',' ORDER BY id)) FROM documents`).Scan(&s)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	backend := pg.New(pool)
	scope := search.Scope{DataOwnerID: owner, Slug: "migrated", Kind: search.KindMeasurement}
	bodies := []string{
		`{"size":20,"sort":[{"created_at":"desc"}],"query":{"range":{"created_at":{"gte":"2026-01-01T00:00:00Z","lt":"2026-02-01T00:00:00Z"}}}}`,
		`{"size":5,"query":{"range":{"statistic_values.initial_loading_time":{"gte":990}}},"sort":[{"created_at":"asc"}]}`,
		`{"size":0,"aggs":{"per_month":{"date_histogram":{"field":"created_at","calendar_interval":"month"}}}}`,
	}
	answers := func() []string {
		var out []string
		for _, b := range bodies {
			var body map[string]any
			if err := json.Unmarshal([]byte(b), &body); err != nil {
				t.Fatal(err)
			}
			resp, err := backend.Search(ctx, search.Request{Scope: scope, Body: body})
			if err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			delete(resp, "took")
			js, _ := json.Marshal(resp)
			out = append(out, string(js))
		}
		return out
	}
	sumBefore, answersBefore := checksum(), answers()

	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	if got := checksum(); got != sumBefore {
		t.Errorf("documents after the migration %s, before %s", got, sumBefore)
	}
	for i, a := range answers() {
		if a != answersBefore[i] {
			t.Errorf("search %s answers\n%s\nafter the migration, before\n%s", bodies[i], a, answersBefore[i])
		}
	}
	parts := partitions(t, pool)
	for _, want := range []string{"documents_default", "documents_p202509", "documents_p202601", "documents_p202611"} {
		if !slices.Contains(parts, want) {
			t.Errorf("no partition %s: %v", want, parts)
		}
	}
	if n := countDocs(t, pool, `tableoid = 'documents_default'::regclass`); n != 1 {
		t.Errorf("documents_default holds %d documents, want 1 (2001)", n)
	}
	t.Run("a time range reads only its months", func(t *testing.T) {
		var plan string
		err := pool.QueryRow(ctx, `EXPLAIN (FORMAT JSON) SELECT id FROM documents d WHERE d.data_owner_id = $1 AND d.kind = 'measurement'
			AND d.created_at >= $2 AND d.created_at < $3`, owner, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)).Scan(&plan)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, `"documents_p202601"`) || strings.Count(plan, `"Relation Name"`) != 1 {
			t.Errorf("plan reads other partitions than documents_p202601: %s", plan)
		}
	})
	t.Run("a search with a time range reads only its months", func(t *testing.T) {
		cfg := pool.Config().Copy()
		tr := &queryCapture{}
		cfg.ConnConfig.Tracer = tr
		traced, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer traced.Close()
		var body map[string]any
		if err := json.Unmarshal([]byte(bodies[0]), &body); err != nil {
			t.Fatal(err)
		}
		if _, err := pg.New(traced).Search(ctx, search.Request{Scope: scope, Body: body}); err != nil {
			t.Fatal(err)
		}
		q, ok := tr.last("FROM documents")
		if !ok {
			t.Fatalf("no query read documents: %v", tr.sqls)
		}
		t.Logf("the search's statement: %s %v", q.SQL, q.Args)
		var plan string
		if err := pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+q.SQL, q.Args...).Scan(&plan); err != nil {
			t.Fatalf("explain %s: %v", q.SQL, err)
		}
		for _, part := range partitions(t, pool) {
			if strings.Contains(plan, `"`+part+`"`) != (part == "documents_p202601") {
				t.Errorf("the search's plan reads %s: %v\n%s\n%s", part, strings.Contains(plan, `"`+part+`"`), q.SQL, plan)
			}
		}
	})
	t.Run("ingest after the migration", func(t *testing.T) {
		res, err := st.InsertDocuments(ctx, owner, []store.Document{mustParse(t, vocab.KindMeasurement,
			measurementJSON("m1", uuid.NewString(), "2025-09-01T02:00:00Z", `,"stalling_number":1`))})
		if err != nil || res.Updated != 1 {
			t.Errorf("re-sent m1: %+v, %v", res, err)
		}
	})
	if _, err := p.DownTo(ctx, 49); err != nil {
		t.Fatalf("down to 49 again: %v", err)
	}
	if n := countDocs(t, pool, `true`); n != 5001 {
		t.Errorf("%d documents after the down migration, want 5001", n)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
}

// BenchmarkMigrationPartitions times migration 00050 over a documents
// table of FLEETGRAPH_BENCH_DOCUMENTS measurements (default 1,000,000,
// spread over 24 months, about 600 bytes of JSON each):
//
//	go test ./store -run '^$' -bench MigrationPartitions -benchtime 1x
func BenchmarkMigrationPartitions(b *testing.B) {
	ctx := context.Background()
	n := 1_000_000
	if v := os.Getenv("FLEETGRAPH_BENCH_DOCUMENTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	db, st, err := testdb.Create(ctx, "fleetgraph_bench_partition", store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { st.Close(); db.Drop() }()
	pool := st.Pool()
	sqlDB := stdlib.OpenDBFromPool(pool)
	defer sqlDB.Close()
	p, err := store.MigrationProvider(sqlDB)
	if err != nil {
		b.Fatal(err)
	}
	var owner int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if _, err := p.DownTo(ctx, 49); err != nil {
			b.Fatal(err)
		}
		if owner == 0 {
			if err := pool.QueryRow(ctx, `INSERT INTO data_owners (slug, name) VALUES ('bench', 'bench') RETURNING id`).Scan(&owner); err != nil {
				b.Fatal(err)
			}
			_, err = pool.Exec(ctx, `INSERT INTO documents (data_owner_id, kind, doc_id, client_uuid, type, subject, created_at, doc)
				SELECT $1, 'measurement', 'm' || i, md5((i % 2000)::text)::uuid, 'VideoMeasurement', 'youtube', ts,
					jsonb_build_object('id', 'm' || i, 'created_at', ts, 'type', 'VideoMeasurement',
						'client_uuid', md5((i % 2000)::text)::uuid, 'study', jsonb_build_object('subject', 'youtube', 'study_id', 'yt'),
						'statistic_values', jsonb_build_object('initial_loading_time', i % 1000, 'stalling_number', i % 7,
							'average_bitrate', i * 13 % 100000, 'resolution', '1920x1080', 'player', 'html5', 'isp', 'Example ISP'))
				FROM generate_series(1, $2::int) i,
				LATERAL (SELECT now() - make_interval(secs => (i::float8 / $2) * 730 * 86400) AS ts) t`, owner, n)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := pool.Exec(ctx, `VACUUM ANALYZE documents`); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		start := time.Now()
		if _, err := p.Up(ctx); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds())/1000, "s/migration")
	}
	b.ReportMetric(float64(n), "documents")
}

// queryCapture records the statements of a pool (pgx.QueryTracer).
type queryCapture struct {
	mu   sync.Mutex
	sqls []pgx.TraceQueryStartData
}

func (c *queryCapture) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sqls = append(c.sqls, d)
	return ctx
}

func (c *queryCapture) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// last is the last statement containing s.
func (c *queryCapture) last(s string) (pgx.TraceQueryStartData, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.sqls) - 1; i >= 0; i-- {
		if strings.Contains(c.sqls[i].SQL, s) {
			return c.sqls[i], true
		}
	}
	return pgx.TraceQueryStartData{}, false
}
