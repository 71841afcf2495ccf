-- +goose Up
-- Measurement data: every document kind as JSON beside the indexed columns
-- searches filter on. version orders changes for the Elasticsearch indexer.
CREATE SEQUENCE documents_version;

CREATE TABLE documents (
    id              bigserial PRIMARY KEY,
    data_owner_id   bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    kind            text NOT NULL CHECK (kind IN ('measurement', 'client_report', 'event_bundle',
                        'network_request', 'user_feedback', 'anomaly_event', 'system_status')),
    -- the document's own id: measurement id, anomaly id, report id ...
    doc_id          text NOT NULL,
    client_uuid     uuid,
    -- VideoMeasurement, P1203ClientReport, VideoEventBundle, ...
    type            text,
    -- study.subject of measurements, subject of anomaly events
    subject         text,
    -- the measurement a report, bundle or network request belongs to
    measurement_id  text,
    created_at      timestamptz NOT NULL,
    doc             jsonb NOT NULL,
    version         bigint NOT NULL DEFAULT nextval('documents_version'),
    UNIQUE (data_owner_id, kind, doc_id)
);
CREATE INDEX documents_owner_kind_created ON documents (data_owner_id, kind, created_at DESC, id DESC);
CREATE INDEX documents_owner_kind_type ON documents (data_owner_id, kind, type, created_at DESC);
CREATE INDEX documents_owner_client ON documents (data_owner_id, kind, client_uuid, created_at DESC);
CREATE INDEX documents_owner_measurement ON documents (data_owner_id, measurement_id) WHERE measurement_id IS NOT NULL;
CREATE INDEX documents_by_version ON documents (version);
CREATE INDEX documents_doc ON documents USING gin (doc jsonb_path_ops);

-- Typed reads of JSON values for the search translator: NULL instead of an
-- error when a value does not have the wanted type.
-- +goose StatementBegin
CREATE FUNCTION fg_num(j jsonb) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE jsonb_typeof(j)
        WHEN 'number' THEN (j #>> '{}')::double precision
        WHEN 'string' THEN CASE WHEN (j #>> '{}') ~ '^\s*-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?\s*$'
                                THEN (j #>> '{}')::double precision END
    END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION fg_time(j jsonb) RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN jsonb_typeof(j) = 'string'
                 AND (j #>> '{}') ~ '^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}(:?\d{2})?)?$'
                THEN (j #>> '{}')::timestamptz
                WHEN jsonb_typeof(j) = 'number' THEN to_timestamp((j #>> '{}')::double precision / 1000)
    END
$$;
-- +goose StatementEnd

-- Resume points of background workers (the Elasticsearch indexer).
CREATE TABLE worker_cursors (
    name        text PRIMARY KEY,
    position    bigint NOT NULL DEFAULT 0,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Server-side search cursors: scroll ids belong to the data owner that made them.
CREATE TABLE search_scrolls (
    id             text PRIMARY KEY,
    data_owner_id  bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    state          jsonb NOT NULL,
    expires_at     timestamptz NOT NULL
);
CREATE INDEX search_scrolls_expiry ON search_scrolls (expires_at);

CREATE TABLE anomaly_detection_overrides (
    id                 bigserial PRIMARY KEY,
    data_owner_id      bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    subject            text NOT NULL,
    measurement_type   text NOT NULL,
    metric             text NOT NULL,
    detection_pass     text NOT NULL CHECK (detection_pass IN ('spike', 'shift', 'data_quality')),
    level              text NOT NULL CHECK (level IN ('off', 'low', 'high')),
    origin             text NOT NULL CHECK (origin IN ('manual', 'feedback')),
    source_anomaly_id  text,
    updated_by_id      bigint REFERENCES users(id) ON DELETE SET NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    UNIQUE (data_owner_id, subject, measurement_type, metric, detection_pass)
);

-- +goose Down
DROP TABLE anomaly_detection_overrides, search_scrolls, worker_cursors, documents;
DROP SEQUENCE documents_version;
DROP FUNCTION fg_num(jsonb), fg_time(jsonb);
