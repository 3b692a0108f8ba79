package jsonval

import (
	"encoding/json"
	"reflect"
	"sync"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/ext"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/cel/library"
)

func TestNewRoots(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"kind": "Pod", "n": 1.0}}
	tests := []struct {
		name     string
		obj      any
		wantType ref.Type
		want     any
	}{
		{"nil", nil, types.NullType, nil},
		{"nil pointer", (*corev1.Pod)(nil), types.NullType, nil},
		{"pointer to struct", &corev1.Pod{}, types.MapType, map[string]any{"metadata": map[string]any{}, "spec": map[string]any{"containers": nil}, "status": map[string]any{}}},
		{"struct value", metav1.TypeMeta{Kind: "Pod"}, types.MapType, map[string]any{"kind": "Pod"}},
		{"ref.Val", types.String("x"), types.StringType, "x"},
		{"string", "x", types.StringType, "x"},
		// Unstructured content is adapted as cel-go does, so 1.0 stays a double.
		{"unstructured", u, types.MapType, map[string]any{"kind": "Pod", "n": 1.0}},
		{"unstructured content", u.Object, types.MapType, map[string]any{"kind": "Pod", "n": 1.0}},
		{"list content", []any{int64(1), "a"}, types.ListType, []any{int64(1), "a"}},
		{"nil unstructured", (*unstructured.Unstructured)(nil), types.NullType, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := New(tc.obj)
			if v.Type() != tc.wantType {
				t.Errorf("Type() = %v, want %v", v.Type(), tc.wantType)
			}
			got, err := ToNative(v)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ToNative() = %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestMapperMethods(t *testing.T) {
	pod := fullPod()
	m := New(pod).(traits.Mapper)

	if got := m.Value(); got != any(pod) {
		t.Errorf("Value() = %p, want the wrapped pointer %p", got, pod)
	}
	if got := m.Size(); got != types.Int(3) {
		t.Errorf("Size() = %v, want 3 (metadata, spec, status)", got)
	}
	var keys []string
	for it := m.Iterator(); it.HasNext() == types.True; {
		keys = append(keys, string(it.Next().(types.String)))
	}
	if want := []string{"metadata", "spec", "status"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("Iterator() = %v, want %v", keys, want)
	}
	if got := m.Get(types.String("kind")); !types.IsError(got) || got.(*types.Err).String() != "no such key: kind" {
		t.Errorf(`Get("kind") = %v, want error "no such key: kind"`, got)
	}
	if got := m.Contains(types.String("spec")); got != types.True {
		t.Errorf(`Contains("spec") = %v`, got)
	}
	if got := m.Contains(types.Int(1)); got != types.False {
		t.Errorf(`Contains(1) = %v`, got)
	}
	if z, ok := New(&metav1.TypeMeta{}).(traits.Zeroer); !ok || !z.IsZeroValue() {
		t.Error("an empty TypeMeta (no members) should be a zero value")
	}
	if m.(traits.Zeroer).IsZeroValue() {
		t.Error("a Pod is not a zero value")
	}
	if got := m.ConvertToType(types.MapType); got != m {
		t.Errorf("ConvertToType(map) = %v", got)
	}
	if got := m.ConvertToType(types.TypeType); got != types.MapType {
		t.Errorf("ConvertToType(type) = %v", got)
	}
	if got := m.ConvertToType(types.StringType); !types.IsError(got) {
		t.Errorf("ConvertToType(string) = %v, want an error", got)
	}
	labels := m.Get(types.String("metadata")).(traits.Mapper).Get(types.String("labels"))
	var labelKeys []string
	for it := labels.(traits.Iterable).Iterator(); it.HasNext() == types.True; {
		labelKeys = append(labelKeys, string(it.Next().(types.String)))
	}
	if want := []string{"app", "pod-template-hash", "tier"}; !reflect.DeepEqual(labelKeys, want) {
		t.Errorf("label keys = %v, want sorted %v", labelKeys, want)
	}
}

func TestEqual(t *testing.T) {
	pod := fullPod()
	view := New(pod)
	plain := types.DefaultTypeAdapter.NativeToValue(unstructuredOf(t, pod))
	other := fullPod()
	other.Status.Phase = corev1.PodRunning

	tests := []struct {
		name string
		a, b ref.Val
		want ref.Val
	}{
		{"view and unstructured", view, plain, types.True},
		{"unstructured and view", plain, view, types.True},
		{"two views of equal objects", view, New(fullPod()), types.True},
		{"different phase", view, New(other), types.False},
		{"different phase, unstructured", plain, New(other), types.False},
		{"map and string", view, types.String("x"), types.False},
		{"map and null", view, types.NullValue, types.False},
		{"empty map literal", New(&metav1.TypeMeta{}), types.NewStringInterfaceMap(types.DefaultTypeAdapter, map[string]any{}), types.True},
		{"list and unstructured list",
			New(pod.Spec.Containers),
			types.DefaultTypeAdapter.NativeToValue(unstructuredOf(t, pod.Spec.Containers)), types.True},
		{"list and shorter list", New(pod.Spec.Containers), New(pod.Spec.Containers[:1]), types.False},
		{"list and map", New(pod.Spec.Containers), view, types.False},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.Equal(tc.b); got != tc.want {
				t.Errorf("Equal() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestConvertToNative(t *testing.T) {
	pod := fullPod()
	view := New(pod)
	spec := view.(traits.Mapper).Get(types.String("spec"))
	containers := spec.(traits.Mapper).Get(types.String("containers"))
	labels := view.(traits.Mapper).Get(types.String("metadata")).(traits.Mapper).Get(types.String("labels"))

	tests := []struct {
		name string
		val  ref.Val
		typ  reflect.Type
		want any
	}{
		{"wrapped pointer", view, reflect.TypeFor[*corev1.Pod](), pod},
		{"wrapped struct by pointer", spec, reflect.TypeFor[*corev1.PodSpec](), &pod.Spec},
		{"wrapped struct by value", spec, reflect.TypeFor[corev1.PodSpec](), pod.Spec},
		{"any", view, reflect.TypeFor[any](), unstructuredOf(t, pod)},
		{"map[string]any", view, reflect.TypeFor[map[string]any](), unstructuredOf(t, pod)},
		{"ref.Val", view, reflect.TypeFor[ref.Val](), view},
		{"traits.Lister", containers, reflect.TypeFor[traits.Lister](), containers},
		{"[]any", containers, reflect.TypeFor[[]any](), unstructuredOf(t, pod.Spec.Containers)},
		{"map[string]string", labels, reflect.TypeFor[map[string]string](), pod.Labels},
		{"through JSON", labels, reflect.TypeFor[map[string]any](), map[string]any{"app": "web", "tier": "frontend", "pod-template-hash": "7d4b9c8f6d"}},
		{"other struct through JSON", view, reflect.TypeFor[metav1.PartialObjectMetadata](), *roundTrip(t, &metav1.PartialObjectMetadata{ObjectMeta: pod.ObjectMeta})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.val.ConvertToNative(tc.typ)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ConvertToNative(%v) = %#v\nwant %#v", tc.typ, got, tc.want)
			}
		})
	}

	t.Run("protobuf JSON", func(t *testing.T) {
		want, err := structpb.NewValue(unstructuredOf(t, pod))
		if err != nil {
			t.Fatal(err)
		}
		for _, typ := range []reflect.Type{types.JSONValueType, types.JSONStructType, reflect.TypeFor[*anypb.Any]()} {
			got, err := view.ConvertToNative(typ)
			if err != nil {
				t.Fatalf("ConvertToNative(%v): %v", typ, err)
			}
			if reflect.TypeOf(got) != typ {
				t.Fatalf("ConvertToNative(%v) returned %T", typ, got)
			}
		}
		got, _ := view.ConvertToNative(types.JSONStructType)
		if !reflect.DeepEqual(got.(*structpb.Struct).AsMap(), want.GetStructValue().AsMap()) {
			t.Error("the structpb.Struct differs from the JSON form")
		}
		if _, err := containers.ConvertToNative(types.JSONListType); err != nil {
			t.Error(err)
		}
		if _, err := view.ConvertToNative(types.JSONListType); err == nil {
			t.Error("a map converted to a structpb.ListValue")
		}
	})
}

// roundTrip returns obj after json.Marshal and json.Unmarshal.
func roundTrip[T any](t *testing.T, obj *T) *T {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReadOnly evaluates everything on objects and checks that they did not
// change, including the cached text of quantities.
func TestReadOnly(t *testing.T) {
	env := celEnv(t)
	var exprs []cel.Program
	for _, expr := range append(append([]string{}, commonExpressions...), typedExpressions...) {
		exprs = append(exprs, program(t, env, expr))
	}
	for _, fx := range fixtures() {
		before := unstructuredOf(t, fx.obj)
		snapshot := deepCopy(t, fx.obj)
		for _, prg := range exprs {
			evaluate(prg, New(fx.obj))
		}
		if _, err := ToNative(New(fx.obj)); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fx.obj, snapshot) {
			t.Errorf("%s: the object changed", fx.name)
		}
		if !reflect.DeepEqual(unstructuredOf(t, fx.obj), before) {
			t.Errorf("%s: the JSON form changed", fx.name)
		}
	}
}

func deepCopy(t *testing.T, obj any) any {
	t.Helper()
	m := reflect.ValueOf(obj).MethodByName("DeepCopy")
	if !m.IsValid() {
		t.Fatalf("%T has no DeepCopy", obj)
	}
	return m.Call(nil)[0].Interface()
}

// TestConcurrent shares one object and one view between goroutines; run with
// -race.
func TestConcurrent(t *testing.T) {
	env := celEnv(t)
	prg := program(t, env, `object.spec.containers.exists(c, c.resources.requests.cpu == '100m') && object.status.phase == 'Pending'`)
	n := fixtures()[1].obj // the node: quantities without cached text
	pod := fullPod()
	shared := New(pod)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if got := evaluate(prg, shared); got.Value != true {
					t.Errorf("shared view: %+v", got)
					return
				}
				if got := evaluate(prg, New(pod)); got.Value != true {
					t.Errorf("new view: %+v", got)
					return
				}
				if _, err := ToNative(New(n)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// freshA and freshB are used only by TestConcurrentFirstUse, so that their type
// tables are built while goroutines race for them.
type freshA struct {
	Name  string            `json:"name"`
	B     *freshB           `json:"b,omitempty"`
	Items []freshB          `json:"items"`
	Tags  map[string]freshA `json:"tags,omitempty"`
}

type freshB struct {
	A    *freshA `json:"a,omitempty"`
	Port int32   `json:"port"`
}

func TestConcurrentFirstUse(t *testing.T) {
	obj := &freshA{Name: "x", B: &freshB{A: &freshA{Name: "y"}, Port: 1}, Items: []freshB{{Port: 2}}, Tags: map[string]freshA{"t": {}}}
	want := unstructuredOf(t, obj)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got, err := ToNative(New(obj))
			if err != nil {
				t.Error(err)
				return
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %#v, want %#v", got, want)
			}
		})
	}
	wg.Wait()
}

// TestKubernetesLibraries checks that the Kubernetes CEL libraries and cel-go
// extensions accept the views as they accept unstructured objects.
func TestKubernetesLibraries(t *testing.T) {
	env, err := cel.NewEnv(
		cel.Variable("object", cel.DynType),
		cel.OptionalTypes(),
		library.Quantity(), library.Lists(), library.Regex(), library.URLs(), library.IP(), library.CIDR(), library.Format(),
		ext.Sets(), ext.Strings(), ext.Lists(), ext.Encoders(),
	)
	if err != nil {
		t.Fatal(err)
	}
	exprs := map[string]any{
		`quantity(object.spec.containers[0].resources.requests.cpu).isLessThan(quantity('1'))`:               true,
		`object.spec.containers.map(c, quantity(c.resources.requests.cpu).asApproximateFloat()).sum() > 0.1`: true,
		`object.spec.containers.map(c, c.name).isSorted()`:                                                   true,
		`object.spec.containers.map(c, c.name).indexOf('sidecar')`:                                           int64(1),
		`object.status.conditions.map(c, c.type).max()`:                                                      "Ready",
		`object.spec.containers[0].image.matches('^registry\\.example\\.com/')`:                              true,
		`object.spec.containers[0].image.find('[0-9.]+$')`:                                                   "1.2.3",
		`ip(object.status.podIP).family()`:                                                                   int64(4),
		`cidr('10.244.0.0/16').containsIP(object.status.podIPs[0].ip)`:                                       true,
		`sets.contains(object.spec.containers.map(c, c.name), ['app'])`:                                      true,
		`sets.intersects(object.metadata.finalizers, ['example.com/cleanup'])`:                               true,
		`object.spec.containers.map(c, c.?ports.orValue([])).flatten().size()`:                               int64(2),
		`object.spec.containers.filter(c, has(c.ports)).map(c, c.ports).flatten().size()`:                    int64(2),
		`object.spec.tolerations.sortBy(t, t.key).map(t, t.key)`:                                             []any{"dedicated", "node.kubernetes.io/not-ready"},
		`object.metadata.labels.app.upperAscii()`:                                                            "WEB",
		`format.dns1123Label().validate(object.metadata.name).hasValue()`:                                    false,
		`object.metadata.?labels.app.orValue('') == 'web'`:                                                   true,
		`object.spec.containers.all(c, c.?resources.?limits.?cpu.orValue('0') != '')`:                        true,
		`url('https://' + object.status.podIP + ':8080/x').getPort()`:                                        "8080",
		`base64.decode(object.metadata.managedFields[0].manager.size() > 0 ? 'aGk=' : '') == b'hi'`:          true,
	}
	pod := fullPod()
	plain := unstructuredOf(t, pod)
	for expr, want := range exprs {
		t.Run(expr, func(t *testing.T) {
			prg := program(t, env, expr)
			got, wantPlain := evaluate(prg, New(pod)), evaluate(prg, plain)
			if !reflect.DeepEqual(got, wantPlain) {
				t.Fatalf("lazy %+v, unstructured %+v", got, wantPlain)
			}
			if !reflect.DeepEqual(got.Value, want) {
				t.Errorf("got %+v, want %#v", got, want)
			}
		})
	}
}

// TestListOfStructsShared reads the elements of one list of structs from
// several goroutines at once, as its first reads: each gets, for each
// index, the one element the list made, equal to the element a new view
// presents. Run with -race.
func TestListOfStructsShared(t *testing.T) {
	pod := fullPod()
	list := New(pod).(traits.Mapper).Get(types.String("spec")).(traits.Mapper).Get(types.String("containers")).(traits.Lister)
	fresh := New(pod).(traits.Mapper).Get(types.String("spec")).(traits.Mapper).Get(types.String("containers")).(traits.Lister)
	n := int(list.Size().(types.Int))
	if n < 2 {
		t.Fatalf("the pod has %d containers, want 2 or more", n)
	}
	got := make([][]ref.Val, 8)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := range got {
		wg.Go(func() {
			<-start
			for i := n - 1; i >= 0; i-- { // not all in the same order
				if g%2 == 0 {
					got[g] = append(got[g], list.Get(types.Int(n-1-i)))
				} else {
					got[g] = append([]ref.Val{list.Get(types.Int(i))}, got[g]...)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	for g := range got {
		for i, v := range got[g] {
			if v != got[0][i] {
				t.Errorf("goroutine %d got another element %d than goroutine 0", g, i)
			}
			if v.Equal(fresh.Get(types.Int(i))) != types.True {
				t.Errorf("element %d is %v, a new view's %v", i, v, fresh.Get(types.Int(i)))
			}
		}
	}
}

// hiddenFold is a map whose Fold, if any, is hidden: cel-go folds it
// through its iterator and Get.
type hiddenFold struct{ traits.Mapper }

// TestMapFold checks that a map's Fold gives the entries its iterator and
// Get give, in the same order, for maps of each kind of key.
func TestMapFold(t *testing.T) {
	for _, m := range []any{
		map[string]string{"b": "2", "a": "1", "c": "3"},
		map[string]string{},
		corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi"), corev1.ResourceCPU: resource.MustParse("250m"), "example.com/gpu": resource.MustParse("1")},
		map[string]int{"x": 1, "y\xffz": 2, "w": 3},
		map[string]string{"y\xffz": "invalid", "a": "valid"},
		map[int]string{3: "c", 1: "a", 20: "t"},
		map[textKey]int{{"a", "b"}: 1, {"c", "d"}: 2},
		map[myString]bool{"on": true, "off": false},
	} {
		v, ok := New(m).(traits.Mapper)
		if !ok {
			t.Fatalf("%v: not presented as a map", m)
		}
		var got, want [][2]ref.Val
		types.ToFoldableMap(v).Fold(folder(func(k, v any) bool {
			got = append(got, [2]ref.Val{k.(ref.Val), v.(ref.Val)})
			return true
		}))
		types.ToFoldableMap(hiddenFold{v}).Fold(folder(func(k, v any) bool {
			want = append(want, [2]ref.Val{k.(ref.Val), v.(ref.Val)})
			return true
		}))
		same := len(got) == len(want)
		for i := 0; same && i < len(got); i++ {
			for j := range 2 {
				same = same && got[i][j].Type() == want[i][j].Type() && got[i][j].Equal(want[i][j]) == types.True
			}
		}
		if !same {
			t.Errorf("%v: Fold gave %v, the iterator and Get %v", m, got, want)
		}
		// A fold that stops stops.
		n := 0
		v.(traits.Foldable).Fold(folder(func(any, any) bool { n++; return false }))
		if len(want) > 0 && n != 1 {
			t.Errorf("%v: a fold that stops at once saw %d entries", m, n)
		}
	}
}

// folder is a traits.Folder of a function.
type folder func(k, v any) bool

func (f folder) FoldEntry(k, v any) bool { return f(k, v) }
