package query

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// None is how null and missing values are printed, as kubectl prints them.
const None = "<none>"

// Value classes, in their sort order.
const (
	classNull = iota
	classBool
	classNumber
	classString
	classList
	classMap
	classOther
)

// Ordered is a sort key with an order of its own, such as kubectl's order
// of the values a --sort-by JSONPath finds.
type Ordered interface {
	// Compare returns -1, 0 or +1 as the value is before, with or after
	// other.
	Compare(other any) int
}

// Compare orders two values as returned by a [ValueFunc]; it returns -1, 0 or
// +1. Values of different types are ordered by type: null (and a missing
// value) first, then booleans (false before true), numbers (all integer and
// float types compared numerically with each other; NaN before every other
// number), strings (byte-wise), lists (element by element, a shorter prefix
// first), maps (entry by entry in key order, key then value, a shorter
// prefix first), and last any other type (by its fmt.Sprint form).
//
// A value that is [Ordered] orders itself against another.
//
// Compare is the order of Spec.SortBy and of groups with equal counts.
func Compare(a, b any) int {
	if o, ok := a.(Ordered); ok {
		return o.Compare(b)
	}
	if o, ok := b.(Ordered); ok {
		return -o.Compare(a)
	}
	ca, cb := classOf(a), classOf(b)
	if ca != cb {
		return cmp.Compare(ca, cb)
	}
	switch ca {
	case classNull:
		return 0
	case classBool:
		return cmp.Compare(boolInt(a.(bool)), boolInt(b.(bool)))
	case classNumber:
		return compareNumbers(a, b)
	case classString:
		return strings.Compare(a.(string), b.(string))
	case classList:
		la, _ := listElements(a)
		lb, _ := listElements(b)
		for i := range min(len(la), len(lb)) {
			if c := Compare(la[i], lb[i]); c != 0 {
				return c
			}
		}
		return cmp.Compare(len(la), len(lb))
	case classMap:
		ma, mb := mapEntries(a), mapEntries(b)
		for i := range min(len(ma), len(mb)) {
			if c := strings.Compare(ma[i].key, mb[i].key); c != 0 {
				return c
			}
			if c := Compare(ma[i].value, mb[i].value); c != 0 {
				return c
			}
		}
		return cmp.Compare(len(ma), len(mb))
	default:
		return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func classOf(v any) int {
	switch v.(type) {
	case nil:
		return classNull
	case bool:
		return classBool
	case string:
		return classString
	case int64, float64, int, int32, uint64, uint32, float32, int8, int16, uint, uint8, uint16:
		return classNumber
	case []any, []string:
		return classList
	case map[string]any, map[string]string:
		return classMap
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.Slice, reflect.Array:
		return classList
	case reflect.Map:
		return classMap
	}
	return classOther
}

// number is a numeric value in the widest exact representation available.
type number struct {
	kind int // 0: int64, 1: uint64 beyond int64, 2: float64
	i    int64
	u    uint64
	f    float64
}

func toNumber(v any) number {
	switch n := v.(type) {
	case int64:
		return number{i: n}
	case int:
		return number{i: int64(n)}
	case int32:
		return number{i: int64(n)}
	case int16:
		return number{i: int64(n)}
	case int8:
		return number{i: int64(n)}
	case uint64:
		if n > math.MaxInt64 {
			return number{kind: 1, u: n}
		}
		return number{i: int64(n)}
	case uint:
		return toNumber(uint64(n))
	case uint32:
		return number{i: int64(n)}
	case uint16:
		return number{i: int64(n)}
	case uint8:
		return number{i: int64(n)}
	case float32:
		return number{kind: 2, f: float64(n)}
	case float64:
		return number{kind: 2, f: n}
	}
	return number{}
}

func (n number) float() float64 {
	switch n.kind {
	case 0:
		return float64(n.i)
	case 1:
		return float64(n.u)
	}
	return n.f
}

func compareNumbers(a, b any) int {
	na, nb := toNumber(a), toNumber(b)
	switch {
	case na.kind == 0 && nb.kind == 0:
		return cmp.Compare(na.i, nb.i)
	case na.kind == 1 && nb.kind == 1:
		return cmp.Compare(na.u, nb.u)
	case na.kind != 2 && nb.kind != 2:
		// One int64, one uint64 beyond int64.
		return cmp.Compare(na.kind, nb.kind)
	}
	// cmp.Compare orders NaN before every other float.
	if c := cmp.Compare(na.float(), nb.float()); c != 0 {
		return c
	}
	// Equal as floats: let the exact integer side decide, so that large
	// integers keep a total order.
	return cmp.Compare(na.kind, nb.kind)
}

// mapEntry is one entry of a map value.
type mapEntry struct {
	key   string
	value any
}

// mapEntries returns the entries of a map value sorted by key; keys that are
// not strings are compared by their fmt.Sprint form.
func mapEntries(v any) []mapEntry {
	var out []mapEntry
	switch m := v.(type) {
	case map[string]any:
		out = make([]mapEntry, 0, len(m))
		for k, v := range m {
			out = append(out, mapEntry{k, v})
		}
	case map[string]string:
		out = make([]mapEntry, 0, len(m))
		for k, v := range m {
			out = append(out, mapEntry{k, v})
		}
	default:
		rv := reflect.ValueOf(v)
		out = make([]mapEntry, 0, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			out = append(out, mapEntry{fmt.Sprint(it.Key().Interface()), it.Value().Interface()})
		}
	}
	slices.SortFunc(out, func(a, b mapEntry) int { return strings.Compare(a.key, b.key) })
	return out
}

// listElements returns the elements of a list value and whether v is a list.
func listElements(v any) ([]any, bool) {
	switch l := v.(type) {
	case []any:
		return l, true
	case []string:
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out, true
	case nil, string, bool, int64, float64, map[string]any:
		return nil, false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return nil, false
	}
	if rv.Type().Elem().Kind() == reflect.Uint8 {
		// A []byte is a string of bytes to JSON, not a list.
		return nil, false
	}
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out, true
}

// FormatValue renders a value as a table cell and a group value: strings as
// they are, integers in decimal, floats in their shortest decimal form,
// booleans as true/false, lists as their elements joined with "," (an empty
// list as "<none>"), maps as compact JSON, null as "<none>", an *EvalError as
// "<error>", and anything else with fmt.Sprint.
func FormatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return None
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return formatFloat(x, 64)
	case float32:
		return formatFloat(float64(x), 32)
	case *EvalError:
		return "<error>"
	case map[string]any, map[string]string:
		data, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(data)
	}
	if classOf(v) == classNumber {
		n := toNumber(v)
		if n.kind == 1 {
			return strconv.FormatUint(n.u, 10)
		}
		return strconv.FormatInt(n.i, 10)
	}
	if elems, ok := listElements(v); ok {
		if len(elems) == 0 {
			return None
		}
		parts := make([]string, len(elems))
		for i, e := range elems {
			parts[i] = FormatValue(e)
		}
		return strings.Join(parts, ",")
	}
	if classOf(v) == classMap {
		if data, err := json.Marshal(v); err == nil {
			return string(data)
		}
	}
	return fmt.Sprint(v)
}

// formatFloat writes f without an exponent unless it is very large or very
// small, as JSON encoders do.
func formatFloat(f float64, bits int) string {
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		return strconv.FormatFloat(f, 'g', -1, bits)
	}
	return strconv.FormatFloat(f, 'f', -1, bits)
}

// JSONMap returns obj as its JSON map: unstructured content as it is (it
// is only read), typed objects converted.
func JSONMap(obj any) (map[string]any, error) {
	switch o := obj.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return o, nil
	case *unstructured.Unstructured:
		return o.Object, nil
	case runtime.Unstructured:
		return o.UnstructuredContent(), nil
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}
