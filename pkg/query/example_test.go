package query_test

import (
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/query"
)

// The equivalent of
//
//	kubectl informer query pods -A --by byNode=n1 --where 'object.status.phase == "Pending"' \
//	    --columns node=object.spec.nodeName
//
// with the expressions written as Go functions.
func Example() {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		"byNode": func(obj any) ([]string, error) {
			return []string{obj.(*corev1.Pod).Spec.NodeName}, nil
		},
	})
	for i, phase := range []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodPending} {
		_ = idx.Add(&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:         "default",
				Name:              fmt.Sprintf("web-%d", i),
				CreationTimestamp: metav1.NewTime(now.Add(-time.Duration(i+1) * time.Hour)),
			},
			Spec:   corev1.PodSpec{NodeName: "n1"},
			Status: corev1.PodStatus{Phase: phase},
		})
	}

	res, err := query.Run(idx, query.Spec{
		Selectors: []query.Selector{{Index: "byNode", Value: "n1"}},
		Where: func(obj any) (bool, error) {
			return obj.(*corev1.Pod).Status.Phase == corev1.PodPending, nil
		},
		Columns: []query.Column{{Name: "node", Value: func(obj any) (any, error) {
			return obj.(*corev1.Pod).Spec.NodeName, nil
		}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(os.Stderr, "warning:", w)
	}
	printer, err := query.NewPrinter("", query.PrintOptions{
		ErrOut: os.Stderr,
		Now:    func() time.Time { return now },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := printer.Print(os.Stdout, res); err != nil {
		fmt.Println(err)
	}
	// Output:
	// NAMESPACE   NAME    READY   STATUS    RESTARTS   AGE   NODE
	// default     web-0   0/0     Pending   0          60m   n1
	// default     web-2   0/0     Pending   0          3h    n1
}

// Counting per value: kubectl informer query pods -A --count --group-by object.spec.nodeName
func Example_groupBy() {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for i, node := range []string{"n1", "n2", "n1", "", "n3", "n1", "n2"} {
		_ = idx.Add(&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("p-%d", i)},
			Spec:       corev1.PodSpec{NodeName: node},
		})
	}
	res, _ := query.Run(idx, query.Spec{Count: true, GroupBy: func(obj any) (any, error) {
		if n := obj.(*corev1.Pod).Spec.NodeName; n != "" {
			return n, nil
		}
		return nil, nil
	}})
	printer, _ := query.NewPrinter("", query.PrintOptions{})
	_ = printer.Print(os.Stdout, res)
	// Output:
	// n1       3
	// n2       2
	// <none>   1
	// n3       1
}
