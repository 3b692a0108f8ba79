package queryserver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

var podKind = corev1.SchemeGroupVersion.WithKind("Pod")

func namedPod(name, version string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: version}}
}

// newEncoded returns the encodedItems of one indexer of pods holding objs,
// within limit bytes, and a count of the calls of onFull.
func newEncoded(t *testing.T, limit int64, objs ...runtime.Object) (*encodedItems, cache.Indexer, *int) {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, o := range objs {
		if err := idx.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	fulls := 0
	e := &encodedItems{
		room:    NewAnswerCache(limit, func() { fulls++ }),
		holders: map[schema.GroupVersionKind][]holder{podKind: {{n: 0, idx: idx}}},
		texts:   map[runtime.Object]encodedText{},
		keys:    map[heldKey]runtime.Object{},
	}
	return e, idx, &fulls
}

// TestEncodedItems: a text is given back for the very object it was
// stored for, as the kind it was stored for; not for another version of
// the object, nor for an object its informer no longer holds; and
// forgetting an object gives its room back.
func TestEncodedItems(t *testing.T) {
	a, b := namedPod("a", "1"), namedPod("b", "1")
	e, idx, fulls := newEncoded(t, 1<<20, a, b)
	text := []byte(`{"a": 1}`)
	e.Store(podKind, a, text)
	if got, ok := e.Load(podKind, a); !ok || string(got) != string(text) {
		t.Fatalf("Load after Store = %q, %t", got, ok)
	}
	if want := int64(len(text)+len("ns/a")) + entryOverhead; e.room.Used() != want || e.room.Objects() != 1 {
		t.Errorf("Used = %d, Objects = %d, want %d, 1", e.room.Used(), e.room.Objects(), want)
	}
	if _, ok := e.Load(corev1.SchemeGroupVersion.WithKind("Other"), a); ok {
		t.Error("a text was given back for another kind")
	}
	if _, ok := e.Load(podKind, a.DeepCopy()); ok {
		t.Error("a text was given back for a copy of the object")
	}
	if _, ok := e.Load(podKind, b); ok {
		t.Error("a text was given back for an object never stored")
	}

	// A newer version in the informer: the old one is not stored.
	b2 := namedPod("b", "2")
	if err := idx.Update(b2); err != nil {
		t.Fatal(err)
	}
	e.Store(podKind, b, []byte("old"))
	if _, ok := e.Load(podKind, b); ok {
		t.Error("the text of an object the informer had replaced was stored")
	}
	// An object of a kind no informer serves is not stored.
	e.Store(corev1.SchemeGroupVersion.WithKind("Other"), b2, []byte("x"))
	if len(e.texts) != 1 {
		t.Errorf("%d texts held, want 1", len(e.texts))
	}

	// The informer replaces a, then deletes b2 (as a tombstone): both
	// forgotten, their room given back.
	e.Store(podKind, b2, []byte("b2"))
	a2 := namedPod("a", "2")
	if err := idx.Update(a2); err != nil {
		t.Fatal(err)
	}
	e.forget(0, idx, a2)
	if err := idx.Delete(b2); err != nil {
		t.Fatal(err)
	}
	e.forget(0, idx, cache.DeletedFinalStateUnknown{Key: "ns/b", Obj: b2})
	if len(e.texts) != 0 || len(e.keys) != 0 || e.room.Used() != 0 || e.room.Objects() != 0 {
		t.Errorf("after forgetting both: %d texts, %d keys, %d bytes used, %d objects", len(e.texts), len(e.keys), e.room.Used(), e.room.Objects())
	}
	e.forget(0, idx, a2) // forgetting twice gives nothing back twice
	e.forget(0, idx, "not an object")
	if e.room.Used() != 0 || *fulls != 0 {
		t.Errorf("Used = %d, full %d times", e.room.Used(), *fulls)
	}
}

// TestEncodedItemsForgetDecoded: a watch's delete event carries the
// object decoded from it, not the one the informer held; its text is
// forgotten all the same, and an event for an object whose stored version
// the informer still holds forgets nothing.
func TestEncodedItemsForgetDecoded(t *testing.T) {
	a, b := namedPod("a", "1"), namedPod("b", "1")
	e, idx, _ := newEncoded(t, 1<<20, a, b)
	e.Store(podKind, a, []byte("a"))
	e.Store(podKind, b, []byte("b"))
	// An event for b that comes after b was stored again: b stays.
	e.forget(0, idx, b.DeepCopy())
	if _, ok := e.Load(podKind, b); !ok {
		t.Fatal("an event for an object the informer still holds forgot its text")
	}
	for _, o := range []*corev1.Pod{a, b} {
		if err := idx.Delete(o); err != nil {
			t.Fatal(err)
		}
	}
	e.forget(0, idx, a.DeepCopy()) // as decoded from the watch event
	e.forget(0, idx, cache.DeletedFinalStateUnknown{Key: "ns/b"})
	if len(e.texts) != 0 || len(e.keys) != 0 || e.room.Used() != 0 || e.room.Objects() != 0 {
		t.Errorf("after deleting both: %d texts, %d keys, %d bytes used, %d objects; want none", len(e.texts), len(e.keys), e.room.Used(), e.room.Objects())
	}
}

// TestAnswerCacheFull: an object that does not fit is not stored, the
// first such object calls onFull and the next do not, and room given back
// is used again.
func TestAnswerCacheFull(t *testing.T) {
	a, b, c := namedPod("a", "1"), namedPod("b", "1"), namedPod("c", "1")
	text := make([]byte, 100)
	e, idx, fulls := newEncoded(t, 2*(100+int64(len("ns/a"))+entryOverhead), a, b, c)
	for _, o := range []*corev1.Pod{a, b, c, c} {
		e.Store(podKind, o, text)
	}
	if _, ok := e.Load(podKind, c); ok || len(e.texts) != 2 || *fulls != 1 {
		t.Fatalf("c stored %t, %d texts, full %d times; want false, 2, 1", ok, len(e.texts), *fulls)
	}
	if err := idx.Delete(a); err != nil {
		t.Fatal(err)
	}
	e.forget(0, idx, a)
	e.Store(podKind, c, text)
	if _, ok := e.Load(podKind, c); !ok || *fulls != 1 {
		t.Errorf("c stored %t once a was forgotten, full %d times; want true, 1", ok, *fulls)
	}
}

// valueObject is a runtime.Object that is not a pointer, which a map of
// objects cannot key by identity.
type valueObject struct{ m map[string]string }

func (valueObject) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }
func (v valueObject) DeepCopyObject() runtime.Object { return v }

// TestEncodedItemsNotPointers: such objects are neither stored nor looked
// up, without panicking on an unhashable key.
func TestEncodedItemsNotPointers(t *testing.T) {
	e, _, _ := newEncoded(t, 1<<20)
	v := valueObject{m: map[string]string{}}
	e.Store(podKind, v, []byte("x"))
	if _, ok := e.Load(podKind, v); ok {
		t.Error("a text was given back for an object that is not a pointer")
	}
	e.forget(0, nil, v)
	if _, ok := e.Load(podKind, nil); ok {
		t.Error("a text was given back for nil")
	}
}

// TestDefaultAnswerCache: 512 MiB, or a quarter of a container's memory
// limit below 2 GiB.
func TestDefaultAnswerCache(t *testing.T) {
	for _, c := range []struct {
		limit uint64
		ok    bool
		want  int64
	}{
		{0, false, 512 << 20},
		{512 << 20, true, 128 << 20},
		{2 << 30, true, 512 << 20},
		{8 << 30, true, 512 << 20},
	} {
		if got := answerCacheWithin(c.limit, c.ok); got != c.want {
			t.Errorf("answerCacheWithin(%d, %t) = %d, want %d", c.limit, c.ok, got, c.want)
		}
	}
}

// TestAnswerCacheCollectors: the gauges of the answer cache say what it
// holds, and follow it as objects are forgotten; they pass promlint.
func TestAnswerCacheCollectors(t *testing.T) {
	a, b := namedPod("a", "1"), namedPod("b", "1")
	e, idx, _ := newEncoded(t, 1000, a, b)
	e.Store(podKind, a, []byte("0123456789"))
	e.Store(podKind, b, []byte("01234"))
	reg := prometheus.NewPedanticRegistry()
	for _, c := range AnswerCacheCollectors(e.room) {
		reg.MustRegister(c)
	}
	expo := func(objects, bytes int) string {
		return fmt.Sprintf(`# HELP kubectl_informer_answer_cache_bytes Bytes the answer cache holds: the -o json text of the objects it keeps, their keys and a fixed overhead each.
# TYPE kubectl_informer_answer_cache_bytes gauge
kubectl_informer_answer_cache_bytes %d
# HELP kubectl_informer_answer_cache_limit_bytes Bytes the answer cache may hold (--answer-cache).
# TYPE kubectl_informer_answer_cache_limit_bytes gauge
kubectl_informer_answer_cache_limit_bytes 1000
# HELP kubectl_informer_answer_cache_objects Objects whose -o json text the answer cache holds.
# TYPE kubectl_informer_answer_cache_objects gauge
kubectl_informer_answer_cache_objects %d
`, bytes, objects)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(expo(2, 10+4+5+4+2*entryOverhead))); err != nil {
		t.Error(err)
	}
	if err := idx.Delete(a); err != nil {
		t.Fatal(err)
	}
	e.forget(0, idx, a.DeepCopy())
	if err := testutil.GatherAndCompare(reg, strings.NewReader(expo(1, 5+4+entryOverhead))); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("promlint: %v %v", problems, err)
	}
}
