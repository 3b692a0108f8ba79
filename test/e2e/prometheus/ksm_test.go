package prometheus_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestKubeStateMetricsProfileQueries runs, against the exporter serving the
// kube-state-metrics profile, the kind of PromQL that dashboards and alerts
// written for kube-state-metrics run, and checks each answer against what
// the API server's objects imply.
func TestKubeStateMetricsProfileQueries(t *testing.T) {
	_, addr := startExporter(t, "", "--profile", profiles.KubeStateMetrics)
	prom := cluster.StartPrometheus(t, prometheusConfig(filepath.Join(cluster.Root, monitoring, "rules.yaml"),
		map[string][]string{"kube-state-metrics": {addr}}))
	sel := `job="kube-state-metrics"`
	ctx := context.Background()

	t.Run("pods not ready per namespace", func(t *testing.T) {
		// A sample per namespace with pods that have a Ready condition:
		// how many of those are not ready.
		want := framework.Answer{}
		for _, p := range pods(t) {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady {
					want[p.Namespace] += b2f(c.Status == corev1.ConditionFalse)
				}
			}
		}
		notReady := 0.0
		for _, n := range want {
			notReady += n
		}
		if notReady == 0 {
			t.Fatal("the workload has no pod that is not ready; the test needs some")
		}
		prom.WaitAnswer(t, `sum by (namespace) (kube_pod_status_ready{`+sel+`,condition="false"})`, want, "namespace")
	})

	t.Run("deployments without their replicas available", func(t *testing.T) {
		deployments := cluster.Client.AppsV1().Deployments("")
		list, err := deployments.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) < 2 {
			t.Fatalf("the workload has %d deployments; the test needs two", len(list.Items))
		}
		// One deployment gets all its replicas available.
		d := list.Items[0]
		n := *d.Spec.Replicas
		d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas, d.Status.UnavailableReplicas = n, n, n, n, 0
		if _, err := cluster.Client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, &d, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		list, err = deployments.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := framework.Answer{}
		for _, d := range list.Items {
			if *d.Spec.Replicas != d.Status.AvailableReplicas {
				want[framework.Key(d.Namespace, d.Name)] = float64(*d.Spec.Replicas)
			}
		}
		if _, ok := want[framework.Key(d.Namespace, d.Name)]; ok || len(want) == 0 {
			t.Fatalf("the update did not leave some deployments mismatched and %s/%s not: %v", d.Namespace, d.Name, want)
		}
		prom.WaitAnswer(t, `kube_deployment_spec_replicas{`+sel+`} != kube_deployment_status_replicas_available{`+sel+`}`, want, "namespace", "deployment")
	})

	t.Run("containers restarting", func(t *testing.T) {
		p := runningPod(t)
		c := p.Status.ContainerStatuses[0].Name
		q := `increase(kube_pod_container_status_restarts_total{` + sel + `}[5m]) > 0`
		// Prometheus must have scraped the counters before the restarts.
		prom.WaitFor(t, `kube_pod_container_status_restarts_total{`+sel+fmt.Sprintf(`,namespace=%q,pod=%q}`, p.Namespace, p.Name), nonEmpty)
		if v := query(t, prom, q); len(v) > 0 {
			t.Fatalf("containers restarting before any restart:\n%v", v)
		}
		bumpRestarts(t, p.Namespace, p.Name, 2)
		restarting := framework.Key(p.Namespace, p.Name, c)
		prom.WaitFor(t, q, func(v model.Vector) error {
			if got := framework.AnswerOf(v, "namespace", "pod", "container"); len(got) != 1 || got[restarting] == 0 {
				return fmt.Errorf("containers restarting:\n%swant only %s", got, restarting)
			}
			return nil
		})
	})

	t.Run("CPU requested per namespace in cores", func(t *testing.T) {
		want := framework.Answer{}
		for _, p := range pods(t) {
			for _, c := range p.Spec.Containers {
				if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
					want[p.Namespace] += float64(q.MilliValue())
				}
			}
		}
		// In thousandths of a core: sums of decimal fractions of a core
		// are not exact in binary, and their order is Prometheus'.
		prom.WaitAnswer(t, `round(sum by (namespace) (kube_pod_container_resource_requests{`+sel+`,resource="cpu",unit="core"}) * 1000)`, want, "namespace")
	})
}

// b2f is 1 for true and 0 for false.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
