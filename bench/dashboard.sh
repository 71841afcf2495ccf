#!/usr/bin/env bash
# Dashboard benchmark (issue 25 item 6): builds the dashboard (printing the
# JavaScript shipped, gzipped; the build fails above 300 KB), then times it
# in Chromium on 1,000 probes with a month of speed tests each (120,000
# measurements): the fleet view's first render, cold and cached, and a
# probe's chart, alone and three side by side (target: under 1 s each).
#   bench/dashboard.sh              5 rounds
#   ROUNDS=10 bench/dashboard.sh    more rounds
# Needs PostgreSQL at 127.0.0.1:5432 (or the binaries for a private one),
# Go, npm and Chromium (apt-get install chromium). Everything listens on
# 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/.."
bash dashboard/build.sh
ROUNDS=${ROUNDS:-5} go test ./server -run '^$' -bench '^BenchmarkDashboardInABrowser$' -benchtime 1x -count 1 -timeout 30m -v 2>&1 |
	grep -E 'seeded|chart|fleet|ms per round|Benchmark|ok|FAIL|---'
