package profile_test

import (
	"context"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// needState are the families of the profile that the sample workload has
// no object for, each with what it would take; every other family must
// have series.
var needState = map[string]string{
	"kube_deployment_status_terminating_replicas": "a deployment controller that reports terminating replicas",
	"kube_replicaset_status_terminating_replicas": "a replica set controller that reports terminating replicas",
}

// profileFamilies returns the names of the profile's families.
func profileFamilies(t *testing.T, sel exporter.Selection) []string {
	t.Helper()
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	c, err := exporter.Sources{Profile: profiles.KubeStateMetrics, Selection: sel}.Load(env)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range c.Resources {
		for _, f := range r.Families {
			out = append(out, f.Name)
		}
	}
	return out
}

// scrapeText returns the exposition of url's /metrics.
func scrapeText(t *testing.T, url string) string {
	t.Helper()
	code, body := framework.Get(t, url+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	return body
}

func TestEveryFamilyServed(t *testing.T) {
	_, url := cluster.ServeExporter(t, nil, exporter.Options{
		Profile:              profiles.KubeStateMetrics,
		LabelsAllowlist:      map[string][]string{"*": {"*"}},
		AnnotationsAllowlist: map[string][]string{"*": {"*"}},
	})
	framework.WaitReady(t, url)
	mfs := framework.Scrape(t, url)
	for _, name := range profileFamilies(t, exporter.Selection{}) {
		n := len(mfs[name].GetMetric())
		if why, ok := needState[name]; ok {
			t.Logf("%s: %d series (the workload has no object for it: %s)", name, n, why)
			continue
		}
		if n == 0 {
			t.Errorf("%s has no series", name)
		}
	}
	// No expression of the profile fails on the workload's objects.
	for _, m := range mfs["kubectl_informer_metric_evaluation_errors_total"].GetMetric() {
		if v := framework.SampleValue(m); v != 0 {
			t.Errorf("kubectl_informer_metric_evaluation_errors_total %v = %v", m.GetLabel(), v)
		}
	}
	if len(mfs["kubectl_informer_metric_evaluation_errors_total"].GetMetric()) == 0 {
		t.Error("no kubectl_informer_metric_evaluation_errors_total series")
	}
	problems, err := promlint.New(strings.NewReader(scrapeText(t, url))).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "kube_") && (strings.Contains(p.Text, "_total") || strings.Contains(p.Text, "base unit") || strings.Contains(p.Text, "snake_case")) {
			continue // kube-state-metrics' own names, which are the specification
		}
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}

// labelSets returns the label sets of the series of a family, each as
// sorted name=value pairs.
func labelSets(mf *dto.MetricFamily) []string {
	var out []string
	for _, m := range mf.GetMetric() {
		var ls []string
		for _, l := range m.GetLabel() {
			if l.GetValue() != "" {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
		}
		sort.Strings(ls)
		out = append(out, strings.Join(ls, ","))
	}
	sort.Strings(out)
	return out
}

// TestSelectionAndValues checks --resources and --metric-denylist, a
// labels allowlist against the pods' labels, and values against the API
// server's objects.
func TestSelectionAndValues(t *testing.T) {
	sel := exporter.Selection{Resources: []string{"pods", "deployments"}, MetricDenylist: []string{"^kube_pod_container", "_annotations$"}}
	_, url := cluster.ServeExporter(t, nil, exporter.Options{
		Profile:         profiles.KubeStateMetrics,
		Selection:       sel,
		LabelsAllowlist: map[string][]string{"pods": {"app", "tier"}},
	})
	framework.WaitReady(t, url)
	mfs := framework.Scrape(t, url)
	want := profileFamilies(t, sel)
	for name, mf := range mfs {
		if !strings.HasPrefix(name, "kube_") || len(mf.GetMetric()) == 0 {
			continue
		}
		if !slices.Contains(want, name) {
			t.Errorf("%s is served; the selection leaves it out", name)
		}
		if !strings.HasPrefix(name, "kube_pod_") && !strings.HasPrefix(name, "kube_deployment_") || strings.HasPrefix(name, "kube_pod_container") {
			t.Errorf("%s is served; the selection is pods and deployments without container families", name)
		}
	}
	if len(mfs["kube_deployment_labels"].GetMetric()) != 0 {
		t.Error("kube_deployment_labels has series; the allowlist names pods only")
	}

	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wantLabels []string
	phases := map[string]int{}
	for _, p := range pods.Items {
		ls := []string{"namespace=" + p.Namespace, "pod=" + p.Name, "uid=" + string(p.UID)}
		for _, k := range []string{"app", "tier"} {
			if v := p.Labels[k]; v != "" {
				ls = append(ls, "label_"+k+"="+v)
			}
		}
		sort.Strings(ls)
		wantLabels = append(wantLabels, strings.Join(ls, ","))
		phases[string(p.Status.Phase)]++
	}
	sort.Strings(wantLabels)
	if got := labelSets(mfs["kube_pod_labels"]); !slices.Equal(got, wantLabels) {
		t.Errorf("kube_pod_labels:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantLabels, "\n"))
	}
	gotPhases := map[string]int{}
	for _, m := range mfs["kube_pod_status_phase"].GetMetric() {
		if framework.SampleValue(m) == 1 {
			for _, l := range m.GetLabel() {
				if l.GetName() == "phase" {
					gotPhases[l.GetValue()]++
				}
			}
		}
	}
	for phase, n := range phases {
		if gotPhases[phase] != n {
			t.Errorf("kube_pod_status_phase: %d pods %s, the API server has %d", gotPhases[phase], phase, n)
		}
	}

	deps, err := cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	replicas := map[string]float64{}
	for _, m := range mfs["kube_deployment_spec_replicas"].GetMetric() {
		var key []string
		for _, l := range m.GetLabel() {
			key = append(key, l.GetValue())
		}
		sort.Strings(key)
		replicas[strings.Join(key, "/")] = framework.SampleValue(m)
	}
	if len(deps.Items) == 0 {
		t.Fatal("the workload has no deployments")
	}
	for _, d := range deps.Items {
		key := []string{d.Namespace, d.Name}
		sort.Strings(key)
		if d.Spec.Replicas != nil && replicas[strings.Join(key, "/")] != float64(*d.Spec.Replicas) {
			t.Errorf("kube_deployment_spec_replicas of %s/%s: %v, spec.replicas %d", d.Namespace, d.Name, replicas[strings.Join(key, "/")], *d.Spec.Replicas)
		}
	}
}
