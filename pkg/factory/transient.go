package factory

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// Stub is what the cache of a transient informer (see Needs.Readers) holds
// of an object: the metadata that identifies it (name, namespace, UID,
// resource version), and the object itself only until each of the
// informer's readers has taken it from the event that delivered it (see
// Take). Keys, the namespace index, relists and tombstones work from the
// metadata alone, so the cache costs a few hundred bytes per object
// whatever the objects hold.
type Stub struct {
	metav1.ObjectMeta

	// mu guards obj and left.
	mu sync.Mutex
	// obj is the object as received; nil once every reader has taken it.
	obj runtime.Object
	// left is how many readers have still to take obj.
	left int
}

// newStub wraps obj for readers readers.
func newStub(obj runtime.Object, readers int) (*Stub, bool) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, false
	}
	s := &Stub{obj: obj, left: readers}
	s.Name, s.Namespace, s.UID, s.ResourceVersion = m.GetName(), m.GetNamespace(), m.GetUID(), m.GetResourceVersion()
	return s, true
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
// readers.
func stubTransform(next cache.TransformFunc, readers int) cache.TransformFunc {
	return func(obj any) (any, error) {
		obj, err := next(obj)
		if err != nil {
			return nil, err
		}
		if ro, ok := obj.(runtime.Object); ok {
			if s, ok := newStub(ro, readers); ok {
				return s, nil
			}
		}
		return obj, nil
	}
}
