package jsonval

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"reflect"
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Elements, in a path, stands for every element of a list: the path
// [status, containerStatuses, Elements, name] is the name of each
// container status. Where the value is not a list (a map, whose keys a
// comprehension iterates over), the whole value is read in its place.
const Elements = "[]"

// Fingerprint sums the parts of objects found at given paths, so that a
// change of an object can be told apart by part without keeping the
// object: parts whose JSON forms (as [New] presents them) are the same get
// the same sum; parts that differ get different sums, but for a chance of
// 2^-64 per sum. The paths are grouped, one sum per group.
//
// A sum covers the Go value at a path, read as the JSON form reads it
// (the members json.Marshal writes, a time's instant), not its bytes once
// marshalled: two values of one JSON form may get different sums, such as
// a quantity written "1000m" or "1", never the opposite. A sum is only
// valid within the process: it depends on a random seed and on addresses
// of type tables.
//
// A Fingerprint is immutable and safe for concurrent use.
type Fingerprint struct {
	groups [][][]string
	seed   maphash.Seed
}

// NewFingerprint returns the Fingerprint of groups, each a list of paths of
// JSON member names from the root ("status", "phase"), or Elements. A path
// stops where its value is not a struct or map (a list, a string) and the
// path does not go on with Elements: the whole value there is summed. The
// sum of a path into the elements of a list covers its length.
func NewFingerprint(groups [][][]string) *Fingerprint {
	return &Fingerprint{groups: groups, seed: maphash.MakeSeed()}
}

// Groups returns the number of groups, the number of sums of an object.
func (f *Fingerprint) Groups() int { return len(f.groups) }

// Sum sets sums[i] to the sum of the paths of the i-th group in obj (len(sums)
// must be Groups()), using buf as scratch space, and returns buf grown. ok is
// false when obj holds a value it cannot sum (a function, a channel, values
// nested too deep), whose sums are then meaningless. obj is read, never
// modified.
func (f *Fingerprint) Sum(obj any, sums []uint64, buf []byte) (grown []byte, ok bool) {
	var root reflect.Value
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		if o == nil {
			return buf, false
		}
		obj = o.Object
	}
	if obj != nil {
		root = reflect.ValueOf(obj)
	}
	h := hasher{buf: buf[:0], seed: f.seed, ok: true}
	for i, group := range f.groups {
		h.buf = h.buf[:0]
		for _, path := range group {
			h.path(root, path)
		}
		sums[i] = maphash.Bytes(f.seed, h.buf)
	}
	return h.buf[:0], h.ok
}

// Tags of the encoding a sum is computed from: each value is written as a
// tag and, for the tags that need one, what follows it, so that no two
// different values are written alike.
const (
	tagAbsent    = iota // a member or key the JSON form has not
	tagNull             // nil pointer, slice, map or interface
	tagFalse            //
	tagTrue             //
	tagInt              // 8 bytes
	tagUint             // 8 bytes
	tagFloat            // 8 bytes, the float64's bits
	tagString           // length, 8 bytes, and the bytes
	tagList             // length, 8 bytes, and the elements
	tagMap              // length, 8 bytes, and the sum of its entries' sums, 8 bytes
	tagStruct           // its members in order, each present or tagAbsent
	tagTime             // Unix seconds and nanoseconds, 8 bytes each
	tagType             // the address of a type's table, 8 bytes, then the value
	tagUnreached        // a path stopped before its end: the value there follows
	tagStep             // a path went one member further
)

// maxSumDepth bounds the nesting of the values summed: an object nested
// deeper (or a cycle of pointers) cannot be summed.
const maxSumDepth = 100

// hasher writes the encoding of values into buf.
type hasher struct {
	buf   []byte
	seed  maphash.Seed
	depth int
	ok    bool
}

func (h *hasher) tag(t byte) { h.buf = append(h.buf, t) }

func (h *hasher) word(t byte, w uint64) {
	h.buf = binary.LittleEndian.AppendUint64(append(h.buf, t), w)
}

func (h *hasher) str(s string) {
	h.word(tagString, uint64(len(s))) //nolint:gosec // G115: a length
	h.buf = append(h.buf, s...)
}

// path writes the value at path below v, a value presented as New presents
// it.
func (h *hasher) path(v reflect.Value, path []string) {
	if !v.IsValid() {
		h.tag(tagNull)
		return
	}
	h.pathFrom(infoFor(v.Type()), v, path)
}

// pathFrom is path from v, a value of type ti.typ.
func (h *hasher) pathFrom(ti *typeInfo, v reflect.Value, path []string) {
	for i, name := range path {
		for ti.kind == kindPointer || ti.kind == kindInterface {
			if v.IsNil() {
				h.tag(tagNull)
				return
			}
			v = v.Elem()
			if ti.kind == kindPointer {
				ti = ti.elem
			} else {
				ti = infoFor(v.Type())
			}
		}
		switch {
		case name == Elements && (ti.kind == kindSlice || ti.kind == kindArray):
			if ti.kind == kindSlice && v.IsNil() {
				h.tag(tagNull)
				return
			}
			if l, isJSON := sliceOf(v); isJSON {
				h.elements(l, path[i+1:])
				return
			}
			if !h.enter() {
				return
			}
			n := v.Len()
			h.word(tagList, uint64(n)) //nolint:gosec // G115: a length
			for j := range n {
				h.pathFrom(ti.elem, v.Index(j), path[i+1:])
			}
			h.depth--
			return
		case name == Elements:
			// Not a list (a map whose keys a comprehension iterates
			// over, say): the whole value is read.
			h.tag(tagUnreached)
			h.word(tagInt, uint64(i)) //nolint:gosec // G115: an index
			h.value(ti, v)
			return
		case ti.kind == kindStruct:
			f := ti.fields.byName[name]
			if f == nil {
				h.tag(tagAbsent)
				return
			}
			fv, present := f.get(v)
			if !present {
				h.tag(tagAbsent)
				return
			}
			h.tag(tagStep)
			v, ti = fv, f.info
		case ti.kind == kindMap && ti.key == keyString:
			if v.IsNil() {
				h.tag(tagNull)
				return
			}
			if m, isJSON := mapOf(v); isJSON {
				e, found := m[name]
				if !found {
					h.tag(tagAbsent)
					return
				}
				h.tag(tagUnreached)       // the rest of the path is read from e
				h.word(tagInt, uint64(i)) //nolint:gosec // G115: an index
				h.plain(e, path[i+1:])
				return
			}
			fv := v.MapIndex(reflect.ValueOf(name).Convert(v.Type().Key()))
			if !fv.IsValid() {
				h.tag(tagAbsent)
				return
			}
			h.tag(tagStep)
			v, ti = fv, ti.elem
		default:
			// A list or a scalar: the whole value is read.
			h.tag(tagUnreached)
			h.word(tagInt, uint64(i)) //nolint:gosec // G115: an index
			h.value(ti, v)
			return
		}
	}
	h.value(ti, v)
}

// plain writes the value at path below e, a value of unstructured content
// (maps, lists, strings, numbers, booleans and nulls as JSON decodes them).
func (h *hasher) plain(e any, path []string) {
	for i, name := range path {
		if l, isList := e.([]any); isList && name == Elements && l != nil {
			h.elements(l, path[i+1:])
			return
		}
		m, isMap := e.(map[string]any)
		if !isMap || name == Elements {
			h.tag(tagUnreached)
			h.word(tagInt, uint64(i)) //nolint:gosec // G115: an index
			break
		}
		var found bool
		if e, found = m[name]; !found {
			h.tag(tagAbsent)
			return
		}
		h.tag(tagStep)
	}
	h.any(e)
}

// elements writes the value at path below each element of l.
func (h *hasher) elements(l []any, path []string) {
	if !h.enter() {
		return
	}
	h.word(tagList, uint64(len(l))) //nolint:gosec // G115: a length
	for _, e := range l {
		h.plain(e, path)
	}
	h.depth--
}

// any writes e, a value of unstructured content or any other Go value.
func (h *hasher) any(e any) {
	switch e := e.(type) {
	case nil:
		h.tag(tagNull)
	case string:
		h.str(e)
	case int64:
		h.word(tagInt, uint64(e)) //nolint:gosec // G115: the bits of the int
	case float64:
		h.word(tagFloat, math.Float64bits(e))
	case bool:
		h.bool(e)
	case map[string]any:
		if e == nil {
			h.tag(tagNull)
			return
		}
		if !h.enter() {
			return
		}
		var sum uint64
		for k, x := range e {
			start := len(h.buf)
			h.str(k)
			h.any(x)
			sum += maphash.Bytes(h.seed, h.buf[start:])
			h.buf = h.buf[:start]
		}
		h.word(tagMap, uint64(len(e))) //nolint:gosec // G115: a length
		h.buf = binary.LittleEndian.AppendUint64(h.buf, sum)
		h.depth--
	case []any:
		if e == nil {
			h.tag(tagNull)
			return
		}
		if !h.enter() {
			return
		}
		h.word(tagList, uint64(len(e))) //nolint:gosec // G115: a length
		for _, x := range e {
			h.any(x)
		}
		h.depth--
	default:
		h.typed(reflect.ValueOf(e))
	}
}

func (h *hasher) enter() bool {
	if h.depth++; h.depth > maxSumDepth {
		h.ok = false
		h.depth--
		return false
	}
	return true
}

// value writes v, a value of type ti.typ, as New presents it: the members
// of structs that the JSON form has; for the values that marshal themselves
// (times, quantities and the like), what they hold.
func (h *hasher) value(ti *typeInfo, v reflect.Value) {
	if !h.enter() {
		return
	}
	h.valueIn(ti, v)
	h.depth--
}

func (h *hasher) valueIn(ti *typeInfo, v reflect.Value) {
	switch ti.kind {
	case kindBool:
		h.bool(v.Bool())
	case kindInt:
		h.word(tagInt, uint64(v.Int())) //nolint:gosec // G115: the bits of the int
	case kindUint:
		h.word(tagUint, v.Uint())
	case kindFloat:
		h.word(tagFloat, math.Float64bits(v.Float()))
	case kindString:
		h.str(v.String())
	case kindBytes:
		if v.IsNil() {
			h.tag(tagNull)
			return
		}
		h.word(tagString, uint64(v.Len())) //nolint:gosec // G115: a length
		h.buf = append(h.buf, v.Bytes()...)
	case kindStruct:
		h.tag(tagStruct)
		for i := range ti.fields.list {
			f := &ti.fields.list[i]
			fv, present := f.get(v)
			if !present {
				h.tag(tagAbsent)
				continue
			}
			h.value(f.info, fv)
		}
	case kindMap:
		if v.IsNil() {
			h.tag(tagNull)
			return
		}
		if v.CanInterface() {
			switch m := v.Interface().(type) {
			case map[string]any:
				h.any(m)
				return
			case map[string]string:
				h.strings(m)
				return
			}
		}
		h.mapEntries(v, func(e reflect.Value) { h.value(ti.elem, e) })
	case kindSlice, kindArray:
		if ti.kind == kindSlice {
			if v.IsNil() {
				h.tag(tagNull)
				return
			}
			if s, isJSON := sliceOf(v); isJSON {
				h.any(s)
				return
			}
		}
		n := v.Len()
		h.word(tagList, uint64(n)) //nolint:gosec // G115: a length
		for i := range n {
			h.value(ti.elem, v.Index(i))
		}
	case kindPointer:
		if v.IsNil() {
			h.tag(tagNull)
			return
		}
		h.value(ti.elem, v.Elem())
	case kindInterface:
		if v.IsNil() {
			h.tag(tagNull)
			return
		}
		e := v.Elem()
		if e.CanInterface() {
			h.any(e.Interface())
			return
		}
		h.typed(e)
	case kindTime, kindMicroTime:
		if !v.CanInterface() {
			h.memory(v)
		} else if ti.kind == kindTime {
			h.instant(as[metav1.Time](v).Time)
		} else {
			h.instant(as[metav1.MicroTime](v).Time)
		}
	default:
		// Quantities, ints-or-strings, marshalers: what they hold.
		h.memory(v)
	}
}

// instant writes the instant of t: the JSON form of a time is that of its
// instant in UTC.
func (h *hasher) instant(t time.Time) {
	h.word(tagTime, uint64(t.Unix()))                                       //nolint:gosec // G115: the bits of the seconds
	h.buf = binary.LittleEndian.AppendUint64(h.buf, uint64(t.Nanosecond())) //nolint:gosec // G115: 0 ≤ ns < 1e9
}

// typed writes v, of any type, with its type: values of two types may
// otherwise be written alike.
func (h *hasher) typed(v reflect.Value) {
	ti := infoFor(v.Type())
	h.word(tagType, uint64(uintptr(unsafe.Pointer(ti)))) //nolint:gosec // G103, G115: the table's address names its type
	h.value(ti, v)
}

func (h *hasher) bool(b bool) {
	if b {
		h.tag(tagTrue)
	} else {
		h.tag(tagFalse)
	}
}

// mapOf returns v as a map[string]any when it is one that can be read.
func mapOf(v reflect.Value) (map[string]any, bool) {
	if !v.CanInterface() {
		return nil, false
	}
	m, ok := v.Interface().(map[string]any)
	return m, ok
}

// strings writes a map of strings, as mapEntries does.
func (h *hasher) strings(m map[string]string) {
	var sum uint64
	for k, x := range m {
		start := len(h.buf)
		h.str(k)
		h.str(x)
		sum += maphash.Bytes(h.seed, h.buf[start:])
		h.buf = h.buf[:start]
	}
	h.word(tagMap, uint64(len(m))) //nolint:gosec // G115: a length
	h.buf = binary.LittleEndian.AppendUint64(h.buf, sum)
}

// sliceOf returns v as a []any when it is one that can be read.
func sliceOf(v reflect.Value) ([]any, bool) {
	if v.Kind() != reflect.Slice || !v.CanInterface() {
		return nil, false
	}
	s, ok := v.Interface().([]any)
	return s, ok
}

var timeGoType = reflect.TypeFor[time.Time]()

// memory writes what v holds, unexported fields included, following
// pointers; a time.Time is written as its instant (the JSON form of a time
// is that of its instant in UTC).
func (h *hasher) memory(v reflect.Value) {
	if !h.enter() {
		return
	}
	h.memoryIn(v)
	h.depth--
}

func (h *hasher) memoryIn(v reflect.Value) {
	if v.Type() == timeGoType && v.CanInterface() {
		h.instant(as[time.Time](v))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		h.any(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		h.word(tagInt, uint64(v.Int())) //nolint:gosec // G115: the bits of the int
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		h.word(tagUint, v.Uint())
	case reflect.Float32, reflect.Float64:
		h.word(tagFloat, math.Float64bits(v.Float()))
	case reflect.String:
		h.str(v.String())
	case reflect.Struct:
		h.tag(tagStruct)
		for i := range v.NumField() {
			h.memory(v.Field(i))
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			h.tag(tagNull)
			return
		}
		n := v.Len()
		h.word(tagList, uint64(n)) //nolint:gosec // G115: a length
		for i := range n {
			h.memory(v.Index(i))
		}
	case reflect.Pointer:
		if v.IsNil() {
			h.tag(tagNull)
			return
		}
		h.memory(v.Elem())
	case reflect.Interface:
		if v.IsNil() {
			h.tag(tagNull)
			return
		}
		e := v.Elem()
		h.word(tagType, uint64(uintptr(unsafe.Pointer(infoFor(e.Type()))))) //nolint:gosec // G103, G115: as in typed
		h.memory(e)
	case reflect.Map:
		if v.IsNil() {
			h.tag(tagNull)
			return
		}
		h.mapEntries(v, h.memory)
	default:
		// Functions, channels, unsafe pointers, complex numbers: not
		// summed.
		h.ok = false
	}
}

// mapEntries writes the entries of map v, not nil, in an order of their
// own: the sum of each entry's (key, value) sum, written with value.
func (h *hasher) mapEntries(v reflect.Value, value func(reflect.Value)) {
	t := v.Type()
	k := reflect.New(t.Key()).Elem()
	e := reflect.New(t.Elem()).Elem()
	var sum uint64
	for it := v.MapRange(); it.Next(); {
		k.SetIterKey(it)
		e.SetIterValue(it)
		start := len(h.buf)
		h.memory(k)
		value(e)
		sum += maphash.Bytes(h.seed, h.buf[start:])
		h.buf = h.buf[:start]
	}
	h.word(tagMap, uint64(v.Len())) //nolint:gosec // G115: a length
	h.buf = binary.LittleEndian.AppendUint64(h.buf, sum)
}
