-- +goose Up
-- A data owner's own bound on the clients its client analytics keys may
-- create per period of the server's bound (FLEETGRAPH_ANALYTICS_NEW_CLIENTS);
-- NULL: the server's bound.
ALTER TABLE data_owners ADD COLUMN analytics_new_clients integer CHECK (analytics_new_clients >= 0);

-- +goose Down
ALTER TABLE data_owners DROP COLUMN analytics_new_clients;
