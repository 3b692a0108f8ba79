package watch

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
)

func watchPod(name, rv, phase string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, ResourceVersion: rv, Labels: labels},
		Status:     corev1.PodStatus{Phase: corev1.PodPhase(phase)},
	}
}

func TestDiff(t *testing.T) {
	old := watchPod("web-0", "10", "Pending", map[string]string{"app.kubernetes.io/name": "web", "tier": "front"})
	old.Generation = 1
	old.Status.Conditions = []corev1.PodCondition{{Type: "Ready", Status: "False", LastProbeTime: metav1.NewTime(time.Unix(1, 0))}}
	cur := old.DeepCopy()
	cur.ResourceVersion, cur.Generation = "11", 2
	cur.Status.Phase = "Running"
	cur.Labels = map[string]string{"app.kubernetes.io/name": "api", "new": "x"}
	cur.Status.Conditions[0].Status = "True"
	cur.Status.Conditions[0].LastProbeTime = metav1.NewTime(time.Unix(2, 0))
	cur.Status.Conditions = append(cur.Status.Conditions, corev1.PodCondition{Type: "Scheduled", Status: "True"})

	got, err := Diff(old, cur)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range got {
		lines = append(lines, c.Path+": "+formatDiffValue(c.Old)+" → "+formatDiffValue(c.New))
	}
	want := []string{
		`metadata.labels["app.kubernetes.io/name"]: web → api`,
		`metadata.labels.new: <none> → x`,
		`metadata.labels.tier: front → <none>`,
		`status.conditions[0].status: False → True`,
		`status.conditions[1]: <none> → {"lastProbeTime":null,"lastTransitionTime":null,"status":"True","type":"Scheduled"}`,
		`status.phase: Pending → Running`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("Diff:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}

	// Unstructured objects are compared as they are; only ignored fields differ.
	a := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x", "resourceVersion": "1"}, "spec": map[string]any{"n": int64(1)}}}
	b := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x", "resourceVersion": "2"}, "spec": map[string]any{"n": int64(1)}}}
	if got, err := Diff(a, b); err != nil || len(got) != 0 {
		t.Errorf("Diff of objects differing only in resourceVersion = %v, %v; want none", got, err)
	}
}

func TestUpdateEvent(t *testing.T) {
	tests := []struct {
		wasIn, isIn, same bool
		want              EventType
	}{
		{true, true, false, EventUpdated},
		{true, true, true, EventResync},
		{false, true, false, EventEntered},
		{false, true, true, EventEntered},
		{true, false, false, EventLeft},
		{false, false, false, ""},
		{false, false, true, ""},
	}
	for _, tt := range tests {
		if got := UpdateEvent(tt.wasIn, tt.isIn, tt.same); got != tt.want {
			t.Errorf("UpdateEvent(%v, %v, %v) = %q, want %q", tt.wasIn, tt.isIn, tt.same, got, tt.want)
		}
	}
}

func TestFormatLine(t *testing.T) {
	at := time.Date(2025, 3, 1, 11, 0, 0, 123456789, time.FixedZone("CET", 3600))
	tests := []struct {
		name string
		ev   Event
		want string
	}{{
		name: "added with columns",
		ev: Event{Time: at, Type: EventAdded, Kind: "pod", Namespace: "shop", Name: "web-0", ResourceVersion: "42",
			ColumnNames: []string{"phase", "bad"}, Values: []any{"Pending", &query.EvalError{Err: errors.New("boom")}}},
		want: "2025-03-01T10:00:00.123Z ADDED   pod shop/web-0 42 phase=Pending bad=<error>\n",
	}, {
		name: "cluster-scoped update with diff",
		ev: Event{Time: at, Type: EventUpdated, Kind: "node", Name: "node-1", ResourceVersion: "43",
			Diff: []Change{{Path: "spec.unschedulable", Old: nil, New: true}, {Path: `metadata.labels.x`, Old: "a", New: ""}}},
		want: "2025-03-01T10:00:00.123Z UPDATED node node-1 43\n  spec.unschedulable: <none> → true\n  metadata.labels.x: a → \"\"\n",
	}, {
		name: "missed delete",
		ev:   Event{Time: at, Type: EventDeleted, Missed: true, Kind: "deployment.apps", Namespace: "shop", Name: "web", ResourceVersion: "7"},
		want: "2025-03-01T10:00:00.123Z DELETED (missed) deployment.apps shop/web 7\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FormatLine(&tt.ev); got != tt.want {
				t.Errorf("FormatLine:\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestFormatJSON(t *testing.T) {
	at := time.Date(2025, 3, 1, 10, 0, 0, 5e6, time.UTC)
	old, cur := watchPod("web-0", "1", "Pending", nil), watchPod("web-0", "2", "Running", nil)
	ev := &Event{Time: at, Type: EventUpdated, Kind: "pod", Namespace: "shop", Name: "web-0", ResourceVersion: "2",
		Object: cur, OldObject: old, ColumnNames: []string{"phase"}, Values: []any{"Running"}}
	data, err := FormatJSON(ev, false)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(data, []byte("}\n")) || bytes.Count(data, []byte("\n")) != 1 {
		t.Fatalf("not one JSON line: %q", data)
	}
	if !strings.HasPrefix(string(data), `{"time":"2025-03-01T10:00:00.005Z","type":"UPDATED","kind":"pod","namespace":"shop","name":"web-0","resourceVersion":"2","columns":{"phase":"Running"},"object":{"kind":"Pod"`) {
		t.Errorf("unexpected field order or values: %s", data)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got["oldObject"]; !ok {
		t.Errorf("update without --diff has no oldObject: %s", data)
	}
	if _, ok := got["diff"]; ok {
		t.Errorf("update without --diff has a diff: %s", data)
	}

	ev.Diff = []Change{{Path: "status.phase", Old: "Pending", New: "Running"}}
	data, err = FormatJSON(ev, true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"diff":[{"path":"status.phase","old":"Pending","new":"Running"}]`) || strings.Contains(string(data), "oldObject") {
		t.Errorf("--diff JSON: %s", data)
	}

	del := &Event{Time: at, Type: EventDeleted, Missed: true, Kind: "pod", Namespace: "shop", Name: "web-0", ResourceVersion: "2", Object: cur}
	data, err = FormatJSON(del, true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"type":"DELETED","missed":true`) || strings.Contains(string(data), `"diff"`) {
		t.Errorf("missed delete JSON: %s", data)
	}
}

func TestKindName(t *testing.T) {
	for _, tt := range []struct {
		gvk  schema.GroupVersionKind
		want string
	}{
		{schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, "pod"},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, "deployment.apps"},
	} {
		if got := KindName(factory.Resource{GVK: tt.gvk}); got != tt.want {
			t.Errorf("KindName(%v) = %q, want %q", tt.gvk, got, tt.want)
		}
	}
}

// TestEmitter drives the handlers as an informer would and checks the
// lines printed, including ENTERED and LEFT, missed deletions, skipped
// initial adds and the --where failure summary.
func TestEmitter(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	w, err := Compile(env, Request{
		Resources: []string{"pods"},
		Where:     `object.metadata.labels.tier == "web"`,
		Columns:   []plan.NamedExpr{{Name: "phase", Expr: "object.status.phase"}},
		Diff:      true, SkipInitial: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	w.now = func() time.Time { return time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC) }
	var out bytes.Buffer
	em := w.emitter(&out)
	h := em.handler(factory.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}})
	web := map[string]string{"tier": "web"}
	db := map[string]string{"tier": "db"}

	a1 := watchPod("a", "1", "Pending", web)
	h.OnAdd(a1, true) // initial: hidden, but known to be in the result
	a2 := watchPod("a", "2", "Running", web)
	h.OnUpdate(a1, a2)
	h.OnUpdate(a2, a2)
	a3 := watchPod("a", "3", "Running", db)
	h.OnUpdate(a2, a3)
	a4 := watchPod("a", "4", "Failed", db)
	h.OnUpdate(a3, a4) // outside before and after: nothing
	a5 := watchPod("a", "5", "Failed", web)
	h.OnUpdate(a4, a5)
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "shop/a", Obj: a5})
	b := watchPod("b", "6", "Pending", nil) // no tier label: --where fails
	h.OnAdd(b, false)
	h.OnDelete(b)
	c := watchPod("c", "7", "Pending", web)
	h.OnAdd(c, false)

	want := `2025-03-01T10:00:00.000Z UPDATED pod shop/a 2 phase=Running
  status.phase: Pending → Running
2025-03-01T10:00:00.000Z RESYNC  pod shop/a 2 phase=Running
2025-03-01T10:00:00.000Z LEFT    pod shop/a 3 phase=Running
  metadata.labels.tier: web → db
2025-03-01T10:00:00.000Z ENTERED pod shop/a 5 phase=Failed
  metadata.labels.tier: db → web
2025-03-01T10:00:00.000Z DELETED (missed) pod shop/a 5 phase=Failed
2025-03-01T10:00:00.000Z ADDED   pod shop/c 7 phase=Pending
`
	if out.String() != want {
		t.Errorf("printed:\n%s\nwant:\n%s", out.String(), want)
	}
	warns := em.warnings()
	if len(warns) != 1 || !strings.HasPrefix(warns[0].String(), "--where: 1 of 8 objects failed: shop/b: ") {
		t.Errorf("warnings = %v", warns)
	}

	em.stop()
	h.OnAdd(watchPod("d", "8", "Pending", web), false)
	if out.String() != want {
		t.Errorf("printed after stop:\n%s", strings.TrimPrefix(out.String(), want))
	}
}

// TestEmitterSelectorExit drives the deletions an informer held to a
// selector reports, with the object read again standing for the API
// server: one still there left the selectors (LEFT, then ENTERED when it
// comes back), one not found or replaced by another of its name was
// deleted, and one that cannot be read shows as DELETED with a warning.
func TestEmitterSelectorExit(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	w, err := Compile(env, Request{Resources: []string{"pods"}, LabelSelector: "x=1", Diff: true})
	if err != nil {
		t.Fatal(err)
	}
	w.now = func() time.Time { return time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC) }
	var out bytes.Buffer
	em := w.emitter(&out)
	server := map[string]any{} // name → the object the API server has
	em.current = func(_ factory.Resource, obj any) (any, error) {
		p := obj.(*corev1.Pod)
		if p.Name == "forbidden" {
			return nil, errors.New(`pods "forbidden" is forbidden`)
		}
		cur, ok := server[p.Name].(*corev1.Pod)
		if !ok || cur.UID != p.UID {
			return nil, nil
		}
		return cur, nil
	}
	h := em.handler(factory.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespaced: true})
	pod := func(name, uid, rv, x string) *corev1.Pod {
		p := watchPod(name, rv, "Pending", map[string]string{"x": x})
		p.UID = types.UID(uid)
		return p
	}

	a1 := pod("a", "u1", "1", "1")
	h.OnAdd(a1, true)
	server["a"] = pod("a", "u1", "2", "2")
	h.OnDelete(a1) // the watch's DELETED carries the object as it was
	a3 := pod("a", "u1", "3", "1")
	server["a"] = a3
	h.OnAdd(a3, false)
	delete(server, "a")
	h.OnDelete(a3)
	b1 := pod("b", "u2", "5", "1")
	h.OnAdd(b1, false)
	server["b"] = pod("b", "u3", "6", "1") // deleted and made again
	h.OnDelete(b1)
	c := pod("forbidden", "u4", "7", "1")
	h.OnAdd(c, false)
	h.OnDelete(c)

	want := `2025-03-01T10:00:00.000Z ADDED   pod shop/a 1
2025-03-01T10:00:00.000Z LEFT    pod shop/a 2
  metadata.labels.x: 1 → 2
2025-03-01T10:00:00.000Z ENTERED pod shop/a 3
2025-03-01T10:00:00.000Z DELETED pod shop/a 3
2025-03-01T10:00:00.000Z ADDED   pod shop/b 5
2025-03-01T10:00:00.000Z DELETED pod shop/b 5
2025-03-01T10:00:00.000Z ADDED   pod shop/forbidden 7
2025-03-01T10:00:00.000Z DELETED pod shop/forbidden 7
`
	if out.String() != want {
		t.Errorf("printed:\n%s\nwant:\n%s", out.String(), want)
	}
	if got := em.currentWarning(); !strings.HasPrefix(got, "1 objects that left the watch could not be read") || !strings.HasSuffix(got, `pods "forbidden" is forbidden`) {
		t.Errorf("warning %q", got)
	}

	// In JSON, an ENTERED whose state before is not known has neither
	// oldObject nor diff.
	data, err := FormatJSON(&Event{Type: EventEntered, Kind: "pod", Object: a3}, true)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), `"oldObject"`) || strings.Contains(string(data), `"diff"`) || !strings.Contains(string(data), `"type":"ENTERED"`) {
		t.Errorf("ENTERED without an old object: %s", data)
	}
}

// TestEmitterRelist drives a relist as the informer delivers one: the
// RELIST line with its counts first, then the deletions of the objects no
// longer listed, then an update per listed object already known (those
// with the same resourceVersion are not shown) and an add per new one.
func TestEmitterRelist(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	for _, output := range []string{"", "json"} {
		w, err := Compile(env, Request{Resources: []string{"pods"}, Output: output})
		if err != nil {
			t.Fatal(err)
		}
		w.now = func() time.Time { return time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC) }
		var out bytes.Buffer
		em := w.emitter(&out)
		res := factory.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}}
		h := em.handler(res)
		a, b, c := watchPod("a", "1", "Running", nil), watchPod("b", "2", "Running", nil), watchPod("c", "3", "Running", nil)
		for _, p := range []*corev1.Pod{a, b, c} {
			h.OnAdd(p, true)
		}
		out.Reset()

		b2, d := watchPod("b", "5", "Failed", nil), watchPod("d", "6", "Pending", nil)
		em.relist(res, factory.Relist{Objects: []factory.Listed{{Key: "shop/a", ResourceVersion: "1"}, {Key: "shop/b", ResourceVersion: "5"}, {Key: "shop/d", ResourceVersion: "6"}}})
		h.OnDelete(cache.DeletedFinalStateUnknown{Key: "shop/c", Obj: c})
		h.OnUpdate(a, a)
		h.OnUpdate(b, b2)
		h.OnAdd(d, false)
		h.OnUpdate(a, a) // a resync after the relist is shown again

		want := `2025-03-01T10:00:00.000Z RELIST  pod listed=3 added=1 changed=1 removed=1
2025-03-01T10:00:00.000Z DELETED (missed) pod shop/c 3
2025-03-01T10:00:00.000Z UPDATED pod shop/b 5
2025-03-01T10:00:00.000Z ADDED   pod shop/d 6
2025-03-01T10:00:00.000Z RESYNC  pod shop/a 1
`
		if output == "json" {
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(lines) != 5 {
				t.Fatalf("-o json printed %d lines:\n%s", len(lines), out.String())
			}
			if want := `{"time":"2025-03-01T10:00:00.000Z","type":"RELIST","kind":"pod","listed":3,"added":1,"changed":1,"removed":1}`; lines[0] != want {
				t.Errorf("-o json RELIST line:\n%s\nwant:\n%s", lines[0], want)
			}
			for i, typ := range []string{`"type":"DELETED","missed":true`, `"type":"UPDATED"`, `"type":"ADDED"`, `"type":"RESYNC"`} {
				if !strings.Contains(lines[i+1], typ) {
					t.Errorf("-o json line %d: %s, want %s", i+2, lines[i+1], typ)
				}
			}
			continue
		}
		if out.String() != want {
			t.Errorf("printed:\n%s\nwant:\n%s", out.String(), want)
		}
	}
}

func TestCompileWatchErrors(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Compile(env, Request{Resources: []string{"pods"}, Output: "yaml", Where: "1 + 1", ResyncPeriod: -time.Second})
	var ue *query.UsageError
	if !errors.As(err, &ue) {
		t.Fatalf("error %v is not a *UsageError", err)
	}
	for _, want := range []string{`output format "yaml"`, "the resync period must not be negative", "--where"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}
