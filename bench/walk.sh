#!/usr/bin/env bash
# Counts the hand-written functions one GET /clients/{id} of the admin API
# runs, and the files they are in. server's TestClientByIDWalk, built once
# with coverage counts of every package, runs twice: with one request, and
# with a second one (FLEETGRAPH_WALK_AGAIN), whose caches are warm. The
# blocks whose count grew are the second request's; their functions are
# the walk (go tool cover -func on the difference). Generated code
# (graph/generated.go, graph/gqlmodel/models_gen.go) and the test harness
# (apitest) are left out. Needs the test PostgreSQL, as the tests do.
#
# Usage (from the repository):  bash bench/walk.sh [-v]   (-v lists them)
set -euo pipefail
dir="$(mktemp -d "${TMPDIR:-/tmp}/fleetgraph-walk.XXXXXX")"
trap 'rm -rf "$dir"' EXIT
go test -c -o "$dir/server.test" -covermode=atomic -coverpkg=./... ./server
run() { (cd server && "$dir/server.test" -test.run '^TestClientByIDWalk$' -test.count=1 -test.coverprofile="$1" >/dev/null); }
run "$dir/once.out"
FLEETGRAPH_WALK_AGAIN=1 run "$dir/twice.out"
# Profile lines: file:start,end statements count; the difference keeps the blocks of the second request.
awk 'NR == FNR { if (FNR > 1) once[$1 " " $2] += $3; next }
	FNR == 1 { print; next }
	{ n = $3 - once[$1 " " $2]; twice[$1 " " $2] += n }
	END { for (b in twice) print b, (twice[b] > 0 ? 1 : 0) }' "$dir/once.out" "$dir/twice.out" >"$dir/walk.out"
walk="$(go tool cover -func="$dir/walk.out" | awk '$1 ~ /\.go:/ && $NF != "0.0%"' |
	grep -v -e '/graph/generated.go:' -e '/models_gen.go:' -e '/apitest/' || true)"
[[ "${1:-}" == "-v" ]] && echo "$walk"
echo "functions: $(echo "$walk" | grep -c . || true)  files: $(echo "$walk" | cut -d: -f1 | sort -u | grep -c . || true)"
