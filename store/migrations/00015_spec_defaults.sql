-- Values the REST specs type as plain values are never null (issue 11).
--
-- An ISP contract's valid_from is a date-time in a client's
-- current_isp_contract: a contract stored without one started when it was
-- made (its created_at), and new ones start now unless given a start.
--
-- A user's notification_config defaults to what POST /client_admin_users
-- gives (client_offline on, anomaly_events off; store.DefaultNotificationConfig):
-- users made by `fleetgraph bootstrap` had none. Users with an empty
-- config get the defaults; a config with any key is the user's own choice.

-- +goose Up
UPDATE isp_contracts SET valid_from = created_at WHERE valid_from IS NULL;
ALTER TABLE isp_contracts ALTER COLUMN valid_from SET DEFAULT now(),
    ALTER COLUMN valid_from SET NOT NULL;

ALTER TABLE users ALTER COLUMN notification_config
    SET DEFAULT '{"client_offline": true, "anomaly_events": false}';
UPDATE users SET notification_config = '{"client_offline": true, "anomaly_events": false}'
    WHERE notification_config = '{}';

-- +goose Down
ALTER TABLE users ALTER COLUMN notification_config SET DEFAULT '{}';
ALTER TABLE isp_contracts ALTER COLUMN valid_from DROP NOT NULL,
    ALTER COLUMN valid_from DROP DEFAULT;
