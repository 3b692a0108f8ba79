package plan

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/internal/fixture"
)

// benchPods holds n pods of two containers on n/100 nodes, pruned to what
// req's plan caches, as its informer would hold them.
func benchPods(b *testing.B, req Request, n int) (*Plan, cache.Indexer) {
	b.Helper()
	p, err := Compile(fixture.Env(b), req)
	if err != nil {
		b.Fatal(err)
	}
	fields := p.fields(nil)
	if fields == nil {
		b.Fatal("the plan caches whole pods")
	}
	fields.Add([]string{"metadata"}) // kept by every informer
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for i := range n {
		pod := fixture.Pod(fmt.Sprintf("ns-%d", i%20), fmt.Sprintf("web-%d-x", i), fmt.Sprintf("node-%d", i%(n/100)), corev1.PodRunning, int32(i%7), 0, "nginx:1.27", "envoy:1.31") //nolint:gosec // G115: i%7 fits
		for c := range pod.Spec.Containers {
			pod.Spec.Containers[c].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}
			pod.Spec.Containers[c].Env = []corev1.EnvVar{{Name: "MODE", Value: "production"}}
			pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: pod.Spec.Containers[c].Name, Image: pod.Spec.Containers[c].Image, Ready: true, RestartCount: int32(i % 3)}) //nolint:gosec // G115: i%3 fits
		}
		jsonval.Prune(pod, fields)
		if err := idx.Add(pod); err != nil {
			b.Fatal(err)
		}
	}
	return p, idx
}

// BenchmarkPlanCount100k counts 100,000 pods per node as
// `query pods -A --count --group-by node` does.
func BenchmarkPlanCount100k(b *testing.B) {
	p, idx := benchPods(b, Request{Resources: []string{"pods"}, Count: true, GroupBy: `object.spec.?nodeName.orValue("")`}, 100_000)
	spec := p.Spec()
	for b.Loop() {
		if res, err := query.Run(idx, spec); err != nil || len(res.Groups) != 1000 {
			b.Fatalf("groups = %d, err = %v", len(res.Groups), err)
		}
	}
}

// BenchmarkPlanAggregates100k computes the two aggregates of make bench
// over 100,000 pods per node, to compare with BenchmarkPlanCount100k.
func BenchmarkPlanAggregates100k(b *testing.B) {
	p, idx := benchPods(b, Request{Resources: []string{"pods"}, GroupBy: `object.spec.?nodeName.orValue("")`, Aggregates: []NamedExpr{
		{Name: "restarts", Expr: "sum(object.status.?containerStatuses.orValue([]).map(c, c.restartCount).sum())"},
		{Name: "cpu", Expr: `sum(object.spec.containers.map(c, quantity(c.resources.?requests.cpu.orValue("0"))))`},
	}}, 100_000)
	spec := p.Spec()
	for b.Loop() {
		if res, err := query.Run(idx, spec); err != nil || len(res.Rows) != 1000 {
			b.Fatalf("rows = %d, err = %v", len(res.Rows), err)
		}
	}
}
