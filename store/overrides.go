package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// Override is an anomaly detection override of one scope.
type Override struct {
	ID              int64     `db:"id"`
	Subject         string    `db:"subject"`
	MeasurementType string    `db:"measurement_type"`
	Metric          string    `db:"metric"`
	DetectionPass   string    `db:"detection_pass"`
	Level           string    `db:"level"`
	Origin          string    `db:"origin"`
	SourceAnomalyID *string   `db:"source_anomaly_id"`
	UpdatedByID     *int64    `db:"updated_by_id"`
	UpdatedByName   *string   `db:"updated_by_name"`
	CreatedAt       time.Time `db:"created_at"`
	UpdatedAt       time.Time `db:"updated_at"`
}

// OverrideScope names the anomalies an override applies to.
type OverrideScope struct {
	Subject, MeasurementType, Metric, DetectionPass string
}

// overrideSelect reads overrides of data owner $1 with their editor's name.
const overrideSelect = `SELECT o.id, o.subject, o.measurement_type, o.metric, o.detection_pass, o.level, o.origin,
	o.source_anomaly_id, o.updated_by_id,
	COALESCE(NULLIF(btrim(concat_ws(' ', u.first_name, u.last_name)), ''), u.username) AS updated_by_name,
	o.created_at, o.updated_at
	FROM anomaly_detection_overrides o LEFT JOIN users u ON u.id = o.updated_by_id AND u.data_owner_id = o.data_owner_id
	WHERE o.data_owner_id = $1`

// Overrides lists the data owner's overrides.
func (s *Store) Overrides(ctx context.Context, ownerID int64) ([]Override, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, overrideSelect+` ORDER BY o.id`, ownerID)
	os, err := pgx.CollectRows(rows, pgx.RowToStructByName[Override])
	return os, mapErr("list overrides", err)
}

// Override loads one of the data owner's overrides.
func (s *Store) Override(ctx context.Context, ownerID, id int64) (Override, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, overrideSelect+` AND o.id = $2`, ownerID, id)
	o, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Override])
	return o, mapErr("load override", err)
}

// OverrideByScope loads the data owner's override of a scope.
func (s *Store) OverrideByScope(ctx context.Context, ownerID int64, sc OverrideScope) (Override, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, overrideSelect+` AND o.subject = $2 AND o.measurement_type = $3
		AND o.metric = $4 AND o.detection_pass = $5`, ownerID, sc.Subject, sc.MeasurementType, sc.Metric, sc.DetectionPass)
	o, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Override])
	return o, mapErr("load override", err)
}

// OverrideSet is the level an override is set to, and by whom.
type OverrideSet struct {
	Level, Origin   string
	SourceAnomalyID *string
	UpdatedByID     *int64
}

// setOverride creates the data owner's override of the scope or replaces
// its level, origin, source and editor; it returns the override's id.
func setOverride(ctx context.Context, q pgx.Tx, ownerID int64, sc OverrideScope, set OverrideSet) (int64, error) {
	var id int64
	err := q.QueryRow(ctx, upsertOverride, ownerID, sc.Subject, sc.MeasurementType, sc.Metric, sc.DetectionPass,
		set.Level, set.Origin, set.SourceAnomalyID, set.UpdatedByID).Scan(&id)
	return id, mapErr("set override", err)
}

// upsertOverride creates or updates the override of a scope.
const upsertOverride = `INSERT INTO anomaly_detection_overrides (data_owner_id, subject, measurement_type, metric,
		detection_pass, level, origin, source_anomaly_id, updated_by_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (data_owner_id, subject, measurement_type, metric, detection_pass) DO UPDATE
		SET level = EXCLUDED.level, origin = EXCLUDED.origin, source_anomaly_id = EXCLUDED.source_anomaly_id,
			updated_by_id = EXCLUDED.updated_by_id, updated_at = now()
		RETURNING id`

// SetOverride creates the data owner's override of the scope or replaces
// its level, origin, source and editor, and returns it as stored, in one
// transaction: the upsert's row lock holds until the read, so a request
// deleting the scope at the same time cannot make the answer a 404. It
// takes the scope's lock (lockScope), so it applies before or after a
// feedback step on the scope, not within one.
func (s *Store) SetOverride(ctx context.Context, ownerID int64, sc OverrideScope, set OverrideSet) (Override, error) {
	var o Override
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if err := lockScope(ctx, tx, ownerID, sc); err != nil {
			return err
		}
		id, err := setOverride(ctx, tx, ownerID, sc, set)
		if err != nil {
			return err
		}
		o, err = overrideByID(ctx, tx, ownerID, id)
		return err
	})
	return o, err
}

// StepOverride moves the scope's level one step atomically: next gives the
// new level from the current one ("default" when the scope has no
// override); landing on def deletes the override. Feedback on one scope is
// serialised (a transaction-scoped advisory lock on the data owner and
// scope, taken before the scope's row exists), so parallel steps apply one
// after the other and none is lost. It returns the override after the step
// (deleted: none left).
func (s *Store) StepOverride(ctx context.Context, ownerID int64, sc OverrideScope, def string, next func(level string) string,
	set OverrideSet) (o Override, deleted bool, err error) {
	err = s.tx(ctx, func(tx pgx.Tx) error {
		if err := lockScope(ctx, tx, ownerID, sc); err != nil {
			return err
		}
		level := def
		var cur string
		err := tx.QueryRow(ctx, `SELECT level FROM anomaly_detection_overrides WHERE data_owner_id = $1 AND subject = $2
			AND measurement_type = $3 AND metric = $4 AND detection_pass = $5`,
			ownerID, sc.Subject, sc.MeasurementType, sc.Metric, sc.DetectionPass).Scan(&cur)
		switch {
		case err == nil:
			level = cur
		case !errors.Is(err, pgx.ErrNoRows):
			return mapErr("load override", err)
		}
		set.Level = next(level)
		if set.Level == def {
			tag, err := tx.Exec(ctx, `DELETE FROM anomaly_detection_overrides WHERE data_owner_id = $1 AND subject = $2
				AND measurement_type = $3 AND metric = $4 AND detection_pass = $5`,
				ownerID, sc.Subject, sc.MeasurementType, sc.Metric, sc.DetectionPass)
			deleted = tag.RowsAffected() > 0
			return mapErr("delete override", err)
		}
		id, err := setOverride(ctx, tx, ownerID, sc, set)
		if err != nil {
			return err
		}
		o, err = overrideByID(ctx, tx, ownerID, id)
		return err
	})
	return o, deleted, err
}

// lockScope takes the transaction-scoped advisory lock of the data
// owner's override scope (the row may not exist yet, so no row lock can
// serve). The key is a 64-bit hash of the scope seeded with the data owner;
// two scopes sharing one would only wait for each other.
func lockScope(ctx context.Context, tx pgx.Tx, ownerID int64, sc OverrideScope) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(concat_ws(chr(31), $2::text, $3::text, $4::text, $5::text), $1))`,
		ownerID, sc.Subject, sc.MeasurementType, sc.Metric, sc.DetectionPass)
	return mapErr("lock override scope", err)
}

// overrideByID reads one override in tx.
func overrideByID(ctx context.Context, tx pgx.Tx, ownerID, id int64) (Override, error) {
	rows, _ := tx.Query(ctx, overrideSelect+` AND o.id = $2`, ownerID, id)
	o, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Override])
	return o, mapErr("load override", err)
}

// DeleteOverride deletes one of the data owner's overrides by id; it
// returns how many were deleted (0 or 1).
func (s *Store) DeleteOverride(ctx context.Context, ownerID, id int64) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM anomaly_detection_overrides WHERE data_owner_id = $1 AND id = $2`, ownerID, id)
	return tag.RowsAffected(), mapErr("delete override", err)
}

// DeleteOverrideByScope deletes the data owner's override of a scope; it
// returns how many were deleted (0 or 1).
func (s *Store) DeleteOverrideByScope(ctx context.Context, ownerID int64, sc OverrideScope) (int64, error) {
	const q = `DELETE FROM anomaly_detection_overrides WHERE data_owner_id = $1 AND subject = $2
		AND measurement_type = $3 AND metric = $4 AND detection_pass = $5`
	tag, err := s.pool.Exec(ctx, q, ownerID, sc.Subject, sc.MeasurementType, sc.Metric, sc.DetectionPass)
	return tag.RowsAffected(), mapErr("delete override", err)
}

// MeasurementDimension is what the data owner's measurements of one type
// offer to overrides: the metrics (keys of statistic_values) and subjects.
type MeasurementDimension struct {
	MeasurementType string   `db:"measurement_type"`
	Metrics         []string `db:"metrics"`
	Subjects        []string `db:"subjects"`
}

// MeasurementDimensions reads the types, metrics and subjects of the data
// owner's own measurement documents.
func (s *Store) MeasurementDimensions(ctx context.Context, ownerID int64) ([]MeasurementDimension, error) {
	const q = `SELECT d.type AS measurement_type,
		COALESCE(array_agg(DISTINCT k.key ORDER BY k.key) FILTER (WHERE k.key IS NOT NULL), '{}') AS metrics,
		COALESCE(array_agg(DISTINCT d.subject ORDER BY d.subject) FILTER (WHERE d.subject IS NOT NULL), '{}') AS subjects
		FROM documents d
		LEFT JOIN LATERAL jsonb_object_keys(CASE WHEN jsonb_typeof(d.doc->'statistic_values') = 'object'
			THEN d.doc->'statistic_values' END) AS k(key) ON true
		WHERE d.data_owner_id = $1 AND d.kind = 'measurement' AND d.type IS NOT NULL
		GROUP BY d.type ORDER BY d.type`
	rows, _ := s.ReadPool(ctx).Query(ctx, q, ownerID)
	ds, err := pgx.CollectRows(rows, pgx.RowToStructByName[MeasurementDimension])
	return ds, mapErr("read measurement dimensions", err)
}

// The two reads below serve the measurement graph (Client.measurements and
// the client of a document); they belong with store/documents.go.

// MeasurementPage is one measurement of a client's page.
type MeasurementPage struct {
	ClientUUID string    `db:"client_uuid"`
	ID         int64     `db:"id"`
	DocID      string    `db:"doc_id"`
	CreatedAt  time.Time `db:"created_at"`
	Doc        []byte    `db:"doc"`
}

// MeasurementFilter narrows a client's measurements.
type MeasurementFilter struct {
	Type, Subject *string
	Since, Until  *time.Time
	// After is the keyset cursor: rows strictly before (AfterTime, AfterID)
	// in the page order (created_at, then doc_id, both descending).
	AfterTime *time.Time
	AfterID   *string
}

// ClientMeasurements pages the measurements of several clients at once:
// up to limit rows per client, newest first (equal times by doc_id,
// descending), in one statement.
func (s *Store) ClientMeasurements(ctx context.Context, ownerID int64, clientUUIDs []string, f MeasurementFilter, limit int) ([]MeasurementPage, error) {
	const q = `SELECT c.uuid::text AS client_uuid, m.id, m.doc_id, m.created_at, m.doc
		FROM unnest($2::uuid[]) AS c(uuid) CROSS JOIN LATERAL (
			SELECT id, doc_id, created_at, doc FROM documents
			WHERE data_owner_id = $1 AND kind = 'measurement' AND client_uuid = c.uuid
			AND ($3::text IS NULL OR type = $3) AND ($4::text IS NULL OR subject = $4)
			AND ($5::timestamptz IS NULL OR created_at >= $5) AND ($6::timestamptz IS NULL OR created_at < $6)
			AND ($7::timestamptz IS NULL OR (created_at, doc_id) < ($7, $8::text))
			ORDER BY created_at DESC, doc_id DESC LIMIT $9) m`
	rows, _ := s.ReadPool(ctx).Query(ctx, q, ownerID, clientUUIDs, f.Type, f.Subject, f.Since, f.Until, f.AfterTime, f.AfterID, limit)
	ms, err := pgx.CollectRows(rows, pgx.RowToStructByName[MeasurementPage])
	return ms, mapErr("list client measurements", err)
}

// ClientsByUUIDs loads the clients visible to the data owner by UUID
// (malformed UUIDs match nothing).
func ClientsByUUIDs(ownerID int64, uuids []string) Read[Client] {
	return Read[Client]{step: "load clients by uuid", sql: clientSelect + ` AND c.uuid::text = ANY($2::text[])`, args: []any{ownerID, uuids}, scan: scanClient}
}

// ClientsByKeys loads the clients visible to the data owner that have one
// of ids or one of uuids (malformed UUIDs match nothing), in one statement.
func ClientsByKeys(ownerID int64, ids []int64, uuids []string) Read[Client] {
	return Read[Client]{step: "load clients by key", sql: clientSelect + ` AND (c.id = ANY($2) OR c.uuid::text = ANY($3::text[]))`,
		args: []any{ownerID, ids, uuids}, scan: scanClient}
}
