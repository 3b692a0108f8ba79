package jsonval

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Elements stands, in a path, for every element of a list: the path
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
	groups int
	// paths are the paths of every group as a tree, walked once per
	// object.
	paths *pathNode
	seed  maphash.Seed
}

// MaxGroups is the most groups a Fingerprint has.
const MaxGroups = 64

// NewFingerprint returns the Fingerprint of groups, at most MaxGroups, each
// a list of paths of JSON member names from the root ("status", "phase"),
// or Elements. A path stops where its value is not a struct or map (a
// list, a string) and the path does not go on with Elements: the whole
// value there is summed. The sum of a path into the elements of a list
// covers its length.
func NewFingerprint(groups [][][]string) *Fingerprint {
	if len(groups) > MaxGroups {
		panic(fmt.Sprintf("jsonval: %d groups of paths to sum, more than %d", len(groups), MaxGroups))
	}
	root := &pathNode{}
	for g, paths := range groups {
		bit := uint64(1) << g
		for _, path := range paths {
			n := root
			n.below |= bit
			for _, name := range path {
				i := slices.IndexFunc(n.children, func(c *pathNode) bool { return c.name == name })
				if i < 0 {
					i = len(n.children)
					n.children = append(n.children, &pathNode{name: name})
				}
				n = n.children[i]
				n.below |= bit
			}
			n.whole |= bit
		}
	}
	return &Fingerprint{groups: len(groups), paths: root, seed: maphash.MakeSeed()}
}

// pathNode is a member of the paths summed, and the groups that read it.
type pathNode struct {
	name     string
	children []*pathNode
	// whole are the groups (by bit) with a path that ends here: the value
	// here is summed whole; below, those with a path through here.
	whole, below uint64
	// member is the member of the struct type last read here, so that it
	// is not looked up by name in every object.
	member atomic.Pointer[structMember]
}

// structMember is the member a pathNode names in a struct type.
type structMember struct {
	info  *typeInfo
	field *field // nil: the type has no such member
}

// memberOf returns the member n names in the struct type ti, nil if none.
func (n *pathNode) memberOf(ti *typeInfo) *field {
	if m := n.member.Load(); m != nil && m.info == ti {
		return m.field
	}
	f := ti.fields.byName[n.name]
	n.member.Store(&structMember{info: ti, field: f})
	return f
}

// Groups returns the number of groups, the number of sums of an object.
func (f *Fingerprint) Groups() int { return f.groups }

// SumScratch is scratch space for Sum, reused from one object to the next
// by one goroutine.
type SumScratch struct {
	groups [][]byte
	value  []byte
}

// Sum sets sums[i] to the sum of the paths of the i-th group in obj (len(sums)
// must be Groups()), using s (nil: its own) as scratch space. It reports
// false when obj holds a value it cannot sum (a function, a channel, values
// nested too deep), whose sums are then meaningless. obj is read, never
// modified. The paths are read in one walk of obj, each group's part of it
// written apart.
func (f *Fingerprint) Sum(obj any, sums []uint64, s *SumScratch) bool {
	if s == nil {
		s = &SumScratch{}
	}
	if cap(s.groups) < f.groups {
		s.groups = make([][]byte, f.groups)
	}
	s.groups = s.groups[:f.groups]
	for i := range s.groups {
		s.groups[i] = s.groups[i][:0]
	}
	w := walker{out: s.groups, h: hasher{buf: s.value[:0], seed: f.seed, ok: true}}
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		if o == nil {
			return false
		}
		w.walkPlain(f.paths, o.Object)
	case map[string]any, []any, nil:
		w.walkPlain(f.paths, o)
	default:
		v := reflect.ValueOf(obj)
		w.walk(f.paths, infoFor(v.Type()), v)
	}
	for i := range sums[:len(s.groups)] {
		sums[i] = maphash.Bytes(f.seed, s.groups[i])
	}
	s.value = w.h.buf[:0]
	return w.h.ok
}

// walker writes the parts of an object that each group reads into out,
// by group, walking the tree of paths and the object together.
type walker struct {
	out [][]byte
	// h writes a value whole, into its buf, to be copied to the groups
	// that read it.
	h hasher
}

// mark writes tag for each group of mask.
func (w *walker) mark(mask uint64, tag byte) {
	for m := mask; m != 0; m &= m - 1 {
		g := bits.TrailingZeros64(m)
		w.out[g] = append(w.out[g], tag)
	}
}

// copyTo writes b for each group of mask.
func (w *walker) copyTo(mask uint64, b []byte) {
	for m := mask; m != 0; m &= m - 1 {
		g := bits.TrailingZeros64(m)
		w.out[g] = append(w.out[g], b...)
	}
}

// whole writes v (invalid: null), a value of type ti, for each group of
// mask, after tag (none: 0).
func (w *walker) whole(mask uint64, tag byte, ti *typeInfo, v reflect.Value) {
	w.h.buf = w.h.buf[:0]
	if tag != 0 {
		w.h.tag(tag)
	}
	if !v.IsValid() {
		w.h.tag(tagNull)
	} else {
		w.h.value(ti, v)
	}
	w.copyTo(mask, w.h.buf)
}

// wholePlain is whole for unstructured content.
func (w *walker) wholePlain(mask uint64, tag byte, e any) {
	w.h.buf = w.h.buf[:0]
	if tag != 0 {
		w.h.tag(tag)
	}
	w.h.any(e)
	w.copyTo(mask, w.h.buf)
}

// walk writes, for the paths below n, the parts of v (invalid: null), a
// value of type ti.
func (w *walker) walk(n *pathNode, ti *typeInfo, v reflect.Value) {
	if !w.h.enter() {
		return
	}
	w.walkIn(n, ti, v)
	w.h.depth--
}

func (w *walker) walkIn(n *pathNode, ti *typeInfo, v reflect.Value) {
	if n.whole != 0 {
		w.whole(n.whole, 0, ti, v)
	}
	if len(n.children) == 0 {
		return
	}
	for v.IsValid() && (ti.kind == kindPointer || ti.kind == kindInterface) {
		if v.IsNil() {
			v = reflect.Value{}
			break
		}
		v = v.Elem()
		if ti.kind == kindPointer {
			ti = ti.elem
		} else {
			ti = infoFor(v.Type())
		}
	}
	if !v.IsValid() || (ti.kind == kindMap || ti.kind == kindSlice) && v.IsNil() {
		for _, c := range n.children {
			w.mark(c.below, tagNull)
		}
		return
	}
	if ti.kind == kindMap || ti.kind == kindSlice {
		if v.CanInterface() {
			switch e := v.Interface().(type) {
			case map[string]any, []any:
				for _, c := range n.children {
					w.childPlain(c, e)
				}
				return
			}
		}
	}
	for _, c := range n.children {
		switch {
		case c.name == Elements && (ti.kind == kindSlice || ti.kind == kindArray):
			l := v.Len()
			for m := c.below; m != 0; m &= m - 1 {
				g := bits.TrailingZeros64(m)
				w.out[g] = binary.LittleEndian.AppendUint64(append(w.out[g], tagList), uint64(l)) //nolint:gosec // G115: a length
			}
			for j := range l {
				w.walk(c, ti.elem, v.Index(j))
			}
		case c.name == Elements:
			// Not a list (a map, whose keys a comprehension iterates
			// over): the whole value is read.
			w.whole(c.below, tagUnreached, ti, v)
		case ti.kind == kindStruct:
			f := c.memberOf(ti)
			if f == nil {
				w.mark(c.below, tagAbsent)
				continue
			}
			fv, present := f.get(v)
			if !present {
				w.mark(c.below, tagAbsent)
				continue
			}
			w.mark(c.below, tagStep)
			w.walk(c, f.info, fv)
		case ti.kind == kindMap && ti.key == keyString:
			fv := v.MapIndex(reflect.ValueOf(c.name).Convert(v.Type().Key()))
			if !fv.IsValid() {
				w.mark(c.below, tagAbsent)
				continue
			}
			w.mark(c.below, tagStep)
			w.walk(c, ti.elem, fv)
		default:
			// A scalar, or a list whose elements are not read apart:
			// the whole value is read.
			w.whole(c.below, tagUnreached, ti, v)
		}
	}
}

// walkPlain is walk for unstructured content (maps, lists, strings,
// numbers, booleans and nulls as JSON decodes them).
func (w *walker) walkPlain(n *pathNode, e any) {
	if !w.h.enter() {
		return
	}
	if n.whole != 0 {
		w.wholePlain(n.whole, 0, e)
	}
	for _, c := range n.children {
		w.childPlain(c, e)
	}
	w.h.depth--
}

// childPlain writes, for the paths below c, the parts of the member c
// names of e.
func (w *walker) childPlain(c *pathNode, e any) {
	if l, isList := e.([]any); isList && c.name == Elements && l != nil {
		for m := c.below; m != 0; m &= m - 1 {
			g := bits.TrailingZeros64(m)
			w.out[g] = binary.LittleEndian.AppendUint64(append(w.out[g], tagList), uint64(len(l))) //nolint:gosec // G115: a length
		}
		for _, x := range l {
			w.walkPlain(c, x)
		}
		return
	}
	m, isMap := e.(map[string]any)
	if !isMap || c.name == Elements {
		w.wholePlain(c.below, tagUnreached, e)
		return
	}
	x, found := m[c.name]
	if !found {
		w.mark(c.below, tagAbsent)
		return
	}
	w.mark(c.below, tagStep)
	w.walkPlain(c, x)
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
