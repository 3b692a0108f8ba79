package profiles_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/internal/exportertest"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// renderSelected is render with the profile's file for resource as sel
// keeps it (as --resources, --metric-allowlist, --metric-denylist and
// --metric-opt-in-list choose it); "" when sel leaves the file out.
func renderSelected(t *testing.T, sel exporter.Selection, resource string, objs ...any) string {
	t.Helper()
	files, err := sel.Files(profiles.KubeStateMetrics)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(files, func(f profiles.File) bool { return f.Resource == resource })
	if i < 0 {
		return ""
	}
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	c, err := exporter.Compile(files[i].Path, files[i].Data, env)
	if err != nil {
		t.Fatalf("loading %s: %v", files[i].Path, err)
	}
	return exportertest.Exposition(t, c, objs...)
}

// optInCases are kube-state-metrics' own cases of its opt-in families
// (internal/store/pod_test.go and persistentvolume_test.go), with their
// expected exposition as written there. The pods have a container, as
// every pod the API server holds.
var optInCases = []struct {
	resource, family string
	obj              any
	want             string
}{
	{"pods", "kube_pod_nodeselectors", &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod1", Namespace: "ns1", UID: "uid1"},
		Spec:       corev1.PodSpec{NodeSelector: map[string]string{"a": "b"}, Containers: oneContainer},
	}, `
				# HELP kube_pod_nodeselectors Describes the Pod nodeSelectors.
				# TYPE kube_pod_nodeselectors gauge
				kube_pod_nodeselectors{nodeselector_a="b",namespace="ns1",pod="pod1",uid="uid1"} 1
`},
	{"pods", "kube_pod_nodeselectors", &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod2", Namespace: "ns1", UID: "uid6"},
		Spec: corev1.PodSpec{NodeSelector: map[string]string{
			"kubernetes.io/os":                 "linux",
			"cloud.google.com/gke-accelerator": "nvidia-tesla-t4",
		}, Containers: oneContainer},
	}, `
				# HELP kube_pod_nodeselectors Describes the Pod nodeSelectors.
				# TYPE kube_pod_nodeselectors gauge
				kube_pod_nodeselectors{nodeselector_kubernetes_io_os="linux",nodeselector_cloud_google_com_gke_accelerator="nvidia-tesla-t4",namespace="ns1",pod="pod2",uid="uid6"} 1
`},
	{"persistentvolumes", "kube_persistentvolume_csi_attributes", &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "test-pv-available"},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
			CSI: &corev1.CSIPersistentVolumeSource{Driver: "test-driver", VolumeHandle: "test-volume-handle"},
		}},
	}, `
					# HELP kube_persistentvolume_csi_attributes CSI attributes of the Persistent Volume.
					# TYPE kube_persistentvolume_csi_attributes gauge
					kube_persistentvolume_csi_attributes{persistentvolume="test-pv-available",csi_mounter="",csi_map_options=""} 1
`},
	{"persistentvolumes", "kube_persistentvolume_csi_attributes", &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "test-pv-available"},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
			CSI: &corev1.CSIPersistentVolumeSource{Driver: "test-driver", VolumeHandle: "test-volume-handle",
				VolumeAttributes: map[string]string{"mounter": "rbd", "mapOptions": "krbd:rxbounce"}},
		}},
	}, `
					# HELP kube_persistentvolume_csi_attributes CSI attributes of the Persistent Volume.
					# TYPE kube_persistentvolume_csi_attributes gauge
					kube_persistentvolume_csi_attributes{persistentvolume="test-pv-available",csi_mounter="rbd",csi_map_options="krbd:rxbounce"} 1
`},
}

// TestOptInFamiliesKubeStateMetricsCases runs kube-state-metrics' cases
// of its opt-in families through the profile as --metric-opt-in-list
// selects them, and checks that without it (or with a pattern that names
// the other one, or with a denylist that drops them) the families are not
// served, as kube-state-metrics serves them.
func TestOptInFamiliesKubeStateMetricsCases(t *testing.T) {
	for _, c := range optInCases {
		optedIn := exporter.Selection{MetricOptInList: []string{c.family}}
		expectWhole(t, renderSelected(t, exporter.Selection{Resources: []string{c.resource}, MetricOptInList: []string{c.family}, MetricAllowlist: []string{"^" + c.family + "$"}}, c.resource, c.obj), c.want)
		expectFamilies(t, renderSelected(t, optedIn, c.resource, c.obj), c.want)
		// kube-state-metrics matches the patterns anywhere in the name.
		expectFamilies(t, renderSelected(t, exporter.Selection{MetricOptInList: []string{"nodeselectors|csi_attr"}}, c.resource, c.obj), c.want)
		for name, sel := range map[string]exporter.Selection{
			"no --metric-opt-in-list":     {},
			"the other opt-in family":     {MetricOptInList: slices.DeleteFunc(profiles.OptInFamilies(profiles.KubeStateMetrics), func(f string) bool { return f == c.family })},
			"opted in and denylisted":     {MetricOptInList: []string{c.family}, MetricDenylist: []string{c.family}},
			"an allowlist without opt-in": {MetricAllowlist: []string{c.family}},
		} {
			got := renderSelected(t, sel, c.resource, c.obj)
			if fams := parseExposition(t, name, got); len(fams[c.family].Series) > 0 || fams[c.family].Help != "" {
				t.Errorf("%s: %s is served:\n%s", name, c.family, got)
			}
		}
	}
	// The default selection serves every other family of the two files.
	for _, resource := range []string{"pods", "persistentvolumes"} {
		f, err := profiles.FileOf(profiles.KubeStateMetrics, resource)
		if err != nil {
			t.Fatal(err)
		}
		all, err := exporter.Parse(f.Path, f.Data)
		if err != nil {
			t.Fatal(err)
		}
		files, err := exporter.Selection{}.Files(profiles.KubeStateMetrics)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(files, func(f profiles.File) bool { return f.Resource == resource })
		kept, err := exporter.Parse(files[i].Path, files[i].Data)
		if err != nil {
			t.Fatal(err)
		}
		var want, got []string
		for _, m := range all.Resources[0].Metrics {
			if !slices.Contains(profiles.OptInFamilies(profiles.KubeStateMetrics), m.Name) {
				want = append(want, m.Name)
			}
		}
		for _, m := range kept.Resources[0].Metrics {
			got = append(got, m.Name)
		}
		if !slices.Equal(got, want) || len(got) != len(all.Resources[0].Metrics)-1 {
			t.Errorf("%s by default: families %v, want %v", resource, got, want)
		}
	}
}

// TestOptInFamiliesEmpty: a pod without a node selector has one
// kube_pod_nodeselectors series with no selector label, and a volume
// that is not CSI has no kube_persistentvolume_csi_attributes series, as
// in kube-state-metrics (createPodNodeSelectorsFamilyGenerator and
// createPersistentVolumeCSIAttributes).
func TestOptInFamiliesEmpty(t *testing.T) {
	sel := exporter.Selection{MetricOptInList: profiles.OptInFamilies(profiles.KubeStateMetrics)}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u"}, Spec: corev1.PodSpec{Containers: oneContainer}}
	expectFamilies(t, renderSelected(t, sel, "pods", pod), `
# HELP kube_pod_nodeselectors Describes the Pod nodeSelectors.
# TYPE kube_pod_nodeselectors gauge
kube_pod_nodeselectors{namespace="ns",pod="p",uid="u"} 1
`)
	hostPath := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "local"},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}}}}
	expectFamilies(t, renderSelected(t, sel, "persistentvolumes", hostPath), `
# HELP kube_persistentvolume_csi_attributes CSI attributes of the Persistent Volume.
# TYPE kube_persistentvolume_csi_attributes gauge
`)
}
