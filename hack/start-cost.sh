#!/usr/bin/env bash
# Measures what the kube-state-metrics drop-in costs to start: the binary
# given, run as kube-state-metrics with its default flags against
# KUBECONFIG, from its start until /readyz answers 200 (polled every 50 ms)
# and then at rest.
#
#   hack/start-cost.sh BINARY [CPU_QUOTA_US]
#
# It prints one line: the wall time and the CPU time (user + system, from
# /proc/PID/stat) to Ready, the peak RSS (VmHWM) by then and after IDLE
# seconds (default 60), the peak of its anonymous part (RssAnon, sampled
# every 50 ms until Ready, then every second), and the RSS after IDLE
# seconds, anonymous and of files (the binary's pages, which the kernel
# maps around each page read and which depend on the page cache). With CPU_QUOTA_US
# (10000 is kube-prometheus' cpu: 100m: 10 ms per 100 ms period), the
# process runs in a cgroup v1 cpu controller group of its own with that
# quota; this needs root.
set -euo pipefail

bin=$1
quota=${2:-}
idle=${IDLE:-60}
port=${PORT:-18080}
tport=${TELEMETRY_PORT:-18081}
: "${KUBECONFIG:?set KUBECONFIG to the cluster to measure against}"

dir=$(mktemp -d)
cg=""
cleanup() {
	if [[ -n ${pid:-} ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	if [[ -n $cg ]]; then rmdir "$cg" 2>/dev/null || true; fi
	rm -rf "$dir"
}
trap cleanup EXIT
ln -s "$(realpath "$bin")" "$dir/kube-state-metrics"

if [[ -n $quota ]]; then
	cg=/sys/fs/cgroup/cpu/start-cost-$$
	mkdir "$cg"
	echo 100000 >"$cg/cpu.cfs_period_us"
	echo "$quota" >"$cg/cpu.cfs_quota_us"
fi

clk=$(getconf CLK_TCK)
cpu() { awk -v clk="$clk" '{ printf "%.2f", ($14 + $15) / clk }' "/proc/$1/stat"; }
kib() { awk -v k="$2:" '$1 == k { print int($2 / 1024) }' "/proc/$1/status"; }

start=$(date +%s.%N)
if [[ -n $cg ]]; then
	sh -c 'echo $$ > '"$cg"'/cgroup.procs; exec "$@"' sh "$dir/kube-state-metrics" --kubeconfig "$KUBECONFIG" \
		--port "$port" --telemetry-port "$tport" >"$dir/log" 2>&1 &
else
	"$dir/kube-state-metrics" --kubeconfig "$KUBECONFIG" --port "$port" --telemetry-port "$tport" >"$dir/log" 2>&1 &
fi
pid=$!
peakanon=0
sample() {
	local a
	a=$(kib "$pid" RssAnon || echo 0)
	if ((a > peakanon)); then peakanon=$a; fi
}
until [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$tport/readyz" || true) == 200 ]]; do
	if ! kill -0 "$pid" 2>/dev/null; then
		cat "$dir/log" >&2
		echo "the exporter ended before it was ready" >&2
		exit 1
	fi
	sample
	sleep 0.05
done
wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
readycpu=$(cpu "$pid")
readyhwm=$(kib "$pid" VmHWM)
for ((i = 0; i < idle; i++)); do
	sample
	sleep 1
done
echo "ready_wall_s=$wall ready_cpu_s=$readycpu hwm_at_ready_mib=$readyhwm" \
	"peak_rss_mib=$(kib "$pid" VmHWM) peak_anon_mib=$peakanon (sampled) idle_rss_mib=$(kib "$pid" VmRSS) (anon $(kib "$pid" RssAnon), file $(kib "$pid" RssFile))" \
	"idle_cpu_s=$(cpu "$pid") quota_us=${quota:-none}"
