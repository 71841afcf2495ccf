-- +goose Up
-- The analyzer (issue 24; docs/analyzer.md "The pipeline").

-- A data owner's anomaly rules: its own (builtin false, every field set)
-- and its choices about the catalogue's rules (builtin true: only enabled
-- is stored; the rest comes from analyzer.Catalogue()). An own rule's id
-- is "custom-<n>", never a catalogue id.
CREATE TABLE anomaly_rules (
    data_owner_id     bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    id                text NOT NULL,
    builtin           boolean NOT NULL,
    name              text,
    measurement_type  text,
    metric            text,
    subject           text,
    direction         text CHECK (direction IN ('up', 'down', 'both')),
    unit              text,
    passes            text[],
    enabled           boolean NOT NULL DEFAULT true,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (data_owner_id, id),
    CHECK (builtin OR (name IS NOT NULL AND measurement_type IS NOT NULL AND metric IS NOT NULL
        AND direction IS NOT NULL AND unit IS NOT NULL AND passes IS NOT NULL))
);
CREATE SEQUENCE anomaly_rule_ids;

-- Measurements stored and not judged yet: written in the transaction that
-- stores them, consumed (deleted) in the transaction that judges them, so
-- a measurement is judged exactly once whatever process dies when. held
-- rows belong to a running import: they are released (and queued) when it
-- ends, so that an import is judged in time order whatever its line order.
CREATE TABLE analyzer_inbox (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    data_owner_id  bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    client_uuid    uuid NOT NULL,
    document_id    bigint NOT NULL,
    created_at     timestamptz NOT NULL,
    held           boolean NOT NULL DEFAULT false,
    queued_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX analyzer_inbox_client ON analyzer_inbox (data_owner_id, client_uuid, created_at, id);
CREATE INDEX analyzer_inbox_queued ON analyzer_inbox (queued_at) WHERE NOT held;

-- Detector state of one data owner x client x rule x subject (the
-- measurement's study.subject; '' when none): analyzer.State's binary
-- encoding, updated under the row lock of the transaction that judges.
-- last_at is the time of the last value judged, open whether an episode
-- is open, swept_at when the resolution sweep last looked at it.
CREATE TABLE analyzer_states (
    data_owner_id  bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    client_uuid    uuid NOT NULL,
    rule_id        text NOT NULL,
    subject        text NOT NULL DEFAULT '',
    state          bytea NOT NULL,
    last_at        timestamptz NOT NULL,
    open           boolean NOT NULL DEFAULT false,
    swept_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (data_owner_id, client_uuid, rule_id, subject)
);
CREATE INDEX analyzer_states_sweep ON analyzer_states (swept_at);

-- +goose Down
DROP TABLE analyzer_states, analyzer_inbox, anomaly_rules;
DROP SEQUENCE anomaly_rule_ids;
