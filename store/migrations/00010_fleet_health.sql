-- +goose Up
-- Fleet health (docs/design.md "Health and licensing"): each data owner's
-- thresholds per metric, the stored evaluation of each client and the log
-- of its state changes (read by the webhook events).

ALTER TABLE data_owners
    ADD COLUMN health_cpu_warning_percent         integer NOT NULL DEFAULT 80 CHECK (health_cpu_warning_percent BETWEEN 0 AND 100),
    ADD COLUMN health_cpu_critical_percent        integer NOT NULL DEFAULT 95 CHECK (health_cpu_critical_percent BETWEEN 0 AND 100),
    ADD COLUMN health_memory_warning_percent      integer NOT NULL DEFAULT 80 CHECK (health_memory_warning_percent BETWEEN 0 AND 100),
    ADD COLUMN health_memory_critical_percent     integer NOT NULL DEFAULT 95 CHECK (health_memory_critical_percent BETWEEN 0 AND 100),
    ADD COLUMN health_filesystem_warning_percent  integer NOT NULL DEFAULT 80 CHECK (health_filesystem_warning_percent BETWEEN 0 AND 100),
    ADD COLUMN health_filesystem_critical_percent integer NOT NULL DEFAULT 95 CHECK (health_filesystem_critical_percent BETWEEN 0 AND 100),
    ADD CONSTRAINT health_cpu_order CHECK (health_cpu_warning_percent < health_cpu_critical_percent),
    ADD CONSTRAINT health_memory_order CHECK (health_memory_warning_percent < health_memory_critical_percent),
    ADD CONSTRAINT health_filesystem_order CHECK (health_filesystem_warning_percent < health_filesystem_critical_percent);

-- The current evaluation of each of a data owner's clients: the state its
-- latest system status record (source_document_id, a documents.id of kind
-- system_status) gave against threshold_snapshot, the thresholds then.
CREATE TABLE client_health_evaluations (
    client_id           bigint PRIMARY KEY REFERENCES clients(id) ON DELETE CASCADE,
    data_owner_id       bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    state               text NOT NULL CHECK (state IN ('healthy', 'warning', 'critical', 'unknown')),
    reasons             jsonb NOT NULL,
    metric_summary      jsonb NOT NULL,
    threshold_snapshot  jsonb NOT NULL,
    source_document_id  bigint,
    -- the version of the source document evaluated (a record replaced in
    -- place under the same id is evaluated again)
    source_document_version bigint,
    network_transport   text,
    evaluated_at        timestamptz NOT NULL
);
CREATE INDEX client_health_evaluations_owner ON client_health_evaluations (data_owner_id, client_id);

-- Every change of a client's state, oldest first: the events to publish.
-- from_state is null for a client's first evaluation.
CREATE TABLE client_health_changes (
    id                  bigserial PRIMARY KEY,
    data_owner_id       bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    client_id           bigint NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
    from_state          text,
    to_state            text NOT NULL,
    reasons             jsonb NOT NULL,
    source_document_id  bigint,
    changed_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX client_health_changes_owner ON client_health_changes (data_owner_id, id);
CREATE INDEX client_health_changes_client ON client_health_changes (client_id);

-- +goose Down
DROP TABLE client_health_changes;
DROP TABLE client_health_evaluations;
ALTER TABLE data_owners
    DROP CONSTRAINT health_cpu_order, DROP CONSTRAINT health_memory_order, DROP CONSTRAINT health_filesystem_order,
    DROP COLUMN health_cpu_warning_percent, DROP COLUMN health_cpu_critical_percent,
    DROP COLUMN health_memory_warning_percent, DROP COLUMN health_memory_critical_percent,
    DROP COLUMN health_filesystem_warning_percent, DROP COLUMN health_filesystem_critical_percent;
