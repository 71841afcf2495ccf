package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The planner's statistics of the tables (pg_class.reltuples, pg_statistic),
// kept up to date by the server itself: on a PostgreSQL whose autovacuum is
// off or behind, a table that grew from empty kept the statistics of an
// empty table, and the probes' reports then found each document's stored
// copy by the wrong index (the data owner's documents of a kind, filtered
// by id): 9 ms a document at 16,000 stored, 18 s for a group of 2,000, and
// the client API accepted nothing. (That probe no longer depends on the
// statistics: migration 00080; the other plans still do.) Autovacuum never
// analyses a partitioned table itself at all (only its partitions),
// whatever its settings.

// Statistics thresholds. A partitioned table is analysed once its
// partitions' rows (pg_stat_user_tables.n_live_tup) together differ from
// its own count at its last analysis by more than StatisticsBase + that
// count (they doubled, or halved): PostgreSQL 15 analyses every partition
// with it, which costs about a second on a partition of some 700,000
// documents, so it is kept to a few times per doubling. Any other table is
// analysed once more rows than StatisticsBase + StatisticsScale × its rows
// at the last analysis were inserted, updated or deleted since
// (autovacuum's rule with a larger base and scale: where autovacuum keeps
// up, its analyses reset the count and this one does nothing), at most
// once every statisticsAgain unless it more than doubled.
const (
	StatisticsBase  = 1000
	StatisticsScale = 0.2
	// statisticsAgain is how long a table analysed is left alone unless
	// it more than doubled since: a queue that rows pass through (the
	// analyzer's inbox) changes by its whole size every few seconds.
	statisticsAgain = "1 minute"
	// statisticsPerRound bounds the tables one KeepStatistics analyses.
	statisticsPerRound = 20
	// statisticsLockWait is how long an analysis waits for its table's
	// lock (taken by DDL: a partition created or dropped) before it is
	// left for the next round.
	statisticsLockWait = "2s"
)

// KeepStatistics analyses the tables of the schema whose statistics fell
// behind (the thresholds above), the partitioned tables first (and their
// partitions with them), then the others, and answers the tables it
// analysed. A table whose lock is taken is skipped until the next call.
func (s *Store) KeepStatistics(ctx context.Context) ([]string, error) {
	const parents = `SELECT format('%I.%I', n.nspname, p.relname)
		FROM pg_class p JOIN pg_namespace n ON n.oid = p.relnamespace
		WHERE p.relkind = 'p' AND n.nspname = current_schema()
		  AND abs((SELECT coalesce(sum(t.n_live_tup), 0) FROM pg_inherits i JOIN pg_stat_user_tables t ON t.relid = i.inhrelid
		           WHERE i.inhparent = p.oid) - greatest(p.reltuples, 0)) > $1 + greatest(p.reltuples, 0)
		ORDER BY p.relname LIMIT $2`
	const behind = `SELECT format('%I.%I', t.schemaname, t.relname)
		FROM pg_stat_user_tables t JOIN pg_class c ON c.oid = t.relid
		WHERE t.schemaname = current_schema() AND c.relkind = 'r'
		  AND t.n_mod_since_analyze > $1 + $2 * greatest(c.reltuples, 0)
		  AND (coalesce(greatest(t.last_analyze, t.last_autoanalyze), '-infinity') < now() - $4::interval
		       OR t.n_live_tup > $1 + 2 * greatest(c.reltuples, 0))
		ORDER BY t.n_mod_since_analyze DESC LIMIT $3`
	var analysed []string
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{parents, []any{StatisticsBase, statisticsPerRound}},
		{behind, []any{StatisticsBase, StatisticsScale, statisticsPerRound, statisticsAgain}},
	} {
		rows, _ := s.pool.Query(ctx, q.sql, q.args...)
		tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return analysed, mapErr("find tables to analyse", err)
		}
		for _, t := range tables {
			err := s.tx(ctx, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '"+statisticsLockWait+"'"); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, "ANALYZE "+t) // t is quoted by format('%I.%I')
				return err
			})
			var pgErr *pgconn.PgError
			switch {
			case errors.As(err, &pgErr) && pgErr.Code == "55P03": // lock_not_available: next round
			case err != nil:
				return analysed, mapErr(fmt.Sprintf("analyse %s", t), err)
			default:
				analysed = append(analysed, t)
			}
		}
	}
	return analysed, nil
}

// RefreshDocumentStatistics has PostgreSQL analyse the documents table
// (each partition samples a bounded number of rows, so it takes seconds
// at any size). A bulk load runs it before reading what it loaded: a
// partition that filled faster than autovacuum looks at it keeps the
// statistics of an empty table, and the analyzer's reads by client and
// time range were then planned as scans of the whole partition, 44 ms
// per client after a 100,000-document import instead of about 1 ms.
//
// The clients the documents name are analysed with them: an import creates
// them by the thousand, and with the statistics of a table of 3 clients
// the license usage report joined 2,000 clients to 2,000 clients row by
// row (155 ms instead of about 10 ms after a 2,000-client import).
func (s *Store) RefreshDocumentStatistics(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `ANALYZE documents, clients`)
	return mapErr("analyse documents", err)
}
