package factory_test

import (
	"errors"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
)

var configMaps = factory.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespaced: true}

// informerIn returns an informer of configmaps scoped to namespace, never
// started, whose cache holds one configmap of each name in namespace, with
// an index byName of the names.
func informerIn(t *testing.T, namespace string, names ...string) *factory.Informer {
	t.Helper()
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &unstructured.Unstructured{}, 0, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		"byName": func(obj any) ([]string, error) {
			return []string{obj.(*unstructured.Unstructured).GetName()}, nil
		},
	})
	for _, name := range names {
		u := &unstructured.Unstructured{}
		u.SetNamespace(namespace)
		u.SetName(name)
		if err := inf.GetIndexer().Add(u); err != nil {
			t.Fatal(err)
		}
	}
	return &factory.Informer{Resource: configMaps, Scope: factory.Scope{Namespace: namespace}, Informer: inf}
}

func keys(objs []any) []string {
	var out []string
	for _, obj := range objs {
		u := obj.(*unstructured.Unstructured)
		out = append(out, u.GetNamespace()+"/"+u.GetName())
	}
	slices.Sort(out)
	return out
}

// TestLookupNamespaces reads a resource added with one informer per
// namespace: get() and the namespace index of those namespaces answer from
// their informer, another namespace is a NamespaceNotWatchedError naming
// the namespaces read, and any other index answers from all of them.
func TestLookupNamespaces(t *testing.T) {
	l := factory.NewLookup()
	l.Add("cm", informerIn(t, "shop", "a", "b"), informerIn(t, "batch", "a"))

	if obj, found, err := l.Get("cm", "shop", "b"); err != nil || !found || keys([]any{obj})[0] != "shop/b" {
		t.Errorf("get shop/b: %v, %v, %v", obj, found, err)
	}
	if _, found, err := l.Get("cm", "batch", "b"); err != nil || found {
		t.Errorf("get batch/b: found %v, err %v; want not found", found, err)
	}
	_, _, err := l.Get("cm", "kube-system", "a")
	var nw *factory.NamespaceNotWatchedError
	if !errors.As(err, &nw) || nw.Namespace != "kube-system" || !slices.Equal(nw.Watched, []string{"batch", "shop"}) {
		t.Fatalf("get kube-system/a: %v, want a NamespaceNotWatchedError", err)
	}
	if want := `configmaps are not watched in namespace "kube-system", only in batch, shop`; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}

	objs, err := l.ByIndex("cm", "byName", "a")
	if got, want := keys(objs), []string{"batch/a", "shop/a"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("byIndex byName a: %q, %v; want %q", got, err, want)
	}
	objs, err = l.ByIndex("cm", cache.NamespaceIndex, "shop")
	if got, want := keys(objs), []string{"shop/a", "shop/b"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("byIndex namespace shop: %q, %v; want %q", got, err, want)
	}
	if _, err := l.ByIndex("cm", cache.NamespaceIndex, "kube-system"); !errors.As(err, &nw) {
		t.Errorf("byIndex namespace kube-system: %v, want a NamespaceNotWatchedError", err)
	}
	if _, err := l.ByIndex("cm", "byOwner", "x"); err == nil {
		t.Error("byIndex of an unknown index: no error")
	}
	// selected() asks before it reads an index other than the namespace's.
	if err := l.ReadsNamespace("cm", "shop"); err != nil {
		t.Errorf("ReadsNamespace shop: %v", err)
	}
	if err := l.ReadsNamespace("cm", "kube-system"); !errors.As(err, &nw) || nw.Namespace != "kube-system" {
		t.Errorf("ReadsNamespace kube-system: %v, want a NamespaceNotWatchedError", err)
	}
}

// TestLookupEveryNamespace reads a resource added with one informer of
// every namespace: any namespace is read from it.
func TestLookupEveryNamespace(t *testing.T) {
	l := factory.NewLookup()
	all := informerIn(t, "")
	u := &unstructured.Unstructured{}
	u.SetNamespace("anywhere")
	u.SetName("x")
	if err := all.Informer.GetIndexer().Add(u); err != nil {
		t.Fatal(err)
	}
	l.Add("configmaps", all)
	if _, found, err := l.Get("configmaps", "anywhere", "x"); err != nil || !found {
		t.Errorf("get anywhere/x: found %v, err %v; want found", found, err)
	}
	if _, found, err := l.Get("configmaps", "elsewhere", "x"); err != nil || found {
		t.Errorf("get elsewhere/x: found %v, err %v; want not found", found, err)
	}
	if _, found, err := l.Get("configmaps", "", "x"); err == nil || found {
		t.Errorf("get x of a namespaced resource: found %v, err %v; want an error", found, err)
	}
}
