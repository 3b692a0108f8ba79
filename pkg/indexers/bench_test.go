package indexers_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// benchPod is a pod as a dynamic informer holds it, with the fields a real
// pod has around the ones the expressions read.
func benchPod() *unstructured.Unstructured {
	o := pod("default", "web-7d9f8b6c5-x2x9z", "node-17", "Pending")
	m := o.Object
	m["metadata"].(map[string]any)["uid"] = "1f0e6b1c-9a43-4a55-9d7e-2f1b6a4c9e11"
	m["metadata"].(map[string]any)["resourceVersion"] = "123456"
	m["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{"kind": "ReplicaSet", "name": "web-7d9f8b6c5", "controller": true}}
	spec := m["spec"].(map[string]any)
	spec["serviceAccountName"] = "default"
	spec["restartPolicy"] = "Always"
	spec["tolerations"] = []any{map[string]any{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}}
	m["status"].(map[string]any)["conditions"] = []any{map[string]any{"type": "PodScheduled", "status": "True"}}
	return o
}

// BenchmarkPredicate evaluates a --where predicate on an unstructured pod.
func BenchmarkPredicate(b *testing.B) {
	p := compile(b, newEnv(b), `object.status.phase == "Pending"`, indexers.KindPredicate)
	o := benchPod()
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := p.Match(o); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkPredicateComprehension evaluates a predicate with a
// comprehension, whose cost is tracked.
func BenchmarkPredicateComprehension(b *testing.B) {
	p := compile(b, newEnv(b), `object.spec.containers.exists(c, c.image.startsWith("registry.example/"))`, indexers.KindPredicate)
	o := benchPod()
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := p.Match(o); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkIndexFunc computes the index of pods by node, as a store does on
// every add.
func BenchmarkIndexFunc(b *testing.B) {
	var stats indexers.Stats
	f := indexers.IndexFunc("byNode", compile(b, newEnv(b), `object.spec.nodeName`, indexers.KindIndex), &stats)
	o := benchPod()
	b.ReportAllocs()
	for b.Loop() {
		if values, err := f(o); len(values) != 1 || err != nil {
			b.Fatal(values, err)
		}
	}
}

// BenchmarkCompile compiles a predicate.
func BenchmarkCompile(b *testing.B) {
	env := newEnv(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := env.Compile(`object.status.phase == "Pending" && object.metadata.labels.app == "web"`, indexers.KindPredicate, "--where"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPredicateAllocations guards the cheap evaluation path: a predicate
// whose cost is bounded is evaluated without cost tracking.
func TestPredicateAllocations(t *testing.T) {
	p := compile(t, newEnv(t), `object.status.phase == "Pending"`, indexers.KindPredicate)
	o := benchPod()
	if n := testing.AllocsPerRun(100, func() { _, _ = p.Match(o) }); n > 3 {
		t.Errorf("Match allocates %v times per evaluation, want at most 3", n)
	}
}
