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

# Counts and groups, answered from the informer cache.
run kubectl informer query pods -A --count
run kubectl informer query pods -A --count --group-by object.status.phase

# A CEL index, and a lookup by it.
run kubectl informer query pods -A --index byNode=object.spec.nodeName --by byNode=node-001 --limit 5

# A cross-resource lookup: pods whose node is in zone-a, with extra columns.
run kubectl informer query pods -n shop \
	--where 'has(object.spec.nodeName) && get("nodes", object.spec.nodeName).metadata.labels["topology.kubernetes.io/zone"] == "zone-a"' \
	--columns 'node=object.spec.nodeName,phase=object.status.phase' --limit 5

# The pods with the most restarts.
run kubectl informer query pods -A \
	--sort-by '-object.status.?containerStatuses.orValue([]).map(c, c.restartCount).sum()' --limit 5 \
	--columns 'restarts=object.status.?containerStatuses.orValue([]).map(c, c.restartCount).sum()'

# Nodes with the number of pods on each, through byIndex().
run kubectl informer query nodes --index 'byNode=object.spec.?nodeName.orValue("")' \
	--columns 'zone=object.metadata.labels["topology.kubernetes.io/zone"],pods=size(byIndex("pods", "byNode", object.metadata.name))'

# A custom resource by its short name, with CEL over its spec.
run kubectl informer query db -A --count --group-by 'object.spec.engine + "/" + object.status.phase'

# An invalid expression is reported before the cluster is contacted.
run kubectl informer query pods -A --where 'object.status.phase = "Pending"' || true

# The live cache: events as the informer's handlers receive them.
printf '\n\033[1m$ kubectl informer watch pods -n shop --initial=false --diff &\033[0m\n'
kubectl informer watch pods -n shop --initial=false --diff >_output/watch.log 2>&1 &
watcher=$!
sleep 2 # the initial list, which --initial=false does not show
pod=pod/$(kubectl get pods -n shop -o jsonpath='{.items[0].metadata.name}')
run kubectl label -n shop "$pod" demo=watched
run kubectl label -n shop "$pod" demo-
sleep 1
kill "$watcher" 2>/dev/null || true
wait "$watcher" 2>/dev/null || true
printf '\n\033[1m(the watch printed)\033[0m\n'
cat _output/watch.log

# The exporter on the same cluster, serving kube-state-metrics' families of
# pods and deployments.
port=${DEMO_EXPORTER_PORT:-19090}
printf '\n\033[1m$ kubectl informer export --profile kube-state-metrics --resources pods,deployments --web.listen-address 127.0.0.1:%s &\033[0m\n' "$port"
kubectl informer export --profile kube-state-metrics --resources pods,deployments --web.listen-address "127.0.0.1:$port" 2>_output/exporter.log &
exporter=$!
trap 'kill $exporter 2>/dev/null || true' EXIT

# fetch PATH: an HTTP GET on the exporter with bash alone.
fetch() {
	exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
	printf 'GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n' "$1" >&3
	sed '1,/^\r$/d' <&3
	exec 3<&-
}
for _ in $(seq 100); do
	[ "$(fetch /readyz 2>/dev/null)" = "ok" ] && break
	sleep 0.1
done
metrics=$(fetch /metrics)
printf '\n\033[1m$ curl -s localhost:%s/metrics | grep -E "^kube_pod_(info|status_phase)" | head -6\033[0m\n' "$port"
grep -E '^kube_pod_(info|status_phase)' <<<"$metrics" | head -6 || true
printf '\n\033[1m$ curl -s localhost:%s/metrics | grep -E "^kubectl_informer_(resource_objects|metric_series\\{metric=\"kube_pod_(info|status_phase)\")"\033[0m\n' "$port"
grep -E '^kubectl_informer_(resource_objects\{|metric_series\{metric="kube_pod_(info|status_phase)")' <<<"$metrics" || true
printf '\n\033[1m$ curl -s localhost:%s/metrics | grep -c "^kubectl_informer_metric_series{"   # families served\033[0m\n' "$port"
grep -c '^kubectl_informer_metric_series{' <<<"$metrics" || true
