-- +goose Up
CREATE TABLE data_owners (
    id                                 bigserial PRIMARY KEY,
    slug                               text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
    name                               text NOT NULL,
    ai_system_prompt                   text,
    offline_threshold_minutes          integer CHECK (offline_threshold_minutes > 0),
    client_offline_detection_enabled   boolean NOT NULL DEFAULT true,
    client_degraded_detection_enabled  boolean NOT NULL DEFAULT true,
    study_failure_detection_enabled    boolean NOT NULL DEFAULT true,
    created_at                         timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
    id                              bigserial PRIMARY KEY,
    data_owner_id                   bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    email                           text NOT NULL,
    username                        text NOT NULL,
    role                            text NOT NULL CHECK (role IN ('org_admin', 'admin', 'editor', 'viewer')),
    first_name                      text,
    last_name                       text,
    ai_usage_accepted               boolean,
    ai_custom_prompt                text,
    last_visited_dashboard_version  text,
    dashboard_whats_new_disabled    boolean NOT NULL DEFAULT false,
    pending_email                   text,
    pending_email_token_sent_at     timestamptz,
    notification_config             jsonb NOT NULL DEFAULT '{}',
    created_at                      timestamptz NOT NULL DEFAULT now(),
    updated_at                      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_uniq ON users (data_owner_id, lower(email));
CREATE UNIQUE INDEX users_username_uniq ON users (data_owner_id, lower(username));

CREATE TABLE api_keys (
    id              bigserial PRIMARY KEY,
    data_owner_id   bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    kind            text NOT NULL CHECK (kind IN ('client_admin', 'client_analytics', 'export')),
    name            text,
    digest          bytea NOT NULL UNIQUE,
    key_preview     text NOT NULL,
    sealed_key      bytea,
    effective_role  text CHECK (effective_role IN ('org_admin', 'admin', 'editor', 'viewer')),
    user_id         bigint REFERENCES users(id) ON DELETE CASCADE,
    valid_from      timestamptz NOT NULL DEFAULT now(),
    valid_until     timestamptz NOT NULL,
    last_used_at    timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_keys_owner ON api_keys (data_owner_id, kind, id);

CREATE TABLE isps (
    id                 bigserial PRIMARY KEY,
    data_owner_id      bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    name               text NOT NULL,
    type               text NOT NULL CHECK (type IN ('fixed', 'mobile', 'satellite', 'other')),
    country            text NOT NULL CHECK (country ~ '^[A-Z]{2}$'),
    alternative_names  text[] NOT NULL DEFAULT '{}',
    as_numbers         text[] NOT NULL DEFAULT '{}',
    is_vpn             boolean,
    verified           boolean,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX isps_owner ON isps (data_owner_id, id);

-- isp_details are observed network facts (prefixes, reverse-DNS patterns)
-- that identify an ISP; the API only exposes their count.
CREATE TABLE isp_details (
    id             bigserial PRIMARY KEY,
    data_owner_id  bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    isp_id         bigint NOT NULL REFERENCES isps(id) ON DELETE CASCADE,
    kind           text NOT NULL,
    value          text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX isp_details_isp ON isp_details (isp_id);

CREATE TABLE capabilities (
    id                              bigserial PRIMARY KEY,
    data_owner_id                   bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    name                            text NOT NULL,
    comment                         text,
    allowed_measurement_types       text[] NOT NULL DEFAULT '{}',
    allowed_measurement_subjects    text[] NOT NULL DEFAULT '{}',
    forbidden_measurement_types     text[] NOT NULL DEFAULT '{}',
    forbidden_measurement_subjects  text[] NOT NULL DEFAULT '{}',
    created_at                      timestamptz NOT NULL DEFAULT now(),
    updated_at                      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX capabilities_owner ON capabilities (data_owner_id, id);

CREATE TABLE registration_keys (
    id                      bigserial PRIMARY KEY,
    data_owner_id           bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    capability_id           bigint NOT NULL REFERENCES capabilities(id) ON DELETE CASCADE,
    registration_key        text NOT NULL UNIQUE,
    comment                 text,
    valid_from              timestamptz NOT NULL DEFAULT now(),
    valid_until             timestamptz,
    num_registrations_left  integer NOT NULL DEFAULT -1 CHECK (num_registrations_left >= -1),
    usage_limit_days        integer CHECK (usage_limit_days > 0),
    testing                 boolean NOT NULL DEFAULT false,
    created_at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX registration_keys_capability ON registration_keys (capability_id);

-- measurement_configs holds both public (measurement) configs and automator
-- (schedule) configs; clients reference the one assigned to them.
CREATE TABLE measurement_configs (
    id             bigserial PRIMARY KEY,
    data_owner_id  bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    kind           text NOT NULL CHECK (kind IN ('public', 'automator')),
    name           text NOT NULL,
    description    text,
    is_default     boolean NOT NULL DEFAULT false,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX measurement_configs_one_default ON measurement_configs (data_owner_id, kind) WHERE is_default;

CREATE TABLE clients (
    id                                 bigserial PRIMARY KEY,
    data_owner_id                      bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    uuid                               uuid NOT NULL UNIQUE,
    type                               text NOT NULL,
    label                              text,
    extra_label                        text,
    tags                               text[],
    disabled_at                        timestamptz,
    disabled_reason                    text,
    last_measurement_at                timestamptz,
    last_seen_at                       timestamptz,
    last_client_type                   text,
    last_client_version                text,
    config_managed                     boolean NOT NULL DEFAULT true,
    public_config_id                   bigint REFERENCES measurement_configs(id) ON DELETE SET NULL,
    automator_config_id                bigint REFERENCES measurement_configs(id) ON DELETE SET NULL,
    anomalies_muted                    boolean NOT NULL DEFAULT false,
    offline_notifications_muted        boolean NOT NULL DEFAULT false,
    system_health_notifications_muted  boolean NOT NULL DEFAULT false,
    registration_key_id                bigint REFERENCES registration_keys(id) ON DELETE SET NULL,
    created_at                         timestamptz NOT NULL DEFAULT now(),
    updated_at                         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX clients_owner ON clients (data_owner_id, id);
CREATE INDEX clients_owner_label ON clients (data_owner_id, lower(btrim(label)));
CREATE INDEX clients_registration_key ON clients (registration_key_id);

-- A client shared with another data owner appears in that owner's client
-- list with access_level "shared".
CREATE TABLE client_shares (
    client_id      bigint NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
    data_owner_id  bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    PRIMARY KEY (data_owner_id, client_id)
);

CREATE TABLE client_groups (
    id             bigserial PRIMARY KEY,
    data_owner_id  bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    name           text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE client_group_members (
    client_group_id  bigint NOT NULL REFERENCES client_groups(id) ON DELETE CASCADE,
    client_id        bigint NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
    PRIMARY KEY (client_group_id, client_id)
);
CREATE INDEX client_group_members_client ON client_group_members (client_id);

CREATE TABLE isp_contracts (
    id              bigserial PRIMARY KEY,
    data_owner_id   bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    isp_id          bigint NOT NULL REFERENCES isps(id) ON DELETE CASCADE,
    client_id       bigint NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
    name            text NOT NULL DEFAULT '',
    upload_speed    integer,
    download_speed  integer,
    monthly_price   numeric(12, 2),
    currency        text,
    assumed_tariff  text,
    connection_type text,
    valid_from      timestamptz,
    valid_until     timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX isp_contracts_isp ON isp_contracts (isp_id);
CREATE INDEX isp_contracts_client ON isp_contracts (client_id);

CREATE TABLE service_credentials (
    id               bigserial PRIMARY KEY,
    data_owner_id    bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    name             text NOT NULL,
    service          text NOT NULL CHECK (service ~ '^[a-z0-9_]{1,64}$'),
    username         text,
    sealed_password  bytea,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX service_credentials_name_uniq ON service_credentials (data_owner_id, lower(name));

-- Mail the server owes users (account created, ...); a mailer drains it.
CREATE TABLE email_outbox (
    id             bigserial PRIMARY KEY,
    data_owner_id  bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    user_id        bigint REFERENCES users(id) ON DELETE CASCADE,
    template       text NOT NULL,
    recipient      text NOT NULL,
    sent_at        timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE email_outbox;
DROP TABLE service_credentials, isp_contracts, client_group_members, client_groups,
    client_shares, clients, measurement_configs, registration_keys, capabilities,
    isp_details, isps, api_keys, users, data_owners;
