-- +goose Up
-- Per-day rollups of documents for aggregations (search/pg): for each data
-- owner, kind, UTC day and document type, the documents and metric values
-- per keyword value. Writes to documents mark their days dirty; a refresher
-- recomputes dirty days from the documents, and searches read dirty days
-- from the documents themselves, so rollups are never stale, only unused.

-- One row per write statement and day touched. Append-only: a refresher
-- deletes only the rows its snapshot saw, so a write committed after it
-- started keeps its day dirty.
CREATE TABLE rollup_dirty (
    id             bigserial PRIMARY KEY,
    data_owner_id  bigint NOT NULL,
    kind           text NOT NULL,
    day            date NOT NULL
);
CREATE INDEX rollup_dirty_day ON rollup_dirty (data_owner_id, kind, day);

-- The rolled-up (day, type)s of a data owner's kind. kfields_excluded and
-- mfields_excluded name the field paths that cannot be answered from the
-- cells for that day and type (values of another JSON type, too many
-- distinct values); searches needing one of them read that day's documents.
CREATE TABLE rollup_days (
    data_owner_id     bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    kind              text NOT NULL,
    day               date NOT NULL,
    type              text NOT NULL, -- '' for documents without a type
    docs              bigint NOT NULL,
    kfields_excluded  text[] NOT NULL DEFAULT '{}',
    mfields_excluded  text[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (data_owner_id, kind, day, type)
);

-- One cell per (day, type, keyword field, keyword value, metric field):
-- n is the number of documents holding the keyword value (mfield '') or the
-- number of the metric's values in them, with their sum, min and max.
-- kfield '' (kvalue '') stands for all documents.
CREATE TABLE rollup_cells (
    data_owner_id  bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    kind           text NOT NULL,
    day            date NOT NULL,
    type           text NOT NULL,
    kfield         text NOT NULL,
    kvalue         text NOT NULL,
    mfield         text NOT NULL,
    n              bigint NOT NULL,
    sum            double precision,
    min            double precision,
    max            double precision
);
CREATE INDEX rollup_cells_lookup ON rollup_cells (data_owner_id, kind, kfield, mfield, day);
CREATE INDEX rollup_cells_day ON rollup_cells (data_owner_id, kind, day);

-- +goose StatementBegin
CREATE FUNCTION fg_rollup_mark() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
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
CREATE TRIGGER documents_rollup_insert AFTER INSERT ON documents
    REFERENCING NEW TABLE AS fg_new FOR EACH STATEMENT EXECUTE FUNCTION fg_rollup_mark();
CREATE TRIGGER documents_rollup_update AFTER UPDATE ON documents
    REFERENCING OLD TABLE AS fg_old NEW TABLE AS fg_new FOR EACH STATEMENT EXECUTE FUNCTION fg_rollup_mark();
CREATE TRIGGER documents_rollup_delete AFTER DELETE ON documents
    REFERENCING OLD TABLE AS fg_old FOR EACH STATEMENT EXECUTE FUNCTION fg_rollup_mark();

-- Whatever is already stored gets rolled up by the next refresh.
INSERT INTO rollup_dirty (data_owner_id, kind, day)
SELECT DISTINCT data_owner_id, kind, (created_at AT TIME ZONE 'UTC')::date FROM documents;

-- +goose Down
DROP TRIGGER documents_rollup_insert ON documents;
DROP TRIGGER documents_rollup_update ON documents;
DROP TRIGGER documents_rollup_delete ON documents;
DROP FUNCTION fg_rollup_mark();
DROP TABLE rollup_cells, rollup_days, rollup_dirty;
