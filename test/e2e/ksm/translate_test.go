package ksm_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// translationWorkload creates, in ns, pods, a deployment and ConfigMaps
// that carry labels, annotations and a node selector, so that each
// translated flag changes what is served.
func translationWorkload(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels:      map[string]string{"app": name, "tier": "web"},
			Annotations: map[string]string{"team": "shop", "note": "x"}}
	}
	spec := corev1.PodSpec{NodeSelector: map[string]string{"disk": "ssd"},
		Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}
	for i := range 3 {
		if _, err := cluster.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: meta(fmt.Sprintf("pod-%d", i)), Spec: spec}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta(fmt.Sprintf("cm-%d", i))}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	d := &appsv1.Deployment{ObjectMeta: meta("web"), Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](2),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: spec},
	}}
	if _, err := cluster.Client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// kubeSeries are the series of url's /metrics of the kube_* families,
// but for the exporter's own (kube_state_metrics_*), as sorted lines;
// nil while it does not answer 200 (a process still starting refuses).
func kubeSeries(t *testing.T, url string) []string {
	t.Helper()
	mfs := scrapeURL(t, url)
	if mfs == nil {
		return nil
	}
	for name := range mfs {
		if !strings.HasPrefix(name, "kube_") || strings.HasPrefix(name, "kube_state_metrics_") {
			delete(mfs, name)
		}
	}
	return framework.SeriesLines(mfs, nil)
}

// TestTranslatedFlagsServeAsExport runs the drop-in with kube-state-metrics'
// flags beside export with the same settings given as its own flags, and
// waits until both serve the same kube_* series: under each flag the
// drop-in translates (the selection, both label allowlists in the
// command line's and the options file's forms, namespaces and their
// denylist, static sharding, custom resource state configs inline, in a
// file and alone), its whole output is export's. Each case serves other
// series than the same resources without its flags, so that a flag
// dropped on the way is seen.
func TestTranslatedFlagsServeAsExport(t *testing.T) {
	ns := cluster.NewNamespace(t, "translate")
	ns2 := cluster.NewNamespace(t, "translate2")
	ns3 := cluster.NewNamespace(t, "translate3")
	for _, n := range []string{ns, ns2, ns3} {
		translationWorkload(t, n)
	}
	dir := t.TempDir()
	crs := `kind: CustomResourceStateMetrics
spec:
  resources:
    - groupVersionKind: {group: "", version: v1, kind: ConfigMap}
      metricNamePrefix: kube_e2e_configmap
      labelsFromPath: {name: [metadata, name], namespace: [metadata, namespace]}
      metrics:
        - name: tier
          help: the tier label of a ConfigMap
          each:
            type: Info
            info: {labelsFromPath: {tier: [metadata, labels, tier]}}
`
	crsFile := filepath.Join(dir, "crs.yaml")
	options := filepath.Join(dir, "options.yaml")
	for path, data := range map[string]string{
		crsFile: crs,
		options: fmt.Sprintf("resources: [pods, configmaps]\nnamespaces: [%s, %s]\nmetric_denylist: [kube_pod_status_.*]\n"+
			"labels_allow_list:\n  pods: [app]\n  '*': [tier]\nannotations_allow_list:\n  configmaps: ['*']\n", ns, ns2),
	} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	base := []string{"--resources=pods,deployments,configmaps", "--namespaces=" + ns + "," + ns2}
	cases := []struct {
		name        string
		ksm, export []string
		noProfile   bool
	}{{
		name: "selection, allowlists and namespaces",
		ksm: []string{"--resources=pods,deployments,configmaps", "--namespaces=" + ns + "," + ns2 + "," + ns3, "--namespaces-denylist=" + ns3,
			"--metric-labels-allowlist=pods=[app],deployments=[*]", "--metric-annotations-allowlist=*=[team]",
			"--metric-opt-in-list=kube_pod_nodeselectors", "--metric-denylist=kube_pod_status_.*"},
		export: []string{"--resources=pods,deployments,configmaps", "--namespaces=" + ns + "," + ns2, "--namespaces-denylist=" + ns3,
			"--metric-labels-allowlist=pods=[app],deployments=[*]", "--metric-annotations-allowlist=*=[team]",
			"--metric-opt-in-list=kube_pod_nodeselectors", "--metric-denylist=kube_pod_status_.*"},
	}, {
		name: "options file",
		ksm:  []string{"--config=" + options},
		export: []string{"--resources=pods,configmaps", "--namespaces=" + ns + "," + ns2, "--metric-denylist=kube_pod_status_.*",
			"--metric-labels-allowlist=pods=[app],*=[tier]", "--metric-annotations-allowlist=configmaps=[*]"},
	}, {
		name:   "allowlist, sharding and an inline custom resource state config",
		ksm:    append(slices.Clone(base), "--metric-allowlist=kube_configmap_.*,kube_pod_info,kube_e2e_.*", "--shard=1", "--total-shards=2", "--custom-resource-state-config="+crs),
		export: append(slices.Clone(base), "--metric-allowlist=kube_configmap_.*,kube_pod_info,kube_e2e_.*", "--shard=1", "--total-shards=2", "--custom-resource-state-config="+crs),
	}, {
		name:      "a custom resource state config file alone",
		ksm:       []string{"--namespaces=" + ns, "--custom-resource-state-only", "--custom-resource-state-config-file=" + crsFile},
		export:    []string{"--namespaces=" + ns, "--custom-resource-state-only", "--custom-resource-state-config-file=" + crsFile},
		noProfile: true,
	}}

	baseURL := startExport(t, append([]string{"--profile=kube-state-metrics"}, base...))
	var baseline []string
	framework.Eventually(t, "export serves the baseline", func() bool { baseline = kubeSeries(t, baseURL); return len(baseline) > 0 })

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.export
			if !c.noProfile {
				args = append([]string{"--profile=kube-state-metrics"}, args...)
			}
			want := kubeSeries(t, startExport(t, args))
			if len(want) == 0 || slices.Equal(want, baseline) {
				t.Fatalf("export %v serves %d series, the same as without its flags: the case does not tell whether a flag is dropped", args, len(want))
			}
			p := startKSM(t, nil, c.ksm...)
			var got []string
			p.waitFor(t, func() bool {
				got = kubeSeries(t, p.url)
				return slices.Equal(got, want)
			}, func() string {
				return fmt.Sprintf("kube-state-metrics %v and export %v differ:\n%s", c.ksm, args, diffLines(got, want))
			})
		})
	}
}

// startExport runs export with args on a free port, waits until it is
// ready, and returns its URL.
func startExport(t *testing.T, args []string) string {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	r := cluster.StartPlugin(t, append([]string{"export", "--web.listen-address", addr}, args...)...)
	url := "http://" + addr
	framework.WaitRunReady(t, r, url)
	return url
}

// diffLines says which lines only got and only want have.
func diffLines(got, want []string) string {
	var b strings.Builder
	for _, l := range got {
		if !slices.Contains(want, l) {
			fmt.Fprintf(&b, "+ %s (drop-in only)\n", l)
		}
	}
	for _, l := range want {
		if !slices.Contains(got, l) {
			fmt.Fprintf(&b, "- %s (export only)\n", l)
		}
	}
	return b.String()
}
