package node

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// dropInValues are the chart's values that run the project's image, as
// imported on the node, in kube-state-metrics mode with the telemetry port
// scraped too (selfMonitor) and /metrics behind the auth filter: a scrape
// must carry a token the API server authenticates and authorizes.
func dropInValues() map[string]any {
	return map[string]any{
		"image":       map[string]any{"tag": "dev", "pullPolicy": "Never"},
		"selfMonitor": map[string]any{"enabled": true},
		"authFilter":  map[string]any{"enabled": true},
	}
}

// prometheusRules are what kube-prometheus grants its Prometheus
// (prometheus-k8s): discovery of services, endpoints, endpoint slices and
// pods, and get on /metrics, which the exporter's auth filter asks about.
var prometheusRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"services", "endpoints", "pods"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"nodes/metrics"}, Verbs: []string{"get"}},
	{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}},
}

// scrapePrometheus starts the project's Prometheus on the machine, as
// kube-prometheus runs one for a ServiceMonitor with jobLabel
// app.kubernetes.io/name: it discovers the endpoints of the Services of
// namespace labelled app.kubernetes.io/name=app through the API server, with
// the token of a ServiceAccount prometheus-k8s of namespace holding
// kube-prometheus' grants, and scrapes every port named in ports with that
// token, honouring the exporter's labels. Targets get namespace, service,
// pod, container and endpoint labels, and job from the Service's
// app.kubernetes.io/name. ruleFiles are loaded too, and rules and scrapes
// run every second.
func scrapePrometheus(t *testing.T, namespace, app string, ports []string, ruleFiles ...string) *framework.Prometheus {
	t.Helper()
	token := cluster.ServiceAccountToken(t, namespace, "prometheus-k8s", prometheusRules...)
	return scrapePrometheusWithToken(t, token, namespace, app, ports, ruleFiles...)
}

// scrapePrometheusWithToken is scrapePrometheus discovering and scraping
// with token, whatever it is granted.
func scrapePrometheusWithToken(t *testing.T, token, namespace, app string, ports []string, ruleFiles ...string) *framework.Prometheus {
	t.Helper()
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(cluster.NodeDir(), "certs", "ca.crt")
	var rules strings.Builder
	for _, f := range ruleFiles {
		fmt.Fprintf(&rules, "\n- %q", f)
	}
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:%[1]s
scrape_configs:
- job_name: serviceMonitor/%[2]s/%[3]s
  honor_labels: true
  authorization:
    credentials_file: %[4]q
  kubernetes_sd_configs:
  - role: endpoints
    api_server: %[5]q
    authorization:
      credentials_file: %[4]q
    tls_config:
      ca_file: %[6]q
    namespaces:
      names: [%[2]q]
  relabel_configs:
  - source_labels: [__meta_kubernetes_service_label_app_kubernetes_io_name]
    regex: %[3]s
    action: keep
  - source_labels: [__meta_kubernetes_endpoint_port_name]
    regex: %[7]s
    action: keep
  - source_labels: [__meta_kubernetes_namespace]
    target_label: namespace
  - source_labels: [__meta_kubernetes_service_name]
    target_label: service
  - source_labels: [__meta_kubernetes_pod_name]
    target_label: pod
  - source_labels: [__meta_kubernetes_pod_container_name]
    target_label: container
  - source_labels: [__meta_kubernetes_endpoint_port_name]
    target_label: endpoint
  - source_labels: [__meta_kubernetes_service_label_app_kubernetes_io_name]
    target_label: job
`, rules.String(), namespace, app, tokenFile, cluster.Config.Host, ca, strings.Join(ports, "|"))
	if len(ruleFiles) == 0 {
		config = strings.Replace(config, "rule_files:\n", "rule_files: []\n", 1)
	}
	return cluster.StartPrometheus(t, config)
}

// applyKustomize applies the kustomization of the project's directory dir
// (such as deploy/serve) as a user applies it, with the project's image
// tagged as imported on the node: through a kustomization of the test's
// own whose resource is dir and whose images entry sets the tag, with the
// cluster's kubectl apply -k. Everything it created is deleted with kubectl
// delete -k when the test ends, which returns once the objects are gone,
// its namespace included.
func applyKustomize(t *testing.T, dir string) {
	t.Helper()
	tmp := t.TempDir()
	rel, err := filepath.Rel(tmp, filepath.Join(cluster.Root, dir))
	if err != nil {
		t.Fatal(err)
	}
	image, tag, _ := strings.Cut(framework.ProjectImage, ":")
	k := fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- %s
images:
- name: %s
  newTag: %s
`, rel, image, tag)
	if err := os.WriteFile(filepath.Join(tmp, "kustomization.yaml"), []byte(k), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if out, err := cluster.Kubectl("delete", "-k", tmp, "--ignore-not-found", "--timeout", framework.HangTimeout.String()); err != nil {
			t.Errorf("kubectl delete -k %s: %v\n%s", dir, err, out)
		}
	})
	if out, err := cluster.Kubectl("apply", "-k", tmp); err != nil {
		t.Fatalf("kubectl apply -k %s: %v\n%s", dir, err, out)
	}
}

// waitAvailable waits until the Deployment namespace/name has rolled out
// and is Available by its pods' readiness probes, and returns its one pod.
func waitAvailable(t *testing.T, namespace, name string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	var d *appsv1.Deployment
	framework.Eventually(t, "Deployment "+namespace+"/"+name+" is Available", func() bool {
		var err error
		d, err = cluster.Client.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil || d.Status.ObservedGeneration < d.Generation || d.Spec.Replicas == nil ||
			d.Status.UpdatedReplicas != *d.Spec.Replicas || d.Status.AvailableReplicas != *d.Spec.Replicas || d.Status.Replicas != *d.Spec.Replicas {
			return false
		}
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable {
				return c.Status == corev1.ConditionTrue
			}
		}
		return false
	})
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	pods, err := cluster.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		t.Fatal(err)
	}
	var running []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			running = append(running, p)
		}
	}
	if len(running) != 1 {
		t.Fatalf("Deployment %s/%s is Available with %d pods, want 1", namespace, name, len(running))
	}
	p := running[0]
	if p.Spec.NodeName != framework.NodeName || p.Status.PodIP == "" {
		t.Fatalf("pod %s runs on %q at %q, want the node %s", p.Name, p.Spec.NodeName, p.Status.PodIP, framework.NodeName)
	}
	return &p
}

// wantUnauthorized checks that the exporter of the pod at podIP refuses
// a GET of /metrics on its port 8080 without a token: nothing but a
// caller the API server authorizes reads the metrics.
func wantUnauthorized(t *testing.T, podIP string) {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://%s:8080/metrics", podIP)) //nolint:gosec,noctx // G107: the test's own pod
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /metrics without a token answered %s, want 401 Unauthorized", resp.Status)
	}
}
