-- +goose Up
-- Measurement configs get versions: at most one draft and one published
-- version per config (superseded ones stay as history, the config's
-- revisions), each with a revision, the config document (data) and the
-- digest of its canonical JSON.
ALTER TABLE measurement_configs ADD COLUMN import_source text;
CREATE UNIQUE INDEX measurement_configs_id_kind ON measurement_configs (id, kind);
CREATE INDEX measurement_configs_owner_kind ON measurement_configs (data_owner_id, kind, name);

CREATE TABLE config_versions (
    id               bigserial PRIMARY KEY,
    config_id        bigint NOT NULL REFERENCES measurement_configs(id) ON DELETE CASCADE,
    revision         integer NOT NULL CHECK (revision > 0),
    state            text NOT NULL CHECK (state IN ('draft', 'published', 'superseded')),
    data             jsonb NOT NULL,
    data_hash        text NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    created_by_id    bigint REFERENCES users(id) ON DELETE SET NULL,
    published_at     timestamptz,
    published_by_id  bigint REFERENCES users(id) ON DELETE SET NULL,
    UNIQUE (config_id, revision)
);
CREATE UNIQUE INDEX config_versions_one_draft ON config_versions (config_id) WHERE state = 'draft';
CREATE UNIQUE INDEX config_versions_one_published ON config_versions (config_id) WHERE state = 'published';

-- Study descriptions: the studies of public configs, by the study's id in
-- the config document, per data owner, with a revision per distinct content.
CREATE TABLE study_descriptions (
    id             bigserial PRIMARY KEY,
    data_owner_id  bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    study_id       text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (data_owner_id, study_id)
);

CREATE TABLE study_description_versions (
    id                    bigserial PRIMARY KEY,
    study_description_id  bigint NOT NULL REFERENCES study_descriptions(id) ON DELETE CASCADE,
    revision              integer NOT NULL CHECK (revision > 0),
    name                  text NOT NULL,
    study_type            text NOT NULL,
    subject               text NOT NULL,
    internal_id           text,
    data                  jsonb NOT NULL,
    data_hash             text NOT NULL,
    created_at            timestamptz NOT NULL DEFAULT now(),
    UNIQUE (study_description_id, revision)
);

-- The studies of a public config version, in document order.
CREATE TABLE config_version_studies (
    id                            bigserial PRIMARY KEY,
    config_version_id             bigint NOT NULL REFERENCES config_versions(id) ON DELETE CASCADE,
    position                      integer NOT NULL,
    study_description_version_id  bigint NOT NULL REFERENCES study_description_versions(id) ON DELETE CASCADE,
    UNIQUE (config_version_id, position)
);

-- A config assigned to a client group, one per kind; the kind is part of
-- the key to the config so that a group cannot get a config of the other kind.
CREATE TABLE client_group_configs (
    client_group_id  bigint NOT NULL REFERENCES client_groups(id) ON DELETE CASCADE,
    kind             text NOT NULL,
    config_id        bigint NOT NULL,
    assigned_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_group_id, kind),
    FOREIGN KEY (config_id, kind) REFERENCES measurement_configs (id, kind) ON DELETE CASCADE
);
CREATE INDEX client_group_configs_config ON client_group_configs (config_id);
CREATE INDEX IF NOT EXISTS client_group_members_client ON client_group_members (client_id);
CREATE INDEX IF NOT EXISTS clients_public_config ON clients (public_config_id) WHERE public_config_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS clients_automator_config ON clients (automator_config_id) WHERE automator_config_id IS NOT NULL;

-- +goose Down
DROP INDEX IF EXISTS clients_automator_config;
DROP INDEX IF EXISTS clients_public_config;
DROP INDEX IF EXISTS client_group_members_client;
DROP TABLE client_group_configs, config_version_studies, study_description_versions, study_descriptions, config_versions;
DROP INDEX measurement_configs_owner_kind;
DROP INDEX measurement_configs_id_kind;
ALTER TABLE measurement_configs DROP COLUMN import_source;
