package watch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// createOwned creates in ns a ReplicaSet name labelled tier=web and a pod
// name-1 it controls, as the ReplicaSet controller would (none runs here).
func createOwned(t *testing.T, ns, name string) (*appsv1.ReplicaSet, *corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	sel := map[string]string{"app": name}
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}}
	one := int32(1)
	rs, err := cluster.Client.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"tier": "web"}},
		Spec: appsv1.ReplicaSetSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: spec}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rs, createPodOf(t, rs, name+"-1")
}

// createPodOf creates the pod name controlled by rs.
func createPodOf(t *testing.T, rs *appsv1.ReplicaSet, name string) *corev1.Pod {
	t.Helper()
	yes := true
	p, err := cluster.Client.CoreV1().Pods(rs.Namespace).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: rs.Spec.Selector.MatchLabels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes}}},
		Spec: rs.Spec.Template.Spec,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// patchReplicaSet applies the merge patch to the ReplicaSet, or to its
// status subresource, and returns it as the API server has it then.
func patchReplicaSet(t *testing.T, rs *appsv1.ReplicaSet, patch string, subresources ...string) *appsv1.ReplicaSet {
	t.Helper()
	out, err := cluster.Client.AppsV1().ReplicaSets(rs.Namespace).Patch(context.Background(), rs.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, subresources...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRelatedChanges checks that a watch whose --where and --columns read
// a pod's owner shows the pod again, marked "(related)" with its own
// resourceVersion unchanged, when only the owner changes: UPDATED when the
// columns change, LEFT and ENTERED when --where's answer does; and that
// the pods of an owner that did not change are not shown again.
func TestRelatedChanges(t *testing.T) {
	ns := cluster.NewNamespace(t, "watch-related")
	rs, pod := createOwned(t, ns, "web")
	other, otherPod := createOwned(t, ns, "other")
	w := cluster.StartPlugin(t, "watch", "pods", "-n", ns,
		"--where", "owner(object).status.?readyReplicas.orValue(0) < 2",
		"--columns", "ready=owner(object).status.?readyReplicas.orValue(0),tier=owner(object).metadata.labels.tier")
	js := cluster.StartPlugin(t, "watch", "pods", "-n", ns, "-o", "json",
		"--columns", "tier=owner(object).metadata.labels.tier")
	w.WaitLines(t, 2)
	js.WaitLines(t, 2)

	// The line the watch must show for the pod p of the ReplicaSet rs,
	// both read back from the API server.
	line := func(typ string, rs *appsv1.ReplicaSet, p *corev1.Pod) string {
		rs, err := cluster.Client.AppsV1().ReplicaSets(ns).Get(context.Background(), rs.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p, err = cluster.Client.CoreV1().Pods(ns).Get(context.Background(), p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%-7s pod %s/%s %s ready=%d tier=%s", typ, ns, p.Name, p.ResourceVersion, rs.Status.ReadyReplicas, rs.Labels["tier"])
	}
	initial := []string{line("ADDED", other, otherPod), line("ADDED", rs, pod)}
	// The initial list comes in no particular order.
	if got := w.WaitLines(t, 2); strings.Contains(got[0], " pod "+ns+"/web-1 ") {
		initial[0], initial[1] = initial[1], initial[0]
	}
	var want []string
	// Each change is shown before the next is made: a burst of changes
	// of related objects is evaluated once, after it.
	for _, step := range []struct {
		typ   string
		patch string
		sub   []string
	}{
		{"UPDATED (related)", `{"status":{"replicas":1,"readyReplicas":1}}`, []string{"status"}},
		{"UPDATED (related)", `{"metadata":{"labels":{"tier":"db"}}}`, nil},
		{"LEFT (related)", `{"status":{"replicas":2,"readyReplicas":2}}`, []string{"status"}},
		{"ENTERED (related)", `{"status":{"replicas":2,"readyReplicas":0}}`, []string{"status"}},
	} {
		patchReplicaSet(t, rs, step.patch, step.sub...)
		want = append(want, line(step.typ, rs, pod))
		w.WaitLineContaining(t, want[len(want)-1])
	}
	// Nothing else may come before the pod created last.
	last := createPodOf(t, other, "other-2")
	lines := w.WaitLineContaining(t, " pod "+ns+"/"+last.Name+" ")
	if code := w.Stop(t); code != 0 {
		t.Errorf("exit code %d after cancel, want 0; stderr:\n%s", code, w.ErrOut)
	}
	framework.CheckEventLines(t, lines, append(append(initial, want...), line("ADDED", other, last)))
	if w.ErrOut.String() != "" {
		t.Errorf("stderr: %s", w.ErrOut)
	}

	// -o json marks the event "related": true, with the object as it is and
	// no oldObject.
	type event struct {
		Type, Name, ResourceVersion string
		Related                     bool
		Columns                     map[string]any
		Object                      *corev1.Pod
		OldObject                   *corev1.Pod
	}
	var evs []event
	for _, l := range js.WaitLineContaining(t, `"name":"`+last.Name+`"`) {
		var ev event
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		evs = append(evs, ev)
	}
	js.Stop(t)
	got, err := cluster.Client.AppsV1().ReplicaSets(ns).Get(context.Background(), rs.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var tier *event
	for i, ev := range evs {
		if ev.Name == pod.Name && ev.Columns["tier"] == got.Labels["tier"] {
			tier = &evs[i]
		}
		if ev.Type != "ADDED" && (ev.Type != "UPDATED" || !ev.Related || ev.OldObject != nil || ev.Name != pod.Name || ev.Object == nil || ev.ResourceVersion != pod.ResourceVersion) {
			t.Errorf("event %+v, want UPDATED related of %s at resourceVersion %s without oldObject", ev, pod.Name, pod.ResourceVersion)
		}
	}
	if tier == nil {
		t.Errorf("no event shows %s with tier=%s: %+v", pod.Name, got.Labels["tier"], evs)
	}
}
