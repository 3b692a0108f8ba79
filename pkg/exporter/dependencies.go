package exporter

import (
	"sync"

	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// dependencies remembers which objects' series read which other objects
// through get() and byIndex(), so that they are recomputed when those
// change.
type dependencies struct {
	// inner is the Lookup that get() and byIndex() read; nil when nothing
	// is looked up. Set before any event, read-only after.
	inner indexers.Lookup

	// mu guards byKey and byObject.
	mu sync.Mutex
	// byKey maps a looked-up key to the dependent objects and their cache
	// keys.
	byKey map[depKey]map[objectRef]string
	// byObject maps a dependent object to the keys it read.
	byObject map[objectRef][]depKey
}

// depKey is an object read with get() (resource, namespace/name) or an
// index value read with byIndex() (resource, index, value).
type depKey struct {
	resource, index, value string
}

// objectRef is a dependent object: its resource's position and its UID.
type objectRef struct {
	resource int
	uid      string
}

func newDependencies() *dependencies {
	return &dependencies{byKey: map[depKey]map[objectRef]string{}, byObject: map[objectRef][]depKey{}}
}

// recorder returns a Lookup that records what one object's evaluation
// reads, or nil when there is no Lookup (see Engine.Bind).
func (d *dependencies) recorder(resource int, uid string, obj any) *recordingLookup {
	if d.inner == nil {
		return nil
	}
	key, _ := cache.MetaNamespaceKeyFunc(obj)
	return &recordingLookup{ref: objectRef{resource, uid}, key: key, deps: d}
}

// add registers one key that an evaluation of ref is about to read. It is
// called before the read, so that a change of what the key names is either
// seen by the read or, since the informer stores an object before it
// notifies its handlers, finds ref among the dependents and recomputes it.
// Registering only at commit would miss a change that lands between the
// read and the commit: a pod evaluated while its node is not yet cached
// would keep its error for good.
func (d *dependencies) add(ref objectRef, key string, k depKey) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byKey[k] == nil {
		d.byKey[k] = map[objectRef]string{}
	}
	d.byKey[k][ref] = key
}

// commit replaces what the object depends on by what rec recorded (and
// registered as it read, see add).
func (d *dependencies) commit(rec *recordingLookup) {
	if rec == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.forgetLocked(rec.ref)
	if len(rec.read) == 0 {
		return
	}
	d.byObject[rec.ref] = rec.read
	for _, k := range rec.read {
		if d.byKey[k] == nil {
			d.byKey[k] = map[objectRef]string{}
		}
		d.byKey[k][rec.ref] = rec.key
	}
}

func (d *dependencies) forget(resource int, uid string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.forgetLocked(objectRef{resource, uid})
}

func (d *dependencies) forgetLocked(ref objectRef) {
	for _, k := range d.byObject[ref] {
		delete(d.byKey[k], ref)
		if len(d.byKey[k]) == 0 {
			delete(d.byKey, k)
		}
	}
	delete(d.byObject, ref)
}

// dependents returns the objects that read any of keys, with their cache
// keys.
func (d *dependencies) dependents(keys []depKey) map[objectRef]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[objectRef]string{}
	for _, k := range keys {
		for ref, key := range d.byKey[k] {
			out[ref] = key
		}
	}
	return out
}

// recordingLookup forwards to the engine's Lookup and records the keys read,
// registering each with deps before reading it.
type recordingLookup struct {
	ref  objectRef
	key  string // the dependent object's cache key
	deps *dependencies
	read []depKey
}

func (r *recordingLookup) record(k depKey) {
	r.read = append(r.read, k)
	r.deps.add(r.ref, r.key, k)
}

func (r *recordingLookup) Get(resource, namespace, name string) (any, bool, error) {
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	r.record(depKey{resource: resource, value: key})
	return r.deps.inner.Get(resource, namespace, name)
}

func (r *recordingLookup) ByIndex(resource, index, value string) ([]any, error) {
	r.record(depKey{resource: resource, index: index, value: value})
	return r.deps.inner.ByIndex(resource, index, value)
}

// ReadsNamespace implements indexers.NamespaceReader when the engine's
// Lookup does.
func (r *recordingLookup) ReadsNamespace(resource, namespace string) error {
	if n, is := r.deps.inner.(indexers.NamespaceReader); is {
		return n.ReadsNamespace(resource, namespace)
	}
	return nil
}

// Scope implements indexers.ResourceScopes when the engine's Lookup does:
// owner() asks it which owner kinds are read, and where.
func (r *recordingLookup) Scope(resource string) (namespaced, ok bool) {
	if s, is := r.deps.inner.(indexers.ResourceScopes); is {
		return s.Scope(resource)
	}
	return true, true
}
