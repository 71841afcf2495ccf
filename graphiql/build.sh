#!/usr/bin/env bash
# Vendors the GraphiQL IDE's browser bundles into graphiql/dist/ so that the
# Go package can //go:embed them and serve the IDE without internet access.
#
# Usage (from anywhere):  bash graphiql/build.sh
#
# Steps:
#   1. `npm ci` in this directory when node_modules is missing or does not
#      match package.json / package-lock.json (pinned exact versions).
#   2. Copy the standalone UMD/CSS files into dist/.
#   3. Check every copied file against the Subresource Integrity hashes that
#      gqlgen v0.17.95's playground (github.com/99designs/gqlgen/graphql/
#      playground) uses for the very same CDN files; any mismatch removes the
#      file and fails the build.
#
# Afterwards rebuild the Go binary: the files are embedded at compile time.
# dist/ is git-ignored except for dist/.keep, which keeps //go:embed valid.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

for tool in node npm openssl base64; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "graphiql/build.sh: '$tool' is required but not installed" >&2
		exit 1
	fi
done

# package name -> version pinned in package.json
declare -A pinned=(
	[graphiql]=4.1.2
	[react]=18.2.0
	[react-dom]=18.2.0
)

installed_version() {
	local pj="node_modules/$1/package.json"
	[[ -f "$pj" ]] || return 0
	node -e 'process.stdout.write(String(require(process.argv[1]).version || ""))' "./$pj"
}

needs_install() {
	# npm writes node_modules/.package-lock.json after every install.
	local hidden=node_modules/.package-lock.json
	[[ -d node_modules && -f "$hidden" ]] || return 0
	[[ package-lock.json -nt "$hidden" || package.json -nt "$hidden" ]] && return 0
	local pkg
	for pkg in "${!pinned[@]}"; do
		[[ "$(installed_version "$pkg")" == "${pinned[$pkg]}" ]] || return 0
	done
	return 1
}

if needs_install; then
	echo "graphiql/build.sh: node_modules missing or stale; running npm ci"
	npm ci --no-audit --no-fund
else
	echo "graphiql/build.sh: node_modules up to date"
fi

for pkg in "${!pinned[@]}"; do
	got="$(installed_version "$pkg")"
	if [[ "$got" != "${pinned[$pkg]}" ]]; then
		echo "graphiql/build.sh: $pkg is $got, want ${pinned[$pkg]}" >&2
		exit 1
	fi
done

# source (in node_modules) | file name in dist/ | expected SRI (from gqlgen v0.17.95)
assets=(
	"react/umd/react.production.min.js|react.production.min.js|sha256-S0lp+k7zWUMk2ixteM6HZvu8L9Eh//OVrt+ZfbCpmgY="
	"react-dom/umd/react-dom.production.min.js|react-dom.production.min.js|sha256-IXWO0ITNDjfnNXIu5POVfqlgYoop36bDzhodR6LW5Pc="
	"graphiql/graphiql.min.js|graphiql.min.js|sha256-hnImuor1znlJkD/FOTL3jayfS/xsyNoP04abi8bFJWs="
	"graphiql/graphiql.min.css|graphiql.min.css|sha256-MEh+B2NdMSpj9kexQNN3QKc8UzMrCXW/Sx/phcpuyIU="
)

sri() { # sri ALGO FILE -> ALGO-<base64 digest>
	printf '%s-%s' "$1" "$(openssl dgst "-$1" -binary <"$2" | base64 | tr -d '\n')"
}

mkdir -p dist
failed=0
for entry in "${assets[@]}"; do
	IFS='|' read -r src name want <<<"$entry"
	if [[ ! -s "node_modules/$src" ]]; then
		echo "graphiql/build.sh: node_modules/$src is missing or empty" >&2
		failed=1
		continue
	fi
	cp "node_modules/$src" "dist/$name.tmp"
	got="$(sri "${want%%-*}" "dist/$name.tmp")"
	if [[ "$got" != "$want" ]]; then
		echo "FAIL  dist/$name: $got, want $want" >&2
		rm -f "dist/$name.tmp" "dist/$name"
		failed=1
		continue
	fi
	mv -f "dist/$name.tmp" "dist/$name"
	chmod 0644 "dist/$name"
	printf 'OK    dist/%-28s %8d bytes  %s  %s\n' "$name" "$(wc -c <"dist/$name")" "$got" "$(sri sha384 "dist/$name")"
done

if ((failed)); then
	echo "graphiql/build.sh: integrity check failed" >&2
	exit 1
fi
echo "graphiql/build.sh: assets ready in graphiql/dist/; rebuild the Go binary to embed them"
