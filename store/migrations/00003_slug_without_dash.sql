-- +goose Up
-- Index names are analytics-production-<slug>-<kind>...; with "-" allowed in
-- slugs, one data owner's prefix could be another's ("acme" and "acme-eu").
ALTER TABLE data_owners DROP CONSTRAINT data_owners_slug_check;
ALTER TABLE data_owners ADD CONSTRAINT data_owners_slug_check CHECK (slug ~ '^[a-z0-9][a-z0-9_]{0,62}$');

-- +goose Down
ALTER TABLE data_owners DROP CONSTRAINT data_owners_slug_check;
ALTER TABLE data_owners ADD CONSTRAINT data_owners_slug_check CHECK (slug ~ '^[a-z0-9][a-z0-9_-]{0,62}$');
