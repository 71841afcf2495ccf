package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// License usage (docs/design.md "Health and licensing"): a client that measured
// k distinct subjects in a UTC month counts k units that month. A report
// reads a month that lies wholly in its range and is not dirty from
// license_clients (per client, its number of subjects), except for the
// clients with pairs in license_pair_log, which it counts from their
// license_pairs and the log; other months it reads from the documents.
// Migration 00011 says how the tables are kept.

// LicenseMonth is one UTC month of a report, cut to the report's range.
type LicenseMonth struct {
	Month    time.Time // first day, midnight UTC
	From, To time.Time // the part of the month in the range: From <= created_at < To
}

// Whole is true when the range covers the whole month.
func (m LicenseMonth) Whole() bool {
	return m.From.Equal(m.Month) && m.To.Equal(m.Month.AddDate(0, 1, 0))
}

// LicenseMonths splits [from, to) into UTC months.
func LicenseMonths(from, to time.Time) []LicenseMonth {
	from, to = from.UTC(), to.UTC()
	var out []LicenseMonth
	for m := time.Date(from.Year(), from.Month(), 1, 0, 0, 0, 0, time.UTC); m.Before(to); m = m.AddDate(0, 1, 0) {
		next := m.AddDate(0, 1, 0)
		lm := LicenseMonth{Month: m, From: m, To: next}
		if from.After(lm.From) {
			lm.From = from
		}
		if to.Before(lm.To) {
			lm.To = to
		}
		out = append(out, lm)
	}
	return out
}

// LicenseCell counts the clients of one month and registration key that
// measured Subjects distinct subjects (at least 1).
type LicenseCell struct {
	Month             time.Time `db:"month"`
	RegistrationKeyID *int64    `db:"registration_key_id"`
	RegistrationKey   *string   `db:"registration_key"`
	Comment           *string   `db:"comment"`
	Subjects          int64     `db:"subjects"`
	Clients           int64     `db:"clients"`
}

// licenseUsageSQL counts, per month, registration key and number of
// subjects, the data owner's clients that measured. $6, when not null,
// keeps the clients of that registration key. A client whose record or key
// is gone counts under no key.
const licenseUsageSQL = `
WITH m AS (
    SELECT m.month, m.from_t, m.to_t,
           m.whole AND NOT EXISTS (SELECT 1 FROM license_dirty x WHERE x.data_owner_id = $1 AND x.month = m.month) AS rolled
    FROM unnest($2::date[], $3::timestamptz[], $4::timestamptz[], $5::bool[]) AS m(month, from_t, to_t, whole)
), counted AS (
    -- Whole, clean months: the per-client counts, but for the clients
    -- with logged pairs not merged yet ...
    SELECT lc.month, lc.client_uuid, lc.subjects::bigint AS n
    FROM license_clients lc
    WHERE lc.data_owner_id = $1 AND lc.month IN (SELECT month FROM m WHERE rolled)
        AND NOT EXISTS (SELECT 1 FROM license_pair_log l
            WHERE l.data_owner_id = $1 AND l.month = lc.month AND l.client_uuid = lc.client_uuid)
    UNION ALL
    -- ... which are counted from their pairs and the log ...
    SELECT month, client_uuid, count(*) FILTER (WHERE subject <> '') FROM (
        SELECT p.month, p.client_uuid, p.subject
        FROM (SELECT DISTINCT l.month, l.client_uuid FROM m JOIN license_pair_log l
              ON l.data_owner_id = $1 AND l.month = m.month WHERE m.rolled) logged
        JOIN license_pairs p ON p.data_owner_id = $1 AND p.month = logged.month AND p.client_uuid = logged.client_uuid
        UNION
        SELECT l.month, l.client_uuid, l.subject
        FROM m JOIN license_pair_log l ON l.data_owner_id = $1 AND l.month = m.month WHERE m.rolled
    ) pairs GROUP BY month, client_uuid
    UNION ALL
    -- ... and months cut by the range or dirty, from the documents.
    SELECT month, client_uuid, count(*) FILTER (WHERE subject <> '') FROM (
        SELECT m.month, d.client_uuid, coalesce(d.subject, '') AS subject
        FROM m JOIN documents d ON d.data_owner_id = $1 AND d.kind = 'measurement'
            AND d.created_at >= m.from_t AND d.created_at < m.to_t AND d.client_uuid IS NOT NULL
        WHERE NOT m.rolled
        GROUP BY 1, 2, 3
    ) measured GROUP BY month, client_uuid
), per_client AS (
    -- The parts above count disjoint (month, client)s.
    SELECT month, client_uuid, greatest(n, 1) AS subjects FROM counted
)
SELECT pc.month, rk.id AS registration_key_id, rk.registration_key, rk.comment, pc.subjects, count(*) AS clients
FROM per_client pc
LEFT JOIN clients c ON c.data_owner_id = $1 AND c.uuid = pc.client_uuid
LEFT JOIN registration_keys rk ON rk.data_owner_id = $1 AND rk.id = c.registration_key_id
WHERE $6::bigint IS NULL OR rk.id = $6
GROUP BY pc.month, rk.id, rk.registration_key, rk.comment, pc.subjects
ORDER BY pc.month, rk.id, pc.subjects`

// LicenseKey is the registration key a report is limited to.
type LicenseKey struct {
	ID              int64   `db:"id"`
	RegistrationKey string  `db:"registration_key"`
	Comment         *string `db:"comment"`
}

// LicenseUsage counts the data owner's license units over months (see
// LicenseMonths). registrationKeyID, when not nil, keeps the clients of
// that key, which must be the data owner's (else ErrNotFound); the key is
// returned.
func (s *Store) LicenseUsage(ctx context.Context, ownerID int64, months []LicenseMonth, registrationKeyID *int64) ([]LicenseCell, *LicenseKey, error) {
	n := len(months)
	month, from, to, whole := make([]time.Time, n), make([]time.Time, n), make([]time.Time, n), make([]bool, n)
	for i, m := range months {
		month[i], from[i], to[i], whole[i] = m.Month, m.From, m.To, m.Whole()
	}
	var key *LicenseKey
	var cells []LicenseCell
	err := pgx.BeginTxFunc(ctx, s.ReadPool(ctx), pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if registrationKeyID != nil {
			rows, _ := tx.Query(ctx, `SELECT id, registration_key, comment FROM registration_keys WHERE data_owner_id = $1 AND id = $2`,
				ownerID, *registrationKeyID)
			k, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[LicenseKey])
			if err != nil {
				return mapErr("license usage: find registration key", err)
			}
			key = &k
		}
		// The planner sizes the documents' branch for every month (it cannot
		// know which are rolled up), and JIT-compiling that plan takes longer
		// than answering from the pairs; the pairs' distinct set is hashed
		// in memory.
		if _, err := tx.Exec(ctx, `SELECT set_config('jit', 'off', true), set_config('work_mem', '64MB', true)`); err != nil {
			return mapErr("license usage: settings", err)
		}
		rows, _ := tx.Query(ctx, licenseUsageSQL, ownerID, month, from, to, whole, registrationKeyID)
		var err error
		cells, err = pgx.CollectRows(rows, pgx.RowToStructByName[LicenseCell])
		return mapErr("license usage", err)
	})
	if err != nil {
		return nil, nil, err
	}
	for i := range cells {
		m := cells[i].Month
		cells[i].Month = time.Date(m.Year(), m.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return cells, key, nil
}

// licenseLock is the advisory lock one refresher of the license pairs
// holds at a time (several servers may share the database).
const licenseLock = `SELECT pg_try_advisory_xact_lock(hashtext('fleetgraph license pairs'))`

// RefreshLicensePairs merges the pair log into license_pairs and rebuilds
// the dirty months from the documents; it returns how many months it
// rebuilt. When another refresher is at work it returns at once.
func (s *Store) RefreshLicensePairs(ctx context.Context) (months int, err error) {
	if err := s.mergeLicenseLog(ctx); err != nil {
		return 0, err
	}
	rows, _ := s.pool.Query(ctx, `SELECT DISTINCT data_owner_id, month FROM license_dirty ORDER BY 1, 2`)
	type ownerMonth struct {
		owner int64
		month time.Time
	}
	todo, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ownerMonth, error) {
		var om ownerMonth
		return om, r.Scan(&om.owner, &om.month)
	})
	if err != nil {
		return 0, mapErr("license pairs: list dirty months", err)
	}
	var errs []error
	for _, om := range todo {
		done, err := s.rebuildLicenseMonth(ctx, om.owner, om.month)
		if err != nil {
			errs = append(errs, fmt.Errorf("license pairs: month %s of data owner %d: %w", om.month.Format("2006-01"), om.owner, err))
		}
		if done {
			months++
		}
		if ctx.Err() != nil {
			break
		}
	}
	return months, errors.Join(errs...)
}

// mergeLicenseLog moves the logged pairs it sees into license_pairs; pairs
// logged meanwhile stay for the next merge.
func (s *Store) mergeLicenseLog(ctx context.Context) error {
	// The per-client counts grow by the pairs that were new (a statement
	// does not see its own inserts, so they are counted from RETURNING).
	const merge = `WITH moved AS (DELETE FROM license_pair_log RETURNING data_owner_id, month, client_uuid, subject),
		added AS (
			INSERT INTO license_pairs (data_owner_id, month, client_uuid, subject)
			SELECT DISTINCT m.data_owner_id, m.month, m.client_uuid, m.subject FROM moved m
			WHERE EXISTS (SELECT 1 FROM data_owners o WHERE o.id = m.data_owner_id)
			ON CONFLICT DO NOTHING
			RETURNING data_owner_id, month, client_uuid, subject)
		INSERT INTO license_clients AS lc (data_owner_id, month, client_uuid, subjects)
		SELECT data_owner_id, month, client_uuid, count(*) FILTER (WHERE subject <> '') FROM added GROUP BY 1, 2, 3
		ON CONFLICT (data_owner_id, month, client_uuid) DO UPDATE SET subjects = lc.subjects + EXCLUDED.subjects`
	var moved int64
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var ok bool
		if err := tx.QueryRow(ctx, licenseLock).Scan(&ok); err != nil || !ok {
			return err
		}
		tag, err := tx.Exec(ctx, merge)
		moved = tag.RowsAffected()
		return err
	})
	if err != nil {
		return mapErr("license pairs: merge log", err)
	}
	if moved > 0 {
		// The log is a queue: reports probe it for every counted client, and
		// its dead rows would stay in their way until autovacuum came by.
		if _, err := s.pool.Exec(ctx, `VACUUM license_pair_log`); err != nil {
			return mapErr("license pairs: vacuum log", err)
		}
	}
	return nil
}

// rebuildLicenseMonth recomputes one month's pairs from the documents in
// one REPEATABLE READ transaction, so the dirty marks it clears and the
// documents it reads come from the same snapshot: a write committed
// meanwhile leaves its mark for the next rebuild.
func (s *Store) rebuildLicenseMonth(ctx context.Context, ownerID int64, month time.Time) (done bool, err error) {
	month = time.Date(month.Year(), month.Month(), 1, 0, 0, 0, 0, time.UTC)
	err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		var ok bool
		if err := tx.QueryRow(ctx, licenseLock).Scan(&ok); err != nil || !ok {
			return err
		}
		rows, _ := tx.Query(ctx, `SELECT id FROM license_dirty WHERE data_owner_id = $1 AND month = $2`, ownerID, month)
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil || len(ids) == 0 {
			return err
		}
		for _, q := range []string{`DELETE FROM license_pairs WHERE data_owner_id = $1 AND month = $2`,
			`DELETE FROM license_clients WHERE data_owner_id = $1 AND month = $2`} {
			if _, err := tx.Exec(ctx, q, ownerID, month); err != nil {
				return err
			}
		}
		const build = `INSERT INTO license_pairs (data_owner_id, month, client_uuid, subject)
			SELECT o.id, $2::date, d.client_uuid, coalesce(d.subject, '')
			FROM data_owners o JOIN documents d ON d.data_owner_id = o.id AND d.kind = 'measurement'
				AND d.created_at >= $3 AND d.created_at < $4 AND d.client_uuid IS NOT NULL
			WHERE o.id = $1
			GROUP BY 1, 2, 3, 4`
		if _, err := tx.Exec(ctx, build, ownerID, month, month, month.AddDate(0, 1, 0)); err != nil {
			return err
		}
		const count = `INSERT INTO license_clients (data_owner_id, month, client_uuid, subjects)
			SELECT data_owner_id, month, client_uuid, count(*) FILTER (WHERE subject <> '')
			FROM license_pairs WHERE data_owner_id = $1 AND month = $2
			GROUP BY 1, 2, 3`
		if _, err := tx.Exec(ctx, count, ownerID, month); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM license_dirty WHERE id = ANY($1)`, ids); err != nil {
			return err
		}
		done = true
		return nil
	})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "40001" { // another refresher committed after our snapshot
		return false, nil
	}
	return done, err
}
