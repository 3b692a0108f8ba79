package factory

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestStreamedListFilledOnceTheBookmarkIsReceived checks that a streamed
// first list counts as handed to the cache only once its consumer (the
// reflector) has received the bookmark that ends it, and before it
// receives anything after it: the reflector transforms the list's last
// object after receiving it, which must still see the list unfilled, and
// the objects after the list must see it filled. The watch is unbuffered,
// so that the proxy has read the bookmark while the consumer still holds
// the last object.
func TestStreamedListFilledOnceTheBookmarkIsReceived(t *testing.T) {
	for i := range 100 {
		ls := &lists{}
		st := &streamedList{cnt: &counter{}, lists: ls, reqs: &RequestCounts{}}
		inner := watch.NewFake()
		w := preparingWatch(inner, st, nil)
		bookmarkRead := make(chan struct{})
		go func() {
			inner.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "last"}})
			inner.Action(watch.Bookmark, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
				Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"},
			}})
			close(bookmarkRead)
			inner.Modify(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "last"}})
		}()

		if ev := <-w.ResultChan(); ev.Type != watch.Added {
			t.Fatalf("got %s first; want the list's ADDED", ev.Type)
		}
		<-bookmarkRead
		if ls.filled.Load() {
			t.Fatalf("run %d: the list was filled while its last object was still to be transformed", i)
		}
		if ev := <-w.ResultChan(); ev.Type != watch.Bookmark {
			t.Fatalf("got %s second; want the bookmark", ev.Type)
		}
		if ev := <-w.ResultChan(); ev.Type != watch.Modified {
			t.Fatalf("got %s third; want the MODIFIED after the list", ev.Type)
		}
		if !ls.filled.Load() {
			t.Fatalf("run %d: an event after the list's bookmark was received before the list was filled", i)
		}
		if n := ls.completed.Load(); n != 1 {
			t.Fatalf("%d lists completed; want 1", n)
		}
		w.Stop()
	}
}
