package query

import (
	"fmt"
	"io"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// benchIndexer holds n pods spread over 100 namespaces and n/100 nodes, each
// with a unique pod IP.
func benchIndexer(b *testing.B, n int) cache.Indexer {
	b.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		"byNode":             byNode,
		"byIP": func(obj any) ([]string, error) {
			return []string{obj.(*corev1.Pod).Status.PodIP}, nil
		},
	})
	for i := range n {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:         fmt.Sprintf("ns-%d", i%100),
				Name:              fmt.Sprintf("pod-%d", i),
				CreationTimestamp: ago(time.Duration(i) * time.Second),
			},
			Spec:   corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", i%(n/100))},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)},
		}
		if err := idx.Add(p); err != nil {
			b.Fatal(err)
		}
	}
	return idx
}

// BenchmarkGroupBy100k counts 100,000 pods per node (1,000 groups).
func BenchmarkGroupBy100k(b *testing.B) {
	idx := benchIndexer(b, 100_000)
	spec := Spec{Count: true, GroupBy: func(obj any) (any, error) { return obj.(*corev1.Pod).Spec.NodeName, nil }}
	for b.Loop() {
		res, err := Run(idx, spec)
		if err != nil || len(res.Groups) != 1000 {
			b.Fatalf("groups = %d, err = %v", len(res.Groups), err)
		}
	}
}

// BenchmarkAggregate100k computes two aggregates of 100,000 pods per
// node (1,000 groups), to compare with BenchmarkGroupBy100k.
func BenchmarkAggregate100k(b *testing.B) {
	idx := benchIndexer(b, 100_000)
	spec := Spec{
		Keys: []Key{{Name: "node", Value: func(obj any) (any, error) { return obj.(*corev1.Pod).Spec.NodeName, nil }}},
		Aggregates: []Aggregate{
			{Name: "n", Func: FuncCount},
			{Name: "oldest", Func: FuncMin, Value: func(obj any) (any, error) { return obj.(*corev1.Pod).CreationTimestamp.Unix(), nil }},
		},
	}
	for b.Loop() {
		res, err := Run(idx, spec)
		if err != nil || len(res.Rows) != 1000 {
			b.Fatalf("rows = %d, err = %v", len(res.Rows), err)
		}
	}
}

// BenchmarkWhereSortLimit100k filters 100,000 pods, sorts the half that
// match by name and keeps 10.
func BenchmarkWhereSortLimit100k(b *testing.B) {
	idx := benchIndexer(b, 100_000)
	spec := Spec{
		Where:  func(obj any) (bool, error) { return obj.(*corev1.Pod).Namespace < "ns-5", nil },
		SortBy: func(obj any) (any, error) { return obj.(*corev1.Pod).Name, nil },
		Limit:  10,
	}
	for b.Loop() {
		if res, err := Run(idx, spec); err != nil || len(res.Items) != 10 {
			b.Fatal(err)
		}
	}
}

// BenchmarkIndexLookupUnique selects one pod of 100,000 by a unique index
// value.
func BenchmarkIndexLookupUnique(b *testing.B) {
	idx := benchIndexer(b, 100_000)
	spec := Spec{Selectors: []Selector{{Index: "byIP", Value: "10.1.2.3"}}}
	for b.Loop() {
		if res, err := Run(idx, spec); err != nil || len(res.Items) != 1 {
			b.Fatal(err)
		}
	}
}

// BenchmarkIndexLookupNode selects the 100 pods of one node out of 100,000.
func BenchmarkIndexLookupNode(b *testing.B) {
	idx := benchIndexer(b, 100_000)
	spec := Spec{Selectors: []Selector{{Index: "byNode", Value: "node-42"}}}
	for b.Loop() {
		if res, err := Run(idx, spec); err != nil || len(res.Items) != 100 {
			b.Fatal(err)
		}
	}
}

// BenchmarkIndexIntersection intersects one node's 100 pods with one
// namespace's 1,000 pods out of 100,000.
func BenchmarkIndexIntersection(b *testing.B) {
	idx := benchIndexer(b, 100_000)
	spec := Spec{Selectors: []Selector{{Index: "byNode", Value: "node-42"}, {Index: cache.NamespaceIndex, Value: "ns-42"}}}
	for b.Loop() {
		if _, err := Run(idx, spec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrintTable1000 prints 1,000 pods as a table.
func BenchmarkPrintTable1000(b *testing.B) {
	idx := benchIndexer(b, 1000)
	res, err := Run(idx, Spec{})
	if err != nil {
		b.Fatal(err)
	}
	p, err := NewPrinter("", PrintOptions{Now: fixedNow})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := p.Print(io.Discard, res); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrintJSON1000 prints 1,000 typed pods as a JSON list.
func BenchmarkPrintJSON1000(b *testing.B) {
	idx := benchIndexer(b, 1000)
	res, err := Run(idx, Spec{})
	if err != nil {
		b.Fatal(err)
	}
	p, err := NewPrinter("json", PrintOptions{GroupVersionKind: podGVK})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := p.Print(io.Discard, res); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCELWhere100k filters 100,000 cached pods with a CEL predicate
// and counts the matches: a warm-cache answer of -i or --watch.
func BenchmarkCELWhere100k(b *testing.B) {
	idx := benchIndexer(b, 100_000)
	env, err := indexers.NewEnv()
	if err != nil {
		b.Fatal(err)
	}
	p, err := env.Compile(`object.status.phase == "Running" && object.metadata.namespace < "ns-5"`, indexers.KindPredicate, "--where")
	if err != nil {
		b.Fatal(err)
	}
	want := 0
	for _, obj := range idx.List() {
		if pod := obj.(*corev1.Pod); pod.Status.Phase == corev1.PodRunning && pod.Namespace < "ns-5" {
			want++
		}
	}
	spec := Spec{Where: p.Match, Count: true}
	for b.Loop() {
		if res, err := Run(idx, spec); err != nil || res.Matched != want {
			b.Fatalf("count = %d, err = %v", res.Matched, err)
		}
	}
}

// BenchmarkCELGroupBy100k counts 100,000 cached pods per node with a CEL
// group-by expression.
func BenchmarkCELGroupBy100k(b *testing.B) {
	idx := benchIndexer(b, 100_000)
	env, err := indexers.NewEnv()
	if err != nil {
		b.Fatal(err)
	}
	p, err := env.Compile(`object.spec.nodeName`, indexers.KindValue, "--group-by")
	if err != nil {
		b.Fatal(err)
	}
	spec := Spec{Count: true, GroupBy: func(obj any) (any, error) { return p.Value(obj) }}
	for b.Loop() {
		if res, err := Run(idx, spec); err != nil || len(res.Groups) != 1000 {
			b.Fatalf("groups = %d, err = %v", len(res.Groups), err)
		}
	}
}
