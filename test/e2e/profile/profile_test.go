package profile_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

// needState are the families of the profile that the sample workload has
// no object for, each with what it would take; every other family must
// have series.
var needState = map[string]string{
	"kube_cronjob_schedule_invalid":                 "a schedule that does not parse, which the API server refuses (the profile's unit tests cover it)",
	"kube_node_deletion_timestamp":                  "a node being deleted, which would leave the cluster the other tests read (the profile's unit tests cover it)",
	"kube_persistentvolumeclaim_deletion_timestamp": "a claim being deleted (the profile's unit tests cover it)",
	"kube_persistentvolume_deletion_timestamp":      "a volume being deleted (the profile's unit tests cover it)",
}

// addStates writes what the sample workload's objects lack for the
// families that need it: terminating replicas in a deployment's and a
// replica set's status, an autoscaler with tolerances, a node's role and
// taint, a resource quota, a bound claim and its volume, and a namespace's
// condition.
func addStates(t *testing.T) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := workload.NamespaceName(0)
	patch := []byte(`{"status":{"terminatingReplicas":1}}`)
	deps, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || len(deps.Items) == 0 {
		t.Fatalf("deployments of %s: %v", ns, err)
	}
	if _, err := cs.AppsV1().Deployments(ns).Patch(ctx, deps.Items[0].Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || len(rss.Items) == 0 {
		t.Fatalf("replica sets of %s: %v", ns, err)
	}
	if _, err := cs.AppsV1().ReplicaSets(ns).Patch(ctx, rss.Items[0].Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	tolerance := func(s string) *resource.Quantity { q := resource.MustParse(s); return &q }
	_, err = cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "tolerant"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 3,
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: deps.Items[0].Name},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleUp:   &autoscalingv2.HPAScalingRules{Tolerance: tolerance("50m")},
				ScaleDown: &autoscalingv2.HPAScalingRules{Tolerance: tolerance("0.1")}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A role and a taint on a node.
	node := []byte(`{"metadata":{"labels":{"node-role.kubernetes.io/worker":""}},"spec":{"taints":[{"key":"dedicated","value":"db","effect":"NoSchedule"}]}}`)
	if _, err := cs.CoreV1().Nodes().Patch(ctx, workload.NodeName(0), types.StrategicMergePatchType, node, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// A resource quota with the status the quota controller would write.
	quota, err := cs.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "compute"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1000")}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	quota.Status = corev1.ResourceQuotaStatus{
		Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1000")},
		Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("5")},
	}
	if _, err := cs.CoreV1().ResourceQuotas(ns).UpdateStatus(ctx, quota, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A bound claim, as the volume controller leaves it.
	class := "standard"
	claim, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &class, VolumeName: "pv-data",
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	claim.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: claim.Spec.AccessModes,
		Capacity:   corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
		Conditions: []corev1.PersistentVolumeClaimCondition{{Type: corev1.PersistentVolumeClaimResizing, Status: corev1.ConditionFalse}}}
	if _, err := cs.CoreV1().PersistentVolumeClaims(ns).UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The claim's volume, bound to it.
	mode := corev1.PersistentVolumeFilesystem
	pv, err := cs.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-data", Labels: map[string]string{"tier": "ssd"}},
		Spec: corev1.PersistentVolumeSpec{StorageClassName: class, VolumeMode: &mode,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: "data"},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "csi.example.com", VolumeHandle: "vol-1"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}
	if _, err := cs.CoreV1().PersistentVolumes().UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A condition, as the namespace controller writes while it deletes.
	cond := []byte(`{"status":{"conditions":[{"type":"NamespaceDeletionContentFailure","status":"False","reason":"ContentDeleted"}]}}`)
	if _, err := cs.CoreV1().Namespaces().Patch(ctx, ns, types.StrategicMergePatchType, cond, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
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
	addStates(t)
	_, url := cluster.ServeExporter(t, nil, exporter.Options{Sources: exporter.Sources{
		Profile:              profiles.KubeStateMetrics,
		LabelsAllowlist:      map[string][]string{"*": {"*"}},
		AnnotationsAllowlist: map[string][]string{"*": {"*"}},
	}})
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
	_, url := cluster.ServeExporter(t, nil, exporter.Options{Sources: exporter.Sources{
		Profile:         profiles.KubeStateMetrics,
		Selection:       sel,
		LabelsAllowlist: map[string][]string{"pods": {"app", "tier"}},
	}})
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

// namespacesOf returns the namespaces of the series of the kube_ families
// with series in mfs.
func namespacesOf(mfs map[string]*dto.MetricFamily) map[string]bool {
	out := map[string]bool{}
	for name, mf := range mfs {
		if !strings.HasPrefix(name, "kube_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "namespace" {
					out[l.GetValue()] = true
				}
			}
		}
	}
	return out
}

// profileSources are the profile's families that sel keeps.
func profileSources(sel exporter.Selection) exporter.Sources {
	return exporter.Sources{Profile: profiles.KubeStateMetrics, Selection: sel}
}

// TestNamespacesAndShards checks --namespaces and --namespaces-denylist
// with the profile, and that its shards partition its series.
func TestNamespacesAndShards(t *testing.T) {
	first, second := workload.NamespaceName(0), workload.NamespaceName(1)
	sel := exporter.Selection{Resources: []string{"pods", "deployments", "jobs"}}
	_, only := cluster.ServeExporter(t, nil, exporter.Options{Sources: profileSources(sel), Namespaces: []string{first}})
	_, except := cluster.ServeExporter(t, nil, exporter.Options{Sources: profileSources(sel), NamespacesDenylist: []string{first}})
	_, whole := cluster.ServeExporter(t, nil, exporter.Options{Sources: profileSources(sel)})
	var shards []string
	for i := range 3 {
		_, url := cluster.ServeExporter(t, nil, exporter.Options{Sources: profileSources(sel), Shard: exporter.Shard{Index: i, Total: 3}})
		shards = append(shards, url)
	}
	for _, url := range append([]string{only, except, whole}, shards...) {
		framework.WaitReady(t, url)
	}
	if got := namespacesOf(framework.Scrape(t, only)); len(got) != 1 || !got[first] {
		t.Errorf("--namespaces %s: series of %v", first, got)
	}
	if got := namespacesOf(framework.Scrape(t, except)); got[first] || !got[second] {
		t.Errorf("--namespaces-denylist %s: series of %v", first, got)
	}

	// The union of the shards' series is the whole, and no series is in
	// two shards.
	lines := func(url string) []string {
		return framework.SeriesLines(framework.Scrape(t, url), nil)
	}
	var union []string
	for _, url := range shards {
		for _, l := range lines(url) {
			if strings.HasPrefix(l, "kube_") {
				union = append(union, l)
			}
		}
	}
	sort.Strings(union)
	var want []string
	for _, l := range lines(whole) {
		if strings.HasPrefix(l, "kube_") {
			want = append(want, l)
		}
	}
	sort.Strings(want)
	if !slices.Equal(union, want) {
		t.Errorf("the shards' union has %d series, the whole %d", len(union), len(want))
	}
}

// TestProfileBesideConfig serves the profile and a config file of one's
// own in one exporter: both sets of families, on the same caches, checked
// against the resources' schemas part by part.
func TestProfileBesideConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "own.yaml")
	own := `apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: pods
  metrics:
  - name: my_pods_per_node
    help: Pods per node.
    type: gauge
    aggregate: count
    labels:
      node: object.spec.?nodeName.orValue("")
`
	if err := os.WriteFile(path, []byte(own), 0o600); err != nil {
		t.Fatal(err)
	}
	_, url := cluster.ServeExporter(t, nil, exporter.Options{Sources: exporter.Sources{Profile: profiles.KubeStateMetrics,
		Selection: exporter.Selection{Resources: []string{"pods"}}, ConfigPath: path}})
	framework.WaitReady(t, url)
	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	list, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := len(list.Items)
	// The series follow the caches' events: wait until both families
	// count every pod.
	deadline := time.Now().Add(framework.HangTimeout)
	for {
		mfs := framework.Scrape(t, url)
		info := len(mfs["kube_pod_info"].GetMetric())
		total := 0.0
		for _, m := range mfs["my_pods_per_node"].GetMetric() {
			total += framework.SampleValue(m)
		}
		if info == want && int(total) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: kube_pod_info has %d series and my_pods_per_node counts %v pods; the API server has %d", framework.HangTimeout, info, total, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestNonDefaultResource: ingressclasses, which kube-state-metrics serves
// only when its --resources names it, is served when the selection names
// it, from the workload's ingress class.
func TestNonDefaultResource(t *testing.T) {
	_, url := cluster.ServeExporter(t, nil, exporter.Options{Sources: exporter.Sources{
		Profile:   profiles.KubeStateMetrics,
		Selection: exporter.Selection{Resources: []string{"ingressclasses"}},
	}})
	framework.WaitReady(t, url)
	mfs := framework.Scrape(t, url)
	info := mfs["kube_ingressclass_info"].GetMetric()
	if len(info) != 1 {
		t.Fatalf("kube_ingressclass_info: %d series, want 1 (the workload's ingress class)", len(info))
	}
	got := map[string]string{}
	for _, l := range info[0].GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	if got["ingressclass"] != "nginx" || got["controller"] != "k8s.io/ingress-nginx" {
		t.Errorf("kube_ingressclass_info labels %v, want ingressclass nginx, controller k8s.io/ingress-nginx", got)
	}
	if n := len(mfs["kube_ingressclass_created"].GetMetric()); n != 1 {
		t.Errorf("kube_ingressclass_created: %d series, want 1", n)
	}
	if n := len(mfs["kube_pod_info"].GetMetric()); n != 0 {
		t.Errorf("kube_pod_info: %d series; the selection names ingressclasses only", n)
	}
}
