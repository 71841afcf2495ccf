-- +goose Up
-- Tokens reserved for a model call in flight (store.ReserveAITokens): what
-- a data owner's calls have used this month and what those in flight have
-- reserved is checked against its limit under a lock of its row, so that
-- parallel requests cannot pass the check together. A reservation is
-- deleted when its call's usage is recorded; one left by a process that
-- died counts until it expires.
CREATE TABLE ai_token_reservations (
    id            bigserial PRIMARY KEY,
    data_owner_id bigint NOT NULL REFERENCES data_owners (id) ON DELETE CASCADE,
    tokens        bigint NOT NULL CHECK (tokens >= 0),
    expires_at    timestamptz NOT NULL
);
CREATE INDEX ai_token_reservations_owner ON ai_token_reservations (data_owner_id, expires_at);

-- +goose Down
DROP TABLE ai_token_reservations;
