package workload

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestGroupsCoverEveryPodOnce(t *testing.T) {
	for _, spec := range []Spec{
		{Pods: 300},
		{Pods: 61, PodsPerDeployment: 7, Namespaces: 3},
		{Pods: 100000, Namespaces: 20, Nodes: 100},
	} {
		s := spec.Default()
		next, names := 0, map[string]bool{}
		for _, g := range s.groups() {
			if g.first != next || g.count <= 0 || g.count > s.PodsPerDeployment {
				t.Fatalf("%+v: group %+v does not follow pod %d", spec, g, next)
			}
			next += g.count
			key := g.namespace + "/" + g.name
			if names[key] {
				t.Fatalf("%+v: deployment %s appears twice", spec, key)
			}
			names[key] = true
		}
		if next != s.Pods {
			t.Fatalf("%+v: groups cover %d pods, want %d", spec, next, s.Pods)
		}
	}
}

func TestObjectsAreReproducibleAndValid(t *testing.T) {
	s := Spec{Pods: 500, Nodes: 7}.Default()
	seen := map[string]bool{}
	for _, g := range s.groups() {
		for i := g.first; i < g.first+g.count; i++ {
			p1, st1, r1 := s.pod(g, i)
			p2, st2, r2 := s.pod(g, i)
			if !reflect.DeepEqual(p1, p2) || !reflect.DeepEqual(st1, st2) || r1 != r2 {
				t.Fatalf("pod %d differs between two calls:\n%+v\n%+v", i, st1, st2)
			}
			if errs := validation.IsDNS1123Subdomain(p1.Name); len(errs) > 0 {
				t.Fatalf("pod name %q: %v", p1.Name, errs)
			}
			if seen[p1.Namespace+"/"+p1.Name] {
				t.Fatalf("pod %s/%s generated twice", p1.Namespace, p1.Name)
			}
			seen[p1.Namespace+"/"+p1.Name] = true
			if st1.Phase == corev1.PodRunning && len(st1.ContainerStatuses) != 2 {
				t.Fatalf("running pod %s has %d container statuses, want 2", p1.Name, len(st1.ContainerStatuses))
			}
		}
	}
	phases := s.PodPhases()
	for _, ph := range []corev1.PodPhase{corev1.PodRunning, corev1.PodPending, corev1.PodSucceeded, corev1.PodFailed} {
		if phases[ph] == 0 {
			t.Errorf("no pod in phase %s among 500: %v", ph, phases)
		}
	}
	if phases[corev1.PodRunning] < 350 {
		t.Errorf("%d of 500 pods running; the workload should be mostly running", phases[corev1.PodRunning])
	}
}

// TestStartTimesCountBackFromNow checks that the pods' start times depend on
// Spec.Now only, not on the clock of the call: two specs whose Now is the
// same second generate the same statuses, every start time lies in the 30
// days before Now, and Now defaults to the time Default is called.
func TestStartTimesCountBackFromNow(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a := Spec{Pods: 100, Now: now}.Default()
	b := Spec{Pods: 100, Now: now.Add(900 * time.Millisecond)}.Default()
	if !a.Now.Equal(now) || !b.Now.Equal(now) {
		t.Fatalf("Default turned Now %s into %s and %s, want it truncated to the second", now, a.Now, b.Now)
	}
	started := 0
	for _, g := range a.groups() {
		for i := g.first; i < g.first+g.count; i++ {
			_, st1, _ := a.pod(g, i)
			_, st2, _ := b.pod(g, i)
			if !reflect.DeepEqual(st1, st2) {
				t.Fatalf("pod %d differs between two specs with the same Now:\n%+v\n%+v", i, st1, st2)
			}
			if st1.StartTime == nil {
				continue
			}
			started++
			if at := st1.StartTime.Time; at.After(now) || at.Before(now.Add(-30*24*time.Hour)) {
				t.Errorf("pod %d started at %s, want within the 30 days before %s", i, at, now)
			}
		}
	}
	if started == 0 {
		t.Error("no pod has a start time")
	}
	before := time.Now().Truncate(time.Second)
	got := Spec{}.Default().Now
	if after := time.Now(); got.Before(before) || got.After(after) {
		t.Errorf("the default Now is %s, want the time Default was called (between %s and %s)", got, before, after)
	}
}

func TestNames(t *testing.T) {
	tests := map[int]string{0: "shop", 19: "support", 20: "shop-2", 41: "payments-3"}
	for i, want := range tests {
		if got := NamespaceName(i); got != want {
			t.Errorf("NamespaceName(%d) = %q, want %q", i, got, want)
		}
	}
	if got := NodeName(0); got != "node-001" {
		t.Errorf("NodeName(0) = %q", got)
	}
	if db := (Spec{}).Default().database(3); db.GetNamespace() != "batch" || db.GetName() == "" {
		t.Errorf("database(3) = %s/%s", db.GetNamespace(), db.GetName())
	}
}

// TestBesideRealNodes checks the fields for a cluster with real nodes:
// every name starts with Prefix, every pod names SchedulerName, every node
// carries NodeTaints and every deployment is paused; without them the
// objects are those of the default workload.
func TestBesideRealNodes(t *testing.T) {
	taint := corev1.Taint{Key: "example.com/simulated", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	s := Spec{Pods: 200, Nodes: 3, Prefix: "load-", SchedulerName: "none", NodeTaints: []corev1.Taint{taint}, PausedDeployments: true}.Default()
	plain := Spec{Pods: 200, Nodes: 3, Now: s.Now}.Default()
	for i := range s.Namespaces {
		if got, want := s.namespace(i).Name, "load-"+plain.namespace(i).Name; got != want {
			t.Errorf("namespace %d is %q, want %q", i, got, want)
		}
	}
	for i := range s.Nodes {
		n := s.node(i)
		if want := "load-" + plain.node(i).Name; n.Name != want || n.Labels["kubernetes.io/hostname"] != want {
			t.Errorf("node %d is %q (hostname %q), want %q", i, n.Name, n.Labels["kubernetes.io/hostname"], want)
		}
		if !reflect.DeepEqual(n.Spec.Taints, []corev1.Taint{taint}) {
			t.Errorf("node %s has taints %v, want %v", n.Name, n.Spec.Taints, taint)
		}
		if len(plain.node(i).Spec.Taints) != 0 {
			t.Errorf("node %s of the default workload has taints %v", plain.node(i).Name, plain.node(i).Spec.Taints)
		}
	}
	groups, plainGroups := s.groups(), plain.groups()
	unbound := 0
	for gi, g := range groups {
		if d := s.deployment(g, 0); !d.Spec.Paused || d.Namespace != "load-"+plainGroups[gi].namespace {
			t.Errorf("deployment %s/%s: paused %v", d.Namespace, d.Name, d.Spec.Paused)
		}
		if d := plain.deployment(plainGroups[gi], 0); d.Spec.Paused {
			t.Errorf("deployment %s/%s of the default workload is paused", d.Namespace, d.Name)
		}
		for i := g.first; i < g.first+g.count; i++ {
			p, _, _ := s.pod(g, i)
			q, _, _ := plain.pod(plainGroups[gi], i)
			if p.Spec.SchedulerName != "none" || q.Spec.SchedulerName != "" {
				t.Errorf("pod %d names scheduler %q (default workload: %q), want none (and unset)", i, p.Spec.SchedulerName, q.Spec.SchedulerName)
			}
			if p.Spec.NodeName == "" {
				unbound++
			} else if p.Spec.NodeName != "load-"+q.Spec.NodeName {
				t.Errorf("pod %d is bound to %q, want load-%s", i, p.Spec.NodeName, q.Spec.NodeName)
			}
		}
	}
	if unbound == 0 {
		t.Error("no pod is left unscheduled: the scheduler name is not exercised")
	}
}
