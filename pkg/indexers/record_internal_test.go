package indexers

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// TestRecordIsAMap checks the records the fast path builds for map
// literals against the maps CEL builds for the same literals: measured,
// compared, iterated, folded, looked up and converted alike.
func TestRecordIsAMap(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}, {Name: "side", Image: "envoy"}}},
	}
	for _, expr := range []string{
		`{"name": object.metadata.name, "namespace": object.metadata.namespace}`,
		`{"containers": object.spec.containers, "labels": object.metadata.labels}`,
		`{"a": dyn(1), "b": dyn("a longer string than the others"), "c": dyn([1, 2, 3, 4, 5, 6, 7]), "d": dyn({"e": [object.metadata.name]})}`,
		`{"only": object.spec.containers.map(c, c.image)}`,
	} {
		p := compileValue(t, env, expr, false)
		object, _, _ := p.objectValue(pod)
		got, ok := p.fastEval(object, nil)
		if !ok {
			t.Fatalf("%s: the fast path gave up", expr)
		}
		r, isRecord := got.(*record)
		if !isRecord {
			t.Fatalf("%s: the fast path gave %T, want a record", expr, got)
		}
		want, err := p.evalVars(context.Background(), &activation{object: object})
		if err != nil {
			t.Fatal(err)
		}
		m := r.asMap()
		if r.Equal(want) != types.True || want.Equal(r) != types.True || r.Equal(m) != types.True {
			t.Errorf("%s: the record %v is not equal to the map %v", expr, r, want)
		}
		rs, rok := jsonval.ValueMaxSizes(r)
		ms, mok := jsonval.ValueMaxSizes(m)
		if rs != ms || rok != mok {
			t.Errorf("%s: the record measures %+v (%v), the map %+v (%v)", expr, rs, rok, ms, mok)
		}
		var keys, folded []string
		for it := r.Iterator(); it.HasNext() == types.True; {
			keys = append(keys, string(it.Next().(types.String)))
		}
		r.Fold(folder(func(k, v any) bool {
			folded = append(folded, string(k.(types.String)))
			if got := r.Get(k.(ref.Val)); got.Equal(v.(ref.Val)) != types.True {
				t.Errorf("%s: Fold gave %v for %v, Get %v", expr, v, k, got)
			}
			return true
		}))
		var mapKeys []string
		for it := m.Iterator(); it.HasNext() == types.True; {
			mapKeys = append(mapKeys, string(it.Next().(types.String)))
		}
		slices.Sort(mapKeys)
		if !slices.Equal(keys, folded) || !slices.Equal(slices.Sorted(slices.Values(keys)), mapKeys) || r.Size() != m.Size() {
			t.Errorf("%s: keys %v, folded %v, size %v; the map's %v, size %v", expr, keys, folded, r.Size(), mapKeys, m.Size())
		}
		for _, k := range []ref.Val{types.String("missing"), types.Int(1)} {
			if r.Contains(k) != m.Contains(k) || !types.IsError(r.Get(k)) || !types.IsError(m.Get(k)) {
				t.Errorf("%s: %v: Contains %v, Get %v; the map's %v, %v", expr, k, r.Contains(k), r.Get(k), m.Contains(k), m.Get(k))
			}
		}
		native := reflect.TypeFor[map[string]any]()
		rn, rerr := r.ConvertToNative(native)
		mn, merr := m.ConvertToNative(native)
		if !reflect.DeepEqual(rn, mn) || (rerr == nil) != (merr == nil) {
			t.Errorf("%s: converted to %v (%v), the map to %v (%v)", expr, rn, rerr, mn, merr)
		}
		if r.ConvertToType(types.MapType) != r || r.ConvertToType(types.TypeType) != types.MapType || r.Type() != m.Type() {
			t.Errorf("%s: type conversions differ from a map's", expr)
		}
	}
}

// folder is a traits.Folder of a function.
type folder func(k, v any) bool

func (f folder) FoldEntry(k, v any) bool { return f(k, v) }
