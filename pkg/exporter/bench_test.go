package exporter

import (
	"bufio"
	"bytes"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/openapi/openapitest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
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

// drain waits until the engine has computed every event handed to its
// handlers.
func drain(e *Engine) {
	for !e.Idle() {
		time.Sleep(100 * time.Microsecond)
	}
}

// computeAll returns an engine of c that has computed the series of pods,
// handed to its handler as an informer does while its cache fills.
func computeAll(c *Compiled, pods []*corev1.Pod) *Engine {
	e := NewEngine(c, EngineOptions{})
	h := e.Handler(0)
	for _, p := range pods {
		h.OnAdd(p, true)
	}
	drain(e)
	return e
}

// BenchmarkEngineKSMPods computes the series of examples/kube-state-metrics-pods.yaml
// for 10,000 pods of the benchmark workload, handed to the engine's handler
// as an informer does while its cache fills and computed by its workers:
// what time to ready spends outside decoding.
func BenchmarkEngineKSMPods(b *testing.B) {
	c, pods := ksmPods(b)
	b.ReportAllocs()
	for b.Loop() {
		computeAll(c, pods).Close()
	}
	b.StopTimer()
	e := computeAll(c, pods)
	defer e.Close()
	var out bytes.Buffer
	if err := e.WriteFamilies(&out, false); err != nil {
		b.Fatal(err)
	}
	if n := bytes.Count(out.Bytes(), []byte("\nkube_pod_")); n < 10000*7 {
		b.Fatalf("%d series, want at least %d", n, 10000*7)
	}
}

// podVersions returns the pods, and for each pod with a container status a
// second version with its first container's restart count raised, by UID.
func podVersions(b *testing.B, pods []*corev1.Pod) (changed []*corev1.Pod, byUID map[types.UID]*corev1.Pod) {
	b.Helper()
	byUID = map[types.UID]*corev1.Pod{}
	for _, p := range pods {
		byUID[p.UID] = p
		if len(p.Status.ContainerStatuses) > 0 {
			q := p.DeepCopy()
			q.Status.ContainerStatuses[0].RestartCount++
			changed = append(changed, q)
		}
	}
	if len(changed) == 0 {
		b.Fatal("no pod has container statuses")
	}
	return changed, byUID
}

// alternate hands n pod updates to h, each of a pod of changed from its
// version in byUID to the changed one or back: each pod alternates between
// its two versions, so that every update changes a series.
func alternate(h cache.ResourceEventHandler, changed []*corev1.Pod, byUID map[types.UID]*corev1.Pod, n int) {
	for i := range n {
		q := changed[i%len(changed)]
		if (i/len(changed))%2 == 0 {
			h.OnUpdate(byUID[q.UID], q)
		} else {
			h.OnUpdate(q, byUID[q.UID])
		}
	}
}

// BenchmarkEngineKSMPodUpdates recomputes the series of
// examples/kube-state-metrics-pods.yaml for one pod changed (its first
// container's restart count), among 10,000 pods, each update handed to the
// engine's handler and computed by its workers: what the exporter does for
// each pod update it watches. updates/s is what the workers sustain.
func BenchmarkEngineKSMPodUpdates(b *testing.B) {
	c, pods := ksmPods(b)
	e := NewEngine(c, EngineOptions{})
	defer e.Close()
	h := e.Handler(0)
	for _, p := range pods {
		h.OnAdd(p, true)
	}
	drain(e)
	changed, byUID := podVersions(b, pods)
	b.ReportAllocs()
	b.ResetTimer()
	alternate(h, changed, byUID, b.N)
	drain(e)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
	q := changed[0]
	h.OnUpdate(byUID[q.UID], q)
	drain(e)
	var out bytes.Buffer
	if err := e.WriteFamilies(&out, false); err != nil {
		b.Fatal(err)
	}
	// The labels in the config's order.
	want := fmt.Sprintf(`{namespace=%q,pod=%q,uid=%q,container=%q} %d`, q.Namespace, q.Name, q.UID, q.Status.ContainerStatuses[0].Name, q.Status.ContainerStatuses[0].RestartCount)
	if !bytes.Contains(out.Bytes(), []byte(want)) {
		b.Fatalf("no series %s after the update", want)
	}
}

// BenchmarkWriteFamiliesKSM scrapes the series of examples/kube-state-metrics-pods.yaml
// for 10,000 and 100,000 pods of the benchmark workload while they change:
// each iteration hands 100 pod updates to the engine, waits for them to be
// computed, then writes every series through the scrape's 64 KiB buffer to
// a writer that copies every byte, as a write to a socket does. Updates
// leave lines out of order and garbage behind, so this measures the
// compaction that scrapes do, not only a copy of lines in order.
// ns/series should not grow with the number of pods.
func BenchmarkWriteFamiliesKSM(b *testing.B) {
	const updatesPerScrape = 100
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			c, _ := ksmPods(b)
			e := NewEngine(c, EngineOptions{})
			defer e.Close()
			h := e.Handler(0)
			pods := (workload.Spec{Pods: n, Namespaces: 20, Nodes: 100, PodsPerDeployment: 50}).PodObjects()
			for _, p := range pods {
				h.OnAdd(p, true)
			}
			drain(e)
			changed, byUID := podVersions(b, pods)
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
			u := 0
			for b.Loop() {
				for range updatesPerScrape {
					q := changed[u%len(changed)]
					if (u/len(changed))%2 == 0 {
						h.OnUpdate(byUID[q.UID], q)
					} else {
						h.OnUpdate(q, byUID[q.UID])
					}
					u++
				}
				drain(e)
				bw.Reset(sink)
				if err := e.WriteFamilies(bw, false); err != nil {
					b.Fatal(err)
				}
				if err := bw.Flush(); err != nil {
					b.Fatal(err)
				}
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

// BenchmarkEngineProfilePods computes the series of the kube-state-metrics
// profile's 59 pod families for the 10,000 pods of the benchmark workload,
// as BenchmarkEngineKSMPods does for three.
//
// Its expressions are checked against the pods' schema, as the exporter
// checks them against the API server's (CheckResources), here that of the
// OpenAPI documents client-go embeds for tests: the check bounds their cost
// estimates, so that the exporter evaluates every pod family without
// tracking its cost, and so does the benchmark.
func BenchmarkEngineProfilePods(b *testing.B) {
	c := profilePods(b)
	pods := workload.Spec{Pods: 10000, Namespaces: 20, Nodes: 100, PodsPerDeployment: 50}.PodObjects()
	b.ReportAllocs()
	for b.Loop() {
		computeAll(c, pods).Close()
	}
}

// embeddedOpenAPI serves the OpenAPI v3 documents that client-go embeds
// for tests, those of a real API server; only OpenAPIV3 is implemented.
type embeddedOpenAPI struct {
	discovery.DiscoveryInterface
}

func (embeddedOpenAPI) OpenAPIV3() openapi.Client { return openapitest.NewEmbeddedFileClient() }

// checkPods checks c, a config of pods alone, against the pod's schema in
// the documents of embeddedOpenAPI.
func checkPods(b testing.TB, env *indexers.Env, c *Compiled) {
	b.Helper()
	pods := factory.Resource{Arg: "pods", GVR: corev1.SchemeGroupVersion.WithResource("pods"),
		GVK: corev1.SchemeGroupVersion.WithKind("Pod"), Namespaced: true}
	s, err := indexers.NewSchemas(embeddedOpenAPI{}).Resolve(pods.GVK)
	if err != nil || s == nil {
		b.Fatalf("the schema of %v: %v", pods.GVK, err)
	}
	addNewerPodFields(b, s)
	if _, err := c.CheckResources(env, []ResourceInfo{{Resource: pods, Schema: s}}); err != nil {
		b.Fatal(err)
	}
}

// addNewerPodFields adds to s, a pod's schema in the documents of
// embeddedOpenAPI, which are those of an older API server, the fields of
// newer ones that the profile reads, as the API server the exporter runs
// against has them.
func addNewerPodFields(b testing.TB, s *spec.Schema) {
	b.Helper()
	str := *spec.StringProperty()
	add := func(obj *spec.Schema, names ...string) {
		for _, n := range names {
			if _, ok := obj.Properties[n]; !ok {
				obj.Properties[n] = str
			}
		}
	}
	items := func(list spec.Schema) *spec.Schema {
		if list.Items == nil || list.Items.Schema == nil {
			b.Fatal("a list without items in the pod's schema")
		}
		return list.Items.Schema
	}
	podSpec := s.Properties["spec"]
	add(items(podSpec.Properties["initContainers"]), "restartPolicy")
	add(items(podSpec.Properties["resourceClaims"]), "resourceClaimName", "resourceClaimTemplateName")
	status := s.Properties["status"]
	if _, ok := status.Properties["resourceClaimStatuses"]; !ok {
		claim := spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{}}}
		add(&claim, "name", "resourceClaimName")
		status.Properties["resourceClaimStatuses"] = *spec.ArrayProperty(&claim)
	}
}

// BenchmarkLoadProfile compiles the kube-state-metrics profile (its
// default resources, as the drop-in for kube-state-metrics serves them) and
// sets the size bounds it holds, as the exporter does at every start
// before it computes any object; the rest of the check against the API
// server (which resources are namespaced) needs a cluster. It also reports
// the heap the loaded profile retains (retained-B).
func BenchmarkLoadProfile(b *testing.B) {
	load := func() *Compiled {
		// A new Env each time: an Env shares the programs it compiled.
		env, err := indexers.NewEnv(indexers.WithSharedPrograms())
		if err != nil {
			b.Fatal(err)
		}
		c, err := (Sources{Profile: profiles.KubeStateMetrics}).Load(env)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.CheckResources(env, make([]ResourceInfo, len(c.Resources))); err != nil {
			b.Fatal(err)
		}
		c.releaseSource()
		return c
	}
	b.ReportAllocs()
	for b.Loop() {
		load()
	}
	b.StopTimer()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c := load()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(c)
	b.ReportMetric(float64(after.HeapAlloc)-float64(before.HeapAlloc), "retained-B")
}

// BenchmarkEngineProfilePodUpdates recomputes the series of the
// kube-state-metrics profile's pod families for one pod changed (its first
// container's restart count), among the 10,000 pods of the benchmark
// workload, as BenchmarkEngineKSMPodUpdates does for three families: what
// the exporter does for each pod update it watches.
func BenchmarkEngineProfilePodUpdates(b *testing.B) {
	c := profilePods(b)
	pods := workload.Spec{Pods: 10000, Namespaces: 20, Nodes: 100, PodsPerDeployment: 50}.PodObjects()
	e := computeAll(c, pods)
	defer e.Close()
	h := e.Handler(0)
	changed, byUID := podVersions(b, pods)
	b.ReportAllocs()
	runtime.GC()
	cpu0 := processCPU(b)
	b.ResetTimer()
	alternate(h, changed, byUID, b.N)
	drain(e)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
	// The CPU time of the whole process, the collector's included: on a
	// machine shared with other work, what an update costs whatever the
	// time it waited for a core.
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	q := changed[0]
	h.OnUpdate(byUID[q.UID], q)
	drain(e)
	var out bytes.Buffer
	if err := e.WriteFamilies(&out, false); err != nil {
		b.Fatal(err)
	}
	want := fmt.Sprintf(`kube_pod_container_status_restarts_total{namespace=%q,pod=%q,uid=%q,container=%q} %d`, q.Namespace, q.Name, q.UID, q.Status.ContainerStatuses[0].Name, q.Status.ContainerStatuses[0].RestartCount)
	if !bytes.Contains(out.Bytes(), []byte(want)) {
		b.Fatalf("no series %s after the update", want)
	}
}

// processCPU returns the CPU time the process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
