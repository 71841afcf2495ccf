-- +goose Up
-- The client API (/client_api/v1): a probe registers with a registration
-- key and gets a per-client secret ("probe-..."); only its SHA-256 digest is
-- kept, like API keys'. report_until is when the registration key's
-- usage_limit_days end for the client (fixed at registration; NULL: no
-- limit); reports after it are refused.
ALTER TABLE clients ADD COLUMN secret_digest bytea UNIQUE;
ALTER TABLE clients ADD COLUMN report_until timestamptz;

-- +goose Down
ALTER TABLE clients DROP COLUMN report_until;
ALTER TABLE clients DROP COLUMN secret_digest;
