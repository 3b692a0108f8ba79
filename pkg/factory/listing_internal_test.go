package factory

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestListing checks the list requests of UseAPIServerCache and
// ObjectLimit: resourceVersion=0 on the first page, the limit asked, and
// the answer cut at the limit with no further page.
func TestListing(t *testing.T) {
	l := listing{apiServerCache: true, limit: 2}
	o := metav1.ListOptions{ResourceVersion: "42", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Limit: 500}
	l.options(&o)
	if o.ResourceVersion != "0" || o.ResourceVersionMatch != "" || o.Limit != 2 {
		t.Errorf("options %+v", o)
	}
	o = metav1.ListOptions{Continue: "c"}
	l.options(&o)
	if o.ResourceVersion != "" {
		t.Errorf("a continued list has resource version %q", o.ResourceVersion)
	}
	o = metav1.ListOptions{ResourceVersion: "42", Limit: 500}
	listing{}.options(&o)
	if o.ResourceVersion != "42" || o.Limit != 500 {
		t.Errorf("no listing changed %+v", o)
	}

	list := &corev1.PodList{ListMeta: metav1.ListMeta{Continue: "next", RemainingItemCount: ptr.To[int64](5)},
		Items: []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, {ObjectMeta: metav1.ObjectMeta{Name: "b"}}, {ObjectMeta: metav1.ObjectMeta{Name: "c"}}}}
	cut, err := l.truncate(list)
	if err != nil {
		t.Fatal(err)
	}
	if !cut || len(list.Items) != 2 || list.Items[1].Name != "b" || list.Continue != "" || list.RemainingItemCount != nil {
		t.Errorf("truncated to %d items (cut: %v), continue %q, remaining %v", len(list.Items), cut, list.Continue, list.RemainingItemCount)
	}
	whole := &corev1.PodList{Items: []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "a"}}}}
	if cut, err := l.truncate(whole); err != nil || cut || len(whole.Items) != 1 {
		t.Errorf("a list within the limit: cut %v, %d items, %v", cut, len(whole.Items), err)
	}
}
