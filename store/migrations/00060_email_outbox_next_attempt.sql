-- +goose Up
-- E-mail is a River job since the outbox's pollers went: River keeps each
-- job's next attempt, and nothing reads email_outbox.next_attempt_at or the
-- index of due rows built on it any more.
DROP INDEX email_outbox_due;
ALTER TABLE email_outbox DROP COLUMN next_attempt_at;

-- +goose Down
ALTER TABLE email_outbox ADD COLUMN next_attempt_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX email_outbox_due ON email_outbox (next_attempt_at, id)
    WHERE sent_at IS NULL AND given_up_at IS NULL;
