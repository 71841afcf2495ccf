#!/usr/bin/env bash
# Client API load test: 1,000 simulated probes (bench/probeload) register,
# check in and report measurements concurrently against one fleetgraph on
# 127.0.0.1. Prints documents accepted per second and the check-in p99
# against the targets (≥ 5,000 documents/s, p99 < 50 ms), with the analyzer on:
# every 5th probe reports one anomalous value, and the time from its report's 2xx
# to its episode being readable (p99 < 5 s) and to its webhook delivery (< 10 s)
# is printed (ANOMALY_EVERY=0 turns that off).
#   bench/probes.sh                                  1,000 probes, 30 measurements every 5 s each, 40 s
#   PROBES=200 DURATION=10s bench/probes.sh          a smaller run
#   BATCH=100 INTERVAL=10s bench/probes.sh           another report shape
#   FLEETGRAPH_BIN=/path/to/fleetgraph bench/probes.sh   a prebuilt fleetgraph
# Needs PostgreSQL at 127.0.0.1:5432 (user postgres, trust) and Go. The
# database fleetgraph_probebench is made afresh for every run.
set -euo pipefail
cd "$(dirname "$0")/.."
DB=${DB:-fleetgraph_probebench}
DB_URL="postgres://postgres@127.0.0.1:5432/$DB?sslmode=disable"
PROBES=${PROBES:-1000} BATCH=${BATCH:-30} INTERVAL=${INTERVAL:-5s} DURATION=${DURATION:-40s}
POOL=${POOL:-8} PORT=${PORT:-18090}
WORK=$(mktemp -d /tmp/fleetgraph-probebench.XXXXXX)
# A fixed secret for the bench's data dir; never a production secret.
export DATABASE_URL=$DB_URL FLEETGRAPH_DATA_DIR=$WORK/data
export FLEETGRAPH_SECRET_KEY=${FLEETGRAPH_SECRET_KEY:-0000000000000000000000000000000000000000000000000000000000000000}
# Rate limits stay on, so that their charges (on credit, in leases) are in the figures, but so
# high that no request of the load is refused.
export FLEETGRAPH_RATE_LIMIT_KEY=${FLEETGRAPH_RATE_LIMIT_KEY:-1000000/1s} FLEETGRAPH_RATE_LIMIT_DATA_OWNER=${FLEETGRAPH_RATE_LIMIT_DATA_OWNER:-1000000/1s}
export FLEETGRAPH_RATE_LIMIT_PROBE=${FLEETGRAPH_RATE_LIMIT_PROBE:-1000000/1s}
# The analyzer's latency is measured with a webhook to probeload's receiver on 127.0.0.1.
export FLEETGRAPH_WEBHOOK_ALLOW_CIDRS=${FLEETGRAPH_WEBHOOK_ALLOW_CIDRS:-127.0.0.1/32}

pid=
cleanup() { [ -z "$pid" ] || { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }; }
trap cleanup EXIT

# A socket per probe on both sides: more than the usual 1,024 descriptors.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

echo "== building (work dir $WORK)"
FLEETGRAPH=${FLEETGRAPH_BIN:-$WORK/fleetgraph}
[ -n "${FLEETGRAPH_BIN:-}" ] || go build -o "$FLEETGRAPH" ./cmd/fleetgraph
go build -o "$WORK/probeload" ./bench/probeload

echo "== database $DB (made afresh)"
psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $DB" -qc "CREATE DATABASE $DB"
"$FLEETGRAPH" migrate 2>/dev/null
KEY=$("$FLEETGRAPH" bootstrap --data-owner probebench --email bench@probebench.example --json |
  sed -n 's/.*"api_key": *"\([^"]*\)".*/\1/p')
[ -n "$KEY" ] || { echo "bootstrap printed no api_key" >&2; exit 1; }

echo "== starting fleetgraph on 127.0.0.1:$PORT (pool $POOL)"
"$FLEETGRAPH" serve --addr "127.0.0.1:$PORT" --db-max-conns "$POOL" >"$WORK/fleetgraph.log" 2>&1 &
pid=$!
for _ in $(seq 150); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/readyz" && break; sleep 0.2; done
curl -sf -o /dev/null "http://127.0.0.1:$PORT/readyz" || { echo "fleetgraph did not start (log in $WORK)" >&2; exit 1; }

echo "== load ($(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run)"
"$WORK/probeload" -url "http://127.0.0.1:$PORT" -admin-key "$KEY" -probes "$PROBES" -batch "$BATCH" \
  -interval "$INTERVAL" -duration "$DURATION" -anomaly-every "${ANOMALY_EVERY:-5}"
echo "load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "fleetgraph logged $(grep -c 'level=ERROR\|"level":"ERROR"' "$WORK/fleetgraph.log" || true) ERROR lines (log in $WORK)"
