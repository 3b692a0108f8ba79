#!/usr/bin/env bash
# Compares the Go benchmarks of the work tree with those of BASE (default:
# the previous commit) with benchstat: each side is run COUNT times, in a
# worktree of BASE for the old side.
set -euo pipefail
cd "$(dirname "$0")/.."

BASE=${BASE:-HEAD~1}
COUNT=${COUNT:-6}
BENCH=${BENCH:-'Predicate|IndexFunc|Phase|GroupBy|Where|IndexLookup|EngineKSMPods|DecodePod'}
PKGS=(./pkg/indexers/... ./pkg/query/... ./pkg/exporter/... ./pkg/factory/...)
BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

out=$(mktemp -d)
trap 'git worktree remove --force "$out/base" >/dev/null 2>&1 || true; rm -rf "$out"' EXIT

git worktree add --detach "$out/base" "$BASE" >/dev/null
echo "running the benchmarks of $BASE ($(git rev-parse --short "$BASE")) and of the work tree, $COUNT times each…" >&2
# Packages or benchmarks that do not exist on the base side yet are skipped there.
(cd "$out/base" && go test -run '^$' -bench "$BENCH" -benchmem -count "$COUNT" "${PKGS[@]}" > "$out/old.txt" 2>&1 || true)
go test -run '^$' -bench "$BENCH" -benchmem -count "$COUNT" "${PKGS[@]}" > "$out/new.txt"
go run "$BENCHSTAT" "old=$out/old.txt" "new=$out/new.txt"
