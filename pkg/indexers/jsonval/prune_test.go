package jsonval

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestPaths(t *testing.T) {
	p := NewPaths([]string{"status", "phase"}, []string{"metadata"}, []string{"metadata", "labels"}, []string{"spec", "nodeName"})
	if got := p.String(); got != "metadata, spec.nodeName, status.phase" {
		t.Errorf("paths %q", got)
	}
	p.Add([]string{"status"})
	if got := p.String(); got != "metadata, spec.nodeName, status" {
		t.Errorf("after adding a prefix: %q", got)
	}
	p.Add([]string{"spec", "containers", Elements, "name"})
	if got := p.String(); got != "metadata, spec.containers.[].name, spec.nodeName, status" {
		t.Errorf("after adding a path into elements: %q", got)
	}
	p.Add([]string{"spec", "containers", Elements})
	if got := p.String(); got != "metadata, spec.containers, spec.nodeName, status" {
		t.Errorf("after adding every element whole: %q", got)
	}
	var everything *Paths
	if everything.String() != "<everything>" || p.Union(everything) {
		t.Error("a nil Paths keeps everything and cannot be unioned")
	}
	covers := []struct {
		p, o *Paths
		want bool
	}{
		{NewPaths([]string{"status"}), NewPaths([]string{"status", "phase"}), true},
		{NewPaths([]string{"status", "phase"}), NewPaths([]string{"status"}), false},
		{NewPaths([]string{"status", "phase"}), NewPaths([]string{"status", "phase"}), true},
		{NewPaths([]string{"status", "phase"}), NewPaths([]string{"spec"}), false},
		{NewPaths([]string{"a"}), nil, false},
		{NewPaths([]string{"a", Elements}), NewPaths([]string{"a"}), true},
		{NewPaths([]string{"a"}), NewPaths([]string{"a", Elements, "b"}), true},
		{NewPaths([]string{"a", Elements, "b"}), NewPaths([]string{"a"}), false},
		{nil, NewPaths([]string{"a"}), true},
	}
	for _, c := range covers {
		if got := c.p.Covers(c.o); got != c.want {
			t.Errorf("%s covers %s = %v, want %v", c.p, c.o, got, c.want)
		}
	}
}

// TestPrune checks that a pruned object's JSON equals the JSON of the
// original with only the kept members, for typed and unstructured objects.
func TestPrune(t *testing.T) {
	keep := NewPaths([]string{"metadata"}, []string{"status", "phase"}, []string{"spec", "containers"}, []string{"kind"}, []string{"apiVersion"})
	want := map[string]any{}
	orig := jsonMap(t, fullPod())
	want["metadata"] = orig["metadata"]
	for _, k := range []string{"kind", "apiVersion"} {
		if v, ok := orig[k]; ok {
			want[k] = v
		}
	}
	want["spec"] = map[string]any{"containers": orig["spec"].(map[string]any)["containers"]}
	want["status"] = map[string]any{"phase": orig["status"].(map[string]any)["phase"]}

	typed := fullPod()
	Prune(typed, keep)
	if got := jsonMap(t, typed); !reflect.DeepEqual(got, want) {
		t.Errorf("typed pod pruned to\n%v\nwant\n%v", got, want)
	}
	u := &unstructured.Unstructured{Object: jsonMap(t, fullPod())}
	Prune(u, keep)
	if !reflect.DeepEqual(u.Object, want) {
		t.Errorf("unstructured pod pruned to\n%v\nwant\n%v", u.Object, want)
	}
	untouched := fullPod()
	Prune(untouched, nil)
	if !reflect.DeepEqual(untouched, fullPod()) {
		t.Error("a nil Paths must prune nothing")
	}
}

func jsonMap(t *testing.T, obj runtime.Object) map[string]any {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPruneElements checks that paths going on into the elements of a
// list keep the list's length and, of each element, only what they name,
// for typed and unstructured objects; and that a list also reached by a
// path not going into its elements is kept whole.
func TestPruneElements(t *testing.T) {
	keep := NewPaths(
		[]string{"spec", "containers", Elements, "name"},
		[]string{"spec", "containers", Elements, "resources", "requests"},
		[]string{"status", "containerStatuses", Elements, ""}, // the length only
		[]string{"spec", "volumes", Elements, "name"},
		[]string{"spec", "volumes"},
	)
	orig := jsonMap(t, fullPod())
	spec := orig["spec"].(map[string]any)
	containers := spec["containers"].([]any)
	if len(containers) == 0 {
		t.Fatal("the fixture pod has no containers")
	}
	wantContainers := []any{}
	for _, c := range containers {
		c := c.(map[string]any)
		w := map[string]any{"name": c["name"]}
		if r, ok := c["resources"].(map[string]any)["requests"]; ok {
			w["resources"] = map[string]any{"requests": r}
		} else {
			w["resources"] = map[string]any{}
		}
		wantContainers = append(wantContainers, w)
	}
	statuses := orig["status"].(map[string]any)["containerStatuses"].([]any)
	if len(statuses) == 0 {
		t.Fatal("the fixture pod has no container statuses")
	}
	wantStatuses := []any{}
	for range statuses {
		wantStatuses = append(wantStatuses, map[string]any{})
	}
	wantSpec := map[string]any{"containers": wantContainers}
	if v, ok := spec["volumes"]; ok {
		wantSpec["volumes"] = v
	}
	want := map[string]any{"spec": wantSpec, "status": map[string]any{"containerStatuses": wantStatuses}}

	typed := fullPod()
	Prune(typed, keep)
	got := jsonMap(t, typed)
	if !isEmptyMap(got["metadata"]) {
		t.Errorf("typed pod keeps metadata %v", got["metadata"])
	}
	delete(got, "metadata") // a typed object writes its metadata, even empty
	// A typed container status keeps the members it always writes.
	for _, s := range got["status"].(map[string]any)["containerStatuses"].([]any) {
		for k, v := range s.(map[string]any) {
			if v != "" && v != false && v != float64(0) && !isEmptyMap(v) {
				t.Errorf("typed container status keeps %s=%v", k, v)
			}
			delete(s.(map[string]any), k)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("typed pod pruned to\n%v\nwant\n%v", got, want)
	}
	u := &unstructured.Unstructured{Object: jsonMap(t, fullPod())}
	Prune(u, keep)
	if !reflect.DeepEqual(u.Object, want) {
		t.Errorf("unstructured pod pruned to\n%v\nwant\n%v", u.Object, want)
	}
}

func isEmptyMap(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

// TestPruneKeepsIteratedMembers checks that an object or map whose members
// an expression iterates over, or counts (its paths go on with Elements),
// is kept whole, typed or unstructured.
func TestPruneKeepsIteratedMembers(t *testing.T) {
	keep := NewPaths([]string{"spec", Elements, ""}, []string{"metadata", "labels", Elements, ""}, []string{"kind"}, []string{"apiVersion"})
	orig := jsonMap(t, fullPod())
	want := map[string]any{"spec": orig["spec"], "metadata": map[string]any{"labels": orig["metadata"].(map[string]any)["labels"]}}
	for _, k := range []string{"kind", "apiVersion"} {
		if v, ok := orig[k]; ok {
			want[k] = v
		}
	}
	if want["metadata"].(map[string]any)["labels"] == nil {
		t.Fatal("the fixture pod has no labels")
	}
	typed := fullPod()
	Prune(typed, keep)
	if got := jsonMap(t, typed); !reflect.DeepEqual(got["spec"], want["spec"]) {
		t.Errorf("typed pod's spec pruned to\n%v\nwant\n%v", got["spec"], want["spec"])
	}
	u := &unstructured.Unstructured{Object: jsonMap(t, fullPod())}
	Prune(u, keep)
	if !reflect.DeepEqual(u.Object, want) {
		t.Errorf("unstructured pod pruned to\n%v\nwant\n%v", u.Object, want)
	}
}
