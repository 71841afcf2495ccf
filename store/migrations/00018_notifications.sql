-- +goose Up
-- The outbox (email_outbox, 00001) becomes a durable queue that package
-- notify drains at least once: what to render (template + data), how often
-- it was tried, when it may be tried next (also the lease of a sender that
-- claimed it) and why it failed last; given_up_at after the last attempt.
ALTER TABLE email_outbox
    ADD COLUMN data             jsonb NOT NULL DEFAULT '{}',
    ADD COLUMN attempts         integer NOT NULL DEFAULT 0,
    ADD COLUMN next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN last_error       text,
    ADD COLUMN given_up_at      timestamptz;
CREATE INDEX email_outbox_due ON email_outbox (next_attempt_at, id)
    WHERE sent_at IS NULL AND given_up_at IS NULL;

-- +goose Down
DROP INDEX email_outbox_due;
ALTER TABLE email_outbox DROP COLUMN data, DROP COLUMN attempts, DROP COLUMN next_attempt_at,
    DROP COLUMN last_error, DROP COLUMN given_up_at;
