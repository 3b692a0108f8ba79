package profile_test

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

// labelsOf returns the labels of m.
func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// TestOptInFamilies: kube_pod_nodeselectors and
// kube_persistentvolume_csi_attributes, kube-state-metrics' opt-in
// families, are served by "export --profile kube-state-metrics" when
// --metric-opt-in-list names them, from the API server's pods and volumes
// with kube-state-metrics' labels and values, and not without it; a pattern
// that matches no opt-in family is warned about.
func TestOptInFamilies(t *testing.T) {
	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := workload.NamespaceName(1)
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "optin-selected"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}},
			NodeSelector: map[string]string{"kubernetes.io/os": "linux", "disk.example.com/type": "ssd"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	csi := func(name string, attrs map[string]string) {
		t.Helper()
		_, err := cs.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
					Driver: "rbd.csi.ceph.com", VolumeHandle: name, VolumeAttributes: attrs}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	csi("optin-rbd", map[string]string{"mounter": "rbd", "mapOptions": "krbd:rxbounce", "pool": "p"})
	csi("optin-bare", nil)
	_, err = cs.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "optin-hostpath"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// Opted in: both families, for every pod and every CSI volume.
	addr := framework.ClosedPort(t)
	run := cluster.StartPlugin(t, "export", "--profile", "kube-state-metrics", "--web.listen-address", addr,
		"--resources", "pods,persistentvolumes", "--metric-opt-in-list", "kube_pod_nodeselectors,kube_persistentvolume_csi_attributes")
	url := "http://" + addr
	framework.WaitRunReady(t, run, url)
	var mfs map[string]*dto.MetricFamily
	framework.Eventually(t, "the test's pod and volumes are served", func() bool {
		mfs = framework.Scrape(t, url)
		seen := 0
		for _, m := range mfs["kube_pod_nodeselectors"].GetMetric() {
			if labelsOf(m)["pod"] == "optin-selected" {
				seen++
			}
		}
		for _, m := range mfs["kube_persistentvolume_csi_attributes"].GetMetric() {
			if strings.HasPrefix(labelsOf(m)["persistentvolume"], "optin-") {
				seen++
			}
		}
		return seen == 3
	})
	for _, m := range mfs["kube_pod_nodeselectors"].GetMetric() {
		l := labelsOf(m)
		if l["pod"] != "optin-selected" {
			continue
		}
		want := map[string]string{"namespace": ns, "pod": "optin-selected", "uid": string(pod.UID),
			"nodeselector_kubernetes_io_os": "linux", "nodeselector_disk_example_com_type": "ssd"}
		if !maps.Equal(l, want) || framework.SampleValue(m) != 1 {
			t.Errorf("kube_pod_nodeselectors %v %v, want %v 1", l, framework.SampleValue(m), want)
		}
	}
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(mfs["kube_pod_nodeselectors"].GetMetric()); n != len(pods.Items) {
		t.Errorf("kube_pod_nodeselectors: %d series; the API server has %d pods, each with one", n, len(pods.Items))
	}
	pvs, err := cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{}
	for _, pv := range pvs.Items {
		if c := pv.Spec.CSI; c != nil {
			want[pv.Name] = map[string]string{"persistentvolume": pv.Name, "csi_mounter": c.VolumeAttributes["mounter"], "csi_map_options": c.VolumeAttributes["mapOptions"]}
		}
	}
	if want["optin-rbd"]["csi_mounter"] != "rbd" || want["optin-bare"] == nil || want["optin-hostpath"] != nil {
		t.Fatalf("the API server's CSI volumes: %v", want)
	}
	got := map[string]map[string]string{}
	for _, m := range mfs["kube_persistentvolume_csi_attributes"].GetMetric() {
		l := labelsOf(m)
		got[l["persistentvolume"]] = l
		if framework.SampleValue(m) != 1 {
			t.Errorf("kube_persistentvolume_csi_attributes %v = %v, want 1", l, framework.SampleValue(m))
		}
	}
	if !maps.EqualFunc(got, want, maps.Equal) {
		t.Errorf("kube_persistentvolume_csi_attributes series %v, want %v", got, want)
	}
	text := scrapeText(t, url)
	for _, line := range []string{
		"# HELP kube_pod_nodeselectors Describes the Pod nodeSelectors.",
		"# TYPE kube_pod_nodeselectors gauge",
		"# HELP kube_persistentvolume_csi_attributes CSI attributes of the Persistent Volume.",
		"# TYPE kube_persistentvolume_csi_attributes gauge",
	} {
		if !strings.Contains(text, line+"\n") {
			t.Errorf("/metrics has no line %s", line)
		}
	}
	// The labels kube-state-metrics writes empty are written, empty.
	bare := 0
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, `kube_persistentvolume_csi_attributes{persistentvolume="optin-bare",`) {
			bare++
			if !strings.Contains(line, `csi_mounter=""`) || !strings.Contains(line, `csi_map_options=""`) || !strings.HasSuffix(line, "} 1") {
				t.Errorf("/metrics: %s; want csi_mounter=\"\" and csi_map_options=\"\", value 1", line)
			}
		}
	}
	if bare != 1 {
		t.Errorf("/metrics has %d kube_persistentvolume_csi_attributes lines of optin-bare, want 1", bare)
	}
	problems, err := promlint.New(strings.NewReader(text)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if p.Metric == "kube_pod_nodeselectors" || p.Metric == "kube_persistentvolume_csi_attributes" {
			t.Errorf("promlint: %s: %s", p.Metric, p.Text)
		}
	}
	if code := run.Stop(t); code != 0 {
		t.Errorf("exit code %d; stderr:\n%s", code, run.ErrOut)
	}

	// Without --metric-opt-in-list, or with a pattern that matches no
	// opt-in family (which is warned about), neither is served.
	for _, args := range [][]string{nil, {"--metric-opt-in-list", "kube_pod_info"}} {
		addr := framework.ClosedPort(t)
		run := cluster.StartPlugin(t, append([]string{"export", "--profile", "kube-state-metrics", "--web.listen-address", addr,
			"--resources", "pods,persistentvolumes"}, args...)...)
		url := "http://" + addr
		framework.WaitRunReady(t, run, url)
		mfs := framework.Scrape(t, url)
		if len(mfs["kube_pod_info"].GetMetric()) != len(pods.Items) {
			t.Errorf("%v: kube_pod_info has %d series, want %d", args, len(mfs["kube_pod_info"].GetMetric()), len(pods.Items))
		}
		text := scrapeText(t, url)
		for _, name := range []string{"kube_pod_nodeselectors", "kube_persistentvolume_csi_attributes"} {
			if _, ok := mfs[name]; ok || strings.Contains(text, name) {
				t.Errorf("%v: %s is served", args, name)
			}
		}
		if code := run.Stop(t); code != 0 {
			t.Errorf("%v: exit code %d; stderr:\n%s", args, code, run.ErrOut)
		}
		warned := strings.Contains(run.ErrOut.String(), "warning: --metric-opt-in-list: kube_pod_info matches none of the opt-in families of the kube-state-metrics profile (kube_persistentvolume_csi_attributes, kube_pod_nodeselectors)")
		if warned != (args != nil) {
			t.Errorf("%v: warned %v; stderr:\n%s", args, warned, run.ErrOut)
		}
	}
}
