package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// MaxRetentionDays bounds data_owners.retention_days (a hundred years).
const MaxRetentionDays = 36500

// PartitionsAhead is how many months after the current one have their
// documents partition before documents arrive (EnsurePartitions).
const PartitionsAhead = 3

// ExpireBatch is how many documents one expiry transaction deletes: each
// batch commits on its own, so no transaction holds many rows' locks and
// ingest never waits behind the expiry.
const ExpireBatch = 5000

// ExpireResult tells what one expiry pass did.
type ExpireResult struct {
	Created []string // partitions created ahead
	Dropped []string // partitions dropped whole
	Deleted int64    // documents deleted in batches
}

// EnsurePartitions creates the documents partitions of the current UTC
// month and the PartitionsAhead after it (migration 00050's
// fg_documents_partition); the ones that exist are left alone.
func (s *Store) EnsurePartitions(ctx context.Context, now time.Time) ([]string, error) {
	var created []string
	for i := 0; i <= PartitionsAhead; i++ {
		m := time.Date(now.UTC().Year(), now.UTC().Month()+time.Month(i), 1, 0, 0, 0, 0, time.UTC)
		var name string
		var existed bool
		err := s.tx(ctx, func(tx pgx.Tx) error {
			// Attaching locks the default partition: wait briefly, retry at the next pass.
			if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '1s'`); err != nil {
				return mapErr("set lock timeout", err)
			}
			const q = `SELECT to_regclass('documents_p' || to_char($1::timestamptz AT TIME ZONE 'UTC', 'YYYYMM')) IS NOT NULL,
				fg_documents_partition($1)`
			return mapErr("create partition", tx.QueryRow(ctx, q, m).Scan(&existed, &name))
		})
		if err != nil {
			return created, fmt.Errorf("partition of %s: %w", m.Format("2006-01"), err)
		}
		if !existed {
			created = append(created, name)
		}
	}
	return created, nil
}

// ownerCutoff: the data owner's documents created before at expire.
type ownerCutoff struct {
	owner int64
	at    time.Time
}

// expiryCutoffs answers, per data owner with a retention (its own, else
// defaultDays), the time before which its documents expire: the start of
// the UTC day retention days ago, moved back to the first day whose
// rollups or month whose license usage is dirty (not yet computed: they
// would be computed again from the documents, so those documents stay
// until the refreshers have run). Whole days go, so the rollups of a day
// describe either all of its documents or none.
func (s *Store) expiryCutoffs(ctx context.Context, now time.Time, defaultDays *int64) ([]ownerCutoff, error) {
	const q = `SELECT o.id, least(
			(date_trunc('day', $1::timestamptz AT TIME ZONE 'UTC') - make_interval(days => coalesce(o.retention_days, $2)::int)) AT TIME ZONE 'UTC',
			(SELECT min(day)::timestamp AT TIME ZONE 'UTC' FROM rollup_dirty r WHERE r.data_owner_id = o.id),
			(SELECT min(month)::timestamp AT TIME ZONE 'UTC' FROM license_dirty l WHERE l.data_owner_id = o.id))
		FROM data_owners o WHERE coalesce(o.retention_days, $2) IS NOT NULL ORDER BY o.id`
	rows, _ := s.pool.Query(ctx, q, now, defaultDays)
	var out []ownerCutoff
	var c ownerCutoff
	_, err := pgx.ForEachRow(rows, []any{&c.owner, &c.at}, func() error { out = append(out, c); return nil })
	return out, mapErr("load retention", err)
}

// Expire runs one expiry pass: it creates the coming months' partitions,
// drops the partitions whose every document is expired for its data owner
// (their documents get tombstones first, so the Elasticsearch indexer
// deletes them too), and deletes the other expired documents in batches of
// ExpireBatch, each its own transaction. defaultDays applies to data owners
// without retention_days; nil keeps their documents. Rollups and license
// usage are not touched: their expired days and months stay as they were.
//
// One process runs a pass at a time (a session advisory lock); a pass that
// finds another running returns at once, with nothing done.
func (s *Store) Expire(ctx context.Context, now time.Time, defaultDays *int64) (ExpireResult, error) {
	var res ExpireResult
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return res, mapErr("acquire connection", err)
	}
	defer conn.Release()
	var mine bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtext('fleetgraph.expire'))`).Scan(&mine); err != nil {
		return res, mapErr("lock expiry", err)
	}
	if !mine {
		return res, nil
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtext('fleetgraph.expire'))`)
	}()
	if res.Created, err = s.EnsurePartitions(ctx, now); err != nil {
		return res, err
	}
	cutoffs, err := s.expiryCutoffs(ctx, now, defaultDays)
	if err != nil || len(cutoffs) == 0 {
		return res, err
	}
	if res.Dropped, err = s.dropExpiredPartitions(ctx, cutoffs); err != nil {
		return res, err
	}
	for _, c := range cutoffs {
		n, err := s.deleteExpired(ctx, c)
		res.Deleted += n
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// monthPartition is a partition of documents with the end of its month.
type monthPartition struct {
	Name string
	End  time.Time
}

// dropExpiredPartitions drops the month partitions all of whose documents
// are expired: every data owner with documents there has a cutoff at or
// after the month's end.
func (s *Store) dropExpiredPartitions(ctx context.Context, cutoffs []ownerCutoff) ([]string, error) {
	const q = `SELECT c.relname, (to_date(substr(c.relname, 12), 'YYYYMM') + interval '1 month')::timestamp AT TIME ZONE 'UTC'
		FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'documents'::regclass AND c.relname ~ '^documents_p[0-9]{6}$' ORDER BY 1`
	rows, _ := s.pool.Query(ctx, q)
	parts, err := pgx.CollectRows(rows, pgx.RowToStructByPos[monthPartition])
	if err != nil {
		return nil, mapErr("list partitions", err)
	}
	allowed := map[int64]time.Time{}
	var latest time.Time
	for _, c := range cutoffs {
		allowed[c.owner] = c.at
		if c.at.After(latest) {
			latest = c.at
		}
	}
	var dropped []string
	for _, p := range parts {
		if p.End.After(latest) { // a month not over for anyone (the coming ones, empty)
			continue
		}
		ok, err := s.partitionExpired(ctx, p, allowed)
		if err != nil {
			return dropped, err
		}
		if !ok {
			continue
		}
		if err := s.dropPartition(ctx, p.Name); err != nil {
			return dropped, err
		}
		dropped = append(dropped, p.Name)
	}
	return dropped, nil
}

// partitionExpired: no data owner keeps a document of the partition.
func (s *Store) partitionExpired(ctx context.Context, p monthPartition, allowed map[int64]time.Time) (bool, error) {
	// The owners present are read through the index on data_owner_id,
	// one probe each, never by a scan of the partition.
	q := fmt.Sprintf(`SELECT o.id FROM data_owners o
		WHERE EXISTS (SELECT 1 FROM %s d WHERE d.data_owner_id = o.id)`, pgx.Identifier{p.Name}.Sanitize())
	rows, _ := s.pool.Query(ctx, q)
	owners, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return false, mapErr("list partition owners", err)
	}
	for _, o := range owners {
		if at, ok := allowed[o]; !ok || at.Before(p.End) {
			return false, nil
		}
	}
	return true, nil
}

// dropPartition writes a tombstone for every document of the partition, in
// batches, then detaches and drops it; the documents written or changed
// there meanwhile get theirs in the dropping transaction.
func (s *Store) dropPartition(ctx context.Context, name string) error {
	part := pgx.Identifier{name}.Sanitize()
	var since int64
	if err := s.pool.QueryRow(ctx, `SELECT last_value FROM documents_version`).Scan(&since); err != nil {
		return mapErr("read version", err)
	}
	tombstones := `INSERT INTO document_tombstones (data_owner_id, slug, kind, type, doc_id)
		SELECT d.data_owner_id, o.slug, d.kind, d.type, d.doc_id FROM ` + part + ` d
		JOIN data_owners o ON o.id = d.data_owner_id `
	for after := int64(0); ; {
		var n int
		var last *int64
		err := s.tx(ctx, func(tx pgx.Tx) error {
			q := `WITH t AS (SELECT d.id FROM ` + part + ` d WHERE d.id > $1 AND d.version <= $2 ORDER BY d.id LIMIT $3),
				ins AS (INSERT INTO document_tombstones (data_owner_id, slug, kind, type, doc_id)
					SELECT d.data_owner_id, o.slug, d.kind, d.type, d.doc_id FROM ` + part + ` d
					JOIN data_owners o ON o.id = d.data_owner_id WHERE d.id IN (SELECT id FROM t) ORDER BY d.version)
				SELECT count(*), max(id) FROM t`
			return mapErr("tombstone partition", tx.QueryRow(ctx, q, after, since, ExpireBatch).Scan(&n, &last))
		})
		if err != nil {
			return err
		}
		if n == 0 || last == nil {
			break
		}
		after = *last
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '1s'`); err != nil {
			return mapErr("set lock timeout", err)
		}
		if _, err := tx.Exec(ctx, `ALTER TABLE documents DETACH PARTITION `+part); err != nil {
			return mapErr("detach partition", err)
		}
		if _, err := tx.Exec(ctx, tombstones+`WHERE d.version > $1 ORDER BY d.version`, since); err != nil {
			return mapErr("tombstone partition", err)
		}
		_, err := tx.Exec(ctx, `DROP TABLE `+part)
		return mapErr("drop partition", err)
	})
}

// deleteExpired deletes the data owner's documents created before its
// cutoff, ExpireBatch at a time, each batch in its own transaction. The
// delete trigger writes their tombstones; fleetgraph.expiring keeps the
// rollup and license triggers from marking their days and months dirty.
func (s *Store) deleteExpired(ctx context.Context, c ownerCutoff) (int64, error) {
	const q = `DELETE FROM documents d USING (
			SELECT id, created_at FROM documents WHERE data_owner_id = $1 AND created_at < $2 LIMIT $3) x
		WHERE d.data_owner_id = $1 AND d.created_at < $2 AND d.id = x.id AND d.created_at = x.created_at`
	var total int64
	for {
		var n int64
		err := s.tx(ctx, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT set_config('fleetgraph.expiring', 'on', true)`); err != nil {
				return mapErr("mark expiry", err)
			}
			tag, err := tx.Exec(ctx, q, c.owner, c.at, ExpireBatch)
			n = tag.RowsAffected()
			return mapErr("delete expired documents", err)
		})
		total += n
		if err != nil || n < ExpireBatch {
			return total, err
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}
