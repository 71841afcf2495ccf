-- +goose Up
-- Rate limits (package ratelimit) keep one row per bucket (an API key, a
-- data owner, a probe) so that every server on this database counts the
-- same requests. A bucket is a GCRA cell: tat is its theoretical arrival
-- time in microseconds since the Unix epoch, on PostgreSQL's clock (the
-- servers' clocks may differ). UNLOGGED: a counter is written at every
-- request and is worthless after a crash (the table then comes back empty,
-- every bucket full), so it costs no WAL and no fsync.
CREATE UNLOGGED TABLE rate_buckets (
    bucket text PRIMARY KEY,
    tat bigint NOT NULL
);

-- +goose Down
DROP TABLE rate_buckets;
