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

-- Events users may be e-mailed about wait in notification_queue until
-- package notify fans them out to the users whose notification_config
-- asks (a trigger, so the row is written in the event's own transaction:
-- none is lost, none is told twice). Anomaly events of users who take
-- them in digests wait in notification_digest_items until the user's next
-- digest (users.last_digest_at: when the last one was queued).
CREATE TABLE notification_queue (
    event_seq  bigint PRIMARY KEY REFERENCES events(seq) ON DELETE CASCADE
);
-- +goose StatementBegin
CREATE FUNCTION fleetgraph_event_queue_notification() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO notification_queue (event_seq) VALUES (NEW.seq);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER events_queue_notification AFTER INSERT ON events FOR EACH ROW
    WHEN (NEW.type IN ('anomaly_event.created', 'client.offline', 'client_health.warning',
        'client_health.critical', 'study_execution.failed'))
    EXECUTE FUNCTION fleetgraph_event_queue_notification();

CREATE TABLE notification_digest_items (
    user_id    bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    event_seq  bigint NOT NULL REFERENCES events(seq) ON DELETE CASCADE,
    PRIMARY KEY (user_id, event_seq)
);
ALTER TABLE users ADD COLUMN last_digest_at timestamptz;

-- +goose Down
ALTER TABLE users DROP COLUMN last_digest_at;
DROP TABLE notification_digest_items;
DROP TRIGGER events_queue_notification ON events;
DROP FUNCTION fleetgraph_event_queue_notification();
DROP TABLE notification_queue;
DROP INDEX email_outbox_due;
ALTER TABLE email_outbox DROP COLUMN data, DROP COLUMN attempts, DROP COLUMN next_attempt_at,
    DROP COLUMN last_error, DROP COLUMN given_up_at;
