package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/fleetgraph/fleetgraph/store"
)

// Sender drains the e-mail outbox through a Mailer, at least once: a row
// is claimed with a lease, sent, then marked sent; a process that dies in
// between leaves the row to be claimed again when the lease ends. Failed
// sends are retried with growing pauses up to MaxAttempts. Several senders
// (processes) may run over one database; each row goes to one at a time.
type Sender struct {
	Store  *store.Store
	Mailer *Mailer
	Log    *slog.Logger
	// Poll is the pause between looks at the outbox when it is empty
	// (0: DefaultPoll).
	Poll time.Duration
	// Retry is the pause after failed attempt n (nil: DefaultRetry).
	Retry func(attempt int) time.Duration
	// MaxAttempts is when a row is given up (0: DefaultMaxAttempts).
	MaxAttempts int
	// Host names this server in Message-IDs (empty: "fleetgraph").
	Host string
}

// Defaults of Sender.
const (
	DefaultPoll        = 5 * time.Second
	DefaultMaxAttempts = 10
	// lease is how long a claimed row stays with its sender: beyond one
	// SMTP conversation (sendTimeout).
	lease = 2 * sendTimeout
)

// DefaultRetry waits 1 minute after the first failure, doubling up to 4
// hours: ten attempts span about a day.
func DefaultRetry(attempt int) time.Duration {
	d := time.Minute << min(attempt-1, 8)
	return min(d, 4*time.Hour)
}

// Run sends due mail until ctx ends.
func (s *Sender) Run(ctx context.Context) {
	poll := s.Poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	for {
		if _, err := s.SendDue(ctx); err != nil && ctx.Err() == nil {
			s.Log.Warn("e-mail outbox: reading it failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(poll):
		}
	}
}

// SendDue sends every row due now and answers how many went out.
func (s *Sender) SendDue(ctx context.Context) (int, error) {
	sent := 0
	for ctx.Err() == nil {
		e, err := s.Store.ClaimEmail(ctx, lease)
		if errors.Is(err, store.ErrNotFound) {
			return sent, nil
		}
		if err != nil {
			return sent, err
		}
		if err := s.send(ctx, e); err != nil {
			if ctx.Err() != nil {
				return sent, ctx.Err() // the lease brings it back
			}
			if err := s.failed(ctx, e, err); err != nil {
				return sent, err
			}
			continue
		}
		sent++
		if err := s.Store.EmailSent(ctx, e.ID); err != nil {
			return sent, err
		}
	}
	return sent, ctx.Err()
}

func (s *Sender) send(ctx context.Context, e store.OutboxEmail) error {
	subject, body, err := render(e.Template, e.Data)
	if err != nil {
		return err
	}
	host := s.Host
	if host == "" {
		host = "fleetgraph"
	}
	return s.Mailer.Send(ctx, Message{To: e.Recipient, Subject: subject, Body: body,
		MessageID: fmt.Sprintf("outbox-%d.%d@%s", e.ID, e.CreatedAt.Unix(), host)})
}

// failed records a failed attempt, giving the row up after the last one
// or when no attempt can succeed.
func (s *Sender) failed(ctx context.Context, e store.OutboxEmail, sendErr error) error {
	maxAttempts, retry := s.MaxAttempts, s.Retry
	if maxAttempts <= 0 {
		maxAttempts = DefaultMaxAttempts
	}
	if retry == nil {
		retry = DefaultRetry
	}
	giveUp := e.Attempts >= maxAttempts || errors.Is(sendErr, errUnknownTemplate)
	s.Log.Warn("e-mail not sent", "outbox_id", e.ID, "template", e.Template, "attempt", e.Attempts,
		"given_up", giveUp, "err", sendErr)
	return s.Store.EmailFailed(ctx, e.ID, sendErr.Error(), retry(e.Attempts), giveUp)
}
