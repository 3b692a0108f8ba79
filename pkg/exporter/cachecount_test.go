package exporter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// teamObject is a pod whose spec.teams the "team" index reads.
func teamObject(name string, teams ...string) *unstructured.Unstructured {
	var ts []any
	for _, t := range teams {
		ts = append(ts, t)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"namespace": "ns", "name": name},
		"spec":     map[string]any{"teams": ts},
	}}
}

// fakeSource is a ListWatch the test drives: each list returns the objects
// set last, each watch a watcher the test sends events to.
type fakeSource struct {
	// mu guards objects.
	mu      sync.Mutex
	objects []*unstructured.Unstructured
	lists   atomic.Int64
	watches chan *watch.RaceFreeFakeWatcher
}

func newFakeSource(objs ...*unstructured.Unstructured) *fakeSource {
	return &fakeSource{objects: objs, watches: make(chan *watch.RaceFreeFakeWatcher, 16)}
}

func (s *fakeSource) set(objs ...*unstructured.Unstructured) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects = objs
}

func (s *fakeSource) listWatch() *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			n := s.lists.Add(1)
			l := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "PodList"}}
			l.SetResourceVersion(fmt.Sprint(n))
			for _, o := range s.objects {
				l.Items = append(l.Items, *o.DeepCopy())
			}
			return l, nil
		},
		WatchFuncWithContext: func(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			if opts.SendInitialEvents != nil {
				return nil, errors.New("streamed lists are not supported: list")
			}
			w := watch.NewRaceFreeFake()
			s.watches <- w
			return w, nil
		},
	}
}

// nextWatch returns the watcher of the informer's next watch request.
func (s *fakeSource) nextWatch(t *testing.T) *watch.RaceFreeFakeWatcher {
	t.Helper()
	select {
	case w := <-s.watches:
		return w
	case <-time.After(2 * time.Minute):
		t.Fatal("the informer made no watch request")
		return nil
	}
}

// waitFor polls cond until it holds; the deadline only catches a hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// countedConfig is a config of pods with the index "team" of their
// spec.teams, repeats included.
const countedConfig = `
apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: pods
  indexes:
    team: object.spec.teams
`

// counted is a running informer of a fakeSource, with the config's
// indexes, wired into an active config as the exporter wires it.
type counted struct {
	src    *fakeSource
	inf    *factory.Informer
	active *activeConfig
}

// startCounted runs an informer of src with the indexes of countedConfig,
// registers the counts of an active config on it, and waits for it to sync.
// wrap, when not nil, wraps the informer the active config reads.
func startCounted(t *testing.T, src *fakeSource, wrap func(cache.SharedIndexInformer) cache.SharedIndexInformer) *counted {
	t.Helper()
	c, err := Compile("c.yaml", []byte(countedConfig), testConfigEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	si := cache.NewSharedIndexInformer(src.listWatch(), &unstructured.Unstructured{}, 0, indexers.IndexFuncs(c.Resources[0].Indexes, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); si.Run(ctx.Done()) }()
	t.Cleanup(func() { cancel(); <-done })
	syncCtx, stop := context.WithTimeout(ctx, 2*time.Minute) // catches a hang
	defer stop()
	if !cache.WaitForCacheSync(syncCtx.Done(), si.HasSynced) {
		t.Fatal("the informer did not sync")
	}
	inf := &factory.Informer{Informer: si, Resource: factory.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}}}
	if wrap != nil {
		inf.Informer = wrap(si)
	}
	e := NewEngine(c, EngineOptions{})
	t.Cleanup(e.Close)
	a := &activeConfig{engine: e, informers: [][]*factory.Informer{{inf}}, names: []string{e.resources[0].name}, counts: map[*factory.Informer]*cacheCount{}}
	if err := a.countCaches(c); err != nil {
		t.Fatal(err)
	}
	return &counted{src: src, inf: inf, active: a}
}

// storeCounts are the counts read from the store itself.
func (c *counted) storeCounts() (objects, teams int) {
	return len(c.inf.Informer.GetStore().ListKeys()), len(c.inf.Informer.GetIndexer().ListIndexFuncValues("team"))
}

// check waits until the store holds keys and the teams of the index, then
// until the kept counts match the store.
func (c *counted) check(t *testing.T, step string, keys, teams []string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%s: the store to hold %v with teams %v", step, keys, teams), func() bool {
		got := c.inf.Informer.GetStore().ListKeys()
		slices.Sort(got)
		values := c.inf.Informer.GetIndexer().ListIndexFuncValues("team")
		slices.Sort(values)
		return slices.Equal(got, keys) && slices.Equal(values, teams)
	})
	count := c.active.counts[c.inf]
	objects, values := c.storeCounts()
	waitFor(t, fmt.Sprintf("%s: the counts to reach %d objects, %d teams", step, objects, values), func() bool {
		return count.Objects() == int64(objects) && count.IndexValues("team") == values
	})
}

// TestCacheCountsFollowEvents: the object and index value counts kept on
// events match the store after adds, updates, deletions, a tombstone, and
// a relist that drops objects and lists new ones.
func TestCacheCountsFollowEvents(t *testing.T) {
	src := newFakeSource(teamObject("a", "red", "red"), teamObject("b", "red", "blue"), teamObject("c", "green"))
	c := startCounted(t, src, nil)
	c.check(t, "initial list", []string{"ns/a", "ns/b", "ns/c"}, []string{"blue", "green", "red"})
	if objects, teams := c.storeCounts(); objects != 3 || teams != 3 {
		t.Fatalf("the store holds %d objects and %d teams; want 3 and 3", objects, teams)
	}

	w := src.nextWatch(t)
	w.Add(teamObject("d", "black"))
	c.check(t, "add", []string{"ns/a", "ns/b", "ns/c", "ns/d"}, []string{"black", "blue", "green", "red"})
	w.Modify(teamObject("b", "red"))  // blue has no object left
	w.Modify(teamObject("c", "gold")) // green replaced
	c.check(t, "update", []string{"ns/a", "ns/b", "ns/c", "ns/d"}, []string{"black", "gold", "red"})
	if got := c.active.counts[c.inf].IndexValues("team"); got != 3 {
		t.Errorf("after the updates: %d teams; want 3 (red, gold, black)", got)
	}
	w.Delete(teamObject("d", "black"))
	c.check(t, "delete", []string{"ns/a", "ns/b", "ns/c"}, []string{"gold", "red"})

	// A relist: the watch expires, the new list drops a and c and brings e;
	// the informer delivers a and c as tombstones.
	src.set(teamObject("b", "red", "white"), teamObject("e", "white", "pink"))
	w.Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version"})
	src.nextWatch(t)
	c.check(t, "relist", []string{"ns/b", "ns/e"}, []string{"pink", "red", "white"})
	count := c.active.counts[c.inf]
	if count.Objects() != 2 || count.IndexValues("team") != 3 {
		t.Errorf("after the relist: %d objects, %d teams; want 2 and 3 (red, white, pink)", count.Objects(), count.IndexValues("team"))
	}
	if src.lists.Load() < 2 {
		t.Errorf("%d lists; the watch error should have made the informer list again", src.lists.Load())
	}
}

// TestCacheCountTombstone: a deletion the informer missed, delivered as a
// cache.DeletedFinalStateUnknown, releases the last known object's values.
func TestCacheCountTombstone(t *testing.T) {
	c, err := Compile("c.yaml", []byte(countedConfig), testConfigEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	count := newCacheCount(indexers.IndexFuncs(c.Resources[0].Indexes, nil))
	a, b := teamObject("a", "red", "blue"), teamObject("b", "red")
	count.OnAdd(a, true)
	count.OnAdd(b, true)
	count.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/a", Obj: a})
	if count.Objects() != 1 || count.IndexValues("team") != 1 {
		t.Errorf("after a tombstone: %d objects, %d teams; want 1 and 1 (red)", count.Objects(), count.IndexValues("team"))
	}
	count.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/b"})
	if count.Objects() != 0 {
		t.Errorf("after a tombstone without object: %d objects; want 0", count.Objects())
	}
}

// walkCounter is an informer whose store counts the calls that walk the
// whole cache.
type walkCounter struct {
	cache.SharedIndexInformer
	walks *atomic.Int64
}

type walkCountingIndexer struct {
	cache.Indexer
	walks *atomic.Int64
}

func (w walkCounter) GetStore() cache.Store { return w.GetIndexer() }
func (w walkCounter) GetIndexer() cache.Indexer {
	return walkCountingIndexer{w.SharedIndexInformer.GetIndexer(), w.walks}
}
func (w walkCountingIndexer) ListKeys() []string {
	w.walks.Add(1)
	return w.Indexer.ListKeys()
}
func (w walkCountingIndexer) List() []any {
	w.walks.Add(1)
	return w.Indexer.List()
}
func (w walkCountingIndexer) ListIndexFuncValues(name string) []string {
	w.walks.Add(1)
	return w.Indexer.ListIndexFuncValues(name)
}

// TestCollectDoesNotWalkCaches: a scrape of the telemetry reports the
// objects and index values of a resource without listing its cache.
func TestCollectDoesNotWalkCaches(t *testing.T) {
	walks := &atomic.Int64{}
	src := newFakeSource(teamObject("a", "red"), teamObject("b", "red", "blue"))
	c := startCounted(t, src, func(si cache.SharedIndexInformer) cache.SharedIndexInformer { return walkCounter{si, walks} })
	c.check(t, "initial list", []string{"ns/a", "ns/b"}, []string{"blue", "red"})
	x := &Exporter{log: nil, active: c.active}
	x.tel = newTelemetry(x)

	walks.Store(0)
	want := `
# HELP kubectl_informer_index_values Distinct values an index holds.
# TYPE kubectl_informer_index_values gauge
kubectl_informer_index_values{index="team",resource="pods"} 2
# HELP kubectl_informer_resource_objects Objects in the informer cache of a watched resource: configured, or read by get() and byIndex().
# TYPE kubectl_informer_resource_objects gauge
kubectl_informer_resource_objects{namespace="",resource="pods"} 2
`
	if err := testutil.GatherAndCompare(x.tel.registry, strings.NewReader(want), "kubectl_informer_resource_objects", "kubectl_informer_index_values"); err != nil {
		t.Error(err)
	}
	if n := walks.Load(); n != 0 {
		t.Errorf("a scrape listed the cache %d times; want 0: counts are kept on events", n)
	}
	if problems, err := testutil.GatherAndLint(x.tel.registry, "kubectl_informer_resource_objects", "kubectl_informer_index_values"); err != nil || len(problems) > 0 {
		t.Errorf("promlint: %v %v", problems, err)
	}
}
