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
	full  atomic.Bool
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

// entryOverhead is what the cache takes for an object besides its text:
// the map entry and the text's slice header, rounded up.
const entryOverhead = 128

// NewAnswerCache returns a cache of up to limit bytes; onFull, which may
// be nil, is called once, the first time an object finds no room.
func NewAnswerCache(limit int64, onFull func()) *AnswerCache {
	return &AnswerCache{limit: limit, onFull: onFull}
}

// Used returns the bytes the cache holds.
func (c *AnswerCache) Used() int64 { return c.used.Load() }

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
// changed would never be read nor forgotten.
type encodedItems struct {
	room *AnswerCache
	// holders are the indexers of the served informers, by kind.
	holders map[schema.GroupVersionKind][]cache.Indexer

	// mu guards texts. Store holds it while it looks the object up in its
	// indexer, so that the event handler forgetting the object, which runs
	// after the indexer has dropped it, comes after a Store that found it.
	// Load, once per object of every answer, only reads.
	mu sync.RWMutex
	// texts are keyed by the cached object itself: its pointer.
	texts map[runtime.Object]encodedText
}

type encodedText struct {
	gvk  schema.GroupVersionKind
	text []byte
}

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
	if _, ok := e.texts[obj]; ok || !e.held(gvk, key, obj) {
		return
	}
	if !e.room.take(int64(len(text)) + entryOverhead) {
		return
	}
	e.texts[obj] = encodedText{gvk: gvk, text: text}
}

// held reports whether an informer of kind gvk holds obj itself at key.
func (e *encodedItems) held(gvk schema.GroupVersionKind, key string, obj runtime.Object) bool {
	for _, idx := range e.holders[gvk] {
		if got, ok, err := idx.GetByKey(key); err == nil && ok {
			if o, isObj := got.(runtime.Object); isObj && o == obj {
				return true
			}
		}
	}
	return false
}

// forget drops the text of obj, an object an informer no longer holds.
func (e *encodedItems) forget(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	o, ok := obj.(runtime.Object)
	if !ok || !identifiable(o) {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if t, ok := e.texts[o]; ok {
		delete(e.texts, o)
		e.room.used.Add(-(int64(len(t.text)) + entryOverhead))
	}
}
