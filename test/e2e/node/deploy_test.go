package node

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestDeployKubeStateMetrics applies deploy/kube-state-metrics as users
// apply it (kubectl apply -k, the image's tag set by a kustomization of
// their own): the Deployment becomes Available by its own readiness probe,
// and the project's Prometheus, discovering the Service's endpoints with a
// ServiceAccount's token as kube-prometheus does, scrapes it and reads the
// node's real pods from it: the exporter's own pod, on the node, with the
// address the kubelet gave it and its ReplicaSet as creator.
func TestDeployKubeStateMetrics(t *testing.T) {
	const ns, name = "kubectl-informer", "kubectl-informer"
	applyKustomize(t, "deploy/kube-state-metrics")
	pod := waitAvailable(t, ns, name)
	owner := metav1.GetControllerOf(pod)
	if owner == nil {
		t.Fatalf("pod %s has no controller", pod.Name)
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if !cs.Ready {
			t.Errorf("container %s of the Available Deployment's pod is not ready: %+v", cs.Name, cs.State)
		}
	}

	svc, err := cluster.Client.CoreV1().Services(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	job := svc.Labels["app.kubernetes.io/name"]
	var ports []string
	for _, p := range svc.Spec.Ports {
		ports = append(ports, p.Name)
	}
	prom := scrapePrometheus(t, ns, job, ports)
	prom.WaitFor(t, fmt.Sprintf(`up{job=%q}`, job), func(v model.Vector) error {
		if len(v) != len(ports) {
			return fmt.Errorf("%d targets, want %d (%v): %v", len(v), len(ports), ports, v)
		}
		for _, s := range v {
			if s.Value != 1 || string(s.Metric["pod"]) != pod.Name || string(s.Metric["service"]) != svc.Name {
				return fmt.Errorf("target %v is %v, want 1 for pod %s behind Service %s", s.Metric, s.Value, pod.Name, svc.Name)
			}
		}
		return nil
	})
	prom.WaitFor(t, fmt.Sprintf(`kube_pod_info{job=%q,namespace=%q,pod=%q}`, job, ns, pod.Name), func(v model.Vector) error {
		if len(v) != 1 {
			return fmt.Errorf("%d series, want 1", len(v))
		}
		m := v[0].Metric
		want := model.LabelSet{
			"node": model.LabelValue(framework.NodeName), "pod_ip": model.LabelValue(pod.Status.PodIP),
			"host_ip": model.LabelValue(pod.Status.HostIP), "uid": model.LabelValue(pod.UID),
			"created_by_kind": model.LabelValue(owner.Kind), "created_by_name": model.LabelValue(owner.Name),
		}
		for k, val := range want {
			if m[k] != val {
				return fmt.Errorf("kube_pod_info %v: %s is %q, want %q", m, k, m[k], val)
			}
		}
		return nil
	})
	// The kubelet's statuses: running, ready, and the restarts it counts.
	prom.WaitFor(t, fmt.Sprintf(`kube_pod_status_phase{job=%q,namespace=%q,pod=%q} == 1`, job, ns, pod.Name), func(v model.Vector) error {
		if len(v) != 1 || string(v[0].Metric["phase"]) != string(corev1.PodRunning) {
			return fmt.Errorf("got %v, want phase Running", v)
		}
		return nil
	})
	cs := pod.Status.ContainerStatuses[0]
	prom.WaitFor(t, fmt.Sprintf(`kube_pod_container_status_restarts_total{job=%q,namespace=%q,pod=%q,container=%q}`, job, ns, pod.Name, cs.Name), func(v model.Vector) error {
		got, err := cluster.Client.CoreV1().Pods(ns).Get(context.Background(), pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(v) != 1 || int32(v[0].Value) != got.Status.ContainerStatuses[0].RestartCount {
			return fmt.Errorf("got %v, want the kubelet's restart count %d", v, got.Status.ContainerStatuses[0].RestartCount)
		}
		return nil
	})
	prom.WaitFor(t, fmt.Sprintf(`kube_node_info{job=%q,node=%q}`, job, framework.NodeName), func(v model.Vector) error {
		node, err := cluster.Client.CoreV1().Nodes().Get(context.Background(), framework.NodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(v) != 1 || string(v[0].Metric["kubelet_version"]) != node.Status.NodeInfo.KubeletVersion ||
			string(v[0].Metric["container_runtime_version"]) != node.Status.NodeInfo.ContainerRuntimeVersion {
			return fmt.Errorf("got %v, want the node's kubelet %s on %s", v, node.Status.NodeInfo.KubeletVersion, node.Status.NodeInfo.ContainerRuntimeVersion)
		}
		return nil
	})
}

// TestDeployKubePrometheus applies deploy/kube-prometheus/auth-filter as
// users apply it over kube-prometheus (the image's tag set by a
// kustomization of their own), into kube-prometheus' namespace monitoring
// enforcing the restricted Pod Security Standard, with the Prometheus
// Operator's ServiceMonitor and PrometheusRule kinds served (nothing acts
// on them). The Deployment becomes Available by its own probes, and the
// project's Prometheus, as kube-prometheus' prometheus-k8s with no grant
// but those of the manifests, discovers the Service's endpoints and scrapes
// both ports through the exporter's auth filter as two targets of
// job="kube-state-metrics": the families on the main port, the exporter's
// own metrics on the telemetry port only. A scrape without a token is
// refused. (deploy/kube-prometheus/kube-rbac-proxy needs kube-rbac-proxy's
// image, which the node does not have: test/e2e/deploy dry-runs it.)
func TestDeployKubePrometheus(t *testing.T) {
	const ns, name = "monitoring", "kube-state-metrics"
	ctx := context.Background()
	if err := cluster.InstallMonitoringCRDs(); err != nil {
		t.Fatal(err)
	}
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}
	if _, err := cluster.Client.CoreV1().Namespaces().Create(ctx, namespace, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cluster.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
			t.Error(err)
			return
		}
		framework.Eventually(t, "namespace "+ns+" is gone", func() bool {
			_, err := cluster.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
	})
	framework.Eventually(t, "namespace "+ns+" has its default ServiceAccount", func() bool {
		_, err := cluster.Client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
	applyKustomize(t, "deploy/kube-prometheus/auth-filter")
	pod := waitAvailable(t, ns, name)
	if img := pod.Spec.Containers[0].Image; img != framework.ProjectImage {
		t.Fatalf("the exporter runs %s, want %s", img, framework.ProjectImage)
	}

	// Nothing but a caller the API server authorizes reads the metrics.
	wantUnauthorized(t, pod.Status.PodIP)

	// prometheus-k8s holds only what the manifests grant it: discovery in
	// the namespace (a Role) and get on /metrics (a ClusterRole).
	token := cluster.ServiceAccountToken(t, ns, "prometheus-k8s")
	ports := []string{"http-metrics", "telemetry"}
	prom := scrapePrometheusWithToken(t, token, ns, name, ports)
	prom.WaitFor(t, `up{job="kube-state-metrics"}`, func(v model.Vector) error {
		if len(v) != len(ports) {
			return fmt.Errorf("%d targets, want %d (%v): %v", len(v), len(ports), ports, v)
		}
		for _, s := range v {
			if s.Value != 1 || string(s.Metric["pod"]) != pod.Name {
				return fmt.Errorf("target %v is %v, want 1 for pod %s", s.Metric, s.Value, pod.Name)
			}
		}
		return nil
	})
	prom.WaitFor(t, fmt.Sprintf(`kube_pod_info{job="kube-state-metrics",namespace=%q,pod=%q}`, ns, pod.Name), func(v model.Vector) error {
		if len(v) != 1 || string(v[0].Metric["endpoint"]) != "http-metrics" || string(v[0].Metric["node"]) != framework.NodeName {
			return fmt.Errorf("got %v, want the exporter's own pod on %s from the main port", v, framework.NodeName)
		}
		return nil
	})
	// The exporter's own metrics, kube-state-metrics' and the plugin's, on
	// the telemetry port and not on the main port.
	for _, q := range []string{`kube_state_metrics_build_info{job="kube-state-metrics"}`, `kubectl_informer_build_info{job="kube-state-metrics"}`} {
		prom.WaitFor(t, q, func(v model.Vector) error {
			if len(v) != 1 || string(v[0].Metric["endpoint"]) != "telemetry" {
				return fmt.Errorf("got %v, want one series, from the telemetry port", v)
			}
			return nil
		})
	}
}
