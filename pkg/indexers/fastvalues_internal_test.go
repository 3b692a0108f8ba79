package indexers

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
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
	for _, expr := range []string{
		`{"name": object.metadata.name, "namespace": object.metadata.namespace}`,
		`{"containers": object.spec.containers, "labels": object.metadata.labels}`,
		`{"a": dyn(1), "b": dyn("a longer string than the others"), "c": dyn([1, 2, 3, 4, 5, 6, 7]), "d": dyn({"e": [object.metadata.name]})}`,
		`{"only": object.spec.containers.map(c, c.image)}`,
	} {
		got, want := fastAndInterpreted(t, expr)
		r, isRecord := got.(*record)
		if !isRecord {
			t.Fatalf("%s: the fast path gave %T, want a record", expr, got)
		}
		m := r.asMap()
		sameAsCEL(t, expr, r, m, want)
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

// TestValListIsAList checks the lists the fast path builds against the
// lists CEL builds for the same expressions: compared, measured,
// iterated, folded, indexed, concatenated and converted alike.
func TestValListIsAList(t *testing.T) {
	for _, expr := range []string{
		`object.spec.containers.map(c, c.name)`,
		`[string(object.metadata.name), string(object.metadata.namespace), "a longer string than the others"]`,
		`object.spec.containers.map(c, {"name": dyn(c.name), "images": dyn([c.image, c.image])})`,
		`object.spec.containers.filter(c, c.name == "side")`,
	} {
		got, want := fastAndInterpreted(t, expr)
		l, isList := got.(valList)
		if !isList {
			t.Fatalf("%s: the fast path gave %T, want a valList", expr, got)
		}
		cl := l.asList()
		sameAsCEL(t, expr, l, cl, want)
		var iterated, folded []ref.Val
		for it := l.Iterator(); it.HasNext() == types.True; {
			iterated = append(iterated, it.Next())
		}
		l.Fold(folder(func(k, v any) bool {
			if k != len(folded) {
				t.Errorf("%s: Fold gave index %v, want %d", expr, k, len(folded))
			}
			folded = append(folded, v.(ref.Val))
			return true
		}))
		n := int(l.Size().(types.Int))
		for i := range n {
			if iterated[i] != l.Get(types.Int(i)) || folded[i] != l.Get(types.Int(i)) || l.Get(types.Int(i)).Equal(cl.Get(types.Int(i))) != types.True {
				t.Errorf("%s: element %d: iterated %v, folded %v, Get %v, CEL's %v", expr, i, iterated[i], folded[i], l.Get(types.Int(i)), cl.Get(types.Int(i)))
			}
			if l.Contains(l.Get(types.Int(i))) != types.True {
				t.Errorf("%s: the list does not contain its element %d", expr, i)
			}
		}
		if len(iterated) != n || len(folded) != n || l.Size() != cl.Size() || l.Contains(types.String("absent")) != cl.Contains(types.String("absent")) {
			t.Errorf("%s: %d iterated, %d folded, size %v; CEL's size %v", expr, len(iterated), len(folded), l.Size(), cl.Size())
		}
		for _, i := range []ref.Val{types.Int(-1), types.Int(n), types.String("0")} {
			if !types.IsError(l.Get(i)) || !types.IsError(cl.Get(i)) {
				t.Errorf("%s: Get(%v) = %v, CEL's %v", expr, i, l.Get(i), cl.Get(i))
			}
		}
		if twice := l.Add(l); twice.Equal(cl.Add(cl)) != types.True {
			t.Errorf("%s: l + l = %v, CEL's %v", expr, twice, cl.Add(cl))
		}
		native := reflect.TypeFor[[]any]()
		ln, lerr := l.ConvertToNative(native)
		cn, cerr := cl.ConvertToNative(native)
		if !reflect.DeepEqual(ln, cn) || (lerr == nil) != (cerr == nil) {
			t.Errorf("%s: converted to %v (%v), CEL's to %v (%v)", expr, ln, lerr, cn, cerr)
		}
		if l.ConvertToType(types.TypeType) != types.ListType || l.Type() != cl.Type() {
			t.Errorf("%s: types differ from CEL's list", expr)
		}
		// Printed alike, but for maps, whose order of entries CEL's
		// printing does not fix.
		if printed := l.String(); printed != fmt.Sprint(cl) && !strings.Contains(printed, "{") {
			t.Errorf("%s: printed %s, CEL's %v", expr, printed, cl)
		}
	}
}

// fastAndInterpreted evaluates expr on a pod with the fast path, which must
// answer, and with CEL's interpreter.
func fastAndInterpreted(t *testing.T, expr string) (fast, interpreted ref.Val) {
	t.Helper()
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}, {Name: "side", Image: "envoy"}}},
	}
	p := compileValue(t, env, expr, false)
	object, _, _ := p.objectValue(pod)
	fast, ok := p.fastEval(object, nil)
	if !ok {
		t.Fatalf("%s: the fast path gave up", expr)
	}
	interpreted, err = p.evalVars(context.Background(), &activation{object: object})
	if err != nil {
		t.Fatal(err)
	}
	return fast, interpreted
}

// sameAsCEL checks that fast, a value the fast path built for expr, equals
// both asCEL, the same value as CEL builds it, and interpreted, the
// interpreter's answer, either way round, and measures as asCEL does.
func sameAsCEL(t *testing.T, expr string, fast, asCEL, interpreted ref.Val) {
	t.Helper()
	if fast.Equal(interpreted) != types.True || interpreted.Equal(fast) != types.True || fast.Equal(asCEL) != types.True {
		t.Errorf("%s: the fast path's %v is not equal to CEL's %v", expr, fast, interpreted)
	}
	fs, fok := jsonval.ValueMaxSizes(fast)
	cs, cok := jsonval.ValueMaxSizes(asCEL)
	if fs != cs || fok != cok {
		t.Errorf("%s: the fast path's value measures %+v (%v), CEL's %+v (%v)", expr, fs, fok, cs, cok)
	}
}
