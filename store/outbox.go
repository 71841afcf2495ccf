package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// The e-mail outbox (email_outbox) holds the mail the server owes: a row
// is written in the transaction of the change that owes it, together with
// the River job that sends it (EmailArgs, worked by package notify), so
// that the mail is neither lost nor sent for a change that was rolled
// back. River retries a failed send with its backoff and rescues the job
// of a process that died mid-send (at least once; the Message-ID stays
// the same). The row records the attempts, the last error and when it was
// sent or given up.

// QueueEmail is the River queue of the mail jobs: a process works it only
// when it has a mail server to send through.
const QueueEmail = "email"

// EmailMaxAttempts is how often a mail is tried before it is given up.
const EmailMaxAttempts = 10

// EmailArgs is the River job that sends outbox row OutboxID.
type EmailArgs struct {
	OutboxID    int64 `json:"outbox_id"`
	DataOwnerID int64 `json:"data_owner_id"`
}

// Kind names the job in river_job.
func (EmailArgs) Kind() string { return "email" }

// InsertOpts puts the job on QueueEmail.
func (EmailArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueEmail, MaxAttempts: EmailMaxAttempts}
}

// OutboxEmail is an outbox row.
type OutboxEmail struct {
	ID          int64           `db:"id"`
	DataOwnerID int64           `db:"data_owner_id"`
	Template    string          `db:"template"`
	Recipient   string          `db:"recipient"`
	Data        json.RawMessage `db:"data"`
	// Attempts counts the attempts made before this one.
	Attempts  int        `db:"attempts"`
	CreatedAt time.Time  `db:"created_at"`
	SentAt    *time.Time `db:"sent_at"`
	GivenUpAt *time.Time `db:"given_up_at"`
}

// OutboxEmail reads the data owner's outbox row id.
func (s *Store) OutboxEmail(ctx context.Context, ownerID, id int64) (OutboxEmail, error) {
	rows, _ := s.pool.Query(ctx, `SELECT id, data_owner_id, template, recipient, data, attempts, created_at, sent_at, given_up_at
		FROM email_outbox WHERE data_owner_id = $1 AND id = $2`, ownerID, id)
	e, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[OutboxEmail])
	return e, mapErr("read outbox e-mail", err)
}

// EmailSent marks the data owner's row id sent (its attempt counted).
func (s *Store) EmailSent(ctx context.Context, ownerID, id int64) error {
	_, err := s.pool.Exec(ctx, `UPDATE email_outbox SET sent_at = now(), last_error = NULL, attempts = attempts + 1
		WHERE data_owner_id = $1 AND id = $2`, ownerID, id)
	return mapErr("mark e-mail sent", err)
}

// EmailFailed records a failed attempt of the data owner's row id, given
// up when giveUp.
func (s *Store) EmailFailed(ctx context.Context, ownerID, id int64, reason string, giveUp bool) error {
	_, err := s.pool.Exec(ctx, `UPDATE email_outbox SET last_error = $3, attempts = attempts + 1,
		given_up_at = CASE WHEN $4 THEN now() END
		WHERE data_owner_id = $1 AND id = $2`, ownerID, id, reason, giveUp)
	return mapErr("record e-mail failure", err)
}

// queueEmail adds a mail to the outbox inside tx (the change that owes it).
func (s *Store) queueEmail(ctx context.Context, tx pgx.Tx, ownerID int64, userID *int64, template, recipient string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	var id int64
	err = tx.QueryRow(ctx, `INSERT INTO email_outbox (data_owner_id, user_id, template, recipient, data)
		VALUES ($1, $2, $3, $4, $5) RETURNING id`, ownerID, userID, template, recipient, b).Scan(&id)
	if err != nil {
		return mapErr("queue e-mail "+template, err)
	}
	return s.queueEmailJobs(ctx, tx, []int64{ownerID}, []int64{id})
}

// queueEmailJobs inserts in tx the jobs that send outbox rows ids (of the
// data owners owners, pairwise).
func (s *Store) queueEmailJobs(ctx context.Context, tx pgx.Tx, owners, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, len(ids))
	for i, id := range ids {
		params[i] = river.InsertManyParams{Args: EmailArgs{OutboxID: id, DataOwnerID: owners[i]}}
	}
	if _, err := s.jobs.InsertManyTx(ctx, tx, params); err != nil {
		return fmt.Errorf("queue e-mail jobs: %w", err)
	}
	return nil
}

// QueueWaitingMail queues a job for every outbox row that waits without
// one (queued before the outbox was worked by River, or left by a job
// that River discarded without giving the row up) and answers how many.
func (s *Store) QueueWaitingMail(ctx context.Context) (int, error) {
	var n int
	err := s.tx(ctx, func(tx pgx.Tx) error {
		const q = `SELECT coalesce(array_agg(o.data_owner_id ORDER BY o.id), '{}'), coalesce(array_agg(o.id ORDER BY o.id), '{}')
			FROM email_outbox o
			WHERE o.sent_at IS NULL AND o.given_up_at IS NULL AND NOT EXISTS (
				SELECT 1 FROM river_job j WHERE j.kind = 'email' AND j.args @> jsonb_build_object('outbox_id', o.id)
					AND j.state NOT IN ('completed', 'cancelled', 'discarded'))`
		var owners, ids []int64
		if err := tx.QueryRow(ctx, q).Scan(&owners, &ids); err != nil {
			return mapErr("find waiting e-mail", err)
		}
		n = len(ids)
		return s.queueEmailJobs(ctx, tx, owners, ids)
	})
	return n, err
}
