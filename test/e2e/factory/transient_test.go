package factory_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// taker is an event handler that reads objects as a transient informer's
// readers do: with factory.Take, once per event.
type taker struct {
	mu sync.Mutex
	// last is the newest object taken per pod name; nil after a deletion.
	last map[string]*corev1.Pod
	// missing counts events whose object was already gone.
	missing int
}

func (h *taker) take(obj any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	o := factory.Take(obj)
	if o == nil {
		h.missing++
		return
	}
	p := o.(*corev1.Pod)
	h.last[p.Name] = p
}

func (h *taker) OnAdd(obj any, _ bool) { h.take(obj) }
func (h *taker) OnUpdate(_, obj any)   { h.take(obj) }
func (h *taker) OnDelete(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	m, _ := obj.(metav1.Object)
	h.last[m.GetName()] = nil
}

func (h *taker) pod(name string) (*corev1.Pod, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p, ok := h.last[name]
	return p, ok
}

// TestTransientInformer checks a cache that keeps no objects: each of its
// readers receives every object whole, in adds, updates and deletions, and
// the cache holds only what identifies each object once both have taken it.
func TestTransientInformer(t *testing.T) {
	ns := cluster.NewNamespace(t, "transient")
	pods, f := podsAndFactory(t)
	scope := factory.Scope{Namespace: ns}
	// Two consumers, one reader each: the informer has two readers.
	inf, err := f.Request(pods, scope, factory.Needs{Mode: factory.ModeFull, Readers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Request(pods, scope, factory.Needs{Mode: factory.ModeFull, Readers: 1}); err != nil {
		t.Fatal(err)
	}
	cluster.CreatePod(t, ns, "before", map[string]string{"step": "created"})
	handlers := []*taker{{last: map[string]*corev1.Pod{}}, {last: map[string]*corev1.Pod{}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, h := range handlers {
		if _, err := inf.Informer.AddEventHandler(h); err != nil {
			t.Fatal(err)
		}
	}
	if !inf.Transient() {
		t.Fatal("two requests with readers: the informer should keep no objects")
	}
	if err := f.WaitForSync(ctx, time.Minute, true, nil); err != nil {
		t.Fatal(err)
	}
	cluster.CreatePod(t, ns, "after", map[string]string{"step": "created"})
	for _, name := range []string{"before", "after"} {
		framework.Eventually(t, "both handlers have pod "+name, func() bool {
			_, ok0 := handlers[0].pod(name)
			_, ok1 := handlers[1].pod(name)
			return ok0 && ok1
		})
	}
	p, err := cluster.Client.CoreV1().Pods(ns).Get(ctx, "after", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Labels["step"] = "updated"
	if _, err := cluster.Client.CoreV1().Pods(ns).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client.CoreV1().Pods(ns).Delete(ctx, "before", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, h := range handlers {
		framework.Eventually(t, "the update and the deletion reach the handlers", func() bool {
			after, _ := h.pod("after")
			before, seen := h.pod("before")
			return after != nil && after.Labels["step"] == "updated" && seen && before == nil
		})
		after, _ := h.pod("after")
		if len(after.Spec.Containers) != 1 || after.Kind != "Pod" {
			t.Errorf("handler %d took %s/%s with %d containers; want the whole object", i, after.Kind, after.Name, len(after.Spec.Containers))
		}
		h.mu.Lock()
		if h.missing != 0 {
			t.Errorf("handler %d found %d objects already gone", i, h.missing)
		}
		h.mu.Unlock()
	}

	// The cache: one Stub per pod, identity kept, object let go.
	objs := inf.Informer.GetStore().List()
	if len(objs) != 1 {
		t.Fatalf("the cache holds %d objects, want the one pod left", len(objs))
	}
	s, ok := objs[0].(*factory.Stub)
	if !ok {
		t.Fatalf("the cache holds a %T, want *factory.Stub", objs[0])
	}
	if s.Name != "after" || s.Namespace != ns || s.UID == "" || s.ResourceVersion == "" {
		t.Errorf("the stub lost the pod's identity: %+v", s.ObjectMeta)
	}
	if got := factory.Take(s); got != nil {
		t.Errorf("the stub still holds its object after both readers took it: %T", got)
	}
	if keys, err := inf.Informer.GetIndexer().IndexKeys(cache.NamespaceIndex, ns); err != nil || len(keys) != 1 {
		t.Errorf("the namespace index of stubs: %v, %v", keys, err)
	}
	// Started, it refuses new readers: they would receive stubs only.
	if _, err := f.Request(pods, scope, factory.Needs{Mode: factory.ModeFull, Readers: 1}); err == nil || !strings.Contains(err.Error(), "keeps no objects") {
		t.Errorf("requesting a started transient informer again: %v", err)
	}
}

// TestTransientNeedsAllReaders checks that one request needing objects
// kept (no readers, or indexes) keeps them for every consumer.
func TestTransientNeedsAllReaders(t *testing.T) {
	for name, second := range map[string]factory.Needs{
		"no readers": {Mode: factory.ModeFull},
		"indexes":    {Mode: factory.ModeFull, Readers: 1, Indexers: cache.Indexers{"x": cache.MetaNamespaceIndexFunc}},
	} {
		pods, f := podsAndFactory(t)
		inf, err := f.Request(pods, factory.Scope{}, factory.Needs{Mode: factory.ModeFull, Readers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Request(pods, factory.Scope{}, second); err != nil {
			t.Fatal(err)
		}
		if inf.Transient() {
			t.Errorf("%s: the informer keeps no objects, though a consumer needs them", name)
		}
	}
}
