package indexers

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestLabelIndexValues: the label index computed in Go has the values its
// expression has, for typed, unstructured and metadata-only objects,
// namespaced or not, with labels or none.
func TestLabelIndexValues(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	builtin, _, err := env.BuiltinIndex(LabelIndex)
	if err != nil || builtin.values == nil {
		t.Fatalf("BuiltinIndex(%q): %v, Go values %v", LabelIndex, err, builtin.values != nil)
	}
	expr, err := env.Compile(builtinIndexes[LabelIndex], KindIndex, "test")
	if err != nil {
		t.Fatal(err)
	}
	lbls := map[string]string{"app": "web", "tier": "front", "app.kubernetes.io/name": "x"}
	objs := []any{
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: lbls}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: "ns"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: lbls}},
		&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns", Labels: lbls}},
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "u", "namespace": "other", "labels": map[string]any{"a": "b", "empty": ""}}}},
	}
	for _, o := range objs {
		want, err := expr.indexValues(o)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := builtin.values(o)
		if !ok {
			t.Errorf("%T: not computed in Go", o)
		}
		slices.Sort(want)
		slices.Sort(got)
		if len(want) == 0 && len(got) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%T: values %q, the expression's %q", o, got, want)
		}
	}
}
