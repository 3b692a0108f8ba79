#!/usr/bin/env bash
# Runs `make test` RUNS times (default 1) while a CPU hog keeps every core
# busy: HOGS busy-loop processes (default: one per core, from nproc) at
# normal priority, so that the tests share the machine as they would with
# other builds. The hog is stopped when the script ends, however it ends.
# Stops at the first failing run and exits with its status.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-1}
HOGS=${HOGS:-$(nproc)}
case "$RUNS$HOGS" in
*[!0-9]*) echo "test-under-load: RUNS and HOGS must be whole numbers, got RUNS=$RUNS HOGS=$HOGS" >&2; exit 2 ;;
esac

hogs=()
stop_hogs() {
	if [ ${#hogs[@]} -gt 0 ]; then
		kill "${hogs[@]}" 2>/dev/null || true
		wait "${hogs[@]}" 2>/dev/null || true
		hogs=()
	fi
}
trap stop_hogs EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Each hog is a subshell spinning on builtins (no fork per iteration, one
# core each) that also ends by itself once this script is gone, even if it
# was killed with SIGKILL and could not stop them.
self=$$
for _ in $(seq "$HOGS"); do
	( trap - EXIT INT TERM; while kill -0 "$self" 2>/dev/null; do :; done ) &
	hogs+=($!)
done
echo "test-under-load: $HOGS busy loops running (pids ${hogs[*]}) on $(nproc) cores"

for run in $(seq "$RUNS"); do
	echo "test-under-load: run $run of $RUNS: make test"
	start=$SECONDS
	if ! make test; then
		echo "test-under-load: run $run of $RUNS FAILED after $((SECONDS - start))s" >&2
		exit 1
	fi
	echo "test-under-load: run $run of $RUNS passed in $((SECONDS - start))s"
done
echo "test-under-load: $RUNS of $RUNS runs passed"
