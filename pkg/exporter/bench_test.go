package exporter

import (
	"bufio"
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

// BenchmarkWriteFamiliesKSM writes the series of examples/kube-state-metrics-pods.yaml
// for 10,000 and 100,000 pods of the benchmark workload through the
// scrape's 64 KiB buffer to a writer that copies every byte, as a write to
// a socket does: a scrape's cost in the exporter, without the network or
// the client. ns/series should not grow with the number of pods.
func BenchmarkWriteFamiliesKSM(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			c, _ := ksmPods(b)
			e := NewEngine(c, EngineOptions{})
			defer e.Close()
			for _, p := range (workload.Spec{Pods: n, Namespaces: 20, Nodes: 100, PodsPerDeployment: 50}).PodObjects() {
				e.Update(0, p)
			}
			var cw countingWriter
			if err := e.WriteFamilies(&cw, false); err != nil {
				b.Fatal(err)
			}
			if cw.lines < n*7 {
				b.Fatalf("%d lines, want at least %d", cw.lines, n*7)
			}
			sink := &copyingWriter{buf: make([]byte, 256<<10)}
			bw := bufio.NewWriterSize(sink, 64<<10)
			b.SetBytes(cw.n)
			b.ReportAllocs()
			for b.Loop() {
				bw.Reset(sink)
				if err := e.WriteFamilies(bw, false); err != nil {
					b.Fatal(err)
				}
				if err := bw.Flush(); err != nil {
					b.Fatal(err)
				}
			}
			if sink.n != int64(b.N)*cw.n {
				b.Fatalf("copied %d bytes in %d scrapes of %d", sink.n, b.N, cw.n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(cw.lines), "ns/series")
		})
	}
}

// countingWriter counts the bytes and lines written to it.
type countingWriter struct {
	n     int64
	lines int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	w.lines += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

// copyingWriter copies what is written to it into buf, round, as a socket
// copies into its send buffer, and counts the bytes.
type copyingWriter struct {
	buf []byte
	at  int
	n   int64
}

func (w *copyingWriter) Write(p []byte) (int, error) {
	for rest := p; len(rest) > 0; {
		c := copy(w.buf[w.at:], rest)
		rest = rest[c:]
		w.at = (w.at + c) % len(w.buf)
	}
	w.n += int64(len(p))
	return len(p), nil
}
