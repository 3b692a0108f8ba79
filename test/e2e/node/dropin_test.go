package node

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestChartDropIn installs the Helm chart in kube-state-metrics mode on the
// node, as users replace kube-state-metrics: Helm returns once the pod is
// Ready by its own probes, and Prometheus scrapes both ports through the
// Service's endpoints with a ServiceAccount's token, under the job
// kube-state-metrics. A scrape without a token is refused.
func TestChartDropIn(t *testing.T) {
	ns := cluster.NewNamespace(t, "dropin")
	rel := cluster.HelmInstall(t, "kube-state-metrics", ns, dropInValues())
	t.Cleanup(func() { cluster.HelmUninstall(t, rel.Name, ns) })

	pods, err := cluster.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=kube-state-metrics"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("want the exporter's one pod: %v, %v", pods, err)
	}
	pod := pods.Items[0]
	if pod.Spec.NodeName != framework.NodeName || pod.Status.PodIP == "" {
		t.Fatalf("pod %s runs on %q at %q", pod.Name, pod.Spec.NodeName, pod.Status.PodIP)
	}
	// Nothing but a caller the API server authorizes reads the metrics.
	wantUnauthorized(t, pod.Status.PodIP)

	prom := scrapePrometheus(t, ns, "kube-state-metrics", []string{"http", "metrics"})
	prom.WaitFor(t, `up{job="kube-state-metrics"}`, func(v model.Vector) error {
		if len(v) != 2 {
			return fmt.Errorf("%d targets, want 2 (http and metrics): %v", len(v), v)
		}
		for _, s := range v {
			if s.Value != 1 || string(s.Metric["pod"]) != pod.Name {
				return fmt.Errorf("target %v is %v", s.Metric, s.Value)
			}
		}
		return nil
	})
	// The exporter reports its own pod as the kubelet runs it.
	q := fmt.Sprintf(`kube_pod_info{job="kube-state-metrics",namespace=%q,pod=%q}`, ns, pod.Name)
	prom.WaitFor(t, q, func(v model.Vector) error {
		if len(v) != 1 {
			return fmt.Errorf("%d series", len(v))
		}
		m := v[0].Metric
		if string(m["node"]) != framework.NodeName || string(m["pod_ip"]) != pod.Status.PodIP || string(m["host_ip"]) == "" {
			return fmt.Errorf("kube_pod_info %v, want node %s and pod_ip %s", m, framework.NodeName, pod.Status.PodIP)
		}
		return nil
	})
	prom.WaitFor(t, fmt.Sprintf(`kube_pod_status_ready{job="kube-state-metrics",namespace=%q,pod=%q,condition="true"}`, ns, pod.Name), func(v model.Vector) error {
		if len(v) != 1 || v[0].Value != 1 {
			return fmt.Errorf("got %v, want 1", v)
		}
		return nil
	})
	prom.WaitFor(t, `kube_state_metrics_build_info{job="kube-state-metrics",endpoint="metrics"}`, func(v model.Vector) error {
		if len(v) != 1 {
			return fmt.Errorf("got %v, want the telemetry port's build info", v)
		}
		return nil
	})
}
