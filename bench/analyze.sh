#!/usr/bin/env bash
# fleetgraph analyze over stored measurements (issue 24): imports N
# measurements (bench/gen: realistic documents of every type, CLIENTS clients
# over DAYS days) and times a full replay, printing its wall time, its rate and
# the peak resident memory of the analyze process.
#   bench/analyze.sh                          1,000,000 measurements, 2,000 clients, 30 days
#   N=100000 CLIENTS=200 bench/analyze.sh     a smaller run
# Needs PostgreSQL at 127.0.0.1:5432 (user postgres, trust), Go and GNU time
# (/usr/bin/time); the database fleetgraph_analyzebench is made afresh.
set -euo pipefail
cd "$(dirname "$0")/.."
DB=${DB:-fleetgraph_analyzebench}
N=${N:-1000000} CLIENTS=${CLIENTS:-2000} DAYS=${DAYS:-30}
WORK=$(mktemp -d /tmp/fleetgraph-analyzebench.XXXXXX)
export DATABASE_URL="postgres://postgres@127.0.0.1:5432/$DB?sslmode=disable" FLEETGRAPH_DATA_DIR=$WORK/data
# A fixed secret for the bench's data dir; never a production secret.
export FLEETGRAPH_SECRET_KEY=${FLEETGRAPH_SECRET_KEY:-0000000000000000000000000000000000000000000000000000000000000000}

echo "== building (work dir $WORK)"
go build -o "$WORK/fleetgraph" ./cmd/fleetgraph
go build -o "$WORK/gen" ./bench/gen

echo "== database $DB (made afresh), $N measurements of $CLIENTS clients over $DAYS days"
psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $DB" -qc "CREATE DATABASE $DB"
"$WORK/fleetgraph" migrate 2>/dev/null
"$WORK/fleetgraph" bootstrap --data-owner analyzebench --email bench@analyzebench.example --json >/dev/null
"$WORK/gen" -n "$N" -clients "$CLIENTS" -days "$DAYS" >"$WORK/measurements.ndjson"
# The import judges what it loads (time order per client) before it exits.
/usr/bin/time -f "import: %e s wall, peak RSS %M KiB" "$WORK/fleetgraph" import --data-owner analyzebench \
  --kind measurement "$WORK/measurements.ndjson" 2>&1 | grep -v '^$'

echo "== fleetgraph analyze ($(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) before)"
/usr/bin/time -f "analyze: %e s wall, %U s user, peak RSS %M KiB" "$WORK/fleetgraph" analyze --data-owner analyzebench 2>&1
psql -h 127.0.0.1 -U postgres -d "$DB" -Atc "SELECT 'episodes stored: ' || count(*) || ' (' || string_agg(DISTINCT doc->>'detection_pass', ', ') || ')'
  FROM documents WHERE kind = 'anomaly_event'"
echo "== again (idempotent: the same episodes)"
/usr/bin/time -f "analyze again: %e s wall, peak RSS %M KiB" "$WORK/fleetgraph" analyze --data-owner analyzebench 2>&1
psql -h 127.0.0.1 -U postgres -d "$DB" -Atc "SELECT 'episodes stored: ' || count(*) FROM documents WHERE kind = 'anomaly_event'"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
