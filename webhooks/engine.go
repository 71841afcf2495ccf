package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// Schedule is when the attempts of a delivery are made (docs/design.md
// "Webhooks"): Schedule[n] is the wait before attempt n+1, so at most
// len(Schedule) attempts: at once, then after 5 s, 5 min, 30 min, 2 h, 5 h,
// 10 h and 10 h.
var Schedule = []time.Duration{0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour, 10 * time.Hour}

// Defaults of Config (the attempt's time limit is limits.WebhookTimeout).
const (
	DefaultOfflineSweep = time.Minute
	// maxRetryAfter caps the wait a receiver's Retry-After asks for.
	maxRetryAfter = 24 * time.Hour
)

// Config tunes the engine.
type Config struct {
	Store  *store.Store
	Sealer *auth.Sealer
	Logger *slog.Logger
	// AllowCIDRs are private ranges deliveries may go to (operator
	// setting FLEETGRAPH_WEBHOOK_ALLOW_CIDRS; tests name 127.0.0.1/32).
	AllowCIDRs []netip.Prefix
	// Timeout of one attempt (0: limits.WebhookTimeout).
	Timeout time.Duration
	// Schedule overrides the retry schedule (tests); nil is Schedule.
	Schedule []time.Duration
}

// Engine holds the workers of the delivery attempts and of the offline
// sweep (OfflineArgs); the process's River client (package jobs) runs them.
type Engine struct {
	cfg  Config
	http *http.Client
}

// New builds the engine; Register hands its workers to River.
func New(cfg Config) *Engine {
	if cfg.Timeout <= 0 {
		cfg.Timeout = limits.WebhookTimeout
	}
	if cfg.Schedule == nil {
		cfg.Schedule = Schedule
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Engine{cfg: cfg, http: NewHTTPClient(cfg.Timeout, cfg.AllowCIDRs)}
}

// JobTimeout bounds one delivery job: the attempt and its bookkeeping. A
// process's RescueAfter (package jobs) must exceed it.
func (e *Engine) JobTimeout() time.Duration { return e.cfg.Timeout + 5*time.Second }

// Register adds the engine's workers to w.
func (e *Engine) Register(w *river.Workers) error {
	if err := river.AddWorkerSafely(w, &deliverWorker{e: e}); err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	if err := river.AddWorkerSafely(w, &offlineWorker{e: e}); err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	return nil
}

// deliverWorker makes one attempt of a delivery.
type deliverWorker struct {
	river.WorkerDefaults[store.DeliverArgs]
	e *Engine
}

// Timeout bounds the job (River's default is a minute).
func (w *deliverWorker) Timeout(*river.Job[store.DeliverArgs]) time.Duration { return w.e.JobTimeout() }

func (w *deliverWorker) Work(ctx context.Context, job *river.Job[store.DeliverArgs]) error {
	return w.e.attempt(ctx, job)
}

// complete marks the job done in tx (with the delivery's change).
func complete[T river.JobArgs](ctx context.Context, tx pgx.Tx, job *river.Job[T]) error {
	_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
	return err
}

// attempt makes attempt job.Args.Attempt of the delivery, unless the
// delivery moved on (then the job is a leftover and does nothing).
func (e *Engine) attempt(ctx context.Context, job *river.Job[store.DeliverArgs]) error {
	a := job.Args
	t, err := e.cfg.Store.DeliveryTarget(ctx, a.DataOwnerID, a.DeliveryID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // the webhook was deleted with its deliveries
	}
	if err != nil {
		return err
	}
	d, w := t.Delivery, t.Webhook
	if (d.Status != "pending" && d.Status != "failed") || d.Attempts != int64(a.Attempt-1) {
		return nil
	}
	if !w.Active {
		return e.cfg.Store.CancelDelivery(ctx, a.DataOwnerID, a.DeliveryID, func(tx pgx.Tx) error {
			return complete(ctx, tx, job)
		})
	}
	req, err := e.request(t)
	if err != nil {
		return err
	}
	now := time.Now()
	o := send(ctx, e.http, req, now)
	rec := store.Attempt{DataOwnerID: a.DataOwnerID, DeliveryID: a.DeliveryID, Number: a.Attempt,
		Succeeded: o.succeeded(), Gone: o.Status != nil && *o.Status == http.StatusGone,
		ResponseStatus: o.Status, ResponseBody: o.Body, Error: o.Err, Duration: o.Duration,
		RenderedBody: string(req.Body), RenderedContentType: req.ContentType}
	if !rec.Succeeded && a.Attempt < int(d.MaxAttempts) && a.Attempt < len(e.cfg.Schedule) {
		wait := max(e.cfg.Schedule[a.Attempt], min(o.RetryAfter, maxRetryAfter))
		rec.RetryAt = ptr(time.Now().Add(wait))
	}
	return e.cfg.Store.RecordAttempt(ctx, rec, func(tx pgx.Tx, retry bool) error {
		if err := complete(ctx, tx, job); err != nil {
			return err
		}
		if !retry {
			return nil
		}
		next := store.DeliverArgs{DeliveryID: a.DeliveryID, DataOwnerID: a.DataOwnerID, Attempt: a.Attempt + 1}
		opts := &river.InsertOpts{MaxAttempts: job.MaxAttempts}
		if rec.RetryAt.After(time.Now()) { // else due now: available at once, not left to River's scheduler
			opts.ScheduledAt = *rec.RetryAt
		}
		client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
		if err != nil {
			return err
		}
		_, err = client.InsertTx(ctx, tx, next, opts)
		return err
	})
}

// request builds the signed request of a delivery: the payload rendered,
// the webhook's headers and secret opened. The message id (webhook-id) is
// the event's id, the same on every attempt and redelivery.
func (e *Engine) request(t store.DeliveryTarget) (request, error) {
	var opts model.WebhookFormatOptions
	_ = json.Unmarshal(t.Webhook.FormatOptions, &opts) // written validated
	body, ct, err := Render(t.Delivery.PayloadFormat, opts, t.Delivery.Payload)
	if err != nil {
		return request{}, err
	}
	secret, err := e.cfg.Sealer.Open(t.Webhook.SealedSecret)
	if err != nil {
		return request{}, fmt.Errorf("open webhook secret: %w", err)
	}
	headers := map[string]string{}
	if len(t.Webhook.SealedHeaders) > 0 {
		plain, err := e.cfg.Sealer.Open(t.Webhook.SealedHeaders)
		if err != nil {
			return request{}, fmt.Errorf("open webhook headers: %w", err)
		}
		if err := json.Unmarshal([]byte(plain), &headers); err != nil {
			return request{}, fmt.Errorf("read webhook headers: %w", err)
		}
	}
	return request{URL: t.Webhook.URL, MsgID: "msg_" + t.Delivery.EventID, Secret: secret, ContentType: ct,
		Headers: headers, Body: body}, nil
}

// OfflineArgs is the periodic job that marks clients offline (every
// DefaultOfflineSweep).
type OfflineArgs struct{}

// Kind names the job in river_job.
func (OfflineArgs) Kind() string { return "client_offline_sweep" }

type offlineWorker struct {
	river.WorkerDefaults[OfflineArgs]
	e *Engine
}

func (w *offlineWorker) Work(ctx context.Context, _ *river.Job[OfflineArgs]) error {
	n, err := w.e.cfg.Store.MarkOfflineClients(ctx)
	if n > 0 {
		w.e.cfg.Logger.Info("clients went offline", "count", n)
	}
	return err
}
