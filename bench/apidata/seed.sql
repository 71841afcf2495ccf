-- The API bench's data set (bench/api.sh): clients of one data owner, each
-- in 1-3 client groups, with a registration key (of a capability) and two
-- ISP contracts: a past one and the current one (valid_until NULL, so the
-- current contract is also the only one without an end; see README).
-- Idempotent: a data owner that already has clients is left as it is.
-- Usage: psql -v slug=api50 -v n=50 -f seed.sql (the data owner must exist:
-- fleetgraph bootstrap creates it).
CREATE FUNCTION pg_temp.seed(p_slug text, p_n int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    o     bigint;
    cap   bigint;
    keys  bigint[];
    isps  bigint[];
    grps  bigint[];
BEGIN
    SELECT id INTO o FROM data_owners WHERE slug = p_slug;
    IF o IS NULL THEN
        RAISE EXCEPTION 'data owner % is missing: run fleetgraph bootstrap first', p_slug;
    END IF;
    IF EXISTS (SELECT 1 FROM clients WHERE data_owner_id = o) THEN
        RETURN;
    END IF;
    INSERT INTO measurement_configs (data_owner_id, kind, name, description, is_default, created_at, updated_at)
    VALUES (o, 'public', 'default speed test', 'bench', true, '2024-01-01', '2024-01-01');
    -- Probes get published versions only.
    INSERT INTO config_versions (config_id, revision, state, data, data_hash, published_at)
    SELECT id, 1, 'published', '{"version": 1, "revision": 1, "studies": []}',
        encode(sha256(convert_to('{"revision":1,"studies":[],"version":1}', 'UTF8')), 'hex'), '2024-01-01'
    FROM measurement_configs WHERE data_owner_id = o AND kind = 'public';
    INSERT INTO capabilities (data_owner_id, name, comment, allowed_measurement_types, created_at, updated_at)
    VALUES (o, 'bench capability', 'for the API bench', '{speedtest,video}', '2024-01-01', '2024-01-01')
    RETURNING id INTO cap;
    INSERT INTO registration_keys (data_owner_id, capability_id, registration_key, comment, valid_from,
        num_registrations_left, usage_limit_days, created_at)
    SELECT o, cap, p_slug || '-registration-' || k, 'batch ' || k, timestamptz '2024-01-01 00:00:00+00' + k * interval '1 day',
        100 * k, CASE WHEN k % 2 = 0 THEN 365 END, '2024-01-01'
    FROM generate_series(1, 5) k;
    keys := ARRAY(SELECT id FROM registration_keys WHERE data_owner_id = o ORDER BY id);
    INSERT INTO isps (data_owner_id, name, type, country, created_at, updated_at)
    SELECT o, 'Example ISP ' || i, 'fixed', 'DE', '2024-01-01', '2024-01-01' FROM generate_series(1, 10) i;
    isps := ARRAY(SELECT id FROM isps WHERE data_owner_id = o ORDER BY id);
    INSERT INTO client_groups (data_owner_id, name, created_at)
    SELECT o, 'group ' || lpad(g::text, 2, '0'), '2024-01-01' FROM generate_series(1, 20) g;
    grps := ARRAY(SELECT id FROM client_groups WHERE data_owner_id = o ORDER BY id);

    INSERT INTO clients (data_owner_id, uuid, type, label, extra_label, tags, last_seen_at, last_measurement_at,
        last_client_type, last_client_version, registration_key_id, created_at, updated_at)
    SELECT o, md5(p_slug || '/' || i)::uuid, 'probe', 'client ' || i, CASE WHEN i % 4 = 0 THEN 'floor ' || (i % 9) END,
        ARRAY['bench', 'ring' || (i % 5)], timestamptz '2025-01-01 00:00:00+00' + i * interval '1 minute',
        timestamptz '2025-01-01 00:00:00+00' + i * interval '1 minute', 'linux', '2.4.' || (i % 10),
        keys[1 + i % 5], timestamptz '2024-02-01 00:00:00+00' + i * interval '1 second',
        timestamptz '2024-03-01 00:00:00+00' + i * interval '1 second'
    FROM generate_series(1, p_n) i;

    -- Client number i (in id order) is in 1 + i % 3 groups.
    INSERT INTO client_group_members (client_group_id, client_id)
    SELECT DISTINCT grps[1 + (c.i + j * 7) % 20], c.id
    FROM (SELECT id, row_number() OVER (ORDER BY id) AS i FROM clients WHERE data_owner_id = o) c,
        generate_series(0, 2) j
    WHERE j <= c.i % 3;

    INSERT INTO isp_contracts (data_owner_id, isp_id, client_id, name, upload_speed, download_speed, monthly_price,
        currency, connection_type, valid_from, valid_until, created_at)
    SELECT o, isps[1 + (c.i + p) % 10], c.id,
        CASE p WHEN 0 THEN 'fiber ' ELSE 'dsl ' END || (100 * (1 + c.i % 5)),
        20 * (1 + c.i % 5), 100 * (1 + c.i % 5), 19.90 + (c.i % 7) * 5 + p,
        'EUR', CASE p WHEN 0 THEN 'fiber' ELSE 'dsl' END,
        CASE p WHEN 0 THEN timestamptz '2024-01-01 00:00:00+00' ELSE timestamptz '2022-01-01 00:00:00+00' END,
        CASE p WHEN 0 THEN NULL ELSE timestamptz '2024-01-01 00:00:00+00' END, '2024-01-01'
    FROM (SELECT id, row_number() OVER (ORDER BY id) AS i FROM clients WHERE data_owner_id = o) c,
        generate_series(0, 1) p;
END
$$;
SELECT pg_temp.seed(:'slug', :n);
