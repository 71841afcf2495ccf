package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/isotime"
)

// User notifications: events of the types users may be e-mailed about are
// queued in notification_queue by a trigger on events (migration 00018),
// in the event's transaction. FanOutNotifications turns a batch of them
// into mail: for each event, the users of its data owner whose
// notification_config asks for its kind, when the data owner's detection
// setting of that kind is on and the event's client is not muted for it.
// An anomaly event goes to a user whose anomaly_events_frequency is digest
// as a digest item instead (QueueDigest gathers them later). The outbox
// template of an immediate mail is the event type; its data the event's
// envelope ({id, type, timestamp, data}) plus data_owner (the name).
//
// Which setting rules which event:
//
//	anomaly_event.created       anomaly_events                client anomalies_muted
//	client.offline              client_offline                client_offline_detection_enabled, offline_notifications_muted
//	client_health.warning/...   client_degraded               client_degraded_detection_enabled, system_health_notifications_muted
//	study_execution.failed      study_execution_failures      study_failure_detection_enabled

// FanOut counts what one FanOutNotifications did.
type FanOut struct {
	Events, Mails, DigestItems int
}

// FanOutNotifications handles up to limit queued events (oldest first) in
// one transaction; several workers may run, each event goes to one.
func (s *Store) FanOutNotifications(ctx context.Context, limit int) (FanOut, error) {
	const q = `WITH q AS (
		DELETE FROM notification_queue WHERE event_seq IN (
			SELECT event_seq FROM notification_queue ORDER BY event_seq LIMIT $1 FOR UPDATE SKIP LOCKED)
		RETURNING event_seq
	), ev AS (
		SELECT e.seq, e.type, e.data_owner_id, d.name AS owner_name,
			jsonb_build_object('id', e.id::text, 'type', e.type,
				'timestamp', to_char(e.occurred_at AT TIME ZONE 'UTC', ` + isotime.MillisSQL + `),
				'data', e.data, 'data_owner', d.name) AS envelope,
			CASE e.type
				WHEN 'anomaly_event.created' THEN 'anomaly_events'
				WHEN 'client.offline' THEN 'client_offline'
				WHEN 'study_execution.failed' THEN 'study_execution_failures'
				ELSE 'client_degraded' END AS setting,
			CASE e.type
				WHEN 'anomaly_event.created' THEN NOT coalesce(c.anomalies_muted, false)
				WHEN 'client.offline' THEN d.client_offline_detection_enabled AND NOT coalesce(c.offline_notifications_muted, false)
				WHEN 'study_execution.failed' THEN d.study_failure_detection_enabled
				ELSE d.client_degraded_detection_enabled AND NOT coalesce(c.system_health_notifications_muted, false) END AS wanted
		FROM q JOIN events e ON e.seq = q.event_seq
		JOIN data_owners d ON d.id = e.data_owner_id
		LEFT JOIN clients c ON c.id = e.client_id AND c.data_owner_id = e.data_owner_id
	), r AS (
		SELECT ev.*, u.id AS user_id, u.email,
			ev.type = 'anomaly_event.created'
				AND coalesce(u.notification_config->>'anomaly_events_frequency', 'immediate') = 'digest' AS digest
		FROM ev JOIN users u ON u.data_owner_id = ev.data_owner_id
		WHERE ev.wanted AND coalesce(u.notification_config->>ev.setting, 'false') = 'true'
	), dig AS (
		INSERT INTO notification_digest_items (user_id, event_seq)
		SELECT user_id, seq FROM r WHERE digest ON CONFLICT DO NOTHING RETURNING 1
	), mail AS (
		INSERT INTO email_outbox (data_owner_id, user_id, template, recipient, data)
		SELECT data_owner_id, user_id, type, email, envelope FROM r WHERE NOT digest ORDER BY seq, user_id
		RETURNING id, data_owner_id
	)
	SELECT (SELECT count(*) FROM q), (SELECT count(*) FROM dig),
		coalesce((SELECT array_agg(data_owner_id ORDER BY id) FROM mail), '{}'),
		coalesce((SELECT array_agg(id ORDER BY id) FROM mail), '{}')`
	var f FanOut
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var owners, ids []int64
		if err := tx.QueryRow(ctx, q, limit).Scan(&f.Events, &f.DigestItems, &owners, &ids); err != nil {
			return mapErr("fan out notifications", err)
		}
		f.Mails = len(ids)
		return s.queueEmailJobs(ctx, tx, owners, ids)
	})
	return f, err
}

// PendingDigest is a user with anomaly events waiting for a digest.
type PendingDigest struct {
	UserID       int64           `db:"user_id"`
	DataOwnerID  int64           `db:"data_owner_id"`
	Config       json.RawMessage `db:"notification_config"`
	LastDigestAt *time.Time      `db:"last_digest_at"`
	// Oldest is when the oldest waiting event happened.
	Oldest time.Time `db:"oldest"`
}

// PendingDigests lists every user with digest items (a background worker's
// read across data owners).
func (s *Store) PendingDigests(ctx context.Context) ([]PendingDigest, error) {
	rows, _ := s.pool.Query(ctx, `SELECT u.id AS user_id, u.data_owner_id, u.notification_config, u.last_digest_at,
			min(e.occurred_at) AS oldest
		FROM notification_digest_items i JOIN users u ON u.id = i.user_id
		JOIN events e ON e.seq = i.event_seq AND e.data_owner_id = u.data_owner_id
		GROUP BY u.id ORDER BY u.id`)
	ps, err := pgx.CollectRows(rows, pgx.RowToStructByName[PendingDigest])
	return ps, mapErr("list pending digests", err)
}

// TemplateAnomalyDigest is the outbox template of a digest; its data is
// {data_owner, count, events: [envelope, ...]} (oldest first).
const TemplateAnomalyDigest = "anomaly_digest"

// QueueDigest moves the user's digest items into one digest mail and
// records when (last_digest_at); it answers how many events it holds (0:
// none waited, no mail).
func (s *Store) QueueDigest(ctx context.Context, ownerID, userID int64) (int, error) {
	var n int
	err := s.tx(ctx, func(tx pgx.Tx) error {
		const q = `WITH items AS (
			DELETE FROM notification_digest_items i USING users u
			WHERE i.user_id = u.id AND u.id = $2 AND u.data_owner_id = $1 RETURNING i.event_seq
		), mail AS (
			INSERT INTO email_outbox (data_owner_id, user_id, template, recipient, data)
			SELECT $1, u.id, $3, u.email, jsonb_build_object('data_owner', d.name, 'count', count(*),
				'events', jsonb_agg(jsonb_build_object('id', e.id::text, 'type', e.type,
					'timestamp', to_char(e.occurred_at AT TIME ZONE 'UTC', ` + isotime.MillisSQL + `),
					'data', e.data) ORDER BY e.seq))
			FROM items JOIN events e ON e.seq = items.event_seq AND e.data_owner_id = $1
			JOIN users u ON u.id = $2 AND u.data_owner_id = $1
			JOIN data_owners d ON d.id = $1
			GROUP BY u.id, u.email, d.name
			RETURNING id, (data->>'count')::int AS n
		)
		SELECT coalesce((SELECT sum(1) FROM items), 0)::int, coalesce((SELECT max(n) FROM mail), 0),
			coalesce((SELECT array_agg(id) FROM mail), '{}')`
		var items int
		var ids []int64
		if err := tx.QueryRow(ctx, q, ownerID, userID, TemplateAnomalyDigest).Scan(&items, &n, &ids); err != nil {
			return mapErr("queue digest", err)
		}
		if err := s.queueEmailJobs(ctx, tx, []int64{ownerID}, ids); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE users SET last_digest_at = now() WHERE data_owner_id = $1 AND id = $2`, ownerID, userID)
		return mapErr("record digest time", err)
	})
	return n, err
}
