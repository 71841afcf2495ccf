-- +goose Up
-- Versions are taken only once the transaction has its id. The
-- Elasticsearch indexer reads versions up to the sequence value it saw
-- before a snapshot, once every transaction running at that snapshot has
-- ended. A transaction that took a version before it had an id (nextval in
-- a column default runs before the row is written) would be missing from
-- that snapshot, and the indexer could pass its version before it commits.
-- +goose StatementBegin
CREATE FUNCTION next_document_version() RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_current_xact_id();
    RETURN nextval('documents_version');
END
$$;
-- +goose StatementEnd
ALTER TABLE documents ALTER COLUMN version SET DEFAULT next_document_version();
ALTER TABLE document_tombstones ALTER COLUMN version SET DEFAULT next_document_version();

-- +goose Down
ALTER TABLE document_tombstones ALTER COLUMN version SET DEFAULT nextval('documents_version');
ALTER TABLE documents ALTER COLUMN version SET DEFAULT nextval('documents_version');
DROP FUNCTION next_document_version();
