package exporter_test

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
)

// The relationship functions in a config: the series follow the related
// objects, and an Event created later computes the series of its pod
// again.
func TestRelationFunctionsSeries(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client
	ns := cluster.NewNamespace(t, "relations")
	web := map[string]string{"app": "web"}
	yes := true
	one := int32(1)
	spec := appsv1.ReplicaSetSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: web},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: web}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}}}}
	d, err := c.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: spec.Selector, Template: spec.Template}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := c.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: &yes}}}, Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1-a", Labels: web,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes}}}, Spec: spec.Template.Spec}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cluster.CreatePod(t, ns, "lone", map[string]string{"app": "db"})
	if _, err := c.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Selector: web, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, url, _ := startWith(t, `apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: pods
  namespaces: [`+ns+`]
  metrics:
  - name: test_pod_owner_info
    help: The controller of a pod and the root of its chain.
    type: info
    labels:
      namespace: object.metadata.namespace
      pod: object.metadata.name
      owner: 'owner(object) == null ? "" : owner(object).metadata.name'
      root: 'owners(object).size() == 0 ? "" : owners(object)[owners(object).size() - 1].metadata.name'
  - name: test_pod_events
    help: The Events about a pod.
    type: gauge
    labels:
      namespace: object.metadata.namespace
      pod: object.metadata.name
    value: events(object).size()
- resource: services
  namespaces: [`+ns+`]
  metrics:
  - name: test_service_pods
    help: The pods a Service selects.
    type: gauge
    labels:
      namespace: object.metadata.namespace
      service: object.metadata.name
    value: selected(object, "pods").size()
`, exporter.Options{})

	// What the series must be, from the API's objects.
	expected := func() (owners, evs, selected map[string]float64) {
		owners, evs, selected = map[string]float64{}, map[string]float64{}, map[string]float64{}
		pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rss, err := c.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		deps, err := c.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		events, err := c.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svcs, err := c.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		byUID := map[string]metav1.Object{}
		for i := range rss.Items {
			byUID[string(rss.Items[i].UID)] = &rss.Items[i]
		}
		for i := range deps.Items {
			byUID[string(deps.Items[i].UID)] = &deps.Items[i]
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			owner, root := "", ""
			var o metav1.Object = p
			for ref := metav1.GetControllerOf(o); ref != nil && byUID[string(ref.UID)] != nil; ref = metav1.GetControllerOf(o) {
				o = byUID[string(ref.UID)]
				if owner == "" {
					owner = o.GetName()
				}
				root = o.GetName()
			}
			owners[fmt.Sprintf("namespace=%s,owner=%s,pod=%s,root=%s", ns, owner, p.Name, root)] = 1
			n := 0.0
			for _, e := range events.Items {
				if e.InvolvedObject.UID == p.UID {
					n++
				}
			}
			evs[fmt.Sprintf("namespace=%s,pod=%s", ns, p.Name)] = n
		}
		for _, s := range svcs.Items {
			n := 0.0
			for _, p := range pods.Items {
				if len(s.Spec.Selector) > 0 && labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(p.Labels)) {
					n++
				}
			}
			selected[fmt.Sprintf("namespace=%s,service=%s", ns, s.Name)] = n
		}
		return owners, evs, selected
	}
	check := func(what string) {
		t.Helper()
		eventually(t, what, func() (bool, string) {
			owners, evs, sel := expected()
			gotOwners, gotEvs, gotSel := series(t, url, "test_pod_owner_info"), series(t, url, "test_pod_events"), series(t, url, "test_service_pods")
			return equal(owners, gotOwners) && equal(evs, gotEvs) && equal(sel, gotSel),
				fmt.Sprintf("owners %v vs %v; events %v vs %v; selected %v vs %v", gotOwners, owners, gotEvs, evs, gotSel, sel)
		})
	}
	check("the series of the objects as created")

	pod, err := c.CoreV1().Pods(ns).Get(ctx, "web-1-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Events(ns).Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "web-1-a.1"}, Reason: "Scheduled",
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod.Name, UID: pod.UID, APIVersion: "v1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Pods(ns).Patch(ctx, "lone", types.MergePatchType, []byte(`{"metadata":{"labels":{"app":"web"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	check("the series after an Event about a pod and a pod relabelled")
}
