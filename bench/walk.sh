#!/usr/bin/env bash
# Counts the hand-written functions every GET /clients/{id} of the admin API
# runs, and the files they are in. server's TestClientByIDWalk, built once
# with coverage counts of every package, runs twice: with one request, and
# with AGAIN (20) more (FLEETGRAPH_WALK_AGAIN), whose caches are warm. The
# blocks whose count grew by at least AGAIN ran in every one of those
# requests; their functions are the walk (go tool cover -func on the
# difference). Work that does not come with every request (a timer's
# flush, a cache's refill, a check made once) grows by less and is left
# out: with one more request, it counted in some runs and not in others.
# Generated code
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
again="${AGAIN:-20}"
FLEETGRAPH_WALK_AGAIN="$again" run "$dir/twice.out"
# Profile lines: file:start,end statements count; the difference keeps the
# blocks that ran at least once per added request.
awk -v again="$again" 'NR == FNR { if (FNR > 1) once[$1 " " $2] += $3; next }
	FNR == 1 { print; next }
	{ n = $3 - once[$1 " " $2]; twice[$1 " " $2] += n }
	END { for (b in twice) print b, (twice[b] >= again ? 1 : 0) }' "$dir/once.out" "$dir/twice.out" >"$dir/walk.out"
walk="$(go tool cover -func="$dir/walk.out" | awk '$1 ~ /\.go:/ && $NF != "0.0%"' |
	grep -v -e '/graph/generated.go:' -e '/models_gen.go:' -e '/apitest/' || true)"
[[ "${1:-}" == "-v" ]] && echo "$walk"
echo "functions: $(echo "$walk" | grep -c . || true)  files: $(echo "$walk" | cut -d: -f1 | sort -u | grep -c . || true)"
