package jsonval

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestFingerprintTellsChangedGroups changes one part of a pod at a time,
// typed and unstructured, and checks that exactly the groups of paths
// holding the part get another sum, and that a copy of the pod gets the
// same sums.
func TestFingerprintTellsChangedGroups(t *testing.T) {
	started := metav1.Unix(1700000000, 0)
	base := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", ResourceVersion: "1",
			Labels: map[string]string{"app": "web", "tier": "front", "zone": "a"}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "web:1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &started,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", RestartCount: 1,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}}},
	}
	groups := [][][]string{
		{{"metadata", "labels"}},
		{{"metadata", "name"}, {"metadata", "namespace"}},
		{{"spec", "containers"}},
		{{"status", "containerStatuses"}},
		{{"status", "phase"}, {"spec", "nodeName"}},
		{{"status", "startTime"}},
		{{"metadata", "annotations"}}, // absent throughout
		// Into the elements of a list, and of a map: the whole map.
		{{"status", "containerStatuses", Elements, "restartCount"}},
		{{"metadata", "labels", Elements, "x"}},
	}
	edits := []struct {
		name    string
		edit    func(p *corev1.Pod)
		changed []int // the groups holding what edit changes
	}{
		{"a copy", func(*corev1.Pod) {}, nil},
		{"the resource version, read by none", func(p *corev1.Pod) { p.ResourceVersion = "2" }, nil},
		{"a label", func(p *corev1.Pod) { p.Labels["tier"] = "back" }, []int{0, 8}},
		{"a label removed", func(p *corev1.Pod) { delete(p.Labels, "zone") }, []int{0, 8}},
		{"the name", func(p *corev1.Pod) { p.Name = "web-1" }, []int{1}},
		{"a request's quantity", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("200m")
		}, []int{2}},
		{"a restart", func(p *corev1.Pod) { p.Status.ContainerStatuses[0].RestartCount++ }, []int{3, 7}},
		{"a container's state", func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
		}, []int{3}},
		{"the node and the phase", func(p *corev1.Pod) { p.Spec.NodeName, p.Status.Phase = "node-2", corev1.PodFailed }, []int{4}},
		{"the start time", func(p *corev1.Pod) { later := metav1.Unix(1700000001, 0); p.Status.StartTime = &later }, []int{5}},
		{"no start time", func(p *corev1.Pod) { p.Status.StartTime = nil }, []int{5}},
		{"a container added", func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "proxy"})
		}, []int{2}},
	}
	f := NewFingerprint(groups)
	if f.Groups() != len(groups) {
		t.Fatalf("%d groups, want %d", f.Groups(), len(groups))
	}
	sum := func(obj any) []uint64 {
		t.Helper()
		sums := make([]uint64, f.Groups())
		if !f.Sum(obj, sums, nil) {
			t.Fatalf("%T not summed", obj)
		}
		return sums
	}
	unstructuredOf := func(p *corev1.Pod) *unstructured.Unstructured {
		t.Helper()
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
		if err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: m}
	}
	for _, form := range []string{"typed", "unstructured"} {
		of := func(p *corev1.Pod) any {
			if form == "typed" {
				return p
			}
			return unstructuredOf(p)
		}
		before := sum(of(base))
		for _, e := range edits {
			p := base.DeepCopy()
			e.edit(p)
			after := sum(of(p))
			for g := range groups {
				if differs, want := after[g] != before[g], slices.Contains(e.changed, g); differs != want {
					t.Errorf("%s, %s: the sum of %v changed: %v, want %v", form, e.name, groups[g], differs, want)
				}
			}
		}
	}
}

// TestFingerprintRefusesWhatItCannotRead checks that an object holding a
// function is not summed.
func TestFingerprintRefusesWhatItCannotRead(t *testing.T) {
	f := NewFingerprint([][][]string{{{"spec"}}})
	obj := map[string]any{"spec": map[string]any{"f": func() {}}}
	if f.Sum(obj, make([]uint64, 1), nil) {
		t.Error("an object holding a function was summed")
	}
	if !f.Sum(map[string]any{"spec": map[string]any{"n": int64(1)}}, make([]uint64, 1), nil) {
		t.Error("an object of JSON values was not summed")
	}
}
