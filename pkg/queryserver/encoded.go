package queryserver

import (
	"reflect"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
)

// AnswerCache bounds the text a query server keeps of the objects it has
// printed as -o json (see Served.KeepAnswers): an object printed again
// unchanged is written from that text rather than encoded again, which is
// most of the time of a large answer. Each object's text is kept while its
// informer holds that very object, and dropped once it changes or goes;
// an object the cache has no room for is encoded each time it is printed.
type AnswerCache struct {
	limit int64
	used  atomic.Int64
	// objects counts the objects whose text is kept.
	objects atomic.Int64
	full    atomic.Bool
	// onFull is called the first time an object finds no room.
	onFull func()
}

// DefaultAnswerCache is the room of a query server's AnswerCache unless
// told otherwise: 512 MiB, or a quarter of the memory limit of the
// process's container when that is lower.
func DefaultAnswerCache() int64 { return answerCacheWithin(factory.MemoryLimit()) }

// answerCacheWithin is DefaultAnswerCache within a container's memory
// limit, when ok.
func answerCacheWithin(limit uint64, ok bool) int64 {
	room := int64(512 << 20)
	if ok {
		room = min(room, int64(limit/4)) //nolint:gosec // G115: a memory limit, below 1<<60
	}
	return room
}

// entryOverhead is what the cache takes for an object besides its text
// and its key's bytes: the entries of both maps and their headers,
// rounded up.
const entryOverhead = 128

// NewAnswerCache returns a cache of up to limit bytes; onFull, which may
// be nil, is called once, the first time an object finds no room.
func NewAnswerCache(limit int64, onFull func()) *AnswerCache {
	return &AnswerCache{limit: limit, onFull: onFull}
}

// Used returns the bytes the cache holds: the objects' texts, their keys
// and a fixed overhead each.
func (c *AnswerCache) Used() int64 { return c.used.Load() }

// Objects returns the number of objects whose text the cache holds.
func (c *AnswerCache) Objects() int64 { return c.objects.Load() }

// Limit returns the bytes the cache may hold.
func (c *AnswerCache) Limit() int64 { return c.limit }

// take reserves n bytes, or reports that there is no room for them.
func (c *AnswerCache) take(n int64) bool {
	for {
		used := c.used.Load()
		if used+n > c.limit {
			if c.full.CompareAndSwap(false, true) && c.onFull != nil {
				c.onFull()
			}
			return false
		}
		if c.used.CompareAndSwap(used, used+n) {
			return true
		}
	}
}

// encodedItems is the query.ItemCache of a Served, filled by its answers
// within the room of an AnswerCache. An object's text is stored only while
// its informer holds it, and forgotten by the informer's event handler
// once the object is replaced or deleted: a text stored after the object
// changed would never be read nor forgotten. The handler is given the
// object of the event, which for a deletion is the object decoded from the
// watch (or a cache.DeletedFinalStateUnknown), not the one cached: texts
// are found again by their informer and key.
type encodedItems struct {
	room *AnswerCache
	// holders are the indexers of the served informers, by kind, each
	// with the number its event handler knows it by.
	holders map[schema.GroupVersionKind][]holder

	// mu guards texts and keys. Store holds it while it looks the object
	// up in its indexer, so that the event handler forgetting the object,
	// which runs after the indexer has dropped it, comes after a Store
	// that found it. Load, once per object of every answer, only reads.
	mu sync.RWMutex
	// texts are keyed by the cached object itself: its pointer.
	texts map[runtime.Object]encodedText
	// keys are the objects texts holds, by informer and key.
	keys map[heldKey]runtime.Object
}

// holder is a served informer's indexer and its number.
type holder struct {
	n   int
	idx cache.Indexer
}

// heldKey is where an informer holds an object: its number and the
// object's namespace/name key.
type heldKey struct {
	informer int
	key      string
}

type encodedText struct {
	gvk  schema.GroupVersionKind
	text []byte
	at   heldKey
}

// size is what the cache counts for t: its text, its key and the rest.
func (t encodedText) size() int64 { return int64(len(t.text)+len(t.at.key)) + entryOverhead }

// identifiable reports whether obj is a pointer, which a map may key and
// which stands for the cached object.
func identifiable(obj runtime.Object) bool {
	t := reflect.TypeOf(obj)
	return t != nil && t.Kind() == reflect.Pointer
}

// Load implements query.ItemCache.
func (e *encodedItems) Load(gvk schema.GroupVersionKind, obj runtime.Object) ([]byte, bool) {
	if !identifiable(obj) {
		return nil, false
	}
	e.mu.RLock()
	t, ok := e.texts[obj]
	e.mu.RUnlock()
	if !ok || t.gvk != gvk {
		return nil, false
	}
	return t.text, true
}

// Store implements query.ItemCache.
func (e *encodedItems) Store(gvk schema.GroupVersionKind, obj runtime.Object, text []byte) {
	if !identifiable(obj) {
		return
	}
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.texts[obj]; ok {
		return
	}
	n, ok := e.held(gvk, key, obj)
	if !ok {
		return
	}
	at := heldKey{informer: n, key: key}
	if old, ok := e.keys[at]; ok {
		e.dropLocked(old) // a version its informer no longer holds
	}
	t := encodedText{gvk: gvk, text: text, at: at}
	if !e.room.take(t.size()) {
		return
	}
	e.texts[obj] = t
	e.keys[at] = obj
	e.room.objects.Add(1)
}

// held returns the number of the informer of kind gvk that holds obj
// itself at key, if one does.
func (e *encodedItems) held(gvk schema.GroupVersionKind, key string, obj runtime.Object) (int, bool) {
	for _, h := range e.holders[gvk] {
		if holds(h.idx, key, obj) {
			return h.n, true
		}
	}
	return 0, false
}

// holds reports whether idx holds obj itself at key.
func holds(idx cache.Indexer, key string, obj runtime.Object) bool {
	got, ok, err := idx.GetByKey(key)
	if err != nil || !ok {
		return false
	}
	o, isObj := got.(runtime.Object)
	return isObj && o == obj
}

// forget drops the text kept at the key of obj, an object of an event of
// informer n, once that informer no longer holds the object of the text.
func (e *encodedItems) forget(n int, idx cache.Indexer, obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	at := heldKey{informer: n, key: key}
	e.mu.Lock()
	defer e.mu.Unlock()
	if o, ok := e.keys[at]; ok && !holds(idx, key, o) {
		e.dropLocked(o)
	}
}

// dropLocked drops the text of o; e.mu is held.
func (e *encodedItems) dropLocked(o runtime.Object) {
	t, ok := e.texts[o]
	if !ok {
		return
	}
	delete(e.texts, o)
	delete(e.keys, t.at)
	e.room.used.Add(-t.size())
	e.room.objects.Add(-1)
}
