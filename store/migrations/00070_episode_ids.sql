-- +goose Up
-- The ids of detected episodes ({rule_id}::{pass}::{first_seen_epoch}) name
-- no client, and documents can enforce no uniqueness of doc_id alone (their
-- partition key, created_at, must be in every unique index). Each id a
-- detected episode takes is claimed here first, under a key that is
-- unique: two clients' episodes can no longer be stored under one id,
-- whatever runs at the same time. 2026-11-29: 198 episodes of 198 clients
-- stood under 66 ids after a 5,000 documents/s run without it (a burst of
-- 200 episodes in seconds ran past the 60 seconds an id could move, and
-- the last ones fell back to their own second).
CREATE TABLE episode_ids (
    data_owner_id bigint NOT NULL REFERENCES data_owners (id) ON DELETE CASCADE,
    doc_id text NOT NULL,
    client_uuid uuid NOT NULL,
    first_seen_at text NOT NULL,
    PRIMARY KEY (data_owner_id, doc_id)
);
CREATE INDEX episode_ids_client ON episode_ids (data_owner_id, client_uuid, first_seen_at);
INSERT INTO episode_ids (data_owner_id, doc_id, client_uuid, first_seen_at)
SELECT DISTINCT ON (data_owner_id, doc_id) data_owner_id, doc_id, client_uuid, coalesce(doc->>'first_seen_at', '')
FROM documents
WHERE kind = 'anomaly_event' AND doc->>'detected_by' = 'analyzer' AND client_uuid IS NOT NULL
ORDER BY data_owner_id, doc_id, created_at;

-- +goose Down
DROP TABLE episode_ids;
