#!/usr/bin/env bash
# Installs the pinned npm packages of every Node check under tools/ (each
# tools/<name>/ with a package.json and package-lock.json): `npm ci` where
# node_modules is missing or older than the manifest. The only step of the
# Node checks that needs the network; .ci/run runs it in its download step,
# and apitest.NodeTool runs the same for one tool when a test needs it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
for manifest in "$root"/tools/*/package-lock.json; do
	[[ -e "$manifest" ]] || continue
	dir="$(dirname "$manifest")"
	hidden="$dir/node_modules/.package-lock.json" # npm writes it after every install
	if [[ ! -f "$hidden" || "$dir/package-lock.json" -nt "$hidden" || "$dir/package.json" -nt "$hidden" ]]; then
		echo "tools/npm-install.sh: npm ci in ${dir#"$root"/}"
		(cd "$dir" && npm ci --no-audit --no-fund)
	fi
done
