package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/fleethealth"
)

// healthThresholdCols are the data owner's thresholds, in the order of
// scanThresholds.
const healthThresholdCols = `health_cpu_warning_percent, health_cpu_critical_percent,
	health_memory_warning_percent, health_memory_critical_percent,
	health_filesystem_warning_percent, health_filesystem_critical_percent`

func thresholdDest(t *fleethealth.Thresholds) []any {
	return []any{&t.CPU.Warning, &t.CPU.Critical, &t.Memory.Warning, &t.Memory.Critical,
		&t.Filesystem.Warning, &t.Filesystem.Critical}
}

// HealthThresholds loads the data owner's health thresholds.
func (s *Store) HealthThresholds(ctx context.Context, ownerID int64) (fleethealth.Thresholds, error) {
	var t fleethealth.Thresholds
	err := s.ReadPool(ctx).QueryRow(ctx, `SELECT `+healthThresholdCols+` FROM data_owners WHERE id = $1`, ownerID).Scan(thresholdDest(&t)...)
	return t, mapErr("load health thresholds", err)
}

// UpdateHealthThresholds replaces the data owner's thresholds with what
// change makes of the current ones (its error, such as a validation error,
// is returned and nothing is written). The row stays locked from the read
// to the write, so concurrent changes apply one after the other.
func (s *Store) UpdateHealthThresholds(ctx context.Context, ownerID int64, change func(fleethealth.Thresholds) (fleethealth.Thresholds, error)) (fleethealth.Thresholds, error) {
	var t fleethealth.Thresholds
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var cur fleethealth.Thresholds
		err := tx.QueryRow(ctx, `SELECT `+healthThresholdCols+` FROM data_owners WHERE id = $1 FOR NO KEY UPDATE`,
			ownerID).Scan(thresholdDest(&cur)...)
		if err != nil {
			return mapErr("load health thresholds", err)
		}
		if t, err = change(cur); err != nil {
			return err
		}
		const q = `UPDATE data_owners SET health_cpu_warning_percent = $2, health_cpu_critical_percent = $3,
			health_memory_warning_percent = $4, health_memory_critical_percent = $5,
			health_filesystem_warning_percent = $6, health_filesystem_critical_percent = $7
			WHERE id = $1`
		_, err = tx.Exec(ctx, q, ownerID, t.CPU.Warning, t.CPU.Critical, t.Memory.Warning, t.Memory.Critical,
			t.Filesystem.Warning, t.Filesystem.Critical)
		return mapErr("update health thresholds", err)
	})
	return t, err
}

// SystemStatusRecords pages the data owner's system status records of a
// client, newest first (by created_at, then row id), and counts them all.
func (s *Store) SystemStatusRecords(ctx context.Context, ownerID int64, clientUUID string, limit, offset int) ([]SystemStatus, int64, error) {
	const q = `SELECT id, created_at, client_uuid::text, doc, count(*) OVER () FROM documents
		WHERE data_owner_id = $1 AND kind = 'system_status' AND client_uuid = $2::uuid
		ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`
	rows, _ := s.ReadPool(ctx).Query(ctx, q, ownerID, clientUUID, limit, offset)
	var total int64
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (SystemStatus, error) {
		var id int64
		var at time.Time
		var cu *string
		var doc []byte
		if err := row.Scan(&id, &at, &cu, &doc, &total); err != nil {
			return SystemStatus{}, err
		}
		return ParseSystemStatus(id, at, cu, doc)
	})
	if err != nil {
		return nil, 0, mapErr("list system status records", err)
	}
	if len(out) == 0 && offset > 0 { // past the end: count alone
		err = s.ReadPool(ctx).QueryRow(ctx, `SELECT count(*) FROM documents WHERE data_owner_id = $1
			AND kind = 'system_status' AND client_uuid = $2::uuid`, ownerID, clientUUID).Scan(&total)
	}
	return out, total, mapErr("count system status records", err)
}

// HealthState is a client's health as fleet health reports it: the stored
// evaluation, or the one computed now when detection is off.
type HealthState struct {
	ClientID    int64
	ClientUUID  string
	ClientLabel *string
	fleethealth.Evaluation
	// EvaluatedAt is nil when the state was not evaluated (degraded
	// detection off).
	EvaluatedAt *time.Time
	// ThresholdsOutdated: the settings changed since the evaluation.
	ThresholdsOutdated bool
}

// healthRow is a client with its newest system status record within the
// offline threshold and its stored evaluation.
type healthRow struct {
	ClientID      int64
	ClientUUID    string
	ClientLabel   *string
	RecordID      *int64
	RecordVersion *int64
	RecordAt      *time.Time
	RecordDoc     []byte
	Stored        *fleethealth.Evaluation
	StoredVersion *int64 // of the stored evaluation's source record
	StoredAt      *time.Time
}

// FleetHealth evaluates and answers the health of every client of the data
// owner (its own clients; shared ones report to their owner), by id.
func (s *Store) FleetHealth(ctx context.Context, ownerID int64) ([]HealthState, error) {
	var out []HealthState
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = s.evaluateHealth(ctx, tx, ownerID, nil)
		return err
	})
	return out, err
}

// evaluateHealth evaluates the data owner's clients (those with the given
// UUIDs, all when nil) in tx, stores what changed and answers their states.
//
// When it runs: on every fleet health read and in the transaction that
// stores system status records (InsertDocuments), for their clients. A
// client is evaluated again when its newest record within the offline
// threshold is not the one its stored evaluation came from (a new record,
// one replaced in place with other content, or the old one aged out:
// unknown). A change of thresholds alone does not
// re-evaluate: the stored evaluation is then thresholds_outdated until the
// client's next record. With degraded detection off nothing is stored and
// every state is unknown.
//
// The data owner's row is locked (FOR NO KEY UPDATE, which inserts
// referencing it do not wait for) so evaluations and threshold changes of
// one data owner apply one after the other.
func (s *Store) evaluateHealth(ctx context.Context, tx pgx.Tx, ownerID int64, clientUUIDs []string) ([]HealthState, error) {
	var set fleethealth.Settings
	var now time.Time
	const settings = `SELECT ` + healthThresholdCols + `, coalesce(offline_threshold_minutes, $2),
		client_degraded_detection_enabled, now() FROM data_owners WHERE id = $1 FOR NO KEY UPDATE`
	dest := append(thresholdDest(&set.Thresholds), &set.OfflineThresholdMinutes, &set.DegradedDetectionEnabled, &now)
	if err := tx.QueryRow(ctx, settings, ownerID, DefaultOfflineThresholdMinutes).Scan(dest...); err != nil {
		return nil, mapErr("load health settings", err)
	}
	const q = `SELECT c.id, c.uuid::text, c.label, d.id, d.version, d.created_at, d.doc,
		       e.state, e.reasons, e.metric_summary, e.threshold_snapshot, e.source_document_id,
		       e.source_document_version, e.network_transport, e.evaluated_at
		FROM clients c
		LEFT JOIN LATERAL (SELECT id, version, created_at, doc FROM documents
			WHERE data_owner_id = $1 AND kind = 'system_status' AND client_uuid = c.uuid
			AND created_at >= $3::timestamptz - make_interval(mins => $2)
			ORDER BY created_at DESC, id DESC LIMIT 1) d ON true
		LEFT JOIN client_health_evaluations e ON e.client_id = c.id AND e.data_owner_id = $1
		WHERE c.data_owner_id = $1 AND ($4::uuid[] IS NULL OR c.uuid = ANY($4::uuid[]))
		ORDER BY c.id`
	rows, _ := tx.Query(ctx, q, ownerID, set.OfflineThresholdMinutes, now, clientUUIDs)
	hs, err := pgx.CollectRows(rows, scanHealthRow)
	if err != nil {
		return nil, mapErr("load client health", err)
	}
	out := make([]HealthState, 0, len(hs))
	for _, h := range hs {
		st, fresh, err := judgeHealth(h, set)
		if err != nil {
			return nil, err
		}
		if fresh && set.DegradedDetectionEnabled {
			at, err := s.recordHealth(ctx, tx, ownerID, h, st.Evaluation, now)
			if err != nil {
				return nil, err
			}
			st.EvaluatedAt = &at
		}
		out = append(out, st)
	}
	return out, nil
}

// judgeHealth answers client h's state under set: its stored evaluation
// while that is of its newest record within the offline threshold (and
// degraded detection is on), else a fresh one (fresh: it is not stored).
func judgeHealth(h healthRow, set fleethealth.Settings) (st HealthState, fresh bool, err error) {
	st = HealthState{ClientID: h.ClientID, ClientUUID: h.ClientUUID, ClientLabel: h.ClientLabel}
	if h.Stored != nil && sameRecord(h.Stored.SourceRecordID, h.RecordID) && sameRecord(h.StoredVersion, h.RecordVersion) &&
		set.DegradedDetectionEnabled {
		st.Evaluation, st.EvaluatedAt = *h.Stored, h.StoredAt
		st.ThresholdsOutdated = h.Stored.Snapshot != set.Snapshot()
		return st, false, nil
	}
	var reading *fleethealth.Reading
	if h.RecordID != nil {
		rec, err := ParseSystemStatus(*h.RecordID, *h.RecordAt, nil, h.RecordDoc)
		if err != nil {
			return st, false, err
		}
		reading = ptr(rec.Reading())
	}
	st.Evaluation = fleethealth.Evaluate(reading, set)
	return st, true, nil
}

// HealthOfClients reads the health of several of the data owner's own
// clients as fleet health answers it, without storing it: a state that
// needs evaluating again (its record aged out of the offline threshold,
// or none was stored) is evaluated on read, EvaluatedAt the read's time
// (nil with degraded detection off). Shared clients have no row: their
// health is their owner's.
func HealthOfClients(ownerID int64, clientIDs []int64) Read[HealthState] {
	const q = `SELECT c.id, c.uuid::text, c.label, d.id, d.version, d.created_at, d.doc,
		       e.state, e.reasons, e.metric_summary, e.threshold_snapshot, e.source_document_id,
		       e.source_document_version, e.network_transport, e.evaluated_at,
		       ` + healthThresholdCols + `, coalesce(o.offline_threshold_minutes, $3),
		       o.client_degraded_detection_enabled, now()
		FROM data_owners o JOIN clients c ON c.data_owner_id = o.id
		LEFT JOIN LATERAL (SELECT id, version, created_at, doc FROM documents
			WHERE data_owner_id = $1 AND kind = 'system_status' AND client_uuid = c.uuid
			AND created_at >= now() - make_interval(mins => coalesce(o.offline_threshold_minutes, $3))
			ORDER BY created_at DESC, id DESC LIMIT 1) d ON true
		LEFT JOIN client_health_evaluations e ON e.client_id = c.id AND e.data_owner_id = $1
		WHERE o.id = $1 AND c.id = ANY($2)`
	return Read[HealthState]{step: "read client health", sql: q, args: []any{ownerID, clientIDs, DefaultOfflineThresholdMinutes},
		scan: func(row pgx.CollectableRow) (HealthState, error) {
			var set fleethealth.Settings
			var now time.Time
			h, err := scanHealthRowWith(row, append(thresholdDest(&set.Thresholds), &set.OfflineThresholdMinutes,
				&set.DegradedDetectionEnabled, &now)...)
			if err != nil {
				return HealthState{}, err
			}
			st, fresh, err := judgeHealth(h, set)
			if fresh && set.DegradedDetectionEnabled {
				st.EvaluatedAt = &now
			}
			return st, err
		}}
}

func sameRecord(a, b *int64) bool {
	return a != nil && b != nil && *a == *b
}

func ptr[T any](v T) *T { return &v }

func scanHealthRow(row pgx.CollectableRow) (healthRow, error) { return scanHealthRowWith(row) }

// scanHealthRowWith reads a healthRow followed by the columns extra
// scans into.
func scanHealthRowWith(row pgx.CollectableRow, extra ...any) (healthRow, error) {
	var h healthRow
	var state, transport *string
	var reasons, summary, snapshot []byte
	var source *int64
	var at *time.Time
	err := row.Scan(append([]any{&h.ClientID, &h.ClientUUID, &h.ClientLabel, &h.RecordID, &h.RecordVersion, &h.RecordAt, &h.RecordDoc,
		&state, &reasons, &summary, &snapshot, &source, &h.StoredVersion, &transport, &at}, extra...)...)
	if err != nil || state == nil {
		return h, err
	}
	e := fleethealth.Evaluation{State: *state, SourceRecordID: source, NetworkTransport: transport}
	for _, f := range []struct {
		raw []byte
		to  any
	}{{reasons, &e.Reasons}, {summary, &e.MetricSummary}, {snapshot, &e.Snapshot}} {
		if err := json.Unmarshal(f.raw, f.to); err != nil {
			return h, fmt.Errorf("read stored evaluation of client %d: %w", h.ClientID, err)
		}
	}
	h.Stored, h.StoredAt = &e, at
	return h, nil
}

// recordHealth stores e as client h's evaluation when it differs from the
// stored one, and records a change of state. This is the one place a
// client's health state changes: each change is a client_health_changes
// row (from_state null for a client's first evaluation) and, when it is
// one worth telling, an event (healthEvent). It answers when the stored evaluation was made.
func (s *Store) recordHealth(ctx context.Context, tx pgx.Tx, ownerID int64, h healthRow, e fleethealth.Evaluation, now time.Time) (time.Time, error) {
	if h.Stored != nil && h.Stored.State == e.State && sameRecordOrNone(h.Stored.SourceRecordID, e.SourceRecordID) &&
		sameRecordOrNone(h.StoredVersion, h.RecordVersion) && h.Stored.Snapshot == e.Snapshot && h.StoredAt != nil {
		return *h.StoredAt, nil // nothing new: the stored evaluation and its time stand
	}
	reasons, _ := json.Marshal(e.Reasons) // plain structs: cannot fail
	summary, _ := json.Marshal(e.MetricSummary)
	snapshot, _ := json.Marshal(e.Snapshot)
	const upsert = `INSERT INTO client_health_evaluations (client_id, data_owner_id, state, reasons, metric_summary,
			threshold_snapshot, source_document_id, source_document_version, network_transport, evaluated_at)
		SELECT id, data_owner_id, $3, $4, $5, $6, $7, $10, $8, $9 FROM clients WHERE data_owner_id = $1 AND id = $2
		ON CONFLICT (client_id) DO UPDATE SET state = EXCLUDED.state, reasons = EXCLUDED.reasons,
			metric_summary = EXCLUDED.metric_summary, threshold_snapshot = EXCLUDED.threshold_snapshot,
			source_document_id = EXCLUDED.source_document_id, source_document_version = EXCLUDED.source_document_version,
			network_transport = EXCLUDED.network_transport,
			evaluated_at = EXCLUDED.evaluated_at`
	if _, err := tx.Exec(ctx, upsert, ownerID, h.ClientID, e.State, reasons, summary, snapshot,
		e.SourceRecordID, e.NetworkTransport, now, h.RecordVersion); err != nil {
		return now, mapErr("store health evaluation", err)
	}
	var before *string
	if h.Stored != nil {
		before = &h.Stored.State
	}
	if !fleethealth.Changed(before, e.State) {
		return now, nil
	}
	const change = `INSERT INTO client_health_changes (data_owner_id, client_id, from_state, to_state, reasons,
		source_document_id, changed_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`
	if _, err := tx.Exec(ctx, change, ownerID, h.ClientID, before, e.State, reasons, e.SourceRecordID, now); err != nil {
		return now, mapErr("record health change", err)
	}
	if ev, ok := healthEvent(h.ClientID, before, e); ok {
		return now, s.Emit(ctx, tx, ownerID, ev)
	}
	return now, nil
}

// healthEvent tells a change of a client's health state: to warning or
// critical (client_health.warning, .critical, with the metrics over their
// thresholds), or back to healthy from one of them (.recovered). Other
// changes (a first evaluation that is healthy, to or from unknown without
// a warning or critical state before) tell nothing: client.offline and
// client.online tell a client going quiet.
func healthEvent(clientID int64, before *string, e fleethealth.Evaluation) (NewEvent, bool) {
	ev := NewEvent{ClientID: &clientID, Data: map[string]any{"from_state": before, "to_state": e.State,
		"reasons": e.Reasons, "metric_summary": e.MetricSummary}}
	switch {
	case e.State == "warning" || e.State == "critical":
		ev.Type = EventHealthWarning
		if e.State == "critical" {
			ev.Type = EventHealthCritical
		}
		ev.Severity = &e.State
		ev.HealthMetrics = []string{}
		for _, r := range e.Reasons {
			ev.HealthMetrics = append(ev.HealthMetrics, r.Metric)
		}
		return ev, true
	case e.State == "healthy" && before != nil && (*before == "warning" || *before == "critical"):
		ev.Type = EventHealthRecovered
		return ev, true
	}
	return ev, false
}

func sameRecordOrNone(a, b *int64) bool {
	return a == nil && b == nil || sameRecord(a, b)
}

// HealthChange is a recorded change of a client's health state.
type HealthChange struct {
	ID        int64     `db:"id"`
	ClientID  int64     `db:"client_id"`
	FromState *string   `db:"from_state"`
	ToState   string    `db:"to_state"`
	ChangedAt time.Time `db:"changed_at"`
}

// HealthChanges lists the data owner's recorded state changes after the
// change with id afterID, oldest first (for the events, and tests).
func (s *Store) HealthChanges(ctx context.Context, ownerID, afterID int64) ([]HealthChange, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT id, client_id, from_state, to_state, changed_at FROM client_health_changes
		WHERE data_owner_id = $1 AND id > $2 ORDER BY id`, ownerID, afterID)
	cs, err := pgx.CollectRows(rows, pgx.RowToStructByName[HealthChange])
	return cs, mapErr("list health changes", err)
}
