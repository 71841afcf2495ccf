package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/fleetgraph/fleetgraph/store"
)

// MailWorker sends the outbox's mail through a Mailer, one River job
// (store.EmailArgs) per row, at least once: the row is marked sent after
// the send, so a process that dies in between sends it again when River
// rescues the job (with the same Message-ID). A failed send is retried by
// River after Retry's pause, up to store.EmailMaxAttempts attempts; a row
// whose template no version of the server knows is given up at once.
type MailWorker struct {
	river.WorkerDefaults[store.EmailArgs]
	Store  *store.Store
	Mailer *Mailer
	Log    *slog.Logger
	// Retry is the pause after failed attempt n (nil: DefaultRetry).
	Retry func(attempt int) time.Duration
	// Host names this server in Message-IDs (empty: "fleetgraph").
	Host string
}

// DefaultRetry waits 1 minute after the first failure, doubling up to 4
// hours: ten attempts span about a day.
func DefaultRetry(attempt int) time.Duration {
	d := time.Minute << min(attempt-1, 8)
	return min(d, 4*time.Hour)
}

// NextRetry is when River tries a failed job again.
func (w *MailWorker) NextRetry(job *river.Job[store.EmailArgs]) time.Time {
	retry := w.Retry
	if retry == nil {
		retry = DefaultRetry
	}
	return time.Now().Add(retry(job.Attempt))
}

// Timeout bounds one attempt: one SMTP conversation.
func (w *MailWorker) Timeout(*river.Job[store.EmailArgs]) time.Duration {
	return sendTimeout + 5*time.Second
}

// Work makes one attempt of the job's mail.
func (w *MailWorker) Work(ctx context.Context, job *river.Job[store.EmailArgs]) error {
	a := job.Args
	e, err := w.Store.OutboxEmail(ctx, a.DataOwnerID, a.OutboxID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // gone with its data owner or user
	}
	if err != nil {
		return err
	}
	if e.SentAt != nil || e.GivenUpAt != nil {
		return nil
	}
	sendErr := w.send(ctx, e)
	if sendErr == nil {
		return w.Store.EmailSent(ctx, a.DataOwnerID, a.OutboxID)
	}
	if ctx.Err() != nil {
		return sendErr // stopping: River tries again
	}
	unknown := errors.Is(sendErr, errUnknownTemplate)
	giveUp := unknown || job.Attempt >= job.MaxAttempts
	w.Log.Warn("e-mail not sent", "outbox_id", e.ID, "template", e.Template, "attempt", job.Attempt,
		"given_up", giveUp, "err", sendErr)
	if err := w.Store.EmailFailed(ctx, a.DataOwnerID, a.OutboxID, sendErr.Error(), giveUp); err != nil {
		return err
	}
	if unknown {
		return river.JobCancel(sendErr)
	}
	return sendErr
}

func (w *MailWorker) send(ctx context.Context, e store.OutboxEmail) error {
	subject, body, err := render(e.Template, e.Data)
	if err != nil {
		return err
	}
	host := w.Host
	if host == "" {
		host = "fleetgraph"
	}
	return w.Mailer.Send(ctx, Message{To: e.Recipient, Subject: subject, Body: body,
		MessageID: fmt.Sprintf("outbox-%d.%d@%s", e.ID, e.CreatedAt.Unix(), host)})
}
