-- +goose Up
-- Servers cache found probes by secret digest (store/keycache.go) as they
-- cache API keys (00013), and empty the cache when notified here: on any
-- change to what authenticating a probe reads (store.ProbeByDigest: the
-- client's columns below, its registration key's capability and data
-- owner, the capability's name and lists; the data owner's slug notifies
-- since 00013) and on deletes, in whatever session it happens. A check-in
-- (last_seen_at, last_client_type, last_client_version) and the offline
-- mark (offline_since) set none of these columns, so they do not notify.
CREATE TRIGGER clients_auth_changed
    AFTER UPDATE OF id, uuid, data_owner_id, label, disabled_at, disabled_reason, report_until, config_managed,
        public_config_id, automator_config_id, registration_key_id, secret_digest OR DELETE ON clients
    FOR EACH STATEMENT EXECUTE FUNCTION fleetgraph_auth_changed();
CREATE TRIGGER registration_keys_auth_changed
    AFTER UPDATE OF id, capability_id, data_owner_id OR DELETE ON registration_keys
    FOR EACH STATEMENT EXECUTE FUNCTION fleetgraph_auth_changed();
CREATE TRIGGER capabilities_auth_changed
    AFTER UPDATE OF id, data_owner_id, name, allowed_measurement_types, allowed_measurement_subjects,
        forbidden_measurement_types, forbidden_measurement_subjects OR DELETE ON capabilities
    FOR EACH STATEMENT EXECUTE FUNCTION fleetgraph_auth_changed();

-- +goose Down
DROP TRIGGER capabilities_auth_changed ON capabilities;
DROP TRIGGER registration_keys_auth_changed ON registration_keys;
DROP TRIGGER clients_auth_changed ON clients;
