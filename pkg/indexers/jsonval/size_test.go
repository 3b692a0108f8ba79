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
