package prometheus_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// exporterConfig has one metric of each kind the PromQL answers below
// read: per-object info series, an aggregate count and sum, a label read
// with get(), and a counter.
const exporterConfig = `apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
prefix: e2e_
resources:
- resource: nodes
  metrics:
  - name: node_info
    help: A node and its zone.
    type: info
    labels:
      node: object.metadata.name
      zone: object.metadata.?labels[?"topology.kubernetes.io/zone"].orValue("")
- resource: pods
  metrics:
  - name: pod_info
    help: A pod, its node and its phase.
    type: info
    labels:
      namespace: object.metadata.namespace
      pod: object.metadata.name
      node: object.spec.?nodeName.orValue("")
      phase: object.status.?phase.orValue("")
  - name: pod_zone_info
    help: The zone of the node of a pod, read from the node with get().
    type: info
    labels:
      namespace: object.metadata.namespace
      pod: object.metadata.name
      zone: >-
        has(object.spec.nodeName) && get("nodes", object.spec.nodeName) != null
          ? get("nodes", object.spec.nodeName).metadata.?labels[?"topology.kubernetes.io/zone"].orValue("")
          : ""
  - name: namespace_pods
    help: Pods by namespace and phase.
    type: gauge
    aggregate: count
    labels:
      namespace: object.metadata.namespace
      phase: object.status.?phase.orValue("")
  - name: namespace_cpu_requests_millicores
    help: CPU requested by the containers of the pods of a namespace, in thousandths of a core.
    type: gauge
    aggregate: sum
    labels:
      namespace: object.metadata.namespace
    value: >-
      object.spec.containers.map(c, quantity(string(c.?resources.?requests[?"cpu"].orValue("0"))).milliValue()).sum()
  - name: pod_container_restarts_total
    help: Restarts of a container of a pod.
    type: counter
    each: object.status.?containerStatuses.orValue([])
    labels:
      namespace: object.metadata.namespace
      pod: object.metadata.name
      container: each.name
    value: each.restartCount
`

// The scrape jobs: one exporter, and three exporters that shard the same
// objects. The first is the job deploy/servicemonitor names; the alerts of
// deploy/monitoring name none.
const (
	job        = "kubectl-informer"
	shardedJob = "kubectl-informer-sharded"
)

// prometheusConfig scrapes the exporters every second, as docs/export.md
// advises (honor_labels), and loads the shipped rules.
func prometheusConfig(rules string, targets map[string][]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
- %s
scrape_configs:
`, strconv.Quote(rules))
	for _, name := range []string{job, shardedJob, "kube-state-metrics"} {
		if len(targets[name]) == 0 {
			continue
		}
		fmt.Fprintf(&b, "- job_name: %s\n  honor_labels: true\n  static_configs:\n  - targets: [%s]\n", name, strings.Join(targets[name], ", "))
	}
	return b.String()
}

// startExporter runs "kubectl informer export ARGS" in process, serving on
// addr (a free port when empty), and waits until it is ready.
func startExporter(t *testing.T, addr string, args ...string) (*framework.Run, string) {
	t.Helper()
	if addr == "" {
		addr = framework.ClosedPort(t)
	}
	run := cluster.StartPlugin(t, append([]string{"export", "--cache-dir", t.TempDir(), "--web.listen-address", addr}, args...)...)
	framework.WaitRunReady(t, run, "http://"+addr)
	return run, addr
}

// TestPrometheusScrapesTheExporter runs a real Prometheus against an
// exporter and three shards of it, and checks PromQL answers against the
// API server's objects, the shipped recording rules and every query of the
// shipped dashboard.
func TestPrometheusScrapesTheExporter(t *testing.T) {
	config := filepath.Join(t.TempDir(), "exporter.yaml")
	if err := os.WriteFile(config, []byte(exporterConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	run, addr := startExporter(t, "", "--config", config)
	var shards []string
	for i := range 3 {
		_, a := startExporter(t, "", "--config", config, "--shard", strconv.Itoa(i), "--total-shards", "3")
		shards = append(shards, a)
	}
	prom := cluster.StartPrometheus(t, prometheusConfig(filepath.Join(cluster.Root, monitoring, "rules.yaml"),
		map[string][]string{job: {addr}, shardedJob: shards}))
	sel := `{job="` + job + `"}`
	ctx := context.Background()

	t.Run("pods per namespace and phase", func(t *testing.T) {
		want := framework.Answer{}
		for _, p := range pods(t) {
			want[framework.Key(p.Namespace, string(p.Status.Phase))]++
		}
		prom.WaitAnswer(t, `count by (namespace, phase) (e2e_pod_info`+sel+`)`, want, "namespace", "phase")
		// The aggregate computed by the exporter gives the same answer.
		prom.WaitAnswer(t, `sum by (namespace, phase) (e2e_namespace_pods`+sel+`)`, want, "namespace", "phase")
	})

	t.Run("zone of the node of each pod", func(t *testing.T) {
		zones := map[string]string{}
		nodes, err := cluster.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes.Items {
			zones[n.Name] = n.Labels["topology.kubernetes.io/zone"]
		}
		want := framework.Answer{}
		for _, p := range pods(t) {
			if z := zones[p.Spec.NodeName]; z != "" {
				want[z]++
			}
		}
		if len(want) < 2 {
			t.Fatalf("the workload's pods are in %d zones; the test needs several", len(want))
		}
		// Read by the exporter with get() ...
		prom.WaitAnswer(t, `count by (zone) (e2e_pod_zone_info{job="`+job+`",zone!=""})`, want, "zone")
		// ... and joined in PromQL with the node's series.
		prom.WaitAnswer(t, `count by (zone) (e2e_pod_info{job="`+job+`",node!=""} * on (node) group_left (zone) e2e_node_info{job="`+job+`",zone!=""})`, want, "zone")
	})

	t.Run("CPU requested per namespace", func(t *testing.T) {
		want := framework.Answer{}
		for _, p := range pods(t) {
			for _, c := range p.Spec.Containers {
				want[p.Namespace] += float64(c.Resources.Requests.Cpu().MilliValue())
			}
		}
		prom.WaitAnswer(t, `e2e_namespace_cpu_requests_millicores`+sel, want, "namespace")
	})

	t.Run("shards together answer as one exporter", func(t *testing.T) {
		want := framework.Answer{}
		for _, p := range pods(t) {
			want[framework.Key(p.Namespace, string(p.Status.Phase))]++
		}
		shardSel := `{job="` + shardedJob + `"}`
		prom.WaitAnswer(t, `count by (namespace, phase) (e2e_pod_info`+shardSel+`)`, want, "namespace", "phase")
		prom.WaitAnswer(t, `sum by (namespace, phase) (e2e_namespace_pods`+shardSel+`)`, want, "namespace", "phase")
		if v := query(t, prom, `count by (namespace, pod) (e2e_pod_info`+shardSel+`) > 1`); len(v) > 0 {
			t.Errorf("pods served by more than one shard:\n%v", v)
		}
		// A scrape that fails on a busy machine marks its shard's series
		// stale until the next: the three shards' series are awaited.
		prom.WaitFor(t, `count by (instance) (e2e_pod_info`+shardSel+`)`, func(v model.Vector) error {
			if got := framework.AnswerOf(v, "instance"); len(got) != 3 {
				return fmt.Errorf("pods are served by %d shards, want 3:\n%s", len(got), got)
			}
			return nil
		})
	})

	t.Run("rate of restarts, across a restart of the exporter", func(t *testing.T) {
		p := runningPod(t)
		c := p.Status.ContainerStatuses[0]
		series := fmt.Sprintf(`e2e_pod_container_restarts_total{job=%q,namespace=%q,pod=%q,container=%q}`, job, p.Namespace, p.Name, c.Name)
		prom.WaitAnswer(t, series, framework.Answer{"": float64(c.RestartCount)})
		restarts := bumpRestarts(t, p.Namespace, p.Name, 3)
		prom.WaitAnswer(t, series, framework.Answer{"": float64(restarts)})
		// Only that container's restarts went up.
		rising := framework.Key(p.Namespace, p.Name, c.Name)
		prom.WaitFor(t, `rate(e2e_pod_container_restarts_total`+sel+`[1m]) > 0`, func(v model.Vector) error {
			if got := framework.AnswerOf(v, "namespace", "pod", "container"); len(got) != 1 || got[rising] == 0 {
				return fmt.Errorf("counters rising:\n%swant only %s", got, rising)
			}
			return nil
		})

		// The counter continues across a restart of the exporter: its
		// values come from the objects, so Prometheus sees no reset.
		run.Stop(t)
		startExporter(t, addr, "--config", config)
		// The exporter's own scrape counter starts again from zero: a
		// reset shows that Prometheus scraped the new process.
		prom.WaitFor(t, `resets(kubectl_informer_scrape_duration_seconds_count`+sel+`[10m]) >= 1`, nonEmpty)
		prom.WaitAnswer(t, series, framework.Answer{"": float64(restarts)})
		if v := query(t, prom, `resets(e2e_pod_container_restarts_total`+sel+`[10m]) > 0`); len(v) > 0 {
			t.Errorf("counters reset across the exporter's restart:\n%v", v)
		}
	})

	t.Run("absent after a delete", func(t *testing.T) {
		p := runningPod(t)
		q := fmt.Sprintf(`absent(e2e_pod_info{job=%q,namespace=%q,pod=%q})`, job, p.Namespace, p.Name)
		prom.WaitAnswer(t, q, framework.Answer{})
		if err := cluster.Client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
		prom.WaitAnswer(t, q, framework.Answer{"": 1})
	})

	t.Run("recording rules", func(t *testing.T) {
		prom.WaitAnswer(t, `job_metric:kubectl_informer_metric_series:sum{job="`+shardedJob+`",metric="e2e_pod_info"}`,
			framework.Answer{"": float64(len(pods(t)))})
		prom.WaitFor(t, `job_resource:kubectl_informer_resource_events:rate5m{job="`+job+`",resource="pods"}`, nonEmpty)
		prom.WaitFor(t, `job:kubectl_informer_event_to_series_seconds:p99_rate5m{job="`+job+`"} > 0`, nonEmpty)
	})

	t.Run("dashboard", func(t *testing.T) {
		checkDashboard(t, prom, []string{job, shardedJob})
	})
}

// pods lists the pods of the workload.
func pods(t *testing.T) []corev1.Pod {
	t.Helper()
	list, err := cluster.Client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// runningPod returns a Running pod with a container status, the first by
// namespace and name.
func runningPod(t *testing.T) corev1.Pod {
	t.Helper()
	for _, p := range pods(t) {
		if p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) > 0 {
			return p
		}
	}
	t.Fatal("the workload has no Running pod with a container status")
	return corev1.Pod{}
}

// bumpRestarts adds one to the restart count of the first container of the
// pod n times, one update at a time, and returns the count.
func bumpRestarts(t *testing.T, ns, name string, n int) int32 {
	t.Helper()
	pods := cluster.Client.CoreV1().Pods(ns)
	var count int32
	for range n {
		p, err := pods.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Status.ContainerStatuses[0].RestartCount++
		if _, err := pods.UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		count = p.Status.ContainerStatuses[0].RestartCount
	}
	return count
}

// query answers q or fails the test.
func query(t *testing.T, prom *framework.Prometheus, q string) model.Vector {
	t.Helper()
	v, err := prom.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// nonEmpty accepts an answer with at least one sample.
func nonEmpty(v model.Vector) error {
	if len(v) == 0 {
		return errors.New("no sample")
	}
	return nil
}
