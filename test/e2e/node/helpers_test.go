package node

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

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
