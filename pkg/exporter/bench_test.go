package exporter

import (
	"bytes"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

// BenchmarkEngineKSMPods computes the series of examples/kube-state-metrics-pods.yaml
// for 10,000 pods of the benchmark workload, as the exporter does while its
// cache fills: what time to ready spends outside decoding.
func BenchmarkEngineKSMPods(b *testing.B) {
	env, err := indexers.NewEnv()
	if err != nil {
		b.Fatal(err)
	}
	c, err := Load("../../examples/kube-state-metrics-pods.yaml", env)
	if err != nil {
		b.Fatal(err)
	}
	pods := workload.Spec{Pods: 10000, Namespaces: 20, Nodes: 100, PodsPerDeployment: 50}.PodObjects()
	b.ReportAllocs()
	for b.Loop() {
		e := NewEngine(c, EngineOptions{Workers: 1})
		for _, p := range pods {
			e.Update(0, p)
		}
		e.Close()
	}
	b.StopTimer()
	e := NewEngine(c, EngineOptions{Workers: 1})
	for _, p := range pods {
		e.Update(0, p)
	}
	var out bytes.Buffer
	e.WriteFamilies(&out, false)
	if n := bytes.Count(out.Bytes(), []byte("\nkube_pod_")); n < 10000*7 {
		b.Fatalf("%d series, want at least %d", n, 10000*7)
	}
}
