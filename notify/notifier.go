package notify

import (
	"context"
	"log/slog"
	"time"

	"github.com/fleetgraph/fleetgraph/store"
)

// Notifier turns the queued events into users' mail (immediate mails and
// digest items, store.FanOutNotifications) and queues each user's anomaly
// digest when its schedule says (digestSchedule). What it queues goes out
// through the outbox (Sender). Several notifiers may run over one
// database: each queued event is taken by one, and a digest moves its
// items in one transaction.
type Notifier struct {
	Store *store.Store
	Log   *slog.Logger
	// Poll is the pause between rounds (0: DefaultPoll).
	Poll time.Duration
	// Now is the clock of digest schedules (nil: time.Now).
	Now func() time.Time
}

// fanOutBatch is how many queued events one transaction handles.
const fanOutBatch = 200

// Run works until ctx ends.
func (n *Notifier) Run(ctx context.Context) {
	poll := n.Poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	for {
		if err := n.Round(ctx); err != nil && ctx.Err() == nil {
			n.Log.Warn("user notifications: a round failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(poll):
		}
	}
}

// Round fans out every queued event, then queues the digests that are due.
func (n *Notifier) Round(ctx context.Context) error {
	for {
		f, err := n.Store.FanOutNotifications(ctx, fanOutBatch)
		if err != nil {
			return err
		}
		if f.Events < fanOutBatch {
			break
		}
	}
	return n.digests(ctx)
}

func (n *Notifier) digests(ctx context.Context) error {
	now := time.Now()
	if n.Now != nil {
		now = n.Now()
	}
	pending, err := n.Store.PendingDigests(ctx)
	if err != nil {
		return err
	}
	for _, p := range pending {
		from := p.Oldest
		if p.LastDigestAt != nil {
			from = *p.LastDigestAt
		}
		if now.Before(parseDigestSchedule(p.Config).next(from)) {
			continue
		}
		if _, err := n.Store.QueueDigest(ctx, p.DataOwnerID, p.UserID); err != nil {
			return err
		}
	}
	return nil
}
