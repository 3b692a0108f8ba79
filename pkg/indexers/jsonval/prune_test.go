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
