package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fleetgraph/fleetgraph/store"
)

// TestKeepStatisticsAnalysesWhatGrew: a partition that grew from empty
// after its last analysis (bootstrap's), as the probes' reports fill it on
// a PostgreSQL whose autovacuum is off, is analysed by KeepStatistics, and
// so is the partitioned table over it; the statement that finds a batch's
// stored copies probes its index after as before (it no longer depends on
// the statistics: migration 00080). A table whose lock is taken is left
// for the next round, without an error.
func TestKeepStatisticsAnalysesWhatGrew(t *testing.T) {
	ctx := context.Background()
	st, pool := ownDB(t, "fleetgraph_statistics")
	owner := newOwnerIn(t, pool, "statistics", nil)
	client := uuid.NewString()
	const stored, batch = 20000, 500
	if _, err := pool.Exec(ctx, `ANALYZE documents`); err != nil { // empty, as bootstrap leaves it
		t.Fatal(err)
	}
	insertCounted(t, pool, `INSERT INTO documents (data_owner_id, kind, doc_id, client_uuid, type, created_at, doc)
		SELECT $1, 'measurement', md5(g::text)::uuid::text, $2::uuid, 'VideoMeasurement', date_trunc('month', now()) + g * interval '1 second', '{}'
		FROM generate_series(1, $3::int) g`, owner, client, stored)
	var partition string
	if err := pool.QueryRow(ctx, `SELECT 'public.' || tableoid::regclass::text FROM documents LIMIT 1`).Scan(&partition); err != nil {
		t.Fatal(err)
	}
	t.Logf("before: the stored-copy probe reads %.0f documents for a batch of %d", storedCopyReads(t, pool, owner, client, batch), batch)

	// The inserting connection reported its counts to the statistics
	// system as it went idle (insertCounted). The partitioned table is
	// analysed with its partitions; the partition may be analysed alone
	// first, when its counts arrive before the parent's check sees them.
	var analysed []string
	for deadline := time.Now().Add(30 * time.Second); !slices.Contains(analysed, "public.documents"); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("KeepStatistics did not analyse documents within 30 s (analysed: %v)", analysed)
		}
		round, err := st.KeepStatistics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		analysed = append(analysed, round...)
	}
	for _, rel := range []string{partition, "public.documents"} {
		var tuples float64
		if err := pool.QueryRow(ctx, `SELECT reltuples FROM pg_class WHERE oid = $1::regclass`, rel).Scan(&tuples); err != nil {
			t.Fatal(err)
		}
		if tuples < stored*0.9 || tuples > stored*1.1 {
			t.Errorf("%s: reltuples %.0f after the analysis, want about %d", rel, tuples, stored)
		}
	}
	if read := storedCopyReads(t, pool, owner, client, batch); read > batch {
		t.Errorf("after: the stored-copy probe reads %.0f documents for a batch of %d: not index probes", read, batch)
	}
	if again, err := st.KeepStatistics(ctx); err != nil || len(again) != 0 {
		t.Errorf("a second round analysed %v (%v), want nothing: nothing changed", again, err)
	}

	// A table analysed a moment ago is analysed again once it more than
	// doubled; while its lock is held (DDL) it is skipped within the lock
	// wait.
	insertCounted(t, pool, `INSERT INTO documents (data_owner_id, kind, doc_id, client_uuid, type, created_at, doc)
		SELECT $1, 'measurement', 'more-' || g, $2::uuid, 'VideoMeasurement', date_trunc('month', now()) + g * interval '1 second', '{}'
		FROM generate_series(1, $3::int) g`, owner, client, 2*stored+2000)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `LOCK TABLE `+partition+` IN SHARE UPDATE EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		start := time.Now()
		analysed, err := st.KeepStatistics(ctx)
		if err != nil {
			t.Fatalf("with %s locked: %v", partition, err)
		}
		if slices.Contains(analysed, partition) {
			t.Fatalf("analysed %s while its lock was held", partition)
		}
		if took := time.Since(start); took > 2*time.Second { // it waited for the lock: the counts are in
			if took > 10*time.Second {
				t.Errorf("the round took %s with one table locked", took)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the update's counts never reached the statistics system")
		}
	}
}

// insertCounted runs sql on one connection and asks PostgreSQL to report
// its counts to the statistics system as soon as the connection is idle:
// otherwise a backend that reported less than a second ago waits for its
// next chance, which took over 15 s once while every package's tests ran
// on the same server.
func insertCounted(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
		t.Fatal(err)
	}
}

// storedCopyReads is how many stored documents the upsert that stores a
// batch reads for a batch of n, half of them stored (its first run, which
// finds the copies to move).
func storedCopyReads(t *testing.T, pool interface {
	Begin(context.Context) (pgx.Tx, error)
}, owner int64, client string, n int) float64 {
	t.Helper()
	ctx := context.Background()
	docs := make([]store.Document, n)
	for g := 1; g <= n; g++ {
		docs[g-1] = measurementDoc(2*g, client, time.Now())
	}
	upsert, args := store.ImportStatement(owner, docs, false, false, true)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	read, _ := documentRowsRead(t, tx, upsert, args...)
	return read
}
