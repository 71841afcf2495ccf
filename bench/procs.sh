#!/usr/bin/env bash
# Many processes (issue 29; not part of CI): PROCS fleetgraph serve processes
# (the real binary) on one database under mixed load — simulated probes on the
# client API, an admin on the admin REST API and GraphQL, an exporter on the
# export REST API, a GraphQL subscription over WebSocket on every process and a
# webhook to a receiver on 127.0.0.1 — with a kill -9 of the River leader at
# KILL_AT of the run, started again RESTART_AFTER later (0: never). Prints the
# counts (reports acknowledged, measurements stored, duplicates, events written,
# delivered, lost, job runs per process, events received by each subscription)
# and exits 1 on any loss, duplicate, overlapping job run or stall.
#   bench/procs.sh                              3 processes, 3 minutes
#   DURATION=1m RESTART_AFTER=0 bench/procs.sh  shorter, the killed process stays dead
#   FLEETGRAPH_BIN=/path/to/fleetgraph bench/procs.sh   a prebuilt fleetgraph
# Needs PostgreSQL at 127.0.0.1:5432 (user postgres, trust) and Go. The
# database procs_bench is made afresh for every run.
set -euo pipefail
cd "$(dirname "$0")/.."
DB=${DB:-procs_bench}
DB_URL="postgres://postgres@127.0.0.1:5432/$DB?sslmode=disable"
PROCS=${PROCS:-3} DURATION=${DURATION:-3m} KILL_AT=${KILL_AT:-0.4} RESTART_AFTER=${RESTART_AFTER:-30s}
PROBES=${PROBES:-40} POOL=${POOL:-8} PORT=${PORT:-19201}
WORK=$(mktemp -d /tmp/fleetgraph-procs.XXXXXX)
unset DATABASE_URL FLEETGRAPH_DB_MAX_CONNS FLEETGRAPH_RATE_LIMIT_KEY FLEETGRAPH_RATE_LIMIT_DATA_OWNER FLEETGRAPH_RATE_LIMIT_PROBE

echo "== building (work dir $WORK)"
FLEETGRAPH=${FLEETGRAPH_BIN:-$WORK/fleetgraph}
[ -n "${FLEETGRAPH_BIN:-}" ] || go build -o "$FLEETGRAPH" ./cmd/fleetgraph
go build -o "$WORK/procs" ./bench/procs

echo "== database $DB (made afresh)"
psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $DB" -qc "CREATE DATABASE $DB"

echo "== run ($(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg))"
status=0
"$WORK/procs" -bin "$FLEETGRAPH" -database-url "$DB_URL" -work "$WORK" -procs "$PROCS" -port "$PORT" \
  -duration "$DURATION" -kill-at "$KILL_AT" -restart-after "$RESTART_AFTER" -probes "$PROBES" -pool "$POOL" || status=$?
echo "load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "the processes logged $(cat "$WORK"/serve-*.log | grep -c '"level":"ERROR"' || true) ERROR lines (logs in $WORK)"
exit $status
