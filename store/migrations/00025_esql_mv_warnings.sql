-- +goose Up
-- ES|QL warnings of the embedded search backend (search/pg): a comparison
-- or another single-value function of a multi-value is null, and
-- Elasticsearch says so in a Warning header. fg_sv_warn(j, site) is NULL;
-- when j is a multi-value (an array of several values) it records site, the
-- translator's number of the expression, once in the transaction-local
-- setting fg.esql_mv (",3,7,"), which the backend reads after the query.
-- The translator calls it only where fg_sv is null: COALESCE(fg_sv(x),
-- fg_sv_warn(x, site)). Parallel restricted: set_config runs in the leader.
-- +goose StatementBegin
CREATE FUNCTION fg_sv_warn(j jsonb, site int) RETURNS jsonb
LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED AS $$
DECLARE
    seen text;
BEGIN
    IF jsonb_typeof(j) = 'array' AND jsonb_array_length(j) > 1 THEN
        seen := coalesce(nullif(current_setting('fg.esql_mv', true), ''), ',');
        IF position(',' || site || ',' IN seen) = 0 THEN
            PERFORM set_config('fg.esql_mv', seen || site || ',', true);
        END IF;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION fg_sv_warn(jsonb, int);
