package exporter_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// podPhaseConfig has no expression that reads the cache after an event
// (no get(), byIndex() or indexes): the pods' cache keeps no objects.
func podPhaseConfig(ns, more string) string {
	return `apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: pods
  namespaces: [` + ns + `]
  metrics:
  - name: test_pod_phase
    help: The phase of each pod.
    type: gauge
    labels:
      pod: object.metadata.name
      phase: object.status.phase
` + more
}

// podPhases returns the API server's pods of ns as test_pod_phase's
// series.
func podPhases(t *testing.T, ns string) map[string]float64 {
	t.Helper()
	pods, err := cluster.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, p := range pods.Items {
		out[fmt.Sprintf("phase=%s,pod=%s", p.Status.Phase, p.Name)] = 1
	}
	return out
}

// TestTransientCacheSeriesAndReload follows pods whose cache keeps no
// objects: adds, updates and deletions reach the series; a reload lists
// them again, and the series of the new config are complete as soon as
// Reload returns, because the running config serves until then.
func TestTransientCacheSeriesAndReload(t *testing.T) {
	ctx := context.Background()
	ns := cluster.NewNamespace(t, "transient")
	for i := range 3 {
		cluster.CreatePod(t, ns, fmt.Sprintf("p%d", i), nil)
	}
	var logs framework.SyncBuffer
	x, srv, path := startWith(t, podPhaseConfig(ns, ""), exporter.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	check := func() (bool, string) {
		want, got := podPhases(t, ns), series(t, srv, "test_pod_phase")
		return equal(want, got), fmt.Sprintf("got %v, want %v", got, want)
	}
	eventually(t, "series match the pods after sync", check)

	p, err := cluster.Client.CoreV1().Pods(ns).Get(ctx, "p0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodSucceeded
	if _, err := cluster.Client.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "an update changes the series", check)
	zero := int64(0)
	if err := cluster.Client.CoreV1().Pods(ns).Delete(ctx, "p1", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a deletion removes the series", check)
	cluster.CreatePod(t, ns, "p3", nil)
	eventually(t, "an add makes series", check)

	more := `  - name: test_pods
    help: Pods.
    type: gauge
    aggregate: count
`
	if err := os.WriteFile(path, []byte(podPhaseConfig(ns, more)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := x.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	// No waiting: Reload returned once the new config had every series.
	want := podPhases(t, ns)
	if got := series(t, srv, "test_pod_phase"); !equal(got, want) {
		t.Errorf("just after the reload: test_pod_phase %v, want %v", got, want)
	}
	if got := series(t, srv, "test_pods"); got[""] != float64(len(want)) {
		t.Errorf("just after the reload: test_pods %v, want %d", got, len(want))
	}
	if !strings.Contains(logs.String(), "listing again") || !strings.Contains(logs.String(), "keeps no objects") {
		t.Errorf("the reload should list the pods again, their cache keeping no objects; the log:\n%s", logs.String())
	}
}

// TestReloadOfForbiddenResourceFails reloads a config that adds a resource
// the exporter may not list: the reload fails, naming the resource, and
// the running config serves on.
func TestReloadOfForbiddenResourceFails(t *testing.T) {
	_, cfg := cluster.AddUserAllowed(t, "e2e-exporter-pods-only",
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "watch"}})
	ns := cluster.NewNamespace(t, "reload-forbidden")
	cluster.CreatePod(t, ns, "p0", nil)
	path := writeConfig(t, podPhaseConfig(ns, ""))
	x, srv := cluster.ServeExporter(t, cfg, exporter.Options{Sources: exporter.Sources{ConfigPath: path}})
	framework.WaitReady(t, srv)
	eventually(t, "the pod's series", func() (bool, string) {
		got := series(t, srv, "test_pod_phase")
		return equal(got, podPhases(t, ns)), fmt.Sprint(got)
	})

	secrets := podPhaseConfig(ns, "") + `- resource: secrets
  namespaces: [` + ns + `]
  metrics:
  - name: test_secret_info
    help: One series per secret.
    type: gauge
    labels:
      secret: object.metadata.name
`
	if err := os.WriteFile(path, []byte(secrets), 0o600); err != nil {
		t.Fatal(err)
	}
	err := x.Reload(t.Context())
	if err == nil || !strings.Contains(err.Error(), "secrets") || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("reloading a config with a forbidden resource: %v; want an error naming secrets and forbidden", err)
	}
	_, body := framework.Get(t, srv+"/metrics")
	if !strings.Contains(body, "kubectl_informer_config_last_reload_successful 0") {
		t.Errorf("the failed reload is not counted")
	}
	if got, want := series(t, srv, "test_pod_phase"), podPhases(t, ns); !equal(got, want) {
		t.Errorf("after the failed reload: test_pod_phase %v, want %v", got, want)
	}
	if strings.Contains(body, "test_secret_info") {
		t.Errorf("the failed config's family is served")
	}
	if code, _ := framework.Get(t, srv+"/readyz"); code != 200 {
		t.Errorf("/readyz answers %d after a failed reload; the running config is ready", code)
	}
}
