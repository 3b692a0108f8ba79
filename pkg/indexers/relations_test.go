package indexers_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// relObj is an object of kind with the given namespace, name and labels,
// its UID its name, controlled by the object named controller (its UID)
// of kind controllerKind when that is not "".
func relObj(apiVersion, kind, namespace, name string, lbls map[string]any, controllerAPIVersion, controllerKind, controller string) *unstructured.Unstructured {
	md := map[string]any{"name": name, "namespace": namespace, "uid": name}
	if lbls != nil {
		md["labels"] = lbls
	}
	if controller != "" {
		md["ownerReferences"] = []any{
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "not-the-controller", "uid": "x"},
			map[string]any{"apiVersion": controllerAPIVersion, "kind": controllerKind, "name": controller, "uid": controller, "controller": true},
		}
	}
	return obj(map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": md})
}

// scopedStores is a storeLookup that tells the scope of what it reads.
type scopedStores struct{ storeLookup }

func (s scopedStores) Scope(resource string) (bool, bool) {
	_, ok := s.storeLookup[resource]
	return true, ok
}

func TestRelations(t *testing.T) {
	env := newEnv(t)
	builtin := func(name string) *indexers.Program {
		p, ok, err := env.BuiltinIndex(name)
		if !ok || err != nil {
			t.Fatalf("BuiltinIndex(%q) = %v, %v", name, ok, err)
		}
		return p
	}
	withIndexes := func(names ...string) cache.Indexer {
		progs := map[string]*indexers.Program{}
		for _, n := range names {
			progs[n] = builtin(n)
		}
		ixs, err := indexers.Indexers(progs, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, ixs)
	}
	l := storeLookup{
		"deployment.apps": withIndexes(),
		"replicaset.apps": withIndexes(indexers.ControllerIndex),
		"pods":            withIndexes(indexers.ControllerIndex, indexers.LabelIndex),
		"events":          withIndexes(indexers.InvolvedObjectIndex),
	}
	add := func(resource string, o *unstructured.Unstructured) {
		if err := l[resource].Add(o); err != nil {
			t.Fatal(err)
		}
	}
	app := map[string]any{"app": "web"}
	add("deployment.apps", relObj("apps/v1", "Deployment", "ns", "web", nil, "", "", ""))
	add("replicaset.apps", relObj("apps/v1", "ReplicaSet", "ns", "web-1", nil, "apps/v1", "Deployment", "web"))
	add("replicaset.apps", relObj("apps/v1", "ReplicaSet", "ns", "orphan", nil, "", "", ""))
	add("pods", relObj("v1", "Pod", "ns", "web-1-b", app, "apps/v1", "ReplicaSet", "web-1"))
	add("pods", relObj("v1", "Pod", "ns", "web-1-a", app, "apps/v1", "ReplicaSet", "web-1"))
	add("pods", relObj("v1", "Pod", "ns", "other", map[string]any{"app": "db"}, "", "", ""))
	add("pods", relObj("v1", "Pod", "elsewhere", "web-x", app, "", "", ""))
	// A pod whose controller of that name was replaced: another UID.
	stale := relObj("v1", "Pod", "ns", "stale", nil, "apps/v1", "ReplicaSet", "web-1")
	stale.Object["metadata"].(map[string]any)["ownerReferences"].([]any)[1].(map[string]any)["uid"] = "old"
	add("pods", stale)
	ev := func(name, uid string) *unstructured.Unstructured {
		return obj(map[string]any{"metadata": map[string]any{"name": name, "namespace": "ns"}, "involvedObject": map[string]any{"uid": uid}})
	}
	add("events", ev("b", "web-1-a"))
	add("events", ev("a", "web-1-a"))
	add("events", ev("c", "web"))

	svc := obj(map[string]any{"kind": "Service", "metadata": map[string]any{"name": "web", "namespace": "ns", "uid": "svc"}, "spec": map[string]any{"selector": app}})
	noSel := obj(map[string]any{"kind": "Service", "metadata": map[string]any{"name": "ext", "namespace": "ns", "uid": "ext"}, "spec": map[string]any{}})
	deploy, _, _ := l["deployment.apps"].GetByKey("ns/web")
	rs, _, _ := l["replicaset.apps"].GetByKey("ns/web-1")
	orphan, _, _ := l["replicaset.apps"].GetByKey("ns/orphan")
	podA, _, _ := l["pods"].GetByKey("ns/web-1-a")
	yes := true
	typed := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "typed", Namespace: "ns", UID: "web-1-a",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "web-1", Controller: &yes}}}}
	tests := []struct {
		expr string
		on   any
		want any
	}{
		{`owner(object).metadata.name`, podA, "web-1"},
		{`owner(object) == null`, orphan, true},
		{`owners(object).map(o, o.metadata.name)`, typed, []any{"web-1", "web"}},
		{`events(object).size()`, typed, int64(2)},
		{`owner(object) == null`, stale, true},
		{`owners(object).map(o, o.kind + "/" + o.metadata.name)`, podA, []any{"ReplicaSet/web-1", "Deployment/web"}},
		{`owners(object).size()`, deploy, int64(0)},
		{`children(object, "pods").map(p, p.metadata.name)`, rs, []any{"web-1-a", "web-1-b"}},
		{`children(object, "replicaset.apps").map(p, p.metadata.name)`, deploy, []any{"web-1"}},
		{`selected(object, "pods").map(p, p.metadata.name)`, svc, []any{"web-1-a", "web-1-b"}},
		{`selected(object, "pods").size()`, noSel, int64(0)},
		{`events(object).map(e, e.metadata.name)`, podA, []any{"a", "b"}},
	}
	for _, tt := range tests {
		p := compile(t, env, tt.expr, indexers.KindValue).WithLookup(scopedStores{l})
		got, err := p.Value(tt.on)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Value(%q) = %#v, %v; want %#v", tt.expr, got, err, tt.want)
		}
	}
	refs := compile(t, env, `children(object, "pods").size() + events(object).size() + selected(object, "pods").size()`, indexers.KindValue).References()
	want := []indexers.Reference{
		{Resource: "events", Indexes: []string{indexers.InvolvedObjectIndex}, Calls: []string{"events()"}},
		{Resource: "pods", Indexes: []string{indexers.ControllerIndex, indexers.LabelIndex, indexers.NamespaceIndex}, Calls: []string{`children(…, "pods")`, `selected(…, "pods")`}},
	}
	if !reflect.DeepEqual(refs, want) {
		t.Errorf("References = %#v, want %#v", refs, want)
	}
	if _, err := env.Compile(`children(object, object.kind)`, indexers.KindValue, "test"); err == nil {
		t.Error("children() with a resource that is no literal compiled")
	}
}

// labelIndexers are the index functions of the built-in label index of
// env.
func labelIndexers(tb testing.TB, env *indexers.Env) cache.Indexers {
	tb.Helper()
	lbl, _, err := env.BuiltinIndex(indexers.LabelIndex)
	if err != nil {
		tb.Fatal(err)
	}
	ixs, err := indexers.Indexers(map[string]*indexers.Program{indexers.LabelIndex: lbl}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return ixs
}

// countingLookup is a storeLookup that counts the objects it returns, by
// index.
type countingLookup struct {
	storeLookup
	read map[string]int
}

func (l *countingLookup) ByIndex(resource, index, value string) ([]any, error) {
	objs, err := l.storeLookup.ByIndex(resource, index, value)
	l.read[index] += len(objs)
	return objs, err
}

// TestSelectedReadsLabelIndex: selected() reads the objects of the label
// values its selector's requirements name, not those of the namespace,
// unless no requirement names a value.
func TestSelectedReadsLabelIndex(t *testing.T) {
	env := newEnv(t)
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, labelIndexers(t, env))
	// 1000 pods in ns: web-0 and web-1 labelled app=web, tier=front; db-N
	// app=db, tier=front or back; and web-9 in another namespace.
	add := func(ns, name string, l map[string]any) {
		if err := pods.Add(relObj("v1", "Pod", ns, name, l, "", "", "")); err != nil {
			t.Fatal(err)
		}
	}
	add("ns", "web-1", map[string]any{"app": "web", "tier": "front"})
	add("ns", "web-0", map[string]any{"app": "web", "tier": "front"})
	for i := range 998 {
		add("ns", fmt.Sprintf("db-%03d", i), map[string]any{"app": "db", "tier": []string{"front", "back"}[i%2]})
	}
	add("other", "web-9", map[string]any{"app": "web", "tier": "front"})
	svc := func(kind string, spec map[string]any) *unstructured.Unstructured {
		return obj(map[string]any{"kind": kind, "metadata": map[string]any{"name": "s", "namespace": "ns", "uid": "s"}, "spec": spec})
	}
	exprs := func(ops ...map[string]any) map[string]any {
		out := make([]any, len(ops))
		for i, o := range ops {
			out[i] = o
		}
		return map[string]any{"selector": map[string]any{"matchExpressions": out}}
	}
	tests := []struct {
		name       string
		on         *unstructured.Unstructured
		want       int64
		label, all int // objects read through the label index and the namespace
	}{
		{"service selector", svc("Service", map[string]any{"selector": map[string]any{"tier": "front", "app": "web"}}), 2, 2 + 501, 0},
		{"matchLabels", svc("Deployment", map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}}), 2, 2, 0},
		{"In", svc("Deployment", exprs(map[string]any{"key": "app", "operator": "In", "values": []any{"web", "cache"}})), 2, 2, 0},
		{"In and NotIn", svc("Deployment", exprs(
			map[string]any{"key": "tier", "operator": "In", "values": []any{"back"}},
			map[string]any{"key": "app", "operator": "NotIn", "values": []any{"web"}})), 499, 499, 0},
		{"NotIn only", svc("Deployment", exprs(map[string]any{"key": "app", "operator": "NotIn", "values": []any{"db"}})), 2, 0, 1000},
		{"Exists only", svc("NetworkPolicy", map[string]any{"podSelector": exprs(map[string]any{"key": "app", "operator": "Exists"})["selector"]}), 1000, 0, 1000},
		{"everything", svc("PodDisruptionBudget", map[string]any{"selector": map[string]any{}}), 1000, 0, 1000},
		{"no value", svc("Service", map[string]any{"selector": map[string]any{"app": "none"}}), 0, 0, 0},
	}
	for _, tt := range tests {
		l := &countingLookup{storeLookup: storeLookup{"pods": pods}, read: map[string]int{}}
		p := compile(t, env, `selected(object, "pods").size()`, indexers.KindValue).WithLookup(l)
		got, err := p.Value(tt.on)
		if err != nil || got != tt.want {
			t.Errorf("%s: selected().size() = %v, %v; want %d", tt.name, got, err, tt.want)
		}
		if l.read[indexers.LabelIndex] != tt.label || l.read[indexers.NamespaceIndex] != tt.all {
			t.Errorf("%s: read %d objects through %s and %d through %s; want %d and %d", tt.name,
				l.read[indexers.LabelIndex], indexers.LabelIndex, l.read[indexers.NamespaceIndex], indexers.NamespaceIndex, tt.label, tt.all)
		}
	}
}

// onlyIn is a storeLookup that reads its resources in namespace only.
type onlyIn struct {
	storeLookup
	namespace string
}

func (l onlyIn) ReadsNamespace(resource, namespace string) error {
	if namespace != l.namespace {
		return fmt.Errorf("%s are not watched in namespace %q", resource, namespace)
	}
	return nil
}

// TestSelectedNamespaceNotRead: selected() of an object of a namespace
// where the lookup does not read RESOURCE fails, as a read of that
// namespace would, though the label index answers nothing.
func TestSelectedNamespaceNotRead(t *testing.T) {
	env := newEnv(t)
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, labelIndexers(t, env))
	svc := obj(map[string]any{"kind": "Service", "metadata": map[string]any{"name": "web", "namespace": "ns", "uid": "svc"},
		"spec": map[string]any{"selector": map[string]any{"app": "web"}}})
	p := compile(t, env, `selected(object, "pods").size()`, indexers.KindValue)
	if got, err := p.WithLookup(onlyIn{storeLookup{"pods": pods}, "ns"}).Value(svc); err != nil || got != int64(0) {
		t.Errorf("selected() where pods are read: %v, %v; want 0", got, err)
	}
	if got, err := p.WithLookup(onlyIn{storeLookup{"pods": pods}, "other"}).Value(svc); err == nil || !strings.Contains(err.Error(), `not watched in namespace "ns"`) {
		t.Errorf("selected() where pods are not read: %v, %v; want the lookup's error", got, err)
	}
}

func TestSelectorOf(t *testing.T) {
	web := labels.Set{"app": "web", "tier": "front"}
	tests := []struct {
		kind  string
		spec  map[string]any
		match bool
	}{
		{"Service", map[string]any{"selector": map[string]any{"app": "web"}}, true},
		{"Service", map[string]any{}, false},
		{"Deployment", map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}}, true},
		{"Deployment", map[string]any{"selector": map[string]any{"matchExpressions": []any{map[string]any{"key": "tier", "operator": "NotIn", "values": []any{"front"}}}}}, false},
		{"PodDisruptionBudget", map[string]any{"selector": map[string]any{}}, true},
		{"PodDisruptionBudget", map[string]any{}, false},
		{"NetworkPolicy", map[string]any{"podSelector": map[string]any{}}, true},
		{"NetworkPolicy", map[string]any{"podSelector": map[string]any{"matchLabels": map[string]any{"app": "db"}}}, false},
		{"", map[string]any{"selector": map[string]any{"app": "web"}}, true},
		{"", map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}}, true},
		{"", map[string]any{}, false},
	}
	for _, tt := range tests {
		sel, err := indexers.SelectorOf(tt.kind, tt.spec)
		if err != nil || sel.Matches(web) != tt.match {
			t.Errorf("SelectorOf(%q, %v) matches %v: %v, %v; want %v", tt.kind, tt.spec, web, sel, err, tt.match)
		}
	}
	if _, err := indexers.SelectorOf("ConfigMap", nil); err == nil {
		t.Error("SelectorOf(ConfigMap) gave a selector")
	}
}

// BenchmarkOwner is owner() of a pod whose ReplicaSet is cached: a read by
// key, whatever the number of ReplicaSets.
func BenchmarkOwner(b *testing.B) {
	env := newEnv(b)
	rs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for i := range 10000 {
		name := fmt.Sprintf("web-%d", i)
		if err := rs.Add(relObj("apps/v1", "ReplicaSet", "ns", name, nil, "", "", "")); err != nil {
			b.Fatal(err)
		}
	}
	p := compile(b, env, `owner(object) != null`, indexers.KindPredicate).WithLookup(scopedStores{storeLookup{"replicaset.apps": rs}})
	pod := relObj("v1", "Pod", "ns", "web-7-a", nil, "apps/v1", "ReplicaSet", "web-7")
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := p.Match(pod); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}
