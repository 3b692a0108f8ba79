package queryserver

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// TestScopedLookupChargesWhatItReads checks that a caller who may read
// pods in one namespace cannot make the server read those of another for
// free: selected() over the other namespace, whose indexes are of one
// namespace, reads nothing there, and byIndex() of an index across
// namespaces is charged for the objects it reads and leaves out.
func TestScopedLookupChargesWhatItReads(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	label, _, err := env.BuiltinIndex(indexers.LabelIndex)
	if err != nil {
		t.Fatal(err)
	}
	byApp, err := env.Compile(`object.metadata.labels.app`, indexers.KindIndex, "index byApp")
	if err != nil {
		t.Fatal(err)
	}
	ixs, err := indexers.Indexers(map[string]*indexers.Program{indexers.LabelIndex: label, "byApp": byApp}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ixs[cache.NamespaceIndex] = cache.MetaNamespaceIndexFunc
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &unstructured.Unstructured{}, 0, ixs)
	const hidden, mine = 2000, 3
	add := func(namespace string, n int) {
		for i := range n {
			u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod"}}
			u.SetNamespace(namespace)
			u.SetName(fmt.Sprintf("p-%d", i))
			u.SetLabels(map[string]string{"app": "x"})
			if err := inf.GetIndexer().Add(u); err != nil {
				t.Fatal(err)
			}
		}
	}
	add("kube-system", hidden)
	add("mine", mine)
	pods := factory.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true}
	inner := factory.NewLookup()
	inner.Add("pods", &factory.Informer{Resource: pods, Informer: inf})
	me := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "me", "namespace": "mine"}}}

	for _, tc := range []struct {
		name, expr string
		want       int64
		// charged: at least the objects read and left out.
		charged uint64
	}{
		{"selected() of every pod of a namespace not readable", `selected({"kind": dyn("Deployment"), "metadata": dyn({"namespace": "kube-system"}), "spec": dyn({"selector": dyn({})})}, "pods").size()`, 0, 0},
		{"selected() by label in a namespace not readable", `selected({"kind": dyn("Deployment"), "metadata": dyn({"namespace": "kube-system"}), "spec": dyn({"selector": dyn({"matchLabels": {"app": "x"}})})}, "pods").size()`, 0, 0},
		{"selected() by label in the readable namespace", `selected({"kind": dyn("Deployment"), "metadata": dyn({"namespace": "mine"}), "spec": dyn({"selector": dyn({"matchLabels": {"app": "x"}})})}, "pods").size()`, mine, mine},
		{"byIndex() across namespaces", `byIndex("pods", "byApp", "x").size()`, mine, hidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			budget := indexers.NewBudget(context.Background(), 0)
			l := &scopedLookup{inner: inner, budget: budget,
				scopes: map[string]*nsScope{"pods": {namespaces: []string{"mine"}, allowed: sets.New("mine")}}}
			p, err := env.Compile(tc.expr, indexers.KindValue, "--columns n")
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.WithLookup(l).WithBudget(budget).Value(me)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("%s = %v, want %d", tc.expr, got, tc.want)
			}
			if used := budget.Used(); used < tc.charged || tc.charged == 0 && used >= mine {
				t.Errorf("budget used %d, want at least %d (and, when nothing may be read, less than the %d objects readable)", used, tc.charged, mine)
			}
		})
	}
}
