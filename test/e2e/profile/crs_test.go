package profile_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

// crsConfig is the custom resource state config make ksm-compare gives
// kube-state-metrics and the exporter alike.
func crsConfig() string { return filepath.Join(cluster.Root, "hack", "ksm-compare-crs.yaml") }

// TestCustomResourceState serves a kube-state-metrics custom resource
// state config as kube-state-metrics' flags give it, and checks each
// family's series against the Database objects the API server holds.
func TestCustomResourceState(t *testing.T) {
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	list, err := dyn.Resource(workload.DatabaseResource).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) == 0 {
		t.Fatalf("databases: %d, %v", len(list.Items), err)
	}
	addr := framework.ClosedPort(t)
	run := cluster.StartPlugin(t, "export", "--custom-resource-state-config-file", crsConfig(), "--custom-resource-state-only",
		"--web.listen-address", addr)
	url := "http://" + addr
	framework.WaitReady(t, url)
	mfs := framework.Scrape(t, url)
	// value returns the sample of family for the database's series with
	// the extra labels, and whether there is one.
	value := func(family string, db unstructured.Unstructured, extra ...string) (float64, bool) {
		want := append([]string{"customresource_group=" + workload.DatabaseGroup, "customresource_kind=Database",
			"customresource_version=v1", "name=" + db.GetName(), "namespace=" + db.GetNamespace(), "team=data"}, extra...)
	series:
		for _, m := range mfs[family].GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for _, kv := range want {
				k, v, _ := strings.Cut(kv, "=")
				if got[k] != v {
					continue series
				}
			}
			return framework.SampleValue(m), true
		}
		return 0, false
	}
	for _, db := range list.Items {
		replicas, _, _ := unstructured.NestedInt64(db.Object, "spec", "replicas")
		ready, _, _ := unstructured.NestedInt64(db.Object, "status", "readyReplicas")
		phase, _, _ := unstructured.NestedString(db.Object, "status", "phase")
		engine, _, _ := unstructured.NestedString(db.Object, "spec", "engine")
		version, _, _ := unstructured.NestedString(db.Object, "spec", "version")
		enabled, _, _ := unstructured.NestedBool(db.Object, "spec", "backup", "enabled")
		for _, c := range []struct {
			family string
			extra  []string
			want   float64
		}{
			{"kube_customresource_database_replicas", nil, float64(replicas)},
			{"kube_customresource_database_ready_replicas", nil, float64(ready)},
			{"kube_customresource_database_backup_enabled", nil, map[bool]float64{true: 1}[enabled]},
			{"kube_customresource_database_phase", []string{"phase=" + phase}, 1},
			{"kube_customresource_database_info", []string{"engine=" + engine, "version=" + version, "schedule=0 3 * * *", "label_engine=" + engine}, 1},
		} {
			got, ok := value(c.family, db, c.extra...)
			if !ok || got != c.want {
				t.Errorf("%s of %s/%s %v: %v (found %v), want %v", c.family, db.GetNamespace(), db.GetName(), c.extra, got, ok, c.want)
			}
		}
	}
	// Three phases per database; the storage's quantity in bytes.
	if n, want := len(mfs["kube_customresource_database_phase"].GetMetric()), 3*len(list.Items); n != want {
		t.Errorf("kube_customresource_database_phase: %d series, want %d", n, want)
	}
	for _, m := range mfs["kube_customresource_database_storage_bytes"].GetMetric() {
		if v := framework.SampleValue(m); v != 10<<30 && v != 50<<30 && v != 200<<30 {
			t.Errorf("kube_customresource_database_storage_bytes %v = %v, want 10, 50 or 200 GiB", m.GetLabel(), v)
		}
	}
	if code := run.Stop(t); code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, run.ErrOut)
	}
}

// TestConvertCRS: --convert-crs prints a config that serves the same
// families, and reports a config it cannot translate with exit code 2,
// before any cluster contact.
func TestConvertCRS(t *testing.T) {
	ctx := context.Background()
	code, out, errOut := framework.RunPlugin(ctx, nil, "export", "--convert-crs", crsConfig())
	if code != app.ExitOK || errOut != "" {
		t.Fatalf("--convert-crs: exit %d\n%s", code, errOut)
	}
	for _, name := range []string{"kube_customresource_database_replicas", "kube_customresource_database_phase", "kube_customresource_database_info"} {
		if !strings.Contains(out, `"`+name+`"`) {
			t.Errorf("--convert-crs prints no family %s:\n%s", name, out)
		}
	}
	file := filepath.Join(t.TempDir(), "converted.yaml")
	if err := os.WriteFile(file, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = framework.RunPlugin(ctx, nil, "export", "--config", file, "--check", "--kubeconfig", cluster.Kubeconfig)
	if code != app.ExitOK {
		t.Errorf("export --check of the printed config: exit %d\n%s", code, errOut)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("kind: CustomResourceStateMetrics\nspec:\n  resources:\n  - groupVersionKind: {group: g, version: \"*\", kind: Foo}\n    metrics:\n    - name: x\n      each: {type: Gauge, gauge: {path: [a]}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// No kubeconfig: nothing is asked of a cluster.
	code, _, errOut = framework.RunPlugin(ctx, nil, "export", "--convert-crs", bad, "--server", "https://"+framework.ClosedPort(t))
	want := fmt.Sprintf("%s: spec.resources[0] (g/* Foo): groupVersionKind with a wildcard is not supported", bad)
	if code != app.ExitUsage || !strings.Contains(errOut, want) {
		t.Errorf("--convert-crs of a wildcard: exit %d, want %d and %q\n%s", code, app.ExitUsage, want, errOut)
	}
}
