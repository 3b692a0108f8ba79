package indexers_test

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// storeLookup is a Lookup over client-go indexers, one per resource, as the
// informer factory provides one over its informers.
type storeLookup map[string]cache.Indexer

func (l storeLookup) Get(resource, namespace, name string) (any, bool, error) {
	store, ok := l[resource]
	if !ok {
		return nil, false, fmt.Errorf("no informer for %q", resource)
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	return store.GetByKey(key)
}

func (l storeLookup) ByIndex(resource, index, value string) ([]any, error) {
	store, ok := l[resource]
	if !ok {
		return nil, fmt.Errorf("no informer for %q", resource)
	}
	return store.ByIndex(index, value)
}

// newLookup builds the stores of the test: nodes, configmaps, and pods
// indexed by namespace and by node.
func newLookup(t *testing.T, env *indexers.Env) storeLookup {
	t.Helper()
	byNode := compile(t, env, `object.?spec.?nodeName`, indexers.KindIndex)
	podIndexers, err := indexers.Indexers(map[string]*indexers.Program{"byNode": byNode}, nil)
	if err != nil {
		t.Fatal(err)
	}
	l := storeLookup{
		"nodes":      cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}),
		"configmaps": cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}),
		"pods":       cache.NewIndexer(cache.MetaNamespaceKeyFunc, podIndexers),
	}
	add := func(resource string, o *unstructured.Unstructured) {
		if err := l[resource].Add(o); err != nil {
			t.Fatal(err)
		}
	}
	add("nodes", obj(map[string]any{"metadata": map[string]any{"name": "n1", "labels": map[string]any{"zone": "a"}}}))
	add("nodes", obj(map[string]any{"metadata": map[string]any{"name": "n2", "labels": map[string]any{"zone": "b"}}}))
	add("configmaps", obj(map[string]any{"metadata": map[string]any{"name": "app", "namespace": "default"}, "data": map[string]any{"mode": "fast"}}))
	add("pods", pod("default", "web-1", "n1", "Running"))
	add("pods", pod("default", "web-2", "n1", "Pending"))
	add("pods", pod("default", "web-3", "n2", "Running"))
	add("pods", pod("other", "db-1", "n1", "Running"))
	return l
}

func TestLookups(t *testing.T) {
	env := newEnv(t)
	lookup := newLookup(t, env)
	tests := []struct {
		expr    string
		want    any
		wantErr string
	}{
		{`get("nodes", object.spec.nodeName).metadata.labels.zone`, "a", ""},
		{`get("nodes", "n9")`, nil, ""},
		{`get("configmaps", object.metadata.namespace, "app").data.mode`, "fast", ""},
		{`get("configmaps", "default", "missing") == null`, true, ""},
		{`byIndex("pods", "byNode", object.spec.nodeName).map(p, p.metadata.name)`, []any{"db-1", "web-1", "web-2"}, ""},
		{`byIndex("pods", "byNode", object.spec.nodeName).filter(p, p.status.phase == "Running").size()`, int64(2), ""},
		{`byIndex("pods", "namespace", "other").size()`, int64(1), ""},
		{`byIndex("pods", "byNode", "n9")`, []any{}, ""},
		{
			`object.spec.containers.all(c, get("configmaps", object.metadata.namespace, c.name) != null)`,
			true, "",
		},
		{`get("secrets", "default", "x")`, nil, `test: get("secrets"): no informer for "secrets"`},
		{`byIndex("pods", "byZone", "a")`, nil, `test: byIndex("pods", "byZone"): Index with name byZone does not exist`},
		{`get("nodes", object.spec.replicas)`, nil, `test: get(): argument 2 must be a string but got int`},
	}
	o := pod("default", "web-1", "n1", "Running")
	o.Object["spec"].(map[string]any)["replicas"] = int64(2)
	for _, tt := range tests {
		p := compile(t, env, tt.expr, indexers.KindValue).WithLookup(lookup)
		got, err := p.Value(o)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("Value(%q) error %v, want %q", tt.expr, err, tt.wantErr)
			}
			continue
		}
		if list, ok := got.([]any); ok && len(list) > 0 {
			if _, ok := list[0].(string); ok {
				sort.Slice(list, func(i, j int) bool { return list[i].(string) < list[j].(string) })
			}
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Value(%q) = %#v, %v; want %#v", tt.expr, got, err, tt.want)
		}
	}
}

func TestLookupNotBound(t *testing.T) {
	env := newEnv(t)
	p := compile(t, env, `get("nodes", "n1") != null`, indexers.KindPredicate)
	_, err := p.Match(pod("default", "a", "", ""))
	if err == nil || !strings.Contains(err.Error(), "get() is not available: no lookup is bound to the program") {
		t.Errorf("Match without a lookup: error %v", err)
	}
	// Binding returns a copy; the program itself stays unbound.
	bound := p.WithLookup(newLookup(t, env))
	if ok, err := bound.Match(pod("default", "a", "", "")); err != nil || !ok {
		t.Errorf("Match with a lookup = %v, %v; want true", ok, err)
	}
	if _, err := p.Match(pod("default", "a", "", "")); err == nil {
		t.Error("WithLookup changed the original program")
	}
}

// failingLookup fails every lookup.
type failingLookup struct{}

var errLookup = errors.New("cache not synced")

func (failingLookup) Get(string, string, string) (any, bool, error) { return nil, false, errLookup }
func (failingLookup) ByIndex(string, string, string) ([]any, error) { return nil, errLookup }

func TestLookupErrorIsWrapped(t *testing.T) {
	env := newEnv(t)
	p := compile(t, env, `get("nodes", "n1") != null`, indexers.KindPredicate).WithLookup(failingLookup{})
	if _, err := p.Match(pod("default", "a", "", "")); !errors.Is(err, errLookup) {
		t.Errorf("Match: error %v, want one wrapping %v", err, errLookup)
	}
}

// TestLookupInIndex uses a lookup in an index expression: pods indexed by
// the zone of their node.
func TestLookupInIndex(t *testing.T) {
	env := newEnv(t)
	lookup := newLookup(t, env)
	byZone := compile(t, env, `get("nodes", object.spec.nodeName).metadata.labels.zone`, indexers.KindIndex).WithLookup(lookup)
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{"byZone": indexers.IndexFunc("byZone", byZone, nil)})
	for _, p := range []*unstructured.Unstructured{pod("default", "a", "n1", ""), pod("default", "b", "n2", ""), pod("default", "c", "n1", "")} {
		if err := store.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := store.IndexKeys("byZone", "a")
	sort.Strings(keys)
	if err != nil || !reflect.DeepEqual(keys, []string{"default/a", "default/c"}) {
		t.Errorf("IndexKeys(byZone, a) = %q, %v", keys, err)
	}
}
