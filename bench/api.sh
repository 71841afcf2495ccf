#!/usr/bin/env bash
# API benchmark: fleetgraph side by side with a hand-written chi + pgx
# handler, the limit (GraphQL: four documents; REST: GET /clients and
# /clients/{id}; byte-identical answers), and with PostGraphile 5.1.5 and
# 4.14.1 (the four GraphQL documents, the same data), on one database, 20
# connections a side, fleetgraph's rounds interleaved with each peer's.
# Prints throughput ratios against the targets, fleetgraph's statements per
# request and its peak RSS under the list loads.
#   bench/api.sh                               quick run (3 rounds of 5 s a side)
#   ROUNDS=5 ROUND=20s bench/api.sh            a longer run
#   FLEETGRAPH_BIN=/path/to/fleetgraph bench/api.sh   a prebuilt fleetgraph
#   ONLY='rest' bench/api.sh                   only the workloads matching a regexp
#   DB=speedbench_api bench/api.sh             another database
# Needs PostgreSQL at 127.0.0.1:5432 (user postgres, trust), Go and npm
# (PostGraphile 5 runs on the Node 22 that bench/postgraphile5 installs).
# Everything listens on 127.0.0.1 only; the data set is loaded once.
set -euo pipefail
cd "$(dirname "$0")/.."
DB=${DB:-fleetgraph_apibench}
DB_URL="postgres://postgres@127.0.0.1:5432/$DB?sslmode=disable"
POOL=${POOL:-8} ROUNDS=${ROUNDS:-3} ROUND=${ROUND:-5s} WARMUP=${WARMUP:-5s} CONNS=${CONNS:-20} ONLY=${ONLY:-}
PORT_FLEETGRAPH=${PORT_FLEETGRAPH:-18080} PORT_POSTGRAPHILE=${PORT_POSTGRAPHILE:-18081} PORT_HANDWRITTEN=${PORT_HANDWRITTEN:-18082}
PORT_POSTGRAPHILE5=${PORT_POSTGRAPHILE5:-18083}
WORK=$(mktemp -d /tmp/fleetgraph-apibench.XXXXXX)
# A fixed secret for the bench's data dir (the keys bootstrap prints are
# sealed with it); never a production secret.
export DATABASE_URL=$DB_URL FLEETGRAPH_DATA_DIR=$WORK/data
export FLEETGRAPH_SECRET_KEY=${FLEETGRAPH_SECRET_KEY:-0000000000000000000000000000000000000000000000000000000000000000}
# Rate limits stay on, so that their charges (on credit, in leases) are in the figures, but so
# high that no request of the load is refused.
export FLEETGRAPH_RATE_LIMIT_KEY=${FLEETGRAPH_RATE_LIMIT_KEY:-1000000/1s} FLEETGRAPH_RATE_LIMIT_DATA_OWNER=${FLEETGRAPH_RATE_LIMIT_DATA_OWNER:-1000000/1s}
export FLEETGRAPH_RATE_LIMIT_PROBE=${FLEETGRAPH_RATE_LIMIT_PROBE:-1000000/1s}

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

echo "== building (work dir $WORK)"
FLEETGRAPH=${FLEETGRAPH_BIN:-$WORK/fleetgraph}
[ -n "${FLEETGRAPH_BIN:-}" ] || go build -o "$FLEETGRAPH" ./cmd/fleetgraph
go build -o "$WORK/handwritten" ./bench/handwritten
go build -o "$WORK/apibench" ./bench/apibench
for dir in bench/postgraphile bench/postgraphile5; do
  if ! cmp -s $dir/package-lock.json $dir/node_modules/.bench-lock; then
    (cd $dir && npm ci --no-audit --no-fund --loglevel=error)
    cp $dir/package-lock.json $dir/node_modules/.bench-lock
  fi
done

echo "== data set in $DB"
psql -h 127.0.0.1 -U postgres -qtAc "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1 \
  || psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $DB"
"$FLEETGRAPH" migrate 2>/dev/null
for spec in api50:50 api500:500 api2000:2000; do
  slug=${spec%%:*} n=${spec##*:}
  "$FLEETGRAPH" bootstrap --data-owner "$slug" --email "bench@$slug.example" --json >>"$WORK/keys.json"
  psql "$DB_URL" -v ON_ERROR_STOP=1 -qtA -v slug="$slug" -v n="$n" -f bench/apidata/seed.sql >/dev/null
done
psql "$DB_URL" -qc "ANALYZE"

echo "== starting fleetgraph, PostGraphile 4 and 5 and the hand-written handler"
"$FLEETGRAPH" serve --addr "127.0.0.1:$PORT_FLEETGRAPH" --db-max-conns "$POOL" >"$WORK/fleetgraph.log" 2>&1 &
fleetgraph_pid=$!
pids+=("$fleetgraph_pid")
bench/postgraphile/node_modules/.bin/postgraphile -c "$DB_URL" --schema public --host 127.0.0.1 \
  --port "$PORT_POSTGRAPHILE" --disable-query-log >"$WORK/postgraphile.log" 2>&1 &
pids+=($!)
GRAPHILE_ENV=production bench/postgraphile5/node_modules/.bin/node bench/postgraphile5/server.mjs "$DB_URL" 127.0.0.1 \
  "$PORT_POSTGRAPHILE5" "$POOL" >"$WORK/postgraphile5.log" 2>&1 &
pids+=($!)
DATABASE_URL="$DB_URL&pool_max_conns=$POOL" "$WORK/handwritten" -addr "127.0.0.1:$PORT_HANDWRITTEN" >"$WORK/handwritten.log" 2>&1 &
pids+=($!)
wait_for() { # url [curl args]: until it answers at all
  local url=$1; shift
  for _ in $(seq 150); do curl -s -o /dev/null "$@" "$url" && return 0; sleep 0.2; done
  echo "no answer from $url (logs in $WORK)" >&2; exit 1
}
wait_for "http://127.0.0.1:$PORT_FLEETGRAPH/readyz" -f
wait_for "http://127.0.0.1:$PORT_POSTGRAPHILE/graphql" -f -H 'Content-Type: application/json' -d '{"query":"{__typename}"}'
wait_for "http://127.0.0.1:$PORT_POSTGRAPHILE5/graphql" -f -H 'Content-Type: application/json' -d '{"query":"{__typename}"}'
wait_for "http://127.0.0.1:$PORT_HANDWRITTEN/client_admin_api/v1/clients"

echo "== running ($ROUNDS rounds of $ROUND a side, $CONNS connections)"
"$WORK/apibench" -keys "$WORK/keys.json" -fleetgraph-bin "$FLEETGRAPH" -fleetgraph-pid "$fleetgraph_pid" \
  -fleetgraph "http://127.0.0.1:$PORT_FLEETGRAPH" -postgraphile "http://127.0.0.1:$PORT_POSTGRAPHILE" \
  -postgraphile5 "http://127.0.0.1:$PORT_POSTGRAPHILE5" \
  -handwritten "http://127.0.0.1:$PORT_HANDWRITTEN" -conns "$CONNS" -rounds "$ROUNDS" -round "$ROUND" \
  -warmup "$WARMUP" -only "$ONLY"
echo "fleetgraph logged $(grep -c '"level":"ERROR"' "$WORK/fleetgraph.log" || true) ERROR lines (logs in $WORK)"
