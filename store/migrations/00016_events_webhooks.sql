-- +goose Up
-- The event stream (issue 13): every domain change worth telling is an
-- events row written in the transaction of the change (store.Emit), with
-- what webhook filters match on beside the payload. Webhooks, user
-- notifications and GraphQL subscriptions all read it. An insert notifies
-- channel fleetgraph_events with {"id", "data_owner_id"}, so listeners
-- load the row through the owner-scoped store.
CREATE TABLE events (
    seq               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
    data_owner_id     bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    type              text NOT NULL,
    occurred_at       timestamptz NOT NULL DEFAULT now(),
    data              jsonb NOT NULL,
    -- what filters match on (events without a dimension pass its filter)
    client_id         bigint,
    client_tags       text[] NOT NULL DEFAULT '{}',
    measurement_type  text,
    severity          text CHECK (severity IN ('warning', 'critical')),
    health_metrics    text[] NOT NULL DEFAULT '{}'
);
CREATE INDEX events_owner ON events (data_owner_id, seq);

-- +goose StatementBegin
CREATE FUNCTION fleetgraph_event_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('fleetgraph_events',
        json_build_object('id', NEW.id, 'data_owner_id', NEW.data_owner_id)::text);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER events_inserted AFTER INSERT ON events
    FOR EACH ROW EXECUTE FUNCTION fleetgraph_event_inserted();

-- A client counts as offline once it was not seen within the data owner's
-- offline threshold; offline_since marks that the client.offline event was
-- told (the sweep sets it, the next check-in clears it: client.online).
ALTER TABLE clients ADD COLUMN offline_since timestamptz;

-- Outbound webhooks (admin spec "Webhook"; docs/design.md "Webhooks"). The
-- secret and the headers are sealed with the server's key (AES-GCM), like
-- service credential passwords. active is enabled and not auto-disabled.
CREATE TABLE webhook_endpoints (
    id                    bigserial PRIMARY KEY,
    data_owner_id         bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    name                  text NOT NULL,
    description           text,
    url                   text NOT NULL,
    payload_format        text NOT NULL DEFAULT 'standard'
                          CHECK (payload_format IN ('standard', 'slack', 'microsoft_teams')),
    format_options        jsonb NOT NULL DEFAULT '{}',
    event_types           text[] NOT NULL,
    filters               jsonb NOT NULL DEFAULT '{}',
    enabled               boolean NOT NULL DEFAULT true,
    sealed_headers        bytea,
    sealed_secret         bytea NOT NULL,
    secret_hint           text NOT NULL,
    auto_disabled_at      timestamptz,
    auto_disabled_reason  text,
    consecutive_failures  integer NOT NULL DEFAULT 0,
    -- the first failed attempt since the last success (5 days of only
    -- failures disable the endpoint)
    failing_since         timestamptz,
    last_delivery_at      timestamptz,
    last_success_at       timestamptz,
    last_failure_at       timestamptz,
    last_response_status  integer,
    last_error            text,
    created_by_id         bigint REFERENCES users(id) ON DELETE SET NULL,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_owner ON webhook_endpoints (data_owner_id, id);

-- One event for one endpoint. payload is the envelope {id, type, timestamp,
-- data}; rendered_body what payload_format made of it (at the first attempt).
CREATE TABLE webhook_deliveries (
    id                     bigserial PRIMARY KEY,
    data_owner_id          bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    webhook_endpoint_id    bigint NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
    event_id               uuid NOT NULL,
    event_type             text NOT NULL,
    status                 text NOT NULL DEFAULT 'pending'
                           CHECK (status IN ('pending', 'succeeded', 'failed', 'exhausted', 'cancelled')),
    attempts               integer NOT NULL DEFAULT 0,
    max_attempts           integer NOT NULL,
    next_attempt_at        timestamptz,
    response_status        integer,
    response_body          text,
    error_message          text,
    duration_ms            integer,
    delivered_at           timestamptz,
    manual                 boolean NOT NULL DEFAULT false,
    payload                jsonb NOT NULL,
    payload_format         text NOT NULL,
    rendered_body          text NOT NULL DEFAULT '',
    rendered_content_type  text NOT NULL DEFAULT '',
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (webhook_endpoint_id, id DESC);

-- +goose Down
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
ALTER TABLE clients DROP COLUMN offline_since;
DROP TRIGGER events_inserted ON events;
DROP FUNCTION fleetgraph_event_inserted();
DROP TABLE events;
