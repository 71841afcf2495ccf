package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
)

// The e-mail outbox (email_outbox) is a durable queue: rows are written in
// the transaction of the change that owes the mail, and package notify's
// sender claims them one at a time across every data owner (a background
// worker, like the indexer; each row names its data owner). A claim is a
// lease: the row's next_attempt_at moves past the time the send may take,
// so that a sender that dies mid-send leaves the row to be claimed again
// (at least once; the Message-ID stays the same).

// OutboxEmail is a claimed outbox row.
type OutboxEmail struct {
	ID          int64           `db:"id"`
	DataOwnerID int64           `db:"data_owner_id"`
	Template    string          `db:"template"`
	Recipient   string          `db:"recipient"`
	Data        json.RawMessage `db:"data"`
	// Attempts counts this one.
	Attempts  int       `db:"attempts"`
	CreatedAt time.Time `db:"created_at"`
}

// ClaimEmail claims the oldest due outbox row for lease (its attempt
// counted); ErrNotFound when none is due.
func (s *Store) ClaimEmail(ctx context.Context, lease time.Duration) (OutboxEmail, error) {
	const q = `UPDATE email_outbox SET attempts = attempts + 1, next_attempt_at = now() + $1::interval
		WHERE id = (SELECT id FROM email_outbox
			WHERE sent_at IS NULL AND given_up_at IS NULL AND next_attempt_at <= now()
			ORDER BY next_attempt_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING id, data_owner_id, template, recipient, data, attempts, created_at`
	rows, _ := s.pool.Query(ctx, q, lease)
	e, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[OutboxEmail])
	return e, mapErr("claim outbox e-mail", err)
}

// EmailSent marks a claimed row sent.
func (s *Store) EmailSent(ctx context.Context, id int64) error {
	_, err := s.pool.Exec(ctx, `UPDATE email_outbox SET sent_at = now(), last_error = NULL WHERE id = $1`, id)
	return mapErr("mark e-mail sent", err)
}

// EmailFailed records a failed attempt: the row is due again after retryIn,
// or given up when giveUp.
func (s *Store) EmailFailed(ctx context.Context, id int64, reason string, retryIn time.Duration, giveUp bool) error {
	const q = `UPDATE email_outbox SET last_error = $2, next_attempt_at = now() + $3::interval,
		given_up_at = CASE WHEN $4 THEN now() END
		WHERE id = $1`
	_, err := s.pool.Exec(ctx, q, id, reason, retryIn, giveUp)
	return mapErr("record e-mail failure", err)
}

// queueEmail adds a mail to the outbox inside tx (the change that owes it).
func queueEmail(ctx context.Context, tx pgx.Tx, ownerID int64, userID *int64, template, recipient string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO email_outbox (data_owner_id, user_id, template, recipient, data)
		VALUES ($1, $2, $3, $4, $5)`, ownerID, userID, template, recipient, b)
	return mapErr("queue e-mail "+template, err)
}
