package factory_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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

// earlyReader is the reader of a transient informer that has the objects
// of its first list as they arrive (factory.Needs.Early), and what its
// event handler then receives.
type earlyReader struct {
	mu sync.Mutex
	// early are the objects handed to Early, in order.
	early []*corev1.Pod
	// takenEarly are the pod names of events whose Stub said its object
	// went to Early; taken those of events that gave Take the object.
	takenEarly, taken []string
	// emptyHanded are the names of events that gave Take nothing though
	// their Stub did not say it went to Early.
	emptyHanded []string
}

func (r *earlyReader) Early(obj runtime.Object) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.early = append(r.early, obj.(*corev1.Pod))
}

func (r *earlyReader) event(obj any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := obj.(metav1.Object).GetName()
	switch {
	case factory.TakenEarly(obj):
		if o := factory.Take(obj); o != nil {
			r.emptyHanded = append(r.emptyHanded, name+" (taken early, and still holding its object)")
		}
		r.takenEarly = append(r.takenEarly, name)
	case factory.Take(obj) != nil:
		r.taken = append(r.taken, name)
	default:
		r.emptyHanded = append(r.emptyHanded, name)
	}
}

func (r *earlyReader) OnAdd(obj any, _ bool) { r.event(obj) }
func (r *earlyReader) OnUpdate(_, obj any)   { r.event(obj) }
func (r *earlyReader) OnDelete(any)          {}

func (r *earlyReader) names() (early, takenEarly, taken, emptyHanded []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.early {
		early = append(early, p.Name)
	}
	return early, slices.Clone(r.takenEarly), slices.Clone(r.taken), slices.Clone(r.emptyHanded)
}

// TestTransientEarly checks that the readers of a transient informer that
// ask for it have the objects of its first list as they arrive, whole,
// whether the list is streamed as a watch's initial events or listed
// (an object limit turns streaming off): the cache then keeps none of
// them, and their events say so; the events after the first list carry
// their objects for Take as without Early.
func TestTransientEarly(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      factory.Config
		streamed bool
	}{
		{"streamed", factory.Config{}, true},
		{"listed", factory.Config{ObjectLimit: 1000}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := cluster.NewNamespace(t, "early")
			before := []string{"a", "b", "c"}
			for _, name := range before {
				cluster.CreatePod(t, ns, name, map[string]string{"step": "created"})
			}
			pods, _ := podsAndFactory(t)
			f, err := factory.New(cluster.Config, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := &earlyReader{}
			inf, err := f.Request(pods, factory.Scope{Namespace: ns}, factory.Needs{Mode: factory.ModeFull, Readers: 1, Early: r.Early})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer func() {
				cancel()
				f.Shutdown()
			}()
			if err := f.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := inf.Informer.AddEventHandler(r); err != nil {
				t.Fatal(err)
			}
			if err := f.WaitForSync(ctx, time.Minute, true, nil); err != nil {
				t.Fatal(err)
			}
			framework.Eventually(t, "the handler has the first list's events", func() bool {
				_, takenEarly, _, _ := r.names()
				return len(takenEarly) >= len(before)
			})
			if lists := inf.Requests.Lists.Load(); (lists == 0) != tc.streamed {
				t.Errorf("%d list requests; streamed: %v", lists, tc.streamed)
			}
			early, takenEarly, taken, emptyHanded := r.names()
			slices.Sort(early)
			slices.Sort(takenEarly)
			if !slices.Equal(early, before) || !slices.Equal(takenEarly, before) || len(taken) > 0 || len(emptyHanded) > 0 {
				t.Fatalf("first list: Early had %v, events said taken early %v, gave Take %v, gave nothing %v; want Early and the events to name %v, and no other event", early, takenEarly, taken, emptyHanded, before)
			}
			r.mu.Lock()
			for _, p := range r.early {
				if len(p.Spec.Containers) != 1 || p.Kind != "Pod" || p.Labels["step"] != "created" {
					t.Errorf("Early had %s/%s with %d containers and labels %v; want the whole object", p.Kind, p.Name, len(p.Spec.Containers), p.Labels)
				}
			}
			r.mu.Unlock()
			for _, obj := range inf.Informer.GetStore().List() {
				if s, ok := obj.(*factory.Stub); !ok || !factory.TakenEarly(s) || factory.Take(s) != nil {
					t.Errorf("the cache holds %T (taken early: %v); want a Stub without its object", obj, factory.TakenEarly(obj))
				}
			}

			// After the first list: objects for Take, none for Early.
			cluster.CreatePod(t, ns, "after", map[string]string{"step": "created"})
			p, err := cluster.Client.CoreV1().Pods(ns).Get(ctx, "a", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			p.Labels["step"] = "updated"
			if _, err := cluster.Client.CoreV1().Pods(ns).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			framework.Eventually(t, "the handler takes the new pod and the update", func() bool {
				_, _, taken, _ := r.names()
				return slices.Contains(taken, "after") && slices.Contains(taken, "a")
			})
			early, _, _, emptyHanded = r.names()
			if len(early) != len(before) || len(emptyHanded) > 0 {
				t.Errorf("after the first list, Early had %v and events gave Take nothing for %v; want only the first list's for Early, and no event without its object", early, emptyHanded)
			}
		})
	}
}
