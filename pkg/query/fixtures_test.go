package query

import (
	"errors"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// now is the clock of every test that prints AGE.
var now = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

func fixedNow() time.Time { return now }

func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

var podTypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}

// pod is a small pod; images become its containers.
func pod(ns, name, node string, phase corev1.PodPhase, restarts int32, age time.Duration, images ...string) *corev1.Pod {
	p := &corev1.Pod{
		TypeMeta: podTypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         ns,
			Name:              name,
			CreationTimestamp: ago(age),
			Labels:            map[string]string{"app": name[:len(name)-2]},
		},
		Spec:   corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: phase},
	}
	for i, image := range images {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: fmt.Sprintf("c%d", i), Image: image})
	}
	if restarts > 0 {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c0", RestartCount: restarts}}
	}
	return p
}

// testPods are the pods of the query tests.
func testPods() []*corev1.Pod {
	return []*corev1.Pod{
		pod("default", "web-0", "n1", corev1.PodRunning, 3, 2*time.Hour, "nginx", "envoy"),
		pod("default", "web-1", "n2", corev1.PodRunning, 10, 2*time.Hour, "nginx", "nginx"),
		pod("default", "db-0", "n1", corev1.PodPending, 0, 90*time.Second, "postgres"),
		pod("kube-system", "dns-0", "n2", corev1.PodRunning, 0, 72*time.Hour),
		pod("kube-system", "px-a", "n1", corev1.PodFailed, 1, 10*time.Minute, "proxy"),
		pod("other", "web-2", "", corev1.PodPending, 0, 25*time.Hour, "nginx"),
	}
}

func byNode(obj any) ([]string, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("not a pod: %T", obj)
	}
	if p.Spec.NodeName == "" {
		return nil, nil
	}
	return []string{p.Spec.NodeName}, nil
}

func byPhase(obj any) ([]string, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("not a pod: %T", obj)
	}
	return []string{string(p.Status.Phase)}, nil
}

var podIndexers = cache.Indexers{
	cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
	"byNode":             byNode,
	"byPhase":            byPhase,
}

// newIndexer returns a real indexer holding objs.
func newIndexer(t testing.TB, indexers cache.Indexers, objs ...any) cache.Indexer {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, indexers)
	for _, obj := range objs {
		if err := idx.Add(obj); err != nil {
			t.Fatalf("adding %v: %v", obj, err)
		}
	}
	return idx
}

func podIndexer(t testing.TB) cache.Indexer {
	var objs []any
	for _, p := range testPods() {
		objs = append(objs, p)
	}
	return newIndexer(t, podIndexers, objs...)
}

// Value functions written in Go, standing in for compiled expressions.

func podValue(f func(p *corev1.Pod) (any, error)) ValueFunc {
	return func(obj any) (any, error) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return nil, fmt.Errorf("not a pod: %T", obj)
		}
		return f(p)
	}
}

var (
	nodeName = podValue(func(p *corev1.Pod) (any, error) {
		if p.Spec.NodeName == "" {
			return nil, nil
		}
		return p.Spec.NodeName, nil
	})
	phase = podValue(func(p *corev1.Pod) (any, error) { return string(p.Status.Phase), nil })
	name  = podValue(func(p *corev1.Pod) (any, error) { return p.Name, nil })
	// restarts fails on pods without container statuses, like an
	// expression indexing an empty list.
	restarts = podValue(func(p *corev1.Pod) (any, error) {
		if len(p.Status.ContainerStatuses) == 0 {
			return nil, errors.New("index out of range: 0")
		}
		return int64(p.Status.ContainerStatuses[0].RestartCount), nil
	})
	images = podValue(func(p *corev1.Pod) (any, error) {
		var out []any
		for _, c := range p.Spec.Containers {
			out = append(out, c.Image)
		}
		return out, nil
	})
)

func phaseIs(want corev1.PodPhase) PredicateFunc {
	return func(obj any) (bool, error) {
		return obj.(*corev1.Pod).Status.Phase == want, nil
	}
}

// deployment is a typed deployment with TypeMeta set.
func deployment(ns, name string, replicas int32, age time.Duration) *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         ns,
			Name:              name,
			CreationTimestamp: ago(age),
		},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas},
	}
}

// widget is an unstructured object of a custom resource.
func widget(ns, name, color string, age time.Duration) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata": map[string]any{
			"namespace":         ns,
			"name":              name,
			"creationTimestamp": ago(age).UTC().Format(time.RFC3339),
			"managedFields": []any{map[string]any{
				"manager":   "kubectl",
				"operation": "Apply",
			}},
		},
		"spec": map[string]any{"color": color, "size": int64(3)},
	}}
}

// partial is a metadata-only object as a metadata informer holds it: no
// TypeMeta.
func partial(ns, name string, age time.Duration) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Namespace:         ns,
		Name:              name,
		CreationTimestamp: ago(age),
	}}
}

func keys(res *Result) []string {
	out := []string{}
	for _, it := range res.Items {
		out = append(out, indexers.ObjectName(it.Object))
	}
	return out
}

func warningStrings(res *Result) []string {
	var out []string
	for _, w := range res.Warnings {
		out = append(out, w.String())
	}
	return out
}
