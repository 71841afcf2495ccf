#!/usr/bin/env bash
# Lints the OpenAPI documents fleetgraph serves at <base>/openapi.json with
# the pinned Redocly CLI (package.json, package-lock.json).
#
# Usage (from anywhere):  bash tools/openapi/lint.sh [--install-only]
#
#   1. `npm ci` here when node_modules is missing or older than
#      package.json / package-lock.json (the only step that needs the
#      network; --install-only stops after it, as .ci/run's download step).
#   2. `fleetgraph openapi` writes the documents (generated from the route
#      table and the stored operations; no database needed).
#   3. `redocly lint` with redocly.yaml; any problem fails.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$here"

for tool in node npm go; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "tools/openapi/lint.sh: '$tool' is required but not installed" >&2
		exit 1
	fi
done

hidden=node_modules/.package-lock.json # npm writes it after every install
if [[ ! -f "$hidden" || package-lock.json -nt "$hidden" || package.json -nt "$hidden" ]]; then
	echo "tools/openapi/lint.sh: node_modules missing or stale; running npm ci"
	npm ci --no-audit --no-fund
fi
want="$(node -e 'process.stdout.write(require("./package.json").dependencies["@redocly/cli"])')"
got="$(node -e 'process.stdout.write(require("./node_modules/@redocly/cli/package.json").version)')"
if [[ "$got" != "$want" ]]; then
	echo "tools/openapi/lint.sh: @redocly/cli is $got, want $want" >&2
	exit 1
fi
[[ "${1:-}" == "--install-only" ]] && exit 0

out="$(mktemp -d "${TMPDIR:-/tmp}/fleetgraph-openapi.XXXXXX")"
trap 'rm -rf "$out"' EXIT
(cd "$root" && go run ./cmd/fleetgraph openapi --out "$out")
# No telemetry, no update check: the lint runs offline.
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
	./node_modules/.bin/redocly lint --config redocly.yaml "$out"/*.json
