package faults_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestExporterForbiddenLookup runs the exporter as a user that RBAC lets
// list and watch pods but not configmaps, which the config reads only with
// get(). The configmaps are reported like a configured resource: by their
// resolved name, in kubectl_informer_resource_healthy and _synced (0) and
// in /readyz, which stays 503 since they never sync. The pods, configured
// under their short name "po", are reported as "pods" too.
func TestExporterForbiddenLookup(t *testing.T) {
	const user = "faults-lookup"
	kubeconfig, _ := cluster.AddUserAllowed(t, user,
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "watch"}})
	ns := cluster.NewNamespace(t, "lookup")
	cluster.CreatePod(t, ns, "p1", nil)
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte(`apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: po
  namespaces: [`+ns+`]
  metrics:
  - name: test_pod_settings_info
    help: A pod, with whether its namespace has settings.
    type: info
    labels:
      pod: object.metadata.name
      settings: 'string(get("configmaps", object.metadata.namespace, "settings") != null)'
`), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := framework.ClosedPort(t)
	x := cluster.StartPlugin(t, "export", "--kubeconfig", kubeconfig, "--config", config, "--web.listen-address", addr)
	url := "http://" + addr

	cmLabels := fmt.Sprintf(`namespace=%q,resource="configmaps"`, ns)
	podLabels := fmt.Sprintf(`namespace=%q,resource="pods"`, ns)
	waitFor(t, x, "the configmaps read by get() to be reported unhealthy", func() bool {
		return telemetry(url, "resource_healthy", cmLabels) == 0
	})
	waitFor(t, x, "the pods to be reported synced and healthy as pods", func() bool {
		return telemetry(url, "resource_synced", podLabels) == 1 && telemetry(url, "resource_healthy", podLabels) == 1
	})
	if v := telemetry(url, "resource_synced", cmLabels); v != 0 {
		t.Errorf("kubectl_informer_resource_synced{%s} = %v, want 0", cmLabels, v)
	}
	if v := telemetry(url, "list_request_errors_total", cmLabels); v < 1 {
		t.Errorf("kubectl_informer_list_request_errors_total{%s} = %v, want at least 1", cmLabels, v)
	}
	if _, body := get(url + "/metrics"); strings.Contains(body, `resource="po"`) {
		t.Errorf("/metrics names the pods as the config spells them, po:\n%s", body)
	}
	failing := regexp.MustCompile(`configmaps in ` + ns + ` \((list|watch) failing for \d+s: configmaps is forbidden: User "` + user + `" cannot (list|watch) resource "configmaps"`)
	waitFor(t, x, "/readyz to answer 503 naming the forbidden configmaps", func() bool {
		code, body := get(url + "/readyz")
		return code == http.StatusServiceUnavailable && failing.MatchString(body)
	})
	waitFor(t, x, "the forbidden configmaps to be logged", func() bool {
		return strings.Contains(x.ErrOut.String(), `resource="configmaps in `+ns+`"`) && strings.Contains(x.ErrOut.String(), "forbidden")
	})
	if code := x.Stop(t); code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, x.ErrOut)
	}
}
