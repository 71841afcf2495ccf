#!/usr/bin/env bash
# Client API load test with the analyzer on: simulated probes (bench/probeload)
# register, check in and report measurements concurrently against one fleetgraph
# on 127.0.0.1. Two runs, each on a fresh database and server (RUN=ceiling or
# RUN=sustain runs one):
#  1. ceiling (issue 28 item 4): CEILING_PROBES probes (1,000), the offered rate rising from
#     RAMP_FROM documents/s by RAMP_STEP (each probe's batch grows) for STEP_FOR a
#     step until the documents accepted per second stop growing; prints the
#     ceiling (target ≥ 15,000 documents/s) and the check-in and report p99 while
#     the load holds at 80 % of it for HOLD_FOR (check-in target < 50 ms), once the
#     probes have paused until the last step's queued reports were answered; each
#     step also prints how far the analyzer is behind (its inbox, its oldest row's wait).
#  2. sustain (issue 24): PROBES probes reporting BATCH measurements every
#     INTERVAL (1,000 × 25 / 5 s: 5,000 documents/s) for DURATION; prints the
#     documents accepted per second (target ≥ 5,000), the check-in p99 (< 50 ms),
#     and, as every 5th probe reports one anomalous value in its 32nd report (the
#     analyzer judges spikes once it has seen some 300 values: DURATION 3m or
#     more), the time from that report's 2xx to its episode being readable (p99 <
#     5 s) and to its webhook delivery (p99 < 10 s) (ANOMALY_EVERY=0 turns that
#     off).
# Every figure is printed with the machine's load average.
#   bench/probes.sh                                   both runs
#   RUN=ceiling RAMP_FROM=500 RAMP_STEP=500 CEILING_PROBES=200 bench/probes.sh   a slow machine's ceiling
#   RUN=sustain PROBES=200 DURATION=10s bench/probes.sh       a smaller run
#   FLEETGRAPH_BIN=/path/to/fleetgraph bench/probes.sh        a prebuilt fleetgraph
# Needs PostgreSQL at 127.0.0.1:5432 (user postgres, trust) and Go. The
# database (DB, fleetgraph_probebench) is made afresh for every run.
set -euo pipefail
cd "$(dirname "$0")/.."
RUN=${RUN:-both}
DB=${DB:-fleetgraph_probebench}
DB_URL="postgres://postgres@127.0.0.1:5432/$DB?sslmode=disable"
PROBES=${PROBES:-1000} BATCH=${BATCH:-25} INTERVAL=${INTERVAL:-5s} DURATION=${DURATION:-3m20s}
CEILING_PROBES=${CEILING_PROBES:-1000} RAMP_FROM=${RAMP_FROM:-2000} RAMP_STEP=${RAMP_STEP:-2000} RAMP_MAX=${RAMP_MAX:-40000}
STEP_FOR=${STEP_FOR:-20s} HOLD_FOR=${HOLD_FOR:-40s}
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
stop_server() { [ -z "$pid" ] || { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=; }; }
trap stop_server EXIT

# A socket per probe on both sides: more than the usual 1,024 descriptors.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

echo "== building (work dir $WORK)"
FLEETGRAPH=${FLEETGRAPH_BIN:-$WORK/fleetgraph}
[ -n "${FLEETGRAPH_BIN:-}" ] || go build -o "$FLEETGRAPH" ./cmd/fleetgraph
go build -o "$WORK/probeload" ./bench/probeload

# start_server makes the database afresh, bootstraps the bench's data owner
# (its admin key in KEY) and starts fleetgraph.
start_server() {
  echo "== database $DB (made afresh)"
  psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $DB" -qc "CREATE DATABASE $DB"
  "$FLEETGRAPH" migrate 2>/dev/null
  KEY=$("$FLEETGRAPH" bootstrap --data-owner probebench --email bench@probebench.example --json |
    sed -n 's/.*"api_key": *"\([^"]*\)".*/\1/p')
  [ -n "$KEY" ] || { echo "bootstrap printed no api_key" >&2; exit 1; }
  echo "== starting fleetgraph on 127.0.0.1:$PORT (pool $POOL)"
  "$FLEETGRAPH" serve --addr "127.0.0.1:$PORT" --db-max-conns "$POOL" >"$WORK/fleetgraph-$1.log" 2>&1 &
  pid=$!
  for _ in $(seq 150); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/readyz" && break; sleep 0.2; done
  curl -sf -o /dev/null "http://127.0.0.1:$PORT/readyz" || { echo "fleetgraph did not start (log in $WORK)" >&2; exit 1; }
}

# analyzer_backlog prints what the analyzer had left to judge when the load ended.
analyzer_backlog() {
  echo "analyzer at the end: $(psql -h 127.0.0.1 -U postgres -d "$DB" -Atc "SELECT count(*) FROM analyzer_inbox") inbox rows," \
    "$(psql -h 127.0.0.1 -U postgres -d "$DB" -Atc "SELECT count(*) FROM river_job WHERE kind = 'analyze_client' AND state IN ('available', 'running', 'retryable')") client jobs waiting or running"
  echo "fleetgraph logged $(grep -c 'level=ERROR\|"level":"ERROR"' "$WORK/fleetgraph-$1.log" || true) ERROR lines (log in $WORK)"
}

if [ "$RUN" = both ] || [ "$RUN" = ceiling ]; then
  echo "=== ceiling"
  start_server ceiling
  echo "== load ($(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run)"
  "$WORK/probeload" -url "http://127.0.0.1:$PORT" -admin-key "$KEY" -probes "$CEILING_PROBES" -interval "$INTERVAL" \
    -ramp-from "$RAMP_FROM" -ramp-step "$RAMP_STEP" -ramp-max "$RAMP_MAX" -step-for "$STEP_FOR" -hold-for "$HOLD_FOR" -anomaly-every 0 \
    -db "$DB_URL"
  analyzer_backlog ceiling
  stop_server
fi
if [ "$RUN" = both ] || [ "$RUN" = sustain ]; then
  echo "=== sustain"
  start_server sustain
  echo "== load ($(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run)"
  "$WORK/probeload" -url "http://127.0.0.1:$PORT" -admin-key "$KEY" -probes "$PROBES" -batch "$BATCH" \
    -interval "$INTERVAL" -duration "$DURATION" -anomaly-every "${ANOMALY_EVERY:-5}"
  analyzer_backlog sustain
  stop_server
fi
