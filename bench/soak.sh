#!/usr/bin/env bash
# Soak and fault test (issue 16; not part of CI): three data owners' mixed
# traffic for DURATION against one fleetgraph over a private PostgreSQL
# cluster (started from the installed binaries under the work dir, never the
# server on 5432), with the attacks of issue 16 from one of them, a kill -9
# of the server at 40 % of the run and a PostgreSQL restart at 65 %. Prints
# requests, 5xx and transport errors inside and outside the outage windows,
# p50/p99 per tenant and per request kind, and the server's peak RSS; exits 1
# on a 5xx or transport error outside the outage windows or a peak RSS over
# RSS_BOUND_MB. The rate limits are fleetgraph's defaults.
#   bench/soak.sh                       10 minutes
#   DURATION=2m bench/soak.sh           a shorter run
#   ATTACKERS=0 bench/soak.sh           no attacker: the well-behaved tenants' baseline
#   ATTACKS='size 10,000|per_page' bench/soak.sh   only the attacks whose names match (a regexp; "flood" names the flood)
#   FLEETGRAPH_BIN=/path/to/fleetgraph bench/soak.sh   a prebuilt fleetgraph
# Needs Go and the PostgreSQL server binaries (initdb, pg_ctl).
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10m} PORT=${PORT:-18095} RSS_BOUND_MB=${RSS_BOUND_MB:-500}
TENANT_RATE=${TENANT_RATE:-10} ATTACKERS=${ATTACKERS:-4}
WORK=$(mktemp -d /tmp/fleetgraph-soak.XXXXXX)
chmod 755 "$WORK" # the private cluster runs as an unprivileged account when we are root
unset DATABASE_URL FLEETGRAPH_RATE_LIMIT_KEY FLEETGRAPH_RATE_LIMIT_DATA_OWNER FLEETGRAPH_RATE_LIMIT_PROBE

echo "== building (work dir $WORK)"
FLEETGRAPH=${FLEETGRAPH_BIN:-$WORK/fleetgraph}
[ -n "${FLEETGRAPH_BIN:-}" ] || go build -o "$FLEETGRAPH" ./cmd/fleetgraph
go build -o "$WORK/soak" ./bench/soak

status=0
"$WORK/soak" -bin "$FLEETGRAPH" -work "$WORK" -port "$PORT" -duration "$DURATION" -rss-bound "$RSS_BOUND_MB" \
  -tenant-rate "$TENANT_RATE" -attack-workers "$ATTACKERS" -attacks "${ATTACKS:-}" || status=$?
echo "fleetgraph logged $(grep -c '"level":"ERROR"' "$WORK/server.log" || true) ERROR lines (log in $WORK/server.log)"
exit $status
