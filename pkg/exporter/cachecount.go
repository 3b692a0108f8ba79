package exporter

import (
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/tools/cache"
)

// cacheCount keeps the number of objects in an informer's cache, and the
// number of distinct values of some of its indexes, up to date from the
// informer's events, so that a scrape reads numbers instead of walking the
// cache. Registered as an event handler on a running informer it first
// receives every cached object as an add; a relist reaches it as adds,
// updates, and deletions (cache.DeletedFinalStateUnknown) of the objects no
// longer listed, so the counts follow the cache. They trail the cache by
// the events not yet delivered to the handler.
type cacheCount struct {
	objects atomic.Int64
	// events counts the events received by type (see eventNames), and
	// lastEvent is the Unix time in seconds of the newest; for the
	// resources read only by lookups, whose events no engine handler sees.
	events    [3]atomic.Uint64
	lastEvent atomic.Int64
	// indexers are the index functions whose values are counted, by index
	// name; fixed at creation.
	indexers cache.Indexers

	// mu guards refs.
	mu sync.Mutex
	// refs counts the objects under each value of each index in indexers:
	// refs[index][value]; a value without objects has no entry.
	refs map[string]map[string]int
}

// newCacheCount counts objects and the values of indexers.
func newCacheCount(indexers cache.Indexers) *cacheCount {
	c := &cacheCount{indexers: indexers, refs: map[string]map[string]int{}}
	for name := range indexers {
		c.refs[name] = map[string]int{}
	}
	return c
}

// Objects returns the number of objects counted.
func (c *cacheCount) Objects() int64 { return c.objects.Load() }

// IndexValues returns the number of distinct values of the index name
// that objects have; 0 for an index not counted.
func (c *cacheCount) IndexValues(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.refs[name])
}

// OnAdd implements cache.ResourceEventHandler.
func (c *cacheCount) OnAdd(obj any, _ bool) {
	c.count(eventAdd)
	c.objects.Add(1)
	c.apply(c.values(obj), nil)
}

// OnUpdate implements cache.ResourceEventHandler.
func (c *cacheCount) OnUpdate(old, obj any) {
	c.count(eventUpdate)
	if len(c.indexers) == 0 {
		return
	}
	c.apply(c.values(obj), c.values(old))
}

// OnDelete implements cache.ResourceEventHandler. A tombstone carries the
// last state the cache held, whose index values are the ones to release.
func (c *cacheCount) OnDelete(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	c.count(eventDelete)
	c.objects.Add(-1)
	if obj != nil {
		c.apply(nil, c.values(obj))
	}
}

// count counts an event of type t, received now.
func (c *cacheCount) count(t int) {
	c.events[t].Add(1)
	c.lastEvent.Store(time.Now().Unix())
}

// values evaluates the counted indexes on obj, by index name. An index
// whose function fails holds no value of obj, as in the store (whose
// functions here never fail).
func (c *cacheCount) values(obj any) map[string][]string {
	if len(c.indexers) == 0 {
		return nil
	}
	out := make(map[string][]string, len(c.indexers))
	for name, fn := range c.indexers {
		if vs, err := fn(obj); err == nil {
			out[name] = vs
		}
	}
	return out
}

// apply counts the values of add and releases those of remove.
func (c *cacheCount) apply(add, remove map[string][]string) {
	if len(add) == 0 && len(remove) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, vs := range add {
		refs := c.refs[name]
		for _, v := range dedup(vs) {
			refs[v]++
		}
	}
	for name, vs := range remove {
		refs := c.refs[name]
		for _, v := range dedup(vs) {
			if refs[v] <= 1 {
				delete(refs, v)
			} else {
				refs[v]--
			}
		}
	}
}

// dedup returns vs without repeated values: the store indexes an object
// once under each of its values.
func dedup(vs []string) []string {
	if len(vs) < 2 {
		return vs
	}
	seen := make(map[string]struct{}, len(vs))
	out := vs[:0:0]
	for _, v := range vs {
		if _, ok := seen[v]; !ok {
			seen[v] = struct{}{}
			out = append(out, v)
		}
	}
	return out
}
