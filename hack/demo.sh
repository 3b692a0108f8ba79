#!/usr/bin/env bash
# Runs the plugin against the demo cluster: KUBECONFIG points at it and PATH
# holds bin/ (kubectl-informer) and _output/bin (kubectl). Called by `make demo`.
#
# `hack/demo.sh node` (make demo NODE=1) runs the demo of a cluster with the
# local node instead: it applies test/e2e/node/testdata/workloads.yaml, whose
# pods really run, crash, get OOM-killed and fail, into DEMO_NAMESPACE
# (default demo), with the StorageClass kubectl-informer-local and a local
# PersistentVolume DEMO_PV (default kubectl-informer-demo) on the directory
# DEMO_PV_DIR (default: demo-pv next to the kubeconfig, in the cluster's
# state directory), waits until the kubelet has reported each state (at
# most DEMO_WAIT seconds each, default 300), and queries and exports them.
# The exporter listens on 127.0.0.1:DEMO_EXPORTER_PORT (default 19090) and
# logs to DEMO_LOG_DIR/exporter.log (default _output).
set -euo pipefail

run() {
	printf '\n\033[1m$ %s\033[0m\n' "$*"
	"$@"
}

port=${DEMO_EXPORTER_PORT:-19090}
logs=${DEMO_LOG_DIR:-_output}

# fetch PATH: an HTTP GET on the exporter with bash alone.
fetch() {
	exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
	printf 'GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n' "$1" >&3
	sed '1,/^\r$/d' <&3
	exec 3<&-
}

# export_metrics ARGS...: starts kubectl informer export ARGS on port in the
# background until the script ends, logging to DEMO_LOG_DIR/exporter.log
# (default _output), and waits until it is ready.
export_metrics() {
	printf '\n\033[1m$ kubectl informer export %s --web.listen-address 127.0.0.1:%s &\033[0m\n' "$*" "$port"
	kubectl informer export "$@" --web.listen-address "127.0.0.1:$port" 2>"$logs/exporter.log" &
	exporter=$!
	trap 'kill $exporter 2>/dev/null || true' EXIT
	for _ in $(seq 600); do
		[ "$(fetch /readyz 2>/dev/null)" = "ok" ] && return 0
		kill -0 "$exporter" 2>/dev/null || break
		sleep 0.1
	done
	echo "demo: the exporter is not ready; see $logs/exporter.log" >&2
	return 1
}

loopback_demo() {
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
	export_metrics --profile kube-state-metrics --resources pods,deployments
	metrics=$(fetch /metrics)
	printf '\n\033[1m$ curl -s localhost:%s/metrics | grep -E "^kube_pod_(info|status_phase)" | head -6\033[0m\n' "$port"
	grep -E '^kube_pod_(info|status_phase)' <<<"$metrics" | head -6 || true
	printf '\n\033[1m$ curl -s localhost:%s/metrics | grep -E "^kubectl_informer_(resource_objects|metric_series\\{metric=\"kube_pod_(info|status_phase)\")"\033[0m\n' "$port"
	grep -E '^kubectl_informer_(resource_objects\{|metric_series\{metric="kube_pod_(info|status_phase)")' <<<"$metrics" || true
	printf '\n\033[1m$ curl -s localhost:%s/metrics | grep -c "^kubectl_informer_metric_series{"   # families served\033[0m\n' "$port"
	grep -c '^kubectl_informer_metric_series{' <<<"$metrics" || true
}

# wait_for WHAT CMD...: runs CMD every 2 seconds until it succeeds, saying
# WHAT it waits for; gives up after DEMO_WAIT seconds (default 300).
wait_for() {
	local what=$1 limit=${DEMO_WAIT:-300} start=$SECONDS
	shift
	printf '\033[2m(waiting until %s)\033[0m\n' "$what"
	until "$@" >/dev/null 2>&1; do
		if ((SECONDS - start >= limit)); then
			echo "demo: still not so after ${limit}s: $what (see kubectl describe pods -n $ns, and kubelet.log and containerd.log in the cluster's state directory)" >&2
			return 1
		fi
		sleep 2
	done
}

# is KIND/NAME JSONPATH VALUE: whether JSONPATH of the object in ns is VALUE.
is() {
	[ "$(kubectl get -n "$ns" "$1" -o jsonpath="$2")" = "$3" ]
}

# pods_show APP JSONPATH PATTERN: whether JSONPATH over the pods labelled
# app=APP (one value a line) has a line matching the regular expression PATTERN.
pods_show() {
	kubectl get pods -n "$ns" -l "app=$1" -o jsonpath="{range .items[*]}$2{\"\\n\"}{end}" | grep -Eq "$3"
}

# serves PATTERN: whether a line of the exporter's /metrics matches the
# regular expression PATTERN.
serves() {
	fetch /metrics | grep -Eq "$1"
}

# The local node (make cluster-up NODE=1): workloads whose pods really run,
# and the states the kubelet reports of them.
node_demo() {
	ns=${DEMO_NAMESPACE:-demo}
	local pv=${DEMO_PV:-kubectl-informer-demo}
	local state
	state=$(dirname "${KUBECONFIG:?must name the kubeconfig of the cluster with the node}")
	local pv_dir=${DEMO_PV_DIR:-$state/demo-pv}
	local node=kubectl-informer-node

	run kubectl informer version
	run kubectl get node "$node" -o wide

	# The workloads, and the storage the StatefulSet's claim asks for: the
	# class (no provisioner), and a local volume on the node bound in
	# advance to the claim of the StatefulSet's pod in ns.
	kubectl get namespace "$ns" >/dev/null 2>&1 || run kubectl create namespace "$ns"
	if ! kubectl get storageclass kubectl-informer-local >/dev/null 2>&1; then
		printf '\n\033[1m$ kubectl create -f - <<EOF   # StorageClass kubectl-informer-local: no provisioner, WaitForFirstConsumer\033[0m\n'
		kubectl create -f - <<-'YAML'
			apiVersion: storage.k8s.io/v1
			kind: StorageClass
			metadata:
			  name: kubectl-informer-local
			provisioner: kubernetes.io/no-provisioner
			volumeBindingMode: WaitForFirstConsumer
		YAML
	fi
	run mkdir -p "$pv_dir"
	pv_dir=$(cd "$pv_dir" && pwd)
	# A volume whose claim was deleted (with an earlier namespace) is
	# Released, and no new claim can have it.
	if [ "$(kubectl get pv "$pv" -o jsonpath='{.status.phase}' 2>/dev/null)" = Released ]; then
		run kubectl delete pv "$pv"
	fi
	printf '\n\033[1m$ kubectl apply -f - <<EOF   # PersistentVolume %s: local %s on %s, for claim %s/data-store-0\033[0m\n' "$pv" "$pv_dir" "$node" "$ns"
	kubectl apply -f - <<-YAML
		apiVersion: v1
		kind: PersistentVolume
		metadata:
		  name: $pv
		spec:
		  capacity: {storage: 1Gi}
		  accessModes: [ReadWriteOnce]
		  persistentVolumeReclaimPolicy: Retain
		  storageClassName: kubectl-informer-local
		  claimRef: {namespace: $ns, name: data-store-0}
		  local: {path: $pv_dir}
		  nodeAffinity:
		    required:
		      nodeSelectorTerms:
		      - matchExpressions:
		        - {key: kubernetes.io/hostname, operator: In, values: [$node]}
	YAML
	run kubectl apply -n "$ns" -f test/e2e/node/testdata/workloads.yaml

	# Wait for what the kubelet reports, not for a time: the crash loop's
	# back-off grows (10s, 20s, 40s...) and a busy machine is slow.
	printf '\n'
	wait_for "deployment web has its 2 replicas available" \
		is deployment/web '{.status.conditions[?(@.type=="Available")].status}' True
	wait_for "the kubelet restarted the crasher's container" \
		pods_show crasher '{.status.containerStatuses[0].restartCount}' '^[1-9]'
	wait_for "the crasher's container waits in CrashLoopBackOff" \
		pods_show crasher '{.status.containerStatuses[0].state.waiting.reason}' '^CrashLoopBackOff$'
	wait_for "the kernel OOM-killed the hog's container" \
		pods_show hog '{.status.containerStatuses[0].lastState.terminated.reason}' '^OOMKilled$'
	wait_for "the unready pod runs" pods_show unready '{.status.phase}' '^Running$'
	wait_for "the kubelet reports the missing image" \
		pods_show missing-image '{.status.containerStatuses[0].state.waiting.reason}' '^ErrImageNeverPull$'
	wait_for "job complete has completed" is job/complete '{.status.conditions[?(@.type=="Complete")].status}' True
	wait_for "job fail has failed" is job/fail '{.status.conditions[?(@.type=="Failed")].status}' True
	wait_for "the store's claim is bound to $pv" is pvc/data-store-0 '{.status.phase}/{.spec.volumeName}' "Bound/$pv"

	# What the kubelet reports: statuses and restart counts.
	run kubectl informer query pods -n "$ns"
	run kubectl informer query pods -n "$ns" --count --group-by object.status.phase

	# The pods whose containers the kubelet restarted after a failure
	# (crash-looping or OOM-killed), with how each last ended.
	run kubectl informer query pods -n "$ns" \
		--where 'object.status.?containerStatuses.orValue([]).exists(c, c.restartCount > 0 && c.?lastState.?terminated.?exitCode.orValue(0) != 0)' \
		--columns 'lastExit=object.status.containerStatuses.map(c, c.?lastState.?terminated.?reason.orValue("") + "/" + string(c.?lastState.?terminated.?exitCode.orValue(0))).join(",")'

	# The pods whose containers wait, by why.
	run kubectl informer query pods -n "$ns" --count \
		--where 'object.status.?containerStatuses.orValue([]).exists(c, has(c.state.waiting))' \
		--group-by 'object.status.containerStatuses.map(c, c.?state.?waiting.?reason.orValue("")).join(",")'

	# The jobs, with the reason of the one that gave up.
	run kubectl informer query jobs -n "$ns" \
		--columns 'failed=object.status.?failed.orValue(0),reason=object.status.?conditions.orValue([]).filter(c, c.type in ["Complete", "Failed"] && c.status == "True").map(c, c.?reason.orValue("")).join(",")'

	# The exporter, serving kube-state-metrics' families of the namespace's
	# pods and jobs: the kubelet's restart counts and reasons.
	export_metrics --profile kube-state-metrics --resources pods,jobs -n "$ns"
	wait_for "the exporter serves the crasher's CrashLoopBackOff" \
		serves 'kube_pod_container_status_waiting_reason\{.*container="crasher",reason="CrashLoopBackOff"\} 1$'
	metrics=$(fetch /metrics)
	printf '\n\033[1m$ curl -s localhost:%s/metrics | grep -E "^kube_pod_container_status_(restarts_total|waiting_reason|last_terminated_reason)" | grep -v " 0$"\033[0m\n' "$port"
	grep -E '^kube_pod_container_status_(restarts_total|waiting_reason|last_terminated_reason)\{' <<<"$metrics" | grep -v ' 0$' || true
	printf '\n\033[1m$ curl -s localhost:%s/metrics | grep -E "^kube_job_(status_failed|failed)\\{" | grep -v " 0$"\033[0m\n' "$port"
	grep -E '^kube_job_(status_failed|failed)\{' <<<"$metrics" | grep -v ' 0$' || true
}

case "${1:-}" in
"") loopback_demo ;;
node) node_demo ;;
*)
	echo "usage: hack/demo.sh [node]" >&2
	exit 2
	;;
esac
