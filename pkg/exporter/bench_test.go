package exporter

import (
	"bytes"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

// ksmPods loads examples/kube-state-metrics-pods.yaml and makes the 10,000
// pods of the benchmark workload.
func ksmPods(b *testing.B) (*Compiled, []*corev1.Pod) {
	b.Helper()
	env, err := indexers.NewEnv()
	if err != nil {
		b.Fatal(err)
	}
	c, err := Load("../../examples/kube-state-metrics-pods.yaml", env)
	if err != nil {
		b.Fatal(err)
	}
	return c, workload.Spec{Pods: 10000, Namespaces: 20, Nodes: 100, PodsPerDeployment: 50}.PodObjects()
}

// BenchmarkEngineKSMPods computes the series of examples/kube-state-metrics-pods.yaml
// for 10,000 pods of the benchmark workload, as the exporter does while its
// cache fills: what time to ready spends outside decoding.
func BenchmarkEngineKSMPods(b *testing.B) {
	c, pods := ksmPods(b)
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

// BenchmarkEngineKSMPodUpdates recomputes the series of
// examples/kube-state-metrics-pods.yaml for one pod changed (its first
// container's restart count), among 10,000 pods: what the exporter does
// for each pod update it watches. updates/s is what one core sustains.
func BenchmarkEngineKSMPodUpdates(b *testing.B) {
	c, pods := ksmPods(b)
	e := NewEngine(c, EngineOptions{Workers: 1})
	defer e.Close()
	var changed []*corev1.Pod
	for _, p := range pods {
		e.Update(0, p)
		if len(p.Status.ContainerStatuses) > 0 {
			q := p.DeepCopy()
			q.Status.ContainerStatuses[0].RestartCount++
			changed = append(changed, q)
		}
	}
	if len(changed) == 0 {
		b.Fatal("no pod has container statuses")
	}
	byUID := map[types.UID]*corev1.Pod{}
	for _, p := range pods {
		byUID[p.UID] = p
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		// Each pod alternates between its two versions, so that every
		// update changes a series.
		q := changed[i%len(changed)]
		if (i/len(changed))%2 == 0 {
			e.Update(0, q)
		} else {
			e.Update(0, byUID[q.UID])
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
	b.StopTimer()
	q := changed[0]
	e.Update(0, q)
	var out bytes.Buffer
	e.WriteFamilies(&out, false)
	want := fmt.Sprintf(`container=%q,namespace=%q,pod=%q,uid=%q} %d`, q.Status.ContainerStatuses[0].Name, q.Namespace, q.Name, q.UID, q.Status.ContainerStatuses[0].RestartCount)
	if !bytes.Contains(out.Bytes(), []byte(want)) {
		b.Fatalf("no series %s after the update", want)
	}
}
