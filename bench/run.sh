#!/usr/bin/env bash
# Benchmark of the embedded PostgreSQL search backend over 1,000,000
# measurement documents of 2,000 clients spread over 30 days.
#   bench/run.sh                                  load (once) and time the workloads
#   N=100000 bench/run.sh                         a smaller set
#   N=10000000 DB=fleetgraph_bench10m bench/run.sh   ten times the data, in its own database
# BIN is where the fleetgraph binary is built (default /tmp/fleetgraph-bench);
# RUNS the timed runs per workload (default 30).
# Needs the PostgreSQL at 127.0.0.1:5432 (or DB_URL for the database).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000000}
CLIENTS=${CLIENTS:-2000}
DB=${DB:-fleetgraph_bench}
DB_URL=${DB_URL:-postgres://postgres@127.0.0.1:5432/$DB?sslmode=disable}
export DATABASE_URL=$DB_URL FLEETGRAPH_DATA_DIR=${FLEETGRAPH_DATA_DIR:-.fleetgraph}

psql -h 127.0.0.1 -U postgres -qtAc "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1 \
  || psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $DB"
BIN=${BIN:-/tmp/fleetgraph-bench}
go build -o "$BIN" ./cmd/fleetgraph
"$BIN" bootstrap --data-owner bench --email bench@fleetgraph.example >/dev/null
have=$(psql "$DB_URL" -qtAc "SELECT count(*) FROM documents d JOIN data_owners o ON o.id = d.data_owner_id WHERE o.slug = 'bench' AND kind = 'measurement'")
if [ "$have" -lt "$N" ]; then
  echo "loading $N measurements of $CLIENTS clients (have $have)"
  time (go run ./bench/gen -n "$N" -clients "$CLIENTS" -days 30 | "$BIN" import --data-owner bench --kind measurement -)
  psql "$DB_URL" -qc "VACUUM ANALYZE documents"
fi
go run ./bench/searchbench -database-url "$DB_URL" -data-owner bench -runs "${RUNS:-30}"
