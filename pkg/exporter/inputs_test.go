package exporter

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

// computingAll returns an engine of c that computes every family at every
// change, as the engine did before it told unchanged inputs apart: the
// reference the engine's series must equal.
func computingAll(t *testing.T, c *Compiled, opts EngineOptions) *Engine {
	t.Helper()
	e := NewEngine(c, opts)
	t.Cleanup(e.Close)
	for _, rs := range e.resources {
		rs.inputs = nil
	}
	return e
}

// sameState fails unless a and b expose the same text and count the same
// series, drops, duplicates and failed evaluations for every family.
func sameState(t *testing.T, step string, a, b *Engine) {
	t.Helper()
	if ea, eb := exposition(a, false), exposition(b, false); ea != eb {
		t.Fatalf("%s: the series differ from those computed by every family:\n%s\nwant:\n%s", step, ea, eb)
	}
	if sa, sb := a.familyStats(), b.familyStats(); !slices.Equal(sa, sb) {
		t.Fatalf("%s: the families' counters differ from those computed by every family:\n%+v\nwant:\n%+v", step, sa, sb)
	}
}

// TestUnchangedInputsKeepTheirSeries checks that families whose inputs did
// not change are not computed again, and that the series and counters are
// all the same as if every family were computed at every change: with and
// without a cap on the series (objects left out by the cap are computed
// again, to be served once others leave room), aggregated families
// included, with evaluations that fail on some objects and series left out
// as duplicates (both counted at each change).
func TestUnchangedInputsKeepTheirSeries(t *testing.T) {
	for _, capped := range []int{0, 3} {
		t.Run(fmt.Sprintf("max-series=%d", capped), func(t *testing.T) {
			env, err := indexers.NewEnv()
			if err != nil {
				t.Fatal(err)
			}
			nsPod := map[string]string{"namespace": "object.metadata.namespace", "pod": "object.metadata.name"}
			c := &Compiled{Resources: []*CompiledResource{{
				Config: ResourceConfig{Resource: "pods"},
				Families: []*Family{
					family(t, env, "pod_info", TypeInfo, "Pod information.", map[string]string{"namespace": "object.metadata.namespace", "pod": "object.metadata.name", "node": "object.spec.nodeName"}, "", "", ""),
					family(t, env, "pod_status_phase", TypeGauge, "The pod's phase.", map[string]string{"namespace": "object.metadata.namespace", "pod": "object.metadata.name", "phase": "each"}, "object.status.phase == each", `["Pending", "Running", "Failed"]`, ""),
					family(t, env, "pod_restarts_total", TypeCounter, "Container restarts.", map[string]string{"namespace": "object.metadata.namespace", "pod": "object.metadata.name", "container": "each.name"}, "each.restartCount", "object.status.containerStatuses", ""),
					family(t, env, "pods_per_node", TypeGauge, "Pods per node and phase.", map[string]string{"node": "object.spec.nodeName", "phase": "object.status.phase"}, "", "", AggregateCount),
					family(t, env, "restarts_per_node_max", TypeGauge, "Most restarts of a pod per node.", map[string]string{"node": "object.spec.nodeName"}, "object.status.containerStatuses.map(c, c.restartCount).sum()", "", AggregateMax),
					// Reads nothing of a pod: computed at its add alone.
					family(t, env, "pods_total", TypeGauge, "Pods.", nil, "", "", AggregateCount),
					// An iteration over the keys of a map.
					family(t, env, "pod_app_labelled", TypeGauge, "Whether a pod has the label app.", nsPod, `object.metadata.?labels.orValue({}).exists(k, k == "app")`, "", ""),
					// Series of a pod (p3) with the same labels: left out
					// as duplicates, and counted, at each change.
					family(t, env, "pod_letter", TypeGauge, "Letters of a pod.", map[string]string{"namespace": "object.metadata.namespace", "pod": "object.metadata.name", "letter": "each"}, "", `object.metadata.name == "p3" ? ["a", "b", "a"] : ["a", "b"]`, ""),
					// A string, not a number, for failed pods: their
					// evaluations fail.
					family(t, env, "failed_pod_value", TypeGauge, "Fails for failed pods.", nsPod, `object.status.phase == "Failed" ? object.metadata.name : 1`, "", ""),
				},
			}}}
			opts := EngineOptions{MaxSeriesPerMetric: capped}
			e, all := NewEngine(c, opts), computingAll(t, c, opts)
			t.Cleanup(e.Close)
			if e.resources[0].inputs == nil {
				t.Fatal("no family is told unchanged")
			}
			both := func(step string, do func(e *Engine)) {
				t.Helper()
				do(e)
				do(all)
				sameState(t, step, e, all)
			}
			pods := map[string]*unstructured.Unstructured{}
			for i := range 5 {
				p := pod("ns", fmt.Sprintf("p%d", i), fmt.Sprintf("u%d", i), fmt.Sprintf("n%d", i%2), "Running", int64(i))
				pods[p.GetName()] = p
				both("add "+p.GetName(), func(e *Engine) { e.Update(0, p) })
			}
			change := func(name string, edit func(p *unstructured.Unstructured)) {
				t.Helper()
				p := pods[name].DeepCopy()
				edit(p)
				pods[name] = p
				both("change "+name, func(e *Engine) { e.Update(0, p) })
			}
			change("p1", func(p *unstructured.Unstructured) {
				_ = unstructured.SetNestedSlice(p.Object, []any{map[string]any{"name": "c0", "restartCount": int64(9)}}, "status", "containerStatuses")
			})
			change("p1", func(*unstructured.Unstructured) {}) // a resync: nothing changed
			change("p2", func(p *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(p.Object, "Failed", "status", "phase")
			})
			change("p2", func(p *unstructured.Unstructured) { p.SetResourceVersion("2") }) // fails again, counted again
			change("p4", func(p *unstructured.Unstructured) { p.SetLabels(map[string]string{"app": "web"}) })
			change("p4", func(p *unstructured.Unstructured) { p.SetLabels(map[string]string{"tier": "web"}) })
			// Room for the series the cap left out: they are served at
			// the next change of their objects, read or not.
			both("delete p0", func(e *Engine) { e.Delete(0, pods["p0"]) })
			change("p3", func(*unstructured.Unstructured) {})
			change("p4", func(*unstructured.Unstructured) {})
			change("p2", func(p *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(p.Object, "Running", "status", "phase")
			})
			// A slot given to a new object holds nothing of the old one,
			// whose node and phase it has.
			p := pod("ns", "p0", "u5", "n0", "Running", 0)
			pods["p0"] = p
			both("add another p0", func(e *Engine) { e.Update(0, p) })
			change("p0", func(p *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(p.Object, "n0", "spec", "nodeName")
			})
		})
	}
}

// profilePods loads the kube-state-metrics profile's pod families, checked
// against the pod's schema as the exporter checks them.
func profilePods(t testing.TB) *Compiled {
	t.Helper()
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	c, err := Sources{Profile: profiles.KubeStateMetrics, Selection: Selection{Resources: []string{"pods"}}}.Load(env)
	if err != nil {
		t.Fatal(err)
	}
	checkPods(t, env, c)
	return c
}

// TestProfilePodChanges checks, on the kube-state-metrics profile's pod
// families and the benchmark workload's pods, that after changes of each
// part the families read, the series are those an engine computes afresh
// from the pods as they end, and that a change of a container's restart
// count computes only the families that read the containers' restart
// counts.
func TestProfilePodChanges(t *testing.T) {
	c := profilePods(t)
	pods := workload.Spec{Pods: 200, Namespaces: 4, Nodes: 10, PodsPerDeployment: 10}.PodObjects()
	e := computeAll(c, pods)
	defer e.Close()
	h := e.Handler(0)

	// What a restart computes again: the families reading the
	// containers' restart counts (or their statuses whole), and those
	// always computed.
	in := e.resources[0].inputs
	var withStatus *corev1.Pod
	for _, p := range pods {
		if len(p.Status.ContainerStatuses) > 0 {
			withStatus = p
			break
		}
	}
	restarted := withStatus.DeepCopy()
	restarted.Status.ContainerStatuses[0].RestartCount++
	slot, _ := e.resources[0].slots.lookup(string(withStatus.UID))
	changed, _ := in.changes(slot, restarted, nil, nil)
	for i, f := range c.Resources[0].Families {
		paths, ok := familyPaths(f)
		restarts := []string{"status", "containerStatuses", jsonval.Elements, "restartCount"}
		reads := !ok || slices.ContainsFunc(paths.List(), func(p []string) bool {
			return isPrefix(p, restarts) || isPrefix(restarts, p)
		})
		if got := in.computes(i, changed); got != reads {
			t.Errorf("%s (reads %v): computed again after a restart: %v, want %v", f.Name, paths, got, reads)
		}
	}

	rng := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // G404: seeded test data, not a secret
	edits := []func(p *corev1.Pod){
		func(p *corev1.Pod) {
			if len(p.Status.ContainerStatuses) > 0 {
				p.Status.ContainerStatuses[0].RestartCount++
			}
		},
		func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed; p.Status.Reason = "Evicted" },
		func(p *corev1.Pod) { p.Labels = map[string]string{"app": "other", "tier": "x"} },
		func(p *corev1.Pod) { p.Annotations = map[string]string{"note": "changed"} },
		func(p *corev1.Pod) {
			for i := range p.Status.Conditions {
				p.Status.Conditions[i].Status = corev1.ConditionFalse
			}
		},
		func(p *corev1.Pod) {
			if len(p.Spec.Containers) > 0 {
				p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}
			}
		},
		func(p *corev1.Pod) {
			if len(p.Spec.Containers) > 0 {
				p.Spec.Containers[0].Image = "registry.example/other:2"
				p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
			}
		},
		func(p *corev1.Pod) {
			// A container more, with its status; or one less.
			if len(p.Spec.Containers) > 0 && len(p.Status.ContainerStatuses) > 0 && rng.IntN(2) == 0 {
				c, s := p.Spec.Containers[0], p.Status.ContainerStatuses[0]
				c.Name, s.Name = "extra", "extra"
				p.Spec.Containers = append(p.Spec.Containers, c)
				p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, s)
			} else if n := len(p.Spec.Containers); n > 0 {
				p.Spec.Containers = p.Spec.Containers[:n-1]
			}
		},
		func(p *corev1.Pod) { p.Spec.NodeName = "elsewhere" },
		func(p *corev1.Pod) {
			t := metav1.NewTime(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
			p.DeletionTimestamp = &t
		},
		func(p *corev1.Pod) {
			if len(p.Status.ContainerStatuses) > 0 {
				p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
			}
		},
		func(p *corev1.Pod) {
			for i := range p.Status.ContainerStatuses {
				p.Status.ContainerStatuses[i].Ready = !p.Status.ContainerStatuses[i].Ready
			}
		},
		func(p *corev1.Pod) {
			if len(p.Status.ContainerStatuses) > 0 {
				p.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}
				p.Status.ContainerStatuses[0].ImageID = "sha256:other"
			}
		},
		func(p *corev1.Pod) {
			if n := len(p.Status.ContainerStatuses); n > 0 {
				p.Status.ContainerStatuses = p.Status.ContainerStatuses[:n-1]
			}
		},
		func(p *corev1.Pod) {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"})
		},
		func(p *corev1.Pod) {
			for i := range p.Status.Conditions {
				p.Status.Conditions[i].LastTransitionTime = metav1.NewTime(time.Date(2026, 11, 28, 13, 0, 0, 0, time.UTC))
			}
		},
		func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists})
		},
		func(p *corev1.Pod) { p.ResourceVersion += "1" }, // nothing read changes
	}
	current := slices.Clone(pods)
	for range 2000 {
		i := rng.IntN(len(current))
		p := current[i].DeepCopy()
		edits[rng.IntN(len(edits))](p)
		h.OnUpdate(current[i], p)
		current[i] = p
	}
	drain(e)
	fresh := computeAll(c, current)
	defer fresh.Close()
	// Each engine's workers give the pods their rows in an order of
	// their own: the lines are compared sorted.
	sorted := func(e *Engine) string {
		lines := strings.Split(exposition(e, false), "\n")
		slices.Sort(lines)
		return strings.Join(lines, "\n")
	}
	if got, want := sorted(e), sorted(fresh); got != want {
		t.Fatalf("after the changes, the series differ from those computed afresh:\n%s\nwant:\n%s", got, want)
	}
}
