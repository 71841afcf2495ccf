#!/usr/bin/env bash
# Builds the dashboard (src/, TypeScript + Preact) into dashboard/dist/ with
# Vite, for the Go package to //go:embed (dashboard/dashboard.go), and prints
# the JavaScript shipped, gzipped: the build fails above the budget of issue
# 25 (300 KB).
#
# Usage (from anywhere):  bash dashboard/build.sh [--install-only]
#
# `npm ci` runs when node_modules is missing or older than package.json /
# package-lock.json (pinned exact versions); --install-only stops there
# (.ci/run's download step). Afterwards rebuild the Go binary: the files are
# embedded at compile time. dist/ is git-ignored except for dist/.keep.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

for tool in node npm gzip; do
	command -v "$tool" >/dev/null 2>&1 || { echo "dashboard/build.sh: '$tool' is required but not installed" >&2; exit 1; }
done

hidden=node_modules/.package-lock.json # npm writes it after every install
if [[ ! -f "$hidden" || package-lock.json -nt "$hidden" || package.json -nt "$hidden" ]]; then
	echo "dashboard/build.sh: node_modules missing or stale; running npm ci"
	npm ci --no-audit --no-fund
fi
# A package of node_modules ships Go sources (flatted, under eslint): a
# go.mod makes node_modules a module of its own, which ./... of fleetgraph's
# go vet, staticcheck and go test leaves out.
[[ -f node_modules/go.mod ]] || printf 'module fleetgraph.invalid/dashboard/node_modules\n' >node_modules/go.mod
[[ "${1:-}" == "--install-only" ]] && exit 0

# Vite empties dist/ first; .keep keeps //go:embed valid when a build fails.
npx --no-install vite build --logLevel warn
touch dist/.keep

budget=$((300 * 1024))
total=0
for f in dist/assets/*.js; do
	size=$(gzip -9 -c "$f" | wc -c)
	total=$((total + size))
	printf '    %-40s %8d bytes, %7d gzipped\n' "$f" "$(wc -c <"$f")" "$size"
done
printf 'dashboard/build.sh: JavaScript shipped: %d bytes gzipped (budget %d)\n' "$total" "$budget"
if ((total > budget)); then
	echo "dashboard/build.sh: over the budget of 300 KB gzipped" >&2
	exit 1
fi
echo "dashboard/build.sh: app ready in dashboard/dist/; rebuild the Go binary to embed it"
