package factory

import (
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// Stub is what the cache of a transient informer (see Needs.Readers) holds
// of an object: the metadata that identifies it (name, namespace, UID,
// resource version), and the object itself only until each of the
// informer's readers has taken it from the event that delivered it (see
// Take), or not at all when the readers had it as it arrived (see
// Needs.Early and TakenEarly). Keys, the namespace index, relists and
// tombstones work from the metadata alone, so the cache costs a few
// hundred bytes per object whatever the objects hold.
type Stub struct {
	metav1.ObjectMeta

	// early is set when the readers had the object as it arrived; fixed
	// when the Stub is made.
	early bool
	// mu guards obj and left.
	mu sync.Mutex
	// obj is the object as received; nil once every reader has taken it.
	obj runtime.Object
	// left is how many readers have still to take obj.
	left int
}

// newStub wraps obj for readers readers; with no reader, it keeps only
// obj's metadata.
func newStub(obj runtime.Object, readers int) (*Stub, bool) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, false
	}
	s := &Stub{left: readers}
	if readers > 0 {
		s.obj = obj
	}
	s.Name, s.Namespace, s.UID, s.ResourceVersion = m.GetName(), m.GetNamespace(), m.GetUID(), m.GetResourceVersion()
	return s, true
}

// TakenEarly reports whether obj, the object of an informer's event, is a
// Stub whose object the informer's readers had as it arrived (see
// Needs.Early): Take returns nil for it, and the event only says that the
// cache holds the object, or no longer does.
func TakenEarly(obj any) bool {
	s, ok := obj.(*Stub)
	return ok && s.early
}

// Take returns the object an event handler of an informer received: obj
// itself, unless obj is a Stub, whose object it returns and, once each
// reader of the informer has taken it, lets go of. It returns nil for a
// Stub already taken by every reader: the object of an event delivered to
// a handler that the informer does not count (one added after it
// started), or of a resync. A tombstone (cache.DeletedFinalStateUnknown)
// is returned as it is: its Stub names the object deleted, which is all a
// deletion needs.
//
// Each reader calls Take once per event, and only on the new object of an
// update: the old one has been taken already.
func Take(obj any) any {
	s, ok := obj.(*Stub)
	if !ok {
		return obj
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.obj
	if s.left--; s.left <= 0 {
		s.obj = nil
	}
	return out // a nil runtime.Object is a nil any
}

// stubTransform stamps objects as transform does, then wraps them for
// readers. Until filled is set, it hands each object to every function of
// early, if any, and keeps none of it (see Needs.Early).
func stubTransform(next cache.TransformFunc, readers int, early []func(runtime.Object), filled *atomic.Bool) cache.TransformFunc {
	return func(obj any) (any, error) {
		obj, err := next(obj)
		if err != nil {
			return nil, err
		}
		ro, ok := obj.(runtime.Object)
		if !ok {
			return obj, nil // a Stub, transformed again as a list is replaced
		}
		if len(early) > 0 && !filled.Load() {
			if s, ok := newStub(ro, 0); ok {
				s.early = true
				for _, fn := range early {
					fn(ro)
				}
				return s, nil
			}
		}
		if s, ok := newStub(ro, readers); ok {
			return s, nil
		}
		return obj, nil
	}
}
