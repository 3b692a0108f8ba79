package watch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

func setPhase(t *testing.T, p *corev1.Pod, phase corev1.PodPhase) *corev1.Pod {
	t.Helper()
	p = p.DeepCopy()
	p.Status.Phase = phase
	p, err := cluster.Client.CoreV1().Pods(p.Namespace).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func setLabel(t *testing.T, p *corev1.Pod, key, value string) *corev1.Pod {
	t.Helper()
	p = p.DeepCopy()
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[key] = value
	p, err := cluster.Client.CoreV1().Pods(p.Namespace).Update(context.Background(), p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// deletePod deletes at once: no kubelet runs to finish a graceful deletion.
// The API server still first sets metadata.deletionTimestamp (an update),
// then deletes.
func deletePod(t *testing.T, p *corev1.Pod) {
	t.Helper()
	zero := int64(0)
	if err := cluster.Client.CoreV1().Pods(p.Namespace).Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
}

func TestEvents(t *testing.T) {
	ns := cluster.NewNamespace(t, "watch-events")
	pre := cluster.CreatePod(t, ns, "pre", map[string]string{"tier": "web"})
	w := cluster.StartPlugin(t, "watch", "pods", "-n", ns, "--diff", "--columns", `phase=object.status.?phase.orValue(""),tier=object.metadata.labels.tier`)
	w.WaitLines(t, 1)

	a := cluster.CreatePod(t, ns, "a", map[string]string{"tier": "web"})
	running := setPhase(t, a, corev1.PodRunning)
	relabelled := setLabel(t, running, "tier", "db")
	deletePod(t, relabelled)
	// Nothing else may come before the pod created last.
	cluster.CreatePod(t, ns, "last", map[string]string{"tier": "web"})
	lines := w.WaitLineContaining(t, " pod "+ns+"/last ")
	if code := w.Stop(t); code != 0 {
		t.Errorf("exit code %d after cancel, want 0; stderr:\n%s", code, w.ErrOut)
	}
	framework.CheckEventLines(t, lines[:len(lines)-1], []string{
		fmt.Sprintf("ADDED   pod %s/pre %s phase=Pending tier=web", ns, pre.ResourceVersion),
		fmt.Sprintf("ADDED   pod %s/a %s phase=Pending tier=web", ns, a.ResourceVersion),
		fmt.Sprintf("UPDATED pod %s/a %s phase=Running tier=web", ns, running.ResourceVersion),
		"  status.phase: Pending → Running",
		fmt.Sprintf("UPDATED pod %s/a %s phase=Running tier=db", ns, relabelled.ResourceVersion),
		"  metadata.labels.tier: web → db",
		fmt.Sprintf("UPDATED pod %s/a <rv> phase=Running tier=db", ns),
		"  metadata.deletionGracePeriodSeconds: <none> → 0",
		"  metadata.deletionTimestamp: <none> → <time>",
		fmt.Sprintf("DELETED pod %s/a <rv> phase=Running tier=db", ns),
	})
	if w.ErrOut.String() != "" {
		t.Errorf("stderr: %s", w.ErrOut)
	}
}

func TestWhereEnterLeave(t *testing.T) {
	ns := cluster.NewNamespace(t, "watch-where")
	sync := cluster.CreatePod(t, ns, "sync", map[string]string{"tier": "web"})
	w := cluster.StartPlugin(t, "watch", "pods", "-n", ns, "--where", `object.metadata.labels.?tier.orValue("") == "web"`)
	w.WaitLines(t, 1)

	a := cluster.CreatePod(t, ns, "a", map[string]string{"tier": "web"})
	other := cluster.CreatePod(t, ns, "other", map[string]string{"tier": "db"}) // never shown while outside
	aLeft := setLabel(t, a, "tier", "db")
	otherIn := setLabel(t, other, "tier", "web")
	setPhase(t, aLeft, corev1.PodRunning) // outside before and after: not shown
	deletePod(t, aLeft)                   // outside: not shown
	deletePod(t, otherIn)
	// Nothing else may come before the pod created last.
	last := cluster.CreatePod(t, ns, "last", map[string]string{"tier": "web"})
	lines := w.WaitLineContaining(t, " pod "+ns+"/last ")
	if code := w.Stop(t); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	framework.CheckEventLines(t, lines[:len(lines)-1], []string{
		fmt.Sprintf("ADDED   pod %s/sync %s", ns, sync.ResourceVersion),
		fmt.Sprintf("ADDED   pod %s/a %s", ns, a.ResourceVersion),
		fmt.Sprintf("LEFT    pod %s/a %s", ns, aLeft.ResourceVersion),
		fmt.Sprintf("ENTERED pod %s/other %s", ns, otherIn.ResourceVersion),
		fmt.Sprintf("UPDATED pod %s/other <rv>", ns), // deletionTimestamp set
		fmt.Sprintf("DELETED pod %s/other <rv>", ns),
	})

	// A --where that fails on an object counts as not matching and is
	// summarised on stderr at exit. A pod created once the initial list
	// shows comes after every object of that list, "unlabelled" too,
	// which come in no particular order.
	cluster.CreatePod(t, ns, "unlabelled", nil)
	w = cluster.StartPlugin(t, "watch", "pods", "-n", ns, "--where", `object.metadata.labels.tier == "web"`)
	w.WaitLines(t, 1)
	after := cluster.CreatePod(t, ns, "after", map[string]string{"tier": "web"})
	lines = w.WaitLineContaining(t, " pod "+ns+"/after ")
	if code := w.Stop(t); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	initial := lines[:len(lines)-1]
	slices.SortFunc(initial, func(a, b string) int {
		_, a, _ = strings.Cut(a, " ") // the time
		_, b, _ = strings.Cut(b, " ")
		return strings.Compare(a, b)
	})
	framework.CheckEventLines(t, lines, []string{
		fmt.Sprintf("ADDED   pod %s/last %s", ns, last.ResourceVersion),
		fmt.Sprintf("ADDED   pod %s/sync %s", ns, sync.ResourceVersion),
		fmt.Sprintf("ADDED   pod %s/after %s", ns, after.ResourceVersion),
	})
	if got := w.ErrOut.String(); !strings.HasPrefix(got, "warning: --where: 1 of 4 objects failed: "+ns+"/unlabelled: ") {
		t.Errorf("stderr %q does not summarise the --where failure", got)
	}
}

func TestJSON(t *testing.T) {
	ns := cluster.NewNamespace(t, "watch-json")
	p := cluster.CreatePod(t, ns, "p", map[string]string{"tier": "web"})
	plain := cluster.StartPlugin(t, "watch", "pods", "-n", ns, "-o", "json", "--columns", "tier=object.metadata.labels.tier")
	diff := cluster.StartPlugin(t, "watch", "pods", "-n", ns, "-o", "json", "--diff")
	plain.WaitLines(t, 1)
	diff.WaitLines(t, 1)
	updated := setLabel(t, p, "tier", "db")

	type event struct {
		Time, Type, Kind, Namespace, Name, ResourceVersion string
		Columns                                            map[string]any
		Object, OldObject                                  *corev1.Pod
		Diff                                               []struct {
			Path     string
			Old, New any
		}
	}
	parse := func(w *framework.Run) []event {
		var out []event
		for _, l := range w.WaitLines(t, 2) {
			var ev event
			dec := json.NewDecoder(strings.NewReader(l))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&ev); err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			if _, err := time.Parse("2006-01-02T15:04:05.000Z", ev.Time); err != nil {
				t.Errorf("time %q: %v", ev.Time, err)
			}
			out = append(out, ev)
		}
		return out
	}
	evs := parse(plain)
	if len(evs) != 2 || evs[0].Type != "ADDED" || evs[1].Type != "UPDATED" {
		t.Fatalf("events %+v, want ADDED then UPDATED", evs)
	}
	up := evs[1]
	if up.Kind != "pod" || up.Namespace != ns || up.Name != "p" || up.ResourceVersion != updated.ResourceVersion ||
		up.Object == nil || up.Object.Labels["tier"] != "db" || up.OldObject == nil || up.OldObject.Labels["tier"] != "web" ||
		up.Columns["tier"] != "db" || up.Diff != nil {
		t.Errorf("UPDATED event %+v", up)
	}
	if up.Object.Kind != "Pod" || up.Object.APIVersion != "v1" || len(up.Object.Spec.Containers) != 1 || up.Object.ManagedFields != nil {
		t.Errorf("object is not the whole pod without managedFields: %+v", up.Object)
	}
	if evs[0].OldObject != nil {
		t.Errorf("ADDED event has an oldObject")
	}

	evs = parse(diff)
	up = evs[1]
	if up.Type != "UPDATED" || up.OldObject != nil || len(up.Diff) != 1 ||
		up.Diff[0].Path != "metadata.labels.tier" || up.Diff[0].Old != "web" || up.Diff[0].New != "db" {
		t.Errorf("--diff UPDATED event %+v", up)
	}
}

func TestInitialFalse(t *testing.T) {
	ns := cluster.NewNamespace(t, "watch-initial")
	cluster.CreatePod(t, ns, "pre", nil)
	w := cluster.StartPlugin(t, "watch", "pods", "-n", ns, "--initial=false")
	// The watch prints nothing until it has synced and a pod is created,
	// and nothing shows when it has synced: create pods, one a second so
	// as not to flood the namespace, until one shows.
	printed := func() bool { return len(framework.Lines(w.Out.String())) > 0 }
	created := 0
	framework.Eventually(t, "a pod created after the start shows", func() bool {
		if printed() {
			return true
		}
		created++
		cluster.CreatePod(t, ns, fmt.Sprintf("new-%d", created), nil)
		for range 50 { // about a second
			if printed() {
				return true
			}
			time.Sleep(20 * time.Millisecond)
		}
		return false
	})
	w.Stop(t)
	for i, l := range framework.Lines(w.Out.String()) {
		if strings.Contains(l, ns+"/pre ") || !strings.Contains(l, " ADDED   pod "+ns+"/new-") {
			t.Errorf("line %d %q: want only ADDED events of pods created after the start", i, l)
		}
	}
}

func TestResync(t *testing.T) {
	ns := cluster.NewNamespace(t, "watch-resync")
	p := cluster.CreatePod(t, ns, "p", nil)
	w := cluster.StartPlugin(t, "watch", "pods", "-n", ns, "--resync-period", "1s")
	w.WaitLines(t, 3)
	w.Stop(t)
	framework.CheckEventLines(t, framework.Lines(w.Out.String())[:3], []string{
		fmt.Sprintf("ADDED   pod %s/p %s", ns, p.ResourceVersion),
		fmt.Sprintf("RESYNC  pod %s/p %s", ns, p.ResourceVersion),
		fmt.Sprintf("RESYNC  pod %s/p %s", ns, p.ResourceVersion),
	})
}

func TestCancel(t *testing.T) {
	ns := cluster.NewNamespace(t, "watch-cancel")
	cluster.CreatePod(t, ns, "p", nil)
	w := cluster.StartPlugin(t, "watch", "pods,configmaps", "-n", ns)
	w.WaitLines(t, 1)
	if code := w.Stop(t); code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, w.ErrOut)
	}
	// A second watch shows when the pod created next has reached the
	// watchers; the first must have printed nothing of it.
	printed := w.Out.String()
	witness := cluster.StartPlugin(t, "watch", "pods", "-n", ns)
	witness.WaitLines(t, 1)
	cluster.CreatePod(t, ns, "after", nil)
	witness.WaitLineContaining(t, " pod "+ns+"/after ")
	if w.Out.String() != printed || w.ErrOut.String() != "" {
		t.Errorf("output after cancel: stdout %q, stderr %q", strings.TrimPrefix(w.Out.String(), printed), w.ErrOut)
	}
}

func TestErrors(t *testing.T) {
	run := func(args ...string) (int, string) {
		ctx, cancel := context.WithTimeout(context.Background(), framework.HangTimeout)
		defer cancel()
		code, out, errOut := framework.RunPlugin(ctx, nil, append([]string{"watch"}, args...)...)
		if out != "" {
			t.Errorf("watch %v printed %q", args, out)
		}
		return code, errOut
	}
	// Usage and expression errors: exit 2, before any cluster contact.
	unreachable := "--server=https://127.0.0.1:1"
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"pods", unreachable, "--where", "object.metadata.name +"}, "invalid --where expression"},
		{[]string{"pods", unreachable, "--where", "1 + 1"}, "--where"},
		{[]string{"pods", unreachable, "-o", "yaml"}, `output format "yaml"`},
		{[]string{"pods", unreachable, "--columns", "novalue"}, "--columns"},
		{[]string{"pods", "--kubeconfig", cluster.Kubeconfig, "--where", "object.spec.nodeNmae == 'x'"}, "nodeNmae"},
		{[]string{"nosuchthings", "--kubeconfig", cluster.Kubeconfig}, "nosuchthings"},
	} {
		if code, errOut := run(tt.args...); code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("watch %v: exit %d, stderr %q; want exit 2 mentioning %q", tt.args, code, errOut, tt.want)
		}
	}
	// Sync errors: exit 1.
	if code, errOut := run("pods", "-A", "--kubeconfig", cluster.UnprivilegedKubeconfig); code != 1 || !strings.Contains(errOut, "RBAC denied") {
		t.Errorf("forbidden: exit %d, stderr %q; want exit 1 and RBAC denied", code, errOut)
	}
}

// TestSelectorEnterLeave relabels a pod out of the label selector and back,
// and takes another out of a field selector and back: the object still
// exists, so the watch says LEFT and ENTERED, in lines and in JSON, and
// DELETED only when it is deleted.
func TestSelectorEnterLeave(t *testing.T) {
	ns := cluster.NewNamespace(t, "watch-selector")
	sync := cluster.CreatePod(t, ns, "sync", map[string]string{"x": "1"})
	w := cluster.StartPlugin(t, "watch", "pods", "-n", ns, "-l", "x=1", "--diff")
	j := cluster.StartPlugin(t, "watch", "pods", "-n", ns, "-l", "x=1", "-o", "json")
	w.WaitLines(t, 1)
	j.WaitLines(t, 1)

	a := cluster.CreatePod(t, ns, "a", map[string]string{"x": "1"})
	w.WaitLines(t, 2)
	j.WaitLines(t, 2)
	out := setLabel(t, a, "x", "2")
	// Each step waits for the event of the one before, in both watches:
	// the watch reads an object that left its selector to know it still
	// exists, and shows it as it is when read.
	lines := w.WaitLines(t, 4)
	framework.CheckEventLines(t, lines[2:4], []string{
		fmt.Sprintf("LEFT    pod %s/a %s", ns, out.ResourceVersion),
		"  metadata.labels.x: 1 → 2",
	})
	j.WaitLines(t, 3)
	back := setLabel(t, out, "x", "1")
	w.WaitLines(t, 5)
	j.WaitLines(t, 4)
	deletePod(t, back)
	cluster.CreatePod(t, ns, "last", map[string]string{"x": "1"})
	lines = w.WaitLineContaining(t, " pod "+ns+"/last ")
	framework.CheckEventLines(t, lines[:len(lines)-1], []string{
		fmt.Sprintf("ADDED   pod %s/sync %s", ns, sync.ResourceVersion),
		fmt.Sprintf("ADDED   pod %s/a %s", ns, a.ResourceVersion),
		fmt.Sprintf("LEFT    pod %s/a %s", ns, out.ResourceVersion),
		"  metadata.labels.x: 1 → 2",
		fmt.Sprintf("ENTERED pod %s/a %s", ns, back.ResourceVersion),
		fmt.Sprintf("UPDATED pod %s/a <rv>", ns), // deletionTimestamp set
		"  metadata.deletionGracePeriodSeconds: <none> → 0",
		"  metadata.deletionTimestamp: <none> → <time>",
		fmt.Sprintf("DELETED pod %s/a <rv>", ns),
	})
	if code := w.Stop(t); code != 0 || w.ErrOut.String() != "" {
		t.Errorf("exit code %d, stderr %q; want 0 and nothing", code, w.ErrOut)
	}

	// The same in JSON: the type names, and the object as it is after it
	// left.
	var types []string
	for _, l := range j.WaitLineContaining(t, `"name":"last"`) {
		var ev struct {
			Type, Name string
			Object     *corev1.Pod
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		types = append(types, ev.Type+" "+ev.Name)
		if ev.Type == "LEFT" && (ev.Object == nil || ev.Object.Labels["x"] != "2") {
			t.Errorf("LEFT event's object %+v, want the pod labelled x=2", ev.Object)
		}
	}
	want := []string{"ADDED sync", "ADDED a", "LEFT a", "ENTERED a", "UPDATED a", "DELETED a", "ADDED last"}
	if !slices.Equal(types, want) {
		t.Errorf("JSON events %q, want %q", types, want)
	}

	// A field selector: a pod whose phase changes leaves it and comes back.
	f := cluster.StartPlugin(t, "watch", "pods", "-n", ns, "--field-selector", "status.phase=Pending")
	f.WaitLines(t, 2) // sync and last
	running := setPhase(t, sync, corev1.PodRunning)
	f.WaitLines(t, 3)
	pending := setPhase(t, running, corev1.PodPending)
	lines = f.WaitLines(t, 4)
	framework.CheckEventLines(t, lines[2:], []string{
		fmt.Sprintf("LEFT    pod %s/sync %s", ns, running.ResourceVersion),
		fmt.Sprintf("ENTERED pod %s/sync %s", ns, pending.ResourceVersion),
	})
}
