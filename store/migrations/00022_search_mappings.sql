-- +goose Up
-- The field mapping of the embedded search backend (search/pg): per data
-- owner and Elasticsearch index (kind and lower-cased document type, ''
-- without one), the type of every field, detected as documents are stored
-- the way Elasticsearch's dynamic mapping does (store.DetectMappings): the
-- first value of a field decides its type; later documents never change it.
CREATE TABLE search_field_mappings (
    data_owner_id  bigint NOT NULL REFERENCES data_owners(id) ON DELETE CASCADE,
    kind           text NOT NULL,
    type           text NOT NULL, -- lower(documents.type), '' for documents without a type
    field          text NOT NULL, -- dotted path
    field_type     text NOT NULL CHECK (field_type IN ('long', 'float', 'boolean', 'date', 'text')),
    PRIMARY KEY (data_owner_id, kind, type, field)
);

-- The documents already stored, oldest (by id) first, with the rules of
-- store.DetectMappings: integers long, other numbers float, true/false
-- boolean, strings fg_time reads as dates date, other strings text; an
-- array's elements are values of its field; objects are walked. The type
-- of a field is the one of its first document (the padded id orders; one
-- document with several types for a field, in an array, gives the least
-- name). Grouped by hashing, not sorted: about 20 s per 200,000 documents.
INSERT INTO search_field_mappings (data_owner_id, kind, type, field, field_type)
WITH RECURSIVE walk (id, data_owner_id, kind, type, path, v) AS (
    SELECT d.id, d.data_owner_id, d.kind, lower(COALESCE(d.type, '')), e.key, e.value
    FROM documents d CROSS JOIN LATERAL jsonb_each(d.doc) e
  UNION ALL
    SELECT w.id, w.data_owner_id, w.kind, w.type, c.path, c.v
    FROM walk w CROSS JOIN LATERAL (
        SELECT w.path || '.' || o.key AS path, o.value AS v
        FROM jsonb_each(CASE jsonb_typeof(w.v) WHEN 'object' THEN w.v ELSE '{}' END) o
      UNION ALL
        SELECT w.path, a.value
        FROM jsonb_array_elements(CASE jsonb_typeof(w.v) WHEN 'array' THEN w.v ELSE '[]' END) a(value)
    ) c
    WHERE jsonb_typeof(w.v) IN ('object', 'array')
)
SELECT data_owner_id, kind, type, path, substr(min((lpad(id::text, 20, '0') ||
    CASE jsonb_typeof(v)
        WHEN 'number' THEN CASE WHEN (v #>> '{}') ~ '^-?[0-9]+$' THEN 'long' ELSE 'float' END
        WHEN 'boolean' THEN 'boolean'
        ELSE CASE WHEN (v #>> '{}') ~ '^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}(:?\d{2})?)?$'
                  THEN 'date' ELSE 'text' END
    END) COLLATE "C"), 21)
FROM walk
WHERE jsonb_typeof(v) IN ('number', 'boolean', 'string')
GROUP BY data_owner_id, kind, type, path;

-- Multi-valued fields (search/pg): an array is several values of one field.
-- fg_mv is the values of a JSON value (an array's non-null elements, a
-- scalar itself, none for null); fg_sv is a single value: NULL for an array
-- of several (ES|QL: a single-value operation on a multi-value is null),
-- the element of an array of one (which Elasticsearch indexes as one value).
-- +goose StatementBegin
CREATE FUNCTION fg_mv(j jsonb) RETURNS SETOF jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT e FROM jsonb_array_elements(CASE jsonb_typeof(j) WHEN 'array' THEN j WHEN 'null' THEN '[]'::jsonb
        ELSE jsonb_build_array(j) END) e WHERE e <> 'null'::jsonb
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION fg_sv(j jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN jsonb_typeof(j) <> 'array' THEN j WHEN jsonb_array_length(j) = 1 THEN j -> 0 END
$$;
-- +goose StatementEnd

-- The least and the greatest of a field's values (jsonb order), what
-- Elasticsearch sorts a multi-valued field by ascending and descending.
-- +goose StatementBegin
CREATE FUNCTION fg_mv_min(j jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN jsonb_typeof(j) = 'array' THEN (SELECT e FROM fg_mv(j) e ORDER BY e LIMIT 1) ELSE j END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION fg_mv_max(j jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN jsonb_typeof(j) = 'array' THEN (SELECT e FROM fg_mv(j) e ORDER BY e DESC LIMIT 1) ELSE j END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION fg_mv_max(jsonb);
DROP FUNCTION fg_mv_min(jsonb);
DROP FUNCTION fg_sv(jsonb);
DROP FUNCTION fg_mv(jsonb);
DROP TABLE search_field_mappings;
