-- The clients connection (issue 15): keyset pages in each order a
-- dashboard asks for, and the filters that would otherwise read every
-- client of a data owner. The order by id uses clients_owner (00001).
-- last_seen_at is written at every check-in, so it gets no index (it would
-- end heap-only updates of the hottest row of the client API).
--
-- pg_trgm is a trusted extension shipped with PostgreSQL (contrib): the
-- database owner may create it.

-- +goose Up
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE INDEX clients_owner_created ON clients (data_owner_id, created_at, id);
CREATE INDEX clients_owner_label_order ON clients (data_owner_id, (coalesce(lower(btrim(label)), '')), id);
-- search: a substring of the label or of the UUID, case-insensitive
-- (store.clientSearchExpr is the same expression).
CREATE INDEX clients_search ON clients USING gin ((lower(coalesce(label, '') || E'\n' || uuid::text)) gin_trgm_ops);
CREATE INDEX clients_tags ON clients USING gin (tags);

-- +goose Down
DROP INDEX clients_tags;
DROP INDEX clients_search;
DROP INDEX clients_owner_label_order;
DROP INDEX clients_owner_created;
