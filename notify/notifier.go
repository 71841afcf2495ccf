package notify

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/fleetgraph/fleetgraph/store"
)

// Notifier turns the queued events into users' mail (immediate mails and
// digest items, store.FanOutNotifications) and queues each user's anomaly
// digest when its schedule says (digestSchedule). What it queues goes out
// through the outbox (MailWorker). It runs as River's periodic job
// RoundArgs, on one process at a time; should two rounds meet, each queued
// event is taken by one, and a digest moves its items in one transaction.
type Notifier struct {
	Store *store.Store
	Log   *slog.Logger
	// Now is the clock of digest schedules (nil: time.Now).
	Now func() time.Time
}

// RoundEvery is how often the periodic job RoundArgs runs.
const RoundEvery = 5 * time.Second

// fanOutBatch is how many queued events one transaction handles.
const fanOutBatch = 200

// RoundArgs is the periodic job of one Round.
type RoundArgs struct{}

// Kind names the job in river_job.
func (RoundArgs) Kind() string { return "notification_round" }

// RoundWorker works RoundArgs.
type RoundWorker struct {
	river.WorkerDefaults[RoundArgs]
	Notifier *Notifier
}

// Work makes one round.
func (w *RoundWorker) Work(ctx context.Context, _ *river.Job[RoundArgs]) error {
	return w.Notifier.Round(ctx)
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
