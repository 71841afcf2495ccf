-- +goose Up
-- Client management: a label names one client of its data owner
-- (check_label_availability's rule: trimmed, case-insensitive; blank labels
-- do not count), and a client group name one group. Enforced by unique
-- indexes, so two racing renames cannot both win.
--
-- Rows written before this rule may collide: every such row but the oldest
-- (lowest id) gets its id appended, " (17)", so the indexes can be built.
UPDATE clients c SET label = btrim(c.label) || ' (' || c.id || ')', updated_at = now()
FROM (SELECT id, row_number() OVER (PARTITION BY data_owner_id, lower(btrim(label)) ORDER BY id) AS n
      FROM clients WHERE btrim(label) <> '') d
WHERE c.id = d.id AND d.n > 1;

CREATE UNIQUE INDEX clients_owner_label_uniq ON clients (data_owner_id, lower(btrim(label)))
    WHERE btrim(label) <> '';

UPDATE client_groups g SET name = btrim(g.name) || ' (' || g.id || ')'
FROM (SELECT id, row_number() OVER (PARTITION BY data_owner_id, lower(btrim(name)) ORDER BY id) AS n
      FROM client_groups) d
WHERE g.id = d.id AND d.n > 1;

CREATE UNIQUE INDEX client_groups_owner_name_uniq ON client_groups (data_owner_id, lower(btrim(name)));

-- +goose Down
DROP INDEX client_groups_owner_name_uniq;
DROP INDEX clients_owner_label_uniq;
