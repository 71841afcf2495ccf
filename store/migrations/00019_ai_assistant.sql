-- +goose Up
-- The AI assistant: each user's conversations (messages stored as sent, in
-- the AI SDK's UIMessage shape), every model call's token usage, and a data
-- owner's own monthly token limit (NULL: the server's default,
-- FLEETGRAPH_AI_MONTHLY_TOKENS).
ALTER TABLE data_owners ADD COLUMN ai_monthly_token_limit bigint CHECK (ai_monthly_token_limit >= 0);

CREATE TABLE ai_conversations (
    id              bigserial PRIMARY KEY,
    data_owner_id   bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    user_id         bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    title           text,
    generated_title text,
    -- derived_title and preview are computed from messages on every write
    -- (resolvers/ai.go), so that the list reads no messages.
    derived_title   text NOT NULL DEFAULT '',
    preview         text NOT NULL DEFAULT '',
    messages        jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(messages) = 'array'),
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ai_conversations_owner_user ON ai_conversations (data_owner_id, user_id, updated_at DESC);

-- One row per model call. conversation_id and user_id are kept without a
-- foreign key: usage stays counted when the conversation or user is gone.
CREATE TABLE ai_usage (
    id                bigserial PRIMARY KEY,
    data_owner_id     bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    user_id           bigint,
    conversation_id   bigint,
    purpose           text NOT NULL,
    model             text NOT NULL,
    prompt_tokens     bigint NOT NULL CHECK (prompt_tokens >= 0),
    completion_tokens bigint NOT NULL CHECK (completion_tokens >= 0),
    created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ai_usage_owner_created ON ai_usage (data_owner_id, created_at);

-- +goose Down
DROP TABLE ai_usage;
DROP TABLE ai_conversations;
ALTER TABLE data_owners DROP COLUMN ai_monthly_token_limit;
