package jsonval

import (
	"strings"
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// celSizes measures a value by what CEL sees of it: the size of each map,
// list and string it reaches through the traits, as an expression would.
func celSizes(t *testing.T, v ref.Val) Sizes {
	t.Helper()
	var s Sizes
	switch v := v.(type) {
	case types.String:
		s.bytes(len(v))
	case types.Bytes:
		s.bytes(len(v))
	case traits.Mapper:
		s.elems(int(v.Size().(types.Int)))
		for it := v.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			s = s.Max(celSizes(t, k)).Max(celSizes(t, v.Get(k)))
		}
	case traits.Lister:
		s.elems(int(v.Size().(types.Int)))
		for it := v.Iterator(); it.HasNext() == types.True; {
			s = s.Max(celSizes(t, it.Next()))
		}
	case *types.Err:
		t.Fatalf("reading the value: %v", v)
	}
	return s
}

// TestMaxSizesIsWhatCELSees: for every fixture, MaxSizes is the size of the
// largest map, list and string an expression can reach, as CEL reads them.
func TestMaxSizesIsWhatCELSees(t *testing.T) {
	for _, f := range fixtures() {
		t.Run(f.name, func(t *testing.T) {
			want := celSizes(t, New(f.obj))
			got := MaxSizes(f.obj)
			if got != want {
				t.Errorf("MaxSizes = %+v; CEL sees %+v", got, want)
			}
			if v, ok := ValueMaxSizes(New(f.obj)); !ok || v != want {
				t.Errorf("ValueMaxSizes = %+v, %v; CEL sees %+v", v, ok, want)
			}
		})
	}
}

func TestMaxSizes(t *testing.T) {
	long := strings.Repeat("x", 300)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{"a": long}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
		}}}},
	}
	if got, want := MaxSizes(pod), (Sizes{Elems: 3, Bytes: 300}); got != want {
		// metadata has name and annotations; spec containers; the pod
		// metadata, spec and status.
		t.Errorf("MaxSizes(pod) = %+v, want %+v", got, want)
	}
	items := make([]any, 70)
	for i := range items {
		items[i] = int64(i)
	}
	if got, want := MaxSizes(map[string]any{"items": items, "s": "abc"}), (Sizes{Elems: 70, Bytes: 5}); got != want {
		t.Errorf("MaxSizes(unstructured) = %+v, want %+v", got, want)
	}
	if got := MaxSizes(nil); got != (Sizes{}) {
		t.Errorf("MaxSizes(nil) = %+v, want zero", got)
	}
	built := types.DefaultTypeAdapter.NativeToValue([]any{"ab", map[string]any{"k": "abcd"}})
	if got, ok := ValueMaxSizes(built); !ok || got != (Sizes{Elems: 2, Bytes: 4}) {
		t.Errorf("ValueMaxSizes(a list CEL built) = %+v, %v; want {2 4}, true", got, ok)
	}
	if _, ok := ValueMaxSizes(types.OptionalOf(types.String("x"))); ok {
		t.Error("ValueMaxSizes(an optional) measured it; want not ok")
	}
}

// TestPathsMaxSizes checks that measuring the paths an expression reads
// sees the large lists and strings on those paths, and none elsewhere, in
// typed and unstructured objects.
func TestPathsMaxSizes(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Annotations: map[string]string{"note": strings.Repeat("x", 10_000)}},
		Spec:       corev1.PodSpec{NodeName: "node-1"},
	}
	for _, name := range []string{"app", "sidecar"} {
		c := corev1.Container{Name: name, Image: "nginx", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceName(strings.Repeat("r", 300)): resource.MustParse("1"),
		}}}
		if name == "app" {
			for i := range 500 {
				c.Env = append(c.Env, corev1.EnvVar{Name: "E", Value: strings.Repeat("v", i%7)})
			}
		}
		pod.Spec.Containers = append(pod.Spec.Containers, c)
	}
	cases := []struct {
		name  string
		paths *Paths
		// least are sizes the measure must reach at least, most those it
		// must stay within.
		least, most Sizes
	}{
		{"a field of each element", NewPaths([]string{"spec", "containers", Elements, "name"}), Sizes{Elems: 2, Bytes: len("sidecar")}, Sizes{Elems: 2, Bytes: len("containers")}},
		{"a list in each element", NewPaths([]string{"spec", "containers", Elements, "env"}), Sizes{Elems: 500}, Sizes{Elems: 500, Bytes: 100}},
		{"the elements of a list in each element", NewPaths([]string{"spec", "containers", Elements, "env", Elements, "value"}), Sizes{Elems: 500, Bytes: 6}, Sizes{Elems: 500, Bytes: 100}},
		{"a list's length", NewPaths([]string{"spec", "containers", Elements, ""}), Sizes{Elems: 2}, Sizes{Elems: 2, Bytes: len("containers")}},
		{"a map read whole", NewPaths([]string{"metadata", "annotations"}), Sizes{Elems: 1, Bytes: 10_000}, Sizes{Elems: 1, Bytes: 10_000}},
		{"a struct iterated over", NewPaths([]string{"spec", Elements, ""}), Sizes{Elems: 500, Bytes: 300}, Sizes{Elems: 500, Bytes: 300}},
		{"an entry of a map read by its key", NewPaths([]string{"spec", "containers", Elements, "resources", "requests", "cpu"}), Sizes{Elems: 2, Bytes: len("100m")}, Sizes{Elems: 2, Bytes: len("containers")}},
		{"a map read whole in each element", NewPaths([]string{"spec", "containers", Elements, "resources", "requests"}), Sizes{Elems: 2, Bytes: 300}, Sizes{Elems: 2, Bytes: 300}},
		{"a field", NewPaths([]string{"spec", "nodeName"}), Sizes{Bytes: len("node-1")}, Sizes{Bytes: len("nodeName")}},
		{"an absent field", NewPaths([]string{"status", "podIP"}), Sizes{}, Sizes{Bytes: len("status")}},
	}
	unstructuredPod := jsonMap(t, pod)
	for _, c := range cases {
		for _, obj := range []struct {
			kind string
			v    any
		}{{"typed", pod}, {"unstructured", unstructuredPod}} {
			got := c.paths.MaxSizes(obj.v)
			if !c.least.Within(got) || !got.Within(c.most) {
				t.Errorf("%s, %s (%s): sizes %+v; want at least %+v and at most %+v", c.name, obj.kind, c.paths, got, c.least, c.most)
			}
			if whole := MaxSizes(obj.v); !got.Within(whole) {
				t.Errorf("%s, %s: sizes %+v exceed the whole object's %+v", c.name, obj.kind, got, whole)
			}
		}
	}
	var whole *Paths
	if got, want := whole.MaxSizes(pod), MaxSizes(pod); got != want {
		t.Errorf("nil paths measure %+v; want the whole object's %+v", got, want)
	}
}
