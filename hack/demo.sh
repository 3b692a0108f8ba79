#!/usr/bin/env bash
# Runs the plugin against the demo cluster: KUBECONFIG points at it and PATH
# holds bin/ (kubectl-informer) and _output/bin (kubectl). Called by `make demo`.
set -euo pipefail

run() {
	printf '\n\033[1m$ %s\033[0m\n' "$*"
	"$@"
}

run kubectl informer version
run kubectl plugin list --name-only 2>/dev/null
run kubectl api-resources --api-group=demo.kubectl-informer.io
run kubectl get nodes -L topology.kubernetes.io/zone
