package indexers_test

import (
	"runtime"
	"testing"

	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

// BenchmarkLabelIndexMemory measures the memory the built-in label index
// (indexers.LabelIndex, which selected() reads) holds beside the namespace
// index, in bytes per object, over the 100,000 pods of the benchmark's
// workload (`make bench`), each labelled app, pod-template-hash and tier:
// the heap of a cache with both indexes less that of a cache with the
// namespace index only, after a collection. Run it with -benchtime=1x.
func BenchmarkLabelIndexMemory(b *testing.B) {
	pods := workload.Spec{Pods: 100000, Namespaces: 20, Nodes: 100, PodsPerDeployment: 50}.PodObjects()
	withLabels := labelIndexers(b, newEnv(b))
	withLabels[cache.NamespaceIndex] = cache.MetaNamespaceIndexFunc
	heap := func(ixs cache.Indexers) (uint64, cache.Indexer) {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		before := m.HeapAlloc
		store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, ixs)
		for _, p := range pods {
			if err := store.Add(p); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc - before, store
	}
	var perObject float64
	for b.Loop() {
		base, s1 := heap(cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		labelled, s2 := heap(withLabels)
		perObject = (float64(labelled) - float64(base)) / float64(len(pods))
		runtime.KeepAlive(s1)
		runtime.KeepAlive(s2)
	}
	b.ReportMetric(perObject, "bytes/object")
	b.ReportMetric(float64(len(pods)), "objects")
}
