-- +goose Up
-- Documents in monthly partitions by created_at (docs/operating.md
-- "History and retention"). A partitioned table's unique constraints must
-- hold the partition key, so the key of a document becomes (data owner,
-- kind, doc_id, created_at); InsertDocuments moves a stored document whose
-- created_at changed before its upsert (store/documents.go), which keeps
-- one row per (data owner, kind, doc_id). Partitions cover whole UTC
-- months, named documents_pYYYYMM; documents of months without a
-- partition go to documents_default. The server creates the coming
-- months' partitions (fg_documents_partition) and drops expired ones.
--
-- The table is copied, not attached: the rows are spread over their
-- months. Its duration per 1,000,000 documents is in docs/operating.md.

-- Creates the partition of the UTC month holding m unless it exists; the
-- month's rows already in documents_default move into it. Returns the
-- partition's name.
-- +goose StatementBegin
CREATE FUNCTION fg_documents_partition(m timestamptz) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    lo timestamptz := date_trunc('month', m AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
    hi timestamptz := lo + interval '1 month';
    name text := 'documents_p' || to_char(lo AT TIME ZONE 'UTC', 'YYYYMM');
BEGIN
    IF to_regclass(name) IS NOT NULL THEN
        RETURN name;
    END IF;
    EXECUTE format('CREATE TABLE %I (LIKE documents INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name);
    IF to_regclass('documents_default') IS NOT NULL THEN
        EXECUTE format('WITH moved AS (DELETE FROM documents_default WHERE created_at >= $1 AND created_at < $2 RETURNING *)
            INSERT INTO %I SELECT * FROM moved', name) USING lo, hi;
    END IF;
    EXECUTE format('ALTER TABLE documents ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', name, lo, hi);
    RETURN name;
END
$$;
-- +goose StatementEnd

-- Triggers read this setting: the expiry's deletions (store/expire.go)
-- leave rollups and license usage as they are.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fg_expiring() RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce(current_setting('fleetgraph.expiring', true), '') = 'on'
$$;
-- +goose StatementEnd

ALTER TABLE documents RENAME TO documents_unpartitioned;
ALTER SEQUENCE documents_id_seq OWNED BY NONE;

CREATE TABLE documents (
    id              bigint NOT NULL DEFAULT nextval('documents_id_seq'),
    data_owner_id   bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    kind            text NOT NULL CHECK (kind IN ('measurement', 'client_report', 'event_bundle',
                        'network_request', 'user_feedback', 'anomaly_event', 'system_status')),
    doc_id          text NOT NULL,
    client_uuid     uuid,
    type            text,
    subject         text,
    measurement_id  text,
    created_at      timestamptz NOT NULL,
    doc             jsonb NOT NULL,
    version         bigint NOT NULL DEFAULT next_document_version()
) PARTITION BY RANGE (created_at);
CREATE TABLE documents_default PARTITION OF documents DEFAULT;

-- The months of the last three years that hold documents, and the
-- current month with the next three; older or later months stay in
-- documents_default until the server creates their partition.
SELECT fg_documents_partition(m) FROM (
    SELECT DISTINCT date_trunc('month', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS m
    FROM documents_unpartitioned
    WHERE created_at >= now() - interval '3 years' AND created_at < now() + interval '4 months'
    UNION
    SELECT now() + make_interval(months => i) FROM generate_series(0, 3) i
) months ORDER BY m;

INSERT INTO documents (id, data_owner_id, kind, doc_id, client_uuid, type, subject, measurement_id, created_at, doc, version)
SELECT id, data_owner_id, kind, doc_id, client_uuid, type, subject, measurement_id, created_at, doc, version
FROM documents_unpartitioned;
DROP TABLE documents_unpartitioned;
ALTER SEQUENCE documents_id_seq OWNED BY documents.id;

ALTER TABLE documents ADD PRIMARY KEY (id, created_at);
ALTER TABLE documents ADD CONSTRAINT documents_data_owner_id_kind_doc_id_key UNIQUE (data_owner_id, kind, doc_id, created_at);
CREATE INDEX documents_owner_kind_created ON documents (data_owner_id, kind, created_at DESC, id DESC);
CREATE INDEX documents_owner_kind_type ON documents (data_owner_id, kind, type, created_at DESC);
CREATE INDEX documents_owner_client ON documents (data_owner_id, kind, client_uuid, created_at DESC);
CREATE INDEX documents_owner_measurement ON documents (data_owner_id, measurement_id) WHERE measurement_id IS NOT NULL;
CREATE INDEX documents_by_version ON documents (version);
CREATE INDEX documents_doc ON documents USING gin (doc jsonb_path_ops);

-- The triggers of 00004, 00005 and 00011 again; rollups and license usage
-- are not marked by the expiry's deletions.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fg_rollup_mark() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND fg_expiring() THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO rollup_dirty (data_owner_id, kind, day)
        SELECT DISTINCT data_owner_id, kind, (created_at AT TIME ZONE 'UTC')::date FROM fg_new;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        INSERT INTO rollup_dirty (data_owner_id, kind, day)
        SELECT DISTINCT data_owner_id, kind, (created_at AT TIME ZONE 'UTC')::date FROM fg_old;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fg_license_mark() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        INSERT INTO license_dirty (data_owner_id, month)
        SELECT DISTINCT data_owner_id, date_trunc('month', created_at AT TIME ZONE 'UTC')::date
        FROM (SELECT data_owner_id, created_at FROM fg_new WHERE kind = 'measurement'
              UNION SELECT data_owner_id, created_at FROM fg_old WHERE kind = 'measurement') changed;
    ELSIF NOT fg_expiring() THEN
        INSERT INTO license_dirty (data_owner_id, month)
        SELECT DISTINCT data_owner_id, date_trunc('month', created_at AT TIME ZONE 'UTC')::date
        FROM fg_old WHERE kind = 'measurement';
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER documents_rollup_insert AFTER INSERT ON documents
    REFERENCING NEW TABLE AS fg_new FOR EACH STATEMENT EXECUTE FUNCTION fg_rollup_mark();
CREATE TRIGGER documents_rollup_update AFTER UPDATE ON documents
    REFERENCING OLD TABLE AS fg_old NEW TABLE AS fg_new FOR EACH STATEMENT EXECUTE FUNCTION fg_rollup_mark();
CREATE TRIGGER documents_rollup_delete AFTER DELETE ON documents
    REFERENCING OLD TABLE AS fg_old FOR EACH STATEMENT EXECUTE FUNCTION fg_rollup_mark();
CREATE TRIGGER documents_tombstone_update AFTER UPDATE ON documents
    REFERENCING OLD TABLE AS fg_old NEW TABLE AS fg_new FOR EACH STATEMENT EXECUTE FUNCTION fg_document_tombstones();
CREATE TRIGGER documents_tombstone_delete AFTER DELETE ON documents
    REFERENCING OLD TABLE AS fg_old FOR EACH STATEMENT EXECUTE FUNCTION fg_document_tombstones();
CREATE TRIGGER documents_license_insert AFTER INSERT ON documents
    REFERENCING NEW TABLE AS fg_new FOR EACH STATEMENT EXECUTE FUNCTION fg_license_log();
CREATE TRIGGER documents_license_update AFTER UPDATE ON documents
    REFERENCING OLD TABLE AS fg_old NEW TABLE AS fg_new FOR EACH STATEMENT EXECUTE FUNCTION fg_license_mark();
CREATE TRIGGER documents_license_delete AFTER DELETE ON documents
    REFERENCING OLD TABLE AS fg_old FOR EACH STATEMENT EXECUTE FUNCTION fg_license_mark();

-- Retention (store/expire.go): documents older than this many days go;
-- NULL: the operator's default (FLEETGRAPH_RETENTION_DAYS), which unset
-- keeps everything.
ALTER TABLE data_owners ADD COLUMN retention_days integer CHECK (retention_days > 0);

ANALYZE documents;

-- +goose Down
ALTER TABLE data_owners DROP COLUMN retention_days;
ALTER TABLE documents RENAME TO documents_partitioned;
ALTER SEQUENCE documents_id_seq OWNED BY NONE;
CREATE TABLE documents (
    id              bigint PRIMARY KEY DEFAULT nextval('documents_id_seq'),
    data_owner_id   bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    kind            text NOT NULL CHECK (kind IN ('measurement', 'client_report', 'event_bundle',
                        'network_request', 'user_feedback', 'anomaly_event', 'system_status')),
    doc_id          text NOT NULL,
    client_uuid     uuid,
    type            text,
    subject         text,
    measurement_id  text,
    created_at      timestamptz NOT NULL,
    doc             jsonb NOT NULL,
    version         bigint NOT NULL DEFAULT next_document_version(),
    UNIQUE (data_owner_id, kind, doc_id)
);
INSERT INTO documents (id, data_owner_id, kind, doc_id, client_uuid, type, subject, measurement_id, created_at, doc, version)
SELECT DISTINCT ON (data_owner_id, kind, doc_id) id, data_owner_id, kind, doc_id, client_uuid, type, subject, measurement_id, created_at, doc, version
FROM documents_partitioned ORDER BY data_owner_id, kind, doc_id, version DESC;
DROP TABLE documents_partitioned;
ALTER SEQUENCE documents_id_seq OWNED BY documents.id;
CREATE INDEX documents_owner_kind_created ON documents (data_owner_id, kind, created_at DESC, id DESC);
CREATE INDEX documents_owner_kind_type ON documents (data_owner_id, kind, type, created_at DESC);
CREATE INDEX documents_owner_client ON documents (data_owner_id, kind, client_uuid, created_at DESC);
CREATE INDEX documents_owner_measurement ON documents (data_owner_id, measurement_id) WHERE measurement_id IS NOT NULL;
CREATE INDEX documents_by_version ON documents (version);
CREATE INDEX documents_doc ON documents USING gin (doc jsonb_path_ops);
CREATE TRIGGER documents_rollup_insert AFTER INSERT ON documents
    REFERENCING NEW TABLE AS fg_new FOR EACH STATEMENT EXECUTE FUNCTION fg_rollup_mark();
CREATE TRIGGER documents_rollup_update AFTER UPDATE ON documents
    REFERENCING OLD TABLE AS fg_old NEW TABLE AS fg_new FOR EACH STATEMENT EXECUTE FUNCTION fg_rollup_mark();
CREATE TRIGGER documents_rollup_delete AFTER DELETE ON documents
    REFERENCING OLD TABLE AS fg_old FOR EACH STATEMENT EXECUTE FUNCTION fg_rollup_mark();
CREATE TRIGGER documents_tombstone_update AFTER UPDATE ON documents
    REFERENCING OLD TABLE AS fg_old NEW TABLE AS fg_new FOR EACH STATEMENT EXECUTE FUNCTION fg_document_tombstones();
CREATE TRIGGER documents_tombstone_delete AFTER DELETE ON documents
    REFERENCING OLD TABLE AS fg_old FOR EACH STATEMENT EXECUTE FUNCTION fg_document_tombstones();
CREATE TRIGGER documents_license_insert AFTER INSERT ON documents
    REFERENCING NEW TABLE AS fg_new FOR EACH STATEMENT EXECUTE FUNCTION fg_license_log();
CREATE TRIGGER documents_license_update AFTER UPDATE ON documents
    REFERENCING OLD TABLE AS fg_old NEW TABLE AS fg_new FOR EACH STATEMENT EXECUTE FUNCTION fg_license_mark();
CREATE TRIGGER documents_license_delete AFTER DELETE ON documents
    REFERENCING OLD TABLE AS fg_old FOR EACH STATEMENT EXECUTE FUNCTION fg_license_mark();
-- fg_expiring stays: the trigger functions above call it.
DROP FUNCTION fg_documents_partition(timestamptz);
