package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/isotime"
)

// Event types: every domain change the event stream tells (issue 13). The
// catalogue (webhooks.Catalogue) describes each with a sample.
const (
	EventAnomalyCreated        = "anomaly_event.created"
	EventAnomalyResolved       = "anomaly_event.resolved"
	EventClientRegistered      = "client.registered"
	EventClientOffline         = "client.offline"
	EventClientOnline          = "client.online"
	EventClientDisabled        = "client.disabled"
	EventHealthWarning         = "client_health.warning"
	EventHealthCritical        = "client_health.critical"
	EventHealthRecovered       = "client_health.recovered"
	EventStudyExecutionFailed  = "study_execution.failed"
	EventWebhookAutoDisabled   = "webhook.auto_disabled"
	EventWebClientsLimited     = "client_analytics.clients_limited"
	defaultDeliveryMaxAttempts = 8
)

// EventsChannel is the PostgreSQL notification channel an event insert
// notifies, with the payload {"id": <event id>, "data_owner_id": <id>}.
const EventsChannel = "fleetgraph_events"

// EventNotice is one notification of the event stream: an event of the
// data owner was committed. Resync (no event) says notifications may have
// been missed before it (the listener has just (re)connected).
type EventNotice struct {
	ID          string `json:"id"`
	DataOwnerID int64  `json:"data_owner_id"`
	Resync      bool   `json:"-"`
}

// ParseEventNotice reads a notification's payload; false when it is not
// one of the trigger's.
func ParseEventNotice(payload string) (EventNotice, bool) {
	var n EventNotice
	if err := json.Unmarshal([]byte(payload), &n); err != nil || n.ID == "" || n.DataOwnerID == 0 {
		return EventNotice{}, false
	}
	return n, true
}

// EventTypes lists every event type, in the catalogue's order.
var EventTypes = []string{EventAnomalyCreated, EventAnomalyResolved, EventClientRegistered, EventClientOffline,
	EventClientOnline, EventClientDisabled, EventHealthWarning, EventHealthCritical, EventHealthRecovered,
	EventStudyExecutionFailed, EventWebhookAutoDisabled, EventWebClientsLimited}

// NewEvent is an event to write with Emit. When it names a client (by id
// or UUID, of the data owner), Emit adds the client to data ("client":
// id, uuid, label, tags) and its tags to what filters match on.
type NewEvent struct {
	Type            string         `json:"type"`
	Data            map[string]any `json:"data"`
	ClientID        *int64         `json:"client_id,omitempty"`
	ClientUUID      *string        `json:"client_uuid,omitempty"`
	MeasurementType *string        `json:"measurement_type,omitempty"`
	Severity        *string        `json:"severity,omitempty"`
	HealthMetrics   []string       `json:"health_metrics,omitempty"`
}

// Event is an events row.
type Event struct {
	Seq             int64           `db:"seq"`
	ID              string          `db:"id"`
	DataOwnerID     int64           `db:"data_owner_id"`
	Type            string          `db:"type"`
	OccurredAt      time.Time       `db:"occurred_at"`
	Data            json.RawMessage `db:"data"`
	ClientID        *int64          `db:"client_id"`
	ClientTags      []string        `db:"client_tags"`
	MeasurementType *string         `db:"measurement_type"`
	Severity        *string         `db:"severity"`
	HealthMetrics   []string        `db:"health_metrics"`
}

const eventCols = `seq, id::text AS id, data_owner_id, type, occurred_at, data, client_id, client_tags,
	measurement_type, severity, health_metrics`

// Emit writes events of the data owner in tx, the transaction of the change
// they tell, so an event exists exactly when its change was committed. In
// the same statement it makes a pending delivery for each active webhook
// endpoint of the data owner whose event_types and filters the event
// passes, and queues a delivery job for each (river, in tx). A filter
// applies to the events that carry its dimension (client tags: events
// naming a client; measurement type; severity; health metrics); others
// pass it.
func (s *Store) Emit(ctx context.Context, tx pgx.Tx, ownerID int64, events ...NewEvent) error {
	if len(events) == 0 {
		return nil
	}
	for i := range events {
		if events[i].Data == nil {
			events[i].Data = map[string]any{}
		}
	}
	in, err := json.Marshal(events)
	if err != nil {
		return fmt.Errorf("emit events: %w", err)
	}
	const q = `WITH input AS (
		SELECT x.*, ord FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS a(e, ord),
			jsonb_to_record(a.e) AS x(type text, data jsonb, client_id bigint, client_uuid uuid,
				measurement_type text, severity text, health_metrics text[])
	), ev AS (
		INSERT INTO events (data_owner_id, type, data, client_id, client_tags, measurement_type, severity, health_metrics)
		SELECT $1, i.type,
			CASE WHEN c.id IS NULL THEN i.data ELSE i.data || jsonb_build_object('client', jsonb_build_object(
				'id', c.id, 'uuid', c.uuid, 'label', c.label, 'tags', coalesce(c.tags, '{}'))) END,
			c.id, coalesce(c.tags, '{}'), i.measurement_type, i.severity, coalesce(i.health_metrics, '{}')
		FROM input i LEFT JOIN clients c ON c.data_owner_id = $1 AND (c.id = i.client_id OR c.uuid = i.client_uuid)
		ORDER BY i.ord
		RETURNING *
	)
	INSERT INTO webhook_deliveries (data_owner_id, webhook_endpoint_id, event_id, event_type, max_attempts,
		payload, payload_format, next_attempt_at)
	SELECT ev.data_owner_id, w.id, ev.id, ev.type, $3,
		jsonb_build_object('id', ev.id::text, 'type', ev.type,
			'timestamp', to_char(ev.occurred_at AT TIME ZONE 'UTC', ` + isotime.MillisSQL + `), 'data', ev.data),
		w.payload_format, now()
	FROM ev JOIN webhook_endpoints w ON w.data_owner_id = ev.data_owner_id
	WHERE w.enabled AND w.auto_disabled_at IS NULL AND ev.type = ANY(w.event_types)
		AND (ev.client_id IS NULL OR jsonb_array_length(coalesce(w.filters->'client_tags', '[]')) = 0
			OR ev.client_tags && ARRAY(SELECT jsonb_array_elements_text(w.filters->'client_tags')))
		AND (ev.measurement_type IS NULL OR jsonb_array_length(coalesce(w.filters->'measurement_types', '[]')) = 0
			OR ev.measurement_type IN (SELECT jsonb_array_elements_text(w.filters->'measurement_types')))
		AND (ev.severity IS NULL OR coalesce(w.filters->>'min_severity', 'warning') = 'warning' OR ev.severity = 'critical')
		AND (ev.health_metrics = '{}' OR jsonb_array_length(coalesce(w.filters->'health_metrics', '[]')) = 0
			OR ev.health_metrics && ARRAY(SELECT jsonb_array_elements_text(w.filters->'health_metrics')))
	ORDER BY ev.seq, w.id
	RETURNING id`
	rows, _ := tx.Query(ctx, q, ownerID, in, defaultDeliveryMaxAttempts)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return mapErr("emit events", err)
	}
	return s.queueDeliveries(ctx, tx, ownerID, ids, time.Time{})
}

// EventsAfter lists the data owner's events after seq, oldest first, at
// most limit (for listeners catching up, and tests).
func (s *Store) EventsAfter(ctx context.Context, ownerID, seq int64, limit int) ([]Event, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+eventCols+` FROM events WHERE data_owner_id = $1 AND seq > $2
		ORDER BY seq LIMIT $3`, ownerID, seq, limit)
	es, err := pgx.CollectRows(rows, pgx.RowToStructByName[Event])
	return es, mapErr("list events", err)
}

// EventByID loads one of the data owner's events (another owner's id is
// not found).
func (s *Store) EventByID(ctx context.Context, ownerID int64, id string) (Event, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+eventCols+` FROM events WHERE data_owner_id = $1 AND id = $2::uuid`, ownerID, id)
	e, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Event])
	return e, mapErr("load event", err)
}
