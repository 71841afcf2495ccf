-- +goose Up
-- Tombstones tell the Elasticsearch indexer what to remove: a document
-- deleted from documents, the copy left in the old index when an update
-- moves a document to another index (its type changed), and all indices of
-- a deleted data owner. Their versions come from documents_version, so the
-- indexer reads them in one stream with the documents, behind the same
-- horizon. The indexer deletes the tombstones its cursor has passed.
CREATE TABLE document_tombstones (
    version        bigint PRIMARY KEY DEFAULT nextval('documents_version'),
    -- no foreign key: a tombstone outlives its document and data owner
    data_owner_id  bigint NOT NULL,
    slug           text NOT NULL,
    -- kind and doc_id NULL: the data owner was deleted, drop all its indices
    kind           text,
    type           text,
    doc_id         text,
    CHECK ((kind IS NULL) = (doc_id IS NULL))
);

-- One tombstone per deleted document, and per updated document whose index
-- (data owner, kind, lower-case type) or id changed, for where it was.
-- Documents whose data owner is already gone (the cascade of deleting the
-- data owner) get none: the data owner's own tombstone covers them, and
-- its slug is no longer there to be looked up.
-- +goose StatementBegin
CREATE FUNCTION fg_document_tombstones() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO document_tombstones (data_owner_id, slug, kind, type, doc_id)
        SELECT o.data_owner_id, d.slug, o.kind, o.type, o.doc_id
        FROM fg_old o JOIN data_owners d ON d.id = o.data_owner_id
        ORDER BY o.version;
    ELSE
        INSERT INTO document_tombstones (data_owner_id, slug, kind, type, doc_id)
        SELECT o.data_owner_id, d.slug, o.kind, o.type, o.doc_id
        FROM fg_old o JOIN fg_new n ON n.id = o.id JOIN data_owners d ON d.id = o.data_owner_id
        WHERE (o.data_owner_id, o.kind, lower(o.type), o.doc_id)
              IS DISTINCT FROM (n.data_owner_id, n.kind, lower(n.type), n.doc_id)
        ORDER BY o.version;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER documents_tombstone_update AFTER UPDATE ON documents
    REFERENCING OLD TABLE AS fg_old NEW TABLE AS fg_new FOR EACH STATEMENT EXECUTE FUNCTION fg_document_tombstones();
CREATE TRIGGER documents_tombstone_delete AFTER DELETE ON documents
    REFERENCING OLD TABLE AS fg_old FOR EACH STATEMENT EXECUTE FUNCTION fg_document_tombstones();

-- One tombstone per deleted data owner, with its slug: the indexer drops
-- the indices analytics-production-<slug>-*, so a later data owner given
-- the same slug does not find the old one's documents.
-- +goose StatementBegin
CREATE FUNCTION fg_data_owner_tombstones() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO document_tombstones (data_owner_id, slug)
    SELECT id, slug FROM fg_old ORDER BY id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER data_owners_tombstone AFTER DELETE ON data_owners
    REFERENCING OLD TABLE AS fg_old FOR EACH STATEMENT EXECUTE FUNCTION fg_data_owner_tombstones();

-- +goose Down
DROP TRIGGER data_owners_tombstone ON data_owners;
DROP TRIGGER documents_tombstone_update ON documents;
DROP TRIGGER documents_tombstone_delete ON documents;
DROP FUNCTION fg_data_owner_tombstones(), fg_document_tombstones();
DROP TABLE document_tombstones;
