-- +goose Up
-- What the Elasticsearch indexer has put into the data owners' ES|QL lookup
-- indices, analytics-production-<slug>-lookup-clients (search/es/lookup.go).
-- The indexer compares these digests with those of the clients' lookup
-- documents, computed in SQL, and sends what differs.

-- One row per data owner whose lookup index the indexer has created (for
-- that slug). Gone with the data owner, whose tombstone drops the index.
CREATE TABLE es_lookup_indices (
    data_owner_id  bigint PRIMARY KEY REFERENCES data_owners(id) ON DELETE CASCADE,
    slug           text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now()
);

-- One row per client document Elasticsearch has taken: the md5 of the
-- document as sent.
CREATE TABLE es_lookup_documents (
    data_owner_id  bigint NOT NULL REFERENCES es_lookup_indices(data_owner_id) ON DELETE CASCADE,
    client_uuid    uuid NOT NULL,
    digest         text NOT NULL,
    PRIMARY KEY (data_owner_id, client_uuid)
);

-- External versions of the lookup documents' index and delete actions:
-- every action carries a new one, so a copy Elasticsearch applies late
-- never overwrites a newer one.
CREATE SEQUENCE es_lookup_versions;

-- +goose Down
DROP SEQUENCE es_lookup_versions;
DROP TABLE es_lookup_documents, es_lookup_indices;
