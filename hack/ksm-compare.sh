#!/usr/bin/env bash
# Serves the kube-state-metrics profile beside kube-state-metrics itself on
# one cluster with the sample workload, and compares the two expositions
# family by family (hack/seriesdiff). Called by `make ksm-compare KSM=binary`.
#
# Environment: KSM (a kube-state-metrics binary, required), PLUGIN
# (default bin/kubectl-informer), BIN (the control plane, default
# _output/bin), RESOURCES (default: the resources of the profile that
# the profile has files for), PODS (default 300), OUT (where
# both expositions and the report go, default _output/ksm-compare), SETUP
# (a command run after the workload is loaded, with KUBECONFIG set, to add
# the states the workload lacks; default none), FLAGS (more flags given to
# both, --shard=1 --total-shards=3 say; default none), CRS (a custom
# resource state config given to both; default none).
set -euo pipefail
cd "$(dirname "$0")/.."

: "${KSM:?KSM must name a kube-state-metrics binary}"
PLUGIN=${PLUGIN:-bin/kubectl-informer}
BIN=${BIN:-_output/bin}
PODS=${PODS:-300}
OUT=${OUT:-_output/ksm-compare}
# The profile's files are named after kube-state-metrics' resources.
RESOURCES=${RESOURCES:-$(cd pkg/exporter/profiles/kube-state-metrics && ls -- *.yaml | sed 's/\.yaml$//' | paste -sd, -)}
mkdir -p "$OUT"
state="$OUT/cluster"

"$BIN/localcluster" down -dir "$state" >/dev/null 2>&1 || true
kubeconfig=$("$BIN/localcluster" up -bin "$BIN" -dir "$state")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	"$BIN/localcluster" down -dir "$state" >/dev/null 2>&1 || true
}
trap cleanup EXIT
go run ./hack/workload --kubeconfig "$kubeconfig" --pods "$PODS" >&2
if [ -n "${SETUP:-}" ]; then KUBECONFIG="$kubeconfig" bash -c "$SETUP" >&2; fi

# Every label and annotation, so that the _labels and _annotations
# families are compared too.
common=(--resources="$RESOURCES" --metric-labels-allowlist='*=[*]' --metric-annotations-allowlist='*=[*]')
# shellcheck disable=SC2206 # FLAGS is split into words on purpose
common+=(${FLAGS:-})
if [ -n "${CRS:-}" ]; then common+=(--custom-resource-state-config-file="$CRS"); fi
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ksm_port=$(free_port) ksm_tport=$(free_port) exp_port=$(free_port)
"$KSM" --kubeconfig="$kubeconfig" --host=127.0.0.1 --port="$ksm_port" --telemetry-host=127.0.0.1 --telemetry-port="$ksm_tport" \
	"${common[@]}" >"$OUT/kube-state-metrics.log" 2>&1 &
pids+=($!)
"$PLUGIN" export --kubeconfig="$kubeconfig" --profile kube-state-metrics --web.listen-address="127.0.0.1:$exp_port" \
	"${common[@]}" >"$OUT/exporter.log" 2>&1 &
pids+=($!)

# Both are ready once their /metrics is whole: the exporter's /readyz says
# so; kube-state-metrics' first full /metrics has a series of each kind it
# lists, so wait until two scrapes in a row are the same.
alive() { # PID NAME LOG: fail when the process has exited
	kill -0 "$1" 2>/dev/null && return
	echo "$2 exited:" >&2
	tail -20 "$3" >&2
	exit 1
}
until curl -fs "127.0.0.1:$exp_port/readyz" >/dev/null; do
	alive "${pids[1]}" exporter "$OUT/exporter.log"
	sleep 0.5
done
# With a custom resource state config, kube-state-metrics adds those
# families once its discovery of custom resources has run.
if [ -n "${CRS:-}" ]; then
	until grep -q "Custom resource state added metrics" "$OUT/kube-state-metrics.log"; do
		alive "${pids[0]}" kube-state-metrics "$OUT/kube-state-metrics.log"
		sleep 0.5
	done
fi
prev=
while :; do
	alive "${pids[0]}" kube-state-metrics "$OUT/kube-state-metrics.log"
	cur=$(curl -fs "127.0.0.1:$ksm_port/metrics" | md5sum || true)
	[ -n "$prev" ] && [ "$cur" = "$prev" ] && break
	prev=$cur
	sleep 1
done
curl -fs "127.0.0.1:$ksm_port/metrics" >"$OUT/kube-state-metrics.prom"
curl -fs "127.0.0.1:$exp_port/metrics" >"$OUT/exporter.prom"
echo "kube-state-metrics: $("$KSM" version 2>&1 | head -1)"
echo "exporter: $("$PLUGIN" version --client 2>&1 | head -1)"
echo "resources: $RESOURCES"
echo "flags: ${FLAGS:-none}"
echo "custom resource state config: ${CRS:-none}"
# The exporter's own telemetry (kubectl_informer_*) is not kube-state-metrics'.
go run ./hack/seriesdiff -families 'kube_.*' "$OUT/kube-state-metrics.prom" "$OUT/exporter.prom" | tee "$OUT/report.txt"
