-- +goose Up
-- License usage (docs/design.md "Health and licensing"): a client that measured k
-- distinct subjects in a UTC month counts k units that month. The report
-- needs, per data owner and month, the distinct (client, subject) pairs of
-- its measurements; license_pairs keeps them so that a year of measurements
-- is not read again for every report (store/license.go).
--
-- A month's pairs are complete unless the month has rows in license_dirty:
--   - inserted measurements append their pairs to license_pair_log (a
--     plain append, no unique index, so concurrent writers never wait on
--     each other); reports read the log beside license_pairs for the
--     clients it names, and the refresher merges it in;
--   - updated and deleted measurements (and the documents stored before
--     this migration) mark their months dirty; a report reads a dirty month
--     from the documents, and the refresher rebuilds it.

-- subject '' stands for measurements without a subject.
CREATE TABLE license_pairs (
    data_owner_id  bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    month          date NOT NULL,
    client_uuid    uuid NOT NULL,
    subject        text NOT NULL,
    PRIMARY KEY (data_owner_id, month, client_uuid, subject)
);

-- Per client and month, the number of its pairs with a subject (0 when
-- its measurements named none): what a report of whole, clean months reads.
-- Kept equal to license_pairs by the refresher.
CREATE TABLE license_clients (
    data_owner_id  bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    month          date NOT NULL,
    client_uuid    uuid NOT NULL,
    subjects       integer NOT NULL,
    PRIMARY KEY (data_owner_id, month, client_uuid)
);

CREATE TABLE license_pair_log (
    id             bigserial PRIMARY KEY,
    data_owner_id  bigint NOT NULL,
    month          date NOT NULL,
    client_uuid    uuid NOT NULL,
    subject        text NOT NULL
);
CREATE INDEX license_pair_log_client ON license_pair_log (data_owner_id, month, client_uuid);

CREATE TABLE license_dirty (
    id             bigserial PRIMARY KEY,
    data_owner_id  bigint NOT NULL,
    month          date NOT NULL
);
CREATE INDEX license_dirty_month ON license_dirty (data_owner_id, month);

-- +goose StatementBegin
CREATE FUNCTION fg_license_log() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO license_pair_log (data_owner_id, month, client_uuid, subject)
    SELECT DISTINCT data_owner_id, date_trunc('month', created_at AT TIME ZONE 'UTC')::date,
           client_uuid, coalesce(subject, '')
    FROM fg_new WHERE kind = 'measurement' AND client_uuid IS NOT NULL;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION fg_license_mark() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        INSERT INTO license_dirty (data_owner_id, month)
        SELECT DISTINCT data_owner_id, date_trunc('month', created_at AT TIME ZONE 'UTC')::date
        FROM (SELECT data_owner_id, created_at FROM fg_new WHERE kind = 'measurement'
              UNION SELECT data_owner_id, created_at FROM fg_old WHERE kind = 'measurement') changed;
    ELSE
        INSERT INTO license_dirty (data_owner_id, month)
        SELECT DISTINCT data_owner_id, date_trunc('month', created_at AT TIME ZONE 'UTC')::date
        FROM fg_old WHERE kind = 'measurement';
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER documents_license_insert AFTER INSERT ON documents
    REFERENCING NEW TABLE AS fg_new FOR EACH STATEMENT EXECUTE FUNCTION fg_license_log();
CREATE TRIGGER documents_license_update AFTER UPDATE ON documents
    REFERENCING OLD TABLE AS fg_old NEW TABLE AS fg_new FOR EACH STATEMENT EXECUTE FUNCTION fg_license_mark();
CREATE TRIGGER documents_license_delete AFTER DELETE ON documents
    REFERENCING OLD TABLE AS fg_old FOR EACH STATEMENT EXECUTE FUNCTION fg_license_mark();

-- What is already stored is read from the documents until the refresher
-- has rebuilt its months.
INSERT INTO license_dirty (data_owner_id, month)
SELECT DISTINCT data_owner_id, date_trunc('month', created_at AT TIME ZONE 'UTC')::date
FROM documents WHERE kind = 'measurement';

-- +goose Down
DROP TRIGGER documents_license_insert ON documents;
DROP TRIGGER documents_license_update ON documents;
DROP TRIGGER documents_license_delete ON documents;
DROP FUNCTION fg_license_log(), fg_license_mark();
DROP TABLE license_dirty, license_pair_log, license_clients, license_pairs;
