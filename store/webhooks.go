package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/apierr"
)

// Webhooks: the data owner's outbound endpoints and their deliveries. The
// secret and headers are sealed by the caller (auth.Sealer); the store
// keeps bytes. Deliveries are made by Emit; the attempts are recorded by
// the delivery worker (package webhooks) through RecordAttempt.

// WebhookEndpoint is a webhook_endpoints row, with active computed.
type WebhookEndpoint struct {
	ID                  int64           `db:"id"`
	DataOwnerID         int64           `db:"data_owner_id"`
	Name                string          `db:"name"`
	Description         *string         `db:"description"`
	URL                 string          `db:"url"`
	PayloadFormat       string          `db:"payload_format"`
	FormatOptions       json.RawMessage `db:"format_options"`
	EventTypes          []string        `db:"event_types"`
	Filters             json.RawMessage `db:"filters"`
	Enabled             bool            `db:"enabled"`
	Active              bool            `db:"active"`
	SealedHeaders       []byte          `db:"sealed_headers"`
	SealedSecret        []byte          `db:"sealed_secret"`
	SecretHint          string          `db:"secret_hint"`
	AutoDisabledAt      *time.Time      `db:"auto_disabled_at"`
	AutoDisabledReason  *string         `db:"auto_disabled_reason"`
	ConsecutiveFailures int64           `db:"consecutive_failures"`
	LastDeliveryAt      *time.Time      `db:"last_delivery_at"`
	LastSuccessAt       *time.Time      `db:"last_success_at"`
	LastFailureAt       *time.Time      `db:"last_failure_at"`
	LastResponseStatus  *int64          `db:"last_response_status"`
	LastError           *string         `db:"last_error"`
	CreatedByID         *int64          `db:"created_by_id"`
	CreatedAt           time.Time       `db:"created_at"`
	UpdatedAt           time.Time       `db:"updated_at"`
}

const webhookCols = `id, data_owner_id, name, description, url, payload_format, format_options, event_types, filters,
	enabled, enabled AND auto_disabled_at IS NULL AS active, sealed_headers, sealed_secret, secret_hint,
	auto_disabled_at, auto_disabled_reason, consecutive_failures, last_delivery_at, last_success_at,
	last_failure_at, last_response_status, last_error, created_by_id, created_at, updated_at`

// WebhookInput is what create and update write; nil leaves a column alone
// (on create the column's default applies).
type WebhookInput struct {
	Name           *string
	Description    *string
	SetDescription bool // write Description, null included
	URL            *string
	PayloadFormat  *string
	FormatOptions  json.RawMessage
	EventTypes     []string
	Filters        json.RawMessage
	Enabled        *bool
	SealedHeaders  []byte
	SealedSecret   []byte
	SecretHint     *string
	CreatedByID    *int64
}

// Webhooks lists the data owner's webhooks by id.
func (s *Store) Webhooks(ctx context.Context, ownerID int64) ([]WebhookEndpoint, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT `+webhookCols+` FROM webhook_endpoints WHERE data_owner_id = $1 ORDER BY id`, ownerID)
	ws, err := pgx.CollectRows(rows, pgx.RowToStructByName[WebhookEndpoint])
	return ws, mapErr("list webhooks", err)
}

// Webhook loads one of the data owner's webhooks.
func (s *Store) Webhook(ctx context.Context, ownerID, id int64) (WebhookEndpoint, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT `+webhookCols+` FROM webhook_endpoints WHERE data_owner_id = $1 AND id = $2`, ownerID, id)
	w, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[WebhookEndpoint])
	return w, mapErr("load webhook", err)
}

// WebhooksByIDs loads several of the data owner's webhooks (node ids).
func WebhooksByIDs(ownerID int64, ids []int64) Read[WebhookEndpoint] {
	return Read[WebhookEndpoint]{step: "load webhooks", sql: `SELECT ` + webhookCols + ` FROM webhook_endpoints
		WHERE data_owner_id = $1 AND id = ANY($2)`, args: []any{ownerID, ids}, scan: pgx.RowToStructByName[WebhookEndpoint]}
}

// CreateWebhook inserts a webhook.
func (s *Store) CreateWebhook(ctx context.Context, ownerID int64, in WebhookInput) (WebhookEndpoint, error) {
	const q = `INSERT INTO webhook_endpoints (data_owner_id, name, description, url, payload_format, format_options,
			event_types, filters, enabled, sealed_headers, sealed_secret, secret_hint, created_by_id)
		VALUES ($1, $2, $3, $4, coalesce($5, 'standard'), coalesce($6::jsonb, '{}'), $7, coalesce($8::jsonb, '{}'),
			coalesce($9::boolean, true), $10, $11, $12, (SELECT id FROM users WHERE data_owner_id = $1 AND id = $13::bigint))
		RETURNING ` + webhookCols
	rows, _ := s.pool.Query(ctx, q, ownerID, in.Name, in.Description, in.URL, in.PayloadFormat, jsonArg(in.FormatOptions),
		in.EventTypes, jsonArg(in.Filters), in.Enabled, in.SealedHeaders, in.SealedSecret, in.SecretHint, in.CreatedByID)
	w, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[WebhookEndpoint])
	return w, mapErr("insert webhook", err)
}

// jsonArg passes raw JSON as a jsonb argument, nil as NULL.
func jsonArg(raw json.RawMessage) any {
	if raw == nil {
		return nil
	}
	return string(raw)
}

// UpdateWebhook writes the fields given. Disabling a webhook cancels its
// pending and failed (to be retried) deliveries in the same transaction.
func (s *Store) UpdateWebhook(ctx context.Context, ownerID, id int64, in WebhookInput) (WebhookEndpoint, error) {
	const q = `UPDATE webhook_endpoints SET name = coalesce($3, name),
		description = CASE WHEN $4 THEN $5 ELSE description END, url = coalesce($6, url),
		payload_format = coalesce($7, payload_format), format_options = coalesce($8, format_options),
		event_types = coalesce($9, event_types), filters = coalesce($10, filters), enabled = coalesce($11, enabled),
		sealed_headers = coalesce($12, sealed_headers), updated_at = now()
		WHERE data_owner_id = $1 AND id = $2 RETURNING ` + webhookCols
	var w WebhookEndpoint
	err := s.tx(ctx, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, q, ownerID, id, in.Name, in.SetDescription, in.Description, in.URL, in.PayloadFormat,
			jsonArg(in.FormatOptions), in.EventTypes, jsonArg(in.Filters), in.Enabled, in.SealedHeaders)
		var err error
		if w, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[WebhookEndpoint]); err != nil {
			return mapErr("update webhook", err)
		}
		if !w.Enabled {
			return cancelDeliveries(ctx, tx, ownerID, id)
		}
		return nil
	})
	return w, err
}

// cancelDeliveries cancels the webhook's deliveries that were still to be
// tried (their queued jobs then find nothing to do).
func cancelDeliveries(ctx context.Context, tx pgx.Tx, ownerID, webhookID int64) error {
	const q = `UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL, updated_at = now()
		WHERE data_owner_id = $1 AND webhook_endpoint_id = $2 AND status IN ('pending', 'failed')`
	_, err := tx.Exec(ctx, q, ownerID, webhookID)
	return mapErr("cancel deliveries", err)
}

// DeleteWebhook removes a webhook with its deliveries.
func (s *Store) DeleteWebhook(ctx context.Context, ownerID, id int64) error {
	return s.deleteOwned(ctx, "delete webhook", `DELETE FROM webhook_endpoints WHERE data_owner_id = $1 AND id = $2`, ownerID, id)
}

// EnableWebhook enables a webhook and clears its automatic disabling and
// failure count.
func (s *Store) EnableWebhook(ctx context.Context, ownerID, id int64) (WebhookEndpoint, error) {
	const q = `UPDATE webhook_endpoints SET enabled = true, auto_disabled_at = NULL, auto_disabled_reason = NULL,
		consecutive_failures = 0, failing_since = NULL, updated_at = now()
		WHERE data_owner_id = $1 AND id = $2 RETURNING ` + webhookCols
	rows, _ := s.pool.Query(ctx, q, ownerID, id)
	w, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[WebhookEndpoint])
	return w, mapErr("enable webhook", err)
}

// WebhookDelivery is a webhook_deliveries row.
type WebhookDelivery struct {
	ID                  int64           `db:"id"`
	DataOwnerID         int64           `db:"data_owner_id"`
	WebhookEndpointID   int64           `db:"webhook_endpoint_id"`
	EventID             string          `db:"event_id"`
	EventType           string          `db:"event_type"`
	Status              string          `db:"status"`
	Attempts            int64           `db:"attempts"`
	MaxAttempts         int64           `db:"max_attempts"`
	NextAttemptAt       *time.Time      `db:"next_attempt_at"`
	ResponseStatus      *int64          `db:"response_status"`
	ResponseBody        *string         `db:"response_body"`
	ErrorMessage        *string         `db:"error_message"`
	DurationMs          *int64          `db:"duration_ms"`
	DeliveredAt         *time.Time      `db:"delivered_at"`
	Manual              bool            `db:"manual"`
	Payload             json.RawMessage `db:"payload"`
	PayloadFormat       string          `db:"payload_format"`
	RenderedBody        string          `db:"rendered_body"`
	RenderedContentType string          `db:"rendered_content_type"`
	CreatedAt           time.Time       `db:"created_at"`
	UpdatedAt           time.Time       `db:"updated_at"`
}

const deliveryCols = `id, data_owner_id, webhook_endpoint_id, event_id::text AS event_id, event_type, status, attempts,
	max_attempts, next_attempt_at, response_status, response_body, error_message, duration_ms, delivered_at, manual,
	payload, payload_format, rendered_body, rendered_content_type, created_at, updated_at`

// WebhookDeliveries pages the webhook's deliveries, newest first, and
// counts them all; an unknown webhook (or another data owner's) is not
// found.
func (s *Store) WebhookDeliveries(ctx context.Context, ownerID, webhookID int64, limit, offset int) ([]WebhookDelivery, int64, error) {
	if _, err := s.Webhook(ctx, ownerID, webhookID); err != nil {
		return nil, 0, err
	}
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT `+deliveryCols+` FROM webhook_deliveries
		WHERE data_owner_id = $1 AND webhook_endpoint_id = $2 ORDER BY id DESC LIMIT $3 OFFSET $4`,
		ownerID, webhookID, limit, offset)
	ds, err := pgx.CollectRows(rows, pgx.RowToStructByName[WebhookDelivery])
	if err != nil {
		return nil, 0, mapErr("list webhook deliveries", err)
	}
	var total int64
	err = s.ReadPool(ctx).QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE data_owner_id = $1 AND webhook_endpoint_id = $2`,
		ownerID, webhookID).Scan(&total)
	return ds, total, mapErr("count webhook deliveries", err)
}

// WebhookDeliveryByID loads one delivery of one of the data owner's
// webhooks.
func (s *Store) WebhookDeliveryByID(ctx context.Context, ownerID, webhookID, id int64) (WebhookDelivery, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT `+deliveryCols+` FROM webhook_deliveries
		WHERE data_owner_id = $1 AND webhook_endpoint_id = $2 AND id = $3`, ownerID, webhookID, id)
	d, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[WebhookDelivery])
	return d, mapErr("load webhook delivery", err)
}

// ErrWebhookInactive: a manual delivery to a webhook that is disabled.
var ErrWebhookInactive = &apierr.Error{Class: apierr.ErrConflict,
	Msg: "the webhook is disabled: enable it before sending to it"}

// RedeliverWebhookDelivery makes a new manual delivery of a delivery's
// payload to its webhook, queued at once, and answers it.
func (s *Store) RedeliverWebhookDelivery(ctx context.Context, ownerID, webhookID, id int64) (WebhookDelivery, error) {
	const q = `INSERT INTO webhook_deliveries (data_owner_id, webhook_endpoint_id, event_id, event_type, max_attempts,
			payload, payload_format, manual, next_attempt_at)
		SELECT d.data_owner_id, d.webhook_endpoint_id, d.event_id, d.event_type, $4, d.payload, w.payload_format, true, now()
		FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.webhook_endpoint_id AND w.data_owner_id = $1
		WHERE d.data_owner_id = $1 AND d.webhook_endpoint_id = $2 AND d.id = $3
		RETURNING id`
	return s.manualDelivery(ctx, ownerID, webhookID, q, id, defaultDeliveryMaxAttempts)
}

// TestWebhook makes a manual delivery of a webhook.test event (payload
// built by the caller) to the webhook alone, queued at once.
func (s *Store) TestWebhook(ctx context.Context, ownerID, webhookID int64, eventID string, payload json.RawMessage) (WebhookDelivery, error) {
	const q = `INSERT INTO webhook_deliveries (data_owner_id, webhook_endpoint_id, event_id, event_type, max_attempts,
			payload, payload_format, manual, next_attempt_at)
		SELECT $1, w.id, $3::uuid, $4::jsonb->>'type', 1, $4, w.payload_format, true, now()
		FROM webhook_endpoints w WHERE w.data_owner_id = $1 AND w.id = $2
		RETURNING id`
	return s.manualDelivery(ctx, ownerID, webhookID, q, eventID, string(payload))
}

// manualDelivery runs an insert of one manual delivery (arguments $1, $2
// the owner and webhook, args follow), refused when the webhook is not
// active, and queues its first attempt in the same transaction.
func (s *Store) manualDelivery(ctx context.Context, ownerID, webhookID int64, q string, args ...any) (WebhookDelivery, error) {
	var id int64
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var active bool
		err := tx.QueryRow(ctx, `SELECT enabled AND auto_disabled_at IS NULL FROM webhook_endpoints
			WHERE data_owner_id = $1 AND id = $2 FOR SHARE`, ownerID, webhookID).Scan(&active)
		if err != nil {
			return mapErr("load webhook", err)
		}
		if !active {
			return ErrWebhookInactive
		}
		if err := tx.QueryRow(ctx, q, append([]any{ownerID, webhookID}, args...)...).Scan(&id); err != nil {
			return mapErr("insert manual delivery", err)
		}
		return s.queueDeliveries(ctx, tx, ownerID, []int64{id}, time.Time{})
	})
	if err != nil {
		return WebhookDelivery{}, err
	}
	return s.WebhookDeliveryByID(ctx, ownerID, webhookID, id)
}

// DeliveryTarget is what one attempt of a delivery needs: the delivery and
// its webhook.
type DeliveryTarget struct {
	Delivery WebhookDelivery
	Webhook  WebhookEndpoint
}

// DeliveryTarget loads a delivery of the data owner with its webhook.
func (s *Store) DeliveryTarget(ctx context.Context, ownerID, deliveryID int64) (DeliveryTarget, error) {
	var t DeliveryTarget
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT `+deliveryCols+` FROM webhook_deliveries WHERE data_owner_id = $1 AND id = $2`,
		ownerID, deliveryID)
	d, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[WebhookDelivery])
	if err != nil {
		return t, mapErr("load delivery", err)
	}
	w, err := s.Webhook(ctx, ownerID, d.WebhookEndpointID)
	return DeliveryTarget{Delivery: d, Webhook: w}, err
}

// Automatic disabling (docs/design.md "Webhooks").
const (
	// DisableAfterFailures consecutive failed attempts disable a webhook.
	DisableAfterFailures = 50
	// DisableAfterFailingFor of only failed attempts disables a webhook.
	DisableAfterFailingFor = 5 * 24 * time.Hour
)

// Reasons of automatic disabling.
const (
	ReasonGone        = "the endpoint answered 410 Gone"
	ReasonFailures    = "50 consecutive failed attempts"
	ReasonFailingDays = "only failed attempts for 5 days"
)

// Attempt is the outcome of one attempt of a delivery.
type Attempt struct {
	DataOwnerID, DeliveryID int64
	Number                  int // the attempt, from 1
	Succeeded               bool
	Gone                    bool // the receiver answered 410
	ResponseStatus          *int
	ResponseBody            *string
	Error                   *string
	Duration                time.Duration
	RenderedBody            string
	RenderedContentType     string
	// RetryAt is when the next attempt is due; nil when none is left.
	RetryAt *time.Time
}

// RecordAttempt records an attempt on its delivery and webhook in one
// transaction, and in it calls then with whether the next attempt is to be
// queued (false when the attempt succeeded, none is left, or the webhook
// was disabled by it): the worker completes its job and queues the next
// one there. An attempt that is not the delivery's next one (a job run
// twice, a delivery cancelled meanwhile) records nothing. A failure that
// makes the webhook's failures 50 in a row, or its failures span 5 days,
// or a 410, disables the webhook (auto_disabled_at and _reason), cancels
// its deliveries still to be tried and emits webhook.auto_disabled.
func (s *Store) RecordAttempt(ctx context.Context, a Attempt, then func(tx pgx.Tx, retry bool) error) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		status := "exhausted"
		switch {
		case a.Succeeded:
			status = "succeeded"
		case a.RetryAt != nil:
			status = "failed"
		}
		ms := a.Duration.Milliseconds()
		const upd = `UPDATE webhook_deliveries SET attempts = $3, status = $4, response_status = $5, response_body = $6,
			error_message = $7, duration_ms = $8, rendered_body = $9, rendered_content_type = $10,
			next_attempt_at = $11, delivered_at = CASE WHEN $4 = 'succeeded' THEN now() ELSE delivered_at END,
			updated_at = now()
			WHERE data_owner_id = $1 AND id = $2 AND attempts = $3 - 1 AND status IN ('pending', 'failed')
			RETURNING webhook_endpoint_id`
		var webhookID int64
		err := tx.QueryRow(ctx, upd, a.DataOwnerID, a.DeliveryID, a.Number, status, a.ResponseStatus, a.ResponseBody,
			a.Error, ms, a.RenderedBody, a.RenderedContentType, a.RetryAt).Scan(&webhookID)
		if errors.Is(err, pgx.ErrNoRows) {
			return then(tx, false) // not this attempt's turn: nothing to record
		}
		if err != nil {
			return mapErr("record attempt", err)
		}
		reason, err := recordOnWebhook(ctx, tx, a, webhookID)
		if err != nil {
			return err
		}
		if reason == "" {
			return then(tx, a.RetryAt != nil && !a.Succeeded)
		}
		if err := s.autoDisable(ctx, tx, a.DataOwnerID, webhookID, reason); err != nil {
			return err
		}
		return then(tx, false)
	})
}

// recordOnWebhook keeps the webhook's counters and last_* fields and
// answers why the attempt disables it ("" when it does not).
func recordOnWebhook(ctx context.Context, tx pgx.Tx, a Attempt, webhookID int64) (string, error) {
	const q = `UPDATE webhook_endpoints SET last_delivery_at = now(), last_response_status = $3, last_error = $4,
		last_success_at = CASE WHEN $5 THEN now() ELSE last_success_at END,
		last_failure_at = CASE WHEN $5 THEN last_failure_at ELSE now() END,
		consecutive_failures = CASE WHEN $5 THEN 0 ELSE consecutive_failures + 1 END,
		failing_since = CASE WHEN $5 THEN NULL ELSE coalesce(failing_since, now()) END
		WHERE data_owner_id = $1 AND id = $2
		RETURNING consecutive_failures, failing_since <= now() - $6::interval, auto_disabled_at IS NOT NULL`
	var failures int
	var longFailing *bool
	var disabled bool
	err := tx.QueryRow(ctx, q, a.DataOwnerID, webhookID, a.ResponseStatus, a.Error, a.Succeeded,
		DisableAfterFailingFor).Scan(&failures, &longFailing, &disabled)
	if err != nil {
		return "", mapErr("record attempt on webhook", err)
	}
	switch {
	case a.Succeeded || disabled:
		return "", nil
	case a.Gone:
		return ReasonGone, nil
	case failures >= DisableAfterFailures:
		return ReasonFailures, nil
	case longFailing != nil && *longFailing:
		return ReasonFailingDays, nil
	}
	return "", nil
}

// autoDisable disables a webhook automatically, cancels what it had still
// to deliver and emits webhook.auto_disabled (to the data owner's other
// webhooks that subscribe to it).
func (s *Store) autoDisable(ctx context.Context, tx pgx.Tx, ownerID, webhookID int64, reason string) error {
	const q = `UPDATE webhook_endpoints SET auto_disabled_at = now(), auto_disabled_reason = $3, updated_at = now()
		WHERE data_owner_id = $1 AND id = $2 RETURNING name, url, consecutive_failures, auto_disabled_at`
	var name, url string
	var failures int
	var at time.Time
	if err := tx.QueryRow(ctx, q, ownerID, webhookID, reason).Scan(&name, &url, &failures, &at); err != nil {
		return mapErr("disable webhook", err)
	}
	if err := cancelDeliveries(ctx, tx, ownerID, webhookID); err != nil {
		return err
	}
	return s.Emit(ctx, tx, ownerID, NewEvent{Type: EventWebhookAutoDisabled, Data: map[string]any{
		"webhook": map[string]any{"id": webhookID, "name": name, "url": url},
		"reason":  reason, "consecutive_failures": failures, "auto_disabled_at": at.UTC()}})
}

// CancelDelivery marks a delivery cancelled (its webhook is disabled or
// gone) and calls then in the same transaction.
func (s *Store) CancelDelivery(ctx context.Context, ownerID, deliveryID int64, then func(tx pgx.Tx) error) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		const q = `UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL, updated_at = now()
			WHERE data_owner_id = $1 AND id = $2 AND status IN ('pending', 'failed')`
		if _, err := tx.Exec(ctx, q, ownerID, deliveryID); err != nil {
			return mapErr("cancel delivery", err)
		}
		return then(tx)
	})
}

// String names an attempt in logs.
func (a Attempt) String() string {
	return fmt.Sprintf("delivery %d attempt %d", a.DeliveryID, a.Number)
}
