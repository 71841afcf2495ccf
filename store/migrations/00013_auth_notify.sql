-- +goose Up
-- Servers cache found API keys (store/keycache.go) and empty the cache when
-- notified here: on any change to what authenticating a key reads (the
-- key's validity, kind, role and user; the user's role; the data owner's
-- slug) and on deletes, in whatever session it happens. Uses of a key
-- (last_used_at) do not notify.
-- +goose StatementBegin
CREATE FUNCTION fleetgraph_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('fleetgraph_auth', TG_TABLE_NAME);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER api_keys_auth_changed
    AFTER UPDATE OF digest, kind, effective_role, user_id, data_owner_id, valid_from, valid_until OR DELETE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION fleetgraph_auth_changed();
CREATE TRIGGER users_auth_changed
    AFTER UPDATE OF role, data_owner_id OR DELETE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION fleetgraph_auth_changed();
CREATE TRIGGER data_owners_auth_changed
    AFTER UPDATE OF slug OR DELETE ON data_owners
    FOR EACH STATEMENT EXECUTE FUNCTION fleetgraph_auth_changed();

-- +goose Down
DROP TRIGGER data_owners_auth_changed ON data_owners;
DROP TRIGGER users_auth_changed ON users;
DROP TRIGGER api_keys_auth_changed ON api_keys;
DROP FUNCTION fleetgraph_auth_changed();
